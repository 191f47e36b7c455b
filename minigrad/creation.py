"""Tensor creation: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``/``ones``/``full``/``empty`` and their
``*_like`` forms, ``arange``, ``linspace``, ``logspace``, ``eye``. Random tensors are in ``random.py``.

Every function takes PyTorch's ``dtype=``, ``device=`` (the CPU only: see ``device.py``) and
``requires_grad=`` keywords.
"""
import functools
import math
import operator

import numpy as np

from . import dtypes
from ._checks import dtype_arg, int_arg, is_int, is_number, size_arg, takes_tensors, tensor_array, type_name
from ._keywords import size_keyword
from .device import check_device
from .limited_dtypes import check_kernel
from .ops.layout import creation_keywords
from .tensor import Tensor


def size_of(size, fname="empty"):
    """The shape asked for by ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros([2, 3])``, as PyTorch reads it:
    non-negative ints only (``_checks.size_arg``)."""
    return size_arg(size, fname)


def dtype_or(dtype, default=None):
    """``dtype`` as a NumPy dtype, else ``default``, else the default float dtype."""
    if dtype is None:
        return default or dtypes.get_default_dtype()
    return dtype_arg(dtype, "tensor")


def new_tensor(array, device, requires_grad):
    """Wrap a freshly made ``array`` after checking the ``device=`` argument (the tail of every creator)."""
    check_device(device)
    return Tensor(array, requires_grad=requires_grad)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data``.

    ndarrays keep their dtype; Python floats become the default dtype (float32), ints int64, bools bool.
    """
    if not isinstance(requires_grad, bool):
        raise TypeError(f"tensor(): argument 'requires_grad' must be bool, not {type_name(requires_grad)}")
    dtype = None if dtype is None else dtype_arg(dtype, "tensor")
    if isinstance(data, Tensor):
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = tensor_array(data, "tensor").copy()
    elif isinstance(data, np.generic) and dtype is not None and dtype.kind in "biu":
        arr = np.asarray(_into_integer(data, dtype), dtype=dtype)   # a NumPy scalar read as PyTorch reads it
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    else:
        arr = _from_python(data, dtype)
    if dtype is not None and arr.dtype != dtype:
        arr = dtypes.cast_array(arr, dtype)        # PyTorch's rounding (float16 through float32, float8 saturating)
    return new_tensor(arr, device, requires_grad)


def _check_no_unknown_elements(data):
    """PyTorch's RuntimeError for an element of ``tensor``'s data that is no number, sequence, array or tensor
    (``tensor([1, None])``: "Could not infer dtype of NoneType")."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(reversed(item))
        elif not isinstance(item, (bool, int, float, complex, np.generic, np.ndarray, Tensor)):
            raise RuntimeError(f"Could not infer dtype of {type_name(item)}")


def _check_no_strings(data):
    """PyTorch's errors for strings in ``tensor``'s data. Its sizes follow the first element of each list down:
    a str found there is a dimension too many (ValueError: ``tensor(['a'])``); a str or bytes anywhere
    else is an invalid data type (TypeError: ``tensor('a')``, ``tensor([1, 'a'])``)."""
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
        if isinstance(first, str):
            raise ValueError("too many dimensions 'str'")
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
        if isinstance(item, (list, tuple)):
            pending.extend(reversed(item))


