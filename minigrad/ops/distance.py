"""Distances and similarities between vectors along one dimension: normalize, cosine_similarity,
pairwise_distance, cdist (every pair of rows of two sets), and the losses built on them (cosine_embedding_loss,
triplet_margin_loss).

All but cdist are composed of differentiable minigrad ops (norms, products, sums), so double backward comes
for free. Where PyTorch guards a division with ``eps`` the rule differs per function, and is matched:

* ``normalize``:          x / max(||x||_p, eps); the clamp is differentiable (no gradient through the
                          norm where ||x||_p < eps, so a zero vector gets dx = dout / eps).
* ``cosine_similarity``:  <x1 / max(||x1||, eps), x2 / max(||x2||, eps)>; each norm is clamped in value
                          only, its gradient stays the unclamped norm's (PyTorch clamps in place under
                          no_grad), see ``ClampMinPassGradient``.
* ``pairwise_distance``:  ||x1 - x2 + eps||_p along the last dimension.
* ``cdist``:              ||x1_i - x2_j||_p for every pair of rows, a Function whose backward is written with
                          minigrad ops (so it is its own graph_backward); no eps, a zero distance gets a zero
                          gradient as in PyTorch.
* ``cosine_embedding_loss``: its own cosine, <x1, x2> / sqrt((||x1||^2 + e)(||x2||^2 + e)) with e = 1e-12
                          rounded to float32, as PyTorch computes it.
"""
import math

import numpy as np

from .._checks import float_arg, takes_tensors
from ..autograd import Function, no_grad
from ..autograd.function import pytorch_saves
from ..dtypes import kind_of, result_type, scalar_type_name
from .dims import normalize_dim
from .elementwise import Routing, cast, check_broadcast, clamp_min, minimum, where
from .loss import apply_reduction, check_reduction, legacy_reduction
from .reduce import norm
from .shape import expand
from ..tensor import Tensor
from ..autocast_ops import autocast_op


class ClampMinPassGradient(Routing):
    """y = max(x, eps) in value, dx = dout everywhere (the identity's gradient): a clamp made under
    no_grad, which changes what later ops see but not how the gradient reaches x."""

    @staticmethod
    def forward(ctx, a, eps):
        return np.maximum(a._data, a._data.dtype.type(eps))

    @staticmethod
    def grads(ctx, g):
        return g, None


