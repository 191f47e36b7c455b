"""numba kernels of the convolutions: the depthwise convolution's own kernels, and the copies around the
im2col lowering's matmuls (at the end of the file).

The kernels of the depthwise convolution (one input channel per group: weight (O, 1, kh, kw)), the
case the im2col lowering serves worst: its matmuls have an inner dimension of kh*kw (forward, weight
gradient) or 1 (input gradient), far from what BLAS is fast at. They compute the same maps as
``minigrad/ops/conv.py``'s NumPy path (the reference on the ``"numpy"`` backend; tests keep the two equal):

    C:  y[n, o, p, q]   = sum_{i,j} w[o, 0, i, j] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]      (m = O / C)
    T:  dxpad[n, c, ...] = the same sum scattered back: += w[o, 0, i, j] dy[n, o, p, q] for o in c's group
    W:  dw[o, 0, i, j]  = sum_{n,p,q} dy[n, o, p, q] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]

One parallel task per (n, o) for C, per (n, c) for T (each task owns what it writes), per o for W. Each task
pads its own image plane in a small array and deals it out by row and column phase (the comment before the
kernels), so that every tap, at any stride, is one loop over a flat run (NumPy's whole-batch zero padding,
widening and cropping around the kernels took twice as long as the kernels; bench/bench_conv.py, 2 threads,
forward + backward: 32x64x16x16 4.3 -> 1.9 ms, at stride 2 from 32x32 3.7 ms, against 8.6 ms before, timed
outside the benchmark). Inner loops index a slice view with the loop counter: numba then knows the index is
non-negative and vectorizes (indexing ``row[start + q]`` directly ran 2.6x slower, scalar). Sums of W are
accumulated in float64. Kernels below ``SERIAL_BELOW`` elements run serially.
"""
import math

import numpy as np
from numba import prange

from . import buffers
from .numba_kernels import _inline, _kernel, _run


# Each task works on its own image plane, zero-padded and dealt out by phase into a small flat array:
# planes[fr, fc, v, u] = xpad[v*sh + fr, u*sw + fc] (for stride 1, the padded plane itself). Tap (i, j) of
# output (p, q) reads xpad[p*sh + i*dh, q*sw + j*dw] = planes[fr, fc, p + vi, q + uj] with vi, fr =
# divmod(i*dh, sh) and uj, fc = divmod(j*dw, sw): in the phase plane (fr, fc), rows of Pw, that is position
# start + p*Pw + q with start = vi*Pw + uj. So each tap is one loop over a flat run of L = (OH - 1)*Pw + OW
# positions of a "wide" output plane (OH, Pw), long enough to vectorize, instead of OH short rows or a strided
# gather; columns q >= OW of a wide row are junk (never copied out; zeros in the backward's wide dy). x, y,
# dx and dy are read and written once: no padded or wide copy of the whole batch.
@_inline
def _phase_range(size, before, stride, phase, count):
    """The range of phase indices u < ``count`` whose position u*stride + phase - before falls inside 0..size-1."""
    first = (before - phase + stride - 1) // stride
    last = (size - 1 + before - phase) // stride + 1 if size - 1 + before - phase >= 0 else 0
    return first, min(max(last, first), count)


@_inline
def _phase_copy(image, top, left, sh, sw, hv, pw, planes, into_planes):
    """Between a plane ``image`` (H, W) and its zero-padded, phase-split copy ``planes`` (sh*sw*Hv*Pw,), flat
    (module comment above; image row r at padded row r + top, column q at q + left): ``into_planes``, planes <-
    the padded image (zeros around it); otherwise image <- the interior of the padded plane in ``planes``."""
    if into_planes:
        planes[:] = 0
    for fr in range(sh):
        v0, v1 = _phase_range(image.shape[0], top, sh, fr, hv)
        for fc in range(sw):
            u0, u1 = _phase_range(image.shape[1], left, sw, fc, pw)
            for v in range(v0, v1):
                at = ((fr * sw + fc) * hv + v) * pw
                flat_run, image_run = planes[at + u0:at + u1], image[v * sh + fr - top, u0 * sw + fc - left:]
                if into_planes:                        # on views, indexed by the loop counter: no index checks
                    for u in range(u1 - u0):
                        flat_run[u] = image_run[u * sw]
                else:
                    for u in range(u1 - u0):
                        image_run[u * sw] = flat_run[u]


