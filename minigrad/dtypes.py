"""dtypes: NumPy dtypes under PyTorch's names, and PyTorch's type-promotion rule.

minigrad stores every tensor in an ``np.ndarray``, so a dtype *is* a ``np.dtype``.
What differs from NumPy is promotion, which follows PyTorch:

* a Python float becomes float32 (NumPy would pick float64);
* int64 op float32 gives float32 (NumPy: float64): the float operand's dtype wins;
* a 0-dim tensor does not widen a dimensioned tensor of the same category
  (``float32[3] + float64[]`` is float32), as in PyTorch;
* complex next to float keeps the float's precision: ``float64[3] * complex64[]`` and
  ``float64[3] * 1j`` are complex128, ``float32[3] * 1j`` is complex64;
* bfloat16 next to float16 gives float32 (neither holds the other: bfloat16 has float32's range and
  8 bits of mantissa, float16 11 bits and a range up to 65504).

bfloat16 is ``ml_dtypes.bfloat16`` (NumPy has none). NumPy calls its kind ``'V'``, so code that asks
whether a dtype is floating goes through ``kind_of(dtype)``, which says ``'f'`` for it.

The "limited" dtypes, which PyTorch stores, converts and moves but hardly computes with, follow its rules:

* uint16, uint32 and uint64 (NumPy's) promote only with themselves and with a floating dtype: next to bool,
  another integer or a complex dtype, promotion raises RuntimeError (``LIMITED_UINTS``);
* the five float8 dtypes (ml_dtypes') promote only with themselves (``FLOAT8``), and ``cast_array`` converts to
  them as PyTorch does (``_to_float8``): through float32; float8_e4m3fn saturates at +-448 (infinities too),
  float8_e5m2 keeps the sign of NaN with the payload 0x7F, float8_e8m0fnu ignores the sign and rounds the
  exponent up from half a binade (ties included, except in float32's subnormal range).
"""
import warnings

import ml_dtypes
import numpy as np

_builtin_bool, _builtin_int, _builtin_float = type(True), type(1), type(1.0)

float16 = half = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = float = np.dtype(np.float32)
float64 = double = np.dtype(np.float64)
uint8 = np.dtype(np.uint8)
int8 = np.dtype(np.int8)
int16 = short = np.dtype(np.int16)
int32 = int = np.dtype(np.int32)  # noqa: A001 - PyTorch's names shadow the builtins only in this module
int64 = long = np.dtype(np.int64)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e4m3fnuz = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = np.dtype(ml_dtypes.float8_e5m2fnuz)
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
complex64 = cfloat = np.dtype(np.complex64)
complex128 = cdouble = np.dtype(np.complex128)
bool = np.dtype(np.bool_)  # noqa: A001
_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(dtype):
    global _default_float
    dtype = np.dtype(dtype)
    if dtype.kind != "f" and dtype != bfloat16:                 # float16, bfloat16, float32, float64 (as PyTorch)
        raise TypeError(f"only floating-point types are supported as the default type, got {dtype}")
    _default_float = dtype


FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
LIMITED_UINTS = (uint16, uint32, uint64)
ML_FLOATS = frozenset((bfloat16,) + FLOAT8)   # ml_dtypes' floats (NumPy's kind 'V' for most)
LOW_PRECISION = (float16, bfloat16)   # the 16-bit floats: stored as such, computed in float32
FLOAT32_64 = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
"""The common float dtypes, for a set test on the paths every op takes (float, differentiable, a Python float
next to one takes its dtype) before any general check."""


def kind_of(dtype):
    """NumPy's one-letter kind of ``dtype`` ('b', 'i', 'u', 'f', 'c'), with 'f' for bfloat16 (NumPy's 'V')."""
    if not isinstance(dtype, np.dtype):        # a scalar type, a name, ...: the common case is a dtype already
        dtype = np.dtype(dtype)
    kind = dtype.kind
    return "f" if kind == "V" and dtype in ML_FLOATS else kind   # ml_dtypes' floats are of 'V'oid kind


