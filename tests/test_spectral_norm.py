"""Spectral normalization: the legacy ``nn.utils.spectral_norm`` / ``remove_spectral_norm`` hook and
``nn.utils.parametrizations.spectral_norm`` on layers trained side by side with PyTorch (its random u and v
copied over), the power iteration against the SVD, gradients by finite differences, removal and bad input."""
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn.utils import parametrizations, parametrize
from minigrad.nn.utils.spectral_norm import divided_by_sigma

from .mirror import check_grad
from .weight_param_helpers import LAYERS, numpy_state, train_side_by_side, twin_modules

IDS = [layer[0] for layer in LAYERS]


@pytest.mark.parametrize("name, factory, input_shape", LAYERS, ids=IDS)
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_legacy_spectral_norm_trains_like_pytorch(name, factory, input_shape, n_power_iterations):
    ours, theirs = twin_modules(factory, lambda lib, m: lib.nn.utils.spectral_norm(
        m, n_power_iterations=n_power_iterations))
    assert list(ours.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    train_side_by_side(ours, theirs, input_shape)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, factory, input_shape", LAYERS, ids=IDS)
@pytest.mark.parametrize("dim", [None, 1])
def test_parametrized_spectral_norm_trains_like_pytorch(name, factory, input_shape, dim):
    ours, theirs = twin_modules(factory, lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m, dim=dim))
    assert list(ours.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                       "parametrizations.weight.0._v"]
    assert repr(ours) == repr(theirs)
    train_side_by_side(ours, theirs, input_shape)


def test_transposed_convolutions_normalize_over_dim_1():
    """Their weight is (in, out, kH, kW): the rows of the matrix are the output channels, dim 1."""
    legacy = nn.utils.spectral_norm(nn.ConvTranspose2d(2, 3, 3))
    assert legacy.weight_u.shape == (3,) and legacy.weight_v.shape == (2 * 9,)
    parametrized = parametrizations.spectral_norm(nn.ConvTranspose2d(2, 3, 3))
    assert parametrized.parametrizations.weight[0].dim == 1
    assert parametrized.parametrizations.weight[0]._u.shape == (3,)


@pytest.mark.parametrize("wrap", [nn.utils.spectral_norm, parametrizations.spectral_norm])
def test_power_iteration_converges_to_the_largest_singular_value(wrap):
    # a weight whose two largest singular values are 3 and 1: 50 iterations converge to (1/3)^100 (a random weight's
    # may lie close together, and then 50 iterations are not enough for 1e-8, as the test's earlier version found)
    rng = np.random.default_rng(14)
    U, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    V, _ = np.linalg.qr(rng.standard_normal((6, 4)))
    linear = nn.Linear(6, 4).double()
    with mg.no_grad():
        linear.weight.copy_(mg.tensor(U @ np.diag([3.0, 1.0, 0.5, 0.2]) @ V.T))
    layer = wrap(linear, n_power_iterations=50)
    layer(mg.zeros(1, 6, dtype=mg.float64))                              # training: the hook iterates
    original = layer.weight_orig if hasattr(layer, "weight_orig") else layer.parametrizations.weight.original
    sigma = np.linalg.svd(original.detach().numpy(), compute_uv=False)[0]
    np.testing.assert_allclose(layer.weight.detach().numpy(), original.detach().numpy() / sigma, rtol=1e-8)
    assert np.linalg.norm(layer.weight.detach().numpy(), 2) == pytest.approx(1.0, rel=1e-8)


@pytest.mark.parametrize("wrap", [nn.utils.spectral_norm, parametrizations.spectral_norm])
def test_eval_runs_no_power_iteration(wrap):
    layer = wrap(nn.Linear(5, 3).double()).eval()
    before = numpy_state(layer)
    first = layer(mg.ones(2, 5, dtype=mg.float64)).detach().numpy()
    second = layer(mg.ones(2, 5, dtype=mg.float64)).detach().numpy()
    for key, value in numpy_state(layer).items():
        np.testing.assert_array_equal(value, before[key], err_msg=key)
    np.testing.assert_array_equal(first, second)


def test_gradient_of_the_normalized_weight_by_finite_differences():
    """u and v held constant (eval): weight / (u^T W v) differentiated through W's two appearances."""
    layer = parametrizations.spectral_norm(nn.Conv2d(2, 3, 2).double()).eval()
    spectral = layer.parametrizations.weight[0]
    check_grad(lambda w: spectral(w), np.random.default_rng(0).standard_normal((3, 2, 2, 2)))
    legacy = nn.utils.spectral_norm(nn.Linear(4, 3).double(), dim=1)
    check_grad(lambda w: divided_by_sigma(w, legacy.weight_u, legacy.weight_v, dim=1),
               np.random.default_rng(1).standard_normal((3, 4)))


def test_one_dimensional_weight_is_divided_by_its_norm():
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(2).standard_normal(5)
    ours = parametrizations.spectral_norm(_WithVector(mg, w))
    theirs = torch.nn.utils.parametrizations.spectral_norm(_WithVector(torch, w))
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(ours.weight.detach().numpy(), w / np.linalg.norm(w), rtol=1e-14)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def _WithVector(lib, w):
    module = lib.nn.Module()
    module.weight = lib.nn.Parameter(lib.tensor(w))
    return module


@pytest.mark.parametrize("remove, wrap", [
    (nn.utils.remove_spectral_norm, nn.utils.spectral_norm),
    (lambda m: parametrize.remove_parametrizations(m, "weight"), parametrizations.spectral_norm)])
def test_remove_restores_a_plain_parameter_with_the_normalized_values(remove, wrap):
    layer = wrap(nn.Linear(4, 3).double())
    layer(mg.ones(1, 4, dtype=mg.float64))
    layer.eval()
    expected = layer(mg.eye(4, dtype=mg.float64)).detach().numpy() - layer.bias.detach().numpy()   # = W'^T
    assert remove(layer) is layer
    assert type(layer) is nn.Linear and list(layer.state_dict()) == ["bias", "weight"]
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad and not layer._forward_pre_hooks
    np.testing.assert_allclose(layer.weight.detach().numpy(), expected.T, rtol=1e-12, atol=1e-14)


def test_bad_input_raises_and_changes_nothing():
    layer = nn.Linear(4, 3)
    state = numpy_state(layer)
    message = "Expected n_power_iterations to be positive, but got n_power_iterations=0"
    with pytest.raises(ValueError, match=message):
        nn.utils.spectral_norm(layer, n_power_iterations=0)
    with pytest.raises(ValueError, match=message):
        parametrizations.spectral_norm(layer, n_power_iterations=0)
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1] "
                                                   "but got 2)")):
        parametrizations.spectral_norm(layer, dim=2)
    with pytest.raises(RuntimeError, match="dim 2 is out of range for the 2-d parameter 'weight'"):
        nn.utils.spectral_norm(layer, dim=2)
    with pytest.raises(KeyError, match="foo"):
        nn.utils.spectral_norm(layer, name="foo")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'foo'"):
        parametrizations.spectral_norm(layer, name="foo")
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in Linear"):
        nn.utils.remove_spectral_norm(layer)
    assert type(layer) is nn.Linear and not layer._forward_pre_hooks
    assert {k: v.tolist() for k, v in numpy_state(layer).items()} == {k: v.tolist() for k, v in state.items()}
    nn.utils.spectral_norm(layer)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
        nn.utils.spectral_norm(layer)
    assert len(layer._forward_pre_hooks) == 1
