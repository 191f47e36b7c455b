"""Higher-order gradients (create_graph=True) through the elementwise ops, the activations, the complex
ops and random samples: every Function's ``graph_backward``.

Each op: ``check_gradgrad`` (finite differences of the create_graph gradients, which must also equal the
ordinary ones) and ``assert_double_mirror`` (first and second-order gradients against PyTorch), float64,
inputs away from the kinks; binary ops with both inputs requiring grad, also broadcasting. Then third
derivatives of chains against PyTorch, ``backward(create_graph=True)`` giving Hessian-vector products, the
conventions at the kinks against PyTorch, constant zero gradients inside a graph, the pointwise activations
keeping their input (as PyTorch), and a deliberately wrong ``graph_backward`` that the checks catch.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops.elementwise import Tanh

from .mirror import assert_double_mirror, check_gradgrad, run_both, torch_or_replay, torch_or_skip

SHAPE = (3, 4)


def nonzero(rng, shape=SHAPE, low=0.3, high=2.0):
    """Values of random sign with |x| in [low, high]: away from 0, the kink of relu, abs, sign, ..."""
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(low, high, shape)


def positive(rng, shape=SHAPE, low=0.4, high=2.0):
    return rng.uniform(low, high, shape)


def functional(name, **kwargs):
    return lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs)


# name -> (lib, x -> y, input sampler)
UNARY = {
    "pow_scalar": (lambda lib, x: x ** 3.0, nonzero),
    "pow_fraction": (lambda lib, x: x ** 0.7, positive),
    "rpow": (lambda lib, x: 2.5 ** x, nonzero),
    "abs": (lambda lib, x: lib.abs(x) * x, nonzero),   # |x| x: PyTorch's d2|x| is a ZeroTensor it cannot export
    "log": (lambda lib, x: lib.log(x), positive),
    "tanh": (lambda lib, x: lib.tanh(x), nonzero),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), nonzero),
    "relu": (lambda lib, x: lib.relu(x) * x, nonzero),
    "sin": (lambda lib, x: lib.sin(x), nonzero),
    "cos": (lambda lib, x: lib.cos(x), nonzero),
    "log1p": (lambda lib, x: lib.log1p(x), positive),
    "expm1": (lambda lib, x: lib.expm1(x), nonzero),
    "log2": (lambda lib, x: lib.log2(x), positive),
    "log10": (lambda lib, x: lib.log10(x), positive),
    "reciprocal": (lambda lib, x: lib.reciprocal(x), nonzero),
    "erf": (lambda lib, x: lib.erf(x), nonzero),
    "floor": (lambda lib, x: lib.floor(x) * x + lib.sign(x), nonzero),
    "round": (lambda lib, x: lib.round(x * 3) * x, nonzero),
    "frac": (lambda lib, x: lib.frac(x) * x, nonzero),
    "clamp": (lambda lib, x: lib.clamp(x, -1.1, 1.3) * x, nonzero),
    "clamp_min": (lambda lib, x: lib.clamp(x, min=0.9) * x, nonzero),
    "gelu": (functional("gelu"), nonzero),
    "gelu_tanh": (functional("gelu", approximate="tanh"), nonzero),
    "silu": (functional("silu"), nonzero),
    "leaky_relu": (lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2) * x, nonzero),
    "elu": (functional("elu", alpha=1.3), nonzero),
    "softplus": (functional("softplus"), nonzero),
    "softplus_threshold": (functional("softplus", beta=2.0, threshold=1.5), nonzero),
    "mish": (functional("mish"), nonzero),
    "hardswish": (lambda lib, x: lib.nn.functional.hardswish(x * 2.2) * x, nonzero),
    "angle_real": (lambda lib, x: lib.angle(x) * x, nonzero),
}

# name -> (lib, a, b -> y, sampler of a, sampler of b)
BINARY = {
    "pow": (lambda lib, a, b: a ** b, positive, nonzero),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), nonzero, nonzero),
    "maximum": (lambda lib, a, b: lib.maximum(a, b) * a, nonzero, nonzero),
    "minimum": (lambda lib, a, b: lib.minimum(a, b) * b, nonzero, nonzero),
    "where": (lambda lib, a, b: lib.where(a > 0, a * a, b * a), nonzero, nonzero),
    "masked_fill": (lambda lib, a, v: a.masked_fill(a > 0, v.sum()) * a, nonzero, nonzero),
    "complex": (lambda lib, a, b: lib.view_as_real(lib.complex(a, b) * lib.complex(b, a)), nonzero, nonzero),
    "polar": (lambda lib, r, t: lib.view_as_real(lib.polar(r, t) * lib.polar(r, t * t)), positive, nonzero),
    "conj": (lambda lib, a, b: lib.view_as_real(lib.complex(a, b).conj() * lib.complex(a * b, b)), nonzero, nonzero),
    "angle": (lambda lib, a, b: lib.angle(lib.complex(a, b)) * a, nonzero, nonzero),
    "abs_complex": (lambda lib, a, b: lib.abs(lib.complex(a, b)), nonzero, nonzero),
    "view_as_real": (lambda lib, a, b: lib.view_as_real(lib.complex(a, b) * lib.complex(a, b)), nonzero, nonzero),
}
BROADCAST_SHAPES = [((3, 4), (4,)), ((3, 1), (1, 4))]


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_double_backward(name):
    f, sample = UNARY[name]
    x = sample(np.random.default_rng(1))
    check_gradgrad(lambda t: f(mg, t), x)
    assert_double_mirror(*run_both(f), x)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_double_backward(name):
    f, sample_a, sample_b = BINARY[name]
    rng = np.random.default_rng(2)
    a, b = sample_a(rng), sample_b(rng)
    check_gradgrad(lambda s, t: f(mg, s, t), a, b)
    assert_double_mirror(*run_both(f), a, b)


@pytest.mark.parametrize("name", ["pow", "atan2", "maximum", "minimum", "where", "complex", "polar"])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_binary_double_backward_broadcasting(name, shapes):
    f, sample_a, sample_b = BINARY[name]
    rng = np.random.default_rng(3)
    a, b = sample_a(rng, shapes[0]), sample_b(rng, shapes[1])
    check_gradgrad(lambda s, t: f(mg, s, t), a, b)
    assert_double_mirror(*run_both(f), a, b)


def test_clamp_tensor_bounds_double_backward():
    """Input and both bounds differentiable, the bounds broadcasting, some bounds crossed (lo > hi)."""
    rng = np.random.default_rng(4)
    x = nonzero(rng)
    lo, hi = rng.uniform(-1.5, 0.2, (4,)), rng.uniform(-0.3, 1.5, (3, 1))
    assert ((lo > hi) & (np.abs(lo - hi) > 0.05)).any()

    def f(lib, x, lo, hi):
        return lib.clamp(x, lo, hi) * (x + lo + hi)
    check_gradgrad(lambda *t: f(mg, *t), x, lo, hi)
    assert_double_mirror(*run_both(f), x, lo, hi)


def test_view_as_complex_double_backward():
    pairs = nonzero(np.random.default_rng(5), (3, 2))

    def f(lib, p):
        z = lib.view_as_complex(p)
        return lib.view_as_real(z * z * z)
    check_gradgrad(lambda p: f(mg, p), pairs)
    assert_double_mirror(*run_both(f), pairs)


@settings(max_examples=8, deadline=None)
@given(alpha=st.floats(0.1, 3.0), beta=st.floats(0.3, 3.0), threshold=st.floats(0.5, 4.0),
       slope=st.floats(-0.5, 0.5), exponent=st.floats(-2.5, 3.5))
def test_parameter_sweep_double_mirror(alpha, beta, threshold, slope, exponent):
    x = nonzero(np.random.default_rng(6), (8,))

    def f(lib, x, alpha, beta, threshold, slope, exponent):
        nnf = lib.nn.functional
        return (nnf.elu(x, alpha) + nnf.softplus(x, beta, threshold) + nnf.leaky_relu(x, slope) * x
                + lib.abs(x) ** exponent)
    # the parameters are passed (not closed over) so that a recorded example is found by them too
    assert_double_mirror(*run_both(f), x, alpha, beta, threshold, slope, exponent)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "softplus", "mish", "hardswish"])
def test_pointwise_activations_keep_their_input_like_pytorch(name):
    """Their graph_backward differentiates f'(x), so x is saved: an in-place write into it before backward
    raises, as in PyTorch (which saves x for these ops too)."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.tensor(np.array([0.5, -1.0]), requires_grad=True)
        h = x * 1
        y = getattr(lib.nn.functional, name)(h)
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


