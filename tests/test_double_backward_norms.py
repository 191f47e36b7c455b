"""Double (and triple) backward of the centered norms: LayerNorm, BatchNorm (training and eval), InstanceNorm
and GroupNorm, whose fused Functions differentiate their backward with the hand-derived formulas of
``minigrad.ops.norm.common.centered_dx_grads``.

Each case of the table runs (1) against autograd through its composite twin (every second-order gradient,
to 1e-12), (2) under ``gradgradcheck``, (3) against PyTorch's double backward and (4) against PyTorch's
third derivative; (5) a deliberately wrong double backward is caught by the checks.

PyTorch 2.13 (CPU) is not a usable oracle everywhere: the third derivatives of its fused layer_norm,
batch_norm (training) and instance_norm fail its own gradgradcheck (test_pytorch_fused_third_derivatives_
are_wrong documents it), and its layer_norm with a bias but no weight raises in double backward. There
the oracle is autograd through the same formulas written with torch ops (``TORCH_COMPOSITES``), and
finite differences check our third derivatives independently (test_third_derivative_gradgradcheck).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.ops.norm.common as norm_common
from minigrad.autograd import GradcheckError
from minigrad.ops.norm import (
    batch_norm_composite,
    group_norm_composite,
    instance_norm_composite,
    layer_norm_composite,
)
from minigrad.ops.norm.batchnorm import BatchNormBackward, BatchNormFunction
from minigrad.ops.norm.groupnorm import GroupNormBackward
from minigrad.ops.norm.layernorm import LayerNormBackward

from minigrad.ops.norm.registry import NORMS

from .mirror import _second_order, assert_double_mirror, check_gradgrad, torch_or_skip
from .norm_kit import check_second_order, check_torch

RUNNING_MEAN, RUNNING_VAR = np.array([0.3, -0.2, 0.1]), np.array([0.8, 1.3, 0.6])

COMPOSITES = {"layer_norm": layer_norm_composite, "batch_norm": batch_norm_composite,
              "instance_norm": instance_norm_composite, "group_norm": group_norm_composite}


def running(lib):
    return lib.tensor(RUNNING_MEAN), lib.tensor(RUNNING_VAR)


# ----------------------------------------------------------------------------- the norms written with torch ops
def torch_normalized(x, dims, eps):
    xc = x - x.mean(dims, keepdim=True)
    return xc * ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()


def torch_affine(y, weight, bias, shape):
    """y * weight + bias with the parameters reshaped to ``shape`` (either may be None)."""
    y = y if weight is None else y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)


def torch_layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return torch_affine(torch_normalized(x, tuple(range(-len(normalized_shape), 0)), eps), weight, bias,
                        normalized_shape)


def torch_batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    channel = (-1,) + (1,) * (x.ndim - 2)
    if training:
        y = torch_normalized(x, (0,) + tuple(range(2, x.ndim)), eps)
    else:
        y = (x - running_mean.reshape(channel)) * (running_var.reshape(channel) + eps).rsqrt()
    return torch_affine(y, weight, bias, channel)


def torch_instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                        momentum=0.1, eps=1e-5):
    if not use_input_stats:
        return torch_batch_norm(x, running_mean, running_var, weight, bias, False, momentum, eps)
    return torch_affine(torch_normalized(x, tuple(range(2, x.ndim)), eps), weight, bias, (-1,) + (1,) * (x.ndim - 2))


TORCH_COMPOSITES = {"layer_norm": torch_layer_norm, "batch_norm": torch_batch_norm,
                    "instance_norm": torch_instance_norm}


# (id, functional name, call(fn, lib, *tensors), shapes of the tensors, the Function computing dx or None)
CASES = [
    ("layer_norm-affine-2d-shape", "layer_norm", lambda f, lib, x, w, b: f(x, (2, 4), w, b),
     [(3, 2, 4), (2, 4), (2, 4)], LayerNormBackward),
    ("layer_norm-plain", "layer_norm", lambda f, lib, x: f(x, (5,)), [(3, 5)], LayerNormBackward),
    ("layer_norm-weight-only", "layer_norm", lambda f, lib, x, w: f(x, (4,), w), [(2, 3, 4), (4,)],
     LayerNormBackward),
    ("layer_norm-bias-only-eps", "layer_norm", lambda f, lib, x, b: f(x, (3,), None, b, 0.3), [(4, 3), (3,)],
     LayerNormBackward),
    ("batch_norm1d-train-affine", "batch_norm", lambda f, lib, x, w, b: f(x, None, None, w, b, True),
     [(4, 3), (3,), (3,)], BatchNormBackward),
    ("batch_norm1d-train-plain", "batch_norm", lambda f, lib, x: f(x, None, None, None, None, True), [(3, 2, 4)],
     BatchNormBackward),
    ("batch_norm2d-train-affine", "batch_norm", lambda f, lib, x, w, b: f(x, None, None, w, b, True),
     [(2, 3, 2, 2), (3,), (3,)], BatchNormBackward),
    ("batch_norm2d-eval-affine", "batch_norm", lambda f, lib, x, w, b: f(x, *running(lib), w, b, False),
     [(2, 3, 2, 2), (3,), (3,)], None),
    ("batch_norm1d-eval-plain", "batch_norm", lambda f, lib, x: f(x, *running(lib), None, None, False), [(4, 3)],
     None),
    ("instance_norm-affine", "instance_norm", lambda f, lib, x, w, b: f(x, None, None, w, b),
     [(2, 3, 4), (3,), (3,)], GroupNormBackward),
    ("instance_norm2d-plain", "instance_norm", lambda f, lib, x: f(x), [(2, 3, 2, 3)], GroupNormBackward),
    ("instance_norm-running-stats", "instance_norm",
     lambda f, lib, x, w: f(x, *running(lib), w, None, use_input_stats=False), [(2, 3, 4), (3,)], None),
    ("group_norm-G1", "group_norm", lambda f, lib, x, w, b: f(x, 1, w, b), [(2, 4, 3), (4,), (4,)],
     GroupNormBackward),
    ("group_norm-G2", "group_norm", lambda f, lib, x, w, b: f(x, 2, w, b), [(2, 4, 3), (4,), (4,)],
     GroupNormBackward),
    ("group_norm-G4", "group_norm", lambda f, lib, x, w, b: f(x, 4, w, b), [(2, 4, 3), (4,), (4,)],
     GroupNormBackward),
    ("group_norm2d-G2-plain", "group_norm", lambda f, lib, x: f(x, 2), [(2, 4, 2, 2)], GroupNormBackward),
]
IDS = [c[0] for c in CASES]


def arrays_of(shapes, seed):
    """Random float64 inputs: x standard normal, parameters away from zero."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) if i == 0 else 1 + 0.5 * rng.standard_normal(s) for i, s in enumerate(shapes)]


