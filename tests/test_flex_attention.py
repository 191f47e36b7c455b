"""``nn.attention.flex_attention`` against PyTorch's: the block tables ``create_block_mask`` builds, the forward
values and logsumexp for score_mods and mask_mods of each kind, and PyTorch's errors (recorded, replayed without
PyTorch). Gradients: PyTorch 2.13 refuses flex_attention's backward on the CPU, so they are checked by float64
finite differences and against PyTorch's autograd through the same math written out (scores, mask, its safe
softmax, the product with v). Tables built by hand (``BlockMask.from_kv_blocks``) are checked against a NumPy
reading of the tables: PyTorch's uncompiled CPU path ignores them (see docs/differences.md).
"""
import importlib
import re
import warnings

import numpy as np
import pytest

import minigrad as mg

from . import oracle
from .mirror import assert_mirror, check_grad, run_both, torch_result

B, H, L, S, E, EV = 2, 2, 13, 17, 4, 5


def flex(lib):
    return importlib.import_module(f"{lib.__name__}.nn.attention.flex_attention")


def inputs(seed=0, shapes=((B, H, L, E), (B, H, S, E), (B, H, S, EV)), dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def bias_table(seed=1):
    return np.random.default_rng(seed).standard_normal((H, L, S))


# score_mods and mask_mods of each kind PyTorch's documentation shows, written once for both libraries
SCORE_MODS = {
    "identity": lambda lib, bias: None,
    "scaled": lambda lib, bias: lambda s, b, h, q, kv: s * 2,
    "causal_where": lambda lib, bias: lambda s, b, h, q, kv: lib.where(q >= kv, s, -float("inf")),
    "captured_bias": lambda lib, bias: lambda s, b, h, q, kv: s + bias[h, q, kv],
    "softcap": lambda lib, bias: lambda s, b, h, q, kv: 3 * lib.tanh(s / 3),
    "alibi": lambda lib, bias: lambda s, b, h, q, kv: s + (kv - q) * (h + 1) * 0.25,
}
MASK_MODS = {
    "none": lambda lib: None,
    "causal": lambda lib: lambda b, h, q, kv: q >= kv,
    "sliding_window": lambda lib: lambda b, h, q, kv: (q - kv).abs() <= 3,
    "with_dead_rows": lambda lib: lambda b, h, q, kv: (q >= kv) & (q % 5 != 2),
    "per_head_and_batch": lambda lib: lambda b, h, q, kv: (kv + b) % (h + 2) == 0,
    "documents": lambda lib: (lambda doc: lambda b, h, q, kv: doc[q] == doc[kv])(
        lib.tensor([0] * 5 + [1] * 6 + [2] * 6)),
    "prefix_lm": lambda lib: flex(lib).or_masks(lambda b, h, q, kv: kv < 4, lambda b, h, q, kv: q >= kv),
    "banded_and": lambda lib: flex(lib).and_masks(lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: q - kv < 6),
}


def block_mask(lib, mask, batch=B, heads=H, block=4, **kw):
    mask_mod = MASK_MODS[mask](lib)
    return None if mask_mod is None else flex(lib).create_block_mask(mask_mod, batch, heads, L, S, BLOCK_SIZE=block,
                                                                    **kw)


def quiet(fn):
    """``fn`` with PyTorch's warning about running uncompiled silenced."""
    def run(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    return run


@quiet
def attend(lib, arrays, score="identity", mask="none", dtype=None, bias=None, mask_args=(), **kw):
    qkv = [lib.tensor(a) for a in arrays]
    if dtype is not None:
        qkv = [t.to(getattr(lib, dtype)) for t in qkv]
    bias = lib.tensor(bias_table() if bias is None else bias)
    out, aux = flex(lib).flex_attention(*qkv, score_mod=SCORE_MODS[score](lib, bias),
                                        block_mask=block_mask(lib, mask, *mask_args),
                                        return_aux=flex(lib).AuxRequest(lse=True), **kw)
    return {"out": out, "lse": aux.lse}


def compare(ours, theirs, tol):
    for name in ("out", "lse"):
        assert str(ours[name].dtype).replace("minigrad.", "") == str(theirs[name].dtype).replace("torch.", ""), name
        np.testing.assert_allclose(ours[name].float().numpy() if "bfloat" in str(ours[name].dtype)
                                   else ours[name].numpy(), theirs[name].numpy(), rtol=tol, atol=tol, err_msg=name)


# --------------------------------------------------------------------------- forward values and logsumexp
FORWARD = ([(score, "causal", dtype) for score in SCORE_MODS for dtype in ("float64", "float32")]
           + [("captured_bias", mask, dtype) for mask in MASK_MODS for dtype in ("float64", "float32")])


@pytest.mark.parametrize("score, mask, dtype", FORWARD)
def test_forward_as_pytorch(score, mask, dtype):
    arrays = inputs(dtype=np.dtype(dtype))
    theirs = torch_result(lambda torch: attend(torch, arrays, score, mask), arrays, score, mask, tolerance=(1e-6, 1e-6))
    tol = 1e-10 if dtype == "float64" else 2e-5
    compare(attend(mg, arrays, score, mask), theirs, tol)


SHAPES = {
    # grouped-query attention: 4 query heads read 2 key/value heads
    "gqa": dict(shapes=((B, 4, L, E), (B, 2, S, E), (B, 2, S, EV)), enable_gqa=True, mask_args=(B, 4)),
    # one key/value batch for every query batch (allowed with a block mask of the query's batch size)
    "shared_kv_batch": dict(shapes=((3, H, L, E), (1, H, S, E), (1, H, S, EV)), mask_args=(3, H)),
    # a block mask made for one batch and head, shared by all; tiles of 8 x 4
    "broadcast_mask": dict(shapes=None, mask_args=(None, None, (8, 4))),
    "scale": dict(shapes=None, scale=0.3),
}


@pytest.mark.parametrize("case", SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float16"])
def test_shapes_and_dtypes_as_pytorch(case, dtype):
    kw = dict(SHAPES[case])
    arrays = inputs(3, kw.pop("shapes") or ((B, H, L, E), (B, H, S, E), (B, H, S, EV)))
    low = None if dtype == "float64" else dtype

    def run(lib):
        return attend(lib, arrays, "alibi", "per_head_and_batch", dtype=low, **kw)
    theirs = torch_result(run, arrays, case, dtype, tolerance=(1e-6, 1e-6))
    # float16/bfloat16: the same float32 math, weights and values rounded to the dtype; 1 ulp of difference allowed
    compare(run(mg), theirs, 1e-10 if low is None else (8e-3 if dtype == "bfloat16" else 1e-3))


# --------------------------------------------------------------------------- the block tables
TABLE_FIELDS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks", "q_indices",
                "full_q_num_blocks", "full_q_indices")


def tables(lib, mask, batch, heads, block, separate):
    bm = block_mask(lib, mask, batch, heads, block, separate_full_blocks=separate)
    return {"fields": [getattr(bm, f) for f in TABLE_FIELDS], "shape": bm.shape, "str": str(bm),
            "sparsity": bm.sparsity(), "dense": bm.to_dense(), "picture": bm.to_string(grid_size=3, limit=2),
            "sliced": [getattr(bm[1, -1], f) for f in TABLE_FIELDS[:4]],
            "adjusted": [getattr(bm._adjust(L - 5, S - 9), f) for f in TABLE_FIELDS[:6]]}


@pytest.mark.parametrize("separate", [True, False])
@pytest.mark.parametrize("block", [4, (8, 4), 128])
@pytest.mark.parametrize("mask", [m for m in MASK_MODS if m != "none"])
def test_block_tables_as_pytorch(mask, block, separate):
    theirs = torch_result(lambda torch: tables(torch, mask, B, H, block, separate), mask, block, separate)
    ours = tables(mg, mask, B, H, block, separate)
    for name in ("fields", "sliced", "adjusted"):
        for field, a, b in zip(TABLE_FIELDS, ours[name], theirs[name]):
            assert (a is None) == (b is None), (name, field)
            if a is not None:
                assert a.dtype == np.int32 and tuple(a.shape) == tuple(b.shape), (name, field)
                np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f"{name} {field}")
    assert tuple(ours["shape"]) == tuple(theirs["shape"])
    assert ours["str"] == theirs["str"] and ours["picture"] == theirs["picture"]
    assert ours["sparsity"] == pytest.approx(theirs["sparsity"], abs=1e-9)
    np.testing.assert_array_equal(ours["dense"].numpy(), theirs["dense"].numpy())


@pytest.mark.parametrize("kind", ["mask_mod", "score_mod"])
def test_create_mask_as_pytorch(kind):
    def run(lib):
        fn = (MASK_MODS["with_dead_rows"](lib) if kind == "mask_mod"
              else lambda s, b, h, q, kv: lib.where((q + h) % 3 != 0, s, -float("inf")))
        return flex(lib).create_mask(fn, 2, 3, L, S)
    theirs, ours = torch_result(run, kind), run(mg)
    assert ours.dtype == np.bool_ and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_tables_given_by_hand_mask_whole_tiles():
    """Row of tiles 0 computes only tile 1 (partial: the mask_mod applies), row 1 only tile 0 (full): elements in
    tiles not listed are masked, as the tables say (a NumPy reading of them is the reference)."""
    num = mg.tensor(np.array([[[1, 0]]], np.int32))
    idx = mg.tensor(np.array([[[[1, 0], [0, 1]]]], np.int32))
    full_num = mg.tensor(np.array([[[0, 1]]], np.int32))
    full_idx = mg.tensor(np.array([[[[0, 1], [0, 1]]]], np.int32))
    fa = flex(mg)
    bm = fa.BlockMask.from_kv_blocks(num, idx, full_num, full_idx, BLOCK_SIZE=8, seq_lengths=(16, 16),
                                     mask_mod=lambda b, h, q, kv: (q + kv) % 2 == 0)
    q, k, v = inputs(4, ((1, 1, 16, E), (1, 1, 16, E), (1, 1, 16, EV)))
    ours = fa.flex_attention(mg.tensor(q), mg.tensor(k), mg.tensor(v), block_mask=bm).numpy()
    kept = np.zeros((16, 16), bool)
    i, j = np.indices((8, 8))
    kept[:8, 8:] = (i + j + 8) % 2 == 0              # tile (0, 1): partial, the mask_mod decides
    kept[8:, :8] = True                              # tile (1, 0): full
    s = np.where(kept, q[0, 0] @ k[0, 0].T / np.sqrt(E), -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(ours[0, 0], (w / w.sum(-1, keepdims=True)) @ v[0, 0], rtol=1e-12, atol=1e-12)
    assert bm.sparsity() == 50.0
    np.testing.assert_array_equal(bm.to_dense().numpy()[0, 0], [[0, 1], [1, 0]])


# --------------------------------------------------------------------------- gradients
def _output_and_lse(score, mask):
    """flex_attention as one function of (q, k, v, bias) for gradcheck: each row's output mixed with its logsumexp
    (rows with nothing kept, lse -inf, count with their output only)."""
    fa = flex(mg)

    def fn(q, k, v, bias):
        out, aux = fa.flex_attention(q, k, v, score_mod=SCORE_MODS[score](mg, bias), block_mask=block_mask(mg, mask),
                                     return_aux=fa.AuxRequest(lse=True))
        lse = aux.lse.masked_fill(aux.lse == -float("inf"), 0.0)
        return out * 0.5 + lse[..., None] * 0.25
    return fn


@pytest.mark.parametrize("score, mask", [("captured_bias", "with_dead_rows"), ("softcap", "documents"),
                                         ("causal_where", "none"), ("identity", "sliding_window")])
def test_gradients_by_finite_differences(score, mask):
    """Through the output and the logsumexp, into q, k, v and a tensor the score_mod captures; rows with nothing
    kept included (their gradient is zero)."""
    q, k, v = inputs(5, ((B, H, L, 3), (B, H, S, 3), (B, H, S, 2)))
    check_grad(_output_and_lse(score, mask), q, k, v, bias_table(6))


def _written_out(lib, q, k, v, bias, score, mask):
    """The same attention written with plain operations: the reference for the gradients."""
    mask_mod = MASK_MODS[mask](lib)
    idx = [lib.arange(n).reshape(*[n if i == a else 1 for i in range(4)]) for a, n in enumerate((B, H, L, S))]
    s = q @ k.transpose(-1, -2) / E ** 0.5
    mod = SCORE_MODS[score](lib, bias)
    s = s if mod is None else mod(s, *idx)
    if mask_mod is not None:
        s = lib.where(mask_mod(*idx).expand(B, H, L, S), s, -float("inf"))
    dead = (s == -float("inf")).all(-1, keepdim=True)
    w = lib.softmax(s.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    return w @ v


@pytest.mark.parametrize("score, mask", [("captured_bias", "with_dead_rows"), ("alibi", "per_head_and_batch"),
                                         ("softcap", "prefix_lm")])
def test_gradients_as_pytorch_autograd_of_the_written_out_math(score, mask):
    q, k, v = inputs(7)
    _, theirs = run_both(lambda lib, *t: _written_out(lib, *t, score, mask))
    fa = flex(mg)

    def flex_mg(q, k, v, bias):
        return fa.flex_attention(q, k, v, score_mod=SCORE_MODS[score](mg, bias), block_mask=block_mask(mg, mask))
    assert_mirror(flex_mg, theirs, q, k, v, bias_table(8), rtol=1e-10, atol=1e-12, seed=3)


def test_the_fused_path_and_the_composed_path_agree():
    """Without a score_mod, a mask leaving every query a key takes the fused attention Function; asking for the
    logsumexp takes the composed operations: same values and gradients."""
    fa = flex(mg)
    arrays = inputs(9)
    results = []
    for aux in (None, fa.AuxRequest(lse=True)):
        q, k, v = (mg.tensor(a, requires_grad=True) for a in arrays)
        out = fa.flex_attention(q, k, v, block_mask=block_mask(mg, "causal"), return_aux=aux)
        out = out[0] if aux else out
        out.backward(mg.tensor(np.random.default_rng(1).standard_normal(out.shape)))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in (q, k, v)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_rows_with_nothing_kept_give_zero_output_minus_infinity_lse_and_zero_gradient():
    fa = flex(mg)
    q, k, v = (mg.tensor(a, requires_grad=True) for a in inputs(10))
    out, aux = fa.flex_attention(q, k, v, block_mask=block_mask(mg, "with_dead_rows"),
                                 return_aux=fa.AuxRequest(lse=True, max_scores=True))
    dead = np.arange(L) % 5 == 2
    assert np.all(out.detach().numpy()[:, :, dead] == 0) and np.all(aux.lse.detach().numpy()[:, :, dead] == -np.inf)
    assert np.all(aux.max_scores.detach().numpy()[:, :, dead] == -np.inf)
    (out.sum() + aux.max_scores[:, :, ~dead].sum()).backward()
    assert np.all(q.grad.numpy()[:, :, dead] == 0) and np.isfinite(k.grad.numpy()).all()


def test_max_scores_are_the_row_maxima_of_the_modified_scores():
    fa = flex(mg)
    q, k, v = inputs(11)
    _, aux = fa.flex_attention(mg.tensor(q), mg.tensor(k), mg.tensor(v), score_mod=SCORE_MODS["softcap"](mg, None),
                               block_mask=block_mask(mg, "causal"), return_aux=fa.AuxRequest(max_scores=True))
    s = 3 * np.tanh(q @ np.swapaxes(k, -1, -2) / np.sqrt(E) / 3)
    s = np.where(np.tri(L, S, dtype=bool), s, -np.inf)
    assert aux.lse is None
    np.testing.assert_allclose(aux.max_scores.numpy(), s.max(-1), rtol=1e-12)


# --------------------------------------------------------------------------- errors
def _call(lib, q_shape=(B, H, L, E), k_shape=(B, H, S, E), v_shape=(B, H, S, EV), **kw):
    q, k, v = (lib.zeros(*s) for s in (q_shape, k_shape, v_shape))
    return flex(lib).flex_attention(q, k, v, **kw)


ERRORS = {
    "embedding_dims": lambda lib: _call(lib, k_shape=(B, H, S, E + 1)),
    "one_dimension": lambda lib: _call(lib, q_shape=(E,)),
    "three_dimensions": lambda lib: _call(lib, (H, L, E), (H, S, E), (H, S, EV)),
    "heads_without_gqa": lambda lib: _call(lib, k_shape=(B, 1, S, E), v_shape=(B, 1, S, EV)),
    "heads_not_a_multiple": lambda lib: _call(lib, (B, 3, L, E), (B, 2, S, E), (B, 2, S, EV), enable_gqa=True),
    "batch_without_mask": lambda lib: _call(lib, k_shape=(1, H, S, E), v_shape=(1, H, S, EV)),
    "batch_of_mask": lambda lib: _call(lib, k_shape=(1, H, S, E), v_shape=(1, H, S, EV),
                                       block_mask=block_mask(lib, "causal", 1, H)),
    "mask_too_short": lambda lib: _call(lib, (B, H, L + 1, E), block_mask=block_mask(lib, "causal")),
    "mask_too_long": lambda lib: _call(lib, (B, H, L - 1, E), block_mask=block_mask(lib, "causal")),
    "sliced_mask": lambda lib: _call(lib, block_mask=block_mask(lib, "causal")[0]),
    "lse_and_aux": lambda lib: _call(lib, return_lse=True, return_aux=flex(lib).AuxRequest(lse=True)),
    "backend": lambda lib: _call(lib, kernel_options={"BACKEND": "CUTE"}),
    "backend_and_force": lambda lib: _call(lib, kernel_options={"BACKEND": "AUTO", "FORCE_USE_FLEX_ATTENTION": True}),
    "internal_option": lambda lib: _call(lib, kernel_options={"OUTPUT_LOGSUMEXP": True}),
    "block_mask_of_a_score_mod": lambda lib: flex(lib).create_block_mask(lambda s, b, h, q, kv: s, 1, 1, L, S),
    "three_arguments": lambda lib: flex(lib).create_mask(lambda b, q, kv: q >= kv, 1, 1, L, S),
    "and_of_a_number": lambda lib: flex(lib).and_masks(3),
    "or_of_a_string": lambda lib: flex(lib).or_masks("causal"),
    "dq_kv_order": lambda lib: flex(lib).create_block_mask(MASK_MODS["causal"](lib), 1, 1, L, S, dq_kv_order=None),
    "one_dimensional_tables": lambda lib: flex(lib).BlockMask.from_kv_blocks(lib.zeros(2, dtype=lib.int32),
                                                                            lib.zeros(2, dtype=lib.int32)),
    "half_of_the_full_tables": lambda lib: flex(lib).BlockMask.from_kv_blocks(
        lib.zeros(1, 1, 2, dtype=lib.int32), lib.zeros(1, 1, 2, 2, dtype=lib.int32),
        full_kv_num_blocks=lib.zeros(1, 1, 2, dtype=lib.int32)),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_pytorch(case):
    theirs = torch_result(quiet(ERRORS[case]), case, values=False)
    assert isinstance(theirs, oracle.RecordedError), f"PyTorch does not raise: {theirs!r}"
    with pytest.raises(Exception) as caught:
        quiet(ERRORS[case])(mg)
    assert type(caught.value) is theirs.type, (caught.value, theirs)
    assert re.sub(" at 0x[0-9a-f]+", "", str(caught.value)[:300]) == re.sub(" at 0x[0-9a-f]+", "", theirs.message)


def test_a_score_mod_indexing_one_index_at_a_time_is_refused_clearly():
    """bias[b][h] is right for one element (PyTorch's vmap) but not for minigrad's broadcasting indices: a result
    of the wrong shape is refused, and an error raised inside the score_mod carries a note saying why."""
    fa = flex(mg)
    table = mg.tensor(np.zeros((B, H, L, S)))
    q, k, v = (mg.tensor(a) for a in inputs())
    with pytest.raises(RuntimeError, match=r"does not broadcast.*all its indices at once \(bias\[b, h\]\)"):
        fa.flex_attention(q, k, v, score_mod=lambda s, b, h, qi, kv: s + table[b][h])
    with pytest.raises(IndexError) as caught:
        fa.flex_attention(q, k, v, score_mod=lambda s, b, h, qi, kv: s + table[b][h][qi][kv])
    assert "one after another (bias[b][h])" in caught.value.__notes__[0]


def test_a_block_mask_shared_by_heads_its_mask_mod_tells_apart_warns():
    """create_block_mask(..., H=None) builds the tables of head 0; a mask_mod that keeps other elements in other
    heads then needs tiles the tables skip. minigrad follows the tables (as PyTorch's compiled kernels) and warns;
    a mask made for every head, or one whose mask_mod is the same in every head, does not warn."""
    fa = flex(mg)
    q, k, v = (mg.tensor(a) for a in inputs())
    per_head = lambda b, h, q_idx, kv_idx: (kv_idx + h) % 3 == 0             # noqa: E731
    with pytest.warns(UserWarning, match="made for batch size 1 and 1 head.*create the block mask with B and H"):
        shared = fa.flex_attention(q, k, v, block_mask=fa.create_block_mask(per_head, None, None, L, S,
                                                                            BLOCK_SIZE=(4, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = fa.flex_attention(q, k, v, block_mask=fa.create_block_mask(per_head, None, H, L, S,
                                                                           BLOCK_SIZE=(4, 1)))
        fa.flex_attention(q, k, v, block_mask=block_mask(mg, "causal", None, None))
    # head 0's one-column tiles are every third column, which head 1's mask_mod never keeps: its rows keep nothing
    np.testing.assert_allclose(shared.numpy()[:, 0], exact.numpy()[:, 0], rtol=1e-12)
    assert not np.allclose(shared.numpy()[:, 1], exact.numpy()[:, 1])
