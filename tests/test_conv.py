"""Convolutions: F.conv1d / conv2d / conv_transpose2d and nn.Conv1d / Conv2d / ConvTranspose2d.

* the fast im2col path equals the direct-loop reference (``conv2d_reference``) over swept geometries;
* float64 gradchecks and PyTorch mirrors (forward and every gradient) over stride, padding (ints, pairs,
  'same', 'valid'), dilation, groups (depthwise included), bias, odd and even sizes, kernels larger than
  the input with padding, one-pixel images, batch size 1 and unbatched input, swept with hypothesis;
* the modules against PyTorch's from one state_dict, every padding_mode; parameter shapes, init, repr;
* double backward (gradgradcheck and PyTorch mirrors; the conv Functions' graph_backward);
* bad input: PyTorch's exception types, nothing changed.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops.conv import Conv, conv2d_reference, same_padding

from .mirror import (assert_double_mirror, assert_mirror, check_grad, check_gradgrad, run_both, torch_or_skip,
                     torch_raises)

# PyTorch warns that 'same' padding with an even kernel may copy the input (minigrad always pads a copy)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")
SWEEP = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rand(rng, *shape):
    return rng.standard_normal(shape)


# --------------------------------------------------------------------------- geometries
@st.composite
def conv_cases(draw, dims=2, transposed=False):
    """(x, weight, bias or None, kwargs) of a valid convolution with small random sizes."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = not transposed and draw(st.booleans()) and groups > 1
    cin = groups * (1 if depthwise else draw(st.integers(1, 2)))
    cout = groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(dims))
    size = tuple(draw(st.integers(1, 7)) for _ in range(dims))
    padding = tuple(draw(st.integers(0, 3)) for _ in range(dims))
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if transposed:
        output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
        out = [(n - 1) * s - 2 * p + e + op for n, s, p, e, op in zip(size, stride, padding, span, output_padding)]
        if any(o < 1 for o in out):
            padding = (0,) * dims
        kwargs = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups)
        weight = rand(rng, cin, cout // groups, *kernel)
    else:
        size = tuple(max(n, e - 2 * p) for n, e, p in zip(size, span, padding))   # the kernel fits the padded input
        mode = draw(st.sampled_from(["ints", "ints", "same", "valid"]))
        if mode == "same":
            stride, padding = (1,) * dims, "same"
        elif mode == "valid":
            size, padding = tuple(max(n, e) for n, e in zip(size, span)), "valid"
        kwargs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        if mode == "ints" and draw(st.booleans()) and len(set(padding)) == 1 and len(set(stride)) == 1:
            kwargs.update(stride=stride[0], padding=padding[0])              # plain ints as well as tuples
        weight = rand(rng, cout, cin // groups, *kernel)
    batch = draw(st.integers(1, 2))
    x = rand(rng, batch, cin, *size)
    bias = rand(rng, cout) if draw(st.booleans()) else None
    return x, weight, bias, kwargs


def functional(name, kwargs):
    """(mg_fn, torch_fn) calling F.<name>(x, w[, b], **kwargs)."""
    return run_both(lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs))


def operands(x, weight, bias):
    return (x, weight) if bias is None else (x, weight, bias)


# --------------------------------------------------------------------------- fast path = reference
def padding_pairs(padding, kernel, dilation):
    if padding == "same":
        return same_padding(kernel, dilation)
    if padding == "valid":
        return ((0, 0), (0, 0))
    p = (padding, padding) if isinstance(padding, int) else padding
    return tuple((q, q) for q in p)


@SWEEP
@given(conv_cases())
def test_fast_path_equals_direct_loops(case):
    x, weight, bias, kw = case
    stride = kw["stride"] if isinstance(kw["stride"], tuple) else (kw["stride"],) * 2
    slow = conv2d_reference(x, weight, bias, stride, padding_pairs(kw["padding"], weight.shape[2:], kw["dilation"]),
                            kw["dilation"], kw["groups"])
    for backend in ("numba", "numpy"):                  # depthwise: numba kernels, or im2col
        with mg.kernels.use_backend(backend):
            fast = mg.nn.functional.conv2d(mg.tensor(x), mg.tensor(weight), None if bias is None else mg.tensor(bias),
                                           **kw)
        np.testing.assert_allclose(fast.numpy(), slow, rtol=1e-12, atol=1e-12, err_msg=backend)


def test_reference_against_pytorch():
    """The reference itself is right (one grouped, strided, dilated, padded case)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    x, w, b = rand(rng, 2, 4, 7, 6), rand(rng, 6, 2, 3, 2), rand(rng, 6)
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=(2, 1),
                                        padding=(1, 2), dilation=(1, 2), groups=2).numpy()
    np.testing.assert_allclose(conv2d_reference(x, w, b, (2, 1), ((1, 1), (2, 2)), (1, 2), 2), theirs, rtol=1e-12,
                               atol=1e-12)


# every stride pattern with taps in more than one row and column phase, explicitly (hypothesis favours stride 1)
@example(seed=1, channels=2, multiplier=2, kernel=(3, 3), stride=(2, 2), dilation=(1, 1), padding=1, size=(7, 8),
         dtype=np.float64, bias=True, output_padding=1, parallel=True)
@example(seed=2, channels=1, multiplier=1, kernel=(3, 2), stride=(2, 1), dilation=(1, 2), padding=(2, 0), size=(6, 7),
         dtype=np.float64, bias=False, output_padding=0, parallel=False)
@example(seed=3, channels=3, multiplier=1, kernel=(2, 3), stride=(1, 2), dilation=(2, 1), padding=0, size=(5, 8),
         dtype=np.float32, bias=True, output_padding=1, parallel=True)
@example(seed=4, channels=2, multiplier=1, kernel=(2, 2), stride=(1, 1), dilation=(1, 1), padding="same", size=(5, 6),
         dtype=np.float64, bias=True, output_padding=0, parallel=False)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), channels=st.integers(1, 3), multiplier=st.integers(1, 2),
       kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)), stride=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)), padding=st.sampled_from([0, 1, 2, (2, 0), "same"]),
       size=st.tuples(st.integers(5, 7), st.integers(5, 8)), dtype=st.sampled_from([np.float64, np.float32]),
       bias=st.booleans(), output_padding=st.integers(0, 1), parallel=st.booleans())
def test_depthwise_numba_kernels_equal_the_numpy_path(seed, channels, multiplier, kernel, stride, dilation, padding,
                                                      size, dtype, bias, output_padding, parallel):
    """Depthwise convolutions run numba kernels on the numba backend, im2col on the numpy backend: the
    same forward and gradients (input, weight, bias), for conv2d and conv_transpose2d, with and without
    bias, symmetric, one-sided and 'same' padding (uneven for an even kernel), an output_padding, on the
    kernels' serial twins and, with the serial threshold at 0, on their parallel versions."""
    if padding == "same":
        stride = (1, 1)                                 # PyTorch allows 'same' only without a stride
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, channels) + size).astype(dtype)
    w = rng.standard_normal((channels * multiplier, 1) + kernel).astype(dtype)
    b = rng.standard_normal(channels * multiplier).astype(dtype) if bias else None
    y = rng.standard_normal((2, channels) + size).astype(dtype)
    wt = rng.standard_normal((channels, multiplier) + kernel).astype(dtype)
    out_pad = tuple(min(output_padding, max(s, d) - 1) for s, d in zip(stride, dilation))
    t_pad = 1 if padding == "same" else np.minimum(padding, 1)
    t_pad = t_pad if np.ndim(t_pad) == 0 else tuple(int(p) for p in t_pad)
    calls = [(lambda x_, w_, b_=None: mg.nn.functional.conv2d(x_, w_, b_, stride=stride, padding=padding,
                                                              dilation=dilation, groups=channels), (x, w, b)),
             (lambda y_, w_, b_=None: mg.nn.functional.conv_transpose2d(
                 y_, w_, b_, stride=stride, padding=t_pad, output_padding=out_pad, dilation=dilation,
                 groups=channels), (y, wt, b))]
    tol = 1e-12 if dtype == np.float64 else 2e-5
    chosen = mg.kernels.get_backend()
    numba_kernels = pytest.importorskip("minigrad.kernels.numba_kernels")
    threshold = numba_kernels.SERIAL_BELOW
    try:
        numba_kernels.SERIAL_BELOW = 0 if parallel else 1 << 40
        for fn, arrays in calls:
            results = []
            for backend in ("numba", "numpy"):
                with mg.kernels.use_backend(backend):
                    inputs = [None if a is None else mg.tensor(a, requires_grad=True) for a in arrays]
                    out = fn(*inputs)
                    out.backward(mg.tensor(np.cos(np.arange(out.numel())).reshape(out.shape).astype(dtype)))
                    results.append([out.detach().numpy()] + [t.grad.numpy() for t in inputs if t is not None])
            assert mg.kernels.get_backend() == chosen
            for ours, reference in zip(*results):
                np.testing.assert_allclose(ours, reference, rtol=tol, atol=tol)
    finally:
        numba_kernels.SERIAL_BELOW = threshold


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), batch=st.integers(1, 3), groups=st.integers(1, 2),
       channels=st.integers(2, 3), kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       stride=st.tuples(st.integers(1, 3), st.integers(1, 3)), dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       padding=st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)), st.tuples(st.integers(0, 2), st.integers(0, 2))),
       size=st.tuples(st.integers(1, 7), st.integers(1, 8)), dtype=st.sampled_from([np.float64, np.float32]),
       parallel=st.booleans())
