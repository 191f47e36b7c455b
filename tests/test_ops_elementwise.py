"""Elementwise ops: float64 gradchecks and PyTorch mirrors over broadcast shapes and non-contiguous views,
ties and NaNs in maximum/minimum, PyTorch's dtype promotion, gradient dtypes, broadcast errors.

Each op is written once as ``f(lib, *tensors)`` and run with ``lib`` = minigrad and ``lib`` = torch.
"""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg

from .mirror import assert_mirror, check_grad, run_both, torch_or_skip, torch_result
from .oracle import RecordedError
from .strategies import broadcastable_shapes, check_on_views, float64_arrays, noncontiguous_arrays, shapes


def positive(x):
    return np.abs(x) + 0.5


def away_from_zero(x):
    return np.sign(x) * (np.abs(x) + 0.5)


def shifted(x):
    return x + 0.25


# name -> (f(lib, a, b), domain of each input: a function mapping standard normal data into it, or None)
BINARY = {
    "add": (lambda m, a, b: m.add(a, b), None),
    "add_alpha": (lambda m, a, b: m.add(a, b, alpha=-1.5), None),
    "sub": (lambda m, a, b: a - b, None),
    "sub_alpha": (lambda m, a, b: m.sub(a, b, alpha=0.5), None),
    "mul": (lambda m, a, b: m.mul(a, b), None),
    "div": (lambda m, a, b: a / b, (None, away_from_zero)),
    "pow_tensor_exponent": (lambda m, a, b: a ** b, (positive, None)),
    "maximum": (lambda m, a, b: m.maximum(a, b), None),
    "clamp_tensor_min": (lambda m, a, b: m.clamp(a, min=b), (None, shifted)),  # shifted: equal seeds never tie
    "clamp_tensor_max": (lambda m, a, b: a.clamp(max=b), (None, shifted)),
    "minimum": (lambda m, a, b: m.minimum(a, b), None),
    "where": (lambda m, a, b: m.where(a * b > 0, a, b), None),
    "expression": (lambda m, a, b: m.sigmoid(a * b - 1.5) / (b * b + 1) + m.tanh(a).exp(), None),
}

# name -> (f(lib, a), domain or None)
UNARY = {
    "neg": (lambda m, a: m.neg(a), None),
    "neg_operator": (lambda m, a: -a, None),
    "abs": (lambda m, a: m.abs(a), None),
    "exp": (lambda m, a: m.exp(a), None),
    "log": (lambda m, a: m.log(a), positive),
    "sqrt": (lambda m, a: m.sqrt(a), positive),
    "rsqrt": (lambda m, a: m.rsqrt(a), positive),
    "square": (lambda m, a: m.square(a), None),
    "tanh": (lambda m, a: m.tanh(a), None),
    "sigmoid": (lambda m, a: m.sigmoid(a * 10), None),  # both tails of the stable formula
    "relu": (lambda m, a: m.relu(a), None),
    "sin": (lambda m, a: m.sin(a), None),
    "cos": (lambda m, a: m.cos(a), None),
    "clamp": (lambda m, a: m.clamp(a, -0.5, 0.7), None),
    "clamp_min": (lambda m, a: a.clamp(min=0.2), None),
    "clamp_max": (lambda m, a: a.clamp(max=-0.1), None),
    "pow_int_scalar": (lambda m, a: a ** 3, None),
    "pow_float_scalar": (lambda m, a: m.pow(a, 1.5), positive),
    "pow_zero_scalar": (lambda m, a: a ** 0, None),
    "scalar_base_pow": (lambda m, a: 2.0 ** a, None),
    "scalar_minus": (lambda m, a: 1.5 - a, None),
    "scalar_div": (lambda m, a: 2 / a, away_from_zero),
    "div_scalar": (lambda m, a: a / 3, None),
    "mul_scalar": (lambda m, a: a * 2.5 + 1, None),
    "masked_fill": (lambda m, a: a.masked_fill(a > 0.3, 2.5), None),
    "where_scalar": (lambda m, a: m.where(a > 0, a, 0.0), None),
}


def in_domain(array, domain):
    """``array`` mapped into ``domain`` in place, so a view stays a view."""
    if domain is not None:
        array[...] = domain(array)
    return array


