"""RMSNorm: fused Function vs finite differences, its composite twin and PyTorch; the variants
(bias, eps outside the sqrt, partial RMSNorm); properties, edge cases and errors."""
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import GradcheckError
from minigrad.ops.norm.rmsnorm import RMSNormFunction, rms_norm_composite

from .mirror import assert_mirror, check_grad, torch_or_replay, torch_or_skip
from .row_norm_helpers import SHAPE_IDS, SHAPES, assert_module_mirror, assert_twins_equal, case, forward_backward
from .test_norm_batch import assert_raises_like_torch, constructor_parameters

VARIANTS = {
    "plain": {},
    "eps-outside": dict(eps_inside_sqrt=False),
    "partial": dict(partial=0.5),
    "partial-eps-outside": dict(partial=0.34, eps_inside_sqrt=False),
}
AFFINE = ["none", "weight", "weight+bias"]


def rms_fn(impl, ns, eps, variant):
    """(x, weight, bias) -> impl(x, ns, weight, eps, bias=bias, **variant)."""
    return lambda x, w, b: impl(x, ns, w, eps, bias=b, **VARIANTS[variant])


def params(w, b, affine):
    return (w if affine != "none" else None), (b if affine == "weight+bias" else None)


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("eps", [1e-5, 0.1, 0.0])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_gradcheck(shape, nlen, variant, affine, eps):
    ns, x, w, b = case(shape, nlen)
    check_grad(rms_fn(F.rms_norm, ns, eps, variant), x, *params(w, b, affine))


@pytest.mark.parametrize("eps", [1e-5, 0.1, 0.0, None])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_fused_equals_composite(shape, nlen, variant, affine, eps):
    ns, x, w, b = case(shape, nlen, seed=3)
    assert_twins_equal(rms_fn(F.rms_norm, ns, eps, variant), rms_fn(rms_norm_composite, ns, eps, variant),
                       [x, *params(w, b, affine)])


class RMSNormWithoutProjection(RMSNormFunction):
    """A deliberately wrong backward: dx = rstd * g, the -xhat * mean(g * xhat) term dropped."""

    @staticmethod
    def backward(ctx, dout):
        x, rstd, _ = ctx.saved_tensors
        return (dout.detach().numpy() * rstd[:, None],) + (None,) * 6


def test_gradcheck_rejects_a_backward_without_the_projection_term():
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert mg.gradcheck(lambda t: RMSNormFunction.apply(t, None, None, (4,), 1e-5, 4, False), (x,))
    with pytest.raises(GradcheckError, match="input 0"):
        mg.gradcheck(lambda t: RMSNormWithoutProjection.apply(t, None, None, (4,), 1e-5, 4, False), (x,))


# ----------------------------------------------------------------------------- PyTorch mirrors
@pytest.mark.parametrize("eps", [None, 1e-6, 0.5])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_mirror_functional(shape, nlen, weighted, eps):
    torch = torch_or_replay()
    ns, x, w, _ = case(shape, nlen, seed=4)
    assert_mirror(lambda x, w: F.rms_norm(x, ns, w, eps), lambda x, w: torch.nn.functional.rms_norm(x, ns, w, eps),
                  x, w if weighted else None)


def torch_rms_variant(torch, x, ns, w, b, eps, eps_inside_sqrt=True, partial=None):
    """The variants written directly in PyTorch (it has no op for them): RMS from the first k elements."""
    d = math.prod(ns)
    k = d if partial is None else math.ceil(partial * d)
    rows = x.reshape(*x.shape[:x.dim() - len(ns)], d)
    ms = rows[..., :k].pow(2).mean(-1, keepdim=True)
    rstd = torch.rsqrt(ms + eps) if eps_inside_sqrt else 1 / (ms.sqrt() + eps)
    y = (rows * rstd).reshape(x.shape)
    y = y * w if w is not None else y
    return y + b if b is not None else y