def test_lowering_copy_kernels_equal_the_numpy_path(seed, batch, groups, channels, kernel, stride, dilation, padding,
                                                    size, dtype, parallel):
    """The im2col lowering's copies (columns, col2im, NCHW <-> rows with the bias) run numba kernels on the
    numba backend and NumPy on the numpy backend: the same arrays (col2im's sums within rounding), on the
    kernels' serial twins and, with the serial threshold at 0, on their parallel versions."""
    from minigrad.kernels import numba_kernels
    from minigrad.ops import conv
    geo = conv.Geometry(size, kernel, stride, padding, dilation, groups)
    if any(n < e for n, e in zip(geo.padded, geo.span)):
        return
    geo = conv.replace(geo, out_size=geo.fitting)
    rng = np.random.default_rng(seed)
    c = groups * channels
    x = rng.standard_normal((batch, c) + size).astype(dtype)
    cols = rng.standard_normal((groups, channels * kernel[0] * kernel[1], batch * geo.out_size[0] * geo.out_size[1]))
    y = rng.standard_normal((batch, c) + geo.out_size).astype(dtype)
    bias = rng.standard_normal(c).astype(dtype)
    cols = cols.astype(dtype)
    results = {}
    for backend in ("numba", "numpy"):
        with mg.kernels.use_backend(backend), pytest.MonkeyPatch.context() as patch:
            if parallel:
                patch.setattr(numba_kernels, "SERIAL_BELOW", 0)
            rows = conv._group_rows(y, groups)
            results[backend] = [conv._columns(x, geo), conv._add_columns(cols, batch, geo), rows,
                                conv._from_group_rows(rows, batch, geo.out_size, bias),
                                conv._from_group_rows(rows, batch, geo.out_size)]
    (fast_cols, fast_x, fast_rows, fast_biased, fast_plain), reference = results["numba"], results["numpy"]
    for exact, ref in zip((fast_cols, fast_rows, fast_biased, fast_plain), reference[:1] + reference[2:]):
        assert exact.dtype == ref.dtype and exact.shape == ref.shape
        np.testing.assert_array_equal(exact, ref)
    np.testing.assert_allclose(fast_x, reference[1], rtol=1e-12 if dtype == np.float64 else 1e-5, atol=1e-12 if
                               dtype == np.float64 else 1e-5)


