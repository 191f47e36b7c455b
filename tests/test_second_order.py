"""Second order through the LLaMA example (examples/second_order.py), against PyTorch: Hessian-vector
products of the LM loss with respect to every parameter, the sharpness by power iteration, and the
gradient of a gradient penalty; all float64, the same code run with both libraries."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import math_attention, torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
for sub in ("examples", "bench"):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

import second_order  # noqa: E402
from llama import Llama, LlamaConfig, lm_loss  # noqa: E402
from lm_tasks import SortTask  # noqa: E402


def models(norm):
    """A one-block minigrad Llama (float64) with a few training-like perturbations, and its PyTorch twin."""
    torch = torch_or_skip()
    import torch_llama
    mg.manual_seed(3)
    model = Llama(LlamaConfig(vocab_size=11, seq_len=8, d_model=16, n_layers=1, n_heads=2, norm=norm)).to(mg.float64)
    rng = np.random.default_rng(5)
    with mg.no_grad():
        for p in model.parameters():   # norms' weights away from 1, so their second-order terms are generic
            p.add_(mg.tensor(rng.standard_normal(tuple(p.shape)) * 0.1))
    return model, torch_llama.twin_of(model), torch


def batch():
    x, y = SortTask(seq_len=8, seed=0).batch(0, 4)
    return x, y


@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_hessian_vector_product_matches_pytorch(norm):
    ours, theirs, torch = models(norm)
    x, y = batch()
    rng = np.random.default_rng(0)
    names = [n for n, _ in ours.named_parameters()]
    vs = {n: rng.standard_normal(tuple(p.shape)) for n, p in ours.named_parameters()}
    results = []
    for lib, model, functional in ((mg, ours, F), (torch, theirs, torch.nn.functional)):
        params = dict(model.named_parameters())
        with math_attention(lib):
            loss = lm_loss(functional, model(lib.tensor(x)), lib.tensor(y))
            hv = second_order.hessian_vector_product(lib, loss, [params[n] for n in names],
                                                     [lib.tensor(vs[n]) for n in names])
        results.append([h.detach().numpy() for h in hv])
    for name, a, b in zip(names, *results):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=name)
    assert any(np.abs(a).max() > 1e-3 for a in results[0])   # not a product that is zero by construction


def test_sharpness_matches_pytorch():
    ours, theirs, torch = models("rmsnorm")
    x, y = batch()
    eigs = []
    for lib, model, functional in ((mg, ours, F), (torch, theirs, torch.nn.functional)):
        params = list(model.parameters())
        with math_attention(lib):
                eigs.append(second_order.sharpness(lib, lambda: lm_loss(functional, model(lib.tensor(x)), lib.tensor(y)),
                                               params, iters=4))
    np.testing.assert_allclose(eigs[0], eigs[1], rtol=1e-8)


def test_gradient_penalty_gradients_match_pytorch():
    ours, theirs, torch = models("rmsnorm")
    x, y = batch()
    grads = []
    for lib, model, functional in ((mg, ours, F), (torch, theirs, torch.nn.functional)):
        with math_attention(lib):
            loss = second_order.penalized_loss(lib, model, lib.tensor(x), lib.tensor(y), functional, lam=0.5)
            loss.backward()
        grads.append({n: p.grad.numpy().copy() for n, p in model.named_parameters()})
    for name in grads[0]:
        np.testing.assert_allclose(grads[0][name], grads[1][name], rtol=1e-8, atol=1e-11, err_msg=name)


def test_example_runs(capsys):
    second_order.main(["--steps", "2", "--iters", "2"])
    out = capsys.readouterr().out
    assert "sharpness at initialisation" in out and "after 2 steps" in out
