"""bfloat16 and float16 against PyTorch's CPU results, bit for bit or within the ulps stated per op.

Conversions are bit for bit over every 16-bit pattern and over float32/float64 values at and next to the
rounding ties (NaN payloads aside: PyTorch's own NaN bits depend on the code path, see
docs/derivations/low_precision.md). Ops compute in float32 and round once (``minigrad/low_precision.py``),
as PyTorch's CPU kernels do; where an op's float32 arithmetic is done in another order than PyTorch's
(a sum's pairing, a BLAS product, a vectorized exp), the float32 results differ in their last bits and
the rounded 16-bit results can differ by one ulp: the tables below say 0 (bit for bit) or 1 per op.
"""
import numpy as np
import pytest

import minigrad as mg

from .low_precision_helpers import (DTYPES, EPS, assert_close_to_float64, assert_ulps, bits, from_bits, mirror_low, rounded,
                                    torch_dtype, ulp_distance)
from .mirror import torch_or_skip

F = mg.nn.functional


# --------------------------------------------------------------------------- conversions
def _all_patterns():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def _float32_probe(seed=0):
    """float32 values that exercise rounding to 16 bits: random bit patterns (subnormals, infinities and NaNs
    among them), every float16 and bfloat16 value with half an ulp and a float32 ulp either side (the ties and
    their neighbours), the overflow thresholds, signed zeros."""
    rng = np.random.default_rng(seed)
    random = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    b = _all_patterns().astype(np.uint32) << 16                    # every bfloat16, as float32 patterns
    ties = np.concatenate([b.astype(np.int64) + d for d in (0x7FFF, 0x8000, 0x8001, 1, -1)]) & 0xFFFFFFFF
    halves = _all_patterns().view(np.float16).astype(np.float32)
    finite = halves[np.isfinite(halves)]
    step = np.spacing(finite.astype(np.float16)).astype(np.float32) / 2
    half_ties = np.concatenate([finite + step, finite - step, np.nextafter(finite + step, np.float32(np.inf)),
                                np.nextafter(finite + step, np.float32(-np.inf))])
    special = np.array([0.0, -0.0, 65504, 65519.99, 65520, 3.3895314e38, 3.3961776e38, np.inf, -np.inf,
                        1e-45, -1e-45, 5.96e-8, 2.98e-8, 2.99e-8], dtype=np.float32)
    return np.concatenate([random.view(np.float32), ties.astype(np.uint32).view(np.float32),
                           half_ties, special])


def _written(values, dtype, differentiable=True):
    """``values`` written into a tensor of ``dtype`` by ``x[:] = values`` (the graph's IndexPut if
    ``differentiable``, else the plain write)."""
    x = mg.zeros(values.shape, dtype=dtype, requires_grad=differentiable).clone()
    x[:] = values.requires_grad_(differentiable)
    return x.detach()


def _assert_same_bits(got, want, name):
    distance = ulp_distance(got, want, name)
    assert (distance == 0).all(), f"{int((distance != 0).sum())} values differ, e.g. {np.flatnonzero(distance)[:5]}"


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("source", ["float32", "float64"])
def test_rounding_to_16_bits_is_pytorchs(name, source):
    """Round to nearest, ties to even, bit for bit: float32 at and around every tie, and float64 values within
    float32's half-ulp of a tie (PyTorch rounds float64 through float32, twice)."""
    torch = torch_or_skip()
    values = _float32_probe()
    if source == "float64":
        tiny = np.abs(values.astype(np.float64)) * 2.0 ** -30
        values = np.concatenate([values + tiny, values - tiny])
    want = bits(torch.from_numpy(values).to(torch_dtype(name)))
    dtype = getattr(mg, name)
    for convert in (lambda t: t.to(dtype), lambda t: getattr(t, {"float16": "half"}.get(name, name))(),
                    lambda t: mg.tensor(t.numpy(), dtype=dtype), lambda t: mg.as_tensor(t.numpy(), dtype=dtype),
                    lambda t: mg.empty(t.shape, dtype=dtype).copy_(t), lambda t: t.new_tensor(t.numpy(), dtype=dtype),
                    lambda t: _written(t, dtype, differentiable=False), lambda t: _written(t, dtype)):
        with np.errstate(all="ignore"):
            got = bits(convert(mg.tensor(values)))
        _assert_same_bits(got, want, name)
    some = values[::97]                        # Python floats (float64 when the source is): the list path too
    want = bits(torch.tensor(some.tolist(), dtype=torch_dtype(name)))
    _assert_same_bits(bits(mg.tensor(some.tolist(), dtype=dtype)), want, name)
    numbers = iter(some.tolist())                                      # and a Python function's results (apply_)
    _assert_same_bits(bits(mg.zeros(len(some), dtype=dtype).apply_(lambda _: next(numbers))), want, name)


