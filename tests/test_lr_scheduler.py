"""Learning-rate schedulers against PyTorch: the whole lr sequence (and the cycled momentum) over many steps,
step(epoch) forms, ReduceLROnPlateau on a metric sequence, state_dict round trips, argument errors."""
import copy
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.optim as optim
from minigrad.optim import lr_scheduler

from .mirror import torch_or_skip


@pytest.fixture
def torch():
    return torch_or_skip()


def make_optimizers(torch, name="SGD", groups=2, **kwargs):
    """The same optimizer in both libraries over one parameter per group, group i with lr 0.1 * (i + 1)."""
    ours = getattr(optim, name)([{"params": [nn.Parameter(mg.zeros(1))], "lr": 0.1 * (i + 1)} for i in range(groups)],
                                **kwargs)
    theirs = getattr(torch.optim, name)([{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.1 * (i + 1)}
                                         for i in range(groups)], **kwargs)
    return ours, theirs


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def run(opt, sched, steps, step_args=lambda t: ()):
    """lr (and momentum) after construction and after each of ``steps`` optimizer + scheduler steps."""
    history = [(sched.get_last_lr(), momenta(opt))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # step(epoch) is deprecated in both libraries
        for t in range(1, steps + 1):
            opt.step()
            sched.step(*step_args(t))
            history.append((sched.get_last_lr(), momenta(opt)))
            assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return history


SCHEDULES = {
    "step": (lambda s, o: s.StepLR(o, step_size=7, gamma=0.5), "SGD", {}),
    "multistep": (lambda s, o: s.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3), "SGD", {}),
    "exponential": (lambda s, o: s.ExponentialLR(o, gamma=0.93), "SGD", {}),
    "constant": (lambda s, o: s.ConstantLR(o, factor=0.2, total_iters=9), "SGD", {}),
    "multiplicative": (lambda s, o: s.MultiplicativeLR(o, lambda e: 0.97 if e % 3 else 0.9), "SGD", {}),
    "multiplicative_per_group": (lambda s, o: s.MultiplicativeLR(o, [lambda e: 0.95, lambda e: 1 / (1 + e)]),
                                 "SGD", {}),
    "polynomial": (lambda s, o: s.PolynomialLR(o, total_iters=40, power=2.0), "SGD", {}),
    "warm_restarts": (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=10, eta_min=0.001), "SGD", {}),
    "warm_restarts_mult": (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01), "SGD", {}),
    "onecycle_cos_sgd": (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=100), "SGD", {"momentum": 0.9}),
    "onecycle_linear_adam": (lambda s, o: s.OneCycleLR(o, max_lr=[0.01, 0.02], epochs=10, steps_per_epoch=10,
                                                       anneal_strategy="linear"), "Adam", {}),
    "onecycle_three_phase": (lambda s, o: s.OneCycleLR(o, max_lr=0.5, total_steps=100, pct_start=0.25,
                                                       three_phase=True, div_factor=10.0, final_div_factor=100.0,
                                                       base_momentum=(0.8, 0.7), max_momentum=0.9), "SGD",
                             {"momentum": 0.9}),
    "onecycle_no_momentum": (lambda s, o: s.OneCycleLR(o, max_lr=0.3, total_steps=100, cycle_momentum=False),
                             "RMSprop", {}),
    "sequential_constant_exponential": (lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.9)], milestones=[6]), "SGD", {}),
    "sequential_linear_step": (lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=10), s.StepLR(o, step_size=15, gamma=0.5)], [10]), "SGD", {}),
}


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_lr_sequence_equals_pytorch_over_100_steps(torch, key):
    make, name, kwargs = SCHEDULES[key]
    ours, theirs = make_optimizers(torch, name, **kwargs)
    history = run(ours, make(lr_scheduler, ours), 100)
    expected = run(theirs, make(torch.optim.lr_scheduler, theirs), 100)
    assert history == expected  # exactly: the same formulas evaluated in the same order
    assert len({tuple(lrs) for lrs, _ in history}) >= 2  # the schedule moves


def test_onecycle_momentum_and_group_keys_equal_pytorch(torch):
    ours, theirs = make_optimizers(torch, "Adam", betas=(0.9, 0.99))
    lr_scheduler.OneCycleLR(ours, max_lr=0.1, total_steps=20, three_phase=True)
    torch.optim.lr_scheduler.OneCycleLR(theirs, max_lr=0.1, total_steps=20, three_phase=True)
    for g, h in zip(ours.param_groups, theirs.param_groups):
        for key in ("lr", "initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", "betas"):
            assert g[key] == h[key], key


