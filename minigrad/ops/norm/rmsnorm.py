"""RMSNorm (Zhang & Sennrich, "Root Mean Square Layer Normalization", NeurIPS 2019) and its variants.

As ``torch.nn.functional.rms_norm``, per row x (the trailing ``normalized_shape`` dims). The formulas are
written once, in the docstrings of the NumPy references ``rms_norm_forward`` and ``rms_norm_backward`` below,
which docs/derivations/rmsnorm.md quotes and derives (``docs/derivations/build.py --check`` keeps the quotes
equal to this file); the other docstrings here cite them rather than repeat them.

This file reads top to bottom: the NumPy reference forward and backward (the specification, with
a numba twin of the same name in minigrad/kernels/numba_kernels.py), the ``RMSNormFunction`` that
runs them, the double backward (``RMSNormBackward``: dx as a Function whose backward is derived by
hand, for ``create_graph=True``), the composite twin ``rms_norm_composite`` (minigrad ops, differentiated by autograd:
the teaching reference and the tests' oracle), and the public ``rms_norm`` with its checks.

Options beyond PyTorch (keyword-only, off by default; docs/derivations/rmsnorm.md §10):

* ``bias=b``: y = weight * xhat + b (the ``offset`` parameter of the reference code
  github.com/bzhangGo/rmsnorm); db = sum of the upstream gradient.
* ``eps_inside_sqrt=False``: rstd = 1 / (sqrt(mean(x^2)) + eps), as in the reference code's
  ``rmsnorm_torch.py`` (its TensorFlow file puts eps inside, as PyTorch does). At an all-zero
  row the gradient is NaN: d sqrt(m)/dm is infinite at m = 0.
* ``partial=p``: partial RMSNorm (pRMSNorm, the paper's §4): the RMS is estimated from the first
  k = ceil(p * d) elements of the row only, and all d elements are divided by it. The paper
  uses ceil; the reference code uses ``int(d * p)`` (floor, and crashes when it is 0). We follow
  the paper, so k >= 1 for every p in (0, 1].

``eps=None`` means the machine epsilon of the compute dtype (float32 for float16 input), as
PyTorch does. float16 input is computed in float32 and cast back once, after the weight multiply
(and bias), so x**2 cannot overflow; its gradients come back as float16.
"""
import math
from numbers import Real

import numpy as np

from ..._checks import float_arg, takes_tensors
from ...autograd import Function
from ...dtypes import compute_dtype
from ...kernels import kernel
from ...tensor import Tensor
from .common import input_grads, normalize, square_mean64, sum64
from .rms_casting import cast_rms_norm, check_casting
from .rows import (affine_rows, as_rows, check_row_norm_args, from_rows, functional_normalized_shape, row_affine,
                   row_dims, row_operands, row_param, row_param_grads, rowdot, shaped_grads)


# --------------------------------------------------------------------------- NumPy reference, x (R, D)
def mean_square(x, k):
    """mean(x[:, :k]**2) per row: the (partial) mean square of RMSNorm, (R,)."""
    return square_mean64(x[:, :k], "rd->r")              # (R,) float64 over the RMS subset (R, k): no overflow


def rms_norm_forward(x, weight, bias, eps, k, eps_outside):
    """RMSNorm and its variants over each row of x (R, D).

    ms = mean(x[:, :k]**2)  (k = D: plain RMSNorm; k < D: partial RMSNorm)
    rstd = 1/sqrt(ms + eps)      (eps_outside=False, PyTorch)
    rstd = 1/(sqrt(ms) + eps)    (eps_outside=True)
    y = x * rstd * weight + bias (weight/bias optional)
    Returns (y (R, D), rstd (R,)).
    """
    ms = mean_square(x, k)                               # (R,)
    with np.errstate(divide="ignore"):                   # eps = 0 on a zero row: rstd = inf, as PyTorch
        rstd = (1 / (np.sqrt(ms) + eps) if eps_outside else 1 / np.sqrt(ms + eps)).astype(x.dtype)
    with np.errstate(invalid="ignore"):                  # 0 * inf = NaN, as PyTorch
        xhat = x * rstd[:, None]                         # (R, D)
    return affine_rows(xhat, weight, bias), rstd