def _near_ties(name):
    """float64 numbers that round to another 16-bit value through float32 (as PyTorch rounds them) than directly: a
    hair beyond the midpoint between an even value of ``name`` and its neighbour away from zero. float32 holds the
    midpoint (a tie: to the even one), one rounding does not (to the neighbour)."""
    evens = [0x3C00, 0x4100, 0xC200, 0x3A94] if name == "float16" else [0x3F80, 0x4100, 0xC200, 0x3E9A]
    patterns = np.array(evens + [p + 1 for p in evens], dtype=np.uint16)      # + 1: the neighbour away from zero
    values = from_bits(patterns, name, mg).double().numpy()
    midpoints = (values[:4] + values[4:]) / 2
    return [float(m * (1 + 2.0 ** -40)) for m in midpoints], midpoints


_NUMBER_PATHS = {
    "full": lambda L, d, s: L.full((2,), s, dtype=d),
    "fill_": lambda L, d, s: L.zeros(2, dtype=d).fill_(s),
    "fill_(tensor)": lambda L, d, s: L.zeros(2, dtype=d).fill_(L.tensor(s, dtype=L.float64)),
    "setitem": lambda L, d, s: _set(L.zeros(2, dtype=d), 0, s),
    "setitem(mask)": lambda L, d, s: _set(L.zeros(2, dtype=d), L.tensor([True, False]), s),
    "setitem(indices)": lambda L, d, s: _set(L.zeros(2, dtype=d), L.tensor([1]), s),
    "setitem(tensor)": lambda L, d, s: _set(L.zeros(2, dtype=d), slice(None), L.tensor([s, -s], dtype=L.float64)),
    "masked_fill": lambda L, d, s: L.zeros(2, dtype=d).masked_fill(L.tensor([True, False]), s),
    "index_fill": lambda L, d, s: L.zeros(3, dtype=d).index_fill(0, L.tensor([0, 2]), s),
    "scatter(value)": lambda L, d, s: L.zeros(3, dtype=d).scatter(0, L.tensor([0, 2]), s),
    "fill_diagonal_": lambda L, d, s: L.zeros(2, 2, dtype=d).fill_diagonal_(s),
    "where": lambda L, d, s: L.where(L.tensor([True, False]), L.zeros(2, dtype=d), s),
    "add": lambda L, d, s: L.tensor([0.0, 1.0, 0.5], dtype=d) + s,
    "sub": lambda L, d, s: L.tensor([0.0, 1.0, 0.5], dtype=d) - s,
    "rsub": lambda L, d, s: s - L.tensor([0.0, 1.0, 0.5], dtype=d),
    "add_": lambda L, d, s: L.tensor([0.0, 1.0, 0.5], dtype=d).add_(s),
    "pow": lambda L, d, s: L.tensor([2.0, 0.5], dtype=d).pow(s),
    "clamp": lambda L, d, s: L.tensor([-5.0, 0.0, 5.0], dtype=d).clamp(min=s),
    "tensor(list)": lambda L, d, s: L.tensor([s, -s], dtype=d),
    "apply_": lambda L, d, s: L.zeros(2, dtype=d).apply_(lambda _: s),
    "arange": lambda L, d, s: L.arange(0.0, 5 * s, s, dtype=d),
    "linspace": lambda L, d, s: L.linspace(-s, s, 5, dtype=d),
    "logspace": lambda L, d, s: L.logspace(s, -s, 5, base=1.5, dtype=d)}


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("case", sorted(_NUMBER_PATHS))
def test_python_numbers_round_to_16_bits_through_float32(case, name):
    """A Python float (or a float64 value) written into or combined with a 16-bit tensor is rounded as PyTorch
    rounds it: to float32, then to 16 bits (twice). In one rounding, these numbers round to the neighbouring value."""
    torch = torch_or_skip()
    numbers, midpoints = _near_ties(name)
    for s, midpoint in zip(numbers, midpoints):
        assert s != midpoint and float(np.float32(s)) == midpoint       # (the numbers are what they claim)
        got, want = (_NUMBER_PATHS[case](L, getattr(L, name), s) for L in (mg, torch))
        np.testing.assert_array_equal(bits(got), bits(want))


def _set(t, index, value):
    t[index] = value
    return t


@pytest.mark.parametrize("name", DTYPES)
def test_widening_every_16_bit_value_is_exact(name):
    """Every one of the 65536 patterns to float32 and float64 (exact), and to the other 16-bit dtype (rounded),
    as PyTorch; ``view`` reinterprets the bits both ways."""
    torch = torch_or_skip()
    patterns = _all_patterns()
    x_mg, x_th = from_bits(patterns, name, mg), from_bits(patterns, name, torch)
    for wide in ("float32", "float64"):
        got, want = x_mg.to(getattr(mg, wide)).numpy(), x_th.to(getattr(torch, wide)).numpy()
        np.testing.assert_array_equal(got, want)
    other = "float16" if name == "bfloat16" else "bfloat16"
    with np.errstate(all="ignore"):
        _assert_same_bits(bits(x_mg.to(getattr(mg, other))), bits(x_th.to(getattr(torch, other))), other)
    np.testing.assert_array_equal(x_mg.view(mg.int16).numpy(), x_th.view(torch.int16).numpy())
    assert x_mg.view(mg.int16).view(getattr(mg, name)).dtype == getattr(mg, name)


