"""Dynamic Tanh (minigrad/ops/norm/dynamictanh.py, docs/derivations/dynamictanh.md): the registry's check kit,
the module's parameters (the paper's names and initial values), no weight/bias, float16 and saturation."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.ops.norm.dynamictanh as dynamictanh
from minigrad.ops.norm.registry import BY_NAME

from .norm_kit import assert_close_to_scale, check_norm, check_twins, mutant, on_both_backends

SPEC = BY_NAME["DynamicTanh"]
BAD_INPUTS = [
    (lambda F, x: F.dynamic_tanh(x, mg.ones(2)), RuntimeError, r"expected alpha to hold one value \(shape \[\] or "
                                                                 r"\[1\]\), but got alpha of shape \[2\]"),
    (lambda F, x: F.dynamic_tanh(x, mg.ones(1), mg.ones(3)), RuntimeError,
     r"expected weight of the trailing shape of input, but got weight of shape \[3\] and input of shape \[2, 3, 4\]"),
    (lambda F, x: F.dynamic_tanh(x, mg.ones(1), None, mg.ones(2, 4)), RuntimeError, r"expected bias of the trailing"),
    (lambda F, x: F.dynamic_tanh(mg.ones(2, dtype=mg.int64), mg.ones(1)), RuntimeError, r"floating-point"),
    (lambda F, x: F.dynamic_tanh(x, 0.5), TypeError, r"argument 'alpha' \(position 2\) must be Tensor, not float"),
]


# A wrong backward: tanh' taken as 1 (t = 0 in 1 - t^2).
WITHOUT_TANH_DERIVATIVE = mutant(dynamictanh, "dynamic_tanh_backward", lambda backward: (
    lambda dy, x, alpha, weight, t, *a: backward(dy, x, alpha, weight, t * 0, *a)))


def test_dynamic_tanh_passes_the_kit():
    check_norm(SPEC, BAD_INPUTS, mutants=[WITHOUT_TANH_DERIVATIVE])


def test_module_has_the_papers_parameters():
    m = mg.nn.DynamicTanh((3, 4), alpha_init_value=0.7)
    assert [(n, p.shape) for n, p in m.named_parameters()] == [("alpha", (1,)), ("weight", (3, 4)), ("bias", (3, 4))]
    np.testing.assert_allclose(m.alpha.detach().numpy(), [0.7], rtol=1e-7)
    assert (m.weight.detach().numpy() == 1).all() and (m.bias.detach().numpy() == 0).all()
    assert repr(m) == "DynamicTanh((3, 4), alpha_init_value=0.7)"
    x = mg.randn(2, 3, 4)
    np.testing.assert_allclose(m(x).detach().numpy(), np.tanh(0.7 * x.numpy()), rtol=1e-6)


@pytest.mark.parametrize("which", ["no weight", "no bias", "neither", "0-d alpha", "bias of more dims"])
def test_optional_parameters_are_twins_too(which):
    """The fused form and the composite twin agree without weight or bias, with a 0-d alpha, and with a bias that
    covers more trailing dims than the weight (the kernels' rows then span both dims; weight's gradient sums back)."""
    call = {"no weight": lambda f, x, a, w, b: f(x, a, None, b), "no bias": lambda f, x, a, w, b: f(x, a, w),
            "neither": lambda f, x, a, w, b: f(x, a), "0-d alpha": lambda f, x, a, w, b: f(x, a.reshape(()), w, b),
            "bias of more dims": lambda f, x, a, w, b: f(x, a, w, b * mg.ones(3, 1, dtype=b.dtype))}
    check_twins(type(SPEC)(**{**SPEC.__dict__, "call": call[which]}))


def test_saturation_gives_vanishing_input_gradient():
    """|alpha x| >> 1: y is +-weight + bias and dx -> 0, as tanh' = 1 - tanh^2 says (no NaN, no overflow)."""
    x = mg.tensor(np.array([[-1e4, 1e4, 0.0]]), requires_grad=True)
    a = mg.tensor(np.array([1.0]), requires_grad=True)
    y = mg.nn.functional.dynamic_tanh(x, a)
    y.backward(mg.ones(1, 3, dtype=mg.float64))
    np.testing.assert_array_equal(y.detach().numpy(), [[-1.0, 1.0, 0.0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0, 1.0]])


