"""Double backward through whole modules, against PyTorch: a gradient penalty ||d(loss)/d(input)||^2
differentiated with respect to the input and every parameter, for each layer minigrad has (the norms,
Linear, attention, the recurrent layers), both libraries starting from one state_dict, float64.

PyTorch 2.13's TransformerEncoderLayer cannot do this on the CPU (its fused attention kernel has no
double backward); there the check is finite differences (gradgradcheck) instead."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import math_attention, torch_or_skip

rng = np.random.default_rng(11)

MODULES = {   # name: (constructor written against lib.nn, input shape, forward)
    "Linear": (lambda nn: nn.Linear(6, 5), (4, 6), lambda m, x: m(x).tanh()),
    "RMSNorm": (lambda nn: nn.RMSNorm(6), (4, 6), lambda m, x: m(x)),
    "LayerNorm": (lambda nn: nn.LayerNorm(6), (4, 6), lambda m, x: m(x)),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(3), (4, 3, 5), lambda m, x: m(x)),
    "BatchNorm1d-eval": (lambda nn: nn.BatchNorm1d(3).eval(), (4, 3, 5), lambda m, x: m(x).tanh()),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5), lambda m, x: m(x)),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(3, affine=True), (2, 3, 6), lambda m, x: m(x)),
    "MultiheadAttention": (lambda nn: nn.MultiheadAttention(6, 2, batch_first=True), (2, 4, 6),
                           lambda m, x: m(x, x, x, need_weights=False)[0]),
    "LSTM": (lambda nn: nn.LSTM(6, 5, batch_first=True), (2, 4, 6), lambda m, x: m(x)[0]),
    "GRU": (lambda nn: nn.GRU(6, 5, batch_first=True), (2, 4, 6), lambda m, x: m(x)[0]),
}


def _penalty_grads(lib, module, forward, x_array, weights):
    with math_attention(lib):
        return _penalty_grads_of(lib, module, forward, x_array, weights)


def _penalty_grads_of(lib, module, forward, x_array, weights):
    x = lib.tensor(x_array, requires_grad=True)
    out = forward(module, x)
    loss = (out * lib.tensor(weights)).sum() + (out * out).sum() / 2     # non-linear in the output
    (dx,) = lib.autograd.grad(loss, x, create_graph=True)
    penalty = (dx * dx).sum()
    params = [p for _, p in module.named_parameters()]
    grads = lib.autograd.grad(penalty, [x] + params, allow_unused=True)
    return dx.detach().numpy(), [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("name", list(MODULES))
def test_gradient_penalty_through_module_matches_pytorch(name):
    torch = torch_or_skip()
    make, shape, forward = MODULES[name]
    mg.manual_seed(0)
    ours = make(mg.nn).to(mg.float64)
    theirs = make(torch.nn).to(torch.float64)
    with mg.no_grad():                       # parameters away from their initial 1s and 0s
        for p in ours.parameters():
            p.add_(mg.tensor(rng.standard_normal(tuple(p.shape)) * 0.2))
    for buf_name, b in ours.named_buffers():
        if buf_name.endswith("running_var"):
            b.copy_(mg.tensor(rng.uniform(0.5, 2.0, tuple(b.shape))))
        elif buf_name.endswith("running_mean"):
            b.copy_(mg.tensor(rng.standard_normal(tuple(b.shape))))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = rng.standard_normal(shape)
    weights = rng.standard_normal(np.shape(forward(ours, mg.tensor(x)).detach().numpy()))
    (dx_mg, gg_mg), (dx_th, gg_th) = (_penalty_grads(mg, ours, forward, x, weights),
                                      _penalty_grads(torch, theirs, forward, x, weights))
    np.testing.assert_allclose(dx_mg, dx_th, rtol=1e-9, atol=1e-11, err_msg="first gradient")
    names = ["input"] + [n for n, _ in ours.named_parameters()]
    for n, a, b in zip(names, gg_mg, gg_th):
        a = np.zeros_like(b) if a is None and b is not None else a
        b = np.zeros_like(a) if b is None and a is not None else b
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=f"second order, {n}")


def test_transformer_encoder_layer_double_backward_against_finite_differences():
    mg.manual_seed(0)
    layer = mg.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).to(mg.float64)
    x = mg.tensor(rng.standard_normal((1, 3, 4)), requires_grad=True)
    assert mg.autograd.gradgradcheck(lambda t: layer(t).tanh(), (x,), atol=1e-6)