def rms_norm_backward(dy, x, rstd, weight, eps, k, eps_outside, need_dx, need_dw, need_db):
    """Gradients of rms_norm_forward. With xhat = x*rstd, gw = dy*weight, mask = [j < k]:
    dx = rstd * (gw - c * x * mask * sum_j(gw*xhat)/k), c = rstd (eps inside) or 1/sqrt(ms) (eps outside)
    dw = sum_rows(dy * xhat), db = sum_rows(dy). Returns (dx, dw, db).

    For eps outside, ms is recomputed from x rather than from ``1/rstd - eps``, which would
    cancel when sqrt(ms) << eps; ``eps`` is part of the shared signature and unused here.
    """
    with np.errstate(invalid="ignore"):
        xhat = x * rstd[:, None] if need_dx or need_dw else None  # (R, D)
        dw, db = row_param_grads(dy, xhat, need_dw, need_db)      # (D,) each
        if not need_dx:
            return None, dw, db
        gw = dy * weight if weight is not None else dy            # (R, D)
        proj = rowdot(gw, xhat) / k                               # sum_j(gw*xhat)/k, (R,)
        with np.errstate(divide="ignore"):
            c = (1 / np.sqrt(mean_square(x, k))).astype(x.dtype) if eps_outside else rstd  # (R,)
        dx = gw.copy() if gw is dy else gw                        # never write into the caller's dy
        dx[:, :k] -= (c * proj)[:, None] * x[:, :k]               # only the RMS subset gets the correction
        dx *= rstd[:, None]
    return dx, dw, db


# --------------------------------------------------------------------------- the Function
def _kept_as_pytorch(ctx, input, weight, w):
    """(x, w) for RMSNorm's backward, kept as PyTorch's composite rms_norm keeps them: x and the weight themselves
    only when x needs a gradient (and, for x, is float32/float64); otherwise PyTorch saves intermediates (the
    normalized rows, an upcast copy), so copies here, and a write into x or the weight after the forward is refused
    exactly when PyTorch refuses it. ``w`` is the weight as the kernels read it (``row_operands``). When no graph is
    recorded (under no_grad, or no input requires grad) nothing is kept: (None, None), and no copy of x is made."""
    if not any(ctx.needs_input_grad) and getattr(ctx, "edgeless", None) is None:
        return None, None
    if ctx.needs_input_grad[0]:
        if weight is not None:
            ctx.watch(weight._data)                     # (w may be a converted copy)
        own = input._data.dtype in (np.float32, np.float64)
        return (input._data if own else input._data.copy()), w
    if w is not None and weight is not None and np.shares_memory(w, weight._data):
        w = w.copy()
    return input._data.copy(), w


