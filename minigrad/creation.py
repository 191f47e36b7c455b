"""Tensor creation: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``/``ones``/``full``/``empty`` and their
``*_like`` forms, ``arange``, ``linspace``, ``logspace``, ``eye``. Random tensors are in ``random.py``.

Every function takes PyTorch's ``dtype=``, ``device=`` (the CPU only: see ``device.py``) and
``requires_grad=`` keywords.
"""
import numpy as np

from . import dtypes
from .device import check_device
from .tensor import Tensor


def size_of(size):
    """The shape asked for by ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros([2, 3])``, as PyTorch reads it."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        negative = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {list(shape)}")
    return shape


def dtype_or(dtype, default=None):
    """``dtype`` as a NumPy dtype, else ``default``, else the default float dtype."""
    return np.dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())


def new_tensor(array, device, requires_grad):
    """Wrap a freshly made ``array`` after checking the ``device=`` argument (the tail of every creator)."""
    check_device(device)
    return Tensor(array, requires_grad=requires_grad)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data``.

    ndarrays keep their dtype; Python floats become the default dtype (float32), ints int64, bools bool.
    """
    if isinstance(data, Tensor):
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = data.copy()
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    else:
        natural = dtypes.dtype_of_python(data)            # also refuses data that is not numbers
        # straight to the asked dtype: 0.1 through float32 first would lose float64's digits
        arr = np.asarray(data, dtype=natural if dtype is None else np.dtype(dtype))
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return new_tensor(arr, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an ndarray (or Tensor) when no conversion is needed."""
    check_device(device)
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


def _filled(fill, shape, dtype, device, requires_grad):
    return new_tensor(np.full(shape, fill, dtype=dtype), device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size_of(size), dtype_or(dtype), device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(1, size_of(size), dtype_or(dtype), device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return new_tensor(np.empty(size_of(size), dtype=dtype_or(dtype)), device, requires_grad)


def fill_dtype(fill_value):
    """The dtype ``full`` gives a fill value: PyTorch's for a Python number, a NumPy scalar's own."""
    return fill_value.dtype if isinstance(fill_value, np.generic) else dtypes.dtype_of_python(fill_value)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _filled(fill_value, size_of((size,)), dtype_or(dtype, fill_dtype(fill_value)), device, requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    return _filled(0, input.shape, dtype_or(dtype, input.dtype), device, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    return _filled(1, input.shape, dtype_or(dtype, input.dtype), device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _filled(fill_value, input.shape, dtype_or(dtype, input.dtype), device, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    return new_tensor(np.empty(input.shape, dtype=dtype_or(dtype, input.dtype)), device, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``arange(end)`` or ``arange(start, end, step)``: int64 for integer bounds, else the default float."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    return new_tensor(np.arange(start, end, step, dtype=np.dtype(dtype)), device, requires_grad)


def _check_steps(steps):
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative, got steps={steps}")


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_steps(steps)
    return new_tensor(np.linspace(start, end, steps, dtype=dtype_or(dtype)), device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    _check_steps(steps)
    exponents = np.linspace(start, end, steps, dtype=np.float64)
    return new_tensor((float(base) ** exponents).astype(dtype_or(dtype)), device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n x m`` (default ``n x n``) identity matrix."""
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    return new_tensor(np.eye(n, m, dtype=dtype_or(dtype)), device, requires_grad)
