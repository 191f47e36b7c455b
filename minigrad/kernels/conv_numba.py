"""numba kernels of the depthwise convolution (one input channel per group: weight (O, 1, kh, kw)), the
case the im2col lowering serves worst: its matmuls have an inner dimension of kh*kw (forward, weight
gradient) or 1 (input gradient), far from what BLAS is fast at. They compute the same maps as
``minigrad/ops/conv.py``'s NumPy path (the reference on the ``"numpy"`` backend; tests keep the two equal):

    C:  y[n, o, p, q]   = sum_{i,j} w[o, 0, i, j] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]      (m = O / C)
    T:  dxpad[n, c, ...] = the same sum scattered back: += w[o, 0, i, j] dy[n, o, p, q] for o in c's group
    W:  dw[o, 0, i, j]  = sum_{n,p,q} dy[n, o, p, q] xpad[n, o // m, p*sh + i*dh, q*sw + j*dw]

One parallel task per (n, o) for C, per (n, c) for T (each task owns what it writes), per o for W; the
innermost loop runs along a row (q), contiguous when the stride is 1, so numba vectorizes it. Sums of W
are accumulated in float64. Kernels below ``SERIAL_BELOW`` elements run serially (``numba_kernels._run``).
"""
import numpy as np
from numba import prange

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
                    if sw == 1:                        # apart, so that numba vectorizes it
                        for q in range(ow):
                            y_row[q] += wij * x_row[start + q]
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
                            for q in range(ow):
                                dx_row[start + q] += wij * dy_row[q]
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


def depthwise_conv(xp, w, stride, dilation, out_size):
    """C on the zero-padded xp (N, C, Hp, Wp): (N, O, OH, OW)."""
    y = np.zeros(xp.shape[:1] + w.shape[:1] + tuple(out_size), dtype=xp.dtype)
    _run(_forward, y.size * w.shape[2] * w.shape[3], np.ascontiguousarray(xp), np.ascontiguousarray(w),
         *stride, *dilation, y)
    return y


def depthwise_conv_transpose(dy, w, stride, dilation, padded_shape):
    """T into a zero-padded x of ``padded_shape`` (N, C, Hp, Wp) (the caller crops the padding)."""
    dxp = np.zeros(padded_shape, dtype=dy.dtype)
    _run(_input_grad, dy.size * w.shape[2] * w.shape[3], np.ascontiguousarray(dy), np.ascontiguousarray(w),
         *stride, *dilation, dxp)
    return dxp


def depthwise_conv_weight(xp, dy, stride, dilation, kernel):
    """W: (O, 1, kh, kw) from the zero-padded xp and dy."""
    dwt = np.empty(dy.shape[1:2] + (1,) + tuple(kernel), dtype=dy.dtype)
    _run(_weight_grad, dy.size * kernel[0] * kernel[1], np.ascontiguousarray(xp), np.ascontiguousarray(dy),
         *stride, *dilation, dwt)
    return dwt
