"""numba kernels of the convolutions: the depthwise convolution's own kernels, and the copies around the
im2col lowering's matmuls (at the end of the file).

The kernels of the depthwise convolution (one input channel per group: weight (O, 1, kh, kw)), the
case the im2col lowering serves worst: its matmuls have an inner dimension of kh*kw (forward, weight
gradient) or 1 (input gradient), far from what BLAS is fast at. They compute the same maps as
``minigrad/ops/conv.py``'s NumPy path (the reference on the ``"numpy"`` backend; tests keep the two equal):

    C:  y[n, o, p, q]   = sum_{i,j} w[o, 0, i, j] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]      (m = O / C)
    T:  dxpad[n, c, ...] = the same sum scattered back: += w[o, 0, i, j] dy[n, o, p, q] for o in c's group
    W:  dw[o, 0, i, j]  = sum_{n,p,q} dy[n, o, p, q] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]

One parallel task per (n, o) for C, per (n, c) for T (each task owns what it writes), per o for W. With stride
1 (the common case) the innermost loop runs over a whole image plane at once (``_forward_unit`` below), each
task padding its own plane in a small array (the whole-batch zero padding, wide copies and crops that NumPy
made around the kernels took twice as long as the kernels; bench/bench_conv.py, 32x64x16x16 3x3 forward +
backward at 2 threads: 4.3 -> 1.8 ms), otherwise along one output row. Inner loops index a slice view with the
loop counter: numba then knows the index is non-negative and vectorizes (indexing ``row[start + q]`` directly
ran 2.6x slower, scalar). Sums of W are accumulated in float64. Kernels below ``SERIAL_BELOW`` elements run
serially.
"""
import math

import numpy as np
from numba import prange

from . import buffers
from .numba_kernels import _inline, _kernel, _run


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


# Stride 1: each image plane is walked as one flat run. Output row p starts at p * Wp in a "wide" plane
# (OH, Wp) (the padded row width), so that tap (i, j) reads the flat padded plane at i*dh*Wp + j*dw onwards:
# one loop of L = (OH - 1) * Wp + Wp - (kw - 1) * dw steps per tap instead of OH short rows. Columns q >= OW
# of a wide row are junk in the forward (never copied out) and zeros in the backward's wide dy. Each task
# builds the planes it needs in its own small arrays (the padded x plane, the wide y or dy plane): the
# unpadded x, y, dx and dy are read and written once, with no padded or wide copy of the whole batch.
@_inline
def _padded_plane(src, top, left, wp, plane):
    """plane (Hp*Wp,) <- the plane src (H, W) inside zeros, its row r at row r + top, column q at q + left."""
    plane[:] = 0
    for r in range(src.shape[0]):
        row = plane[(r + top) * wp + left:(r + top) * wp + left + src.shape[1]]
        for q in range(src.shape[1]):
            row[q] = src[r, q]


@_inline
def _wide_plane(src, wp, wide):
    """wide (OH*Wp,) <- src (OH, OW) in rows of Wp, zeros beyond OW."""
    wide[:] = 0
    for p in range(src.shape[0]):
        row = wide[p * wp:p * wp + src.shape[1]]
        for q in range(src.shape[1]):
            row[q] = src[p, q]


