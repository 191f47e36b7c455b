"""numba kernels of the convolutions: the depthwise convolution's own kernels, and the copies around the
im2col lowering's matmuls (at the end of the file).

The kernels of the depthwise convolution (one input channel per group: weight (O, 1, kh, kw)), the
case the im2col lowering serves worst: its matmuls have an inner dimension of kh*kw (forward, weight
gradient) or 1 (input gradient), far from what BLAS is fast at. They compute the same maps as
``minigrad/ops/conv.py``'s NumPy path (the reference on the ``"numpy"`` backend; tests keep the two equal):

    C:  y[n, o, p, q]   = sum_{i,j} w[o, 0, i, j] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]      (m = O / C)
    T:  dxpad[n, c, ...] = the same sum scattered back: += w[o, 0, i, j] dy[n, o, p, q] for o in c's group
    W:  dw[o, 0, i, j]  = sum_{n,p,q} dy[n, o, p, q] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]

One parallel task per (n, o) for C, per (n, c) for T (each task owns what it writes), per o for W. With
stride 1 (the common case) the innermost loop runs over a whole image plane at once (``_forward_unit``
below), otherwise along one output row. Inner loops index a slice view with the loop counter: numba then
knows the index is non-negative and vectorizes (indexing ``row[start + q]`` directly ran 2.6x slower,
scalar). Sums of W are accumulated in float64. Kernels below ``SERIAL_BELOW`` elements run serially.
"""
import math

import numpy as np
from numba import prange

from . import buffers
from .numba_kernels import _kernel, _run


@_kernel
def _forward(xp, w, sh, sw, dh, dw, y):
    n_batch, n_out, oh, ow = y.shape                   # xp (N, C, Hp, Wp), w (O, 1, kh, kw), y (N, O, OH, OW)
    m = n_out // xp.shape[1]
    for task in prange(n_batch * n_out):
        n, o = task // n_out, task % n_out
        c = o // m
        for p in range(oh):
            y_row = y[n, o, p]                         # (OW,): stays in cache over the kh*kw taps
            for i in range(w.shape[2]):
                x_row = xp[n, c, p * sh + i * dh]      # (Wp,)
                for j in range(w.shape[3]):
                    wij, start = w[o, 0, i, j], j * dw
                    if sw == 1:                        # apart, on a view, so that numba vectorizes it
                        x_run = x_row[start:start + ow]
                        for q in range(ow):
                            y_row[q] += wij * x_run[q]
                    else:
                        for q in range(ow):
                            y_row[q] += wij * x_row[start + q * sw]


@_kernel
def _input_grad(dy, w, sh, sw, dh, dw, dxp):
    n_batch, n_in = dxp.shape[:2]                      # dy (N, O, OH, OW), w (O, 1, kh, kw), dxp (N, C, Hp, Wp)
    oh, ow = dy.shape[2], dy.shape[3]
    m = dy.shape[1] // n_in
    for task in prange(n_batch * n_in):
        n, c = task // n_in, task % n_in
        for o in range(c * m, (c + 1) * m):
            for p in range(oh):
                dy_row = dy[n, o, p]                   # (OW,)
                for i in range(w.shape[2]):
                    dx_row = dxp[n, c, p * sh + i * dh]
                    for j in range(w.shape[3]):
                        wij, start = w[o, 0, i, j], j * dw
                        if sw == 1:
                            dx_run = dx_row[start:start + ow]
                            for q in range(ow):
                                dx_run[q] += wij * dy_row[q]
                        else:
                            for q in range(ow):
                                dx_row[start + q * sw] += wij * dy_row[q]


@_kernel
def _weight_grad(xp, dy, sh, sw, dh, dw, dwt):
    n_batch, n_out, oh, ow = dy.shape                  # xp (N, C, Hp, Wp), dy (N, O, OH, OW), dwt (O, 1, kh, kw)
    kh, kw = dwt.shape[2], dwt.shape[3]
    m = n_out // xp.shape[1]
    for o in prange(n_out):
        c = o // m
        total = np.zeros((kh, kw))                     # float64 sums
        for n in range(n_batch):
            for p in range(oh):
                dy_row = dy[n, o, p]
                for i in range(kh):
                    x_row = xp[n, c, p * sh + i * dh]
                    for j in range(kw):
                        start, part = j * dw, 0.0
                        if sw == 1:
                            for q in range(ow):
                                part += dy_row[q] * x_row[start + q]
                        else:
                            for q in range(ow):
                                part += dy_row[q] * x_row[start + q * sw]
                        total[i, j] += part
        for i in range(kh):
            for j in range(kw):
                dwt[o, 0, i, j] = total[i, j]


