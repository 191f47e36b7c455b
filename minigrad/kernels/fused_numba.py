"""numba twins of the NumPy references in fused.py (same names and signatures; see its docstring).

The row scatter (``add_rows_``: rows adding into one row must go in order) is serial; the others run on numba's
threads above ``SERIAL_BELOW`` (numba_kernels.py). The rotary turn reads each row of x where it lies: x is usually
the transposed view of a (B, T, H, hd) projection, and walking it through its strides stopped LLVM vectorizing
(Zen 4 EPYC, (32, 4, 64, 32) float32: 0.144 ms strided on one thread, 0.057 ms by rows on one, 0.030 on two). On the
AVX2 EPYC, one process, float32: SwiGLU's forward at (32, 64, 352) took 0.85 ms on one thread and 0.55 on two, its
backward 0.60 and 0.33; the softmax backward at (32, 4, 64, 64) 0.25 and 0.17-0.19. Compiled without
fastmath: each output element is the reference's expression in the reference's order, except where an exp is
computed (the float32 exp is numba_kernels._exp_float32, within 2 ulp, not NumPy's) and two row sums: the
softmax backward's dot product (``_dot``, compiled with ``fastmath={"reassoc"}`` so that LLVM keeps several
float64 partial sums in SIMD lanes, 3x faster) and the softmax's total (numba_kernels._sum_dev); their order is
still fixed by the code and the row length. The wrappers allocate the outputs with NumPy (huge pages, see
numba_kernels.py) and make the inputs contiguous where the kernel walks them flat.

One twin has no reference in fused.py: Adam's step (``adam_step_``), whose reference is the NumPy operations of
optim/adam.py, one array pass each; the twin does them elementwise in one pass, in their order and dtype, so
both give the same bits (tests/test_optim.py). The Transformer's AdamW step over its 918,656 float32 parameters
(39 tensors, one process, 2 threads) took 10.4 ms as NumPy operations and 3.6 ms as the twin.
"""
import numpy as np
from numba import njit, prange

from .numba_kernels import _exp, _kernel, _run, _sum_dev

_serial = njit(cache=True, fastmath=False, error_model="numpy")
_sum = njit(cache=True, fastmath={"reassoc"}, error_model="numpy")


@_kernel
def _rotate_pairs(x, seq_major, cos, sin, y):
    # x (B, H, T, hd), or (B, T, H, hd) if seq_major; C-contiguous either way, as y (B, H, T, hd)
    n_batch, n_heads, n_pos, hd = y.shape
    half = hd // 2
    for bh in prange(n_batch * n_heads):
        b, h = bh // n_heads, bh % n_heads
        for t in range(n_pos):
            xr, yr, c, s = x[b, t, h] if seq_major else x[b, h, t], y[b, h, t], cos[t], sin[t]   # (hd,), (hd/2,)
            for i in range(half):
                x1, x2 = xr[i], xr[i + half]
                yr[i] = x1 * c[i] - x2 * s[i]
                yr[i + half] = x2 * c[i] + x1 * s[i]


def rotate_pairs(x, cos, sin):
    y = np.empty(x.shape, dtype=x.dtype)
    cos, sin = np.ascontiguousarray(cos), np.ascontiguousarray(sin)
    seq_major = x.transpose(0, 2, 1, 3)     # (B, T, H, hd): the projection's own layout, of which x is often a view
    if seq_major.flags.c_contiguous and not x.flags.c_contiguous:
        _run(_rotate_pairs, x.size, seq_major, True, cos, sin, y)
    else:
        _run(_rotate_pairs, x.size, np.ascontiguousarray(x), False, cos, sin, y)
    return y


@_kernel
def _swiglu_forward(a, b, one, out, s):
    for i in prange(a.size):                              # all (N,) contiguous
        si = one / (one + _exp(-a[i]))                    # sigmoid(a); float32: numba_kernels._exp_float32
        s[i] = si
        out[i] = (a[i] * si) * b[i]


def swiglu_forward(a, b):
    flat = [np.ascontiguousarray(t).reshape(-1) for t in (a, b)]
    out, s = np.empty(a.shape, dtype=a.dtype), np.empty(a.shape, dtype=a.dtype)
    _run(_swiglu_forward, a.size, *flat, a.dtype.type(1), out.reshape(-1), s.reshape(-1))
    return out, s


@_kernel
def _swiglu_backward(dout, a, b, s, one, da, db):
    for i in prange(a.size):                              # all (N,) contiguous
        si, ai = s[i], a[i]
        db[i] = dout[i] * (ai * si)
        da[i] = (((one - si) * ai + one) * si) * (dout[i] * b[i])   # one: 1 in the data's dtype


def swiglu_backward(dout, a, b, s):
    flat = [np.ascontiguousarray(t).reshape(-1) for t in (dout, a, b, s)]
    da, db = np.empty(a.shape, dtype=a.dtype), np.empty(a.shape, dtype=a.dtype)
    _run(_swiglu_backward, a.size, *flat, a.dtype.type(1), da.reshape(-1), db.reshape(-1))
    return da, db


@_sum
def _dot(g, y):
    """sum_j g_j y_j in float64, for two contiguous rows."""
    dot = 0.0
    for j in range(g.size):
        dot += g[j] * y[j]
    return dot


