"""Module hooks under differential fuzzing against PyTorch: random small networks (linear layers, activations, a
residual block, a layer called twice, a module with two outputs), random hooks on random modules (forward pre-hooks
and hooks, full backward hooks and backward pre-hooks, some replacing what they see), an input that may or may not
require grad. Each seed runs in both libraries; the log of every hook call (which hook, on which module, what it saw)
and every gradient must agree. PyTorch's side is live or recorded."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_result

SEEDS = range(40)
D = 3


def network(lib, rng):
    """A Sequential of 2-5 random blocks of width D (float64, weights from ``rng``)."""
    nn = lib.nn

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(D, D)

        def forward(self, x):
            return x + self.inner(x).tanh()

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Linear(D, D)

        def forward(self, x):
            return self.shared(self.shared(x).sigmoid())

    class Split(nn.Module):
        def forward(self, x):
            return x * 2, x.tanh().exp()

    class Join(nn.Module):
        def __init__(self):
            super().__init__()
            self.split = Split()

        def forward(self, x):
            a, b = self.split(x)
            return a * b[..., :1] if rng_use[0] else a

    rng_use = [bool(rng.integers(2))]
    kinds = {"linear": lambda: nn.Linear(D, D), "tanh": nn.Tanh, "relu": nn.ReLU, "residual": Residual,
             "twice": Twice, "join": Join}
    names = list(kinds)
    blocks = [kinds[names[rng.integers(len(names))]]() for _ in range(rng.integers(2, 6))]
    net = nn.Sequential(*blocks).double()
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return net


def fuzz_case(lib, seed):
    rng = np.random.default_rng(seed)
    net = network(lib, rng)
    log = []

    def summary(tensors):
        return [None if t is None else np.round(np.array(t.detach().numpy(), dtype=np.float64), 9) for t in tensors]

    for name, module in net.named_modules():
        for kind in ("forward_pre", "forward", "backward_pre", "backward"):
            if rng.random() > 0.35:
                continue
            scale = float(rng.choice([1.0, 0.5, -2.0]))
            if kind == "forward_pre":
                module.register_forward_pre_hook(lambda m, args, name=name: log.append(("fpre", name,
                                                                                       summary(args))))
            elif kind == "forward":
                module.register_forward_hook(lambda m, args, out, name=name: log.append(
                    ("fwd", name, summary(out if isinstance(out, tuple) else (out,)))))
            elif kind == "backward_pre":
                def pre(m, grad_output, name=name, scale=scale):
                    log.append(("bpre", name, summary(grad_output)))
                    if scale != 1.0:
                        return tuple(None if g is None else g * scale for g in grad_output)
                module.register_full_backward_pre_hook(pre)
            else:
                def full(m, grad_input, grad_output, name=name, scale=scale):
                    log.append(("bwd", name, summary(grad_input), summary(grad_output)))
                    if scale != 1.0:
                        return tuple(None if g is None else g * scale for g in grad_input)
                module.register_full_backward_hook(full)
    x = lib.tensor(rng.standard_normal((2, D)), requires_grad=bool(rng.random() < 0.8))
    upstream = lib.tensor(rng.standard_normal((2, D)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the warning when no input of a hooked module requires grad
        out = net(x)
        if not out.requires_grad:
            return {"log": log, "grads": "none"}
        out.backward(upstream)
    grads = {n: p.grad for n, p in net.named_parameters()}
    return {"log": log, "x": x.grad, "grads": {n: None if g is None else g.detach().numpy().copy()
                                               for n, g in grads.items()}}


def _same(mine, theirs):
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(np.asarray(mine, dtype=np.float64), theirs, rtol=1e-8, atol=1e-8)
    elif hasattr(theirs, "numpy"):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(mine, (list, tuple)) and len(mine) == len(theirs), (mine, theirs)
        for a, b in zip(mine, theirs):
            _same(a, b)
    elif isinstance(theirs, dict):
        assert set(mine) == set(theirs), (sorted(mine), sorted(theirs))
        for key in theirs:
            _same(mine[key], theirs[key])
    else:
        assert mine == theirs, (mine, theirs)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_networks_call_their_hooks_as_pytorch(seed):
    theirs = torch_result(lambda torch: fuzz_case(torch, seed), seed)
    _same(fuzz_case(mg, seed), theirs)


def test_the_fuzz_cases_exercise_every_hook_and_replacement():
    """Across the seeds: every kind of hook is called, on a module with two outputs and on one called twice, some
    hooks replace what they see, and some inputs do not require grad (a test that cannot fail is a defect)."""
    kinds, twice, split, frozen = set(), False, False, False
    for seed in SEEDS:
        case = fuzz_case(mg, seed)
        kinds |= {entry[0] for entry in case["log"]}
        twice |= sum(1 for e in case["log"] if e[0] == "bwd" and e[1].endswith("shared")) >= 2
        split |= any(e[0] == "bpre" and e[1].endswith("split") for e in case["log"])
        frozen |= case.get("x") is None
    assert kinds == {"fpre", "fwd", "bpre", "bwd"} and twice and split and frozen
