"""Shape and movement ops: reshape/view, permute/transpose, (un)squeeze, expand, indexing, repeat,
cat/stack, split/chunk, tril/triu, unfold (sliding windows), meshgrid/cartesian_prod.

Most are views in NumPy; their backward moves the gradient back the same way
(reshape back, inverse permutation, scatter-add for indexing).

All of them are linear, so their ``graph_backward`` (create_graph=True) is the adjoint op applied to the
Tensor dout, and each adjoint's own adjoint is the op again: ``Index`` and ``IndexAdjoint``, ``Diagonal``
and ``DiagEmbed``, ``Unfold`` and ``UnfoldAdjoint``, ``Cat`` and slicing, ``Repeat`` and a sum; ``Roll`` and
``Flip`` undo themselves.
Gradients are then differentiable to any order.
"""
import math
import operator
import warnings

import numpy as np

from .._checks import int_arg, takes_tensors, type_name
from ..autograd import Function, grad_mode
from ..autograd.views import mark_multi_output
from .. import dtypes as _dtypes
from ..dtypes import result_type
from ..tensor import Tensor
from .dims import normalize_dim
from .elementwise import masked_fill
from .layout import row_major


def _sizes(sizes, keyword=None, fname=None, name=None):
    """Accept ``f(2, 3)`` and ``f((2, 3))`` as PyTorch does, or the keyword form ``f(name=(2, 3))`` (``keyword``);
    sizes must be integers (2.0 is a TypeError)."""
    if keyword is not None:
        if sizes:
            raise TypeError(f"{fname}() got multiple values for argument '{name}'")
        sizes = (keyword,)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return tuple(operator.index(s) for s in sizes)


class Reshape(Function):
    """``a`` in ``shape``: NumPy's view when the memory allows it (else its copy), with PyTorch's strides."""
    view = True

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.shape = x.shape
        out = x.reshape(shape)
        if 1 in out.shape or not out.size:      # only there may NumPy choose other steps than PyTorch
            steps = view_steps(x.shape, [s // x.itemsize for s in x.strides], out.shape)
            if steps is not None and (not out.size or np.may_share_memory(out, x)):
                out = _dtypes.as_strided(out, out.shape, [s * x.itemsize for s in steps], writeable=out.flags.writeable)
        return out

    @staticmethod
    def backward(ctx, dout):
        return dout._data.reshape(ctx.shape), None

    @staticmethod
    def graph_backward(ctx, dout):
        return dout.reshape(ctx.shape), None


def view_steps(shape, steps, new_shape):
    """The steps (strides in elements) PyTorch gives a view in ``new_shape`` of a tensor of ``shape`` and ``steps``
    (its ``computeStride``), or None where no view exists. They are fixed by the memory except along size-1 dims
    (and for empty tensors): there PyTorch's choice shows in ``stride()`` and in its checks of in-place writes,
    which compare layouts. Walking the dims from the last, each chunk of dims that is contiguous in memory is
    matched by view dims of the same element count, stepping by its base step."""
    new_shape = tuple(new_shape)
    if not shape:                                       # a 0-d tensor: every step 1
        return (1,) * len(new_shape)
    if 0 in shape:                                      # no elements: the same steps in the same shape, else dense
        if tuple(shape) == new_shape:
            return tuple(steps)
        out, step = [0] * len(new_shape), 1
        for d in range(len(new_shape) - 1, -1, -1):
            out[d] = step
            step *= max(new_shape[d], 1)
        return tuple(out)
    out = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = steps[-1]                                    # the step of the current chunk's last dim
    chunk = viewed = 1                                  # elements in the chunk, and in the view dims matched to it
    for d in range(len(shape) - 1, -1, -1):
        chunk *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and steps[d - 1] != chunk * base):     # the chunk ends at dim d
            while view_d >= 0 and (viewed < chunk or new_shape[view_d] == 1):
                out[view_d] = viewed * base
                viewed *= new_shape[view_d]
                view_d -= 1
            if viewed != chunk:
                return None
            if d > 0:
                base, chunk, viewed = steps[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None


class ResultReshape(Reshape):
    """``Reshape`` of an op's own new result into the shape the op returns (a 0-d input's one-element result to
    0-d): no view, as the op's output in PyTorch is a tensor of its own (a view would refuse ``detach_()`` and
    report ``_is_view()``)."""
    view = False


def result_reshape(result, shape):
    """``result`` (a tensor an op has just made) in ``shape``, as the op's own output rather than a view of it."""
    return ResultReshape.apply(result, tuple(shape))


def _check_reshape(shape, n):
    """PyTorch's errors for a target ``shape`` (at most one -1) that cannot hold ``n`` elements."""
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape and known == 0 and n == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified "
                           f"dimension size -1 can be any value and is ambiguous")
    if (-1 not in shape and known != n) or (-1 in shape and (known == 0 or n % known)):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")


@takes_tensors("input")
def reshape(input, *sizes, shape=None):
    """``input`` in ``shape``: a view when the memory allows it (to the same shape too: a new tensor), else a copy."""
    shape = _sizes(sizes, shape, "reshape", "shape")
    _check_reshape(shape, input._data.size)
    return Reshape.apply(input, shape)


@takes_tensors("input")
def view(input, *shape, size=None):
    """``input`` in ``shape`` sharing its memory, or PyTorch's error when the strides do not allow it (use
    ``reshape``). ``view(dtype)`` reinterprets the bytes as another dtype (not differentiable)."""
    if len(shape) == 1 and (isinstance(shape[0], np.dtype) or
                            (isinstance(shape[0], type) and issubclass(shape[0], np.generic))):
        return _view_dtype(input, shape[0])
    shape = _sizes(shape, size, "view", "size")
    _check_reshape(shape, input._data.size)
    probe = input._data.view()
    try:
        probe.shape = shape                       # NumPy refuses exactly when no strides fit without a copy
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return Reshape.apply(input, shape)


def _view_dtype(input, dtype):
    """``x.view(dtype)``: the same bytes read as ``dtype`` (the last dim rescaled by the itemsizes), a view."""
    dtype = np.dtype(dtype)
    if dtype == input._data.dtype:
        return Reshape.apply(input, input.shape)
    old, new = input._data.itemsize, dtype.itemsize
    if new != old:
        if input.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {input.dtype} as {dtype} (different element sizes)")
        if input._data.strides[-1] != old and input.shape[-1] != 1:
            raise RuntimeError("self.stride(-1) must be 1 to view " f"{input.dtype} as {dtype} (different element "
                               "sizes), but got " f"{input._data.strides[-1] // old}")
        if new > old and (input.shape[-1] * old) % new:
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} to view {input.dtype} as {dtype} "
                               f"(different element sizes), but got {input.shape[-1]}")
    out = Tensor(input._data.view(dtype))
    from ..autograd.views import mark_view
    mark_view(out, input)
    return out


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