@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("variant", ["eps-outside", "partial", "partial-eps-outside"])
@pytest.mark.parametrize("shape,nlen", SHAPES, ids=SHAPE_IDS)
def test_mirror_variants_against_a_torch_composite(shape, nlen, variant, affine):
    torch = torch_or_replay()
    ns, x, w, b = case(shape, nlen, seed=5)
    opts = VARIANTS[variant]
    assert_mirror(lambda x, w, b: F.rms_norm(x, ns, w, 1e-3, bias=b, **opts),
                  lambda x, w, b: torch_rms_variant(torch, x, ns, w, b, 1e-3, **opts), x, *params(w, b, affine))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eps_none_is_the_epsilon_of_the_compute_dtype(dtype):
    torch = torch_or_skip()
    x = (1e-4 * np.random.default_rng(6).standard_normal((3, 8))).astype(dtype)  # mean(x^2) ~ 1e-8
    y = F.rms_norm(mg.tensor(x), (8,)).detach().numpy()
    expected = torch.nn.functional.rms_norm(torch.tensor(x), (8,)).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-6 if dtype == np.float32 else 1e-12)
    # eps matters for these rows: float32's epsilon (1.2e-7) would visibly change a float64 result
    other = F.rms_norm(mg.tensor(x), (8,), eps=float(np.finfo(np.float32 if dtype == np.float64 else np.float64).eps))
    assert np.abs(other.detach().numpy() - y).max() > 1e-3


def test_mirror_module():
    torch = torch_or_skip()
    for shape, nlen in SHAPES:
        ns, x, _, _ = case(shape, nlen, seed=7)
        for eps, affine in [(None, True), (1e-6, False), (0.1, True)]:
            assert_module_mirror(nn.RMSNorm(ns, eps, affine, dtype=mg.float64), torch.nn.RMSNorm(ns, eps, affine), x)


@pytest.mark.parametrize("variant", VARIANTS)
def test_module_with_variants_is_the_functional_form_with_its_parameters(variant):
    ns, x, w, b = case((2, 3, 4), 2, seed=8)
    m = nn.RMSNorm(ns, 1e-4, bias=True, dtype=mg.float64, **VARIANTS[variant])
    m.weight.data[...], m.bias.data[...] = w, b
    xm = mg.tensor(x, requires_grad=True)
    y = m(xm)
    g = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(mg.tensor(g))
    expected = forward_backward(rms_fn(F.rms_norm, ns, 1e-4, variant), [x, w, b])
    for got, exp in zip([y.detach().numpy(), xm.grad.numpy(), m.weight.grad.numpy(), m.bias.grad.numpy()], expected):
        np.testing.assert_array_equal(got, exp)


def test_module_parameters_repr_and_reset():
    torch = torch_or_skip()
    m = nn.RMSNorm([3, 4])
    assert m.weight.shape == (3, 4) and m.weight.dtype == mg.float32 and m.bias is None
    assert (m.weight.detach().numpy() == 1).all() and m.weight.requires_grad
    assert repr(m) == repr(torch.nn.RMSNorm([3, 4])) == "RMSNorm((3, 4), eps=None, elementwise_affine=True)"
    assert repr(nn.RMSNorm(4, 1e-6, False)) == repr(torch.nn.RMSNorm(4, 1e-6, False))
    assert nn.RMSNorm(4, elementwise_affine=False).weight is None
    assert list(nn.RMSNorm(4, elementwise_affine=False).state_dict()) == []
    extras = nn.RMSNorm(4, bias=True, eps_inside_sqrt=False, partial=0.5, dtype=mg.float64)
    assert extras.bias.shape == (4,) and extras.bias.dtype == mg.float64 and (extras.bias.detach().numpy() == 0).all()
    assert list(extras.state_dict()) == ["weight", "bias"]
    assert repr(extras) == ("RMSNorm((4,), eps=None, elementwise_affine=True, bias=True, eps_inside_sqrt=False, "
                            "partial=0.5)")
    extras.weight.data[...], extras.bias.data[...] = 3.0, -2.0
    extras.reset_parameters()
    assert (extras.weight.detach().numpy() == 1).all() and (extras.bias.detach().numpy() == 0).all()


def test_module_constructor_signature_is_pytorchs_plus_keyword_only_variants():
    torch = torch_or_skip()
    variants = ("bias", "eps_inside_sqrt", "partial", "casting")
    assert constructor_parameters(nn.RMSNorm, variants) == constructor_parameters(torch.nn.RMSNorm)
    positional = nn.RMSNorm(4, 1e-6, True, "cpu", mg.float64)  # (..., elementwise_affine, device, dtype)
    assert positional.weight.dtype == mg.float64 and positional.eps == 1e-6 and positional.bias is None


# ----------------------------------------------------------------------------- properties
VARIANT_NAMES = st.sampled_from(["plain", "eps-outside", "partial"])


