"""RMSNorm's double backward (``RMSNormFunction.graph_backward`` and the fused ``RMSNormBackward``) over
every variant: against autograd through the composite twin (float64, 1e-12), finite differences
(gradgradcheck), PyTorch (second and third order, plain RMSNorm), a deliberately wrong double backward,
the numba and NumPy backends, and the float32/float16 compute dtype.

The composite twin slices the RMS subset out of each row (``rows[..., :k]``) for the variants
eps-outside and partial; while slicing (``Index``) has no ``graph_backward`` its double backward cannot
be taken, and ``masked_composite`` below (the same forward with a 0/1 mask instead of the slice,
checked against ``rms_norm_composite`` to first order) is the oracle for those variants.
"""
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.autograd import GradcheckError
from minigrad.ops.norm.rmsnorm import RMSNormBackward, rms_norm_composite
from minigrad.ops.shape import Index

from .mirror import _second_order, assert_double_mirror, check_gradgrad, run_both, torch_or_skip

COMPOSITE_SLICE_TWICE = hasattr(Index, "graph_backward")   # can autograd differentiate a slice twice?


@dataclass
class Variant:
    shape: tuple                    # input shape
    ns: tuple                       # normalized_shape
    weight: bool = True
    bias: bool = False
    options: dict = field(default_factory=dict)   # eps, eps_inside_sqrt, partial
    zero_row: bool = False          # the first row all zeros

    @property
    def sliced(self):
        """Whether rms_norm_composite takes the slicing branch (eps outside or partial)."""
        return self.options.get("partial") is not None or self.options.get("eps_inside_sqrt") is False

    def arrays(self, seed=0):
        """x, weight (or None), bias (or None): x away from zero rows unless ``zero_row``, weight away from 0."""
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(self.shape)
        if self.zero_row:
            x.reshape(-1, math.prod(self.ns))[0] = 0
        w = 1 + 0.5 * rng.standard_normal(self.ns) if self.weight else None
        b = rng.standard_normal(self.ns) if self.bias else None
        return x, w, b


VARIANTS = {
    "plain": Variant((4, 6), (6,)),
    "no-weight": Variant((4, 6), (6,), weight=False),
    "bias": Variant((3, 5), (5,), bias=True, options=dict(eps=1e-5)),
    "bias-no-weight": Variant((3, 5), (5,), weight=False, bias=True),
    "eps-outside": Variant((3, 6), (6,), options=dict(eps=1e-3, eps_inside_sqrt=False)),
    "eps-outside-bias-large-eps": Variant((3, 5), (5,), bias=True, options=dict(eps=0.5, eps_inside_sqrt=False)),
    "partial-half": Variant((3, 6), (6,), options=dict(eps=1e-4, partial=0.5)),
    "partial-third-eps-outside": Variant((3, 7), (7,), bias=True,
                                         options=dict(eps=0.1, partial=1 / 3, eps_inside_sqrt=False)),
    "partial-third-no-weight": Variant((3, 6), (6,), weight=False, options=dict(partial=1 / 3)),
    "multi-dim": Variant((3, 2, 4), (2, 4), bias=True, options=dict(eps=1e-5)),
    "multi-dim-partial": Variant((2, 3, 2, 3), (2, 3), options=dict(eps=1e-5, partial=0.5)),
    "zero-row": Variant((3, 5), (5,), bias=True, options=dict(eps=0.1), zero_row=True),
    "zero-row-partial": Variant((3, 6), (6,), options=dict(eps=0.1, partial=0.5), zero_row=True),
}
PLAIN = ["plain", "no-weight", "multi-dim", "zero-row"]   # what torch.nn.functional.rms_norm has (bias left out)


def masked_composite(x, ns, weight=None, eps=None, *, bias=None, eps_inside_sqrt=True, partial=None):
    """RMSNorm written with minigrad ops, the RMS subset picked by a 0/1 mask instead of a slice (float64)."""
    d = math.prod(ns)
    k = d if partial is None else math.ceil(round(partial * d, 9))
    eps = np.finfo(np.float64).eps if eps is None else eps
    rows = x.reshape(-1, d)                                                   # (R, D)
    mask = mg.tensor((np.arange(d) < k).astype(np.float64))                 # (D,)
    ms = (rows * rows * mask).sum(-1, keepdim=True) / k                     # (R, 1)
    rstd = (ms + eps).rsqrt() if eps_inside_sqrt else 1 / (ms.sqrt() + eps)
    y = (rows * rstd).reshape(x.shape)
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


