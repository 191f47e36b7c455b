"""dtypes: NumPy dtypes under PyTorch's names, and PyTorch's type-promotion rule.

minigrad stores every tensor in an ``np.ndarray``, so a dtype *is* a ``np.dtype``.
What differs from NumPy is promotion, which follows PyTorch:

* a Python float becomes float32 (NumPy would pick float64);
* int64 op float32 gives float32 (NumPy: float64): the float operand's dtype wins;
* a 0-dim tensor does not widen a dimensioned tensor of the same category
  (``float32[3] + float64[]`` is float32), as in PyTorch;
* complex next to float keeps the float's precision: ``float64[3] * complex64[]`` and
  ``float64[3] * 1j`` are complex128, ``float32[3] * 1j`` is complex64.
"""
import numpy as np

float16 = half = np.dtype(np.float16)
float32 = float = np.dtype(np.float32)
float64 = double = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = long = np.dtype(np.int64)
complex64 = cfloat = np.dtype(np.complex64)
complex128 = cdouble = np.dtype(np.complex128)
bool = np.dtype(np.bool_)  # noqa: A001 - PyTorch's name, shadows the builtin only in this module

_builtin_bool = type(True)
_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(dtype):
    global _default_float
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, got {dtype}")
    _default_float = dtype


def is_floating_point(dtype):
    return np.dtype(dtype).kind == "f"


def compute_dtype(dtype):
    """The dtype arithmetic runs in: float16 is computed in float32 (so x**2 cannot overflow and sums keep
    their digits), then cast back once at the end; every other dtype is computed as itself."""
    return float32 if np.dtype(dtype) == float16 else np.dtype(dtype)


_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                      "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble"}


def scalar_type_name(dtype):
    """PyTorch's name of a dtype in messages: ``Float`` for float32, ``Long`` for int64, ``ComplexFloat``..."""
    name = np.dtype(dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name)


def is_complex(dtype):
    return np.dtype(dtype).kind == "c"


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
    return {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}[dtype.kind]


def result_type(a, b):
    """PyTorch's result dtype for a binary op between two ndarrays (0-dim arrays count as 'scalars')."""
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    ca, cb = _category(da), _category(db)
    if ca != cb:
        (high, dh), (low, dl) = ((a, da), (b, db)) if ca > cb else ((b, db), (a, da))
        if dh.kind == "c" and dl.kind == "f":  # complex keeps the float's precision unless the float is 0-dim
            if high.ndim == 0 and low.ndim > 0:
                return complex_of(dl)
            if (high.ndim == 0) == (low.ndim == 0):
                return np.promote_types(dl, dh)
        return dh
    # Same category: a 0-dim operand does not widen a dimensioned one.
    if a.ndim == 0 and b.ndim > 0:
        return db
    if b.ndim == 0 and a.ndim > 0:
        return da
    return np.promote_types(da, db)


def scalar_dtype_for(tensor_dtype, value):
    """Dtype a Python scalar takes when combined with a tensor (PyTorch's 'wrapped number' rule)."""
    if isinstance(value, _builtin_bool):
        return tensor_dtype
    if isinstance(value, (int, np.integer)):
        return tensor_dtype if tensor_dtype.kind != "b" else int64
    if isinstance(value, (type(1.0), np.floating)):
        return tensor_dtype if tensor_dtype.kind in "fc" else _default_float
    if isinstance(value, (complex, np.complexfloating)):
        if tensor_dtype.kind == "c":
            return tensor_dtype
        return complex_of(tensor_dtype) if tensor_dtype.kind == "f" else default_complex()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")
