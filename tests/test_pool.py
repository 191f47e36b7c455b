"""Pooling, padding, resampling, pixel (un)shuffle and channel dropout (``minigrad/ops/pool.py``,
``minigrad/nn/pooling.py``) against PyTorch.

* a table of cases, one or more per function: float64 gradcheck, gradgradcheck, PyTorch mirror (forward and
  gradient) and double-backward mirror;
* hypothesis sweeps over kernel/stride/padding/dilation/ceil_mode/count_include_pad/mode/align_corners and
  odd, even and one-pixel sizes: forward, gradient and the returned indices equal PyTorch's;
* ties in max pooling (the gradient goes where PyTorch's index points), NaN windows;
* the modules (output, gradient, repr);
* bad input: PyTorch's exception type, a message naming the problem, the input unchanged;
* max pooling on both kernel backends: the max-pooling cases and sweeps run with the numba kernels
  (``minigrad/kernels/pool_numba.py``) and with the NumPy reference, and the kernels equal the reference
  exactly (values and indices) over random windows, dtypes, NaN, ties and -inf, serial and parallel.

The ops are linear (max pooling piecewise linear), so the double-backward tests bend their output with a
non-linear factor; ``assert_double_mirror`` also differentiates the first gradients with respect to the
upstream gradient, which runs each op's adjoint's own backward.
"""
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops import pool as P

from .mirror import (
    assert_double_mirror,
    assert_mirror,
    check_grad,
    check_gradgrad,
    run_both,
    torch_or_replay,
    torch_or_skip,
    torch_raises,
)

RNG = np.random.default_rng(12)
BACKENDS = ("numba", "numpy")


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Run the test on the numba kernels and on the NumPy reference."""
    with mg.kernels.use_backend(request.param):
        yield request.param


def normal(*shape):
    return RNG.standard_normal(shape)


def F(lib):
    return lib.nn.functional


def bend(t):
    """t * exp(t): non-linear, so that second-order terms through a linear op are not all zero."""
    return t * t.exp()


# --------------------------------------------------------------------------- the table of cases
CASES = {
    "max_pool2d": (lambda lib, x: F(lib).max_pool2d(x, 2), (2, 3, 4, 5)),
    "max_pool2d_all": (lambda lib, x: F(lib).max_pool2d(x, (3, 2), (2, 1), (1, 1), (1, 2), True), (1, 2, 7, 6)),
    "max_pool2d_unbatched": (lambda lib, x: F(lib).max_pool2d(x, 3, 1, 1), (2, 5, 4)),
    "max_pool1d": (lambda lib, x: F(lib).max_pool1d(x, 3, 2, 1, 2, True), (2, 3, 9)),
    "max_pool1d_unbatched": (lambda lib, x: F(lib).max_pool1d(x, 2), (3, 6)),
    "max_pool2d_ceil_tiled": (lambda lib, x: F(lib).max_pool2d(x, 2, ceil_mode=True), (2, 2, 5, 7)),
    "avg_pool2d": (lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, True, False), (2, 2, 6, 5)),
    "avg_pool2d_include": (lambda lib, x: F(lib).avg_pool2d(x, (2, 3), 1, (1, 1), False, True), (1, 2, 3, 4)),
    "avg_pool2d_divisor": (lambda lib, x: F(lib).avg_pool2d(x, 2, divisor_override=3), (2, 4, 5)),
    "avg_pool1d": (lambda lib, x: F(lib).avg_pool1d(x, 4, 3, 2, True, False), (2, 3, 8)),
    "adaptive_avg_pool2d": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (3, 2)), (2, 2, 7, 5)),
    "adaptive_avg_pool2d_none": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (None, 3)), (2, 4, 4)),
    "adaptive_avg_pool1d": (lambda lib, x: F(lib).adaptive_avg_pool1d(x, 3), (2, 3, 7)),
    "adaptive_max_pool2d": (lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3)), (2, 2, 5, 7)),
    "adaptive_max_pool2d_unbatched": (lambda lib, x: F(lib).adaptive_max_pool2d(x, 4), (2, 5, 6)),
    "pad_constant": (lambda lib, x: F(lib).pad(x, (1, 2, -1, 1, 0, 1), value=0.5), (2, 3, 4, 5)),
    "pad_reflect": (lambda lib, x: F(lib).pad(x, (2, 1, 3, 0), mode="reflect"), (2, 2, 4, 3)),
    "pad_reflect_1d": (lambda lib, x: F(lib).pad(x, (2, 3), mode="reflect"), (3, 4)),
    "pad_replicate": (lambda lib, x: F(lib).pad(x, (2, 1, 1, 3), mode="replicate"), (1, 2, 3, 4)),
    "pad_replicate_3d": (lambda lib, x: F(lib).pad(x, (1, 1, 0, 2, 1, 0), mode="replicate"), (1, 2, 2, 3, 2)),
    "pad_circular": (lambda lib, x: F(lib).pad(x, (3, 1, 2, 2), mode="circular"), (2, 1, 3, 4)),
    "interpolate_nearest": (lambda lib, x: F(lib).interpolate(x, size=(5, 3)), (2, 2, 3, 4)),
    "interpolate_nearest_exact": (lambda lib, x: F(lib).interpolate(x, scale_factor=1.5, mode="nearest-exact"),
                                  (1, 2, 3, 4)),
    "interpolate_bilinear": (lambda lib, x: F(lib).interpolate(x, scale_factor=(1.7, 0.6), mode="bilinear"),
                             (2, 2, 4, 5)),
    "interpolate_bilinear_corners": (lambda lib, x: F(lib).interpolate(x, size=(6, 2), mode="bilinear",
                                                                         align_corners=True), (1, 2, 3, 4)),
    "interpolate_linear": (lambda lib, x: F(lib).interpolate(x, size=7, mode="linear"), (2, 3, 4)),
    "interpolate_area": (lambda lib, x: F(lib).interpolate(x, size=(2, 3), mode="area"), (1, 2, 5, 7)),
    "interpolate_bicubic": (lambda lib, x: F(lib).interpolate(x, scale_factor=(1.6, 0.7), mode="bicubic"),
                            (2, 2, 4, 5)),
    "interpolate_bicubic_corners": (lambda lib, x: F(lib).interpolate(x, size=(6, 2), mode="bicubic",
                                                                        align_corners=True), (1, 2, 3, 4)),
    "interpolate_antialias_bilinear": (lambda lib, x: F(lib).interpolate(x, size=(3, 2), mode="bilinear",
                                                                           antialias=True), (1, 2, 8, 7)),
    "interpolate_antialias_bicubic": (lambda lib, x: F(lib).interpolate(x, scale_factor=0.4, mode="bicubic",
                                                                          antialias=True), (2, 1, 9, 6)),
    "interpolate_lanczos": (lambda lib, x: F(lib).interpolate(x, size=(4, 5), mode="lanczos", antialias=True),
                            (1, 1, 9, 4)),
    "one_pixel_max_pool2d": (lambda lib, x: F(lib).max_pool2d(x, 2, 1, 1, ceil_mode=True), (1, 2, 1, 1)),
    "one_pixel_avg_pool2d": (lambda lib, x: F(lib).avg_pool2d(x, 3, 1, 1, count_include_pad=False), (1, 1, 1)),
    "one_pixel_adaptive_max": (lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 3)), (1, 2, 1, 1)),
    "one_pixel_replicate": (lambda lib, x: F(lib).pad(x, (2, 1, 1, 2), mode="replicate"), (1, 1, 1, 1)),
    "one_pixel_bilinear": (lambda lib, x: F(lib).interpolate(x, size=(3, 2), mode="bilinear"), (1, 2, 1, 1)),
    "one_pixel_bicubic": (lambda lib, x: F(lib).interpolate(x, size=(3, 2), mode="bicubic"), (1, 2, 1, 1)),
    "pixel_shuffle": (lambda lib, x: F(lib).pixel_shuffle(x, 2), (2, 8, 2, 3)),
    "pixel_unshuffle": (lambda lib, x: F(lib).pixel_unshuffle(x, 2), (3, 4, 6)),
}


# max pooling runs on both backends; the other ops have no kernels of their own
ON_BACKENDS = [(name, b) for name in CASES for b in (BACKENDS if "max" in name else BACKENDS[:1])]


@pytest.mark.parametrize("name, kernels", ON_BACKENDS)
def test_gradcheck(name, kernels):
    fn, shape = CASES[name]
    with mg.kernels.use_backend(kernels):
        check_grad(lambda x: fn(mg, x), normal(*shape))


@pytest.mark.parametrize("name, kernels", ON_BACKENDS)
def test_gradgradcheck(name, kernels):
    fn, shape = CASES[name]
    with mg.kernels.use_backend(kernels):
        check_gradgrad(lambda x: bend(fn(mg, x)), normal(*shape))


@pytest.mark.parametrize("name, kernels", ON_BACKENDS)
def test_mirror(name, kernels):
    fn, shape = CASES[name]
    with mg.kernels.use_backend(kernels):
        assert_mirror(*run_both(fn), normal(*shape))


@pytest.mark.parametrize("name, kernels", ON_BACKENDS)
def test_double_mirror(name, kernels):
    fn, shape = CASES[name]
    with mg.kernels.use_backend(kernels):
        assert_double_mirror(*run_both(lambda lib, x: bend(fn(lib, x))), normal(*shape))


def test_third_order_through_pooling():
    """A third derivative through max pooling, average pooling and a resize equals PyTorch's."""
    torch = torch_or_skip()
    x = normal(1, 2, 5, 6)
    results = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = F(lib).interpolate(F(lib).avg_pool2d(F(lib).max_pool2d(t, 2, 1), 2, 1, 1), scale_factor=2,
                               mode="bilinear")
        (g,) = lib.autograd.grad(bend(y).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), t, create_graph=True)
        (ggg,) = lib.autograd.grad((gg * g).sum(), t)
        results.append(ggg.detach().numpy())
    np.testing.assert_allclose(*results, rtol=1e-10, atol=1e-10)


