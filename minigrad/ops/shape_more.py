"""More shape ops, each composed of the differentiable ones in ``shape.py`` and ``index.py`` (so their gradients
are those ops' adjoints, and ``create_graph=True`` works through them): atleast_1d/2d/3d, broadcasting
(broadcast_shapes/_tensors/_to), stacking (hstack, vstack/row_stack, dstack, column_stack), splitting
(tensor_split, hsplit/vsplit/dsplit, split_with_sizes, unsafe_split/_chunk), tile, ravel, unflatten, rot90,
diagflat, combinations, resolve_neg, and PyTorch's ``*_copy`` ops (the view op, then a copy).
"""
import itertools
import math
import operator

import numpy as np

from .._checks import takes_tensors
from ..autograd import Function, grad_mode
from ..autograd.function import pytorch_saves, retained_elsewhere
from ..autograd.version import bump_tensor
from ..autograd.views import seen_now
from ..tensor import Tensor
from . import shape as sh
from .dims import normalize_dim
from .layout import clone


# --------------------------------------------------------------------------- atleast_nd
def _tensors_or_one(name, tensors, make):
    """``make`` applied to one tensor (returned alone) or to each of several (a tuple), as ``atleast_*d`` take them."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return make(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tensors[0]
    return tuple(make(t) for t in sh._tensor_list(name, list(tensors)))


def _atleast(t, shapes):
    """``t`` reshaped by ``shapes[t.ndim]`` (a function of its shape) when it has fewer dims than wanted."""
    return sh.reshape(t, shapes[t.ndim](t.shape)) if t.ndim < len(shapes) else t


_1D = [lambda s: (1,)]
_2D = [lambda s: (1, 1), lambda s: (1,) + s]
_3D = [lambda s: (1, 1, 1), lambda s: (1,) + s + (1,), lambda s: s + (1,)]


def atleast_1d(*tensors):
    """Each tensor with at least one dim: a 0-d tensor becomes (1,)."""
    return _tensors_or_one("atleast_1d", tensors, lambda t: _atleast(t, _1D))


def atleast_2d(*tensors):
    """Each tensor with at least two dims: () -> (1, 1), (n,) -> (1, n)."""
    return _tensors_or_one("atleast_2d", tensors, lambda t: _atleast(t, _2D))


def atleast_3d(*tensors):
    """Each tensor with at least three dims: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _tensors_or_one("atleast_3d", tensors, lambda t: _atleast(t, _3D))


# --------------------------------------------------------------------------- broadcasting
def broadcast_shapes(*shapes):
    """The shape all ``shapes`` (tuples, or ints for 1-D shapes) broadcast to, as a tuple."""
    shapes = [(operator.index(s),) if not isinstance(s, (tuple, list)) else tuple(operator.index(n) for n in s)
              for s in shapes]
    for s in shapes:
        if any(n < 0 for n in s):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(s)}: {list(s)}")
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: "
                           f"{', '.join(str(list(s)) for s in shapes)}") from None


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (expanded views; the gradient sums the copies)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tensors[0]
    tensors = sh._tensor_list("broadcast_tensors", list(tensors))
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(sh.expand(t, shape) for t in tensors)


@takes_tensors("input")
def broadcast_to(input, *size):
    """``input`` expanded to ``size`` (-1 keeps a dim): ``expand``. (The sizes as one sequence, or one by one as
    ``Tensor.broadcast_to`` takes them too in PyTorch.)"""
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    return sh.expand(input, size)