@takes_tensors("input")
def flatten(input, start_dim=0, end_dim=-1):
    start, end = normalize_dim(start_dim, input.ndim), normalize_dim(end_dim, input.ndim)
    if input.ndim == 0:
        return reshape(input, 1)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 1 or start == end:
        return input     # nothing to merge: PyTorch returns the tensor itself, not a view
    merged = math.prod(input.shape[start:end + 1])   # explicit, not -1: a zero-size tensor has no -1 to infer
    return reshape(input, input.shape[:start] + (merged,) + input.shape[end + 1:])


@takes_tensors("input")
def unsqueeze(input, dim):
    if not -input.ndim - 1 <= dim <= input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim - 1}, {input.ndim}], "
                         f"but got {dim})")
    return Unsqueeze.apply(input, dim % (input.ndim + 1))


class Unsqueeze(Reshape):
    """A new size-1 dim at ``dim``: a view whose new stride is PyTorch's, the size times the stride of the dim it goes
    before (1 element past the last), so that ``stride()`` and in-place writes (which compare memory layouts) agree
    with PyTorch's. Backward (``Reshape``'s): the gradient without that dim."""

    @staticmethod
    def forward(ctx, a, dim):
        x = a._data
        ctx.shape = x.shape
        step = x.shape[dim] * x.strides[dim] if dim < x.ndim else x.itemsize
        return _dtypes.as_strided(x, x.shape[:dim] + (1,) + x.shape[dim:],
                                  x.strides[:dim] + (step,) + x.strides[dim:], writeable=x.flags.writeable)


@takes_tensors("input")
def squeeze(input, dim=None):
    if dim is None:
        axes = [i for i, s in enumerate(input.shape) if s == 1]
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = [d for d in (normalize_dim(d, input.ndim) for d in dims) if input.ndim and input.shape[d] == 1]
    return Squeeze.apply(input, tuple(axes))


class Squeeze(Reshape):
    """The size-1 dims ``axes`` removed: a view keeping the other dims' strides, as PyTorch's. Backward
    (``Reshape``'s): the gradient in the input's shape."""

    @staticmethod
    def forward(ctx, a, axes):
        x = a._data
        ctx.shape = x.shape
        keep = [d for d in range(x.ndim) if d not in axes]
        return _dtypes.as_strided(x, tuple(x.shape[d] for d in keep), tuple(x.strides[d] for d in keep),
                                  writeable=x.flags.writeable)


class Permute(Function):
    view = True

    @staticmethod
    def forward(ctx, a, dims):
        ctx.inverse = tuple(np.argsort(dims))
        return a._data.transpose(dims)

    @staticmethod
    def backward(ctx, dout):
        return dout._data.transpose(ctx.inverse), None

    @staticmethod
    def graph_backward(ctx, dout):
        return dout.permute(ctx.inverse), None


@takes_tensors("input")
def permute(input, *order, dims=None):
    if not order and dims is None:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _sizes(order, dims, "permute", "dims")
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(): number of dimensions in the tensor input does not match the length of the "
                           f"desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(normalize_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, dims)


@takes_tensors("input")
def transpose(input, dim0, dim1):
    if input.ndim < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return Permute.apply(input, tuple(range(input.ndim)))    # a view of the same shape: a new tensor
    dims = list(range(input.ndim))
    d0, d1 = normalize_dim(dim0, input.ndim), normalize_dim(dim1, input.ndim)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


swapaxes = transpose


class Expand(Function):
    view = True

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data                      # a writable view (np.broadcast_to's are read-only): PyTorch writes into an
        lead = len(shape) - x.ndim       # expand that only adds size-1 dims, and fill_ writes even shared memory
        strides = [0] * len(shape)       # PyTorch's: 0 where a dim grows; a new size-1 dim spans the dims after it
        for i in range(len(shape) - 1, -1, -1):
            if i >= lead:
                size, stride = x.shape[i - lead], x.strides[i - lead]
            else:
                size, stride = 1, shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 0
            strides[i] = stride if size == shape[i] else 0
        return _dtypes.as_strided(x, shape, strides, writeable=x.flags.writeable)

    @staticmethod
    def backward(ctx, dout):
        return dout, None  # the engine sums the broadcast dimensions away

    graph_backward = backward


@takes_tensors("input")
def expand(input, *sizes, size=None):
    if not sizes and size is None:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _sizes(sizes, size, "expand", "size")
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({input.ndim})")
    for i, s in enumerate(sizes[:lead]):
        if s < 0:
            raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                               f"dimension {i}")
    shape = tuple(input.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    for i, s in enumerate(input.shape):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size "
                               f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  "
                               f"Tensor sizes: {list(input.shape)}")
    return Expand.apply(input, shape)


