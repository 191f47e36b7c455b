"""The validation layer: arguments are converted or refused here, once, where they enter the public API.

Every check raises PyTorch's exception type with a message naming the function, the argument, what it got and
what was expected, e.g. ``exp(): argument 'input' (position 1) must be Tensor, not list``. Code behind the
boundary may then assume valid input (a Tensor has ``_data``, a size is a non-negative int, a dim is in range).

* ``type_name(value)``: PyTorch's way of naming a type in messages (``list``, ``numpy.ndarray``).
* ``takes_tensors(*names, numbers=(), optional=())``: decorator; the named parameters must be Tensors (those in
  ``numbers`` may also be operands minigrad converts: Python/NumPy numbers and ndarrays; a parameter whose
  default is None, or listed in ``optional``, may be None).
* ``int_arg``, ``float_arg``: one integer / real-number argument; ``size_param``: a module's size argument.
* ``size_arg``: a size (``zeros(2, 3)``, ``zeros((2, 3))``) as a tuple of non-negative ints.
* ``dtype_arg``: a dtype argument as a NumPy dtype.
"""
import functools
import inspect
import numbers

import numpy as np

from . import dtypes

# dtypes a tensor can hold: PyTorch refuses NumPy's object, string, bytes, datetime and void arrays
TENSOR_KINDS = "biufc"   # and bfloat16, whose NumPy kind is 'V' (minigrad.dtypes.kind)


def type_name(value):
    """``list``, ``NoneType``, ``numpy.ndarray``, ``numpy.int64``: the name PyTorch prints for a value's type."""
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__.split('.')[0]}.{cls.__name__}"


def is_number(value):
    """A Python or NumPy scalar number (bool included), as PyTorch's ``Number`` arguments take."""
    return isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, _tensor.Tensor)


def is_int(value):
    """An integer that is not a bool: Python int, NumPy integer."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_index(value):
    """``value`` as an int if it is one: a Python or NumPy integer (not a bool) or a 0-d integer Tensor, as
    PyTorch takes them for sizes and indices; None otherwise."""
    if is_int(value):
        return int(value)
    if isinstance(value, _tensor.Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value._data)
    return None


def check_tensor(value, fname, name, position, numbers_ok=False):
    """``value`` if it is a Tensor (or, with ``numbers_ok``, an operand minigrad converts: a number or an
    ndarray); TypeError naming the argument otherwise."""
    if isinstance(value, _tensor.Tensor) or (numbers_ok and (is_number(value) or isinstance(value, np.ndarray))):
        return value
    where = f"argument '{name}'" + (f" (position {position})" if position else "")
    expected = "Tensor or Number" if numbers_ok else "Tensor"
    raise TypeError(f"{fname}(): {where} must be {expected}, not {type_name(value)}")


def takes_tensors(*names, numbers=(), optional=(), fname=None):
    """Decorator: the parameters ``names`` of the decorated function must be Tensors when it is called (those
    listed in ``numbers`` may also be numbers or ndarrays; None passes where None is the parameter's default or
    the parameter is listed in ``optional``)."""
    def decorate(fn):
        params = inspect.signature(fn).parameters
        # (name, index among the positional arguments or None for keyword-only, None allowed, numbers allowed)
        checked = []
        for i, (pname, p) in enumerate(params.items()):
            if pname in names or pname in numbers or pname in optional:
                positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                none_ok = p.default is None or pname in optional
                checked.append((pname, i if positional else None, none_ok, pname in numbers))
        label = fname or fn.__name__

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for pname, index, none_ok, numbers_ok in checked:
                if index is not None and index < len(args):
                    value, position = args[index], index + 1
                elif pname in kwargs:
                    value, position = kwargs[pname], None
                else:
                    continue
                if not (isinstance(value, _tensor.Tensor) or (value is None and none_ok)):
                    check_tensor(value, label, pname, position, numbers_ok)
            return fn(*args, **kwargs)
        # As a Tensor method the first argument is the tensor itself: when it is the only one checked, the
        # method can be the unchecked function (tensor.py binds it so).
        wrapper.checks_only_self = [(index, numbers_ok) for _, index, _, numbers_ok in checked] == [(0, False)]
        return wrapper
    return decorate


def refuses_complex(message, error=NotImplementedError):
    """Decorator (beneath ``takes_tensors``, so that Tensor methods bind it too): a complex tensor or a Python
    complex among the arguments raises ``error(message)``, PyTorch's refusal of an op it computes on real numbers
    only (where NumPy would order, round or pool complex numbers). ``{dtype}`` in ``message`` becomes PyTorch's
    name of the complex dtype ('ComplexDouble')."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for value in args + tuple(kwargs.values()):
                if isinstance(value, complex) or (isinstance(value, _tensor.Tensor) and value.dtype.kind == "c"):
                    dtype = np.complex128 if isinstance(value, complex) else value.dtype
                    raise error(message.format(dtype=dtypes.scalar_type_name(dtype)))
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def int_arg(value, fname, name, position=None):
    """``value`` as an int (``as_index``); TypeError otherwise."""
    index = as_index(value)
    if index is not None:
        return index
    where = f"argument '{name}'" + (f" (position {position})" if position else "")
    raise TypeError(f"{fname}(): {where} must be int, not {type_name(value)}")