def rows(min_d=1, max_d=6, bound=100.0):
    return hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(min_d, max_d)),
                      elements=st.floats(-bound, bound, allow_nan=False))


def rms_subset(x, variant):
    k = math.ceil(0.5 * x.shape[1]) if variant == "partial" else x.shape[1]
    return np.sqrt((x[:, :k] ** 2).mean(1))


@given(x=rows(), a=st.floats(1e-3, 1e3), variant=VARIANT_NAMES)
def test_scale_invariance(x, a, variant):
    assume((rms_subset(x, variant) > 1e-3).all())
    y = F.rms_norm(mg.tensor(x), x.shape[1:], eps=0.0, **VARIANTS[variant]).detach().numpy()
    ya = F.rms_norm(mg.tensor(a * x), x.shape[1:], eps=0.0, **VARIANTS[variant]).detach().numpy()
    np.testing.assert_allclose(ya, y, rtol=1e-10, atol=1e-12)


@given(x=rows(), variant=VARIANT_NAMES)
def test_input_gradient_is_orthogonal_to_each_row_without_weight(x, variant):
    assume((rms_subset(x, variant) > 1e-3).all())
    _, dx = forward_backward(lambda t: F.rms_norm(t, x.shape[1:], eps=0.0, **VARIANTS[variant]), [x])
    g = np.random.default_rng(1).standard_normal(x.shape)  # forward_backward's upstream gradient
    scale = (np.abs(x) * np.abs(g)).sum(1) / rms_subset(x, variant)  # size of the terms of x . dx
    assert (np.abs((x * dx).sum(1)) <= 1e-12 * scale).all()


@given(x=rows(min_d=2, bound=10.0), variant=VARIANT_NAMES)
def test_float32_is_within_1e_5_of_float64(x, variant):
    """(d = 1 is excluded: there dx = g w eps / (x^2 + eps)^1.5 is all cancellation, see the edge cases.)"""
    assume((rms_subset(x, variant) > 1e-1).all())
    w = np.linspace(0.5, 1.5, x.shape[1])

    def run(dtype):
        return forward_backward(lambda t, w: F.rms_norm(t, x.shape[1:], w, 1e-5, **VARIANTS[variant]),
                                [x.astype(dtype), w.astype(dtype)])
    for name, r32, r64 in zip(["forward", "dx", "dw"], run(np.float32), run(np.float64)):
        assert r32.dtype == np.float32
        assert np.linalg.norm(r32 - r64) <= 1e-5 * np.linalg.norm(r64) + 1e-30, name


# ----------------------------------------------------------------------------- edge cases
def test_seed_example():
    y = F.rms_norm(mg.tensor([[1.0, 2, 3, 4], [-1, -2, -3, -4]]), (4,), eps=0)
    expected = np.array([0.3651, 0.7303, 1.0954, 1.4606])
    np.testing.assert_allclose(y.detach().numpy(), np.stack([expected, -expected]), atol=1e-4)


@pytest.mark.parametrize("impl", [F.rms_norm, rms_norm_composite])
def test_all_zero_row_gives_zero_output_and_finite_gradient(impl):
    x = np.random.default_rng(9).standard_normal((3, 4))
    x[1] = 0
    w = np.array([0.5, 1.0, 2.0, -1.0])
    y, dx, dw = forward_backward(lambda t, w: impl(t, (4,), w, 1e-6), [x, w])
    g = np.random.default_rng(1).standard_normal((3, 4))  # forward_backward's upstream gradient
    assert (y[1] == 0).all()
    np.testing.assert_allclose(dx[1], g[1] * w / np.sqrt(1e-6), rtol=1e-12)  # dx = rstd * g * w (§10)
    assert np.isfinite(dx).all() and np.isfinite(dw).all()


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the composite's sqrt backward at 0
@pytest.mark.parametrize("impl", [F.rms_norm, rms_norm_composite])
def test_eps_outside_sqrt_at_a_zero_row_has_nan_gradient(impl):
    """d sqrt(m)/dm is infinite at m = 0, so the eps-outside variant's gradient is NaN there (§9)."""
    x = np.random.default_rng(10).standard_normal((2, 4))
    x[0] = 0
    y, dx = forward_backward(lambda t: impl(t, (4,), eps=1e-8, eps_inside_sqrt=False), [x])
    assert (y[0] == 0).all() and np.isnan(dx[0]).all() and np.isfinite(dx[1]).all()