class RMSNormFunction(Function):
    """RMSNorm over rows x (R, D), with the variants of the module docstring: the forward is
    ``kernel(rms_norm_forward)``, the backward ``kernel(rms_norm_backward)`` (their docstrings have the formulas,
    docs/derivations/rmsnorm.md derives them). Saved: x, rstd (one number per row) and w. Each gradient is
    computed only if ``ctx.needs_input_grad`` asks for it; the kernels allocate every gradient they return, so
    the engine makes them the leaves' ``.grad`` without a copy.

    Under ``create_graph=True`` the engine runs ``graph_backward`` instead: the same gradients, each with
    a graph (dx through ``RMSNormBackward``, the double backward below).
    """
    saved_as = (("input", 0), ("result1", None), ("weight", 1))   # PyTorch's (_fused_rms_norm's) names: rstd
    saved_values = {"normalized_shape": "normalized_shape", "eps": "eps"}

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_shape, eps, k, eps_outside):
        x, w, b = row_operands(input, weight, bias, math.prod(normalized_shape))      # (R, D), (D,), (D,)
        y, rstd = kernel(rms_norm_forward)(x, w, b, eps=eps, k=k, eps_outside=eps_outside)
        x_kept, w_kept = _kept_as_pytorch(ctx, input, weight, w)     # input._data (a float16 x stays float16), w
        ctx.save_for_backward(x_kept, rstd, w_kept)
        ctx.normalized_shape, ctx.eps, ctx.k, ctx.eps_outside = normalized_shape, eps, k, eps_outside
        return from_rows(y, input)

    @staticmethod
    def backward(ctx, dout):
        x, rstd, w = ctx.saved_tensors
        d = math.prod(ctx.normalized_shape)
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        dx, dw, db = kernel(rms_norm_backward)(as_rows(dout._data, d), as_rows(x, d), rstd, w, eps=ctx.eps, k=ctx.k,
                                               eps_outside=ctx.eps_outside, need_dx=need_dx, need_dw=need_dw,
                                               need_db=need_db)
        return input_grads(ctx, *shaped_grads(dx, dw, db, x.shape, ctx.normalized_shape))

    @staticmethod
    def graph_backward(ctx, dout):
        """The backward as minigrad ops (create_graph=True), each gradient differentiable again:
        dx = RMSNormBackward(dout, x, w) (the fused dx, whose own backward is the hand-derived double
        backward), dw = dout * xhat and db = dout at the output's shape (the engine sums the rows away),
        with xhat = RMSNormFunction(x) without weight and bias, so its derivatives are this Function's."""
        x, rstd, w = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        options = dict(normalized_shape=ctx.normalized_shape, eps=ctx.eps, k=ctx.k, eps_outside=ctx.eps_outside)
        input = ctx.input_tensor(0, x)
        weight = None if w is None else ctx.input_tensor(1, w.reshape(ctx.normalized_shape))
        dx = RMSNormBackward.apply(dout, input, weight, rstd=rstd, **options) if need_dx else None
        dw = db = None
        if need_dw:
            cdt = compute_dtype(x.dtype)
            xhat = RMSNormFunction.apply(input.to(cdt), None, None, **options)   # x's shape, compute dtype
            dw = dout.to(cdt) * xhat
        if need_db:
            db = dout
        return input_grads(ctx, dx, dw, db)


# --------------------------------------------------------------------------- the double backward
def head_mask(d, k, dtype):
    """mask_K = [j < k] over a row of d elements, (D,) of ``dtype``: the RMS subset of partial RMSNorm;
    None for plain RMSNorm (k = d), where the mask is all ones and is not applied."""
    return None if k == d else (np.arange(d) < k).astype(dtype)