# ----------------------------------------------------------------------------- gradients and mirrors
@pytest.mark.parametrize("name", BINARY)
@given(shape_pair=broadcastable_shapes(), seeds=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)))
def test_binary_op_gradcheck_and_mirror_over_broadcast_shapes(name, shape_pair, seeds):
    f, domains = BINARY[name]
    domains = domains or (None, None)
    a, b = (in_domain(np.random.default_rng(s).standard_normal(shape), d)
            for s, shape, d in zip(seeds, shape_pair, domains))
    check_grad(lambda x, y: f(mg, x, y), a, b)
    assert_mirror(*run_both(f), a, b)


@pytest.mark.parametrize("name", UNARY)
@given(data=st.data())
def test_unary_op_gradcheck_and_mirror(name, data):
    f, domain = UNARY[name]
    a = in_domain(data.draw(shapes().flatmap(float64_arrays)), domain)
    check_grad(lambda x: f(mg, x), a)
    assert_mirror(*run_both(f), a)


@pytest.mark.parametrize("name", ["add_alpha", "div", "pow_tensor_exponent", "maximum", "expression"])
@given(data=st.data())
def test_binary_op_on_noncontiguous_views(name, data):
    f, domains = BINARY[name]
    shape = data.draw(shapes(min_dims=1, min_side=2))
    a, b = (in_domain(data.draw(noncontiguous_arrays(shape)), d) for d in (domains or (None, None)))
    check_on_views(lambda x, y: f(mg, x, y), a, b)


@pytest.mark.parametrize("name", ["exp", "sqrt", "sigmoid", "clamp", "masked_fill", "scalar_div"])
@given(data=st.data())
def test_unary_op_on_noncontiguous_views(name, data):
    f, domain = UNARY[name]
    a = in_domain(data.draw(shapes(min_dims=1, min_side=2).flatmap(noncontiguous_arrays)), domain)
    check_on_views(lambda x: f(mg, x), a)