def test_eps_zero_zero_row_is_nan_as_in_pytorch():
    torch = torch_or_replay()
    x = np.random.default_rng(11).standard_normal((3, 4))
    x[2] = 0
    y = assert_mirror(lambda x: F.rms_norm(x, (4,), eps=0.0), lambda x: torch.nn.functional.rms_norm(x, (4,), eps=0.0),
                      x)
    assert np.isnan(y.detach().numpy()[2]).all() and np.isfinite(y.detach().numpy()[:2]).all()


@pytest.mark.parametrize("eps", [1e-6, 0.0])
def test_constant_rows_mirror(eps):
    torch = torch_or_replay()
    x = np.array([[2.0, 2, 2, 2], [-0.5, -0.5, -0.5, -0.5], [1e-3, 1e-3, 1e-3, 1e-3]])
    w = np.array([1.0, -2.0, 0.5, 3.0])
    assert_mirror(lambda x, w: F.rms_norm(x, (4,), w, eps), lambda x, w: torch.nn.functional.rms_norm(x, (4,), w, eps),
                  x, w)


@pytest.mark.parametrize("case", ["no_grad", "nothing-requires-grad"])
def test_forward_without_a_graph_keeps_no_copy_of_x(case):
    """With no graph to record, the forward saves nothing for a backward: no copy of x (one copy is 8 MB here; the
    output's memory is reused from the first call), and the output is the same."""
    import tracemalloc
    rng = np.random.default_rng(12)
    x_np = rng.standard_normal((2048, 1024), dtype=np.float32)
    x = mg.tensor(x_np, requires_grad=case == "no_grad")
    w = mg.tensor(rng.standard_normal(1024, dtype=np.float32), requires_grad=case == "no_grad")
    with mg.no_grad() if case == "no_grad" else mg.enable_grad():
        expected = F.rms_norm(x, (1024,), w).numpy().copy()          # also warms the kernels and their output memory
        tracemalloc.start()
        try:
            y = F.rms_norm(x, (1024,), w)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < x_np.nbytes // 2, f"{peak / 2**20:.1f} MiB allocated by a forward that keeps nothing"
    assert y.grad_fn is None
    np.testing.assert_array_equal(y.numpy(), expected)                # the same kernel on the same x: exact


def test_single_element_rows():
    torch = torch_or_replay()
    x = np.array([[2.0], [-3.0], [1e-4]])
    w = np.array([1.5])
    assert_mirror(lambda x, w: F.rms_norm(x, (1,), w, 1e-6),
                  lambda x, w: torch.nn.functional.rms_norm(x, (1,), w, 1e-6), x, w)
    _, dx, _ = forward_backward(lambda t, w: F.rms_norm(t, (1,), w, 1e-6), [x, w])
    g = np.random.default_rng(1).standard_normal((3, 1))
    # §10; dx = rstd g w (1 - xhat^2) loses log10(x^2/eps) digits to cancellation, hence rtol 1e-6
    np.testing.assert_allclose(dx, g * w * 1e-6 / (x ** 2 + 1e-6) ** 1.5, rtol=1e-6)


@pytest.mark.parametrize("variant", ["plain", "partial"])
def test_float16_input_with_large_values_matches_pytorch(variant):
    torch = torch_or_skip()
    rng = np.random.default_rng(12)
    x = (400 * rng.standard_normal((4, 16))).astype(np.float16)
    with np.errstate(over="ignore"):
        assert np.isinf(x * x).any()  # x**2 overflows float16: the compute must be float32
    w = (1 + 0.2 * rng.standard_normal(16)).astype(np.float16)
    g = rng.standard_normal((4, 16)).astype(np.float16)
    xm, wm = mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)
    y = F.rms_norm(xm, (16,), wm, **VARIANTS[variant])
    y.backward(mg.tensor(g))
    assert y.dtype == xm.grad.dtype == wm.grad.dtype == np.float16
    assert np.isfinite(y.detach().numpy()).all() and np.isfinite(xm.grad.numpy()).all() and np.isfinite(wm.grad.numpy()).all()
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yt = (torch.nn.functional.rms_norm(xt, (16,), wt) if variant == "plain"
          else torch_rms_variant(torch, xt.float(), (16,), wt.float(), None,
                                 torch.finfo(torch.float32).eps, partial=0.5).half())
    yt.backward(torch.tensor(g))
    for name, got, exp in [("forward", y.detach().numpy(), yt), ("dx", xm.grad.numpy(), xt.grad), ("dw", wm.grad.numpy(), wt.grad)]:
        assert got.dtype == np.float16, name
        np.testing.assert_array_max_ulp(got, exp.detach().numpy(), maxulp=1)  # cast back once, as PyTorch