def size_param(value, cls, name):
    """A module's size argument (``Linear``'s ``in_features``, ...): a non-negative Python or NumPy int (a 0-d
    integer tensor too, as PyTorch takes it), as an int. TypeError for floats, bools, strings; RuntimeError
    for a negative size, PyTorch's types."""
    size = as_index(value)
    if size is None:
        raise TypeError(f"{cls}: {name} must be an int, got {value!r} ({type_name(value)})")
    if size < 0:
        raise RuntimeError(f"{cls}: {name} must be non-negative, got {size} (Trying to create tensor with negative "
                           f"dimension {size})")
    return size


def float_arg(value, fname, name, position=None):
    """``value`` as a float (any real number, NaN included); TypeError otherwise."""
    if is_number(value) and not isinstance(value, complex):
        return float(value)
    if isinstance(value, _tensor.Tensor) and value.numel() == 1 and value.dtype.kind in "biuf":
        return float(value._data)
    where = f"argument '{name}'" + (f" (position {position})" if position else "")
    raise TypeError(f"{fname}(): {where} must be float, not {type_name(value)}")


def size_arg(size, fname, name="size", position=1):
    """The shape asked for by ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])`` (``size`` is the tuple of positional
    arguments), as a tuple of non-negative ints. Floats, bools and strings are TypeErrors; a negative size is
    PyTorch's RuntimeError."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if all(type(s) is int and s >= 0 for s in size):                  # the common case: nothing to convert or refuse
        return tuple(size)
    shape = []
    for pos, s in enumerate(size):
        index = as_index(s)
        if index is None and isinstance(s, bool) and len(size) > 1:  # PyTorch: zeros(2, True), not zeros(True)
            index = int(s)
        if index is not None:
            shape.append(index)
        elif len(size) == 1:
            raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of ints, not "
                            f"{type_name(s)}")
        else:
            raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, but found element of type "
                            f"{type_name(s)} at pos {pos}")
    negative = [s for s in shape if s < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {shape}")
    return tuple(shape)


def dtype_arg(dtype, fname, name="dtype"):
    """A dtype argument (a minigrad/NumPy dtype or a NumPy scalar type) as a NumPy dtype; strings such as
    ``"float32"`` are refused, as PyTorch refuses them."""
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        return np.dtype(dtype)
    raise TypeError(f"{fname}(): argument '{name}' must be minigrad.dtype, not {type_name(dtype)}")


def tensor_array(array, fname):
    """``array`` if its dtype can be a tensor's (numbers and bools, in the machine's byte order); PyTorch's TypeError
    or ValueError otherwise."""
    if array.dtype.kind not in TENSOR_KINDS and array.dtype not in dtypes.ML_FLOATS:
        raise TypeError(f"{fname}(): can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. The only "
                        "supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
                        "int8, uint64, uint32, uint16, uint8, and bool.")
    if not array.dtype.isnative:      # ('>i4' on a little-endian machine): a tensor's dtype has the native order
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion between "
                         "byte orders is currently not supported.")
    return array


# last: tensor.py imports the ops, which import the checks above (Tensor is looked up at call time)
from . import tensor as _tensor  # noqa: E402