def expand_as(input, other):
    return expand(input, other.shape)


# --------------------------------------------------------------------------- indexing
def _to_numpy_part(part):
    if isinstance(part, (str, bytes, dict, set)):
        raise TypeError(f"invalid index of type {type(part).__name__}: a tensor is indexed by ints, slices, None, "
                        "Ellipsis, and integer or boolean tensors")
    if isinstance(part, Tensor):
        if part._data.ndim == 0 and part._data.dtype.kind in "iu" and part._data.dtype != np.uint8:
            return int(part._data)          # PyTorch indexes with a 0-d integer tensor as with an int
        return index_array(part)
    return np.asarray(part) if isinstance(part, list) else part


def index_array(t):
    """The array of the index tensor ``t`` by PyTorch's rules: bool tensors are masks, and so (deprecated, with its
    warning) are uint8 ones; int32 and int64 tensors are positions; other dtypes are refused."""
    a = t._data
    if a.dtype == np.uint8:
        warnings.warn("indexing with dtype uint8 is now deprecated, please use a dtype bool instead.", UserWarning,
                      stacklevel=5)
        return a.astype(np.bool_)
    if a.dtype.kind != "b" and a.dtype not in (np.int32, np.int64):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return a


def to_numpy_index(index):
    """Tensors and lists inside an index become ndarrays (integer arrays or boolean masks)."""
    if isinstance(index, tuple):
        return tuple(_to_numpy_part(p) for p in index)
    return _to_numpy_part(index)


def _parts(index):
    return index if isinstance(index, tuple) else (index,)


def _is_int(part):
    return isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))


def _is_basic(index):
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in _parts(index))


def _integers_first(parts):
    """Split an index that mixes integers and arrays into (integers and slices, then the arrays).

    PyTorch applies integer indices as selections before advanced indexing, so they never
    count as advanced indices. NumPy counts them, which moves the advanced dimensions to the
    front when an integer and an array are separated by a slice (``x[0, :, [1, 2]]``).
    """
    first, rest = [], []
    for p in parts:
        if _is_int(p):
            first.append(p)
        elif isinstance(p, np.ndarray):  # kept for the second step; a k-dim mask spans k dims
            first.extend([slice(None)] * (p.ndim if p.dtype == np.bool_ else 1))
            rest.append(p)
        else:  # slice, None, Ellipsis: applied in the first step
            first.append(p)
            rest.append(Ellipsis if p is Ellipsis else slice(None))
    return tuple(first), tuple(rest)


class Index(Function):
    view = True

    @staticmethod
    def forward(ctx, a, index):
        ctx.shape, ctx.dtype, ctx.index = a.shape, a.dtype, index
        save_index_arrays(ctx, index)
        return _read(a._data, index)

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors  # raises if an index array was written in place since the forward
        return index_adjoint(dout._data, ctx.shape, ctx.index), None

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        return IndexAdjoint.apply(dout, ctx.shape, ctx.index), None


def save_index_arrays(ctx, index):
    """Save the arrays inside ``index`` for backward, so that a write into one before backward is caught."""
    ctx.save_for_backward(*(p for p in _parts(index) if isinstance(p, np.ndarray)))


def _read(array, index):
    """``array[index]``, a 0-d view rather than NumPy's scalar copy when one element is selected; a new axis (None)
    of a basic index gets PyTorch's stride."""
    out = array[index]
    if not isinstance(out, np.ndarray):
        out = array[_parts(index) + (Ellipsis,)]
    if 0 in out.strides and any(p is None for p in _parts(index)) and _is_basic(index):   # (a new axis: stride 0)
        out = _with_pytorch_new_axes(out, array, index)
    return out