def is_floating_point(dtype):
    return kind_of(dtype) == "f"


def is_differentiable(dtype):
    """Whether a tensor of ``dtype`` can require grad: the floating and complex dtypes."""
    return kind_of(dtype) in "fc"


def compute_dtype(dtype):
    """The dtype arithmetic runs in: float16 and bfloat16 are computed in float32 (so x**2 cannot overflow and
    sums keep their digits), then cast back once at the end; every other dtype is computed as itself."""
    return float32 if np.dtype(dtype) in LOW_PRECISION else np.dtype(dtype)


def cast_array(array, dtype, pooled=False):
    """``array`` as ``dtype`` with PyTorch's rounding. PyTorch converts float64 and integers to float16 or
    bfloat16 through float32 (two roundings, each to nearest even); NumPy's float64 -> float16 rounds once,
    which differs for a value within float32's half-ulp of a float16 tie, so those casts go through float32 (as
    ``ml_dtypes`` 0.7 converts float64 to bfloat16 in one rounding too). From bfloat16 (or a float8 dtype) to an
    integer dtype, the value is widened to float32 and truncated as C casts it, out of range and negative values
    into unsigned dtypes included (-2.5 -> 254 in uint8), as PyTorch (``ml_dtypes`` 0.7 saturates). A large
    float32 array is rounded to bfloat16 by a numba loop on its bits on the numba backend
    (``kernels/bfloat16_numba.py``: the same bits, 3-4x faster than ``ml_dtypes``' cast), into reused memory if
    ``pooled`` (a norm's output or input gradient: ``kernels/buffers.py``)."""
    dtype = np.dtype(dtype)
    if dtype.itemsize == 1 and dtype in FLOAT8 or array.dtype.itemsize == 1 and array.dtype in FLOAT8:
        with np.errstate(over="ignore", invalid="ignore"):
            return _float8_cast(array, dtype)
    if dtype in LIMITED_UINTS and kind_of(array.dtype) == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            return _float_to_uint(array, dtype)
    if dtype == bfloat16 and array.dtype == float32 and array.size >= NARROW_IN_NUMBA_FROM and _numba_backend():
        from .kernels.bfloat16_numba import narrow
        return narrow(array, bfloat16, pooled)
    with np.errstate(over="ignore", invalid="ignore"):     # overflow to inf, NaN to an integer: no warning, as PyTorch
        if dtype in LOW_PRECISION and array.dtype not in (float16, float32, bfloat16) and array.dtype.kind != "c":
            array = array.astype(float32)
        elif array.dtype == bfloat16 and dtype.kind in "iu":
            array = array.astype(float32)                  # exact; then truncated as C casts a float (-2.5 -> 254)
        return array.astype(dtype)


_C_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                 "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
                 "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "uint16": "uint16_t",
                 "uint32": "uint32_t", "uint64": "uint64_t", "float8_e4m3fn": "c10::Float8_e4m3fn",
                 "float8_e5m2": "c10::Float8_e5m2", "float8_e4m3fnuz": "c10::Float8_e4m3fnuz",
                 "float8_e5m2fnuz": "c10::Float8_e5m2fnuz", "float8_e8m0fnu": "c10::Float8_e8m0fnu"}


def fitted_scalar(value, dtype, filling=None):
    """``value`` (a Python or NumPy number, or a 0-d array) converted to ``dtype`` as PyTorch converts a fill value
    (``full``, ``fill_``, ``masked_fill``, ``x[i] = v``), or PyTorch's RuntimeError where it overflows: an integer
    outside the dtype's range (a negative one may wrap into an unsigned dtype, as -5 becomes 251 in uint8), a
    finite float beyond a float dtype's largest (infinities and NaN pass) or any NaN or infinity for an integer
    dtype, a complex number with an imaginary part for a real dtype. A bool dtype takes every number. Into a float8
    dtype PyTorch checks only ``full`` and ``fill_`` (``filling``: the number of elements they fill), and not a tensor
    of one element, which it fills by another path; its other writes convert the number as a tensor (saturating).
    uint16/32/64 check every write (index writes and ``where`` too, before refusing the op's dtype)."""
    dtype = np.dtype(dtype)
    number = np.asarray(value)
    kind, target = number.dtype.kind, kind_of(dtype)
    checked = dtype not in FLOAT8 or filling is not None and filling != 1
    if checked and target != "b" and kind != "b" and _overflows(number, kind, dtype, target):
        name = _C_TYPE_NAMES.get(dtype.name, dtype.name)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    values = np.asarray(real_values(number, dtype))
    with np.errstate(invalid="ignore", over="ignore"):
        return cast_array(values, dtype)        # (16-bit and float8: through float32, as PyTorch)