def rms_norm_double_backward(G, dy, x, w, rstd, c, mask, k, rowdot, colsum):
    """The gradients of RMSNorm's dx = rstd * gw + (gw . x) * grad(rstd), gw = dy * w, with respect to
    (dy, x, w), given G, the upstream gradient of dx. Rows (R, D); ``w`` (D,) or None; ``rstd`` and ``c``
    (R, 1); ``mask`` (D,) or None (all ones); ``rowdot(a, b)``: sum_j a_j b_j per row, (R, 1);
    ``colsum(a)``: the sum over rows, (D,). The same lines run on ndarrays (``RMSNormBackward.backward``)
    and on Tensors (its ``graph_backward``: third order and beyond). With m = mask, per row::

        beta = rstd^2 * c / k          grad(rstd) = -beta * m*x
        p = gw . x     q = G . (m*x)   t = G . gw
        d gw = rstd * G - beta * q * x                 d dy = w * d gw     d w = colsum(dy * d gw)
        d x  = -beta * (q * gw + p * m*G + (t - c * (2 * rstd + c) * p * q / k) * m*x)

    d gw = rstd * (G - xhat * (G . c*m*x) / k) is J G, J = rstd (I - xhat (c*m*x)^T / k) the Jacobian of xhat
    with respect to x (dx itself is J^T gw).
    Derivation (docs/derivations/rmsnorm.md): Phi = G . dx = rstd (G . gw) + p (G . grad(rstd)) is linear
    in gw, d gw = rstd G + (G . grad(rstd)) x; its x-derivative is t grad(rstd) + (G . grad(rstd)) gw +
    p H G, with H the Hessian of rstd(ms(x)): H = rstd''(ms) grad(ms) grad(ms)^T + rstd'(ms) (2/k) diag(m),
    grad(ms) = (2/k) m*x, rstd' = -rstd^2 c / 2 and rstd'' = rstd^3 c^2 / 2 + rstd^2 c^3 / 4 for both eps
    placements (eps inside: c = rstd, rstd'' = 3 rstd^5 / 4).
    Returns (d dy, d x, d w) as rows (R, D), (R, D), (D,) (d w None without weight).
    """
    gw = dy if w is None else dy * w
    mx = x if mask is None else x * mask                  # (R, D): m*x
    mG = G if mask is None else G * mask                  # (R, D): m*G
    beta = rstd * rstd * c / k                            # (R, 1)
    p, q, t = rowdot(gw, x), rowdot(G, mx), rowdot(G, gw)  # (R, 1) each
    d_gw = rstd * G - beta * q * x
    dx = -beta * (q * gw + p * mG + (t - c * (2 * rstd + c) * p * q / k) * mx)
    return (d_gw if w is None else d_gw * w), dx, (None if w is None else colsum(dy * d_gw))


