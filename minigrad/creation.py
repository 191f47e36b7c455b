"""Tensor creation: ``tensor``, ``from_numpy``, ``zeros``/``ones``/``full``/``empty``, ``arange``, random tensors."""
import numpy as np

from . import dtypes
from .random import numpy_rng
from .tensor import Tensor


def _size(size):
    """Accept ``zeros(2, 3)`` and ``zeros((2, 3))`` as PyTorch does."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _dtype(dtype, default=None):
    return np.dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())


def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of ``data``.

    ndarrays keep their dtype; Python floats become float32, ints int64, bools bool.
    """
    if isinstance(data, Tensor):
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = data.copy()
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    else:
        arr = np.asarray(data, dtype=dtypes.dtype_of_python(data))
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return Tensor(arr, requires_grad=requires_grad)


def as_tensor(data, dtype=None):
    """Like ``tensor`` but shares memory with an ndarray (or Tensor) when no conversion is needed."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == np.dtype(dtype)):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == np.dtype(dtype)):
        return Tensor(data)
    return tensor(data, dtype=dtype)


def from_numpy(array):
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor(array)


def _filled(fill, size, dtype, requires_grad, default=None):
    return Tensor(np.full(_size(size), fill, dtype=_dtype(dtype, default)), requires_grad=requires_grad)


def zeros(*size, dtype=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad)


def ones(*size, dtype=None, requires_grad=False):
    return _filled(1, size, dtype, requires_grad)


def empty(*size, dtype=None, requires_grad=False):
    return Tensor(np.empty(_size(size), dtype=_dtype(dtype)), requires_grad=requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False):
    default = dtypes.dtype_of_python(fill_value) if not isinstance(fill_value, np.generic) else fill_value.dtype
    return _filled(fill_value, (size,), dtype, requires_grad, default)


def zeros_like(input, dtype=None, requires_grad=False):
    return _filled(0, input.shape, dtype or input.dtype, requires_grad)


def ones_like(input, dtype=None, requires_grad=False):
    return _filled(1, input.shape, dtype or input.dtype, requires_grad)


def full_like(input, fill_value, dtype=None, requires_grad=False):
    return _filled(fill_value, input.shape, dtype or input.dtype, requires_grad)


def empty_like(input, dtype=None, requires_grad=False):
    return empty(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    return Tensor(np.arange(start, end, step, dtype=np.dtype(dtype)), requires_grad=requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False):
    return Tensor(np.linspace(start, end, steps, dtype=_dtype(dtype)), requires_grad=requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False):
    return Tensor(np.eye(n, m, dtype=_dtype(dtype)), requires_grad=requires_grad)


def randn(*size, dtype=None, requires_grad=False, generator=None):
    g = numpy_rng(generator)
    return Tensor(g.standard_normal(_size(size)).astype(_dtype(dtype)), requires_grad=requires_grad)


def rand(*size, dtype=None, requires_grad=False, generator=None):
    g = numpy_rng(generator)
    return Tensor(g.random(_size(size)).astype(_dtype(dtype)), requires_grad=requires_grad)


def randint(low, high=None, size=(), dtype=None, generator=None):
    if high is None:
        low, high = 0, low
    g = numpy_rng(generator)
    return Tensor(g.integers(low, high, size=_size((size,))).astype(_dtype(dtype, dtypes.int64)))


def randn_like(input, dtype=None, requires_grad=False):
    return randn(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def rand_like(input, dtype=None, requires_grad=False):
    return rand(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)