@pytest.mark.parametrize("name", DTYPES)
def test_integers_and_python_numbers_round_as_pytorch(name):
    torch = torch_or_skip()
    ints = np.random.default_rng(1).integers(-2 ** 40, 2 ** 40, 20_000)
    ints = np.concatenate([ints, np.arange(-5000, 5000)])
    _assert_same_bits(bits(mg.tensor(ints).to(getattr(mg, name))), bits(torch.tensor(ints).to(torch_dtype(name))),
                      name)
    numbers = [0.1, 1 / 3, 65519.0, 1e-7, -2.5, 257, 1e10, float("inf")]
    _assert_same_bits(bits(mg.tensor(numbers, dtype=getattr(mg, name))),
                      bits(torch.tensor(numbers, dtype=torch_dtype(name))), name)
    back = np.array([-2.5, 2.5, 3.75, 1e4, -1.0, 300.7, -300.2, 3e9, -3e9, np.nan, np.inf, -np.inf], dtype=np.float32)
    for integer in ("int64", "int32", "int16", "int8", "uint8", "bool"):   # truncated as C casts (-2.5 -> 254)
        got = mg.tensor(back).to(getattr(mg, name)).to(getattr(mg, integer)).numpy()
        want = torch.tensor(back).to(torch_dtype(name)).to(getattr(torch, integer)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=integer)


@pytest.mark.parametrize("name", DTYPES)
def test_printing_and_attributes(name):
    torch = torch_or_skip()
    values = [[1.1, -2.5, 3e-3], [1e4, 0.0, -7.0]]
    for data in (values, values[0][1:2], [[1.0, 2.0]]):
        t_mg, t_th = mg.tensor(data, dtype=getattr(mg, name)), torch.tensor(data, dtype=torch_dtype(name))
        assert repr(t_mg) == repr(t_th).replace("torch.", "minigrad."), (repr(t_mg), repr(t_th))
    t = mg.ones(3, dtype=getattr(mg, name))
    assert t.is_floating_point() and t.element_size() == 2 and t.is_signed()
    assert t.requires_grad_().requires_grad
    assert mg.is_floating_point(t) and str(mg.bfloat16) == "bfloat16"


def test_python_numbers_in_arithmetic_stay_float32():
    """``x * 0.1`` multiplies by float32(0.1) (PyTorch's opmath scalar), comparisons compare with 0.1 rounded to
    the tensor's dtype: both as in PyTorch, bit for bit."""
    torch = torch_or_skip()
    values = np.random.default_rng(2).standard_normal(4000).astype(np.float32) * 10
    for name in DTYPES:
        b = rounded(values, name)
        x_mg, x_th = from_bits(b, name, mg), from_bits(b, name, torch)
        for number in (0.1, 0.3, 1 / 3, 257, 3, 1e-3):
            for op in (lambda x, c: x + c, lambda x, c: x - c, lambda x, c: c - x, lambda x, c: x * c,
                       lambda x, c: x / c, lambda x, c: c / x):
                assert_ulps(op(x_mg, number), op(x_th, number), 0, f"{name} {number}")
            for cmp in (lambda x, c: x > c, lambda x, c: x == c, lambda x, c: x <= c):
                np.testing.assert_array_equal(cmp(x_mg, number).numpy(), cmp(x_th, number).numpy())
        rounded_point = float(torch.tensor(0.1, dtype=torch_dtype(name)))
        assert bool(mg.tensor(rounded_point, dtype=getattr(mg, name)) == 0.1)


def test_promotion_of_mixed_16_bit_operands():
    torch = torch_or_skip()
    cases = [((3,), "bfloat16", (3,), "float16"), ((3,), "bfloat16", (), "float32"), ((), "bfloat16", (), "float16"),
             ((3,), "bfloat16", (3,), "int64"), ((3,), "int32", (), "bfloat16"), ((3,), "bfloat16", (3,), "float64")]
    for sa, da, sb, db in cases:
        a_mg, b_mg = mg.full(sa, 1.5, dtype=getattr(mg, da)), mg.full(sb, 3.0, dtype=getattr(mg, db))
        a_th, b_th = torch.full(sa, 1.5, dtype=getattr(torch, da)), torch.full(sb, 3.0, dtype=getattr(torch, db))
        for op in (lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a / b):
            got, want = op(a_mg, b_mg), op(a_th, b_th)
            assert str(got.dtype) == str(want.dtype).rpartition(".")[2], (sa, da, sb, db)
            np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


