"""LayerNorm: fused Function vs finite differences, its composite twin and PyTorch; properties,
edge cases (constant rows, one element, float16, large means) and errors."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import GradcheckError
from minigrad.ops.norm.layernorm import LayerNormFunction, layer_norm_composite

from .mirror import assert_mirror, check_grad, torch_or_replay, torch_or_skip
from .row_norm_helpers import (SHAPE_IDS, SHAPES, assert_module_mirror, assert_shape_errors, assert_twins_equal, case,
                               forward_backward)
from .test_norm_batch import constructor_parameters

AFFINE = ["none", "weight", "bias", "weight+bias"]


def params(w, b, affine):
    return (w if "weight" in affine else None), (b if "bias" in affine else None)


def ln_fn(impl, ns, eps):
    return lambda x, w, b: impl(x, ns, w, b, eps)


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("eps", [1e-5, 0.1, 0.0])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_gradcheck(shape, nlen, affine, eps):
    ns, x, w, b = case(shape, nlen)
    check_grad(ln_fn(F.layer_norm, ns, eps), x, *params(w, b, affine))


@pytest.mark.parametrize("eps", [1e-5, 0.1, 0.0])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_fused_equals_composite(shape, nlen, affine, eps):
    ns, x, w, b = case(shape, nlen, seed=3)
    assert_twins_equal(ln_fn(F.layer_norm, ns, eps), ln_fn(layer_norm_composite, ns, eps), [x, *params(w, b, affine)])


class LayerNormWithoutMeanTerm(LayerNormFunction):
    """A deliberately wrong backward: dx = rstd * (g - xhat * mean(g * xhat)), the -mean(g) term dropped."""

    @staticmethod
    def backward(ctx, dout):
        x, mean, rstd, _ = ctx.saved_tensors
        g = dout.detach().numpy()
        xhat = (x - mean[:, None]) * rstd[:, None]
        return (rstd[:, None] * (g - xhat * (g * xhat).mean(1, keepdims=True)),) + (None,) * 4


def test_gradcheck_rejects_a_backward_without_the_mean_term():
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert mg.gradcheck(lambda t: LayerNormFunction.apply(t, None, None, (4,), 1e-5), (x,))
    with pytest.raises(GradcheckError, match="input 0"):
        mg.gradcheck(lambda t: LayerNormWithoutMeanTerm.apply(t, None, None, (4,), 1e-5), (x,))


# ----------------------------------------------------------------------------- PyTorch mirrors
@pytest.mark.parametrize("eps", [1e-5, 0.5])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_mirror_functional(shape, nlen, affine, eps):
    torch = torch_or_replay()
    ns, x, w, b = case(shape, nlen, seed=4)
    assert_mirror(lambda x, w, b: F.layer_norm(x, ns, w, b, eps),
                  lambda x, w, b: torch.nn.functional.layer_norm(x, ns, w, b, eps), x, *params(w, b, affine))


def test_mirror_module():
    torch = torch_or_skip()
    for shape, nlen in SHAPES:
        ns, x, _, _ = case(shape, nlen, seed=7)
        for eps, affine, bias in [(1e-5, True, True), (1e-3, True, False), (0.1, False, True)]:
            assert_module_mirror(nn.LayerNorm(ns, eps, affine, bias, dtype=mg.float64),
                                 torch.nn.LayerNorm(ns, eps, affine, bias), x)


def test_module_parameters_repr_and_reset():
    torch = torch_or_skip()
    m = nn.LayerNorm([3, 4])
    assert m.weight.shape == m.bias.shape == (3, 4) and m.weight.dtype == m.bias.dtype == mg.float32
    assert (m.weight.detach().numpy() == 1).all() and (m.bias.detach().numpy() == 0).all() and m.bias.requires_grad
    assert repr(m) == repr(torch.nn.LayerNorm([3, 4]))
    for args in [(4, 1e-6, True, False), (4, 1e-5, False)]:
        assert repr(nn.LayerNorm(*args)) == repr(torch.nn.LayerNorm(*args))
    no_bias = nn.LayerNorm(4, bias=False, dtype=mg.float64)
    assert no_bias.bias is None and no_bias.weight.dtype == mg.float64 and list(no_bias.state_dict()) == ["weight"]
    none = nn.LayerNorm(4, elementwise_affine=False)
    assert none.weight is None and none.bias is None and list(none.parameters()) == []
    m.weight.data[...], m.bias.data[...] = 3.0, -2.0
    weight = m.weight
    m.reset_parameters()
    assert m.weight is weight and (m.weight._data == 1).all() and (m.bias._data == 0).all()


def test_module_constructor_signature_is_pytorchs():
    torch = torch_or_skip()
    assert constructor_parameters(nn.LayerNorm) == constructor_parameters(torch.nn.LayerNorm)
    positional = nn.LayerNorm(4, 1e-6, True, False, "cpu", mg.float64)  # (..., bias, device, dtype) as PyTorch
    assert positional.bias is None and positional.weight.dtype == mg.float64 and positional.eps == 1e-6


# ----------------------------------------------------------------------------- properties
def rows(min_d=2, bound=10.0):
    return hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(min_d, 6)),
                      elements=st.floats(-bound, bound, allow_nan=False))


def layer_norm_rows(x, eps=1e-5, w=None):
    return F.layer_norm(mg.tensor(x), x.shape[1:], None if w is None else mg.tensor(w), None, eps)._data


@given(x=rows(), shift=hnp.arrays(np.float64, st.just((1,)), elements=st.floats(-100, 100)), scale=st.floats(1e-2, 1e2))
def test_shift_and_scale_invariance(x, shift, scale):
    assume((x.std(1) > 1e-1).all())
    y = layer_norm_rows(x, eps=0.0)
    np.testing.assert_allclose(layer_norm_rows(x + shift, eps=0.0), y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(layer_norm_rows(scale * x, eps=0.0), y, rtol=1e-9, atol=1e-9)


@given(x=rows(min_d=1), eps=st.sampled_from([1e-5, 0.1]), weighted=st.booleans())
def test_input_gradient_sums_to_zero_per_row(x, eps, weighted):
    w = np.linspace(-1.5, 2.0, x.shape[1]) if weighted else None
    _, dx, *_ = forward_backward(lambda t, w: F.layer_norm(t, x.shape[1:], w, None, eps), [x, w])
    g = np.random.default_rng(1).standard_normal(x.shape)  # forward_backward's upstream gradient
    scale = np.abs(g * (1 if w is None else w)).sum(1) / np.sqrt(x.var(1) + eps)  # size of the terms of sum(dx)
    assert (np.abs(dx.sum(1)) <= 1e-12 * scale).all()


@given(x=rows(min_d=3))
def test_float32_is_within_1e_5_of_float64(x):
    """(d <= 2 is excluded: there y = +-1 whatever x is, and dx is all cancellation.)"""
    assume((x.std(1) > 1e-1).all())
    w, b = np.linspace(0.5, 1.5, x.shape[1]), np.linspace(-1, 1, x.shape[1])

    def run(dtype):
        return forward_backward(lambda t, w, b: F.layer_norm(t, x.shape[1:], w, b),
                                [x.astype(dtype), w.astype(dtype), b.astype(dtype)])
    for name, r32, r64 in zip(["forward", "dx", "dw", "db"], run(np.float32), run(np.float64)):
        assert r32.dtype == np.float32
        assert np.linalg.norm(r32 - r64) <= 1e-5 * np.linalg.norm(r64) + 1e-30, name


# ----------------------------------------------------------------------------- edge cases
# a zero row, a constant row, an ordinary row; weight and bias
CONSTANT_ROWS = (np.array([[0.0, 0, 0, 0], [2.5, 2.5, 2.5, 2.5], [1.0, -2.0, 0.5, 3.0]]),
                 np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.1, 0.2, 0.3, 0.4]))


@pytest.mark.parametrize("impl", [F.layer_norm, layer_norm_composite])
def test_constant_and_zero_rows_give_bias_and_finite_gradient(impl):
    x, w, b = CONSTANT_ROWS
    y, dx, dw, db = forward_backward(lambda t, w, b: impl(t, (4,), w, b, 1e-5), [x, w, b])
    gw = np.random.default_rng(1).standard_normal(x.shape)[:2] * w  # forward_backward's upstream gradient
    np.testing.assert_array_equal(y[:2], [b, b])  # var = 0: xhat = 0 and y = b (§4)
    np.testing.assert_allclose(dx[:2], (gw - gw.mean(1, keepdims=True)) / np.sqrt(1e-5), rtol=1e-12)  # §10
    assert np.isfinite(dw).all() and np.isfinite(db).all()


def test_constant_rows_mirror():
    torch = torch_or_replay()
    assert_mirror(lambda x, w, b: F.layer_norm(x, (4,), w, b),
                  lambda x, w, b: torch.nn.functional.layer_norm(x, (4,), w, b), *CONSTANT_ROWS)


def test_eps_zero_constant_row_is_nan_as_in_pytorch():
    torch = torch_or_replay()
    x = np.array([[1.0, -2.0, 0.5, 3.0], [2.5, 2.5, 2.5, 2.5]])
    y = assert_mirror(lambda x: F.layer_norm(x, (4,), eps=0.0),
                      lambda x: torch.nn.functional.layer_norm(x, (4,), eps=0.0), x)
    assert np.isfinite(y.detach().numpy()[0]).all() and np.isnan(y.detach().numpy()[1]).all()


def test_single_element_normalized_dims():
    torch = torch_or_replay()
    x = np.random.default_rng(5).standard_normal((3, 2, 1))
    w, b = np.array([1.5]), np.array([-0.5])
    y = assert_mirror(lambda x, w, b: F.layer_norm(x, (1,), w, b),
                      lambda x, w, b: torch.nn.functional.layer_norm(x, (1,), w, b), x, w, b)
    _, dx, dw, _ = forward_backward(lambda t, w, b: F.layer_norm(t, (1,), w, b), [x, w, b])
    assert (y.detach().numpy() == b).all() and (dx == 0).all() and (dw == 0).all()  # y = b, dx = 0 (§10)


def test_float16_input_with_large_values():
    """Forward equal to PyTorch's to 1 ulp; gradients correctly rounded from a float64 computation on the
    same data. PyTorch's fp16 gradients are a little further off (on CPU it keeps mean/rstd in fp16, §4),
    so they are compared at the scale of the largest gradient element."""
    torch = torch_or_skip()
    rng = np.random.default_rng(12)
    x = (300 + 400 * rng.standard_normal((4, 16))).astype(np.float16)
    with np.errstate(over="ignore"):
        assert np.isinf(x * x).any()  # float16 cannot hold x**2: the compute must be float32
    w, b = (1 + 0.2 * rng.standard_normal(16)).astype(np.float16), rng.standard_normal(16).astype(np.float16)
    g = rng.standard_normal((4, 16)).astype(np.float16)

    def run(lib, dtype):
        tensors = [lib.tensor(a.astype(dtype), requires_grad=True) for a in (x, w, b)]
        norm = F.layer_norm if lib is mg else torch.nn.functional.layer_norm
        y = norm(tensors[0], (16,), tensors[1], tensors[2])
        y.backward(lib.tensor(g.astype(dtype)))
        return [np.asarray(y.detach())] + [np.asarray(t.grad) for t in tensors]
    ours, exact, theirs = run(mg, np.float16), run(mg, np.float64), run(torch, np.float16)
    assert all(r.dtype == np.float16 and np.isfinite(r).all() for r in ours)
    np.testing.assert_array_max_ulp(ours[0], theirs[0], maxulp=1)
    for name, mine, ref, other in zip(["dx", "dw", "db"], ours[1:], exact[1:], theirs[1:]):
        np.testing.assert_array_max_ulp(mine, ref.astype(np.float16), maxulp=1)
        np.testing.assert_allclose(mine, other, atol=2 * np.spacing(np.abs(ref).max().astype(np.float16)), rtol=0,
                                   err_msg=name)


def test_float32_rows_with_large_mean_use_a_two_pass_variance():
    """Rows with mean 1e4 and std 1e-2: E[x^2] - E[x]^2 cancels every digit in float32 (1e8 - 1e8);
    mean((x - mean)^2) does not. The float32 mean itself is only good to ~1 ulp(1e4) ~ 1e-3 = 0.1 std,
    which shifts y by up to ~0.1: that, not the variance, sets the tolerance on y."""
    x = (1e4 + 1e-2 * np.random.default_rng(14).standard_normal((8, 64))).astype(np.float32)
    y = F.layer_norm(mg.tensor(x), (64,)).detach().numpy()
    x64 = x.astype(np.float64)
    xc = x64 - x64.mean(1, keepdims=True)
    var = (xc ** 2).mean(1, keepdims=True)
    expected = xc / np.sqrt(var + 1e-5)
    assert np.abs(y - expected).max() <= 2 * np.spacing(np.float32(1e4)) / np.sqrt(var.min() + 1e-5)
    np.testing.assert_allclose(y.std(1), expected.std(1), rtol=1e-2)  # the variance is right to 1%
    naive_var = (x * x).mean(1) - x.mean(1) ** 2  # what the test rules out
    assert not np.allclose(naive_var, var.ravel(), rtol=0.5)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("impl", [F.layer_norm, layer_norm_composite])
def test_errors_use_pytorchs_wording(impl):
    assert_shape_errors(impl)
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\)"):
        impl(mg.randn(2, 4), [4], mg.ones(4, dtype=mg.float64))


def test_float16_input_accepts_float32_parameters_as_pytorch_does():
    x = mg.randn(2, 4).half()
    assert F.layer_norm(x, (4,), mg.ones(4), mg.zeros(4)).dtype == mg.float16


def test_module_error_leaves_parameters_untouched():
    m = nn.LayerNorm((2, 3))
    before = [p.detach().numpy().copy() for p in m.parameters()]
    x = mg.randn(4, 3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 2, 3\]"):
        m(x)
    assert all((p._data == b).all() and p.grad is None for p, b in zip(m.parameters(), before)) and x.grad is None