# --------------------------------------------------------------------------- PyTorch mirrors and gradchecks
def assert_mirror_on_both_backends(name, x, weight, bias, kw):
    """The mirror on the numba backend (depthwise: numba kernels) and on numpy (im2col throughout)."""
    for backend in ("numba", "numpy"):
        with mg.kernels.use_backend(backend):
            assert_mirror(*functional(name, kw), *operands(x, weight, bias))


@SWEEP
@given(conv_cases())
def test_conv2d_mirror(case):
    assert_mirror_on_both_backends("conv2d", *case)


@SWEEP
@given(conv_cases(dims=1))
def test_conv1d_mirror(case):
    assert_mirror_on_both_backends("conv1d", *case)


@SWEEP
@given(conv_cases(transposed=True))
def test_conv_transpose2d_mirror(case):
    assert_mirror_on_both_backends("conv_transpose2d", *case)


RNG = np.random.default_rng(7)
# name: (function name, x, weight, bias, kwargs) -- fixed cases for gradchecks and the edge cases
CASES = {
    "conv2d strided grouped dilated": ("conv2d", rand(RNG, 2, 4, 6, 5), rand(RNG, 4, 2, 2, 3), rand(RNG, 4),
                                       dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    "conv2d depthwise same even kernel": ("conv2d", rand(RNG, 1, 3, 5, 4), rand(RNG, 6, 1, 2, 2), rand(RNG, 6),
                                          dict(padding="same", groups=3)),
    "conv2d kernel larger than input, padded": ("conv2d", rand(RNG, 1, 2, 2, 3), rand(RNG, 3, 2, 4, 5), None,
                                                dict(padding=2)),
    "conv2d one-pixel image": ("conv2d", rand(RNG, 2, 3, 1, 1), rand(RNG, 2, 3, 3, 3), rand(RNG, 2),
                               dict(padding=1)),
    "conv2d one-pixel kernel, stride 3": ("conv2d", rand(RNG, 1, 2, 7, 8), rand(RNG, 3, 2, 1, 1), rand(RNG, 3),
                                          dict(stride=3)),
    "conv2d unbatched": ("conv2d", rand(RNG, 2, 5, 4), rand(RNG, 3, 2, 3, 3), rand(RNG, 3), dict(padding=1)),
    "conv1d strided grouped": ("conv1d", rand(RNG, 2, 4, 9), rand(RNG, 6, 2, 3), rand(RNG, 6),
                               dict(stride=2, padding=1, dilation=2, groups=2)),
    "conv1d unbatched same": ("conv1d", rand(RNG, 3, 6), rand(RNG, 2, 3, 4), None, dict(padding="same")),
    "conv_transpose2d strided": ("conv_transpose2d", rand(RNG, 2, 4, 3, 4), rand(RNG, 4, 3, 3, 2), rand(RNG, 6),
                                 dict(stride=2, padding=1, output_padding=1, groups=2)),
    "conv_transpose2d dilated unbatched": ("conv_transpose2d", rand(RNG, 2, 3, 3), rand(RNG, 2, 3, 2, 2),
                                           rand(RNG, 3), dict(dilation=2, output_padding=(1, 0), stride=(1, 2))),
    "conv_transpose2d one pixel": ("conv_transpose2d", rand(RNG, 1, 2, 1, 1), rand(RNG, 2, 2, 3, 3), None, {}),
}

# the 3-d and transposed 1-d cases (tests/test_conv3d.py has their sweeps, modules and bad input)
R3D = np.random.default_rng(11)
CASES.update({
    "conv3d strided grouped dilated": ("conv3d", rand(R3D, 2, 4, 5, 4, 3), rand(R3D, 4, 2, 2, 2, 1), rand(R3D, 4),
                                       dict(stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)),
    "conv3d depthwise same even kernel": ("conv3d", rand(R3D, 1, 2, 3, 4, 3), rand(R3D, 4, 1, 2, 1, 2), rand(R3D, 4),
                                          dict(padding="same", groups=2)),
    "conv3d kernel larger than input, padded": ("conv3d", rand(R3D, 1, 2, 2, 1, 3), rand(R3D, 2, 2, 3, 3, 4), None,
                                                dict(padding=(1, 1, 1))),
    "conv3d one voxel": ("conv3d", rand(R3D, 2, 1, 1, 1, 1), rand(R3D, 2, 1, 3, 3, 3), rand(R3D, 2), dict(padding=1)),
    "conv3d unbatched valid": ("conv3d", rand(R3D, 2, 4, 3, 5), rand(R3D, 3, 2, 2, 2, 3), rand(R3D, 3),
                               dict(padding="valid", stride=2)),
    "conv_transpose3d strided grouped": ("conv_transpose3d", rand(R3D, 2, 4, 2, 3, 2), rand(R3D, 4, 1, 3, 2, 2),
                                         rand(R3D, 2), dict(stride=(2, 1, 2), padding=1, output_padding=(1, 0, 0),
                                                            groups=2)),
    "conv_transpose3d dilated unbatched": ("conv_transpose3d", rand(R3D, 2, 2, 3, 2), rand(R3D, 2, 2, 2, 2, 2),
                                           rand(R3D, 2), dict(dilation=2, output_padding=(1, 0, 1),
                                                              stride=(1, 1, 2))),
    # stride 1, in_channels <= out_channels: T runs as a convolution of y with the flipped weight
    "conv_transpose3d stride 1, the adjoint convolution": ("conv_transpose3d", rand(R3D, 2, 2, 3, 2, 4),
                                                           rand(R3D, 2, 3, 3, 2, 2), rand(R3D, 3),
                                                           dict(padding=(1, 0, 1), dilation=(1, 2, 1))),
    "conv_transpose3d one voxel": ("conv_transpose3d", rand(R3D, 1, 2, 1, 1, 1), rand(R3D, 2, 1, 2, 3, 2), None, {}),
    "conv_transpose1d strided grouped": ("conv_transpose1d", rand(R3D, 2, 4, 5), rand(R3D, 4, 3, 3), rand(R3D, 6),
                                         dict(stride=3, padding=1, output_padding=2, groups=2, dilation=2)),
    "conv_transpose1d unbatched": ("conv_transpose1d", rand(R3D, 3, 4), rand(R3D, 3, 2, 4), rand(R3D, 2),
                                   dict(padding=2)),
    "conv_transpose1d kernel larger than input": ("conv_transpose1d", rand(R3D, 1, 2, 1), rand(R3D, 2, 3, 5), None,
                                                  dict(padding=1, stride=2, output_padding=1)),
})


@pytest.mark.parametrize("name", CASES)
def test_mirror_cases(name):
    fn, x, w, b, kw = CASES[name]
    assert_mirror(*functional(fn, kw), *operands(x, w, b))


@pytest.mark.parametrize("name", CASES)
def test_gradcheck_cases(name):
    fn, x, w, b, kw = CASES[name]
    check_grad(lambda *t: getattr(mg.nn.functional, fn)(*t, **kw), *operands(x, w, b))


@pytest.mark.parametrize("name", ["conv2d strided grouped dilated", "conv_transpose2d strided", "conv1d unbatched same"])
def test_float32_forward_and_gradients(name):
    fn, x, w, b, kw = CASES[name]
    args = [a.astype(np.float32) for a in operands(x, w, b)]
    out = assert_mirror(*functional(fn, kw), *args, rtol=1e-5, atol=1e-5)
    assert out.dtype == mg.float32


# --------------------------------------------------------------------------- double backward
@pytest.mark.parametrize("name", CASES)
def test_double_backward_mirror(name):
    fn, x, w, b, kw = CASES[name]
    assert_double_mirror(*functional(fn, kw), *operands(x, w, b))


@pytest.mark.parametrize("name", ["conv2d strided grouped dilated", "conv1d strided grouped",
                                  "conv_transpose2d strided", "conv2d depthwise same even kernel",
                                  "conv3d strided grouped dilated", "conv_transpose1d strided grouped"])
def test_gradgradcheck(name):
    fn, x, w, b, kw = CASES[name]
    check_gradgrad(lambda *t: getattr(mg.nn.functional, fn)(*t, **kw), *operands(x, w, b))


@settings(max_examples=8, deadline=None)
@given(conv_cases())
def test_double_backward_sweep(case):
    x, weight, bias, kw = case
    assert_double_mirror(*functional("conv2d", kw), *operands(x, weight, bias))


def test_third_order_against_pytorch():
    """d/dx of <v, d/dw |g|^2> with g = d/dx <y, y>, y = conv(x, w): graph_backwards of graph_backwards."""
    _, x, w, _, kw = CASES["conv2d strided grouped dilated"]
    rng = np.random.default_rng(3)

    def third(lib, x, w):
        out = lib.nn.functional.conv2d(x, w, **kw)
        (gx,) = lib.autograd.grad((out * out * lib.tensor(u)).sum(), [x], create_graph=True)
        (gw,) = lib.autograd.grad((gx * gx).sum(), [w], create_graph=True)
        return lib.autograd.grad((gw * lib.tensor(v)).sum(), [x])[0]

    u = rng.standard_normal(mg.nn.functional.conv2d(mg.tensor(x), mg.tensor(w), **kw).shape)
    v = rng.standard_normal(w.shape)
    torch = torch_or_skip()
    ours = third(mg, mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)).numpy()
    theirs = third(torch, torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_wrong_graph_backward_is_caught(monkeypatch):
    right = Conv.graph_backward

    def wrong(ctx, dout):
        dx, dw, db, _ = right(ctx, dout)
        return dx * 2 if dx is not None else None, dw, db, None

    monkeypatch.setattr(Conv, "graph_backward", staticmethod(wrong))
    fn, x, w, b, kw = CASES["conv2d one-pixel kernel, stride 3"]
    with pytest.raises(mg.autograd.GradcheckError):
        check_gradgrad(lambda *t: mg.nn.functional.conv2d(*t, **kw), x, w, b)
    with pytest.raises(AssertionError):
        assert_double_mirror(*functional(fn, kw), x, w, b)


# --------------------------------------------------------------------------- modules
MODULES = [
    ("Conv2d", (4, 6, 3), dict(stride=1, padding=1, groups=2), (2, 4, 5, 6)),
    ("Conv2d", (3, 4, (2, 3)), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2)), (1, 3, 5, 7)),
    ("Conv2d", (3, 3, 3), dict(padding="same", groups=3, bias=False), (2, 3, 4, 4)),
    ("Conv2d", (3, 2, 4), dict(padding="same", dilation=1), (3, 5, 5)),                  # unbatched, even kernel
    ("Conv2d", (2, 2, 3), dict(padding="valid"), (1, 2, 3, 3)),
    ("Conv1d", (4, 2, 3), dict(stride=2, padding=2, groups=2), (2, 4, 9)),
    ("Conv1d", (2, 3, 4), dict(padding="same"), (2, 7)),                                 # unbatched
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 3, 4)),
    ("ConvTranspose2d", (2, 3, (2, 3)), dict(dilation=2, bias=False), (2, 3, 3)),         # unbatched
]
MODULES += [
    ("Conv3d", (4, 6, 3), dict(stride=1, padding=1, groups=2), (2, 4, 3, 4, 5)),
    ("Conv3d", (3, 4, (2, 3, 1)), dict(stride=(2, 1, 1), padding=(1, 2, 0), dilation=(1, 2, 1)), (1, 3, 4, 5, 3)),
    ("Conv3d", (2, 2, 2), dict(padding="same", groups=2, bias=False), (2, 3, 4, 3)),               # unbatched
    ("Conv3d", (2, 3, 2), dict(padding="valid"), (1, 2, 3, 3, 2)),
    ("ConvTranspose3d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 2, 3, 2)),
    ("ConvTranspose3d", (2, 3, (2, 1, 3)), dict(dilation=2, bias=False), (2, 3, 2, 2)),          # unbatched
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 5)),
    ("ConvTranspose1d", (2, 3, 4), dict(dilation=3, stride=2, output_padding=2, bias=False), (2, 3)),  # unbatched
]


