"""The elementwise ops beside ``elementwise.py`` (trig.py, elementwise_more.py, floats.py, division.py,
bitwise.py) and the method and in-place variants of elementwise ops, against PyTorch's own OpInfo database:
every sample's values and dtypes, float64 gradients for a random upstream, error inputs. Plus double backward
by finite differences, the operators, and a wrong backward the comparison is shown to catch."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import trig

from .mirror import torch_or_skip
from .opinfo_families import (beyond_numpy_dims, check_errors, check_function, check_inplace, unbound_on_number,
                              uses_out)
from .opinfo_util import compare_sample, opinfos, resolve, samples

NEW = ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "remainder", "fmod",
       "floor_divide", "true_divide", "float_power", "logaddexp", "logaddexp2", "copysign", "lerp", "hypot",
       "heaviside", "fmax", "fmin", "frexp", "ldexp", "gcd", "lcm", "nan_to_num", "signbit", "positive",
       "rad2deg", "deg2rad", "isneginf", "isposinf", "isreal", "bitwise_and", "bitwise_or", "bitwise_xor",
       "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "addcmul", "addcdiv", "rsub", "fill",
       "resolve_neg"]
OPERATORS = ["__rand__", "__rdiv__", "__rmod__", "__rxor__", "__ror__", "__rpow__", "__rsub__", "__radd__",
             "__rmul__"]
# ops minigrad had whose method or in-place variants are new
EXISTING = ["abs", "atan2", "ceil", "floor", "frac", "round", "sign", "square", "trunc", "clamp_min", "clamp_max",
            "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not", "cos",
            "sin", "log", "log1p", "expm1", "log2", "log10", "reciprocal", "rsqrt", "erf", "conj_physical", "tril",
            "triu"]
CONVERSIONS = ["byte", "char", "short", "int", "cfloat", "cdouble"]
# PyTorch's gradient of these is not comparable through the helper (see the dedicated tests below)
FORWARD_ONLY = {"sgn": "PyTorch's gradient for real inputs is a ZeroTensor, which cannot be read as an array"}


@pytest.mark.parametrize("name", NEW + OPERATORS)
def test_function(name):
    check_function(name, limit=8, other_dtypes=2)


@pytest.mark.parametrize("name", sorted(FORWARD_ONLY))
def test_function_forward_only(name):
    check_function(name, limit=8, other_dtypes=2, gradients=False)


@pytest.mark.parametrize("name", NEW + sorted(FORWARD_ONLY) + EXISTING)
def test_method(name):
    check_function(name, kind="method", limit=2, other_dtypes=0, gradients=name not in FORWARD_ONLY, method_only=True)


@pytest.mark.parametrize("name", CONVERSIONS)
def test_conversion(name):
    check_function(name, kind="method", limit=3, other_dtypes=1)


@pytest.mark.parametrize("name", NEW + sorted(FORWARD_ONLY) + EXISTING)
def test_inplace(name):
    check_inplace(name, gradients=name not in FORWARD_ONLY, inplace_only=True)


@pytest.mark.parametrize("name", NEW + sorted(FORWARD_ONLY) + EXISTING)
def test_errors(name):
    check_errors(name, unreachable=(uses_out, beyond_numpy_dims))


@pytest.mark.parametrize("name", OPERATORS)
def test_operator_errors(name):
    check_errors(name, unreachable=(uses_out, unbound_on_number))


# --------------------------------------------------------------------------- beyond the database's samples
def test_sgn_gradient_is_zero_for_real_and_z_over_abs_for_complex():
    x = mg.tensor(np.array([-2.0, 0.0, 3.0]), requires_grad=True)
    (grad,) = mg.autograd.grad(mg.sgn(x), x, mg.tensor(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(grad.numpy(), 0)
    z = mg.tensor(np.array([3 + 4j, 0j, -1j]))
    np.testing.assert_allclose(mg.sgn(z).numpy(), [0.6 + 0.8j, 0, -1j])


def test_nextafter_gradient_is_pytorchs_one_and_zero():
    """PyTorch treats the step to the next float as a constant: d/dinput = 1 where input != other (NaN included),
    0 where they are equal (the output is other itself there, 0.0 == -0.0 too), and d/dother = 0; broadcast."""
    torch = torch_or_skip()
    nan, inf = np.nan, np.inf
    cases = [([1.0, 2.0, 3.0, nan, 1.0, inf, 0.0, -0.0], [2.0, 0.0, 3.0, 1.0, nan, inf, -0.0, 0.0]),
             ([[1.0, 2.0, 5.0]], [[1.0], [5.0]])]
    for a, b in cases:
        grads = []
        for lib in (mg, torch):
            x = lib.tensor(np.array(a), requires_grad=True)
            y = lib.tensor(np.array(b), requires_grad=True)
            out = lib.nextafter(x, y)
            out.backward(lib.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape))))
            grads.append((x.grad.numpy().copy(), y.grad.numpy().copy(), out.detach().numpy().copy()))
        for got, want in zip(*grads):
            np.testing.assert_array_equal(got, want)     # dout times 0 or 1, and the next floats: exact
    assert (grads[0][0] != 0).all() and (grads[0][1] == 0).all()   # the broadcast case: every x differs from a y


OPERATOR_CASES = {
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b, "%": lambda a, b: a % b, "//": lambda a, b: a // b, "~": lambda a, b: ~a,
    "3 & b": lambda a, b: 3 & b, "5 % b": lambda a, b: 5 % b, "7 // b": lambda a, b: 7 // b,
    "1 << b": lambda a, b: 1 << b, "-9 >> b": lambda a, b: -9 >> b, "2 ^ b": lambda a, b: 2 ^ b,
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("case", sorted(OPERATOR_CASES))
def test_operators_on_integers_as_pytorch(case, dtype):
    """The Python operators give PyTorch's values and dtypes; shifts past the width saturate as in PyTorch."""
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    a = rng.integers(-70, 70, (4, 5)).astype(dtype)
    b = rng.integers(-3, 70, (4, 5)).astype(dtype)
    b[b == 0] = 1                                 # integer division by zero raises in both: tested below
    fn = OPERATOR_CASES[case]
    try:
        want = fn(torch.tensor(a), torch.tensor(b))
    except Exception as error:
        with pytest.raises(type(error)):
            fn(mg.tensor(a), mg.tensor(b))
        return
    got = fn(mg.tensor(a), mg.tensor(b))
    assert str(got.dtype) == str(want.dtype).rpartition(".")[2]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("op", ["__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imod__",
                                "__ifloordiv__", "__ipow__"])
