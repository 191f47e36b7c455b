"""Distances and similarities between vectors along one dimension: normalize, cosine_similarity,
pairwise_distance, and the losses built on them (cosine_embedding_loss, triplet_margin_loss).

All are composed of differentiable minigrad ops (norms, products, sums), so double backward comes for
free. Where PyTorch guards a division with ``eps`` the rule differs per function, and is matched:

* ``normalize``:          x / max(||x||_p, eps); the clamp is differentiable (no gradient through the
                          norm where ||x||_p < eps, so a zero vector gets dx = dout / eps).
* ``cosine_similarity``:  <x1 / max(||x1||, eps), x2 / max(||x2||, eps)>; each norm is clamped in value
                          only, its gradient stays the unclamped norm's (PyTorch clamps in place under
                          no_grad), see ``ClampMinPassGradient``.
* ``pairwise_distance``:  ||x1 - x2 + eps||_p along the last dimension.
"""
import numpy as np

from .._checks import float_arg, takes_tensors
from ..autograd import is_grad_enabled
from ..dtypes import result_type, scalar_type_name
from .dims import normalize_dim
from .elementwise import Routing, cast, check_broadcast, clamp_min
from .reduce import norm
from .shape import expand


class ClampMinPassGradient(Routing):
    """y = max(x, eps) in value, dx = dout everywhere (the identity's gradient): a clamp made under
    no_grad, which changes what later ops see but not how the gradient reaches x."""

    @staticmethod
    def forward(ctx, a, eps):
        return np.maximum(a._data, a._data.dtype.type(eps))

    @staticmethod
    def grads(ctx, g):
        return g, None


@takes_tensors("input", "out")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along ``dim`` (an int or a tuple of ints): unit vectors, zero vectors stay 0.

    With ``out``, the result is also copied into ``out`` (same shape and dtype), which cannot be recorded:
    as in PyTorch, that is refused when a gradient would be needed."""
    eps = float_arg(eps, "normalize", "eps", 4)
    denom = clamp_min(norm(input, p, dim, keepdim=True), eps)
    if out is None:
        return input / denom
    if is_grad_enabled() and input.requires_grad:
        raise RuntimeError("div(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    return out.copy_(input / denom)


@takes_tensors("x1", "x2")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim``, x1 and x2 broadcast together first.

    Computed as the sum of the products of the two normalized vectors (each divided by its clamped norm),
    which keeps the result within [-1, 1]; integer inputs are converted to their common floating dtype."""
    eps = float_arg(eps, "cosine_similarity", "eps", 4)
    dtype = result_type(x1._data, x2._data)
    if dtype.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_type_name(dtype)}")
    x1, x2 = (cast(x, dtype) if x.dtype.kind in "biu" else x for x in (x1, x2))
    shape = tuple(check_broadcast(x1.shape, x2.shape))
    x1, x2 = expand(x1, shape), expand(x2, shape)
    axis = normalize_dim(dim, len(shape))
    unit1, unit2 = (x / ClampMinPassGradient.apply(norm(x, 2, axis, keepdim=True), eps) for x in (x1, x2))
    return (unit1 * unit2).sum(axis)


@takes_tensors("x1", "x2")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dimension (of the broadcast shape); ``eps`` keeps the norm's
    gradient finite when x1 == x2."""
    eps = float_arg(eps, "pairwise_distance", "eps", 4)
    last = max(x1.ndim, x2.ndim) - 1
    return norm(x1 - x2 + eps, float_arg(p, "pairwise_distance", "p", 3), last, keepdim)
