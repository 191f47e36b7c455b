"""``nn.utils.parametrize`` against PyTorch: user parametrizations (one tensor, several tensors from
``right_inverse``, chained, on a buffer), state_dict keys and loading, the class name and repr, assignment
through ``right_inverse``, ``cached()``, removal either way, deepcopy, and bad input."""
import copy

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn.utils import parametrize

from .mirror import check_grad, torch_or_skip
from .weight_param_helpers import numpy_state, train_side_by_side, twin_modules


def parametrizations_of(lib):
    """The same user parametrizations written against ``lib``'s nn.Module."""

    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, A):
            return A.triu()

    class Scaled(lib.nn.Module):           # no right_inverse
        def forward(self, X):
            return 2.0 * X

    class Split(lib.nn.Module):            # two tensors: a sum of parts
        def forward(self, A, B):
            return A + B * B

        def right_inverse(self, X):
            return X - 1.0, lib.ones_like(X)

    return Symmetric, Scaled, Split


def square_linear(lib):
    return lib.nn.Linear(3, 3)


def wrap_symmetric(lib, module):
    Symmetric, Scaled, _ = parametrizations_of(lib)
    lib.nn.utils.parametrize.register_parametrization(module, "weight", Symmetric())
    return lib.nn.utils.parametrize.register_parametrization(module, "weight", Scaled())


def wrap_split(lib, module):
    _, _, Split = parametrizations_of(lib)
    return lib.nn.utils.parametrize.register_parametrization(module, "weight", Split())


@pytest.mark.parametrize("wrap", [wrap_symmetric, wrap_split], ids=["chained", "two originals"])
def test_user_parametrizations_train_like_pytorch(wrap):
    ours, theirs = twin_modules(square_linear, wrap)
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == "ParametrizedLinear"
    train_side_by_side(ours, theirs, (2, 3))


def test_state_dict_keys_and_values_match_pytorch():
    ours, theirs = twin_modules(square_linear, wrap_symmetric)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "parametrizations.weight.original"]
    ours2, theirs2 = twin_modules(square_linear, wrap_split)
    assert list(ours2.state_dict()) == list(theirs2.state_dict())
    assert list(ours2.state_dict()) == ["bias", "parametrizations.weight.original0",
                                        "parametrizations.weight.original1"]
    np.testing.assert_allclose(ours2.weight.detach().numpy(), theirs2.weight.detach().numpy(), rtol=1e-14)


