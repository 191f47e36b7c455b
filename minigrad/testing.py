"""``minigrad.testing``: PyTorch's ``assert_close`` for tests.

Two values are close where |actual - expected| <= atol + rtol * |expected|, elementwise; infinities must be
equal (same sign), NaN equals NaN only with ``equal_nan``. Without explicit tolerances both come from the dtype
(PyTorch's table ``DEFAULT_TOLERANCES``: (rtol, atol)); integers and bools compare exactly. Tensors (and NumPy
arrays) must first agree in shape and, with ``check_dtype``, dtype; Python numbers in type. Lists and tuples are
compared item by item, dicts key by key, and a failure names the item.
"""
import numbers

import numpy as np

from .dtypes import result_type
from .tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) per dtype, PyTorch's values; dtypes not listed (integers, bool) compare exactly
DEFAULT_TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}


def _default_tolerances(*dtypes):
    """The loosest of the dtypes' default (rtol, atol)."""
    pairs = [DEFAULT_TOLERANCES.get(np.dtype(d), (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _is_number(value):
    return isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, Tensor)


def _as_array(value):
    """A Tensor or ndarray as an ndarray; None for anything else."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, np.ndarray):
        return value
    return None


def _check_tolerance_pair(rtol, atol):
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")


def _tolerances(rtol, atol, *dtypes):
    return _default_tolerances(*dtypes) if rtol is None else (float(rtol), float(atol))


def _mismatches(actual, expected, rtol, atol, equal_nan):
    """The mask of the elements that are not close, and both arrays as compared: arrays of one dtype, in that
    dtype if it is floating or complex, integers and bools as float64."""
    wide = actual.dtype if actual.dtype.kind in "fc" else np.float64
    a, e = actual.astype(wide), expected.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(a) & np.isfinite(e)
        close = np.where(finite, np.abs(a - e) <= atol + rtol * np.abs(e), a == e)   # infinities: equal ones only
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return ~close, a, e


def _differences(a, e):
    """|a - e| and |a - e| / |e| (inf where e is 0 and they differ, nan where either is nan)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        absolute = np.abs(a - e)
        absolute = np.where(a == e, 0.0, absolute)            # equal infinities differ by 0, not nan
        relative = np.where(absolute == 0, 0.0, absolute / np.abs(e))
    return absolute, relative


def _scalar_message(actual, expected, a, e, rtol, atol, exact):
    """PyTorch's report for two scalars (numbers or 0-d tensors; ``a``, ``e`` their values in double precision)."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64             # scalars report in double precision
    absolute, relative = (float(v) for v in _differences(a.astype(wide), e.astype(wide)))
    if actual.dtype.kind in "biu" and expected.dtype.kind in "biu":
        absolute = int(absolute)
    verb = "equal" if exact else "close"
    allowed = ("", "") if exact else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    return (f"Scalars are not {verb}!\n\nExpected {expected.item()} but got {actual.item()}.\n"
            f"Absolute difference: {absolute}{allowed[0]}\nRelative difference: {relative}{allowed[1]}")


def _tensor_message(mismatched, integral, a, e, rtol, atol, exact):
    """PyTorch's report for two tensors: how many elements differ, and the greatest differences and where
    (the absolute difference as an integer when both tensors hold integers: ``integral``)."""
    absolute, relative = _differences(a, e)
    absolute, relative = np.where(mismatched, absolute, 0.0), np.where(mismatched, relative, 0.0)

    def worst(values):   # the first nan, else the largest value; its index as a tuple
        flat = values.reshape(-1)
        i = int(np.argmax(np.isnan(flat))) if np.isnan(flat).any() else int(np.argmax(flat))
        return flat[i], tuple(int(k) for k in np.unravel_index(i, values.shape))

    count, total = int(mismatched.sum()), mismatched.size
    verb = "equal" if exact else "close"
    (abs_value, abs_at), (rel_value, rel_at) = worst(absolute), worst(relative)
    abs_value = int(abs_value) if integral else float(abs_value)
    allowed = ("", "") if exact else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    return (f"Tensor-likes are not {verb}!\n\nMismatched elements: {count} / {total} ({100 * count / total:.1f}%)\n"
            f"Greatest absolute difference: {abs_value!r} at index {abs_at}{allowed[0]}\n"
            f"Greatest relative difference: {float(rel_value)!r} at index {rel_at}{allowed[1]}")


def _fail(generated, msg, where):
    if callable(msg):
        text = msg(generated)
    else:
        text = msg if msg is not None else generated
        if msg is None and where:
            text += f"\n\nThe failure occurred for item {''.join(f'[{k!r}]' for k in where)}"
    raise AssertionError(text)


def _compare_arrays(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where, scalar):
    """Compare two ndarrays (or two numbers, as 0-d arrays, when ``scalar``): shape, dtype, then values."""
    if actual.shape != expected.shape:
        _fail(f"The values for attribute 'shape' do not match: {list(actual.shape)} != {list(expected.shape)}.",
              msg, where)
    if check_dtype and actual.dtype != expected.dtype and not scalar:
        _fail(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.", msg, where)
    rtol, atol = _tolerances(rtol, atol, actual.dtype, expected.dtype)   # the looser dtype's, when they differ
    if actual.dtype != expected.dtype:
        common = result_type(actual, expected)
        actual, expected = actual.astype(common), expected.astype(common)
    mismatched, a, e = _mismatches(actual, expected, rtol, atol, equal_nan)
    if not mismatched.any():
        return
    exact = rtol == 0 and atol == 0
    if scalar or actual.ndim == 0:
        _fail(_scalar_message(actual, expected, a, e, rtol, atol, exact), msg, where)
    integral = actual.dtype.kind in "biu" and expected.dtype.kind in "biu"
    _fail(_tensor_message(mismatched, integral, a, e, rtol, atol, exact), msg, where)


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where):
    actual_array, expected_array = _as_array(actual), _as_array(expected)
    if actual_array is not None and expected_array is not None:
        _compare_arrays(actual_array, expected_array, rtol, atol, equal_nan, check_dtype, msg, where, scalar=False)
    elif isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if actual != expected:
            _fail(f"Booleans mismatch: {actual} is not {expected}", msg, where)
    elif _is_number(actual) and _is_number(expected):
        if check_dtype and type(actual) is not type(expected):
            _fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.", msg, where)
        # a Python float compares in double precision, an int exactly, as PyTorch does
        _compare_arrays(np.asarray(actual), np.asarray(expected), rtol, atol, equal_nan, check_dtype, msg, where,
                        scalar=True)
    elif isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg, where)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, msg, where + (i,))
    elif isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(set(expected) - set(actual), key=repr)}\nAdditional keys in the actual mapping: "
                  f"{sorted(set(actual) - set(expected), key=repr)}", msg, where)
        for key in expected:
            _compare(actual[key], expected[key], rtol, atol, equal_nan, check_dtype, msg, where + (key,))
    elif actual is None and expected is None:
        return
    else:
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close: Tensors, NumPy arrays, numbers, or
    (nested) lists, tuples and dicts of them. ``rtol`` and ``atol`` are given together or not at all (then the
    dtype's defaults, ``DEFAULT_TOLERANCES``). ``msg`` replaces the report (a string), or builds it from the
    report (a callable). ``allow_subclasses``, ``check_device``, ``check_layout`` and ``check_stride`` are
    accepted for PyTorch's signature; minigrad has one device and one layout, and strides are not compared."""
    _check_tolerance_pair(rtol, atol)      # the pairing of rtol and atol is checked before anything is compared
    _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, ())