@given(shape_pair=broadcastable_shapes(), cond_shape=shapes(max_dims=2), seed=st.integers(0, 2**32 - 1))
def test_where_broadcasts_condition_and_both_branches(shape_pair, cond_shape, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(shape_pair[0]), rng.standard_normal(shape_pair[1])
    try:
        np.broadcast_shapes(cond_shape, *shape_pair)
    except ValueError:
        cond_shape = ()
    cond = np.asarray(rng.random(cond_shape) > 0.5)
    check_grad(lambda c, x, y: mg.where(c, x, y), cond, a, b)
    assert_mirror(*run_both(lambda m, c, x, y: m.where(c, x, y)), cond, a, b)


def test_masked_fill_with_a_0d_value_tensor_passes_gradient_to_it(rng):
    a, value = rng.standard_normal((3, 4)), np.array(0.7)
    mask = rng.random((1, 4)) > 0.5
    check_grad(lambda x, v: x.masked_fill(mask, v), a, value)
    assert_mirror(*run_both(lambda m, x, c, v: x.masked_fill(c, v)), a, mask, value)


def test_pow_gradients_at_zero_base_and_zero_exponent_match_pytorch():
    base = np.array([0.0, 0.0, 0.0, 2.0, 3.0])
    exponent = np.array([0.0, 2.0, 0.5, 0.0, -1.0])
    assert_mirror(*run_both(lambda m, x, y: x ** y), base, exponent)
    assert_mirror(*run_both(lambda m, x: x ** 0.0), base)
    assert_mirror(*run_both(lambda m, y: 0.0 ** y), np.array([0.0, 2.0, 1.5]))


# ----------------------------------------------------------------------------- ties and NaNs
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_ties_share_the_gradient_and_nan_propagates_like_pytorch(op):
    a = np.array([[1.0, 2.0, 2.0, np.nan, 5.0, np.nan]])
    b = np.array([[1.0, 3.0, 2.0, 1.0, np.nan, np.nan], [0.0, 2.0, 2.0, 4.0, 5.0, 1.0]])
    out = assert_mirror(*run_both(lambda m, x, y: getattr(m, op)(x, y)), a, b)
    assert np.isnan(out.detach().numpy()[0, 3:]).all()


def test_ties_pass_a_finite_difference_check_for_maximum():
    # at a tie, central differences see half the slope on each side: exactly the shared gradient
    a = np.array([1.0, 2.0, -0.5])
    check_grad(lambda x, y: mg.maximum(x, y), a, a.copy())
    check_grad(lambda x, y: mg.minimum(x, y), a, a.copy())


# ----------------------------------------------------------------------------- comparisons and logic
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"])
@given(shape_pair=broadcastable_shapes(), seed=st.integers(0, 2**32 - 1))
def test_comparisons_match_pytorch_including_ties(op, shape_pair, seed):
    rng = np.random.default_rng(seed)
    a, b = (np.asarray(np.round(rng.standard_normal(s))) for s in shape_pair)  # rounding makes ties common
    out = assert_mirror(*run_both(lambda m, x, y: getattr(m, op)(x, y)), a, b, grads=[False, False])
    assert out.dtype == np.bool_ and not out.requires_grad


def test_comparison_operators_and_logical_not_match_pytorch(rng):
    a, b = np.round(rng.standard_normal((3, 4))), np.round(rng.standard_normal(4))
    ops = [lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x < y, lambda x, y: x <= y,
           lambda x, y: x > y, lambda x, y: x >= y, lambda x, y: ~(x > y), lambda x, y: (x > 0) & (y > 0),
           lambda x, y: (x > 0) | (y > 0), lambda x, y: x == 0.0, lambda x, y: 1 < y]
    for f in ops:
        assert_mirror(*run_both(lambda m, x, y: f(x, y)), a, b, grads=[False, False])
    nan = np.array([np.nan, 1.0, np.inf])
    for name in ["isnan", "isfinite"]:
        assert_mirror(*run_both(lambda m, x: getattr(m, name)(x)), nan, grads=[False])


# ----------------------------------------------------------------------------- dtype promotion
OPERANDS = {
    "f16": np.array([1.5, 2.0], np.float16), "f32": np.array([1.5, 2.0], np.float32),
    "f64": np.array([1.5, 2.0]), "i64": np.array([3, 4]), "bool": np.array([True, False]),
    "f32_0d": np.array(1.5, np.float32), "f64_0d": np.array(2.5), "i64_0d": np.array(3), "bool_0d": np.array(True),
    "float": 2.5, "int": 3, "True": True,
}
PAIRS = [("f32", "float"), ("float", "f32"), ("i64", "float"), ("float", "i64"), ("int", "f16"), ("float", "bool"),
         ("f16", "float"), ("f16", "int"),
         ("i64", "int"), ("i64", "f32"), ("f32", "i64"), ("i64", "f16"), ("f32", "f64"), ("f64", "f32"),
         ("f16", "f32"), ("f32", "f64_0d"), ("f64_0d", "f32"), ("f16", "f32_0d"), ("i64", "f32_0d"),
         ("i64_0d", "f32"), ("f32_0d", "f64_0d"), ("i64", "i64"), ("i64", "i64_0d"), ("bool", "i64"),
         ("bool", "f32"), ("bool", "float"), ("bool", "int"), ("f32", "True"), ("bool_0d", "f16")]
PROMOTING = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "pow": lambda m, a, b: a ** b, "lt": lambda m, a, b: a < b,
    "where": lambda m, a, b: m.where(m.tensor([True, False]), a, b),
    "maximum": lambda m, a, b: m.maximum(a, b), "minimum": lambda m, a, b: m.minimum(a, b),
}


def _valid_in_pytorch(op, pair):
    """PyTorch refuses bool subtraction and Python scalars in maximum/minimum."""
    values = [OPERANDS[k] for k in pair]
    if op == "sub" and any(np.asarray(v).dtype == np.bool_ for v in values):
        return False
    return op not in ("maximum", "minimum") or all(isinstance(v, np.ndarray) for v in values)


def _operand(lib, value):
    return lib.tensor(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("op, pair", [(op, pair) for op in PROMOTING for pair in PAIRS if _valid_in_pytorch(op, pair)],
                         ids=lambda v: "-".join(v) if isinstance(v, tuple) else v)
@pytest.mark.filterwarnings("ignore:divide by zero")  # 2.5 / False is inf, as in PyTorch
def test_result_dtype_matches_pytorch_promotion(op, pair):
    f = PROMOTING[op]
    left, right = (OPERANDS[k] for k in pair)
    expected = torch_result(lambda torch: f(torch, _operand(torch, left), _operand(torch, right)), left, right)
    got = f(mg, _operand(mg, left), _operand(mg, right))
    assert str(got.dtype) == str(expected.dtype).replace("torch.", ""), (got.dtype, expected.dtype)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), expected.numpy().astype(np.float64), rtol=1e-3)