def module_pair(name, args, kwargs):
    torch = torch_or_skip()
    torch.manual_seed(0)            # the same weights every run (a recorded comparison finds its inputs again)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(mg.nn, name)(*args, **kwargs, dtype=mg.float64)
    ours.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def assert_module_mirror(ours, theirs, shape, seed=0):
    torch = torch_or_skip()
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = ours(xm), theirs(xt)
    np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    u = rng.standard_normal(ym.shape)
    ym.backward(mg.tensor(u))
    yt.backward(torch.tensor(u))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-10, err_msg=n)


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES)
def test_module_against_pytorch(name, args, kwargs, shape):
    ours, theirs = module_pair(name, args, kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_module_mirror(ours, theirs, shape)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("transposed", [False, True])
def test_empty_batch_against_pytorch(backend, transposed):
    """A batch of 0 images: empty outputs and input gradients, zero weight and bias gradients (as PyTorch), on
    both backends (grouped, so every reshape of the lowering sees a zero)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    w = rng.standard_normal((6, 2, 3, 3) if transposed else (6, 1, 3, 3))
    b = rng.standard_normal(6 if not transposed else 6)
    x = np.zeros((0, 6 if transposed else 3, 5, 5))
    results = []
    for lib in (mg, torch):
        fn = lib.nn.functional.conv_transpose2d if transposed else lib.nn.functional.conv2d
        tensors = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        with mg.kernels.use_backend(backend):
            out = fn(*tensors, padding=1, groups=3)
            out.backward(lib.ones_like(out))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)


@settings(max_examples=20, deadline=None)
@given(mode=st.sampled_from(["zeros", "reflect", "replicate", "circular"]), dims=st.sampled_from([1, 2]),
       padding=st.one_of(st.integers(0, 2), st.tuples(st.integers(0, 2), st.integers(0, 2)), st.just("same")),
       kernel=st.integers(1, 3), dilation=st.integers(1, 2), size=st.integers(3, 5), batch=st.integers(0, 2),
       seed=st.integers(0, 100))
def test_padding_modes_against_pytorch(mode, dims, padding, kernel, dilation, size, batch, seed):
    if isinstance(padding, tuple):
        padding = padding[:dims]
    name = f"Conv{dims}d"
    ours, theirs = module_pair(name, (2, 3, kernel), dict(padding=padding, dilation=dilation, padding_mode=mode))
    shape = (batch,) * (batch > 0) + (2,) + (size,) * dims                     # batch 0: unbatched
    assert_module_mirror(ours, theirs, shape, seed)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_padding_mode_double_backward(mode):
    ours, theirs = module_pair("Conv2d", (2, 3, 3), dict(padding=2, padding_mode=mode))
    rng = np.random.default_rng(0)
    w, b = ours.weight.detach().numpy(), ours.bias.detach().numpy()

    def f(lib, x, w, b):
        layer = ours if lib is mg else theirs
        x = layer._padded_input(x)[0] if lib is mg else lib.nn.functional.pad(x, layer._reversed_padding_repeated_twice,
                                                                              mode=mode)
        return lib.nn.functional.conv2d(x, w, b)
    assert_double_mirror(*run_both(f), rng.standard_normal((1, 2, 4, 3)), w, b)


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES)
def test_parameters_and_repr_like_pytorch(name, args, kwargs, shape):
    torch = torch_or_skip()
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(mg.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for attribute in ("kernel_size", "stride", "padding", "dilation", "output_padding", "groups", "padding_mode"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours._reversed_padding_repeated_twice == list(theirs._reversed_padding_repeated_twice)
    for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == m and p.shape == tuple(q.shape) and p.dtype == mg.float32


def test_init_bounds():
    """weight ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform with a=sqrt(5)), bias the same bound; fan_in
    is weight.shape[1] * kernel volume (for the transposed layers, out_channels/groups * kernel volume)."""
    for layer, fan_in in ((mg.nn.Conv2d(8, 64, 3, groups=2), 4 * 9), (mg.nn.ConvTranspose2d(8, 64, 3, groups=2), 32 * 9),
                          (mg.nn.Conv1d(6, 200, 5), 6 * 5), (mg.nn.Conv3d(8, 64, 3, groups=2), 4 * 27),
                          (mg.nn.ConvTranspose3d(8, 64, 2, groups=2), 32 * 8),
                          (mg.nn.ConvTranspose1d(6, 200, 5), 200 * 5)):
        bound = 1 / math.sqrt(fan_in)
        for p in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
            assert np.abs(p).max() <= bound
            assert np.abs(p).max() > 0.7 * bound and abs(p.mean()) < 0.3 * bound
        assert layer.weight.detach().numpy().std() == pytest.approx(bound / math.sqrt(3), rel=0.15)


def test_conv_transpose_output_size():
    ours, theirs = module_pair("ConvTranspose2d", (2, 3, 3), dict(stride=3, padding=1))
    torch = torch_or_skip()
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    for size in ([10, 12], [1, 3, 11, 10]):
        ym, yt = ours(mg.tensor(x), output_size=size), theirs(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="valid sizes range from"):
        ours(mg.tensor(x), output_size=[13, 10])


def test_top_level_names():
    for name in ("conv1d", "conv2d", "conv_transpose2d"):
        assert getattr(mg, name) is getattr(mg.nn.functional, name)


# --------------------------------------------------------------------------- bad input
X, W = RNG.standard_normal((2, 3, 5, 5)), RNG.standard_normal((4, 3, 3, 3))
BAD_CALLS = {
    "wrong channel count": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(RNG.standard_normal((4, 2, 3, 3)))),
    "wrong channel count, unbatched": lambda lib, F: F.conv2d(lib.tensor(X[0, :2]), lib.tensor(W)),
    "kernel larger than the padded input": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(np.ones((4, 3, 8, 2)))),
    "dilated kernel larger": lambda lib, F: F.conv1d(lib.tensor(X[:, :, 0]), lib.tensor(W[..., 0]), dilation=3),
    "groups not dividing out channels": lambda lib, F: F.conv2d(lib.tensor(np.ones((2, 4, 5, 5))),
                                                                lib.tensor(np.ones((3, 2, 3, 3))), groups=2),
    "groups not dividing in channels": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(np.ones((4, 1, 3, 3))),
                                                               groups=2),
    "negative padding": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), padding=-1),
    "negative padding, transposed": lambda lib, F: F.conv_transpose2d(lib.tensor(X), lib.tensor(np.ones((3, 2, 3, 3))),
                                                                      padding=-1),
    "same with stride 2": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), padding="same", stride=2),
    "unknown padding string": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), padding="full"),
    "string padding, transposed": lambda lib, F: F.conv_transpose2d(lib.tensor(X), lib.tensor(np.ones((3, 2, 3, 3))),
                                                                    padding="same"),
    "2-D input": lambda lib, F: F.conv2d(lib.tensor(X[0, 0]), lib.tensor(W)),
    "5-D input": lambda lib, F: F.conv2d(lib.tensor(X[None]), lib.tensor(W)),
    "stride 0": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), stride=0),
    "dilation 0": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), dilation=0),
    "groups 0": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), groups=0),
    "three strides for conv2d": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), stride=(1, 2, 3)),
    "bias of the wrong size": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W), lib.tensor(np.ones(3))),
    "float32 weight, float64 input": lambda lib, F: F.conv2d(lib.tensor(X), lib.tensor(W.astype(np.float32))),
    "output padding too large": lambda lib, F: F.conv_transpose2d(lib.tensor(X), lib.tensor(np.ones((3, 2, 3, 3))),
                                                                  stride=2, output_padding=2),
    "transposed channels": lambda lib, F: F.conv_transpose2d(lib.tensor(X), lib.tensor(np.ones((4, 2, 3, 3)))),
    "module: groups not dividing in_channels": lambda lib, F: lib.nn.Conv2d(3, 4, 3, groups=2),
    "module: groups not dividing out_channels": lambda lib, F: lib.nn.Conv2d(4, 3, 3, groups=2),
    "module: unknown padding_mode": lambda lib, F: lib.nn.Conv2d(4, 4, 3, padding_mode="mirror"),
    "module: same with stride 2": lambda lib, F: lib.nn.Conv1d(4, 4, 3, padding="same", stride=2),
    "module: unknown padding string": lambda lib, F: lib.nn.Conv2d(4, 4, 3, padding="full"),
    "module: transposed reflect": lambda lib, F: lib.nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
    "module: reflect padding too large": lambda lib, F: lib.nn.Conv2d(3, 4, 3, padding=5, padding_mode="reflect")(
        lib.tensor(X, dtype=lib.float32)),
    "module: circular wraps twice": lambda lib, F: lib.nn.Conv2d(3, 4, 3, padding=6, padding_mode="circular")(
        lib.tensor(X, dtype=lib.float32)),
}


# a bad call's message names what was wrong with one of these words
MESSAGE_WORDS = {"channels", "Kernel size", "divisible", "padding", "input", "stride", "dilation", "groups", "bias",
                 "dtype", "output padding", "output_padding", "Output size", "padding_mode", "wrapping"}


def assert_raises_like_pytorch(call, *arrays):
    """``call(lib, F)`` raises in minigrad the exception type it raises in PyTorch, with a message naming what
    was wrong, and leaves ``arrays`` (the data it was given) unchanged."""
    theirs = torch_raises(lambda torch: call(torch, torch.nn.functional), *arrays)
    before = [a.copy() for a in arrays]
    with pytest.raises(theirs.type) as ours:
        call(mg, mg.nn.functional)
    for array, copy in zip(arrays, before):
        np.testing.assert_array_equal(array, copy)
    assert any(w in str(ours.value) for w in MESSAGE_WORDS), str(ours.value)


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_input_raises_like_pytorch(name):
    assert_raises_like_pytorch(BAD_CALLS[name], X, W)


def test_bad_input_leaves_the_module_unchanged():
    layer = mg.nn.Conv2d(3, 4, 3)
    state = {k: v.numpy().copy() for k, v in layer.state_dict().items()}
    with pytest.raises(RuntimeError, match="to have 3 channels, but got 2 channels"):
        layer(mg.randn(1, 2, 5, 5, requires_grad=True))
    for k, v in layer.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), state[k])
        assert layer.weight.grad is None
