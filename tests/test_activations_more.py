"""The activations and distances CNN programs use beyond the basic ones: relu6, hardtanh, hardsigmoid, selu,
celu, logsigmoid, softsign, softshrink, hardshrink, tanhshrink, threshold, softmin, glu, prelu, rrelu (with
their modules and in-place forms), Softmax2d, normalize, cosine_similarity, pairwise_distance, and the losses
cosine_embedding_loss and triplet_margin_loss.

Each function: a float64 gradcheck away from its kinks and a PyTorch mirror (forward and every input's
gradient under a random upstream gradient) on inputs that include the kinks exactly (where PyTorch's
one-sided choice must be matched); float32 kept; the in-place forms against the out-of-place ones and
PyTorch; the modules' reprs; PyTorch's exception types for bad input; double backward for a few.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import (assert_double_mirror, assert_mirror, check_grad, check_gradgrad, run_both, torch_or_replay,
                     torch_or_skip, torch_raises)

# (function, keyword arguments): the pointwise activations
POINTWISE = [
    ("relu6", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 3.0}), ("hardsigmoid", {}),
    ("selu", {}), ("celu", {}), ("celu", {"alpha": 2.0}), ("celu", {"alpha": 0.5}), ("logsigmoid", {}),
    ("softsign", {}), ("softshrink", {}), ("softshrink", {"lambd": 1.0}), ("hardshrink", {}),
    ("hardshrink", {"lambd": 1.0}), ("tanhshrink", {}), ("threshold", {"threshold": 1.0, "value": 20.0}),
    ("threshold", {"threshold": -0.5, "value": -3.0}),
]
IDS = [f"{name}-{kwargs}" for name, kwargs in POINTWISE]
# every kink of the cases above: 0, the bounds +-1, -2, 3, 6, the shrinks' +-0.5, +-1, hardsigmoid's +-3
KINKS = np.array([0.0, 0.5, -0.5, 1.0, -1.0, -2.0, 2.0, 3.0, -3.0, 6.0])


def functional(name, **kwargs):
    return lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs)


def with_kinks(rng):
    """Values across every regime, the kinks themselves and large |x|."""
    return np.concatenate([rng.uniform(-8, 8, 40), KINKS, [10.0, 40.0, -40.0, 800.0, -800.0]])


def away_from_kinks(rng, shape):
    x = np.asarray(rng.uniform(-8, 8, shape))
    near = np.abs(x[..., None] - KINKS).min(axis=-1) < 0.05
    x[near] += 0.25                                # the kinks are at least 0.5 apart: now 0.2 away from all
    return x


def pytorch_tolerance(name):
    """PyTorch 2.13's float64 hardsigmoid backward uses 1/6 rounded to float32 (0.16666667163...): our
    gradient is the exact 1/6 (see test_hardsigmoid_slope_is_exactly_a_sixth), so it agrees to float32 only."""
    return {"rtol": 1e-7, "atol": 1e-8} if name == "hardsigmoid" else {"rtol": 1e-12, "atol": 1e-13}


@pytest.mark.parametrize("name, kwargs", POINTWISE, ids=IDS)
def test_pointwise_gradcheck(name, kwargs, rng):
    check_grad(lambda t: getattr(F, name)(t, **kwargs), away_from_kinks(rng, (3, 5)))


@pytest.mark.parametrize("name, kwargs", POINTWISE, ids=IDS)
def test_pointwise_mirrors_pytorch_at_the_kinks(name, kwargs, rng):
    assert_mirror(*run_both(functional(name, **kwargs)), with_kinks(rng), **pytorch_tolerance(name))


@pytest.mark.parametrize("name, kwargs", POINTWISE, ids=IDS)
def test_pointwise_mirrors_pytorch_on_non_finite_input(name, kwargs):
    assert_mirror(*run_both(functional(name, **kwargs)), np.array([np.nan, np.inf, -np.inf, 0.0]),
                  **pytorch_tolerance(name))


@pytest.mark.parametrize("name, kwargs", POINTWISE, ids=IDS)
def test_pointwise_keeps_float32_and_float16(name, kwargs, rng):
    torch = torch_or_replay()
    x = with_kinks(rng)
    assert_mirror(*run_both(functional(name, **kwargs)), x.astype(np.float32), rtol=1e-5, atol=1e-6)
    ours = getattr(F, name)(mg.tensor(x[:45], dtype=mg.float16), **kwargs)
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x[:45], dtype=torch.float16), **kwargs)
    assert ours.dtype == mg.float16
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64), rtol=2e-3,
                               atol=2e-3)


def test_hardsigmoid_slope_is_exactly_a_sixth():
    """Our deviation from PyTorch: its float64 slope is float32's 1/6; this test notices if PyTorch changes."""
    torch = torch_or_skip()
    x = mg.tensor([-2.0, 0.0, 2.5], dtype=mg.float64, requires_grad=True)
    F.hardsigmoid(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / 6, rtol=1e-15)
    t = torch.tensor([0.0], dtype=torch.float64, requires_grad=True)
    torch.nn.functional.hardsigmoid(t).sum().backward()
    assert t.grad.item() == float(np.float32(1 / 6)) != 1 / 6


def test_celu_slope_is_exact():
    """Our deviation from PyTorch: its celu backward scales by 1 / float32(alpha), so for an alpha that float32
    cannot hold (0.7) its gradient is off by ~1e-8 relative; ours is exp(x / alpha) to float64 precision."""
    torch = torch_or_skip()
    x = np.array([-1.0, -0.3])
    t = mg.tensor(x, requires_grad=True)
    F.celu(t, 0.7).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.exp(x / 0.7), rtol=1e-15)
    check_grad(lambda t: F.celu(t, 0.7), x)
    tt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.celu(tt, 0.7).sum().backward()
    np.testing.assert_allclose(tt.grad.numpy(), 0.7 / float(np.float32(0.7)) * np.exp(x / float(np.float32(0.7))),
                               rtol=1e-15)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-7)