@takes_tensors("input")
def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p, eps) along ``dim`` (an int or a tuple of ints): unit vectors, zero vectors stay 0.
    (``out=``, as ``nn.functional.normalize`` takes it, is minigrad/_out.py's.)"""
    eps = float_arg(eps, "normalize", "eps", 4)
    return input / clamp_min(norm(input, p, dim, keepdim=True), eps)


@takes_tensors("x1", "x2")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim``, x1 and x2 broadcast together first.

    Computed as the sum of the products of the two normalized vectors (each divided by its clamped norm),
    which keeps the result within [-1, 1]; integer inputs are converted to their common floating dtype."""
    eps = float_arg(eps, "cosine_similarity", "eps", 4)
    if not eps >= 0:                                        # (NaN too)
        raise RuntimeError(f"eps must be non-negative, got: {eps:g}")
    dtype = result_type(x1._data, x2._data)
    if kind_of(dtype) != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_type_name(dtype)}")
    x1, x2 = (cast(x, dtype) if kind_of(x.dtype) in "biu" else x for x in (x1, x2))
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


_EMBEDDING_EPS = float(np.float32(1e-12))   # PyTorch's cosine_embedding_loss adds a float constant


@takes_tensors("input1", "input2", "target")
@autocast_op("float32")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Per pair (rows of 2-d inputs with a 1-d target, or 1-d inputs with a 0-d target): 1 - cos(x1, x2)
    where target == 1, max(0, cos(x1, x2) - margin) where target == -1, 0 for any other target value."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    if target.ndim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != target.ndim + 1 or input2.ndim != target.ndim + 1:
        raise RuntimeError(f"{target.ndim}D target tensor expects {target.ndim + 1}D input tensors, but found inputs "
                           f"with sizes {list(input1.shape)} and {list(input2.shape)}.")
    margin = float_arg(margin, "cosine_embedding_loss", "margin", 4)
    axis = target.ndim   # the vectors' dimension

    def squared_norm(x):
        return (x * x).sum(axis) + _EMBEDDING_EPS
    cos = (input1 * input2).sum(axis) / (squared_norm(input1) * squared_norm(input2)).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, clamp_min(cos - margin, 0), 0.0)
    return apply_reduction(loss, reduction)


@takes_tensors("anchor", "positive", "negative")
@autocast_op("float32")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the ``pairwise_distance`` of order p;
    with ``swap``, d(anchor, negative) is replaced by d(positive, negative) where that is smaller."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    reduction = check_reduction(reduction)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    margin = float_arg(margin, "triplet_margin_loss", "margin", 4)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    distance_positive = pairwise_distance(anchor, positive, p, eps)
    distance_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        distance_negative = minimum(distance_negative, pairwise_distance(positive, negative, p, eps))
    return apply_reduction(clamp_min(margin + distance_positive - distance_negative, 0), reduction)


# --------------------------------------------------------------------------- cdist
_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _pair_differences(x1, x2):
    """diff[..., i, j, :] = x1[..., i, :] - x2[..., j, :]: (*B, P, R, M) from (*B, P, M) and (*B, R, M) (ndarrays
    or Tensors)."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _p_distance(diff, p):
    """The p-norm of ``diff`` (an ndarray) along its last axis: the count of non-zeros for p = 0, the largest
    magnitude for p = inf."""
    magnitude = np.abs(diff)
    if p == 0:
        return (magnitude != 0).sum(-1).astype(diff.dtype)
    if p == math.inf:
        return magnitude.max(-1, initial=0)
    if p == 1:
        return magnitude.sum(-1)
    if p == 2:
        return np.sqrt((magnitude * magnitude).sum(-1))
    return (magnitude ** p).sum(-1) ** (1 / p)


def _distance_slope(diff, dist, p):
    """d dist / d diff (*B, P, R, M), from Tensors ``diff`` and ``dist`` (*B, P, R, 1):

        p = 0: 0;   p = 1: sign(diff);   p = inf: sign(diff) where |diff| = dist (every tied coordinate), else 0;
        otherwise sign(diff) |diff|^(p-1) / dist^(p-1), which is diff / dist for p = 2,

    taken as 0 where dist = 0 (a point paired with itself) and, for p < 1, where diff = 0, as PyTorch does (a NaN
    distance makes every coordinate's slope NaN, as in PyTorch's kernel)."""
    sign = diff.sign()
    if p == 0:
        return diff * 0
    if p == 1:
        return sign
    if p == math.inf:
        return where(diff.abs() == dist, sign, 0.0)
    zero = (dist == 0) | (diff == 0) if p < 1 else dist == 0
    safe_dist = where(dist == 0, 1.0, dist)                 # keeps 0/0 and 0^(p-1) out of the gradient (and its graph)
    ratio = diff / safe_dist if p == 2 else sign * (where(zero, 1.0, diff.abs()) / safe_dist) ** (p - 1)
    return where(zero, 0.0, ratio)


class Cdist(Function):
    """out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p. Backward, with s = d dist / d diff (``_distance_slope``):
    dx1[..., i, :] = sum_j dout[..., i, j] s[..., i, j, :],  dx2[..., j, :] = -sum_i dout[..., i, j] s[..., i, j, :]
    (written with minigrad ops, so it is also the graph_backward)."""

    @staticmethod
    def forward(ctx, x1, x2, p):
        ctx.p = p
        dist = _p_distance(_pair_differences(x1._data, x2._data), p)
        ctx.save_for_backward(x1._data, x2._data, dist)    # the output too, as PyTorch's: a write into it is refused
        return dist

    @staticmethod
    def backward(ctx, dout):
        x1, x2, dist = ctx.saved_tensors
        with no_grad():
            return _cdist_grads(Tensor(x1), Tensor(x2), Tensor(dist), dout, ctx.p)

    @staticmethod
    def graph_backward(ctx, dout):
        x1, x2, dist = ctx.saved_tensors
        return _cdist_grads(ctx.input_tensor(0, x1), ctx.input_tensor(1, x2), ctx.output_tensor(dist), dout, ctx.p)


def _cdist_grads(x1, x2, dist, dout, p):
    """(dx1, dx2, None) at the broadcast batch shape (the engine sums broadcast batch dimensions away)."""
    share = dout[..., None] * _distance_slope(_pair_differences(x1, x2), dist[..., None], p)   # (*B, P, R, M)
    return share.sum(-2), -share.sum(-3), None


@takes_tensors("x1", "x2")
@autocast_op("float32")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between every row of x1 (*B, P, M) and every row of x2 (*B, R, M): (*B, P, R), the
    batch dimensions broadcast. p >= 0 (0 counts the differing coordinates, inf takes the largest difference).
    Always computed from the differences (``compute_mode`` is checked, but the matrix-product shortcut for p = 2
    is not taken: it is less accurate and gives the same values up to rounding)."""
    p = float_arg(p, "cdist", "p", 3)
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if kind_of(x.dtype) != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(x.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype not in (np.float32, np.float64):      # PyTorch's CPU kernel has no 16-bit ones
        raise NotImplementedError(f"\"cdist\" not implemented for '{scalar_type_name(x1.dtype)}'")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist(): expected X1 and X2 to have the same dtype, but got {x1.dtype} and {x2.dtype}")
    if not p >= 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got p={p}")
    check_broadcast(x1.shape[:-2], x2.shape[:-2])
    return Cdist.apply(x1, x2, p)


@takes_tensors("input")
@pytorch_saves("input", outputs=(0,))
def pdist(input, p=2):
    """The p-norm distances between every pair of rows i < j of ``input`` (N, M), in row-major order of the
    pairs: (N (N - 1) / 2,). The upper triangle of ``cdist(input, input, p)``, so its gradient is cdist's
    (reaching row i through the first operand and row j through the second), zero at a zero distance."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if kind_of(input.dtype) != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    p = float_arg(p, "pdist", "p", 2)
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input.shape[0], 1)
    return cdist(input, input, p)[Tensor(rows), Tensor(cols)]
