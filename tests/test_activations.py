"""Activations as functions and modules (leaky_relu, elu, softplus, mish, hardswish; Softmax, LogSoftmax)
and the reshaping modules Flatten and Unflatten.

Each function: a float64 gradcheck away from its kinks and a PyTorch mirror (forward and gradient under a
random upstream gradient) over a wide range including the kinks themselves (where PyTorch's one-sided
choice must be matched), the in-place forms, and PyTorch's errors. Each module: its repr and a mirror.
"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import assert_mirror, check_grad, run_both, torch_or_replay

CASES = [
    ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}), ("elu", {"alpha": 0.5}),
    ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 5.0}), ("softplus", {"beta": 0.5}),
    ("mish", {}), ("hardswish", {}),
]
IDS = [f"{name}-{kwargs}" for name, kwargs in CASES]


def functional(name, **kwargs):
    return lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs)


def wide(rng):
    """Values across every regime, including the kinks 0, +-3 and softplus' thresholds, and large |x|."""
    return np.concatenate([rng.uniform(-6, 6, 40), [0.0, -3.0, 3.0, 2.5, 10.0, 20.0, 40.0, -40.0, 800.0, -800.0]])


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_activation_gradcheck(name, kwargs, rng):
    x = rng.uniform(-5, 5, (3, 4))
    x[np.abs(x) < 0.05] = 0.3                      # away from the kink at 0 ...
    x[np.abs(np.abs(x) - 3) < 0.05] = 2.0          # ... and hardswish's at +-3
    check_grad(lambda t: getattr(F, name)(t, **kwargs), x)


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_activation_mirrors_pytorch_over_a_wide_range(name, kwargs, rng):
    assert_mirror(*run_both(functional(name, **kwargs)), wide(rng), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_activation_keeps_float32(name, kwargs, rng):
    x = wide(rng).astype(np.float32)
    assert_mirror(*run_both(functional(name, **kwargs)), x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "mish", "hardswish"])
def test_inplace_activation_in_a_graph_matches_pytorch(name, rng):
    def f(lib, x):
        h = x * 2                                  # a non-leaf, written in place
        return getattr(lib.nn.functional, name)(h, inplace=True) * x
    assert_mirror(*run_both(f), rng.standard_normal((3, 4)) * 3)


def test_inplace_activation_writes_into_its_input():
    x = mg.tensor([-1.0, 2.0])
    assert F.leaky_relu(x, 0.5, inplace=True) is x
    np.testing.assert_array_equal(x.numpy(), [-0.5, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.elu(mg.tensor([1.0], requires_grad=True), inplace=True)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "softplus", "mish", "hardswish"])
def test_activation_rejects_integer_input(name):
    with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented'):
        getattr(F, name)(mg.tensor([1, 2]))


MODULES = [("LeakyReLU", ()), ("LeakyReLU", (0.2, True)), ("ELU", ()), ("ELU", (0.5,)), ("Softplus", ()),
           ("Softplus", (2.0, 5.0)), ("Mish", ()), ("Hardswish", ()), ("Softmax", (1,)), ("LogSoftmax", (0,)),
           ("Softmax", (-1,)), ("Tanh", ()), ("Sigmoid", ()), ("Flatten", ()), ("Flatten", (0, 1)),
           ("Unflatten", (1, (2, 2))), ("Unflatten", (-1, (2, -1))), ("Identity", ())]


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_activation_modules_mirror_pytorch(name, args, rng):
    torch = torch_or_replay()
    ours, theirs = getattr(mg.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)

    def non_leaf(module):                          # in-place modules need a non-leaf input
        return lambda x: module(x * 1)
    assert_mirror(non_leaf(ours), non_leaf(theirs), rng.standard_normal((3, 4, 2)) * 3)


def test_softmax_module_without_dim_uses_pytorchs_legacy_choice(rng):
    torch = torch_or_replay()
    for shape in [(4,), (3, 4), (2, 3, 4), (2, 3, 4, 5)]:
        with pytest.warns(UserWarning, match="Implicit dimension"):
            assert_mirror(mg.nn.Softmax(), torch.nn.Softmax(), rng.standard_normal(shape))


def test_unflatten_errors():
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints"):
        mg.nn.Unflatten(1, 4)
    with pytest.raises(RuntimeError):
        mg.nn.Unflatten(1, (3, 3))(mg.zeros(2, 4))