@pytest.mark.parametrize("name, args", [("relu6", ()), ("hardtanh", ()), ("hardtanh", (-1.5, 2.5)),
                                        ("threshold", (1.5, 5.5)), ("threshold", (-1.5, -5.5))])
def test_clamps_keep_integer_dtype_with_truncated_bounds(name, args):
    torch = torch_or_skip()
    x = np.array([-7, -3, -2, -1, 0, 1, 2, 3, 6, 7])
    ours = getattr(F, name)(mg.tensor(x), *args)
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), *args)
    assert ours.dtype == mg.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["softsign", "tanhshrink"])
def test_composed_activations_promote_integers_to_float32(name):
    torch = torch_or_skip()
    x = np.array([-2, 0, 3, 7])
    ours, theirs = getattr(F, name)(mg.tensor(x)), getattr(torch.nn.functional, name)(torch.tensor(x))
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


# --------------------------------------------------------------------------- in place
INPLACE = [("relu6", {}), ("hardtanh", {"min_val": -2.0, "max_val": 3.0}), ("hardsigmoid", {}), ("selu", {}),
           ("celu", {"alpha": 0.5}), ("threshold", {"threshold": 0.5, "value": -1.0})]


@pytest.mark.parametrize("name, kwargs", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_activation_in_a_graph_matches_pytorch(name, kwargs, rng):
    def f(lib, x):
        h = x * 2                                  # a non-leaf, written in place
        out = getattr(lib.nn.functional, name)(h, inplace=True, **kwargs)
        assert out is h
        return out * x
    x = np.concatenate([rng.standard_normal(20) * 3, KINKS / 2])   # h = 2x hits the kinks
    assert_mirror(*run_both(f), x, **pytorch_tolerance(name))


# (in-place function, its out-of-place twin, arguments)
UNDERSCORED = [("relu_", "relu", ()), ("elu_", "elu", (0.7,)), ("leaky_relu_", "leaky_relu", (0.2,)),
               ("hardtanh_", "hardtanh", (-0.5, 2.0)), ("selu_", "selu", ()), ("celu_", "celu", (1.5,)),
               ("threshold_", "threshold", (0.25, 9.0))]


@pytest.mark.parametrize("inplace, twin, args", UNDERSCORED, ids=[u for u, _, _ in UNDERSCORED])
def test_underscored_forms_equal_the_out_of_place_ones_and_pytorch(inplace, twin, args, rng):
    x = np.concatenate([rng.standard_normal(20) * 3, KINKS])
    t = mg.tensor(x)
    expected = getattr(F, twin)(mg.tensor(x), *args).numpy()
    assert getattr(F, inplace)(t, *args) is t
    np.testing.assert_array_equal(t.numpy(), expected)

    def f(lib, x):
        h = x * 1
        return getattr(lib.nn.functional, inplace)(h, *args) * x
    assert_mirror(*run_both(f), x)


def test_inplace_refused_on_a_leaf_and_unchanged_on_bad_arguments():
    x = mg.tensor([-2.0, 0.5, 3.0])
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0, inplace=True)
    with pytest.raises(RuntimeError, match="alpha cannot be 0"):
        F.celu_(x, 0.0)
    np.testing.assert_array_equal(x.numpy(), [-2.0, 0.5, 3.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.selu_(mg.tensor([1.0], requires_grad=True))


# --------------------------------------------------------------------------- top-level names and methods
def test_top_level_names_and_methods_mirror_pytorch(rng):
    x, w = np.concatenate([rng.standard_normal(10), [0.0, 0.5, -0.5]]), np.array([0.3])
    assert_mirror(*run_both(lambda lib, t: lib.selu(t) + lib.celu(t, 0.5) + lib.threshold(t, 0.1, 2.0)), x)
    assert_mirror(*run_both(lambda lib, t: lib.hardshrink(t, 0.5) + t.hardshrink(lambd=0.25)), x)
    assert_mirror(*run_both(lambda lib, t, w: lib.prelu(t, w) * t.prelu(w)), x, w)
    assert_mirror(*run_both(lambda lib, t: lib.selu_(t * 1) + lib.celu_(t * 1) + lib.relu_(t * 1)
                            + lib.threshold_(t * 1, 0.0, -1.0)), x)


# --------------------------------------------------------------------------- modules
MODULES = [("ReLU6", ()), ("ReLU6", (True,)), ("Hardtanh", ()), ("Hardtanh", (-2, 3, True)), ("Hardtanh", (-2.0, 3.0)),
           ("Hardsigmoid", ()), ("Hardsigmoid", (True,)), ("SELU", ()), ("SELU", (True,)), ("CELU", ()),
           ("CELU", (2.0, True)), ("LogSigmoid", ()), ("Softsign", ()), ("Softshrink", ()), ("Softshrink", (1,)),
           ("Hardshrink", ()), ("Hardshrink", (0.25,)), ("Tanhshrink", ()), ("Threshold", (0.1, 20)),
           ("Threshold", (1, 2.0, True)), ("Softmin", (1,)), ("Softmin", (-1,)), ("GLU", ()), ("GLU", (0,)),
           ("Softmax2d", ())]


def public_attributes(module):
    """A module's own settings (``lambd``, ``min_val``, ``inplace``, ...), as PyTorch names them."""
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"}


def twin_modules(name, *args, **kwargs):
    """``nn.<name>(*args, **kwargs)`` in minigrad and in PyTorch, checked to have the same repr and settings."""
    torch = torch_or_skip()
    ours, theirs = getattr(mg.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert public_attributes(ours) == public_attributes(theirs)
    return ours, theirs


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_repr_and_mirror_pytorch(name, args, rng):
    ours, theirs = twin_modules(name, *args)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []

    def non_leaf(module):                          # in-place modules need a non-leaf input
        return lambda x: module(x * 1)
    x = rng.standard_normal((2, 4, 3, 2)) * 3
    x.flat[:len(KINKS)] = KINKS
    assert_mirror(non_leaf(ours), non_leaf(theirs), x, **pytorch_tolerance(name.lower()))


def test_softmin_without_dim_warns_and_uses_pytorchs_legacy_choice(rng):
    torch = torch_or_replay()
    for shape in [(4,), (3, 4), (2, 3, 4)]:
        x = rng.standard_normal(shape)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            assert_mirror(mg.nn.Softmin(), torch.nn.Softmin(), x)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            assert_mirror(F.softmin, lambda t: torch.nn.functional.softmin(t), x)


@pytest.mark.parametrize("name, module", [("softmax", "Softmax"), ("log_softmax", "LogSoftmax")])
def test_functional_softmax_without_dim_warns_and_uses_pytorchs_legacy_choice(rng, name, module):
    """nn.functional's softmax and log_softmax take no dim (the legacy choice, with the warning naming the function;
    the modules warn with it too) and no out=; minigrad.softmax and log_softmax need dim and take out= (as PyTorch)."""
    torch = torch_or_replay()
    for shape in [(4,), (3, 4), (2, 3, 4), (2, 3, 4, 5)]:
        x = rng.standard_normal(shape)
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name}"):
            assert_mirror(getattr(F, name), lambda t: getattr(torch.nn.functional, name)(t), x)
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name}"):
            assert_mirror(getattr(mg.nn, module)(), getattr(torch.nn, module)(), x)
    x = mg.tensor(rng.standard_normal((2, 3)))
    with pytest.raises(TypeError, match=f"^{name}\\(\\) got an unexpected keyword argument 'out'$"):
        getattr(F, name)(x, 1, out=mg.empty(2, 3))
    out = mg.empty(2, 3, dtype=mg.float64)
    assert getattr(mg, name)(x, 1, out=out) is out
    np.testing.assert_allclose(out.numpy(), getattr(F, name)(x, 1).numpy(), rtol=1e-15)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'dim'"):
        getattr(mg, name)(x)
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'dtype' must be minigrad.dtype, not int"):
        getattr(mg, name)(x, 1, 3)


def test_softmin_mirrors_pytorch(rng):
    x = rng.standard_normal((3, 4, 5))
    for dim in (0, 1, -1):
        assert_mirror(*run_both(lambda lib, t, dim=dim: lib.nn.functional.softmin(t, dim)), x)
    assert_mirror(*run_both(lambda lib, t: lib.nn.functional.softmin(t, 1, dtype=lib.float64)),
                  x.astype(np.float32), rtol=1e-6, atol=1e-7)
    check_grad(lambda t: F.softmin(t, 1), x)


def test_softmax2d_errors_like_pytorch():
    for shape in [(2, 3), (1, 2, 3, 4, 5)]:
        with pytest.raises(ValueError, match=f"expected input to be 3D or 4D, got {len(shape)}D"):
            mg.nn.Softmax2d()(mg.zeros(*shape))


def test_module_arguments_checked_like_pytorch():
    torch = torch_or_skip()
    for args in [(2.0, 1.0), (1.0, 1.0)]:
        with pytest.raises(AssertionError, match="must be greater than min_val"):
            mg.nn.Hardtanh(*args)
        with pytest.raises(AssertionError):
            torch.nn.Hardtanh(*args)


# --------------------------------------------------------------------------- rrelu
@pytest.mark.parametrize("lower, upper", [(1 / 8, 1 / 3), (0.0, 0.5), (0.3, 0.3)])
def test_rrelu_in_evaluation_is_leaky_relu_with_the_mean_slope(lower, upper, rng):
    x = np.concatenate([with_kinks(rng), [np.nan, np.inf, -np.inf]])
    assert_mirror(*run_both(lambda lib, t: lib.nn.functional.rrelu(t, lower, upper)), x)
    check_grad(lambda t: F.rrelu(t, lower, upper), away_from_kinks(rng, (3, 4)))


def test_rrelu_in_training_draws_one_slope_per_negative_element(rng):
    x = np.concatenate([rng.uniform(-4, 4, 2000), [0.0, np.nan]])
    t = mg.tensor(x, requires_grad=True)
    mg.manual_seed(3)
    y = F.rrelu(t, 0.1, 0.4, training=True)
    upstream = rng.standard_normal(x.shape)
    y.backward(mg.tensor(upstream))
    negative = x <= 0                              # 0 included: slope drawn, y = 0; NaN: kept, slope 1
    slope = y.detach().numpy()[x < 0] / x[x < 0]
    assert np.all((slope >= 0.1) & (slope <= 0.4)) and np.unique(slope).size == slope.size   # one per element
    assert abs(slope.mean() - 0.25) < 0.02       # U(0.1, 0.4): mean 0.25, standard error ~0.002
    np.testing.assert_allclose(t.grad.numpy()[x < 0], upstream[x < 0] * slope, rtol=1e-12)
    np.testing.assert_array_equal(t.grad.numpy()[~negative], upstream[~negative])
    np.testing.assert_array_equal(y.detach().numpy()[x > 0], x[x > 0])
    assert 0.1 <= t.grad.numpy()[-2] / upstream[-2] <= 0.4 and np.isnan(y.detach().numpy()[-1])
    mg.manual_seed(3)
    np.testing.assert_array_equal(F.rrelu(mg.tensor(x), 0.1, 0.4, training=True).numpy(), y.detach().numpy())


def test_rrelu_in_training_with_equal_bounds_mirrors_pytorch(rng):
    x = np.concatenate([with_kinks(rng), [np.nan]])
    fn = run_both(lambda lib, t: lib.nn.functional.rrelu(t, 0.2, 0.2, training=True))
    assert_mirror(*fn, x)
    check_grad(lambda t: F.rrelu(t, 0.2, 0.2, True), away_from_kinks(rng, (3, 4)))


def test_rrelu_module_and_inplace_forms(rng):
    torch = torch_or_skip()
    for args in [(), (0.1, 0.3, True)]:
        assert repr(mg.nn.RReLU(*args)) == repr(torch.nn.RReLU(*args))
        assert public_attributes(mg.nn.RReLU(*args)) == public_attributes(torch.nn.RReLU(*args))
    module = mg.nn.RReLU(0.1, 0.3).eval()
    x = rng.standard_normal((3, 4))
    np.testing.assert_allclose(module(mg.tensor(x)).numpy(), np.where(x > 0, x, 0.2 * x), rtol=1e-15)
    t = mg.tensor(x)
    assert mg.rrelu_(t, 0.1, 0.3, training=True) is t
    negative = x <= 0
    assert np.all((t.numpy()[negative] / x[negative] >= 0.1) & (t.numpy()[negative] / x[negative] <= 0.3))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(mg.tensor(x), 0.5, 0.2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.rrelu(mg.tensor([1, 2]), training=True)


# --------------------------------------------------------------------------- glu
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_glu_mirrors_pytorch_and_gradchecks(dim, rng):
    x = rng.standard_normal((4, 6, 2))
    assert_mirror(*run_both(lambda lib, t: lib.nn.functional.glu(t, dim)), x)
    check_grad(lambda t: F.glu(t, dim), x)


# --------------------------------------------------------------------------- prelu
# (input shape, weight size): one slope, or one per channel (dim 1)
PRELU_SHAPES = [((2, 3, 4, 5), 3), ((2, 3), 3), ((2, 3, 4), 1), ((5,), 1), ((), 1), ((3, 2, 4), 2)]


@pytest.mark.parametrize("shape, channels", PRELU_SHAPES, ids=[f"{s}-{c}" for s, c in PRELU_SHAPES])
def test_prelu_mirrors_pytorch_with_the_weights_gradient(shape, channels, rng):
    x = np.asarray(rng.standard_normal(shape) * 2)
    x.flat[::3] = 0.0                              # the kink: the negative side's slope, as in PyTorch
    w = rng.uniform(-1, 1, channels)
    assert_mirror(*run_both(lambda lib, t, w: lib.nn.functional.prelu(t, w)), x, w)
    check_grad(F.prelu, away_from_kinks(rng, shape), w)


def test_prelu_non_finite_input_mirrors_pytorch():
    assert_mirror(*run_both(lambda lib, t, w: lib.nn.functional.prelu(t, w)),
                  np.array([[np.nan, np.inf], [-np.inf, 0.0]]), np.array([0.3, -2.0]))


def test_prelu_module_state_dict_init_and_repr_match_pytorch(rng):
    torch = torch_or_replay()
    for args, kwargs in [((), {}), ((3, 0.1), {}), ((4,), {"dtype": mg.float64})]:
        th_kwargs = {"dtype": torch.float64} if kwargs else {}
        ours, theirs = mg.nn.PReLU(*args, **kwargs), torch.nn.PReLU(*args, **th_kwargs)
        assert repr(ours) == repr(theirs)
        assert public_attributes(ours) == public_attributes(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
        assert isinstance(ours.weight, mg.nn.Parameter) and ours.weight.requires_grad
        assert ours.weight.shape == tuple(theirs.weight.shape)
        assert str(ours.weight.dtype) == str(theirs.weight.dtype).replace("torch.", "")
        np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours, theirs = mg.nn.PReLU(3, dtype=mg.float64), torch.nn.PReLU(3, dtype=torch.float64)
    w = rng.uniform(-1, 1, 3)
    ours.load_state_dict({"weight": mg.tensor(w)})
    theirs.load_state_dict({"weight": torch.tensor(w)})
    x = rng.standard_normal((2, 3, 4))
    out = assert_mirror(ours, theirs, x)
    assert out.grad_fn is not None
    ours.zero_grad()
    theirs.zero_grad()
    ours(mg.tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)


def test_prelu_bad_weights_raise_pytorchs_errors():
    x = mg.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="parameter numbers = 4 and channel size = 3"):
        F.prelu(x, mg.randn(4))
    with pytest.raises(RuntimeError, match="parameter numbers = 3 and channel size = 4"):
        mg.nn.PReLU(3)(mg.randn(2, 4))
    with pytest.raises(RuntimeError, match="parameter numbers = 3 and channel size = 1"):
        F.prelu(mg.randn(3), mg.randn(3))
    with pytest.raises(RuntimeError, match="scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(x, mg.randn(3, 1))
    with pytest.raises(RuntimeError, match="Not allow zero-dim input"):
        F.prelu(mg.tensor(1.0), mg.randn(2))
    with pytest.raises(RuntimeError, match="Type promoting not supported. Got Float and Double"):
        F.prelu(x, mg.randn(3, dtype=mg.float64))
    with pytest.raises(NotImplementedError, match='"prelu_cpu" not implemented for \'Long\''):
        F.prelu(mg.tensor([1, 2]), mg.tensor([1]))
    with pytest.raises(TypeError, match="argument 'weight' .* must be Tensor, not float"):
        F.prelu(x, 0.25)
    with pytest.raises(RuntimeError):
        mg.nn.PReLU(-1)
    with pytest.raises(TypeError):
        mg.nn.PReLU(2.0)


# --------------------------------------------------------------------------- bad input
# (call, on both libraries) -> the same exception type as PyTorch
BAD_CALLS = {
    "glu odd size": lambda lib: lib.nn.functional.glu(lib.zeros(3, 5)),
    "glu scalar": lambda lib: lib.nn.functional.glu(lib.tensor(1.0)),
    "glu integer": lambda lib: lib.nn.functional.glu(lib.zeros(3, 4, dtype=lib.int64)),
    "glu dim": lambda lib: lib.nn.functional.glu(lib.zeros(3, 4), 2),
    "softmin integer": lambda lib: lib.nn.functional.softmin(lib.zeros(3, 4, dtype=lib.int64), 1),
    "softmin dim": lambda lib: lib.nn.functional.softmin(lib.zeros(3, 4), 2),
    "hardtanh bool": lambda lib: lib.nn.functional.hardtanh(lib.zeros(3, dtype=lib.bool)),
    "relu6 bool": lambda lib: lib.nn.functional.relu6(lib.zeros(3, dtype=lib.bool)),
    "hardtanh bounds": lambda lib: lib.nn.functional.hardtanh(lib.zeros(3), 2.0, 1.0),
    "threshold bool": lambda lib: lib.nn.functional.threshold(lib.zeros(3, dtype=lib.bool), 0.0, 1.0),
    "softshrink negative": lambda lib: lib.nn.functional.softshrink(lib.zeros(3), -1.0),
    "softshrink nan": lambda lib: lib.nn.functional.softshrink(lib.zeros(3), float("nan")),
    "celu alpha 0": lambda lib: lib.nn.functional.celu(lib.zeros(3), 0.0),
    "softsign bool": lambda lib: lib.nn.functional.softsign(lib.zeros(3, dtype=lib.bool)),
    "tanhshrink bool": lambda lib: lib.nn.functional.tanhshrink(lib.zeros(3, dtype=lib.bool)),
    "normalize integer": lambda lib: lib.nn.functional.normalize(lib.zeros(3, 4, dtype=lib.int64)),
    "normalize dim": lambda lib: lib.nn.functional.normalize(lib.zeros(3)),
    "cosine integer": lambda lib: lib.nn.functional.cosine_similarity(lib.zeros(2, 3, dtype=lib.int64),
                                                                      lib.zeros(2, 3, dtype=lib.int64)),
    "cosine shapes": lambda lib: lib.nn.functional.cosine_similarity(lib.zeros(2, 3), lib.zeros(2, 4)),
    "cosine dim": lambda lib: lib.nn.functional.cosine_similarity(lib.zeros(3), lib.zeros(3)),
    "pairwise shapes": lambda lib: lib.nn.functional.pairwise_distance(lib.zeros(2, 3), lib.zeros(2, 4)),
    "prelu not a tensor": lambda lib: lib.nn.functional.prelu(lib.zeros(2, 3), 0.25),
}
INTEGER_ONLY_FLOAT = ["hardsigmoid", "selu", "celu", "logsigmoid", "softshrink", "hardshrink"]


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_raises_pytorchs_exception_type(case):
    theirs = torch_raises(lambda torch: BAD_CALLS[case](torch))
    with pytest.raises(theirs.type):
        BAD_CALLS[case](mg)


@pytest.mark.parametrize("name", INTEGER_ONLY_FLOAT)
def test_floating_only_activations_refuse_integers(name):
    for dtype in (mg.int64, mg.bool):
        with pytest.raises(NotImplementedError, match="not implemented for"):
            getattr(F, name)(mg.zeros(3, dtype=dtype))


def test_softshrink_lambda_message_names_the_range():
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double, "
                                           r"but found -1"):
        F.softshrink(mg.zeros(2, dtype=mg.float64), -1)


# --------------------------------------------------------------------------- normalize
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf")])
@pytest.mark.parametrize("dim", [1, 0, -1, (1, 2)])
def test_normalize_mirrors_pytorch(p, dim, rng):
    x = rng.standard_normal((3, 4, 5))
    x[0, :, 0] = 0.0                               # a zero vector along dim 1: y = 0, dx = dout / eps
    x[1] *= 1e-13                                  # norms below eps: the clamp holds, no gradient through it
    assert_mirror(*run_both(lambda lib, t: lib.nn.functional.normalize(t, p, dim)), x)


def test_normalize_gradchecks_and_keeps_float32(rng):
    x = rng.standard_normal((3, 4))
    check_grad(lambda t: F.normalize(t), x)
    check_grad(lambda t: F.normalize(t, p=3.0, dim=0), x)
    assert_mirror(*run_both(lambda lib, t: lib.nn.functional.normalize(t, dim=-1)), x.astype(np.float32),
                  rtol=1e-5, atol=1e-6)


def test_normalize_into_out_like_pytorch(rng):
    torch = torch_or_skip()
    x = rng.standard_normal((2, 3))
    out = mg.empty(2, 3, dtype=mg.float64)
    assert F.normalize(mg.tensor(x), out=out) is out
    np.testing.assert_allclose(out.numpy(), torch.nn.functional.normalize(torch.tensor(x)).numpy(), rtol=1e-14)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        F.normalize(mg.tensor(x, requires_grad=True), out=out)


# --------------------------------------------------------------------------- cosine_similarity
# (x1 shape, x2 shape, dim): broadcasting included
COSINE_SHAPES = [((4, 5), (4, 5), 1), ((4, 5), (5,), 1), ((2, 4, 5), (3, 1, 1, 5), -1), ((3, 4), (3, 4), 0),
                 ((6,), (6,), 0), ((), (), 0)]


@pytest.mark.parametrize("s1, s2, dim", COSINE_SHAPES, ids=[f"{a}-{b}-{d}" for a, b, d in COSINE_SHAPES])
def test_cosine_similarity_mirrors_pytorch(s1, s2, dim, rng):
    x1, x2 = np.asarray(rng.standard_normal(s1)), np.asarray(rng.standard_normal(s2))
    assert_mirror(*run_both(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim)), x1, x2)
    check_grad(lambda a, b: F.cosine_similarity(a, b, dim), x1, x2)


def test_cosine_similarity_eps_rule_matches_pytorch(rng):
    """Each norm is clamped to eps in value, but the gradient flows as through the unclamped norm; zero
    vectors give 0 and a gradient of (the other unit vector) / eps."""
    x1, x2 = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    x1[0] = 0.0
    x2[1] = 0.0
    x1[2] = x2[2] = 0.0
    x1[3] *= 1e-4                                  # ||x1|| < eps = 1e-3
    x2[4] = [3e-4, -4e-4, 1e-4]
    assert_mirror(*run_both(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, eps=1e-3)), x1, x2)
    one_small = F.cosine_similarity(mg.tensor([[1e-2, 0.0]], dtype=mg.float64),
                                    mg.tensor([[10.0, 0.0]], dtype=mg.float64), eps=0.05)
    np.testing.assert_allclose(one_small.numpy(), [0.1 / (0.05 * 10)], rtol=1e-12)   # not 0.1 / max(0.1, eps)


