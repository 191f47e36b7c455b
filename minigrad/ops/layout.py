"""Memory layout: strides, contiguity and PyTorch's memory formats.

A tensor's values live in a NumPy array, which, like a PyTorch tensor, walks its memory with one stride per
dimension. ``stride()`` reports them in elements, as PyTorch does. A memory format names an order of the
dimensions in memory, outermost first:

    contiguous_format   (N, C, H, W): row-major, what every op returns unless said otherwise
    channels_last       (N, H, W, C) for 4-D tensors: the C values of a pixel side by side
    channels_last_3d    (N, D, H, W, C) for 5-D tensors
    preserve_format     keep the layout of the tensor it is made from (``clone``, ``*_like``)

A layout changes no value and no shape, only where each value sits in memory: ``x.to(memory_format=
mg.channels_last)`` is an (N, C, H, W) tensor with strides (H*W*C, 1, W*C, C). minigrad's elementwise ops keep
their input's layout (NumPy's ``order="K"``), as PyTorch's do; its convolutions, norms and pooling read any layout
and return contiguous results (PyTorch keeps channels_last through them: README, "Where minigrad differs").
"""
import functools

import numpy as np

from .. import dtypes as _dtypes
from .._checks import takes_tensors
from ..autograd import Function
from ..autograd.version import storage_of

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "layout",
           "strided", "check_layout"]


class layout:
    """How a tensor's values are stored: minigrad has one layout, ``strided`` (dense, one stride per dimension;
    PyTorch's other layouts are sparse). Creation functions accept ``layout=minigrad.strided`` as PyTorch's do."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"minigrad.{self._name}"


strided = layout("strided")


def check_layout(value, fname):
    """``layout=`` of a creation function: None or ``strided``; any other layout is refused."""
    if value is not None and value is not strided:
        raise NotImplementedError(f"{fname}(): layout={value!r} is not supported: minigrad tensors are dense "
                                  "(minigrad.strided)")


def creation_keywords(fn):
    """``fn`` (a creation function) also takes PyTorch's ``layout=`` (``strided`` only), ``pin_memory=`` (no
    effect: minigrad has no device memory to copy to) and ``memory_format=`` (the result laid out in it)."""
    @functools.wraps(fn)
    def create(*args, layout=None, pin_memory=False, memory_format=None, **kwargs):
        check_layout(layout, fn.__name__)
        out = fn(*args, **kwargs)
        if memory_format is None or memory_format is preserve_format:
            like = args[0] if args and fn.__name__.endswith("_like") else None   # (zeros_like(x) and the like)
            if like is None or like._data.flags.c_contiguous or out._data.ndim < 2:
                return out
            relaid = type(out)(laid_out_like(out._data, like._data))          # preserve_format: x's layout
            return relaid.requires_grad_() if out.requires_grad else relaid
        check_format(memory_format, fn.__name__)
        return out if in_format(out._data, memory_format) else type(out)(as_format(out._data, memory_format),
                                                                         requires_grad=out.requires_grad)
    return create


class memory_format:
    """A memory layout (module docstring); the four instances are minigrad's, as ``torch.channels_last``..."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"minigrad.{self._name}"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# a format's dimension order in memory, outermost first, and the rank it needs (None: any rank)
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def check_format(fmt, what):
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{what}(): argument 'memory_format' must be minigrad.memory_format, not {type(fmt).__name__}")


