"""LocalResponseNorm: the hand-derived backward against finite differences and PyTorch, the double backward,
dtypes, empty and integer input, the module, and bad input."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import Function
from minigrad.ops.norm.localresponse import _divisor, local_response_norm_composite, window_sum

from .mirror import assert_mirror, check_grad, check_gradgrad, run_both, torch_or_skip
from .norm_kit import on_both_backends

SHAPES = [(2, 5, 3), (2, 4, 3, 2), (1, 3, 2, 2, 2), (3, 1, 4)]     # 3-, 4- and 5-D, one channel
OPTIONS = [(1, 1e-4, 0.75, 1.0), (2, 0.5, 0.75, 1.0), (3, 1.0, 0.5, 2.0), (4, 2.0, 1.3, 0.5), (7, 0.3, 0.75, 1.0)]


def randn(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def windowed_sums_by_loops(a, before, after):
    """The windowed channel sum written as explicit loops (the oracle of ``window_sum``)."""
    out = np.zeros_like(a)
    for c in range(a.shape[1]):
        for c2 in range(max(0, c - before), min(a.shape[1], c + after + 1)):
            out[:, c] += a[:, c2]
    return out


@pytest.mark.parametrize("before, after", [(0, 0), (1, 0), (0, 2), (2, 1), (5, 6)])
def test_window_sum_is_the_loop_sum(before, after):
    a = randn((2, 4, 3), 0)
    np.testing.assert_allclose(window_sum(a, before, after), windowed_sums_by_loops(a, before, after), rtol=1e-14)
    np.testing.assert_allclose(window_sum(mg.tensor(a), before, after).numpy(), windowed_sums_by_loops(a, before, after),
                               rtol=1e-14)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("size, alpha, beta, k", OPTIONS)
def test_gradcheck(shape, size, alpha, beta, k):
    check_grad(lambda x: F.local_response_norm(x, size, alpha, beta, k), randn(shape, 1))


@pytest.mark.parametrize("shape", SHAPES[:2])
@pytest.mark.parametrize("size, alpha, beta, k", OPTIONS[1:4])
def test_mirror_against_pytorch(shape, size, alpha, beta, k):
    mg_fn, torch_fn = run_both(lambda lib, x: lib.nn.functional.local_response_norm(x, size, alpha, beta, k))
    assert_mirror(mg_fn, torch_fn, randn(shape, 2, 3.0), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 6), length=st.integers(1, 3), size=st.integers(1, 8),
       alpha=st.floats(1e-3, 3.0), beta=st.floats(0.1, 2.0), k=st.floats(0.5, 3.0), seed=st.integers(0, 99))
def test_mirror_sweep(n, c, length, size, alpha, beta, k, seed):
    mg_fn, torch_fn = run_both(lambda lib, x: lib.nn.functional.local_response_norm(x, size, alpha, beta, k))
    assert_mirror(mg_fn, torch_fn, randn((n, c, length), seed, 2.0), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("size", [2, 3, 4])
def test_fused_equals_composite(size):
    x = randn((2, 5, 3), 3)
    g = randn((2, 5, 3), 4)
    grads = []
    for fn in (F.local_response_norm, local_response_norm_composite):
        t = mg.tensor(x, requires_grad=True)
        y = fn(t, size, 0.7, 0.6, 1.2)
        y.backward(mg.tensor(g))
        grads.append((y.detach().numpy(), t.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


class SameWindowBackward(Function):
    """A plausible mistake: the backward sums over the forward's window W(c) instead of the mirrored W'(j)
    (the same for odd sizes, different for even ones)."""

    @staticmethod
    def forward(ctx, x, size):
        d = _divisor(x._data, size, 1.0, 1.0)
        ctx.save_for_backward(x._data, d)
        ctx.size = size
        return x._data * d ** -0.75

    @staticmethod
    def backward(ctx, dout):
        x, d = ctx.saved_tensors
        g, size, scale = dout._data, ctx.size, d ** -0.75
        wrong = window_sum(g * x * scale / d, size // 2, (size - 1) // 2)    # should be ((size - 1) // 2, size // 2)
        return g * scale - 2 * 0.75 / size * x * wrong, None


def test_gradcheck_catches_the_unmirrored_window():
    x = mg.tensor(randn((2, 5, 3), 5), requires_grad=True)
    assert mg.gradcheck(lambda t: SameWindowBackward.apply(t, 3), [x])          # odd size: W = W', right
    with pytest.raises(mg.autograd.GradcheckError):
        mg.gradcheck(lambda t: SameWindowBackward.apply(t, 4), [x])             # even size: wrong


@pytest.mark.parametrize("size", [2, 3])
def test_double_backward(size):
    check_gradgrad(lambda x: F.local_response_norm(x, size, 0.8, 0.75, 1.0), randn((2, 4, 3), 6))


def test_double_backward_against_pytorch():
    torch = torch_or_skip()
    x, g, h = randn((2, 4, 3), 7), randn((2, 4, 3), 8), randn((2, 4, 3), 9)
    results = []
    for lib, tensor in ((mg, mg.tensor), (torch, torch.tensor)):
        t = tensor(x, requires_grad=True)
        y = lib.nn.functional.local_response_norm(t, 2, 0.9, 0.7, 1.1)
        (dx,) = lib.autograd.grad(y, t, tensor(g), create_graph=True)
        (ddx,) = lib.autograd.grad(dx, t, tensor(h))
        results.append((dx.detach().numpy(), ddx.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_low_precision_dtypes_follow_pytorch(dtype):
    torch = torch_or_skip()
    x = randn((2, 6, 4), 10, 2.0).astype(dtype)
    ours = F.local_response_norm(mg.tensor(x), 3)
    theirs = torch.nn.functional.local_response_norm(torch.tensor(x), 3)
    assert ours.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-6)


def test_integer_input_gives_pytorchs_float_result():
    torch = torch_or_skip()
    x = np.arange(-12, 12).reshape(2, 3, 4)
    ours = F.local_response_norm(mg.tensor(x), 2, alpha=0.5)
    theirs = torch.nn.functional.local_response_norm(torch.tensor(x), 2, alpha=0.5)
    assert ours.dtype == np.float32 and theirs.dtype == torch.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape", [(0, 3, 2), (2, 0, 2), (2, 3, 0)])
def test_empty_input_is_returned_as_it_is(shape):
    x = mg.zeros(shape)
    assert F.local_response_norm(x, 3) is x


def test_module_repr_signature_and_state():
    torch = torch_or_skip()
    for args in [(3,), (2, 0.1, 0.5, 2.0)]:
        assert repr(nn.LocalResponseNorm(*args)) == repr(torch.nn.LocalResponseNorm(*args))
    module = nn.LocalResponseNorm(4, alpha=0.3)
    assert module.state_dict() == {} and list(module.parameters()) == []
    x = randn((2, 5, 3, 3), 11)
    np.testing.assert_allclose(module(mg.tensor(x)).numpy(),
                               torch.nn.LocalResponseNorm(4, alpha=0.3)(torch.tensor(x)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape, size, error, message", [
    ((4, 3), 3, ValueError, "Expected 3D or higher dimensionality input (got 2 dimensions)"),
    ((2, 4, 3), 0, RuntimeError, "local_response_norm(): size should be greater than zero, but got size: 0"),
    ((2, 4, 3), -2, RuntimeError, "local_response_norm(): size should be greater than zero, but got size: -2"),
    ((2, 4, 3), 2.5, TypeError, "local_response_norm(): argument 'size' must be int, not float"),
    ((2, 4, 3), True, TypeError, "local_response_norm(): argument 'size' must be int, not bool"),
])
def test_bad_input(shape, size, error, message):
    torch = torch_or_skip()
    x = randn(shape, 12)
    with pytest.raises(error):                       # PyTorch's exception type
        torch.nn.functional.local_response_norm(torch.tensor(x), size)
    t = mg.tensor(x)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        F.local_response_norm(t, size)
    np.testing.assert_array_equal(t.numpy(), x)


# --------------------------------------------------------------------------- the numba kernels on drawn shapes
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 9), spatial=st.lists(st.integers(1, 23), min_size=1, max_size=2),
       size=st.integers(1, 11), beta=st.sampled_from([0.5, 0.75, 1.0, 0.3, 1.7]), k=st.sampled_from([0.0, 1.0, 2.0]),
       parallel=st.booleans(), seed=st.integers(0, 2**16))
def test_numba_kernels_agree_with_numpy_on_drawn_shapes(n, c, spatial, size, beta, k, parallel, seed):
    """Forward and backward through F.local_response_norm (float64), the numba backend against the NumPy one, on the
    serial path or with every kernel forced onto the parallel one (which cuts images into spans of positions when
    there are fewer than twice the threads): windows wider than the channels, every power branch, k = 0."""
    x, g = randn((n, c, *spatial), seed, 2.0), randn((n, c, *spatial), seed + 1)

    def run():
        t = mg.tensor(x, requires_grad=True)
        y = F.local_response_norm(t, size, alpha=0.4, beta=beta, k=k)
        y.backward(mg.tensor(g))
        return y.detach().numpy(), t.grad.numpy()
    results = on_both_backends(run, parallel)
    for got, want in zip(results["numba"], results["numpy"]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(initial=1.0))