def test_cosine_similarity_converts_integers_to_the_common_float_dtype():
    torch = torch_or_skip()
    a, b = np.array([[1, 2, 3]]), np.array([[1.0, 0.0, -1.0]])
    ours = F.cosine_similarity(mg.tensor(a), mg.tensor(b, dtype=mg.float32))
    theirs = torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b, dtype=torch.float32))
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


# --------------------------------------------------------------------------- pairwise_distance
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_mirrors_pytorch(p, keepdim, rng):
    x1, x2 = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    check_grad(lambda a, b: F.pairwise_distance(a, b, p, keepdim=keepdim), x1, x2)
    x2[0] = x1[0]                                  # equal rows: the distance is ||eps||, still differentiable
    fn = run_both(lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, p, keepdim=keepdim))
    assert_mirror(*fn, x1, x2)


@pytest.mark.parametrize("s1, s2", [((2, 3, 4), (4,)), ((5,), (1, 5)), ((5,), (5,)), ((), ())])
def test_pairwise_distance_broadcasts_like_pytorch(s1, s2, rng):
    assert_mirror(*run_both(lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, eps=1e-3)),
                  np.asarray(rng.standard_normal(s1)), np.asarray(rng.standard_normal(s2)))


def test_pairwise_distance_of_integers_is_float32():
    torch = torch_or_skip()
    a, b = np.array([[0, 0]]), np.array([[3, 4]])
    ours, theirs = F.pairwise_distance(mg.tensor(a), mg.tensor(b)), torch.pairwise_distance(torch.tensor(a),
                                                                                              torch.tensor(b))
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