@_kernel
def _forward_unit(x, w, bias, has_bias, top, left, hp, wp, dh, dw, y):
    n_batch, n_out, oh, ow = y.shape                   # x (N, C, H, W), w (O, 1, kh, kw), bias (O,), y (N, O, OH, OW)
    m = n_out // x.shape[1]
    length = (oh - 1) * wp + wp - (w.shape[3] - 1) * dw
    for task in prange(n_batch * n_out):
        n, o = task // n_out, task % n_out
        plane, wide = np.empty(hp * wp, x.dtype), np.zeros(oh * wp, y.dtype)   # padded x (Hp*Wp,), wide y (OH*Wp,)
        _padded_plane(x[n, o // m], top, left, wp, plane)
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                wij, start = w[o, 0, i, j], i * dh * wp + j * dw
                x_run = plane[start:start + length]    # a view: indices from range() vectorize
                for t in range(length):
                    wide[t] += wij * x_run[t]
        for p in range(oh):
            y_row, wide_row = y[n, o, p], wide[p * wp:p * wp + ow]
            for q in range(ow):
                y_row[q] = wide_row[q] + bias[o] if has_bias else wide_row[q]


@_kernel
def _input_grad_unit(dy, w, top, left, hp, wp, dh, dw, dx):
    n_batch, n_in, h, wd = dx.shape                    # dy (N, O, OH, OW), w (O, 1, kh, kw), dx (N, C, H, W)
    oh, m = dy.shape[2], dy.shape[1] // n_in
    length = (oh - 1) * wp + wp - (w.shape[3] - 1) * dw
    for task in prange(n_batch * n_in):
        n, c = task // n_in, task % n_in
        dx_flat, wide = np.zeros(hp * wp, dx.dtype), np.empty(oh * wp, dy.dtype)   # padded dx, wide dy
        for o in range(c * m, (c + 1) * m):
            _wide_plane(dy[n, o], wp, wide)
            for i in range(w.shape[2]):
                for j in range(w.shape[3]):
                    wij, start = w[o, 0, i, j], i * dh * wp + j * dw
                    dx_run = dx_flat[start:start + length]
                    for t in range(length):
                        dx_run[t] += wij * wide[t]
        for r in range(h):                             # the interior: sums on the padding are dropped
            dx_row, padded_row = dx[n, c, r], dx_flat[(r + top) * wp + left:(r + top) * wp + left + wd]
            for q in range(wd):
                dx_row[q] = padded_row[q]


@_kernel
def _weight_grad_unit(x, dy, top, left, hp, wp, dh, dw, dwt):
    n_batch, n_out, oh, _ = dy.shape                   # x (N, C, H, W), dy (N, O, OH, OW), dwt (O, 1, kh, kw)
    kh, kw = dwt.shape[2], dwt.shape[3]
    m = n_out // x.shape[1]
    length = (oh - 1) * wp + wp - (kw - 1) * dw
    for o in prange(n_out):
        lanes = np.zeros((kh, kw, length))             # float64 partial sums per position: no reduction in the loop
        plane, wide = np.empty(hp * wp, x.dtype), np.empty(oh * wp, dy.dtype)   # padded x, wide dy
        for n in range(n_batch):
            _padded_plane(x[n, o // m], top, left, wp, plane)
            _wide_plane(dy[n, o], wp, wide)
            for i in range(kh):
                for j in range(kw):
                    start = i * dh * wp + j * dw
                    x_run, lane = plane[start:start + length], lanes[i, j]
                    for t in range(length):
                        lane[t] += wide[t] * x_run[t]
        for i in range(kh):
            for j in range(kw):
                dwt[o, 0, i, j] = lanes[i, j].sum()


def depthwise_conv(x, w, bias, padding, stride, dilation, out_size):
    """C (+ bias) of x (N, C, H, W) zero-padded by ``padding`` ((top, bottom), (left, right)): (N, O, OH, OW)."""
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
    work = x.shape[0] * w.shape[0] * out_size[0] * out_size[1] * w.shape[2] * w.shape[3]
    if stride == (1, 1):
        (top, bottom), (left, right) = padding
        y = np.empty(x.shape[:1] + w.shape[:1] + tuple(out_size), dtype=x.dtype)
        b = np.empty(0, x.dtype) if bias is None else np.ascontiguousarray(bias.reshape(-1), dtype=x.dtype)
        _run(_forward_unit, work, x, w, b, bias is not None, top, left, x.shape[2] + top + bottom,
             x.shape[3] + left + right, *dilation, y)
        return y
    y = np.zeros(x.shape[:1] + w.shape[:1] + tuple(out_size), dtype=x.dtype)
    _run(_forward, work, np.pad(x, ((0, 0), (0, 0)) + tuple(padding)), w, *stride, *dilation, y)
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def depthwise_conv_transpose(dy, w, channels, padding, stride, dilation, size):
    """T: dx (N, channels, H, W) of spatial ``size``; the sums that fall on x's zero padding are dropped."""
    (top, bottom), (left, right) = padding
    hp, wp = size[0] + top + bottom, size[1] + left + right
    dy, w, work = np.ascontiguousarray(dy), np.ascontiguousarray(w), dy.size * w.shape[2] * w.shape[3]
    if stride == (1, 1):
        dx = np.empty((dy.shape[0], channels) + tuple(size), dtype=dy.dtype)
        _run(_input_grad_unit, work, dy, w, top, left, hp, wp, *dilation, dx)
        return dx
    dxp = np.zeros((dy.shape[0], channels, hp, wp), dtype=dy.dtype)
    _run(_input_grad, work, dy, w, *stride, *dilation, dxp)
    return np.ascontiguousarray(dxp[:, :, top:top + size[0], left:left + size[1]])


def depthwise_conv_weight(x, dy, padding, stride, dilation, kernel):
    """W: (O, 1, kh, kw) from x (zero-padded by ``padding``) and dy."""
    dwt = np.empty(dy.shape[1:2] + (1,) + tuple(kernel), dtype=dy.dtype)
    x, dy, work = np.ascontiguousarray(x), np.ascontiguousarray(dy), dy.size * kernel[0] * kernel[1]
    if stride == (1, 1):
        (top, bottom), (left, right) = padding
        _run(_weight_grad_unit, work, x, dy, top, left, x.shape[2] + top + bottom, x.shape[3] + left + right,
             *dilation, dwt)
    else:
        _run(_weight_grad, work, np.pad(x, ((0, 0), (0, 0)) + tuple(padding)), dy, *stride, *dilation, dwt)
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