@pytest.mark.parametrize("p,d,k", [(0.5, 8, 4), (0.3, 20, 6), (0.26, 20, 6), (0.1, 30, 3), (0.34, 3, 2),
                                   (1e-9, 5, 1), (1.0, 5, 5)])
def test_partial_estimates_the_rms_from_the_first_ceil_p_d_elements(p, d, k):
    x = np.random.default_rng(13).standard_normal((1, d))
    y = F.rms_norm(mg.tensor(x), (d,), eps=0.0, partial=p).detach().numpy()
    np.testing.assert_allclose(y, x / np.sqrt((x[:, :k] ** 2).mean()), rtol=1e-13)  # all d divided by it
    for j in range(d):  # element j feeds the RMS iff changing it changes some other output
        x2 = x.copy()
        x2[0, j] += 1.0
        y2 = F.rms_norm(mg.tensor(x2), (d,), eps=0.0, partial=p).detach().numpy()
        assert (np.delete(y2 - y, j) != 0).any() == (j < k)


# ----------------------------------------------------------------------------- errors
# (input shape, normalized_shape, weight shape or None). PyTorch 2.13's rms_norm words the shape
# mismatch as "[*3, 4]" (layer_norm: "[*, 3, 4]") and raises ValueError for too few input dims.
SHAPE_ERRORS = [((2, 3), [4], None), ((2, 3, 5), (3, 4), None), ((3,), (2, 3), None), ((), [1], None),
                ((2, 4), [4], (3,)), ((3,), (2, 3), (4,)), ((2, 4), [], None)]


@pytest.mark.parametrize("impl", [F.rms_norm, rms_norm_composite])
@pytest.mark.parametrize("shape, normalized_shape, weight_shape", SHAPE_ERRORS)
def test_shape_errors_are_pytorchs(impl, shape, normalized_shape, weight_shape):
    def call(lib, functional):
        weight = None if weight_shape is None else lib.ones(weight_shape)
        rms_norm = functional.rms_norm if lib is not mg else impl
        return rms_norm(lib.zeros(shape), normalized_shape, weight)

    assert_raises_like_torch(call)


@pytest.mark.parametrize("impl", [F.rms_norm, rms_norm_composite])
def test_bias_of_wrong_shape_is_worded_as_layer_norms(impl):
    with pytest.raises(RuntimeError, match=r"^Expected bias to be of same shape as normalized_shape, but got "
                                           r"bias of shape \[4, 1\] and normalized_shape = \[4\]$"):
        impl(mg.randn(2, 4), [4], bias=mg.ones(4, 1))


def test_module_shape_errors_are_pytorchs():
    for shape in [(2, 3), (4,), (), (2, 4, 3)]:
        assert_raises_like_torch(lambda lib, functional: lib.nn.RMSNorm([3, 4])(lib.zeros(shape)))


@pytest.mark.parametrize("p", [0, -0.5, 1.5, float("nan"), True, "0.5"])
def test_partial_outside_0_1_is_rejected(p):
    with pytest.raises(ValueError, match=r"partial must be a number p in \(0, 1\]"):
        F.rms_norm(mg.randn(2, 4), (4,), partial=p)
    with pytest.raises(ValueError, match=r"partial must be a number p in \(0, 1\]"):
        rms_norm_composite(mg.randn(2, 4), (4,), partial=p)
    with pytest.raises(ValueError, match=r"partial must be a number p in \(0, 1\]"):
        nn.RMSNorm(4, partial=p)


def test_module_error_leaves_parameters_untouched():
    m = nn.RMSNorm(4, bias=True)
    m.weight.data[...] = [1.0, 2.0, 3.0, 4.0]
    before = [p.detach().numpy().copy() for p in m.parameters()]
    with pytest.raises(RuntimeError, match="expected input with shape"):
        m(mg.randn(2, 3, requires_grad=True))
    assert all((p._data == b).all() and p.grad is None for p, b in zip(m.parameters(), before))