# Stride 1: each image plane is walked as one flat run. Output row p of y starts at p * Wp in a "wide"
# y (N, O, OH, Wp) (padded x's row width), so that tap (i, j) reads the flat padded plane at i*dh*Wp + j*dw
# onwards: one loop of L = (OH - 1) * Wp + OW steps per tap instead of OH short rows. Columns q >= OW of a
# wide row are junk (the forward's wrapper drops them; the backward's wide dy holds zeros there).
@_kernel
def _forward_unit(xp, w, dh, dw, wide_y):
    n_batch, n_out, oh, wp = wide_y.shape              # xp (N, C, Hp, Wp), w (O, 1, kh, kw), wide_y (N, O, OH, Wp)
    m = n_out // xp.shape[1]
    length = (oh - 1) * wp + wp - (w.shape[3] - 1) * dw
    for task in prange(n_batch * n_out):
        n, o = task // n_out, task % n_out
        x_flat, y_flat = xp[n, o // m].reshape(-1), wide_y[n, o].reshape(-1)
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                wij, start = w[o, 0, i, j], i * dh * wp + j * dw
                x_run = x_flat[start:start + length]   # a view: indices from range() vectorize
                for t in range(length):
                    y_flat[t] += wij * x_run[t]


@_kernel
def _input_grad_unit(wide_dy, w, dh, dw, dxp):
    n_batch, n_in, _, wp = dxp.shape                   # wide_dy (N, O, OH, Wp) zero beyond OW, dxp (N, C, Hp, Wp)
    m = wide_dy.shape[1] // n_in
    length = (wide_dy.shape[2] - 1) * wp + wp - (w.shape[3] - 1) * dw
    for task in prange(n_batch * n_in):
        n, c = task // n_in, task % n_in
        dx_flat = dxp[n, c].reshape(-1)
        for o in range(c * m, (c + 1) * m):
            dy_flat = wide_dy[n, o].reshape(-1)
            for i in range(w.shape[2]):
                for j in range(w.shape[3]):
                    wij, start = w[o, 0, i, j], i * dh * wp + j * dw
                    dx_run = dx_flat[start:start + length]
                    for t in range(length):
                        dx_run[t] += wij * dy_flat[t]


@_kernel
def _weight_grad_unit(xp, wide_dy, dh, dw, dwt):
    n_batch, n_out, oh, wp = wide_dy.shape             # xp (N, C, Hp, Wp), wide_dy zero beyond OW, dwt (O, 1, kh, kw)
    kh, kw = dwt.shape[2], dwt.shape[3]
    m = n_out // xp.shape[1]
    length = (oh - 1) * wp + wp - (kw - 1) * dw
    for o in prange(n_out):
        lanes = np.zeros((kh, kw, length))             # float64 partial sums per position: no reduction in the loop
        for n in range(n_batch):
            x_flat, dy_flat = xp[n, o // m].reshape(-1), wide_dy[n, o].reshape(-1)
            for i in range(kh):
                for j in range(kw):
                    start = i * dh * wp + j * dw
                    x_run, lane = x_flat[start:start + length], lanes[i, j]
                    for t in range(length):
                        lane[t] += dy_flat[t] * x_run[t]
        for i in range(kh):
            for j in range(kw):
                dwt[o, 0, i, j] = lanes[i, j].sum()


def _wide(dy, width):
    """dy (N, O, OH, OW) in rows of ``width`` >= OW, zeros beyond OW."""
    wide = np.zeros(dy.shape[:3] + (width,), dtype=dy.dtype)
    wide[..., :dy.shape[3]] = dy
    return wide


def depthwise_conv(xp, w, stride, dilation, out_size):
    """C on the zero-padded xp (N, C, Hp, Wp): (N, O, OH, OW)."""
    xp, w = np.ascontiguousarray(xp), np.ascontiguousarray(w)
    work = xp.shape[0] * w.shape[0] * out_size[0] * out_size[1] * w.shape[2] * w.shape[3]
    if stride == (1, 1):
        wide = np.zeros(xp.shape[:1] + w.shape[:1] + (out_size[0], xp.shape[3]), dtype=xp.dtype)
        _run(_forward_unit, work, xp, w, *dilation, wide)
        return np.ascontiguousarray(wide[..., :out_size[1]])
    y = np.zeros(xp.shape[:1] + w.shape[:1] + tuple(out_size), dtype=xp.dtype)
    _run(_forward, work, xp, w, *stride, *dilation, y)
    return y


def depthwise_conv_transpose(dy, w, stride, dilation, padded_shape):
    """T into a zero-padded x of ``padded_shape`` (N, C, Hp, Wp) (the caller crops the padding)."""
    dxp = np.zeros(padded_shape, dtype=dy.dtype)
    w, work = np.ascontiguousarray(w), dy.size * w.shape[2] * w.shape[3]
    if stride == (1, 1):
        _run(_input_grad_unit, work, _wide(dy, padded_shape[3]), w, *dilation, dxp)
    else:
        _run(_input_grad, work, np.ascontiguousarray(dy), w, *stride, *dilation, dxp)
    return dxp


def depthwise_conv_weight(xp, dy, stride, dilation, kernel):
    """W: (O, 1, kh, kw) from the zero-padded xp and dy."""
    dwt = np.empty(dy.shape[1:2] + (1,) + tuple(kernel), dtype=dy.dtype)
    xp, work = np.ascontiguousarray(xp), dy.size * kernel[0] * kernel[1]
    if stride == (1, 1):
        _run(_weight_grad_unit, work, xp, _wide(dy, xp.shape[3]), *dilation, dwt)
    else:
        _run(_weight_grad, work, xp, np.ascontiguousarray(dy), *stride, *dilation, dwt)
    return dwt



# --------------------------------------------------------------------------- the im2col lowering's copies
# The convolutions with more than one input channel per group run as matmuls on BLAS (ops/conv.py); these
# kernels do the copies around them, which NumPy does on one thread and in several passes (zero padding, a
# strided view, a transposing copy): the columns of x (im2col), their sum back onto x (col2im), and the
# exchange of the channel and batch axes between NCHW arrays and the matmuls' (channels, N*OH*OW) rows.
@_kernel
def _im2col(xp, kh, kw, sh, sw, dh, dw, oh, ow, cols):
    n_batch, n_in, _, wp = xp.shape                    # xp (N, C, Hp, Wp) zero-padded, cols (C*kh*kw, N*OH*OW)
    per_image = oh * ow
    for task in prange(n_in * n_batch):                # each task reads one plane of xp; n fastest, so that
        c, n = task // n_batch, task % n_batch          # consecutive tasks write on along the same 9 rows of cols
        plane = xp[n, c].reshape(-1)
        for i in range(kh):
            for j in range(kw):
                part = cols[(c * kh + i) * kw + j, n * per_image:(n + 1) * per_image]   # (OH*OW,) of row (c, i, j)
                for p in range(oh):
                    x_run, out = plane[(p * sh + i * dh) * wp + j * dw:], part[p * ow:(p + 1) * ow]
                    if sw == 1:
                        for q in range(ow):
                            out[q] = x_run[q]
                    else:
                        for q in range(ow):
                            out[q] = x_run[q * sw]


@_kernel
def _col2im(cols, kh, kw, sh, sw, dh, dw, oh, ow, xp):
    n_batch, n_in, _, wp = xp.shape                    # cols (C*kh*kw, N*OH*OW), xp (N, C, Hp, Wp) zeroed, summed into
    per_image = oh * ow
    for task in prange(n_in * n_batch):                # each task owns one plane of xp; n fastest (as _im2col)
        c, n = task // n_batch, task % n_batch
        plane = xp[n, c].reshape(-1)
        for i in range(kh):
            for j in range(kw):
                part = cols[(c * kh + i) * kw + j, n * per_image:(n + 1) * per_image]
                for p in range(oh):
                    x_run, run = plane[(p * sh + i * dh) * wp + j * dw:], part[p * ow:(p + 1) * ow]
                    if sw == 1:
                        for q in range(ow):
                            x_run[q] += run[q]
                    else:
                        for q in range(ow):
                            x_run[q * sw] += run[q]


@_kernel
def _swap_leading(src, bias, dst):
    a_len, b_len, length = src.shape                   # src (A, B, L) -> dst (B, A, L), plus bias[a] if given
    for task in prange(a_len * b_len):
        a, b = task // b_len, task % b_len
        shift = bias[a] if bias.size else 0
        row, out = src[a, b], dst[b, a]
        for t in range(length):
            out[t] = row[t] + shift


def columns(xp, kernel, stride, dilation, out_size):
    """im2col of the zero-padded xp (N, C, Hp, Wp): (C*kh*kw, N*OH*OW), rows (c, i, j), columns (n, p, q)."""
    xp = np.ascontiguousarray(xp)
    cols = buffers.empty((xp.shape[1] * kernel[0] * kernel[1], xp.shape[0] * out_size[0] * out_size[1]), xp.dtype)
    _run(_im2col, cols.size, xp, *kernel, *stride, *dilation, *out_size, cols)
    return cols


def add_columns(cols, kernel, stride, dilation, out_size, padded_shape):
    """col2im, the adjoint of ``columns``: a zero-padded x of ``padded_shape`` (N, C, Hp, Wp) with every column
    element added back where it was read from (the caller crops the padding)."""
    xp = np.zeros(padded_shape, dtype=cols.dtype)
    _run(_col2im, cols.size, np.ascontiguousarray(cols), *kernel, *stride, *dilation, *out_size, xp)
    return xp


def from_rows(rows, n, size, bias=None):
    """rows (O, N*P) -> (N, O, *size) (P = prod(size)), plus bias[o] if given."""
    o = rows.shape[0]
    out = buffers.empty((n, o) + tuple(size), rows.dtype)
    bias = np.empty(0, rows.dtype) if bias is None else np.ascontiguousarray(bias, dtype=rows.dtype)
    positions = math.prod(size)
    _run(_swap_leading, rows.size, np.ascontiguousarray(rows).reshape(o, n, positions), bias,
         out.reshape(n, o, positions))
    return out


def to_rows(y):
    """y (N, O, *size) -> rows (O, N*P): channel o's values over the batch and positions, n-major."""
    n, o, positions = y.shape[0], y.shape[1], math.prod(y.shape[2:])
    rows = buffers.empty((o, n * positions), y.dtype)
    _run(_swap_leading, y.size, np.ascontiguousarray(y).reshape(n, o, positions), np.empty(0, y.dtype),
         rows.reshape(o, n, positions))
    return rows

