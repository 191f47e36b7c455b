"""Counting and searching (none differentiable): bincount, histc, histogram, histogramdd, searchsorted,
bucketize, unique, unique_consecutive, isin.

Histogram bins follow PyTorch: ``bins`` equal-width bins over ``range`` (default: the data's min and max; an
empty or constant range widened by 0.5 each side, by 1 for ``histc``), each bin ``[edge_k, edge_k+1)`` except
the last, which includes its right edge; values outside the range are not counted.
"""
import operator

import numpy as np

from ..dtypes import kind_of, scalar_type_name
from .._checks import refuses_complex, takes_tensors
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from .dims import normalize_dim


# --------------------------------------------------------------------------- bincount
@takes_tensors("input")
def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ..., max(input) occurs in the 1-D non-negative integer ``input`` (at least
    ``minlength`` counts); with ``weights``, their sums instead (float32 weights give float32, others float64)."""
    minlength = operator.index(minlength)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    values = input._data
    check_kernel("bincount", input)
    if kind_of(values.dtype) not in "iu":      # PyTorch's kernel counts integers only
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(values.dtype)}'")
    if input.ndim != 1 or kind_of(values.dtype) not in "iu" or (values.size and values.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return Tensor(np.bincount(values, minlength=minlength).astype(np.int64))
    if not isinstance(weights, Tensor) or weights.ndim != 1 or weights.shape[0] != values.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = np.float32 if weights.dtype == np.float32 else np.float64
    return Tensor(np.bincount(values, weights._data.astype(np.float64), minlength=minlength).astype(dtype))


# --------------------------------------------------------------------------- histograms
def _outer_edges(values, range, widen):
    """(left, right) of the bins: ``range``, or the data's min and max (0, 0 when empty); equal ends widened by
    ``widen`` each side."""
    if range is not None:
        left, right = float(range[0]), float(range[1])
    elif values.size:
        left, right = float(values.min()), float(values.max())
    else:
        return 0.0, 1.0                                     # no data: PyTorch's unit range
    if not (np.isfinite(left) and np.isfinite(right)):
        raise RuntimeError(f"range of [{left}, {right}] is not finite")
    if left > right:
        raise RuntimeError(f"max must be larger than min, but got min {left} and max {right}")
    if left == right:
        left, right = left - widen, right + widen
    return left, right


def _linspace(left, right, steps, dtype):
    """PyTorch's ``linspace`` in ``dtype`` arithmetic: the first half stepped up from ``left``, the second down
    from ``right`` (the float32 edges then agree bit for bit)."""
    left, right = dtype.type(left), dtype.type(right)
    step = (right - left) / dtype.type(steps - 1)
    i = np.arange(steps)
    half = steps // 2
    return np.where(i < half, left + step * i.astype(dtype), right - step * (steps - 1 - i).astype(dtype)).astype(dtype)


def _bin_of(values, edges):
    """The bin of each value for the sorted ``edges`` (its last edge counted in the last bin), and whether it is
    inside ``[edges[0], edges[-1]]``."""
    inside = (values >= edges[0]) & (values <= edges[-1])
    position = np.searchsorted(edges, values, side="right") - 1              # edges[pos] <= value < edges[pos+1]
    return np.clip(position, 0, len(edges) - 2), inside


def _histogram_nd(name, points, bins, range, weight, density):
    """(counts of shape (b_0, ..., b_{D-1}), [edges_0, ...]) of the (N, D) ``points``."""
    n, dims = points.shape
    dtype = points.dtype
    if isinstance(bins, Tensor) or (isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor)):
        edge_list = [bins] if isinstance(bins, Tensor) else list(bins)
        if len(edge_list) != dims:
            raise RuntimeError(f"{name}: The size of bins must be equal to the innermost dimension of the input.")
        edges = [e._data.astype(dtype) for e in edge_list]
    else:
        counts = [operator.index(bins)] * dims if not isinstance(bins, (list, tuple)) else [operator.index(b)
                                                                                          for b in bins]
        if len(counts) != dims:
            raise RuntimeError(f"{name}: The size of bins must be equal to the innermost dimension of the input.")
        if any(c <= 0 for c in counts):
            raise RuntimeError(f"{name}: bins must be > 0, but got {min(counts)}")
        if range is not None and len(range) != 2 * dims:
            raise RuntimeError(f"{name}: for a {dims}-dimensional histogram range should have {2 * dims} elements, "
                               f"but got {len(range)}")
        edges = []
        for d, c in enumerate(counts):
            left, right = _outer_edges(points[:, d], None if range is None else range[2 * d:2 * d + 2], 0.5)
            edges.append(_linspace(left, right, c + 1, dtype))
    keep = np.ones(n, bool)
    flat = np.zeros(n, np.int64)
    for d, e in enumerate(edges):                                         # flat bin = ravelled per-dim bins
        position, inside = _bin_of(points[:, d], e)
        keep &= inside
        flat = flat * (len(e) - 1) + position
    shape = tuple(len(e) - 1 for e in edges)
    hist = np.zeros(int(np.prod(shape)), dtype)
    w = 1 if weight is None else weight._data.reshape(-1).astype(dtype)[keep]
    np.add.at(hist, flat[keep], w)                                       # in order and in dtype, as PyTorch sums
    hist = hist.reshape(shape)
    if density:
        widths = np.ones(shape, dtype)
        for d, e in enumerate(edges):
            widths = widths * np.diff(e).reshape((-1,) + (1,) * (dims - d - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.sum() / widths                               # NaN when nothing is counted
    return Tensor(hist.astype(dtype)), [Tensor(e) for e in edges]


def _check_weight(name, input, weight, shape):
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != shape):
        raise RuntimeError(f"{name}: if weight tensor is provided it should have the same shape as the input tensor "
                           f"excluding its innermost dimension, but got input with shape {list(input.shape)} and "
                           f"weight with shape {list(getattr(weight, 'shape', ()))}")


@takes_tensors("input")
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the flattened ``input``: ``bins`` equal-width bins (or the given edges, a 1-D tensor);
    ``weight`` sums weights instead of counting; ``density`` normalizes to unit integral."""
    if kind_of(input.dtype) == "c":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_type_name(input.dtype)}'")
    if kind_of(input.dtype) != "f":
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           f"input {input.dtype}")
    _check_weight("torch.histogram", input, weight, input.shape)
    if range is not None and len(range) != 2:
        raise RuntimeError("torch.histogram: range should have 2 elements")
    hist, edges = _histogram_nd("torch.histogram", input._data.reshape(-1, 1), bins, range, weight, density)
    return _HistogramResult(hist, edges[0])


