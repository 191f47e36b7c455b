"""Order statistics: median, nanmedian, kthvalue, mode, quantile, nanquantile, msort, aminmax.

With ``dim`` the first four return ``(values, indices)`` named tuples, and the gradient of each value goes to the
element at its index (``reduce.SelectAlong``, as ``max(dim)``). Without ``dim``, ``median``/``nanmedian`` return
the value alone and, as PyTorch does, share its gradient evenly among the elements equal to it (the NaNs when it
is NaN: ``reduce.Extremum``). Quantiles interpolate between two sorted values, so their gradient is the
interpolation weights routed back through the sort.

Where values tie, which index PyTorch reports depends on its selection algorithm, and minigrad reports the same:
for ``median``/``nanmedian`` the tied element a stable sort puts at the rank, for ``kthvalue`` the one its
quickselect ends with (replayed for tied slices only), for ``mode`` the last occurrence.
"""
from collections import namedtuple

import numpy as np

from .._checks import refuses_complex, takes_tensors
from ..dtypes import bfloat16, kind_of
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from .dims import normalize_dim, normalize_dims
from .elementwise_more import lerp_values
from .index import gather_values as gather
from .layout import row_major
from .pointwise import not_implemented
from .reduce import Extremum, SelectAlong, _check_nonempty, amax, amin
from .shape import result_reshape
from .sort import sort
from ..autocast_ops import autocast_op

median_result = namedtuple("median", ["values", "indices"])          # like torch.return_types.median
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
mode_result = namedtuple("mode", ["values", "indices"])
aminmax_result = namedtuple("aminmax", ["min", "max"])


# --------------------------------------------------------------------------- selecting one element per slice
def _stable_order(x, axis):
    """Indices sorting ``x`` along ``axis`` (stable: ties keep their order; NaN last)."""
    if x.dtype == bfloat16:            # ml_dtypes' sort does not put NaN last; float32 holds every bfloat16 exactly
        x = x.astype(np.float32)
    return np.argsort(x.view(np.uint8) if x.dtype.kind == "b" else x, axis=axis, kind="stable")


def _rank_indices(x, axis, rank):
    """The index (keepdim shape, int64) of the element of rank ``rank`` along ``axis`` (``rank``: an int, or an
    array of keepdim shape, one rank per slice)."""
    order = _stable_order(x, axis)
    rank = np.broadcast_to(np.asarray(rank), np.take(order, [0], axis).shape)
    return np.take_along_axis(order, rank.astype(np.int64), axis).astype(np.int64)


