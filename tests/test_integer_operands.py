"""Integer and bool operands of ops that compute in a float dtype, against PyTorch.

PyTorch converts each operand of true division, atan2, copysign, xlogy, zeta, ... from its own dtype to the float
dtype it computes in: a Python -1 (or a 0-d int64 tensor) next to a uint8 tensor is -1.0 there, while the integer
ops (+, *) wrap it around to 255. Also: pow's checked conversion of a Python int exponent, and the sign of a float
remainder's zero (fmod's, not NumPy's).
"""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "bool", "float16", "bfloat16", "float32"]
EXPRESSIONS = [
    "x / -1", "x.div(-2)", "x.true_divide(-1)", "-1 / x", "300 / x", "x / L.tensor(-1)", "x / (2 ** 40)",
    "x / L.tensor([-1], dtype=L.int8)", "x.div(-1, rounding_mode='floor')", "x.div(-1, rounding_mode='trunc')",
    "L.atan2(x, L.tensor(-1))", "L.atan2(L.tensor(-1), x)", "x.atan2(L.tensor([-1.5]))",
    "x.copysign(-1)", "x.copysign(L.tensor([-1, 1], dtype=L.int8))", "x.xlogy(-1)", "L.special.xlogy(x, -2)",
    "L.special.xlog1py(x, -3)", "x + -1", "x * -1", "x - 300", "x.pow(-1)", "x ** -1", "x ** 300", "x ** 2",
    "x.pow(L.tensor(-1))", "x.float_power(-1)", "x.fmod(-1)", "x.remainder(-1)", "x.logaddexp(L.tensor(-1.))",
    "L.special.zeta(x, -1)", "L.special.zeta(2., x)",
]


def outcome(lib, dtype, expression):
    x = lib.tensor([True, False] if dtype == "bool" else [1, 2], dtype=getattr(lib, dtype))
    try:
        result = eval(expression, {"x": x, "L": lib})
    except (RuntimeError, TypeError, NotImplementedError) as err:
        return type(err).__name__, str(err).split("\n")[0]
    return str(result.dtype).split(".")[-1], result.double().numpy()


@pytest.mark.parametrize("expression", EXPRESSIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_float_computing_ops_take_each_operand_as_given(dtype, expression):
    torch = torch_or_skip()
    theirs, ours = outcome(torch, dtype, expression), outcome(mg, dtype, expression)
    assert ours[0] == theirs[0], (ours, theirs)
    if isinstance(theirs[1], str):
        assert ours[1] == theirs[1]
    else:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=2e-3 if dtype in ("float16", "bfloat16") else 1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_remainder_keeps_fmods_zero(dtype):
    """1. % -1. is 0. and -0. % 1. is -0. (C's fmod moved by the divisor where the signs differ), as PyTorch's; NumPy's
    remainder gives the divisor's sign to a zero. Infinities and NaN as PyTorch's too."""
    torch = torch_or_skip()
    values = [1.0, -1.0, 0.0, -0.0, 2.5, -2.5, 3.0, np.inf, -np.inf, 1e-30, 7.0]
    results = []
    for lib in (torch, mg):
        a = lib.tensor([[v] for v in values]).to(getattr(lib, dtype))
        b = lib.tensor([values]).to(getattr(lib, dtype))
        results.append((a % b).double().numpy())
    ours, theirs = results[1], results[0]
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    finite = ~np.isnan(theirs)
    assert np.array_equal(ours[finite], theirs[finite])                 # exact: remainders of these are exact
    assert np.array_equal(np.signbit(ours[finite]), np.signbit(theirs[finite]))