def _overflows(number, kind, dtype, target):
    """Whether the number ``number`` of NumPy kind ``kind`` overflows ``dtype`` (of minigrad kind ``target``)."""
    if kind == "c":           # a complex number: its imaginary part must be 0 for a real dtype, each part must fit
        if target != "c":
            return number.imag != 0 or _overflows(np.asarray(number.real), "f", dtype, target)
        part = float32 if dtype == complex64 else float64
        return _overflows(np.asarray(number.real), "f", part, "f") or _overflows(np.asarray(number.imag), "f", part, "f")
    if target == "c":
        dtype, target = (float32 if dtype == complex64 else float64), "f"
    if target in "iu":
        info = np.iinfo(dtype)
        if kind == "f":
            return not np.isfinite(number) or number < info.min or number > info.max
        v = _builtin_int(number)
        if target == "u" and v < 0:          # a negative integer wraps into an unsigned dtype unless too large
            return -v > info.max
        return v < info.min or v > info.max
    if dtype in ML_FLOATS:
        largest = _builtin_float(ml_dtypes.finfo(dtype).max)
    else:
        largest = _builtin_float(np.finfo(dtype).max)
    if kind == "f" and np.isnan(number):
        return False
    if kind == "f" and np.isinf(number):        # an infinity fits the dtypes that have one
        return dtype in FLOAT8 and dtype != float8_e5m2
    if dtype == float8_e8m0fnu and kind == "f":     # powers of two only: a float must be positive and in range
        return not 2.0 ** -127 <= _builtin_float(number) <= largest
    return abs(_builtin_float(number)) > largest


def real_values(array, dtype):
    """A complex ``array`` as PyTorch reads it into the real ``dtype``: its real part, or for bool whether each number
    is nonzero; other arrays as they are."""
    if array.dtype.kind != "c" or kind_of(dtype) == "c":
        return array
    return array != 0 if kind_of(dtype) == "b" else array.real


def cast_limited(array, dtype):
    """``array.astype(dtype)`` (no copy if it has ``dtype``), by ``cast_array``'s PyTorch rules when either dtype
    is a float8 or uint16/32/64 one, ``dtype`` a 16-bit float or ``array`` bfloat16 (a write into such a tensor:
    ``copy_``, ``fill_``).
    Complex values written into a real tensor keep their real part, with PyTorch's warning."""
    if array.dtype.kind == "c" and kind_of(dtype) not in "bc":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        array = array.real
    if array.dtype in LIMITED or dtype in LIMITED or dtype in LOW_PRECISION or array.dtype == bfloat16:
        return array if array.dtype == dtype else cast_array(array, dtype)    # (16-bit floats: through float32)
    return array.astype(dtype, copy=False)


def _float8_to_float32(array):
    """float8 values as float32, exactly, with PyTorch's NaN bits: e4m3fn's NaN keeps its sign and mantissa at the
    top of float32's, e5m2's goes through float16 (quieted), the fnuz and e8m0fnu NaN is float32's 0x7F800001."""
    out = array.astype(float32)
    nan = np.isnan(out)
    if not nan.any():
        return out
    b = array.view(np.uint8).astype(np.uint32)
    if array.dtype == float8_e4m3fn:
        bits = ((b & 0x80) << 24) | 0x7F800000 | ((b & 0x7) << 20)
    elif array.dtype == float8_e5m2:
        bits = ((b & 0x80) << 24) | 0x7F800000 | (((b & 0x3) << 8 | 0x200) << 13)
    else:
        bits = np.full(b.shape, 0x7F800001, np.uint32)
    return np.where(nan, bits.astype(np.uint32).view(float32), out)