def test_a_wrong_graph_backward_is_caught(monkeypatch):
    """The double-backward checks fail when the adjoint's graph_backward is off by a factor 2."""
    fn, shape = CASES["avg_pool2d"]
    x = normal(*shape)
    right = P.AvgPool.graph_backward.__func__

    def wrong(cls, ctx, dout):
        g, _ = right(cls, ctx, dout)
        return g * 2, None
    monkeypatch.setattr(P.AvgPool, "graph_backward", classmethod(wrong))
    with pytest.raises(AssertionError):
        assert_double_mirror(*run_both(lambda lib, t: bend(fn(lib, t))), x)
    with pytest.raises((AssertionError, mg.autograd.GradcheckError)):
        check_gradgrad(lambda t: bend(fn(mg, t)), x, raise_exception=True)


# --------------------------------------------------------------------------- sweeps
def _compare(fn, x, indices=False):
    """Forward, gradient (and indices, exactly) of fn(lib, x) in both libraries."""
    torch = torch_or_replay()
    if indices:
        ours, theirs = fn(mg, mg.tensor(x))[1], fn(torch, torch.tensor(x))[1]
        assert ours.dtype == np.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert_mirror(*run_both(lambda lib, t: fn(lib, t)[0]), x)
    else:
        assert_mirror(*run_both(fn), x)


sides = st.integers(1, 7)


def _windows_touch_input(n, k, s, p, dl):
    """Every window (also the extra one of ceil_mode) has an element inside the input (else PyTorch returns an
    index outside the input, which minigrad refuses)."""
    starts = np.arange(0, n + p, s) - p
    return all(any(0 <= a + j * dl < n for j in range(k)) for a in starts)


@st.composite
def pool_case(draw, d):
    """Sizes, kernel, stride, padding and dilation of a valid d-dim pooling (output at least 1)."""
    while True:
        size = tuple(draw(sides) for _ in range(d))
        kernel = tuple(draw(st.integers(1, 4)) for _ in range(d))
        dilation = tuple(draw(st.integers(1, 2)) for _ in range(d))
        stride = tuple(draw(st.integers(1, 3)) for _ in range(d))
        padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
        if all(n + 2 * p - dl * (k - 1) - 1 >= 0 and _windows_touch_input(n, k, s, p, dl)
               for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation)):
            return size, kernel, stride, padding, dilation


@pytest.mark.parametrize("kernels", BACKENDS)
@settings(max_examples=50)
@given(d=st.sampled_from([1, 2]), ceil_mode=st.booleans(), batch=st.sampled_from([(), (1,), (2,)]), data=st.data())
def test_max_pool_sweep(kernels, d, ceil_mode, batch, data):
    size, kernel, stride, padding, dilation = data.draw(pool_case(d))
    with mg.kernels.use_backend(kernels):
        _compare(lambda lib, t: getattr(F(lib), f"max_pool{d}d")(t, kernel, stride, padding, dilation, ceil_mode,
                                                                  True), normal(*batch, 2, *size), indices=True)


@settings(max_examples=40)
@given(case=pool_case(2), ceil_mode=st.booleans(), count_include_pad=st.booleans(),
       divisor=st.sampled_from([None, None, 1, 5]), batch=st.sampled_from([(), (1,), (2,)]))