def memory_order(fmt, ndim):
    """The dimension order of ``fmt`` for an ``ndim``-dim tensor, outermost first; PyTorch's error if the rank is
    not the one the format needs."""
    if fmt not in _ORDERS:
        return tuple(range(ndim))
    rank, order = _ORDERS[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    return order


def in_format(array, fmt):
    """Whether ``array`` is laid out densely in ``fmt``'s order (dimensions of size 1 may have any stride, as in
    PyTorch): its view in that order is row-major. False for a format of another rank."""
    if fmt in _ORDERS and array.ndim != _ORDERS[fmt][0]:
        return False
    return array.transpose(memory_order(fmt, array.ndim)).flags.c_contiguous


def dense_order(array):
    """Whether ``array``'s elements fill its memory exactly once, its dimensions in some order (PyTorch's
    ``is_non_overlapping_and_dense``; a negative stride counts by its size): an expanded or a sliced array does not."""
    dims = sorted((abs(stride), n) for n, stride in zip(array.shape, array.strides) if n != 1)
    expected = array.itemsize
    for stride, n in dims:
        if stride != expected:
            return False
        expected *= n
    return True


def dense_strides_like(shape, *operand_strides):
    """Strides (in elements) of a dense layout whose dimensions are ordered as the operands' strides order them
    (PyTorch's ``infer_dense_strides`` for one tensor, TensorIterator's ``reorder_dimensions`` for several): an
    insertion sort of the dimensions, innermost first; two dimensions are ordered by the first operand whose strides
    order them, by stride, then by size for equal strides; a stride 0 (an expanded or broadcast dimension) orders
    nothing, so a dimension no operand orders keeps its place (where a contiguous layout puts it)."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))        # innermost first: the last dimension, ..., the first

    def should_swap(d0, d1):                    # 1: d0 goes inside d1; -1: it does not; 0: no order between them
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            order = should_swap(perm[d0], perm[d1])
            if order > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif order < 0:
                break
    out, step = [0] * ndim, 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def row_major(array, dtype=None):
    """``array`` (in ``dtype``) laid out row-major, as PyTorch lays out the results of most non-elementwise ops;
    a copy only when it is not. (Unlike ``np.ascontiguousarray``, a 0-d array stays 0-d.)"""
    if dtype is not None and array.dtype != dtype:
        array = array.astype(dtype)
    return array if array.flags.c_contiguous else array.copy()


def laid_out_like(array, like):
    """A copy of ``array`` (of ``like``'s shape) laid out as PyTorch's ``preserve_format`` lays out a tensor made like
    ``like``: ``like``'s own layout when that is dense (no gaps, no shared elements), else a dense layout in the order
    of its strides (``dense_strides_like``)."""
    if like.flags.c_contiguous or dense_order(like):
        out = np.empty_like(like, dtype=array.dtype)      # (order "K": like's order of dims)
    else:
        steps = [s // like.itemsize for s in like.strides]
        out = _dtypes.as_strided(np.empty(max(array.size, 1), array.dtype), array.shape,
                                 [s * array.itemsize for s in dense_strides_like(like.shape, steps)])
    out[...] = array
    return out


def like_operands(result, x, y, z=None):
    """``result``, an elementwise op's array computed from the arrays ``x``, ``y`` (and ``z``), laid out as PyTorch
    lays out that op's result: contiguous when every operand is, else dense in the order the operands' strides give,
    the first operand that orders two dimensions deciding (``dense_strides_like``; ``x.t() * y`` follows ``x.t()``,
    where NumPy would return a contiguous array). A copy only when NumPy's layout differs from that one."""
    if result.ndim < 2 or (x.flags.c_contiguous and y.flags.c_contiguous and (z is None or z.flags.c_contiguous)):
        return result           # (the common case first: a few tests, no call)
    strides = [np.broadcast_to(o, result.shape).strides for o in (x, y, z) if o is not None]
    target = dense_strides_like(result.shape, *strides)
    if all(n == 1 or t * result.itemsize == s for n, t, s in zip(result.shape, target, result.strides)):
        return result
    out = _dtypes.as_strided(np.empty(max(result.size, 1), result.dtype), result.shape,
                             [t * result.itemsize for t in target])
    out[...] = result
    return out


def as_format(array, fmt):
    """A copy of ``array`` laid out in ``fmt``. ``preserve_format``: its own layout when that is dense (no gaps, no
    shared elements), else a dense layout in the order of its strides (``dense_strides_like``), as PyTorch's."""
    if fmt is preserve_format:
        return laid_out_like(array, array)
    order = memory_order(fmt, array.ndim)
    # (np.array: a copy even when the array is laid out so already, and a 0-d array stays 0-d)
    return np.array(array.transpose(order), order="C").transpose(np.argsort(order))


class Relayout(Function):
    """The values of ``a`` in new memory laid out in ``fmt``; the gradient passes through unchanged."""

    @staticmethod
    def forward(ctx, a, fmt):
        return as_format(a._data, fmt)

    @staticmethod
    def backward(ctx, dout):
        return dout, None

    graph_backward = backward


# --------------------------------------------------------------------------- Tensor methods
def stride(self, dim=None):
    """The step in elements between neighbours along each dimension (or along ``dim``)."""
    steps = tuple(s // self._data.itemsize for s in self._data.strides)
    if dim is None:
        return steps
    ndim = max(self._data.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return steps[dim] if steps else 1


def is_contiguous(self, memory_format=contiguous_format):
    """Whether the tensor is laid out densely in ``memory_format``'s order."""
    check_format(memory_format, "is_contiguous")
    return memory_format is preserve_format or in_format(self._data, memory_format)


def contiguous(self, memory_format=contiguous_format):
    """``self`` if it is laid out in ``memory_format`` already, else a differentiable copy that is."""
    check_format(memory_format, "contiguous")
    if memory_format is preserve_format or in_format(self._data, memory_format):
        return self
    return Relayout.apply(self, memory_format)           # a format of another rank raises PyTorch's error


@takes_tensors("input")
def clone(input, *, memory_format=preserve_format):
    """A copy with its own memory, differentiable (the gradient passes through unchanged), laid out in
    ``memory_format`` (``preserve_format``: as ``input``)."""
    check_format(memory_format, "clone")
    return Relayout.apply(input, memory_format)


def suggested_format(array):
    """The format whose dimension order ``array``'s strides follow (PyTorch's ``suggest_memory_format``):
    channels_last(_3d) when, from the channels outwards through the positions to the batch, each stride is at
    least the extent of the previous dimension (and the channels are not a trivial dimension strided like the
    batch); else contiguous_format. It is about order, not density: a slice can follow an order."""
    for fmt, (rank, order) in _ORDERS.items():
        if array.ndim != rank or 0 in array.shape or array.strides[1] == 0:
            continue
        reach = 0                                                      # the extent covered so far, in bytes
        for d in reversed(order):                                      # innermost first: C, then W, H, (D), N
            stride = array.strides[d]
            if stride < reach or (d == 0 and reach == array.strides[1]):
                break
            reach = stride * array.shape[d] if array.shape[d] > 1 else stride
        else:
            return fmt
    return contiguous_format


def _follows(array, fmt):
    """Whether ``to(memory_format=fmt)`` returns ``array``'s tensor itself (PyTorch's rule)."""
    return fmt is preserve_format or suggested_format(array) is fmt


def relayout(tensor, memory_format):
    """``tensor.to(memory_format=...)``: ``tensor`` itself if its strides follow that format's order already (as
    PyTorch decides, ``suggested_format``), else a differentiable copy laid out in it."""
    check_format(memory_format, "to")
    return tensor if _follows(tensor._data, memory_format) else Relayout.apply(tensor, memory_format)


def laid_out(array, fmt):
    """``relayout`` for an array outside the graph (a Parameter's memory in ``Module.to``)."""
    return array if _follows(array, fmt) else as_format(array, fmt)


def storage_offset(self):
    """Where the tensor's first element sits in its storage, in elements."""
    start = self._data.__array_interface__["data"][0]
    return (start - storage_of(self._data).__array_interface__["data"][0]) // self._data.itemsize


def data_ptr(self):
    """The address of the tensor's first element."""
    return self._data.__array_interface__["data"][0]


METHODS = ["stride", "is_contiguous", "contiguous", "storage_offset", "data_ptr"]