# --------------------------------------------------------------------------- complex inputs
def _complex_double(lib, f, z, u, v):
    """First gradient g of <u, f(z)> (complex, create_graph=True), then the gradients of a non-linear real
    function of it with respect to z and u."""
    zt = lib.tensor(z, requires_grad=True)
    ut = lib.tensor(u, requires_grad=True)
    (g,) = lib.autograd.grad(f(lib, zt), zt, ut, create_graph=True)
    pairs = lib.view_as_real(g)
    loss = (pairs * lib.tensor(v)).sum() + (pairs * pairs).sum() / 2
    return [t.detach().numpy() for t in (g, *lib.autograd.grad(loss, [zt, ut]))]


COMPLEX_INPUT = {
    "conj": lambda lib, z: lib.view_as_real(z.conj() * z * z),
    "angle": lambda lib, z: lib.angle(z),
    "abs": lambda lib, z: lib.abs(z),
    "view_as_real": lambda lib, z: lib.view_as_real(z * z * z),
}


@pytest.mark.parametrize("name", list(COMPLEX_INPUT))
def test_complex_input_double_backward(name):
    """complex128 inputs: gradgradcheck (perturbing real and imaginary parts) and PyTorch's double backward."""
    torch = torch_or_skip()
    f = COMPLEX_INPUT[name]
    rng = np.random.default_rng(7)
    z = nonzero(rng, (5,)) + 1j * nonzero(rng, (5,))
    assert mg.autograd.gradgradcheck(lambda t: f(mg, t), [mg.tensor(z, requires_grad=True)])
    u = rng.standard_normal(f(mg, mg.tensor(z)).shape)
    v = rng.standard_normal(z.shape + (2,))
    for ours, theirs in zip(_complex_double(mg, f, z, u, v), _complex_double(torch, f, z, u, v)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------- random
def test_dropout_double_backward():
    """The mask is a constant: dropout's gradient is linear in the upstream gradient, its second derivative 0."""
    torch = torch_or_replay()
    x = nonzero(np.random.default_rng(8))

    def ours(t):
        mg.manual_seed(3)    # the same mask at every call
        return mg.nn.functional.dropout(t, 0.4) * t
    scale = (ours(mg.tensor(np.ones(SHAPE))) / mg.tensor(np.ones(SHAPE))).numpy()
    assert ((scale == 0) | np.isclose(scale, 1 / 0.6)).all() and (scale == 0).any() and (scale != 0).any()
    check_gradgrad(ours, x)
    assert_double_mirror(ours, lambda t: t * torch.tensor(scale) * t, x)


def test_samples_have_zero_gradients_to_any_order():
    """normal and bernoulli: the sample's gradient with respect to its parameters is 0 (PyTorch's definition),
    a constant, so a second differentiation gives nothing and raises nothing."""
    mean = mg.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    std = mg.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    p = mg.tensor(np.linspace(0.1, 0.9, 6), requires_grad=True)
    sample = mg.normal(mean, std) + mg.bernoulli(p)
    grads = mg.autograd.grad((sample * mean).sum(), [mean, std, p], create_graph=True)
    np.testing.assert_allclose(grads[0].detach().numpy(), sample.detach().numpy(), rtol=0, atol=0)
    np.testing.assert_array_equal(grads[1].detach().numpy(), np.zeros(6))
    np.testing.assert_array_equal(grads[2].detach().numpy(), np.zeros(6))
    second = mg.autograd.grad((grads[0] * grads[0]).sum(), [mean, std, p], allow_unused=True)
    assert all(g is None or not g.numpy().any() for g in second)


@pytest.mark.parametrize("op", ["floor", "angle", "normal"])
def test_constant_zero_gradients_pass_through_a_graph(op):
    """A zero gradient (no graph) reaching a node whose graph_backward uses Tensor methods (Sum's expand)."""
    x = mg.tensor(np.array([0.3, 1.7, -0.6]), requires_grad=True)
    total = x.sum(0, keepdim=True)
    y = {"floor": mg.floor, "angle": mg.angle, "normal": lambda t: mg.normal(t, 1.0)}[op](total)
    (g,) = mg.autograd.grad(y, x, mg.ones(1), create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), np.zeros(3))