def _float8_cast(array, dtype):
    """A cast from or to a float8 dtype, as PyTorch's: through float32 (exact from float8)."""
    if array.dtype == dtype:
        return array.copy()
    if array.dtype in FLOAT8:
        wide = _float8_to_float32(array)
        if dtype == float32:
            return wide
        out = cast_array(wide, dtype)
        if dtype.kind in "iu" and array.dtype not in (float8_e4m3fn, float8_e5m2):
            return np.where(np.isnan(wide), dtype.type(0), out)     # the fnuz and e8m0fnu NaN is 0 as an integer
        nan = np.isnan(wide)
        if dtype in (float16, bfloat16) and nan.any():    # PyTorch's NaN bits: float16 quiet with the top payload,
            bits = wide.view(np.uint32)                      # bfloat16 always 0x7FC0
            nan_bits = (((bits >> 16) & 0x8000) | 0x7E00 | ((bits & 0x7FFFFF) >> 13)) if dtype == float16 else 0x7FC0
            out = np.where(nan, np.asarray(nan_bits).astype(np.uint16), out.view(np.uint16)).astype(np.uint16)
            out = out.view(dtype)
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        wide = array.astype(float32) if array.dtype != float32 else array
    if dtype == float8_e8m0fnu:
        bits = wide.view(np.uint32) & np.uint32(0x7FFFFFFF)          # the sign is dropped
        exponent, mantissa = bits >> np.uint32(23), bits & np.uint32(0x7FFFFF)
        half = np.uint32(0x400000)
        up = (mantissa > half) | ((mantissa == half) & (exponent > 0))
        out = np.where(exponent == 255, np.uint32(255), np.minimum(exponent + up, np.uint32(255)))
        return out.astype(np.uint8).view(dtype)
    nan = np.isnan(wide)
    if dtype == float8_e4m3fn:                                        # saturates, infinities included
        wide = np.where(nan, wide, np.clip(wide, -448.0, 448.0).astype(float32))
    out = wide.astype(dtype)
    if dtype in (float8_e4m3fn, float8_e5m2) and nan.any():           # NaN: sign kept, payload 0x7F
        sign = (wide.view(np.uint32) >> np.uint32(24)).astype(np.uint8) & np.uint8(0x80)
        out = np.where(nan, sign | np.uint8(0x7F), out.view(np.uint8)).astype(np.uint8).view(dtype)
    return out


_INT64_MIN = np.int64(-(1 << 63))


def _float_to_int64(array):
    """Floats truncated to int64; NaN, infinities and values out of range become int64's minimum (x86's rule,
    which PyTorch's CPU casts follow)."""
    array = array.astype(float64)
    ok = np.isfinite(array) & (array >= -2.0 ** 63) & (array < 2.0 ** 63)
    return np.where(ok, np.where(ok, array, 0.0).astype(np.int64), _INT64_MIN)


def _float_to_uint(array, dtype):
    """Floats to uint16/32/64 as PyTorch converts them: truncated, and a negative value wraps around (-1.5 is the
    type's maximum); out of range, to uint16 through int32 (0), to uint64 from 2**63 up by subtracting 2**63 first.
    (PyTorch's uint32 results out of range depend on its loop; these are its vectorized loop's.)"""
    array = array.astype(float64) if array.dtype != float64 else array
    if dtype == uint16:                          # through int32: out of its range, int32's minimum (0 here)
        ok = (array >= -2.0 ** 31) & (array < 2.0 ** 31)
        return np.where(ok, _float_to_int64(array), 0).astype(dtype)
    if dtype == uint32:     # out of [-2**31, 2**32): 0 above, 2**31 below and for NaN (PyTorch's vectorized loop)
        low, high = np.isnan(array) | (array < -2.0 ** 31), array >= 2.0 ** 32
        out = _float_to_int64(np.where(low | high, 0.0, array)).astype(dtype)
        return np.where(low, uint32.type(1 << 31), out)
    high = array >= 2.0 ** 63
    low = _float_to_int64(array).view(np.uint64)
    upper = _float_to_int64(array - 2.0 ** 63).view(np.uint64) ^ np.uint64(1 << 63)
    return np.where(high, upper, low)


