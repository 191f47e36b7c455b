"""PyTorch's OpInfo samples for the nn.functional names added with the module database work: losses (margin,
ranking, likelihood, CTC, linear_cross_entropy), bilinear, embedding(_bag), pdist, lp/fractional pooling,
upsample_*, multi_head_attention_forward, alpha dropouts. Float64 samples with gradients of a random upstream
compared with PyTorch (``tests/opinfo_util.py``), error inputs raising PyTorch's exception type, and the
deliberately wrong backwards these comparisons must catch.

Random ops are made comparable rather than skipped: fractional max pooling gets PyTorch's samples
(``_random_samples``) passed explicitly, multi_head_attention_forward runs without dropout, and the alpha
dropouts are compared in eval mode and checked against their formula in training mode.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import ctc as ctc_module
from minigrad.ops import linalg as linalg_module

from .mirror import assert_mirror, run_both, torch_or_skip
from .opinfo_util import assert_raises_like, compare_sample, error_inputs, opinfos, resolve, samples

F = mg.nn.functional
SAMPLES_PER_OP = 24     # a fixed spread of each op's samples

NAMES = ["alpha_dropout", "bilinear", "ctc_loss", "embedding", "embedding_bag", "feature_alpha_dropout",
         "fractional_max_pool2d", "fractional_max_pool3d", "gaussian_nll_loss", "hinge_embedding_loss",
         "linear_cross_entropy", "margin_ranking_loss", "multi_head_attention_forward", "multi_margin_loss",
         "multilabel_margin_loss", "multilabel_soft_margin_loss", "pdist", "poisson_nll_loss", "soft_margin_loss",
         "triplet_margin_with_distance_loss", "upsample_bilinear", "upsample_nearest"]


def _ops(with_error_inputs=False):
    """(name, variant) of the OpInfos under test (those with error inputs only, if asked)."""
    try:
        return [(op.name, op.variant_test_name) for name in NAMES for op in opinfos("nn.functional." + name)
                if op.error_inputs_func is not None or not with_error_inputs]
    except BaseException:   # no PyTorch: one placeholder case that skips
        return [(None, None)]


def _op(name, variant):
    torch_or_skip()
    if name is None:
        pytest.skip("PyTorch's op database is not importable")
    return opinfos(name, variant)[0]


# --------------------------------------------------------------------------- PyTorch's calling conventions
def _weight_first(fn):
    """embedding and embedding_bag's OpInfos call ``op(weight, indices, ...)``."""
    return lambda weight, indices, *args, **kwargs: fn(indices, weight, *args, **kwargs)


def _with_mg_distance(*args, distance_function=None, **kwargs):
    """triplet_margin_with_distance_loss's samples pass ``torch.nn.PairwiseDistance()``: minigrad's twin."""
    if distance_function is not None:
        d = distance_function
        distance_function = mg.nn.PairwiseDistance(p=d.norm, eps=d.eps, keepdim=d.keepdim)
    return F.triplet_margin_with_distance_loss(*args, distance_function=distance_function, **kwargs)


def _minigrad_fn(op):
    short = op.name.rpartition(".")[2]
    if short in ("embedding", "embedding_bag"):
        return _weight_first(getattr(F, short))
    if short == "triplet_margin_with_distance_loss":
        return _with_mg_distance
    return resolve(op)


def _deterministic(op, sample):
    """The sample made comparable: PyTorch's random draws passed in, dropout off; None for a random sample that
    has no deterministic form here (the alpha dropouts in training: ``test_alpha_dropout_formula``)."""
    torch = torch_or_skip()
    from torch.testing._internal.opinfo.core import SampleInput
    short = op.name.rpartition(".")[2]
    if short.startswith("fractional_max_pool"):
        x = sample.input
        d = 2 if short.endswith("2d") else 3
        n, c = (x.shape[0], x.shape[1]) if x.ndim == d + 2 else (1, x.shape[0])
        draws = torch.rand(n, c, d, dtype=x.dtype, generator=torch.Generator().manual_seed(n * 31 + c))
        return SampleInput(x, args=sample.args, kwargs={**sample.kwargs, "_random_samples": draws})
    if short == "multi_head_attention_forward":
        args = list(sample.args)
        args[9] = 0.0                                                    # dropout_p
        return SampleInput(sample.input, args=tuple(args), kwargs={**sample.kwargs, "training": False})
    if short.endswith("alpha_dropout") and sample.kwargs.get("training", False):
        return None
    return sample


@pytest.mark.parametrize("name, variant", _ops())
def test_samples_agree_with_pytorch(name, variant):
    op = _op(name, variant)
    fn = _minigrad_fn(op)
    compared = 0
    for sample in samples(op, limit=SAMPLES_PER_OP):
        sample = _deterministic(op, sample)
        if sample is None:
            continue
        compare_sample(op, sample, fn)
        compared += 1
    assert compared, f"{name}: no deterministic sample compared"