# --------------------------------------------------------------------------- stacking
def _stack_list(name, tensors):
    tensors = sh._tensor_list(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    """Join along dim 1 (dim 0 for 1-D tensors), after ``atleast_1d``."""
    tensors = atleast_1d(_stack_list("hstack", tensors))
    return sh.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0 after ``atleast_2d`` (1-D tensors become rows)."""
    return sh.cat(atleast_2d(_stack_list("vstack", tensors)), 0)


row_stack = vstack


def dstack(tensors):
    """Join along dim 2 after ``atleast_3d``."""
    return sh.cat(atleast_3d(_stack_list("dstack", tensors)), 2)


def column_stack(tensors):
    """0-d and 1-d tensors become columns (n, 1), then all are joined along dim 1."""
    tensors = _stack_list("column_stack", tensors)
    return sh.cat([sh.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors], 1)


# --------------------------------------------------------------------------- splitting
def _split_points(name, indices_or_sections):
    """An int (a number of sections) or a list of split points, from an int, a sequence or an integer tensor."""
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype.kind not in "iu" or spec.ndim > 1:
            raise RuntimeError(f"{name} expected tensor_indices_or_sections to have int64 dtype and be 0-D or 1-D, "
                               f"but got a {spec.ndim}-D tensor of {spec.dtype}")
        spec = int(spec._data) if spec.ndim == 0 else [int(i) for i in spec._data]
    if isinstance(spec, (tuple, list)):
        return [operator.index(i) for i in spec]
    return operator.index(spec)


def _pieces(input, axis, points):
    """The pieces of ``input`` between the split ``points`` along ``axis`` (points clipped to [0, size], as
    Python slices are; a point before the previous one gives an empty piece)."""
    size = input.shape[axis]
    bounds = [0] + [min(max(p if p >= 0 else p + size, 0), size) for p in points] + [size]
    return tuple(sh._slice_along(input, axis, a, max(a, b)) for a, b in zip(bounds[:-1], bounds[1:]))


@takes_tensors("input")
def tensor_split(input, indices_or_sections, dim=0):
    """``input`` cut along ``dim`` into ``n`` nearly equal pieces (the first ``size % n`` one longer) or at the
    given indices."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    axis = normalize_dim(dim, input.ndim)
    spec = _split_points("tensor_split", indices_or_sections)
    if isinstance(spec, list):
        return _pieces(input, axis, spec)
    if spec <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
    size = input.shape[axis]
    sizes = [size // spec + (i < size % spec) for i in range(spec)]
    return sh._split_sizes(input, axis, sizes, op=None)     # views PyTorch lets be written, as from indices


def _directional_split(name, input, spec, axis, min_dims):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {input.ndim} dimensions!")
    spec = _split_points(name, spec)
    if not isinstance(spec, list):
        if spec == 0 or input.shape[axis] % spec:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {axis}, but the size of the "
                               f"dimension {input.shape[axis]} is not divisible by the split_size {spec}!")
    return tensor_split(input, spec, axis)


def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor); a number of sections must divide the size."""
    axis = 0 if isinstance(input, Tensor) and input.ndim == 1 else 1
    return _directional_split("hsplit", input, indices_or_sections, axis, 1)


def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims; a number of sections must divide the size."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims; a number of sections must divide the size."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


@takes_tensors("input")
def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes (summing to the dim's size) along ``dim``."""
    return sh.split(input, list(split_sizes), dim)


def unsafe_split(tensor, split_size_or_sections, dim=0):
    """``split`` whose pieces may be written in place (PyTorch's unsafe_split; here they stay views, recorded)."""
    return sh.split_views(tensor, split_size_or_sections, dim, guarded=False)


def _unsafe_split_with_sizes(input, split_sizes, dim, position):
    if not isinstance(split_sizes, (tuple, list)):
        raise TypeError(f"unsafe_split_with_sizes(): argument 'split_sizes' (position {position}) must be tuple of "
                        f"ints, not {type(split_sizes).__name__}")
    return tuple(sh.split_views(input, list(split_sizes), dim, guarded=False))