def test_onecycle_past_total_steps_raises_like_pytorch(torch):
    ours, theirs = make_optimizers(torch)
    s, t = lr_scheduler.OneCycleLR(ours, 0.1, total_steps=3), torch.optim.lr_scheduler.OneCycleLR(theirs, 0.1, 3)
    for _ in range(3):
        ours.step()
        theirs.step()
        s.step()
        t.step()
    with pytest.raises(ValueError) as expected:
        t.step()
    with pytest.raises(ValueError) as got:
        s.step()
    assert str(got.value) == str(expected.value) == "Tried to step 4 times. The specified number of total steps is 3"


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_with_fractional_epochs_equal_pytorch(torch, T_mult):
    iters = 7  # step(epoch + i / iters) once per batch, as PyTorch's documentation shows
    make = lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=T_mult, eta_min=0.005)
    ours, theirs = make_optimizers(torch)
    step_args = lambda t: (t // iters + (t % iters) / iters,)
    history = run(ours, make(lr_scheduler, ours), 120, step_args)
    expected = run(theirs, make(torch.optim.lr_scheduler, theirs), 120, step_args)
    np.testing.assert_allclose([lrs for lrs, _ in history], [lrs for lrs, _ in expected], rtol=1e-15, atol=0)


@pytest.mark.parametrize("key", ["step", "multistep", "exponential", "constant", "polynomial"])
def test_step_with_an_epoch_uses_the_closed_form_like_pytorch(torch, key):
    make, name, kwargs = SCHEDULES[key]
    ours, theirs = make_optimizers(torch, name, **kwargs)
    epochs = [3, 8, 20, 2, 45, 13]
    history = run(ours, make(lr_scheduler, ours), len(epochs), lambda t: (epochs[t - 1],))
    expected = run(theirs, make(torch.optim.lr_scheduler, theirs), len(epochs), lambda t: (epochs[t - 1],))
    assert history == expected
    with pytest.warns(UserWarning, match="epoch parameter"):
        make(lr_scheduler, ours).step(4)


PLATEAUS = [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2},
    {"patience": 1, "threshold": 0.05, "threshold_mode": "abs", "cooldown": 3},
    {"mode": "max", "threshold_mode": "abs", "patience": 0, "min_lr": [0.02, 0.05]},
    {"patience": 2, "factor": 0.5, "min_lr": 0.03, "eps": 1e-3, "cooldown": 1},
]


@pytest.mark.parametrize("kwargs", PLATEAUS)
def test_reduce_on_plateau_equals_pytorch(torch, kwargs):
    rng = np.random.default_rng(0)
    # a metric that improves, stalls (with noise), improves again and stalls for a long time
    metrics = np.concatenate([np.linspace(1.0, 0.5, 10), 0.5 + 0.01 * rng.standard_normal(25),
                              np.linspace(0.5, 0.2, 5), 0.2 + 1e-5 * rng.standard_normal(60)])
    ours, theirs = make_optimizers(torch)
    s, t = lr_scheduler.ReduceLROnPlateau(ours, **kwargs), torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **kwargs)
    assert s.get_last_lr() == t.get_last_lr()
    lrs = []
    for value in metrics:
        s.step(mg.tensor(value) if len(lrs) % 2 else float(value))  # a 0-d tensor is accepted as in PyTorch
        t.step(float(value))
        assert s.get_last_lr() == t.get_last_lr() == [g["lr"] for g in ours.param_groups]
        assert (s.num_bad_epochs, s.cooldown_counter, s.best) == (t.num_bad_epochs, t.cooldown_counter, t.best)
        lrs.append(s.get_last_lr())
    assert len({tuple(x) for x in lrs}) >= 2  # the lr was reduced


def test_reduce_on_plateau_errors_equal_pytorch(torch):
    ours, theirs = make_optimizers(torch)
    for kwargs in ({"factor": 1.0}, {"mode": "avg"}, {"threshold_mode": "pct"}, {"min_lr": [0.1]}):
        with pytest.raises(ValueError) as expected:
            torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **kwargs)
        with pytest.raises(ValueError) as got:
            lr_scheduler.ReduceLROnPlateau(ours, **kwargs)
        assert str(got.value) == str(expected.value)


STATEFUL = ["step", "multistep", "exponential", "polynomial", "warm_restarts_mult", "onecycle_cos_sgd",
            "onecycle_three_phase", "sequential_linear_step"]


@pytest.mark.parametrize("key", STATEFUL)
def test_state_dict_round_trip_continues_the_schedule(torch, key):
    """Stop after 37 steps; a new optimizer + scheduler loading both state_dicts continues exactly as the
    uninterrupted run and as PyTorch; PyTorch's scheduler state_dict loads as well."""
    make, name, kwargs = SCHEDULES[key]
    ours, theirs = make_optimizers(torch, name, **kwargs)
    sched, th_sched = make(lr_scheduler, ours), make(torch.optim.lr_scheduler, theirs)
    run(ours, sched, 37)
    run(theirs, th_sched, 37)
    opt_state = copy.deepcopy(ours.state_dict())
    saved_states = (copy.deepcopy(sched.state_dict()), copy.deepcopy(th_sched.state_dict()))
    expected = run(theirs, th_sched, 40)
    for saved in saved_states:
        resumed_opt = make_optimizers(torch, name, **kwargs)[0]
        resumed = make(lr_scheduler, resumed_opt)
        resumed_opt.load_state_dict(opt_state)
        resumed.load_state_dict(saved)
        assert run(resumed_opt, resumed, 40) == expected
    assert set(sched.state_dict()) == set(th_sched.state_dict())


