"""The normalization kernels on both backends, and the backend switch.

* numba against the NumPy reference (the contract in minigrad/kernels/__init__.py; the references in minigrad/ops/norm/*norm.py): every
  kernel, forward and backward, every need_* combination, 1e-6 relative in float32, 1e-12 in float64;
* both backends against the formulas of docs/derivations/README.md written out in float64 here (``oracle``):
  odd shapes, a float32 row of 65,536 elements with mean 1e4 and std 1e-2, non-contiguous input;
* determinism: two runs are bitwise equal (numba's dw/db add per-chunk partials in a fixed order);
* the switch: MINIGRAD_BACKEND, set_backend/get_backend/use_backend, invalid names, the lazy numba
  import and the one warning when numba cannot be imported;
* the kernels as plain Python under NUMBA_DISABLE_JIT=1 (a subset, in a subprocess);
* the public functions (F.rms_norm, ...) give the same outputs and gradients on both backends.

"Relative" is max |actual - expected| / max |expected| over the whole array.
"""
import importlib
import itertools
import os
import subprocess
import sys
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.ops import norm as numpy_kernels
from minigrad.ops.norm.registry import NORMS

RTOL = {np.float32: 1e-6, np.float64: 1e-12}
NEEDS = list(itertools.product([False, True], repeat=3))   # (need_dx, need_dw, need_db)
NEED_IDS = ["".join(name for name, need in zip(("dx", "dw", "db"), n) if need) or "none" for n in NEEDS]
KERNEL_NAMES = ("rms_norm_forward", "rms_norm_backward", "layer_norm_forward", "layer_norm_backward",
                "group_norm_forward", "group_norm_backward", "batch_norm_stats", "batch_norm_train_stats",
                "batch_norm_train", "batch_norm_forward", "batch_norm_backward")
REPO = Path(__file__).resolve().parents[1]


def numba_kernels():
    pytest.importorskip("numba", reason="numba not installed: numba backend skipped")
    return importlib.import_module("minigrad.kernels.numba_kernels")


@pytest.fixture(params=["numpy", "numba", "numba-parallel"])
def kern(request, monkeypatch):
    """The kernel module of each backend; numba twice: at its own work threshold (the small cases here run on
    the serial twins) and with every kernel forced onto its parallel path (``SERIAL_BELOW = 0``)."""
    if request.param == "numpy":
        return numpy_kernels
    nb = numba_kernels()
    if request.param == "numba-parallel":
        monkeypatch.setattr(nb, "SERIAL_BELOW", 0)
    return nb


def assert_close(actual, expected, rtol, what="", scale=None):
    """max |actual - expected| <= rtol * scale (default: max |expected|); None must match None."""
    if expected is None or actual is None:
        assert actual is None and expected is None, f"{what}: {actual!r} vs {expected!r}"
        return
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} vs {expected.shape}"
    err = np.max(np.abs(actual.astype(np.float64) - expected), initial=0.0)
    scale = np.max(np.abs(expected), initial=0.0) if scale is None else scale
    assert err <= rtol * scale, f"{what}: max |diff| {err:.3g} > {rtol:g} * max |expected| {scale:.3g}"


def arrays(shape, n_params, dtype, seed=0, mean=0.5):
    """x, dy (shape) and w, b (n_params,) in ``dtype``, plus running statistics for BatchNorm's eval mode."""
    rng = np.random.default_rng(seed)
    x = mean + 2 * rng.standard_normal(shape)
    return dict(x=x.astype(dtype), dy=rng.standard_normal(shape).astype(dtype),
                w=(1 + 0.5 * rng.standard_normal(n_params)).astype(dtype),
                b=rng.standard_normal(n_params).astype(dtype),
                running_mean=rng.standard_normal(n_params).astype(dtype),
                running_rstd=(0.5 + rng.random(n_params)).astype(dtype))


# --------------------------------------------------------------------------- every kernel, numba against NumPy
# forward(m, a) -> (y, *stats) (rms, ln, gn-G* also take eps); backward(m, a, stats, needs) -> (dx, dw, db).
# 13 rows and N*G = 3*G tasks are not multiples of the thread count; D = 29 and S = 5 are not multiples
# of a SIMD width.
Case = namedtuple("Case", "shape n_params forward backward")
ROWS, CHANNELS = (13, 29), (3, 6, 5)
TALL = (53, 29)   # LayerNorm's backward adds dw's and db's terms in blocks of 16 rows: 53 ends in a partial block


def _batch_norm_train_forward(m, a, eps=1e-5):
    mean, var = m.batch_norm_stats(a["x"])
    rstd = (1 / np.sqrt(var + eps)).astype(var.dtype)
    return m.batch_norm_forward(a["x"], mean, rstd, a["w"], a["b"]), mean, rstd


CASES = {
    "rms": Case(ROWS, 29, lambda m, a, eps=1e-5: m.rms_norm_forward(a["x"], a["w"], None, eps, 29, False),
                lambda m, a, st, nd: m.rms_norm_backward(a["dy"], a["x"], *st, a["w"], 1e-5, 29, False, *nd)),
    "rms-bias-no-weight": Case(ROWS, 29, lambda m, a: m.rms_norm_forward(a["x"], None, a["b"], 1e-5, 29, False),
                               lambda m, a, st, nd: m.rms_norm_backward(a["dy"], a["x"], *st, None, 1e-5, 29, False,
                                                                        *nd)),
    "prms-eps-outside": Case(ROWS, 29, lambda m, a: m.rms_norm_forward(a["x"], a["w"], a["b"], 1e-3, 10, True),
                             lambda m, a, st, nd: m.rms_norm_backward(a["dy"], a["x"], *st, a["w"], 1e-3, 10, True,
                                                                      *nd)),
    "ln": Case(ROWS, 29, lambda m, a, eps=1e-5: m.layer_norm_forward(a["x"], a["w"], a["b"], eps),
               lambda m, a, st, nd: m.layer_norm_backward(a["dy"], a["x"], *st, a["w"], *nd)),
    "ln-tall": Case(TALL, 29, lambda m, a, eps=1e-5: m.layer_norm_forward(a["x"], a["w"], a["b"], eps),
                    lambda m, a, st, nd: m.layer_norm_backward(a["dy"], a["x"], *st, a["w"], *nd)),
    "ln-no-affine": Case(ROWS, 29, lambda m, a: m.layer_norm_forward(a["x"], None, None, 1e-5),
                         lambda m, a, st, nd: m.layer_norm_backward(a["dy"], a["x"], *st, None, *nd)),
    **{f"gn-G{g}": Case(CHANNELS, 6, lambda m, a, eps=1e-5, g=g: m.group_norm_forward(a["x"], g, a["w"], a["b"], eps),
                        lambda m, a, st, nd, g=g: m.group_norm_backward(a["dy"], a["x"], *st, g, a["w"], *nd))
       for g in (1, 2, 6)},                                            # G = C is InstanceNorm
    "gn-no-affine": Case(CHANNELS, 6, lambda m, a: m.group_norm_forward(a["x"], 3, None, None, 1e-5),
                         lambda m, a, st, nd: m.group_norm_backward(a["dy"], a["x"], *st, 3, None, *nd)),
    "bn-train": Case(CHANNELS, 6, _batch_norm_train_forward,
                     lambda m, a, st, nd: m.batch_norm_backward(a["dy"], a["x"], *st, a["w"], True, *nd)),
    "bn-train-one-call": Case(CHANNELS, 6,
                              lambda m, a: m.batch_norm_train(a["x"], 1e-5, 0.1, None, None, a["w"], a["b"]),
                              lambda m, a, st, nd: m.batch_norm_backward(a["dy"], a["x"], *st, a["w"], True, *nd)),
    "bn-eval": Case(CHANNELS, 6, lambda m, a: (m.batch_norm_forward(a["x"], a["running_mean"], a["running_rstd"],
                                                                    a["w"], a["b"]),
                                               a["running_mean"], a["running_rstd"]),
                    lambda m, a, st, nd: m.batch_norm_backward(a["dy"], a["x"], *st, a["w"], False, *nd)),
    "bn-no-affine": Case(CHANNELS, 6, lambda m, a: _batch_norm_train_forward(m, dict(a, w=None, b=None)),
                         lambda m, a, st, nd: m.batch_norm_backward(a["dy"], a["x"], *st, None, True, *nd)),
}


