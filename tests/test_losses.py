"""Losses as functions and modules: nll_loss, l1/smooth_l1/huber, binary_cross_entropy (with logits),
kl_div, and the loss modules (including CrossEntropyLoss and MSELoss over the existing functions).

Every loss: a float64 finite-difference gradcheck in every float input, and a PyTorch mirror (forward and
every gradient under a random upstream gradient) across reductions, weights and ignore_index; then the
numerics each promises (BCE's log clamp, BCE-with-logits at huge logits), the modules' state_dicts and
reprs, and PyTorch's errors.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import assert_mirror, check_grad, run_both, torch_or_replay, torch_or_skip

REDUCTIONS = ["mean", "sum", "none"]


def functional(name, **kwargs):
    return lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs)


def gradcheck_and_mirror(name, *arrays, grads=None, **kwargs):
    check_grad(lambda *t: getattr(F, name)(*t, **kwargs), *arrays)
    return assert_mirror(*run_both(functional(name, **kwargs)), *arrays, grads=grads)


# ----------------------------------------------------------------------------- nll_loss
NLL_SHAPES = [(5,), (4, 5), (2, 5, 3), (2, 5, 3, 2)]


def class_targets(rng, shape, ignore_index=-100):
    n_classes = shape[1 if len(shape) > 1 else 0]
    positions = shape[:1] + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, n_classes, size=positions)
    if t.ndim:
        t.flat[0] = ignore_index                     # one ignored position wherever there are several
    return np.asarray(t, dtype=np.int64)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", NLL_SHAPES, ids=str)
def test_nll_loss_gradcheck_and_mirror(shape, reduction, weighted, rng):
    x, target = rng.standard_normal(shape), class_targets(rng, shape)
    weight = rng.random(shape[1 if len(shape) > 1 else 0]) + 0.5 if weighted else None
    check_grad(lambda t: F.nll_loss(t, mg.tensor(target), None if weight is None else mg.tensor(weight),
                                    reduction=reduction), x)
    assert_mirror(*run_both(functional("nll_loss", reduction=reduction)), x, target, weight,
                  grads=[True, False, False])


def test_nll_loss_custom_ignore_index_and_all_ignored(rng):
    x, target = rng.standard_normal((4, 3)), np.array([0, 2, 2, 1])
    assert_mirror(*run_both(functional("nll_loss", ignore_index=2)), x, target, grads=[True, False])
    out = F.nll_loss(mg.tensor(x), mg.tensor(np.full(4, -100)))
    assert np.isnan(out.item())


def test_nll_loss_of_log_softmax_is_cross_entropy(rng):
    x, target = rng.standard_normal((6, 4)), rng.integers(0, 4, 6)
    a = F.nll_loss(F.log_softmax(mg.tensor(x), 1), mg.tensor(target))
    b = F.cross_entropy(mg.tensor(x), mg.tensor(target))
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-14)


def test_nll_loss_errors():
    x = mg.randn(3, 4)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long"):
        F.nll_loss(x, mg.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.nll_loss(x, mg.tensor([0, 1, 5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.nll_loss(x, mg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="size mismatch"):
        F.nll_loss(mg.randn(2, 3, 4), mg.zeros(2, 5, dtype=mg.int64))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.nll_loss(x, mg.tensor([0, 1, 2]), reduction="foo")
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.nll_loss(x, mg.tensor([0, 1, 2]), weight=mg.ones(3))


# ----------------------------------------------------------------------------- l1, smooth_l1, huber
def regression_pair(rng, shape=(3, 4)):
    """Differences on both sides of the Huber/smooth-L1 kinks (|d| = 0.5 and 1), none exactly on them."""
    x = rng.standard_normal(shape) * 1.5
    return x, x + rng.choice([-2.0, -0.7, -0.2, 0.3, 0.8, 1.7], size=shape) + rng.uniform(-0.05, 0.05, shape)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_l1_loss_gradcheck_and_mirror(reduction, rng):
    gradcheck_and_mirror("l1_loss", *regression_pair(rng), reduction=reduction)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 2.5])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_smooth_l1_loss_gradcheck_and_mirror(beta, reduction, rng):
    gradcheck_and_mirror("smooth_l1_loss", *regression_pair(rng), reduction=reduction, beta=beta)


@pytest.mark.parametrize("delta", [0.5, 1.0, 2.5])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_huber_loss_gradcheck_and_mirror(delta, reduction, rng):
    gradcheck_and_mirror("huber_loss", *regression_pair(rng), reduction=reduction, delta=delta)


def test_regression_losses_broadcast_the_target_with_pytorchs_warning(rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((1, 4))
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        with pytest.warns(UserWarning, match="different to the input size"):
            gradcheck_and_mirror(name, x, y)


def test_regression_loss_errors():
    x = mg.randn(2, 3)
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta"):
        F.smooth_l1_loss(x, x, beta=-1)
    for delta in (0, -1):
        with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
            F.huber_loss(x, x, delta=delta)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.l1_loss(x, x, reduction="avg")


# ----------------------------------------------------------------------------- binary cross-entropy
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_gradcheck_and_mirror(reduction, weighted, rng):
    x, y = rng.uniform(0.05, 0.95, (3, 4)), rng.random((3, 4))
    weight = rng.random((1, 4)) + 0.5 if weighted else None
    check_grad(lambda a, b: F.binary_cross_entropy(a, b, None if weight is None else mg.tensor(weight),
                                                   reduction=reduction), x, y)
    assert_mirror(*run_both(functional("binary_cross_entropy", reduction=reduction)), x, y, weight,
                  grads=[True, True, False])


def test_binary_cross_entropy_clamps_the_log_at_minus_100_as_pytorch():
    x, y = np.array([0.0, 1.0, 0.0, 1.0, 1e-60, 1e-40]), np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    out = assert_mirror(*run_both(functional("binary_cross_entropy", reduction="none")), x, y)
    # log(1e-60) = -138 is clamped, log(1e-40) = -92.1 is not
    np.testing.assert_allclose(out.detach().numpy(), [100, 100, 0, 0, 100, 40 * np.log(10)], rtol=1e-12)


def test_binary_cross_entropy_weight_is_differentiable(rng):
    """PyTorch refuses a weight that requires grad; here the loss is linear in it and it gets its gradient."""
    x, y, w = rng.uniform(0.1, 0.9, (2, 3)), rng.random((2, 3)), rng.random((2, 3))
    check_grad(lambda a, b, c: F.binary_cross_entropy(a, b, c), x, y, w)
    check_grad(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, c), x, y, w)


def test_binary_cross_entropy_errors():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(mg.tensor([0.5, 1.5]), mg.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="Using a target size .* different to the input size"):
        F.binary_cross_entropy(mg.tensor([0.5, 0.5]), mg.tensor([1.0]))
    with pytest.raises(ValueError, match=r"Target size .* must be the same as input size"):
        F.binary_cross_entropy_with_logits(mg.randn(3, 2), mg.rand(2, 2))


@pytest.mark.parametrize("pos_weighted", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits_gradcheck_and_mirror(reduction, weighted, pos_weighted, rng):
    x, y = rng.standard_normal((3, 4)) * 3, rng.random((3, 4))
    weight = rng.random((3, 1)) + 0.5 if weighted else None
    pos_weight = rng.random(4) + 0.5 if pos_weighted else None

    def f(lib, a, b, w, pw):
        return lib.nn.functional.binary_cross_entropy_with_logits(a, b, w, reduction=reduction, pos_weight=pw)
    check_grad(lambda a, b, *pw: f(mg, a, b, None if weight is None else mg.tensor(weight), *(pw or [None])),
               x, y, *([] if pos_weight is None else [pos_weight]))
    # PyTorch refuses gradients for weight and pos_weight: the mirror compares input's and target's
    assert_mirror(*run_both(f), x, y, weight, pos_weight, grads=[True, True, False, False])


def test_binary_cross_entropy_with_logits_is_stable_for_huge_logits():
    torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, y = np.array([-800.0, 800.0, -40.0, 40.0]), np.array([1.0, 0.0, 0.3, 0.6])
        out = assert_mirror(*run_both(functional("binary_cross_entropy_with_logits", reduction="none")), x, y)
    np.testing.assert_allclose(out.detach().numpy()[:2], [800, 800], rtol=1e-15)


# ----------------------------------------------------------------------------- kl_div
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_kl_div_gradcheck_and_mirror(reduction, log_target, rng):
    x = np.log(rng.dirichlet(np.ones(5), size=3))
    p = rng.dirichlet(np.ones(5), size=3)
    target = np.log(p) if log_target else p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'mean' warns in both libraries
        gradcheck_and_mirror("kl_div", x, target, reduction=reduction, log_target=log_target)


def test_kl_div_of_a_zero_target_probability_counts_zero(rng):
    x, p = np.log(rng.dirichlet(np.ones(4), size=2)), np.array([[0.5, 0.5, 0.0, 0.0], [0.2, 0.3, 0.1, 0.4]])
    assert_mirror(*run_both(functional("kl_div", reduction="batchmean")), x, p, grads=[True, False])


def test_kl_div_mean_warns_and_bad_reduction_raises():
    x = mg.randn(2, 3)
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(x, x.exp())
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.kl_div(x, x, reduction="foo")


def test_legacy_size_average_and_reduce_flags(rng):
    torch = torch_or_skip()
    x, t = rng.standard_normal((4, 3)), rng.integers(0, 3, 4)
    for size_average, reduce in [(False, None), (None, False), (True, True), (False, True)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = F.nll_loss(mg.tensor(x), mg.tensor(t), size_average=size_average, reduce=reduce)
            theirs = torch.nn.functional.nll_loss(torch.tensor(x), torch.tensor(t), size_average=size_average,
                                                  reduce=reduce)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-14)


# ----------------------------------------------------------------------------- modules
MODULE_CASES = [
    ("L1Loss", {}, "regression"), ("MSELoss", {"reduction": "sum"}, "regression"),
    ("SmoothL1Loss", {"beta": 0.5}, "regression"), ("HuberLoss", {"delta": 0.7, "reduction": "none"}, "regression"),
    ("BCELoss", {}, "probability"), ("BCEWithLogitsLoss", {}, "logit"),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, "log_probability"),
    ("NLLLoss", {"ignore_index": 1}, "classes"), ("CrossEntropyLoss", {"label_smoothing": 0.1}, "classes"),
]


def module_inputs(kind, rng):
    if kind == "regression":
        return regression_pair(rng)
    if kind == "probability":
        return rng.uniform(0.05, 0.95, (3, 4)), rng.random((3, 4))
    if kind == "logit":
        return rng.standard_normal((3, 4)), rng.random((3, 4))
    if kind == "log_probability":
        return np.log(rng.dirichlet(np.ones(4), 3)), np.log(rng.dirichlet(np.ones(4), 3))
    return rng.standard_normal((5, 4)), rng.integers(0, 4, 5)


@pytest.mark.parametrize("name, kwargs, kind", MODULE_CASES, ids=[c[0] for c in MODULE_CASES])
def test_loss_modules_mirror_pytorch(name, kwargs, kind, rng):
    torch = torch_or_replay()
    mg_loss, torch_loss = getattr(mg.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(mg_loss) == repr(torch_loss)
    x, y = module_inputs(kind, rng)
    assert_mirror(mg_loss, torch_loss, x, y, grads=[True, False])


def test_weighted_loss_modules_keep_weights_as_buffers(rng):
    torch = torch_or_replay()
    w, pw = rng.random(4) + 0.5, rng.random(4) + 0.5
    for name, kwargs in [("NLLLoss", {"weight": w}), ("CrossEntropyLoss", {"weight": w}), ("BCELoss", {"weight": w}),
                         ("BCEWithLogitsLoss", {"pos_weight": pw}), ("BCEWithLogitsLoss", {"weight": w, "pos_weight": pw}),
                         ("CrossEntropyLoss", {})]:
        ours = getattr(mg.nn, name)(**{k: mg.tensor(v) for k, v in kwargs.items()})
        theirs = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in kwargs.items()})
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
        kind = "probability" if name == "BCELoss" else "logit" if name.startswith("BCE") else "classes"
        x, y = module_inputs(kind, rng)
        assert_mirror(ours, theirs, x, y, grads=[True, False])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["l1_loss", "huber_loss", "mse_loss"])
def test_elementwise_weighted_regression_losses(name, reduction, rng):
    """'mean' divides by sum(weight) for l1 and mse but by the count for huber, as in PyTorch."""
    x, y = regression_pair(rng)
    weight = rng.random(x.shape) + 0.1
    check_grad(lambda a, b, w: getattr(F, name)(a, b, reduction=reduction, weight=w), x, y, weight)
    assert_mirror(*run_both(functional(name, reduction=reduction)), x, y, grads=[True, True])
    def weighted(lib, a, b, w):
        return getattr(lib.nn.functional, name)(a, b, reduction=reduction, weight=w)
    assert_mirror(*run_both(weighted), x, y, weight, grads=[True, True, False])
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        getattr(F, name)(mg.tensor(x), mg.tensor(y), weight=mg.ones(4))


def test_cross_entropy_takes_pytorchs_positional_arguments(rng):
    """(input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing)"""
    x, t, w = rng.standard_normal((5, 3)), np.array([0, 2, 1, 1, 0]), rng.random(3) + 0.5
    def positional(lib, x, t, w):
        return lib.nn.functional.cross_entropy(x, t, w, None, 1, None, "sum", 0.1)
    assert_mirror(*run_both(positional), x, t, w, grads=[True, False, False])


@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple), n_classes=st.integers(1, 4),
       batched=st.booleans(), reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(),
       ignore_index=st.sampled_from([-100, 0, 2]), seed=st.integers(0, 2 ** 16))
def test_nll_loss_and_cross_entropy_sweep(shape, n_classes, batched, reduction, weighted, ignore_index, seed):
    """Any K-dim shape, class count, reduction, weights and ignore_index: nll_loss and cross_entropy
    mirror PyTorch (forward and input gradient)."""
    rng = np.random.default_rng(seed)
    input_shape = ((2, n_classes) + shape) if batched else (n_classes,)
    x = rng.standard_normal(input_shape)
    target = rng.integers(0, n_classes, input_shape[:1] + input_shape[2:] if batched else ())
    weight = rng.random(n_classes) + 0.5 if weighted else None
    kwargs = dict(reduction=reduction, ignore_index=ignore_index)
    for name in ("nll_loss", "cross_entropy"):
        assert_mirror(*run_both(functional(name, **kwargs)), x, target, weight, grads=[True, False, False])


@pytest.mark.parametrize("loss", ["cross_entropy", "cross_entropy smoothed", "nll_loss"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_an_ignored_position_with_nan_or_infinite_logits_adds_nothing_as_in_pytorch(loss, reduction):
    """Padding positions (target == ignore_index) whose logits or log-probabilities are NaN or infinite, as masked
    positions often are: PyTorch's loss skips them (and masks the label-smoothing term); minigrad's was NaN."""
    torch = torch_or_skip()
    rows = [[float("nan"), 1.0, 0.0], [-float("inf"), -float("inf"), -float("inf")], [float("inf"), 1.0, 2.0],
            [0.5, 0.2, -1.0], [1.5, -0.3, 0.7]]
    results = []
    for lib in (torch, mg):
        x = lib.tensor(rows, dtype=lib.float64, requires_grad=True)
        target = lib.tensor([0, 0, 0, 2, 1])                      # the first three ignored
        weight = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64)
        F = lib.nn.functional
        if loss == "nll_loss":
            y = F.nll_loss(x, target, weight=weight, ignore_index=0, reduction=reduction)
        else:
            y = F.cross_entropy(x, target, weight=weight, ignore_index=0, reduction=reduction,
                                label_smoothing=0.1 if loss.endswith("smoothed") else 0.0)
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y))
        results.append((y.detach().numpy(), g.numpy()))
    for theirs, ours in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, equal_nan=True)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))


_LEGACY_MEAN_CALLS = {   # each loss on small float64 data: ``f(lib, reduction)``
    "l1_loss": lambda L, r, x, p, t, s: L.nn.functional.l1_loss(x, p, reduction=r),
    "mse_loss": lambda L, r, x, p, t, s: L.nn.functional.mse_loss(x, p, reduction=r),
    "cross_entropy": lambda L, r, x, p, t, s: L.nn.functional.cross_entropy(x, t, reduction=r),
    "nll_loss": lambda L, r, x, p, t, s: L.nn.functional.nll_loss(x, t, reduction=r),
    "binary_cross_entropy": lambda L, r, x, p, t, s: L.nn.functional.binary_cross_entropy(p, p.flip(0), reduction=r),
    "bce_with_logits": lambda L, r, x, p, t, s: L.nn.functional.binary_cross_entropy_with_logits(x, p, reduction=r),
    "kl_div": lambda L, r, x, p, t, s: L.nn.functional.kl_div(x, p, reduction=r),
    "huber_loss": lambda L, r, x, p, t, s: L.nn.functional.huber_loss(x, p, reduction=r),
    "smooth_l1_loss": lambda L, r, x, p, t, s: L.nn.functional.smooth_l1_loss(x, p, reduction=r),
    "soft_margin_loss": lambda L, r, x, p, t, s: L.nn.functional.soft_margin_loss(x, s, reduction=r),
    "multi_margin_loss": lambda L, r, x, p, t, s: L.nn.functional.multi_margin_loss(x, t, reduction=r),
    "hinge_embedding_loss": lambda L, r, x, p, t, s: L.nn.functional.hinge_embedding_loss(x, s, reduction=r),
    "cosine_embedding_loss": lambda L, r, x, p, t, s: L.nn.functional.cosine_embedding_loss(x, p, s[:, 0],
                                                                                           reduction=r),
    "triplet_margin_loss": lambda L, r, x, p, t, s: L.nn.functional.triplet_margin_loss(x, p, s, reduction=r),
    "ctc_loss": lambda L, r, x, p, t, s: L.nn.functional.ctc_loss(x.reshape(4, 1, 3).log_softmax(2),
                                                                  L.tensor([[1, 2]]), L.tensor([4]), L.tensor([2]),
                                                                  reduction=r),
    "multilabel_soft_margin_loss": lambda L, r, x, p, t, s: L.nn.functional.multilabel_soft_margin_loss(
        x, (p > 0.5).double(), reduction=r),
    "poisson_nll_loss": lambda L, r, x, p, t, s: L.nn.functional.poisson_nll_loss(x, p, reduction=r),
    "gaussian_nll_loss": lambda L, r, x, p, t, s: L.nn.functional.gaussian_nll_loss(x, p, p + 1, reduction=r),
    "triplet_margin_with_distance_loss": lambda L, r, x, p, t, s: L.nn.functional.triplet_margin_with_distance_loss(
        x, p, s, reduction=r),
}
_NO_LEGACY_MEAN = {"multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
                   "triplet_margin_with_distance_loss"}     # written in Python in PyTorch: they refuse the old name


def _legacy_mean_outcome(lib, name):
    """(the 'elementwise_mean' loss, the 'mean' loss, the warnings' texts), or the error's type and text."""
    g = np.random.default_rng(3)
    x, p = lib.tensor(g.standard_normal((4, 3))), lib.tensor(g.random((4, 3)))
    t, s = lib.tensor([0, 2, 1, 2]), lib.tensor(np.sign(g.standard_normal((4, 3))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            legacy = _LEGACY_MEAN_CALLS[name](lib, "elementwise_mean", x, p, t, s)
        except ValueError as e:
            return "ValueError", str(e)
    return legacy.item(), _LEGACY_MEAN_CALLS[name](lib, "mean", x, p, t, s).item(), [str(w.message) for w in caught]


@pytest.mark.parametrize("name", sorted(_LEGACY_MEAN_CALLS))
def test_the_deprecated_elementwise_mean_is_mean_where_pytorch_takes_it(name):
    outcome = _legacy_mean_outcome(mg, name)
    if name in _NO_LEGACY_MEAN:
        assert outcome[0] == "ValueError" and "elementwise_mean is not" in outcome[1]
    else:
        legacy, mean, texts = outcome
        assert legacy == mean
        assert texts == ["reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead."]


@pytest.mark.parametrize("name", sorted(_LEGACY_MEAN_CALLS))
def test_the_deprecated_elementwise_mean_as_pytorch(name):
    torch = torch_or_skip()
    ours, theirs = _legacy_mean_outcome(mg, name), _legacy_mean_outcome(torch, name)
    if theirs[0] == "ValueError":
        assert ours == theirs
    else:
        assert ours[2] == theirs[2]
        np.testing.assert_allclose(ours[:2], theirs[:2], rtol=1e-12)