# --------------------------------------------------------------------------- ops: forward and gradients
def _normal(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale


def _positive(*shape, seed=0):
    return np.abs(_normal(*shape, seed=seed)) + 0.1


# name: (fn(lib, *tensors), inputs, forward ulps, gradient ulps[, s]). 0 = bit for bit. An element also passes within
# s ulps (default 1) of its tensor's largest value (cancellation: see low_precision_helpers.assert_ulps); attention's
# backward, which PyTorch's flash kernel rounds at several points, needs s = 4 for one float16 value of dk. Each 1 is a float32 computation
# done in another order (or with another float32 exp/log/tanh) than PyTorch's, rounded once: the 16-bit results are
# equal except where the float32 value sits within its own last bits of a 16-bit rounding tie.
OPS = {
    "add": (lambda L, a, b: a + b, [_normal(5, 7), _normal(7, seed=1)], 0, 0),
    "sub_alpha": (lambda L, a, b: L.sub(a, b, alpha=2), [_normal(5, 7), _normal(5, 7, seed=1)], 0, 0),
    "mul": (lambda L, a, b: a * b, [_normal(5, 7), _normal(5, 7, seed=1)], 0, 0),
    "div": (lambda L, a, b: a / b, [_normal(5, 7), _positive(5, 7, seed=1)], 0, 2),   # PyTorch: -g * a / (b * b)
    "exp": (lambda L, a: L.exp(a), [_normal(64)], 1, 1),
    "log": (lambda L, a: L.log(a), [_positive(64)], 1, 0),
    "tanh": (lambda L, a: L.tanh(a), [_normal(64)], 1, 1),
    "sigmoid": (lambda L, a: L.sigmoid(a), [_normal(64)], 1, 1),
    "sqrt": (lambda L, a: L.sqrt(a), [_positive(64)], 0, 1),
    "rsqrt": (lambda L, a: L.rsqrt(a), [_positive(64)], 1, 1),
    "pow_scalar": (lambda L, a: a ** 2, [_normal(64)], 0, 0),
    "relu": (lambda L, a: L.relu(a), [_normal(64)], 0, 0),
    "gelu": (lambda L, a: L.nn.functional.gelu(a), [_normal(64)], 1, 1),
    "silu": (lambda L, a: L.nn.functional.silu(a), [_normal(64)], 1, 1),
    "sum": (lambda L, a: a.sum(1), [_normal(6, 300)], 1, 0),
    "sum_all": (lambda L, a: a.sum(), [_normal(4096)], 1, 0),
    "mean": (lambda L, a: a.mean(-1), [_normal(6, 300)], 1, 1),
    # PyTorch's var backward, 2 / (N - 1) * g * (x - x.mean()), rounds the mean and the difference to 16 bits
    "var": (lambda L, a: a.var(0), [_normal(300, 5)], 1, 1),
    "amax": (lambda L, a: a.amax(1), [_normal(6, 30)], 0, 0),
    "matmul": (lambda L, a, b: a @ b, [_normal(8, 64), _normal(64, 5, seed=1)], 1, 1),
    "bmm": (lambda L, a, b: L.bmm(a, b), [_normal(3, 4, 32), _normal(3, 32, 6, seed=1)], 1, 1),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [_normal(2, 5, 32), _normal(7, 32, seed=1),
                                                                     _normal(7, seed=2)], 1, 1),
    "softmax": (lambda L, a: L.softmax(a, -1), [_normal(6, 50)], 1, 1),
    # its gradient g - exp(y) * sum(g) cancels where it is small: ulps of those small values
    "log_softmax": (lambda L, a: L.log_softmax(a, -1), [_normal(6, 50)], 1, 1),
    "embedding": (lambda L, i, w: L.nn.functional.embedding(i, w), [np.array([[1, 4, 4], [0, 9, 1]]),
                                                                    _normal(10, 16)], 0, 1),
    "cross_entropy": (lambda L, x, t: L.nn.functional.cross_entropy(x, t), [_normal(16, 10), np.arange(16) % 10],
                      1, 1),
    "cross_entropy_smoothing": (lambda L, x, t: L.nn.functional.cross_entropy(x, t, label_smoothing=0.1),
                                [_normal(16, 10), np.arange(16) % 10], 1, 1),
    "attention": (lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
                  [_normal(2, 3, 8, 16), _normal(2, 3, 8, 16, seed=1), _normal(2, 3, 8, 16, seed=2)], 1, 1, 4),
    "mse_loss": (lambda L, a, b: L.nn.functional.mse_loss(a, b), [_normal(8, 9), _normal(8, 9, seed=1)], 1, 1),
    "layer_norm": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (32,), w, b),
                   [_normal(4, 32), _normal(32, seed=1), _normal(32, seed=2)], 1, 1),
    "rms_norm": (lambda L, x, w: L.nn.functional.rms_norm(x, (32,), w), [_normal(4, 32), _normal(32, seed=1)], 1, 1),
}


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_matches_pytorch(op, name):
    fn, arrays, forward_ulps, grad_ulps, *scale = OPS[op]
    mirror_low(fn, arrays, name, forward_ulps, grad_ulps, scale_ulps=scale[0] if scale else 1)


# --------------------------------------------------------------------------- the norms
NORMS = {   # fn(lib, x, weight, bias), shapes of x, weight, bias
    "layer_norm": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (64,), w, b), [(8, 64), (64,), (64,)]),
    "rms_norm": (lambda L, x, w: L.nn.functional.rms_norm(x, (64,), w), [(8, 64), (64,)]),
    "group_norm": (lambda L, x, w, b: L.nn.functional.group_norm(x, 4, w, b), [(4, 8, 16), (8,), (8,)]),
    "batch_norm": (lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, w, b, training=True),
                   [(4, 8, 16), (8,), (8,)]),
    "instance_norm": (lambda L, x, w, b: L.nn.functional.instance_norm(x, None, None, w, b),
                      [(4, 8, 16), (8,), (8,)]),
}


