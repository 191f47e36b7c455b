"""Differential fuzzing of flex_attention against PyTorch: random shapes, masks, score modifications and dtypes must
give PyTorch's outputs and logsumexp, and in float64 the gradients of PyTorch's autograd through the written-out
attention (the cases and what is compared: ``tests/flex_fuzz.py``).

Seeded cases (fixed, so CI runs the same ones every time), what they cover, and planted mistakes the fuzzer must
notice.
"""
import types

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.attention import flex_attention as fa

from . import flex_fuzz as ff
from .mirror import torch_or_skip

SEEDS = range(60)


def test_seeded_cases_agree_with_pytorch():
    torch = torch_or_skip()
    found = [p for p in (ff.differences(torch, mg, s) for s in SEEDS) if p]
    assert not found, f"{len(found)} of {len(SEEDS)} cases differ from PyTorch; the first:\n{found[0]}"


def _names(tree):
    if isinstance(tree, tuple):
        return {tree[0]} | (_names(tree[1]) if tree[0] == "not" else set().union(*map(_names, tree[1])))
    return set() if tree is None else {tree}


def test_cases_cover_every_dtype_mask_and_score_mod():
    """A fuzzer that never drew bfloat16, a shared key/value batch or a mask made for B=None would pass on their
    bugs."""
    cases = [ff.random_case(s) for s in range(300)]
    assert {c["dtype"] for c in cases} == set(ff.DTYPES)
    assert set(ff.MASKS) | {"and", "or", "not"} <= set().union(*(_names(c["mask"]) for c in cases))
    assert {s for c in cases for s in c["scores"]} == set(ff.SCORES)
    assert any(c["heads"] != c["kv_heads"] for c in cases) and any(c["shared_kv"] for c in cases)
    assert any(isinstance(c["block"], tuple) for c in cases) and {c["separate"] for c in cases} == {True, False}
    assert {c["mask_batch"] for c in cases} == {c["mask_heads"] for c in cases} == {True, False}
    assert any(c["mask"] is None for c in cases) and any(c["scale"] is not None for c in cases)
    assert any(c["L"] == 1 for c in cases) and any(c["S"] == 1 for c in cases)
    seeds = [c["seed"] for c in cases if c["dtype"] == "float64"][:len(SEEDS)]
    assert set(seeds) & set(SEEDS), "the CI seeds include float64 cases (gradients)"


def _heads_tiled(query, key, value):
    """A planted mistake: query head h reads key/value head h % Hkv instead of h // (Hq / Hkv)."""
    repeat = query.shape[1] // key.shape[1]
    return (t if repeat == 1 else mg.cat([t] * repeat, 1) for t in (key, value))


def _lse_of_dead_rows_zero(*args, **kwargs):
    out = fa.masked_fill(*args, **kwargs)
    return out.masked_fill(out == -np.inf, 0.0) if out.ndim == 3 else out


@pytest.mark.parametrize("plant", ["grouped heads tiled", "full tiles as partial", "dead rows' lse zero",
                                   "default scale 1/E"])
def test_the_fuzzer_notices_planted_mistakes(plant, monkeypatch):
    torch = torch_or_skip()
    from minigrad.nn.attention import block_mask as bm
    if plant == "grouped heads tiled":
        monkeypatch.setattr(fa, "_grouped", _heads_tiled)
    elif plant == "full tiles as partial":
        original = bm.BlockMask._dense_tiles
        monkeypatch.setattr(bm.BlockMask, "_dense_tiles", lambda self: (
            lambda p, f: (p if f is None else p | f, None))(*original(self)))
    elif plant == "dead rows' lse zero":
        monkeypatch.setattr(fa, "masked_fill", _lse_of_dead_rows_zero)
    else:                                       # the default scale 1/E instead of 1/sqrt(E)
        monkeypatch.setattr(fa, "math", types.SimpleNamespace(sqrt=lambda e: e))
    assert any(ff.differences(torch, mg, s) for s in SEEDS), f"no seeded case noticed the planted mistake '{plant}'"