def test_python_scalar_on_the_left_follows_the_tensor_dtype():
    x32, i64 = mg.tensor([1.0, 2.0]), mg.tensor([1, 2])
    assert (2.5 + x32).dtype == mg.float32 and (2.5 - i64).dtype == mg.float32
    assert (3 * i64).dtype == mg.int64 and (1 / i64).dtype == mg.float32 and (2.0 ** x32).dtype == mg.float32


def test_integer_division_gives_the_default_float_dtype():
    out = mg.tensor([3, 7]) / mg.tensor([2, 2])
    assert out.dtype == mg.float32
    np.testing.assert_array_equal(out.detach().numpy(),
                                  torch_result(lambda torch: torch.tensor([3, 7]) / torch.tensor([2, 2])).numpy())


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos", "abs", "neg",
                                "square", "relu"])
@pytest.mark.parametrize("dtype", ["int64", "float16", "float32"])
def test_unary_result_dtype_matches_pytorch(op, dtype):
    data = np.array([1, 2, 4], dtype=dtype)
    got = getattr(mg, op)(mg.tensor(data))
    expected = torch_result(lambda torch: getattr(torch, op)(torch.tensor(data)), data)
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), expected.numpy().astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize("f", [lambda m, x: m.clamp(x, 0.5), lambda m, x: x.clamp(max=2),
                               lambda m, x: x.clamp(-1, 2.5)])
@pytest.mark.parametrize("dtype", ["int64", "float16", "float32"])
def test_clamp_result_dtype_matches_pytorch(f, dtype):
    data = np.array([-2, 1, 3], dtype=dtype)
    got, expected = f(mg, mg.tensor(data)), torch_result(lambda torch: f(torch, torch.tensor(data)), data)
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.detach().numpy(), expected.numpy())


@given(shapes=st.tuples(shapes(max_dims=2), shapes(max_dims=2), shapes(max_dims=2)),
       seed=st.integers(0, 2**32 - 1))
def test_clamp_to_tensor_bounds_gradcheck_and_mirror(shapes, seed):
    """Both bounds tensors, broadcasting to x's shape, and crossing (lo > hi) in some places, where hi wins."""
    try:
        shapes = (np.broadcast_shapes(*shapes),) + shapes[1:]  # PyTorch's backward needs x at the full shape
    except ValueError:
        shapes = (shapes[0], (), ())
    rng = np.random.default_rng(seed)
    x, lo, hi = (rng.standard_normal(s) for s in shapes)
    check_grad(lambda a, b, c: mg.clamp(a, b, c), x, lo, hi)
    assert_mirror(*run_both(lambda m, a, b, c: m.clamp(a, min=b, max=c)), x, lo, hi)


def test_clamp_to_tensor_bounds_promotes_like_pytorch():
    for x, lo in [(np.array([1, 5]), np.array([2.5, 0.0], np.float32)), (np.array([1.0, 5.0], np.float32),
                                                                          np.array([2, 0])),
                  (np.array([1.0, 5.0], np.float32), np.array([2.0, 0.0])), (np.array([1.0, 5.0]), np.array(2.0,
                                                                                                            np.float32))]:
        got = mg.clamp(mg.tensor(x), min=mg.tensor(lo))
        expected = torch_result(lambda torch: torch.clamp(torch.tensor(x), min=torch.tensor(lo)), x, lo)
        assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
        np.testing.assert_array_equal(got.detach().numpy(), expected.numpy())


# ----------------------------------------------------------------------------- gradient dtypes
@pytest.mark.parametrize("f", [lambda m, x: x.float() * 2, lambda m, x: x.half() + 1, lambda m, x: x.to(m.float32),
                               lambda m, x: x.double()])
def test_dtype_conversions_pass_the_gradient_back_in_the_input_dtype(f, rng):
    assert_mirror(*run_both(f), rng.standard_normal((2, 3)))