def _with_pytorch_new_axes(view, array, index):
    """``view`` = ``array[index]`` (a basic index with None in it) with the strides PyTorch gives its new axes:
    NumPy gives them 0, PyTorch's indexing ``unsqueeze``s at the dim it has reached, whose stride is that dim's size
    times its stride then (1 past the last dim). Only strides of size-1 dims change, so the memory is the same; but
    ``stride()`` shows them, and in-place writes compare them as PyTorch does (``x[None] = x[0:1]`` is a full overlap,
    ``x[None] = x[::4]`` of one element a partial one)."""
    sizes, strides = list(array.shape), [s // array.itemsize for s in array.strides]
    parts = _parts(index)
    dim = 0
    for part in parts:
        if part is None:
            strides.insert(dim, sizes[dim] * strides[dim] if dim < len(sizes) else 1)
            sizes.insert(dim, 1)
            dim += 1
        elif part is Ellipsis:
            dim += array.ndim - sum(1 for p in parts if p is not None and p is not Ellipsis)
        elif isinstance(part, slice):
            start, stop, step = part.indices(sizes[dim])
            sizes[dim], strides[dim] = len(range(start, stop, step)), strides[dim] * step
            dim += 1
        else:                                    # an integer: the dim goes
            del sizes[dim], strides[dim]
    if tuple(sizes) != view.shape:               # (not an index this emulation knows: NumPy's strides stay)
        return view
    return _dtypes.as_strided(view, view.shape, [s * view.itemsize for s in strides])


def index_adjoint(g, shape, index):
    """The adjoint of reading ``x[index]`` from an x of ``shape``: zeros with ``g`` added at ``index``
    (repeated integer indices accumulate)."""
    grad = np.zeros(shape, dtype=g.dtype)
    if any(isinstance(p, np.ndarray) and p.dtype != np.bool_ for p in _parts(index)):
        np.add.at(grad, index, g)   # integer arrays may repeat a position
    else:
        grad[index] = g             # slices, integers and masks never do
    return grad


class IndexAdjoint(Function):
    """out = zeros(shape) with g added at ``index``: the gradient of ``x[index]`` (``Index``), as an op, so that
    gradients computed with create_graph=True can be differentiated again. It is linear; its adjoint is
    ``Index``: dg = dout[index]."""

    @staticmethod
    def forward(ctx, g, shape, index):
        ctx.index = index
        save_index_arrays(ctx, index)
        return index_adjoint(g._data, shape, index)

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors
        return _read(dout._data, ctx.index), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        return Index.apply(dout, ctx.index), None, None


def index(input, index):
    """``input[index]``: basic slicing, integer-array and boolean-mask indexing, all differentiable.

    PyTorch's rules where they differ from NumPy's: no negative steps, and integers (also 0-d
    integer tensors) select before any advanced indexing.
    """
    index = to_numpy_index(index)
    parts = _parts(index)
    if any(isinstance(p, slice) and p.step is not None and p.step < 0 for p in parts):
        raise ValueError("step must be greater than zero")  # PyTorch has no negative strides
    if not _is_basic(index) and any(_is_int(p) for p in parts):
        first, rest = _integers_first(parts)
        return _apply_index(_apply_index(input, first), rest)
    return _apply_index(input, index)


def _apply_index(input, index):
    try:
        return Index.apply(input, index)
    except IndexError as e:  # NumPy says "axis", PyTorch "dimension"
        message = str(e).replace(" for axis ", " for dimension ")
        raise IndexError(f"{message} (indexing a tensor of shape {list(input.shape)})") from None


# --------------------------------------------------------------------------- repeat
class Repeat(Function):
    """out = x tiled ``repeats`` times (x's shape padded with leading 1s to ``len(repeats)`` dims).

    Backward: view dout as (r0, s0, r1, s1, ...), one repeat axis before each input axis,
    and sum the repeat axes away.
    """

    @staticmethod
    def forward(ctx, a, padded_shape, repeats):
        ctx.input_shape, ctx.padded_shape, ctx.repeats = a.shape, padded_shape, repeats
        return np.tile(a._data.reshape(padded_shape), repeats)

    @staticmethod
    def backward(ctx, dout):
        return _sum_repeats(ctx, dout._data), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return _sum_repeats(ctx, dout), None, None


def _sum_repeats(ctx, g):
    """Repeat's backward on ``g``, an ndarray or a Tensor (the same methods): the repeat axes summed away."""
    interleaved = [n for r, s in zip(ctx.repeats, ctx.padded_shape) for n in (r, s)]  # (r0, s0, r1, s1, ...)
    repeat_axes = tuple(range(0, len(interleaved), 2))
    return g.reshape(interleaved).sum(repeat_axes).reshape(ctx.input_shape)


@takes_tensors("input")
def repeat(input, *sizes, repeats=None):
    """Tile ``input`` ``sizes[i]`` times along each dim (PyTorch's ``Tensor.repeat``, NumPy's ``tile``)."""
    repeats = _sizes(sizes, repeats, "repeat", "repeats")
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    padded_shape = (1,) * (len(repeats) - input.ndim) + input.shape
    out_shape = [r * s for r, s in zip(repeats, padded_shape)]
    if any(n < 0 for n in out_shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out_shape)}: {out_shape}")
    return Repeat.apply(input, padded_shape, repeats)


# --------------------------------------------------------------------------- cat, stack
class Cat(Function):
    """out = the inputs joined along ``axis``; each input's gradient is its slice of dout.

    Inputs flagged in ``skip`` (PyTorch's legacy 1-D empty tensors) take no part. Every 1-D empty input gets a new
    empty gradient, as in PyTorch, even when all inputs are 1-D empty (and so none is skipped): under create_graph it
    does not require grad.
    """

    @staticmethod
    def forward(ctx, *parts, axis, dtype, skip):
        joined = [p for p, s in zip(parts, skip) if not s]
        ctx.axis = axis
        ctx.empty_1d = tuple(p.shape == (0,) for p in parts)
        ctx.offsets = np.cumsum([p.shape[axis] for p in joined[:-1]])
        # row-major, as PyTorch's (NumPy follows the inputs' order)
        return row_major(np.concatenate([p._data.astype(dtype, copy=False) for p in joined], axis=axis))

    @staticmethod
    def backward(ctx, dout):
        return _cat_grads(ctx, np.split(dout._data, ctx.offsets, axis=ctx.axis), np.zeros(0, dout.dtype))

    @staticmethod
    def graph_backward(ctx, dout):
        bounds = [0, *ctx.offsets, dout.shape[ctx.axis]]
        pieces = [_slice_along(dout, ctx.axis, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
        return _cat_grads(ctx, pieces, Tensor(np.zeros(0, dout.dtype)))


def _cat_grads(ctx, pieces, empty):
    """One gradient per input of ``Cat``: ``empty`` for a 1-D empty input, else the next of ``pieces`` (dout's slices:
    one per joined input; skipped inputs have none, and when all inputs are 1-D empty the pieces go unused)."""
    pieces = iter(pieces)
    grads = [empty if e else next(pieces) for e in ctx.empty_1d]
    return tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad))


def _tensor_list(name, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
    return list(tensors)


def _promoted_dtype(tensors):
    """PyTorch's result dtype over all ``tensors`` (none 0-d): the highest category wins, then the widest."""
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = result_type(np.empty(0, dtype), t._data)  # result_type compares arrays: an empty stand-in
    return dtype


def cat(tensors, dim=0):
    """Join ``tensors`` along ``dim`` (promoting dtypes as PyTorch does). Like PyTorch, 1-D empty tensors are
    skipped whatever ``dim`` is."""
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    skip = [t.shape == (0,) for t in tensors]
    if all(skip):
        skip = [False] * len(tensors)
    ref = tensors[skip.index(False)]
    axis = normalize_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        if skip[i]:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for d, (expected, got) in enumerate(zip(ref.shape, t.shape)):
            if d != axis and expected != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. Expected size "
                                   f"{expected} but got size {got} for tensor number {i} in the list.")
    return Cat.apply(*tensors, axis=axis, dtype=_promoted_dtype(tensors), skip=tuple(skip))


