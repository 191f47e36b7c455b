"""Differential fuzzing of the normalization modules against PyTorch: random configurations, dtypes (float64 to
bfloat16), layouts and train/eval sequences must give PyTorch's outputs, gradients, running buffers and errors (the
cases and what is compared: ``tests/norm_fuzz.py``).

Seeded cases (fixed, so CI runs the same ones every time), the case that found a PyTorch bug, and three planted
mistakes the fuzzer must notice.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.kernels import use_backend

from . import norm_fuzz as nf
from .mirror import torch_or_skip

CHUNK, CHUNKS = 150, 4          # 600 seeded cases on the numba kernels, 150 more on the NumPy ones


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_seeded_cases_agree_with_pytorch(chunk):
    torch = torch_or_skip()
    found = [p for p in (nf.differences(torch, mg, s) for s in range(chunk * CHUNK, (chunk + 1) * CHUNK)) if p]
    assert not found, f"{len(found)} of {CHUNK} cases differ from PyTorch; the first:\n{found[0]}"


def test_seeded_cases_agree_with_pytorch_on_the_numpy_kernels():
    """The NumPy reference kernels (the specification the numba twins follow) on the next chunk of seeds."""
    torch = torch_or_skip()
    seeds = range(CHUNK * CHUNKS, CHUNK * (CHUNKS + 1))
    with use_backend("numpy"):
        found = [p for p in (nf.differences(torch, mg, s) for s in seeds) if p]
    assert not found, f"{len(found)} of {CHUNK} cases differ from PyTorch; the first:\n{found[0]}"


def test_cases_cover_every_module_dtype_and_layout():
    """The seeded cases draw every module, dtype and layout, and steps in both modes (a fuzzer that never drew
    bfloat16 would pass on its bugs)."""
    cases = [nf.random_case(s) for s in range(CHUNK * CHUNKS)]
    names = {c["name"] for c in cases}
    assert {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"} <= names
    assert {c["dtype"] for c in cases} == set(nf.DTYPES) and {c["layout"] for c in cases} == {0, 1, 2}
    assert {t for c in cases for t in c["training"]} == {True, False}
    assert any(c["kwargs"].get("momentum", 0.1) is None for c in cases)
    assert {c["name"] for c in cases if c["second"]} == names                     # second order, every module
    assert any(c["mixed"] for c in cases) and any(c["shape"][0] == 0 for c in cases)   # mixed dtypes, empty batches


def test_minigrad_is_right_where_pytorch_batch_norm_is_not():
    """Seed 277: an input PyTorch takes for channels_last (shape (1, 4, 1, 2), strides (1, 1, 1, 4)) with a
    contiguous upstream gradient. PyTorch 2.13's CPU batch_norm returns a wrong input gradient there (off by 6 at
    a scale of 5); minigrad's equals PyTorch's own answer for the same values laid out contiguously."""
    torch = torch_or_skip()
    case = nf.random_case(277)
    assert case["name"] == "BatchNorm2d" and case["layout"] == 1 and case["shape"] == (1, 4, 1, 2)
    shapes = [tuple(p.shape) for p in torch.nn.BatchNorm2d(*case["args"], **case["kwargs"]).parameters()]
    rng = np.random.default_rng(case["param_seed"])
    params = [1 + 0.5 * rng.standard_normal(s) for s in shapes]
    ours = dict(nf.run(mg, case, "float64", params))
    exact = dict(nf.run(torch, dict(case, layout=0), "float64", params))
    np.testing.assert_allclose(ours["input grad"], exact["input grad"], rtol=1e-9, atol=1e-9)
    assert nf.differences(torch, mg, 277) is None


def _first_difference(torch, seeds, wanted):
    for s in seeds:
        problem = nf.differences(torch, mg, s)
        if problem and wanted in problem:
            return problem
    return None


def test_the_fuzzer_catches_a_wrong_layer_norm_gradient(monkeypatch):
    """dx of LayerNorm off by one part in a million, on both kernel backends: the float64 cases notice."""
    torch = torch_or_skip()
    from minigrad.kernels import numba_kernels
    from minigrad.ops.norm import layernorm

    def planted(original):
        def wrong(*args, **kwargs):
            dx, dw, db = original(*args, **kwargs)
            return (None if dx is None else dx * (1 + 1e-6)), dw, db
        wrong.__name__ = original.__name__
        return wrong
    monkeypatch.setattr(numba_kernels, "layer_norm_backward", planted(numba_kernels.layer_norm_backward))
    monkeypatch.setattr(layernorm, "layer_norm_backward", planted(layernorm.layer_norm_backward))
    assert _first_difference(torch, range(CHUNK * CHUNKS), "input grad") is not None


def test_the_fuzzer_catches_a_missing_error(monkeypatch):
    """BatchNorm in training with one value per channel: PyTorch raises ValueError; without minigrad's check the
    fuzzer sees minigrad compute instead."""
    torch = torch_or_skip()
    from minigrad.ops.norm import batchnorm
    original = batchnorm.check_batch_norm_arguments
    monkeypatch.setattr(batchnorm, "check_batch_norm_arguments",
                        lambda *args, **kwargs: original(*args, **{**kwargs, "check_batch_size": False}))
    assert _first_difference(torch, range(CHUNK * CHUNKS), "more than 1 value per channel") is not None


def test_the_fuzzer_catches_a_wrong_second_derivative(monkeypatch):
    """LayerNorm's hand-derived double backward (``LayerNormBackward.backward``) off by one part in a million: the
    second-order cases notice."""
    torch = torch_or_skip()
    from minigrad.ops.norm.layernorm import LayerNormBackward
    original = LayerNormBackward.backward

    def wrong(ctx, G):
        return tuple(None if g is None else g * (1 + 1e-6) for g in original(ctx, G))
    monkeypatch.setattr(LayerNormBackward, "backward", staticmethod(wrong))
    assert _first_difference(torch, range(CHUNK * CHUNKS), "second order") is not None


def test_an_rms_norm_over_one_element_is_held_to_its_rounding_and_no_further(monkeypatch):
    """Seed 279688: RMSNorm over a single element, eps = 2.2e-16, where both libraries' second derivatives lose
    x^2 / eps units of float64 rounding (``norm_fuzz._eps_driven``): the case agrees, and the same double backward
    off by one part in a million is still noticed."""
    torch = torch_or_skip()
    assert nf.differences(torch, mg, 279688) is None
    from minigrad.ops.norm.rmsnorm import RMSNormBackward
    original = RMSNormBackward.backward

    def wrong(ctx, G):
        return tuple(None if g is None else g * (1 + 1e-6) for g in original(ctx, G))
    monkeypatch.setattr(RMSNormBackward, "backward", staticmethod(wrong))
    problem = nf.differences(torch, mg, 279688)
    assert problem is not None and "second order, input" in problem
