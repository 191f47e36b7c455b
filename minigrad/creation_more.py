"""More creation ops: tril_indices/triu_indices, unravel_index, scalar_tensor, empty_strided/new_empty_strided,
empty_permuted, fill; the in-place random fills cauchy_, geometric_, log_normal_ (with uniform_ and exponential_
checked as PyTorch checks them); resize_/resize_as_, and the in-place triangles tril_/triu_.
"""
import math
import operator

import numpy as np

from ._checks import takes_tensors
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
    value = np.asarray(s)                        # converted as PyTorch casts: -5 to uint8 wraps to 251
    with np.errstate(invalid="ignore", over="ignore"):
        return creation.new_tensor(value.astype(creation.dtype_or(dtype)), device, requires_grad)


# --------------------------------------------------------------------------- uninitialized tensors
def _strided(size, stride, dtype):
    """An uninitialized array of ``size`` laid out with ``stride`` (in elements) over a fresh buffer."""
    size, stride = sh._sizes((size,)), sh._sizes((stride,))
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, stride {list(stride)}")
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    buffer = np.empty(max(span, 1), dtype)
    return np.lib.stride_tricks.as_strided(buffer, size, tuple(s * buffer.itemsize for s in stride))


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


# --------------------------------------------------------------------------- random fills
def _fill_random(self, draw, generator):
    """Write ``draw(numpy_rng, shape)`` into ``self`` (the values do not depend on it: nothing to differentiate)."""
    return inplace._new_values(self, lambda: draw(inplace._generator(generator), self.shape))


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with draws from U[a, b)."""
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    return inplace.uniform_(self, a, b, generator=generator)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with draws from the exponential distribution of rate ``lambd`` (mean 1 / lambd)."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return inplace.exponential_(self, lambd, generator=generator)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with draws from the Cauchy distribution: median + sigma * tan(pi * (U - 1/2))."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill_random(self, lambda rng, shape: median + sigma * rng.standard_cauchy(shape), generator)


def geometric_(self, p, *, generator=None):
    """Fill with draws from the geometric distribution on 1, 2, ...: the number of Bernoulli(p) trials up to the
    first success."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill_random(self, lambda rng, shape: rng.geometric(p, shape), generator)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std^2)) draws."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill_random(self, lambda rng, shape: rng.lognormal(mean, std, shape), generator)


METHODS = ["new_empty_strided", "tril_", "triu_", "resize_", "resize_as_", "uniform_", "exponential_", "cauchy_",
           "geometric_", "log_normal_"]
