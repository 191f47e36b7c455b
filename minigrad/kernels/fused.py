"""Fused kernels for the Transformer's non-norm ops: one pass over memory where NumPy makes several.

Each kernel has a NumPy reference here (the executable specification, run on the ``"numpy"`` backend and
for the cases the numba twin does not cover) and a numba twin of the same name in fused_numba.py, run
on the ``"numba"`` backend (``minigrad.kernels.get_backend()``); fused_numba.py says which run on numba's
threads. The rotary twin and SwiGLU's backward compute the reference's expressions in its order, without
fastmath, so both give the same floats; the softmax twins sum differently, and the float32 twins that take an
exp (the masked softmax, SwiGLU's forward) use their own (below).

* ``rotate_pairs(x, cos, sin)``: the rotary embedding's turn of each feature pair (x1, x2) =
  (x[..., i], x[..., i + hd/2]) of x (..., T, hd) by its angle, cos and sin (T, hd/2):
  y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin. NumPy makes six strided passes over the halves (x is
  usually a transposed view of a projection), the twin one.
* ``swiglu_forward(a, b)``: out = silu(a) * b = a s b and s = sigmoid(a) = 1 / (1 + exp(-a)), which the
  backward reuses. NumPy makes six passes (and its exp one thread), the twin one on numba's threads, with
  the vectorizable float32 exp of the softmax twin below.
* ``swiglu_backward(dout, a, b, s)``: the gradients of out = silu(a) * b, s = sigmoid(a):
  da = dout * b * s * (1 + a (1 - s)), db = dout * a * s. NumPy makes seven passes, the twin one.
* ``masked_softmax_(w, scale, bias)``: attention's softmax of the scaled, masked scores along the last
  axis, in place. NumPy makes seven passes over the scores (scale, mask, max, subtract, exp, sum, divide),
  and its max and sum along rows of a few dozen scores cost more than the arithmetic; the twin handles one
  row at a time in cache, on numba's threads. numba's own exp is the C library's scalar one, so the float32
  twin calls a vectorizable exp of plain arithmetic (``numba_kernels._exp_float32``, within 2 ulp), and sums
  the row in float64. It covers a mask (L, S) shared by the whole batch, as ``is_causal`` makes it; another
  mask's shape runs the reference.
* ``softmax_backward_(dw, w, scale)``: attention's softmax backward along the last axis of rows of a
  few dozen scores, in place. NumPy's sum along such a short axis costs more than the arithmetic; the
  twin handles one row at a time in cache and accumulates the row's dot product in float64 (so it may
  differ from NumPy's float32 pairwise sum in the last bit).
* ``relu_backward(out, dout)``: ReLU's input gradient from its output, as PyTorch's threshold_backward:
  dout where out > 0 or out is NaN, 0 elsewhere (also where dout is inf or NaN). NumPy makes a
  comparison, its negation and a product with the mask (plus a fix-up pass for non-finite dout), the twin
  one pass (0.74 -> 0.43 ms at 32x32x32x32 float32, 1 thread).
* ``relu(x)``: 0 where x < 0, else x (NaN and -0.0 stay, as in PyTorch); the twin is the same pass split over
  numba's threads (NumPy's runs on one).
* ``add_rows_(out, at, rows, alpha)``: out[at[k]] += alpha * rows[k] for k in order (repeats accumulate), in
  place: an embedding's backward and a sparse gradient applied to its table. NumPy's ``np.add.at`` takes 3.5 ms for
  4,096 rows of 64 float32 (sorting and ``np.add.reduceat`` 1.2 ms); the twin is one serial loop in the same order,
  so both give the same bits.
"""
import numpy as np

from . import numba_module


def rotate_pairs_reference(x, cos, sin):
    """NumPy reference of ``rotate_pairs``: y (..., T, hd), a fresh C-contiguous array."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    y = np.empty(x.shape, dtype=np.result_type(x, cos))
    y1, y2 = y[..., :half], y[..., half:]
    np.multiply(x1, cos, out=y1)
    y1 -= x2 * sin
    np.multiply(x2, cos, out=y2)
    y2 += x1 * sin
    return y


def swiglu_forward_reference(a, b):
    """NumPy reference of ``swiglu_forward``: (out, s), fresh arrays of a's shape."""
    s = np.negative(a)
    with np.errstate(over="ignore"):  # exp(-a) = inf for a << 0 gives s = 1/inf = 0, the right limit
        np.exp(s, out=s)
    s += 1
    np.reciprocal(s, out=s)
    out = a * s
    out *= b
    return out, s


def swiglu_backward_reference(dout, a, b, s):
    """NumPy reference of ``swiglu_backward``: (da, db), fresh arrays of a's shape."""
    silu = a * s
    db = dout * silu
    gb = dout * b
    da = 1 - s
    da *= a
    da += 1
    da *= s
    da *= gb
    return da, db