def test_assignment_goes_through_right_inverse():
    torch = torch_or_skip()
    ours, theirs = twin_modules(square_linear, lambda lib, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", parametrizations_of(lib)[0]()))
    original = ours.parametrizations.weight.original
    target = np.random.default_rng(0).standard_normal((3, 3))
    target = target + target.T
    ours.weight = mg.tensor(target)
    theirs.weight = torch.tensor(target)
    assert ours.parametrizations.weight.original is original           # updated in place
    np.testing.assert_allclose(ours.weight.detach().numpy(), target, rtol=1e-14)
    np.testing.assert_allclose(numpy_state(ours)["parametrizations.weight.original"],
                               numpy_state(theirs)["parametrizations.weight.original"], rtol=1e-14)


def test_without_right_inverse_assignment_raises():
    layer = parametrize.register_parametrization(nn.Linear(3, 3), "weight", parametrizations_of(mg)[1]())
    with pytest.raises(RuntimeError, match="parametrization Scaled does not implement right_inverse."):
        layer.weight = mg.zeros(3, 3)


def test_a_buffer_can_be_parametrized():
    module = nn.Module()
    module.register_buffer("table", mg.tensor(np.arange(9.0).reshape(3, 3)))
    parametrize.register_parametrization(module, "table", parametrizations_of(mg)[1]())
    assert list(module.state_dict()) == ["parametrizations.table.original"]
    assert not module.parametrizations.table.original.requires_grad
    np.testing.assert_array_equal(module.table.numpy(), 2 * np.arange(9.0).reshape(3, 3))


def test_gradient_through_the_parametrization():
    Symmetric = parametrizations_of(mg)[0]
    check_grad(lambda X: Symmetric()(X), np.random.default_rng(1).standard_normal((4, 4)))
    layer = parametrize.register_parametrization(nn.Linear(3, 3).double(), "weight", Symmetric())
    layer(mg.ones(2, 3, dtype=mg.float64)).sum().backward()
    grad = layer.parametrizations.weight.original.grad.numpy()
    np.testing.assert_array_equal(np.tril(grad, -1), 0)                 # the lower triangle is never read


def test_cached_computes_each_parametrized_tensor_once():
    calls = []

    class Counted(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0
    layer = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Counted())
    calls.clear()
    with parametrize.cached():
        first, second = layer.weight, layer.weight
        with parametrize.cached():                       # nested: the same cache
            third = layer.weight
    assert len(calls) == 1 and first is second is third
    _ = layer.weight, layer.weight
    assert len(calls) == 3                               # outside: computed on every read


def test_remove_parametrizations_either_way():
    _, Scaled, Split = parametrizations_of(mg)
    layer = parametrize.register_parametrization(nn.Linear(3, 3).double(), "weight", Scaled())
    original = layer.parametrizations.weight.original.detach().numpy().copy()
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert type(layer) is nn.Linear and not hasattr(layer, "parametrizations")
    np.testing.assert_array_equal(layer.weight.detach().numpy(), original)
    parametrize.register_parametrization(layer, "weight", Scaled())
    parametrize.remove_parametrizations(layer, "weight")
    np.testing.assert_allclose(layer.weight.detach().numpy(), 2 * original, rtol=1e-15)
    assert isinstance(layer.weight, nn.Parameter)
    parametrize.register_parametrization(layer, "weight", Split())
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(layer, "bias")


def test_two_tensors_parametrized_one_removed():
    Scaled = parametrizations_of(mg)[1]
    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Scaled())
    parametrize.register_parametrization(layer, "bias", Scaled())
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "bias")
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer).__name__ == "ParametrizedLinear" and not parametrize.is_parametrized(layer, "weight")
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    parametrize.remove_parametrizations(layer, "bias")
    assert type(layer) is nn.Linear and not parametrize.is_parametrized(layer)
    assert parametrize.type_before_parametrizations(layer) is nn.Linear


def test_load_state_dict_and_deepcopy():
    layer = wrap_symmetric(mg, nn.Linear(3, 3).double())
    other = wrap_symmetric(mg, nn.Linear(3, 3).double())
    other.load_state_dict(layer.state_dict())
    np.testing.assert_array_equal(other.weight.detach().numpy(), layer.weight.detach().numpy())
    replica = copy.deepcopy(layer)
    assert type(replica) is type(layer)
    assert replica.parametrizations.weight.original is not layer.parametrizations.weight.original
    np.testing.assert_array_equal(replica.weight.detach().numpy(), layer.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        layer.__getstate__()


def test_bad_parametrizations_raise_and_change_nothing():
    class Shrinks(nn.Module):
        def forward(self, X):
            return X[:1]

    class Casts(nn.Module):
        def forward(self, X):
            return X.to(mg.float64)

    layer = nn.Linear(3, 3)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(layer, "weight", Shrinks())
    with pytest.raises(ValueError, match="may not change the dtype"):
        parametrize.register_parametrization(layer, "weight", Casts())
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with "
                                         "name 'nothing'"):
        parametrize.register_parametrization(layer, "nothing", Casts())
    assert type(layer) is nn.Linear and list(layer.state_dict()) == ["weight", "bias"]
    parametrize.register_parametrization(layer, "weight", Shrinks(), unsafe=True)      # unsafe: not checked
    assert layer.weight.shape == (1, 3)
