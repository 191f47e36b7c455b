"""nn.CrossMapLRN2d: PyTorch's forward (checked against a loop oracle and against PyTorch), a backward that is the
derivative of that forward (finite differences of minigrad's forward and of PyTorch's), the double backward, dtypes,
empty input, the module, and bad input. PyTorch's own backward is not that derivative; a test says so."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.ops.norm import localresponse
from minigrad.ops.norm.localresponse import cross_map_lrn2d, cross_map_lrn2d_composite, window_sum

from .mirror import check_grad, check_gradgrad, torch_or_skip
from .norm_kit import mutant

# (channels, size): fewer channels than the window, even and odd sizes, size 1, channel 0 far outside late windows
CASES = [(3, 5), (8, 5), (8, 4), (7, 3), (6, 1), (6, 2), (1, 3), (9, 7)]
OPTIONS = (0.4, 0.75, 1.5)        # alpha, beta, k


def randn(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def running_sum_oracle(x, size, alpha, beta, k):
    """The forward as PyTorch's code describes it, in loops: a running sum of squares over the channels that starts
    with channels 0 .. pre - 1 (pre = (size - 1)//2 + 1), then at each c adds channel c + pre - 1 (if there is one)
    and drops channel c - pre when c > pre."""
    n_batch, n_channels = x.shape[:2]
    pre = (size - 1) // 2 + 1
    square = x * x
    s = np.zeros_like(x)
    s[:, 0] = square[:, :min(pre, n_channels)].sum(axis=1)
    for c in range(1, n_channels):
        s[:, c] = s[:, c - 1]
        if c + pre - 1 < n_channels:
            s[:, c] += square[:, c + pre - 1]
        if c > pre:
            s[:, c] -= square[:, c - pre]
    return x * (k + alpha / size * s) ** -beta


@pytest.mark.parametrize("channels, size", CASES)
def test_forward_is_the_running_sum(channels, size):
    x = randn((2, channels, 3, 2), 0, 2.0)
    y = nn.CrossMapLRN2d(size, *OPTIONS)(mg.tensor(x))
    np.testing.assert_allclose(y.numpy(), running_sum_oracle(x, size, *OPTIONS), rtol=1e-12, atol=1e-14)


def test_channel_zero_is_in_every_window():
    """PyTorch never drops channel 0 from its running sum: changing x[0] moves d at every channel (at size 1
    too), while a channel in the middle moves only its own window."""
    x = randn((1, 7, 1, 1), 1)
    bumped = x.copy()
    bumped[:, 0] += 1.0
    y, y_bumped = (nn.CrossMapLRN2d(1, *OPTIONS)(mg.tensor(a)).numpy() for a in (x, bumped))
    assert np.all(y[:, 1:] != y_bumped[:, 1:])
    bumped = x.copy()
    bumped[:, 4] += 1.0
    y_mid = nn.CrossMapLRN2d(3, *OPTIONS)(mg.tensor(bumped)).numpy()
    y = nn.CrossMapLRN2d(3, *OPTIONS)(mg.tensor(x)).numpy()
    assert np.array_equal(np.flatnonzero(y_mid != y), [3, 4, 5])


@pytest.mark.parametrize("channels, size", CASES)
def test_forward_matches_pytorch(channels, size):
    torch = torch_or_skip()
    x = randn((2, channels, 3, 2), 2, 2.0)
    ours = nn.CrossMapLRN2d(size, *OPTIONS)(mg.tensor(x)).numpy()
    theirs = torch.nn.CrossMapLRN2d(size, *OPTIONS)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 9), h=st.integers(1, 3), w=st.integers(1, 3), size=st.integers(1, 9),
       alpha=st.floats(1e-3, 3.0), beta=st.floats(0.1, 2.0), k=st.floats(0.5, 3.0), seed=st.integers(0, 99))
def test_forward_sweep_against_pytorch(n, c, h, w, size, alpha, beta, k, seed):
    torch = torch_or_skip()
    x = randn((n, c, h, w), seed, 2.0)
    ours = nn.CrossMapLRN2d(size, alpha, beta, k)(mg.tensor(x)).numpy()
    theirs = torch.nn.CrossMapLRN2d(size, alpha, beta, k)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("channels, size", CASES)
def test_gradcheck(channels, size):
    check_grad(lambda x: cross_map_lrn2d(x, size, *OPTIONS), randn((2, channels, 2, 2), 3))


def central_difference_vjp(f, x, g, eps=1e-6):
    """<g, df/dx> by central differences of f (an ndarray function), one element of x at a time."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = np.sum(g * (f(up) - f(down))) / (2 * eps)
    return out


@pytest.mark.parametrize("channels, size", [(8, 5), (6, 2), (5, 3)])
def test_backward_is_the_derivative_of_pytorchs_forward(channels, size):
    """The oracle is PyTorch's forward differentiated numerically; minigrad's backward matches it and PyTorch's
    own backward does not (if a PyTorch release fixes its backward, this test says so, and the docs change)."""
    torch = torch_or_skip()
    x, g = randn((2, channels, 2, 2), 4, 1.5), randn((2, channels, 2, 2), 5)
    module = torch.nn.CrossMapLRN2d(size, *OPTIONS)
    numeric = central_difference_vjp(lambda a: module(torch.tensor(a)).numpy(), x, g)
    t = mg.tensor(x, requires_grad=True)
    nn.CrossMapLRN2d(size, *OPTIONS)(t).backward(mg.tensor(g))
    np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-7, atol=1e-8)
    theirs = torch.tensor(x, requires_grad=True)
    module(theirs).backward(torch.tensor(g))
    assert np.abs(theirs.grad.numpy() - numeric).max() > 1e-3


