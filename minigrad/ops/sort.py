"""Ordering: sort, argsort, topk; ``(values, indices)`` named tuples as PyTorch's ``torch.return_types``.

The values are ``gather(x, dim, indices)``, so they are differentiable: each value's gradient goes back to
the element it came from. NaN sorts as the largest value (last ascending, first descending), as in PyTorch;
equal values keep their original order (a stable sort, which PyTorch's unstable sort may not promise).
"""
import operator
from collections import namedtuple

import numpy as np

from .._checks import refuses_complex, takes_tensors
from ..dtypes import bfloat16, kind_of
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from .dims import normalize_dim
from .index import gather_values as gather
from .layout import laid_out_like

sort_result = namedtuple("sort", ["values", "indices"])  # like torch.return_types.sort
topk_result = namedtuple("topk", ["values", "indices"])


def _order(x, axis, descending):
    """Stable int64 indices that sort ``x`` along ``axis``. Descending: sort the reversed array ascending and
    reverse the result, so NaN (last ascending) comes first and ties keep their original order."""
    if x.dtype.kind == "b":
        x = x.view(np.uint8)
    elif x.dtype == bfloat16:          # ml_dtypes' sort does not put NaN last; float32 holds every bfloat16 exactly
        x = x.astype(np.float32)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int64)
    n = x.shape[axis]
    reversed_order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - reversed_order, axis).astype(np.int64)


def _sorted_along(input, dim, descending, k=None):
    """(values, indices) of ``input`` sorted along ``dim``, only the first ``k`` when given."""
    flat = input.reshape(1) if input.ndim == 0 else input  # a 0-d tensor sorts as one element
    axis = normalize_dim(dim, flat.ndim)
    indices = _order(flat._data, axis, descending)
    if k is not None:
        indices = np.take(indices, np.arange(k), axis=axis)
    if k is None and input.ndim > 1 and not flat._data.flags.c_contiguous:
        indices = laid_out_like(indices, flat._data)          # sort keeps the input's layout, as PyTorch's
    else:
        indices = np.ascontiguousarray(indices).reshape(input.shape if input.ndim == 0 else indices.shape)
    indices = Tensor(indices)
    return gather(flat, axis, indices), indices


@takes_tensors("input")
@refuses_complex(' Sort does not support complex dtypes on CPU', RuntimeError)
def sort(input, dim=-1, descending=False, *, stable=False):
    """``(values, indices)``: ``input`` sorted along ``dim`` and where each value came from."""
    if input.ndim:                              # (PyTorch sorts a 0-d tensor of any dtype: it is its own order)
        check_kernel("sort", input)
    return sort_result(*_sorted_along(input, dim, descending))


@takes_tensors("input")
@refuses_complex(' Sort does not support complex dtypes on CPU', RuntimeError)
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The int64 indices that sort ``input`` along ``dim`` (no gradient)."""
    if input.ndim:
        check_kernel("sort", input)
    return _sorted_along(input.detach(), dim, descending)[1]


@takes_tensors("input")
@refuses_complex(' topk does not support complex dtypes on CPU', RuntimeError)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements along ``dim``, in order."""
    k = operator.index(k)
    if kind_of(input.dtype) == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input.shape[normalize_dim(dim, input.ndim)] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"selected index k out of range (k = {k}, size along dim {dim} = {size})")
    if input.ndim:                                      # (a 0-d tensor of any dtype is its own top 1)
        check_kernel("topk", input)
    return topk_result(*_sorted_along(input, dim, largest, k))