DISTANCE_MODULES = [("CosineSimilarity", ()), ("CosineSimilarity", (0, 1e-3)), ("PairwiseDistance", ()),
                    ("PairwiseDistance", (1, 1e-3, True))]


@pytest.mark.parametrize("name, args", DISTANCE_MODULES, ids=[f"{n}{a}" for n, a in DISTANCE_MODULES])
def test_distance_modules_mirror_pytorch(name, args, rng):
    ours, theirs = twin_modules(name, *args)
    assert_mirror(ours, theirs, rng.standard_normal((4, 5)), rng.standard_normal((4, 5)))


def test_top_level_distances_mirror_pytorch(rng):
    x1, x2 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    assert_mirror(*run_both(lambda lib, a, b: lib.cosine_similarity(a, b) * lib.pairwise_distance(a, b)), x1, x2)


# --------------------------------------------------------------------------- distance losses
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.5])
def test_cosine_embedding_loss_mirrors_pytorch(reduction, margin, rng):
    x1, x2 = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    x1[0] *= 1e-7                                  # tiny and zero vectors: PyTorch's own epsilon (float32 1e-12)
    x2[1] = 0.0
    target = np.array([1, -1, 1, -1, 0, 2])        # targets other than +-1 contribute 0
    fn = run_both(lambda lib, a, b, y: lib.nn.functional.cosine_embedding_loss(a, b, y, margin, reduction=reduction))
    assert_mirror(*fn, x1, x2, target)
    assert_mirror(*fn, x1[2], x2[2], np.array(-1))   # 1-d inputs with a 0-d target
    check_grad(lambda a, b: F.cosine_embedding_loss(a, b, mg.tensor(target[:4]), margin, reduction=reduction),
               x1[2:], x2[2:])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("p, swap", [(2.0, False), (1.0, True), (3.0, True)])
