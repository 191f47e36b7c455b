"""The functional ops besides norms and linear algebra: gelu (and the erf behind it), silu, dropout, softmax,
log_softmax, cross_entropy, mse_loss, scaled_dot_product_attention.

Every op gets a float64 finite-difference gradcheck (no PyTorch needed) and a PyTorch mirror (forward and
every input's gradient under a random upstream gradient, 1e-10), written once as ``f(lib, *tensors)`` with
``lib`` = minigrad or torch. Then the numerics each op promises: no overflow for logits of 1e4, erf to
float64 precision, dropout statistics, ignored targets, fully masked attention rows; and the errors.
"""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops.activation import erf, erfc, normal_cdf

from .mirror import assert_mirror, check_grad, run_both, torch_or_skip


def functional(name, **kwargs):
    """``lib.nn.functional.<name>(*tensors, **kwargs)`` as an ``f(lib, *tensors)`` for ``run_both``."""
    return lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs)


def gradcheck_and_mirror(name, *arrays, **kwargs):
    check_grad(lambda *t: getattr(F, name)(*t, **kwargs), *arrays)
    return assert_mirror(*run_both(functional(name, **kwargs)), *arrays)


@pytest.fixture
def no_warnings():
    """Turn NumPy's overflow/invalid RuntimeWarnings (and any other warning) into errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ----------------------------------------------------------------------------- erf and gelu
def wide_grid():
    """Points in all three of Cody's pieces (|x| <= 0.46875, <= 4, beyond), both signs, and far tails."""
    return np.concatenate([np.linspace(-7, 7, 2801), [0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, 1e-300, 10.0, 26.0,
                                                      -26.0, 27.5, 1e10]])


def test_erf_and_erfc_agree_with_math_to_float64_precision(no_warnings):
    x = wide_grid()
    for ours, reference in ((erf, math.erf), (erfc, math.erfc)):
        expected = np.array([reference(v) for v in x])
        normal = np.abs(expected) > 1e-300  # subnormal results carry fewer significant digits
        np.testing.assert_allclose(ours(x)[normal], expected[normal], rtol=1e-14, atol=0)
        np.testing.assert_allclose(ours(x)[~normal], expected[~normal], atol=1e-300)


def test_erf_special_values_and_float32(no_warnings):
    np.testing.assert_array_equal(erf(np.array([np.inf, -np.inf, np.nan])), [1, -1, np.nan])
    np.testing.assert_array_equal(erfc(np.array([np.inf, -np.inf, np.nan])), [0, 2, np.nan])
    x32 = np.linspace(-5, 5, 101, dtype=np.float32)
    assert erf(x32).dtype == np.float32
    np.testing.assert_allclose(erf(x32), [math.erf(v) for v in x32.astype(np.float64)], rtol=1e-6, atol=1e-7)
    assert erf(np.array(0.25)).shape == () and erf(np.zeros((2, 0))).shape == (2, 0)


def test_normal_cdf_keeps_its_relative_accuracy_deep_in_the_negative_tail():
    x = np.array([-5.0, -12.0, -30.0, -37.0])  # 1 + erf(x / sqrt(2)) is 0 or noise here
    expected = [0.5 * math.erfc(-v / math.sqrt(2)) for v in x]
    np.testing.assert_allclose(normal_cdf(x), expected, rtol=1e-13)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradcheck_and_mirror(approximate, rng):
    x = np.concatenate([rng.standard_normal(12) * 3, [-9.0, -6.0, -1.0, 0.0, 0.5, 6.0, 9.0]])
    gradcheck_and_mirror("gelu", x, approximate=approximate)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_agrees_with_pytorch_over_a_wide_range(approximate):
    torch = torch_or_skip()
    x = np.linspace(-40, 40, 8001)
    expected = torch.nn.functional.gelu(torch.tensor(x), approximate=approximate).numpy()
    np.testing.assert_allclose(F.gelu(mg.tensor(x), approximate=approximate).detach().numpy(), expected, rtol=1e-12, atol=1e-12)


