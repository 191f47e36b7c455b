"""Connectionist temporal classification (Graves et al., 2006): ``ctc_loss``.

For one sample with log-probabilities lp_t(c) over T_n frames and a target l of L_n labels, the extended target
l' = (blank, l_1, blank, l_2, ..., l_L, blank) has 2 L_n + 1 states. An alignment walks through l' one state
per frame, staying, stepping by one, or skipping a blank between two different labels. In log space:

    forward   a_t(s) = lp_t(l'_s) + logsumexp(a_{t-1}(s), a_{t-1}(s-1), a_{t-1}(s-2) [l'_s != blank, l'_s != l'_{s-2}])
              a_0(0) = lp_0(blank),  a_0(1) = lp_0(l_1)
    backward  b_t(s) = lp_t(l'_s) + logsumexp(b_{t+1}(s), b_{t+1}(s+1), b_{t+1}(s+2) [l'_s != blank, l'_s != l'_{s+2}])
              b_{T-1}(2L) = lp_{T-1}(blank),  b_{T-1}(2L-1) = lp_{T-1}(l_L)
    nll = -log p(l | x) = -logsumexp(a_{T-1}(2L), a_{T-1}(2L-1))

Both a_t(s) and b_t(s) include frame t's own probability, so for every t, sum_s exp(a_t(s) + b_t(s) - lp_t(l'_s))
is p(l | x), and the derivative of the nll with respect to one log-probability is

    d nll / d lp_t(c) = -exp(log sum_{s: l'_s = c} exp(a_t(s) + b_t(s)) + nll - lp_t(c))

(the posterior probability of being in a state labelled c at frame t, with a minus sign). PyTorch's gradient
adds exp(lp_t(c)) to it: log_probs are meant to be a log_softmax, and log_softmax's backward subtracts
softmax times the sum over classes of the incoming gradient, which is exactly that term (the sum of the formula
over c is -1), so the gradient reaching the logits is the same either way. minigrad returns PyTorch's, so that
gradients with respect to ``log_probs`` agree too; frames t >= T_n get zero.

The recursions are vectorised over the batch and the states, with one Python step per frame; the states of a
sample beyond 2 L_n and the frames beyond T_n are -inf and do not reach the states that count.
"""
import numpy as np

from .._checks import refuses_complex, takes_tensors
from ..autograd import Function, once_differentiable
from ..tensor import Tensor
from .loss import check_reduction
from ..autocast_ops import autocast_op

_NEG_INF = -np.inf


def _logsumexp(*terms):
    """Elementwise log(sum exp) of same-shaped arrays, -inf where every term is -inf."""
    stacked = np.stack(terms)
    top = np.max(stacked, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(stacked - safe), axis=0))


def _shift(a, k):
    """a (..., S) moved k states to the right along the last axis (-k to the left), -inf filled."""
    out = np.full_like(a, _NEG_INF)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _extended(targets, target_lengths, blank):
    """The extended targets l' (N, 2S+1), blanks around and between the labels, and the mask of the states that
    may be entered by skipping a blank from two states back, (N, 2S+1)."""
    n, s = targets.shape
    ext = np.full((n, 2 * s + 1), blank, dtype=np.int64)
    ext[:, 1::2] = targets
    before = np.full_like(ext, blank)
    before[:, 2:] = ext[:, :-2]
    return ext, (ext != blank) & (ext != before)


def ctc_alpha_beta(lp, ext, skip, input_lengths, target_lengths):
    """The forward and backward log-variables a, b (T, N, 2S+1) and the nll (N,) of log-probabilities lp
    (T, N, C) for the extended targets ``ext`` (N, 2S+1) with skip mask ``skip``."""
    frames, n, _ = lp.shape
    states = ext.shape[1]
    rows = np.arange(n)
    emit = np.take_along_axis(lp, np.broadcast_to(ext[None], (frames, n, states)), axis=2)   # (T, N, 2S+1)
    alpha = np.full((frames, n, states), _NEG_INF)
    alpha[0, :, 0] = emit[0, :, 0]
    if states > 1:
        alpha[0, :, 1] = np.where(target_lengths > 0, emit[0, :, 1], _NEG_INF)
    for t in range(1, frames):
        prev = alpha[t - 1]
        alpha[t] = emit[t] + _logsumexp(prev, _shift(prev, 1), np.where(skip, _shift(prev, 2), _NEG_INF))
    last = input_lengths - 1
    end = 2 * target_lengths                                                  # (N,) the final blank's state
    final = alpha[last, rows]                                                 # (N, 2S+1) at each sample's T_n - 1
    nll = -_logsumexp(final[rows, end], np.where(end > 0, final[rows, np.maximum(end - 1, 0)], _NEG_INF))

    skip_from = np.zeros_like(skip)
    skip_from[:, :-2] = skip[:, 2:]                                           # state s may skip to s + 2
    start = np.full((n, states), _NEG_INF)
    start[rows, end] = 0.0
    start[rows[end > 0], end[end > 0] - 1] = 0.0
    beta = np.full((frames, n, states), _NEG_INF)
    for t in range(frames - 1, -1, -1):
        if t + 1 < frames:
            nxt = beta[t + 1]
            beta[t] = emit[t] + _logsumexp(nxt, _shift(nxt, -1), np.where(skip_from, _shift(nxt, -2), _NEG_INF))
        at_end = (t == last)[:, None]
        beta[t] = np.where(at_end, emit[t] + start, np.where((t > last)[:, None], _NEG_INF, beta[t]))
    return alpha, beta, nll