def test_avg_pool2d_sweep(case, ceil_mode, count_include_pad, divisor, batch):
    size, kernel, stride, _, _ = case
    padding = tuple(min(p, k // 2) for p, k in zip(case[3], kernel))    # average pooling: no dilation
    if any(n + 2 * p - k < 0 for n, k, p in zip(size, kernel, padding)):
        kernel = tuple(min(k, n + 2 * p) for n, k, p in zip(size, kernel, padding))
        padding = tuple(min(p, k // 2) for p, k in zip(padding, kernel))
    _compare(lambda lib, t: F(lib).avg_pool2d(t, kernel, stride, padding, ceil_mode, count_include_pad, divisor),
             normal(*batch, 2, *size))


@settings(max_examples=30)
@given(case=pool_case(1), ceil_mode=st.booleans(), count_include_pad=st.booleans(),
       batch=st.sampled_from([(), (1,), (3,)]))
def test_avg_pool1d_sweep(case, ceil_mode, count_include_pad, batch):
    (size,), (kernel,), stride, _, _ = case
    kernel = min(kernel, size)
    padding = RNG.integers(0, kernel // 2 + 1)
    _compare(lambda lib, t: F(lib).avg_pool1d(t, kernel, stride, int(padding), ceil_mode, count_include_pad),
             normal(*batch, 2, size))


@pytest.mark.parametrize("kernels", BACKENDS)
@settings(max_examples=30)
@given(size=st.tuples(sides, sides), out=st.tuples(st.integers(1, 8), st.integers(1, 8)),
       batch=st.sampled_from([(), (1,), (2,)]))
def test_adaptive_pool2d_sweep(kernels, size, out, batch):
    x = normal(*batch, 2, *size)
    with mg.kernels.use_backend(kernels):
        _compare(lambda lib, t: F(lib).adaptive_avg_pool2d(t, out), x)
        _compare(lambda lib, t: F(lib).adaptive_max_pool2d(t, out, True), x, indices=True)


@pytest.mark.parametrize("kernels", BACKENDS)
@settings(max_examples=20)
@given(size=sides, out=st.integers(1, 9), batch=st.sampled_from([(), (1,), (2,)]))
def test_adaptive_pool1d_sweep(kernels, size, out, batch):
    x = normal(*batch, 3, size)
    with mg.kernels.use_backend(kernels):
        _compare(lambda lib, t: F(lib).adaptive_avg_pool1d(t, out), x)
        _compare(lambda lib, t: F(lib).adaptive_max_pool1d(t, out, True), x, indices=True)


@settings(max_examples=40)
@given(mode=st.sampled_from(["constant", "reflect", "replicate", "circular"]), n=st.integers(1, 3),
       batched=st.booleans(), data=st.data())
def test_pad_sweep(mode, n, batched, data):
    size = tuple(data.draw(sides) for _ in range(n))
    amounts = []
    for s in reversed(size):           # (left, right) of the last dim first
        if mode == "constant":
            high = 3
        else:
            high = s - 1 if mode == "reflect" else s if mode == "circular" else 3
        low = -(s // 2) if mode != "circular" else 0
        left, right = data.draw(st.integers(low, high)), data.draw(st.integers(low, high))
        if s + left + right < 1:
            left = right = 0
        amounts += [left, right]
    x = normal(*(((2,) if batched else ()) + (2,) + size))
    value = data.draw(st.sampled_from([None, 0.0, -1.5])) if mode == "constant" else None
    _compare(lambda lib, t: F(lib).pad(t, tuple(amounts), mode=mode, value=value), x)


def test_constant_pad_any_dims():
    """Constant padding reaches every dim, the batch dim too, and crops with negative amounts."""
    x = normal(2, 3, 4)
    _compare(lambda lib, t: F(lib).pad(t, (1, 0, -1, 2, 1, 1), value=3.0), x)
    _compare(lambda lib, t: F(lib).pad(t, (-4, 0)), x)                   # an empty result


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 3.0])
def test_constant_pad_with_any_value_keeps_the_input_as_it_is(value):
    """The fill goes to the padded positions only: the input's inf, NaN and -0.0 stay (not x + 0 * value, which is NaN
    for an infinite value and turns -0.0 into 0.0), and the gradient of the input is dout at its positions."""
    x = mg.tensor([[-0.0, float("inf"), float("nan"), 2.0]], dtype=mg.float64, requires_grad=True)
    y = mg.nn.functional.pad(x, (1, 2), value=value)
    got = y.detach().numpy()
    np.testing.assert_array_equal(got[0, 1:5], [-0.0, np.inf, np.nan, 2.0])
    assert np.signbit(got[0, 1])
    np.testing.assert_array_equal(got[0, [0, 5, 6]], [value] * 3)
    y.backward(mg.arange(7.0, dtype=mg.float64).reshape(1, 7))
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 2.0, 3.0, 4.0]])
    cropped = mg.nn.functional.pad(x.detach().reshape(2, 2), (1, 0, -1, 1), value=value).numpy()  # crop and pad
    np.testing.assert_array_equal(cropped, [[value, np.nan, 2.0], [value, value, value]])


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 1e300])
def test_interpolate_refuses_a_scale_whose_size_is_not_an_integer(scale):
    """PyTorch's error (2.13) for floor(size * scale) beyond int64, NaN and infinities included."""
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int64_t without overflow$"):
        mg.nn.functional.interpolate(mg.ones(1, 1, 4), scale_factor=scale)
    with pytest.raises(RuntimeError, match=r"^Input and output sizes should be greater than 0, but got input \(W: 4\) "
                                           r"and output \(W: 0\)$"):
        mg.nn.functional.interpolate(mg.ones(1, 1, 4), scale_factor=0.1)


@settings(max_examples=40)
@given(mode=st.sampled_from(["nearest", "nearest-exact", "bilinear", "area"]), align=st.booleans(),
       size=st.tuples(sides, sides), data=st.data())
def test_interpolate_2d_sweep(mode, align, size, data):
    how = data.draw(st.sampled_from(["size", "scale", "scales", "recompute"]))
    kwargs = {}
    if how == "size":
        kwargs["size"] = data.draw(st.tuples(st.integers(1, 9), st.integers(1, 9)))
    else:
        scale = data.draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 2.3, 3.0]))
        kwargs["scale_factor"] = (scale, data.draw(st.sampled_from([0.7, 1.0, 2.0]))) if how == "scales" else scale
        kwargs["recompute_scale_factor"] = True if how == "recompute" else None
        if any(np.floor(np.multiply(size, kwargs["scale_factor"])) < 1):
            kwargs["scale_factor"] = 2.0
    if mode == "bilinear":
        kwargs["align_corners"] = align
    _compare(lambda lib, t: F(lib).interpolate(t, mode=mode, **kwargs), normal(data.draw(st.integers(1, 2)), 2,
                                                                                 *size))


@settings(max_examples=40)
@given(mode=st.sampled_from(["bicubic", "bilinear aa", "bicubic aa", "lanczos aa"]), align=st.booleans(),
       size=st.tuples(sides, sides), data=st.data())
