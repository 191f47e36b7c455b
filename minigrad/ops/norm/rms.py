"""RMSNorm (Zhang & Sennrich, "Root Mean Square Layer Normalization", NeurIPS 2019) and its variants.

Per row x (the trailing ``normalized_shape`` dims, d elements), as ``torch.nn.functional.rms_norm``::

    rstd = 1 / sqrt(mean(x^2) + eps)        y = x * rstd * weight

Two implementations, equal to rounding (the tests hold them to 1e-12 in float64):

* ``rms_norm`` (also ``minigrad.nn.functional.rms_norm`` and ``nn.RMSNorm``) is **fused**: one
  ``RMSNormFunction`` whose forward calls the backend kernel and whose backward is the
  hand-derived formula in its docstring. Use it.
* ``rms_norm_composite`` (this module) is the **composite twin**: the same math written with
  minigrad ops, differentiated by autograd. Read it to see the math, or call it with the same
  arguments to check the fused one.

Options beyond PyTorch (keyword-only, off by default; normalization.md §9):

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
PyTorch does (normalization.md §3). float16 input is computed in float32 and cast back once,
after the weight multiply (and bias), so x**2 cannot overflow; its gradients come back as float16.
"""
import math
from numbers import Real

import numpy as np

from ...autograd import Function
from ...kernels import backend
from .common import compute_dtype, normalize
from .rows import as_rows, check_row_norm_args, from_rows, row_affine, row_dims, row_operands, shaped_grads


class RMSNormFunction(Function):
    """Fused RMSNorm over rows x (R, D), with the variants of the module docstring.

    Forward, per row, with the RMS subset K = the first k of the D elements (k = D unless partial)::

        ms = mean_K(x^2);  rstd = 1/sqrt(ms + eps)  (or 1/(sqrt(ms) + eps) with eps outside)
        xhat = x * rstd;   y = xhat * w + b

    Saved: x, rstd (one number per row) and w. Backward, with g the upstream gradient,
    gw = g * w (g without weight), mask_K = [j in K]::

        dx = rstd * (gw - c * x * mask_K * sum_j(gw * xhat) / k)
             c = rstd (eps inside)  or  1/sqrt(ms) (eps outside)
        dw = sum over rows of g * xhat        db = sum over rows of g

    Derivation: y_j = gw_j x_j rstd, and d rstd / d x_i = -rstd^2 c x_i mask_i / k (both eps
    placements), so dx_i = rstd gw_i - (rstd^2 c x_i mask_i / k) sum_j gw_j x_j; using
    sum_j gw_j x_j = sum_j gw_j xhat_j / rstd gives the line above. Each gradient is computed
    only if ``ctx.needs_input_grad`` asks for it. The kernels allocate every gradient they
    return (``fresh_gradients``: the engine makes them the leaves' ``.grad`` without a copy).
    """
    fresh_gradients = True

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_shape, eps, k, eps_outside):
        d = math.prod(normalized_shape)
        x, w, b = row_operands(input, weight, bias, d)
        y, rstd = backend().rms_norm_forward(x, w, b, eps, k, eps_outside)
        # input._data, not the upcast rows: a float16 x stays float16 in memory (upcasting again is exact)
        ctx.save_for_backward(input._data, rstd, w)
        ctx.options = normalized_shape, eps, k, eps_outside
        return from_rows(y, input)

    @staticmethod
    def backward(ctx, dout):
        x, rstd, w = ctx.saved_tensors
        normalized_shape, eps, k, eps_outside = ctx.options
        d = math.prod(normalized_shape)
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        dx, dw, db = backend().rms_norm_backward(as_rows(dout._data, d), as_rows(x, d), rstd, w, eps, k, eps_outside,
                                                 need_dx, need_dw, need_db)
        return shaped_grads(dx, dw, db, x.shape, normalized_shape) + (None, None, None, None)


def check_partial(partial):
    """pRMSNorm's fraction p must be None (off) or a number in (0, 1]; ValueError otherwise."""
    if partial is not None and (isinstance(partial, bool) or not isinstance(partial, Real) or not 0 < partial <= 1):
        raise ValueError(f"partial must be a number p in (0, 1] (pRMSNorm: the fraction of each row's elements "
                         f"the RMS is estimated from), but got partial={partial!r}")


def _rms_options(input, normalized_shape, weight, bias, eps, partial):
    """Checked arguments shared by the fused and the composite forms: (normalized_shape, eps, k)."""
    check_partial(partial)
    normalized_shape = check_row_norm_args(input, normalized_shape, weight, bias, rms=True)
    if eps is None:
        eps = np.finfo(compute_dtype(input.dtype)).eps  # PyTorch: epsilon of the opmath type (§3)
    d = math.prod(normalized_shape)
    # k = ceil(p d); p d is rounded to 9 decimals first so that p = 0.1, d = 30 gives 3 (0.1 is not exact in binary)
    k = d if partial is None else max(1, math.ceil(round(partial * d, 9)))
    return normalized_shape, float(eps), k


def rms_norm(input, normalized_shape, weight=None, eps=None, *, bias=None, eps_inside_sqrt=True, partial=None):
    """Fused RMSNorm over the trailing ``normalized_shape`` dims (``torch.nn.functional.rms_norm``).

    ``bias``, ``eps_inside_sqrt`` and ``partial`` are minigrad's variants (module docstring).
    """
    normalized_shape, eps, k = _rms_options(input, normalized_shape, weight, bias, eps, partial)
    return RMSNormFunction.apply(input, weight, bias, normalized_shape, eps, k, not eps_inside_sqrt)


def rms_norm_composite(input, normalized_shape, weight=None, eps=None, *, bias=None, eps_inside_sqrt=True,
                       partial=None):
    """``rms_norm`` written with minigrad ops and differentiated by autograd: the teaching reference."""
    normalized_shape, eps, k = _rms_options(input, normalized_shape, weight, bias, eps, partial)
    x = input.to(compute_dtype(input.dtype))
    d = math.prod(normalized_shape)
    if k == d and eps_inside_sqrt:
        xhat = normalize(x, row_dims(normalized_shape), eps, centered=False)
    else:
        rows = x.reshape(x.shape[:x.ndim - len(normalized_shape)] + (d,))  # (*, D)
        head = rows[..., :k]                                                 # (*, k): the RMS subset
        ms = (head * head).mean(-1, keepdim=True)                            # (*, 1)
        rstd = (ms + eps).rsqrt() if eps_inside_sqrt else 1 / (ms.sqrt() + eps)
        xhat = (rows * rstd).reshape(x.shape)
    return row_affine(xhat, weight, bias).to(input.dtype)
