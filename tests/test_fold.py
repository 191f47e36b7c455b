"""F.unfold / F.fold (im2col and col2im) and nn.Unfold / nn.Fold.

* PyTorch mirrors (forward and gradient, float64) over kernel size, dilation, padding and stride (ints and
  pairs), odd and even sizes, kernels larger than the input with padding, batch sizes 0, 1, 2 and unbatched
  input, swept with hypothesis on both kernel backends;
* the adjoint identity <unfold(x), b> = <x, fold(b)>, and fold(unfold(x)) against PyTorch (not x where
  windows overlap);
* float64 gradchecks and gradgradchecks;
* the modules: repr, no parameters, forward against PyTorch;
* bad input (inconsistent L, channels not divisible by the kernel, kernel larger than the padded input,
  negative padding, wrong ranks): PyTorch's exception types and messages, nothing changed.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import (assert_double_mirror, assert_mirror, check_grad, check_gradgrad, run_both, torch_or_replay,
                     torch_or_skip, torch_raises)

SWEEP = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BACKENDS = ("numba", "numpy")


def pair(value):
    return (value, value) if isinstance(value, int) else value


def windows(size, kernel_size, dilation, padding, stride):
    """How many windows fit per dimension (PyTorch's formula), for the test's own shapes."""
    return [(n + 2 * p - d * (k - 1) - 1) // s + 1
            for n, k, d, p, s in zip(pair(size), pair(kernel_size), pair(dilation), pair(padding), pair(stride))]


@st.composite
def settings_and_size(draw):
    """(size, dict(kernel_size, dilation, padding, stride)) with at least one window: every argument an int or a
    pair, the kernel sometimes larger than the image (then padded enough)."""
    def argument(low, high):
        return draw(st.one_of(st.integers(low, high), st.tuples(st.integers(low, high), st.integers(low, high))))
    kw = dict(kernel_size=argument(1, 4), dilation=argument(1, 2), padding=argument(0, 2), stride=argument(1, 3))
    size = tuple(draw(st.integers(1, 6)) for _ in range(2))
    spans = [d * (k - 1) + 1 for k, d in zip(pair(kw["kernel_size"]), pair(kw["dilation"]))]
    size = tuple(max(n, e - 2 * p) for n, e, p in zip(size, spans, pair(kw["padding"])))   # a window fits
    return size, kw


# --------------------------------------------------------------------------- PyTorch mirrors
@SWEEP
@given(case=settings_and_size(), channels=st.integers(1, 3), batch=st.sampled_from([None, 0, 1, 2]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_unfold_mirror(case, channels, batch, seed):
    size, kw = case
    x = np.random.default_rng(seed).standard_normal(((batch,) if batch is not None else ()) + (channels,) + size)
    for backend in BACKENDS:
        with mg.kernels.use_backend(backend):
            out = assert_mirror(*run_both(lambda lib, t: lib.nn.functional.unfold(t, **kw)), x)
    blocks = np.prod(windows(size, **kw))
    assert out.shape == ((batch,) if batch is not None else ()) + (channels * np.prod(pair(kw["kernel_size"])), blocks)


@SWEEP
@given(case=settings_and_size(), channels=st.integers(1, 3), batch=st.sampled_from([None, 0, 1, 2]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_fold_mirror(case, channels, batch, seed):
    size, kw = case
    rows, blocks = channels * np.prod(pair(kw["kernel_size"])), np.prod(windows(size, **kw))
    blocks_in = np.random.default_rng(seed).standard_normal(((batch,) if batch is not None else ()) + (rows, blocks))
    for backend in BACKENDS:
        with mg.kernels.use_backend(backend):
            out = assert_mirror(*run_both(lambda lib, t: lib.nn.functional.fold(t, size, **kw)), blocks_in)
    assert out.shape == ((batch,) if batch is not None else ()) + (channels,) + size


@SWEEP
@given(case=settings_and_size(), seed=st.integers(0, 2 ** 32 - 1))
def test_fold_is_the_adjoint_of_unfold(case, seed):
    """<unfold(x), b> = <x, fold(b)> for random x and b."""
    size, kw = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3) + size)
    unfolded = mg.nn.functional.unfold(mg.tensor(x), **kw).numpy()
    b = rng.standard_normal(unfolded.shape)
    folded = mg.nn.functional.fold(mg.tensor(b), size, **kw).numpy()
    np.testing.assert_allclose(np.vdot(unfolded, b), np.vdot(x, folded), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kw, overlapping", [(dict(kernel_size=3, padding=1), True),
                                             (dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)), True),
                                             (dict(kernel_size=2, stride=2), False)])
def test_fold_of_unfold_against_pytorch(backend, kw, overlapping):
    """fold(unfold(x)) is x times the number of windows covering each pixel: x itself only without overlaps."""
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 8))
    with mg.kernels.use_backend(backend):
        out = assert_mirror(*run_both(lambda lib, t: lib.nn.functional.fold(lib.nn.functional.unfold(t, **kw),
                                                                            x.shape[2:], **kw)), x)
    assert np.allclose(out.detach().numpy(), x) != overlapping


# --------------------------------------------------------------------------- gradchecks, float32
CASES = {
    "unfold strided dilated padded": ("unfold", np.random.default_rng(0).standard_normal((2, 2, 5, 6)),
                                      dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 1))),
    "unfold kernel larger than the input, padded": ("unfold", np.random.default_rng(1).standard_normal((1, 2, 2, 3)),
                                                    dict(kernel_size=4, padding=2)),
    "unfold unbatched": ("unfold", np.random.default_rng(2).standard_normal((3, 4, 4)), dict(kernel_size=2)),
    "fold strided dilated padded": ("fold", np.random.default_rng(3).standard_normal((2, 12, 24)),
                                    dict(output_size=(5, 6), kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2),
                                         stride=(2, 1))),
    "fold unbatched overlapping": ("fold", np.random.default_rng(4).standard_normal((8, 9)),
                                   dict(output_size=4, kernel_size=2)),
}


def call(name, kw):
    return lambda t: getattr(mg.nn.functional, name)(t, **kw)


@pytest.mark.parametrize("name", CASES)
def test_gradcheck(name):
    fn, x, kw = CASES[name]
    check_grad(call(fn, kw), x)


@pytest.mark.parametrize("name", ["unfold strided dilated padded", "fold strided dilated padded"])
def test_double_backward(name):
    fn, x, kw = CASES[name]
    check_gradgrad(call(fn, kw), x)
    assert_double_mirror(*run_both(lambda lib, t: getattr(lib.nn.functional, fn)(t, **kw)), x)


@pytest.mark.parametrize("name", ["unfold strided dilated padded", "fold strided dilated padded"])
def test_float32(name):
    fn, x, kw = CASES[name]
    out = assert_mirror(*run_both(lambda lib, t: getattr(lib.nn.functional, fn)(t, **kw)), x.astype(np.float32),
                        rtol=1e-6, atol=1e-6)
    assert out.dtype == mg.float32


# --------------------------------------------------------------------------- modules
@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("Unfold", (3,), {}, (2, 3, 5, 6)),
    ("Unfold", ((2, 3),), dict(dilation=2, padding=1, stride=(1, 2)), (3, 5, 6)),
    ("Fold", (5, 3), {}, (2, 18, 9)),
    ("Fold", ((4, 5), (2, 3)), dict(dilation=(2, 1), padding=1, stride=(1, 2)), (6, 12)),    # unbatched
])
def test_modules_like_pytorch(name, args, kwargs, shape):
    torch = torch_or_replay()
    ours, theirs = getattr(mg.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [] and list(ours.parameters()) == []
    x = np.random.default_rng(0).standard_normal(shape)
    assert_mirror(lambda t: ours(t), lambda t: theirs(t), x)


def test_names():
    torch = torch_or_skip()
    for name in ("fold", "unfold"):
        assert callable(getattr(mg.nn.functional, name))
        assert hasattr(mg, name) == hasattr(torch, name)


# --------------------------------------------------------------------------- bad input
X = np.random.default_rng(5).standard_normal((2, 3, 5, 6))
B = np.random.default_rng(6).standard_normal((2, 27, 12))
BAD_CALLS = {
    "fold: inconsistent L": lambda F, t: F.fold(t(B), (6, 6), 3),
    "fold: L for a larger stride": lambda F, t: F.fold(t(B), (5, 6), 3, stride=2),
    "fold: channels not divisible by the kernel": lambda F, t: F.fold(t(B), (5, 6), 4),
    "fold: kernel larger than the padded output": lambda F, t: F.fold(t(B), (2, 2), 3),
    "fold: negative padding": lambda F, t: F.fold(t(B), (5, 6), 3, padding=-1),
    "fold: stride 0": lambda F, t: F.fold(t(B), (5, 6), 3, stride=0),
    "fold: 1-D input": lambda F, t: F.fold(t(B[0, 0]), (5, 6), 3),
    "fold: 4-D input": lambda F, t: F.fold(t(B[None]), (5, 6), 3),
    "fold: three output sizes": lambda F, t: F.fold(t(B), (5, 6, 1), 3),
    "unfold: kernel larger than the input": lambda F, t: F.unfold(t(X), 7),
    "unfold: dilated kernel larger than the padded input": lambda F, t: F.unfold(t(X), 3, dilation=(4, 1), padding=1),
    "unfold: negative padding": lambda F, t: F.unfold(t(X), 3, padding=-1),
    "unfold: stride 0": lambda F, t: F.unfold(t(X), 3, stride=(1, 0)),
    "unfold: dilation 0": lambda F, t: F.unfold(t(X), 3, dilation=0),
    "unfold: kernel 0": lambda F, t: F.unfold(t(X), 0),
    "unfold: three kernel sizes": lambda F, t: F.unfold(t(X), (1, 2, 3)),
    "unfold: three paddings": lambda F, t: F.unfold(t(X), 3, padding=(1, 2, 3)),
    "unfold: 5-D input": lambda F, t: F.unfold(t(X[None]), 3),
    "unfold: no channels": lambda F, t: F.unfold(t(X[:, :0]), 3),
    "unfold: float kernel size": lambda F, t: F.unfold(t(X), 3.0),
}
# PyTorch's message is its own text (not one naming its internals' argument positions): the same here
SAME_MESSAGE = [name for name in BAD_CALLS if "float" not in name and "three" not in name]


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_input_raises_like_pytorch(name):
    theirs = torch_raises(lambda torch: BAD_CALLS[name](torch.nn.functional, torch.tensor), X, B)
    tensors = []

    def keep(a):
        tensors.append(mg.tensor(a, requires_grad=True))
        return tensors[-1]
    before = [a.copy() for a in (X, B)]
    with pytest.raises(theirs.type) as ours:
        BAD_CALLS[name](mg.nn.functional, keep)
    if name in SAME_MESSAGE:
        assert str(ours.value) == theirs.message
    else:
        assert any(w in str(ours.value) for w in ("kernel_size", "padding", "output_size")), str(ours.value)
    for a, b in zip((X, B), before):
        np.testing.assert_array_equal(a, b)
    assert all(t.grad is None for t in tensors)