def test_interpolate_bicubic_and_antialias_sweep(mode, align, size, data):
    """Bicubic (Keys' kernel, taps clamped to the input) and the antialiased modes (a filter widened by the
    downscaling factor, PIL's), up and down, by size or scale factor."""
    mode, antialias = mode.split(" ")[0], mode.endswith("aa")
    if data.draw(st.booleans()):
        kwargs = {"size": data.draw(st.tuples(st.integers(1, 9), st.integers(1, 9)))}
        out = kwargs["size"]
    else:
        scale = data.draw(st.sampled_from([0.3, 0.5, 0.8, 1.0, 1.7, 2.0]))
        scale = scale if np.all(np.floor(np.multiply(size, scale)) >= 1) else 2.0
        kwargs = {"scale_factor": scale, "recompute_scale_factor": data.draw(st.sampled_from([None, True]))}
        out = tuple(int(np.floor(n * scale)) for n in size)
    assume(not (antialias and out[1] == 1 and out[0] != size[0]))   # PyTorch's own inconsistency: next test
    _compare(lambda lib, t: F(lib).interpolate(t, mode=mode, align_corners=align and mode != "lanczos",
                                               antialias=antialias, **kwargs), normal(1, 2, *size))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_to_width_one_resizes_the_height_as_a_separable_filter(mode):
    """PyTorch 2.13's antialiased resampling changes the height wrongly when the output width is 1: its result
    is not its own result with the height resized first (at the input's width) and the width second, which a
    separable filter must give. minigrad's is, and equals PyTorch's wherever the width is not 1."""
    torch = torch_or_skip()
    x = normal(1, 2, 6, 4)
    ours = F(mg).interpolate(mg.tensor(x), size=(7, 1), mode=mode, antialias=True).numpy()
    height_first = F(torch).interpolate(torch.tensor(x), size=(7, 4), mode=mode, antialias=True)
    separable = F(torch).interpolate(height_first, size=(7, 1), mode=mode, antialias=True).numpy()
    np.testing.assert_allclose(ours, separable, rtol=1e-12, atol=1e-12)
    theirs = F(torch).interpolate(torch.tensor(x), size=(7, 1), mode=mode, antialias=True).numpy()
    assert np.abs(theirs - separable).max() > 1e-3      # if this fails, PyTorch fixed it: drop the assume above


def test_interpolate_float32_antialias():
    x = normal(2, 3, 17, 12).astype(np.float32)
    torch = torch_or_skip()
    for kwargs in (dict(mode="bicubic"), dict(mode="bilinear", antialias=True), dict(mode="lanczos", antialias=True)):
        ours = F(mg).interpolate(mg.tensor(x), size=(5, 7), **kwargs)
        theirs = F(torch).interpolate(torch.tensor(x), size=(5, 7), **kwargs)
        assert ours.dtype == mg.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@settings(max_examples=20)
@given(mode=st.sampled_from(["nearest", "linear", "area"]), align=st.booleans(), size=sides,
       out=st.integers(1, 12))
def test_interpolate_1d_sweep(mode, align, size, out):
    kwargs = {"align_corners": align} if mode == "linear" else {}
    _compare(lambda lib, t: F(lib).interpolate(t, size=out, mode=mode, **kwargs), normal(2, 3, size))


def test_interpolate_3d():
    x = normal(1, 2, 3, 2, 4)
    _compare(lambda lib, t: F(lib).interpolate(t, scale_factor=(1.5, 2, 0.5), mode="trilinear"), x)
    _compare(lambda lib, t: F(lib).interpolate(t, size=(4, 3, 5), mode="nearest"), x)


@settings(max_examples=15)
@given(r=st.integers(1, 3), c=st.integers(1, 2), h=st.integers(1, 3), w=st.integers(1, 3),
       batch=st.sampled_from([(), (2,), (1, 2)]))
def test_pixel_shuffle_sweep(r, c, h, w, batch):
    _compare(lambda lib, t: F(lib).pixel_shuffle(t, r), normal(*batch, c * r * r, h, w))
    _compare(lambda lib, t: F(lib).pixel_unshuffle(t, r), normal(*batch, c, h * r, w * r))


# --------------------------------------------------------------------------- ties and NaN
def test_max_pool_ties_route_the_gradient_like_pytorch(backend):
    """Equal values in overlapping windows: the index, and so the gradient, is PyTorch's (the first maximum
    in each window); a gradient accumulates where windows share their maximum."""
    x = np.array([[[[1.0, 1.0, 2.0, 2.0], [1.0, 3.0, 3.0, 0.0], [1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]]]])
    for fn in (lambda lib, t: F(lib).max_pool2d(t, 2, 1, return_indices=True),
               lambda lib, t: F(lib).max_pool2d(t, 3, 2, 1, ceil_mode=True, return_indices=True),
               lambda lib, t: F(lib).adaptive_max_pool2d(t, 3, return_indices=True),
               lambda lib, t: F(lib).max_pool1d(t[0], 2, 1, return_indices=True)):
        _compare(fn, x, indices=True)


def test_max_pool_nan_wins_as_in_pytorch(backend):
    x = np.array([[[np.nan, 1.0, np.nan, 5.0, 2.0, np.nan]]])
    torch = torch_or_skip()
    ours = F(mg).max_pool1d(mg.tensor(x), 3, 3, return_indices=True)
    theirs = F(torch).max_pool1d(torch.tensor(x), 3, 3, return_indices=True)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())


def test_float32_keeps_dtype(backend):
    x = normal(2, 3, 5, 5).astype(np.float32)
    for fn in (lambda t: F(mg).max_pool2d(t, 2), lambda t: F(mg).avg_pool2d(t, 3, 1, 1),
               lambda t: F(mg).pad(t, (1, 1, 1, 1), mode="reflect"), lambda t: F(mg).pad(t, (1, 1), value=2),
               lambda t: F(mg).interpolate(t, scale_factor=2, mode="bilinear")):
        t = mg.tensor(x, requires_grad=True)
        y = fn(t)
        y.sum().backward()
        assert y.dtype == np.float32 and t.grad.dtype == np.float32


