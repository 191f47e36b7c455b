"""The fused kernels of minigrad/kernels/fused.py: each numba twin against its NumPy reference (float32
and float64, the strided layouts the Transformer passes), the references against the math they state,
and the ops built on them (the Transformer's SwiGLU node, the fused attention, the embedding's backward)
against float64 finite differences and PyTorch."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.kernels import fused, use_backend

from .mirror import assert_mirror, check_grad, run_both, torch_or_replay

fused_numba = pytest.importorskip("minigrad.kernels.fused_numba")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "examples") not in sys.path:
    sys.path.insert(0, str(ROOT / "examples"))

from llama import SwiGLU  # noqa: E402

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}


@pytest.fixture(params=["serial", "parallel"])
def path(request, monkeypatch):
    """The twins on each path: the small cases here run serially at the real threshold; ``SERIAL_BELOW = 0`` puts
    the kernels that have a parallel form on numba's threads."""
    if request.param == "parallel":
        from minigrad.kernels import numba_kernels
        monkeypatch.setattr(numba_kernels, "SERIAL_BELOW", 0)
    return request.param


def heads_view(rng, dtype, b=3, t=5, h=2, hd=6):
    """(B, H, T, hd) as the Transformer makes it: a transposed view of a (B, T, H, hd) projection."""
    return rng.standard_normal((b, t, h, hd)).astype(dtype).transpose(0, 2, 1, 3)