def assert_same_outputs(actual, expected, rtol, names):
    for out, ref, name in zip(actual, expected, names):
        if ref is not None and out is not None:
            assert out.dtype == ref.dtype, f"{name}: dtype {out.dtype} vs {ref.dtype}"
        assert_close(out, ref, rtol, name)


def test_numba_kernels_have_the_numpy_signatures():
    import inspect
    nb = numba_kernels()
    for name in KERNEL_NAMES:
        assert inspect.signature(getattr(nb, name)) == inspect.signature(getattr(numpy_kernels, name)), name


@pytest.fixture(params=["serial", "parallel", "long-slices", "long-slices-serial"])
def nb(request, monkeypatch):
    """The numba kernels on each path: the small cases here run on the serial twins at the real threshold;
    ``SERIAL_BELOW = 0`` forces every kernel onto its parallel path; ``long-slices`` also takes the paths the real
    thresholds keep for slices longer than these: BatchNorm's kernels one task per channel and GroupNorm's
    pipelined forward (on numba's threads, and on the serial twins)."""
    kernels_ = numba_kernels()
    if request.param in ("parallel", "long-slices"):
        monkeypatch.setattr(kernels_, "SERIAL_BELOW", 0)
    if request.param.startswith("long-slices"):
        monkeypatch.setattr(kernels_, "BY_CHANNEL_SLICE_BYTES", 0)
        monkeypatch.setattr(kernels_, "BY_CHANNEL_CHANNELS_PER_THREAD", 0)
        monkeypatch.setattr(kernels_, "PIPELINED_SLICE_BYTES", 0)
    return kernels_


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_numba_forward_matches_numpy(case, dtype, nb):
    c = CASES[case]
    a = arrays(c.shape, c.n_params, dtype)
    expected = c.forward(numpy_kernels, a)
    assert_same_outputs(c.forward(nb, a), expected, RTOL[dtype], ["y", "stat 1", "stat 2"])