def as_strided(array, shape=None, strides=None, **kwargs):
    """``np.lib.stride_tricks.as_strided``, for float8_e5m2 arrays too (NumPy's array interface, which it goes
    through, names that dtype '<f1' and cannot read it back): those are strided as their uint8 bits."""
    if array.dtype == float8_e5m2:
        return np.lib.stride_tricks.as_strided(array.view(np.uint8), shape, strides, **kwargs).view(float8_e5m2)
    return np.lib.stride_tricks.as_strided(array, shape, strides, **kwargs)


NARROW_IN_NUMBA_FROM = 1 << 15
"""Elements from which ``cast_array`` rounds float32 to bfloat16 with numba (below, ``ml_dtypes`` is as fast)."""


def _numba_backend():
    from .kernels import get_backend
    return get_backend() == "numba"


def cast_like(array, dtype, pooled=False):
    """``array`` itself if it has ``dtype``, else ``cast_array(array, dtype, pooled)``: a kernel's float32 result
    back in its tensor's dtype (rounded once, for a 16-bit tensor)."""
    return array if array.dtype == np.dtype(dtype) else cast_array(array, dtype, pooled)


_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
                      "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                      "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                      "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
                      "float8_e8m0fnu": "Float8_e8m0fnu"}


# the C++ type names PyTorch's messages print for its dtypes ("Expected out tensor to have dtype long int")
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
            "uint16": "short unsigned int", "uint32": "unsigned int", "uint64": "long unsigned int"}


def c_name(dtype):
    """PyTorch's C++ name for ``dtype`` in its messages (``unsigned char`` for uint8); the dtype's own otherwise."""
    return _C_NAMES.get(str(dtype), str(dtype))


def cast_refused(result, target):
    """PyTorch's error for a result of dtype ``result`` written into a tensor of dtype ``target`` that cannot hold
    it (a float into an integer tensor, a complex number into a real one)."""
    return RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the desired output type "
                        f"{scalar_type_name(target)}")


def scalar_type_name(dtype):
    """PyTorch's name of a dtype in messages: ``Float`` for float32, ``Long`` for int64, ``ComplexFloat``..."""
    name = np.dtype(dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name)


def is_complex(dtype):
    return kind_of(dtype) == "c"


def complex_of(dtype):
    """The complex dtype whose parts have ``dtype``'s precision (float64 -> complex128; smaller -> complex64).
    A float8 dtype has none (PyTorch's RuntimeError)."""
    if np.dtype(dtype) in FLOAT8:
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(dtype)}")
    return complex128 if np.dtype(dtype) in (float64, complex128) else complex64


def default_complex():
    """The complex dtype matching the default float dtype, as PyTorch gives Python complex numbers."""
    return complex_of(_default_float)


def dtype_of_python(value):
    """The dtype PyTorch gives a Python scalar or nested list of them."""
    arr = np.asarray(value)
    if arr.dtype.kind == "c":
        return default_complex()
    if arr.dtype.kind == "f":
        return _default_float
    if arr.dtype.kind in "iu":
        return int64
    if arr.dtype.kind == "b":
        return bool
    raise TypeError(f"cannot make a tensor from data of type {type(value).__name__} (NumPy dtype {arr.dtype})")


def _category(dtype):
    return {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}[kind_of(dtype)]


def _promote_within(d1, d2):
    """NumPy's promotion within one category, and PyTorch's for bfloat16, which NumPy cannot promote:
    bfloat16 with float16 is float32; with float32 or float64, the wider one; with complex, the complex
    type holding float32's precision at least."""
    if bfloat16 not in (d1, d2) or d1 == d2:
        return np.promote_types(d1, d2)
    other = d2 if d1 == bfloat16 else d1
    if other == float16:
        return float32
    return other