def test_gelu_float16_is_computed_in_float32(rng):
    torch = torch_or_skip()
    x = (rng.standard_normal(50) * 4).astype(np.float16)
    t = mg.tensor(x, requires_grad=True)
    out = F.gelu(t)
    out.backward(mg.ones(50, dtype=mg.float16))
    assert out.dtype == t.grad.dtype == mg.float16
    expected = torch.nn.functional.gelu(torch.tensor(x)).float().numpy()
    np.testing.assert_allclose(out.detach().numpy().astype(np.float32), expected, rtol=1e-3, atol=1e-3)


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(mg.ones(2), approximate="erf")


# ----------------------------------------------------------------------------- silu
def test_silu_gradcheck_and_mirror(rng):
    gradcheck_and_mirror("silu", rng.standard_normal((3, 4)) * 3)


def test_silu_is_stable_for_large_inputs(no_warnings):
    x = np.array([-1000.0, -40.0, 40.0, 1000.0])
    out = assert_mirror(*run_both(functional("silu")), x)
    # silu(-40) = -40 / (1 + exp(40)) ~ -1.7e-16 carries the last-bit rounding of exp, which differs between
    # CPUs' math libraries (NumPy's AVX-512 exp vs others): a few ulps apart, so compared relative to 1e-14
    np.testing.assert_allclose(out.detach().numpy(), [-0.0, -40.0 / (1 + math.exp(40.0)), 40.0, 1000.0], rtol=1e-14, atol=0)
    # exact on any CPU: exp(1000) = inf gives sigmoid 1/inf = 0, exp(-1000) = 0 and exp(-40) ~ 4e-18 vanish
    # next to 1 (sigmoid = 1)
    np.testing.assert_array_equal(out.detach().numpy()[[0, 2, 3]], [0.0, 40.0, 1000.0])


# ----------------------------------------------------------------------------- inplace flags
@pytest.mark.parametrize("name, kwargs", [("relu", {}), ("silu", {}), ("dropout", {"p": 0.0}),
                                          ("dropout", {"p": 0.5, "training": False}), ("dropout", {"p": 0.5})])
def test_inplace_flag_writes_into_the_input_as_pytorch(name, kwargs, rng):
    """``inplace=True`` overwrites the input and returns it, as PyTorch; on a non-leaf it is recorded, on a leaf
    that requires grad it raises PyTorch's error (unless the op is the identity)."""
    torch = torch_or_skip()
    x = rng.standard_normal((3, 4))
    results = []
    for lib, fn in ((torch, getattr(torch.nn.functional, name)), (mg, getattr(F, name))):
        lib.manual_seed(0)
        t = lib.tensor(x)
        out = fn(t, inplace=True, **kwargs)
        assert out is t
        leaf = lib.tensor(x, requires_grad=True)
        try:
            fn(leaf, inplace=True, **kwargs)
            refused = False
        except RuntimeError as e:
            refused = "leaf Variable that requires grad" in str(e)
        results.append((t.numpy(), refused))
    assert results[0][1] == results[1][1]
    if kwargs.get("p") != 0.5 or not kwargs.get("training", True):  # random masks differ between libraries
        np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    else:
        kept = results[1][0] != 0
        np.testing.assert_allclose(results[1][0][kept], 2 * x[kept], rtol=1e-12)
    if kwargs.get("p") != 0.5 or "training" in kwargs:
        gradcheck_and_mirror(name, x, inplace=False, **kwargs)