def forms(name, call, torch_composite=False):
    """(fused minigrad, composite twin, PyTorch) forms of one case, each taking the tensors positionally;
    PyTorch's is written with torch ops (``TORCH_COMPOSITES``) if ``torch_composite`` (and there is one)."""
    torch = torch_or_skip()
    torch_fn = TORCH_COMPOSITES.get(name) if torch_composite else None
    torch_fn = torch_fn or getattr(torch.nn.functional, name)
    return (lambda *t: call(getattr(mg.nn.functional, name), mg, *t),
            lambda *t: call(COMPOSITES[name], mg, *t),
            lambda *t: call(torch_fn, torch, *t))


def second_order_values(fn, arrays, u, directions):
    """First gradients (create_graph=True) and the gradients of <g, v> + |g|^2/2 w.r.t. the inputs and u."""
    inputs = [mg.tensor(a, requires_grad=True) for a in arrays]
    _, first, second = _second_order(mg, fn, inputs, mg.tensor(u, requires_grad=True),
                                     [mg.tensor(v) for v in directions])
    likes = list(arrays) + [u]
    return [np.zeros(like.shape) if g is None else g.detach().numpy() for g, like in zip(list(first) + list(second),
                                                                                         likes[:-1] + likes)]


def assert_close_to_scale(ours, reference, tol=1e-12, what=""):
    """Agreement to ``tol`` relative to the reference's scale (its largest magnitude, at least 1)."""
    np.testing.assert_allclose(ours, reference, rtol=tol, atol=tol * max(1.0, np.abs(reference).max()), err_msg=what)