def fused(v):
    """(x, weight, bias) -> F.rms_norm with the variant's options."""
    return lambda x, w, b: F.rms_norm(x, v.ns, w, bias=b, **v.options)


def oracle(v):
    """The composite twin, differentiated by autograd: rms_norm_composite, or masked_composite while a slice
    cannot be differentiated twice."""
    impl = masked_composite if v.sliced and not COMPOSITE_SLICE_TWICE else rms_norm_composite
    return lambda x, w, b: impl(x, v.ns, w, bias=b, **v.options)


def tensors(arrays):
    return [None if a is None else mg.tensor(a, requires_grad=True) for a in arrays]


def second_order(fn, arrays, seed=1):
    """First gradients (create_graph, random upstream u) and the gradients of sum_i <g_i, v_i> + |g_i|^2 / 2
    with respect to every input and u, as ndarrays (tests/mirror.py's non-linear probe)."""
    rng = np.random.default_rng(seed)
    inputs = tensors(arrays)
    u = mg.tensor(rng.standard_normal(fn(*inputs).shape), requires_grad=True)
    directions = [mg.tensor(rng.standard_normal(a.shape)) for a in arrays if a is not None]
    _, grads, grads2 = _second_order(mg, fn, inputs, u, directions)
    return [g.detach().numpy() for g in grads] + values(grads2, [t for t in inputs if t is not None] + [u])


def values(grads, like):
    """The gradients as ndarrays, zeros where autograd left one undefined (None: independent of that input)."""
    return [np.zeros_like(t.detach().numpy()) if g is None else g.detach().numpy() for g, t in zip(grads, like)]


def third_order(lib, fn, inputs, rng):
    """Three nested grads with create_graph: g1 = d<u, fn>/d(inputs), g2 = d<g1, v>/d(inputs, u), then the
    gradient of sum((g2 * z)^2) with respect to (inputs, u): third derivatives of fn met by the random u, v
    and z (the square keeps the second derivatives in it as well). ndarrays, zeros for an undefined one."""
    out = fn(*inputs)
    u = lib.tensor(rng.standard_normal(out.shape), requires_grad=True)
    g1 = lib.autograd.grad(out, inputs, u, create_graph=True)
    s2 = sum((g * lib.tensor(rng.standard_normal(g.shape))).sum() for g in g1)
    wrt = inputs + [u]
    z = [lib.tensor(rng.standard_normal(t.shape)) for t in wrt]
    g2 = lib.autograd.grad(s2, wrt, create_graph=True, allow_unused=True)
    s3 = sum(((g * zi) ** 2).sum() for g, zi in zip(g2, z) if g is not None)
    return values(lib.autograd.grad(s3, wrt, allow_unused=True), wrt)


def assert_all_close(ours, expected, rtol=1e-12, what=""):
    """Each array to ``rtol`` relative to its own largest entry (entries near 0 in a large array are sums
    that cancel)."""
    assert len(ours) == len(expected)
    for i, (a, e) in enumerate(zip(ours, expected)):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * np.max(np.abs(e), initial=1.0), err_msg=f"{what} {i}")


# --------------------------------------------------------------------------- (1) against the composite twin
@pytest.mark.parametrize("name", VARIANTS)
def test_double_backward_matches_composite(name):
    v = VARIANTS[name]
    arrays = v.arrays()
    assert_all_close(second_order(fused(v), arrays), second_order(oracle(v), arrays), what=name)


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if v.sliced])
def test_masked_oracle_is_the_composite_twin(name):
    """masked_composite agrees with rms_norm_composite in the forward and the first gradients."""
    v = VARIANTS[name]
    arrays = v.arrays(seed=2)
    results = []
    for impl in (masked_composite, rms_norm_composite):
        inputs = tensors(arrays)
        y = impl(inputs[0], v.ns, inputs[1], bias=inputs[2], **v.options)
        y.backward(mg.tensor(np.random.default_rng(3).standard_normal(y.shape)))
        results.append([y._data] + [t.grad._data for t in inputs if t is not None])
    assert_all_close(*results, what=name)


