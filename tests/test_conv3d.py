"""3-D and transposed 1-D/3-D convolutions: F.conv3d, F.conv_transpose1d, F.conv_transpose3d and nn.Conv3d,
nn.ConvTranspose1d, nn.ConvTranspose3d.

* the d-dimensional NumPy lowering equals the direct-loop reference (``conv_reference``), itself checked
  against PyTorch;
* PyTorch mirrors (forward, input, weight and bias gradients, float64) over stride, padding (ints, triples,
  'same', 'valid'), dilation, groups (depthwise included), output_padding, bias, odd and even sizes, swept with
  hypothesis; the fixed cases (kernels larger than the input with padding, batch size 1, unbatched input)
  are in test_conv.py's CASES, which mirrors, gradchecks and double-backward checks them;
* the modules: every padding_mode for Conv3d, output_size, here; their parameter shapes, state_dict keys,
  init bounds and repr with the other convolutions' in test_conv.py (MODULES);
* bad input: PyTorch's exception types, nothing changed.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops.conv import conv_reference, same_padding

from .mirror import assert_mirror, torch_or_skip, torch_raises
from .test_conv import (CASES, assert_module_mirror, assert_raises_like_pytorch, conv_cases, functional, module_pair,
                        operands, rand)

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")
SWEEP = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def padding_pairs(padding, kernel, dilation):
    """A conv3d padding argument as ((before, after), ...) per dimension."""
    if padding == "same":
        return same_padding(kernel, dilation)
    if padding == "valid":
        return ((0, 0),) * 3
    return tuple((p, p) for p in ((padding,) * 3 if isinstance(padding, int) else padding))


def as_triple(value):
    return (value,) * 3 if isinstance(value, int) else value


# --------------------------------------------------------------------------- the lowering = the reference
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases(dims=3))
def test_conv3d_equals_direct_loops(case):
    x, weight, bias, kw = case
    slow = conv_reference(x, weight, bias, as_triple(kw["stride"]), padding_pairs(kw["padding"], weight.shape[2:],
                          kw["dilation"]), kw["dilation"], kw["groups"])
    fast = mg.nn.functional.conv3d(mg.tensor(x), mg.tensor(weight), None if bias is None else mg.tensor(bias), **kw)
    np.testing.assert_allclose(fast.numpy(), slow, rtol=1e-12, atol=1e-12)


def test_reference_against_pytorch():
    """The d-dimensional reference itself is right (one grouped, strided, dilated, padded 3-D case)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    x, w, b = rand(rng, 2, 4, 5, 4, 6), rand(rng, 6, 2, 2, 3, 2), rand(rng, 6)
    theirs = torch.nn.functional.conv3d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=(1, 2, 1),
                                        padding=(1, 0, 2), dilation=(2, 1, 2), groups=2).numpy()
    ours = conv_reference(x, w, b, (1, 2, 1), ((1, 1), (0, 0), (2, 2)), (2, 1, 2), 2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- PyTorch mirrors, swept
@SWEEP
@given(conv_cases(dims=3))
def test_conv3d_mirror(case):
    assert_mirror(*functional("conv3d", case[3]), *operands(*case[:3]))


@SWEEP
@given(conv_cases(dims=3, transposed=True))
def test_conv_transpose3d_mirror(case):
    assert_mirror(*functional("conv_transpose3d", case[3]), *operands(*case[:3]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases(dims=1, transposed=True))
def test_conv_transpose1d_mirror(case):
    """On both backends: 1-D runs the 2-D lowering, whose copies are numba kernels on the numba backend."""
    for backend in ("numba", "numpy"):
        with mg.kernels.use_backend(backend):
            assert_mirror(*functional("conv_transpose1d", case[3]), *operands(*case[:3]))


# --------------------------------------------------------------------------- fixed cases (in test_conv.py's CASES,
# which mirrors and gradchecks each of them)
@pytest.mark.parametrize("name", ["conv3d strided grouped dilated", "conv_transpose3d strided grouped",
                                  "conv_transpose1d strided grouped"])
def test_float32_forward_and_gradients(name):
    fn, x, w, b, kw = CASES[name]
    out = assert_mirror(*functional(fn, kw), *[a.astype(np.float32) for a in operands(x, w, b)], rtol=1e-5, atol=1e-5)
    assert out.dtype == mg.float32


# --------------------------------------------------------------------------- modules (their cases, init and repr
# checks are in test_conv.py's MODULES and tests)
@settings(max_examples=15, deadline=None)
@given(mode=st.sampled_from(["zeros", "reflect", "replicate", "circular"]),
       padding=st.one_of(st.integers(0, 2), st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
                         st.just("same")),
       kernel=st.integers(1, 3), dilation=st.integers(1, 2), size=st.integers(3, 4), batch=st.integers(0, 2),
       seed=st.integers(0, 100))
def test_padding_modes_against_pytorch(mode, padding, kernel, dilation, size, batch, seed):
    ours, theirs = module_pair("Conv3d", (2, 3, kernel), dict(padding=padding, dilation=dilation, padding_mode=mode))
    span = dilation * (kernel - 1) + 1
    spatial = tuple(max(n, span) for n in (size, size - 1, size))              # the kernel fits without padding
    shape = (batch,) * (batch > 0) + (2,) + spatial                            # batch 0: unbatched
    assert_module_mirror(ours, theirs, shape, seed)


@pytest.mark.parametrize("name, shape, sizes", [
    ("ConvTranspose1d", (1, 2, 4), ([12], [1, 3, 11], [10])),
    ("ConvTranspose1d", (2, 4), ([3, 12], [10])),                                   # unbatched: (C, L) may lead
    ("ConvTranspose3d", (1, 2, 2, 3, 2), ([5, 8, 6], [1, 3, 4, 7, 6])),
])
def test_conv_transpose_output_size(name, shape, sizes):
    ours, theirs = module_pair(name, (2, 3, 3), dict(stride=3, padding=1))
    torch = torch_or_skip()
    x = np.random.default_rng(0).standard_normal(shape)
    for size in sizes:
        ym, yt = ours(mg.tensor(x), output_size=size), theirs(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, shape, size", [
    ("ConvTranspose1d", (1, 2, 4), [13]),                     # beyond the largest output
    ("ConvTranspose1d", (1, 2, 4), [1, 2, 3, 12]),            # too many sizes
    ("ConvTranspose1d", (2, 4), [1, 3, 12]),                  # unbatched: at most (C, L)
    ("ConvTranspose3d", (1, 2, 2, 3, 2), [5, 8]),
    ("ConvTranspose3d", (1, 2, 2, 3, 2), [5, 8, 3]),          # below the smallest output
])
def test_conv_transpose_bad_output_size(name, shape, size):
    ours, theirs = module_pair(name, (2, 3, 3), dict(stride=3, padding=1))
    torch = torch_or_skip()
    x = np.random.default_rng(0).standard_normal(shape)
    with pytest.raises(ValueError) as expected:
        theirs(torch.tensor(x), output_size=size)
    with pytest.raises(ValueError) as got:
        ours(mg.tensor(x), output_size=size)
    assert str(got.value).split(" (")[0] == str(expected.value).split(" (")[0]


def test_top_level_names():
    torch = torch_or_skip()
    for name in ("conv3d", "conv_transpose1d", "conv_transpose3d"):
        assert hasattr(torch, name) and getattr(mg, name) is getattr(mg.nn.functional, name)


# --------------------------------------------------------------------------- bad input
RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3, 4, 5, 5))
X1 = X[:, :, 0, 0]                                                                   # (2, 3, 5)
W = RNG.standard_normal((4, 3, 3, 3, 3))
BAD_CALLS = {
    "wrong channel count": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(W[:, :2])),
    "wrong channel count, unbatched": lambda lib, F: F.conv3d(lib.tensor(X[0, :2]), lib.tensor(W)),
    "kernel larger than the padded input": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(np.ones((4, 3, 6, 3, 3)))),
    "dilated kernel larger": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(W), dilation=(1, 3, 1)),
    "groups not dividing out channels": lambda lib, F: F.conv3d(lib.tensor(X[:, :2]),
                                                                lib.tensor(np.ones((3, 1, 3, 3, 3))), groups=2),
    "groups not dividing in channels": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(np.ones((4, 1, 3, 3, 3))),
                                                               groups=2),
    "negative padding": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(W), padding=(0, -1, 0)),
    "same with stride 2": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(W), padding="same", stride=2),
    "3-D input": lambda lib, F: F.conv3d(lib.tensor(X[0, 0]), lib.tensor(W)),
    "two strides for conv3d": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(W), stride=(1, 2)),
    "bias of the wrong size": lambda lib, F: F.conv3d(lib.tensor(X), lib.tensor(W), lib.tensor(np.ones(3))),
    "transposed 3d channels": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(np.ones((4, 2, 3, 3, 3)))),
    "transposed 3d groups not dividing": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(W[:3]), groups=2),
    "transposed 3d negative padding": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(W[:3]), padding=-1),
    "transposed 3d output padding": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(W[:3]), stride=2,
                                                                      output_padding=(0, 2, 0)),
    "transposed 3d negative output padding": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(W[:3]),
                                                                               output_padding=-1),
    "transposed 3d output too small": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(W[:3]), padding=5),
    "transposed 3d string padding": lambda lib, F: F.conv_transpose3d(lib.tensor(X), lib.tensor(W[:3]), padding="same"),
    "transposed 1d channels": lambda lib, F: F.conv_transpose1d(lib.tensor(X1), lib.tensor(np.ones((4, 2, 3)))),
    "transposed 1d output padding": lambda lib, F: F.conv_transpose1d(lib.tensor(X1), lib.tensor(np.ones((3, 2, 3))),
                                                                      stride=2, output_padding=2),
    "transposed 1d output too small": lambda lib, F: F.conv_transpose1d(lib.tensor(X1), lib.tensor(np.ones((3, 2, 3))),
                                                                        padding=5),
    "transposed 1d negative padding": lambda lib, F: F.conv_transpose1d(lib.tensor(X1), lib.tensor(np.ones((3, 2, 3))),
                                                                        padding=-2),
    "transposed 1d 4-D input": lambda lib, F: F.conv_transpose1d(lib.tensor(X[:, :, 0]),
                                                                 lib.tensor(np.ones((3, 2, 3)))),
    "module: groups not dividing in_channels": lambda lib, F: lib.nn.Conv3d(3, 4, 3, groups=2),
    "module: transposed groups not dividing out_channels": lambda lib, F: lib.nn.ConvTranspose1d(4, 3, 3, groups=2),
    "module: transposed reflect": lambda lib, F: lib.nn.ConvTranspose3d(4, 4, 3, padding_mode="reflect"),
    "module: same with stride 2": lambda lib, F: lib.nn.Conv3d(4, 4, 3, padding="same", stride=2),
    "module: reflect padding too large": lambda lib, F: lib.nn.Conv3d(3, 4, 3, padding=4, padding_mode="reflect")(
        lib.tensor(X, dtype=lib.float32)),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_input_raises_like_pytorch(name):
    assert_raises_like_pytorch(BAD_CALLS[name], X, W, X1)


@pytest.mark.parametrize("name", ["wrong channel count", "kernel larger than the padded input",
                                  "transposed 3d output padding", "transposed 1d output padding",
                                  "transposed 1d output too small", "transposed 3d channels"])
def test_bad_input_messages_like_pytorch(name):
    """Where the message is PyTorch's own text, it is the same."""
    theirs = torch_raises(lambda torch: BAD_CALLS[name](torch, torch.nn.functional))
    assert theirs.type is RuntimeError, theirs
    with pytest.raises(RuntimeError) as ours:
        BAD_CALLS[name](mg, mg.nn.functional)
    assert str(ours.value) == theirs.message


def test_bad_input_leaves_the_module_unchanged():
    layer = mg.nn.Conv3d(3, 4, 2)
    state = {k: v.numpy().copy() for k, v in layer.state_dict().items()}
    x = mg.randn(1, 2, 3, 3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="to have 3 channels, but got 2 channels"):
        layer(x)
    for k, v in layer.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), state[k])
    assert layer.weight.grad is None and x.grad is None
