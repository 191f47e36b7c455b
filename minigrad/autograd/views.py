"""Views as PyTorch has them: how a write into ``x[0]`` (or ``x.T``, ``x.view(-1)``) reaches ``x``'s gradient.

A view op (indexing with slices, reshape/view, permute/transpose, expand, split, select, diagonal, ...) returns a
**new** tensor whose array is a NumPy view into its input's memory (never the input object itself, even for a
view to the same shape). The view remembers its *base*, the tensor at the root of a chain of views
(``view._base``), whatever the grad mode, and how it was made (``_view_kind``): normally, under ``no_grad``
or ``inference_mode``, or as one of several outputs (``unbind``/``split``/``chunk``). Base and views share one
version counter, because it belongs to the memory (``version.py``).

* **Writing through a view** (``v = h[:, 0]; v.mul_(2)``) changes the base's values, so the base's history
  must change too: the base gets a new ``grad_fn``, :class:`WriteRegion` (PyTorch's ``CopySlices``), whose
  backward routes the part of the gradient that falls on the written region into the in-place op's graph, and
  the rest to the base's old history. The view's own ``grad_fn`` becomes a :class:`ReadRegion` of the new base
  (PyTorch's ``AsStridedBackward``).
* **A view whose base (or another view of it) was written since** (``v = h[0]; h.mul_(2); v.sum()``) has a stale
  ``grad_fn``: reading ``grad_fn`` (as every op does) first makes it a :class:`ReadRegion` of the base as the base
  is now (:func:`sync`). That is also how a view made before its base required grad (``v = x.view(4);
  x.mul_(w)``) comes to require grad.
* **What PyTorch refuses** (:func:`check_rebase`): writing in place, with grad recorded, into one of several
  outputs of one op, or into a view made under ``no_grad``/``inference_mode``; and using such a view after its
  base was written. Its ``requires_grad`` is its base's, as in PyTorch.

Where the view lies inside the base is found from memory, not from the op that made it: the *region* is,
for every element of the view, its flat (C-order) position in the base. One rule covers every view op.
"""
import numpy as np

from . import function, version
from .function import Function


def byte_offsets(array, start=0):
    """The byte offset of every element of ``array`` from ``start`` (an int64 array of ``array``'s shape)."""
    offsets = np.full(array.shape, start, dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(array.shape, array.strides)):
        offsets += (np.arange(n, dtype=np.int64) * stride).reshape((n,) + (1,) * (array.ndim - axis - 1))
    return offsets


def region(base, view):
    """Flat C-order positions in ``base`` of every element of ``view``, an ndarray of ``view``'s shape.

    ``view`` is an ndarray whose memory lies inside ``base``'s. Byte offsets are computed from data
    pointers and strides, then mapped to positions: directly when ``base`` is C-contiguous, by a search
    through ``base``'s sorted offsets otherwise."""
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    offsets = byte_offsets(view, start)                                # view.shape: bytes from base[0...]
    if base.flags.c_contiguous:
        return offsets // base.itemsize
    flat = byte_offsets(base).reshape(-1)                              # base's elements: bytes from base[0...]
    order = np.argsort(flat, kind="stable")
    return order[np.searchsorted(flat[order], offsets)]


def positions_in(base, view):
    """Like ``region``, but ``view`` may also read memory that is not one of ``base``'s elements (an ``as_strided``
    view of the storage): those elements get position -1."""
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    offsets = byte_offsets(view, start)                                # view.shape: bytes from base[0...]
    flat = byte_offsets(base).reshape(-1)                              # base's elements: bytes from base[0...]
    order = np.argsort(flat, kind="stable")
    found = np.clip(np.searchsorted(flat[order], offsets), 0, max(flat.size - 1, 0))
    if flat.size == 0:
        return np.full(view.shape, -1, dtype=np.int64)
    return np.where(flat[order][found] == offsets, order[found], -1)


def overlaps(array):
    """Whether several elements of ``array`` share memory (an expanded tensor: a stride of 0; an empty array has no
    elements to share it)."""
    return array.size > 0 and any(s == 0 and n > 1 for n, s in zip(array.shape, array.strides))


def repeats_memory(array):
    """Whether two elements of ``array`` share memory: ``overlaps`` (a stride 0), or strides that make windows
    overlap (``unfold``, ``as_strided``). Sufficient test first: with the dims sorted by stride, each stride at least
    spans the dims below it; else the elements' byte offsets are compared."""
    if array.size <= 1 or array.flags.c_contiguous or array.flags.f_contiguous:   # (the common case: no look)
        return False
    dims = sorted((abs(s), n) for n, s in zip(array.shape, array.strides) if n > 1)
    extent = array.itemsize                      # bytes spanned by the dims of smaller stride
    for stride, n in dims:
        if stride < extent:
            break
        extent += stride * (n - 1)
    else:
        return False
    return np.unique(byte_offsets(array)).size < array.size