@pytest.mark.parametrize("name, variant", _ops(with_error_inputs=True))
def test_error_inputs_raise_pytorchs_type(name, variant):
    op = _op(name, variant)
    errors = error_inputs(op)
    assert errors, f"{name}: no error inputs generated"
    for error in errors:
        assert_raises_like(op, error, _minigrad_fn(op))


# --------------------------------------------------------------------------- beyond the database
SELU_SATURATION = 1.6732632423543772 * 1.0507009873554805   # lambda alpha, from the SELU paper


@pytest.mark.parametrize("fn, mask_shape", [(F.alpha_dropout, (400, 50)), (F.feature_alpha_dropout, (400, 50, 1))])
def test_alpha_dropout_formula(fn, mask_shape):
    """Training mode: y = x (a m) + a alpha' (m - 1 + p), the mask m read off the gradient (dx = dout a m), with
    a = ((1 - p)(1 + p alpha'^2))^(-1/2); standard normal input keeps mean 0 and variance 1."""
    p = 0.2
    x = mg.tensor(np.random.default_rng(0).standard_normal((400, 50, 8)), requires_grad=True)
    mg.manual_seed(0)
    y = fn(x, p, training=True)
    upstream = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(mg.tensor(upstream))
    a = ((1 - p) * (1 + p * SELU_SATURATION ** 2)) ** -0.5
    slope = x.grad.numpy() / upstream                                    # a m
    m = np.round(slope / a)
    assert set(np.unique(m)) == {0.0, 1.0}
    if fn is F.feature_alpha_dropout:                                    # one draw per (n, c) channel
        assert np.all(m == m[:, :, :1])
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * a * m + a * SELU_SATURATION * (m - 1 + p),
                               rtol=1e-12, atol=1e-12)
    assert abs(y.detach().numpy().mean()) < 0.02 and abs(y.detach().numpy().std() - 1) < 0.02
    assert abs(1 - m.mean() - p) < 0.02


def test_alpha_dropout_modules_are_identity_in_eval():
    x = mg.randn(4, 3, 5)
    for module in (mg.nn.AlphaDropout(0.4), mg.nn.FeatureAlphaDropout(0.4)):
        assert module.eval()(x) is x


def test_embedding_bag_scale_grad_by_freq_divides_by_frequency():
    """Each row's gradient divided by its index's count in the batch, as ``embedding(scale_grad_by_freq=True)``
    summed per bag gives it (the oracle: PyTorch's embedding; PyTorch 2.13's CPU embedding_bag divides by a wrong
    count, pytorch/pytorch#190063)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((7, 3))
    bags = np.array([[1, 1, 3, 6], [3, 2, 1, 1]])
    upstream = rng.standard_normal((2, 3))
    w_th = torch.tensor(weight, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(bags), w_th, scale_grad_by_freq=True)
    rows.sum(1).backward(torch.tensor(upstream))
    for mode, scale in (("sum", 1.0), ("mean", 0.25)):
        w_mg = mg.tensor(weight, requires_grad=True)
        out = F.embedding_bag(mg.tensor(bags), w_mg, mode=mode, scale_grad_by_freq=True)
        out.backward(mg.tensor(upstream))
        np.testing.assert_allclose(w_mg.grad.numpy(), w_th.grad.numpy() * scale, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("offsets", [[0, 3, 3, 5], [0, 2, 7], [0, 0], [0, 1, 1]])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_last_bag_runs_to_the_end_of_the_input_as_pytorch(mode, offsets):
    """With include_last_offset, PyTorch's last bag takes every entry from its start to the end of the input, whatever
    offsets[-1] says (it only checks offsets[-1] <= len(input)): values and gradients mirrored."""
    def run(lib, weight):
        return lib.nn.functional.embedding_bag(lib.tensor([1, 2, 4, 4, 3, 2, 0]), weight, lib.tensor(offsets),
                                              mode=mode, include_last_offset=True)
    assert_mirror(*run_both(run), np.random.default_rng(7).standard_normal((7, 3)), rtol=1e-12, atol=1e-13)


def test_ctc_loss_gradient_reaches_logits_as_the_true_gradient():
    """PyTorch's gradient w.r.t. log_probs adds exp(log_probs) to the true one; through log_softmax the logits get
    the true gradient: checked against finite differences."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((6, 2, 4))
    targets = mg.tensor(np.array([[1, 2, 2], [3, 1, 0]]))

    def loss(z):
        return F.ctc_loss(F.log_softmax(z, 2), targets, (6, 5), (3, 2), reduction="sum")
    assert mg.autograd.gradcheck(loss, [mg.tensor(logits, requires_grad=True)])