@takes_tensors("input")
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` whose pieces may be written in place (PyTorch's unsafe form; here they stay views,
    recorded)."""
    return _unsafe_split_with_sizes(input, split_sizes, dim, 2)


def unsafe_split_with_sizes_method(self, split_sizes, dim=0):
    """``Tensor.unsafe_split_with_sizes``."""
    return _unsafe_split_with_sizes(self, split_sizes, dim, 1)


unsafe_split_with_sizes_method.__name__ = unsafe_split_with_sizes_method.__qualname__ = "unsafe_split_with_sizes"


@takes_tensors("input")
def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose pieces may be written in place (PyTorch's unsafe_chunk; here they stay views, recorded)."""
    return sh.chunk_views(input, chunks, dim, guarded=False)


# --------------------------------------------------------------------------- tile, ravel, unflatten
@takes_tensors("input")
def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; fewer ``dims`` than dims are padded with leading 1s."""
    dims = sh._sizes((dims,))
    return sh.repeat(input, (1,) * (input.ndim - len(dims)) + dims)


@takes_tensors("input")
def ravel(input):
    """The elements as one dim, in C order."""
    return sh.reshape(input, -1)


@takes_tensors("input")
def unflatten(input, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (whose product is its size; one may be -1)."""
    if input.ndim == 0:
        raise RuntimeError("unflatten: Dimension specified as 0 but tensor has no dimensions")
    axis = normalize_dim(dim, input.ndim)
    sizes = sh._sizes((sizes,))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[axis]
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        inferred = size // known if known else 0
        sizes = tuple(inferred if s == -1 else s for s in sizes)
    if math.prod(sizes) != size:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({size}) in the input tensor")
    return sh.reshape(input, input.shape[:axis] + sizes + input.shape[axis + 1:])


# --------------------------------------------------------------------------- rot90, diagflat
@takes_tensors("input")
def rot90(input, k=1, dims=(0, 1)):
    """Rotation by ``k`` quarter turns in the plane of ``dims``, from the first towards the second:
    k = 1 is ``flip(dims[1])`` then swapping the two dims."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (normalize_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = operator.index(k) % 4
    if k == 1:
        return sh.transpose(sh.flip(input, [d1]), d0, d1)
    if k == 2:
        return sh.flip(input, [d0, d1])
    if k == 3:
        return sh.transpose(sh.flip(input, [d0]), d0, d1)
    return clone(input)


@takes_tensors("input")
def diagflat(input, offset=0):
    """The square matrix with the flattened ``input`` on diagonal ``offset``."""
    return sh.diag(sh.reshape(input, -1), offset)


# --------------------------------------------------------------------------- combinations
@takes_tensors("input")
@pytorch_saves("input")
def combinations(input, r=2, with_replacement=False):
    """The ``r``-element combinations of the 1-D ``input``'s elements as rows (count, r), in lexicographic order
    of positions (itertools' order); with repeats allowed if ``with_replacement``."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    r = operator.index(r)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor(np.empty(0, input.dtype))
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    positions = np.array(list(choose(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)  # (count, r)
    return sh.index(input, Tensor(positions))


def _chunk_cat(tensors, dim, num_chunks):
    """Each tensor cut into ``num_chunks`` chunks along ``dim`` (zero-padded to a multiple of it), each chunk
    flattened from ``dim`` on, and chunk k of every tensor joined: (*leading dims, num_chunks, total)."""
    tensors = sh._tensor_list("_chunk_cat", list(tensors))
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if num_chunks < 1:
        raise RuntimeError(f"_chunk_cat expects positive num_chunks, got {num_chunks}")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
    if any(t.numel() == 0 for t in tensors):
        raise RuntimeError("_chunk_cat expects non-empty tensor")
    same_ndim = all(t.ndim == tensors[0].ndim for t in tensors)
    if dim < 0 and not same_ndim:
        raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have different ndims")
    d = normalize_dim(dim, tensors[0].ndim) if same_ndim else dim
    if any(d >= t.ndim for t in tensors):
        raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    lead = tensors[0].shape[:d]
    if any(t.shape[:d] != lead for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
    pieces = []
    for t in tensors:
        size = t.shape[d]
        padding = -size % num_chunks
        if padding:
            zeros = Tensor(np.zeros(t.shape[:d] + (padding,) + t.shape[d + 1:], t.dtype))
            t = sh.cat([t, zeros], d)
        pieces.append(sh.reshape(t, lead + (num_chunks, -1)))             # (*lead, num_chunks, chunk numel)
    return sh.cat(pieces, d + 1)


@takes_tensors("input")
def resolve_neg(input):
    """``input`` itself: minigrad has no lazily negated tensors."""
    return input


# --------------------------------------------------------------------------- in-place shape changes
# what a tensor keeps when it changes shape (its gradient, hooks, weak references and the attributes set on it)
_OWN_SLOTS = ("_grad", "_hooks", "_post_accumulate_hooks", "__weakref__", "__dict__")


def _become(self, view):
    """``self`` takes the memory and autograd state (history, view links) of ``view``, a view of ``self`` or of
    its base, keeping its own ``.grad`` and hooks. A tensor that was not a view does not become one (as in
    PyTorch, ``x.t_()`` changes ``x``'s shape, not what ``x`` is)."""
    was_view = self._base is not None
    for slot in Tensor.__slots__:           # (a subclass such as Parameter adds no slots of its own)
        if slot in _OWN_SLOTS:
            continue
        if hasattr(view, slot):
            setattr(self, slot, getattr(view, slot))
        elif hasattr(self, slot):
            delattr(self, slot)
    if not was_view:
        self._base = None


def _reshaped_in_place(name, outofplace):
    """``t.squeeze_()`` and the like: ``t`` becomes ``outofplace(t)``, a view of its own memory, so nothing is
    copied and no value changes; its history (when recorded) is that view's."""
    def op(self, *args, **kwargs):
        from .inplace import _records, check_leaf
        recording = _records(self, ())
        if recording:
            check_leaf(self)
        view = outofplace(self, *args, **kwargs)    # checks the arguments
        bump_tensor(self)     # PyTorch counts it as a write: what saved self, and views of it made before, see it
        if not recording:     # as in PyTorch only the shape and strides change, the autograd state stays
            before, self._data = self._data.shape, view._data
            if self._base is None and self._grad_fn is not None and before != view._data.shape:
                _note_stale_shape(self, name, before)
            return self
        if (self._grad_fn is not None and self._grad_fn.retained is not None and view._grad_fn is not None
                and view._grad_fn is not self._grad_fn):
            view._grad_fn.retained = retained_elsewhere   # as in PyTorch, retain_grad's hook stays on the old
        _become(self, view)                                # history (.grad keeps the old shape); retains_grad stays
        if self._base is not None:
            seen_now(self)    # its history is the one just made, not stale
        return self
    op.__name__ = name
    op.__doc__ = f"In-place ``{name[:-1]}``: this tensor's shape changes; returns ``self``."
    return op


class StaleShape(Function):
    """Stands for the history of a tensor whose shape changed in place under ``no_grad`` (``y.t_()``) after an op
    made it: the history still expects the old shape. As in PyTorch, a gradient that does not expand to the old shape
    is an error, and one that does is summed to it; the shape changed back, it is the plain history again.
    ``retain_grad()`` keeps the gradient of the history below (of the old shape), as PyTorch's."""

    retained_below = True

    @staticmethod
    def forward(ctx, old, data, op):
        ctx.shape, ctx.op = old.shape, op
        return data

    @staticmethod
    def backward(ctx, dout):
        StaleShape.check(ctx, dout.shape)
        return dout._data, None, None   # the engine sums it to the old shape (PyTorch sums a gradient it can expand to)

    @staticmethod
    def graph_backward(ctx, dout):
        StaleShape.check(ctx, dout.shape)
        return dout, None, None

    @staticmethod
    def check(ctx, shape):
        try:
            fits = np.broadcast_shapes(ctx.shape, tuple(shape)) == tuple(shape)
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"a gradient of shape {list(shape)} reached {ctx.next_edges[0].name()}, which "
                               f"expects shape compatible with {list(ctx.shape)}: the tensor's shape was changed in "
                               f"place ({ctx.op}) under no_grad after it was computed")


def _note_stale_shape(t, op, before):
    """``t`` (not a view, with a history) has a new shape, changed from ``before`` without recording: its history
    becomes a ``StaleShape`` of the one it had, or that history again if the shape is back to its old one."""
    node = t._grad_fn
    if node.fn is StaleShape:
        if node.shape == t._data.shape:
            t._grad_fn = node.next_edges[0]
        return
    old = Tensor(np.broadcast_to(np.zeros((), t._data.dtype), before))    # the old shape at the old history
    old._grad_fn, old._requires_grad = node, True
    with grad_mode.enable_grad():
        t._grad_fn = StaleShape.apply(old, t._data, op)._grad_fn
    if node.retained is not None:            # retain_grad() before the change: the gradient is still kept below (of the
        t._grad_fn.retained = retained_elsewhere   # old shape), and the tensor still retains it, as in PyTorch


squeeze_ = _reshaped_in_place("squeeze_", sh.squeeze)
unsqueeze_ = _reshaped_in_place("unsqueeze_", sh.unsqueeze)
transpose_ = _reshaped_in_place("transpose_", sh.transpose)


def _t_checked(input):
    if input.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return sh.transpose(input, 0, -1)      # (1-d and 0-d too: a new view, as PyTorch's t_ records a node)


t_ = _reshaped_in_place("t_", _t_checked)
as_strided_ = _reshaped_in_place("as_strided_", sh.as_strided)


# --------------------------------------------------------------------------- the *_copy ops: the op, then a copy
def _copied(name, op, doc):
    def copy_op(input, *args, **kwargs):
        out = op(input, *args, **kwargs)
        return tuple(clone(o) for o in out) if isinstance(out, (tuple, list)) else clone(out)
    copy_op.__name__, copy_op.__doc__ = name, doc
    return takes_tensors("input")(copy_op)


def _expand(input, size, *, implicit=False):
    return sh.expand(input, size)


def _narrow(input, dim, start, length):
    if input.ndim and operator.index(dim) >= input.ndim:   # PyTorch's narrow_copy checks this bound first
        raise RuntimeError(f"narrow_copy(): Expected dim < {input.ndim}, but got dim = {dim}")
    return sh.narrow(input, dim, start, length)


alias_copy = _copied("alias_copy", lambda input: input, "A copy of ``input``.")
diagonal_copy = _copied("diagonal_copy", sh.diagonal, "A copy of ``diagonal(input, offset, dim1, dim2)``.")
expand_copy = _copied("expand_copy", _expand, "A copy of ``input.expand(size)``.")
narrow_copy = _copied("narrow_copy", _narrow, "A copy of ``narrow(input, dim, start, length)``.")
permute_copy = _copied("permute_copy", sh.permute, "A copy of ``permute(input, dims)``.")
squeeze_copy = _copied("squeeze_copy", sh.squeeze, "A copy of ``squeeze(input, dim)``.")
t_copy = _copied("t_copy", _t_checked, "A copy of ``t(input)``.")
transpose_copy = _copied("transpose_copy", sh.transpose, "A copy of ``transpose(input, dim0, dim1)``.")
unbind_copy = _copied("unbind_copy", sh.unbind, "Copies of ``unbind(input, dim)``.")
unfold_copy = _copied("unfold_copy", sh.unfold, "A copy of ``input.unfold(dimension, size, step)``.")
unsqueeze_copy = _copied("unsqueeze_copy", sh.unsqueeze, "A copy of ``unsqueeze(input, dim)``.")
view_copy = _copied("view_copy", sh.reshape, "A copy of ``input.view(shape)``.")
split_with_sizes_copy = _copied("split_with_sizes_copy", split_with_sizes,
                                "Copies of ``split_with_sizes(input, split_sizes, dim)``.")

METHODS = ["tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split", "unsafe_chunk",
           "tile", "ravel", "unflatten", "rot90", "diagflat", "resolve_neg", "broadcast_to", "narrow_copy", "squeeze_",
           "unsqueeze_", "transpose_", "t_", "as_strided_"]
Tensor.unsafe_split_with_sizes = unsafe_split_with_sizes_method     # (its argument error counts from self)
