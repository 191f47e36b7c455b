"""The harness of ``tests/test_dtype_matrix.py``: running one call in both libraries and comparing what they do.

An *outcome* is what a call did, as plain data, so that PyTorch's can be recorded (``tests/oracle.py``) and
replayed where PyTorch is not installed:

* ``("computes", dtype name, values)``: the result's dtype and its values as an ndarray (floats widened to
  float64, complex to complex128; a tuple of tensors: its first);
* ``("raises", exception type name)``;
* ``("complex32",)``: PyTorch computed in complex32 (a float16 tensor meeting a complex number), which minigrad does
  not have: such a combination is left out of the comparison.

A gradient outcome is ``("computes", result dtype, result values, [(gradient dtype, values) or None, ...])``.
"""
import zlib

import numpy as np

import minigrad as mg

from .mirror import torch_result
from .oracle import live_torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
FLOATING = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
FIRST = [[1, 2, 3], [0, 5, 1]]        # the first operand's values (a 0-d first operand: 3)
SECOND = [[2, 1, 3], [1, 4, 2]]       # the second's (0-d: 2); no zero, so integer division computes
# the first operand in the gradient tests: no zero either, where derivatives are infinite and PyTorch's complex
# ones come out as inf or NaN from run to run (its vectorized and scalar loops differ there)
FIRST_NONZERO = [[1, 2, 3], [0.5, 5, 1]]
NUMBERS = {"True": True, "2": 2, "2.5": 2.5, "1+2j": 1 + 2j}
# a result's tolerance by its dtype (float64 and complex128: 1e-12)
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "complex64": 2e-6}
# how far PyTorch's live values may be from its record before the record counts as stale: the outcomes hold values
# of every dtype as float64, and PyTorch's low-precision results move in the last bit from one CPU to another (its
# float32 std on an AMD Zen 4 is 1 ulp from the one recorded on other machines)
RECORD_TOLERANCE = (TOLERANCE["bfloat16"], 1e-6)


class Complex32(Exception):
    """Raised on PyTorch's side where its operands' common dtype is complex32."""


def operand(lib, kind, dtype, values, zero_d):
    """A 2x3 tensor (kind "t") of ``values``, a 0-d one ("z") holding ``zero_d``, or one of the Python NUMBERS."""
    if kind in NUMBERS:
        return NUMBERS[kind]
    return lib.tensor(zero_d if kind == "z" else values, dtype=getattr(lib, dtype))


def operand_kinds():
    """(kind, dtype) of a second operand: tensors and 0-d tensors of every dtype, and the Python numbers."""
    return [(k, d) for k in ("t", "z") for d in DTYPES] + [(k, None) for k in NUMBERS]


def check_complex32(lib, *operands):
    """On PyTorch's side, raise ``Complex32`` where the operands' common dtype is complex32."""
    if lib is mg or not any(isinstance(o, lib.Tensor) for o in operands):
        return
    try:
        common = lib.result_type(*operands)
    except (RuntimeError, TypeError):
        return
    if common == lib.complex32:
        raise Complex32


def values_of(t):
    """A tensor's values as an ndarray: floats as float64, complex as complex128, others as they are."""
    lib = mg if isinstance(t, mg.Tensor) else live_torch()
    t = t.detach()
    if lib is not mg:
        t = t.resolve_conj().resolve_neg()
    if t.is_complex():
        t = t.to(lib.complex128)
    elif t.is_floating_point():
        t = t.to(lib.float64)
    return np.asarray(t.numpy())


def _dtype(t):
    return str(t.dtype).split(".")[-1]


def outcome(compute):
    """What ``compute()`` (a zero-argument function) does, as plain data (the module docstring)."""
    try:
        result = compute()
    except Complex32:
        return ("complex32",)
    except Exception as e:       # noqa: BLE001 -- an exception is an outcome to compare
        return ("complex32",) if "ComplexHalf" in str(e) else ("raises", type(e).__name__)
    result = result[0] if isinstance(result, tuple) else result
    if _dtype(result) == "complex32":
        return ("complex32",)
    return ("computes", _dtype(result), values_of(result))


def compare(label, want, got, values=True, expected=None, operand_dtypes=()):
    """None where minigrad's outcome ``got`` is PyTorch's ``want``, else what differs. ``expected(want_values,
    got_values)``: PyTorch's values as they are compared (a documented difference taken out). ``operand_dtypes``:
    where PyTorch rounds intermediates to an operand's dtype (a float16 log_softmax before a float32 product), the
    coarsest of them and the result's sets the tolerance."""
    if want[0] == "complex32":
        return None
    if want[0] != got[0] or want[1] != got[1]:
        return f"{label}: PyTorch {' '.join(want[:2])}, minigrad {' '.join(got[:2])}"
    if want[0] == "raises" or not values:
        return None
    theirs, ours = want[2], got[2]
    if expected is not None:
        theirs = expected(theirs, ours)
    tol = max(TOLERANCE.get(d, 1e-12) for d in (want[1], *operand_dtypes))
    return _values_differ(label, "values", theirs, ours, tol)


def _values_differ(label, what, theirs, ours, tol):
    if np.shape(theirs) != np.shape(ours):
        return f"{label}: {what} of shape {np.shape(ours)} where PyTorch's have {np.shape(theirs)}"
    if not np.allclose(ours, theirs, rtol=tol, atol=tol, equal_nan=True):
        return f"{label}: {what} {np.ravel(ours)} where PyTorch has {np.ravel(theirs)}"
    return None