def test_float16_matches_float64():
    rng = np.random.default_rng(0)
    x, up = rng.standard_normal((4, 8)), rng.standard_normal((4, 8))
    out = []
    for dt in (np.float64, np.float16):
        ts = [mg.tensor(a.astype(dt), requires_grad=True) for a in (x, np.array([0.5]), np.ones(8), np.zeros(8))]
        y = mg.nn.functional.dynamic_tanh(*ts)
        y.backward(mg.tensor(up.astype(dt)))
        assert y.dtype == dt and all(t.grad.dtype == dt for t in ts)
        out.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*out):
        assert_close_to_scale(b.astype(np.float64), a, tol=3e-3)


@pytest.mark.parametrize("param_dtype", [np.float32, "bfloat16"])
def test_bfloat16_input_with_float32_or_bfloat16_parameters(param_dtype):
    """bfloat16 x and dy, alpha/weight/bias float32 (as under autocast) or bfloat16: computed in float32, y and
    dx rounded once to bfloat16 (the input's dtype, as the norms' mixed-dtype rule), within 2 bf16 ulps of
    float64 on the same rounded values; each parameter's gradient in its dtype."""
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((4, 8)), dtype=mg.bfloat16)
    up = mg.tensor(rng.standard_normal((4, 8)), dtype=mg.bfloat16)
    params = [np.array([0.5]), 1 + 0.25 * np.arange(8), 0.125 * np.arange(8)]      # exact in bfloat16
    param_dtype = np.dtype(mg.bfloat16 if param_dtype == "bfloat16" else param_dtype)
    out = []
    for dt, pdt in ((np.float64, np.float64), (mg.bfloat16, param_dtype)):
        xm = x.detach().to(dt).requires_grad_()
        ps = [mg.tensor(p, dtype=pdt, requires_grad=True) for p in params]
        y = mg.nn.functional.dynamic_tanh(xm, *ps)
        y.backward(up.to(dt))
        assert y.dtype == dt and xm.grad.dtype == dt and all(p.grad.dtype == pdt for p in ps)
        out.append([y.detach().float().numpy(), xm.grad.float().numpy()] + [p.grad.float().numpy() for p in ps])
    tols = [2 ** -7, 2 ** -7] + [2 ** -7 if param_dtype == mg.bfloat16 else 1e-5] * 3
    for a, b, tol in zip(*out, tols):
        assert_close_to_scale(b.astype(np.float64), a, tol=tol)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 40), min_size=0, max_size=3), covered=st.integers(0, 3),
       parts=st.sampled_from(["both", "weight", "bias", "neither"]), parallel=st.booleans(), seed=st.integers(0, 2**16))
def test_numba_kernels_agree_with_numpy_on_drawn_shapes(shape, covered, parts, parallel, seed):
    """Forward and every gradient through F.dynamic_tanh (float64), the numba backend against the NumPy one, serial or
    forced parallel: empty and 0-d inputs, parameters covering 0 to all trailing dims, |alpha x| past saturation."""
    rng = np.random.default_rng(seed)
    trailing = tuple(shape[len(shape) - min(covered, len(shape)):])
    x, g = rng.standard_normal(shape) * 4, rng.standard_normal(shape)
    a, w, b = np.array([1.3]), rng.standard_normal(trailing), rng.standard_normal(trailing)
    w, b = (w if parts in ("both", "weight") else None), (b if parts in ("both", "bias") else None)

    def run():
        leaves = [None if v is None else mg.tensor(v, requires_grad=True) for v in (x, a, w, b)]
        y = mg.nn.functional.dynamic_tanh(*leaves)
        y.backward(mg.tensor(g))
        return [y.detach().numpy()] + [None if t is None else t.grad.numpy() for t in leaves]
    results = on_both_backends(run, parallel)
    for got, want in zip(results["numba"], results["numpy"]):
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(initial=1.0))