def test_inplace_activation_in_a_graph_matches_torch(rng):
    torch = torch_or_skip()
    x, g = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    grads = []
    for lib in (torch, mg):
        a = lib.tensor(x, requires_grad=True)
        h = a * 1.5
        lib.nn.functional.silu(h, inplace=True)
        lib.nn.ReLU(inplace=True)(h)
        (h * h * lib.tensor(g)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


# ----------------------------------------------------------------------------- dropout
def test_dropout_statistics():
    mg.manual_seed(0)
    p, n = 0.3, 200_000
    out = F.dropout(mg.ones(n, dtype=mg.float64), p).detach().numpy()
    kept = out != 0
    assert abs(1 - kept.mean() - p) < 0.005                  # about 5 standard deviations
    np.testing.assert_allclose(out[kept], 1 / (1 - p), rtol=1e-15)  # inverted dropout keeps the expectation
    assert abs(out.mean() - 1) < 0.01


def test_dropout_gradient_uses_the_forward_mask(rng):
    p = 0.4
    x = mg.tensor(rng.standard_normal((50, 40)) + 5, requires_grad=True)  # nonzero, so zeros mark dropped
    out = F.dropout(x, p)
    upstream = rng.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    kept = out.detach().numpy() != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() * kept / (1 - p), rtol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), upstream * kept / (1 - p), rtol=1e-15)


def test_dropout_gradcheck_with_a_fixed_mask(rng):
    def fixed_mask_dropout(x):
        mg.manual_seed(3)  # the same mask at every evaluation of the finite differences
        return F.dropout(x, 0.5)
    check_grad(fixed_mask_dropout, rng.standard_normal((4, 5)))


def test_dropout_p0_p1_and_eval():
    x = mg.randn(3, 4, requires_grad=True)
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.5, training=False) is x
    out = F.dropout(x, 1.0)
    np.testing.assert_array_equal(out.detach().numpy(), np.zeros((3, 4)))
    out.backward(mg.ones(3, 4))
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))
    assert out.dtype == x.grad.dtype == mg.float32


def test_dropout_follows_manual_seed():
    x = mg.ones(100)
    mg.manual_seed(7)
    a = F.dropout(x, 0.5).detach().numpy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(F.dropout(x, 0.5).detach().numpy(), a)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_a_probability_outside_0_1(p):
    with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
        F.dropout(mg.ones(3), p)


_DROPOUTS = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
_DROPOUT_DTYPES = ["float32", "bfloat16", "complex64", "int64", "uint8", "bool", "uint16", "float8_e4m3fn"]


def _dropout_outcome(lib, functional, name, shape, dtype, p, training, inplace):
    """What a dropout call does: its exception type and message, or the result's shape and dtype, whether it is the
    input itself, and its values when they are certain (nothing or everything dropped)."""
    import warnings as _warnings
    x = lib.ones(shape, dtype=getattr(lib, dtype))
    try:
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            y = getattr(functional, name)(x, p, training, inplace)
    except Exception as error:
        return type(error).__name__, str(error)
    certain = y.to(lib.float64).flatten().tolist() if p == 1 or not training else None
    return tuple(y.shape), str(y.dtype).rpartition(".")[2], y is x, certain