def _quickselect_position(values, k):
    """The position in ``values`` (a list of Python numbers) of the element PyTorch's kthvalue reports as the k-th
    smallest (k from 0): its CPU kernel's quickselect (median-of-three pivot, Hoare partition, NaN largest),
    replayed with the positions carried along, so that among tied values it names the same element."""
    def greater(a, b):                                  # a > b, a NaN greater than any number
        return (a != a and b == b) or a > b
    arr, pos = list(values), list(range(len(values)))

    def swap(a, b):
        arr[a], arr[b], pos[a], pos[b] = arr[b], arr[a], pos[b], pos[a]
    low, high = 0, len(arr) - 1
    while high > low:
        if high == low + 1:
            if greater(arr[low], arr[high]):
                swap(low, high)
            break
        swap(low + (high - low) // 2, low + 1)          # the median of arr[low], arr[low + 1], arr[high] to low
        if greater(arr[low + 1], arr[high]):
            swap(low + 1, high)
        if greater(arr[low], arr[high]):
            swap(low, high)
        if greater(arr[low + 1], arr[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, arr[low]
        while True:
            i += 1
            while greater(pivot, arr[i]):
                i += 1
            j -= 1
            while greater(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    return pos[k]


def _kth_indices(x, axis, k):
    """kthvalue's index (keepdim shape, int64) of the k-th smallest element (k from 1) along ``axis``: where that
    value occurs once in the slice, its position; where it is tied, the one PyTorch's quickselect names."""
    indices = _rank_indices(x, axis, k - 1)
    kth = np.take_along_axis(x, indices, axis)
    equal = (x == kth) | (np.isnan(x) & np.isnan(kth)) if kind_of(x.dtype) == "f" else x == kth
    tied = np.moveaxis(equal.sum(axis=axis, keepdims=True) > 1, axis, -1)[..., 0]      # (slices)
    if tied.any():
        rows = np.moveaxis(x.astype(np.float32) if x.dtype == bfloat16 else x, axis, -1)   # (..., n)
        out = np.moveaxis(indices, axis, -1)                                                # (..., 1), a view
        for where in np.ndindex(tied.shape):
            if tied[where]:
                out[where + (0,)] = _quickselect_position(rows[where].tolist(), k - 1)
    return indices


def _first_nan(x, axis):
    """Per slice: whether it holds a NaN, and the index of its first NaN (keepdim shapes)."""
    nan = np.isnan(x) if kind_of(x.dtype) in "fc" else np.zeros(x.shape, bool)
    return nan.any(axis=axis, keepdims=True), np.expand_dims(np.argmax(nan, axis=axis), axis).astype(np.int64)


def _median_indices(x, axis):
    """median(dim): the lower middle element; a slice holding a NaN gives its first NaN."""
    has_nan, first_nan = _first_nan(x, axis)
    return np.where(has_nan, first_nan, _rank_indices(x, axis, (x.shape[axis] - 1) // 2))


def _nanmedian_indices(x, axis):
    """nanmedian(dim): the lower middle of the non-NaN elements (the first element if all are NaN)."""
    count = row_major((~np.isnan(x)).sum(axis=axis, keepdims=True)) if kind_of(x.dtype) == "f" else x.shape[axis]
    return _rank_indices(x, axis, np.maximum((count - 1) // 2, 0))


def _mode_indices(x, axis):
    """mode(dim): the most frequent value (the smallest of equally frequent ones; NaNs each count once), at its
    last occurrence."""
    moved = np.moveaxis(x, axis, -1)                                  # (..., n)
    s = np.sort(moved, axis=-1)
    n = s.shape[-1]
    position = np.arange(n)
    new_run = np.concatenate([np.ones(s.shape[:-1] + (1,), bool), s[..., 1:] != s[..., :-1]], axis=-1)
    run_start = np.maximum.accumulate(np.where(new_run, position, 0), axis=-1)
    count = position - run_start + 1                                  # (..., n): length of the run so far
    winner = np.argmax(count == count.max(axis=-1, keepdims=True), axis=-1)[..., None]   # smallest such value
    value = np.take_along_axis(s, winner, -1)                         # (..., 1)
    equal = (moved == value) | (np.isnan(moved) & np.isnan(value)) if kind_of(x.dtype) == "f" else moved == value
    last = n - 1 - np.argmax(equal[..., ::-1], axis=-1)
    return np.moveaxis(last[..., None], -1, axis).astype(np.int64)


def _select(name, result, input, dim, keepdim, find_indices):
    """(values, indices) of the element ``find_indices(x, axis)`` picks in each slice along ``dim``."""
    flat = input.reshape(1) if input.ndim == 0 else input       # a 0-d tensor is one slice of one element
    d = normalize_dim(dim, flat.ndim)
    _check_nonempty(name, flat, (d,), True)
    indices = find_indices(flat._data, d)
    values = SelectAlong.apply(flat, indices, d, keepdim and input.ndim > 0)
    if input.ndim == 0:
        return result(result_reshape(values, ()), Tensor(indices.reshape(())))
    return result(values, Tensor(indices if keepdim else np.squeeze(indices, d)))


def _whole(input, find_indices):
    """The value ``find_indices`` picks over all elements; its gradient shared among the elements equal to it."""
    def reduce(x, axis, keepdims):
        flat = x.reshape(-1)
        if flat.size == 0:
            return np.full((1,) * x.ndim, np.nan, x.dtype)
        return flat[find_indices(flat, 0)].reshape((1,) * x.ndim)
    return Extremum.apply(input, normalize_dims(None, input.ndim), False, reduce, True)


_KERNELS = {"median": "median_out", "nanmedian": "median_out", "kthvalue": "kthvalue_cpu", "mode": "mode_cpu"}


def _check_sortable(name, input, kernel=None):
    """PyTorch's kernels order neither complex numbers nor (but for mode) bools."""
    if input.dtype.kind == "c" or (input.dtype.kind == "b" and name != "mode"):
        raise not_implemented(kernel or _KERNELS[name], input.dtype)


def _check_reduced_dim(name, input, dim):
    """The dim ``dim`` names (0 for a 0-d tensor, which takes 0 or -1). PyTorch refuses to select along an empty
    one (an IndexError naming it) before it looks at the dtype."""
    d = normalize_dim(dim, input.ndim or 1)
    if input.ndim:
        _check_nonempty(name, input, (d,), True)
    return d


def _median(name, result, input, dim, keepdim, find_indices):
    """median/nanmedian: over everything (of no element: NaN in the input's dtype, as PyTorch casts it, whatever
    the dtype), or along ``dim``."""
    if dim is None:
        if input.numel():
            check_kernel("median_all", input)
            _check_sortable(name, input, "median_cpu")
        elif not input.requires_grad:
            with np.errstate(invalid="ignore"):
                return Tensor(np.array(np.nan).astype(input._data.dtype))
        return _whole(input, find_indices)
    _check_reduced_dim("median", input, dim)
    check_kernel("median", input)
    _check_sortable(name, input)
    return _select(name, result, input, dim, keepdim, find_indices)


@takes_tensors("input")
def median(input, dim=None, keepdim=False):
    """The lower of the two middle values (NaN if there is a NaN): over everything (a value), or along ``dim``
    (``(values, indices)``)."""
    return _median("median", median_result, input, dim, keepdim, _median_indices)


@takes_tensors("input")
def nanmedian(input, dim=None, keepdim=False):
    """``median`` ignoring NaNs (NaN only where every element is NaN)."""
    return _median("nanmedian", nanmedian_result, input, dim, keepdim, _nanmedian_indices)


@takes_tensors("input")
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` (k from 1), ``(values, indices)``; NaN is the largest."""
    d = _check_reduced_dim("kthvalue", input, dim)
    if not 1 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim:                          # PyTorch's kernel runs (even for an empty result): not for 0-d ones
        _check_sortable("kthvalue", input)
        check_kernel("kthvalue", input)
    return _select("kthvalue", kthvalue_result, input, dim, keepdim, lambda x, axis: _kth_indices(x, axis, k))


@takes_tensors("input")
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of a tie) and the index of its last occurrence."""
    _check_reduced_dim("mode", input, dim)
    if input.ndim and input.numel():    # PyTorch's kernel runs (and refuses dtypes): not for 0-d or empty inputs
        _check_sortable("mode", input)
        check_kernel("mode", input)
    return _select("mode", mode_result, input, dim, keepdim, _mode_indices)


@takes_tensors("input")
@refuses_complex(' Sort does not support complex dtypes on CPU', RuntimeError)
def msort(input):
    """``input`` sorted along its first dimension (the values of ``sort(input, 0)``)."""
    return sort(input, 0).values


@takes_tensors("input")
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (everything by default), each with ``amin``/``amax``'s gradient."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if input.dtype.kind == "c":
            raise not_implemented("aminmax_cpu", input.dtype)
        if keepdim:
            return aminmax_result(amin(input, (), True), amax(input, (), True))
        return aminmax_result(amin(input), amax(input))
    d = _check_reduced_dim("aminmax", input, dim)
    if input.dtype.kind == "c":
        raise not_implemented("aminmax_cpu", input.dtype)
    return aminmax_result(amin(input, d, keepdim), amax(input, d, keepdim))


# --------------------------------------------------------------------------- quantiles
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """The sorted slice at rank q (n - 1) (n: the non-NaN count for nanquantile), interpolated between the
    neighbouring ranks; the result has q's dimension first when q is a 1-D tensor. (PyTorch's checks, in its order,
    say "quantile()" for nanquantile too.)"""
    q_tensor = isinstance(q, Tensor)
    if not q_tensor and not 0 <= q <= 1:                  # (a number q is checked first, NaN refused too)
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q_tensor and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype.kind != "f" or input.dtype.itemsize < 4:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q_tensor and q.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    qs = np.asarray(q._data if q_tensor else q, dtype=input.dtype).reshape(-1)          # (Q,)
    if not np.all((qs >= 0) & (qs <= 1)):                # (NaN refused too)
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None else normalize_dim(dim, x.ndim)
    x = x.reshape(1) if x.ndim == 0 else x
    moved = x.movedim(axis, -1) if x.ndim > 1 else x                                  # (..., n)
    values = sort(moved, -1).values
    a = values._data
    n = a.shape[-1]
    nan = np.isnan(a)
    count = (n - nan.sum(-1, keepdims=True)) if ignore_nan else np.full(a.shape[:-1] + (1,), n)
    ranks = qs * np.maximum(count - 1, 0)                                              # (..., Q)
    if not ignore_nan:
        ranks = np.where(nan.any(-1, keepdims=True), n - 1, ranks)                      # a NaN's slice gives NaN
    if interpolation == "nearest":
        ranks = np.round(ranks)
    below = np.floor(ranks) if interpolation != "higher" else np.ceil(ranks)
    above = np.ceil(ranks) if interpolation != "lower" else np.floor(ranks)
    below = np.minimum(below, n - 1)
    out = gather(values, -1, Tensor(below.astype(np.int64)))                      # (..., Q): lower, higher, nearest
    if interpolation in ("linear", "midpoint"):                                   # PyTorch's lerp to the rank above
        if interpolation == "midpoint":
            weight = Tensor(np.full(ranks.shape, 0.5, a.dtype))
        elif q_tensor and q.requires_grad:                                        # the weight is differentiable in q
            weight = ew.sub(ew.mul(q.reshape(-1), Tensor(np.maximum(count - 1, 0).astype(a.dtype))),
                            Tensor(below.astype(a.dtype)))
        else:
            weight = Tensor((ranks - below).astype(a.dtype))
        out = lerp_values(out, gather(values, -1, Tensor(np.minimum(above, n - 1).astype(np.int64))), weight)
    if ignore_nan:
        out = ew.masked_fill(out, Tensor(count == 0), float("nan"))
    out = out.movedim(-1, 0) if out.ndim > 1 else out                                  # (Q, ...)
    if keepdim:
        shape = (1,) * input.ndim if dim is None else tuple(1 if i == axis else s for i, s in enumerate(input.shape))
        out = out.reshape((len(qs),) + shape)
    if not q_tensor or q.ndim == 0:
        out = out.reshape(out.shape[1:])
    return out


@takes_tensors("input")
@autocast_op("float32")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles (a number or a 1-D tensor in [0, 1]) over ``dim`` (all elements by default); NaN
    where a slice holds a NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@takes_tensors("input")
@autocast_op("float32")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaNs (NaN only where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


__all__ = ["median", "nanmedian", "kthvalue", "mode", "msort", "aminmax", "quantile", "nanquantile"]
METHODS = __all__
