"""Gradients of gradients as PyTorch's, on its op database: under ``create_graph=True`` each first gradient requires
grad exactly when PyTorch's does, and a second backward through them reaches the same leaves (None, zeros or values)
(``tests/graph_survey.py``). The values of second derivatives are compared elsewhere (tests/test_opinfo.py's
gradients, the double-backward tests); this is about the graph: a gradient PyTorch's backward computes from an input
(pooling's reads its input's shape, a fused norm or convolution node all its inputs) depends on that input.
"""
import warnings

import pytest

import minigrad as mg

from . import graph_survey
from .mirror import torch_or_skip
from .opinfo_harness import is_random, minigrad_variant, op_id, torch_variant
from .opinfo_util import samples, to_mg

SHARDS = 4
SAMPLES = 3

# op id: why its graph still differs from PyTorch's (the test fails once one agrees, so that its entry goes).
KNOWN = {
    "cumprod": "of a 0-d input PyTorch's gradient is dout itself (no graph); minigrad's reads the input",
    "masked.cumprod": "as cumprod",
    "logcumsumexp": "of a 0-d input PyTorch's gradient is dout itself (no graph); minigrad's reads the input",
    "linalg.vander": "of a 0-d input PyTorch's gradient has no graph; minigrad's reads the input",
    "remainder": "the divisor's gradient, -dout * floor(x / y), gives x zeros in PyTorch's second backward, None in "
                 "minigrad's (its floor is a constant)",
    "fmod": "as remainder, with trunc",
    "__rmod__": "as remainder",
    "linalg.norm.subgradients_at_zero": "at a zero vector PyTorch's second derivative of the norm has values, "
                                        "minigrad's is zeros (the subgradient's slope is a constant)",
    "nn.functional.prelu": "with a 0-d weight PyTorch's input gradient depends on the input (with derivative zero); "
                           "minigrad's does not",
    "nn.functional.layer_norm": "of an empty input (the composite path) the bias gradient has no graph",
    "native_layer_norm": "PyTorch 2.13's second backward of an empty input fails; minigrad's runs",
    "nn.functional.grid_sample": "nearest mode: PyTorch's gradients depend on input and grid with derivative zero; "
                                 "minigrad's are constants",
    "grid_sampler_2d": "as grid_sample",
    "linalg.householder_product": "with a tau that does not require grad, minigrad's input gradient has no graph "
                                  "where PyTorch gives none at all",
    "ormqr": "PyTorch gives the inputs of this sample no first gradient; minigrad gives zeros with a graph",
    "nn.functional.linear_cross_entropy.chunked": "PyTorch's chunked form gives first gradients without a graph "
                                                  "(it cannot be differentiated twice); minigrad's can",
    "nn.functional.linear_cross_entropy.chunked_none": "as linear_cross_entropy.chunked",
}


def _ops(shard):
    from .opinfo_util import op_db
    return op_db()[shard::SHARDS]


def _differences(op, torch):
    """(sample, PyTorch's outcome, minigrad's) where they differ, and how many samples were compared."""
    if (not op.supports_autograd or not getattr(op, "supports_gradgrad", True) or is_random(op)
            or torch.float64 not in op.supported_dtypes("cpu")):
        return [], 0
    fn_th, fn_mg = torch_variant(op, "function"), minigrad_variant(op, "function")
    if fn_th is None or fn_mg is None:
        return [], 0
    found, compared = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, sample in enumerate(samples(op, torch.float64, requires_grad=True, limit=SAMPLES)):
            try:
                memo = {}
                ours = (to_mg(sample.input, memo), to_mg(sample.args, memo), to_mg(sample.kwargs, memo))
            except BaseException:     # a sample minigrad cannot hold (pytest.skip inside to_mg): not compared
                continue
            want = graph_survey.outcome(torch, fn_th, (sample.input, sample.args, sample.kwargs), torch)
            if want == "op raised" or str(want).startswith("first backward raised"):
                continue
            got = graph_survey.outcome(mg, fn_mg, ours, torch)
            compared += 1
            if want != got:
                found.append((index, want, got))
    return found, compared


@pytest.mark.parametrize("shard", range(SHARDS))
def test_first_gradients_have_pytorchs_graph(shard):
    torch = torch_or_skip()
    pytest.importorskip("expecttest", reason="PyTorch's OpInfo database imports expecttest")
    new, fixed = [], []
    for op in _ops(shard):
        found, compared = _differences(op, torch)
        name = op_id(op)
        if found and name not in KNOWN:
            new.append(f"{name}: " + "; ".join(f"sample {i}: PyTorch {a}, minigrad {b}" for i, a, b in found))
        if not found and compared and name in KNOWN:
            fixed.append(name)
    assert not new, "first gradients whose graph differs from PyTorch's:\n" + "\n".join(new)
    assert not fixed, f"now agree with PyTorch, remove them from KNOWN: {fixed}"


def test_the_survey_catches_a_gradient_without_its_graph(monkeypatch):
    """avg_pool's gradient made a constant again (as before minigrad matched PyTorch): under create_graph it no longer
    requires grad, and the survey reports it."""
    torch = torch_or_skip()
    pytest.importorskip("expecttest")
    from minigrad.ops import pool
    from .opinfo_util import opinfos
    monkeypatch.setattr(pool.AvgPool, "graph_backward", classmethod(pool.AxisMaps.graph_backward.__func__))
    found, _ = _differences(opinfos("nn.functional.avg_pool2d")[0], torch)
    assert found