def angles(rng, t, hd, dtype):
    theta = rng.uniform(-np.pi, np.pi, (t, hd // 2))
    return np.cos(theta).astype(dtype), np.sin(theta).astype(dtype)


@pytest.mark.parametrize("layout", ["heads view", "contiguous", "sliced"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_rotate_pairs_twin_matches_reference_and_turns_back(dtype, layout, path, rng):
    x = heads_view(rng, dtype, b=4)
    if layout == "contiguous":
        x = np.ascontiguousarray(x)
    elif layout == "sliced":                                     # every other batch entry: neither layout's rows
        x = x[::2]
    cos, sin = angles(rng, 5, 6, dtype)
    y = fused_numba.rotate_pairs(x, cos, sin)
    reference = fused.rotate_pairs_reference(x, cos, sin)
    np.testing.assert_allclose(y, reference, **TOL[dtype])
    assert y.flags.c_contiguous and y.dtype == dtype
    np.testing.assert_allclose(fused.rotate_pairs_reference(y, cos, -sin), x, **TOL[dtype])   # orthogonal
    pair = np.stack([x[..., 0], x[..., 3]], -1)                  # feature pair (0, hd/2) turned by angle [t, 0]
    c, s = cos[:, 0], sin[:, 0]
    np.testing.assert_allclose(y[..., 0], pair[..., 0] * c - pair[..., 1] * s, **TOL[dtype])
    np.testing.assert_allclose(y[..., 3], pair[..., 1] * c + pair[..., 0] * s, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_swiglu_forward_twin_matches_reference(dtype, path, rng):
    a, b = (rng.standard_normal((4, 3, 7)) * 5).astype(dtype), rng.standard_normal((4, 3, 7)).astype(dtype)
    a[0, 0, :4] = [-1000.0, 100.0, np.nan, 0.0]                        # s: 0 (exp(1000) = inf), 1, NaN, 1/2
    with np.errstate(invalid="ignore"):
        expected = fused.swiglu_forward_reference(a, b)
    got = fused_numba.swiglu_forward(a[:, ::-1], b[:, ::-1])           # strided operands are made contiguous
    with np.errstate(invalid="ignore"):
        expected_strided = fused.swiglu_forward_reference(a[:, ::-1], b[:, ::-1])
    for g, want in zip(got, expected_strided):
        np.testing.assert_allclose(g, want, **TOL[dtype])
        assert g.dtype == dtype and g.shape == a.shape
    out, s = fused_numba.swiglu_forward(a, b)
    np.testing.assert_allclose(s, expected[1], **TOL[dtype])
    np.testing.assert_allclose(out, expected[0], **TOL[dtype])
    np.testing.assert_allclose(s[1:], 1 / (1 + np.exp(-a[1:].astype(np.float64))), **TOL[dtype])   # sigmoid
    assert s[0, 0, 0] == 0 and s[0, 0, 1] == 1 and np.isnan(s[0, 0, 2]) and s[0, 0, 3] == 0.5


@pytest.mark.parametrize("dtype", DTYPES)
def test_swiglu_backward_twin_matches_reference(dtype, path, rng):
    dout, a, b = (rng.standard_normal((4, 3, 7)).astype(dtype) for _ in range(3))
    s = 1 / (1 + np.exp(-a))
    expected = fused.swiglu_backward_reference(dout, a, b, s)
    for got, want in zip(fused_numba.swiglu_backward(dout, a, b, s), expected):
        np.testing.assert_allclose(got, want, **TOL[dtype])
        assert got.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_backward_twin_matches_reference(dtype, path, rng):
    w = rng.random((2, 3, 4, 5)).astype(dtype)
    w /= w.sum(-1, keepdims=True)
    dw = rng.standard_normal(w.shape).astype(dtype)
    expected = fused.softmax_backward_reference_(dw.copy(), w, 0.3)
    np.testing.assert_allclose(fused_numba.softmax_backward_(dw.copy(), w, 0.3), expected, **TOL[dtype])


def _exp_float32_sweep():
    """Every 31st float32 of magnitude 1e-7 .. 87.3, both signs, and of 87.3 .. 88.3 positive (``_exp``'s range)."""
    z = np.arange(np.float32(1e-7).view(np.int32), np.float32(87.3).view(np.int32), 31, dtype=np.int32).view(np.float32)
    top = np.arange(np.float32(87.3).view(np.int32), np.float32(88.3).view(np.int32), 31, dtype=np.int32)
    return np.concatenate([-z, z, top.view(np.float32)])


def test_float32_exp_is_within_two_ulp_of_the_float64_exp():
    """The masked softmax twin's float32 exp (numba_kernels._exp_float32, plain arithmetic that LLVM vectorizes):
    within 2 ulp of NumPy's float64 exp over its range, 0 below it, inf above, NaN kept; float64 is the C
    library's exp."""
    from numba import njit

    from minigrad.kernels.numba_kernels import _exp

    @njit
    def exp_each(y, out):
        for i in range(y.size):
            out[i] = _exp(y[i])

    y = _exp_float32_sweep()
    e = np.empty_like(y)
    exp_each(y, e)
    exact = np.exp(y.astype(np.float64))
    ulps = np.abs(e - exact) / np.spacing(exact.astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 2.0, f"{ulps.max():.2f} ulp at y = {y[ulps.argmax()]}"
    edges = np.array([0.0, -0.0, -87.31, -104.0, -np.inf, 88.31, 100.0, np.inf, np.nan], np.float32)
    e = np.empty_like(edges)
    exp_each(edges, e)
    np.testing.assert_array_equal(e, [1, 1, 0, 0, 0, np.inf, np.inf, np.inf, np.nan])   # exact by construction
    y64 = np.linspace(-700.0, 700.0, 101)
    e64 = np.empty_like(y64)
    exp_each(y64, e64)
    np.testing.assert_allclose(e64, np.exp(y64), rtol=1e-15)


MASKS = {
    "none": lambda rng, l, s: None,
    "causal": lambda rng, l, s: np.where(np.tri(l, s, dtype=bool), 0.0, -np.inf),
    "float": lambda rng, l, s: rng.standard_normal((l, s)),
    "float, batch dims of 1": lambda rng, l, s: rng.standard_normal((1, 1, l, s)),
    "per batch (the reference's)": lambda rng, l, s: rng.standard_normal((3, 1, l, s)),
}


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_softmax_twin_matches_reference(dtype, mask, path, rng):
    w = (rng.standard_normal((3, 2, 5, 7)) * 4).astype(dtype)
    bias = MASKS[mask](rng, 5, 7)
    bias = None if bias is None else bias.astype(dtype)
    expected = fused.masked_softmax_reference_(w.copy(), 0.3, bias)
    with use_backend("numba"):
        got = w.copy()
        assert fused.masked_softmax_(got, 0.3, bias) is got                  # in place
    np.testing.assert_allclose(got, expected, **TOL[dtype])
    np.testing.assert_allclose(got.sum(-1), 1.0, **TOL[dtype])
    if mask == "causal":
        rows, cols = np.triu_indices(5, 1, 7)
        assert not got[..., rows, cols].any()                                 # masked keys: 0


def test_masked_softmax_twin_keeps_nan_and_inf_rows_as_numpy(rng):
    """A NaN score, a +inf score (inf - inf) or a row masked whole make the row NaN in NumPy's softmax; the twin
    agrees (sdpa itself gives a row with no key zeros, ops/attention.py, before reaching either)."""
    w = rng.standard_normal((5, 6)).astype(np.float32)
    w[0, 3], w[1, 0], w[2, 5], w[3, :] = np.nan, np.nan, np.inf, -np.inf
    with np.errstate(invalid="ignore"):
        expected = fused.masked_softmax_reference_(w.copy(), 1.0, None)
    got = fused_numba.masked_softmax_(w.copy(), 1.0, None)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    assert np.isnan(got[:4]).all() and not np.isnan(got[4]).any()
    np.testing.assert_allclose(got[4], expected[4], rtol=1e-6)


def test_masked_softmax_dispatch(rng, monkeypatch):
    """The twin runs for a mask shared by the batch on C-contiguous scores; a per-batch mask, a strided w or
    mixed dtypes run the reference (the same function object decides: fused._twin)."""
    w = rng.standard_normal((2, 3, 4)).astype(np.float32)
    calls = []
    real = fused_numba.masked_softmax_
    monkeypatch.setattr(fused_numba, "masked_softmax_", lambda *a: calls.append(a) or real(*a))
    with use_backend("numba"):
        fused.masked_softmax_(w.copy(), 1.0, np.zeros((3, 4), np.float32))
        fused.masked_softmax_(w.copy(), 1.0, np.zeros((2, 3, 4), np.float32))        # per batch
        fused.masked_softmax_(w.copy()[..., ::2], 1.0, None)                          # strided
        fused.masked_softmax_(w.copy(), 1.0, np.zeros((3, 4), np.float64))            # mixed dtypes
    assert len(calls) == 1


@pytest.mark.parametrize("alpha", [1, -0.3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_add_rows_twin_matches_reference_bit_for_bit(dtype, alpha, rng):
    """Rows added in order into repeated targets: the twin's loop is the reference's ``np.add.at``, so the same bits
    (a strided target too); and both are the sum written out, within rounding."""
    out = rng.standard_normal((9, 5)).astype(dtype)
    at = rng.integers(0, 9, size=40)
    rows = rng.standard_normal((40, 5)).astype(dtype)
    alpha = dtype(alpha)
    for target in (out.copy(), out.copy(order="F")):
        twin, reference = target.copy(order="K"), target.copy(order="K")
        fused_numba.add_rows_(twin, at, rows, alpha)
        fused.add_rows_reference_(reference, at, rows, alpha)
        np.testing.assert_array_equal(twin, reference)            # one order of the same operations: exact
        written_out = out.astype(np.float64).copy()
        for k in range(40):
            written_out[at[k]] += float(alpha) * rows[k]
        np.testing.assert_allclose(twin, written_out, **TOL[dtype])


def test_dispatch_follows_the_backend(rng):
    x = heads_view(rng, np.float64)
    cos, sin = angles(rng, 5, 6, np.float64)
    with use_backend("numpy"):
        assert fused._twin(fused.rotate_pairs_reference, x, cos, sin) is fused.rotate_pairs_reference
    with use_backend("numba"):
        assert fused._twin(fused.rotate_pairs_reference, x, cos, sin) is fused_numba.rotate_pairs
        # mixed dtypes are not the twin's: the reference (with NumPy's promotion) runs
        assert fused._twin(fused.rotate_pairs_reference, x, cos.astype(np.float32), sin) is fused.rotate_pairs_reference


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_swiglu_node_gradcheck_and_mirror(backend, rng):
    torch = torch_or_replay()
    a, b = rng.standard_normal((2, 3, 4)) * 3, rng.standard_normal((2, 3, 4))
    with use_backend(backend):
        check_grad(SwiGLU.apply, a, b)
        assert_mirror(SwiGLU.apply, lambda x, y: torch.nn.functional.silu(x) * y, a, b)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fused_attention_with_a_constant_float_mask_mirrors_pytorch(backend, rng):
    q, k, v = (rng.standard_normal((2, 2, 3, 4)) for _ in range(3))
    mask = rng.standard_normal((3, 3))
    with use_backend(backend):
        check_grad(lambda *t: F.scaled_dot_product_attention(*t, attn_mask=mg.tensor(mask)), q, k, v)
        assert_mirror(*run_both(lambda lib, *t: lib.nn.functional.scaled_dot_product_attention(
            *t, attn_mask=lib.tensor(mask))), q, k, v)


def test_fused_attention_float32_matches_float64(rng):
    q, k, v = (rng.standard_normal((2, 3, 6, 4)) for _ in range(3))
    outs = {}
    for dtype in (mg.float32, mg.float64):
        ts = [mg.tensor(a, dtype=dtype, requires_grad=True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ts, is_causal=True)
        assert repr(out.grad_fn) == "<AttentionBackward>"      # the fused node
        out.backward(mg.ones_like(out))
        outs[dtype] = [out.detach().numpy()] + [t.grad.numpy() for t in ts]
        assert all(o.dtype == np.dtype(str(dtype)) for o in outs[dtype])
    for lo, hi in zip(outs[mg.float32], outs[mg.float64]):
        np.testing.assert_allclose(lo, hi, rtol=1e-4, atol=1e-5)


def test_embedding_backward_sums_repeated_indices(rng):
    indices = rng.integers(0, 5, size=(4, 6))
    weight = rng.standard_normal((7, 3))
    assert_mirror(*run_both(lambda lib, w: lib.nn.functional.embedding(lib.tensor(indices), w)), weight)