# --------------------------------------------------------------------------- third derivatives
def _third(lib, f, arrays, weights):
    """d/d inputs of <w3, d/d inputs <w2, d/d inputs <w1, f>>>, three nested autograd.grad calls."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    y = f(lib, *inputs)
    results = []
    for w in weights:
        grads = lib.autograd.grad((y * lib.tensor(w)).sum() if not isinstance(y, list) else
                                  sum((g * lib.tensor(w)).sum() for g in y), inputs, create_graph=True)
        results.append([g.detach().numpy() for g in grads])
        y = list(grads)
    return results


THIRD_ORDER = {
    "tanh_exp_rational": (lambda lib, x: x.tanh() * x.exp() / (1 + x * x), [nonzero]),
    "sigmoid_sin": (lambda lib, x: lib.sigmoid(x) * lib.sin(x), [nonzero]),
    "pow_tensor_exponent": (lambda lib, x, y: x ** y, [positive, nonzero]),
    "atan2_log1p": (lambda lib, x, y: lib.atan2(x, y) * lib.log1p(x * x), [nonzero, nonzero]),
    "gelu_erf": (lambda lib, x: lib.nn.functional.gelu(x) * lib.erf(x), [nonzero]),
    "gelu_tanh_silu": (lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh") * lib.nn.functional.silu(x),
                       [nonzero]),
    "mish_softplus_elu": (lambda lib, x: lib.nn.functional.mish(x) * lib.nn.functional.softplus(x, 1.5)
                          + lib.nn.functional.elu(x) * lib.cos(x), [nonzero]),
    "reciprocal_expm1_log": (lambda lib, x: lib.reciprocal(x) * lib.expm1(x) + lib.log2(x * x), [nonzero]),
}


@pytest.mark.parametrize("name", list(THIRD_ORDER))
def test_third_derivatives_match_pytorch(name):
    torch = torch_or_skip()
    f, samplers = THIRD_ORDER[name]
    rng = np.random.default_rng(9)
    arrays = [s(rng, (5,)) for s in samplers]
    weights = [rng.standard_normal(5) for _ in range(3)]
    for order, (ours, theirs) in enumerate(zip(_third(mg, f, arrays, weights), _third(torch, f, arrays, weights)), 1):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=f"order {order}, input {i}")


# --------------------------------------------------------------------------- backward(create_graph=True)
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True:UserWarning")
@pytest.mark.parametrize("name", ["tanh_exp_rational", "pow_tensor_exponent", "atan2_log1p", "mish_softplus_elu"])
def test_backward_create_graph_gives_hessian_vector_products(name):
    """.grad after backward(create_graph=True) has a grad_fn; backward of <.grad, v> is the Hessian-vector
    product (into .grad, which is reset in between)."""
    torch = torch_or_skip()
    f, samplers = THIRD_ORDER[name]
    rng = np.random.default_rng(10)
    arrays = [s(rng, (6,)) for s in samplers]
    u, vs = rng.standard_normal(6), [rng.standard_normal(6) for _ in arrays]
    results = []
    for lib in (mg, torch):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        f(lib, *inputs).backward(lib.tensor(u), create_graph=True)
        grads = [t.grad for t in inputs]
        assert all(g.grad_fn is not None for g in grads)
        for t in inputs:
            t.grad = None
        sum((g * lib.tensor(v)).sum() for g, v in zip(grads, vs)).backward()
        results.append([g.detach().numpy() for g in grads] + [t.grad.numpy() for t in inputs])
    for i, (ours, theirs) in enumerate(zip(*results)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12, err_msg=f"result {i}")


# --------------------------------------------------------------------------- the kinks
def _at_kinks(lib, f, xs, u):
    """The first gradient at the kinks, and the gradients of (g^2 + g x) with respect to x and u."""
    x = lib.tensor(xs, requires_grad=True)
    up = lib.tensor(u, requires_grad=True)
    (g,) = lib.autograd.grad(f(lib, x), x, up, create_graph=True)
    second = lib.autograd.grad((g * g).sum() + (g * x).sum(), [x, up])
    return [g.detach().numpy()] + [t.detach().numpy() for t in second]


KINKS = {
    "relu": (lambda lib, x: lib.relu(x), [0.0, -1.0, 1.0]),
    "abs": (lambda lib, x: lib.abs(x), [0.0, -1.0, 1.0]),
    "clamp": (lambda lib, x: lib.clamp(x, -1.0, 1.0), [-1.0, 1.0, 0.0, 2.0]),
    "clamp_tensor_bounds": (lambda lib, x: lib.clamp(x, x * 0 - 1, x * 0 + 1), [-1.0, 1.0, 0.0, 2.0]),
    "maximum_tie": (lambda lib, x: lib.maximum(x, lib.zeros_like(x) + 0.5), [0.5, 0.0, 1.0]),
    "minimum_tie": (lambda lib, x: lib.minimum(x, lib.zeros_like(x) + 0.5), [0.5, 0.0, 1.0]),
    "where": (lambda lib, x: lib.where(x > 0.5, x, x * x), [0.5, 0.0, 1.0]),
    "leaky_relu": (lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1), [0.0, -1.0, 1.0]),
    "elu": (lambda lib, x: lib.nn.functional.elu(x, 1.3), [0.0, -1.0, 1.0]),
    "softplus_threshold": (lambda lib, x: lib.nn.functional.softplus(x, 2.0, 1.0), [0.5, 0.0, 1.0]),
    "hardswish": (lambda lib, x: lib.nn.functional.hardswish(x), [-3.0, 3.0, 0.0, 4.0]),
    "sign_floor": (lambda lib, x: lib.sign(x) * x + lib.floor(x), [0.0, 1.0, -1.0]),
    "pow_zero_exponent": (lambda lib, x: x ** 0.0 * x, [0.0, 1.0, -2.0]),
    "pow_zero_base": (lambda lib, x: (x * 0) ** x, [0.0, 1.0, 2.0, 3.0]),
    "pow_tensor_zero_exponent": (lambda lib, x: x ** (x * 0), [0.0, 1.0, 2.0]),
}


@pytest.mark.parametrize("name", list(KINKS))
def test_conventions_at_kinks_match_pytorch(name):
    """At the kinks: the first derivative's own convention, a second derivative of 0 for the piecewise
    linear ops, and NaN where PyTorch's formulas give NaN (0 * inf in a masked-out branch)."""
    torch = torch_or_skip()
    f, points = KINKS[name]
    xs = np.array(points)
    u = np.random.default_rng(11).standard_normal(xs.shape)
    with np.errstate(all="ignore"):
        ours = _at_kinks(mg, f, xs, u)
    theirs = _at_kinks(torch, f, xs, u)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True,
                                   err_msg=["first gradient", "second-order gradient (x)",
                                            "second-order gradient (upstream)"][i])


