"""Dynamic Tanh (Zhu, Chen, He, LeCun & Liu, "Transformers without Normalization", CVPR 2025).

DyT replaces a norm by an elementwise squashing with one learnable scalar alpha and no statistics; the
formulas are derived, and quoted from this file, in docs/derivations/dynamictanh.md. Written once for
ndarrays and Tensors alike, on rows (R, D) with D the size of the trailing dims the parameters cover:
``DynamicTanhFunction`` runs them on arrays as the kernel contract's NumPy references (numba twins of the same
names in minigrad/kernels/numba_kernels.py), its ``graph_backward`` runs the backward on Tensors
(create_graph=True, every further order from autograd), the composite twin the forward on Tensors.
"""
import math

import numpy as np

from ..._checks import takes_tensors
from ...autograd import Function, no_grad
from ...dtypes import compute_dtype, get_default_dtype, is_floating_point
from ...kernels import kernel
from ...nn.module import Module, Parameter   # (minigrad.nn.module needs nothing from ops.norm)
from ...tensor import check_device
from .common import sum_to_shape
from .rows import as_normalized_shape


# --------------------------------------------------------------------------- the formulas (ndarrays or Tensors)
def dynamic_tanh_forward(x, alpha, weight, bias, keep=True):
    """y = weight * t + bias, t = tanh(alpha * x) (weight/bias None: left out). Returns (y, t), t None unless
    ``keep`` (t is kept for a backward)."""
    t = np.tanh(alpha * x) if isinstance(x, np.ndarray) else (alpha * x).tanh()
    y = t if weight is None else t * weight
    return (y if bias is None else y + bias), (t if keep else None)


def dynamic_tanh_backward(dy, x, alpha, weight, t, need_dx=True, need_dalpha=True, need_dw=True, need_db=True):
    """(dx, dalpha, dweight, dbias) for an upstream gradient dy on rows (R, D) (alpha one number, weight (D,)),
    then the gradient mask. With gw = dy * weight and d = gw * (1 - t^2), the gradient of tanh at alpha * x:
    dx = alpha * d, dalpha = sum(d * x), dweight = sum_rows(dy * t), dbias = sum_rows(dy)."""
    gw = dy if weight is None else dy * weight                      # (R, D)
    d = gw * (1 - t * t) if need_dx or need_dalpha else None         # term of tanh' = 1 - tanh^2
    return (alpha * d if need_dx else None,
            sum_to_shape(d * x, ()) if need_dalpha else None,        # () : over every element
            sum_to_shape(dy * t, t.shape[1:]) if need_dw else None,  # (D,): over the rows
            sum_to_shape(dy, t.shape[1:]) if need_db else None)


# --------------------------------------------------------------------------- the Function
def _trailing(input, weight, bias):
    """The trailing dims of input that are D of the rows: those the parameters cover (the last dim if there are
    none, so that rows stay long)."""
    covered = max([p.ndim for p in (weight, bias) if p is not None], default=min(input.ndim, 1))
    return tuple(input.shape[input.ndim - covered:])


def _as_row(array, trailing):
    """A parameter's array (trailing dims of x, or fewer) as one row (D,) of the rows' D."""
    return None if array is None else np.broadcast_to(array, trailing).reshape(-1)


class DynamicTanhFunction(Function):
    """``dynamic_tanh_forward`` on rows (R, D) in the compute dtype, backward ``dynamic_tanh_backward``: each the
    backend's kernel (kernels/__init__.py). Under create_graph=True the same backward on Tensors, t recomputed
    from x in the graph."""

    @staticmethod
    def forward(ctx, input, alpha, weight, bias):
        cdt = compute_dtype(input.dtype)
        trailing = _trailing(input, weight, bias)
        d = math.prod(trailing)
        x = input._data.astype(cdt, copy=False).reshape(math.prod(input.shape[:input.ndim - len(trailing)]), d)
        a = alpha._data.astype(cdt, copy=False).reshape(())
        w, b = (None if p is None else p._data.astype(cdt, copy=False) for p in (weight, bias))
        keep = any(ctx.needs_input_grad[:4])                           # t is kept only for a backward
        y, t = kernel(dynamic_tanh_forward)(x, a, _as_row(w, trailing), _as_row(b, trailing), keep=keep)  # (R, D) each
        ctx.save_for_backward(x, a, w, t)
        ctx.shapes = (input.shape, trailing) + tuple(None if p is None else p.shape for p in (alpha, weight, bias))
        return y.reshape(input.shape).astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, a, w, t = ctx.saved_tensors
        if t is None:                                                  # no input needs a gradient: nothing kept
            return (None,) * 4
        dy = dout._data.astype(x.dtype, copy=False).reshape(x.shape)
        return _in_shapes(ctx, *kernel(dynamic_tanh_backward)(dy, x, a, _as_row(w, ctx.shapes[1]), t,
                                                               *ctx.needs_input_grad[:4]))

    @staticmethod
    def graph_backward(ctx, dout):
        x, a, w, _ = ctx.saved_tensors
        input_shape, trailing, alpha_shape = ctx.shapes[:3]
        x_t = ctx.input_tensor(0, x.reshape(input_shape)).reshape(x.shape)
        a_t = ctx.input_tensor(1, a.reshape(alpha_shape)).reshape(())
        w_t = None if w is None else ctx.input_tensor(2, w).expand(trailing).reshape(-1)
        _, t = dynamic_tanh_forward(x_t, a_t, None, None)            # in the graph: dt/dx and dt/dalpha count
        return _in_shapes(ctx, *dynamic_tanh_backward(dout.to(x.dtype).reshape(x.shape), x_t, a_t, w_t, t,
                                                      *ctx.needs_input_grad[:4]))


def _in_shapes(ctx, dx, dalpha, dw, db):
    """The kernels' gradients (rows) in the inputs' shapes: a parameter covering fewer dims than the rows sums its
    row over the dims it was broadcast along."""
    input_shape, trailing, alpha_shape, weight_shape, bias_shape = ctx.shapes
    return (None if dx is None else dx.reshape(input_shape),
            None if dalpha is None else dalpha.reshape(alpha_shape),
            None if dw is None else sum_to_shape(dw.reshape(trailing), weight_shape),
            None if db is None else sum_to_shape(db.reshape(trailing), bias_shape))


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
    if not all(is_floating_point(dtype) for dtype in kinds.values()):   # (bfloat16 included)
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