def stack(tensors, dim=0):
    """Join equally shaped ``tensors`` along a new dimension ``dim``."""
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    axis = normalize_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(t, axis) for t in tensors], axis)


# --------------------------------------------------------------------------- split, chunk
def _slice_along(input, axis, start, stop):
    """``input[..., start:stop, ...]`` with the slice on ``axis``: a differentiable view (one ``Index`` node)."""
    return index(input, (slice(None),) * axis + (slice(start, stop),))


def _split_sizes(input, axis, sizes, op="Split"):
    """Views of ``input`` along ``axis`` of the given sizes: outputs of one op (``op``, PyTorch's node name), so
    PyTorch's rule for such views holds (no recorded in-place write into them); with ``op`` None, views of their
    own, which may be written (PyTorch's tensor_split, hsplit, ..., and the unsafe_ splits)."""
    bounds = np.cumsum([0] + list(sizes))
    pieces = tuple(_slice_along(input, axis, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]))
    return pieces if op is None else mark_multi_output(pieces, op)


def _split_axis(name, input, dim):
    if input.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")
    return normalize_dim(dim, input.ndim)


def split(tensor, split_size_or_sections, dim=0):
    """Views of ``tensor`` along ``dim``: pieces of ``split_size`` (the last may be smaller), or of the given
    ``sections`` sizes."""
    return split_views(tensor, split_size_or_sections, dim)


