"""3-d pooling, padding, resampling and channel dropout, max unpooling, channel shuffle and the
``*_with_indices`` aliases (``minigrad/ops/pool.py``, ``minigrad/nn/pooling.py``) against PyTorch.

* a table of cases: float64 gradcheck, PyTorch mirror (forward and gradient) and double-backward mirror, with
  one-voxel, unbatched and batch-1 inputs;
* hypothesis sweeps over kernel/stride/padding/dilation/ceil_mode/count_include_pad/divisor/modes with odd,
  even and one-voxel sizes: forward, gradient and the returned indices (exactly) equal PyTorch's;
* ties and NaN in 3-d max pooling (on both kernel backends: the scan is NumPy's for 3 axes, the gather and
  scatter-add are the numba kernels');
* max unpooling: duplicate-free indices (random ones, and those of a max pooling), ``output_size``, duplicates
  (the later write stays, as in PyTorch);
* the modules (output, gradient, repr, state_dict keys);
* bad input: PyTorch's exception type, a message naming the problem, the input unchanged.
"""
import inspect
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import (
    assert_double_mirror,
    assert_mirror,
    check_grad,
    run_both,
    torch_or_replay,
    torch_or_skip,
    torch_raises,
)
from .test_pool import BACKENDS, F, _compare, backend, bend, normal, pool_case  # noqa: F401 - the backend fixture


def distinct_indices(batch, in_sizes, out_sizes, seed=0):
    """Flat positions (*batch, *in_sizes) in out_sizes, distinct within each (n, c) plane: an index set max
    unpooling is defined for, not only the ones a max pooling gives."""
    rng = np.random.default_rng(seed)
    n_in, n_out = int(np.prod(in_sizes)), int(np.prod(out_sizes))
    rows = [rng.permutation(n_out)[:n_in] for _ in range(int(np.prod(batch)))]
    return np.array(rows, dtype=np.int64).reshape(tuple(batch) + tuple(in_sizes))


def unpool(d, index, *args, **kwargs):
    """fn(lib, x): ``max_unpool{d}d`` of x at the fixed ``index`` (an int64 array)."""
    return lambda lib, x: getattr(F(lib), f"max_unpool{d}d")(x, lib.tensor(index), *args, **kwargs)


