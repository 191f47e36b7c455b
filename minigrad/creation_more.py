"""More creation ops: tril_indices/triu_indices, unravel_index, scalar_tensor, empty_strided/new_empty_strided,
empty_permuted, fill; the in-place random fills cauchy_, geometric_, log_normal_ (with uniform_ and exponential_
checked as PyTorch checks them); resize_/resize_as_, the deprecated out-of-place resize/resize_as, set_ (a tensor
made to show another's memory, or a storage's), and the in-place triangles tril_/triu_.
"""
import functools
import math
import operator
import warnings

import numpy as np

from . import _pytorch_stream as stream
from ._checks import takes_tensors
from . import dtypes
from . import creation   # partly initialized while tensor.py binds the methods: used at call time only
from .ops import inplace
from .ops import shape as sh
from .ops.dims import normalize_dim
from .tensor import Tensor


# --------------------------------------------------------------------------- index tensors
def _triangle_indices(row, col, offset, dtype, device, keep):
    """The (2, count) coordinates of the (row, col) matrix's elements where ``keep(i, j)``, in row-major order."""
    for name, n in (("row", row), ("col", col)):
        if operator.index(n) < 0:
            raise RuntimeError(f"{name} must be non-negative, got {n}")
    i, j = np.indices((row, col), dtype=np.int64).reshape(2, -1)
    chosen = keep(i, j, operator.index(offset))
    coords = np.stack([i[chosen], j[chosen]]).astype(creation.dtype_or(dtype, np.dtype(np.int64)))
    return creation.new_tensor(coords, device, False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates (2, count) of the lower triangle ``j - i <= offset`` of a (row, col) matrix."""
    return _triangle_indices(row, col, offset, dtype, device, lambda i, j, k: j - i <= k)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates (2, count) of the upper triangle ``j - i >= offset`` of a (row, col) matrix."""
    return _triangle_indices(row, col, offset, dtype, device, lambda i, j, k: j - i >= k)


def unravel_index(indices, shape):
    """The coordinates of the flat ``indices`` in a C-ordered tensor of ``shape``: one int64 tensor per dim."""
    if not isinstance(indices, Tensor):
        indices = Tensor(np.asarray(indices))
    if indices.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = sh._sizes((shape,)) if not isinstance(shape, int) else (shape,)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    flat = indices._data.astype(np.int64)
    total = math.prod(shape)
    if flat.size and (flat.min() < -total or flat.max() >= total):
        raise RuntimeError("'indices' must be in range [-numel, numel)")
    flat = np.where(flat < 0, flat + total, flat)
    coords = []
    for n in reversed(shape):                   # the last dim varies fastest: peel it off first
        coords.append(flat % n if n else flat)
        flat = flat // n if n else flat
    return tuple(Tensor(c) for c in reversed(coords))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A 0-d tensor holding the number ``s`` (the default float dtype unless ``dtype``)."""
    value = dtypes.fitted_scalar(s, creation.dtype_or(dtype))   # as PyTorch converts: -5 to uint8 wraps to 251
    return creation.new_tensor(value, device, requires_grad)


# --------------------------------------------------------------------------- uninitialized tensors
def _strided(size, stride, dtype):
    """An uninitialized array of ``size`` laid out with ``stride`` (in elements) over a fresh buffer."""
    size, stride = sh._sizes((size,)), sh._sizes((stride,))
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, stride {list(stride)}")
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    buffer = np.empty(max(span, 1), dtype)
    return dtypes.as_strided(buffer, size, tuple(s * buffer.itemsize for s in stride))


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """An uninitialized tensor of ``size`` whose memory is laid out with ``stride``."""
    return creation.new_tensor(_strided(size, stride, creation.dtype_or(dtype)), device, requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                      pin_memory=False):
    """``empty_strided`` with this tensor's dtype unless ``dtype``."""
    return creation.new_tensor(_strided(size, stride, creation.dtype_or(dtype, self.dtype)), device, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, device=None, requires_grad=False, layout=None,
                   pin_memory=False):
    """An uninitialized tensor of ``size`` whose dims are stored in the order ``physical_layout`` (outermost
    first): ``empty(size permuted).permute(inverse)``."""
    size = creation.size_of((size,))
    order = [operator.index(d) for d in physical_layout]
    if len(order) != len(size):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"size {list(size)}, physical_layout {order}")
    try:
        order = [normalize_dim(d, len(size)) for d in order]
    except IndexError as error:                 # PyTorch raises a RuntimeError here
        raise RuntimeError(str(error)) from None
    if len(set(order)) != len(order):
        raise RuntimeError(f"Duplicate dim not allowed in physical_layout {order}")
    stored = np.empty([size[d] for d in order], creation.dtype_or(dtype))
    return creation.new_tensor(stored.transpose(np.argsort(order)), device, requires_grad)


