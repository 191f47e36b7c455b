"""Indexing by index tensors: gather, scatter/scatter_add (out of place), index_select, masked_select, nonzero.

Gathering reads ``x`` at integer positions, so its backward adds ``dout`` back onto those positions
(``np.add.at``: a position read twice receives both gradients). The scatters are ``scatter_``/``scatter_add_``
(``ops/inplace.py``) written into a clone.
"""
import numpy as np

from .._checks import takes_tensors
from ..autograd import Function
from ..autograd.function import pytorch_saves
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from .dims import normalize_dim
from .elementwise import boolean_mask
from .inplace import IndexAdd, _index_add_into, _scatter_positions, clone
from .shape import IndexAdjoint, index_adjoint, result_reshape


# --------------------------------------------------------------------------- gather
class Gather(Function):
    """out[i][j][k] = x[index[i][j][k]][j][k] along ``dim`` (out has index's shape).

    Backward: dx = zeros with dout added at the gathered positions (repeats accumulate): ``IndexAdjoint``."""

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.positions, ctx.shape = _scatter_positions(index, dim), a.shape
        ctx.save_for_backward(index)
        return a._data[ctx.positions]

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors  # raises if the index was written in place since the forward
        return index_adjoint(dout._data, ctx.shape, ctx.positions), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        return IndexAdjoint.apply(dout, ctx.shape, ctx.positions), None, None


def _check_index_dtype(name, index):
    if not isinstance(index, Tensor) or index.dtype not in (np.int64, np.int32):
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index, but got {got}")


@takes_tensors("input")
@pytorch_saves("input", "index")
def gather(input, dim, index, *, sparse_grad=False):
    """``input``'s elements along ``dim`` at ``index`` (same number of dims as ``input``; no larger in the others)."""
    check_kernel("gather", input)
    return gather_values(input, dim, index)


def gather_values(input, dim, index):
    """``gather`` for ops that pick values with it (sort, quantile): PyTorch's backward of those saves the indices,
    not the input, so a later write into the input is allowed (``gather`` itself refuses it, as PyTorch's does)."""
    if isinstance(index, Tensor) and index.numel() == 0 and index.dtype.kind in "iu":
        return input.reshape(-1)[:0].reshape(index.shape).clone()   # PyTorch takes any empty integer index: no
        #                                                                     elements (a new tensor, as its gather's)
    _check_index_dtype("gather", index)
    d = normalize_dim(dim, max(input.ndim, 1))
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    x = input.reshape(1) if input.ndim == 0 else input
    idx = index._data.reshape(-1) if index.ndim == 0 else index._data
    for i, n in enumerate(idx.shape):
        if i != d and n > x.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[d]):
        bad = idx.max() if idx.max() >= x.shape[d] else idx.min()
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {d} with size {x.shape[d]}")
    out = Gather.apply(x, d, idx)
    return out.reshape(index.shape) if out.shape != index.shape else out


# --------------------------------------------------------------------------- scatter, scatter_add
@takes_tensors("input")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``input`` with ``out[..., index[i], ...] = src[i]`` along ``dim`` (or ``value`` there):
    ``scatter_`` into a clone, so the gradient is that of ``Scatter`` (``ops/inplace.py``)."""
    return clone(input).scatter_(dim, index, src, value=value, reduce=reduce)


@takes_tensors("input")
def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``out[..., index[i], ...] += src[i]`` along ``dim``; repeats accumulate."""
    return clone(input).scatter_add_(dim, index, src)


# --------------------------------------------------------------------------- index_select
class IndexSelect(Function):
    """out = the slices ``index[0], index[1], ...`` of x along ``dim``.
    Backward: dx = zeros with slice i of dout added onto slice index[i] (repeats accumulate): ``IndexAdd``
    into zeros."""

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.shape = dim, a.shape
        ctx.save_for_backward(index)
        return np.take(a._data, index, axis=dim)

    @staticmethod
    def backward(ctx, dout):
        (index,) = ctx.saved_tensors
        grad = np.zeros(ctx.shape, dout.dtype)
        _index_add_into(grad, ctx.dim, index, dout._data, 1)
        return grad, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        (index,) = ctx.saved_tensors
        return IndexAdd.apply(Tensor(np.zeros(ctx.shape, dout.dtype)), dout, ctx.dim, index, 1), None, None


@takes_tensors("input")
def index_select(input, dim, index):
    """The slices of ``input`` along ``dim`` listed in the 1-D integer tensor ``index``."""
    _check_index_dtype("index_select", index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    x = input.reshape(1) if input.ndim == 0 else input
    d = normalize_dim(dim, x.ndim)
    idx = index._data.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[d]):
        bad = idx.max() if idx.max() >= x.shape[d] else idx.min()
        kind = RuntimeError if x.ndim == 2 and d == 1 else IndexError     # PyTorch's kinds (its 2-D dim-1 path)
        raise kind(f"index_select(): index {int(bad)} is out of range for dimension {d} with size {x.shape[d]}")
    out = IndexSelect.apply(x, d, idx)
    return result_reshape(out, ()) if input.ndim == 0 else out


# --------------------------------------------------------------------------- masked_select, nonzero
class MaskedSelect(Function):
    """out = the elements of x (broadcast with mask) where mask is True, as a 1-D tensor in C order.
    Backward: dout written back at those positions of a zero gradient of the broadcast shape."""

    watched_inputs = (0, 1)  # PyTorch's backward saves input and mask

    @staticmethod
    def forward(ctx, a, mask):
        shape = np.broadcast_shapes(a.shape, mask.shape)
        ctx.mask = np.broadcast_to(mask._data, shape)
        ctx.save_for_backward(mask)
        return np.broadcast_to(a._data, shape)[ctx.mask]

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors
        return index_adjoint(dout._data, ctx.mask.shape, ctx.mask), None   # the engine sums the broadcast dims

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        return IndexAdjoint.apply(dout, ctx.mask.shape, ctx.mask), None


@takes_tensors("input")
def masked_select(input, mask):
    """The elements of ``input`` where the boolean ``mask`` (broadcast together) is True, as a 1-D tensor."""
    mask = boolean_mask(mask, input, "masked_select: expected BoolTensor for mask, but got {}")
    return MaskedSelect.apply(input, mask)


@takes_tensors("input")
def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an int64 (count, ndim) tensor, or with ``as_tuple`` one 1-D tensor per
    dim (a 0-d input counts as 1-D there, as in PyTorch)."""
    check_kernel("nonzero", input)
    if as_tuple:
        return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(input._data)))
    positions = np.argwhere(input._data).astype(np.int64)   # (count, ndim)
    return Tensor(positions)


@takes_tensors("input")
def argwhere(input):
    """The (count, ndim) int64 indices of the nonzero elements (``nonzero`` without ``as_tuple``)."""
    return nonzero(input)


# --------------------------------------------------------------------------- one_hot
@takes_tensors("tensor")
def one_hot(tensor, num_classes=-1):
    """int64 (*tensor.shape, num_classes): 1 where the last index equals ``tensor``'s class (not differentiable).
    ``num_classes=-1`` takes the largest class + 1, as PyTorch."""
    if tensor.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    classes = tensor._data
    if classes.size and classes.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if classes.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(classes.max()) + 1
    elif classes.size and classes.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor((classes[..., None] == np.arange(num_classes)).astype(np.int64))   # (*shape, num_classes)