def test_in_place_operators_write_into_the_tensor(op):
    torch = torch_or_skip()
    a, b = np.array([5, -6, 7, 12]), np.array([3, 2, 1, 5])
    x, t = mg.tensor(a), torch.tensor(a)
    before = x
    x = getattr(x, op)(mg.tensor(b))
    getattr(t, op)(torch.tensor(b))
    assert x is before
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_integer_division_by_zero_and_bitwise_on_floats_raise_as_in_pytorch():
    torch = torch_or_skip()
    for fn in (lambda lib, a, b: lib.remainder(a, b), lambda lib, a, b: lib.floor_divide(a, b),
               lambda lib, a, b: lib.fmod(a, b)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(torch, torch.tensor([1, 2]), torch.tensor([1, 0]))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(mg, mg.tensor([1, 2]), mg.tensor([1, 0]))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm"):
        with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
            getattr(mg, name)(mg.tensor([1.0]), mg.tensor([2.0]))
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):
        ~mg.tensor([1.0])
    x = mg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.tan_()                                  # an integer tensor cannot hold tan's float result
    np.testing.assert_array_equal(x.numpy(), [1, 2])


# --------------------------------------------------------------------------- double backward
POSITIVE = np.random.default_rng(0).uniform(0.1, 0.8, (3, 4))
SECOND = np.random.default_rng(1).uniform(0.2, 0.9, (3, 4))
DOUBLE_BACKWARD = {
    "tan": (mg.tan, 1), "sinh": (mg.sinh, 1), "cosh": (mg.cosh, 1), "asin": (mg.asin, 1), "acos": (mg.acos, 1),
    "atan": (mg.atan, 1), "asinh": (mg.asinh, 1), "acosh": (lambda a: mg.acosh(a + 1.5), 1),
    "atanh": (mg.atanh, 1), "logaddexp": (mg.logaddexp, 2), "logaddexp2": (mg.logaddexp2, 2),
    "hypot": (mg.hypot, 2), "copysign": (lambda a, b: mg.copysign(a, b - 0.5), 2),
    "frexp": (lambda a: mg.frexp(a * 7).mantissa, 1), "nan_to_num": (mg.nan_to_num, 1), "fmax": (mg.fmax, 2),
    "fmin": (mg.fmin, 2), "remainder": (lambda a, b: mg.remainder(a * 5, b), 2),
    "fmod": (lambda a, b: mg.fmod(a * 5, b), 2), "float_power": (mg.float_power, 2),
    "ldexp": (lambda a: mg.ldexp(a, mg.tensor([2])), 1), "lerp": (lambda a, b: mg.lerp(a, b, 0.3), 2),
    "deg2rad": (mg.deg2rad, 1),
}


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD))
def test_double_backward_by_finite_differences(name):
    """gradcheck and gradgradcheck (float64): each graph_backward is the derivative of its backward."""
    fn, arity = DOUBLE_BACKWARD[name]
    inputs = [mg.tensor(a, requires_grad=True) for a in (POSITIVE, SECOND)[:arity]]
    assert mg.gradcheck(fn, inputs)
    assert mg.gradgradcheck(fn, inputs)