def test_triplet_margin_loss_mirrors_pytorch(reduction, p, swap, rng):
    anchor, positive, negative = (rng.standard_normal((5, 4)) for _ in range(3))
    negative[0] = anchor[0] + 0.1                  # an active loss; the others mixed

    def fn(lib, a, b, c):
        return lib.nn.functional.triplet_margin_loss(a, b, c, margin=1.5, p=p, swap=swap, reduction=reduction)
    assert_mirror(*run_both(fn), anchor, positive, negative)
    assert_mirror(*run_both(fn), anchor[:, :2].reshape(5, 2, 1), positive[:, :2].reshape(5, 2, 1),
                  negative[:, :2].reshape(5, 2, 1))
    check_grad(lambda a, b, c: fn(mg, a, b, c), anchor, positive, negative)


LOSS_MODULES = [("CosineEmbeddingLoss", (), {}), ("CosineEmbeddingLoss", (0.2,), {"reduction": "sum"}),
                ("TripletMarginLoss", (), {}), ("TripletMarginLoss", (2.0, 1.0, 1e-3, True), {"reduction": "none"})]


@pytest.mark.parametrize("name, args, kwargs", LOSS_MODULES, ids=[f"{n}{a}{k}" for n, a, k in LOSS_MODULES])
def test_distance_loss_modules_mirror_pytorch(name, args, kwargs, rng):
    ours, theirs = twin_modules(name, *args, **kwargs)
    a, b, c = (rng.standard_normal((4, 3)) for _ in range(3))
    third = np.array([1, -1, -1, 1]) if name == "CosineEmbeddingLoss" else c
    assert_mirror(ours, theirs, a, b, third)