def split_views(tensor, split_size_or_sections, dim, guarded=True):
    """``split``; with ``guarded`` False the pieces are views of their own, which may be written in place (PyTorch's
    unsafe_split), not the outputs of one op (``_split_sizes``)."""
    _history_first(tensor)
    axis = _split_axis("split", tensor, dim)
    size = tensor.shape[axis]
    if isinstance(split_size_or_sections, (tuple, list)):
        sizes = [operator.index(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if np.sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                               f"size at dimension {axis}), but got split_sizes={sizes}")
        return _split_sizes(tensor, axis, sizes, "SplitWithSizes" if guarded else None)
    step = operator.index(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    pieces = -(-size // step) if step else 1
    pieces = pieces or 1  # an empty dimension still gives one (empty) piece
    sizes = [step] * (pieces - 1) + [size - step * (pieces - 1)]
    return _split_sizes(tensor, axis, sizes, "Split" if guarded else None)



def split_method(self, split_size, dim=0):
    """``Tensor.split``: ``split`` with the tensor's method's argument name (``x.split(split_size=2)``)."""
    return split(self, split_size, dim)

@takes_tensors("input")
def chunk(input, chunks, dim=0):
    """At most ``chunks`` views of ``input`` along ``dim``, each ``ceil(size / chunks)`` long (the last may be
    shorter)."""
    return chunk_views(input, chunks, dim)


def chunk_views(input, chunks, dim, guarded=True):
    """``chunk``; ``guarded`` as in ``split_views`` (False: PyTorch's unsafe_chunk)."""
    axis = _split_axis("chunk", input, dim)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input.shape[axis]
    if size == 0:
        return _split_sizes(input, axis, [0] * chunks, "Split" if guarded else None)
    return split_views(input, -(-size // chunks), axis, guarded)


# --------------------------------------------------------------------------- triangles
def _keep_triangle(name, input, keep):
    """``input`` with the elements outside ``keep(rows, cols)`` (a boolean (rows, cols) mask) set to zero."""
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = input.shape[-2:]
    return masked_fill(input, Tensor(~keep(rows, cols)), 0)


@takes_tensors("input")
def tril(input, diagonal=0):
    """The lower triangle of the last two dims (``j - i <= diagonal``); the rest is zero."""
    diagonal = int_arg(diagonal, "tril", "diagonal", 2)
    return _keep_triangle("tril", input, lambda n, m: np.tri(n, m, diagonal, dtype=bool))


@takes_tensors("input")
def triu(input, diagonal=0):
    """The upper triangle of the last two dims (``j - i >= diagonal``); the rest is zero."""
    diagonal = int_arg(diagonal, "triu", "diagonal", 2)
    return _keep_triangle("triu", input, lambda n, m: ~np.tri(n, m, diagonal - 1, dtype=bool))


# --------------------------------------------------------------------------- unbind, narrow, movedim
@takes_tensors("input")
def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, each a view without that dim."""
    _history_first(input)
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    axis = normalize_dim(dim, input.ndim)
    return mark_multi_output(tuple(index(input, (slice(None),) * axis + (i,)) for i in range(input.shape[axis])),
                             "Unbind")


def _history_first(input):
    """PyTorch's autograd reads an input's grad_fn before the op checks its arguments: a view made stale by a write
    into its base (an output of unbind or split, say) raises its error first, before a bad dim or index. (Only in
    ops with a derivative of their own: a composite such as chunk or narrow checks its arguments first. Called by
    select, diagonal, unbind and split; docs/differences.md lists the ops that still check first.)"""
    if input._base is not None and grad_mode._state.enabled and input.requires_grad:
        input.grad_fn


@takes_tensors("input")
def select(input, dim, index):
    """The view ``input[..., index, ...]`` with ``index`` on ``dim``, which the result no longer has."""
    _history_first(input)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    axis = normalize_dim(dim, input.ndim)
    index = operator.index(index)
    size = input.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {axis}")
    return _apply_index(input, (slice(None),) * axis + (index % size,))


@takes_tensors("input")
def narrow(input, dim, start, length):
    """The view ``input[..., start:start + length, ...]`` along ``dim`` (``start`` may be negative). (A composite in
    PyTorch: its arguments are checked before a stale view's history is read.)"""
    axis = _split_axis("narrow", input, dim)
    size = input.shape[axis]
    if isinstance(start, Tensor) and (start.ndim != 0 or start.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start, length = operator.index(start), operator.index(length)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start %= size if size else 1
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice_along(input, axis, start, start + length)


def _dim_list(dims):
    return [operator.index(d) for d in dims] if isinstance(dims, (tuple, list)) else [operator.index(dims)]


@takes_tensors("input")
def movedim(input, source, destination):
    """``input`` with its dims ``source`` moved to positions ``destination`` (the others keep their order): a view."""
    src, dst = _dim_list(source), _dim_list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    src = [normalize_dim(d, input.ndim) for d in src]
    dst = [normalize_dim(d, input.ndim) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    if input.ndim == 0:                # (dims 0 and -1 name its one place) a view, never input itself
        return Permute.apply(input, ())
    order = [None] * input.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(input.ndim) if i not in src)
    return Permute.apply(input, tuple(o if o is not None else next(rest) for o in order))


moveaxis = movedim
swapdims = transpose


# --------------------------------------------------------------------------- roll, flip
class Roll(Function):
    """out = x shifted cyclically by ``shifts`` along ``axes``; dx = dout shifted back by ``-shifts``."""

    @staticmethod
    def forward(ctx, a, shifts, axes):
        ctx.shifts, ctx.axes = shifts, axes
        return row_major(np.roll(a._data, shifts, axes))      # row-major, as PyTorch's

    @staticmethod
    def backward(ctx, dout):
        return np.roll(dout._data, tuple(-s for s in ctx.shifts), ctx.axes), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return Roll.apply(dout, tuple(-s for s in ctx.shifts), ctx.axes), None, None


@takes_tensors("input")
def roll(input, shifts, dims=None):
    """Rotate ``input`` by ``shifts`` along ``dims`` (over the flattened tensor, shape kept, when ``dims`` is None)."""
    shifts = _dim_list(shifts)
    if dims is None or (isinstance(dims, (tuple, list)) and not dims):
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return reshape(Roll.apply(reshape(input, -1), tuple(shifts), (0,)), input.shape)
    axes = [normalize_dim(d, input.ndim) for d in _dim_list(dims)]
    if len(shifts) != len(axes):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(axes)}")
    return Roll.apply(input, tuple(shifts), tuple(axes))


class Flip(Function):
    """out = x reversed along ``axes`` (a copy: PyTorch has no negative strides); dx = dout reversed back."""

    @staticmethod
    def forward(ctx, a, axes):
        ctx.axes = axes
        return np.flip(a._data, axes).copy(order="K")     # laid out as the input, as PyTorch's

    @staticmethod
    def backward(ctx, dout):
        return np.flip(dout._data, ctx.axes), None

    @staticmethod
    def graph_backward(ctx, dout):
        return Flip.apply(dout, ctx.axes), None


@takes_tensors("input")
def flip(input, dims):
    """``input`` reversed along each of ``dims`` (a copy, as in PyTorch)."""
    axes = [normalize_dim(d, input.ndim) for d in _dim_list(dims)]
    repeated = [a for i, a in enumerate(axes) if a in axes[:i]]
    if repeated:
        raise RuntimeError(f"dim {repeated[0]} appears multiple times in the list of dims")
    return Flip.apply(input, tuple(axes) if input.ndim else ())    # (a 0-d tensor has nothing to reverse)


@takes_tensors("input")
def fliplr(input):
    """``input`` reversed along dim 1 (left/right); needs at least 2 dims."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@takes_tensors("input")
def flipud(input):
    """``input`` reversed along dim 0 (up/down); needs at least 1 dim."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


# --------------------------------------------------------------------------- diagonals
def _diagonal_axes(ndim, offset, dim1, dim2, name="diagonal"):
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"{name} dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _diagonal_view(x, offset, d1, d2):
    """The writable view of ``x``'s diagonal ``offset`` in the (d1, d2) planes, moved to the last dim:
    element k of a plane is x[.., k, .., k + offset, ..] (``k - offset`` on d1 for a negative offset)."""
    start1, start2 = max(-offset, 0), max(offset, 0)
    n = max(min(x.shape[d1] - start1, x.shape[d2] - start2), 0)
    corner = x[tuple(slice(start1, None) if i == d1 else slice(start2, None) if i == d2 else slice(None)
                     for i in range(x.ndim))]
    keep = [i for i in range(x.ndim) if i not in (d1, d2)]
    shape = tuple(x.shape[i] for i in keep) + (n,)
    strides = tuple(x.strides[i] for i in keep) + (x.strides[d1] + x.strides[d2],)
    return _dtypes.as_strided(corner, shape, strides, writeable=x.flags.writeable)


class Diagonal(Function):
    """out = the diagonal ``offset`` of each (d1, d2) plane, as the last dim (a view).
    Backward: dout written onto the same diagonal of a zero gradient (``DiagEmbed`` into x's shape)."""
    view = True

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        ctx.shape, ctx.where = a.shape, (offset, d1, d2)
        return _diagonal_view(a._data, offset, d1, d2)

    @staticmethod
    def backward(ctx, dout):
        return _embed_diagonal(dout._data, ctx.shape, *ctx.where), None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return DiagEmbed.apply(dout, ctx.shape, *ctx.where), None, None, None


@takes_tensors("input")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the planes spanned by ``dim1`` and ``dim2``, appended as the last dim: a view."""
    _history_first(input)
    d1, d2 = _diagonal_axes(input.ndim, offset, dim1, dim2)
    return Diagonal.apply(input, operator.index(offset), d1, d2)


def _embed_diagonal(a, shape, offset, d1, d2):
    """zeros(shape) with ``a``'s last dim written on diagonal ``offset`` of the (d1, d2) planes."""
    out = np.zeros(shape, a.dtype)
    _diagonal_view(out, offset, d1, d2)[...] = a
    return out


class DiagEmbed(Function):
    """out: zeros of ``shape`` with x's last dim written on diagonal ``offset`` of the (d1, d2) planes
    (``diag_embed``, and the gradient of ``Diagonal``). Backward: dx = the same diagonal of dout (``Diagonal``)."""

    @staticmethod
    def forward(ctx, a, shape, offset, d1, d2):
        ctx.where = (offset, d1, d2)
        return _embed_diagonal(a._data, shape, offset, d1, d2)

    @staticmethod
    def backward(ctx, dout):
        return _diagonal_view(dout._data, *ctx.where), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return Diagonal.apply(dout, *ctx.where), None, None, None, None


@takes_tensors("input")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices in the (``dim1``, ``dim2``) planes of a new tensor with ``input``'s last dim on diagonal ``offset``."""
    d1, d2 = _diagonal_axes(input.ndim + 1, offset, dim1, dim2, "diag_embed")
    offset = operator.index(offset)
    n = input.shape[-1] + abs(offset)
    batch = iter(input.shape[:-1])
    shape = tuple(n if i in (d1, d2) else next(batch) for i in range(input.ndim + 1))
    return DiagEmbed.apply(input, shape, offset, d1, d2)


@takes_tensors("input")
def diag(input, diagonal=0):
    """1-D input: the square matrix with ``input`` on diagonal ``diagonal``; 2-D input: that diagonal (a copy)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        from .inplace import clone
        return clone(Diagonal.apply(input, operator.index(diagonal), 0, 1))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


# --------------------------------------------------------------------------- repeat_interleave
@takes_tensors("input")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (slice along ``dim``; over the flattened tensor when ``dim`` is None) repeated ``repeats``
    times in place (an int, or a 1-D tensor of one count per slice). ``repeat_interleave(counts)`` alone gives
    the indices ``[0]*counts[0] + [1]*counts[1] + ...``."""
    from .index import index_select
    counts = input if repeats is None else repeats
    if isinstance(counts, Tensor) and counts.dtype not in (np.int32, np.int64):   # PyTorch's kernel's counts
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(counts.dtype)}'")
    if repeats is None:  # the one-argument form: input holds the counts
        counts = _repeat_counts(input._data, input.shape[0] if input.ndim else 1, 0)
        return Tensor(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input, axis = reshape(input, -1), 0
    else:
        axis = normalize_dim(dim, input.ndim)
    n = input.shape[axis] if input.ndim else 1
    counts = _repeat_counts(repeats._data if isinstance(repeats, Tensor) else np.asarray(repeats), n, axis)
    if output_size is not None and output_size != counts.sum():
        raise RuntimeError(f"repeat_interleave(): output_size ({output_size}) does not equal the sum of repeats "
                           f"({int(counts.sum())})")
    source = np.repeat(np.arange(n, dtype=np.int64), counts)  # out slice i comes from input slice source[i]
    return index_select(input, axis, Tensor(source))


def _repeat_counts(counts, n, axis):
    """``counts`` (a number or a 1-D integer array) as one non-negative count per slice of the ``n`` along
    ``axis``."""
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise RuntimeError(f"repeat_interleave(): repeats must be an integer scalar or a 1-D integer tensor, got "
                           f"a {counts.ndim}-D tensor of {counts.dtype}")
    if counts.size and counts.min() < 0:
        raise RuntimeError("Repeats must be non-negative")
    counts = np.broadcast_to(counts.reshape(-1), (n,)) if counts.size == 1 else counts.reshape(-1)
    if counts.size != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{counts.size} and input.size({axis}) = {n}")
    return counts


# --------------------------------------------------------------------------- unfold (sliding windows)
def _windows(array, axis, size, step):
    """The view of ``array``'s windows of ``size`` elements every ``step`` along ``axis``: that axis becomes the
    window count, a new last axis of ``size`` walks within a window. window[..., w, ..., j] = array[..., w*step + j,
    ...]."""
    count = (array.shape[axis] - size) // step + 1
    shape = array.shape[:axis] + (count,) + array.shape[axis + 1:] + (size,)
    strides = array.strides[:axis] + (array.strides[axis] * step,) + array.strides[axis + 1:] + (array.strides[axis],)
    return _dtypes.as_strided(array, shape, strides)


def _add_windows(g, shape, axis, size, step):
    """The adjoint of ``_windows``: zeros of ``shape`` with each window of ``g`` added back where it was read
    (overlapping windows accumulate). Offset j of every window reads positions j, j + step, ... along ``axis``."""
    grad = np.zeros(shape, g.dtype)
    count = g.shape[axis]
    for j in range(size):
        positions = (slice(None),) * axis + (slice(j, j + step * (count - 1) + 1, step),)
        grad[positions] += g[..., j]
    return grad


class Unfold(Function):
    """out[..., w, ..., j] = x[..., w*step + j, ...]: the windows along one axis, a view.
    Backward: dx[..., i, ...] = sum of dout[..., w, ..., j] over the windows w and offsets j with w*step + j = i."""
    view = True

    @staticmethod
    def forward(ctx, a, axis, size, step):
        ctx.shape, ctx.where = a.shape, (axis, size, step)
        return _windows(a._data, axis, size, step)

    @staticmethod
    def backward(ctx, dout):
        return _add_windows(dout._data, ctx.shape, *ctx.where), None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return UnfoldAdjoint.apply(dout, ctx.shape, *ctx.where), None, None, None


class UnfoldAdjoint(Function):
    """The gradient of ``Unfold`` as an op (for create_graph=True): windows added back into an array of ``shape``.
    It is linear; its adjoint is ``Unfold``: dg = the windows of dout."""

    @staticmethod
    def forward(ctx, g, shape, axis, size, step):
        ctx.where = (axis, size, step)
        return _add_windows(g._data, shape, axis, size, step)

    @staticmethod
    def backward(ctx, dout):
        return _windows(dout._data, *ctx.where), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return Unfold.apply(dout, *ctx.where), None, None, None, None


@takes_tensors("self")
def unfold(self, dimension, size, step):
    """``Tensor.unfold``: the windows of ``size`` elements, one every ``step``, along ``dimension``, as a view
    whose ``dimension`` counts the windows ((n - size) // step + 1 of them) and whose new last dimension of
    ``size`` runs through each window."""
    axis = normalize_dim(int_arg(dimension, "unfold", "dimension", 1), self.ndim)
    size, step = int_arg(size, "unfold", "size", 2), int_arg(step, "unfold", "step", 3)
    length = self.shape[axis] if self.ndim else 1
    if size < 0:
        raise RuntimeError(f"unfold(): size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"unfold(): maximum size for tensor at dimension {axis} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    if self.ndim == 0:   # PyTorch's 0-d case: the element itself as a window (or no element for size 0)
        return _slice_along(reshape(self, 1), 0, 0, size)
    return Unfold.apply(self, axis, size, step)


# --------------------------------------------------------------------------- meshgrid, cartesian_prod
_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of the 1-D (or 0-D: one element) ``tensors``: output i holds tensor i's values along
    dimension i and is constant along the others (``indexing='ij'``, the default), or with the first two
    dimensions swapped (``'xy'``, Cartesian: x along columns). Each output is an expanded view."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tensors[0]
    tensors = _tensor_list("meshgrid", tensors)
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a {t.ndim}-D "
                               f"tensor of shape {list(t.shape)} at position {i}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype, but got {tensors[0].dtype} at "
                               f"position 0 and {t.dtype} at position {i}")
    order = list(range(len(tensors)))                    # order[k]: the output dimension that tensor k runs along
    if indexing == "xy" and len(tensors) > 1:
        order[0], order[1] = 1, 0
    shape = [0] * len(tensors)
    for k, t in enumerate(tensors):
        shape[order[k]] = t._data.size
    grids = []
    for k, t in enumerate(tensors):
        along = [1] * len(tensors)
        along[order[k]] = -1
        grids.append(expand(reshape(t, along), shape))
    return tuple(grids)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows (n1*n2*..., k) in row-major order (the last
    tensor varies fastest); one tensor is returned as it is."""
    tensors = _tensor_list("cartesian_prod", list(tensors))
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(*tensors, indexing="ij")], 1)


# --------------------------------------------------------------------------- as_strided
class AsStrided(Function):
    """out = the view of the input's storage with sizes ``size``, element strides ``stride``, starting at element
    ``offset`` of the storage (PyTorch's ``as_strided``). Backward: each element of out read one memory location;
    the gradient of the input's element there is the sum of dout over the elements that read it (``positions``:
    the input's flat position for each element of out, -1 where out reads memory outside the input: that share of
    the gradient goes nowhere)."""
    view = True

    @staticmethod
    def forward(ctx, a, size, stride, offset):
        from ..autograd.views import positions_in
        storage = _storage_elements(a)
        out = _dtypes.as_strided(storage[offset:], size, tuple(st * storage.itemsize for st in stride),
                                 writeable=a._data.flags.writeable)
        ctx.shape, ctx.positions = a.shape, positions_in(a._data, out)
        return out

    @staticmethod
    def backward(ctx, dout):
        keep = ctx.positions >= 0                                           # out's shape
        grad = np.zeros(int(np.prod(ctx.shape)), dtype=dout.dtype)          # the input, flat
        np.add.at(grad, ctx.positions[keep], dout._data[keep])
        return grad.reshape(ctx.shape), None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        keep = ctx.positions >= 0
        n = int(np.prod(ctx.shape))
        return IndexAdjoint.apply(Index.apply(dout, keep), (n,), ctx.positions[keep]).reshape(ctx.shape), None, None, \
            None


def _storage_elements(t):
    """The whole storage under ``t``'s memory as a 1-D array of its dtype (a view, no copy)."""
    from ..autograd.version import storage_of
    storage = storage_of(t._data)
    if not storage.flags.c_contiguous or storage.dtype != t._data.dtype:
        raise NotImplementedError("as_strided of a tensor whose memory is not a plain array of its dtype")
    return np.ndarray((storage.size,), dtype=storage.dtype, buffer=storage)


@takes_tensors("input")
def as_strided(input, size, stride, storage_offset=None):
    """The view of ``input``'s storage with the given sizes and strides (in elements) from ``storage_offset``
    (by default the input's own), as PyTorch's; differentiable: each element of the input receives the gradient of
    every element of the view that reads it."""
    size, stride = _sizes((size,)), _sizes((stride,))
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    from .layout import storage_offset as offset_of
    offset = offset_of(input) if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    storage = _storage_elements(input)
    needed = offset + (1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else 0)
    if needed > storage.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {storage.itemsize} requiring a storage size of {needed * storage.itemsize} are "
                           f"out of bounds for storage of size {storage.nbytes}")
    return AsStrided.apply(input, size, stride, offset)


def as_strided_copy(input, size, stride, storage_offset=None):
    """A copy of ``as_strided(input, size, stride, storage_offset)``."""
    return as_strided(input, size, stride, storage_offset).clone()