# --------------------------------------------------------------------------- the table of cases
CASES = {
    "max_pool3d": (lambda lib, x: F(lib).max_pool3d(x, 2), (2, 2, 4, 5, 4)),
    "max_pool3d_all": (lambda lib, x: F(lib).max_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True),
                       (1, 2, 5, 6, 5)),
    "max_pool3d_unbatched": (lambda lib, x: F(lib).max_pool3d(x, 3, 1, 1), (2, 3, 4, 3)),
    "max_pool3d_ceil_tiled": (lambda lib, x: F(lib).max_pool3d(x, 2, ceil_mode=True), (1, 2, 3, 5, 4)),
    "max_pool3d_with_indices": (lambda lib, x: F(lib).max_pool3d_with_indices(x, 2, 1)[0], (1, 1, 3, 3, 4)),
    "avg_pool3d": (lambda lib, x: F(lib).avg_pool3d(x, 3, 2, 1, True, False), (2, 2, 5, 4, 5)),
    "avg_pool3d_include": (lambda lib, x: F(lib).avg_pool3d(x, (2, 3, 2), 1, (1, 1, 0)), (1, 2, 3, 4, 3)),
    "avg_pool3d_divisor": (lambda lib, x: F(lib).avg_pool3d(x, 2, divisor_override=3), (2, 4, 5, 4)),
    "adaptive_avg_pool3d": (lambda lib, x: F(lib).adaptive_avg_pool3d(x, (3, 2, 4)), (2, 2, 5, 5, 6)),
    "adaptive_avg_pool3d_none": (lambda lib, x: F(lib).adaptive_avg_pool3d(x, (None, 3, 1)), (2, 4, 4, 5)),
    "adaptive_max_pool3d": (lambda lib, x: F(lib).adaptive_max_pool3d(x, (2, 3, 2)), (1, 2, 5, 7, 3)),
    "adaptive_max_pool3d_unbatched": (lambda lib, x: F(lib).adaptive_max_pool3d(x, 4), (2, 5, 3, 6)),
    "pad_5d_constant": (lambda lib, x: F(lib).pad(x, (1, 2, -1, 1, 0, 1), value=0.5), (2, 1, 3, 4, 5)),
    "pad_5d_reflect": (lambda lib, x: F(lib).pad(x, (2, 1, 3, 0, 1, 2), mode="reflect"), (1, 2, 4, 4, 3)),
    "pad_4d_reflect_unbatched": (lambda lib, x: F(lib).pad(x, (1, 1, 1, 1, 1, 1), mode="reflect"), (2, 2, 3, 2)),
    "pad_5d_replicate": (lambda lib, x: F(lib).pad(x, (2, 1, 1, 3, 0, 2), mode="replicate"), (1, 2, 3, 2, 4)),
    "pad_5d_circular": (lambda lib, x: F(lib).pad(x, (3, 1, 2, 2, 1, 0), mode="circular"), (2, 1, 2, 3, 4)),
    "interpolate_5d_nearest": (lambda lib, x: F(lib).interpolate(x, size=(5, 3, 2)), (2, 2, 3, 4, 3)),
    "interpolate_5d_nearest_scale": (lambda lib, x: F(lib).interpolate(x, scale_factor=(1.5, 2, 0.7)),
                                     (1, 2, 3, 4, 5)),
    "interpolate_5d_trilinear": (lambda lib, x: F(lib).interpolate(x, scale_factor=(1.7, 0.6, 2),
                                                                   mode="trilinear"), (2, 1, 4, 5, 3)),
    "interpolate_5d_trilinear_corners": (lambda lib, x: F(lib).interpolate(x, size=(4, 2, 3), mode="trilinear",
                                                                           align_corners=True), (1, 2, 3, 4, 2)),
    "interpolate_3d_linear": (lambda lib, x: F(lib).interpolate(x, scale_factor=2.5, mode="linear"), (2, 3, 4)),
    "one_voxel_max_pool3d": (lambda lib, x: F(lib).max_pool3d(x, 2, 1, 1, ceil_mode=True), (1, 2, 1, 1, 1)),
    "one_voxel_avg_pool3d": (lambda lib, x: F(lib).avg_pool3d(x, 1, 1, 0, count_include_pad=False),
                             (1, 1, 1, 1)),
    "one_voxel_adaptive_max": (lambda lib, x: F(lib).adaptive_max_pool3d(x, (2, 3, 1)), (1, 2, 1, 1, 1)),
    "one_voxel_replicate": (lambda lib, x: F(lib).pad(x, (2, 1, 1, 2, 0, 1), mode="replicate"), (1, 1, 1, 1, 1)),
    "one_voxel_trilinear": (lambda lib, x: F(lib).interpolate(x, size=(3, 2, 2), mode="trilinear"),
                            (1, 2, 1, 1, 1)),
    "max_unpool1d": (unpool(1, distinct_indices((2, 3), (4,), (8,)), 2), (2, 3, 4)),
    "max_unpool1d_unbatched": (unpool(1, distinct_indices((3,), (3,), (7,)), 3, 2, output_size=(7,)), (3, 3)),
    "max_unpool2d": (unpool(2, distinct_indices((2, 2), (2, 3), (4, 6)), 3, 2, 1, (4, 6)), (2, 2, 2, 3)),
    "max_unpool2d_unbatched": (unpool(2, distinct_indices((2,), (3, 2), (6, 4)), 2), (2, 3, 2)),
    "max_unpool3d": (unpool(3, distinct_indices((1, 2), (2, 2, 3), (4, 5, 6)), 2, output_size=(1, 2, 4, 5, 6)),
                     (1, 2, 2, 2, 3)),
    "max_unpool3d_unbatched": (unpool(3, distinct_indices((2,), (1, 2, 2), (2, 4, 3)), (2, 2, 1), (2, 2, 2)),
                               (2, 1, 2, 2)),
    "channel_shuffle": (lambda lib, x: F(lib).channel_shuffle(x, 3), (2, 6, 2, 3)),
    "channel_shuffle_3d": (lambda lib, x: F(lib).channel_shuffle(x, 2), (1, 4, 2, 1, 3)),
    "channel_shuffle_1d": (lambda lib, x: F(lib).channel_shuffle(x, 4), (2, 8, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_gradcheck(name):
    fn, shape = CASES[name]
    check_grad(lambda x: fn(mg, x), normal(*shape))


@pytest.mark.parametrize("name", CASES)
def test_mirror(name):
    fn, shape = CASES[name]
    assert_mirror(*run_both(fn), normal(*shape))


@pytest.mark.parametrize("name", CASES)
def test_double_mirror(name):
    fn, shape = CASES[name]
    assert_double_mirror(*run_both(lambda lib, x: bend(fn(lib, x))), normal(*shape))


@pytest.mark.parametrize("name", [n for n in CASES if "max" in n])
def test_max_cases_on_the_numba_backend(name):
    """The 3-d scan is NumPy's on either backend; the gather and scatter-add are the numba kernels here."""
    fn, shape = CASES[name]
    with mg.kernels.use_backend("numba"):
        assert_mirror(*run_both(fn), normal(*shape))
        check_grad(lambda x: fn(mg, x), normal(*shape))


# --------------------------------------------------------------------------- sweeps
batches = st.sampled_from([(), (1,), (2,)])


@pytest.mark.parametrize("kernels", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(case=pool_case(3), ceil_mode=st.booleans(), batch=batches)
def test_max_pool3d_sweep(kernels, case, ceil_mode, batch):
    size, kernel, stride, padding, dilation = case
    with mg.kernels.use_backend(kernels):
        _compare(lambda lib, t: F(lib).max_pool3d(t, kernel, stride, padding, dilation, ceil_mode, True),
                 normal(*batch, 2, *size), indices=True)


def _avg_args(case):
    """A pool_case's sizes, kernel, stride, padding for 3-d average pooling (no dilation; PyTorch wants the
    kernel within the input, padding aside)."""
    size, kernel, stride, padding, _ = case
    kernel = tuple(min(k, n) for n, k in zip(size, kernel))
    padding = tuple(min(p, k // 2) for p, k in zip(padding, kernel))
    return size, kernel, stride, padding


@settings(max_examples=40, deadline=None)
@given(case=pool_case(3), ceil_mode=st.booleans(), count_include_pad=st.booleans(),
       divisor=st.sampled_from([None, None, 1, 5]), batch=batches)
def test_avg_pool3d_sweep(case, ceil_mode, count_include_pad, divisor, batch):
    size, kernel, stride, padding = _avg_args(case)
    _compare(lambda lib, t: F(lib).avg_pool3d(t, kernel, stride, padding, ceil_mode, count_include_pad, divisor),
             normal(*batch, 2, *size))


@pytest.mark.parametrize("kernels", BACKENDS)
@settings(max_examples=25, deadline=None)
@given(size=st.tuples(*[st.integers(1, 6)] * 3), out=st.tuples(*[st.sampled_from([1, 2, 3, 5, 7, None])] * 3),
       batch=batches)
def test_adaptive_pool3d_sweep(kernels, size, out, batch):
    x = normal(*batch, 2, *size)
    with mg.kernels.use_backend(kernels):
        _compare(lambda lib, t: F(lib).adaptive_avg_pool3d(t, out), x)
        _compare(lambda lib, t: F(lib).adaptive_max_pool3d(t, out, True), x, indices=True)


@settings(max_examples=30, deadline=None)
@given(mode=st.sampled_from(["constant", "reflect", "replicate", "circular"]), batched=st.booleans(),
       size=st.tuples(*[st.integers(1, 4)] * 3), data=st.data())
def test_pad_5d_sweep(mode, batched, size, data):
    """Every mode on the last three dims of a 5-D (or unbatched 4-D) input, negative amounts included."""
    amounts = []
    for s in reversed(size):                    # (left, right) of the last dim first
        high = {"reflect": s - 1, "circular": s}.get(mode, 3)
        low = 0 if mode == "circular" else -(s // 2)
        left, right = data.draw(st.integers(low, high)), data.draw(st.integers(low, high))
        amounts += [left, right] if s + left + right >= 1 else [0, 0]
    value = data.draw(st.sampled_from([None, 0.0, -1.5])) if mode == "constant" else None
    x = normal(*((2,) if batched else ()), 2, *size)
    _compare(lambda lib, t: F(lib).pad(t, tuple(amounts), mode=mode, value=value), x)


@settings(max_examples=30, deadline=None)
@given(mode=st.sampled_from(["nearest", "nearest-exact", "trilinear", "area"]), align=st.booleans(),
       size=st.tuples(*[st.integers(1, 4)] * 3), data=st.data())
def test_interpolate_5d_sweep(mode, align, size, data):
    if data.draw(st.booleans()):
        kwargs = {"size": data.draw(st.tuples(*[st.integers(1, 6)] * 3))}
    else:
        scales = data.draw(st.tuples(*[st.sampled_from([0.5, 1.0, 1.5, 2.0, 2.3])] * 3))
        if any(np.floor(np.multiply(size, scales)) < 1):
            scales = (2.0, 2.0, 2.0)
        kwargs = {"scale_factor": scales, "recompute_scale_factor": data.draw(st.sampled_from([None, True]))}
    if mode == "trilinear":
        kwargs["align_corners"] = align
    _compare(lambda lib, t: F(lib).interpolate(t, mode=mode, **kwargs), normal(data.draw(st.integers(1, 2)), 2,
                                                                                 *size))


@settings(max_examples=40, deadline=None)
@given(d=st.sampled_from([1, 2, 3]), batch=batches, data=st.data())
def test_max_unpool_after_max_pool_sweep(d, batch, data):
    """Unpooling PyTorch's indices of a max pooling (no dilation), with the output size as default or as the
    pooled input's (with or without batch and channel): like PyTorch, or the same error type."""
    torch = torch_or_replay()
    size, kernel, stride, padding, _ = data.draw(pool_case(d).filter(lambda c: all(dl == 1 for dl in c[4])))
    x = normal(*batch, 2, *size)
    _, index = getattr(F(torch), f"max_pool{d}d")(torch.tensor(x), kernel, stride, padding, return_indices=True)
    output_size = data.draw(st.sampled_from([None, size, x.shape]))
    pooled = normal(*index.shape)
    fn = unpool(d, index.numpy(), kernel, stride, padding, output_size)
    try:
        theirs = fn(torch, torch.tensor(pooled))
    except (RuntimeError, ValueError) as error:          # output_size not within a stride of the default
        with pytest.raises(type(error)):
            fn(mg, mg.tensor(pooled))
        return
    if theirs.numel() == 0:          # PyTorch returns an empty output (whose backward fails); minigrad refuses
        with pytest.raises(RuntimeError, match="invalid max index"):
            fn(mg, mg.tensor(pooled))
        return
    assert_mirror(*run_both(fn), pooled)


@settings(max_examples=30, deadline=None)
@given(d=st.sampled_from([1, 2, 3]), batch=batches, data=st.data())
def test_max_unpool_distinct_indices_sweep(d, batch, data):
    """Any indices distinct within each plane: the input lands exactly there, zeros elsewhere, as PyTorch."""
    in_sizes = tuple(data.draw(st.integers(1, 3)) for _ in range(d))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(d))
    default = tuple((n - 1) * s + s for n, s in zip(in_sizes, stride))          # kernel = stride, no padding
    out_sizes = tuple(o + data.draw(st.integers(1 - s, s - 1)) for o, s in zip(default, stride))
    if int(np.prod(out_sizes)) < int(np.prod(in_sizes)):
        out_sizes = default
    index = distinct_indices(batch + (2,), in_sizes, out_sizes, seed=data.draw(st.integers(0, 100)))
    x = normal(*batch, 2, *in_sizes)
    out = assert_mirror(*run_both(unpool(d, index, stride, output_size=out_sizes)), x)
    planes = out.detach().numpy().reshape(-1, int(np.prod(out_sizes)))             # independent of PyTorch too
    np.testing.assert_array_equal(np.take_along_axis(planes, index.reshape(planes.shape[0], -1), axis=1),
                                  x.reshape(planes.shape[0], -1))
    assert np.count_nonzero(planes) == np.count_nonzero(x)


def test_max_unpool_duplicate_indices_keep_the_later_write():
    """Two inputs at one position: the later one (row-major) stays, as in PyTorch's CPU loop; the gradient of
    each is the upstream gradient at its index, as PyTorch's (so not the finite differences of the forward,
    which the overwritten element does not reach: no gradcheck here)."""
    index = np.array([[[[0, 3], [3, 0]]], [[[2, 2], [1, 1]]]])
    out = assert_mirror(*run_both(unpool(2, index, 1)), normal(2, 1, 2, 2))
    assert np.count_nonzero(out.detach().numpy()) == 4


@settings(max_examples=25, deadline=None)
@given(groups=st.integers(1, 4), per_group=st.integers(1, 3), spatial=st.lists(st.integers(1, 3), max_size=3),
       n=st.integers(1, 2))
def test_channel_shuffle_sweep(groups, per_group, spatial, n):
    torch = torch_or_skip()
    x = normal(n, groups * per_group, *spatial) if spatial else normal(n, groups * per_group, 1)
    _compare(lambda lib, t: F(lib).channel_shuffle(t, groups), x)
    ints = np.arange(x.size).reshape(x.shape)                                      # other dtypes too
    np.testing.assert_array_equal(F(mg).channel_shuffle(mg.tensor(ints), groups).numpy(),
                                  F(torch).channel_shuffle(torch.tensor(ints), groups).numpy())


# --------------------------------------------------------------------------- ties and NaN
TIES = np.array([[1.0, 1.0, 2.0], [2.0, 3.0, 3.0], [3.0, 0.0, 3.0]])


@pytest.mark.parametrize("fn", [
    lambda lib, t: F(lib).max_pool3d(t, 2, 1, return_indices=True),
    lambda lib, t: F(lib).max_pool3d(t, (3, 2, 3), 2, (1, 1, 1), ceil_mode=True, return_indices=True),
    lambda lib, t: F(lib).max_pool3d(t, 2, return_indices=True),                  # tiled
    lambda lib, t: F(lib).adaptive_max_pool3d(t, (2, 2, 3), return_indices=True),
])
@pytest.mark.usefixtures("backend")
def test_max_pool3d_ties_route_the_gradient_like_pytorch(fn):
    """Equal values in overlapping windows: the index, and so the gradient, is PyTorch's (the first maximum
    in each window); a gradient accumulates where windows share their maximum."""
    x = np.stack([TIES, TIES.T, np.full((3, 3), 3.0)])[None, None]               # (1, 1, 3, 3, 3)
    _compare(fn, x, indices=True)


@pytest.mark.parametrize("fn", [
    lambda lib, t: F(lib).max_pool3d(t, 2, return_indices=True),
    lambda lib, t: F(lib).max_pool3d(t, 3, 1, 1, return_indices=True),
    lambda lib, t: F(lib).adaptive_max_pool3d(t, (1, 2, 1), return_indices=True),
])
@pytest.mark.usefixtures("backend")
def test_max_pool3d_nan_wins_as_in_pytorch(fn):
    torch = torch_or_skip()
    x = normal(1, 2, 2, 4, 3)
    x[0, 0, 1, 1:3, 0] = np.nan
    x[0, 1, 0, 0, 0] = x[0, 1, 1, 3, 2] = np.nan
    ours, theirs = fn(mg, mg.tensor(x)), fn(torch, torch.tensor(x))
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())           # NaN equal to NaN


@pytest.mark.usefixtures("backend")
def test_max_pool3d_of_minus_inf_with_padding():
    """An input element equal to the padding value: PyTorch picks the first element inside the input."""
    x = np.full((1, 1, 2, 3, 2), -np.inf)
    x[0, 0, 1, 2, 1] = 1.0
    _compare(lambda lib, t: F(lib).max_pool3d(t, 3, 1, 1, return_indices=True), x, indices=True)


@pytest.mark.usefixtures("backend")
def test_float32_keeps_dtype():
    x = normal(1, 2, 3, 4, 4).astype(np.float32)
    for fn in (lambda t: F(mg).max_pool3d(t, 2), lambda t: F(mg).avg_pool3d(t, 3, 1, 1),
               lambda t: F(mg).adaptive_max_pool3d(t, 2), lambda t: F(mg).pad(t, (1,) * 6, mode="circular"),
               lambda t: F(mg).interpolate(t, scale_factor=2, mode="trilinear"),
               lambda t: F(mg).max_unpool3d(*F(mg).max_pool3d(t, 2, return_indices=True), 2)):
        t = mg.tensor(x, requires_grad=True)
        y = fn(t)
        y.sum().backward()
        assert y.dtype == np.float32 and t.grad.dtype == np.float32


@pytest.mark.parametrize("fn", [
    lambda lib, t: F(lib).max_pool3d(t, 2, 1, 1),
    lambda lib, t: F(lib).avg_pool3d(t, 2),
    lambda lib, t: F(lib).adaptive_max_pool3d(t, (1, 3, 2)),
    lambda lib, t: F(lib).pad(t, (1,) * 6, mode="reflect"),
    lambda lib, t: F(lib).interpolate(t, scale_factor=2, mode="trilinear"),
    lambda lib, t: F(lib).max_unpool3d(t, lib.zeros(t.shape, dtype=lib.int64), 2),
    lambda lib, t: F(lib).max_unpool1d(t[:, :, 0, 0], lib.zeros(t.shape[:2] + t.shape[-1:], dtype=lib.int64), 2),
    lambda lib, t: F(lib).channel_shuffle(t, 2),
])
def test_empty_batch(fn):
    """A batch of 0: an empty output of PyTorch's shape, and an empty gradient."""
    assert_mirror(*run_both(fn), normal(0, 2, 3, 2, 4))


# --------------------------------------------------------------------------- the *_with_indices aliases
@pytest.mark.parametrize("name, args, shape", [
    ("max_pool1d", (3, 2, 1), (2, 3, 7)), ("max_pool2d", (2,), (2, 4, 5)), ("max_pool3d", (2, 1), (1, 2, 3, 3, 4)),
    ("adaptive_max_pool1d", (3,), (2, 5)), ("adaptive_max_pool2d", ((2, 3),), (1, 2, 4, 5)),
    ("adaptive_max_pool3d", (2,), (2, 3, 3, 4)),
])
def test_with_indices_aliases(name, args, shape):
    """``<pool>_with_indices`` returns (output, indices) whatever return_indices says, with PyTorch's signature."""
    torch = torch_or_skip()
    alias = getattr(F(mg), f"{name}_with_indices")
    assert list(inspect.signature(alias).parameters) == \
        list(inspect.signature(getattr(F(torch), f"{name}_with_indices")).parameters)
    x = normal(*shape)
    for kwargs in ({}, {"return_indices": False}):
        _compare(lambda lib, t, kwargs=kwargs: getattr(F(lib), f"{name}_with_indices")(t, *args, **kwargs), x,
                 indices=True)
    ours = alias(mg.tensor(x), *args)
    expected = getattr(F(mg), name)(mg.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(ours[1].numpy(), expected[1].numpy())


# --------------------------------------------------------------------------- modules
MODULES = [
    ("MaxPool3d", (3, 2, 1), {"ceil_mode": True}, (1, 2, 5, 6, 4)),
    ("MaxPool3d", ((2, 1, 2),), {"dilation": (1, 2, 1), "stride": 1}, (2, 3, 4, 5)),
    ("AvgPool3d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True},
     (1, 2, 4, 6, 5)),
    ("AvgPool3d", (2,), {"divisor_override": 3}, (2, 4, 4, 3)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 3, 5, 4, 4)),
    ("AdaptiveAvgPool3d", (1,), {}, (2, 3, 5, 4)),
    ("AdaptiveMaxPool3d", (3,), {}, (1, 3, 5, 4, 4)),
    ("AdaptiveMaxPool1d", (2,), {}, (2, 3, 5)),
    ("ZeroPad3d", ((1, 0, 2, 1, 0, 1),), {}, (2, 2, 3, 4, 2)),
    ("ZeroPad3d", (1,), {}, (2, 3, 2, 2)),
    ("ZeroPad3d", ((1, 2),), {}, (1, 2, 2, 2, 2)),                  # a sequence pads as many dims as it covers
    ("ConstantPad1d", ([1, 2, 3, 4], 1.0), {}, (1, 2, 2, 2)),
    ("ZeroPad1d", (2,), {}, (2, 3)),
    ("ZeroPad2d", (1,), {}, (2, 3, 3)),
    ("ConstantPad3d", ((1, -1, 0, 2, 1, 1), -1.0), {}, (1, 2, 3, 4, 3)),
    ("ConstantPad2d", (2, 3.5), {}, (2, 3, 4)),
    ("ConstantPad1d", ((0, 2), 1), {}, (2, 3, 4)),
    ("ReflectionPad3d", (1,), {}, (1, 2, 2, 3, 4)),
    ("ReflectionPad3d", ((2, 1, 0, 1, 1, 1),), {}, (2, 3, 3, 3)),
    ("ReflectionPad1d", ((2, 1),), {}, (2, 3, 4)),
    ("ReplicationPad3d", ((1, 2, 3, 0, 1, 0),), {}, (1, 2, 2, 3, 4)),
    ("ReplicationPad1d", (3,), {}, (3, 4)),
    ("CircularPad3d", ((1, 2, 3, 0, 1, 0),), {}, (1, 2, 2, 3, 4)),
    ("CircularPad2d", (1,), {}, (2, 3, 4)),
    ("CircularPad1d", (2,), {}, (2, 3, 4)),
    ("Upsample", (), {"scale_factor": 2, "mode": "trilinear"}, (1, 2, 3, 2, 2)),
    ("Upsample", (), {"size": (2, 3, 4)}, (1, 2, 3, 2, 2)),
    ("Upsample", (), {"size": (2, 3, 4), "mode": "trilinear", "align_corners": True}, (1, 2, 3, 2, 2)),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, (1, 2, 3, 4)),
    ("UpsamplingNearest2d", ((3, 5),), {}, (2, 1, 2, 2)),
    ("UpsamplingBilinear2d", (), {"size": 3}, (1, 2, 2, 4)),
    ("UpsamplingBilinear2d", (), {"scale_factor": (1.5, 2)}, (1, 2, 3, 2)),
    ("ChannelShuffle", (2,), {}, (2, 6, 3, 2)),
    ("Dropout3d", (0.3,), {}, (2, 3, 2, 2, 2)),                      # in eval mode: the identity
]


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_mirror(name, args, kwargs, shape):
    torch = torch_or_replay()
    ours, theirs = getattr(mg.nn, name)(*args, **kwargs).eval(), getattr(torch.nn, name)(*args, **kwargs).eval()
    assert repr(ours) == repr(theirs)
    assert_mirror(ours, theirs, normal(*shape))
    assert ours.state_dict().keys() == theirs.state_dict().keys()


@pytest.mark.parametrize("d, args, size", [(1, (2,), 6), (2, (3, 2, 1), 5), (3, ((2, 1, 2),), 6)])
def test_max_unpool_modules(d, args, size):
    """MaxPool{d}d(return_indices=True) then MaxUnpool{d}d, with and without output_size, as PyTorch."""
    torch = torch_or_replay()
    pools, unpools = [getattr(lib.nn, f"MaxPool{d}d")(*args, return_indices=True) for lib in (mg, torch)], \
        [getattr(lib.nn, f"MaxUnpool{d}d")(*args) for lib in (mg, torch)]
    assert repr(unpools[0]) == repr(unpools[1]) and repr(pools[0]) == repr(pools[1])
    assert vars(unpools[0])["kernel_size"] == vars(unpools[1])["kernel_size"]
    x = normal(2, 3, *(size,) * d)                  # unpooled to that size by default
    for output_size in (None, x.shape[2:]):
        def fn(lib, t, output_size=output_size):
            return unpools[lib is torch](*pools[lib is torch](t), output_size=output_size)
        assert_mirror(*run_both(fn), x)


@pytest.mark.parametrize("name, args", [
    ("MaxPool3d", (2,)), ("MaxPool3d", ((2, 3, 1), 1, (1, 0, 0), 2, True, True)), ("AvgPool3d", (2,)),
    ("AvgPool3d", ((2, 3, 1), 1, 0, True, False, 3)), ("AdaptiveAvgPool3d", ((2, None, 3),)),
    ("AdaptiveMaxPool3d", (2, True)), ("ZeroPad3d", ((1, 2, 3, 4, 5, 6),)), ("ConstantPad3d", (1, 2.5)),
    ("ReflectionPad3d", (1,)), ("ReplicationPad3d", (2,)), ("CircularPad3d", (2,)), ("Dropout3d", ()),
    ("Dropout3d", (0.2, True)), ("MaxUnpool1d", (2,)), ("MaxUnpool2d", (2, 1, 1)), ("MaxUnpool3d", ((2, 2, 2),)),
    ("UpsamplingNearest2d", (None, 2)), ("UpsamplingBilinear2d", (3,)), ("UpsamplingNearest2d", ((3, 4),)),
    ("ChannelShuffle", (3,)),
])
def test_module_reprs(name, args):
    torch = torch_or_skip()
    assert repr(getattr(mg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


# --------------------------------------------------------------------------- channel dropout
@pytest.mark.parametrize("shape, mask_dims", [((4, 6, 2, 3, 2), 2), ((6, 3, 2, 2), 1)])
def test_dropout3d_zeroes_whole_channels(shape, mask_dims):
    """Batched (N, C, D, H, W): one draw per (n, c); unbatched (C, D, H, W): one per channel. Kept channels
    are scaled by 1 / (1 - p), the gradient is the same mask."""
    mg.manual_seed(0)
    x = mg.tensor(np.abs(normal(*shape)) + 1, requires_grad=True)
    y = F(mg).dropout3d(x, 0.4)
    ratio = (y / x).detach().numpy().reshape(shape[:mask_dims] + (-1,))           # (*channels, voxels)
    np.testing.assert_allclose(ratio, ratio[..., :1] * np.ones_like(ratio), rtol=1e-6)
    assert set(np.round(ratio[..., 0].ravel(), 6)) <= {0.0, round(1 / 0.6, 6)}
    assert 0 < np.count_nonzero(ratio[..., 0]) < ratio[..., 0].size
    y.backward(mg.ones(*shape))
    np.testing.assert_allclose(x.grad.numpy(), (y / x).detach().numpy(), rtol=1e-6)


def test_dropout3d_modes_and_warnings():
    x = mg.ones(2, 3, 2, 2, 2)
    assert F(mg).dropout3d(x, 0.5, training=False) is x
    np.testing.assert_array_equal(F(mg).dropout3d(x, 1.0).numpy(), 0)
    drop = mg.nn.Dropout3d(0.5, inplace=True)
    mg.manual_seed(1)
    y = drop(x)
    assert y is x and set(np.unique(x.numpy())) <= {0.0, 2.0}
    with pytest.warns(UserWarning, match="3-D input to dropout3d"):
        F(mg).dropout3d(mg.ones(2, 3, 4), 0.5)
    mg.manual_seed(2)
    with pytest.warns(UserWarning):
        y = F(mg).dropout3d(mg.ones(6, 50, 4), 0.5).numpy()                    # drops over the first dim
    assert all(len(np.unique(plane)) == 1 for plane in y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F(mg).dropout3d(mg.ones(2, 3, 4, 4), 0.5)
        F(mg).dropout3d(mg.ones(2, 3, 4, 4, 1), 0.5)


# --------------------------------------------------------------------------- bad input
BAD = [
    (lambda lib, x: F(lib).max_pool3d(x, 2), (5, 5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).max_pool3d(x, 2), (1, 2, 2, 5, 5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).max_pool3d(x, 4), (1, 2, 3, 5, 5), "too small"),
    (lambda lib, x: F(lib).max_pool3d(x, 3, padding=(0, 2, 0)), (1, 2, 5, 5, 5), "half of"),
    (lambda lib, x: F(lib).max_pool3d(x, 2, padding=-1), (1, 2, 5, 5, 5), "non-negative"),
    (lambda lib, x: F(lib).max_pool3d(x, 2, stride=0), (1, 2, 5, 5, 5), "stride"),
    (lambda lib, x: F(lib).max_pool3d(x, 2, dilation=0), (1, 2, 5, 5, 5), "dilation"),
    (lambda lib, x: F(lib).max_pool3d(x, (2, 2)), (1, 2, 5, 5, 5), "kernel_size"),
    (lambda lib, x: F(lib).max_pool3d_with_indices(x, 2), (5, 5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).avg_pool3d(x, 2), (5, 5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).avg_pool3d(x, (2, 6, 2)), (1, 2, 5, 5, 5), "smaller than kernel size"),
    (lambda lib, x: F(lib).avg_pool3d(x, 3, 1, 1), (1, 2, 2, 5, 5), "smaller than kernel size"),
    (lambda lib, x: F(lib).avg_pool3d(x, 3, padding=2), (1, 2, 5, 5, 5), "half of"),
    (lambda lib, x: F(lib).avg_pool3d(x, 2, divisor_override=0), (1, 2, 5, 5, 5), "divisor"),
    (lambda lib, x: F(lib).adaptive_avg_pool3d(x, 2), (5, 5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).adaptive_max_pool3d(x, 2), (5, 5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).adaptive_max_pool3d_with_indices(x, 2), (5, 5), "4D or 5D"),
    (lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 3)), (1, 2, 5, 5, 5), "output_size must be 3"),
    (lambda lib, x: F(lib).pad(x, (2,) * 6, mode="reflect"), (1, 2, 2, 3, 3), "less than the corresponding"),
    (lambda lib, x: F(lib).pad(x, (0, 0, 0, 0, 3, 3), mode="reflect"), (2, 3, 3, 3), "less than the corresponding"),
    (lambda lib, x: F(lib).pad(x, (1,) * 6, mode="reflect"), (2, 3, 3), "not supported for 3D"),
    (lambda lib, x: F(lib).pad(x, (1,) * 6, mode="replicate"), (1, 1, 2, 3, 3, 3), "not supported for 6D"),
    (lambda lib, x: F(lib).pad(x, (0, 0, 0, 0, 0, 4), mode="circular"), (1, 2, 3, 3, 3), "wrapping around"),
    (lambda lib, x: lib.nn.CircularPad3d(1)(x), (2, 3, 3), "expected 4D or 5D input"),
    (lambda lib, x: lib.nn.CircularPad1d(1)(x), (3,), "expected 2D or 3D input"),
    (lambda lib, x: lib.nn.ReflectionPad3d(2)(x), (1, 1, 2, 3, 3), "less than the corresponding"),
    (lambda lib, x: lib.nn.ReflectionPad3d((1, 1))(x), (1, 1, 2, 3, 3), "not supported for 5D"),
    (lambda lib, x: lib.nn.ReplicationPad2d((1, 1, 1))(x), (1, 1, 3, 3), "divisible by 2"),
    (lambda lib, x: F(lib).interpolate(x, scale_factor=2, mode="trilinear"), (2, 3, 5, 5), "trilinear mode"),
    (lambda lib, x: F(lib).interpolate(x, scale_factor=2, mode="bilinear"), (1, 2, 3, 5, 5), "bilinear mode"),
    (lambda lib, x: F(lib).interpolate(x, size=(2, 3)), (1, 2, 3, 5, 5), "same number of spatial dimensions"),
    (lambda lib, x: F(lib).interpolate(x, size=(2, 0, 3)), (1, 2, 3, 5, 5), "greater than 0"),
    (lambda lib, x: F(lib).dropout3d(x, -0.1), (2, 3, 2, 4, 4), "between 0 and 1"),
    (lambda lib, x: F(lib).channel_shuffle(x, 4), (1, 6, 2), "divisible by groups"),
    (lambda lib, x: F(lib).channel_shuffle(x, 0), (1, 6, 2), "must be positive"),
    (lambda lib, x: F(lib).channel_shuffle(x, 2), (6, 2), "> 2 dims"),
    (lambda lib, x: F(lib).channel_shuffle(x, 2.0), (1, 6, 2), "int|integer"),
    (unpool(2, distinct_indices((1, 1), (2, 2), (4, 4)), 2, output_size=(6, 6)), (1, 1, 2, 2), "between 2 and 6"),
    (unpool(2, distinct_indices((1, 1), (2, 2), (4, 4)), 2, output_size=(5,)), (1, 1, 2, 2), "2 or 4 elements"),
    (unpool(1, distinct_indices((1, 1), (2,), (4,)), 2, output_size=(1, 2, 3, 4)), (1, 1, 2), "1 or 3 elements"),
    (unpool(2, distinct_indices((1, 1), (2, 2), (4, 4)), 2, output_size=(3, 3)), (1, 1, 2, 2), "invalid max index"),
    (unpool(3, distinct_indices((1, 1), (2, 2, 2), (4, 4, 4)) + 64, 2), (1, 1, 2, 2, 2), "invalid max index"),
    (unpool(1, -distinct_indices((1, 1), (2,), (4,)) - 1, 2), (1, 1, 2), "invalid max index"),
    (unpool(2, np.zeros((1, 1, 2, 1), dtype=np.int64), 2), (1, 1, 2, 2), "shape of indices"),
    (lambda lib, x: F(lib).max_unpool2d(x, lib.zeros(1, 1, 2, 2), 2), (1, 1, 2, 2), "int64"),
    (lambda lib, x: F(lib).max_unpool2d(x, lib.zeros(1, 1, 2, 2, dtype=lib.int32), 2), (1, 1, 2, 2), "int64"),
    (unpool(2, np.zeros((2, 2), dtype=np.int64), 2), (2, 2), "3D or 4D"),
    (unpool(3, np.zeros((1, 2, 2), dtype=np.int64), 2), (1, 2, 2), "4D or 5D"),
    (unpool(2, np.zeros((1, 1, 2, 2), dtype=np.int64), 2, padding=3), (1, 1, 2, 2), "non-negative"),
    (unpool(3, np.zeros((1, 1, 2, 2, 2), dtype=np.int64), 2, stride=0), (1, 1, 2, 2, 2), "greater than zero"),
    (unpool(2, np.zeros((2, 1, 0, 2), dtype=np.int64), 2), (2, 1, 0, 2), "non-zero size"),
]


def _raised(call):
    """The exception ``call()`` raises (a test failure if none)."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - any type: the caller compares it with PyTorch's
        return error
    pytest.fail("no exception raised")


@pytest.mark.parametrize("case", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_raises_like_pytorch(case):
    """The exception type PyTorch raises (exactly), a message with the gist of the problem, the input and its
    gradient untouched."""
    fn, shape, gist = case
    x = normal(*shape)
    theirs = torch_raises(lambda torch: fn(torch, torch.tensor(x)), x).exception()
    t = mg.tensor(x.copy(), requires_grad=True)
    ours = _raised(lambda: fn(mg, t))
    assert type(ours) is type(theirs), (ours, theirs)
    assert str(ours) and re.search(gist, str(ours)), (str(ours), gist)
    np.testing.assert_array_equal(t.detach().numpy(), x)
    assert t.grad is None
