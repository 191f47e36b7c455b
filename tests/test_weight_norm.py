"""Weight normalization: ``_weight_norm``'s hand-derived backward against finite differences (and a wrong
backward the check must reject), its composite twin and PyTorch, the double backward, ``norm_except_dim``, and
the legacy ``nn.utils.weight_norm`` / ``remove_weight_norm`` and ``nn.utils.parametrizations.weight_norm`` on
layers trained side by side with PyTorch."""
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.autograd import Function
from minigrad.nn.utils import parametrizations, parametrize
from minigrad.ops.norm.weightnorm import norm_over, reduced_axes, weight_norm_composite

from .mirror import assert_double_mirror, assert_mirror, check_grad, check_gradgrad, run_both, torch_or_replay, torch_or_skip
from .weight_param_helpers import LAYERS, numpy_state, train_side_by_side, twin_modules

SHAPES = [(5,), (3, 4), (3, 2, 4), (2, 3, 2, 2)]          # 1-D .. 4-D v
DIMS = [0, 1, -1, -2, None]                               # -1 and None: the norm of the whole tensor


def randn(shape, seed, scale=1.0):
    return np.asarray(np.random.default_rng(seed).standard_normal(shape) * scale)


def magnitude_shape(shape, dim):
    """The shape of g (and of the norm): v's shape with 1 on every reduced dim."""
    axes = reduced_axes(len(shape), dim)
    return tuple(1 if axis in axes else size for axis, size in enumerate(shape))


def cases():
    for shape in SHAPES:
        for dim in DIMS:
            if dim is None or -len(shape) <= dim < len(shape):
                yield shape, dim


def public_dim(dim):
    """``_weight_norm`` takes PyTorch's int (-1: whole tensor); None is the modules' spelling of it."""
    return -1 if dim is None else dim


@pytest.mark.parametrize("shape, dim", list(cases()))
def test_gradcheck(shape, dim):
    check_grad(lambda v, g: mg._weight_norm(v, g, public_dim(dim)), randn(shape, 1),
               randn(magnitude_shape(shape, dim), 2))


@pytest.mark.parametrize("shape", SHAPES)
def test_gradcheck_with_a_scalar_magnitude(shape):
    check_grad(lambda v, g: mg._weight_norm(v, g, 0), randn(shape, 3), randn((), 4))


@pytest.mark.parametrize("shape, dim", list(cases()))
def test_mirror_against_pytorch(shape, dim):
    mg_fn, torch_fn = run_both(lambda lib, v, g: lib._weight_norm(v, g, public_dim(dim)))
    assert_mirror(mg_fn, torch_fn, randn(shape, 5, 2.0), randn(magnitude_shape(shape, dim), 6), rtol=1e-10,
                  atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 99))