def test_distance_losses_legacy_flags_warn_like_pytorch(rng):
    a, b = mg.tensor(rng.standard_normal((3, 2))), mg.tensor(rng.standard_normal((3, 2)))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        summed = F.cosine_embedding_loss(a, b, mg.tensor([1, -1, 1]), size_average=False)
    np.testing.assert_allclose(summed.item(), F.cosine_embedding_loss(a, b, mg.tensor([1, -1, 1]),
                                                                       reduction="sum").item(), rtol=1e-15)


LOSS_BAD_CALLS = {
    "target 2-d": lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3, 4), lib.zeros(3, 4),
                                                                      lib.ones(3, 1)),
    "1-d target, 1-d inputs": lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(4), lib.zeros(4),
                                                                                  lib.ones(1)),
    "0-d target, 2-d inputs": lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3, 4), lib.zeros(3, 4),
                                                                                  lib.tensor(1)),
    "target size": lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3, 4), lib.zeros(3, 4),
                                                                       lib.ones(2)),
    "cosine reduction": lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3, 4), lib.zeros(3, 4),
                                                                            lib.ones(3), reduction="bad"),
    "triplet dims": lambda lib: lib.nn.functional.triplet_margin_loss(lib.zeros(3, 4), lib.zeros(4),
                                                                      lib.zeros(3, 4)),
    "triplet reduction": lambda lib: lib.nn.functional.triplet_margin_loss(lib.zeros(3, 4), lib.zeros(3, 4),
                                                                           lib.zeros(3, 4), reduction="bad"),
}


