"""RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam as mirrors of PyTorch: the same initial parameters and
the same gradient recipe on both sides for 60 steps, parameters and every state buffer compared each step."""
import copy

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.optim as optim

from .mirror import torch_or_replay
from .test_optim import Mirror, both


@pytest.fixture
def torch():
    return torch_or_replay()


OPTIMIZERS = [
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.3, "centered": True}),  # lerp weight >= 0.5 (PyTorch evaluates it from the end)
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-6, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.95), "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "maximize": True}),  # rho_t > 5 from step 6 on
]
IDS = [f"{n}-{k}" for n, k in OPTIMIZERS]
NAMES = ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]


@pytest.mark.parametrize("groups", [False, True], ids=["one_group", "two_groups"])
@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=IDS)
def test_float64_updates_equal_pytorch_over_60_steps(torch, name, kwargs, groups):
    m = Mirror(torch, *both(torch, name, groups=groups, **kwargs))
    for step in range(60):
        m.step(skip=(1,) if step in (0, 7) else ())  # a param without grad is skipped, its state kept
        m.assert_close(rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=IDS)
def test_float32_updates_equal_pytorch(torch, name, kwargs):
    m = Mirror(torch, *both(torch, name, **kwargs), dtype=np.float32)
    for _ in range(50):
        m.step()
    m.assert_close(rtol=1e-5, atol=1e-6)
    assert all(p.dtype == mg.float32 for p in m.ours)


@pytest.mark.parametrize("name", NAMES)
def test_default_hyperparameters_equal_pytorch(torch, name):
    ours = getattr(optim, name)([nn.Parameter(mg.zeros(2))]).param_groups[0]
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))]).param_groups[0]
    assert {k: v for k, v in ours.items() if k != "params"} == {k: theirs[k] for k in ours if k != "params"}
    assert set(theirs) - set(ours) <= {"foreach", "capturable", "differentiable", "fused"}


def test_adagrad_state_exists_before_the_first_step(torch):
    m = Mirror(torch, *both(torch, "Adagrad", initial_accumulator_value=0.25))
    ours, theirs = m.opt.state_dict()["state"], m.th_opt.state_dict()["state"]
    assert ours.keys() == theirs.keys() == {0, 1, 2}
    m.assert_close()


@pytest.mark.parametrize("name, kwargs", [
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}), ("Adagrad", {"lr_decay": 0.1}),
    ("Adadelta", {}), ("Adamax", {}), ("NAdam", {"weight_decay": 0.1}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True})])
def test_state_dict_round_trip_continues_like_pytorch(torch, name, kwargs):
    """After 10 steps, PyTorch's state_dict is loaded into a fresh PyTorch optimizer and into a fresh minigrad
    one, ours into another minigrad one (loading casts NAdam's float32 'mu_product' to the parameters' dtype
    in both libraries); all three continue 20 steps with the same gradients and stay equal."""
    m = Mirror(torch, *both(torch, name, groups=True, **kwargs))
    for _ in range(10):
        m.step()
    theirs_saved = m.th_opt.state_dict()
    as_arrays = {"state": {i: {k: v.numpy().copy() for k, v in s.items()} for i, s in theirs_saved["state"].items()},
                 "param_groups": copy.deepcopy(theirs_saved["param_groups"])}
    make_ours, make_theirs = both(torch, name, groups=True, **kwargs)
    th_resumed = make_theirs([torch.nn.Parameter(q.detach().clone()) for q in m.theirs])
    th_resumed.load_state_dict(copy.deepcopy(theirs_saved))
    from_ours = make_ours([nn.Parameter(mg.tensor(p.detach().numpy())) for p in m.ours])
    from_ours.load_state_dict(copy.deepcopy(m.opt.state_dict()))
    from_theirs = make_ours([nn.Parameter(mg.tensor(p.detach().numpy())) for p in m.ours])
    from_theirs.load_state_dict(as_arrays)
    th_params = [q for g in th_resumed.param_groups for q in g["params"]]
    rng = np.random.default_rng(5)
    for _ in range(20):
        grads = [rng.standard_normal(q.shape) for q in th_params]
        for q, g in zip(th_params, grads):
            q.grad = torch.tensor(g)
        th_resumed.step()
        for resumed in (from_ours, from_theirs):
            params = [p for g in resumed.param_groups for p in g["params"]]
            for p, g in zip(params, grads):
                p.grad = mg.tensor(g)
            resumed.step()
            for p, q in zip(params, th_params):
                np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-13)


def test_step_writes_parameters_in_place():
    p = nn.Parameter(mg.tensor([1.0, 2.0]))
    for name in NAMES:
        opt = getattr(optim, name)([p])
        before, storage = p._version, p._data
        p.grad = mg.tensor([0.5, -0.5])
        opt.step()
        assert p._version > before and p._data is storage, name


ERRORS = [
    ("RMSprop", {"lr": -1}, "Invalid learning rate: -1"),
    ("RMSprop", {"eps": -1}, "Invalid epsilon value: -1"),
    ("RMSprop", {"momentum": -1}, "Invalid momentum value: -1"),
    ("RMSprop", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("RMSprop", {"alpha": -1}, "Invalid alpha value: -1"),
    ("Adagrad", {"lr_decay": -1}, "Invalid lr_decay value: -1"),
    ("Adagrad", {"initial_accumulator_value": -1}, "Invalid initial_accumulator_value value: -1"),
    ("Adagrad", {"eps": -1}, "Invalid epsilon value: -1"),
    ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
    ("Adadelta", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ("NAdam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
    ("NAdam", {"momentum_decay": -1}, "Invalid momentum_decay value: -1"),
    ("RAdam", {"lr": -0.5}, "Invalid learning rate: -0.5"),
]


@pytest.mark.parametrize("name, kwargs, message", ERRORS)
def test_argument_errors_match_pytorch(torch, name, kwargs, message):
    with pytest.raises(ValueError, match=message) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([nn.Parameter(mg.zeros(2))], **kwargs)
    assert str(ours.value) == str(theirs.value)


# foreach/fused/capturable/differentiable: tests/test_optim_flags.py (as PyTorch 2.13 treats them on the CPU)