def _from_python(data, dtype):
    """A Python number or nested sequence of numbers as an array: PyTorch's dtype for it, or ``dtype``."""
    if data is None or isinstance(data, (dict, set)):
        raise RuntimeError(f"Could not infer dtype of {type_name(data)}")
    try:
        natural = dtypes.dtype_of_python(data)        # also refuses data that is not numbers
    except TypeError:
        if _has_huge_int(data):                       # NumPy reads ints beyond 64 bits as objects
            if dtype is not None and dtypes.kind_of(dtype) in "fcb":   # PyTorch reads each as a double there
                return _from_python(_huge_ints_as_floats(data), dtype)
            if dtype is not None and dtype.kind in "iu":
                return np.asarray(_into_integer(data, dtype), dtype=dtype)   # (raises, in PyTorch's order)
            raise ValueError("Overflow when unpacking long long") from None
        _check_no_strings(data)
        _check_no_unknown_elements(data)
        raise
    found = _element_types(data) if isinstance(data, (list, tuple)) else {type(data)}
    numpy_scalars = any(issubclass(t, np.generic) for t in found)
    if numpy_scalars and isinstance(data, (list, tuple)):
        natural = _with_numpy_scalars(found, natural)
    dtype = natural if dtype is None else dtype
    if dtype.kind in "biu" and numpy_scalars or dtype.kind in "iu" and natural.kind == "f":
        return _numbers_into_integer(data, dtype, found)
    if dtype.kind in "iu" and natural.kind in "fc" and not np.isfinite(np.asarray(data, dtype=natural)).all():
        raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")
    if (dtype in dtypes.LOW_PRECISION or dtype in dtypes.FLOAT8) and natural.kind != "c":   # PyTorch's rounding
        try:
            values = np.asarray(data, dtype=natural)
        except OverflowError:                         # ints in [2**63, 2**64): read as doubles, as PyTorch reads them
            values = np.asarray(_huge_ints_as_floats(data), dtype=np.float64)
        with np.errstate(over="ignore"):
            return dtypes.cast_array(values, dtype)
    # straight to the asked dtype: 0.1 through float32 first would lose float64's digits
    try:
        return np.asarray(data, dtype=dtype)
    except OverflowError:                             # an int out of an integer dtype's range: PyTorch's rule for each
        if dtype.kind in "iu":                        # (a negative one wraps into uint8/16/32, others are refused)
            return np.asarray(_into_integer(data, dtype), dtype=dtype)
        if _has_huge_int(data):
            raise ValueError("Overflow when unpacking long long") from None
        raise RuntimeError(f"value cannot be converted to type {dtype} without overflow") from None


def _has_huge_int(data, limit=2 ** 63):
    """Whether a Python int outside [-2**63, limit) (no signed 64-bit integer holds it, by default) occurs in
    ``data`` (a number or nested sequence)."""
    if isinstance(data, (list, tuple)):
        return any(_has_huge_int(item, limit) for item in data)
    return isinstance(data, int) and not -2 ** 63 <= data < limit


def _huge_ints_as_floats(data):
    """``data`` with each int beyond 64 bits as a Python float (for a floating or bool target)."""
    if isinstance(data, (list, tuple)):
        return [_huge_ints_as_floats(item) for item in data]
    return float(data) if isinstance(data, int) and not isinstance(data, bool) and _has_huge_int(data) else data


def _numbers_into_integer(data, dtype, found):
    """``_into_integer`` of ``data``, whose element types are ``found``: Python floats alone (the common case) are
    checked against the dtype's range and truncated by NumPy at C speed, which is the same rule; other mixes (ints
    next to floats, NumPy scalars, uint64) number by number."""
    if found <= {float, list, tuple} and dtype != np.uint64:
        values = np.asarray(data, dtype=np.float64)
        info = np.iinfo(dtype)
        if not ((values >= info.min) & (values <= info.max)).all():       # (NaN and infinities fail too)
            raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")
        return values.astype(dtype)
    return np.asarray(_into_integer(data, dtype), dtype=dtype)


def _into_integer(data, dtype):
    """``data`` (Python numbers, nested) as PyTorch converts each number into the integer ``dtype``, in order
    (c10's checked_convert): a float must lie within the dtype's range (NaN and infinities do not) and is
    truncated; an int must lie within it too, except that an unsigned dtype takes one down to -max in two's
    complement (-1 is 255 in uint8); uint64 reads a C unsigned integer (a float: TypeError; a negative int:
    OverflowError). A NumPy scalar must be an integer (np.float32, np.bool_: TypeError; uint64 takes none), but
    np.float64, which is a Python float; a bool dtype takes any number but NumPy's non-double floats and complex."""
    if isinstance(data, (list, tuple)):
        return [_into_integer(item, dtype) for item in data]
    if isinstance(data, np.generic) and not isinstance(data, float):
        if dtype == np.uint64:
            raise TypeError("an integer is required")
        if dtype.kind != "b" or isinstance(data, (np.floating, np.complexfloating)):
            data = operator.index(data)               # (its TypeError: "'numpy.float32' object cannot be ...")
    if dtype.kind == "b" or isinstance(data, bool) or not isinstance(data, (int, float)):
        return data
    info = np.iinfo(dtype)
    if dtype == np.uint64:
        if isinstance(data, float):
            raise TypeError("an integer is required")
        if data < 0 or data > info.max:
            raise OverflowError("can't convert negative int to unsigned" if data < 0 else "int too big to convert")
        return data
    if isinstance(data, float):
        if not info.min <= data <= info.max:
            raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")
        return int(data)
    if not -2 ** 63 <= data < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if not (-info.max if info.min == 0 else info.min) <= data <= info.max:
        raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")
    return data % (int(info.max) + 1) if data < 0 and info.min == 0 else data