@_inline
def _tap_start(row, col, sh, sw, hv, pw):
    """Where the run of the tap at offset (row, col) = (i*dh, j*dw) starts in the flattened planes."""
    return ((row % sh * sw + col % sw) * hv + row // sh) * pw + col // sw


@_inline
def _wide_plane(src, pw, wide):
    """wide (OH*Pw,) <- src (OH, OW) in rows of Pw, zeros beyond OW."""
    wide[:] = 0
    for p in range(src.shape[0]):
        row = wide[p * pw:p * pw + src.shape[1]]
        for q in range(src.shape[1]):
            row[q] = src[p, q]


@_kernel
def _forward(x, w, bias, has_bias, top, left, hp, wp, sh, sw, dh, dw, y):
    n_batch, n_out, oh, ow = y.shape                   # x (N, C, H, W), w (O, 1, kh, kw), bias (O,), y (N, O, OH, OW)
    m = n_out // x.shape[1]
    hv, pw = -(-hp // sh), -(-wp // sw)
    length = (oh - 1) * pw + ow
    for task in prange(n_batch * n_out):
        n, o = task // n_out, task % n_out
        flat, wide = np.empty(sh * sw * hv * pw, x.dtype), np.zeros(oh * pw, y.dtype)   # padded x, wide y
        _phase_copy(x[n, o // m], top, left, sh, sw, hv, pw, flat, True)
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                wij, start = w[o, 0, i, j], _tap_start(i * dh, j * dw, sh, sw, hv, pw)
                x_run = flat[start:start + length]     # a view: indices from range() vectorize
                for t in range(length):
                    wide[t] += wij * x_run[t]
        for p in range(oh):
            y_row, wide_row = y[n, o, p], wide[p * pw:p * pw + ow]
            for q in range(ow):
                y_row[q] = wide_row[q] + bias[o] if has_bias else wide_row[q]


@_kernel
def _input_grad(dy, w, top, left, hp, wp, sh, sw, dh, dw, dx):
    n_batch, n_in = dx.shape[:2]                       # dy (N, O, OH, OW), w (O, 1, kh, kw), dx (N, C, H, W)
    oh, ow, m = dy.shape[2], dy.shape[3], dy.shape[1] // n_in
    hv, pw = -(-hp // sh), -(-wp // sw)
    length = (oh - 1) * pw + ow
    for task in prange(n_batch * n_in):
        n, c = task // n_in, task % n_in
        flat, wide = np.zeros(sh * sw * hv * pw, dx.dtype), np.empty(oh * pw, dy.dtype)   # padded dx, wide dy
        for o in range(c * m, (c + 1) * m):
            _wide_plane(dy[n, o], pw, wide)
            for i in range(w.shape[2]):
                for j in range(w.shape[3]):
                    wij, start = w[o, 0, i, j], _tap_start(i * dh, j * dw, sh, sw, hv, pw)
                    dx_run = flat[start:start + length]
                    for t in range(length):
                        dx_run[t] += wij * wide[t]
        _phase_copy(dx[n, c], top, left, sh, sw, hv, pw, flat, False)   # sums on the padding are dropped


@_kernel
def _weight_grad(x, dy, top, left, hp, wp, sh, sw, dh, dw, dwt):
    n_batch, n_out, oh, ow = dy.shape                  # x (N, C, H, W), dy (N, O, OH, OW), dwt (O, 1, kh, kw)
    kh, kw = dwt.shape[2], dwt.shape[3]
    m = n_out // x.shape[1]
    hv, pw = -(-hp // sh), -(-wp // sw)
    length = (oh - 1) * pw + ow
    for o in prange(n_out):
        lanes = np.zeros((kh, kw, length))             # float64 partial sums per position: no reduction in the loop
        flat, wide = np.empty(sh * sw * hv * pw, x.dtype), np.empty(oh * pw, dy.dtype)   # padded x, wide dy
        for n in range(n_batch):
            _phase_copy(x[n, o // m], top, left, sh, sw, hv, pw, flat, True)
            _wide_plane(dy[n, o], pw, wide)
            for i in range(kh):
                for j in range(kw):
                    start = _tap_start(i * dh, j * dw, sh, sw, hv, pw)
                    x_run, lane = flat[start:start + length], lanes[i, j]
                    for t in range(length):
                        lane[t] += wide[t] * x_run[t]
        for i in range(kh):
            for j in range(kw):
                dwt[o, 0, i, j] = lanes[i, j].sum()


def depthwise_conv(x, w, bias, padding, stride, dilation, out_size):
    """C (+ bias) of x (N, C, H, W) zero-padded by ``padding`` ((top, bottom), (left, right)): (N, O, OH, OW)."""
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
    work = x.shape[0] * w.shape[0] * out_size[0] * out_size[1] * w.shape[2] * w.shape[3]
    (top, bottom), (left, right) = padding
    y = np.empty(x.shape[:1] + w.shape[:1] + tuple(out_size), dtype=x.dtype)
    b = np.empty(0, x.dtype) if bias is None else np.ascontiguousarray(bias.reshape(-1), dtype=x.dtype)
    _run(_forward, work, x, w, b, bias is not None, top, left, x.shape[2] + top + bottom, x.shape[3] + left + right,
         *stride, *dilation, y)
    return y


def depthwise_conv_transpose(dy, w, channels, padding, stride, dilation, size):
    """T: dx (N, channels, H, W) of spatial ``size``; the sums that fall on x's zero padding are dropped."""
    (top, bottom), (left, right) = padding
    dy, w, work = np.ascontiguousarray(dy), np.ascontiguousarray(w), dy.size * w.shape[2] * w.shape[3]
    dx = np.empty((dy.shape[0], channels) + tuple(size), dtype=dy.dtype)
    _run(_input_grad, work, dy, w, top, left, size[0] + top + bottom, size[1] + left + right, *stride, *dilation, dx)
    return dx


def depthwise_conv_weight(x, dy, padding, stride, dilation, kernel):
    """W: (O, 1, kh, kw) from x (zero-padded by ``padding``) and dy."""
    dwt = np.empty(dy.shape[1:2] + (1,) + tuple(kernel), dtype=dy.dtype)
    x, dy, work = np.ascontiguousarray(x), np.ascontiguousarray(dy), dy.size * kernel[0] * kernel[1]
    (top, bottom), (left, right) = padding
    _run(_weight_grad, work, x, dy, top, left, x.shape[2] + top + bottom, x.shape[3] + left + right, *stride,
         *dilation, dwt)
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

