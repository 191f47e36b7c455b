"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch: structure and state_dict, forward's output and loss, log_prob,
predict, the gradients of the input and of every parameter, and the errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

RTOL, ATOL = 1e-10, 1e-12


def _pair(torch, in_features, n_classes, cutoffs, **kwargs):
    """The PyTorch module (float64) and minigrad's, loaded with its state_dict."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Initializing zero-element tensors is a no-op")
        theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, dtype=torch.float64, **kwargs)
        ours = mg.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, dtype=mg.float64, **kwargs)
    ours.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def _targets(rng, n, n_classes, cutoffs):
    """n targets with at least one in the shortlist and in every cluster, the rest uniform, shuffled."""
    bounds = [0, *cutoffs, n_classes]
    one_per_band = [rng.integers(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]
    return rng.permutation(np.concatenate([one_per_band, rng.integers(0, n_classes, n - len(one_per_band))]))


def _close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL, atol=ATOL)


def _backward_both(theirs_pair, ours_pair, upstream=None):
    """Backpropagate (the same random upstream gradient when given) and compare the input's and every
    parameter's gradient; then clear them."""
    (t_mod, t_x, t_out), (m_mod, m_x, m_out) = theirs_pair, ours_pair
    if upstream is None:
        t_out.backward()
        m_out.backward()
    else:
        t_out.backward(t_x.new_tensor(upstream))
        m_out.backward(mg.tensor(upstream))
    _close(m_x.grad, t_x.grad)
    t_params, m_params = dict(t_mod.named_parameters()), dict(m_mod.named_parameters())
    assert t_params.keys() == m_params.keys()
    for name, p in t_params.items():
        if p.grad is None:                      # a tail no target reached (unbatched input)
            assert m_params[name].grad is None, name
        else:
            assert m_params[name].grad is not None, name
            _close(m_params[name].grad, p.grad)
    for mod, x in ((t_mod, t_x), (m_mod, m_x)):
        mod.zero_grad(set_to_none=True)
        x.grad = None


CONFIGS = [  # in_features, n_classes, cutoffs, kwargs
    (16, 20, [4, 9, 15], dict(div_value=2.0)),
    (12, 30, (10,), dict()),
    (8, 13, [3, 6], dict(head_bias=True, div_value=2.0)),
]
ZERO_HIDDEN = (16, 25, [5, 10, 20], dict(div_value=8.0))   # the last tail's hidden size is 16 // 512 = 0


def test_structure_and_state_dict_match():
    torch = torch_or_skip()
    for in_features, n_classes, cutoffs, kwargs in CONFIGS + [ZERO_HIDDEN]:
        theirs, ours = _pair(torch, in_features, n_classes, cutoffs, **kwargs)
        for attr in ("in_features", "n_classes", "cutoffs", "div_value", "head_bias", "shortlist_size",
                     "n_clusters", "head_size"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
               {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        assert isinstance(ours.head, mg.nn.Linear) and isinstance(ours.tail, mg.nn.ModuleList)
        assert all(isinstance(p, mg.nn.Sequential) and len(p) == 2 for p in ours.tail)
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}-{list(c[2])}-{c[3]}")
def test_forward_log_prob_predict_and_grads(config):
    torch = torch_or_skip()
    in_features, n_classes, cutoffs, kwargs = config
    rng = np.random.default_rng(len(cutoffs) + in_features)
    theirs, ours = _pair(torch, in_features, n_classes, cutoffs, **kwargs)
    n = 17
    x, y = rng.standard_normal((n, in_features)), _targets(rng, n, n_classes, cutoffs)
    t_x, m_x = torch.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)

    t_res, m_res = theirs(t_x, torch.tensor(y)), ours(m_x, mg.tensor(y))
    assert type(m_res).__name__ == "_ASMoutput" and m_res._fields == ("output", "loss")
    assert m_res.output.shape == (n,) and m_res.loss.shape == ()
    _close(m_res.output, t_res.output)
    _close(m_res.loss, t_res.loss)
    _backward_both((theirs, t_x, t_res.loss), (ours, m_x, m_res.loss))
    t_res, m_res = theirs(t_x, torch.tensor(y)), ours(m_x, mg.tensor(y))
    _backward_both((theirs, t_x, t_res.output), (ours, m_x, m_res.output), rng.standard_normal(n))

    t_lp, m_lp = theirs.log_prob(t_x), ours.log_prob(m_x)
    assert m_lp.shape == (n, n_classes)
    _close(m_lp, t_lp)
    np.testing.assert_allclose(np.exp(m_lp.detach().numpy()).sum(1), 1.0, rtol=1e-12)
    _backward_both((theirs, t_x, t_lp), (ours, m_x, m_lp), rng.standard_normal((n, n_classes)))

    predicted = ours.predict(m_x)
    assert predicted.dtype == mg.int64
    np.testing.assert_array_equal(predicted.numpy(), theirs.predict(t_x).numpy())
    np.testing.assert_array_equal(predicted.numpy(), m_lp.detach().numpy().argmax(1))