@pytest.mark.parametrize("needs", NEEDS, ids=NEED_IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_numba_backward_matches_numpy(case, dtype, needs, nb):
    """Both backwards get the reference forward's statistics; only the gradients asked for are computed."""
    c = CASES[case]
    a = arrays(c.shape, c.n_params, dtype)
    stats = c.forward(numpy_kernels, a)[1:]
    expected = c.backward(numpy_kernels, a, stats, needs)
    actual = c.backward(nb, a, stats, needs)
    assert [g is not None for g in actual] == list(needs)
    assert_same_outputs(actual, expected, RTOL[dtype], ["dx", "dw", "db"])


@pytest.mark.parametrize("buffers", [True, False], ids=["buffers", "no-buffers"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_batch_norm_train_stats(kern, dtype, buffers):
    """Training's statistics in one call: the mean as batch_norm_stats gives it, rstd = 1/sqrt(var + eps) and
    the running buffers blended with the unbiased variance, against the float64 formulas; on one backend,
    bit for bit what its batch_norm_stats followed by the NumPy rstd and blend give."""
    a = arrays((5, 6, 7), 6, dtype)
    x, eps, momentum, count = a["x"], 1e-3, 0.25, 5 * 7
    running = (a["running_mean"].copy(), a["running_rstd"].copy()) if buffers else (None, None)
    mean, rstd = kern.batch_norm_train_stats(x, eps, momentum, *running)
    x64 = x.astype(np.float64)
    mean64, var64 = x64.mean((0, 2)), x64.var((0, 2))
    assert mean.dtype == rstd.dtype == dtype
    assert_close(mean, mean64, RTOL[dtype], "mean")
    assert_close(rstd, 1 / np.sqrt(var64 + eps), RTOL[dtype], "rstd")
    stats_mean, stats_var = kern.batch_norm_stats(x)
    np.testing.assert_array_equal(mean, stats_mean)
    np.testing.assert_array_equal(rstd, 1.0 / np.sqrt(stats_var + eps))
    if buffers:
        for got, old, stat, stat64 in ((running[0], a["running_mean"], stats_mean, mean64),
                                       (running[1], a["running_rstd"], stats_var * (count / (count - 1)),
                                        var64 * count / (count - 1))):
            np.testing.assert_array_equal(got, momentum * stat + (1 - momentum) * old)
            assert_close(got, momentum * stat64 + (1 - momentum) * old.astype(np.float64), RTOL[dtype], "running")


@pytest.mark.parametrize("eps", [0.0, 1e-6])
@pytest.mark.parametrize("case", ["rms", "ln", "gn-G2"])
def test_zero_and_constant_rows_follow_numpy(case, eps, nb):
    """As in PyTorch: with eps = 0 a zero (RMS) or constant (centered) row has rstd = inf and
    NaN outputs; with eps > 0 everything stays finite. NaN and inf must land where NumPy puts them."""
    c = CASES[case]
    a = arrays(c.shape, c.n_params, np.float64)
    a["x"][0], a["x"][1] = 0.0, 3.0                                    # a zero and a constant row / sample
    with np.errstate(all="ignore"):
        expected, actual = c.forward(numpy_kernels, a, eps), c.forward(nb, a, eps)
        grads = [c.backward(m, a, expected[1:], (True, True, True)) for m in (numpy_kernels, nb)]
    for got, ref in zip(actual + grads[1], expected + grads[0]):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isfinite(actual[0]).all() == (eps > 0)


# --------------------------------------------------------------------------- both backends against the formulas
def oracle(x, dy, axes, eps, centered, w, b):
    """docs/derivations/README.md's two forms in float64 over ``axes`` (w, b broadcastable): y, mean, var, rstd, dx, dw_terms = dy * xhat.

    dx is a difference of terms of size |rstd * gw| that cancel (almost entirely in one-element
    rows), so its error is measured against dx_scale = max |rstd * gw|."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    mean = x.mean(axes, keepdims=True) if centered else np.zeros(())
    xc = x - mean
    var = (xc * xc).mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    xhat = xc * rstd
    gw = dy * w
    mean_gw = gw.mean(axes, keepdims=True) if centered else 0.0
    dx = rstd * (gw - mean_gw - xhat * (gw * xhat).mean(axes, keepdims=True))
    return dict(y=xhat * w + b, mean=mean, var=var, rstd=rstd, dx=dx, dx_scale=np.max(np.abs(rstd * gw)),
                dw_terms=dy * xhat)


def assert_matches_oracle(results, ref, rtol, name):
    """``results``: name -> (kernel output, oracle value); dx is compared at the oracle's dx_scale."""
    for what, (got, expected) in results.items():
        assert_close(got, expected, rtol, f"{name} {what}", scale=ref["dx_scale"] if what == "dx" else None)


def check_rows(kern, a, rtol, eps=1e-5):
    """RMSNorm and LayerNorm of a["x"] (R, D) against the oracle: outputs, statistics and all gradients."""
    x, dy, w, b = a["x"], a["dy"], a["w"], a["b"]
    db_ref = dy.astype(np.float64).sum(0)
    ref = oracle(x, dy, 1, eps, False, w.astype(np.float64), b)
    y, rstd = kern.rms_norm_forward(x, w, b, eps, x.shape[1], False)
    dx, dw, db = kern.rms_norm_backward(dy, x, rstd, w, eps, x.shape[1], False, True, True, True)
    assert_matches_oracle({"y": (y, ref["y"]), "rstd": (rstd, ref["rstd"][:, 0]), "dx": (dx, ref["dx"]),
                           "dw": (dw, ref["dw_terms"].sum(0)), "db": (db, db_ref)}, ref, rtol, "RMSNorm")
    ref = oracle(x, dy, 1, eps, True, w.astype(np.float64), b)
    y, mean, rstd = kern.layer_norm_forward(x, w, b, eps)
    dx, dw, db = kern.layer_norm_backward(dy, x, mean, rstd, w, True, True, True)
    assert_matches_oracle({"y": (y, ref["y"]), "mean": (mean, ref["mean"][:, 0]), "rstd": (rstd, ref["rstd"][:, 0]),
                           "dx": (dx, ref["dx"]), "dw": (dw, ref["dw_terms"].sum(0)), "db": (db, db_ref)},
                          ref, rtol, "LayerNorm")


def check_channels(kern, a, num_groups, rtol, eps=1e-5, batch_norm_stats_only=False):
    """GroupNorm (G = num_groups) and BatchNorm (training) of a["x"] (N, C, S) against the oracle."""
    x, dy, w, b = a["x"], a["dy"], a["w"], a["b"]
    n, c, s = x.shape
    db_ref = dy.astype(np.float64).sum((0, 2))
    w3, b3 = w.astype(np.float64)[:, None], b.astype(np.float64)[:, None]           # (C, 1)
    per_group = [np.broadcast_to(p, (c, s)).reshape(num_groups, -1) for p in (w3, b3)]  # (G, C/G*S)
    ref = oracle(x.reshape(n, num_groups, -1), dy.reshape(n, num_groups, -1), 2, eps, True, *per_group)
    y, mean, rstd = kern.group_norm_forward(x, num_groups, w, b, eps)
    dx, dw, db = kern.group_norm_backward(dy, x, mean, rstd, num_groups, w, True, True, True)
    assert_matches_oracle({"y": (y, ref["y"].reshape(x.shape)), "mean": (mean, ref["mean"][..., 0]),
                           "rstd": (rstd, ref["rstd"][..., 0]), "dx": (dx, ref["dx"].reshape(x.shape)),
                           "dw": (dw, ref["dw_terms"].reshape(x.shape).sum((0, 2))), "db": (db, db_ref)},
                          ref, rtol, f"GroupNorm(G={num_groups})")

    ref = oracle(x, dy, (0, 2), eps, True, w3, b3)
    mean, var = kern.batch_norm_stats(x)
    assert_matches_oracle({"mean": (mean, ref["mean"].reshape(c)), "var": (var, ref["var"].reshape(c))}, ref, rtol,
                          "BatchNorm")
    if batch_norm_stats_only:
        return
    rstd = (1 / np.sqrt(var.astype(np.float64) + eps)).astype(x.dtype)
    y = kern.batch_norm_forward(x, mean, rstd, w, b)
    dx, dw, db = kern.batch_norm_backward(dy, x, mean, rstd, w, True, True, True, True)
    assert_matches_oracle({"y": (y, ref["y"]), "dx": (dx, ref["dx"]), "dw": (dw, ref["dw_terms"].sum((0, 2))),
                           "db": (db, db_ref)}, ref, rtol, "BatchNorm")


@pytest.mark.parametrize("shape", [(1, 7), (6, 1), (1, 1), (7, 33), (5, 64)])
def test_row_kernels_on_odd_shapes(kern, shape):
    """One row, one column, a row count that is no multiple of the thread count."""
    check_rows(kern, arrays(shape, shape[1], np.float64), 1e-12)


@pytest.mark.parametrize("shape, num_groups", [((1, 4, 9), 2), ((5, 4, 1), 2), ((1, 6, 1), 3), ((3, 4, 7), 4),
                                               ((2, 6, 5), 1)])
def test_channel_kernels_on_odd_shapes(kern, shape, num_groups):
    """N = 1, S = 1, a single group, one channel per group (InstanceNorm)."""
    check_channels(kern, arrays(shape, shape[1], np.float64), num_groups, 1e-12)


def test_long_float32_rows_stay_within_1e_5_of_float64(kern):
    """Rows of 65,536 float32 values with mean 1e4 and std 1e-2: cancellation and long sums at once."""
    a = arrays((2, 65536), 65536, np.float32, mean=0)
    a["x"] = (1e4 + 1e-2 * a["x"] / 2).astype(np.float32)
    check_rows(kern, a, 1e-5)


@pytest.mark.parametrize("first", [1.0, 1e4 + 1.0], ids=["one-spike", "far-first-of-offset"])
def test_float32_statistics_when_the_first_element_is_far_from_the_mean(kern, first):
    """The numba float32 statistics sum around each row's first element: rows where that element is the
    outlier, (mean - x_0)^2 ~ D * var (a single spike in zeros; 100 std above a mean of 1e4), still
    match the float64 formulas within 1e-5."""
    a = arrays((2, 65536), 65536, np.float32, mean=0)
    base = 0.0 if first == 1.0 else 1e4
    a["x"] = (base + (0 if first == 1.0 else 1e-2) * a["x"]).astype(np.float32)
    a["x"][:, 0] = first
    check_rows(kern, a, 1e-5)


def test_long_float32_groups_and_channels_stay_within_1e_5_of_float64(kern):
    """GroupNorm in full; BatchNorm's statistics only: its forward and backward take the mean rounded to
    float32 by the contract, and rounding a mean of 1e4 moves y by up to 5e-4 / 1e-2 = 5e-2."""
    a = arrays((4, 4, 16384), 4, np.float32, mean=0)                  # 65,536 values per group and per channel
    a["x"] = (1e4 + 1e-2 * a["x"] / 2).astype(np.float32)
    check_channels(kern, a, 1, 1e-5, batch_norm_stats_only=True)


def row_kernels(kern, a, eps=1e-5):
    """RMSNorm then LayerNorm, forward and backward with every gradient, of a["x"], a["dy"] (R, D)."""
    x, dy, w, b, d = a["x"], a["dy"], a["w"], a["b"], a["x"].shape[1]
    y, rstd = kern.rms_norm_forward(x, w, None, eps, d, False)
    outputs = [y, rstd, *kern.rms_norm_backward(dy, x, rstd, w, eps, d, False, True, True, True)]
    y, mean, rstd = kern.layer_norm_forward(x, w, b, eps)
    return outputs + [y, mean, rstd, *kern.layer_norm_backward(dy, x, mean, rstd, w, True, True, True)]


def test_non_contiguous_inputs(kern):
    """Strided views (x, dy, weight and bias) give what their contiguous copies give."""
    a = arrays((9, 40), 40, np.float64)
    strided = {k: v[::2] if v.ndim == 1 else v[:, ::2] for k, v in a.items()}   # x, dy (9, 20); w, b (20,)
    contiguous = {k: np.ascontiguousarray(v) for k, v in strided.items()}
    assert not strided["x"].flags.c_contiguous
    for got, ref in zip(row_kernels(kern, strided), row_kernels(kern, contiguous)):
        assert_close(got, ref, 1e-12, "row kernels")
    x4 = np.random.default_rng(1).standard_normal((3, 6, 5, 2))
    x3 = x4.transpose(0, 3, 2, 1).reshape(3, 2, 30)[:, :, 1::3]                # (3, 2, 10), strided
    assert not x3.flags.c_contiguous
    for got, ref in zip(kern.group_norm_forward(x3, 2, None, None, 1e-5) + kern.batch_norm_stats(x3),
                        kern.group_norm_forward(np.ascontiguousarray(x3), 2, None, None, 1e-5)
                        + kern.batch_norm_stats(np.ascontiguousarray(x3))):
        assert_close(got, ref, 1e-12, "channel kernels")


# --------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("case", ["rms", "ln", "gn-G2", "bn-train"])
def test_two_runs_are_bitwise_equal(kern, case):
    """Including dw and db, whose sums over rows/samples run in parallel on the numba backend."""
    c = CASES[case]
    shape = (1001, 29) if len(c.shape) == 2 else (37, 6, 45)
    a = arrays(shape, c.n_params, np.float32)
    first, second = c.forward(kern, a), c.forward(kern, a)
    grads = [c.backward(kern, a, first[1:], (True, True, True)) for _ in range(2)]
    for u, v in zip(first + grads[0], second + grads[1]):
        assert np.array_equal(u, v)


@pytest.mark.parametrize("case", ["gn-G2", "bn-train", "bn-train-one-call", "bn-eval"])
def test_channel_family_does_not_depend_on_the_thread_count(case, monkeypatch):
    """Serial twin, parallel kernel on 1 thread and on 2 threads: bitwise the same results (the same operations in
    the same order, so exact by construction), on each of BatchNorm's paths (one task per slice, or pipelined by
    chunks of channels, whose chunk boundaries move with the thread count); the two paths agree to rounding."""
    import numba
    nb, c = numba_kernels(), CASES[case]
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("only one numba thread available")
    monkeypatch.setattr(nb, "BY_CHANNEL_CHANNELS_PER_THREAD", 0)
    a = arrays((17, 6, 33), 6, np.float32)
    results = {}
    threads = numba.get_num_threads()
    try:
        for serial_below, n in ((1 << 62, 2), (0, 1), (0, 2)):
            for least_bytes in (1 << 62, 0):
                monkeypatch.setattr(nb, "SERIAL_BELOW", serial_below)
                monkeypatch.setattr(nb, "BY_CHANNEL_SLICE_BYTES", least_bytes)
                numba.set_num_threads(n)
                stats = c.forward(nb, a)
                results.setdefault(least_bytes, []).append(stats + c.backward(nb, a, stats[1:], (True, True, True)))
    finally:
        numba.set_num_threads(threads)
    for runs in results.values():
        for run in runs[1:]:
            for u, v in zip(runs[0], run):
                assert np.array_equal(u, v)
    for u, v in zip(*(runs[0] for runs in results.values())):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, num_groups", [((1, 4, 9), 2), ((5, 4, 1), 2), ((1, 6, 1), 3), ((3, 4, 7), 4),
                                               ((2, 6, 5), 1), ((7, 6, 3), 6)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_pipelined_group_norm_forward_on_odd_shapes(shape, num_groups, dtype, monkeypatch):
    """GroupNorm's pipelined forward (the next group's sums in the loop writing this group's y) against the float64
    oracle: one sample, one element per channel, one group, a group per channel (InstanceNorm), more groups than
    chunks and fewer."""
    nb = numba_kernels()
    monkeypatch.setattr(nb, "PIPELINED_SLICE_BYTES", 0)
    for serial_below in (1 << 62, 0):
        monkeypatch.setattr(nb, "SERIAL_BELOW", serial_below)
        check_channels(nb, arrays(shape, shape[1], dtype), num_groups, 1e-12 if dtype == np.float64 else 1e-5)


def test_pipelined_group_norm_does_not_depend_on_the_thread_count(monkeypatch):
    """Serial twin, and the parallel kernels in 1 and 2 chunks: the same bits, forward and backward (each chunk's
    first group is summed by the loop the other groups are summed in, writing into a scratch group)."""
    import numba
    nb = numba_kernels()
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("only one numba thread available")
    monkeypatch.setattr(nb, "PIPELINED_SLICE_BYTES", 0)
    a = arrays((17, 6, 33), 6, np.float32)
    results, threads = [], numba.get_num_threads()
    try:
        for serial_below, n in ((1 << 62, 2), (0, 1), (0, 2)):
            monkeypatch.setattr(nb, "SERIAL_BELOW", serial_below)
            numba.set_num_threads(n)
            y, mean, rstd = nb.group_norm_forward(a["x"], 2, a["w"], a["b"], 1e-5)
            grads = nb.group_norm_backward(a["dy"], a["x"], mean, rstd, 2, a["w"], True, True, True)
            results.append((y, mean, rstd) + grads)
    finally:
        numba.set_num_threads(threads)
    for run in results[1:]:
        for u, v in zip(results[0], run):
            assert np.array_equal(u, v)


def test_group_norm_pipelines_long_slices_only():
    """The pipelined forward, and backward with dx, run where a channel's slice takes PIPELINED_SLICE_BYTES or more
    (a backward without dx: the kernel by groups)."""
    nb = numba_kernels()
    calls = []
    kernels = (nb._group_norm_forward, nb._group_norm_forward_pipelined, nb._group_norm_backward,
               nb._group_norm_backward_pipelined)
    s_long = nb.PIPELINED_SLICE_BYTES // 4
    try:
        nb._launch, launch = (lambda kernel, *args: calls.append(kernel) or launch(kernel, *args)), nb._launch
        for s_count in (s_long - 1, s_long):
            x = np.ones((2, 4, s_count), np.float32)
            y, mean, rstd = nb.group_norm_forward(x, 2, None, None, 1e-5)
            nb.group_norm_backward(x, x, mean, rstd, 2, None, True, True, True)
            nb.group_norm_backward(x, x, mean, rstd, 2, None, False, True, True)
    finally:
        nb._launch = launch
    assert [k for k in calls if k in kernels] == [kernels[0], kernels[2], kernels[2], kernels[1], kernels[3],
                                                  kernels[2]]


@pytest.mark.parametrize("shape, dtype, threads, expected", [
    ((32, 64, 4096), np.float32, 2, True),      # BatchNorm2d's 64x64 images: 32 MB, slices of 16 KB
    ((32, 64, 4096), np.float32, 32, True),
    ((8, 16, 1024), np.float32, 2, True),       # 512 KB, 4 KB slices
    ((8, 16, 1023), np.float32, 2, False),      # slices just below 4 KB
    ((8, 16, 512), np.float64, 2, True),
    ((8192, 1024, 1), np.float32, 2, False),    # BatchNorm1d: one element per slice
    ((64, 3, 4096), np.float32, 2, False),      # fewer than two channels per thread
    ((64, 63, 4096), np.float32, 32, False),
    ((128, 3, 4096), np.float64, 1, True),      # one thread: three channels are enough
])
def test_batch_norm_runs_by_channel_for_long_slices_and_enough_channels(shape, dtype, threads, expected, monkeypatch):
    """The path depends on the shape and on the most threads numba may run, not on set_num_threads."""
    import numba
    nb = numba_kernels()
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
    monkeypatch.setattr(nb, "team_size", lambda work: 1)
    assert nb._by_channel(np.empty(shape, dtype)) is expected


@pytest.mark.parametrize("case", ["rms", "prms-eps-outside", "ln", "gn-G2", "bn-train", "bn-eval"])
@pytest.mark.parametrize("side", [-1, 1], ids=["below", "above"])
def test_serial_threshold_picks_the_path_and_both_match_numpy(case, side, monkeypatch):
    """At the real ``SERIAL_BELOW``: just below it every kernel runs on the calling thread alone (team of 1),
    just above on numba's threads; both agree with the NumPy reference."""
    nb, c = numba_kernels(), CASES[case]
    teams = []
    team_size = nb.team_size
    monkeypatch.setattr(nb, "team_size", lambda work: teams.append(team_size(work)) or teams[-1])
    size = nb.SERIAL_BELOW + side * 4096                 # elements of x
    shape = (size // 64, 64) if len(c.shape) == 2 else (size // 4096, 4, 1024)
    a = arrays(shape, shape[1] if len(shape) == 3 else 64, np.float32)
    if len(c.shape) == 2:   # the row cases were written for D = 29: rebind them to D = 64
        c = ROW_CASES_64[case]
    ref, out = c.forward(numpy_kernels, a), c.forward(nb, a)
    assert_same_outputs(out, ref, RTOL[np.float32], ["y", "stat", "stat"])
    needs = (True, True, True)
    assert_same_outputs(c.backward(nb, a, out[1:], needs), c.backward(numpy_kernels, a, ref[1:], needs),
                        RTOL[np.float32], ["dx", "dw", "db"])
    import numba
    assert teams and set(teams) == ({1} if side < 0 else {numba.get_num_threads()})


ROW_CASES_64 = {
    "rms": Case((0, 64), 64, lambda m, a: m.rms_norm_forward(a["x"], a["w"], None, 1e-5, 64, False),
                lambda m, a, st, nd: m.rms_norm_backward(a["dy"], a["x"], *st, a["w"], 1e-5, 64, False, *nd)),
    "prms-eps-outside": Case((0, 64), 64, lambda m, a: m.rms_norm_forward(a["x"], a["w"], a["b"], 1e-3, 20, True),
                             lambda m, a, st, nd: m.rms_norm_backward(a["dy"], a["x"], *st, a["w"], 1e-3, 20, True,
                                                                      *nd)),
    "ln": Case((0, 64), 64, lambda m, a: m.layer_norm_forward(a["x"], a["w"], a["b"], 1e-5),
               lambda m, a, st, nd: m.layer_norm_backward(a["dy"], a["x"], *st, a["w"], *nd)),
}


# --------------------------------------------------------------------------- the backend switch
@pytest.fixture
def fresh_switch(monkeypatch):
    """A switch that has not chosen yet (as after ``import minigrad``); restored after the test."""
    monkeypatch.setattr(kernels, "_active", None)
    monkeypatch.delenv(kernels.ENV_VAR, raising=False)
    return monkeypatch


@pytest.mark.parametrize("name", kernels.BACKENDS)
def test_environment_variable_chooses_the_backend(fresh_switch, name):
    if name == "numba":
        numba_kernels()
    fresh_switch.setenv("MINIGRAD_BACKEND", name)
    assert mg.get_backend() == name
    assert kernels.backend() is importlib.import_module({"numpy": "minigrad.ops.norm", "numba": "minigrad.kernels.numba_kernels"}[name])


def test_default_backend_is_numba(fresh_switch):
    numba_kernels()
    assert kernels.get_backend() == "numba"


def test_invalid_environment_variable(fresh_switch):
    fresh_switch.setenv("MINIGRAD_BACKEND", "cuda")
    with pytest.raises(ValueError, match=r"invalid minigrad backend 'cuda' in \$MINIGRAD_BACKEND; valid backends "
                                         r"are 'numpy', 'numba'"):
        kernels.backend()


def test_set_get_and_use_backend(fresh_switch):
    numba_kernels()
    assert mg.set_backend is kernels.set_backend and mg.get_backend is kernels.get_backend
    mg.set_backend("numpy")
    assert mg.get_backend() == "numpy" and kernels.backend() is numpy_kernels
    with kernels.use_backend("numba"):
        assert mg.get_backend() == "numba"
    assert mg.get_backend() == "numpy"
    with pytest.raises(RuntimeError), kernels.use_backend("numba"):
        raise RuntimeError("restored even when the block raises")
    assert mg.get_backend() == "numpy"
    with pytest.raises(ValueError, match=r"invalid minigrad backend 'torch'; valid backends are 'numpy', 'numba'"):
        mg.set_backend("torch")
    assert mg.get_backend() == "numpy"


def test_missing_numba_falls_back_to_numpy_with_one_warning(fresh_switch):
    fresh_switch.setitem(sys.modules, "numba", None)                  # makes `import numba` raise ImportError
    for name in [m for m in sys.modules if m.startswith("minigrad.kernels.numba")]:
        fresh_switch.delitem(sys.modules, name)
    fresh_switch.setattr(kernels, "_numba", None)
    with pytest.warns(RuntimeWarning, match="numba could not be imported.*NumPy kernels") as record:
        mg.set_backend("numba")
    assert len(record) == 1 and mg.get_backend() == "numpy" and kernels.backend() is numpy_kernels
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                 # no second warning
        mg.set_backend("numba")
        fresh_switch.setattr(kernels, "_active", None)
        assert mg.get_backend() == "numpy"


def _run_python(code, **env):
    """Run ``code`` in a fresh interpreter at the repository root; returns its stdout."""
    environ = {k: v for k, v in os.environ.items() if k not in ("MINIGRAD_BACKEND", "NUMBA_DISABLE_JIT")}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**environ, **env}, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_numba_is_imported_only_when_used():
    numba_kernels()
    code = ("import sys, minigrad as mg, minigrad.nn.functional as F\n"
            "assert 'numba' not in sys.modules, 'import minigrad imported numba'\n"
            "F.rms_norm(mg.randn(2, 3), (3,))\n"
            "print('numba' in sys.modules, mg.get_backend())\n")
    assert _run_python(code).split() == ["True", "numba"]
    assert _run_python(code, MINIGRAD_BACKEND="numpy").split() == ["False", "numpy"]


def test_kernels_pass_as_plain_python_with_jit_disabled():
    """NUMBA_DISABLE_JIT=1 runs the numba kernels as ordinary Python (prange = range): the float64
    comparisons with the NumPy reference must still pass."""
    numba_kernels()
    code = ("import sys, pytest\n"
            "from minigrad.kernels import numba_kernels\n"
            "assert not hasattr(numba_kernels._rms_norm_forward, 'py_func'), 'the jit is still on'\n"
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_kernels.py', '-k',\n"
            "                      'float64 and (forward_matches or backward_matches and dxdwdb) '\n"
            "                      'or odd_shapes and numba or non_contiguous and numba']))\n")
    out = _run_python(code, NUMBA_DISABLE_JIT="1")
    assert " passed" in out and "failed" not in out, out


# --------------------------------------------------------------------------- the public functions on both backends
def _layers():
    rng = np.random.default_rng(5)
    running = [rng.standard_normal(4), 0.5 + rng.random(4)]

    def batch_norm(training):
        def f(x, w, b):
            rm, rv = (mg.tensor(r.astype(x.dtype)) for r in running)      # fresh buffers: both runs update them
            return F.batch_norm(x, rm, rv, w, b, training=training)
        return f
    return {
        "rms_norm": ((5, 3, 8), 8, lambda x, w, b: F.rms_norm(x, (8,), w, 1e-5)),
        "layer_norm": ((5, 2, 12), 12, lambda x, w, b: F.layer_norm(x, (12,), w, b)),
        "group_norm": ((3, 4, 5, 2), 4, lambda x, w, b: F.group_norm(x, 2, w, b)),
        "instance_norm": ((3, 4, 7), 4, lambda x, w, b: F.instance_norm(x, weight=w, bias=b)),
        "batch_norm_train": ((6, 4, 3), 4, batch_norm(True)),
        "batch_norm_eval": ((6, 4, 3), 4, batch_norm(False)),
    }


LAYERS = _layers()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=["float16", "float32", "float64"])
@pytest.mark.parametrize("layer", LAYERS)
def test_functions_agree_on_both_backends(layer, dtype):
    numba_kernels()
    shape, n_params, fn = LAYERS[layer]
    a = arrays(shape, n_params, dtype)
    results = {}
    for name in kernels.BACKENDS:
        with kernels.use_backend(name):
            x, w, b = (mg.tensor(a[k], requires_grad=True) for k in ("x", "w", "b"))
            y = fn(x, w, b)
            y.backward(mg.tensor(a["dy"]))
            results[name] = [y._data, x.grad._data, w.grad._data, b.grad._data if b.grad is not None else None]
    rtol = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}[dtype]
    assert_same_outputs(results["numba"], results["numpy"], rtol, ["y", "x.grad", "weight.grad", "bias.grad"])


# --------------------------------------------------------------------------- reused output memory (buffers.py)
@pytest.fixture
def pool(monkeypatch):
    """minigrad.kernels.buffers with an empty pool of its own (restored after the test)."""
    from minigrad.kernels import buffers
    monkeypatch.setattr(buffers, "_blocks", {})
    monkeypatch.setattr(buffers, "_held", 0)
    monkeypatch.setattr(buffers, "_block_ids", set())
    return buffers


BIG = (512, 1024)   # 2 MiB of float32: above MIN_BYTES


def test_a_freed_block_is_handed_out_again(pool):
    a = pool.empty(BIG, np.float32)
    address = a.ctypes.data
    assert a.shape == BIG and a.dtype == np.float32 and a.flags.c_contiguous and a.flags.writeable
    del a
    b = pool.empty(BIG, np.float32)
    assert b.ctypes.data == address and pool.held_bytes() == b.nbytes
    c = pool.empty((1024, 256), np.float64)          # same bytes, another shape and dtype: a second block
    assert c.shape == (1024, 256) and c.dtype == np.float64 and not np.shares_memory(b, c)


def test_memory_reachable_through_any_view_is_not_handed_out(pool):
    a = pool.empty(BIG, np.float32)
    views = [a[1:], a.reshape(-1), a.T, mg.Tensor(a), memoryview(a)]
    del a
    for view in views:
        b = pool.empty(BIG, np.float32)
        assert not np.shares_memory(b, np.asarray(view._data if isinstance(view, mg.Tensor) else view))
        del b
        views = views[1:]                                # every view kept the block until here


def test_small_arrays_are_not_pooled(pool):
    a = pool.empty((16, 16), np.float32)
    assert a.base is None and pool.held_bytes() == 0


def test_the_pool_stays_under_max_bytes_and_release_frees_it(pool, monkeypatch):
    monkeypatch.setattr(pool, "MAX_BYTES", 3 * (2 << 20))
    kept = [pool.empty(BIG, np.float32) for _ in range(3)]
    assert pool.held_bytes() == 3 * (2 << 20)
    beyond = pool.empty(BIG, np.float32)                 # over the cap, nothing free: plain np.empty
    assert beyond.base is None and pool.held_bytes() == 3 * (2 << 20)
    del kept[0]
    other = pool.empty((2048, 1024), np.float32)         # 8 MiB: the free 2 MiB block is dropped first, still over
    assert other.base is None and pool.held_bytes() == 2 * (2 << 20)
    del kept
    pool.release()
    assert pool.held_bytes() == 0


def test_norm_outputs_on_reused_memory_are_independent_and_at_version_0(pool):
    """The forward's y comes from the pool: a live y is never overwritten by a later call, and a y written
    in place and dropped hands its memory on with a fresh version counter."""
    numba_kernels()
    rng = np.random.default_rng(0)
    x1, x2 = (mg.tensor(rng.standard_normal(BIG, dtype=np.float32)) for _ in range(2))
    with kernels.use_backend("numba"):
        y1 = F.layer_norm(x1, (1024,))
        expected = y1._data.copy()
        y2 = F.layer_norm(x2, (1024,))
        assert not np.shares_memory(y1._data, y2._data)
        np.testing.assert_array_equal(y1._data, expected)
        y1.add_(1.0)
        assert y1._version == 1
        address = y1._data.ctypes.data
        del y1
        y3 = F.layer_norm(x1, (1024,))
    assert y3._data.ctypes.data == address and y3._version == 0
    np.testing.assert_array_equal(y3._data, expected)


@pytest.mark.parametrize("norm", [lambda t: F.layer_norm(t, (1024,)), lambda t: F.rms_norm(t, (1024,)),
                                  lambda t: F.group_norm(t.reshape(16, 32, 1024), 4).reshape(BIG)],
                         ids=["layer", "rms", "group"])
def test_an_input_gradient_on_reused_memory_becomes_grad_and_is_never_overwritten(pool, norm):
    """The backward's dx comes from the pool and becomes the leaf's ``.grad`` without a copy; a ``.grad`` the
    user keeps is never written by a later backward, one left in place accumulates, and a dropped one's memory
    serves the next dx. A gradient a hook kept is copied, as any shared gradient."""
    numba_kernels()
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal(BIG, dtype=np.float32), requires_grad=True)
    dy = mg.tensor(rng.standard_normal(BIG, dtype=np.float32))
    with kernels.use_backend("numba"):
        norm(x).backward(dy)
        kept = x.grad
        assert pool.lends(kept._data.base), "not adopted from the pool"
        expected = kept._data.copy()    # the same kernel on the same inputs in this process: equal bit for bit
        norm(x).backward(dy)                             # accumulates into the same .grad
        np.testing.assert_allclose(x.grad._data, 2 * expected, rtol=1e-6, atol=1e-6)
        assert x.grad is kept
        kept, x.grad = kept._data.copy(), None
        norm(x).backward(dy)
        np.testing.assert_array_equal(x.grad._data, expected)
        held, address = x.grad, x.grad._data.ctypes.data
        x.grad = None
        norm(x).backward(dy)
        assert not np.shares_memory(held._data, x.grad._data)       # the user still holds it
        np.testing.assert_array_equal(held._data, expected)
        del held
        x.grad = None
        norm(x).backward(dy)
        assert x.grad._data.ctypes.data == address                  # its memory, handed out again
        seen = []
        x.grad = None
        x.register_hook(lambda g: seen.append(g))
        norm(x).backward(dy)
    assert not np.shares_memory(seen[0]._data, x.grad._data)
    np.testing.assert_array_equal(seen[0]._data, expected)