class RMSNormBackward(Function):
    """RMSNorm's input gradient dx as a Function of (dy, x, w): what ``RMSNormFunction.graph_backward``
    returns for x, so that dx can be differentiated again.

    Forward: dx = rstd * (gw - c * x * mask_K * sum_j(gw * xhat) / k), gw = dy * w, computed by the same
    kernel as ``RMSNormFunction.backward`` (numba or the NumPy reference), in the compute dtype.
    Backward, with G the upstream gradient of dx: ``rms_norm_double_backward`` (its docstring has the
    formulas), in NumPy with float64 row sums. ``graph_backward`` evaluates the same formulas on Tensors,
    rstd and c recomputed from x with minigrad ops, so every further order comes from autograd.
    """

    @staticmethod
    def forward(ctx, dout, input, weight, rstd, normalized_shape, eps, k, eps_outside):
        d = math.prod(normalized_shape)
        x, dy = as_rows(input._data, d), as_rows(dout._data, d)                      # (R, D) each
        w = row_param(weight, x.dtype)                                               # (D,) or None
        dx, _, _ = kernel(rms_norm_backward)(dy, x, rstd, w, eps=eps, k=k, eps_outside=eps_outside, need_dx=True,
                                             need_dw=False, need_db=False)
        ctx.save_for_backward(dout._data, input._data, rstd, w)
        ctx.normalized_shape, ctx.eps, ctx.k, ctx.eps_outside = normalized_shape, eps, k, eps_outside
        return dx.reshape(input.shape)

    @staticmethod
    def backward(ctx, G):
        dy, x, rstd, w = ctx.saved_tensors
        d, k = math.prod(ctx.normalized_shape), ctx.k
        rows = as_rows(x, d)                                                         # (R, D)
        with np.errstate(divide="ignore", invalid="ignore"):                         # a zero row, eps outside: NaN
            c = 1 / np.sqrt(mean_square(rows, k)) if ctx.eps_outside else rstd       # (R,)
            ddy, dx, dw = rms_norm_double_backward(as_rows(G._data, d), as_rows(dy, d), rows, w, rstd[:, None],
                                                   c[:, None], head_mask(d, k, rows.dtype), k,
                                                   rowdot=lambda a, b: rowdot(a, b)[:, None],
                                                   colsum=lambda a: sum64(a, 0))
        return RMSNormBackward._shaped(ctx, ddy, dx, dw, dy.shape, x.shape)

    @staticmethod
    def graph_backward(ctx, G):
        dy, x, _, w = ctx.saved_tensors                      # rstd is recomputed from x, in the graph
        d, k, eps = math.prod(ctx.normalized_shape), ctx.k, ctx.eps
        cdt = compute_dtype(x.dtype)

        def joined(i, array, shape):                         # input i, in the graph, compute dtype, reshaped
            return ctx.input_tensor(i, array).to(cdt).reshape(shape)
        x_rows = joined(1, x, (-1, d))                                               # (R, D)
        weight = None if w is None else joined(2, w.reshape(ctx.normalized_shape), (d,))
        mask = head_mask(d, k, cdt)
        mask = None if mask is None else Tensor(mask)                                # a constant
        mx = x_rows if mask is None else x_rows * mask                               # (R, D)
        ms = (mx * mx).sum(-1, keepdim=True) / k                                     # (R, 1)
        rstd = 1 / (ms.sqrt() + eps) if ctx.eps_outside else (ms + eps).rsqrt()
        c = ms.rsqrt() if ctx.eps_outside else rstd
        ddy, dx, dw = rms_norm_double_backward(G.to(cdt).reshape(-1, d), joined(0, dy, (-1, d)), x_rows, weight, rstd,
                                               c, mask, k, rowdot=lambda a, b: (a * b).sum(-1, keepdim=True),
                                               colsum=lambda a: a.sum(0))
        return RMSNormBackward._shaped(ctx, ddy, dx, dw, dy.shape, x.shape)

    @staticmethod
    def _shaped(ctx, ddy, dx, dw, dy_shape, x_shape):
        """The double backward's rows in the shapes of (dy, x, w), None where not needed."""
        need_ddy, need_dx, need_dw = ctx.needs_input_grad[:3]
        return input_grads(ctx, ddy.reshape(dy_shape) if need_ddy else None, dx.reshape(x_shape) if need_dx else None,
                           dw.reshape(ctx.normalized_shape) if need_dw and dw is not None else None)


# --------------------------------------------------------------------------- the composite twin
def rms_norm_composite(input, normalized_shape, weight=None, eps=None, *, bias=None, eps_inside_sqrt=True,
                       partial=None):
    """``rms_norm`` written with minigrad ops and differentiated by autograd: the teaching reference."""
    normalized_shape, eps, k = _rms_options(input, normalized_shape, weight, bias, eps, partial)
    x = input.to(compute_dtype(input.dtype))
    d = math.prod(normalized_shape)
    if k == d and eps_inside_sqrt:
        xhat = normalize(x, row_dims(normalized_shape), eps, centered=False)
    else:
        xhat = rms_rows(x, normalized_shape, eps, k, eps_inside_sqrt)
    return row_affine(xhat, weight, bias).to(input.dtype)


def rms_rows(x, normalized_shape, eps, k, eps_inside_sqrt, scaled=None):
    """xhat = x * rstd over rows of x, written with minigrad ops in x's own dtype (each op rounds its result);
    ``scaled`` (x.float(), say) is the tensor multiplied by rstd instead of x."""
    d = math.prod(normalized_shape)
    lead = x.shape[:x.ndim - len(normalized_shape)]
    rows = x.reshape(lead + (d,))                                        # (*, D)
    head = rows[..., :k]                                                 # (*, k): the RMS subset
    ms = (head * head).mean(-1, keepdim=True)                            # (*, 1)
    rstd = (ms + eps).rsqrt() if eps_inside_sqrt else 1 / (ms.sqrt() + eps)
    return ((rows if scaled is None else scaled.reshape(lead + (d,))) * rstd).reshape(x.shape)