@pytest.mark.parametrize("size", [1, 4, 5])
def test_fused_equals_composite(size):
    x, g = randn((2, 7, 2, 3), 6), randn((2, 7, 2, 3), 7)
    results = []
    for fn in (cross_map_lrn2d, cross_map_lrn2d_composite):
        t = mg.tensor(x, requires_grad=True)
        y = fn(t, size, *OPTIONS)
        y.backward(mg.tensor(g))
        results.append((y.detach().numpy(), t.grad.numpy()))
    for ours, autograds in zip(*results):
        np.testing.assert_allclose(ours, autograds, rtol=1e-12, atol=1e-14)


def without_the_channel_zero_term(original):
    """A plausible mistake: LocalResponseNorm's backward on the symmetric window, forgetting that channel 0's
    square reaches every divisor (right while the windows cover channel 0, wrong beyond)."""
    def wrong(g, x, d, scale, size, alpha, beta):
        h = (size - 1) // 2
        return g * scale - 2 * alpha * beta / size * x * window_sum(g * x * scale / d, h, h)
    return wrong


def test_gradcheck_catches_a_missing_channel_zero_term():
    planted = mutant(localresponse, "_cross_map_input_grad", without_the_channel_zero_term)
    with planted():
        check_grad(lambda x: cross_map_lrn2d(x, 5, *OPTIONS), randn((2, 3, 2, 2), 8))     # windows hold channel 0
        with pytest.raises(mg.autograd.GradcheckError):
            check_grad(lambda x: cross_map_lrn2d(x, 3, *OPTIONS), randn((2, 6, 2, 2), 8))


@pytest.mark.parametrize("size", [1, 2, 5])
def test_double_backward(size):
    check_gradgrad(lambda x: cross_map_lrn2d(x, size, *OPTIONS), randn((2, 6, 2, 2), 9))


@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-6), ("float16", 2e-3), ("bfloat16", 2e-2)])
def test_low_precision_dtypes_follow_pytorch(dtype, rtol):
    torch = torch_or_skip()
    x = randn((2, 6, 3, 3), 10, 2.0)
    ours = nn.CrossMapLRN2d(3)(mg.tensor(x).to(getattr(mg, dtype)))
    theirs = torch.nn.CrossMapLRN2d(3)(torch.tensor(x).to(getattr(torch, dtype)))
    assert ours.dtype == getattr(mg, dtype) and theirs.dtype == getattr(torch, dtype)
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("shape", [(0, 3, 2, 2), (2, 3, 0, 2)])
def test_empty_input(shape):
    x = mg.zeros(shape, requires_grad=True)
    y = nn.CrossMapLRN2d(3)(x)
    assert y.shape == shape
    y.sum().backward()
    assert x.grad.shape == shape


def test_module_repr_and_state():
    torch = torch_or_skip()
    for args in [(3,), (2, 0.1, 0.5, 2.0)]:
        assert repr(nn.CrossMapLRN2d(*args)) == repr(torch.nn.CrossMapLRN2d(*args))
    module = nn.CrossMapLRN2d(4, alpha=0.3)
    assert module.state_dict() == {} and list(module.parameters()) == []
    assert (module.size, module.alpha, module.beta, module.k) == (4, 0.3, 0.75, 1)
    assert nn.modules.normalization.CrossMapLRN2d is nn.CrossMapLRN2d


@pytest.mark.parametrize("shape, size, error, message", [
    ((2, 3, 4), 3, ValueError, "CrossMapLRN2d: Expected input to be 4D, got 3D instead."),
    ((1, 2, 2, 2, 2), 3, ValueError, "CrossMapLRN2d: Expected input to be 4D, got 5D instead."),
    ((2, 0, 2, 2), 3, IndexError, "CrossMapLRN2d: expected at least one channel, got input of size [2, 0, 2, 2]"),
    ((2, 3, 2, 2), 0, ValueError, "CrossMapLRN2d: size must be at least 1, got 0"),
    ((2, 3, 2, 2), 2.5, TypeError, "CrossMapLRN2d: size must be an int, not float"),
])
def test_bad_input(shape, size, error, message):
    x = randn(shape, 11)
    t = mg.tensor(x, requires_grad=True)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        nn.CrossMapLRN2d(size)(t)
    np.testing.assert_array_equal(t.detach().numpy(), x)
    assert t.grad is None


def test_integer_input_is_refused_as_pytorch_refuses_it():
    with pytest.raises(RuntimeError, match="expected a floating point input, got int64"):
        nn.CrossMapLRN2d(3)(mg.ones((2, 3, 2, 2), dtype=mg.int64))