def check_all(label, cases, run, values=True, expected=None, operand_dtypes=lambda case: ()):
    """Compare ``run(lib, *case)`` (a zero-argument function) in both libraries for every case; PyTorch's outcomes
    are asked for in one record (``torch_result``: live, or replayed without PyTorch). Returns the differences.
    ``operand_dtypes(case)``: the operands' dtypes, where they widen the tolerance (``compare``)."""
    def kept(result):           # (without values: random results, recorded by dtype only)
        return result if values else result[:2]
    want = torch_result(lambda torch: [kept(outcome(run(torch, *case))) for case in cases], [repr(c) for c in cases],
                        tolerance=RECORD_TOLERANCE)
    problems = [compare(f"{label}{case}", w, kept(outcome(run(mg, *case))), values, expected, operand_dtypes(case))
                for case, w in zip(cases, want)]
    return [p for p in problems if p]


# --------------------------------------------------------------------------- gradients
def random_upstream(shape, dtype):
    """A random upstream gradient of ``shape`` (complex for a complex dtype), the same in every session."""
    rng = np.random.default_rng(zlib.crc32(repr((tuple(shape), dtype)).encode()))
    g = rng.uniform(0.5, 1.5, shape)
    return g + 1j * rng.uniform(0.5, 1.5, shape) if dtype.startswith("complex") else g


def gradient_outcome(lib, call, first, second):
    """The result of ``call(lib, a, b)`` and the gradients of both operands (a Python number gets none) under a
    random upstream gradient, as plain data (the module docstring)."""
    try:
        a = operand(lib, *first, FIRST_NONZERO, 3).requires_grad_()
        b = operand(lib, *second, SECOND, 2)
        b = b.requires_grad_() if isinstance(b, lib.Tensor) else b
        check_complex32(lib, a, b)
        out = call(lib, a, b)
        out = out[0] if isinstance(out, tuple) else out
        g = lib.tensor(random_upstream(out.shape, _dtype(out)), dtype=out.dtype)
        inputs = (a, b) if isinstance(b, lib.Tensor) else (a,)
        grads = list(lib.autograd.grad(out, inputs, g, allow_unused=True)) + [None] * (2 - len(inputs))
    except Complex32:
        return ("complex32",)
    except Exception as e:       # noqa: BLE001 -- an exception is an outcome to compare
        if "input_is_complex == grad_is_complex" in str(e):       # PyTorch's engine (torch_gradient_outcome)
            return ("raises", type(e).__name__, "a complex gradient for a real input")
        return ("complex32",) if "ComplexHalf" in str(e) else ("raises", type(e).__name__)
    return ("computes", _dtype(out), values_of(out),
            [None if d is None else (_dtype(d), values_of(d)) for d in grads])


COMPLEX_OF = {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64", "float64": "complex128"}


def torch_gradient_outcome(torch, call, first, second):
    """PyTorch's gradient outcome. Where a complex result meets a real operand PyTorch's engine refuses the complex
    gradient for many ops (logaddexp, where, lerp, dist: "Expected isFloatingType(grad.scalar_type()) ||
    (input_is_complex == grad_is_complex)") and takes its real part for others (add, mul); minigrad takes the real
    part for every op (docs/differences.md). There PyTorch's gradients are computed with the real operands made
    complex, and their real parts taken back to the operands' dtypes."""
    result = gradient_outcome(torch, call, first, second)
    if result[0] != "raises" or len(result) < 3:
        return result
    made = [(k, COMPLEX_OF.get(d, d)) for k, d in (first, second)]
    result = gradient_outcome(torch, call, *made)
    if result[0] != "computes":
        return result
    grads = [g if g is None or d.startswith("complex") else (d, g[1].real)
             for g, (_, d) in zip(result[3], (first, second))]
    return (*result[:3], grads)


def compare_gradients(label, want, got, looser=0.0, expected=None):
    """None where minigrad's gradient outcome is PyTorch's, else what differs. A gradient passes through the
    result's dtype: PyTorch sums a broadcast operand's gradient there, minigrad in the operand's own dtype (more
    precisely), so the coarser of the two dtypes sets the tolerance (``looser``: a floor for it)."""
    if want[0] != "computes" or got[0] != "computes":
        return compare(label, want, got)
    if want[1] != got[1]:
        return f"{label}: the result is {want[1]} in PyTorch, {got[1]} in minigrad"
    for which, w, g in zip(("first operand's", "second operand's"), want[3], got[3]):
        if (w is None) != (g is None):
            return f"{label}: the {which} gradient is {w is not None} in PyTorch, {g is not None} in minigrad"
        if w is None:
            continue
        if w[0] != g[0]:
            return f"{label}: the {which} gradient is {w[0]} in PyTorch, {g[0]} in minigrad"
        theirs = w[1] if expected is None else expected(w[1], g[1])
        tol = 4 * max(TOLERANCE.get(w[0], 1e-12), TOLERANCE.get(want[1], 1e-12), looser)
        problem = _values_differ(label, f"the {which} gradient", theirs, g[1], tol)
        if problem:
            return problem
    return None