# ----------------------------------------------------------------------------- (1) fused == composite
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_double_backward_equals_autograd_through_the_composite(case):
    _, name, call, shapes, _ = case
    fused, composite, _ = forms(name, call)
    arrays = arrays_of(shapes, seed=1)
    rng = np.random.default_rng(2)
    u = rng.standard_normal(shapes[0])
    directions = [rng.standard_normal(s) for s in shapes]
    ours, reference = (second_order_values(f, arrays, u, directions) for f in (fused, composite))
    labels = [f"first gradient {i}" for i in range(len(shapes))] + \
             [f"second-order gradient {i}" for i in range(len(shapes))] + ["second-order gradient of the upstream"]
    for a, b, label in zip(ours, reference, labels):
        assert_close_to_scale(a, b, what=label)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_create_graph_runs_the_fused_backward_function(case):
    """The first gradient of x is the output of the norm's fused backward Function (not a composite graph),
    so the checks of this file test the hand-derived double backward."""
    _, name, call, shapes, backward_function = case
    fused, _, _ = forms(name, call)
    inputs = [mg.tensor(a, requires_grad=True) for a in arrays_of(shapes, seed=3)]
    out = fused(*inputs)
    (gx,) = mg.autograd.grad(out, inputs[0], mg.tensor(np.random.default_rng(4).standard_normal(out.shape)),
                             create_graph=True)
    if backward_function is not None:                # (eval: dx = u * w * rstd needs no Function of its own)
        assert gx.requires_grad and gx.grad_fn.fn is backward_function


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 3), groups_and_c=st.sampled_from([(1, 2), (2, 4), (3, 6), (6, 6)]), s=st.integers(1, 4),
       eps=st.sampled_from([1e-5, 0.1, 1.0]), seed=st.integers(0, 2 ** 16))
def test_group_norm_double_backward_sweep(n, groups_and_c, s, eps, seed):
    groups, c = groups_and_c
    if n * c // groups * s == 1:
        return                                      # PyTorch rejects a single value per group
    shapes = [(n, c, s), (c,), (c,)]
    arrays = arrays_of(shapes, seed)
    rng = np.random.default_rng(seed + 1)
    u = rng.standard_normal(shapes[0])
    directions = [rng.standard_normal(sh) for sh in shapes]
    ours = second_order_values(lambda x, w, b: mg.nn.functional.group_norm(x, groups, w, b, eps), arrays, u,
                               directions)
    reference = second_order_values(lambda x, w, b: group_norm_composite(x, groups, w, b, eps), arrays, u,
                                    directions)
    for a, b in zip(ours, reference):
        assert_close_to_scale(a, b, tol=1e-11)


# ----------------------------------------------------------------------------- (2) gradgradcheck
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradgradcheck(case):
    _, name, call, shapes, _ = case
    fused, _, _ = forms(name, call)
    check_gradgrad(fused, *arrays_of(shapes, seed=5))


# ----------------------------------------------------------------------------- (3) PyTorch's double backward
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_double_backward_mirrors_pytorch(case):
    _, name, call, shapes, _ = case
    fused, _, torch_form = forms(name, call, torch_composite=case[0] == "layer_norm-bias-only-eps")  # PyTorch raises
    assert_double_mirror(fused, torch_form, *arrays_of(shapes, seed=6))


