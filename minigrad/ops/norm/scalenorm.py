"""ScaleNorm (Nguyen & Salazar, "Transformers without Tears", 2019): one learnable gain per layer.

The formulas (forward, backward, and why the second order comes free) are derived, and quoted from this
file, in docs/derivations/scalenorm.md. Each is written once, for ndarrays and Tensors alike, as
LocalResponseNorm's are: ``ScaleNormFunction`` runs them on arrays as the kernel contract's NumPy references
(rows (R, D); numba twins of the same names in minigrad/kernels/numba_kernels.py, the first with a scalar
parameter), its ``graph_backward`` runs the backward on Tensors (create_graph=True, every further order from
autograd), and the composite twin runs the forward on Tensors.
"""
import math

import numpy as np

from ..._checks import float_arg, takes_tensors
from ...autograd import Function, no_grad
from ...dtypes import compute_dtype, get_default_dtype
from ...kernels import kernel
from ...nn.module import Module, Parameter   # (minigrad.nn.module needs nothing from ops.norm)
from ...tensor import Tensor, check_device
from .common import last_dim_sum, sum_to_shape
from .rows import as_rows, from_rows


# --------------------------------------------------------------------------- the formulas (ndarrays or Tensors)
def clamped_norm(x, eps):
    """s = max(||x||_2, eps) over the last dim, kept as size 1 (..., 1), and the mask [||x|| > eps] as a constant
    ndarray of x's dtype (where s follows ||x||)."""
    norm = last_dim_sum(x * x) ** 0.5                                # (..., 1)
    values = norm if isinstance(norm, np.ndarray) else norm.detach().numpy()
    active = (values > eps).astype(values.dtype)
    s = np.maximum(norm, eps) if isinstance(norm, np.ndarray) else norm.clamp_min(eps)
    return s, active


def scale_norm_forward(x, scale, eps):
    """y = scale * x / s, s = max(||x||, eps) per row. Returns (y, s, active)."""
    s, active = clamped_norm(x, eps)
    return scale * x / s, s, active


def scale_norm_backward(dy, x, scale, s, active, need_dx=True, need_dscale=True):
    """(dx, dscale) for an upstream gradient dy; ``active`` is a constant, so on Tensors this is its own graph."""
    u = x / s                                                        # (..., D): y / scale
    if not isinstance(x, np.ndarray):
        active = Tensor(active)
    dx = dscale = None
    if need_dx:
        gs = dy * scale                                              # (..., D)
        dx = (gs - active * u * last_dim_sum(gs * u)) / s            # term 1: gs / s; term 2: the part along x
    if need_dscale:
        dscale = sum_to_shape(dy * u, scale.shape)                   # () : sum of dy * x / s
    return dx, dscale


# --------------------------------------------------------------------------- the Function
class ScaleNormFunction(Function):
    """``scale_norm_forward`` on arrays in the compute dtype; backward ``scale_norm_backward``; under
    create_graph=True the same backward on Tensors (docs/derivations/scalenorm.md)."""

    @staticmethod
    def forward(ctx, input, scale, eps):
        d = input.shape[-1]
        x = as_rows(input._data, d)                                  # (R, D), compute dtype
        g = scale._data.astype(x.dtype, copy=False)                  # ()
        y, s, active = kernel(scale_norm_forward)(x, g, eps)         # (R, D), (R, 1), (R, 1)
        ctx.save_for_backward(x, g, s, active)
        ctx.eps, ctx.shape = eps, input.shape
        return from_rows(y, input)

    @staticmethod
    def backward(ctx, dout):
        x, g, s, active = ctx.saved_tensors
        dx, dscale = kernel(scale_norm_backward)(as_rows(dout._data, x.shape[1]), x, g, s, active,
                                                 *ctx.needs_input_grad[:2])
        return (None if dx is None else dx.reshape(ctx.shape)), dscale, None

    @staticmethod
    def graph_backward(ctx, dout):
        x, g, _, active = ctx.saved_tensors
        x_t, g_t = ctx.input_tensor(0, x.reshape(ctx.shape)), ctx.input_tensor(1, g)
        s, _ = clamped_norm(x_t, ctx.eps)                            # recomputed in the graph: d s/dx counts
        dx, dscale = scale_norm_backward(dout.to(x.dtype), x_t, g_t, s, active.reshape(s.shape),
                                         *ctx.needs_input_grad[:2])
        return dx, dscale, None


# --------------------------------------------------------------------------- composite twin and public form
def scale_norm_composite(input, scale, eps=1e-5):
    """``scale_norm`` with minigrad ops (the forward formula on Tensors), differentiated by autograd."""
    eps = _check_args(input, scale, eps)
    y, _, _ = scale_norm_forward(input.to(compute_dtype(input.dtype)), scale.to(compute_dtype(input.dtype)), eps)
    return y.to(input.dtype)


@takes_tensors("input", "scale")
def scale_norm(input, scale, eps=1e-5):
    """ScaleNorm over the last dim: y = scale * x / max(||x||_2, eps), ``scale`` a 0-d gain."""
    eps = _check_args(input, scale, eps)
    if input.numel() == 0:
        return scale_norm_composite(input, scale, eps)
    return ScaleNormFunction.apply(input, scale, eps)


def _check_args(input, scale, eps):
    eps = float_arg(eps, "scale_norm", "eps", 3)
    if input.ndim == 0:
        raise RuntimeError("scale_norm(): expected input with at least 1 dimension (the dim normalized), but got a "
                           "0-dimensional tensor")
    if input.dtype.kind != "f" or scale.dtype.kind != "f":
        raise RuntimeError(f"scale_norm(): expected floating-point input and scale, but got input {input.dtype} and "
                           f"scale {scale.dtype}")
    if scale.ndim != 0:
        raise RuntimeError(f"scale_norm(): expected scale to be a 0-dimensional tensor (one gain), but got scale of "
                           f"shape {list(scale.shape)}")
    if not eps >= 0:
        raise ValueError(f"scale_norm(): expected eps >= 0, but got eps={eps}")
    return eps


# --------------------------------------------------------------------------- the module
class ScaleNorm(Module):
    """``y = scale * x / max(||x||_2, eps)`` over the last dim, ``scale`` one learnable 0-d gain, sqrt(dim)
    at initialization (Nguyen & Salazar 2019)."""

    def __init__(self, dim, eps=1e-5, device=None, dtype=None):
        super().__init__()
        check_device(device)
        self.dim, self.eps = dim, eps
        self.scale = Parameter(np.empty((), dtype=get_default_dtype() if dtype is None else np.dtype(dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        with no_grad():
            self.scale.fill_(math.sqrt(self.dim))

    def forward(self, input):
        return scale_norm(input, self.scale, self.eps)

    def extra_repr(self):
        return f"{self.dim}, eps={self.eps}"
