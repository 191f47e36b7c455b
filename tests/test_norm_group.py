"""GroupNorm and InstanceNorm1d/2d (F.group_norm, F.instance_norm): gradchecks, fused == composite,
PyTorch mirrors (forward, every gradient and every buffer over training steps, then eval), the
GroupNorm equivalences, edge cases and errors."""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import GradcheckError
from minigrad.ops.norm.groupnorm import GroupNormFunction as FusedGroupNorm
from minigrad.ops.norm.groupnorm import group_norm_composite, instance_norm_composite

from .mirror import assert_mirror, check_grad, torch_or_replay, torch_or_skip
from .test_norm_batch import (affine_arrays, as_tensors, assert_close, assert_float16_like_torch,
                              assert_raises_like_torch, assert_same_fresh_module, constructor_parameters, assert_unchanged, functional_buffers, mirror_module,
                              mirror_steps, randn, snapshot)

# (shape, groups): (N, C), (N, C, L), (N, C, H, W) with G = 1, some G, G = C
GROUP_CASES = [((4, 6), 1), ((4, 6), 3), ((2, 6, 3), 1), ((2, 6, 3), 2), ((2, 6, 3), 6), ((2, 4, 2, 2), 2),
               ((2, 4, 2, 2), 4)]
INSTANCE_SHAPES = [(3, 3, 4), (2, 3, 2, 3)]  # (N, C, L), (N, C, H, W)