class ReadRegion(Function):
    """A view of ``base``: the elements at ``positions`` (the view's ``region`` in the base).

    Forward returns the view's existing array (no copy). Backward: the base's gradient is zero except
    at ``positions``, which receive the view's gradient, summed where positions repeat (an expanded view,
    overlapping windows)."""

    @staticmethod
    def forward(ctx, base, view_array, positions):
        ctx.base_shape, ctx.positions = base.shape, positions
        ctx.repeats = repeats_memory(view_array)   # (unfold's windows, not only expanded dims)
        return view_array

    @staticmethod
    def backward(ctx, dview):
        dbase = np.zeros(ctx.base_shape, dtype=dview.dtype)             # base.shape
        flat = dbase.reshape(-1)
        if ctx.repeats:
            np.add.at(flat, ctx.positions.reshape(-1), dview._data.reshape(-1))
        else:
            flat[ctx.positions] = dview._data
        return dbase, None, None

    @staticmethod
    def graph_backward(ctx, dview):
        from ..ops.shape import IndexAdjoint   # the ops import this module
        from ..tensor import Tensor
        if dview._data.size == 0:              # an empty view: zeros with no graph (PyTorch's as_strided_backward)
            return Tensor(np.zeros(ctx.base_shape, dview._data.dtype)), None, None
        n = int(np.prod(ctx.base_shape))
        return IndexAdjoint.apply(dview, (n,), ctx.positions).reshape(ctx.base_shape), None, None


class WriteRegion(Function):
    """``base`` after ``value`` was written into it at ``positions`` (a write through a view).

    Forward returns the base's array, already written (no copy). Backward: the old base's values survive
    everywhere but ``positions``, so it receives the gradient with the region zeroed; ``value`` fills the
    region, so it receives the gradient there."""

    @staticmethod
    def forward(ctx, base, value, base_array, positions, shared=False):
        ctx.positions, ctx.shared, ctx.base_shared = positions, shared, overlaps(base_array)
        return base_array

    @staticmethod
    def backward(ctx, dbase):
        _refuse_shared(ctx)
        g = dbase._data
        dvalue = g.reshape(-1)[ctx.positions] if ctx.needs_input_grad[1] else None   # the view's shape
        dold = None
        if ctx.needs_input_grad[0]:
            dold = g.copy()
            dold.reshape(-1)[ctx.positions] = 0
        return dold, dvalue, None, None, None

    @staticmethod
    def graph_backward(ctx, dbase):
        _refuse_shared(ctx)
        from ..ops.inplace import zero_at   # the ops import this module
        from ..ops.shape import Index
        flat = dbase.reshape(-1)
        dvalue = Index.apply(flat, ctx.positions) if ctx.needs_input_grad[1] else None
        dold = zero_at(flat, ctx.positions).reshape(dbase.shape) if ctx.needs_input_grad[0] else None
        return dold, dvalue, None, None, None


def _refuse_shared(ctx):
    """A write through a view whose elements share memory (``fill_`` of an expanded tensor) has no gradient to
    give back per element to the old values: PyTorch's backward raises this when they need one (their base requires
    grad), and so does minigrad's; the written value's gradient alone is read off the positions. A base whose own
    elements share memory is refused in any case (``refuse_shared_base``)."""
    refuse_shared_base(ctx.base_shared or (ctx.shared and ctx.needs_input_grad[0]))


def refuse_shared_base(shared):
    """PyTorch's backward of a write through a view (CopySlices) first copies the gradient into the base's layout;
    when the base's own elements share memory (an expanded tensor that is no view, as ``detach()`` makes one) that
    copy raises, whichever gradients are needed."""
    if shared:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


def history(tensor):
    """A stand-in carrying ``tensor``'s place in the graph (its ``grad_fn``, or the leaf itself) and its
    current values, for an op that must see ``tensor`` as it was before an in-place write."""
    if tensor.grad_fn is None:
        return tensor
    from ..tensor import Tensor
    stand_in = Tensor(tensor._data)
    stand_in._grad_fn, stand_in._requires_grad = tensor.grad_fn, True
    return stand_in


# --------------------------------------------------------------------------- how a view was made
def mark_view(out, source):
    """Record that ``out`` (a new tensor) views ``source``'s memory: its base, the memory's version now, and how
    it was made (under ``no_grad``/``inference_mode``, or inherited from a view ``source`` that was)."""
    from . import grad_mode
    base = source if source._base is None else source._base
    out._base = base
    counter = getattr(source, "_own_counter", None)
    if counter is not None:                      # a view of .data shares its counter
        out._own_counter = counter
        out._view_version = counter[0]
    out._view_at = version.writes[0]
    modes = grad_mode._state
    if modes.inference:
        kind = ("inference",)
    elif not modes.enabled:
        kind = ("no_grad",)
    else:
        kind = source._view_kind if source._base is not None else None
    out._view_kind = kind