@pytest.mark.parametrize("dtype", [mg.float32, mg.float16])
def test_gradients_keep_the_leaf_dtype(dtype, rng):
    x = mg.tensor(rng.standard_normal((2, 3)).astype(dtype), requires_grad=True)
    y = mg.tensor(positive(rng.standard_normal(3)).astype(dtype), requires_grad=True)
    out = (x * y).sigmoid() + (x / y).tanh() - y.sqrt().log() * x.abs() + x.clamp(-0.5, 0.5) ** 2 + x.double().to(dtype)
    assert out.dtype == dtype
    out.backward(mg.tensor(rng.standard_normal(out.shape).astype(dtype)))
    assert x.grad.dtype == dtype and y.grad.dtype == dtype


def test_mixed_precision_operands_get_gradients_in_their_own_dtypes(rng):
    x32 = mg.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    x64 = mg.tensor(rng.standard_normal(3), requires_grad=True)
    x16 = mg.tensor(rng.standard_normal(()).astype(np.float16), requires_grad=True)
    out = x32 * x64 + mg.maximum(x32, x16)
    assert out.dtype == mg.float64
    out.backward(mg.tensor(rng.standard_normal(3)))
    assert (x32.grad.dtype, x64.grad.dtype, x16.grad.dtype) == (mg.float32, mg.float64, mg.float16)
    assert x16.grad.shape == ()


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt"])
def test_broadcast_mismatch_names_both_shapes(op):
    a, b = mg.ones(2, 3), mg.ones(4)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1.*\[2, 3\].*\[4\]"):
        getattr(mg, op)(a, b)


@pytest.mark.parametrize("a, b", [((2, 3, 4), (5, 3, 2)), ((2, 3), (4, 5)), ((3, 1), (2, 4, 5))])
def test_broadcast_mismatch_reports_the_dimension_pytorch_reports(a, b):
    theirs = torch_result(lambda torch: torch.ones(a) + torch.ones(b))
    assert isinstance(theirs, RecordedError) and theirs.kind == "RuntimeError", theirs
    with pytest.raises(RuntimeError, match=re.escape(theirs.message)):
        mg.ones(a) + mg.ones(b)


@pytest.mark.parametrize("f", [lambda m, t, u: t - u, lambda m, t, u: u - t, lambda m, t, u: m.sub(t, True),
                               lambda m, t, u: 1.0 - u, lambda m, t, u: u - u, lambda m, t, u: -u,
                               lambda m, t, u: m.neg(u), lambda m, t, u: True - t,
                               lambda m, t, u: m.tensor([2, 3]) ** -1, lambda m, t, u: u ** -2])
def test_bool_subtraction_and_negative_integer_powers_raise_like_pytorch(f):
    theirs = torch_result(lambda torch: f(torch, torch.ones(2), torch.tensor([True, False])))
    assert isinstance(theirs, RecordedError) and theirs.kind == "RuntimeError", theirs
    with pytest.raises(RuntimeError, match=re.escape(theirs.message)):
        f(mg, mg.ones(2), mg.tensor([True, False]))


