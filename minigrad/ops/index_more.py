"""Writing at index positions, out of place and in place: index_put, index_fill, index_copy, index_add, put,
masked_scatter, the embedding ops select/slice/diagonal/as_strided_scatter; and reading: take, take_along_dim.

Every write is ``out = a; out[positions] = value`` (``IndexPut``, ``ops/inplace.py``) or, accumulating,
``out[positions] += value`` (``IndexPutAdd`` below), with ``positions`` a NumPy index into ``a``:

    overwrite:   da = dout with the written positions zeroed      dvalue = dout[positions]
    accumulate:  da = dout                                          dvalue = dout[positions]

(dvalue summed back to the value's shape by the engine where the value was broadcast). The in-place forms
(``index_put_``, ``put_``, ...) are the out-of-place ones written back with ``inplace.write``.
"""
import math
import operator

import numpy as np

from .._checks import int_arg, takes_tensors
from ..dtypes import scalar_type_name
from ..autograd import Function, grad_mode
from ..autograd.function import pytorch_saves
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from . import shape as sh
from .dims import normalize_dim
from .inplace import IndexPut, _value_grad, check_result, warn_expanded_index_put, write


class IndexPutAdd(Function):
    """out = a with ``value`` added at ``index`` (repeated positions accumulate).
    Backward: da = dout (addition passes it through); dvalue = dout[index] (the adjoint of the scatter-add is the
    gather), summed by the engine to value's shape."""

    @staticmethod
    def forward(ctx, a, value, index):
        ctx.index, ctx.value_ndim = index, value.ndim
        sh.save_index_arrays(ctx, index)
        out = a._data.copy()
        target = out[index].shape
        np.add.at(out, index, np.broadcast_to(value._data.astype(out.dtype, copy=False), target))
        return out

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors
        dvalue = _value_grad(dout._data[ctx.index], ctx.value_ndim) if ctx.needs_input_grad[1] else None
        return dout, dvalue, None

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        dvalue = _value_grad(sh.Index.apply(dout, ctx.index), ctx.value_ndim) if ctx.needs_input_grad[1] else None
        return dout, dvalue, None


def put_at(input, index, value, accumulate=False):
    """``input`` with ``value`` (a Tensor broadcast to ``input[index]``, cast to ``input``'s dtype) written or
    added at the NumPy index ``index``: a new tensor."""
    if value.dtype != input.dtype:
        value = ew.cast(value, input.dtype)
    return (IndexPutAdd if accumulate else IndexPut).apply(input, value, index)


def _in_place(name, outofplace, expanded_writer=None):
    """The in-place form of an out-of-place write ``outofplace(input, ...)``: same checks, result written back.
    ``expanded_writer(self, *args)``: for an op PyTorch allows into an expanded tensor, (a function writing only the
    positions it names straight into ``self``'s array, those positions): copying the whole result back would let the
    last alias of a shared element win."""
    def op(self, *args, **kwargs):
        with grad_mode.no_grad():                           # checks the arguments; raises before any write
            result = outofplace(self, *args, **kwargs)
        if result.shape != self.shape:
            raise RuntimeError(f"{name}(): output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        check_result(self, result.shape, result.dtype)
        operands = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
        expanded_ok = expanded_writer is not None      # PyTorch only warns for these into an expanded tensor
        if expanded_ok:
            warn_expanded_index_put(self._data, name)
            fast, index = expanded_writer(self, *args, **kwargs)
        else:
            fast, index = (lambda a: np.copyto(a, result._data, casting="unsafe")), None
        return write(self, lambda old: outofplace(old, *args, **kwargs), operands, fast, shared_ok=expanded_ok,
                     overlap="any" if expanded_ok else "partial", index=index)   # index_put_: not even the same memory
    op.__name__ = name
    op.__doc__ = f"In-place ``{name[:-1]}``; returns ``self``."
    return op


def _integer_index(name, index, what="index", int32=False, error=RuntimeError):
    """``index``'s array: int64 (or int32 where PyTorch takes it) or PyTorch's ``error``."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(index).__name__}")
    if index.dtype != np.int64 and not (int32 and index.dtype == np.int32):
        raise error(f"{name}(): Expected a long tensor for {what}, but got {index.dtype}")
    return index._data


def _check_bounds(positions, size, dim, error=IndexError):
    if positions.size and (positions.min() < -size or positions.max() >= size):
        bad = positions.max() if positions.max() >= size else positions.min()
        raise error(f"index {int(bad)} is out of bounds for dimension {dim} with size {size}")


def _same_dtype(name, input, source, what="source"):
    if source.dtype != input.dtype:
        raise RuntimeError(f"{name}(): self ({input.dtype}) and {what} ({source.dtype}) must have the same scalar "
                           f"type")


# --------------------------------------------------------------------------- index_put
def _tensor_indices(indices, input):
    """``indices`` (a tuple of integer or boolean tensors, or None for a whole dim) as a NumPy index."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    if len(indices) > max(input.ndim, 1):
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {len(indices)})")
    parts = []
    for i in indices:
        if i is None:
            parts.append(slice(None))
        elif isinstance(i, Tensor):         # PyTorch's index dtypes: a uint8 tensor is a (deprecated) mask
            a = sh.index_array(i)
            parts.append(a if a.dtype == np.bool_ else a.astype(np.int64))
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tuple(parts)