def mark_multi_output(pieces, op):
    """``pieces`` are the outputs of one op (``unbind``, ``split``, ``chunk``): PyTorch forbids writing into them
    in place with grad recorded (the op's backward could not see the write). Returns ``pieces``."""
    for i, piece in enumerate(pieces):
        if piece._base is not None and piece._view_kind is None:
            piece._view_kind = ("multi_output", op, i)
    return pieces


_NO_GRAD_HINT = ("Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                 "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
                 "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def check_rebase(view, indirect):
    """PyTorch's errors for a view whose history cannot follow a write: written in place with grad recorded
    (``indirect=False``), or used after its base or another view of it was (``indirect=True``)."""
    kind = view._view_kind
    if kind is None:
        return
    what = ("its base or another view of its base has been modified inplace" if indirect
            else "is being modified inplace")
    if kind[0] == "multi_output":
        raise RuntimeError(f"Output {kind[2]} of {kind[1]} is a view and {what}. This view is the output of a "
                           "function that returns multiple views. Such functions do not allow the output views to "
                           "be modified inplace. You should replace the inplace operation by an out-of-place one.")
    mode = "inference mode" if kind[0] == "inference" else "no_grad mode"
    raise RuntimeError(f"A view was created in {mode} and {what} with grad mode enabled. {_NO_GRAD_HINT}")


# --------------------------------------------------------------------------- a view's history
def sync(view):
    """Bring ``view.grad_fn`` up to date (``Tensor.grad_fn`` calls this when anything was written in place since
    the view's last check): if the view's memory was written since its ``grad_fn`` was set, and its base takes
    part in autograd, the view becomes a :class:`ReadRegion` of the base as the base is now."""
    if not _written_since(view):
        view._view_at = version.writes[0]
        return
    if view._grad_fn is None and not view._base._requires_grad:
        return          # nothing to differentiate yet; looked at again next time (the base may come to need it)
    check_rebase(view, indirect=True)
    set_view_history(view)


def _written_since(view):
    """Whether the view's memory was written since its grad_fn was last set (``_view_at``, a global stamp), or,
    for a view of ``.data``, since its own counter was last read."""
    counter = getattr(view, "_own_counter", None)
    if counter is not None:
        return counter[0] != view._view_version
    return version.writes_since(view._data, view._view_at) > 0


def seen_now(view):
    """Note that ``view``'s grad_fn is up to date with every write so far."""
    view._view_at = version.writes[0]
    counter = getattr(view, "_own_counter", None)
    if counter is not None:
        view._view_version = counter[0]


def set_view_history(view):
    """Make ``view``'s ``grad_fn`` a :class:`ReadRegion` of its base's current history (recorded whatever the
    grad mode, as PyTorch regenerates a view's ``grad_fn`` when it is read)."""
    from . import grad_mode
    base = view._base
    dead_end = not base._requires_grad    # the view had a history, its base has none now (detach_)
    source = history(base) if not dead_end else _stand_in(base)
    with grad_mode.enable_grad():
        read = ReadRegion.apply(source, view._data, region(base._data, view._data))
    if dead_end:
        read._grad_fn.next_edges = (None, None, None)     # a node leading nowhere, as PyTorch's
    move_retained(view._grad_fn, read._grad_fn)
    view._grad_fn, view._requires_grad = read._grad_fn, True
    seen_now(view)


def _stand_in(base):
    """A tensor over ``base``'s memory that requires grad, so that a node can be recorded on it."""
    from ..tensor import Tensor
    stand_in = Tensor(base._data)
    stand_in._requires_grad = True
    return stand_in


def base_region_history(view):
    """A fresh :class:`ReadRegion` node of ``view``'s base as it is now (its history up to this point): where an
    in-place op on the view takes the view's old values from, as PyTorch's ``CopySlices`` routes them straight into
    the base's history, passing over the view's own node and the hooks registered on it."""
    from . import grad_mode
    base = view._base
    with grad_mode.enable_grad():
        return ReadRegion.apply(history(base), view._data, region(base._data, view._data))._grad_fn


def move_retained(old, new):
    """``retain_grad()`` follows a tensor to its new ``grad_fn`` after an in-place write (PyTorch moves the
    retains-grad hook): the gradient kept is that of the tensor's current values."""
    if old is not None and old.retained is not None and new is not None:
        new.retained, old.retained = old.retained, None


function.mark_view = mark_view
