"""Double (and higher) backward of the reductions, softmax, the losses and attention (issue 14).

Every op is written once as ``f(lib, *tensors)`` in the table ``CASES`` and checked two ways on small float64
inputs: ``check_gradgrad`` (finite differences of the create_graph gradients, which must also equal the
ordinary ones) and ``assert_double_mirror`` (first gradients and the gradients of a non-linear function of
them, w.r.t. every input and the upstream gradient, against PyTorch). Inputs are random normals: no ties for
max/min, no kinks for the norms and Huber at these values (``X`` has no zero and distinct entries).

Where an op's gradient is constant in its input (max/min, the 1- and inf-norms, nll_loss) a cube or exp in
front gives its second derivative something to multiply: PyTorch's double backward of such an op alone is
a ZeroTensor, which cannot be compared as an array.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.autograd.gradcheck import GradcheckError
from minigrad.ops.attention import Attention
from minigrad.ops.softmax import Softmax

from .mirror import assert_double_mirror, check_gradgrad, run_both, torch_or_skip

RNG = np.random.default_rng(14)
X = RNG.standard_normal((3, 4))                          # (N, C) logits; distinct, nonzero entries
X3 = RNG.standard_normal((2, 3, 2))                      # (N, C, d)
WITH_ZEROS = X.copy()
WITH_ZEROS[1, 2] = WITH_ZEROS[2, 0] = 0.0                # for cumprod's zero path
TARGET, TARGET_IGNORED, TARGET_3D = np.array([1, 0, 3]), np.array([1, -100, 3]), np.array([[0, 2], [1, 1]])
PROBS = RNG.dirichlet(np.ones(4), size=3)                # class probabilities, rows sum to 1
CLASS_WEIGHT = RNG.uniform(0.5, 2.0, 4)
INSIDE = RNG.uniform(0.1, 0.9, (3, 4))                   # probabilities away from 0 and 1
LABELS = RNG.uniform(0.0, 1.0, (3, 4))
Q, K, V = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4)), RNG.standard_normal((2, 5, 3))
K3, V3 = K[:, :3].copy(), V[:, :3].copy()                # L == S for the causal case
MASK = RNG.uniform(size=(3, 5)) > 0.4
MASK[:, 0] = True                                        # every query keeps a key: the fused path


def F(lib):
    return lib.nn.functional


def const(lib, a):
    return lib.tensor(a)


def cube(t):
    return t * t * t


# name -> (f(lib, *tensors), input arrays)
CASES = {
    # reductions
    "var_dim_keepdim": (lambda lib, t: lib.var(t, 1, keepdim=True), (X,)),
    "var_all": (lambda lib, t: t.var(), (X,)),
    "var_correction0_tuple": (lambda lib, t: lib.var(t, dim=(0,), correction=0), (X3,)),
    "var_correction2": (lambda lib, t: lib.var(t, dim=(0, 2), correction=2), (X3,)),
    "std_dim": (lambda lib, t: lib.std(t, 1), (X,)),
    "std_all_biased": (lambda lib, t: t.std(correction=0), (X,)),
    "std_keepdim": (lambda lib, t: lib.std(t, (0, 2), keepdim=True), (X3,)),
    "amax_dim": (lambda lib, t: lib.amax(cube(t), 1), (X,)),
    "amin_all": (lambda lib, t: lib.amin(cube(t)), (X,)),
    "max_all": (lambda lib, t: lib.max(t.exp()), (X,)),
    "max_dim": (lambda lib, t: lib.max(cube(t), 1)[0], (X,)),
    "min_dim_keepdim": (lambda lib, t: lib.min(cube(t), 0, keepdim=True)[0], (X,)),
    "logsumexp_dim": (lambda lib, t: lib.logsumexp(t, 1), (X,)),
    "logsumexp_dims_keepdim": (lambda lib, t: lib.logsumexp(t, (0, 2), keepdim=True), (X3,)),
    "cumsum": (lambda lib, t: lib.cumsum(cube(t), 1), (X,)),
    "cumprod_dim1": (lambda lib, t: lib.cumprod(t, 1), (X,)),
    "cumprod_dim0": (lambda lib, t: lib.cumprod(t, 0), (X3,)),
    "cumprod_zeros_dim1": (lambda lib, t: lib.cumprod(t, 1), (WITH_ZEROS,)),
    "cumprod_zeros_dim0": (lambda lib, t: lib.cumprod(t, 0), (WITH_ZEROS,)),
    "vector_norm_2_dim": (lambda lib, t: lib.linalg.vector_norm(t, 2, dim=1), (X,)),
    "norm_fro": (lambda lib, t: lib.norm(t), (X,)),
    "vector_norm_3": (lambda lib, t: lib.linalg.vector_norm(t, 3, dim=(0, 2), keepdim=True), (X3,)),
    "vector_norm_1.5": (lambda lib, t: lib.linalg.vector_norm(t, 1.5), (X,)),
    "vector_norm_1": (lambda lib, t: lib.linalg.vector_norm(cube(t), 1, dim=1), (X,)),
    "vector_norm_inf": (lambda lib, t: lib.linalg.vector_norm(cube(t), float("inf")), (X,)),
    "vector_norm_-inf": (lambda lib, t: lib.linalg.vector_norm(cube(t), float("-inf"), dim=0), (X,)),
    "vector_norm_0": (lambda lib, t: lib.linalg.vector_norm(t, 0, dim=1) + cube(t).sum(1), (X,)),
    # softmax
    "softmax_dim1": (lambda lib, t: lib.softmax(t, 1), (X,)),
    "softmax_dim0": (lambda lib, t: lib.softmax(t, 0), (X3,)),
    "log_softmax_dim1": (lambda lib, t: lib.log_softmax(t, 1), (X,)),
    "log_softmax_dim-1": (lambda lib, t: lib.log_softmax(t, -1), (X3,)),
    # losses
    "cross_entropy_mean": (lambda lib, t: F(lib).cross_entropy(t, const(lib, TARGET)), (X,)),
    "cross_entropy_sum": (lambda lib, t: F(lib).cross_entropy(t, const(lib, TARGET), reduction="sum"), (X,)),
    "cross_entropy_none": (lambda lib, t: F(lib).cross_entropy(t, const(lib, TARGET), reduction="none"), (X,)),
    "cross_entropy_unbatched": (lambda lib, t: F(lib).cross_entropy(t, const(lib, np.array(2))), (X[0],)),
    "cross_entropy_weight_smoothing_ignore": (
        lambda lib, t: F(lib).cross_entropy(t, const(lib, TARGET_IGNORED), weight=const(lib, CLASS_WEIGHT),
                                            label_smoothing=0.2), (X,)),
    "cross_entropy_3d_smoothing_none": (
        lambda lib, t: F(lib).cross_entropy(t, const(lib, TARGET_3D), label_smoothing=0.1, reduction="none"), (X3,)),
    "cross_entropy_probabilities": (lambda lib, t: F(lib).cross_entropy(t, const(lib, PROBS)), (X,)),
    "cross_entropy_probabilities_with_grad": (
        lambda lib, t, p: F(lib).cross_entropy(t, p, weight=const(lib, CLASS_WEIGHT), label_smoothing=0.1),
        (X, PROBS)),
    "nll_loss_weight_ignore": (
        lambda lib, t: F(lib).nll_loss(t.exp(), const(lib, TARGET_IGNORED), weight=const(lib, CLASS_WEIGHT)), (X,)),
    "nll_loss_none_3d": (lambda lib, t: F(lib).nll_loss(cube(t), const(lib, TARGET_3D), reduction="none"), (X3,)),
    "nll_loss_of_log_softmax_sum": (
        lambda lib, t: F(lib).nll_loss(F(lib).log_softmax(t, 1), const(lib, TARGET), reduction="sum"), (X,)),
    "huber": (lambda lib, a, b: F(lib).huber_loss(a, b, delta=0.7), (X, INSIDE)),
    "huber_none": (lambda lib, a, b: F(lib).huber_loss(a, b, reduction="none", delta=1.5), (X, INSIDE)),
    "smooth_l1_sum": (lambda lib, a, b: F(lib).smooth_l1_loss(a, b, beta=0.5, reduction="sum"), (X, INSIDE)),
    "l1": (lambda lib, a, b: F(lib).l1_loss(cube(a), b), (X, INSIDE)),
    "binary_cross_entropy": (lambda lib, a: F(lib).binary_cross_entropy(a, const(lib, LABELS)), (INSIDE,)),
    "binary_cross_entropy_target_grad_none": (
        lambda lib, a, b: F(lib).binary_cross_entropy(a, b, reduction="none"), (INSIDE, LABELS)),
    "binary_cross_entropy_with_logits": (
        lambda lib, a, b: F(lib).binary_cross_entropy_with_logits(a, b), (X, LABELS)),
    "binary_cross_entropy_with_logits_pos_weight": (
        lambda lib, a, b: F(lib).binary_cross_entropy_with_logits(a, b, pos_weight=const(lib, CLASS_WEIGHT),
                                                                   reduction="sum"), (X, LABELS)),
    "kl_div_batchmean": (lambda lib, a: F(lib).kl_div(a, const(lib, PROBS), reduction="batchmean"), (X,)),
    "kl_div_target_grad": (lambda lib, a, b: F(lib).kl_div(a, b, reduction="sum"), (X, PROBS)),
    "kl_div_log_target_none": (
        lambda lib, a, b: F(lib).kl_div(a, b, reduction="none", log_target=True), (X, X3.reshape(3, 4))),
    # attention (the fused Function)
    "attention": (lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v), (Q, K, V)),
    "attention_causal": (lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True),
                         (Q, K3, V3)),
    "attention_bool_mask_scale": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, attn_mask=const(lib, MASK), scale=0.3),
        (Q, K, V)),
    "attention_float_mask": (
        lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, attn_mask=const(lib, MASK * 0.5 - 1)),
        (Q, K, V)),
}


def mg_fn(name):
    f = CASES[name][0]
    return lambda *t: f(mg, *t)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    check_gradgrad(mg_fn(name), *CASES[name][1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_double_backward_matches_pytorch(name):
    f, arrays = CASES[name]
    assert_double_mirror(*run_both(f), *arrays)


def test_the_fused_attention_is_what_is_checked():
    """The attention cases above go through the fused Function (whose graph_backward is under test)."""
    for name in [n for n in CASES if n.startswith("attention")]:
        f, arrays = CASES[name]
        out = f(mg, *[mg.tensor(a, requires_grad=True) for a in arrays])
        assert out.grad_fn.fn is Attention, name


@pytest.mark.parametrize("name", sorted(CASES))
def test_third_order(name):
    """gradgradcheck of the function that returns the first gradients (create_graph): the double backward's
    own gradients, i.e. graph_backward applied to graph_backward's graph."""
    f, arrays = CASES[name]
    u = np.random.default_rng(3).standard_normal(f(mg, *[mg.tensor(a) for a in arrays]).shape)

    def first_gradients(*tensors_and_upstream):     # the upstream gradient is an input too
        *tensors, upstream = tensors_and_upstream
        return mg.autograd.grad(f(mg, *tensors), tensors, upstream, create_graph=True)

    check_gradgrad(first_gradients, *arrays, u)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")   # correction >= N: PyTorch's inf/nan values
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@settings(max_examples=12, deadline=None)
@given(dim=st.sampled_from([None, 0, 1, 2, (0, 2), (-1, 0)]), keepdim=st.booleans(),
       correction=st.sampled_from([0, 1, 2]), op=st.sampled_from(["var", "std"]))