# ----------------------------------------------------------------------------- (4) PyTorch's third derivative
def third_order(lib, fn, arrays, u, v1, v2):
    """Three nested gradients: g1 = d<u, fn>/d inputs, g2 = d(<g1, v1> + |g1|^2/2)/d(inputs, u),
    g3 = d(<g2, v2> + sum(g2^3)/3)/d(inputs, u), the first two with create_graph=True. Returns g3."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    up = lib.tensor(u, requires_grad=True)
    wrt = inputs + [up]
    g1 = lib.autograd.grad(fn(*inputs), inputs, up, create_graph=True, allow_unused=True)
    s1 = sum((g * lib.tensor(v)).sum() + (g * g).sum() / 2 for g, v in zip(g1, v1) if g is not None)
    g2 = lib.autograd.grad(s1, wrt, create_graph=True, allow_unused=True)
    s2 = sum((g * lib.tensor(v)).sum() + (g * g * g).sum() / 3 for g, v in zip(g2, v2) if g is not None)
    g3 = lib.autograd.grad(s2, wrt, allow_unused=True)
    return [np.zeros(t.shape) if g is None else g.detach().numpy() for g, t in zip(g3, wrt)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_third_derivative_mirrors_pytorch(case):
    torch = torch_or_skip()
    _, name, call, shapes, _ = case
    fused, _, torch_form = forms(name, call, torch_composite=True)
    arrays = arrays_of(shapes, seed=7)
    rng = np.random.default_rng(8)
    u = rng.standard_normal(shapes[0])
    v1 = [rng.standard_normal(s) for s in shapes]
    v2 = [rng.standard_normal(s) for s in shapes + [shapes[0]]]
    ours = third_order(mg, fused, arrays, u, v1, v2)
    theirs = third_order(torch, torch_form, arrays, u, v1, v2)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert_close_to_scale(a, b, tol=1e-10, what=f"third-order gradient {i}")


THIRD_ORDER_CASES = [CASES[0], CASES[4], CASES[9], CASES[13]]     # one per norm: Layer, Batch, Instance, Group


def first_gradient(fn):
    """(inputs..., u) -> d<u, fn(inputs)>/d inputs[0] with create_graph=True: its gradgradcheck is a finite-
    difference check of fn's third derivative."""
    def gradient(*tensors):
        *inputs, u = tensors
        return mg.autograd.grad(fn(*inputs), inputs[0], u, create_graph=True)[0]
    return gradient


@pytest.mark.parametrize("case", THIRD_ORDER_CASES, ids=[c[0] for c in THIRD_ORDER_CASES])
def test_third_derivative_gradgradcheck(case):
    _, name, call, shapes, _ = case
    fused, _, _ = forms(name, call)
    arrays = arrays_of(shapes, seed=14)
    check_gradgrad(first_gradient(fused), *arrays, np.random.default_rng(15).standard_normal(shapes[0]))


@pytest.mark.parametrize("name, call", [("layer_norm", lambda f, x: f(x, (5,))),
                                        ("batch_norm", lambda f, x: f(x, None, None, training=True)),
                                        ("instance_norm", lambda f, x: f(x.reshape(3, 1, 5)).reshape(3, 5))])
def test_pytorch_fused_third_derivatives_are_wrong(name, call):
    """Why test (4) compares with torch-op composites: PyTorch's own finite-difference check rejects the third
    derivative of its fused form, and accepts the composite's. If this starts failing, PyTorch has been fixed
    and test (4) can use torch.nn.functional directly."""
    torch = torch_or_skip()
    rng = np.random.default_rng(16)
    x, u = (torch.tensor(rng.standard_normal((3, 5)), requires_grad=True) for _ in range(2))

    def first(fn):
        return lambda x, u: torch.autograd.grad(call(fn, x), x, u, create_graph=True)[0]
    assert torch.autograd.gradgradcheck(first(TORCH_COMPOSITES[name]), (x, u))
    assert not torch.autograd.gradgradcheck(first(getattr(torch.nn.functional, name)), (x, u), raise_exception=False)


# ----------------------------------------------------------------------------- (5) a wrong double backward is caught
def dx_grads_with_a_wrong_term(G, gw, xhat, rstd, mean):
    """``centered_dx_grads`` with the x gradient's last term using 2 a m where the derivation gives 3 a m."""
    d_gw, d_x = CORRECT_DX_GRADS(G, gw, xhat, rstd, mean)
    return d_gw, d_x - rstd * rstd * xhat * mean(G * xhat) * mean(gw * xhat)


CORRECT_DX_GRADS = norm_common.centered_dx_grads


def doubled_dout_gradient(ctx, G):
    """A backward of the fused dx Function whose gradient with respect to the upstream gradient is 2x too large."""
    d_dout, d_x, d_w = CORRECT_BACKWARD(ctx, G)
    return 2 * d_dout, d_x, d_w


CORRECT_BACKWARD = LayerNormBackward.backward

WRONG_CASES = [CASES[0], CASES[4], CASES[13]]          # LayerNorm, BatchNorm1d in training, GroupNorm


