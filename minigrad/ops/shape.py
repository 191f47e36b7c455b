"""Shape and movement ops: reshape/view, permute/transpose, (un)squeeze, expand, indexing, cat/stack/split.

Most are views in NumPy; their backward moves the gradient back the same way
(reshape back, inverse permutation, scatter-add for indexing).
"""
import numpy as np

from ..autograd import Function
from ..tensor import Tensor
from .dims import normalize_dim


def _sizes(sizes):
    """Accept ``f(2, 3)`` and ``f((2, 3))`` as PyTorch does."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return tuple(int(s) for s in sizes)


class Reshape(Function):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a.shape
        return a.data.reshape(shape)

    @staticmethod
    def backward(ctx, dout):
        return dout.data.reshape(ctx.shape), None


def reshape(input, *shape):
    shape = _sizes(shape)
    known = int(np.prod([s for s in shape if s != -1]))
    n = input.data.size
    if shape.count(-1) > 1 or (-1 not in shape and known != n) or (-1 in shape and (known == 0 or n % known)):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
    if shape == input.shape:
        return input
    return Reshape.apply(input, shape)


view = reshape


def view_as(input, other):
    return reshape(input, other.shape)


reshape_as = view_as


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    start, end = normalize_dim(start_dim, input.ndim), normalize_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return reshape(input, input.shape[:start] + (-1,) + input.shape[end + 1:])


def unsqueeze(input, dim):
    if not -input.ndim - 1 <= dim <= input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim - 1}, {input.ndim}], "
                         f"but got {dim})")
    dim = dim % (input.ndim + 1)
    return reshape(input, input.shape[:dim] + (1,) + input.shape[dim:])


def squeeze(input, dim=None):
    if dim is None:
        axes = [i for i, s in enumerate(input.shape) if s == 1]
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = [d for d in (normalize_dim(d, input.ndim) for d in dims) if input.ndim and input.shape[d] == 1]
    return reshape(input, tuple(s for i, s in enumerate(input.shape) if i not in axes))


def contiguous(input):
    return input


class Permute(Function):
    @staticmethod
    def forward(ctx, a, dims):
        ctx.inverse = tuple(np.argsort(dims))
        return a.data.transpose(dims)

    @staticmethod
    def backward(ctx, dout):
        return dout.data.transpose(ctx.inverse), None


def permute(input, *dims):
    dims = _sizes(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(): number of dimensions in the tensor input does not match the length of the "
                           f"desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(normalize_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, dims)


def transpose(input, dim0, dim1):
    if input.ndim < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return input
    dims = list(range(input.ndim))
    d0, d1 = normalize_dim(dim0, input.ndim), normalize_dim(dim1, input.ndim)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


swapaxes = transpose


class Expand(Function):
    @staticmethod
    def forward(ctx, a, shape):
        return np.broadcast_to(a.data, shape)

    @staticmethod
    def backward(ctx, dout):
        return dout, None  # the engine sums the broadcast dimensions away


def expand(input, *sizes):
    sizes = _sizes(sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({input.ndim})")
    shape = tuple(input.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    for i, s in enumerate(input.shape):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size "
                               f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  "
                               f"Tensor sizes: {list(input.shape)}")
    if shape == input.shape:
        return input
    return Expand.apply(input, shape)


def expand_as(input, other):
    return expand(input, other.shape)


# --------------------------------------------------------------------------- indexing
def to_numpy_index(index):
    """Tensors inside an index become ndarrays (integer arrays or boolean masks)."""
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    if isinstance(index, list):
        return np.asarray(index)
    return index


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in parts)


class Index(Function):
    @staticmethod
    def forward(ctx, a, index):
        ctx.shape, ctx.dtype, ctx.index = a.shape, a.dtype, index
        return a.data[index]

    @staticmethod
    def backward(ctx, dout):
        grad = np.zeros(ctx.shape, dtype=dout.dtype)
        if _is_basic(ctx.index):
            grad[ctx.index] = dout.data            # basic indexing never repeats an element
        else:
            np.add.at(grad, ctx.index, dout.data)  # repeated integer indices accumulate
        return grad, None


def index(input, index):
    """``input[index]``: basic slicing, integer-array and boolean-mask indexing, all differentiable."""
    index = to_numpy_index(index)
    try:
        return Index.apply(input, index)
    except IndexError as e:
        raise IndexError(f"{e} (indexing a tensor of shape {list(input.shape)})") from None


def _todo(name):
    def op(*args, **kwargs):
        raise NotImplementedError(f"minigrad.{name} is not implemented yet")
    op.__name__ = name
    return op


repeat = _todo("repeat")
cat = _todo("cat")
stack = _todo("stack")
split = _todo("split")
chunk = _todo("chunk")
tril = _todo("tril")
triu = _todo("triu")