def test_variance_double_backward_sweep(dim, keepdim, correction, op):
    def f(lib, t):
        return getattr(lib, op)(t, dim=dim, keepdim=keepdim, correction=correction)
    assert_double_mirror(*run_both(f), X3)


@settings(max_examples=12, deadline=None)
@given(reduction=st.sampled_from(["mean", "sum", "none"]), smoothing=st.sampled_from([0.0, 0.05, 0.3]),
       weighted=st.booleans(), ignore=st.booleans())
def test_cross_entropy_double_backward_sweep(reduction, smoothing, weighted, ignore):
    target = TARGET_IGNORED if ignore else TARGET

    def f(lib, t):
        weight = const(lib, CLASS_WEIGHT) if weighted else None
        return F(lib).cross_entropy(t, const(lib, target), weight=weight, reduction=reduction,
                                    label_smoothing=smoothing)
    assert_double_mirror(*run_both(f), X)


def test_gradient_penalty_of_cross_entropy_matches_pytorch():
    """A gradient penalty: g = d loss / d (parameters, inputs) with create_graph=True, then (g*g).sum() is
    backpropagated into the parameters, against PyTorch."""
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    x, scale, shift = rng.standard_normal((5, 4)), rng.uniform(0.5, 1.5, 4), rng.standard_normal(4)
    target = np.array([0, 3, 1, 1, 2])

    def run(lib):
        xs, s, b = (lib.tensor(a, requires_grad=True) for a in (x, scale, shift))
        logits = xs * s + b
        loss = F(lib).cross_entropy(logits, lib.tensor(target), weight=lib.tensor(CLASS_WEIGHT), label_smoothing=0.1)
        grads = lib.autograd.grad(loss, [xs, s, b], create_graph=True)
        penalty = sum((g * g).sum() for g in grads)
        (loss + penalty).backward()
        return [t.detach().numpy() for t in grads] + [t.grad.numpy() for t in (xs, s, b)]

    for ours, theirs in zip(run(mg), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def _factor_two_off(ctx, dout):
    (y,) = ctx.saved_tensors
    g = 2 * dout * ctx.output_tensor(y)
    return g - ctx.output_tensor(y) * g.sum(ctx.axis, keepdim=True), None


def _output_as_constant(ctx, dout):
    """Right first gradient, but y taken as a constant: the double backward misses y's dependence on x."""
    (y,) = ctx.saved_tensors
    y = mg.tensor(y)
    g = dout * y
    return g - y * g.sum(ctx.axis, keepdim=True), None


@pytest.mark.parametrize("wrong", [_factor_two_off, _output_as_constant])
def test_a_wrong_graph_backward_is_caught(monkeypatch, wrong):
    monkeypatch.setattr(Softmax, "graph_backward", staticmethod(wrong))
    f = CASES["softmax_dim1"][0]
    with pytest.raises(GradcheckError):
        check_gradgrad(lambda t: f(mg, t), X)
    with pytest.raises(AssertionError):
        assert_double_mirror(*run_both(f), X)


@pytest.mark.parametrize("name", ["var", "std", "huber"])
def test_writing_the_input_in_place_after_the_forward_raises_as_in_pytorch(name):
    """var, std and huber_loss keep their input for the double backward; PyTorch saves it too, so an in-place
    write before backward raises in both."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.tensor(np.array([1.0, 2.0, 4.0]), requires_grad=True) * 1
        out = {"var": lambda: x.var(), "std": lambda: x.std(),
               "huber": lambda: F(lib).huber_loss(x, lib.ones(3, dtype=lib.float64))}[name]()
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


def test_cross_entropy_refuses_a_double_backward_through_logits_written_in_place():
    """The ordinary backward does not need the logits (as in PyTorch); the graph_backward does, and raises
    rather than differentiate values that are no longer the forward's."""
    x = mg.tensor(X, requires_grad=True)
    logits = x * 1
    loss = F(mg).cross_entropy(logits, mg.tensor(TARGET))
    logits.add_(1)
    with pytest.raises(RuntimeError, match="cross_entropy's input was modified by an inplace operation"):
        mg.autograd.grad(loss, x, create_graph=True)
    logits = x * 1
    loss = F(mg).cross_entropy(logits, mg.tensor(TARGET))
    logits.add_(1)
    loss.backward()                                   # the ordinary backward is fine, as in PyTorch
    assert x.grad is not None
