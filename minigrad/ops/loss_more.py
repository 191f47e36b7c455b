"""The margin, ranking and likelihood losses: margin_ranking_loss, hinge_embedding_loss, soft_margin_loss,
multilabel_soft_margin_loss, multi_margin_loss, multilabel_margin_loss, gaussian_nll_loss, poisson_nll_loss,
triplet_margin_with_distance_loss, linear_cross_entropy.

Each is composed of differentiable minigrad ops (clamps, logs, gathers, sums), so its gradient, and its double
backward, are the chain rule through those ops; the per-element formulas (x the input, y the target, m the
margin):

* margin_ranking:        max(0, -y (x1 - x2) + m)
* hinge_embedding:       x where y != -1, plus max(0, m - x) where y != 1
* soft_margin:           log(1 + exp(-y x))
* multilabel_soft_margin: -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) w, averaged over the C classes
* multi_margin:          sum_{i != t} w_t max(0, m - x_t + x_i)^p / C              (t the target class)
* multilabel_margin:     sum_{j in T} sum_{i not in T} max(0, 1 - x_j + x_i) / C   (T the targets before the
                         first -1)
* gaussian_nll:          (log v + (x - y)^2 / v) / 2 (+ log(2 pi) / 2 with ``full``), v = max(var, eps) in value
                         while the gradient reaches var as if unclamped (PyTorch clamps a clone under no_grad)
* poisson_nll:           exp(x) - y x (``log_input``) or x - y log(x + eps), plus Stirling's
                         y log y - y + log(2 pi y) / 2 where y > 1 with ``full``
"""
import math

import numpy as np

from .._checks import float_arg, refuses_complex, takes_tensors
from ..autograd.function import pytorch_saves
from ..dtypes import cast_refused, fitted_scalar, kind_of, scalar_type_name
from ..tensor import Tensor
from .activation import logsigmoid
from .distance import ClampMinPassGradient, pairwise_distance
from .elementwise import as_tensor_operand, clamp_min, minimum, where
from .pointwise import not_implemented
from .loss import apply_reduction, check_reduction, cross_entropy, legacy_reduction
from .linalg import linear
from .shape import result_reshape
from ..autocast_ops import autocast_op


def _reduction(size_average, reduce, reduction, alias=True):
    return check_reduction(legacy_reduction(size_average, reduce, reduction), alias)


def _size(t):
    return f"[{', '.join(str(s) for s in t.shape)}]"


# --------------------------------------------------------------------------- pairwise margins
@takes_tensors("input1", "input2", "target")
@autocast_op("float32")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target (input1 - input2) + margin): target 1 asks input1 to rank above input2 by the margin."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: torch.Size({_size(input1)}), input2: torch.Size({_size(input2)}), target: "
                           f"torch.Size({_size(target)}) ")
    margin = float_arg(margin, "margin_ranking_loss", "margin", 4)
    return apply_reduction(clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@takes_tensors("input", "target")
@autocast_op("float32")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target != -1, plus max(0, margin - x) where target != 1 (so +-1 targets pick one term)."""
    reduction = _reduction(size_average, reduce, reduction)
    margin = float_arg(margin, "hinge_embedding_loss", "margin", 3)
    zero = 0.0
    if kind_of(input.dtype) in "iu":     # PyTorch fills the margin into the input's dtype: integers stay integers
        if reduction == "mean":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {scalar_type_name(input.dtype)}")
        margin, zero = fitted_scalar(margin, input.dtype).item(), 0
    loss = where(target != 1, clamp_min(margin - input, 0), zero) + where(target != -1, input, zero)
    return apply_reduction(loss, reduction)


@takes_tensors("input", "target")
@autocast_op("float32")
@pytorch_saves("input", "target")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target x)), the logistic loss of a +-1 target."""
    reduction = _reduction(size_average, reduce, reduction)
    target = as_tensor_operand(target, input)
    product = -input * target
    if kind_of(product.dtype) in "iu":   # PyTorch computes the loss in place in the product's dtype
        raise cast_refused(np.float32, product.dtype)
    return apply_reduction(product.exp().log1p(), reduction)


@takes_tensors("input", "target", "weight")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per sample, the mean over the C classes (last dimension) of the binary cross-entropy of sigmoid(x)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):      # (PyTorch's Python code: no 'elementwise_mean', its message)
        raise ValueError(f"{reduction} is not valid")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.ndim - 1
    return apply_reduction(loss.sum(classes) / input.shape[classes], reduction)


# --------------------------------------------------------------------------- class margins
def _check_margin_shapes(input):
    """Whether ``input`` is one sample (C,) rather than a batch (N, C), after PyTorch's shape checks."""
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or (input.ndim < 2 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_size(input)}")
    return input.ndim < 2