def test_reduce_on_plateau_state_dict_round_trip(torch):
    ours, _ = make_optimizers(torch)
    s = lr_scheduler.ReduceLROnPlateau(ours, mode="max", patience=1)
    for value in [1.0, 2.0, 1.5, 1.5]:
        s.step(value)
    saved = copy.deepcopy(s.state_dict())
    fresh = lr_scheduler.ReduceLROnPlateau(make_optimizers(torch)[0])
    fresh.load_state_dict(saved)
    assert (fresh.mode, fresh.best, fresh.num_bad_epochs, fresh.mode_worse) == ("max", 2.0, 0, -math.inf)


SCHEDULER_ERRORS = [
    lambda s, o: s.ConstantLR(o, factor=1.5),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda s, o: s.OneCycleLR(o, max_lr=0.1),
    lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=0),
    lambda s, o: s.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=0),
    lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
    lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    lambda s, o: s.OneCycleLR(o, max_lr=[0.1, 0.2, 0.3], total_steps=10),
    lambda s, o: s.MultiplicativeLR(o, [0.9, 0.9]),
    lambda s, o: s.MultiplicativeLR(o, [lambda e: 0.9]),
]


@pytest.mark.parametrize("make", SCHEDULER_ERRORS)
def test_scheduler_argument_errors_equal_pytorch(torch, make):
    ours, theirs = make_optimizers(torch)
    with pytest.raises((ValueError, TypeError)) as expected:
        make(torch.optim.lr_scheduler, theirs)
    with pytest.raises(expected.type) as got:
        make(lr_scheduler, ours)
    assert str(got.value) == str(expected.value)


def test_onecycle_needs_a_momentum_option_to_cycle(torch):
    opt = optim.Adagrad([nn.Parameter(mg.zeros(1))])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, cycle_momentum=False)


def _tensor_lr_history(lib, opt, sched, steps):
    """Each step's lr values; and whether every group's lr is still the Tensor it started as."""
    originals = [g["lr"] for g in opt.param_groups]
    history = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(steps):
            opt.step()
            sched.step()
            assert all(g["lr"] is t for g, t in zip(opt.param_groups, originals)), "the lr Tensor was replaced"
            last = sched.get_last_lr()
            assert all(isinstance(v, lib.Tensor) and v is not t for v, t in zip(last, originals)), \
                "get_last_lr() should give copies of the lr Tensors"
            history.append([float(g["lr"]) for g in opt.param_groups])
    return history


@pytest.mark.parametrize("key", [k for k in SCHEDULES if "sequential" not in k])
def test_a_tensor_lr_is_updated_in_place_like_pytorch(torch, key):
    """A Tensor lr (PyTorch takes one for capturable steps) stays the same Tensor: schedulers fill it in place and
    ``get_last_lr()`` gives copies, as PyTorch's do; the values are PyTorch's."""
    make, name, kwargs = SCHEDULES[key]
    ours, theirs = make_optimizers(torch, name, **kwargs)
    for lib, opt in ((mg, ours), (torch, theirs)):
        for g in opt.param_groups:
            g["lr"] = lib.tensor(g["lr"])
    history = _tensor_lr_history(mg, ours, make(lr_scheduler, ours), 30)
    expected = _tensor_lr_history(torch, theirs, make(torch.optim.lr_scheduler, theirs), 30)
    np.testing.assert_allclose(history, expected, rtol=1e-6, atol=1e-9)
    assert len({tuple(lrs) for lrs in history}) >= 2  # the schedule moves


def _get_lr_outcome(lib, key):
    """get_lr() called by the user after each of 6 steps: its values, the warnings' texts (set), the state_dict's
    keys. Steps warn about nothing; a scheduler without a get_lr of its own gives the error's type."""
    make, name, kwargs = SCHEDULES[key]
    opt = getattr(lib.optim, name)([{"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.1 * (i + 1)}
                                    for i in range(2)], **kwargs)
    sched = make(lib.optim.lr_scheduler, opt)
    values, texts = [], set()
    for _ in range(6):
        opt.step()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()
        assert not caught
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                values.append([float(v) for v in sched.get_lr()])
            except NotImplementedError:
                values.append("NotImplementedError")
        texts |= {str(w.message) for w in caught}
    return values, texts, set(sched.state_dict())


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_get_lr_called_outside_step_warns_as_pytorch(key):
    values, texts, keys = _get_lr_outcome(mg, key)
    if values[0] != "NotImplementedError":
        assert texts == {"To get the last learning rate computed by the scheduler, please use `get_last_lr()`."}
        assert "_get_lr_called_within_step" in keys


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_get_lr_called_outside_step_equals_pytorch(torch, key):
    ours, theirs = _get_lr_outcome(mg, key), _get_lr_outcome(torch, key)
    assert ours[1:] == theirs[1:]
    if theirs[0][0] == "NotImplementedError":
        assert ours[0] == theirs[0]
    else:
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