@pytest.mark.parametrize("case", sorted(LOSS_BAD_CALLS))
def test_distance_losses_bad_input_raise_pytorchs_errors(case):
    torch = torch_or_skip()
    with pytest.raises(Exception) as theirs:
        LOSS_BAD_CALLS[case](torch)
    with pytest.raises(theirs.type) as ours:
        LOSS_BAD_CALLS[case](mg)
    if "size" not in case:                         # the same message, up to PyTorch's "torch.Size" spelling
        assert str(ours.value) == str(theirs.value)


# --------------------------------------------------------------------------- double backward
SECOND_ORDER = {
    "selu": lambda lib, t: lib.nn.functional.selu(t),
    "celu": lambda lib, t: lib.nn.functional.celu(t, 0.5),   # 1/alpha exact: see test_celu_slope_is_exact
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
    "softsign": lambda lib, t: lib.nn.functional.softsign(t),
    "tanhshrink": lambda lib, t: lib.nn.functional.tanhshrink(t),
    "glu": lambda lib, t: lib.nn.functional.glu(t, 1),
    "softmin": lambda lib, t: lib.nn.functional.softmin(t, 1),
    "normalize": lambda lib, t: lib.nn.functional.normalize(t),
    "normalize p=3": lambda lib, t: lib.nn.functional.normalize(t, 3.0, 0),
    "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t, -0.5, 0.5),
    "threshold": lambda lib, t: lib.nn.functional.threshold(t, 0.1, 2.0),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_double_backward_mirrors_pytorch(name, rng):
    x = rng.standard_normal((3, 4)) * 2
    x[0, :2] = [0.0, 0.5]
    assert_double_mirror(*run_both(SECOND_ORDER[name]), x)


@pytest.mark.parametrize("name", ["selu", "celu", "logsigmoid", "normalize", "glu", "softsign"])
def test_double_backward_gradgradchecks(name, rng):
    fn = SECOND_ORDER[name]
    check_gradgrad(lambda t: fn(mg, t), away_from_kinks(rng, (3, 4)))


def test_cosine_similarity_double_backward(rng):
    x1, x2 = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    check_gradgrad(lambda a, b: F.cosine_similarity(a, b), x1, x2)
    x1[0] *= 1e-4                                  # a clamped norm: its value changes, its gradient does not
    assert_double_mirror(*run_both(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, eps=1e-3)), x1, x2)


def test_prelu_double_backward(rng):
    x, w = rng.standard_normal((2, 3, 4)), rng.uniform(-1, 1, 3)
    assert_double_mirror(*run_both(lambda lib, t, w: lib.nn.functional.prelu(t, w)), x, w)
    check_gradgrad(F.prelu, away_from_kinks(rng, (2, 3, 4)), w)