def test_unbatched_input():
    torch = torch_or_skip()
    in_features, n_classes, cutoffs = 16, 16, [3, 8]
    rng = np.random.default_rng(1)
    theirs, ours = _pair(torch, in_features, n_classes, cutoffs)
    for target in (1, 5, 12):                     # shortlist, first cluster, second cluster
        x = rng.standard_normal(in_features)
        t_x, m_x = torch.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
        t_res, m_res = theirs(t_x, torch.tensor(target)), ours(m_x, mg.tensor(target))
        assert m_res.output.shape == () and m_res.loss.shape == ()
        _close(m_res.output, t_res.output)
        _close(m_res.loss, t_res.loss)
        _backward_both((theirs, t_x, t_res.output), (ours, m_x, m_res.output), rng.standard_normal(()))


def test_predict_all_in_shortlist_all_outside_and_mixed():
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    theirs, ours = _pair(torch, 8, 12, [4, 7], head_bias=True)
    x = rng.standard_normal((9, 8))
    t_x, m_x = torch.tensor(x), mg.tensor(x)
    for favoured in ([0, 1, 2, 3], [4, 5], [2, 5]):      # the head's argmax: in the shortlist, outside, both
        bias = np.zeros(6)
        bias[favoured] = 50.0                              # x @ W.T (|.| < 3) picks among the favoured
        with torch.no_grad():
            theirs.head.bias.copy_(torch.tensor(bias))
        ours.head.bias = mg.nn.Parameter(mg.tensor(bias))
        expected = theirs.predict(t_x).numpy()
        np.testing.assert_array_equal(ours.predict(m_x).numpy(), expected)
        np.testing.assert_array_equal(ours.predict(m_x).numpy(), ours.log_prob(m_x).detach().numpy().argmax(1))
    assert (expected < 4).any() and (expected >= 4).any()


def test_batch_of_one_and_empty_batch():
    torch = torch_or_skip()
    theirs, ours = _pair(torch, 6, 10, [2, 5])
    x = np.random.default_rng(3).standard_normal((1, 6))
    t_res, m_res = theirs(torch.tensor(x), torch.tensor([7])), ours(mg.tensor(x), mg.tensor([7]))
    assert m_res.output.shape == (1,)
    _close(m_res.output, t_res.output)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # the mean of nothing
        m_res = ours(mg.zeros(0, 6, dtype=mg.float64), mg.tensor([], dtype=mg.int64))
    assert m_res.output.shape == (0,) and np.isnan(m_res.loss.item())
    assert ours.log_prob(mg.zeros(0, 6, dtype=mg.float64)).shape == (0, 10)
    assert ours.predict(mg.zeros(0, 6, dtype=mg.float64)).shape == (0,)


def test_reset_parameters_redraws_in_linear_bounds():
    mg.manual_seed(0)
    module = mg.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 9], head_bias=True)
    before = {k: v.detach().clone() for k, v in module.state_dict().items()}
    params = list(module.parameters())
    module.reset_parameters()
    assert [id(p) for p in module.parameters()] == [id(p) for p in params]
    for name, value in module.state_dict().items():
        assert not np.array_equal(value.numpy(), before[name].numpy()), name
        fan_in = module.get_submodule(name.rsplit(".", 1)[0]).in_features
        assert np.abs(value.numpy()).max() <= 1 / np.sqrt(fan_in), name