# ----------------------------------------------------------------------------- gradchecks
@pytest.mark.parametrize("shape, groups", GROUP_CASES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
def test_gradcheck_group_norm(shape, groups, affine, eps):
    w, b = affine_arrays(shape[1], affine)
    check_grad(lambda x, w, b: F.group_norm(x, groups, w, b, eps), randn(shape, 1), w, b)


@pytest.mark.parametrize("shape", INSTANCE_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
def test_gradcheck_instance_norm(shape, affine, eps):
    w, b = affine_arrays(shape[1], affine)
    check_grad(lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=eps), randn(shape, 1), w, b)


@pytest.mark.parametrize("shape", INSTANCE_SHAPES)
def test_gradcheck_instance_norm_running_statistics(shape):
    """use_input_stats=False: the running buffers are constants, the op is affine in x."""
    c = shape[1]
    rm, rv = mg.tensor(randn(c, 2)), mg.tensor(np.abs(randn(c, 3)) + 0.5)
    check_grad(lambda x, w, b: F.instance_norm(x, rm, rv, w, b, use_input_stats=False), randn(shape, 1),
               *affine_arrays(c, True))


@pytest.mark.parametrize("module, shape", [(lambda: nn.GroupNorm(2, 4, eps=1e-3), (3, 4, 3)),
                                           (lambda: nn.InstanceNorm1d(3, affine=True), (2, 3, 4)),
                                           (lambda: nn.InstanceNorm1d(3, affine=True), (3, 4)),  # unbatched
                                           (lambda: nn.InstanceNorm2d(3, affine=True), (2, 3, 2, 2))])
def test_gradcheck_modules(module, shape):
    module = module().double()
    params = list(module.parameters())
    for p in params:
        p.data[...] = randn(p.shape, 4)
    assert mg.gradcheck(lambda x, *ps: module(x), [mg.tensor(randn(shape, 1), requires_grad=True)] + params)


def test_gradcheck_rejects_a_wrong_backward():
    class ConstantStatistics(FusedGroupNorm):
        """A classic bug: treating the group statistics as constants, dx = rstd * g."""
        @staticmethod
        def backward(ctx, dout):
            x, mean, rstd, w = ctx.saved_tensors
            n, groups = rstd.shape
            return (dout.detach().numpy().reshape(n, groups, -1) * rstd[:, :, None]).reshape(x.shape), None, None, None, None

    x = mg.tensor(randn((2, 4, 3), 0), requires_grad=True)
    assert mg.gradcheck(lambda x: FusedGroupNorm.apply(x, None, None, 2, 1e-5), (x,))
    with pytest.raises(GradcheckError, match="input 0"):
        mg.gradcheck(lambda x: ConstantStatistics.apply(x, None, None, 2, 1e-5), (x,))


# ----------------------------------------------------------------------------- fused == composite
def compare_fused_composite(fused, composite, shape, affine, buffers=False):
    c, g = shape[1], randn(shape, 9)
    results = []
    for fn in (fused, composite):
        x, w, b = as_tensors(randn(shape, 1, 3.0, 2.0), *affine_arrays(c, affine))
        rm, rv = (mg.tensor(randn(c, 2)), mg.tensor(np.abs(randn(c, 3)) + 0.5)) if buffers else (None, None)
        y = fn(x, w, b, rm, rv)
        y.backward(mg.tensor(g))
        results.append([y._data] + [t._data for t in (rm, rv) if t is not None] +
                       [t.grad._data for t in (x, w, b) if t is not None])
    for i, (a, b) in enumerate(zip(*results)):
        assert_close(a, b, f"item {i}", rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, groups", GROUP_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_fused_equals_composite(shape, groups, affine):
    compare_fused_composite(lambda x, w, b, rm, rv: F.group_norm(x, groups, w, b, 1e-3),
                            lambda x, w, b, rm, rv: group_norm_composite(x, groups, w, b, 1e-3), shape, affine)


@pytest.mark.parametrize("shape", INSTANCE_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_fused_equals_composite(shape, affine, use_input_stats):
    compare_fused_composite(lambda x, w, b, rm, rv: F.instance_norm(x, rm, rv, w, b, use_input_stats, 0.3, 1e-3),
                            lambda x, w, b, rm, rv: instance_norm_composite(x, rm, rv, w, b, use_input_stats, 0.3,
                                                                            1e-3),
                            shape, affine, buffers=True)


# ----------------------------------------------------------------------------- PyTorch mirrors
@pytest.mark.parametrize("shape, groups", GROUP_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_mirror_group_norm_module(shape, groups, affine):
    torch = torch_or_skip()
    c = shape[1]
    mirror_module(nn.GroupNorm(groups, c, eps=1e-4, affine=affine), torch.nn.GroupNorm(groups, c, eps=1e-4,
                                                                                       affine=affine), shape)


@pytest.mark.parametrize("momentum", [0.1, 0.6])
def test_mirror_instance_norm_functional_with_running_buffers(momentum):
    torch = torch_or_skip()
    rm, rv, trm, trv, state = functional_buffers(3, torch)
    w, b = as_tensors(*affine_arrays(3, True))
    tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (w, b))
    mirror_steps(lambda x, tr: F.instance_norm(x, rm, rv, w, b, tr, momentum, 1e-4),
                 lambda x, tr: torch.nn.functional.instance_norm(x, trm, trv, tw, tb, tr, momentum, 1e-4),
                 (3, 3, 2, 2), params=[(w, tw), (b, tb)], state=state)


INSTANCE_CASES = [("InstanceNorm1d", (3, 3, 5)), ("InstanceNorm1d", (3, 5)), ("InstanceNorm2d", (2, 3, 2, 3)),
                  ("InstanceNorm2d", (3, 3, 2)), ("InstanceNorm3d", (2, 3, 2, 3, 2)),
                  ("InstanceNorm3d", (3, 2, 2, 3))]  # batched and unbatched


@pytest.mark.parametrize("name, shape", INSTANCE_CASES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("track_running_stats, momentum", [(False, 0.1), (True, 0.1), (True, 0.5), (True, None)])
def test_mirror_instance_norm_module(name, shape, affine, track_running_stats, momentum):
    torch = torch_or_skip()
    kwargs = dict(affine=affine, track_running_stats=track_running_stats, momentum=momentum)
    mirror_module(getattr(nn, name)(3, **kwargs), getattr(torch.nn, name)(3, **kwargs), shape)


def test_instance_norm_momentum_none_never_updates():
    module = nn.InstanceNorm1d(3, track_running_stats=True, momentum=None)
    for seed in range(3):
        module(mg.tensor(randn((2, 3, 4), seed, 2.0, 1.0).astype(np.float32)))
    assert module.running_mean.detach().numpy().tolist() == [0] * 3 and module.running_var.detach().numpy().tolist() == [1] * 3
    assert module.num_batches_tracked.item() == 0


def test_module_defaults_and_repr():
    torch = torch_or_skip()
    for args, kwargs in [((4,), dict()), ((4,), dict(affine=True, track_running_stats=True))]:
        for name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
            assert_same_fresh_module(getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs))
    for args, kwargs in [((2, 4), dict()), ((4, 4), dict(eps=1e-3, affine=False)), ((1, 4), dict(bias=False))]:
        assert_same_fresh_module(nn.GroupNorm(*args, **kwargs), torch.nn.GroupNorm(*args, **kwargs))
    instance = nn.InstanceNorm1d(4)
    assert instance.weight is None and instance.bias is None and instance.running_mean is None


def test_module_constructor_signatures_are_pytorchs():
    torch = torch_or_skip()
    for name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm"):
        assert constructor_parameters(getattr(nn, name)) == constructor_parameters(getattr(torch.nn, name))


def test_mirror_constant_group_and_one_element_groups():
    """Zero variance: y = bias, finite gradients. (2, 3) with G = 3 has one element per group: all zeros."""
    torch = torch_or_replay()
    x = randn((2, 4, 3), 1)
    x[1, 2:, :] = -1.5  # sample 1, group 1 is constant
    w, b = affine_arrays(4, True)
    out = F.group_norm(mg.tensor(x), 2, mg.tensor(w), mg.tensor(b))
    assert_close(out.detach().numpy()[1, 2:], np.broadcast_to(b[2:, None], (2, 3)), "constant group gives the bias")
    for array, groups in ((x, 2), (randn((2, 3), 0), 3)):
        c = array.shape[1]
        assert_mirror(lambda x, w, b: F.group_norm(x, groups, w, b),
                      lambda x, w, b: torch.nn.functional.group_norm(x, groups, w, b),
                      array, *affine_arrays(c, True))
    assert F.group_norm(mg.tensor(randn((2, 3), 0)), 3).detach().numpy().tolist() == [[0.0] * 3] * 2


@pytest.mark.parametrize("fn, torch_fn", [
    (lambda x, w, b: F.group_norm(x, 2, w, b), lambda F, x, w, b: F.group_norm(x, 2, w, b)),
    (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b)),
])
@pytest.mark.parametrize("param_dtype", [np.float16, np.float32])
def test_float16_matches_torch(fn, torch_fn, param_dtype):
    """float16 input computed in float32 and cast back once: equal to torch's float16 result (~1 ulp)."""
    torch = torch_or_skip()
    x = (randn((3, 4, 5), 1, 40.0, 300.0)).astype(np.float16)  # |x| > 256: x**2 overflows float16
    g = randn(x.shape, 2).astype(np.float16)
    w, b = (a.astype(param_dtype) for a in affine_arrays(4, True))
    xs, ws, bs = as_tensors(x, w, b)
    y = fn(xs, ws, bs)
    y.backward(mg.tensor(g))
    assert (y.dtype, xs.grad.dtype, ws.grad.dtype) == (np.float16, np.float16, param_dtype)

    def torch_results(dtype):
        tx, tw, tb = (torch.tensor(a, dtype=torch.float64 if dtype else None, requires_grad=True) for a in (x, w, b))
        ty = torch_fn(torch.nn.functional, tx, tw, tb)
        ty.backward(torch.tensor(g, dtype=ty.dtype))
        return [ty, tx.grad, tw.grad, tb.grad]

    assert_float16_like_torch([y, xs.grad, ws.grad, bs.grad], torch_results, param_dtype == np.float16)


# ----------------------------------------------------------------------------- properties
@given(st.integers(0, 10**6), st.sampled_from([(2, 6, 3), (2, 4, 2, 3), (3, 2)]), st.floats(1e-6, 0.5))
def test_group_norm_with_one_group_is_layer_norm_over_c_h_w(seed, shape, eps):
    x = mg.tensor(randn(shape, seed, 3.0, 1.0))
    assert_close(F.group_norm(x, 1, eps=eps).detach().numpy(), F.layer_norm(x, shape[1:], eps=eps).detach().numpy(), "G=1",
                 rtol=1e-12, atol=1e-12)


@given(st.integers(0, 10**6), st.sampled_from(INSTANCE_SHAPES), st.floats(1e-6, 0.5))
def test_group_norm_with_c_groups_is_instance_norm(seed, shape, eps):
    x = mg.tensor(randn(shape, seed, 3.0, 1.0))
    assert_close(F.group_norm(x, shape[1], eps=eps).detach().numpy(), F.instance_norm(x, eps=eps).detach().numpy(), "G=C",
                 rtol=1e-12, atol=1e-12)


@given(st.integers(0, 10**6), st.sampled_from(GROUP_CASES))
def test_float32_close_to_float64(seed, case):
    shape, groups = case
    x, (w, b) = randn(shape, seed, 2.0, 1.0), affine_arrays(shape[1], True, seed + 1)
    lo, hi = (F.group_norm(mg.tensor(x.astype(dt)), groups, mg.tensor(w.astype(dt)), mg.tensor(b.astype(dt))).detach().numpy()
              for dt in (np.float32, np.float64))
    assert lo.dtype == np.float32
    np.testing.assert_allclose(lo, hi, rtol=1e-5, atol=1e-5 * np.abs(hi).max())


# ----------------------------------------------------------------------------- errors
def test_group_norm_channels_not_divisible():
    with pytest.raises(ValueError, match=r"^num_channels \(6\) must be divisible by num_groups \(4\)$"):
        nn.GroupNorm(4, 6)
    message = "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 6, 3] " \
              "and num_groups=4"
    for fn in (F.group_norm, group_norm_composite):
        with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
            fn(mg.tensor(randn((2, 6, 3), 0)), 4)


@pytest.mark.parametrize("args, error, message", [
    (((1, 3), 3), ValueError, "Expected more than 1 value per channel when training, got input size [1, 3]"),  # quirk
    (((1, 3), 2), ValueError, "Expected more than 1 value per channel when training, got input size [1, 2]"),
    (((6,), 3), RuntimeError, "Expected at least 2 dimensions for input tensor but received 1"),
    (((2, 6, 3), 3, 4), RuntimeError, "Expected weight to be a vector of size equal to the number of channels in "
                                      "input, but got weight of shape [4] and input of shape [2, 6, 3]"),
])
def test_group_norm_functional_errors(args, error, message):
    shape, groups, *weight = args
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        F.group_norm(mg.tensor(randn(shape, 0)), groups, *(mg.ones(n) for n in weight))


@pytest.mark.parametrize("shape, groups, weight_shape", [
    ((2, 6, 3), 4, (4,)),     # divisibility is checked before the weight
    ((1, 3), 3, (4,)),        # the N * C/G * prod(spatial) == 1 quirk comes first of all
    ((2, 6, 3), 3, (6, 1)),   # six elements, but not a vector
    ((2, 6, 3), 3, ()),
    ((2, 4), -2, None),       # num_groups must be positive
    ((2, 4), 0, None),        # ZeroDivisionError in PyTorch's own size check
])
def test_group_norm_errors_are_pytorchs(shape, groups, weight_shape):
    def call(lib, functional):
        weight = None if weight_shape is None else lib.ones(weight_shape)
        return functional.group_norm(lib.zeros(shape), groups, weight)

    assert_raises_like_torch(call)


def test_group_norm_module_reports_the_size_quirk_before_the_channel_count():
    assert_raises_like_torch(lambda lib, functional: lib.nn.GroupNorm(2, 4)(lib.zeros(1, 2)))


def test_group_norm_bias_error_names_the_bias_shape():
    """PyTorch 2.13 prints the *weight's* shape in this message ("bias of shape [0]" without a weight);
    minigrad prints the bias's."""
    message = "Expected bias to be a vector of size equal to the number of channels in input, but got bias of " \
              "shape [4] and input of shape [2, 6, 3]"
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        F.group_norm(mg.zeros(2, 6, 3), 3, None, mg.ones(4))


@pytest.mark.parametrize("name, shape, good_shape, size", [
    ("InstanceNorm1d", (2, 3, 1), (2, 3, 4), [2, 3, 1]),
    ("InstanceNorm1d", (3, 1), (3, 4), [1, 3, 1]),  # unbatched: normalized as a batch of one
    ("InstanceNorm2d", (2, 3, 1, 1), (2, 3, 2, 2), [2, 3, 1, 1]),
    ("InstanceNorm3d", (3, 1, 1, 1), (3, 2, 1, 2), [1, 3, 1, 1, 1]),
])
def test_instance_norm_one_spatial_element_in_training_changes_nothing(name, shape, good_shape, size):
    module = getattr(nn, name)(3, affine=True, track_running_stats=True, dtype=mg.float64)
    module(mg.tensor(randn(good_shape, 0)))  # one good step so the buffers are not at their defaults
    before = snapshot(module)
    message = f"Expected more than 1 spatial element when training, got input size {size}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        module(mg.tensor(randn(shape, 1)))
    assert_unchanged(module, before)
    module.eval()(mg.tensor(randn(shape, 1)))  # eval uses the running buffers: fine
    assert_unchanged(module, before)


@pytest.mark.parametrize("name, shape, message", [
    ("InstanceNorm1d", (2, 3, 4, 4), "expected 2D or 3D input (got 4D input)"),
    ("InstanceNorm2d", (3, 4), "expected 3D or 4D input (got 2D input)"),
    ("InstanceNorm1d", (2, 5, 4), "expected input's size at dim=1 to match num_features (3), but got: 5."),
    ("InstanceNorm2d", (5, 4, 4), "expected input's size at dim=0 to match num_features (3), but got: 5."),
    ("InstanceNorm3d", (2, 3, 4), "expected 4D or 5D input (got 3D input)"),
    ("InstanceNorm3d", (2, 5, 2, 2, 2), "expected input's size at dim=1 to match num_features (3), but got: 5."),
])
def test_instance_norm_module_input_errors_change_nothing(name, shape, message):
    module = getattr(nn, name)(3, affine=True, track_running_stats=True)
    before = snapshot(module)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        module(mg.tensor(randn(shape, 0)))
    assert_unchanged(module, before)


def test_instance_norm_without_affine_only_warns_about_channels():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        out = nn.InstanceNorm1d(3)(mg.tensor(randn((2, 5, 4), 0)))
    assert out.shape == (2, 5, 4)


def test_instance_norm_functional_errors():
    x = mg.tensor(randn((2, 3, 4), 0))
    with pytest.raises(RuntimeError, match="^Expected running_mean and running_var to be defined when "
                                           "use_input_stats is false$"):
        F.instance_norm(x, use_input_stats=False)
    with pytest.raises(RuntimeError, match="^weight should contain 3 elements not 5$"):
        F.instance_norm(x, weight=mg.ones(5))
    rm, rv = mg.zeros(3), mg.ones(3)
    with pytest.raises(ValueError, match="^running_mean and running_var must either both be None or neither be None$"):
        F.instance_norm(x, rm, None)
    assert rm.detach().numpy().tolist() == [0] * 3