# --------------------------------------------------------------------------- the checks catch a wrong one
def _tanh_first_order_off(ctx, dout):
    out = ctx.output_tensor(ctx.saved_tensors[0])
    return 2 * dout * (1 - out * out)


def _tanh_second_order_off(ctx, dout):
    """Right values (1 - 2 o^2 + o^2 = 1 - o^2) but twice the derivative in out: d2 tanh twice too large."""
    out = ctx.output_tensor(ctx.saved_tensors[0])
    constant = mg.tensor(ctx.saved_tensors[0])
    return dout * (1 - 2 * out * out + constant * constant)


@pytest.mark.parametrize("wrong", [_tanh_first_order_off, _tanh_second_order_off])
def test_a_wrong_graph_backward_is_caught(monkeypatch, wrong):
    x = nonzero(np.random.default_rng(12))
    check_gradgrad(lambda t: mg.tanh(t), x)                      # the real one passes
    assert_double_mirror(*run_both(lambda lib, t: lib.tanh(t)), x)
    monkeypatch.setattr(Tanh, "graph_backward", staticmethod(wrong))
    with pytest.raises(mg.autograd.GradcheckError):
        check_gradgrad(lambda t: mg.tanh(t), x)
    with pytest.raises(AssertionError):
        assert_double_mirror(*run_both(lambda lib, t: lib.tanh(t)), x)
