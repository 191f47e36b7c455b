"""Dynamic Tanh (Zhu, Chen, He, LeCun & Liu, "Transformers without Normalization", CVPR 2025).

DyT replaces a norm by an elementwise squashing with one learnable scalar alpha and no statistics; the
formulas are derived, and quoted from this file, in docs/derivations/dynamictanh.md. Written once for
ndarrays and Tensors alike: ``DynamicTanhFunction`` runs them on arrays, its ``graph_backward`` runs the
backward on Tensors (create_graph=True, every further order from autograd), the composite twin the forward
on Tensors. No numba twin: one was written and measured 2.5-3x slower than these NumPy lines (forward +
backward, float32, one thread: 1024 x 64 1.29 against 0.50 ms, 8192 x 1024 180 against 119 ms), because
NumPy's tanh is vectorised (SIMD) and numba's calls the scalar libm tanh per element.
"""
import numpy as np

from ..._checks import takes_tensors
from ...autograd import Function, no_grad
from ...dtypes import compute_dtype, get_default_dtype
from ...nn.module import Module, Parameter   # (minigrad.nn.module needs nothing from ops.norm)
from ...tensor import check_device
from .common import sum_to_shape
from .rows import as_normalized_shape


# --------------------------------------------------------------------------- the formulas (ndarrays or Tensors)
def dynamic_tanh_forward(x, alpha, weight, bias):
    """y = weight * t + bias, t = tanh(alpha * x) (weight/bias None: left out). Returns (y, t)."""
    t = np.tanh(alpha * x) if isinstance(x, np.ndarray) else (alpha * x).tanh()
    y = t if weight is None else t * weight
    return (y if bias is None else y + bias), t


def dynamic_tanh_backward(dy, x, alpha, weight, t, shapes, need_dx, need_dalpha, need_dw, need_db):
    """(dx, dalpha, dweight, dbias) for an upstream gradient dy; ``shapes`` are alpha's, weight's and bias's,
    then the gradient mask. With gw = dy * weight and d = gw * (1 - t^2), the gradient of tanh at alpha * x:
    dx = alpha * d, dalpha = sum(d * x), dweight = sum_rows(dy * t), dbias = sum_rows(dy)."""
    gw = dy if weight is None else dy * weight                      # (..., D)
    d = gw * (1 - t * t) if need_dx or need_dalpha else None         # term of tanh' = 1 - tanh^2
    return (alpha * d if need_dx else None,
            sum_to_shape(d * x, shapes[0]) if need_dalpha else None,
            sum_to_shape(dy * t, shapes[1]) if need_dw else None,
            sum_to_shape(dy, shapes[2]) if need_db else None)


# --------------------------------------------------------------------------- the Function
class DynamicTanhFunction(Function):
    """``dynamic_tanh_forward`` on arrays in the compute dtype, backward ``dynamic_tanh_backward``; under
    create_graph=True the same backward on Tensors, t recomputed from x in the graph."""

    @staticmethod
    def forward(ctx, input, alpha, weight, bias):
        cdt = compute_dtype(input.dtype)
        x, a, w, b = (None if p is None else p._data.astype(cdt, copy=False) for p in (input, alpha, weight, bias))
        y, t = dynamic_tanh_forward(x, a, w, b)
        ctx.save_for_backward(x, a, w, t)
        ctx.shapes = tuple(None if p is None else p.shape for p in (alpha, weight, bias))
        return y.astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, a, w, t = ctx.saved_tensors
        return dynamic_tanh_backward(dout._data.astype(x.dtype, copy=False), x, a, w, t, ctx.shapes,
                                     *ctx.needs_input_grad[:4])

    @staticmethod
    def graph_backward(ctx, dout):
        x, a, w, _ = ctx.saved_tensors
        x_t, a_t = ctx.input_tensor(0, x), ctx.input_tensor(1, a)
        w_t = None if w is None else ctx.input_tensor(2, w)
        _, t = dynamic_tanh_forward(x_t, a_t, None, None)            # in the graph: dt/dx and dt/dalpha count
        return dynamic_tanh_backward(dout.to(x.dtype), x_t, a_t, w_t, t, ctx.shapes, *ctx.needs_input_grad[:4])


# --------------------------------------------------------------------------- composite twin and public form
def dynamic_tanh_composite(input, alpha, weight=None, bias=None):
    """``dynamic_tanh`` with minigrad ops (the forward formula on Tensors), differentiated by autograd."""
    _check_args(input, alpha, weight, bias)
    cdt = compute_dtype(input.dtype)
    y, _ = dynamic_tanh_forward(*(None if p is None else p.to(cdt) for p in (input, alpha, weight, bias)))
    return y.to(input.dtype)


@takes_tensors("input", "alpha", "weight", "bias")
def dynamic_tanh(input, alpha, weight=None, bias=None):
    """DyT: y = weight * tanh(alpha * x) + bias, ``alpha`` one scalar (0-d or shape (1,)), weight and bias of
    the trailing dims of x (either may be None)."""
    _check_args(input, alpha, weight, bias)
    return DynamicTanhFunction.apply(input, alpha, weight, bias)


def _check_args(input, alpha, weight, bias):
    tensors = [("input", input), ("alpha", alpha), ("weight", weight), ("bias", bias)]
    kinds = {name: t.dtype for name, t in tensors if t is not None}
    if any(dtype.kind != "f" for dtype in kinds.values()):
        raise RuntimeError("dynamic_tanh(): expected floating-point tensors, but got "
                           + ", ".join(f"{name} {dtype}" for name, dtype in kinds.items()))
    if alpha.numel() != 1 or alpha.ndim > 1:
        raise RuntimeError(f"dynamic_tanh(): expected alpha to hold one value (shape [] or [1]), but got alpha of "
                           f"shape {list(alpha.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.ndim > input.ndim or tuple(input.shape[input.ndim - p.ndim:]) != tuple(p.shape)):
            raise RuntimeError(f"dynamic_tanh(): expected {name} of the trailing shape of input, but got {name} of "
                               f"shape {list(p.shape)} and input of shape {list(input.shape)}")


# --------------------------------------------------------------------------- the module
class DynamicTanh(Module):
    """DyT over the trailing ``normalized_shape``: ``alpha`` (shape (1,), ``alpha_init_value``), ``weight``
    (ones) and ``bias`` (zeros) of ``normalized_shape``, the parameter names of the paper's code."""

    def __init__(self, normalized_shape, alpha_init_value=0.5, device=None, dtype=None):
        super().__init__()
        check_device(device)
        dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
        self.normalized_shape, self.alpha_init_value = as_normalized_shape(normalized_shape), alpha_init_value
        self.alpha = Parameter(np.empty((1,), dtype))
        self.weight = Parameter(np.empty(self.normalized_shape, dtype))
        self.bias = Parameter(np.empty(self.normalized_shape, dtype))
        self.reset_parameters()

    def reset_parameters(self):
        with no_grad():
            self.alpha.fill_(self.alpha_init_value)
            self.weight.fill_(1.0)
            self.bias.fill_(0.0)

    def forward(self, input):
        return dynamic_tanh(input, self.alpha, self.weight, self.bias)

    def extra_repr(self):
        return f"{self.normalized_shape}, alpha_init_value={self.alpha_init_value}"
