"""Weight normalization (Salimans & Kingma, "Weight Normalization", NeurIPS 2016): PyTorch's
``torch._weight_norm`` and ``torch.norm_except_dim``, derived in docs/derivations/weightnorm.md.

A weight w is written as a direction v times a magnitude g::

    n = ||v||  over every dim of v except ``dim`` (kept, size 1 elsewhere); over all of v for dim = -1
    w = g * v / n                      g has n's shape (or broadcasts to it)

With t = dL/dw the upstream gradient and the sums over the reduced dims (those n runs over)::

    dg = sum(t * v) / n
    dv = g / n * (t - v * dg / n)

dv is t seen through the projection I - v v^T / n^2: it is orthogonal to v (sum(dv * v) = 0 over each
reduced block), so a gradient step cannot change ||v|| to first order; g alone carries the scale.

The formulas are written once (``norm_over``, ``weight_norm_grads``) on ndarrays or Tensors alike: the
Function runs them on arrays, its ``graph_backward`` on Tensors joined to the graph (create_graph=True), and
``weight_norm_composite`` writes the forward with ordinary ops (autograd's derivative: the tests' oracle).

PyTorch's legacy convention is kept: ``dim=-1`` means "the whole tensor", not "the last dim" (the other
negative dims count from the end as usual); ``nn.utils.weight_norm(dim=None)`` passes -1.
"""
import numpy as np

from ..._checks import is_int, takes_tensors, type_name
from ...autograd import Function
from ...dtypes import compute_dtype
from ...tensor import Tensor
from ..dims import normalize_dim


def reduced_axes(ndim, dim):
    """The axes the norm of ``norm_except_dim`` runs over: all but ``dim``; all of them for dim = -1 or None."""
    if dim is None or dim == -1:
        return tuple(range(ndim))
    kept = normalize_dim(dim, ndim)
    return tuple(axis for axis in range(ndim) if axis != kept)


def sum_over(a, axes):
    """The sum of ``a`` (an ndarray or a Tensor) over ``axes``, the summed axes kept with size 1; ``a`` for ()."""
    if not axes:
        return a
    if isinstance(a, Tensor):
        return a.sum(axes, keepdim=True)
    return a.sum(axis=axes, keepdims=True)


def norm_over(v, axes):
    """n = sqrt(sum of v^2 over ``axes``), those axes kept with size 1: (1, ..., 1) for all of them."""
    square_sum = sum_over(v * v, axes)
    return square_sum.sqrt() if isinstance(v, Tensor) else np.sqrt(square_sum)


def weight_norm_grads(t, v, g, n, axes):
    """(dg, dv) of w = g * v / n, n = ``norm_over(v, axes)``, for the upstream gradient t = dL/dw (module
    docstring). dg has n's shape (the engine sums it down to g's), dv has v's (and w's) shape."""
    dg = sum_over(t * v, axes) / n                 # n's shape: one number per kept index
    dv = g / n * (t - v * (dg / n))                # v's shape: t minus its component along v
    return dg, dv


class WeightNormFunction(Function):
    """w = g * v / ||v||, the norm over ``axes`` (the reduced dims of ``norm_except_dim``).

    Saves v, g and n = ||v|| (one number per kept index). Backward, with t = dL/dw and the sums over ``axes``::

        dg = sum(t * v) / n
        dv = g / n * (t - v * dg / n)

    Derivation (docs/derivations/weightnorm.md): w_i = g v_i / n and dn/dv_j = v_j / n (within a block),
    so dL/dg = sum_i t_i v_i / n and dL/dv_j = g t_j / n - (g / n^2) (v_j / n) sum_i t_i v_i.
    ``graph_backward`` evaluates the same lines on Tensors (n recomputed from v in the graph).
    """

    @staticmethod
    def forward(ctx, v, g, axes):
        cdt = compute_dtype(np.result_type(v.dtype, g.dtype))
        v_data, g_data = v._data.astype(cdt, copy=False), g._data.astype(cdt, copy=False)
        n = norm_over(v_data, axes)                                 # v's shape, 1 on the reduced axes
        ctx.save_for_backward(v_data, g_data, n)
        ctx.axes = axes
        return (v_data * (g_data / n)).astype(np.result_type(v.dtype, g.dtype), copy=False)

    @staticmethod
    def backward(ctx, dout):
        v, g, n = ctx.saved_tensors
        dg, dv = weight_norm_grads(dout._data.astype(v.dtype, copy=False), v, g, n, ctx.axes)
        return dv, dg, None

    @staticmethod
    def graph_backward(ctx, dout):
        v, g, _ = ctx.saved_tensors
        v_t, g_t = ctx.input_tensor(0, v), ctx.input_tensor(1, g)
        dg, dv = weight_norm_grads(dout.to(v.dtype), v_t, g_t, norm_over(v_t, ctx.axes), ctx.axes)
        return dv, dg, None


def _check_dim(dim, fname):
    if not is_int(dim):
        raise TypeError(f"{fname}(): argument 'dim' must be int, not {type_name(dim)}")


@takes_tensors("v", "g", fname="_weight_norm")
def _weight_norm(v, g, dim=0):
    """``torch._weight_norm``: g * v / norm_except_dim(v, 2, dim), with the hand-derived backward."""
    _check_dim(dim, "_weight_norm")
    axes = reduced_axes(v.ndim, dim)
    return WeightNormFunction.apply(v, g, axes)


@takes_tensors("v", fname="norm_except_dim")
def norm_except_dim(v, pow=2, dim=0):
    """``torch.norm_except_dim``: the ``pow``-norm of v over every dim but ``dim``, kept with size 1 (a 0-d
    tensor for dim = -1: the norm of the whole tensor). Ordinary ops, so autograd differentiates it."""
    _check_dim(dim, "norm_except_dim")
    if dim == -1:
        return v.norm(pow)
    axes = reduced_axes(v.ndim, dim)
    if pow == 2:
        return norm_over(v, axes)
    return sum_over(v.abs() ** pow, axes) ** (1.0 / pow)


def weight_norm_composite(v, g, dim=0):
    """``_weight_norm`` with ordinary minigrad ops (autograd's derivative, the tests' oracle)."""
    return v * (g / norm_except_dim(v, 2, dim))
