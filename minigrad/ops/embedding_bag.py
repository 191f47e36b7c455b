"""``embedding_bag``: the sum, mean or max of the embedding rows of each bag of indices, without building the
(entries, dim) lookup as an intermediate the user sees.

Bags are the rows of a 2-D input, or the slices input[offsets[b]:offsets[b+1]] of a 1-D input. Entries equal to
``padding_idx`` are left out (they count neither in a sum nor in a mean's divisor); an empty bag gives zeros.
Composed of differentiable ops: the lookup (``embedding``, whose backward adds each entry's gradient to its
row), a scatter-add of the entries into their bags (``IndexAdjoint``, whose adjoint is the gather of each
entry's bag gradient), and for 'max' a gather of each bag's argmax entry per feature:

    sum:  out_b = sum_{m in b} w_m E[i_m]           d E[i_m] += w_m dout_b,  d w_m = <E[i_m], dout_b>
    mean: out_b = sum_{m in b} E[i_m] / |b|          d E[i_m] += dout_b / |b|
    max:  out_bd = E[i_m*, d], m* = argmax_{m in b} E[i_m, d]   d E[i_m*, d] += dout_bd
"""
import numpy as np

from .._checks import takes_tensors
from ..dtypes import kind_of, scalar_type_name
from ..tensor import Tensor
from .linalg import check_lookup, embedding, embedding_renorm_
from .shape import IndexAdjoint

_MODES = ("sum", "mean", "max")


def _bags(input, offsets, include_last_offset):
    """(flat indices (M,), bag of each entry (M,), number of bags B) after PyTorch's checks."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        return input._data.reshape(-1), np.repeat(np.arange(bags), length), bags
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = offsets._data.astype(np.int64)
    entries = input.shape[0]
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}")
    if starts.size and starts[-1] > entries:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length ({entries}), but got offsets[-1] "
                           f"of {starts[-1]}")
    bags = len(starts) - 1 if include_last_offset else len(starts)
    bag_of = np.searchsorted(starts[:bags], np.arange(entries), side="right") - 1      # (M,), the last bag to the end
    return input._data, bag_of, max(bags, 0)


@takes_tensors("input", "weight", "offsets", "per_sample_weights")
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Per bag, the sum / mean / max of the rows of ``weight`` (num_embeddings, dim) that its indices pick:
    (B, dim). ``per_sample_weights`` (input's shape) scale each entry ('sum' only)."""
    if kind_of(weight.dtype) != "f":
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"BFloat16, Float, Double; but got CPU{scalar_type_name(weight.dtype)}Type instead (while "
                           f"checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({list(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    indices, bag_of, bags = _bags(input, offsets, include_last_offset)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    dim = weight.shape[1]
    padding_idx = check_lookup(indices, weight.shape[0], padding_idx, "padding_idx")
    if max_norm is not None:
        embedding_renorm_(weight, indices, max_norm, norm_type)
    keep = bag_of >= 0 if padding_idx is None else (bag_of >= 0) & (indices != padding_idx)   # (M,) counted
    kept, bag_of = indices[keep], bag_of[keep]
    rows = embedding(Tensor(kept), weight, None, None, 2.0, scale_grad_by_freq, sparse)        # (M', dim)
    if mode == "max":
        return _bag_max(rows, bag_of, bags, dim)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[Tensor(np.flatnonzero(keep))].unsqueeze(1)
    out = IndexAdjoint.apply(rows, (bags, dim), (bag_of,))                              # (B, dim) sums
    if mode == "mean":
        counts = np.bincount(bag_of, minlength=bags).astype(out.dtype)
        out = out / Tensor(np.maximum(counts, 1)[:, None])
    return out


def _bag_max(rows, bag_of, bags, dim):
    """Per bag and feature the largest entry (the first of equal ones), zeros for empty bags."""
    values = rows._data                                                                  # (M', dim)
    if not values.shape[0]:
        return IndexAdjoint.apply(rows[:0], (bags, dim), (bag_of,))
    starts = np.flatnonzero(np.r_[True, bag_of[1:] != bag_of[:-1]])                     # first entry of each run
    best = np.maximum.reduceat(values, starts, axis=0)                                   # (B', dim)
    run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(bag_of)]))         # run of each entry
    position = np.where(values == best[run], np.arange(len(bag_of))[:, None], len(bag_of))
    argmax = np.minimum.reduceat(position, starts, axis=0)                               # (B', dim) entry index
    picked = rows.gather(0, Tensor(argmax))                                              # (B', dim)
    return IndexAdjoint.apply(picked, (bags, dim), (bag_of[starts],))


__all__ = ["embedding_bag"]
