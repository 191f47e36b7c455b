"""LayerNorm (Ba, Kiros & Hinton 2016), as ``torch.nn.functional.layer_norm``.

Per row x (the trailing ``normalized_shape`` dims, d elements)::

    mean = mean(x);  var = mean((x - mean)^2)  (biased, two-pass);  rstd = 1/sqrt(var + eps)
    y = (x - mean) * rstd * weight + bias

Two implementations, equal to rounding (the tests hold them to 1e-12 in float64):

* ``layer_norm`` (also ``minigrad.nn.functional.layer_norm`` and ``nn.LayerNorm``) is **fused**:
  one ``LayerNormFunction`` with the hand-derived backward in its docstring. Use it.
* ``layer_norm_composite`` (this module) is the **composite twin**, written with minigrad ops
  and differentiated by autograd: the teaching reference and a test oracle.

float16 input is computed in float32 and cast back once at the end; its gradients come back as
float16. As in PyTorch, weight and bias must have the input's dtype (or float32 for float16 input).
"""
import math

from ...autograd import Function
from ...kernels import backend
from .common import compute_dtype, normalize
from .rows import as_rows, check_row_norm_args, from_rows, row_affine, row_dims, row_operands, shaped_grads


class LayerNormFunction(Function):
    """Fused LayerNorm over rows x (R, D).

    Saved: x, mean and rstd (one number each per row) and w. Backward, with g the upstream
    gradient, gw = g * w (g without weight) and xhat = (x - mean) * rstd recomputed::

        dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))      (means over the row)
        dw = sum over rows of g * xhat                             db = sum over rows of g

    The two row means are the projections of gw onto the directions that normalization
    removes: shifts (the constant vector) and scalings (xhat itself). Each gradient is
    computed only if ``ctx.needs_input_grad`` asks for it. The kernels allocate every gradient
    they return (``fresh_gradients``: the engine makes them the leaves' ``.grad`` without a copy).
    """
    fresh_gradients = True

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_shape, eps):
        x, w, b = row_operands(input, weight, bias, math.prod(normalized_shape))
        y, mean, rstd = backend().layer_norm_forward(x, w, b, eps)
        ctx.save_for_backward(input._data, mean, rstd, w)  # a float16 x stays float16 in memory
        ctx.normalized_shape = normalized_shape
        return from_rows(y, input)

    @staticmethod
    def backward(ctx, dout):
        x, mean, rstd, w = ctx.saved_tensors
        d = math.prod(ctx.normalized_shape)
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        dx, dw, db = backend().layer_norm_backward(as_rows(dout._data, d), as_rows(x, d), mean, rstd, w,
                                                   need_dx, need_dw, need_db)
        return shaped_grads(dx, dw, db, x.shape, ctx.normalized_shape) + (None, None)


def _check_param_dtypes(input, weight, bias):
    """PyTorch's CPU rule: parameters share one dtype, the input's or (float16 input) float32."""
    dtypes = {p.dtype for p in (weight, bias) if p is not None}
    allowed = {input.dtype, compute_dtype(input.dtype)}
    if dtypes and (len(dtypes) > 1 or not dtypes <= allowed):
        raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                           f"{' or '.join(sorted(map(str, allowed)))} (layer_norm got input {input.dtype}, weight "
                           f"{None if weight is None else weight.dtype}, bias {None if bias is None else bias.dtype})")


def _ln_options(input, normalized_shape, weight, bias):
    normalized_shape = check_row_norm_args(input, normalized_shape, weight, bias)
    _check_param_dtypes(input, weight, bias)
    return normalized_shape


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Fused LayerNorm over the trailing ``normalized_shape`` dims (``torch.nn.functional.layer_norm``)."""
    normalized_shape = _ln_options(input, normalized_shape, weight, bias)
    return LayerNormFunction.apply(input, weight, bias, normalized_shape, float(eps))


def layer_norm_composite(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``layer_norm`` written with minigrad ops and differentiated by autograd: the teaching reference."""
    normalized_shape = _ln_options(input, normalized_shape, weight, bias)
    xhat = normalize(input.to(compute_dtype(input.dtype)), row_dims(normalized_shape), float(eps))
    return row_affine(xhat, weight, bias).to(input.dtype)