def _element_types(data):
    """The types of the elements of a nested sequence (a set per sequence: fast for long flat lists)."""
    found, pending = set(), [data]
    while pending:
        items = pending.pop()
        types = set(map(type, items))
        found |= types
        if list in types or tuple in types:
            pending.extend(item for item in items if isinstance(item, (list, tuple)))
    return found


def _with_numpy_scalars(found, natural):
    """PyTorch's dtype for a nested sequence whose element types are ``found``, holding NumPy scalars: each NumPy
    scalar counts with its own dtype (``[np.float64(1), 2]`` is float64), promoted with the Python numbers' dtypes;
    ``natural`` (the Python numbers' dtype) where there are none."""
    if not any(issubclass(t, np.generic) for t in found):
        return natural
    python = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: dtypes.get_default_dtype(),
              complex: dtypes.default_complex()}
    result = None
    for t in found - {list, tuple}:
        dtype = np.dtype(t) if issubclass(t, np.generic) else python.get(t)
        if dtype is None:                 # (another element type: the plain rule)
            return natural
        result = dtype if result is None else dtypes.promote_types(result, dtype)
    return result


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an ndarray (or Tensor) when no conversion is needed."""
    check_device(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype == np.dtype(dtype)):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == np.dtype(dtype)):
        return Tensor(tensor_array(data, "as_tensor"))
    return tensor(data, dtype=dtype)


def from_numpy(array):
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor(tensor_array(array, "from_numpy"))


def _filled(fill, shape, dtype, device, requires_grad):
    fill = fill._data if isinstance(fill, Tensor) else fill
    fill = dtypes.fitted_scalar(fill, dtype, filling=math.prod(shape))    # -5 wraps into uint8, 300 is refused
    return new_tensor(np.full(shape, fill, dtype=dtype), device, requires_grad)


def _positional_or_keyword(size, keyword, fname):
    """The size of ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))`` (``keyword``: the other keywords)."""
    if "size" in keyword:
        if size:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        size = (keyword.pop("size"),)
    if keyword:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{next(iter(keyword))}'")
    return size_of(size, fname)


@creation_keywords
def zeros(*size, dtype=None, device=None, requires_grad=False, **size_keyword):
    return _filled(0, _positional_or_keyword(size, size_keyword, "zeros"), dtype_or(dtype), device, requires_grad)


@creation_keywords
def ones(*size, dtype=None, device=None, requires_grad=False, **size_keyword):
    return _filled(1, _positional_or_keyword(size, size_keyword, "ones"), dtype_or(dtype), device, requires_grad)


@creation_keywords
def empty(*size, dtype=None, device=None, requires_grad=False, **size_keyword):
    shape = _positional_or_keyword(size, size_keyword, "empty")
    return new_tensor(np.empty(shape, dtype=dtype_or(dtype)), device, requires_grad)


def fill_dtype(fill_value):
    """The dtype ``full`` gives a fill value: PyTorch's for a Python number, a NumPy scalar's own."""
    return fill_value.dtype if isinstance(fill_value, np.generic) else dtypes.dtype_of_python(fill_value)


@creation_keywords
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type_name(size)}")
    if not is_number(fill_value) and not (isinstance(fill_value, Tensor) and fill_value.ndim == 0):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {type_name(fill_value)}")
    return _filled(fill_value, size_of((size,), "full"), dtype_or(dtype, fill_dtype(fill_value)), device, requires_grad)


@creation_keywords
@takes_tensors("input")
def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    return _filled(0, input.shape, dtype_or(dtype, input.dtype), device, requires_grad)


@creation_keywords
@takes_tensors("input")
def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    return _filled(1, input.shape, dtype_or(dtype, input.dtype), device, requires_grad)


@creation_keywords
@takes_tensors("input")
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _filled(fill_value, input.shape, dtype_or(dtype, input.dtype), device, requires_grad)


@creation_keywords
@takes_tensors("input")
def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    return new_tensor(np.empty(input.shape, dtype=dtype_or(dtype, input.dtype)), device, requires_grad)


def _bound(value, name, position):
    """An arange/linspace bound: a real number (or a one-element tensor) as a Python int or float."""
    if isinstance(value, Tensor):
        value = value.item()
    if is_number(value) and not isinstance(value, complex):
        return int(value) if is_int(value) or isinstance(value, (bool, np.bool_)) else float(value)
    raise TypeError(f"arange(): argument '{name}' (position {position}) must be Number, not {type_name(value)}")


@creation_keywords
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``arange(end)`` or ``arange(start, end, step)``: int64 for integer bounds, else the default float."""
    if end is None:
        start, end = 0, _bound(start, "end", 1)
    start, end, step = _bound(start, "start", 1), _bound(end, "end", 2), _bound(step, "step", 3)
    if dtype is not None and (np.dtype(dtype) in dtypes.LIMITED or dtypes.kind_of(dtype) == "c"):
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtypes.scalar_type_name(dtype)}\'')
    if not (step > 0 or step < 0):                         # (NaN too)
        raise RuntimeError("step must be nonzero")
    if not all(np.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    dtype = dtype_arg(dtype, "arange")
    if dtype.kind == "b":
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if dtype.kind in "iu":      # PyTorch truncates the bounds to integers first: arange(0.1, -7.9, -4) is [0, -4]
        start, end, step = int(start), int(end), int(step)
        if step == 0:                          # (a fractional step truncated to 0: PyTorch's ValueError)
            raise ValueError("step must be nonzero")
    count = int(np.ceil((end - start) / step))
    # start + i * step in PyTorch's accumulating type, then cast: int64 for integers (wrapping around in uint8 as
    # PyTorch does), float32 for the 16-bit floats (PyTorch's loop element by element; its vectorized loop, which
    # takes longer ranges, drifts from those values: docs/differences.md), float64 otherwise (NumPy's float32
    # arange would accumulate in float32)
    work = np.int64 if dtype.kind in "iu" else np.float32 if dtype in dtypes.LOW_PRECISION else np.float64
    values = np.asarray(start, work) + np.asarray(step, work) * np.arange(count, dtype=work)
    return new_tensor(dtypes.cast_array(values, dtype), device, requires_grad)


def _check_steps(steps, fname):
    steps = int_arg(steps, fname, "steps", 3)
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative, got steps={steps}")
    return steps


def _spaced(start, end, steps, dtype, fname):
    """PyTorch's ``steps`` evenly spaced values from ``start`` to ``end``: the first half counted up from
    ``start``, the second down from ``end`` (so both ends are exact), in ``dtype``'s own precision for floats and in
    float64, from bounds truncated to integers, for integer dtypes."""
    start, end = _numbers(start, end, fname)
    if isinstance(start, complex) or isinstance(end, complex) or dtype.kind == "c":
        return np.linspace(start, end, steps, dtype=dtype)
    if dtype.kind in "iub":
        start, end = int(start), int(end)
    work = np.dtype(np.float64 if dtype.kind in "iub" else dtype)
    start, end = (dtypes.cast_array(np.asarray(v), work)[()] for v in (start, end))   # (16 bits: through float32)
    if steps <= 1:
        return np.full(steps, start, dtype=work)
    return _from_both_ends(start, end, (end - start) / work.type(steps - 1), steps, work)


def _from_both_ends(start, end, step, steps, work):
    """``steps`` values a ``step`` apart, the first half counted up from ``start`` and the second down from ``end`` (so
    both ends are exact), as PyTorch's range kernels count them: step times a count, in ``work``'s arithmetic."""
    i = np.arange(steps)
    return np.where(i < steps // 2, start + step * i.astype(work), end - step * (steps - 1 - i).astype(work))


def _numbers(start, end, fname):
    """linspace's and logspace's bounds as numbers (a 0-d tensor's value); PyTorch's error for a tensor of more."""
    for value in (start, end):
        if isinstance(value, Tensor) and value.ndim != 0:
            dims = f"start with {start.ndim} dimension(s)" if isinstance(start, Tensor) and start.ndim else \
                f"start with 0 dimension(s) and end with {end.ndim} dimension(s)"
            raise RuntimeError(f"{fname} only supports 0-dimensional start and end tensors, but got {dims}.")
    return tuple(v.item() if isinstance(v, Tensor) else v for v in (start, end))


def _log_exponents(start, end, steps, dtype):
    """logspace's exponents for a real ``dtype`` as PyTorch computes them: the bounds in ``dtype`` (integers
    truncated, wrapping around), their difference taken in ``dtype`` (a float) or as C's int, the rest in float64,
    half counted up from ``start``, half down from ``end``. One step is ``start`` itself, unrounded."""
    if steps == 1:
        return np.array([start], dtype=np.float64)
    if dtype.kind in "iu":
        start, end = int(start), int(end)
    start, end = (dtypes.cast_array(np.asarray(v), dtype)[()] for v in (start, end))   # (16 bits: through float32)
    difference = np.float64(end) - np.float64(start) if dtype.kind in "iu" else np.float64(end - start)  # (C's int)
    return _from_both_ends(np.float64(start), np.float64(end), difference / (steps - 1), steps, np.float64)


def _spaced_dtype(start, end):
    """linspace's and logspace's dtype when none is given: the default complex dtype for a complex bound (a number
    or a 0-d tensor), else the default float dtype."""
    complex_bound = any(isinstance(v, complex) or isinstance(v, Tensor) and v.is_complex() for v in (start, end))
    return dtypes.default_complex() if complex_bound else dtypes.get_default_dtype()


@creation_keywords
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    steps = _check_steps(steps, "linspace")
    dtype = dtype_or(dtype, _spaced_dtype(start, end))
    if dtypes.kind_of(dtype) == "b":                 # (PyTorch has no bool linspace)
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    check_kernel("linspace", np.dtype(dtype))
    return new_tensor(_spaced(start, end, steps, dtype, "linspace").astype(dtype), device, requires_grad)


@creation_keywords
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``; for a real dtype, the exponents and powers in float64 (as PyTorch
    computes them: ``_log_exponents``), rounded to ``dtype`` at the end."""
    steps = _check_steps(steps, "logspace")
    dtype = dtype_or(dtype, _spaced_dtype(start, end))
    check_kernel("logspace", np.dtype(dtype))
    numbers = _numbers(start, end, "logspace")
    if dtypes.kind_of(dtype) == "c" or any(isinstance(v, complex) for v in numbers):
        exponents = _spaced(*numbers, steps, dtype, "logspace")
        with np.errstate(over="ignore"):
            return new_tensor((exponents.dtype.type(base) ** exponents).astype(dtype), device, requires_grad)
    if dtypes.kind_of(dtype) == "b":
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    with np.errstate(over="ignore", invalid="ignore"):
        powers = np.float64(base) ** _log_exponents(*numbers, steps, dtype)
        return new_tensor(dtypes.cast_array(powers, dtype), device, requires_grad)


@creation_keywords
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n x m`` (default ``n x n``) identity matrix."""
    n = int_arg(n, "eye", "n", 1)
    m = None if m is None else int_arg(m, "eye", "m", 2)
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    check_kernel("eye", np.dtype(dtype_or(dtype)))
    return new_tensor(np.eye(n, m, dtype=dtype_or(dtype)), device, requires_grad)


# --------------------------------------------------------------------------- keyword forms
def _end_keyword(arange_):
    """``arange(end=4)``: the keyword form of ``arange(4)`` (``start`` defaults to 0 when ``end`` is named)."""
    @functools.wraps(arange_)
    def arange_keywords(*args, **kwargs):
        if not args and "start" not in kwargs and "end" in kwargs:
            args = (0,)
        return arange_(*args, **kwargs)
    return arange_keywords


zeros, ones, empty = size_keyword(zeros), size_keyword(ones), size_keyword(empty)   # zeros(size=(2, 3))
arange = _end_keyword(arange)
