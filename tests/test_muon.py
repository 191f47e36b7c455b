"""optim.Muon against torch.optim.Muon: parameters after several steps from random gradients (float64 parameters; the
Newton-Schulz iteration runs in bfloat16 in both, whose float32 accumulation order may differ in the last bit of a
bfloat16 value between BLAS libraries, hence a tolerance of a small fraction of the distance moved), the errors, and
without PyTorch: the iteration's output has the gradient's singular vectors and singular values near 1."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.optim.muon import NEWTON_SCHULZ, newton_schulz

from .mirror import torch_or_skip

SETTINGS = [dict(), dict(nesterov=False), dict(adjust_lr_fn="match_rms_adamw", weight_decay=0.0, lr=0.02),
            dict(momentum=0.5, weight_decay=0.3, lr=0.01, ns_steps=3, adjust_lr_fn="original")]


def _train(lib, weights, gradients, settings):
    params = [lib.nn.Parameter(lib.tensor(w.copy())) for w in weights]
    optimizer = lib.optim.Muon([{"params": params[:1]}, {"params": params[1:], "lr": 0.005}], **settings)
    for step in gradients:
        for p, g in zip(params, step):
            p.grad = lib.tensor(g)
        optimizer.step()
    return [p.detach().numpy() for p in params], optimizer


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_steps_as_pytorch(settings):
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    shapes = [(8, 5), (5, 8), (16, 16)]
    weights = [rng.standard_normal(s) for s in shapes]
    gradients = [[rng.standard_normal(s) for s in shapes] for _ in range(4)]
    (ours, optimizer), (theirs, _) = (_train(lib, weights, gradients, settings) for lib in (mg, torch))
    for w, a, b in zip(weights, ours, theirs):
        moved = np.abs(b - w).max()
        np.testing.assert_allclose(a, b, rtol=0, atol=0.02 * moved)
    state = optimizer.state[optimizer.param_groups[0]["params"][0]]
    assert list(state) == ["momentum_buffer"]


def test_newton_schulz_orthogonalizes_without_torch():
    """O = NS(G) is about U S' V^T for G = U S V^T: U^T O V is nearly diagonal with entries in (0.5, 1.5)."""
    rng = np.random.default_rng(6)
    for shape in ((12, 7), (7, 12), (9, 9)):
        G = rng.standard_normal(shape)
        O = newton_schulz(G, NEWTON_SCHULZ, 5, 1e-7).astype(np.float64)
        U, _, Vt = np.linalg.svd(G, full_matrices=False)
        core = U.T @ O @ Vt.T
        diagonal = np.diag(core)
        assert np.all((diagonal > 0.5) & (diagonal < 1.5)), diagonal
        assert np.abs(core - np.diag(diagonal)).max() < 0.05
        assert O.shape == shape


def test_errors_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        matrix = lib.nn.Parameter(lib.zeros(3, 4))
        with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size"):
            lib.optim.Muon([lib.nn.Parameter(lib.zeros(3))])
        with pytest.raises(ValueError, match="Adjust learning rate function cubic is not supported"):
            lib.optim.Muon([matrix], adjust_lr_fn="cubic")
        with pytest.raises(ValueError, match="Learning rate should be >= 0 but is: -1"):
            lib.optim.Muon([matrix], lr=-1)
        with pytest.raises(ValueError, match="momentum should be >= 0 but is: -0.5"):
            lib.optim.Muon([matrix], momentum=-0.5)
        optimizer = lib.optim.Muon([matrix], ns_steps=100)
        matrix.grad = lib.ones(3, 4)
        with pytest.raises(ValueError, match="Number of steps must be less than 100"):
            optimizer.step()


def test_state_dict_round_trip_without_torch():
    rng = np.random.default_rng(7)
    weights, gradients = [rng.standard_normal((4, 6))], [[rng.standard_normal((4, 6))] for _ in range(3)]
    params, optimizer = _train(mg, weights, gradients[:2], {})
    p = mg.nn.Parameter(mg.tensor(params[0]))
    restored = mg.optim.Muon([{"params": [p]}, {"params": [], "lr": 0.005}])
    restored.load_state_dict(optimizer.state_dict())
    np.testing.assert_allclose(restored.state[p]["momentum_buffer"].numpy(),
                               optimizer.state[optimizer.param_groups[0]["params"][0]]["momentum_buffer"].numpy())