def test_where_and_masked_fill_errors():
    x = mg.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"\[2, 3\].*\[4\]"):
        mg.where(mg.ones(2, 3) > 0, x, mg.ones(4))
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        mg.where(mg.ones(2, 3), x, x)
    with pytest.raises(RuntimeError, match=r"The size of the mask \[4\] must be broadcastable .* \[2, 3\]"):
        x.masked_fill(mg.ones(4) > 0, 0.0)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(mg.ones(2, 3), 0.0)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        x.clamp()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_backward_numba_twin_equals_the_reference(dtype):
    """ReLU's backward runs a numba twin on the numba backend (float32/float64, kernels/fused_numba.py): bit
    for bit the NumPy reference and PyTorch's formula, with NaN outputs passing their gradient, zeros (also
    -0.0) and infinities, contiguous or not."""
    fused_numba = pytest.importorskip("minigrad.kernels.fused_numba")
    from minigrad.kernels.fused import relu_backward_reference
    rng = np.random.default_rng(3)
    out = np.maximum(rng.standard_normal((6, 7, 5)), 0).astype(dtype)
    out.flat[[0, 5, 9]] = [np.nan, -0.0, np.inf]
    dout = rng.standard_normal(out.shape).astype(dtype)
    dout.flat[[1, 2, 3]] = [np.inf, -np.inf, np.nan]
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    for o, g in ((out, dout), (out.transpose(2, 0, 1), dout.transpose(2, 0, 1)), (out, np.abs(dout))):
        expected = np.where((o > 0) | np.isnan(o), g, np.zeros((), dtype))          # PyTorch's threshold_backward
        for dx in (fused_numba.relu_backward(o, g), relu_backward_reference(o, g)):
            assert dx.dtype == expected.dtype and dx.shape == expected.shape
            np.testing.assert_array_equal(dx.view(bits), expected.view(bits))         # bit for bit: +0.0, NaN


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_numba_twins_equal_the_references(dtype, parallel, monkeypatch):
    """ReLU forward and backward on numba's threads (above SERIAL_BELOW; forced here for small arrays) and
    serially: bit for bit the NumPy references (NaN kept, -0.0 kept, infinities), contiguous or not."""
    fused_numba = pytest.importorskip("minigrad.kernels.fused_numba")
    from minigrad.kernels import numba_kernels
    from minigrad.kernels.fused import relu_backward_reference, relu_reference
    monkeypatch.setattr(numba_kernels, "SERIAL_BELOW", 0 if parallel else 1 << 40)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((9, 8, 7)).astype(dtype)
    x.flat[[0, 1, 2, 3, 4]] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
    g = rng.standard_normal(x.shape).astype(dtype)
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dtype]
    for xv, gv in ((x, g), (x.transpose(2, 0, 1), g.transpose(2, 0, 1))):
        y = fused_numba.relu(xv)
        assert y.shape == xv.shape and y.dtype == xv.dtype
        np.testing.assert_array_equal(y.view(bits), relu_reference(xv).view(bits))
        np.testing.assert_array_equal(fused_numba.relu_backward(y, gv).view(bits),
                                      relu_backward_reference(y, gv).view(bits))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_relu_keeps_negative_zero_and_nan_as_pytorch(dtype):
    """PyTorch's relu (a clamp at 0) keeps -0.0 and NaN, bit for bit; minigrad's made -0.0 into 0.0 (NumPy's maximum).
    Found by the op database's reference inputs (bfloat16 and float16 samples compared bit for bit)."""
    torch = torch_or_skip()
    values = [-0.0, 0.0, float("nan"), -1.0, 1.0, float("-inf"), float("inf"), 2.5] * 5   # vector loop and tail
    for lib_relu in (lambda L, x: L.nn.functional.relu(x), lambda L, x: x.clone().relu_()):
        ours = lib_relu(mg, mg.tensor(values, dtype=getattr(mg, dtype))).double().numpy()
        theirs = lib_relu(torch, torch.tensor(values, dtype=getattr(torch, dtype))).double().numpy()
        number = ~np.isnan(theirs)                    # (a NaN's sign bit depends on PyTorch's code path)
        np.testing.assert_array_equal(np.signbit(ours[number]), np.signbit(theirs[number]))
        np.testing.assert_array_equal(ours, theirs)                   # (NaN where NaN: equal_nan is the default)


def test_relu_gradient_on_both_backends():
    """mg.relu's gradient through the public API equals the reference's on the numba and numpy backends."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 50)).astype(np.float32)
    x[0, 0] = np.nan
    g = rng.standard_normal(x.shape).astype(np.float32)
    grads = []
    for backend in ("numba", "numpy"):
        with mg.kernels.use_backend(backend):
            t = mg.tensor(x, requires_grad=True)
            mg.relu(t).backward(mg.tensor(g))
            grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], np.where(x > 0, g, 0).astype(np.float32) + np.where(np.isnan(x), g, 0))


def test_relu_double_backward_zeroes_inactive_positions_like_pytorch():
    """Under create_graph, relu's gradient is dout where the output is positive or NaN and 0 elsewhere, also
    for an inf or NaN dout, and its own gradient routes the same way (PyTorch's threshold_backward)."""
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        x = lib.tensor([-1.0, -2.0, 1.0, np.nan, 0.0, 3.0], requires_grad=True)
        g = lib.tensor([np.inf, np.nan, 2.0, 3.0, np.inf, -5.0], requires_grad=True)
        (dx,) = lib.autograd.grad(lib.relu(x), x, g, create_graph=True)
        (dg,) = lib.autograd.grad(dx, g, lib.tensor([np.inf, 1.0, 1.0, 1.0, np.nan, 2.0]))
        results.append([dx.detach().numpy(), dg.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)