class CTCLossFunction(Function):
    """Per-sample negative log-likelihoods (N,) of padded targets; the gradient is PyTorch's (module docstring)."""

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        lp = log_probs._data.astype(np.float64, copy=False)
        ext, skip = _extended(targets, target_lengths, blank)
        alpha, beta, nll = ctc_alpha_beta(lp, ext, skip, input_lengths, target_lengths)
        ctx.save_for_backward(lp, alpha, beta, nll, ext, input_lengths)
        ctx.zero_infinity, ctx.classes = zero_infinity, lp.shape[2]
        if zero_infinity:
            nll = np.where(np.isinf(nll), 0.0, nll)
        return nll.astype(log_probs.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, dout):
        lp, alpha, beta, nll, ext, input_lengths = ctx.saved_tensors
        frames, n, _ = lp.shape
        with np.errstate(invalid="ignore", over="ignore"):
            occupancy = np.exp(alpha + beta + nll[None, :, None])                 # (T, N, 2S+1)
        labels = np.eye(ctx.classes)[ext]                                          # (N, 2S+1, C) one-hot
        per_class = np.einsum("tns,nsc->tnc", occupancy, labels)                   # (T, N, C)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            grad = np.exp(lp) - np.exp(np.log(per_class) - lp)
        grad[np.arange(frames)[:, None] >= input_lengths[None, :]] = 0.0
        if ctx.zero_infinity:
            grad[:, np.isinf(nll)] = 0.0
        return grad * dout.numpy()[None, :, None], None, None, None, None, None


def _lengths(value, name, n):
    """Lengths given as a tensor or a sequence of ints, as an int64 array (N,)."""
    array = np.asarray(value._data if isinstance(value, Tensor) else value)
    if array.dtype.kind not in "iu" and array.size:
        raise RuntimeError(f"{name} must be integral, got {array.dtype}")
    array = array.reshape(-1).astype(np.int64)
    if array.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return array


def _padded(targets, target_lengths, n):
    """Targets (N, S) from the padded (N, S) form or the concatenated 1-D form."""
    t = targets._data.astype(np.int64)
    total = int(target_lengths.sum())
    if t.ndim == 1 or n == 0:
        if t.shape[0] < total:
            raise RuntimeError(f"Expected tensor to have size at least {total} at dimension 0, but got size "
                               f"{t.shape[0]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)")
        width = int(target_lengths.max(initial=0))
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
        cols = np.arange(width)
        gather = np.minimum(starts[:, None] + cols[None, :], max(t.shape[0] - 1, 0))
        return np.where(cols[None, :] < target_lengths[:, None], t[gather] if t.size else 0, 0)
    width = int(target_lengths.max(initial=0))
    if t.shape[1] < width:
        raise RuntimeError(f"Expected tensor to have size at least {width} at dimension 1, but got size "
                           f"{t.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)")
    cols = np.arange(t.shape[1])
    return np.where(cols[None, :] < target_lengths[:, None], t, 0)


@takes_tensors("log_probs", "targets")
@autocast_op("float32")
@refuses_complex('"ctc_loss_cpu" not implemented for \'{dtype}\'')
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of log-probabilities (T, N, C) (or (T, C) unbatched) against targets, padded (N, S) or
    concatenated (sum(target_lengths),): per sample -log p(target | input); 'mean' divides each by its target
    length (at least 1) and averages over the batch, 'sum' adds them; ``zero_infinity`` zeroes impossible
    alignments' losses and gradients."""
    reduction = check_reduction(reduction)
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss expects log_probs to be 2-D (T, C) or 3-D (T, N, C), got {log_probs.ndim}-D")
    lp = log_probs if batched else log_probs.unsqueeze(1)
    frames, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_lengths = _lengths(input_lengths, "input_lengths", n)
    tg_lengths = _lengths(target_lengths, "target_lengths", n)
    if np.any(in_lengths > frames):
        raise RuntimeError(f"Expected input_lengths to have value at most {frames}, but got value "
                           f"{int(in_lengths.max())} (while checking arguments for ctc_loss_cpu)")
    if np.any(in_lengths < 0) or np.any(tg_lengths < 0):
        raise RuntimeError("ctc_loss: input and target lengths must be non-negative")
    padded = _padded(targets, tg_lengths, n)
    if padded.size and np.any((padded < 0) | (padded >= classes)):
        raise RuntimeError(f"ctc_loss: targets must be class indices in [0, {classes - 1}]")
    nll = CTCLossFunction.apply(lp, padded, in_lengths, tg_lengths, blank, bool(zero_infinity))
    if reduction == "none":
        return nll if batched else nll.reshape(())
    if reduction == "sum":
        return nll.sum()
    lengths = Tensor(np.maximum(tg_lengths, 1).astype(nll.dtype))
    return (nll / lengths).mean()


__all__ = ["ctc_loss"]