_NUMBERS = (_builtin_bool, _builtin_int, _builtin_float, complex)
LIMITED = _LIMITED = frozenset(FLOAT8 + LIMITED_UINTS)   # PyTorch's "limited support" dtypes
NOT_PLAIN = frozenset(LOW_PRECISION + FLOAT8 + LIMITED_UINTS + (np.dtype("Q"), np.dtype("L")))
"""The dtypes (uint64 has two, 'L' and 'Q', equal and hashed alike) of the arrays whose Functions go through a wrapper:
low_precision.py's for the 16-bit floats, limited_dtypes.py's for the limited dtypes (``Function.apply``: one set
lookup per tensor argument)."""


def check_promotable(d1, d2):
    """PyTorch's RuntimeError where it does not promote two different dtypes: a float8 dtype with any other, or
    uint16/32/64 with any but a floating dtype."""
    if d1 == d2 or (d1 not in _LIMITED and d2 not in _LIMITED):
        return
    if d1 in FLOAT8 or d2 in FLOAT8:
        family = "Float8 Types"
    elif kind_of(d1) == "f" or kind_of(d2) == "f":
        return
    else:
        family = "uint16, uint32, uint64 types"
    raise RuntimeError(f"Promotion for {family} is not supported, attempted to promote {scalar_type_name(d1)} and "
                       f"{scalar_type_name(d2)}")


def _python_number_dtype(value):
    """The dtype a lone Python number gets: bool, int64, the default float or the default complex."""
    if isinstance(value, _builtin_bool):
        return bool
    if isinstance(value, _builtin_int):
        return int64
    return _default_float if isinstance(value, _builtin_float) else default_complex()


def result_type(a, b):
    """PyTorch's result dtype for a binary op between ndarrays or Tensors (0-dim ones count as 'scalars') or
    Python numbers (``mg.result_type(tensor, 2.5)``), as ``torch.result_type``."""
    if type(a) in _NUMBERS or type(b) in _NUMBERS or not hasattr(a, "dtype") or not hasattr(b, "dtype"):
        return _result_type_with_number(a, b)
    if a.dtype == b.dtype:
        return a.dtype
    return result_type_of(a, b)