@takes_tensors("input", "values")
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written (``accumulate``: added) at ``input[indices]``."""
    index = _tensor_indices(indices, input)
    _same_dtype("index_put", input, values, "values")
    x = sh.reshape(input, 1) if input.ndim == 0 else input
    target = x._data[index].shape           # raises IndexError for an index out of range
    try:       # broadcast to the indexing result itself: no leading dims beyond it, even of size 1 (PyTorch's rule)
        fits = np.broadcast_shapes(target, values.shape) == tuple(target)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(target)}")
    check_kernel("index_put", input)
    out = put_at(x, index, values, accumulate)
    return sh.reshape(out, ()) if input.ndim == 0 else out


def _index_put_writer(input, indices, values, accumulate=False):
    """index_put_ straight into ``input``'s array (only the positions named: right also where its elements share
    memory), and the index a recorded write must write last where they do."""
    index = _tensor_indices(indices, input)
    v = values._data.astype(input.dtype, copy=False)

    def fast(a):
        target = a.reshape(1) if a.ndim == 0 else a
        if accumulate:
            np.add.at(target, index, v)
        else:
            target[index] = v
    return fast, (None if accumulate else index)   # (the index a recorded write writes last, where it wrote)


index_put_ = _in_place("index_put_", index_put, _index_put_writer)


# --------------------------------------------------------------------------- index_fill, index_copy, index_add
def _along(d, positions):
    """The NumPy index selecting ``positions`` (an integer array) along dim ``d``."""
    return (slice(None),) * d + (positions,)


def _index_vector(name, input, dim, index, int32=False, error=RuntimeError):
    """(dim, 1-D positions) for the ``index_*`` ops; a 0-d input counts as 1-D."""
    d = normalize_dim(dim, max(input.ndim, 1))
    positions = _integer_index(name, index, int32=int32, error=error)
    if positions.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    positions = positions.reshape(-1).astype(np.int64)
    _check_bounds(positions, input.shape[d] if input.ndim else 1, d)
    return d, positions


def _as_1d(fn):
    """Run ``fn`` on a 0-d input viewed as 1-D (PyTorch's index ops treat it so), and give back a 0-d result."""
    def run(input, *args):
        if input.ndim:
            return fn(input, *args)
        return sh.reshape(fn(sh.reshape(input, 1), *args), ())
    return run


@takes_tensors("input")
def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices ``index`` along ``dim`` set to ``value`` (a number or a 0-d tensor,
    which receives the sum of their gradients)."""
    d, positions = _index_vector("index_fill", input, dim, index, error=IndexError)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    check_kernel("index_fill", input)          # (before the value, as PyTorch refuses these dtypes first)
    complex_value = isinstance(value, (complex, np.complexfloating)) or isinstance(value, Tensor) and value.is_complex()
    if complex_value and not input.is_complex():    # even with no imaginary part, and into bool
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    ew.check_value_fits(value, input.dtype)
    value = ew.as_tensor_operand(value, input)
    filled = np.unique(positions % max(input.shape[d] if input.ndim else 1, 1))   # each slice once: value's gradient
    return _as_1d(lambda x: put_at(x, _along(d, filled), value))(input)          # sums each filled element once


@takes_tensors("input", "source")
@pytorch_saves("index", "source")
def index_copy(input, dim, index, source):
    """A copy of ``input`` with slice ``i`` of ``source`` along ``dim`` written to slice ``index[i]``."""
    d, positions = _index_vector("index_copy", input, dim, index)
    _same_dtype("index_copy", input, source)
    _check_slices("index_copy", input, d, positions, source)
    check_kernel("index_copy", input)
    return _as_1d(lambda x, s: put_at(x, _along(d, positions), sh.reshape(s, x[_along(d, positions)].shape)))(
        input, source)


def _check_slices(name, input, d, positions, source):
    expected = (input.shape[:d] + (positions.size,) + input.shape[d + 1:]) if input.ndim else (positions.size,)
    if math.prod(source.shape) != math.prod(expected) or (source.ndim and source.ndim != len(expected)):
        raise RuntimeError(f"{name}(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {list(input.shape)} at dimension {d} and source slice shape: "
                           f"{list(source.shape)} at dimension 0.")


@takes_tensors("input", "source")
@pytorch_saves("index", "source")
def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source[i]`` added to slice ``index[i]`` along ``dim``; repeats add up."""
    d, positions = _index_vector("index_add", input, dim, index, int32=True)
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(input.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if source.ndim and input.ndim and source.shape[:d] + source.shape[d + 1:] != input.shape[:d] + input.shape[d + 1:]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    _check_slices("index_add", input, d, positions, source)
    check_kernel("index_add", input)
    scaled = source if alpha == 1 else ew.mul(source, alpha)
    return _as_1d(lambda x, s: put_at(x, _along(d, positions), sh.reshape(s, x[_along(d, positions)].shape),
                                      accumulate=True))(input, scaled)


def _index_fill_writer(input, dim, index, value):
    """index_fill_ straight into ``input``'s array (only the positions named), and the index a recorded write writes
    last where its elements share memory."""
    d, positions = _index_vector("index_fill", input, dim, index, error=IndexError)
    where = _along(d, np.unique(positions % max(input.shape[d] if input.ndim else 1, 1)))
    v = value._data if isinstance(value, Tensor) else value

    def fast(a):
        (a.reshape(1) if a.ndim == 0 else a)[where] = v
    return fast, (where if input.ndim else None)


index_fill_ = _in_place("index_fill_", index_fill, _index_fill_writer)
_index_add_0d = _in_place("index_add_", index_add)


def index_add_(self, dim, index, source, *, alpha=1):
    """In-place ``index_add`` (NumPy's fast path in ``ops/inplace.py``; 0-d tensors here)."""
    from .inplace import index_add_ as vector_index_add_
    if isinstance(source, Tensor) and self.ndim and source.ndim:
        return vector_index_add_(self, dim, index, source, alpha=alpha)
    return _index_add_0d(self, dim, index, source, alpha=alpha)
index_copy_ = _in_place("index_copy_", index_copy)


# --------------------------------------------------------------------------- take, put
@takes_tensors("input")
@pytorch_saves("input", "index")
def take(input, index):
    """The elements of the flattened ``input`` at ``index`` (negative counts from the end), in ``index``'s shape."""
    positions = _integer_index("take", index)
    check_kernel("take", input)
    n = input.numel()
    _check_bounds(positions, n, 0, IndexError)
    if positions.size and n == 0:
        raise IndexError("take(): tried to take from an empty tensor")
    return sh.index(sh.reshape(input, -1), Tensor(positions.astype(np.int64)))


@takes_tensors("input", "source")
@pytorch_saves("index", "source")
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with the flattened ``source`` written (``accumulate``: added) at the flat positions
    ``index``."""
    positions = _integer_index("put", index).reshape(-1).astype(np.int64)
    _same_dtype("put", input, source)
    if positions.size != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {positions.size}")
    _check_bounds(positions, input.numel(), 0, IndexError)
    check_kernel("put", input)
    flat = put_at(sh.reshape(input, -1), (positions,), sh.reshape(source, -1), accumulate)
    return sh.reshape(flat, input.shape)


put_ = _in_place("put_", put)


@takes_tensors("input", "indices")
@pytorch_saves("input", "indices")
def take_along_dim(input, indices, dim=None):
    """``gather`` with ``input`` and ``indices`` broadcast against each other except along ``dim``; with
    ``dim=None``, ``take`` on the flattened input."""
    _integer_index("take_along_dim", indices, "indices")
    if dim is None:
        return take(input, sh.reshape(indices, -1))
    from .index import gather
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = normalize_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        return gather(input, 0, indices)
    positions = indices._data
    _check_bounds(positions, input.shape[d], d, RuntimeError)
    if positions.size and positions.min() < 0:                         # negative positions count from the end
        indices = Tensor(np.where(positions < 0, positions + input.shape[d], positions))
    shape_x, shape_i = list(input.shape), list(indices.shape)
    shape_x[d] = shape_i[d] = 1
    common = list(np.broadcast_shapes(tuple(shape_x), tuple(shape_i)))
    x_shape, i_shape = common.copy(), common.copy()
    x_shape[d], i_shape[d] = input.shape[d], indices.shape[d]
    return gather(sh.expand(input, x_shape), d, sh.expand(indices, i_shape))


# --------------------------------------------------------------------------- masked_scatter
@takes_tensors("input", "mask", "source")
def masked_scatter(input, mask, source):
    """A copy of ``input`` (broadcast with ``mask``) with the first elements of the flattened ``source`` written,
    in order, where ``mask`` is True. The gradient of ``source`` is zero beyond the elements used."""
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    _same_dtype("masked_scatter", input, source)
    shape = tuple(np.broadcast_shapes(input.shape, mask.shape))
    where = np.broadcast_to(mask._data, shape)
    count = int(where.sum())
    if count > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    check_kernel("masked_scatter", input)
    used = sh.index(sh.reshape(source, -1), slice(0, count))        # (count,)
    return put_at(sh.expand(input, shape), (where,), used)


masked_scatter_ = _in_place("masked_scatter_", masked_scatter)


# --------------------------------------------------------------------------- the embedding ops: *_scatter
def _embed(name, input, src, index):
    """``input`` with ``src`` written at the NumPy index ``index`` (whose result must have ``src``'s shape)."""
    _same_dtype(name, input, src, "src")
    target = input._data[index].shape
    if target != src.shape:
        raise RuntimeError(f"{name}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(target)}")
    return put_at(input, index, src)


@takes_tensors("input", "src")
def select_scatter(input, src, dim, index):
    """``input`` with ``src`` written at ``input.select(dim, index)``."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.ndim)
    i = int_arg(index, "select_scatter", "index", 4)
    if not -input.shape[d] <= i < input.shape[d]:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return _embed("select_scatter", input, src, (slice(None),) * d + (i,))


@takes_tensors("input", "src")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``src`` written at ``input[..., start:end:step, ...]`` along ``dim``."""
    d = normalize_dim(dim, max(input.ndim, 1))
    if operator.index(step) <= 0:
        raise RuntimeError("slice step must be positive")
    return _embed("slice_scatter", input, src, (slice(None),) * d + (slice(start, end, step),))


@takes_tensors("input", "src")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``src`` written on ``diagonal(input, offset, dim1, dim2)`` (src's last dim along it)."""
    d1, d2 = sh._diagonal_axes(input.ndim, offset, dim1, dim2)
    moved = sh.movedim(input, (d1, d2), (-2, -1))                       # (..., rows, cols)
    rows, cols = moved.shape[-2:]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    steps = np.arange(length)
    written = _embed("diagonal_scatter", moved, src, (Ellipsis, steps - min(offset, 0), steps + max(offset, 0)))
    return sh.movedim(written, (-2, -1), (d1, d2))


@takes_tensors("input", "src")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``src`` written into ``input.as_strided(size, stride, storage_offset)``: element ``i`` of
    that view is the flat element ``storage_offset + sum_k i_k * stride_k`` of the contiguous ``input``."""
    size, stride = sh._sizes((size,)), sh._sizes((stride,))
    offset = 0 if storage_offset is None else operator.index(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, stride {list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    positions = np.full(size, offset, dtype=np.int64)                   # (*size,) flat positions
    for k, (n, s) in enumerate(zip(size, stride)):
        positions = positions + (np.arange(n) * s).reshape((n,) + (1,) * (len(size) - k - 1))
    if positions.size and positions.max() >= input.numel():
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset} "
                           f"requiring a storage size of {int(positions.max()) + 1} are out of bounds for storage "
                           f"of size {input.numel()}")
    flat = _embed("as_strided_scatter", sh.reshape(input, -1), src, (positions,))
    return sh.reshape(flat, input.shape)


# --------------------------------------------------------------------------- the masked index ops of compilers
def _clamped(input, indices):
    """``indices`` (integer tensors) clamped into range for their dims: the unsafe ops read or write an element
    even where the mask is False, and that element must exist."""
    return tuple(Tensor(np.clip(i._data, -n, n - 1)) for i, n in zip(indices, input.shape))


@takes_tensors("input", "mask")
def _unsafe_masked_index(input, mask, indices, fill):
    """``input[indices]`` where ``mask``, ``fill`` elsewhere (indices out of range where the mask is False)."""
    picked = sh.index(input, _clamped(input, indices))
    return ew.masked_fill(picked, ew.logical_not(mask), fill)


@takes_tensors("input", "mask", "values")
def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """``input`` with ``values`` added at ``indices`` where ``mask`` (nothing added elsewhere)."""
    kept = ew.masked_fill(values, ew.logical_not(mask), 0)
    return index_put(input, _clamped(input, indices), kept, accumulate=True)


METHODS = ["index_put", "index_put_", "index_fill", "index_fill_", "index_copy", "index_copy_", "index_add",
           "index_add_", "take", "put", "put_", "take_along_dim", "masked_scatter", "masked_scatter_", "select_scatter",
           "slice_scatter", "diagonal_scatter", "as_strided_scatter"]