@_kernel
def _softmax_backward(dw, w, scale):
    n_rows, n_cols = w.shape                              # dw, w (R, S) contiguous
    for r in prange(n_rows):
        g, y = dw[r], w[r]
        dot = _dot(g, y)
        for j in range(n_cols):
            g[j] = (y[j] * (g[j] - dot)) * scale


def softmax_backward_(dw, w, scale):
    _run(_softmax_backward, w.size, dw.reshape(-1, dw.shape[-1]), w.reshape(-1, w.shape[-1]), w.dtype.type(1) * scale)
    return dw


@_kernel
def _masked_softmax(w, scale, bias):
    n_rows, n_cols = w.shape                              # w (R, S) contiguous: R = batch * L rows of scores
    n_queries = bias.shape[0]                             # bias (L, S), or (0, S) for none: row r is query r % L
    for r in prange(n_rows):
        row = w[r]
        for j in range(n_cols):
            row[j] *= scale
        if n_queries:
            b = bias[r % n_queries]
            for j in range(n_cols):
                row[j] += b[j]
        m = row[0]
        for j in range(1, n_cols):
            m = row[j] if row[j] > m else m               # NaN: exp passes it on, and the total makes the row NaN
        for j in range(n_cols):
            row[j] = _exp(row[j] - m)                     # float32: numba_kernels._exp_float32, vectorized
        total = w.dtype.type(_sum_dev(row, 0.0))          # float64 sum
        for j in range(n_cols):
            row[j] /= total


def masked_softmax_(w, scale, bias):
    n_cols = w.shape[-1]
    rows = w.reshape(-1, n_cols)                          # a view: the caller passes w C-contiguous
    bias = np.empty((0, n_cols), w.dtype) if bias is None else np.ascontiguousarray(bias).reshape(-1, n_cols)
    _run(_masked_softmax, w.size, rows, w.dtype.type(scale), bias)
    return w


@_kernel
def _relu(x, y):
    for i in prange(x.size):                              # both (N,) contiguous
        v = x[i]
        y[i] = 0 if v < 0 else v                          # the reference's: NaN and -0.0 stay


def relu(x):
    y = np.empty(x.shape, dtype=x.dtype)
    _run(_relu, x.size, np.ascontiguousarray(x).reshape(-1), y.reshape(-1))
    return y


@_kernel
def _relu_backward(out, dout, dx):
    for i in prange(out.size):                            # all (N,) contiguous
        dx[i] = 0 if out[i] <= 0 else dout[i]             # a NaN output passes its gradient


def relu_backward(out, dout):
    dx = np.empty(dout.shape, dtype=dout.dtype)
    _run(_relu_backward, out.size, np.ascontiguousarray(out).reshape(-1), np.ascontiguousarray(dout).reshape(-1),
         dx.reshape(-1))
    return dx


@_kernel
def _adam_step(p, g, m, v, v_max, decay, c1, beta2, c2, bias_correction2_sqrt, eps, neg_step_size):
    amsgrad = v_max.size > 0                              # v_max (N,), or (0,) without AMSGrad
    for i in prange(p.size):                              # p, g, m, v (N,) contiguous
        gi = g[i]
        p_i = p[i] * decay                                # AdamW's decay first (1 without)
        m_i = m[i] + (gi - m[i]) * c1                     # m += (1 - beta1) * (g - m)
        v_i = v[i] * beta2 + (gi * c2) * gi               # v = beta2 * v + (1 - beta2) * g * g
        m[i], v[i] = m_i, v_i
        second = v_i
        if amsgrad:                                       # np.maximum's: a NaN on either side wins
            second = v_max[i] if v_max[i] >= v_i or v_max[i] != v_max[i] else v_i
            v_max[i] = second
        denom = np.sqrt(second) / bias_correction2_sqrt + eps
        p[i] = p_i + (m_i * neg_step_size) / denom


def adam_step_(p, g, m, v, v_max, lr, beta1, beta2, eps, step, decay):
    """One Adam step of the contiguous arrays p (written in place), g, m, v and v_max (AMSGrad's running maximum,
    or None), in one pass: optim/adam.py's NumPy operations, elementwise in their order and dtype (its NumPy path
    is this twin's reference). ``decay``: AdamW's factor 1 - lr * weight_decay, or 1."""
    t = p.dtype.type
    v_max = np.empty(0, p.dtype) if v_max is None else v_max.reshape(-1)
    _run(_adam_step, p.size, p.reshape(-1), g.reshape(-1), m.reshape(-1), v.reshape(-1), v_max, t(decay),
         t(1 - beta1), t(beta2), t(1 - beta2), t((1 - beta2 ** step) ** 0.5), t(eps), t(-(lr / (1 - beta1 ** step))))


@_serial
def _add_rows(out, at, rows, alpha, scale):
    n_rows, dim = rows.shape                               # out (M, dim), at (n_rows,), rows (n_rows, dim)
    for k in range(n_rows):
        i = at[k]
        for j in range(dim):
            out[i, j] += rows[k, j] * alpha if scale else rows[k, j]


def add_rows_(out, at, rows, alpha):
    _add_rows(out, at, rows, alpha, alpha != 1)