# --------------------------------------------------------------------------- fill, in-place triangles, resize_
@takes_tensors("input")
def fill(input, value):
    """A tensor like ``input`` with every element ``value`` (a number or a 0-d tensor, which gets the sum of the
    gradient; ``input`` gets none)."""
    return inplace.fill_(inplace.clone(input), value)


def tril_(self, diagonal=0):
    """In-place ``tril``; returns ``self``."""
    keep = sh.tril(self, diagonal)                  # checks the arguments before anything is written
    return inplace.write(self, lambda old: sh.tril(old, diagonal), (), lambda a: np.copyto(a, keep._data))


def triu_(self, diagonal=0):
    """In-place ``triu``; returns ``self``."""
    keep = sh.triu(self, diagonal)
    return inplace.write(self, lambda old: sh.triu(old, diagonal), (), lambda a: np.copyto(a, keep._data))


def resize_(self, *sizes, memory_format=None):
    """This tensor with shape ``sizes``: its first elements (in C order) kept, any new ones uninitialized.
    Like PyTorch, refused for a tensor that requires grad."""
    size = creation.size_of(sizes, "resize_")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    old = self._data.reshape(-1)
    new = np.empty(size, self.dtype)
    kept = min(old.size, new.size)
    new.reshape(-1)[:kept] = old[:kept]
    self._data = new
    return self


def resize_as_(self, the_template, *, memory_format=None):
    """``resize_`` to ``the_template``'s shape."""
    return resize_(self, the_template.shape)


def _resized(self, sizes):
    """``self`` reshaped to ``sizes``, which must keep the number of elements (the deprecated out-of-place
    ``resize``: a view when the memory allows, differentiable)."""
    numel = functools.reduce(operator.mul, sizes, 1)
    if numel != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return sh.reshape(self, tuple(sizes))


def resize(self, *sizes):
    """Deprecated (PyTorch's warning): ``self`` with shape ``sizes`` (separate ints, as PyTorch's), the same
    number of elements."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resized(self, sizes)


def resize_as(self, tensor):
    """Deprecated (PyTorch's warning): ``resize`` to ``tensor``'s shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resized(self, tensor.shape)


# --------------------------------------------------------------------------- set_
def _set_arguments_error(args):
    shown = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    return TypeError(f"set_() received an invalid combination of arguments - got ({shown}), but expected one of:\n"
                     " * ()\n * (Storage source)\n * (Storage source, int storage_offset, tuple of ints size, tuple "
                     "of ints stride = None)\n * (Tensor source)\n * (Tensor source, int storage_offset, tuple of ints "
                     "size, tuple of ints stride = None)\n")


def _strided_over(elements, nbytes, offset, size, stride):
    """The view of the 1-D array ``elements`` (a storage of ``nbytes`` bytes) with ``size`` and element ``stride``
    (C-contiguous if None) from element ``offset``; PyTorch's errors for what does not fit."""
    size = sh._sizes((size,))
    if stride is None:
        stride = tuple(int(np.prod(size[i + 1:], dtype=np.int64)) for i in range(len(size)))
    else:
        stride = sh._sizes((stride,))
    offset = operator.index(offset)
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    needed = offset + (1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else 0)
    if needed * elements.itemsize > nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {elements.itemsize} requiring a storage size of {needed * elements.itemsize} "
                           f"are out of bounds for storage of size {nbytes}")
    return dtypes.as_strided(elements[offset:], size, tuple(st * elements.itemsize for st in stride),
                             writeable=elements.flags.writeable)


