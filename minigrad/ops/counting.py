"""Counting and membership: unique, unique_consecutive, bincount, histc, isin. None has a gradient.

``unique`` and ``unique_consecutive`` treat every NaN as distinct (NaN != NaN), as PyTorch does; the sorted
unique values put the NaNs last, in their order in the input.
"""
import numpy as np

from .._checks import is_number, takes_tensors
from ..tensor import Tensor
from .dims import normalize_dim
from .pointwise import not_implemented


def _runs(s):
    """Where a new run of equal values starts in ``s`` (1-D; NaN equal to nothing): a bool mask."""
    new = np.ones(s.shape, bool)
    new[1:] = s[1:] != s[:-1]
    return new


def _distinct(values, order, return_inverse, return_counts, inverse_shape):
    """(values at run starts, the run of each original element, run lengths) of ``values`` taken in ``order``
    (the permutation that lines equal elements up)."""
    lined_up = values[order]
    starts = _runs(lined_up)
    out = [Tensor(lined_up[starts])]
    if return_inverse:
        inverse = np.empty(values.shape, np.int64)
        inverse[order] = np.cumsum(starts) - 1
        out.append(Tensor(inverse.reshape(inverse_shape)))
    if return_counts:
        out.append(Tensor(np.diff(np.append(np.flatnonzero(starts), values.size)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _along(name, input, dim, return_inverse, return_counts, consecutive):
    """unique / unique_consecutive of the slices along ``dim``."""
    d = normalize_dim(dim, input.ndim)
    if input.numel() == 0 and input.shape[d] != 0:
        raise RuntimeError(f"There are 0 sized dimensions, and they aren't selected, so {name} cannot be applied")
    slices = np.moveaxis(input._data, d, 0)                          # (n, ...)
    n = slices.shape[0]
    flat = slices.reshape(n, -1) if n else np.zeros((0, 1), slices.dtype)   # one row per slice
    if consecutive:
        order = np.arange(n)
    else:
        order = np.lexsort(flat.T[::-1]) if flat.shape[1] else np.arange(n)   # rows in lexicographic order
    lined = flat[order]
    starts = np.ones(n, bool)
    starts[1:] = (lined[1:] != lined[:-1]).any(axis=1) if n else starts[1:]
    values = np.moveaxis(slices[order][starts], 0, d)
    out = [Tensor(np.ascontiguousarray(values))]
    if return_inverse:
        inverse = np.empty(n, np.int64)
        inverse[order] = np.cumsum(starts) - 1
        out.append(Tensor(inverse))
    if return_counts:
        out.append(Tensor(np.diff(np.append(np.flatnonzero(starts), n)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@takes_tensors("input")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002 - PyTorch's
    """The distinct elements of ``input`` in ascending order (of its slices along ``dim``), with the index of
    each element's value (``return_inverse``, input's shape) and how often each occurs (``return_counts``)."""
    if dim is not None:
        return _along("unique", input, dim, return_inverse, return_counts, consecutive=False)
    values = input._data.reshape(-1)
    keys = values.view(np.uint8) if values.dtype.kind == "b" else values
    order = np.argsort(keys, kind="stable")
    return _distinct(values, order, return_inverse, return_counts, input.shape)


@takes_tensors("input")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive elements (slices along ``dim``) kept once."""
    if dim is not None:
        return _along("unique_consecutive", input, dim, return_inverse, return_counts, consecutive=True)
    values = input._data.reshape(-1)
    return _distinct(values, np.arange(values.size), return_inverse, return_counts, input.shape)


@takes_tensors("input", optional=("weights",))
def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer tensor ``input`` (the sum of
    ``weights`` at its occurrences when given: float weights keep their dtype, others give float64)."""
    x = input._data
    if x.ndim != 1 or x.dtype.kind not in "iub" or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return Tensor(np.bincount(x, minlength=minlength).astype(np.int64))
    if weights.ndim != 1 or weights.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = weights.dtype if weights.dtype.kind == "f" else np.dtype(np.float64)
    return Tensor(np.bincount(x, weights._data, minlength=minlength).astype(dtype))


@takes_tensors("input")
def histc(input, bins=100, min=0, max=0):  # noqa: A002 - PyTorch's names
    """Counts of ``input``'s elements in ``bins`` equal bins over [min, max] (the data's range when both are
    0); elements outside are ignored, the maximum goes in the last bin. Same dtype as input."""
    x = input._data
    if x.dtype.kind != "f":
        raise not_implemented("histogram_cpu", x.dtype)
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0")
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    counts, _ = np.histogram(x[~np.isnan(x)], bins=bins, range=(lo, hi))
    return Tensor(counts.astype(x.dtype))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a number; not both)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: at least one of elements and "
                        "test_elements must be a Tensor")
    for name, value in (("elements", elements), ("test_elements", test_elements)):
        if not isinstance(value, Tensor) and not is_number(value):
            raise TypeError(f"isin(): argument '{name}' must be Tensor or Number, not {type(value).__name__}")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return Tensor(np.asarray(np.isin(a, b, invert=invert)))


__all__ = ["unique", "unique_consecutive", "bincount", "histc", "isin"]
METHODS = ["unique", "unique_consecutive", "bincount", "histc"]