@pytest.mark.parametrize("wrt", ["x", "weight", "bias", "x+bias"])
def test_only_some_inputs_require_grad(wrt):
    """needs_input_grad is respected at both orders: the gradients asked for match the composite's."""
    v = VARIANTS["partial-third-eps-outside"]
    results = []
    for fn in (fused(v), oracle(v)):
        inputs = [mg.tensor(a, requires_grad=name in wrt.split("+"))
                  for a, name in zip(v.arrays(), ("x", "weight", "bias"))]
        rng = np.random.default_rng(0)
        wanted = [t for t in inputs if t.requires_grad]
        u = mg.tensor(rng.standard_normal(v.shape), requires_grad=True)
        _, grads, grads2 = _second_order(mg, fn, inputs, u, [mg.tensor(rng.standard_normal(t.shape)) for t in wanted])
        results.append([g.detach().numpy() for g in grads] + values(grads2, wanted + [u]))
    assert_all_close(*results, what=wrt)


def test_non_leaf_inputs():
    """x and weight produced by other ops: input_tensor joins the saved arrays to their nodes."""
    v = VARIANTS["partial-third-eps-outside"]

    def through_ops(fn):
        return lambda x, w, b: fn(x * 1.5 - 0.25, w.exp(), b * 2)
    arrays = v.arrays(seed=13)
    assert_all_close(second_order(through_ops(fused(v)), arrays), second_order(through_ops(oracle(v)), arrays))


@given(rows=st.integers(1, 3), d=st.integers(1, 7), partial=st.sampled_from([None, 0.2, 0.5, 0.8]),
       eps_inside=st.booleans(), weight=st.booleans(), bias=st.booleans(), seed=st.integers(0, 1000))
def test_double_backward_matches_composite_sweep(rows, d, partial, eps_inside, weight, bias, seed):
    v = Variant((rows, d), (d,), weight, bias, dict(eps=1e-3, partial=partial, eps_inside_sqrt=eps_inside))
    arrays = v.arrays(seed)
    assert_all_close(second_order(fused(v), arrays), second_order(oracle(v), arrays), rtol=1e-11)


# --------------------------------------------------------------------------- (2) finite differences
@pytest.mark.parametrize("name", VARIANTS)
def test_gradgradcheck(name):
    v = VARIANTS[name]
    check_gradgrad(fused(v), *v.arrays(seed=4))


# --------------------------------------------------------------------------- (3, 4) PyTorch
def torch_rms(v):
    """(x[, weight]) -> rms_norm with the variant's eps, as the pair (minigrad, PyTorch)."""
    eps = v.options.get("eps")
    return run_both(lambda lib, x, *w: lib.nn.functional.rms_norm(x, v.ns, w[0] if w else None, eps))