# --------------------------------------------------------------------------- modules
MODULES = [
    ("MaxPool2d", (3, 2, 1), {"ceil_mode": True}, (2, 2, 6, 7)),
    ("MaxPool2d", (2,), {"return_indices": True}, (2, 4, 5)),
    ("MaxPool1d", (3,), {"stride": 1, "dilation": 2, "padding": 1}, (2, 3, 8)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}, (1, 2, 6, 5)),
    ("AvgPool2d", (2,), {"divisor_override": 3}, (2, 4, 4)),
    ("AvgPool1d", (3, 2, 1), {}, (2, 3, 7)),
    ("AdaptiveAvgPool2d", ((2, None),), {}, (2, 3, 5, 4)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 4)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 5)),
    ("AdaptiveMaxPool2d", (3,), {"return_indices": True}, (2, 3, 5, 4)),
    ("AdaptiveMaxPool1d", (2,), {}, (2, 3, 5)),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, (2, 2, 3, 4)),
    ("ZeroPad1d", (2,), {}, (2, 3)),
    ("ConstantPad1d", (2, 3.5), {}, (2, 3, 4)),
    ("ConstantPad2d", ((1, -1, 0, 2), -1.0), {}, (2, 3, 4)),
    ("ConstantPad3d", (1, 0.5), {}, (1, 2, 2, 3)),
    ("ReflectionPad1d", ((2, 1),), {}, (2, 3, 4)),
    ("ReflectionPad2d", (2,), {}, (1, 2, 3, 4)),
    ("ReplicationPad1d", (3,), {}, (3, 4)),
    ("ReplicationPad2d", ((1, 2, 3, 0),), {}, (1, 2, 3, 4)),
    ("CircularPad1d", (2,), {}, (2, 3, 4)),
    ("CircularPad2d", ((1, 2, 3, 0),), {}, (1, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": 2}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 2), "mode": "bilinear", "align_corners": True}, (1, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "linear"}, (1, 2, 3)),
    ("PixelShuffle", (2,), {}, (1, 8, 2, 3)),
    ("PixelUnshuffle", (3,), {}, (1, 2, 6, 3)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_mirror(name, args, kwargs, shape):
    torch = torch_or_replay()
    ours, theirs = getattr(mg.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    x = normal(*shape)
    if kwargs.get("return_indices"):
        np.testing.assert_array_equal(ours(mg.tensor(x))[1].numpy(), theirs(torch.tensor(x))[1].numpy())
        assert_mirror(lambda t: ours(t)[0], lambda t: theirs(t)[0], x)
    else:
        assert_mirror(ours, theirs, x)
    assert ours.state_dict().keys() == theirs.state_dict().keys()


def test_module_reprs_of_defaults():
    torch = torch_or_skip()
    for name, args in (("MaxPool2d", (2,)), ("MaxPool1d", (3, 2, 1)), ("AvgPool2d", (2,)), ("AvgPool1d", (3,)),
                       ("AdaptiveMaxPool2d", (3,)), ("Upsample", ((3, 4),)), ("Dropout2d", ()),
                       ("Dropout1d", (0.2, True))):
        assert repr(getattr(mg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


# --------------------------------------------------------------------------- channel dropout
@pytest.mark.parametrize("fn, shape", [(F(mg).dropout2d, (4, 6, 3, 5)), (F(mg).dropout1d, (4, 6, 5)),
                                       (F(mg).dropout1d, (6, 5))])
def test_channel_dropout_zeroes_whole_channels(fn, shape):
    mg.manual_seed(0)
    x = mg.tensor(normal(*shape), requires_grad=True)
    y = fn(x, 0.4)
    y.backward(mg.ones(shape))
    scale = x.grad.numpy()                                                  # dx = mask / (1 - p), per element
    per_channel = scale.reshape(shape[:-1 if len(shape) < 4 else -2] + (-1,))
    np.testing.assert_array_equal(per_channel.min(-1), per_channel.max(-1))  # one factor per channel
    np.testing.assert_allclose(np.unique(per_channel), [0.0, 1 / 0.6], rtol=1e-15)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * scale, rtol=1e-15)
    # nothing dropped: the input itself, but for an unbatched dropout1d input, which PyTorch unsqueezes and squeezes
    batched = fn is not F(mg).dropout1d or len(shape) == 3
    assert (fn(x, 0.4, training=False) is x) == batched and (fn(x, 0.0) is x) == batched
    np.testing.assert_array_equal(fn(x, 1.0).detach().numpy(), 0.0)


def test_channel_dropout_double_backward():
    """The same mask in every call (a fixed seed): gradgradcheck through dropout2d and dropout1d."""
    def seeded(fn):
        def run(x):
            mg.manual_seed(3)
            return bend(fn(x, 0.5))
        return run
    check_gradgrad(seeded(F(mg).dropout2d), normal(2, 3, 2, 2))
    check_gradgrad(seeded(F(mg).dropout1d), normal(3, 4))


def test_dropout2d_keep_rate_and_inplace():
    mg.manual_seed(1)
    x = mg.ones(200, 50, 2, 2)
    kept = (F(mg).dropout2d(x, 0.3)[:, :, 0, 0].numpy() != 0).mean()
    assert abs(kept - 0.7) < 0.02
    h = mg.ones(2, 3, 2, 2, requires_grad=True) * 1
    out = F(mg).dropout2d(h, 0.5, inplace=True)
    assert out is h


def test_dropout2d_module_and_warnings():
    m = mg.nn.Dropout2d(0.5)
    x = mg.tensor(normal(2, 3, 4, 4))
    m.eval()
    assert m(x) is x
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F(mg).dropout2d(mg.ones(2, 3, 4), 0.5)
    with pytest.warns(UserWarning, match="2-D input to dropout2d"):
        F(mg).dropout2d(mg.ones(2, 3), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F(mg).dropout2d(mg.ones(2, 3, 4, 4), 0.5)


# --------------------------------------------------------------------------- bad input
BAD = [
    (lambda f, x: f.max_pool2d(x, 2, padding=-1), (2, 3, 5, 5), "non-negative"),
    (lambda f, x: f.max_pool2d(x, 2, padding=2), (2, 3, 5, 5), "half of"),
    (lambda f, x: f.max_pool2d(x, 7), (2, 3, 5, 5), "too small"),
    (lambda f, x: f.max_pool2d(x, 2), (5, 5), "4D"),
    (lambda f, x: f.max_pool2d(x, 2), (2, 2, 2, 5, 5), "4D"),
    (lambda f, x: f.max_pool2d(x, 2, stride=0), (2, 3, 5, 5), "stride"),
    (lambda f, x: f.max_pool2d(x, 2, dilation=0), (2, 3, 5, 5), "dilation"),
    (lambda f, x: f.max_pool2d(x, (2, 2, 2)), (2, 3, 5, 5), "kernel_size"),
    (lambda f, x: f.max_pool1d(x, 2), (5,), "3D"),
    (lambda f, x: f.max_pool1d(x, 2, padding=2), (2, 3, 5), "half"),
    (lambda f, x: f.avg_pool2d(x, 2, padding=2), (2, 3, 5, 5), "half of"),
    (lambda f, x: f.avg_pool2d(x, 7), (2, 3, 5, 5), "too small"),
    (lambda f, x: f.avg_pool2d(x, 2), (2, 2, 2, 5, 5), "4D"),
    (lambda f, x: f.avg_pool1d(x, 7), (2, 3, 5), "too small"),
    (lambda f, x: f.avg_pool2d(x, 2, divisor_override=0), (2, 3, 5, 5), "divisor"),
    (lambda f, x: f.adaptive_avg_pool2d(x, 2), (5, 5), "4D"),
    (lambda f, x: f.adaptive_max_pool2d(x, 2), (5, 5), "4D"),
    (lambda f, x: f.adaptive_avg_pool2d(x, (2, 3, 4)), (2, 3, 5, 5), "output_size must be 2"),
    (lambda f, x: f.pad(x, (1, 2, 3)), (2, 3, 5, 5), "divisible by 2"),
    (lambda f, x: f.pad(x, (1,) * 10), (2, 3, 5, 5), "two times the input dimension"),
    (lambda f, x: f.pad(x, (1, 1), mode="reflect"), (2, 3, 5, 5), "not supported for 4D"),
    (lambda f, x: f.pad(x, (5, 1), mode="reflect"), (2, 3, 5), "less than the corresponding input dimension"),
    (lambda f, x: f.pad(x, (6, 1), mode="circular"), (2, 3, 5), "wrapping around more than once"),
    (lambda f, x: f.pad(x, (-3, -3), mode="replicate"), (2, 3, 5), "leaves -1 elements"),
    (lambda f, x: f.pad(x, (-6, 0)), (2, 3, 5), "leaves -1 elements"),
    (lambda f, x: f.interpolate(x, scale_factor=(2, 3, 4)), (2, 3, 5, 5), "same number of spatial dimensions"),
    (lambda f, x: f.interpolate(x, size=4, recompute_scale_factor=True), (2, 3, 5, 5), "not meaningful"),
    (lambda f, x: f.max_pool2d(x, 2, 0), (2, 3, 5, 5), "stride should not be zero"),
    (lambda f, x: f.adaptive_avg_pool1d(x, 2), (5,), "3D"),
    (lambda f, x: f.pad(x, (1, 1), mode="foo"), (2, 3, 5), "foo"),
    (lambda f, x: f.pad(x, (1, 1), mode="reflect", value=2.0), (2, 3, 5), "value"),
    (lambda f, x: f.interpolate(x, size=3, scale_factor=2), (2, 3, 5, 5), "only one of size or scale_factor"),
    (lambda f, x: f.interpolate(x), (2, 3, 5, 5), "either size or scale_factor"),
    (lambda f, x: f.interpolate(x, scale_factor=2, mode="linear"), (2, 3, 5, 5), "linear mode needs 3D"),
    (lambda f, x: f.interpolate(x, scale_factor=2, align_corners=True), (2, 3, 5, 5), "align_corners"),
    (lambda f, x: f.interpolate(x, size=(0, 3)), (2, 3, 5, 5), "greater than 0"),
    (lambda f, x: f.interpolate(x, size=(2, 3, 4)), (2, 3, 5, 5), "same number of spatial dimensions"),
    (lambda f, x: f.interpolate(x, size=3), (5, 5), "Only 3D, 4D and 5D"),
    (lambda f, x: f.interpolate(x, size=3, mode="foo"), (2, 3, 5, 5), "foo"),
    (lambda f, x: f.interpolate(x, size=3, mode="bicubic"), (2, 3, 5), "bicubic mode needs 4D"),
    (lambda f, x: f.interpolate(x, size=3, mode="nearest", antialias=True), (2, 3, 5, 5), "Anti-alias option"),
    (lambda f, x: f.interpolate(x, size=3, mode="linear", antialias=True), (2, 3, 5), "Anti-alias option"),
    (lambda f, x: f.interpolate(x, size=3, mode="lanczos"), (2, 3, 5, 5), "requires antialias=True"),
    (lambda f, x: f.interpolate(x, size=3, mode="lanczos", antialias=True, align_corners=True), (2, 3, 5, 5),
     "does not support align_corners"),
    (lambda f, x: f.pixel_shuffle(x, 2), (1, 5, 2, 2), "divisible by the square of upscale_factor"),
    (lambda f, x: f.pixel_shuffle(x, 2), (4, 2), "at least 3 dimensions"),
    (lambda f, x: f.pixel_unshuffle(x, 2), (1, 4, 3, 4), "height to be divisible"),
    (lambda f, x: f.pixel_unshuffle(x, 2), (1, 4, 4, 3), "width to be divisible"),
    (lambda f, x: f.dropout2d(x, 1.5), (2, 3, 4, 4), "between 0 and 1"),
    (lambda f, x: f.dropout1d(x, 0.5), (2, 3, 4, 4), "Expected 2D or 3D input"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_like_pytorch(i):
    fn, shape, gist = BAD[i]
    x = normal(*shape)
    theirs = torch_raises(lambda torch: fn(F(torch), torch.tensor(x)), x)
    t = mg.tensor(x.copy(), requires_grad=True)
    with pytest.raises(theirs.type, match=gist.replace("(", r"\(")) as ours:
        fn(F(mg), t)
    assert str(ours.value)
    np.testing.assert_array_equal(t.detach().numpy(), x)                   # nothing changed
    assert t.grad is None


def test_inf_and_nan_stay_in_their_windows():
    """Non-finite values reach only the outputs whose windows or stencils contain them (the dense product
    the finite path uses would spread 0 * inf = NaN along the line)."""
    x = normal(1, 2, 6, 7)
    x[0, 0, 1, 2], x[0, 1, 4, 4] = np.inf, np.nan
    for fn in (lambda lib, t: F(lib).avg_pool2d(t, 2),
               lambda lib, t: F(lib).avg_pool2d(t, 3, 2, 1, count_include_pad=False),
               lambda lib, t: F(lib).adaptive_avg_pool2d(t, (4, 3)),
               lambda lib, t: F(lib).interpolate(t, scale_factor=2, mode="bilinear"),
               lambda lib, t: F(lib).interpolate(t[:, :, 0], size=9, mode="linear", align_corners=True)):
        _compare(fn, x)


def test_integer_input(backend):
    """Max pooling and padding take integer tensors (no gradient); averages and resizing refuse them with
    PyTorch's NotImplementedError."""
    torch = torch_or_skip()
    x = RNG.integers(-5, 5, (2, 2, 5, 4))
    for fn in (lambda lib, t: F(lib).max_pool2d(t, 2, 1, 1, return_indices=True)[0],
               lambda lib, t: F(lib).max_pool2d(t, 2, 1, 1, return_indices=True)[1],
               lambda lib, t: F(lib).pad(t, (1, 2, 0, 1), value=3),
               lambda lib, t: F(lib).pad(t, (1, 2, 0, 1), mode="reflect")):
        ours, theirs = fn(mg, mg.tensor(x)), fn(torch, torch.tensor(x))
        assert ours.dtype == np.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for fn in (lambda f, t: f.adaptive_avg_pool2d(t, 2), lambda f, t: f.adaptive_max_pool2d(t, 2),
               lambda f, t: f.interpolate(t, scale_factor=2), lambda f, t: f.interpolate(t, size=3, mode="bilinear")):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            fn(F(torch), torch.tensor(x))
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            fn(F(mg), mg.tensor(x))


def test_empty_batch(backend):
    x = normal(0, 2, 5, 4)
    for fn in (lambda lib, t: F(lib).max_pool2d(t, 2), lambda lib, t: F(lib).avg_pool2d(t, 3, 1, 1),
               lambda lib, t: F(lib).adaptive_avg_pool2d(t, 3), lambda lib, t: F(lib).pad(t, (1, 1, 2, 2), "reflect"),
               lambda lib, t: F(lib).interpolate(t, scale_factor=2, mode="bilinear"),
               lambda lib, t: F(lib).max_pool2d(t, 3, 2, 1), lambda lib, t: F(lib).adaptive_max_pool2d(t, (2, 3))):
        _compare(fn, x)


@settings(max_examples=30)
@given(case=pool_case(2), ceil_mode=st.booleans(), data=st.data())
def test_max_pool_scan_paths_agree(case, ceil_mode, data):
    """The padded scan (strided pooling) and the masked scan (its reference, also used for adaptive windows
    and for input holding -inf) pick the same elements, with ties (small integers) and NaN."""
    size, kernel, stride, padding, dilation = case
    x = RNG.integers(-2, 3, (2, 2) + size).astype(np.float64)
    if data.draw(st.booleans()):
        x[RNG.random(x.shape) < 0.2] = np.nan
    out = tuple(P._pooled_size(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation))
    _, steps, strided = P._pool_plan(size, out, kernel, stride, padding, dilation)
    shape = x.shape[:2] + out
    has_nan = bool(np.isnan(x).any())
    padded = P._padded_scan(x, strided, shape, -np.inf, has_nan, int(np.prod(kernel)))
    np.testing.assert_array_equal(padded, P._masked_scan(x, steps, shape, -np.inf, has_nan))


def test_max_pool_of_minus_inf_with_padding(backend):
    """-inf inside the input next to padding: the index is the first element inside the input, as PyTorch."""
    x = normal(1, 2, 4, 5)
    x[0, 0, :2, :2] = -np.inf
    x[0, 1] = -np.inf
    _compare(lambda lib, t: F(lib).max_pool2d(t, 3, 2, 1, return_indices=True), x, indices=True)


def test_writing_into_returned_indices_leaves_the_gradient_alone(backend):
    x = mg.tensor(normal(1, 2, 4, 4), requires_grad=True)
    out, indices = F(mg).max_pool2d(x, 2, return_indices=True)
    expected = np.zeros(16 * 2)
    np.add.at(expected, (indices.numpy() + np.arange(2)[None, :, None, None] * 16).ravel(), 1)
    indices.zero_()
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy().ravel(), expected)


# --------------------------------------------------------------------------- numba kernels = NumPy reference
KERNEL_DTYPES = (np.float32, np.float64, np.int64, np.int32, np.uint8)


def _awkward(shape, dtype, special):
    """Small values (many ties), with NaN or the extremes (-inf and inf; an integer type's min and max) in
    about a tenth of the elements."""
    dtype = np.dtype(dtype)
    x = RNG.integers(0 if dtype.kind == "u" else -2, 3, shape).astype(dtype)
    where = RNG.random(shape)
    if special == "nan" and dtype.kind == "f":
        x[where < 0.1] = np.nan
    elif special == "extremes":
        low, high = (-np.inf, np.inf) if dtype.kind == "f" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        x[where < 0.1] = low
        x[where > 0.97] = high
    return x


def _added_in_order(g, index, size):
    """zeros (*B, *size) with g added at index one output after the other, in g's dtype (np.add.at)."""
    n_planes = int(np.prod(index.shape[:index.ndim - len(size)]))
    out = np.zeros((n_planes, int(np.prod(size))), dtype=g.dtype)
    np.add.at(out, (np.arange(n_planes)[:, None], index.reshape(n_planes, -1)), g.reshape(n_planes, -1))
    return out.reshape(index.shape[:index.ndim - len(size)] + tuple(size))


def _numba_modules():
    """(numba_kernels, pool_numba), or skip the test where numba is not installed."""
    pytest.importorskip("numba", reason="numba not installed: numba kernels skipped")
    from minigrad.kernels import numba_kernels, pool_numba
    return numba_kernels, pool_numba


def _check_kernels(x, size, runs, plan, parallel):
    """The numba scan, gather and scatter-add against the NumPy reference on x (*B, *size)."""
    NK, K = _numba_modules()
    with pytest.MonkeyPatch.context() as mp:
        if parallel:
            mp.setattr(NK, "SERIAL_BELOW", 0)          # the parallel kernels, also on small inputs
        values, index = K.window_max(x, runs)
        expected = P._window_argmax(x, plan)
        assert index.dtype == np.int64 and values.dtype == x.dtype
        np.testing.assert_array_equal(index, expected)
        np.testing.assert_array_equal(values, P._take(x, expected, size))
        np.testing.assert_array_equal(K.take(x, index, size), values)
        if x.dtype.kind == "f":
            g = RNG.standard_normal(index.shape).astype(x.dtype)
            dx = K.scatter_add(g, index, size)
            assert dx.dtype == x.dtype
            np.testing.assert_array_equal(dx, _added_in_order(g, index, size))
            np.testing.assert_allclose(dx, P._scatter_add(g, index, size), rtol=1e-6, atol=1e-6)
    return values, index


@pytest.mark.parametrize("parallel", [False, True])
@settings(max_examples=60)
@given(d=st.sampled_from([1, 2]), dtype=st.sampled_from(KERNEL_DTYPES), ceil_mode=st.booleans(),
       special=st.sampled_from(["none", "nan", "extremes"]), batch=st.sampled_from([(), (1,), (3,)]), data=st.data())
def test_numba_max_pool_equals_the_numpy_reference(parallel, d, dtype, ceil_mode, special, batch, data):
    """Strided windows (kernel, stride, padding, dilation, ceil_mode): the numba scan picks exactly the NumPy
    scan's elements, with ties, NaN and the extremes; gather and scatter-add agree too."""
    size, kernel, stride, padding, dilation = data.draw(pool_case(d))
    out = tuple(P._pooled_size(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation))
    args = (size, out, kernel, stride, padding, dilation)
    _check_kernels(_awkward(batch + (2,) + size, dtype, special), size, P._pool_runs(*args), P._pool_plan(*args),
                   parallel)


@pytest.mark.parametrize("parallel", [False, True])
@settings(max_examples=40)
@given(d=st.sampled_from([1, 2]), dtype=st.sampled_from(KERNEL_DTYPES), special=st.sampled_from(["none", "nan",
       "extremes"]), batch=st.sampled_from([(), (2,)]), data=st.data())
def test_numba_adaptive_max_pool_equals_the_numpy_reference(parallel, d, dtype, special, batch, data):
    size = tuple(data.draw(st.integers(1, 12)) for _ in range(d))
    out = tuple(data.draw(st.integers(1, 9)) for _ in range(d))
    _check_kernels(_awkward(batch + (3,) + size, dtype, special), size, P._adaptive_runs(size, out),
                   P._adaptive_plan(size, out), parallel)


@pytest.mark.parametrize("special", ["none", "nan", "extremes"])
@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("size", [(1,), (7,), (1, 1), (3, 5), (6, 1)])
def test_numba_global_max_pool_equals_the_numpy_reference(size, dtype, special):
    """One window covering the whole plane (adaptive pooling to 1 or 1x1: NumPy's argmax, NaN planes fixed up)."""
    out = (1,) * len(size)
    x = _awkward((4, 3) + size, dtype, special)
    x[0, 0] = np.nan if special == "nan" and x.dtype.kind == "f" else x[0, 0]   # a plane all NaN
    _check_kernels(x, size, P._adaptive_runs(size, out), P._adaptive_plan(size, out), parallel=False)


@pytest.mark.parametrize("parallel", [False, True])
@settings(max_examples=30)
@given(d=st.sampled_from([1, 2]), dtype=st.sampled_from(KERNEL_DTYPES), special=st.sampled_from(["none", "nan",
       "extremes"]), data=st.data())
def test_numba_tiled_max_pool_equals_the_numpy_reference(parallel, d, dtype, special, data):
    """Windows that tile the input (stride = kernel, a remainder left over): the tiled kernel, the general
    one and the NumPy reference agree."""
    kernel = tuple(data.draw(st.integers(1, 4)) for _ in range(d))
    size = tuple(data.draw(st.integers(k, 3 * k + 2)) for k in kernel)
    out = tuple(n // k for n, k in zip(size, kernel))
    x = _awkward((2, 3) + size, dtype, special)
    args = (size, out, kernel, kernel, (0,) * d, (1,) * d)
    values, index = _check_kernels(x, size, P._pool_runs(*args), P._pool_plan(*args), parallel)
    NK, K = _numba_modules()
    with pytest.MonkeyPatch.context() as mp:
        if parallel:
            mp.setattr(NK, "SERIAL_BELOW", 0)
        tiled_values, tiled_index = K.tiled_max(x, kernel, out)
    np.testing.assert_array_equal(tiled_index, P._tiled_argmax(x, kernel, out))
    np.testing.assert_array_equal(tiled_index, index)
    np.testing.assert_array_equal(tiled_values, values)


@pytest.mark.parametrize("pool", [lambda f, t: f.max_pool2d(t, 2), lambda f, t: f.max_pool2d(t, 3, 2, 1),
                                  lambda f, t: f.max_pool1d(t.flatten(2), 4, 3, 1, 2, True),
                                  lambda f, t: f.adaptive_max_pool2d(t, (7, 5)),
                                  lambda f, t: f.adaptive_max_pool2d(t, 1)],
                         ids=["tiled", "3,2,1", "1d", "adaptive", "global"])
def test_max_pool_backends_agree_above_the_serial_threshold(pool):
    """A float32 input above ``SERIAL_BELOW`` (the parallel kernels at the real threshold), with some NaN:
    values, indices and gradient of both backends agree (the gradient up to float32 rounding: the NumPy
    scatter adds in float64)."""
    NK, _ = _numba_modules()
    x = RNG.standard_normal((3, 8, 110, 100)).astype(np.float32)
    x[RNG.random(x.shape) < 1e-4] = np.nan
    assert x.size >= NK.SERIAL_BELOW
    results = []
    for kernels in BACKENDS:
        with mg.kernels.use_backend(kernels):
            t = mg.tensor(x, requires_grad=True)
            y = pool(F(mg), t)
            index = y.grad_fn.index
            y.backward(mg.tensor(np.cos(np.arange(y.numel(), dtype=np.float32)).reshape(y.shape)))
            results.append((y.detach().numpy(), index, t.grad.numpy()))
    (y1, i1, g1), (y2, i2, g2) = results
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_allclose(g1, g2, rtol=1e-6, atol=1e-6)


def test_numba_max_pool_gradient_is_pytorchs_bit_for_bit():
    """Overlapping windows sharing their maximum (float32): the scatter-add adds in float32 in output order,
    as PyTorch's CPU backward does, so the gradient is PyTorch's exactly."""
    torch = torch_or_skip()
    _numba_modules()
    x = RNG.standard_normal((4, 8, 33, 31)).astype(np.float32)
    x[:, :, ::3] = 1.0                                 # ties: one element wins several windows
    g = RNG.standard_normal((4, 8, 17, 16)).astype(np.float32)
    with mg.kernels.use_backend("numba"):
        ours = mg.tensor(x, requires_grad=True)
        F(mg).max_pool2d(ours, 3, 2, 1).backward(mg.tensor(g))
    theirs = torch.tensor(x, requires_grad=True)
    F(torch).max_pool2d(theirs, 3, 2, 1).backward(torch.tensor(g))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_numba_forward_takes_the_values_from_the_scan(monkeypatch):
    """On the numba backend the forward gathers nothing: the scan returned the values with the indices."""
    _, K = _numba_modules()

    def no_gather(*args):
        raise AssertionError("a second pass over x")
    monkeypatch.setattr(K, "take", no_gather)
    monkeypatch.setattr(P, "_take", no_gather)
    x = mg.tensor(normal(2, 3, 8, 9), requires_grad=True)
    with mg.kernels.use_backend("numba"):
        for pool in (lambda t: F(mg).max_pool2d(t, 2), lambda t: F(mg).max_pool2d(t, 3, 2, 1, ceil_mode=True),
                     lambda t: F(mg).adaptive_max_pool2d(t, 3)):
            pool(x).sum().backward()


def test_dtypes_without_kernels_keep_the_numpy_path():
    """float16 (no numba kernel) pools the same on both backends."""
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float16)
    for pool in (lambda t: F(mg).max_pool2d(t, 2, return_indices=True),
                 lambda t: F(mg).max_pool2d(t, 3, 2, 1, return_indices=True)):
        results = []
        for kernels in BACKENDS:
            with mg.kernels.use_backend(kernels):
                t = mg.tensor(x, requires_grad=True)
                y, index = pool(t)
                y.sum().backward()
                results.append((y.detach().numpy(), index.numpy(), t.grad.numpy()))
        for ours, reference in zip(*results):
            assert ours.dtype == reference.dtype
            np.testing.assert_array_equal(ours, reference)


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                    dict(kernel_size=2, padding=1, divisor_override=-3),
                                    dict(kernel_size=(7, 6)), dict(kernel_size=3, ceil_mode=True, stride=2)], ids=str)
def test_int64_average_pooling_truncates_as_pytorch(kwargs):
    """int64 average pooling divides each window's integer sum in C's integer division (toward zero); no other
    integer dtype is pooled."""
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 7, 6))
    ours = mg.nn.functional.avg_pool2d(mg.tensor(x), **kwargs)
    assert ours.dtype == mg.int64
    torch = torch_or_skip()
    np.testing.assert_array_equal(ours.numpy(),            # int64 results: exact by construction
                                  torch.nn.functional.avg_pool2d(torch.tensor(x), **kwargs).numpy())


def test_int64_average_pooling_by_hand():
    x = mg.tensor([[[[-3, 0], [0, 0]]]])
    assert mg.nn.functional.avg_pool2d(x, 2).tolist() == [[[[0]]]]               # -3 / 4 truncates to 0, not -1
    assert mg.nn.functional.avg_pool2d(x, 2, divisor_override=2).tolist() == [[[[-1]]]]
    with pytest.raises(NotImplementedError, match="\"avg_pool2d\" not implemented for 'Int'"):
        mg.nn.functional.avg_pool2d(x.int(), 2)