def test_mirror_sweep(shape, data, seed):
    """Any shape of 1 to 4 dims, any valid dim, g of the norm's shape or a scalar. A scalar g is compared with
    PyTorch's formula written with ordinary ops: torch._weight_norm itself (2.13, CPU) reads past a 0-d g when
    dim is the first or last dim and returns garbage there."""
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    g_shape = data.draw(st.sampled_from([magnitude_shape(shape, dim), ()]))
    mg_fn, torch_fn = run_both(lambda lib, v, g: lib._weight_norm(v, g, dim))
    if g_shape == ():
        torch = torch_or_replay()
        torch_fn = lambda v, g: v * (g / torch.norm_except_dim(v, 2, dim))       # noqa: E731
    assert_mirror(mg_fn, torch_fn, randn(shape, seed, 3.0), randn(g_shape, seed + 1), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape, dim", list(cases()))
def test_fused_equals_the_composite_twin(shape, dim):
    v, g, upstream = randn(shape, 7), randn(magnitude_shape(shape, dim), 8), randn(shape, 9)
    results = []
    for fn in (mg._weight_norm, weight_norm_composite):
        tv, tg = mg.tensor(v, requires_grad=True), mg.tensor(g, requires_grad=True)
        w = fn(tv, tg, public_dim(dim))
        w.backward(mg.tensor(upstream))
        results.append((w.detach().numpy(), tv.grad.numpy(), tg.grad.numpy()))
    for fused, composite in zip(*results):
        np.testing.assert_allclose(fused, composite, rtol=1e-12, atol=1e-12)   # 1-D: dv is 0 up to rounding


@pytest.mark.parametrize("shape, dim", list(cases()))
def test_gradient_of_v_is_orthogonal_to_v(shape, dim):
    """dv = g/n (t - v (t.v)/n^2) has no component along v in each normalized block."""
    v = mg.tensor(randn(shape, 10), requires_grad=True)
    mg._weight_norm(v, mg.tensor(randn(magnitude_shape(shape, dim), 11)), public_dim(dim)).backward(
        mg.tensor(randn(shape, 12)))
    axes = reduced_axes(len(shape), dim)
    along_v = (v.grad.numpy() * v.detach().numpy()).sum(axis=axes) if axes else v.grad.numpy() * v.detach().numpy()
    np.testing.assert_allclose(along_v, 0, atol=1e-12)


class ForgottenProjection(Function):
    """A plausible mistake: dv = g/n * t, the derivative with the norm held constant (no -v (v.t)/n^2 term)."""

    @staticmethod
    def forward(ctx, v, g):
        n = norm_over(v._data, (1,))
        ctx.save_for_backward(v._data, g._data, n)
        return v._data * g._data / n

    @staticmethod
    def backward(ctx, dout):
        v, g, n = ctx.saved_tensors
        t = dout._data
        return g / n * t, (t * v).sum(axis=1, keepdims=True) / n


def test_gradcheck_rejects_a_backward_without_the_projection():
    v, g = mg.tensor(randn((3, 4), 13), requires_grad=True), mg.tensor(randn((3, 1), 14), requires_grad=True)
    with pytest.raises(mg.autograd.GradcheckError):
        mg.gradcheck(ForgottenProjection.apply, [v, g])
    assert mg.gradcheck(lambda v, g: mg._weight_norm(v, g, 0), [v, g])        # the real one, same inputs


@pytest.mark.parametrize("shape, dim", [((3, 4), 0), ((3, 2, 4), 1), ((2, 3, 2, 2), -1), ((5,), 0)])
def test_double_backward(shape, dim):
    """Against PyTorch's formula written with ordinary ops: the double backward of torch._weight_norm itself
    (WeightNormInterfaceBackward0) fails torch.autograd.gradgradcheck in PyTorch 2.13, so it is no oracle."""
    check_gradgrad(lambda v, g: mg._weight_norm(v, g, dim), randn(shape, 15), randn(magnitude_shape(shape, dim), 16))
    torch = torch_or_replay()
    assert_double_mirror(lambda v, g: mg._weight_norm(v, g, dim),
                         lambda v, g: v * (g / torch.norm_except_dim(v, 2, dim)),
                         randn(shape, 17), randn(magnitude_shape(shape, dim), 18))


def test_double_backward_through_the_parametrization():
    """The module's parametrization (g, v) -> weight, used in a layer: second derivatives by finite differences."""
    layer = parametrizations.weight_norm(nn.Linear(3, 2).double())
    original = layer.parametrizations.weight
    check_gradgrad(lambda g, v, x: original[0](g, v) @ x.T, original.original0.detach().numpy(),
                   original.original1.detach().numpy(), randn((4, 3), 19))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("pow", [2, 3, 1])
def test_norm_except_dim_against_pytorch(shape, pow):
    for dim in [d for s, d in cases() if s == shape and d is not None]:
        mg_fn, torch_fn = run_both(lambda lib, v, dim=dim: lib.norm_except_dim(v, pow, dim))
        assert_mirror(mg_fn, torch_fn, randn(shape, 20))


def test_float32_and_dtypes():
    torch = torch_or_skip()
    v, g = randn((3, 4), 21).astype(np.float32), randn((3, 1), 22).astype(np.float32)
    ours, theirs = mg._weight_norm(mg.tensor(v), mg.tensor(g), 0), torch._weight_norm(torch.tensor(v),
                                                                                      torch.tensor(g), 0)
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_bad_arguments():
    v, g = mg.randn(3, 4), mg.randn(3, 1)
    with pytest.raises(IndexError, match=re.escape("expected to be in range of [-2, 1], but got 5")):
        mg._weight_norm(v, g, 5)
    with pytest.raises(TypeError, match="dim"):
        mg._weight_norm(v, g, None)
    with pytest.raises(TypeError, match="v"):
        mg._weight_norm(np.ones((3, 4)), g, 0)


# --------------------------------------------------------------------------- the legacy hook
def legacy(lib, module, dim=0):
    return lib.nn.utils.weight_norm(module, dim=dim)


@pytest.mark.parametrize("name, factory, input_shape", LAYERS, ids=[layer[0] for layer in LAYERS])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm_trains_like_pytorch(name, factory, input_shape, dim):
    ours, theirs = twin_modules(factory, lambda lib, m: legacy(lib, m, dim))
    assert list(ours.state_dict()) == ["bias", "weight_g", "weight_v"]
    train_side_by_side(ours, theirs, input_shape)


def test_legacy_weight_norm_attributes_and_warning():
    layer = nn.Linear(4, 3).double()
    weight = layer.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match=re.escape("`torch.nn.utils.weight_norm` is deprecated in favor of "
                                                     "`torch.nn.utils.parametrizations.weight_norm`.")):
        assert nn.utils.weight_norm(layer) is layer
    assert isinstance(layer.weight_g, nn.Parameter) and isinstance(layer.weight_v, nn.Parameter)
    assert "weight" not in dict(layer.named_parameters())
    np.testing.assert_allclose(layer.weight_g.detach().numpy(), np.linalg.norm(weight, axis=1, keepdims=True),
                               rtol=1e-14)
    np.testing.assert_array_equal(layer.weight_v.detach().numpy(), weight)
    np.testing.assert_allclose(layer.weight.detach().numpy(), weight, rtol=1e-14)     # g v / ||v|| = weight
    assert repr(layer) == "Linear(in_features=4, out_features=3, bias=True)"