ROW_NORMS = {"rms_norm": lambda t: F.rms_norm(t, (8,)), "layer_norm": lambda t: F.layer_norm(t, (8,)),
             "rms_norm_partial": lambda t: F.rms_norm(t, (8,), partial=0.5),
             "rms_norm_eps_outside": lambda t: F.rms_norm(t, (8,), eps_inside_sqrt=False)}
CHANNEL_NORMS = {"group_norm": lambda t: F.group_norm(t, 3), "instance_norm": F.instance_norm,
                 "batch_norm": lambda t: F.batch_norm(t, None, None, training=True)}


@pytest.mark.parametrize("name, scale", [(n, s) for n in sorted(ROW_NORMS) + sorted(CHANNEL_NORMS)
                                         for s in (1e19, 1e30) if not (n == "batch_norm" and s > 1e19)])
def test_backends_agree_on_float32_near_the_range_limits(name, scale):
    """float32 values near 1e19 or 1e30, whose squares overflow float32: the NumPy references form and
    accumulate the squares in float64 as the numba kernels do, so both give the same finite output and
    gradients (the output is scale-free, the gradient scales as 1/scale). BatchNorm's statistics kernel
    returns the variance in the data's dtype on both backends (the kernels' shared signature), so its
    variance of ~1e60 overflows on both: there only 1e19 is checked."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    shape = (4, 8) if name in ROW_NORMS else (4, 6, 5)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    results = []
    for backend in ("numpy", "numba"):
        with kernels.use_backend(backend):
            t = mg.tensor(x, requires_grad=True)
            y = {**ROW_NORMS, **CHANNEL_NORMS}[name](t)
            y.backward(mg.tensor(np.cos(np.arange(y.numel())).reshape(y.shape).astype(np.float32)))
            results.append((y.detach().numpy(), t.grad.numpy() * np.float32(scale)))
    (y_np, g_np), (y_nb, g_nb) = results
    assert np.isfinite(y_np).all() and np.isfinite(g_np).all()
    assert np.abs(y_np).max() > 0.5                      # normalized values, not the zeros of an overflow
    np.testing.assert_allclose(y_np, y_nb, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_np, g_nb, rtol=1e-3, atol=1e-4)


# --------------------------------------------------------------------------- DynamicTanh: its float32 tanh, every mask
def _float32_sweep():
    """Every 97th float32 from 1e-7 to 12, both signs (the range where tanh is neither z nor 1 in float32)."""
    bits = np.arange(np.float32(1e-7).view(np.int32), np.float32(12).view(np.int32), 97, dtype=np.int32)
    z = bits.view(np.float32)
    return np.concatenate([z, -z])


def test_float32_tanh_is_within_two_ulp_of_the_float64_tanh(nb):
    """numba's DynamicTanh computes float32 tanh by its own formula (numba_kernels.py), not the C library's: over
    the sweep it stays within 2 ulp (float32 spacing at the exact value) of NumPy's float64 tanh."""
    z = _float32_sweep()
    z = z[:z.size // 1024 * 1024].reshape(-1, 1024)                    # rows (R, 1024)
    _, t = nb.dynamic_tanh_forward(z, np.float32(1.0), None, None)
    assert t.dtype == np.float32
    exact = np.tanh(z.astype(np.float64))
    ulps = np.abs(t - exact) / np.spacing(np.abs(exact).astype(np.float32))
    assert ulps.max() <= 2.0, f"{ulps.max():.2f} ulp at z = {z.ravel()[ulps.argmax()]}"


def test_float32_tanh_at_the_edges(nb):
    z = np.array([[0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 9.0, 10.0, 10.5, 88.0, -1e30, 0.55,
                   np.nextafter(np.float32(0.55), np.float32(0))]], np.float32)
    _, t = nb.dynamic_tanh_forward(z, np.float32(1.0), None, None)
    exact = np.tanh(z.astype(np.float64)).astype(np.float32)           # correctly rounded here, NaN included
    np.testing.assert_array_equal(t[0, :5], exact[0, :5])    # exact by construction: 0, -0, +-1 and NaN
    assert np.signbit(t[0, 1]) and not np.signbit(t[0, 0])              # tanh(-0) = -0
    np.testing.assert_array_max_ulp(t[0, 5:], exact[0, 5:], maxulp=2)


DYT_NEEDS = list(itertools.product([False, True], repeat=4))             # (need_dx, need_dalpha, need_dw, need_db)


@pytest.mark.parametrize("needs", DYT_NEEDS, ids=lambda n: "".join("1" if x else "0" for x in n))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_dynamic_tanh_kernels_match_numpy(dtype, needs, nb):
    """Forward (y, t) and every gradient mask of the backward, numba against the NumPy reference, on 53 rows (the
    float32 blocks of 16 rows end in a partial one) of 29 (no multiple of a SIMD width); |alpha x| reaches past 10."""
    a = arrays(TALL, TALL[1], dtype)
    alpha = dtype(1.7)
    forward = [m.dynamic_tanh_forward(a["x"], alpha, a["w"], a["b"]) for m in (nb, numpy_kernels)]
    assert_same_outputs(forward[0], forward[1], RTOL[dtype], ["y", "t"])
    t = forward[1][1]
    expected = numpy_kernels.dynamic_tanh_backward(a["dy"], a["x"], alpha, a["w"], t, *needs)
    actual = nb.dynamic_tanh_backward(a["dy"], a["x"], alpha, a["w"], t, *needs)
    assert [g is not None for g in actual] == list(needs)
    assert_same_outputs(actual, expected, RTOL[dtype], ["dx", "dalpha", "dw", "db"])


@pytest.mark.parametrize("norm", ["DynamicTanh", "LocalResponseNorm"])
def test_forward_without_keep_saves_nothing_and_gives_the_same_y(norm, kern):
    """DynamicTanh's t and LocalResponseNorm's d are kept only for a backward: with keep=False the forward returns
    None for them and the same y (the same operations in the same order, written to y alone: exact by
    construction)."""
    rng = np.random.default_rng(13)
    if norm == "DynamicTanh":
        x = rng.standard_normal((53, 29), dtype=np.float32) * 4
        call = lambda keep: kern.dynamic_tanh_forward(x, np.float32(0.7), x[0] * 0 + 1.5, x[1], keep=keep)
    else:
        x = rng.standard_normal((2, 7, 37), dtype=np.float32) * 3
        call = lambda keep: kern.local_response_norm_forward(x, 5, 0.3, 0.75, 1.0, keep=keep)
    (y, saved), (y_alone, nothing) = call(True), call(False)
    assert saved is not None and saved.shape == x.shape and nothing is None
    np.testing.assert_array_equal(y_alone, y)


@pytest.mark.parametrize("norm", ["DynamicTanh", "LocalResponseNorm"])
def test_inference_takes_no_memory_for_a_backward(norm, pool):
    """Under no_grad the layer's forward takes one block from the pool (y), not two (y and t or d); with grad on,
    two; the outputs agree."""
    pytest.importorskip("numba")
    x = mg.tensor(np.random.default_rng(14).standard_normal((8, 16, 64, 64)).astype(np.float32), requires_grad=True)
    layer = nn.DynamicTanh(64) if norm == "DynamicTanh" else nn.LocalResponseNorm(5)
    with kernels.use_backend("numba"):
        with mg.no_grad():
            y_inference = layer(x)
        assert pool.held_bytes() == x.numel() * 4
        y_training = layer(x)
        assert pool.held_bytes() == 3 * x.numel() * 4                  # y_inference's, y_training's and t or d
    np.testing.assert_array_equal(y_inference.numpy(), y_training.detach().numpy())


# --------------------------------------------------------------------------- LocalResponseNorm: windows, powers, spans
@pytest.mark.parametrize("size, beta, k", [(1, 0.75, 1.0), (2, 0.5, 2.0), (5, 0.75, 1.0), (4, 1.0, 0.5),
                                           (9, 0.6, 1.0), (3, 0.75, 0.0), (3, 1.0, -40.0), (6, 0.5, 1.0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_local_response_norm_kernels_match_numpy(size, beta, k, dtype, nb):
    """Forward (y, d) and backward, numba against the NumPy reference: windows of odd and even size, of up to four
    rows and longer (summed in two parts), one wider than the 7 channels, the square-root powers (beta 0.5, 0.75,
    1) and pow (0.6), k = 0, and d < 0 and > 0 with beta = 1 (1 / d, not from square roots); 2 images of 37
    positions (the parallel path cuts them into spans)."""
    rng = np.random.default_rng(size)
    x = (rng.standard_normal((2, 7, 37)) * 3).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    alpha = 0.3
    forward = [m.local_response_norm_forward(x, size, alpha, beta, k) for m in (nb, numpy_kernels)]
    assert_same_outputs(forward[0], forward[1], RTOL[dtype], ["y", "d"])
    d = forward[1][1]
    for need_dx in (True, False):
        actual = nb.local_response_norm_backward(dy, x, d, size, alpha, beta, need_dx)
        expected = numpy_kernels.local_response_norm_backward(dy, x, d, size, alpha, beta, need_dx)
        assert_same_outputs(actual, expected, RTOL[dtype], ["dx"])
        assert (actual[0] is None) == (not need_dx)


# --------------------------------------------------------------------------- every norm of the registry
def test_every_registered_kernel_has_a_numba_twin_of_the_same_signature():
    """The kernels each registry entry declares (minigrad/ops/norm/registry.py): the NumPy reference is exported
    by minigrad.ops.norm (the "numpy" backend), its numba twin has the same signature; the test below runs them
    against each other through the public function, on the serial and the parallel path."""
    import inspect
    nb = numba_kernels()
    declared = [name for spec in NORMS for name in spec.kernels]
    assert set(KERNEL_NAMES) - {"batch_norm_stats", "batch_norm_train_stats"} <= set(declared)
    for name in declared:
        assert inspect.signature(getattr(nb, name)) == inspect.signature(getattr(numpy_kernels, name)), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in NORMS])
def test_every_registered_norm_agrees_on_both_backends(spec, dtype, nb):
    """Each registered norm's small case, forward and every gradient (random upstream), numba (serial and
    parallel path, the ``nb`` fixture) against NumPy."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(spec.shape).astype(dtype)] + [
        np.asarray(1 + 0.5 * rng.standard_normal(shape), dtype=dtype) for _, shape in spec.params]
    results = {}
    for name in kernels.BACKENDS:
        with kernels.use_backend(name):
            tensors = [mg.tensor(a, requires_grad=True) for a in arrays]
            y = spec.call(spec.functional_form(), *tensors)
            y.backward(mg.tensor(np.random.default_rng(1).standard_normal(y.shape).astype(dtype)))
            results[name] = [y._data] + [t.grad._data for t in tensors]
    assert_same_outputs(results["numba"], results["numpy"], RTOL[dtype],
                        ["y"] + [f"grad {i}" for i in range(len(arrays))])
