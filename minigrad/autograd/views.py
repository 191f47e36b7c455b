"""Differentiable views: how a write into ``x[0]`` (or ``x.T``, ``x.view(-1)``) reaches ``x``'s gradient.

A view op (indexing with slices, reshape/view, permute/transpose, expand, split, ...) returns a tensor
whose array is a NumPy view into its input's memory. Made while grad mode is on, the view remembers its
*base* (the tensor at the root of a chain of views, ``view._base``), as PyTorch's views do. Two things
then need the base:

* **Writing through a view** (``v = h[:, 0]; v.mul_(2)``) changes the base's values, so the base's history
  must change too: the base gets a new ``grad_fn``, :class:`WriteRegion`, whose backward routes the part of
  the gradient that falls on the written region into the in-place op's graph, and the rest to the base's
  old history. The view's own ``grad_fn`` becomes a :class:`ReadRegion` of the new base.
* **A view whose base changed since it was made** (``v = h[0]; h.mul_(2); v.sum()``) has a stale
  ``grad_fn``: before the view is used in a new op (or backward starts from it), :func:`refresh` makes it
  a :class:`ReadRegion` of the base as the base is now.

Where the view lies inside the base is found from memory, not from the op that made it: the *region* is,
for every element of the view, its flat (C-order) position in the base. One rule covers every view op.
"""
import numpy as np

from . import version
from .function import Function


def region(base, view):
    """Flat C-order positions in ``base`` of every element of ``view``, an ndarray of ``view``'s shape.

    ``view`` is an ndarray whose memory lies inside ``base``'s. Byte offsets are computed from data
    pointers and strides, then mapped to positions: directly when ``base`` is C-contiguous, by a search
    through ``base``'s sorted offsets otherwise."""
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    offsets = np.full(view.shape, start, dtype=np.int64)               # view.shape: bytes from base[0...]
    for axis, (n, stride) in enumerate(zip(view.shape, view.strides)):
        offsets += (np.arange(n, dtype=np.int64) * stride).reshape((n,) + (1,) * (view.ndim - axis - 1))
    if base.flags.c_contiguous:
        return offsets // base.itemsize
    base_offsets = np.zeros(base.shape, dtype=np.int64)                # base.shape: bytes from base[0...]
    for axis, (n, stride) in enumerate(zip(base.shape, base.strides)):
        base_offsets += (np.arange(n, dtype=np.int64) * stride).reshape((n,) + (1,) * (base.ndim - axis - 1))
    flat = base_offsets.reshape(-1)
    order = np.argsort(flat, kind="stable")
    return order[np.searchsorted(flat[order], offsets)]


def overlaps(array):
    """Whether several elements of ``array`` share memory (an expanded tensor: a stride of 0)."""
    return any(s == 0 and n > 1 for n, s in zip(array.shape, array.strides))


class ReadRegion(Function):
    """A view of ``base``: the elements at ``positions`` (the view's ``region`` in the base).

    Forward returns the view's existing array (no copy). Backward: the base's gradient is zero except
    at ``positions``, which receive the view's gradient (summed where positions repeat, as in an
    expanded view)."""

    @staticmethod
    def forward(ctx, base, view_array, positions):
        ctx.base_shape, ctx.positions = base.shape, positions
        return view_array

    @staticmethod
    def backward(ctx, dview):
        dbase = np.zeros(ctx.base_shape, dtype=dview.dtype)             # base.shape
        flat = dbase.reshape(-1)
        if overlaps(ctx.positions):
            np.add.at(flat, ctx.positions.reshape(-1), dview._data.reshape(-1))
        else:
            flat[ctx.positions] = dview._data
        return dbase, None, None

    @staticmethod
    def graph_backward(ctx, dview):
        from ..ops.shape import IndexAdjoint   # the ops import this module
        n = int(np.prod(ctx.base_shape))
        return IndexAdjoint.apply(dview, (n,), ctx.positions).reshape(ctx.base_shape), None, None


class WriteRegion(Function):
    """``base`` after ``value`` was written into it at ``positions`` (a write through a view).

    Forward returns the base's array, already written (no copy). Backward: the old base's values survive
    everywhere but ``positions``, so it receives the gradient with the region zeroed; ``value`` fills the
    region, so it receives the gradient there."""

    @staticmethod
    def forward(ctx, base, value, base_array, positions):
        ctx.positions = positions
        return base_array

    @staticmethod
    def backward(ctx, dbase):
        g = dbase._data
        dvalue = g.reshape(-1)[ctx.positions] if ctx.needs_input_grad[1] else None   # the view's shape
        dold = None
        if ctx.needs_input_grad[0]:
            dold = g.copy()
            dold.reshape(-1)[ctx.positions] = 0
        return dold, dvalue, None, None

    @staticmethod
    def graph_backward(ctx, dbase):
        from ..ops.inplace import zero_at   # the ops import this module
        from ..ops.shape import Index
        flat = dbase.reshape(-1)
        dvalue = Index.apply(flat, ctx.positions) if ctx.needs_input_grad[1] else None
        dold = zero_at(flat, ctx.positions).reshape(dbase.shape) if ctx.needs_input_grad[0] else None
        return dold, dvalue, None, None


def history(tensor):
    """A stand-in carrying ``tensor``'s place in the graph (its ``grad_fn``, or the leaf itself) and its
    current values, for an op that must see ``tensor`` as it was before an in-place write."""
    if tensor.grad_fn is None:
        return tensor
    from ..tensor import Tensor
    stand_in = Tensor(tensor._data)
    stand_in.grad_fn, stand_in.requires_grad = tensor.grad_fn, True
    return stand_in


def refresh(view):
    """Give ``view`` a ``grad_fn`` that reads its base as the base is now, if the base's memory was
    written since the view's ``grad_fn`` was set (see the module docstring)."""
    now = version.version_of(view._data)
    if now != view._view_version and view._base.requires_grad:
        set_view_history(view)
    view._view_version, view._view_at = now, version.writes[0]


def set_view_history(view):
    """Make ``view.grad_fn`` a :class:`ReadRegion` of its base's current history."""
    base = view._base
    read = ReadRegion.apply(history(base), view._data, region(base._data, view._data))
    view.grad_fn, view.requires_grad = read.grad_fn, True
    view._view_version, view._view_at = version.version_of(view._data), version.writes[0]