def test_remove_weight_norm_restores_a_plain_parameter():
    layer = nn.Linear(4, 3).double()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(layer, dim=None)
    with mg.no_grad():
        layer.weight_g.mul_(2.0)
    expected = (2 * layer.weight_v).detach().numpy()                 # g doubled: the weight doubles
    assert nn.utils.remove_weight_norm(layer) is layer
    assert list(layer.state_dict()) == ["bias", "weight"] and not layer._forward_pre_hooks
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    np.testing.assert_allclose(layer.weight.detach().numpy(), expected, rtol=1e-14)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in Linear"):
        nn.utils.remove_weight_norm(layer)


def test_legacy_weight_norm_bad_input_changes_nothing():
    layer = nn.Linear(4, 3)
    state = numpy_state(layer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(IndexError, match=re.escape("expected to be in range of [-2, 1], but got 3")):
            nn.utils.weight_norm(layer, dim=3)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
            nn.utils.weight_norm(layer, name="foo")
        layer.register_buffer("scale", mg.ones(3, 4))
        with pytest.raises(KeyError, match="'scale' of Linear must be a parameter"):
            nn.utils.weight_norm(layer, name="scale")
        del layer.scale
        assert list(numpy_state(layer)) == list(state) and not layer._forward_pre_hooks
        nn.utils.weight_norm(layer)
        state = numpy_state(layer)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
            nn.utils.weight_norm(layer)
    assert list(numpy_state(layer)) == list(state) and len(layer._forward_pre_hooks) == 1


# --------------------------------------------------------------------------- the parametrization
@pytest.mark.parametrize("name, factory, input_shape", LAYERS, ids=[layer[0] for layer in LAYERS])
@pytest.mark.parametrize("dim", [0, 1, -1, None])
def test_parametrized_weight_norm_trains_like_pytorch(name, factory, input_shape, dim):
    ours, theirs = twin_modules(factory, lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=dim))
    assert type(ours).__name__ == f"Parametrized{name}"
    assert list(ours.state_dict()) == ["bias", "parametrizations.weight.original0",
                                       "parametrizations.weight.original1"]
    train_side_by_side(ours, theirs, input_shape)


def test_parametrized_weight_norm_repr_and_values():
    torch = torch_or_skip()
    ours, theirs = twin_modules(LAYERS[2][1], lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m))
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    assert isinstance(ours.parametrizations.weight, parametrize.ParametrizationList)
    assert torch.nn.utils.parametrize.is_parametrized(theirs, "weight") and parametrize.is_parametrized(ours, "weight")


def test_parametrized_weight_norm_remove_keeps_the_values():
    layer = parametrizations.weight_norm(nn.Conv1d(2, 3, 3).double())
    with mg.no_grad():
        layer.parametrizations.weight.original0.mul_(3.0)
    expected = layer.weight.detach().numpy()
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Conv1d and list(layer.state_dict()) == ["bias", "weight"]   # as PyTorch
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    np.testing.assert_allclose(layer.weight.detach().numpy(), expected, rtol=1e-14)


def test_parametrized_weight_norm_bad_input_changes_nothing():
    layer = nn.Linear(2, 2)
    with pytest.raises(IndexError, match=re.escape("expected to be in range of [-2, 1], but got 4")):
        parametrizations.weight_norm(layer, dim=4)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with "
                                         "name 'foo'"):
        parametrizations.weight_norm(layer, name="foo")
    assert type(layer) is nn.Linear and list(layer.state_dict()) == ["weight", "bias"]