def masked_softmax_reference_(w, scale, bias):
    """NumPy reference of ``masked_softmax_``."""
    w *= scale
    if bias is not None:
        w += bias
    w -= np.max(w, axis=-1, keepdims=True)
    np.exp(w, out=w)
    w /= np.sum(w, axis=-1, keepdims=True)
    return w


def softmax_backward_reference_(dw, w, scale):
    """NumPy reference of ``softmax_backward_``: dw <- (w * (dw - sum(dw * w, -1))) * scale, in place."""
    dw -= np.sum(dw * w, axis=-1, keepdims=True)
    dw *= w
    dw *= scale
    return dw


def _twin(reference, *arrays):
    """The numba twin of ``reference`` when the numba backend is in use and it covers these arrays
    (one float dtype throughout), else the reference itself."""
    dtype = arrays[0].dtype
    fast = numba_module("fused_numba") if dtype in (np.float32, np.float64) and all(a.dtype == dtype for a in
                                                                                     arrays) else None
    return reference if fast is None else getattr(fast, reference.__name__.replace("_reference", ""))


def rotate_pairs(x, cos, sin):
    """y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin for x (B, H, T, hd) (any strides), cos, sin (T, hd/2)."""
    if x.ndim != 4:
        return rotate_pairs_reference(x, cos, sin)
    return _twin(rotate_pairs_reference, x, cos, sin)(x, cos, sin)


def swiglu_forward(a, b):
    """(out, s) of out = a * s * b, s = sigmoid(a), for arrays of one shape."""
    if a.shape != b.shape:
        return swiglu_forward_reference(a, b)
    return _twin(swiglu_forward_reference, a, b)(a, b)


def swiglu_backward(dout, a, b, s):
    """(da, db) of out = a * s * b, s = sigmoid(a), for arrays of one shape."""
    if not (dout.shape == a.shape == b.shape == s.shape):
        return swiglu_backward_reference(dout, a, b, s)
    return _twin(swiglu_backward_reference, dout, a, b, s)(dout, a, b, s)


def masked_softmax_(w, scale, bias):
    """w <- softmax(w * scale + bias) along the last axis, in place, for w (..., L, S) and bias None or an
    array broadcasting to w; returns w."""
    shared = bias is None or (bias.ndim <= w.ndim and bias.shape[-2:] == w.shape[-2:]
                              and all(size == 1 for size in bias.shape[:-2]))     # one (L, S) mask for the batch
    if not (shared and w.flags.c_contiguous and w.ndim >= 2 and w.size):
        return masked_softmax_reference_(w, scale, bias)
    arrays = (w,) if bias is None else (w, bias)
    return _twin(masked_softmax_reference_, *arrays)(w, scale, bias)


def softmax_backward_(dw, w, scale):
    """dw <- (w * (dw - sum(dw * w, -1))) * scale in place (softmax's backward, scaled); returns dw."""
    if not (dw.flags.c_contiguous and w.flags.c_contiguous and dw.shape == w.shape and w.ndim >= 1):
        return softmax_backward_reference_(dw, w, scale)
    return _twin(softmax_backward_reference_, dw, w)(dw, w, scale)


def relu_reference(x):
    """NumPy reference of ``relu``."""
    return np.where(x < 0, x.dtype.type(0), x)


def relu(x):
    """0 where x < 0, else x (NaN and -0.0 kept, as PyTorch's clamp at 0 keeps them), for an array of any dtype."""
    return _twin(relu_reference, x)(x)


def relu_backward_reference(out, dout):
    """NumPy reference of ``relu_backward``: a product with the mask when dout is finite (NumPy's masked
    selections are 4x slower); + 0.0 turns the -0.0 of a negative gradient times 0 into PyTorch's 0.0."""
    keep = ~(out <= 0)                      # out > 0, or NaN: a NaN output passes its gradient
    if np.isfinite(dout).all():
        return dout * keep + 0.0
    return np.where(keep, dout, 0)


def relu_backward(out, dout):
    """dx of relu from its output ``out`` and the upstream gradient ``dout`` (arrays of one shape)."""
    return _twin(relu_backward_reference, out, dout)(out, dout)


def add_rows_reference_(out, at, rows, alpha):
    """NumPy reference of ``add_rows_``: out (M, D), at (N,) in range, rows (N, D), alpha a number of out's dtype."""
    np.add.at(out, at, rows if alpha == 1 else rows * alpha)


def add_rows_(out, at, rows, alpha=1):
    """out[at[k]] += alpha * rows[k] for each k in order, in place (out (M, ...), at (N,), rows (N, ...))."""
    alpha = out.dtype.type(alpha)
    if out.ndim == 2 and rows.ndim == 2:
        _twin(add_rows_reference_, out, rows)(out, at, rows, alpha)
    else:
        add_rows_reference_(out, at, rows, alpha)