@pytest.mark.parametrize("name", _DROPOUTS)
def test_dropouts_take_refuse_and_pass_through_as_pytorch(name):
    """Every dropout on every kind of dtype, empty inputs, inputs of too few dims, p in {0, 1, NaN} and eval mode:
    PyTorch draws the noise in the input's dtype (complex and float8 refused), divides it by 1 - p in place (integers
    refused), returns the input itself when nothing is dropped and multiplies by 0 when everything is."""
    torch = torch_or_skip()
    import torch.nn.functional as TF
    wrong = []
    for shape in [(2, 3, 4, 5), (0, 3, 4, 5), (1, 1, 1, 1), (3,), (2, 3), (2, 3, 4)]:
        for dtype in _DROPOUT_DTYPES:
            for p, training in [(0.5, True), (1.0, True), (0.0, True), (float("nan"), True), (0.5, False)]:
                for inplace in (False, True):
                    args = (name, shape, dtype, p, training, inplace)
                    theirs, ours = _dropout_outcome(torch, TF, *args), _dropout_outcome(mg, F, *args)
                    if ours != theirs:
                        wrong.append(f"{args}: {ours}, PyTorch {theirs}")
    assert not wrong, f"{len(wrong)} differ:\n" + "\n".join(wrong[:20])


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_top_level_dropouts_as_pytorch(name):
    """``torch.dropout(input, p, train)`` and its feature, alpha and in-place forms (ATen's own checks: p outside
    [0, 1] is a RuntimeError there) over the same dtypes and shapes as the functional ones."""
    torch = torch_or_skip()
    wrong = []
    for fname in (name, name + "_"):
        for shape in [(2, 3, 4), (0, 3), (3,), (1, 1)]:
            for dtype in _DROPOUT_DTYPES:
                for p, train in [(0.5, True), (1.0, True), (0.0, True), (0.5, False), (float("nan"), True),
                                 (1.5, True)]:
                    outcomes = []
                    for lib in (torch, mg):
                        x = lib.ones(shape, dtype=getattr(lib, dtype))
                        try:
                            y = getattr(lib, fname)(x, p, train)
                            certain = y.to(lib.float64).tolist() if p == 1 or not train else None
                            outcomes.append((tuple(y.shape), str(y.dtype).rpartition(".")[2], y is x, certain))
                        except (RuntimeError, NotImplementedError, ValueError) as error:
                            outcomes.append((type(error).__name__, str(error)))
                    if outcomes[1] != outcomes[0]:
                        wrong.append(f"{fname}{shape, dtype, p, train}: {outcomes[1]}, PyTorch {outcomes[0]}")
    assert not wrong, f"{len(wrong)} differ:\n" + "\n".join(wrong[:20])


# ----------------------------------------------------------------------------- softmax, log_softmax
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_gradcheck_and_mirror(name, dim, rng):
    gradcheck_and_mirror(name, rng.standard_normal((2, 3, 4)), dim=dim)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_large_logits_does_not_overflow(name, rng, no_warnings):
    x = rng.standard_normal((3, 5)) * 1e4
    out = assert_mirror(*run_both(functional(name, dim=1)), x)
    assert np.all(np.isfinite(out.detach().numpy()))