def test_prelu_double_backward_at_zero_stays_on_the_negative_side():
    """Our deviation from PyTorch: at x == 0 both give dx = w u, dw = 0 (the negative side), but PyTorch's
    double backward then takes the positive side (d(dx)/du = 1). Ours differentiates its own first
    gradient: d(dx)/du = w, d(dx)/dw = u, d(dw)/dx = u, d(dw)/du = x = 0."""
    x, w, u = (mg.tensor([v], dtype=mg.float64, requires_grad=True) for v in (0.0, 0.3, 2.0))
    dx, dw = mg.autograd.grad(F.prelu(x, w), (x, w), u, create_graph=True)
    np.testing.assert_allclose([dx.item(), dw.item()], [0.6, 0.0], rtol=1e-15)
    second = [mg.autograd.grad(g.sum(), (x, w, u), retain_graph=True, allow_unused=True) for g in (dx, dw)]
    values = [[0.0 if d is None else d.item() for d in row] for row in second]
    np.testing.assert_allclose(values, [[0.0, 2.0, 0.3], [2.0, 0.0, 0.0]], rtol=1e-15)


def test_pairwise_distance_double_backward(rng):
    x1, x2 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    assert_double_mirror(*run_both(lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b)), x1, x2)
    check_gradgrad(lambda a, b: F.pairwise_distance(a, b), x1, x2)


def test_no_warning_with_an_explicit_dim(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.softmin(mg.tensor(rng.standard_normal((2, 3))), 1)
        mg.nn.Softmin(0)(mg.tensor(rng.standard_normal((2, 3))))


# --------------------------------------------------------------------------- in a CNN program
def mobile_block(lib):
    """A MobileNetV3-style block written once against ``lib``: ReLU6 and Hardswish, a squeeze-excitation gate
    with Hardsigmoid, a PReLU per channel, a GLU, and an embedding head trained with a triplet loss on
    normalized features."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.expand = nn.Conv2d(3, 8, 1)
            self.act = nn.ReLU6(inplace=True)
            self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.squeeze, self.excite = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 8, 1)
            self.gate = nn.Hardsigmoid()
            self.prelu = nn.PReLU(8)
            self.glu = nn.GLU(1)
            self.head = nn.Linear(4, 6)

        def forward(self, x):
            h = self.act(self.expand(x))
            h = F.hardswish(self.depthwise(h))
            s = self.gate(self.excite(F.selu(self.squeeze(h.mean((2, 3), keepdim=True)))))
            h = self.glu(self.prelu(h * s))
            return F.normalize(self.head(h.mean((2, 3))), dim=1)
    return Block()


def test_mobile_block_trains_like_pytorch(rng):
    torch = torch_or_skip()
    mg.manual_seed(0)
    ours = mobile_block(mg).to(mg.float64)
    theirs = mobile_block(torch).to(torch.float64)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert "prelu.weight" in ours.state_dict()
    triplets = [tuple(rng.standard_normal((4, 3, 6, 5)) for _ in range(3)) for _ in range(2)]
    for lib, model in ((mg, ours), (torch, theirs)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for batch in triplets:
            opt.zero_grad()
            a, p, n = (model(lib.tensor(x)) for x in batch)
            loss = lib.nn.functional.triplet_margin_loss(a, p, n, margin=0.5)
            loss = loss + lib.nn.functional.cosine_embedding_loss(a, n, lib.tensor([1, -1, 1, -1]))
            loss.backward()
            opt.step()
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key in ours_state:   # ~1e-13 apart: PyTorch's hardsigmoid slope is float32's 1/6
        np.testing.assert_allclose(ours_state[key].numpy(), theirs_state[key].numpy(), rtol=1e-9, atol=1e-11,
                                   err_msg=key)


def test_elu_family_is_accurate_near_zero_and_at_extreme_alphas():
    """y = alpha expm1(x) for x < 0 (Python's math.expm1 as the reference): exp(x) - 1 would lose every digit of
    elu(-1e-10) in float32 and 8e-8 of it in float64. alpha = inf gives -inf below 0 and +-0 at +-0 (PyTorch's);
    alpha = 0 gives -0.0 below 0."""
    import math
    xs = [-1e-10, -1e-5, -0.3, -1.5, -30.0]
    for name, alpha, scale, input_scale in (("elu", 1.0, 1.0, 1.0), ("celu", 2.5, 1.0, 0.4),
                                            ("selu", 1.6732632423543772, 1.0507009873554805, 1.0)):
        fn = getattr(F, name)
        y64 = (fn(mg.tensor(xs, dtype=mg.float64)) if name == "selu" else
               fn(mg.tensor(xs, dtype=mg.float64), alpha)).numpy()
        want = [scale * alpha * math.expm1(input_scale * x) for x in xs]
        np.testing.assert_allclose(y64, want, rtol=1e-15, atol=0)      # a few ulp (exp(x) - 1: 8e-8 at -1e-10)
        y32 = (fn(mg.tensor(xs)) if name == "selu" else fn(mg.tensor(xs), alpha)).numpy()
        np.testing.assert_allclose(y32, want, rtol=3e-7, atol=0)
    edge = F.elu(mg.tensor([-2.0, -0.0, 0.0, 1.0]), float("inf")).numpy()
    np.testing.assert_array_equal(edge, [-np.inf, 0.0, 0.0, 1.0])
    assert list(np.signbit(edge)) == [True, True, False, False]
    assert np.signbit(F.elu(mg.tensor([-2.0]), 0.0).numpy()).all()