@takes_tensors("input", "target", "weight")
@autocast_op("float32")
@pytorch_saves("input", "target")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Per sample with target class t: sum over the other classes i of w_t max(0, margin - x_t + x_i)^p / C."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    single = _check_margin_shapes(input)
    x = input.reshape(1, -1) if single else input                        # (N, C)
    n, classes = x.shape
    if not (target.ndim <= 1 and target.numel() == n):
        raise RuntimeError(f"target tensor should be 1-D with size equal to the batch size (or 0-D for one sample). "
                           f"Expected target size [{n}], but got {_size(target)}")
    if weight is not None and weight.shape[0] != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {_size(weight)}")
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_type_name(target.dtype)}")
    t = target._data.reshape(n)
    if np.any((t < 0) | (t >= classes)):
        raise IndexError("Target is out of bounds")   # PyTorch: "target out of range"
    x_t = x.gather(1, Tensor(t.reshape(n, 1)))                             # (N, 1)
    others = np.arange(classes)[None, :] != t[:, None]                     # (N, C): i != t
    if kind_of(x.dtype) == "c":
        raise not_implemented("multi_margin_loss_cpu_kernel", x.dtype)
    z = margin - x_t + x                                                   # (PyTorch's order of operations)
    z = where(Tensor(others & (z._data > 0)), z, 0.0)                    # its kernel's test: not NaN, no slope at 0
    z = z ** p if p == 2 else z
    if weight is not None:
        z = z * weight.index_select(0, Tensor(t)).reshape(n, 1)
    loss = z.sum(1) / classes                                               # (N,)
    if reduction == "none":
        return result_reshape(loss, ()) if single and target.ndim == 0 else loss
    return apply_reduction(loss, reduction)


@takes_tensors("input", "target")
@autocast_op("float32")
@pytorch_saves("input", "target")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample with target classes T (the target row up to its first -1): the hinge max(0, 1 - x_j + x_i)
    of every target j against every non-target i, summed and divided by C."""
    reduction = _reduction(size_average, reduce, reduction)
    single = _check_margin_shapes(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {_size(target)} for input of size: {_size(input)}")
    x = input.reshape(1, -1) if single else input                        # (N, C)
    n, classes = x.shape
    t = target._data.reshape(n, classes).astype(np.int64)
    listed = np.cumprod(t != -1, axis=1).astype(bool)                     # (N, K): before the first -1
    if np.any(listed & ((t < 0) | (t >= classes))):
        raise RuntimeError(f"target index is out of bounds: not in [-1, {classes - 1}]")
    safe = np.where(listed, t, 0)
    is_target = np.zeros((n, classes), dtype=bool)
    rows, _ = np.nonzero(listed)
    is_target[rows, t[listed]] = True                                     # (N, C): class i is a target
    x_j = x.gather(1, Tensor(safe))                                       # (N, K)
    if kind_of(x.dtype) == "c":
        raise not_implemented("multilabel_margin_loss_forward_out_frame", x.dtype)
    hinge = 1 - x_j.unsqueeze(2) + x.unsqueeze(1)                         # (N, K, C)
    pairs = listed[:, :, None] & ~is_target[:, None, :] & (hinge._data > 0)   # (PyTorch's kernel: z > 0)
    loss = where(Tensor(pairs), hinge, 0.0).sum((1, 2)) / classes          # (N,)
    if reduction == "none":
        return result_reshape(loss, ()) if single else loss
    return apply_reduction(loss, reduction)


# --------------------------------------------------------------------------- likelihoods
@takes_tensors("input", "target", numbers=("var",))
@refuses_complex('"lt_cpu" not implemented for \'{dtype}\'')
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log v + (x - y)^2 / v) / 2 per element, v the variance clamped to at least ``eps`` (in value only).

    ``var`` has the input's shape (heteroscedastic), or one dimension fewer or one dimension of size 1 (one
    variance shared along it), or is a non-negative float."""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = as_tensor_operand(float(var), input) * Tensor(np.ones(input.shape, dtype=input.dtype))
    elif bool(np.any(var._data < 0)):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for s, v in zip(input.shape, var.shape) if s != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = ClampMinPassGradient.apply(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return apply_reduction(loss, reduction)


@takes_tensors("input", "target")
@autocast_op("float32")
@refuses_complex('"le_cpu" not implemented for \'{dtype}\'')
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """The negative log-likelihood of ``target`` under Poisson(rate): rate = exp(x) with ``log_input``
    (exp(x) - y x), else rate = x (x - y log(x + eps)); ``full`` adds Stirling's approximation of log(y!)."""
    reduction = _reduction(size_average, reduce, reduction, alias=False)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        above = target.detach() > 1
        safe = where(above, target, 1.0)                   # the logs see targets > 1 only (no 0 * -inf)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(above, stirling, 0.0)
    return apply_reduction(loss, reduction)


# --------------------------------------------------------------------------- triplets and fused heads
@takes_tensors("anchor", "positive", "negative")
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) for any distance ``d`` (pairwise_distance by
    default); with ``swap``, d(anchor, negative) is replaced by d(positive, negative) where that is smaller."""
    check_reduction(reduction, alias=False)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return apply_reduction(clamp_min(margin + d_pos - d_neg, 0), reduction)


@takes_tensors("input", "linear_weight", "target", "linear_bias", "weight")
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): the classifier head and its loss in one
    call. ``linear_weight`` is (C, in_features) or (C, d_1, ..., d_K, in_features) for a K-dimensional loss;
    ``options`` (PyTorch's chunking) changes memory use, not the result, and is ignored here."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and input.ndim == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                           f"requires batched input, (N, {input.shape[-1]}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*input.shape[:-1], classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    flat_weight = linear_weight.reshape(-1, input.shape[-1])
    flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = linear(input, flat_weight, flat_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


__all__ = ["gaussian_nll_loss", "hinge_embedding_loss", "linear_cross_entropy", "margin_ranking_loss",
           "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
           "soft_margin_loss", "triplet_margin_with_distance_loss"]
