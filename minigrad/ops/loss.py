"""Losses: cross_entropy (log_softmax and the negative log-likelihood fused in one Function), mse_loss.

Cross-entropy at one position i (a row of logits z_i over C classes, p_i = softmax(z_i)) is

    loss_i = -sum_c q_ic log p_ic

with class weights q_i: for a class-index target t_i, q_ic = (1 - eps) w_t [c == t_i] + (eps / C) w_c
(label smoothing eps, class weights w, q_i = 0 where t_i == ignore_index); for class-probability targets,
q_ic = w_c ((1 - eps) target_ic + eps / C). Since sum_c p_ic = 1, its gradient is

    dloss_i / dz_i = (sum_c q_ic) p_i - q_i          (= p_i - onehot(t_i) without weights or smoothing)

'mean' divides by the total weight of the non-ignored targets, sum_i w_{t_i} (their count without
weights; all ignored gives 0/0 = nan, as PyTorch), or by the number of positions for probabilities.
"""
import warnings

import numpy as np

from ..autograd import Function
from .elementwise import as_tensor_operand, square, sub
from .softmax import shifted_exp

_REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


# --------------------------------------------------------------------------- cross_entropy
class CrossEntropy(Function):
    """Fused log_softmax + negative log-likelihood; backward = ((sum_c q) softmax - q) * dout / normaliser.

    Positions are all axes but the class axis (1, or 0 for an unbatched (C,) input). For class indices
    q is never materialised: a_i = (1 - eps) w_{t_i} is the target class's share and b_i = eps / C the
    smoothing share (times w_c), both zero at ignored positions.
    """

    @staticmethod
    def forward(ctx, logits, target, weight, ignore_index, reduction, label_smoothing):
        axis = 1 if logits.ndim > 1 else 0                     # the class axis
        n_classes = logits.shape[axis]
        logp, p, total = shifted_exp(logits._data, axis)        # in the compute dtype
        dtype = logp.dtype
        logp -= np.log(total)                                  # log_softmax, (N, C, *d)
        p /= total                                             # softmax
        eps = label_smoothing
        w = None if weight is None else weight._data.astype(dtype)                   # (C,)
        w_b = None if w is None else w.reshape((n_classes,) + (1,) * (logits.ndim - axis - 1))  # along the class axis

        if target.dtype.kind == "f":                           # class probabilities, the logits' shape
            q = target._data.astype(dtype, copy=False)
            if eps:
                q = q * (1 - eps) + eps / n_classes
            if w_b is not None:
                q = q * w_b
            loss = -np.sum(q * logp, axis=axis)                # (N, *d)
            normaliser = loss.size
            ctx.q, ctx.qsum = q, np.sum(q, axis=axis)
            ctx.logp = logp if ctx.needs_input_grad[1] else None
        else:                                                  # class indices, shape (N, *d)
            t = target._data
            valid = t != ignore_index
            idx = np.expand_dims(np.where(valid, t, 0), axis)  # (N, 1, *d): the target class per position
            w_t = valid.astype(dtype) if w is None else valid * w[idx.squeeze(axis)]
            a = (1 - eps) * w_t
            loss = -a * np.take_along_axis(logp, idx, axis).squeeze(axis)
            b = None
            if eps:
                b = valid * (eps / n_classes)
                loss -= b * np.sum(logp if w_b is None else logp * w_b, axis=axis)
            normaliser = np.sum(w_t)
            ctx.q, ctx.idx, ctx.a, ctx.b = None, idx, a, b
            ctx.qsum = a if b is None else a + b * (n_classes if w is None else np.sum(w))
        ctx.p, ctx.w_b, ctx.axis, ctx.eps = p, w_b, axis, eps
        ctx.reduction, ctx.normaliser = reduction, normaliser

        if reduction == "none":
            out = loss
        else:
            out = np.sum(loss)
            if reduction == "mean":
                with np.errstate(invalid="ignore", divide="ignore"):  # everything ignored: nan, as PyTorch
                    out = out / normaliser
        return np.asarray(out, dtype=dtype).astype(logits.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        axis, p = ctx.axis, ctx.p
        g = dout._data.astype(p.dtype, copy=False)
        if ctx.reduction == "none":
            g = np.expand_dims(g, axis)                        # per position, along the class axis
        elif ctx.reduction == "mean":
            g = g / ctx.normaliser if ctx.normaliser else 0 * g
        dx = p * np.expand_dims(ctx.qsum, axis)
        if ctx.q is not None:
            dx -= ctx.q
        else:
            if ctx.b is not None:
                dx -= np.expand_dims(ctx.b, axis) * (1 if ctx.w_b is None else ctx.w_b)
            at_target = np.take_along_axis(dx, ctx.idx, axis) - np.expand_dims(ctx.a, axis)
            np.put_along_axis(dx, ctx.idx, at_target, axis)
        dx *= g
        dtarget = None
        if ctx.needs_input_grad[1]:                            # probabilities: dloss/dtarget = -(1-eps) w log p
            dtarget = -(1 - ctx.eps) * ctx.logp * g
            if ctx.w_b is not None:
                dtarget *= ctx.w_b
        return dx, dtarget, None, None, None, None


def _check_cross_entropy(input, target, weight, label_smoothing):
    """PyTorch's shape, dtype and range checks, before anything is computed."""
    if input.ndim == 0:
        raise RuntimeError("cross_entropy: input must have at least 1 dimension (C,) or (N, C, *d), got a 0-d tensor")
    axis = 1 if input.ndim > 1 else 0
    n_classes = input.shape[axis]
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    if target.dtype.kind == "f" and target.shape == input.shape:
        return                                                 # class probabilities
    if target.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype} (class-probability "
                           f"targets must have the input's shape {list(input.shape)})")
    expected = input.shape[:axis] + input.shape[axis + 1:]
    if input.ndim == 2 and target.ndim == 1 and target.shape != expected:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if target.shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")


def _check_targets_in_range(target, n_classes, ignore_index):
    t = target._data
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[bad].flat[0]} is out of bounds.")


def cross_entropy(input, target, weight=None, *, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits ``input`` (C,), (N, C) or (N, C, d1, ...) and ``target``: class
    indices of the input's shape without C, or class probabilities of the input's shape. Fused: one
    Function computes log_softmax and the loss, and its backward is softmax - onehot (weighted)."""
    check_reduction(reduction)
    target = as_tensor_operand(target)
    _check_cross_entropy(input, target, weight, label_smoothing)
    if target.dtype.kind != "f":
        _check_targets_in_range(target, input.shape[1 if input.ndim > 1 else 0], ignore_index)
    return CrossEntropy.apply(input, target, weight, ignore_index, reduction, float(label_smoothing))


# --------------------------------------------------------------------------- mse_loss
def apply_reduction(loss, reduction):
    """Apply a loss reduction ('none', 'mean' over all elements, 'sum') with differentiable ops."""
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


def mse_loss(input, target, *, reduction="mean", weight=None):
    """(input - target)^2, reduced; sizes that differ broadcast with PyTorch's warning. With ``weight`` (the
    input's shape) each squared error is weighted and 'mean' is sum(weight * error^2) / sum(weight)."""
    check_reduction(reduction)
    target = as_tensor_operand(target, input)
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({list(target.shape)}) that is different to the input size "
                      f"({list(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=2)
    squared = square(sub(input, target))
    if weight is None:
        return apply_reduction(squared, reduction)
    weight = as_tensor_operand(weight, input)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = squared * weight
    return weighted.sum() / weight.sum() if reduction == "mean" else apply_reduction(weighted, reduction)