def test_a_wrong_derivative_is_caught(monkeypatch):
    """The mutant: tan' written as 1 + tan (instead of 1 + tan^2). The OpInfo comparison must fail."""
    op = opinfos("tan")[0]
    sample = samples(op, limit=1)[0]
    compare_sample(op, sample, resolve(op))                      # the real derivative passes
    monkeypatch.setattr(trig.Tan, "derivative", staticmethod(lambda x, out: 1 + out))
    with pytest.raises(AssertionError, match="gradient"):
        compare_sample(op, sample, resolve(op))


@pytest.mark.parametrize("name", ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh"])
def test_trig_gradients_for_complex_inputs_as_pytorch(name):
    """dout * conj(f'(z)) for a complex upstream, on both sides of the branch cuts (acosh' on its own branch)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    z = rng.standard_normal(12) * 2 + 1j * rng.standard_normal(12)
    upstream = rng.standard_normal(12) + 1j * rng.standard_normal(12)
    x, t = mg.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    out, want = getattr(mg, name)(x), getattr(torch, name)(t)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    (got,) = mg.autograd.grad(out, x, mg.tensor(upstream))
    (expected,) = torch.autograd.grad(want, t, torch.tensor(upstream))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "addcmul_", "addcdiv_"])
def test_addcmul_and_addcdiv_compute_in_the_common_dtype_of_all_three(name):
    """A float64 input with bfloat16 and float32 tensors (a case of PyTorch's reference inputs): PyTorch computes the
    whole expression in float64; the product or quotient of the two narrower tensors alone would be float32, off by
    about 1e-7."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    x, t1, t2 = rng.uniform(-4, 4, (5, 5)), rng.uniform(-6, 6, (5, 5)), rng.uniform(2, 6, (1, 5))
    results = []
    for lib in (mg, torch):
        args = (lib.tensor(x), lib.tensor(t1).to(lib.bfloat16), lib.tensor(t2).to(lib.float32))
        out = getattr(args[0], name)(*args[1:], value=-3.14) if name.endswith("_") else \
            getattr(lib, name)(*args, value=-3.14)
        assert str(out.dtype).endswith("float64")
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-14, atol=1e-14)


def test_gradients_at_the_edges_of_the_domain_are_pytorchs():
    """From PyTorch's reference inputs: asin/acos at +-inf (NaN, not the 0 that (-inf) ** -0.5 gives) and atan2 at the
    origin (0 for both arguments, PyTorch's choice where the angle has no derivative)."""
    torch = torch_or_skip()
    values = np.array([np.inf, -np.inf, 2.0, 0.5, np.nan])
    for name in ("asin", "acos"):
        grads = []
        for lib in (mg, torch):
            x = lib.tensor(values, requires_grad=True)
            (g,) = lib.autograd.grad(getattr(lib, name)(x).sum(), x)
            grads.append(g.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-14, equal_nan=True)
    grads = []
    for lib in (mg, torch):
        y, x = lib.tensor([0.0, -0.0, 1.0], requires_grad=True), lib.tensor([0.0, 0.0, 2.0], requires_grad=True)
        grads.append([g.numpy() for g in lib.autograd.grad(lib.atan2(y, x).sum(), (y, x))])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-14)