@pytest.mark.parametrize("name", PLAIN)
def test_double_mirror(name):
    v = VARIANTS[name]
    x, w, _ = v.arrays(seed=5)
    assert_double_mirror(*torch_rms(v), x, w, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("name", PLAIN)
def test_third_derivative_matches_pytorch(name):
    torch = torch_or_skip()
    v = VARIANTS[name]
    arrays = [a for a in v.arrays(seed=6)[:2] if a is not None]
    results = []
    for lib, fn in zip((mg, torch), torch_rms(v)):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        results.append(third_order(lib, fn, inputs, np.random.default_rng(7)))
    assert_all_close(*results, rtol=1e-10, what=name)


def third_order_vs_composite(name):
    """Third derivatives of the fused form and of the composite twin (fused, then oracle)."""
    v = VARIANTS[name]
    results = []
    for fn in (fused(v), oracle(v)):
        inputs = [t for t in tensors(v.arrays(seed=8)) if t is not None]           # x, [weight], [bias]
        results.append(third_order(mg, present_only(fn, v), inputs, np.random.default_rng(9)))
    return results


def present_only(fn, v):
    """fn(x, weight, bias) as a function of x and the parameters the variant has."""
    return lambda x, *params: fn(x, params[0] if v.weight else None, params[-1] if v.bias else None)


@pytest.mark.parametrize("name", ["bias", "bias-no-weight", "eps-outside-bias-large-eps", "partial-third-eps-outside",
                                  "multi-dim-partial", "zero-row"])
def test_third_derivative_matches_composite(name):
    """The third order runs RMSNormBackward.graph_backward (the double backward's formulas on Tensors)."""
    assert_all_close(*third_order_vs_composite(name), rtol=1e-11, what=name)


# --------------------------------------------------------------------------- (5) a wrong double backward is caught
@pytest.mark.parametrize("wrong", [0, 1, 2], ids=["d-dy", "d-x", "d-weight"])
def test_wrong_double_backward_is_caught(monkeypatch, wrong):
    """One of RMSNormBackward's three gradients off by a factor 2: both gradgradcheck and the comparison with
    the composite twin fail."""
    right = RMSNormBackward.backward

    def off_by_two(ctx, G):
        grads = list(right(ctx, G))
        grads[wrong] = 2 * grads[wrong]
        return tuple(grads)
    monkeypatch.setattr(RMSNormBackward, "backward", staticmethod(off_by_two))
    v = VARIANTS["partial-half"]
    arrays = v.arrays(seed=10)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        check_gradgrad(fused(v), *arrays)
    with pytest.raises(AssertionError):
        assert_all_close(second_order(fused(v), arrays), second_order(oracle(v), arrays))
    with pytest.raises(AssertionError):
        assert_double_mirror(*torch_rms(VARIANTS["plain"]), *VARIANTS["plain"].arrays()[:2])


def test_wrong_third_order_is_caught(monkeypatch):
    """RMSNormBackward.graph_backward (third order) with d x off by a factor 2 is caught by the composite."""
    right = RMSNormBackward.graph_backward

    def off_by_two(ctx, G):
        ddy, dx, *rest = right(ctx, G)
        return (ddy, 2 * dx, *rest)
    monkeypatch.setattr(RMSNormBackward, "graph_backward", staticmethod(off_by_two))
    with pytest.raises(AssertionError):
        assert_all_close(*third_order_vs_composite("partial-third-eps-outside"), rtol=1e-11)


# --------------------------------------------------------------------------- (6) backends and dtypes
@pytest.mark.parametrize("numba", ["numba", "numba-parallel"])
@pytest.mark.parametrize("name", ["bias", "partial-third-eps-outside", "multi-dim", "zero-row"])
def test_numba_and_numpy_backends_agree(monkeypatch, name, numba):
    pytest.importorskip("numba", reason="numba not installed: numba backend skipped")
    if numba == "numba-parallel":
        monkeypatch.setattr(kernels._numba_kernels(), "SERIAL_BELOW", 0)
    v = VARIANTS[name]
    arrays = v.arrays(seed=11)
    results = []
    for backend in ("numpy", "numba"):
        with kernels.use_backend(backend):
            assert kernels.get_backend() == backend
            results.append(second_order(fused(v), arrays))
    assert_all_close(*results, rtol=1e-12, what=name)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float16, 2e-2)])
def test_compute_dtype(dtype, rtol):
    """float32 and float16 inputs: second-order gradients in the input's dtype (float16 computed in float32),
    close to the float64 ones."""
    v = VARIANTS["partial-third-eps-outside"]
    arrays = v.arrays(seed=12)
    expected = second_order(fused(v), arrays)
    rng = np.random.default_rng(1)
    inputs = [mg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    u = mg.tensor(rng.standard_normal(v.shape).astype(dtype), requires_grad=True)
    directions = [mg.tensor(rng.standard_normal(a.shape).astype(dtype)) for a in arrays]
    _, grads, grads2 = _second_order(mg, fused(v), inputs, u, directions)
    ours = [g.detach().numpy() for g in grads] + values(grads2, inputs + [u])
    assert all(g.dtype == dtype for g in ours)
    assert_all_close([g.astype(np.float64) for g in ours], expected, rtol=rtol, what=str(dtype))