def _combine_categories(higher, lower):
    """PyTorch's combination of two groups' dtypes, ``higher`` the group that takes precedence (dimensioned tensors
    over 0-dim ones): ``lower`` counts only where its category is above ``higher``'s (then a float ``higher`` keeps
    its precision in complex)."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    high, low = kind_of(higher), kind_of(lower)
    if high == "c":
        return higher
    if low == "c":
        return complex_of(higher) if high == "f" else lower
    if high == "f":
        return higher
    if high == "b" or low == "f":
        return promote_types(higher, lower)
    return higher


def result_type_of(*operands):
    """PyTorch's result dtype of an op on several tensors or ndarrays: the dimensioned ones' common dtype, which a
    0-dim one widens only from a higher category (``where(mask, half 0-dim, float 0-dim)`` is float32)."""
    groups = [None, None]          # the dimensioned operands' common dtype, the 0-dim ones'
    for o in operands:
        g = 0 if o.ndim else 1
        groups[g] = o.dtype if groups[g] is None else promote_types(groups[g], o.dtype)
    return _combine_categories(*groups)


def scalar_dtype_for(tensor_dtype, value):
    """Dtype a Python scalar takes when combined with a tensor (PyTorch's 'wrapped number' rule)."""
    if isinstance(value, _builtin_bool):
        return tensor_dtype
    tensor_kind = kind_of(tensor_dtype)
    if isinstance(value, (_builtin_int, np.integer)):
        return tensor_dtype if tensor_kind != "b" else int64
    if isinstance(value, (_builtin_float, np.floating)):
        return tensor_dtype if tensor_kind in "fc" else _default_float
    if isinstance(value, (complex, np.complexfloating)):
        if tensor_kind == "c":
            return tensor_dtype
        return complex_of(tensor_dtype) if tensor_kind == "f" else default_complex()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def _result_type_with_number(a, b):
    """``result_type`` where one operand or both are Python numbers: a number takes the tensor's dtype unless
    it is of a higher category (``scalar_dtype_for``); two numbers give the higher one's default dtype."""
    for x in (a, b):
        if type(x) not in _NUMBERS and not hasattr(x, "dtype"):
            raise TypeError(f"result_type() received an invalid combination of arguments: expected Tensors or "
                            f"numbers, got {type(x).__name__}")
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        da, db = _python_number_dtype(a), _python_number_dtype(b)
        return da if _category(da) >= _category(db) else db
    tensor, number = (a, b) if type(b) in _NUMBERS else (b, a)
    return scalar_dtype_for(np.dtype(tensor.dtype), number)


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to, by PyTorch's rule: within a category
    (bool < integers < floats < complex) NumPy's, across categories the higher one's dtype (``int64`` and
    ``float16`` give ``float16``, where NumPy gives float64), complex widened to hold the float's precision."""
    d1, d2 = np.dtype(type1), np.dtype(type2)
    check_promotable(d1, d2)
    c1, c2 = _category(d1), _category(d2)
    if c1 == c2:
        return _promote_within(d1, d2)
    (high, ch), (low, cl) = ((d1, c1), (d2, c2)) if c1 > c2 else ((d2, c2), (d1, c1))
    if high.kind == "c" and kind_of(low) == "f":
        return _promote_within(low, high)
    return high


def can_cast(from_, to):
    """Whether PyTorch's type promotion allows casting ``from_`` to ``to`` (an op's result written into a
    tensor of dtype ``to``): never to a lower category (complex to real, float to integer, integer to bool)."""
    return _category(np.dtype(from_)) <= _category(np.dtype(to))


def _name(dtype):
    return np.dtype(dtype).name


_FLOAT8_EPS = {"float8_e5m2fnuz": 0.125}   # PyTorch's value; ml_dtypes' is 0.25, the spacing above 1


def float_info(dtype):
    """NumPy's ``finfo`` of a float dtype (NumPy scalars of that dtype), bfloat16 and float8 included (ml_dtypes'
    finfo: NumPy's own refuses them). The library's code asks this one; users ask ``finfo`` (PyTorch's names)."""
    return ml_dtypes.finfo(dtype)

class finfo:
    """Machine limits of a floating-point dtype (default: the default dtype), with PyTorch's attribute names:
    ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype`` (its name).
    A complex dtype gives its parts' float."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        dtype = _default_float if type is None else np.dtype(type)
        if dtype.kind == "c":
            dtype = np.dtype(f"f{dtype.itemsize // 2}")
        if kind_of(dtype) != "f":
            raise TypeError(f"minigrad.finfo() requires a floating point input type. Use minigrad.iinfo to handle "
                            f"'minigrad.finfo' (got {dtype})")
        info = float_info(dtype)
        self.bits = info.bits
        self.eps = _builtin_float(_FLOAT8_EPS.get(dtype.name, info.eps))
        self.max = _builtin_float(info.max)
        self.min = _builtin_float(info.min)
        self.tiny = self.smallest_normal = _builtin_float(info.smallest_normal)
        # 0.001 for float16 (NumPy rounds it to float16); 1 for the float8 dtypes, whose significands hold no
        # whole decimal digit (ml_dtypes says 0.1 there)
        self.resolution = 1.0 if dtype in FLOAT8 else 10.0 ** -info.precision
        self.dtype = _name(dtype)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype with PyTorch's attribute names: ``bits``, ``max``, ``min``, ``dtype``."""

    def __init__(self, type):  # noqa: A002
        dtype = np.dtype(type)
        if dtype.kind not in "iu":
            raise TypeError(f"minigrad.{_name(dtype)} is not supported by minigrad.iinfo")
        info = np.iinfo(dtype)
        self.bits, self.max, self.min, self.dtype = info.bits, _builtin_int(info.max), _builtin_int(info.min), _name(dtype)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