# --------------------------------------------------------------------------- the public form and its checks
@takes_tensors("input", "weight", "bias")
def rms_norm(input, normalized_shape, weight=None, eps=None, *, bias=None, eps_inside_sqrt=True, partial=None,
             casting="pytorch"):
    """RMSNorm over the trailing ``normalized_shape`` dims (``torch.nn.functional.rms_norm``).

    ``bias``, ``eps_inside_sqrt`` and ``partial`` are minigrad's variants (module docstring); ``casting``
    ("pytorch", "llama", "minimind", "gemma", "none") says where a float16/bfloat16 input is rounded
    (``rms_casting.py``).
    """
    normalized_shape = functional_normalized_shape(normalized_shape, "rms_norm")
    eps = None if eps is None else float_arg(eps, "rms_norm", "eps", 4)
    if casting != "pytorch":
        return _rms_norm_casting(input, normalized_shape, weight, eps, bias, eps_inside_sqrt, partial, casting)
    if input.numel() == 0:  # nothing to normalize: the composite gives the empty output and gradients
        return rms_norm_composite(input, normalized_shape, weight, eps, bias=bias, eps_inside_sqrt=eps_inside_sqrt,
                                  partial=partial)
    normalized_shape, eps, k = _rms_options(input, normalized_shape, weight, bias, eps, partial)
    if input.dtype.kind == "c":   # PyTorch's complex rms_norm: x rsqrt(mean(x^2) + eps), x^2 the complex square
        return row_affine(rms_rows(input, normalized_shape, eps, k, eps_inside_sqrt), weight, bias)
    return RMSNormFunction.apply(input, weight, bias, normalized_shape=normalized_shape, eps=eps, k=k,
                                 eps_outside=not eps_inside_sqrt)


def _rms_norm_casting(input, normalized_shape, weight, eps, bias, eps_inside_sqrt, partial, casting):
    """``rms_norm`` with a casting mode other than PyTorch's: the normalization by the fused Function (or, for
    "none", by ops in the input's dtype), the casts and the weight around it as ``rms_casting`` says."""
    check_casting(casting)
    normalized_shape, eps, k = _rms_options(input, normalized_shape, weight, bias, eps, partial)

    def normalize(x, eps, scaled=None):
        if casting in ("none", "minimind") or x.numel() == 0:
            return rms_rows(x, normalized_shape, eps, k, eps_inside_sqrt, scaled)
        return RMSNormFunction.apply(x, None, None, normalized_shape=normalized_shape, eps=eps, k=k,
                                     eps_outside=not eps_inside_sqrt)
    return cast_rms_norm(normalize, input, weight, bias, eps, casting)


def check_partial(partial):
    """pRMSNorm's fraction p must be None (off) or a number in (0, 1]; ValueError otherwise."""
    if partial is not None and (isinstance(partial, bool) or not isinstance(partial, Real) or not 0 < partial <= 1):
        raise ValueError(f"partial must be a number p in (0, 1] (pRMSNorm: the fraction of each row's elements "
                         f"the RMS is estimated from), but got partial={partial!r}")


def _rms_options(input, normalized_shape, weight, bias, eps, partial):
    """Checked arguments shared by the Function and the composite forms: (normalized_shape, eps, k)."""
    check_partial(partial)
    normalized_shape = check_row_norm_args(input, normalized_shape, weight, bias, rms=True)
    if eps is None:
        eps = np.finfo(compute_dtype(input.dtype)).eps  # PyTorch: epsilon of the compute (opmath) type
    d = math.prod(normalized_shape)
    # k = ceil(p d); p d is rounded to 9 decimals first so that p = 0.1, d = 30 gives 3 (0.1 is not exact in binary)
    k = d if partial is None else max(1, math.ceil(round(partial * d, 9)))
    return normalized_shape, float(eps), k