@takes_tensors("input")
@refuses_complex('"histogramdd" not implemented for \'{dtype}\'')
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, [bin_edges per dim]) of the points ``input`` (..., D): a D-dimensional histogram."""
    if input.ndim < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension")
    _check_weight("torch.histogramdd", input, weight, input.shape[:-1])
    points = input._data.reshape(-1, input.shape[-1])
    hist, edges = _histogram_nd("histogramdd", points, bins, range, weight, density)
    return _HistogramddResult(hist, edges)


class _HistogramResult(tuple):
    """(hist, bin_edges), also by name, as PyTorch's ``torch.return_types.histogram``."""
    def __new__(cls, hist, bin_edges):
        return super().__new__(cls, (hist, bin_edges))

    hist = property(lambda self: self[0])
    bin_edges = property(lambda self: self[1])


class _HistogramddResult(_HistogramResult):
    pass


@takes_tensors("input")
def histc(input, bins=100, min=0, max=0):
    """Counts of the flattened ``input`` in ``bins`` equal-width bins over [min, max] (the data's own range when
    both are 0, widened by 1 each side if constant), in ``input``'s dtype; values outside are ignored."""
    if kind_of(input.dtype) == "c":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    check_kernel("histc", input)
    if kind_of(input.dtype) != "f":
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{input.dtype}'")
    bins = operator.index(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for bins")
    values = input._data.reshape(-1)
    data_range = None if (min == 0 and max == 0) else (min, max)
    left, right = _outer_edges(values, data_range, 1.0)
    inside = (values >= left) & (values <= right)
    position = ((values[inside] - left) * bins / (right - left)).astype(np.int64)   # linear interpolation
    hist = np.bincount(np.clip(position, 0, bins - 1), minlength=bins)
    return Tensor(hist.astype(input.dtype))


# --------------------------------------------------------------------------- searchsorted, bucketize
def _side(right, side):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("side and right can't be set to opposites, got side of left while right was True")
        return side
    return "right" if right else "left"


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value of ``input``, the position in (each innermost row of) ``sorted_sequence`` where inserting
    it keeps the row sorted: before equal values, or after them with ``right``/``side='right'``."""
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be Tensor, not "
                        f"{type(sorted_sequence).__name__}")
    side = _side(right, side)
    check_kernel("searchsorted", sorted_sequence, input if isinstance(input, Tensor) else None)
    seq = sorted_sequence._data
    scalar = not isinstance(input, Tensor)
    values = np.asarray(input) if scalar else input._data
    if (seq.dtype.kind == "c" or values.dtype.kind == "c") and seq.size and values.size:  # (empty: nothing to order)
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for "
                                  f"'{scalar_type_name(np.result_type(seq, values))}'")
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(seq.shape)} and got sorter tensor {list(sorter.shape)}")
        seq = np.take_along_axis(seq, sorter._data, axis=-1)
    dtype = np.int32 if out_int32 else np.int64
    if seq.ndim <= 1:
        return Tensor(np.searchsorted(seq, values, side=side).astype(dtype))
    if scalar or seq.shape[:-1] != values.shape[:-1]:
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    out = np.zeros(values.shape, dtype)
    if out.size == 0 or seq.shape[-1] == 0:                              # nothing to search, or in
        return Tensor(out)
    rows, found = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
    out = out.reshape(found.shape)
    for r in range(rows.shape[0]):                                       # one search per row (not per element)
        out[r] = np.searchsorted(rows[r], found[r], side=side)
    return Tensor(out.reshape(values.shape))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of ``input`` for the 1-D sorted ``boundaries``: i with
    boundaries[i-1] < x <= boundaries[i] (``right``: boundaries[i-1] <= x < boundaries[i])."""
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({getattr(boundaries, 'ndim', 0)})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# --------------------------------------------------------------------------- unique, unique_consecutive, isin
def _outputs(values, inverse, counts, return_inverse, return_counts):
    out = [Tensor(values)]
    if return_inverse:
        out.append(Tensor(inverse.astype(np.int64)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@takes_tensors("input")
@refuses_complex('"unique" not implemented for \'{dtype}\'')
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted; NaNs each distinct), or the distinct slices along ``dim``; with
    ``return_inverse`` the index of each element's value (input's shape), with ``return_counts`` how often each
    value occurs."""
    check_kernel("unique", input)
    x = input._data
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        return _outputs(values, inverse.reshape(x.shape), counts, return_inverse, return_counts)
    axis = normalize_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    if x.shape[axis] == 0:
        return _outputs(x.copy(), np.zeros(0), np.zeros(0), return_inverse, return_counts)
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=axis)
    return _outputs(values, inverse.reshape(-1), counts, return_inverse, return_counts)


@takes_tensors("input")
@refuses_complex('"unique" not implemented for \'{dtype}\'')
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive values (slices along ``dim``) collapsed to one; the inverse maps every
    element to its run, the counts give each run's length."""
    check_kernel("unique", input)
    x = input._data
    if dim is None:
        flat = x.reshape(-1)
        starts = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        run = np.cumsum(starts) - 1
        counts = np.diff(np.append(np.flatnonzero(starts), flat.size))
        return _outputs(flat[starts], run.reshape(x.shape), counts, return_inverse, return_counts)
    if input.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    axis = normalize_dim(dim, input.ndim)
    moved = np.moveaxis(x, axis, 0).reshape(x.shape[axis], x.size // max(x.shape[axis], 1))   # row i: slice i
    n = moved.shape[0]
    starts = np.concatenate([[True], np.any(moved[1:] != moved[:-1], axis=1)]) if n else np.zeros(0, bool)
    run = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    values = np.take(x, np.flatnonzero(starts), axis=axis)
    return _outputs(values, run, counts, return_inverse, return_counts)


@refuses_complex('Unsupported input type encountered for isin(): {dtype}', RuntimeError)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` occurs in ``test_elements`` (either may be a number), as a bool tensor of
    ``elements``' shape; ``invert`` negates it."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: elements or test_elements must be a "
                        "Tensor")
    check_kernel("isin", *[t for t in (elements, test_elements) if isinstance(t, Tensor)])
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return Tensor(np.isin(a, b, assume_unique=assume_unique, invert=invert))


@takes_tensors("input")
def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` with exactly ``size`` rows: the first ``size`` coordinates, then rows of ``fill_value``."""
    size = operator.index(size)
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size}")
    found = np.argwhere(input._data)[:size]                              # (count, ndim)
    out = np.full((size, input.ndim), fill_value, dtype=np.int64)
    out[:len(found)] = found
    return Tensor(out)


METHODS = ["nonzero_static", "bincount", "histc", "histogram", "unique", "unique_consecutive"]
