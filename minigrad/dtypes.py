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
"""
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
complex64 = cfloat = np.dtype(np.complex64)
complex128 = cdouble = np.dtype(np.complex128)
bool = np.dtype(np.bool_)  # noqa: A001
_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(dtype):
    global _default_float
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, got {dtype}")
    _default_float = dtype


LOW_PRECISION = (float16, bfloat16)   # the 16-bit floats: stored as such, computed in float32
FLOAT32_64 = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
"""The common float dtypes, for a set test on the paths every op takes (float, differentiable, a Python float
next to one takes its dtype) before any general check."""


def kind_of(dtype):
    """NumPy's one-letter kind of ``dtype`` ('b', 'i', 'u', 'f', 'c'), with 'f' for bfloat16 (NumPy's 'V')."""
    if not isinstance(dtype, np.dtype):        # a scalar type, a name, ...: the common case is a dtype already
        dtype = np.dtype(dtype)
    kind = dtype.kind
    return "f" if kind == "V" and dtype == bfloat16 else kind   # bfloat16 is ml_dtypes' 'V'oid-kind float


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
    which differs for a value within float32's half-ulp of a float16 tie, so that cast goes through float32.
    (``ml_dtypes`` already converts to bfloat16 through float32.) A large float32 array is rounded to bfloat16
    by a numba loop on its bits on the numba backend (``kernels/bfloat16_numba.py``: the same bits, 3-4x faster
    than ``ml_dtypes``' cast), into reused memory if ``pooled`` (a norm's output or input gradient:
    ``kernels/buffers.py``)."""
    dtype = np.dtype(dtype)
    if dtype == bfloat16 and array.dtype == float32 and array.size >= NARROW_IN_NUMBA_FROM and _numba_backend():
        from .kernels.bfloat16_numba import narrow
        return narrow(array, bfloat16, pooled)
    with np.errstate(over="ignore", invalid="ignore"):     # overflow to inf, NaN to an integer: no warning, as PyTorch
        if dtype == float16 and array.dtype not in (float16, float32, bfloat16) and array.dtype.kind != "c":
            array = array.astype(float32)
        return array.astype(dtype)


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
                      "complex128": "ComplexDouble"}


def scalar_type_name(dtype):
    """PyTorch's name of a dtype in messages: ``Float`` for float32, ``Long`` for int64, ``ComplexFloat``..."""
    name = np.dtype(dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name)


def is_complex(dtype):
    return kind_of(dtype) == "c"


def complex_of(dtype):
    """The complex dtype whose parts have ``dtype``'s precision (float64 -> complex128; smaller -> complex64)."""
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
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    ca, cb = _category(da), _category(db)
    if ca != cb:
        (high, dh), (low, dl) = ((a, da), (b, db)) if ca > cb else ((b, db), (a, da))
        if dh.kind == "c" and kind_of(dl) == "f":  # complex keeps the float's precision unless the float is 0-dim
            if high.ndim == 0 and low.ndim > 0:
                return complex_of(dl)
            if (high.ndim == 0) == (low.ndim == 0):
                return _promote_within(dl, dh)
        return dh
    # Same category: a 0-dim operand does not widen a dimensioned one.
    if a.ndim == 0 and b.ndim > 0:
        return db
    if b.ndim == 0 and a.ndim > 0:
        return da
    return _promote_within(da, db)


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
        info = ml_dtypes.finfo(dtype) if dtype == bfloat16 else np.finfo(dtype)
        self.bits = info.bits
        self.eps = _builtin_float(info.eps)
        self.max = _builtin_float(info.max)
        self.min = _builtin_float(info.min)
        self.tiny = self.smallest_normal = _builtin_float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision      # 0.001 for float16 (NumPy rounds it to float16)
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