# --------------------------------------------------------------------------- mutants the comparisons catch
_CTC_BACKWARD = ctc_module.CTCLossFunction.backward


def _wrong_ctc_backward(ctx, dout):
    """The true gradient without PyTorch's exp(log_probs) term: right for the logits, wrong for log_probs."""
    grad, *rest = _CTC_BACKWARD(ctx, dout)
    return (grad - np.exp(ctx.saved_tensors[0]) * dout.numpy()[None, :, None], *rest)


def _unscaled_embedding_backward(ctx, dout):
    """scale_grad_by_freq forgotten."""
    ctx.frequencies = None
    return _EMBEDDING_BACKWARD(ctx, dout)


_EMBEDDING_BACKWARD = linalg_module.Embedding.backward


def _all_samples(op):
    return samples(op)


def _with_frequency_scaling(op):
    """embedding's samples whose indices repeat, with scale_grad_by_freq=True (the database has none)."""
    from torch.testing._internal.opinfo.core import SampleInput
    repeated = [s for s in samples(op) if len(np.unique(s.args[0].numpy())) < s.args[0].numel()
                and "max_norm" not in s.kwargs]
    return [SampleInput(s.input, args=s.args, kwargs={**s.kwargs, "scale_grad_by_freq": True}) for s in repeated]


@pytest.mark.parametrize("name, target, attribute, mutant, pick", [
    ("ctc_loss", ctc_module.CTCLossFunction, "backward", _wrong_ctc_backward, _all_samples),
    ("embedding", linalg_module.Embedding, "backward", _unscaled_embedding_backward, _with_frequency_scaling),
])
def test_a_wrong_backward_is_caught(monkeypatch, name, target, attribute, mutant, pick):
    op = _op("nn.functional." + name, "")
    chosen = pick(op)
    assert chosen, f"no {name} sample exercises the mutated formula"
    for sample in chosen:                  # the real backward agrees ...
        compare_sample(op, sample, _minigrad_fn(op))
    monkeypatch.setattr(target, attribute, staticmethod(mutant))
    failures = 0
    for sample in chosen:                  # ... and the mutant is caught on the gradient
        try:
            compare_sample(op, sample, _minigrad_fn(op))
        except AssertionError as error:
            assert "gradient" in str(error)
            failures += 1
    assert failures, f"the wrong {name} backward passed every sample"


_INTEGER_CALLS = {
    "hardtanh": lambda F, x: F.hardtanh(x), "hardtanh(0, 2)": lambda F, x: F.hardtanh(x, 0, 2),
    "local_response_norm": lambda F, x: F.local_response_norm(x.reshape(2, 2, 2), 2),
    "binary_cross_entropy": lambda F, x: F.binary_cross_entropy(x, x),
    "soft_margin_loss": lambda F, x: F.soft_margin_loss(x, x),
    "hinge_embedding_loss": lambda F, x: F.hinge_embedding_loss(x, x),
    "hinge_embedding_loss sum": lambda F, x: F.hinge_embedding_loss(x, x, margin=1.5, reduction="sum"),
    "hinge_embedding_loss none": lambda F, x: F.hinge_embedding_loss(x, x, reduction="none"),
    "unfold": lambda F, x: F.unfold(x.reshape(1, 2, 2, 2), 1),
    "fold": lambda F, x: F.fold(x.reshape(1, 2, 4), (2, 2), 1),
    "softmin": lambda F, x: F.softmin(x, -1), "softmax": lambda F, x: F.softmax(x, -1),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16"])
def test_functional_ops_on_integer_and_bool_inputs_as_pytorch(dtype):
    """Functions PyTorch has no kernel for in some integer dtypes (im2col, binary_cross_entropy, the average pool
    behind local_response_norm) or computes in them (hinge_embedding_loss fills its margin into the input's dtype;
    soft_margin_loss writes in place; hardtanh's negative limits on unsigned types; softmin negates bools)."""
    torch = torch_or_skip()
    wrong = []
    for name, call in _INTEGER_CALLS.items():
        outcomes = []
        for lib in (torch, mg):
            x = lib.tensor([[1, 0, 2, 3], [1, 1, 0, 2]]).to(getattr(lib, dtype))
            try:
                out = call(lib.nn.functional, x)
                outcomes.append((str(out.dtype).rpartition(".")[2], tuple(out.shape)))
            except (RuntimeError, NotImplementedError, TypeError, ValueError) as error:
                outcomes.append(type(error).__name__)
        if outcomes[1] != outcomes[0]:
            wrong.append(f"{name}: {outcomes[1]}, PyTorch {outcomes[0]}")
    assert not wrong, "\n".join(wrong)