def _norm_arrays(norm, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) * (3 if i == 0 else 1) + (1 if i == 0 else 0)
            for i, s in enumerate(NORMS[norm][1])]


@pytest.mark.parametrize("params", ["same", "float32"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("norm", sorted(NORMS))
def test_norm_is_float64_rounded_once(norm, name, params):
    """Every norm, forward and backward, 16-bit input with 16-bit or float32 parameters: output and gradients
    (each in its tensor's dtype, as PyTorch gives them) are the float64 values rounded once, within 1 ulp."""
    assert_close_to_float64(NORMS[norm][0], _norm_arrays(norm), name, name if params == "same" else "float32")


# PyTorch's CPU layer_norm computes dw and db in the input's 16-bit dtype and then casts them to the float32
# parameters' dtype: they are off from the float64 sums by up to a 16-bit ulp (minigrad's: float32-exact)
SIXTEEN_BIT_PARAM_GRADS = {"layer_norm"}


@pytest.mark.parametrize("params", ["same", "float32"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("norm", sorted(NORMS))
def test_norm_matches_pytorch(norm, name, params):
    """The same against PyTorch's own 16-bit results: output dtypes and gradient dtypes as PyTorch's mixed-dtype
    rules give them (16-bit output and dx, float32 dw/db under float32 parameters), values within 1 ulp. With
    16-bit parameters PyTorch accumulates dw and db of layer_norm in 16 bits (off by many ulps from the float64
    sum, see docs/derivations/low_precision.md): there only the output and dx are compared with PyTorch."""
    torch = torch_or_skip()
    fn, _ = NORMS[norm]
    arrays = _norm_arrays(norm)
    pdt = name if params == "same" else "float32"
    results = []
    for lib in (mg, torch):
        x = from_bits(rounded(arrays[0], name), name, lib, True)
        ps = [from_bits(rounded(a, pdt), pdt, lib, True) if pdt != "float32" else lib.tensor(a, requires_grad=True)
              for a in arrays[1:]]
        out = fn(lib, x, *ps)
        upstream = from_bits(rounded(np.random.default_rng(1).standard_normal(tuple(out.shape)), name), name, lib)
        out.backward(upstream)
        results.append([out, x.grad] + [p.grad for p in ps])
    for i, (got, want) in enumerate(zip(*results)):
        what = ["forward", "dx", "dw", "db"][i]
        assert str(got.dtype) == str(want.dtype).rpartition(".")[2], (what, got.dtype, want.dtype)
        if i >= 2 and params == "same":
            continue
        if i >= 2 and norm in SIXTEEN_BIT_PARAM_GRADS:    # float32 dw/db holding PyTorch's 16-bit rounding
            assert_ulps(got.to(getattr(mg, name)), want.to(torch_dtype(name)), 1, what, scale_ulps=2)
        elif str(want.dtype) == "torch.float32":
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
        else:
            assert_ulps(got, want, 1, what, scale_ulps=2)


# --------------------------------------------------------------------------- checkpoints
def _every_bfloat16():
    return from_bits(_all_patterns().reshape(256, 256), "bfloat16", mg)


def test_bfloat16_checkpoints_round_trip_exactly(tmp_path):
    """mg.save/mg.load keep every bfloat16 bit pattern (NaN payloads included), Parameters and sharing."""
    x = _every_bfloat16()
    weight = mg.nn.Parameter(x[:3].clone())
    mg.save({"x": x, "weight": weight, "again": x, "half": mg.ones(2, dtype=mg.float16)}, tmp_path / "a.mg")
    loaded = mg.load(tmp_path / "a.mg")
    np.testing.assert_array_equal(bits(loaded["x"]), bits(x))
    assert loaded["x"].dtype == mg.bfloat16 and loaded["half"].dtype == mg.float16
    assert isinstance(loaded["weight"], mg.nn.Parameter) and loaded["weight"].requires_grad
    np.testing.assert_array_equal(bits(loaded["weight"]), bits(x[:3]))
    assert loaded["again"]._data is loaded["x"]._data


def test_bfloat16_archive_that_lies_is_refused(tmp_path):
    import json
    import zipfile
    mg.save({"x": mg.ones(3, dtype=mg.bfloat16)}, tmp_path / "a.mg")
    with zipfile.ZipFile(tmp_path / "a.mg") as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    structure = json.loads(entries["minigrad/structure.json"])
    structure["bfloat16_arrays"] = ["0"]
    entries["minigrad/structure.json"] = json.dumps(structure).encode()
    with zipfile.ZipFile(tmp_path / "b.mg", "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    with pytest.raises(RuntimeError, match="bfloat16_arrays"):
        mg.load(tmp_path / "b.mg")


def test_pytorch_bfloat16_checkpoint_loads(tmp_path):
    """A ``torch.save`` file holding bfloat16 tensors (a view of a storage, a module's state_dict) is read by
    mg.load (which never imports torch), bit for bit."""
    torch = torch_or_skip()
    every = from_bits(_all_patterns(), "bfloat16", torch)
    layer = torch.nn.Linear(4, 3).to(torch.bfloat16)
    torch.save({"every": every, "tail": every[100:200], "layer": layer.state_dict()}, tmp_path / "t.pt")
    loaded = mg.load(tmp_path / "t.pt")
    np.testing.assert_array_equal(bits(loaded["every"]), bits(every))
    np.testing.assert_array_equal(bits(loaded["tail"]), bits(every[100:200]))
    assert loaded["layer"]["weight"].dtype == mg.bfloat16
    np.testing.assert_array_equal(bits(loaded["layer"]["weight"]), bits(layer.weight))


def test_safetensors_bfloat16_both_ways(tmp_path):
    torch = torch_or_skip()
    st = pytest.importorskip("safetensors.torch")
    from minigrad.serialization import load_safetensors, save_safetensors
    x = _every_bfloat16()
    save_safetensors({"x": x, "f": mg.ones(2)}, tmp_path / "a.safetensors")
    theirs = st.load_file(str(tmp_path / "a.safetensors"))
    assert theirs["x"].dtype == torch.bfloat16
    np.testing.assert_array_equal(bits(theirs["x"]), bits(x))
    st.save_file({"y": theirs["x"][7:9].contiguous()}, str(tmp_path / "b.safetensors"))
    ours = load_safetensors(tmp_path / "b.safetensors")
    assert ours["y"].dtype == mg.bfloat16
    np.testing.assert_array_equal(bits(ours["y"]), bits(x[7:9]))


# --------------------------------------------------------------------------- RMSNorm's casting modes
def _reference_rmsnorms(torch):
    """The RMSNorm classes of the models, line for line (LLaMA's, minimind's, Gemma's), and the formula with no
    cast at all. Each takes the weight it is given."""

    class LlamaRMSNorm(torch.nn.Module):
        def __init__(self, weight, eps):
            super().__init__()
            self.eps, self.weight = eps, torch.nn.Parameter(weight)

        def _norm(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            output = self._norm(x.float()).type_as(x)
            return output * self.weight

    class MinimindRMSNorm(LlamaRMSNorm):
        def forward(self, x):
            return self.weight * (x.float() * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)

    class GemmaRMSNorm(LlamaRMSNorm):
        def forward(self, x):
            output = self._norm(x.float())
            output = output * (1.0 + self.weight.float())
            return output.type_as(x)

    class NoCastRMSNorm(LlamaRMSNorm):
        def forward(self, x):
            return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps) * self.weight

    return {"llama": LlamaRMSNorm, "minimind": MinimindRMSNorm, "gemma": GemmaRMSNorm, "none": NoCastRMSNorm}


# model: minigrad's casting mode
CASTING_OF = {"llama": "llama", "minimind": "minimind", "gemma": "gemma", "none": "none"}
# (forward ulps, gradient ulps): minigrad's float32 normalization sums x^2 in float64 where the reference sums float32
# squares, so xhat can differ in float32's last bit and, rarely, round to a neighbouring 16-bit value. In "none" and
# "minimind" rstd is a 16-bit rsqrt of a (6, 1) tensor: PyTorch computes such short tensors on its scalar path, which
# rounds sqrt(x) to 16 bits before the reciprocal (its vectorized path, and minigrad, round once): 1 ulp in rstd,
# so 2 in x * rstd and up to 3 in some gradients (a float32 dw then differs by that much of x's 16-bit ulp).
CASTING_ULPS = {"llama": (1, 1), "minimind": (2, 2), "gemma": (1, 1), "none": (2, 3)}


@pytest.mark.parametrize("weight_dtype", ["same", "float32"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("model", sorted(CASTING_OF))
def test_rms_norm_casting_modes_match_the_reference_code(model, name, weight_dtype):
    """``rms_norm(..., casting=mode)`` against the model's own RMSNorm class run by PyTorch: output dtype and
    values, and the gradients of x and of the weight (each in its own dtype)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 96)) * 4).astype(np.float32)
    w = (1 + 0.3 * rng.standard_normal(96)).astype(np.float32)
    wdt = name if weight_dtype == "same" else "float32"
    eps = 1e-6
    reference = _reference_rmsnorms(torch)[model](from_bits(rounded(w, wdt), wdt, torch) if wdt != "float32"
                                                  else torch.tensor(w), eps)
    x_th = from_bits(rounded(x, name), name, torch, True)
    out_th = reference(x_th)
    x_mg = from_bits(rounded(x, name), name, mg, True)
    w_mg = (from_bits(rounded(w, wdt), wdt, mg) if wdt != "float32" else mg.tensor(w)).requires_grad_()
    out_mg = F.rms_norm(x_mg, (96,), w_mg, eps, casting=CASTING_OF[model])
    forward_ulps, grad_ulps = CASTING_ULPS[model]
    upstream = rng.standard_normal(tuple(out_th.shape)).astype(np.float32)
    out_dtype = str(out_th.dtype).rpartition(".")[2]
    assert str(out_mg.dtype) == out_dtype
    if out_dtype == "float32":     # a 16-bit xhat times the float32 weight: forward_ulps of xhat's dtype
        np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().numpy(),
                                   rtol=forward_ulps * EPS[name] + 1e-6, atol=1e-6)
        g_th, g_mg = torch.tensor(upstream), mg.tensor(upstream)
    else:
        assert_ulps(out_mg, out_th, forward_ulps, "forward", scale_ulps=1)
        g_th, g_mg = from_bits(rounded(upstream, out_dtype), out_dtype, torch), from_bits(rounded(upstream, out_dtype),
                                                                                           out_dtype, mg)
    out_th.backward(g_th)
    out_mg.backward(g_mg)
    assert_ulps(x_mg.grad, x_th.grad, grad_ulps, "dx", scale_ulps=1)
    if wdt == "float32":
        np.testing.assert_allclose(w_mg.grad.numpy(), reference.weight.grad.numpy(), rtol=1e-5,
                                   atol=(grad_ulps - 1) * EPS[name] * float(reference.weight.grad.abs().max()) + 1e-6)
    else:
        assert_ulps(w_mg.grad, reference.weight.grad, grad_ulps, "dw", scale_ulps=1)


def test_rms_norm_casting_modes_in_float64_and_module():
    """In float64 the casts do nothing: "llama", "minimind" and "none" equal PyTorch's rms_norm, "gemma" is rms_norm with
    weight 1 + w (to 1e-12, gradients too); nn.RMSNorm takes the mode, starts Gemma's weight at zeros, says so in its
    repr, and refuses an unknown mode."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((3, 10)), rng.standard_normal(10)
    for casting, weight in (("llama", w), ("minimind", w), ("none", w), ("gemma", w - 1)):
        def fn(xt, wt, casting=casting):
            return F.rms_norm(xt, (10,), wt, 1e-6, casting=casting)
        got = fn(mg.tensor(x), mg.tensor(weight))
        want = F.rms_norm(mg.tensor(x), (10,), mg.tensor(w), 1e-6)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
        assert mg.gradcheck(fn, (mg.tensor(x, requires_grad=True), mg.tensor(weight, requires_grad=True)))
    m = mg.nn.RMSNorm(10, casting="gemma")
    assert (m.weight.detach().numpy() == 0).all() and "casting='gemma'" in repr(m)
    assert (mg.nn.RMSNorm(10, casting="llama").weight.detach().numpy() == 1).all()
    with pytest.raises(ValueError, match="casting"):
        mg.nn.RMSNorm(10, casting="bf16")
    with pytest.raises(ValueError, match="casting"):
        F.rms_norm(mg.tensor(x), (10,), casting="LLaMA")


@pytest.mark.parametrize("op", ["sort", "sort_descending", "argsort", "msort", "nanmedian", "median", "kthvalue", "topk"])
def test_bfloat16_orderings_put_nan_where_pytorch_does(op):
    """ml_dtypes' own sort does not order NaN last; minigrad's orderings of bfloat16 match PyTorch's, NaN included."""
    torch = torch_or_skip()
    values = np.array([[np.nan, 1.0, 0.0, -2.0, 3.0], [2.0, np.nan, np.nan, -1.0, 0.5]], np.float32)
    calls = {"sort": lambda t: t.sort(1).values, "sort_descending": lambda t: t.sort(1, descending=True).values,
             "argsort": lambda t: t.argsort(dim=1, stable=True), "msort": lambda t: t.T.msort(),
             "nanmedian": lambda t: t.nanmedian(1).values, "median": lambda t: t.median(1).values,
             "kthvalue": lambda t: t.kthvalue(2, 1).values, "topk": lambda t: t.topk(2, 1).values}
    got = calls[op](mg.tensor(values).bfloat16())
    want = calls[op](torch.tensor(values).bfloat16())
    np.testing.assert_array_equal(got.float().numpy() if got.dtype == mg.bfloat16 else got.numpy(),
                                  want.float().numpy() if want.dtype == torch.bfloat16 else want.numpy())


# --------------------------------------------------------------------------- bfloat16 is a float everywhere
# NumPy calls ml_dtypes' bfloat16 kind "V" (void), not "f": each place that asks whether a dtype is floating must
# ask minigrad.dtypes (kind_of, is_floating_point), or it refuses bfloat16 or takes it for an integer.
def test_modules_convert_to_bfloat16_and_back():
    m = mg.nn.Sequential(mg.nn.Linear(3, 2), mg.nn.BatchNorm1d(2))
    w32 = m[0].weight.detach().numpy().copy()
    m[0].weight.grad = mg.ones(2, 3)
    assert m.bfloat16() is m
    assert {p.dtype for p in m.parameters()} == {mg.bfloat16} and m[0].weight.grad.dtype == mg.bfloat16
    assert m[1].running_var.dtype == mg.bfloat16 and m[1].num_batches_tracked.dtype == mg.int64
    assert m(mg.ones(4, 3, dtype=mg.bfloat16)).dtype == mg.bfloat16
    m.to(mg.float32)
    assert {p.dtype for p in m.parameters()} == {mg.float32} and m[1].running_mean.dtype == mg.float32
    w = m[0].weight.detach().numpy()
    assert np.abs(w - w32).max() <= 2.0 ** -8 * np.abs(w32).max()            # rounded to bfloat16 once
    assert (w.view(np.uint32) & 0xFFFF == 0).all()                           # and exactly a bfloat16 value
    with pytest.raises(TypeError, match="floating point or complex"):
        m.to(mg.int32)


def test_bfloat16_is_taken_where_pytorch_takes_a_float_dtype():
    with pytest.warns(UserWarning, match="deprecated"):
        assert mg.range(0, 1, 0.25, dtype=mg.bfloat16).float().tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert mg.hann_window(4, dtype=mg.bfloat16).float().tolist() == [0.0, 0.5, 1.0, 0.5]
    assert mg.fft.fftfreq(4, dtype=mg.bfloat16).float().tolist() == [0.0, 0.25, -0.5, -0.25]
    primal, tangent = mg.func.jvp(lambda x: x * 3, (mg.ones(2, dtype=mg.bfloat16),), (mg.ones(2, dtype=mg.bfloat16),))
    assert primal.dtype == tangent.dtype == mg.bfloat16 and tangent.float().tolist() == [3.0, 3.0]
    previous = mg.get_default_dtype()
    try:
        mg.set_default_dtype(mg.bfloat16)                                    # PyTorch takes the 16-bit floats too
        assert mg.ones(1).dtype == mg.tensor([1.5]).dtype == mg.bfloat16
    finally:
        mg.set_default_dtype(previous)
    with pytest.raises(TypeError, match="floating-point"):
        mg.set_default_dtype(mg.int64)


@pytest.mark.parametrize("name", DTYPES)
def test_in_place_float_ops_on_16_bit_tensors(name):
    dtype = getattr(mg, name)
    values = np.array([0.25, 0.5, 0.75], np.float32)
    for op in ("exp", "sqrt", "sigmoid", "logit", "lgamma", "digamma", "erfinv", "i0", "rsqrt", "reciprocal"):
        t = mg.tensor(values).to(dtype)
        assert getattr(t, op + "_")() is t and t.dtype == dtype
        exact = getattr(mg, op)(mg.tensor(values.astype(np.float64))).numpy()      # float64
        assert np.abs(t.float().numpy() - exact).max() <= EPS[name] * np.abs(exact).max(), op


@pytest.mark.parametrize("name", DTYPES)
def test_nextafter_steps_one_16_bit_float(name):
    dtype = getattr(mg, name)
    x = mg.tensor([1.5, -2.0, 0.0, 1.0]).to(dtype)
    y = mg.tensor([0.5, 3.0, 1.0, 1.0]).to(dtype)
    b = x.detach().numpy().view(np.uint16).astype(np.int64)
    step = mg.nextafter(x, y).numpy().view(np.uint16).astype(np.int64)
    # towards zero from a positive number and from a negative one: the pattern one lower; 0 -> the smallest
    # positive subnormal (pattern 1); towards itself: unchanged
    assert (step - b).tolist() == [-1, -1, 1, 0]


def test_optimizers_with_bfloat16_state():
    # Adafactor steps a bfloat16 parameter (its eps comes from the parameter's dtype)
    p = mg.nn.Parameter(mg.tensor([[1.0, 2.0], [3.0, 4.0]]).bfloat16())
    p.grad = mg.ones(2, 2, dtype=mg.bfloat16)
    opt = mg.optim.Adafactor([p], lr=0.01)
    opt.step()
    assert p.dtype == mg.bfloat16 and (p.detach().float().numpy() < [[1.0, 2.0], [3.0, 4.0]]).all()
    restored = mg.optim.Adafactor([mg.nn.Parameter(p.detach().clone())])
    restored.load_state_dict(opt.state_dict())
    # a bfloat16 moment loads into a float32 parameter's state as float32, as in PyTorch
    q = mg.nn.Parameter(mg.ones(3))
    adam = mg.optim.Adam([q])
    q.grad = mg.ones(3)
    adam.step()
    state = adam.state_dict()
    state["state"][0]["exp_avg"] = state["state"][0]["exp_avg"].bfloat16()
    other = mg.nn.Parameter(mg.ones(3))
    loaded = mg.optim.Adam([other])
    loaded.load_state_dict(state)
    assert loaded.state[other]["exp_avg"].dtype == mg.float32


def test_distributions_take_bfloat16_parameters():
    b = mg.tensor([0.25, 0.75]).bfloat16()
    cases = {"Categorical": lambda: mg.distributions.Categorical(probs=b).entropy(),
             "Bernoulli": lambda: mg.distributions.Bernoulli(probs=b).log_prob(mg.ones(2, dtype=mg.bfloat16)),
             "SigmoidTransform": lambda: mg.distributions.transforms.SigmoidTransform()(b),
             "StickBreakingTransform": lambda: mg.distributions.transforms.StickBreakingTransform()(b)}
    exact = {"Categorical": -(0.25 * np.log(0.25) + 0.75 * np.log(0.75)), "Bernoulli": np.log([0.25, 0.75]),
             "SigmoidTransform": 1 / (1 + np.exp(-np.array([0.25, 0.75])))}
    for name, call in cases.items():
        out = call()
        assert out.dtype == mg.bfloat16, name
        if name in exact:
            np.testing.assert_allclose(out.float().numpy(), exact[name], rtol=2 ** -7, err_msg=name)
    assert abs(float(cases["StickBreakingTransform"]().float().sum()) - 1) <= 2 ** -6