@pytest.mark.parametrize("cutoffs, error, message", [
    ([], ValueError, r"^cutoffs should be a sequence of length larger than 0$"),
    ([5, 3], ValueError, r"^cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                         r"order, where each value is between 1 and n_classes-1$"),
    ([3, 3], ValueError, r"unique, positive integers"),
    ([0, 3], ValueError, r"unique, positive integers"),
    ([-2], ValueError, r"unique, positive integers"),
    ([3, 10], ValueError, r"between 1 and n_classes-1"),
    ([3, 11], ValueError, r"between 1 and n_classes-1"),
    ([2.5], ValueError, r"unique, positive integers"),
    (["a"], TypeError, r"'<=' not supported between instances of 'str' and 'int'"),
    (5, TypeError, r"'int' object is not iterable"),
])
def test_bad_cutoffs(cutoffs, error, message):
    torch = torch_or_skip()
    with pytest.raises(error, match=message):
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
    with pytest.raises(error, match=message):
        mg.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)


@pytest.mark.parametrize("input_shape, target, message", [
    ((3, 8), [1, 2], r"^Input and target should have the same size in the batch dimension\.$"),
    ((3, 8), [[1], [2], [3]], r"^0D or 1D target tensor expected, multi-target not supported$"),
    ((3, 4, 8), [1, 2, 3], r"^1D target tensor expects 2D input tensors, but found inputs with size "
                           r"(torch|minigrad)\.Size\(\[3, 4, 8\]\)$"),
    ((8,), [1] * 8, r"^1D target tensor expects 2D input tensors, but found inputs with size "
                    r"(torch|minigrad)\.Size\(\[8\]\)$"),
    ((2, 8), 1, r"^0D target tensor expects 1D input tensors, but found inputs with size "
                r"(torch|minigrad)\.Size\(\[2, 8\]\)$"),
    ((3, 8), [1, 10, 4], r"^Target values should be in \[0, 9\], but values in range \[1, 10\] were found\. $"),
    ((3, 8), [-1, 4, 2], r"^Target values should be in \[0, 9\], but values in range \[-1, 4\] were found\. $"),
    ((8,), 12, r"^Target values should be in \[0, 9\], but values in range \[12, 12\] were found\. $"),
])
def test_bad_input_and_target(input_shape, target, message):
    torch = torch_or_skip()
    theirs, ours = _pair(torch, 8, 10, [3, 6])
    x = np.random.default_rng(4).standard_normal(input_shape)
    with pytest.raises(RuntimeError, match=message):
        theirs(torch.tensor(x), torch.tensor(target))
    with pytest.raises(RuntimeError, match=message):
        ours(mg.tensor(x), mg.tensor(target))


def test_tail_with_zero_hidden_size_forward():
    torch = torch_or_skip()
    in_features, n_classes, cutoffs, kwargs = ZERO_HIDDEN
    theirs, ours = _pair(torch, in_features, n_classes, cutoffs, **kwargs)
    assert ours.tail[2][0].weight.shape == (0, 16) and ours.tail[2][1].weight.shape == (5, 0)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((11, in_features)), _targets(rng, 11, n_classes, cutoffs)
    t_res, m_res = theirs(torch.tensor(x), torch.tensor(y)), ours(mg.tensor(x), mg.tensor(y))
    _close(m_res.output, t_res.output)
    _close(m_res.loss, t_res.loss)
    _close(ours.log_prob(mg.tensor(x)), theirs.log_prob(torch.tensor(x)))
    np.testing.assert_array_equal(ours.predict(mg.tensor(x)).numpy(), theirs.predict(torch.tensor(x)).numpy())


def test_tail_with_zero_hidden_size_grads():
    torch = torch_or_skip()
    in_features, n_classes, cutoffs, kwargs = ZERO_HIDDEN
    theirs, ours = _pair(torch, in_features, n_classes, cutoffs, **kwargs)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((11, in_features)), _targets(rng, 11, n_classes, cutoffs)
    t_x, m_x = torch.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
    t_res, m_res = theirs(t_x, torch.tensor(y)), ours(m_x, mg.tensor(y))
    _backward_both((theirs, t_x, t_res.output), (ours, m_x, m_res.output), rng.standard_normal(11))