def _set_memory(self, source, storage_offset, size, stride):
    """The array ``self.set_(source, storage_offset, size, stride)`` makes ``self`` show."""
    from .storage import TypedStorage, _Storage
    positioned = size is not None
    args = [source] + ([storage_offset] if positioned or storage_offset != 0 else []) + \
        [a for a in (size, stride) if a is not None]
    if not positioned and (storage_offset != 0 or stride is not None):
        raise _set_arguments_error(args)
    if source is None:
        if positioned:
            raise _set_arguments_error(args)
        return np.empty(0, self._data.dtype)
    dtype = self._data.dtype
    if isinstance(source, Tensor):
        if source.dtype != dtype:
            raise RuntimeError(f"Could not set tensor of type {dtypes.c_name(source.dtype)} "
                               f"to a tensor of type {dtypes.c_name(dtype)}")
        if not positioned:
            return source._data.view()
        if not source.is_contiguous():
            raise RuntimeError("passed in tensor to be used as storage must be contiguous")
        elements = sh._storage_elements(source)     # (the offset counts from the source's first element)
        return _strided_over(elements, elements.nbytes, source.storage_offset() + operator.index(storage_offset),
                             size, stride)
    if isinstance(source, _Storage):
        if isinstance(source, TypedStorage):
            if source.dtype != dtype:
                raise RuntimeError(f"Expected a Storage of type {dtypes.c_name(dtype)} or an "
                                   f"UntypedStorage, but got type {dtypes.scalar_type_name(source.dtype)} for "
                                   "argument 1 'storage'")
            elements = source._flat
        else:
            whole = source._flat.size // dtype.itemsize * dtype.itemsize
            elements = source._flat[:whole].view(dtype)
        if not positioned:
            return elements
        return _strided_over(elements, source.nbytes(), storage_offset, size, stride)
    raise _set_arguments_error(args)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """This tensor now shows ``source``'s memory: a tensor's, with its shape and strides, or (given ``size``, and
    ``stride`` or C-contiguous strides) its memory from ``storage_offset`` elements after its first element on (a
    contiguous source); or a storage's (``untyped_storage()``, ``storage()``) from element ``storage_offset`` on,
    read as this tensor's dtype; with no source, empty memory. The dtype
    stays (a source of another dtype is refused). As in PyTorch: a write into memory a backward saved from this
    tensor before makes that backward raise, a leaf that requires grad is refused while grad is recorded, and a
    result that requires grad cannot be differentiated through. The memory's version counter is the source's
    (PyTorch keeps this tensor's own). Memory cannot grow: a size beyond the storage is an error."""
    from .autograd.function import NoDerivative
    from .autograd.version import bump_tensor
    from .ops.shape_more import _note_stale_shape
    new = _set_memory(self, source, storage_offset, size, stride)
    sources = (source,) if isinstance(source, Tensor) else ()
    recording = inplace._records(self, sources)
    if recording:
        inplace.check_leaf(self)
    before = self._data.shape
    was_view = self._base is not None
    bump_tensor(self)           # the memory self showed: what a backward saved from self is stale now
    history = None
    if recording:
        history = NoDerivative.apply(RuntimeError, "derivative for set_ is not implemented", new, self, *sources)
    self._data = new
    if was_view:                # self shows other memory now: no longer a view of its base
        self._base = None
        for slot in ("_view_version", "_view_at", "_view_kind"):
            if hasattr(self, slot):
                delattr(self, slot)
    if hasattr(self, "_own_counter"):
        del self._own_counter
    counter = getattr(source, "_own_counter", None)
    if counter is not None:     # the source counts its writes on a counter of its own (.data): share it
        self._own_counter = counter
    if history is not None:
        self._grad_fn, self._requires_grad = history._grad_fn, True
    elif not was_view and self._grad_fn is not None and before != new.shape:
        _note_stale_shape(self, "set_", before)     # (under no_grad) the history still expects the old shape
    return self