@pytest.mark.parametrize("case", WRONG_CASES, ids=[c[0] for c in WRONG_CASES])
def test_a_wrong_term_in_the_double_backward_is_caught(case, monkeypatch):
    _, name, call, shapes, _ = case
    fused, _, torch_form = forms(name, call)
    arrays = arrays_of(shapes, seed=9)
    check_gradgrad(fused, *arrays)                  # the correct formulas pass both checks ...
    assert_double_mirror(fused, torch_form, *arrays)
    monkeypatch.setattr(norm_common, "centered_dx_grads", dx_grads_with_a_wrong_term)
    with pytest.raises(GradcheckError):             # ... the wrong one fails both
        check_gradgrad(fused, *arrays)
    with pytest.raises(AssertionError, match="second-order gradient 0"):
        assert_double_mirror(fused, torch_form, *arrays)


def test_a_wrong_fused_backward_is_caught(monkeypatch):
    _, name, call, shapes, _ = CASES[0]
    fused, _, torch_form = forms(name, call)
    arrays = arrays_of(shapes, seed=10)
    monkeypatch.setattr(LayerNormBackward, "backward", staticmethod(doubled_dout_gradient))
    with pytest.raises(GradcheckError):
        check_gradgrad(fused, *arrays)
    with pytest.raises(AssertionError, match="upstream gradient"):
        assert_double_mirror(fused, torch_form, *arrays)


# ----------------------------------------------------------------------------- dtypes and direct calls
LOW_PRECISION_CASES = [(lambda x, w, b: mg.nn.functional.layer_norm(x, (4, 2), w, b), [(3, 4, 2), (4, 2), (4, 2)]),
                       (lambda x, w, b: mg.nn.functional.group_norm(x, 2, w, b), [(3, 4, 2), (4,), (4,)]),
                       (lambda x, w, b: mg.nn.functional.batch_norm(x, None, None, w, b, True), [(3, 4, 2), (4,), (4,)])]


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-4), (np.float16, 5e-2)])
@pytest.mark.parametrize("norm, shapes", LOW_PRECISION_CASES, ids=["layer_norm", "group_norm", "batch_norm"])
def test_lower_precision_double_backward_is_computed_in_the_compute_dtype(dtype, tol, norm, shapes):
    """float32 and float16 inputs: second-order gradients of the input's dtype, close to the float64 ones."""
    arrays = arrays_of(shapes, seed=11)
    rng = np.random.default_rng(12)
    u = rng.standard_normal(shapes[0])
    directions = [rng.standard_normal(s) for s in shapes]
    exact = second_order_values(norm, arrays, u, directions)
    inputs = [mg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    up = mg.tensor(u.astype(dtype), requires_grad=True)
    _, first, second = _second_order(mg, norm, inputs, up, [mg.tensor(v.astype(dtype)) for v in directions])
    for g, e in zip(list(first) + list(second), exact):
        if g is None:                                # (the bias's second-order gradient: db = u depends on nothing)
            assert not e.any()
            continue
        assert g.dtype == dtype
        np.testing.assert_allclose(g.detach().numpy().astype(np.float64), e, rtol=tol, atol=tol * np.abs(e).max())


def test_batch_norm_function_without_eps_refuses_create_graph_in_training():
    x = mg.tensor(np.random.default_rng(13).standard_normal((4, 3)), requires_grad=True)
    mean, var = x.detach().numpy().mean(0), x.detach().numpy().var(0)
    y = BatchNormFunction.apply(x, None, None, mean, 1 / np.sqrt(var + 1e-5), True)
    with pytest.raises(ValueError, match="eps"):
        mg.autograd.grad(y, x, mg.ones_like(y), create_graph=True)


# ----------------------------------------------------------------------------- (6) every norm of the registry
REGISTERED = [pytest.param(spec, id=spec.name) for spec in NORMS]


@pytest.mark.parametrize("spec", REGISTERED)
def test_every_registered_norm_second_order_equals_autograd_through_its_composite(spec):
    """The registry's small case of each norm (minigrad/ops/norm/registry.py): second-order gradients against
    autograd through the composite twin (1e-12), and gradgradcheck (tests/norm_kit.py)."""
    check_second_order(spec)


@pytest.mark.parametrize("spec", REGISTERED)
def test_every_registered_norm_double_backward_mirrors_pytorch(spec):
    check_torch(spec)