def test_softmax_rows_sum_to_one_and_log_softmax_is_its_log(rng):
    x = mg.tensor(rng.standard_normal((4, 6)) * 30)
    y = x.softmax(-1)
    np.testing.assert_allclose(np.asarray(y).sum(-1), 1, rtol=1e-15)
    np.testing.assert_allclose(np.exp(x.log_softmax(-1).detach().numpy()), y.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(mg.softmax(mg.tensor(2.5), 0).detach().numpy(), 1.0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtype_argument_casts_first(name, rng):
    x = mg.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
    out = getattr(F, name)(x, 1, dtype=mg.float64)
    out.backward(mg.ones(2, 3, dtype=mg.float64))
    assert out.dtype == mg.float64 and x.grad.dtype == mg.float32
    assert_mirror(*run_both(lambda lib, t: getattr(lib.nn.functional, name)(t, 1, dtype=lib.float64)),
                  x.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_float16_softmax_is_computed_in_float32(name, rng):
    x = (rng.standard_normal((3, 8)) * 20).astype(np.float16)  # exp(20) overflows float16
    t = mg.tensor(x, requires_grad=True)
    out = getattr(F, name)(t, -1)
    out.backward(mg.ones(3, 8, dtype=mg.float16))
    assert out.dtype == t.grad.dtype == mg.float16
    expected = getattr(F, name)(mg.tensor(x.astype(np.float32)), -1).detach().numpy().astype(np.float16)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    assert np.all(np.isfinite(out.detach().numpy())) and np.all(np.isfinite(t.grad.numpy()))


def test_softmax_of_an_all_minus_inf_row_is_nan_like_pytorch():
    out = assert_mirror(*run_both(functional("softmax", dim=-1)), np.array([[-np.inf, -np.inf], [0.0, 1.0]]),
                        grads=[False])
    assert np.all(np.isnan(out.detach().numpy()[0]))


def test_softmax_rejects_integer_input_and_bad_dims():
    with pytest.raises(RuntimeError, match="softmax: expected a floating-point input, got int64"):
        F.softmax(mg.tensor([1, 2]), 0)
    np.testing.assert_allclose(F.softmax(mg.tensor([1, 2]), 0, dtype=mg.float64).detach().numpy().sum(), 1.0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.log_softmax(mg.ones(2, 3), 2)


# ----------------------------------------------------------------------------- cross_entropy
def class_targets(rng, input_shape, ignore_index=-100):
    """Class indices for ``input_shape`` (C,), (N, C) or (N, C, *d), with the first one ignored if batched."""
    axis = 1 if len(input_shape) > 1 else 0
    target = rng.integers(0, input_shape[axis], input_shape[:axis] + input_shape[axis + 1:])
    if target.ndim:
        target.flat[0] = ignore_index
    return target


CE_SHAPES = [(5, 4), (2, 4, 3), (2, 4, 3, 2), (4,)]


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", CE_SHAPES, ids=str)
def test_cross_entropy_gradcheck_and_mirror(shape, reduction, weighted, label_smoothing, rng):
    x, target = rng.standard_normal(shape), class_targets(rng, shape)
    n_classes = shape[1 if len(shape) > 1 else 0]
    weight = rng.random(n_classes) + 0.5 if weighted else None
    kwargs = dict(reduction=reduction, label_smoothing=label_smoothing)
    check_grad(lambda t: F.cross_entropy(t, mg.tensor(target), None if weight is None else mg.tensor(weight),
                                         **kwargs), x)
    assert_mirror(*run_both(functional("cross_entropy", **kwargs)), x, target, weight, grads=[True, False, False])


def test_cross_entropy_matches_the_log_softmax_formula_without_torch(rng):
    x, target = rng.standard_normal((6, 5)) * 10, class_targets(rng, (6, 5))
    log_p = x - x.max(1, keepdims=True) - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True))
    per_row = -log_p[np.arange(6), np.maximum(target, 0)] * (target != -100)
    out = F.cross_entropy(mg.tensor(x), mg.tensor(target), reduction="none")
    np.testing.assert_allclose(out.detach().numpy(), per_row, rtol=1e-13)
    mean = F.cross_entropy(mg.tensor(x), mg.tensor(target))
    np.testing.assert_allclose(mean.item(), per_row.sum() / 5, rtol=1e-13)  # 5 targets not ignored


def test_cross_entropy_with_a_custom_ignore_index(rng):
    x, target = rng.standard_normal((6, 4)), np.array([1, 2, 1, 0, 3, 1])
    check_grad(lambda t: F.cross_entropy(t, mg.tensor(target), ignore_index=1), x)
    assert_mirror(*run_both(functional("cross_entropy", ignore_index=1)), x, target)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_class_probabilities(reduction, rng):
    x = rng.standard_normal((3, 4, 2))
    probs = rng.random((3, 4, 2))
    probs /= probs.sum(1, keepdims=True)
    weight = rng.random(4) + 0.5
    kwargs = dict(reduction=reduction, label_smoothing=0.1)
    check_grad(lambda t, p: F.cross_entropy(t, p, mg.tensor(weight), **kwargs), x, probs)
    assert_mirror(*run_both(functional("cross_entropy", **kwargs)), x, probs, weight, grads=[True, True, False])


def test_cross_entropy_of_large_logits_is_stable(rng, no_warnings):
    x = rng.standard_normal((4, 6)) * 1e4
    out = assert_mirror(*run_both(functional("cross_entropy")), x, rng.integers(0, 6, 4))
    assert np.isfinite(out.item())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_with_every_target_ignored(reduction, rng, no_warnings):
    x = rng.standard_normal((3, 4))
    out = assert_mirror(*run_both(functional("cross_entropy", reduction=reduction)), x, np.full(3, -100))
    assert np.isnan(out.item()) if reduction == "mean" else out.item() == 0


def test_cross_entropy_keeps_float32(rng):
    x = mg.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    out = F.cross_entropy(x, mg.tensor([0, 1, 2]))
    out.backward()
    assert out.dtype == x.grad.dtype == mg.float32


@pytest.mark.parametrize("bad", [4, -1, 7])
def test_cross_entropy_target_out_of_range(bad):
    x = mg.randn(3, 4, requires_grad=True)
    with pytest.raises(IndexError, match=f"^Target {bad} is out of bounds.$"):
        F.cross_entropy(x, mg.tensor([0, bad, 5]))
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        F.cross_entropy(mg.randn(2, 4, 3), mg.tensor([[0, 1, 2], [3, -100, bad]]))
    F.cross_entropy(x, mg.tensor([0, 99, 1]), ignore_index=99)  # an ignored target may be anything


def test_cross_entropy_shape_and_argument_errors():
    x = mg.ones(3, 4)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.cross_entropy(x, mg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3, 5\], got \[3, 4\]"):
        F.cross_entropy(mg.ones(3, 4, 5), mg.zeros(3, 4, dtype=mg.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        F.cross_entropy(x, mg.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.cross_entropy(x, mg.tensor([0, 1, 2]), reduction="foo")
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(x, mg.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        F.cross_entropy(x, mg.tensor([0, 1, 2]), mg.ones(3))


# ----------------------------------------------------------------------------- mse_loss
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_gradcheck_and_mirror(reduction, rng):
    gradcheck_and_mirror("mse_loss", rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), reduction=reduction)


@pytest.mark.filterwarnings("ignore:Using a target size")
def test_mse_loss_broadcasts_with_pytorchs_warning(rng):
    with pytest.warns(UserWarning, match=r"Using a target size \(\[4\]\) that is different to the input size"):
        F.mse_loss(mg.ones(3, 4), mg.ones(4))
    gradcheck_and_mirror("mse_loss", rng.standard_normal((3, 4)), rng.standard_normal(4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_mse_loss_gradcheck_and_mirror(reduction, rng):
    def f(lib, x, t, w):
        return lib.nn.functional.mse_loss(x, t, reduction=reduction, weight=w)
    x, t, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.random((3, 4)) + 0.1
    check_grad(lambda *a: f(mg, *a), x, t, w)
    assert_mirror(*run_both(f), x, t, w)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(mg.ones(2, 3), mg.ones(2, 3), weight=mg.ones(3))


def test_mse_loss_rejects_an_unknown_reduction():
    with pytest.raises(ValueError, match="elementwise is not a valid value for reduction"):
        F.mse_loss(mg.ones(2), mg.ones(2), reduction="elementwise")


# ----------------------------------------------------------------------------- scaled_dot_product_attention
def attention_inputs(rng, batch=(2,), L=3, S=4, E=5, Ev=2):
    """query (*batch, L, E), key (*batch, S, E), value (*batch, S, Ev)."""
    return tuple(rng.standard_normal(batch + shape) for shape in ((L, E), (S, E), (S, Ev)))


def check_attention(rng, *arrays, grads=None, **kwargs):
    check_grad(lambda *t: F.scaled_dot_product_attention(*t, **kwargs), *arrays)
    return assert_mirror(*run_both(functional("scaled_dot_product_attention", **kwargs)), *arrays, grads=grads)


@pytest.mark.parametrize("batch, L, S", [((2,), 3, 4), ((2, 2), 4, 4), ((), 4, 3)], ids=str)
@pytest.mark.parametrize("is_causal", [False, True])
def test_attention_gradcheck_and_mirror(batch, L, S, is_causal, rng):
    check_attention(rng, *attention_inputs(rng, batch, L, S), is_causal=is_causal)


def test_attention_with_a_custom_scale(rng):
    check_attention(rng, *attention_inputs(rng), scale=0.3)


def test_attention_with_a_boolean_mask_including_a_fully_masked_row(rng):
    mask = rng.random((2, 3, 4)) > 0.4
    mask[0, 1] = False  # query 1 of batch 0 may attend to nothing: zeros, like PyTorch
    out = check_attention(rng, *attention_inputs(rng), mask, grads=[True, True, True, False])
    np.testing.assert_array_equal(out.detach().numpy()[0, 1], 0)


def test_attention_with_a_broadcast_boolean_mask(rng):
    mask = np.tril(np.ones((3, 4), dtype=bool), 1)  # (L, S) shared by the batch
    check_attention(rng, *attention_inputs(rng, (2, 2)), mask, grads=[True, True, True, False])


def test_attention_with_a_float_mask_gets_its_gradient(rng):
    mask = rng.standard_normal((3, 4))
    mask[2, 1] = -np.inf
    check_attention(rng, *attention_inputs(rng), mask)


def test_attention_dropout_keeps_the_expectation(rng):
    q, k, v = (mg.tensor(a) for a in attention_inputs(rng, (1,), 2, 3))
    expected = F.scaled_dot_product_attention(q, k, v).detach().numpy()
    mg.manual_seed(0)
    draws = [F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).detach().numpy() for _ in range(4000)]
    assert not np.allclose(draws[0], expected)
    np.testing.assert_allclose(np.mean(draws, axis=0), expected, atol=0.05)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_mask_and_causal_combine(rng, kind):
    """PyTorch 2.13 combines an explicit mask with is_causal: the causal triangle and the mask both apply."""
    mask = rng.random((3, 3)) > 0.3 if kind == "bool" else rng.standard_normal((3, 3))

    def f(lib, q, k, v):
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=lib.tensor(mask), is_causal=True)
    assert_mirror(*run_both(f), *(rng.standard_normal((1, 2, 3, 4)) for _ in range(3)))


@pytest.mark.parametrize("q_heads, kv_heads, is_causal", [(6, 3, False), (6, 2, True), (4, 1, False), (3, 3, True)])
def test_grouped_query_attention_gradcheck_and_mirror(q_heads, kv_heads, is_causal, rng):
    """enable_gqa: each key/value head serves q_heads // kv_heads consecutive query heads; its gradient sums
    over them."""
    q, k, v = attention_inputs(rng, (2, q_heads), 3, 4)
    check_attention(rng, q, k[:, :kv_heads], v[:, :kv_heads], is_causal=is_causal, enable_gqa=True)


def test_grouped_query_attention_is_attention_with_repeated_heads(rng):
    """The same output as repeating key's and value's heads by hand, as LLaMA's repeat_kv does, with a mask."""
    q, k, v = (mg.tensor(a) for a in attention_inputs(rng, (1, 4), 3, 5))
    k, v = k[:, :2], v[:, :2]
    mask = mg.tensor(rng.random((3, 5)) > 0.3)
    grouped = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True).numpy()
    by_hand = F.scaled_dot_product_attention(q, *(mg.tensor(np.repeat(t.numpy(), 2, axis=1)) for t in (k, v)),
                                           attn_mask=mask)
    np.testing.assert_allclose(grouped, by_hand.numpy(), rtol=1e-12, atol=0)
    with pytest.raises(RuntimeError, match="must match the size"):    # without the flag: PyTorch's broadcast error
        F.scaled_dot_product_attention(q, k, v)


@pytest.mark.parametrize("shapes, error, pattern", [
    (((2, 6, 5, 4), (2, 4, 7, 4), (2, 4, 7, 3)), RuntimeError, "Number of heads in key and value must divide"),
    (((2, 6, 5, 4), (2, 0, 7, 4), (2, 0, 7, 3)), RuntimeError, "Number of heads in key and value must divide"),
    (((5, 4), (7, 4), (7, 3)), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\]"),
], ids=["not a divisor", "no heads", "2-d"])
def test_grouped_query_attention_errors(shapes, error, pattern):
    q, k, v = (mg.ones(*s) for s in shapes)
    with pytest.raises(error, match=pattern):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    with pytest.raises(TypeError, match="argument 'enable_gqa' must be bool, not int"):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=1)


def test_attention_errors():
    q = mg.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"got shapes \[2, 3, 4\], \[2, 3, 5\], \[2, 3, 4\]"):
        F.scaled_dot_product_attention(q, mg.ones(2, 3, 5), q)