# --------------------------------------------------------------------------- random fills
def _fill_random(self, draw, generator):
    """Write ``draw(stream, n)``, n values from PyTorch's stream (``_pytorch_stream``), into ``self`` in the order
    PyTorch fills it (the values do not depend on it: nothing to differentiate)."""
    return inplace._new_values(self, lambda: inplace.fill_values(self, lambda gen, n, real: draw(gen, n).astype(real),
                                                                 generator))


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with draws from U[a, b) (a complex tensor: its real and imaginary parts each)."""
    inplace.check_fill_dtype(self, "uniform")
    if self.is_complex() and self.numel() == 0:          # (PyTorch checks the range per part, of which there is none)
        return self
    _check_uniform_range(self._data.real.dtype, a, b)
    return inplace.uniform_(self, a, b, generator=generator)


def _check_uniform_range(real, a, b):
    """PyTorch's checks of [a, b) for draws of the float dtype ``real``: both ends finite in it, a <= b, and b - a
    no larger than its largest value (the draws a + (b - a) U are finite), with its messages."""
    largest = float(dtypes.float_info(real).max)
    for end, name in ((a, "from"), (b, "to")):
        if not -largest <= end <= largest:
            raise RuntimeError(f"{name} is out of bounds for {dtypes.c_name(real)}")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    if b - a > largest:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{dtypes.scalar_type_name(real)}>::max(), "
                           f"but found to={b:g} and from={a:g} which result in to-from to exceed the limit")


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with draws from the exponential distribution of rate ``lambd`` (mean 1 / lambd)."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={float(lambd):g}")
    return inplace.exponential_(self, lambd, generator=generator)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with draws from the Cauchy distribution: median + sigma * tan(pi * (U - 1/2))."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={float(sigma):g}")
    inplace.check_fill_dtype(self, "cauchy")
    return _fill_random(self, lambda gen, n: median + sigma * stream.libm(n).tan(
        np.pi * (stream.uniform(gen, n, np.float64) - 0.5)), generator)


def geometric_(self, p, *, generator=None):
    """Fill with draws from the geometric distribution on 1, 2, ...: the number of Bernoulli(p) trials up to the
    first success."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={float(p):g}")
    inplace.check_fill_dtype(self, "geometric")
    return _fill_random(self, lambda gen, n: np.ceil(stream.libm(n).log(stream.uniform(gen, n, np.float64))
                                                     / math.log1p(-p)), generator)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std^2)) draws."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={float(std):g}")
    inplace.check_fill_dtype(self, "log_normal")
    def draw(gen, n):
        with np.errstate(over="ignore"):        # exp beyond the dtype's range is inf, without a warning, as PyTorch's
            return stream.libm(n).exp(stream.standard_normal_doubles(gen, n) * std + mean)
    return _fill_random(self, draw, generator)


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    """Fill with integers drawn uniformly from [from, to) (``from`` may be passed by that name, as PyTorch's);
    without ``to``, from [0, 2^digits] where digits is the mantissa of a float dtype (every such integer is
    exact), or [0, max] of an integer dtype."""
    from_ = kwargs.pop("from", from_)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if any(v is not None and not -2 ** 63 <= v < 2 ** 63 for v in (from_, to)):   # (int64 arguments)
        raise ValueError("Overflow when unpacking long long")
    if to is None and from_:                    # random_(to): from 0
        from_, to = 0, from_
    if to is not None:
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        from .random import _check_random_bounds
        _check_random_bounds(from_, to - 1, self._data.dtype)
        return _fill_random(self, lambda gen, n: stream.integers(gen, n, from_, to), generator)
    inplace.check_fill_dtype(self, "random")    # (no kernel for complex, float8, uint16/32/64: refused unless empty)
    dtype = self._data.dtype
    if dtype in dtypes.LIMITED or dtypes.kind_of(dtype) not in "biuf":    # an empty one: nothing to draw
        return self
    return _fill_random(self, lambda gen, n: stream.full_range_integers(gen, n, dtype), generator)


METHODS = ["new_empty_strided", "tril_", "triu_", "resize_", "resize_as_", "resize", "resize_as", "set_", "uniform_",
           "exponential_", "cauchy_", "geometric_", "log_normal_", "random_"]
