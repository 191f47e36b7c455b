"""Shared by the weight-normalization, spectral-normalization and parametrization tests: the same module built
in minigrad and PyTorch with PyTorch's initial state copied over, then trained side by side with SGD."""
import warnings

import numpy as np

import minigrad as mg

from .mirror import torch_or_skip

# (name, factory(lib) -> float64 module, input shape)
LAYERS = [
    ("Linear", lambda lib: lib.nn.Linear(4, 3), (2, 4)),
    ("Conv1d", lambda lib: lib.nn.Conv1d(2, 3, 3), (2, 2, 6)),
    ("Conv2d", lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1), (2, 2, 4, 4)),
    ("ConvTranspose2d", lambda lib: lib.nn.ConvTranspose2d(2, 3, 3, stride=2), (2, 2, 3, 3)),
]


def numpy_state(module):
    return {key: value.detach().numpy().copy() for key, value in module.state_dict().items()}


def twin_modules(factory, wrap):
    """``wrap(lib, factory(lib).double())`` in both libraries, minigrad's loaded with PyTorch's state_dict (its
    random initial weights, and spectral norm's random u and v)."""
    torch = torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)     # the legacy weight_norm's deprecation
        theirs = wrap(torch, factory(torch).double())
        ours = wrap(mg, factory(mg).double())
    ours.load_state_dict(numpy_state(theirs))
    return ours, theirs


def assert_same_state(ours, theirs, what, rtol=1e-10, atol=1e-12):
    """The same state_dict keys (in order), values, parameter names, and gradients where PyTorch has one."""
    ours_state, theirs_state = numpy_state(ours), numpy_state(theirs)
    assert list(ours_state) == list(theirs_state), what
    for key in theirs_state:
        np.testing.assert_allclose(ours_state[key], theirs_state[key], rtol=rtol, atol=atol, err_msg=f"{what}: {key}")
    ours_params, theirs_params = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(ours_params) == list(theirs_params), what
    for name, p in theirs_params.items():
        assert (ours_params[name].grad is None) == (p.grad is None), f"{what}: grad of {name}"
        if p.grad is not None:
            np.testing.assert_allclose(ours_params[name].grad.numpy(), p.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"{what}: grad of {name}")


def train_side_by_side(ours, theirs, input_shape, steps=2, seed=0, lr=0.1):
    """``steps`` SGD steps on <u, module(x)> (random x and u) in both libraries, comparing the outputs, the
    state (weights, buffers, gradients) after each step, then the output in eval mode. Returns the outputs."""
    torch = torch_or_skip()
    rng = np.random.default_rng(seed)
    opt_ours = mg.optim.SGD(ours.parameters(), lr=lr)
    opt_theirs = torch.optim.SGD(theirs.parameters(), lr=lr)
    for step in range(steps):
        x = rng.standard_normal(input_shape)
        out_ours, out_theirs = ours(mg.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(out_ours.detach().numpy(), out_theirs.detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"output of step {step}")
        upstream = rng.standard_normal(out_theirs.shape)
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        (out_ours * mg.tensor(upstream)).sum().backward()
        (out_theirs * torch.tensor(upstream)).sum().backward()
        assert_same_state(ours, theirs, f"after backward {step}")
        opt_ours.step()
        opt_theirs.step()
        assert_same_state(ours, theirs, f"after step {step}")
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(input_shape)
    before = numpy_state(ours)
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12, err_msg="eval output")
    assert_same_state(ours, theirs, "after eval")
    for key, value in numpy_state(ours).items():                 # eval changes no state (no power iteration)
        np.testing.assert_array_equal(value, before[key], err_msg=key)
