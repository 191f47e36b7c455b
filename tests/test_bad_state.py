"""Bad state and untrusted checkpoints: every refusal raises PyTorch's exception type (where PyTorch has the
API, checked by running it) and leaves everything exactly as it was.

Tables of malformed inputs for ``Module.load_state_dict``, optimizer ``step``, ``Optimizer.load_state_dict``,
scheduler ``load_state_dict``, BatchNorm's running statistics on an empty batch, ``mg.load`` and the tiny
Transformer's ``--resume``. "Nothing changed" is checked bit for bit against copies taken before the call:
parameters, buffers, gradients, optimizer state and step counts, hyperparameters, scheduler state.
"""
import copy
import io
import json
import os
import pickle
import pickletools
import struct
import sys
import threading
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
from minigrad import serialization

from .mirror import torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "examples") not in sys.path:
    sys.path.insert(0, str(ROOT / "examples"))

import tiny_transformer  # noqa: E402


# =========================================================================== bit-exact snapshots
def frozen(value):
    """A deep, comparable copy of ``value``: arrays and tensors become (type, dtype, shape, bytes)."""
    if isinstance(value, mg.Tensor) or type(value).__module__.startswith("torch"):
        if hasattr(value, "detach"):
            array = value.detach().numpy() if not isinstance(value, mg.Tensor) else value._data
            grad = value.grad
            return ("tensor", type(value).__name__, frozen(array), value.requires_grad,
                    None if grad is None else frozen(grad))
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        array = np.asarray(value)
        return ("array", array.dtype.str, array.shape, array.tobytes())
    if isinstance(value, dict):
        return ("dict", type(value).__name__, [(frozen(k), frozen(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [frozen(v) for v in value])
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))  # bit-exact, NaN-safe
    if callable(value):
        return ("callable", id(value))
    return (type(value).__name__, repr(value))


def module_state(module):
    """Every parameter (with its grad) and buffer, by name, plus the objects' identities."""
    return frozen({**dict(module.named_parameters()), **dict(module.named_buffers())})


def optimizer_state(optimizer):
    params = [p for g in optimizer.param_groups for p in g["params"]]
    state = [frozen(optimizer.state.get(p, {})) for p in params]
    extra = {k: v for k, v in optimizer.state.items() if not any(k is p for p in params)}
    groups = [frozen({k: v for k, v in g.items() if k != "params"}) for g in optimizer.param_groups]
    return (frozen(params), state, frozen(extra), groups, [id(p) for p in params])


def scheduler_state(scheduler):
    return frozen({k: v for k, v in scheduler.__dict__.items() if k not in ("optimizer", "_schedulers")}), \
        [scheduler_state(s) for s in getattr(scheduler, "_schedulers", [])]


def raises_and_keeps(expected, snapshot, call):
    """``call()`` raises ``expected`` (a type) and ``snapshot()`` is the same before and after."""
    before = snapshot()
    with pytest.raises(expected) as info:
        call()
    assert snapshot() == before, "state changed by a refused call"
    return info


def torch_raises(call):
    """The exception type PyTorch raises for ``call(torch)``, or None if it accepts it."""
    torch = torch_or_skip()
    try:
        call(torch)
    except Exception as err:  # noqa: BLE001 - we want its type
        return type(err)
    return None


# =========================================================================== Module.load_state_dict
def make_net(lib, seed=0):
    """Linear(3, 4) -> BatchNorm1d(4) -> Linear(4, 2) in float64, the same weights in both libraries."""
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2)).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, t in sorted({**dict(net.named_parameters()), **dict(net.named_buffers())}.items()):
            if t.dtype == lib.float64:
                t.copy_(lib.tensor(rng.standard_normal(tuple(t.shape))))
    for p in net.parameters():  # gradients too: a load must not touch them
        p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)))
    return net


def good_state(lib, net):
    """A valid, different state_dict for ``net``: every entry would change it."""
    return OrderedDict((k, v.clone() + 1) for k, v in net.state_dict().items())


def _replace_last(value):
    def mutate(lib, sd):
        key = list(sd)[-2]  # '2.weight': earlier entries come first and would be written first
        sd[key] = value(lib, sd[key]) if callable(value) else value
        return sd
    return mutate


def _drop(key):
    def mutate(lib, sd):
        del sd[key]
        return sd
    return mutate


def _add(key, value):
    def mutate(lib, sd):
        sd[key] = value(lib) if callable(value) else value
        return sd
    return mutate


# (name, mutate(lib, state_dict) -> the argument, strict, how PyTorch differs or None)
MODULE_CASES = [
    ("string array", _replace_last(np.array([["a"] * 4] * 2)), True, "ndarray"),
    ("bytes array", _replace_last(np.array([[b"a"] * 4] * 2)), True, "ndarray"),
    ("object array", _replace_last(np.array([[object()] * 4] * 2, dtype=object)), True, "ndarray"),
    ("datetime array", _replace_last(np.zeros((2, 4), dtype="datetime64[s]")), True, "ndarray"),
    ("structured array", _replace_last(np.zeros((2, 4), dtype=[("a", "f8")])), True, "ndarray"),
    ("list value", _replace_last([[0.0] * 4] * 2), True, None),
    ("None value", _replace_last(None), True, None),
    ("float value", _replace_last(1.5), True, None),
    ("string value", _replace_last("weights"), True, None),
    ("dict value", _replace_last({}), True, None),
    ("wrong shape (transposed)", _replace_last(lambda lib, v: v.t().contiguous()), True, None),
    ("wrong shape (flat)", _replace_last(lambda lib, v: v.reshape(-1)), True, None),
    ("wrong shape (extra dim)", _replace_last(lambda lib, v: v.unsqueeze(0)), True, None),
    ("0-d into a matrix", _replace_last(lambda lib, v: v.sum()), True, None),
    ("empty", _replace_last(lambda lib, v: v[:0]), True, None),
    ("wrong shape, strict=False", _replace_last(lambda lib, v: v[:1]), False, None),
    ("string array, strict=False", _replace_last(np.array([["a"] * 4] * 2)), False, "ndarray"),
    ("missing key", _drop("2.bias"), True, None),
    ("missing buffer", _drop("1.running_var"), True, None),
    ("unexpected key", _add("2.extra", lambda lib: lib.zeros(1)), True, None),
    ("unexpected child", _add("7.weight", lambda lib: lib.zeros(1)), True, None),
    ("non-string key", _add(5, lambda lib: lib.zeros(1)), True, "int key"),
    ("tuple key", _add(("2", "weight"), lambda lib: lib.zeros(1)), True, "int key"),
    ("running_mean wrong shape", _replace_last(lambda lib, v: v), True, None),  # replaced below
    ("num_batches_tracked wrong shape", None, True, None),                       # replaced below
    ("a list for the state_dict", lambda lib, sd: list(sd.items()), True, None),
    ("None for the state_dict", lambda lib, sd: None, True, None),
    ("a tensor for the state_dict", lambda lib, sd: lib.zeros(3), True, None),
    ("a string for the state_dict", lambda lib, sd: "state.pt", True, None),
]


def _set(key, make):
    def mutate(lib, sd):
        sd[key] = make(lib)
        sd.move_to_end(key)  # last: everything else would be written before it
        return sd
    return mutate


MODULE_CASES[23] = ("running_mean wrong shape", _set("1.running_mean", lambda lib: lib.zeros(5, dtype=lib.float64)),
                    True, None)
MODULE_CASES[24] = ("num_batches_tracked wrong shape",
                    _set("1.num_batches_tracked", lambda lib: lib.zeros(2, dtype=lib.int64)), True, None)

# What PyTorch raises where it differs from minigrad's stricter or cleaner answer:
# "ndarray": PyTorch takes no ndarrays at all (RuntimeError for any); minigrad takes numeric ones, so a
# non-numeric ndarray is refused with the same RuntimeError.  "int key": PyTorch fails with AttributeError
# ('int' object has no attribute 'startswith'); minigrad counts it as an unexpected key.
TORCH_DIFFERS = {"ndarray": RuntimeError, "int key": AttributeError}


def expected_module_error(name, mutate, strict):
    """PyTorch's exception type for the case (None: PyTorch accepts it)."""
    def call(torch):
        net = make_net(torch)
        arg = mutate(torch, good_state(torch, net))
        net.load_state_dict(arg, strict=strict)
    return torch_raises(call)


@pytest.mark.parametrize("name, mutate, strict, differs", MODULE_CASES, ids=[c[0] for c in MODULE_CASES])
def test_module_load_state_dict_refuses_and_changes_nothing(name, mutate, strict, differs):
    net = make_net(mg)
    arg = mutate(mg, good_state(mg, net))
    torch_type = expected_module_error(name, mutate, strict)
    if differs == "int key":
        assert torch_type is TORCH_DIFFERS[differs]
        expected = RuntimeError if strict else None
    else:
        expected = torch_type
        if differs == "ndarray":
            assert torch_type is TORCH_DIFFERS[differs]
    assert expected is not None, "PyTorch accepts this case: it does not belong in the table"
    info = raises_and_keeps(expected, lambda: module_state(net), lambda: net.load_state_dict(arg, strict=strict))
    assert "state_dict" in str(info.value) or "Expected" in str(info.value) or "size mismatch" in str(info.value)


def test_module_load_state_dict_non_string_key_is_unexpected_when_not_strict():
    net = make_net(mg)
    sd = good_state(mg, net)
    sd[5] = mg.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.unexpected_keys == [5] and result.missing_keys == []
    np.testing.assert_array_equal(net[2].weight.detach().numpy(), sd["2.weight"].numpy())


def test_module_load_state_dict_valid_state_still_loads_everything():
    net = make_net(mg)
    sd = good_state(mg, net)
    assert repr(net.load_state_dict(sd)) == "<All keys matched successfully>"
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), sd[key].numpy(), err_msg=key)


# =========================================================================== optimizer step
OPTIMIZERS = {
    "SGD": dict(lr=0.1), "SGD-momentum": dict(lr=0.1, momentum=0.9, nesterov=True),
    "Adam": dict(lr=0.1), "Adam-amsgrad": dict(lr=0.1, amsgrad=True), "AdamW": dict(lr=0.1),
    "RMSprop": dict(lr=0.1), "RMSprop-centered": dict(lr=0.1, momentum=0.5, centered=True),
    "Adagrad": dict(lr=0.1), "Adadelta": dict(lr=0.1), "Adamax": dict(lr=0.1), "NAdam": dict(lr=0.1),
    "RAdam": dict(lr=0.1),
}


def make_optimizer(lib, name, seed=0):
    """Three float64 parameters in two groups, after one successful step (so the state exists), with
    fresh gradients for the next step."""
    rng = np.random.default_rng(seed)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s))) for s in [(3,), (2, 2), (4,)]]
    cls = getattr(lib.optim, name.split("-")[0])
    optimizer = cls([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}], **OPTIMIZERS[name])
    for _ in range(2):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)))
        if _ == 0:
            optimizer.step()
    return optimizer, params


def _grad_of_last(make):
    """A corrupt .grad for the last parameter. Assigning one is refused (as in PyTorch), so a wrong tensor
    goes in through ``.grad.data`` (PyTorch's back door too), anything else into the slot behind ``.grad``."""
    def corrupt(lib, optimizer, params):
        bad = make(lib, params[-1])
        if isinstance(bad, lib.Tensor):
            params[-1].grad = lib.zeros_like(params[-1])
            params[-1].grad.data = bad
        else:
            params[-1]._grad = bad
    return corrupt


def _state_of_last(name, make):
    def corrupt(lib, optimizer, params):
        state = optimizer.state[params[-1]]
        if name in state or not state:
            state[name] = make(lib, params[-1])
    return corrupt


def _group(key, value, index=1):
    def corrupt(lib, optimizer, params):
        optimizer.param_groups[index][key] = value
    return corrupt


# (name, corrupt(lib, optimizer, params), minigrad's exception type, compare with PyTorch?)
STEP_CASES = [
    ("grad of the wrong shape", _grad_of_last(lambda lib, p: lib.zeros(5, dtype=lib.float64)), RuntimeError, True),
    ("grad with an extra dim", _grad_of_last(lambda lib, p: lib.zeros(1, 4, dtype=lib.float64)), RuntimeError,
     True),
    ("grad of another dtype", _grad_of_last(lambda lib, p: lib.zeros(4, dtype=lib.float32)), RuntimeError, False),
    ("integer grad", _grad_of_last(lambda lib, p: lib.zeros(4, dtype=lib.int64)), RuntimeError, False),
    ("ndarray grad", _grad_of_last(lambda lib, p: np.zeros(4)), TypeError, False),
    ("list grad", _grad_of_last(lambda lib, p: [0.0] * 4), TypeError, False),
    ("negative lr edited in", _group("lr", -1.0), ValueError, False),
    ("string lr edited in", _group("lr", "fast"), TypeError, False),
]
STATE_CASES = [  # corrupted state of a started parameter (only where the optimizer keeps that entry)
    ("moment of the wrong shape", "exp_avg", lambda lib, p: mg.zeros(7, dtype=mg.float64)),
    ("second moment of the wrong shape", "exp_avg_sq", lambda lib, p: mg.zeros(2, 2, dtype=mg.float64)),
    ("sum of the wrong shape", "sum", lambda lib, p: mg.zeros(1, dtype=mg.float64)),
    ("square_avg of the wrong shape", "square_avg", lambda lib, p: mg.zeros(3, dtype=mg.float64)),
    ("momentum buffer of the wrong shape", "momentum_buffer", lambda lib, p: mg.zeros(3, dtype=mg.float64)),
    ("string step", "step", lambda lib, p: "7"),
    ("NaN step", "step", lambda lib, p: mg.tensor(float("nan"))),
    ("integer moment", "exp_avg", lambda lib, p: mg.zeros(4, dtype=mg.int64)),
]


def _step_snapshot(optimizer, params):
    return lambda: (optimizer_state(optimizer), frozen(params))


@pytest.mark.parametrize("case", STEP_CASES, ids=[c[0] for c in STEP_CASES])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_step_refuses_bad_grads_and_changes_nothing(name, case):
    label, corrupt, expected, compare = case
    optimizer, params = make_optimizer(mg, name)
    corrupt(mg, optimizer, params)
    info = raises_and_keeps(expected, _step_snapshot(optimizer, params), optimizer.step)
    if compare:  # PyTorch raises the same type (after updating the other parameters: minigrad does not)
        def call(torch):
            opt, ps = make_optimizer(torch, name)
            ps[-1].grad.data = corrupt_value = torch.zeros(5 if "shape" in label else (1, 4), dtype=torch.float64)
            assert ps[-1].grad.shape == corrupt_value.shape
            opt.step()
        assert torch_raises(call) is expected
    assert "nothing was updated" in str(info.value) or expected is not RuntimeError


def _kept_state(name):
    optimizer, params = make_optimizer(mg, name)
    return set(optimizer.state[params[-1]])


STATE_COMBOS = [(name, case) for name in OPTIMIZERS for case in STATE_CASES if case[1] in _kept_state(name)]


@pytest.mark.parametrize("name, case", STATE_COMBOS, ids=[f"{n}-{c[0]}" for n, c in STATE_COMBOS])
def test_optimizer_step_refuses_corrupt_state_and_changes_nothing(name, case):
    label, entry, make = case
    optimizer, params = make_optimizer(mg, name)
    optimizer.state[params[-1]][entry] = make(mg, params[-1])
    raises_and_keeps(RuntimeError, _step_snapshot(optimizer, params), optimizer.step)


def test_optimizer_step_with_a_missing_state_entry_changes_nothing():
    optimizer, params = make_optimizer(mg, "Adam-amsgrad")
    del optimizer.state[params[1]]["max_exp_avg_sq"]
    raises_and_keeps(RuntimeError, _step_snapshot(optimizer, params), optimizer.step)


def test_optimizer_step_still_matches_torch_after_the_checks():
    torch = torch_or_skip()
    for name in OPTIMIZERS:
        ours, our_params = make_optimizer(mg, name)
        theirs, their_params = make_optimizer(torch, name)
        ours.step()
        theirs.step()
        for p, q in zip(our_params, their_params):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


# =========================================================================== Optimizer.load_state_dict
def _sd(mutate):
    return lambda sd: mutate(copy.deepcopy(sd)) or sd


def _state_entry(name, value):
    def mutate(sd):
        sd["state"][2][name] = value  # the last parameter: the others would be restored first
        return sd
    return mutate


def _set_key(path, value):
    def mutate(sd):
        target = sd
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return sd
    return mutate


def _without(*path):
    def mutate(sd):
        target = sd
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        return sd
    return mutate


# (name, mutate(state_dict) -> the argument, minigrad's exception type, PyTorch raises that type too?)
OPT_LOAD_CASES = [
    ("not a dict (list)", lambda sd: [sd], TypeError, True),
    ("not a dict (None)", lambda sd: None, TypeError, False),          # PyTorch: AttributeError inside
    ("no param_groups", _without("param_groups"), KeyError, True),
    ("no state", _without("state"), KeyError, True),
    ("param_groups not a list", _set_key(("param_groups",), 5), TypeError, True),
    ("a group that is not a dict", _set_key(("param_groups", 1), 5), TypeError, True),
    ("a group without params", _without("param_groups", 1, "params"), KeyError, True),
    ("one group too many", lambda sd: {**sd, "param_groups": sd["param_groups"] + sd["param_groups"][-1:]},
     ValueError, True),
    ("one group too few", lambda sd: {**sd, "param_groups": sd["param_groups"][:1]}, ValueError, True),
    ("a group one parameter short", _set_key(("param_groups", 0, "params"), [0]), ValueError, True),
    ("params not ints", _set_key(("param_groups", 1, "params"), ["2"]), TypeError, False),
    ("a parameter index twice", _set_key(("param_groups", 1, "params"), [0]), ValueError, False),
    ("state not a dict", _set_key(("state",), [1, 2]), TypeError, False),
    ("a state entry not a dict", _set_key(("state", 2), 5), TypeError, True),
    ("step a string", _state_entry("step", "7"), ValueError, True),
    ("step negative", _state_entry("step", -1.0), ValueError, False),
    ("step NaN", _state_entry("step", float("nan")), ValueError, False),
    ("step a list", _state_entry("step", [1.0]), ValueError, False),
    ("negative lr", _set_key(("param_groups", 1, "lr"), -0.5), ValueError, False),
    ("string lr", _set_key(("param_groups", 1, "lr"), "fast"), TypeError, False),
]
MOMENT_CASES = [  # (name, entry, value): applied when the optimizer keeps that entry
    ("moment of the wrong shape", "MOMENT", np.zeros(7)),
    ("moment transposed-shape", "MOMENT", np.zeros((4, 1))),
    ("moment a string array", "MOMENT", np.array(["a"] * 4)),
    ("moment an object array", "MOMENT", np.array([None] * 4, dtype=object)),
    ("moment a list", "MOMENT", [0.0] * 4),
    ("moment None", "MOMENT", None),
    ("moment complex", "MOMENT", np.zeros(4, dtype=complex)),
    ("moment missing", "MOMENT", KeyError),
]
FIRST_MOMENT = {"SGD-momentum": "momentum_buffer", "Adagrad": "sum", "Adadelta": "square_avg",
                "RMSprop": "square_avg", "RMSprop-centered": "grad_avg", "Adamax": "exp_inf"}
LOAD_OPTIMIZERS = [n for n in OPTIMIZERS if n != "SGD"]


def _load_snapshot(optimizer, params):
    return lambda: (optimizer_state(optimizer), frozen(params))


@pytest.mark.parametrize("case", OPT_LOAD_CASES, ids=[c[0] for c in OPT_LOAD_CASES])
@pytest.mark.parametrize("name", ["Adam", "SGD-momentum", "NAdam"])
def test_optimizer_load_state_dict_refuses_and_changes_nothing(name, case):
    label, mutate, expected, same_as_torch = case
    source, _ = make_optimizer(mg, name, seed=1)
    source.step()
    saved = copy.deepcopy(source.state_dict())
    optimizer, params = make_optimizer(mg, name)
    info = raises_and_keeps(expected, _load_snapshot(optimizer, params),
                            lambda: optimizer.load_state_dict(mutate(copy.deepcopy(saved))))
    assert str(info.value)
    if same_as_torch and not (name == "SGD-momentum" and label in ("a state entry not a dict", "step a string")):
        # (PyTorch's SGD keeps no 'step', and takes any state entry; minigrad refuses both)
        def call(torch):
            src, _ = make_optimizer(torch, name, seed=1)
            src.step()
            opt, _ = make_optimizer(torch, name)
            opt.load_state_dict(mutate(copy.deepcopy(src.state_dict())))
        assert torch_raises(call) is expected


@pytest.mark.parametrize("case", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
@pytest.mark.parametrize("name", LOAD_OPTIMIZERS)
def test_optimizer_load_state_dict_refuses_bad_moments_and_changes_nothing(name, case):
    """PyTorch accepts these and fails at the next step (after changing other parameters); minigrad
    refuses them at load: an array of the wrong shape or dtype with PyTorch's RuntimeError (what its step
    raises), anything else with ValueError (TypeError for a state that is not a dict)."""
    label, _, value = case
    source, _ = make_optimizer(mg, name, seed=1)
    saved = copy.deepcopy(source.state_dict())
    entry = FIRST_MOMENT.get(name, "exp_avg")
    if value is KeyError:
        del saved["state"][2][entry]
    else:
        saved["state"][2][entry] = value
    optimizer, params = make_optimizer(mg, name)
    if (value is None or value is KeyError) and entry == "momentum_buffer":  # no buffer yet: made at the next step
        optimizer.load_state_dict(saved)
        return
    expected = RuntimeError if isinstance(value, np.ndarray) else ValueError
    raises_and_keeps(expected, _load_snapshot(optimizer, params), lambda: optimizer.load_state_dict(saved))


def test_optimizer_load_state_dict_accepts_a_plain_number_step_and_ndarrays():
    source, _ = make_optimizer(mg, "Adam", seed=1)
    saved = copy.deepcopy(source.state_dict())
    for index, entry in saved["state"].items():
        entry["step"] = 1
        entry["exp_avg"] = entry["exp_avg"].numpy()
    optimizer, params = make_optimizer(mg, "Adam")
    optimizer.load_state_dict(saved)
    step = optimizer.state[params[0]]["step"]
    assert isinstance(step, mg.Tensor) and step.shape == () and step.item() == 1.0
    optimizer.step()


# =========================================================================== scheduler load_state_dict
def make_scheduler(lib, kind):
    param = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
    optimizer = lib.optim.SGD([{"params": [param]}, {"params": [lib.nn.Parameter(lib.zeros(1))]}], lr=0.1,
                              momentum=0.9)
    sched = lib.optim.lr_scheduler
    make = {
        "StepLR": lambda: sched.StepLR(optimizer, step_size=2, gamma=0.5),
        "MultiStepLR": lambda: sched.MultiStepLR(optimizer, milestones=[1, 3]),
        "LambdaLR": lambda: sched.LambdaLR(optimizer, lambda e: 0.9 ** e),
        "CosineAnnealingLR": lambda: sched.CosineAnnealingLR(optimizer, T_max=5),
        "OneCycleLR": lambda: sched.OneCycleLR(optimizer, max_lr=1.0, total_steps=10),
        "ReduceLROnPlateau": lambda: sched.ReduceLROnPlateau(optimizer),
        "SequentialLR": lambda: sched.SequentialLR(optimizer, [sched.ConstantLR(optimizer, factor=0.5),
                                                               sched.ExponentialLR(optimizer, gamma=0.9)], [2]),
    }[kind]
    scheduler = make()
    for _ in range(3):
        optimizer.step()
        scheduler.step(1.0) if kind == "ReduceLROnPlateau" else scheduler.step()
    return scheduler, optimizer


def _sched(key, value):
    def mutate(sd):
        sd[key] = value
        return sd
    mutate.key = key
    return mutate


SCHEDULER_CASES = [
    ("not a dict", lambda sd: [1, 2], TypeError),
    ("None", lambda sd: None, TypeError),
    ("string last_epoch", _sched("last_epoch", "3"), TypeError),
    ("None last_epoch", _sched("last_epoch", None), TypeError),
    ("list last_epoch", _sched("last_epoch", [3]), TypeError),
    ("base_lrs too short", _sched("base_lrs", [0.1]), ValueError),
    ("base_lrs not a list", _sched("base_lrs", 0.1), TypeError),
    ("base_lrs strings", _sched("base_lrs", ["a", "b"]), TypeError),
    ("_last_lr too long", _sched("_last_lr", [0.1, 0.1, 0.1]), ValueError),
    ("a key that hides a method", _sched("step", 5), ValueError),
    ("a non-string key", lambda sd: {**sd, 3: 1}, TypeError),
]
SCHEDULER_KINDS = ["StepLR", "MultiStepLR", "LambdaLR", "CosineAnnealingLR", "OneCycleLR", "ReduceLROnPlateau",
                   "SequentialLR"]


SCHEDULER_COMBOS = [(kind, case) for kind in SCHEDULER_KINDS for case in SCHEDULER_CASES
                    if getattr(case[1], "key", "step") in {*make_scheduler(mg, kind)[0].state_dict(), "step"}]


@pytest.mark.parametrize("kind, case", SCHEDULER_COMBOS, ids=[f"{k}-{c[0]}" for k, c in SCHEDULER_COMBOS])
def test_scheduler_load_state_dict_refuses_and_changes_nothing(kind, case):
    label, mutate, expected = case
    scheduler, optimizer = make_scheduler(mg, kind)
    saved = copy.deepcopy(scheduler.state_dict())
    snapshot = lambda: (scheduler_state(scheduler), optimizer_state(optimizer))  # noqa: E731
    raises_and_keeps(expected, snapshot, lambda: scheduler.load_state_dict(mutate(copy.deepcopy(saved))))
    scheduler.load_state_dict(saved)  # the valid state still loads


@pytest.mark.parametrize("case", [("mode", "sideways"), ("threshold_mode", "ratio"), ("mode", 3)],
                         ids=lambda c: f"{c[0]}={c[1]!r}")
def test_reduce_lr_on_plateau_refuses_unknown_modes(case):
    scheduler, optimizer = make_scheduler(mg, "ReduceLROnPlateau")
    saved = {**scheduler.state_dict(), case[0]: case[1]}
    expected = TypeError if not isinstance(case[1], str) else ValueError
    raises_and_keeps(expected, lambda: scheduler_state(scheduler), lambda: scheduler.load_state_dict(saved))


def test_sequential_lr_refuses_a_bad_inner_state_before_changing_any():
    scheduler, optimizer = make_scheduler(mg, "SequentialLR")
    saved = copy.deepcopy(scheduler.state_dict())
    saved["last_epoch"] = 1
    saved["_schedulers"][1]["gamma"] = "x"  # the second inner scheduler: the first would be loaded first
    raises_and_keeps(TypeError, lambda: scheduler_state(scheduler), lambda: scheduler.load_state_dict(saved))
    saved["_schedulers"] = saved["_schedulers"][:1]
    raises_and_keeps(ValueError, lambda: scheduler_state(scheduler), lambda: scheduler.load_state_dict(saved))


# =========================================================================== BatchNorm on an empty batch
EMPTY_BATCHES = [("BatchNorm1d", (0, 3), {}), ("BatchNorm1d", (0, 3, 5), {}), ("BatchNorm1d", (2, 3, 0), {}),
                 ("BatchNorm2d", (0, 3, 2, 2), {}), ("BatchNorm2d", (2, 3, 0, 4), {}),
                 ("BatchNorm1d", (0, 3), {"momentum": None}), ("BatchNorm2d", (0, 3, 1, 1), {"momentum": None})]


@pytest.mark.parametrize("kind, shape, kwargs", EMPTY_BATCHES, ids=[f"{k}{s}{kw}" for k, s, kw in EMPTY_BATCHES])
def test_batchnorm_on_an_empty_batch_keeps_its_running_statistics_as_pytorch(kind, shape, kwargs):
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        bn = getattr(lib.nn, kind)(3, **kwargs)
        with lib.no_grad():
            bn.running_mean.copy_(lib.tensor([0.5, -1.0, 2.0]))
            bn.running_var.copy_(lib.tensor([1.5, 0.25, 3.0]))
        out = bn(lib.zeros(*shape))
        assert tuple(out.shape) == shape
        results.append((bn.running_mean.detach().numpy().copy(), bn.running_var.detach().numpy().copy(),
                        int(bn.num_batches_tracked)))
    (mean, var, count), (t_mean, t_var, t_count) = results
    np.testing.assert_array_equal(mean, t_mean)
    np.testing.assert_array_equal(var, t_var)
    np.testing.assert_array_equal(mean, [0.5, -1.0, 2.0])
    assert count == t_count == 1


@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 3, 0)])
def test_instance_norm_on_an_empty_batch_keeps_its_running_statistics(shape):
    """PyTorch turns them into NaN here; minigrad leaves them as they were (no statistics to add)."""
    norm = nn.InstanceNorm1d(3, track_running_stats=True)
    before = module_state(norm)
    assert norm(mg.zeros(*shape)).shape == shape
    assert module_state(norm) == before


def test_batchnorm_single_value_error_changes_nothing():
    """PyTorch counts the batch before refusing it; minigrad refuses first."""
    bn = nn.BatchNorm1d(3)
    raises_and_keeps(ValueError, lambda: module_state(bn), lambda: bn(mg.zeros(1, 3)))


# =========================================================================== mg.load: files and sizes
def in_thread(call, seconds=20):
    """Run ``call`` in a thread; the exception it raised (it must finish: a FIFO opened for reading would
    block it forever)."""
    outcome = {}

    def run():
        try:
            call()
        except BaseException as err:  # noqa: BLE001
            outcome["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked: the file was opened for reading"
    return outcome.get("error")


def saved_file(tmp_path, obj=None):
    path = tmp_path / "ok.mg"
    mg.save({"w": mg.arange(12.0).reshape(3, 4), "n": 3} if obj is None else obj, path)
    return path


def make_fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


NOT_REGULAR = [
    ("directory", lambda tmp: tmp, IsADirectoryError),
    ("FIFO", make_fifo, OSError),
    ("symlink to a FIFO", lambda tmp: (os.symlink(make_fifo(tmp), tmp / "link"), tmp / "link")[1], OSError),
    ("character device", lambda tmp: Path(os.devnull), OSError),
    ("missing file", lambda tmp: tmp / "absent.mg", FileNotFoundError),
]


@pytest.mark.parametrize("name, make, expected", NOT_REGULAR, ids=[c[0] for c in NOT_REGULAR])
def test_load_refuses_what_is_not_a_regular_file_without_opening_it(name, make, expected, tmp_path):
    path = make(tmp_path)
    error = in_thread(lambda: mg.load(path))
    assert isinstance(error, expected), repr(error)
    if name != "missing file":
        assert "mg.load" in str(error)


def test_load_refuses_an_open_fifo_object(tmp_path):
    path = make_fifo(tmp_path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        error = in_thread(lambda: mg.load(f))
    assert isinstance(error, OSError) and "FIFO" in str(error)


@pytest.mark.parametrize("source", ["path", "file", "bytesio"])
def test_load_refuses_a_file_over_max_bytes(source, tmp_path):
    path = saved_file(tmp_path)
    size = path.stat().st_size
    opened = {"path": lambda: path, "file": lambda: open(path, "rb"),
              "bytesio": lambda: io.BytesIO(path.read_bytes())}[source]
    f = opened()
    with pytest.raises(ValueError, match="max_bytes"):
        mg.load(f, max_bytes=size - 1)
    assert mg.load(opened(), max_bytes=100 * size)["n"] == 3  # a memory budget: the structure's objects count too


def test_load_max_bytes_counts_what_is_read_and_has_a_settable_default(tmp_path, monkeypatch):
    path = saved_file(tmp_path, {"big": mg.zeros(1000, dtype=mg.float64)})
    with pytest.raises(ValueError, match="max_bytes=4000"):  # the file holds 8 kB of array data
        mg.load(path, max_bytes=4000)
    monkeypatch.setattr(serialization, "MAX_LOAD_BYTES", 100)
    with pytest.raises(ValueError, match="MAX_LOAD_BYTES"):
        mg.load(path)
    assert mg.load(path, max_bytes=float("inf"))["big"].shape == (1000,)


@pytest.mark.parametrize("bad", [-1, "1GB", True, float("nan"), [10]])
def test_load_refuses_a_malformed_max_bytes(bad, tmp_path):
    with pytest.raises(ValueError, match="max_bytes"):
        mg.load(saved_file(tmp_path), max_bytes=bad)


class _Unseekable(io.RawIOBase):
    def __init__(self, data):
        self.data = io.BytesIO(data)

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, b):
        return self.data.readinto(b)


def test_load_refuses_an_unseekable_stream(tmp_path):
    with pytest.raises(ValueError, match="seekable"):
        mg.load(_Unseekable(saved_file(tmp_path).read_bytes()))


# =========================================================================== mg.load: minigrad archives
def archive(structure, arrays=(), raw=None):
    """A minigrad archive holding ``structure`` (JSON) and the ``.npy`` files ``arrays`` (or raw bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("minigrad/structure.json", json.dumps({"format": "minigrad", "version": 1, "root": structure}))
        for index, array in enumerate(arrays):
            entry = io.BytesIO()
            np.save(entry, array, allow_pickle=True)
            z.writestr(f"minigrad/arrays/{index}.npy", entry.getvalue())
        for name, data in (raw or {}).items():
            z.writestr(name, data)
    buffer.seek(0)
    return buffer


def npy_header(shape, dtype="<f8"):
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode("latin1")
    header += b" " * (63 - len(header) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


T = {"type": "tensor", "array": 0, "requires_grad": False}
MINIGRAD_CASES = [
    ("unknown node type", {"type": "function", "name": "os.system"}, [], None),
    ("node not a dict", [[1, 2]], [], None),
    ("negative array index", {**T, "array": -1}, [np.zeros(2)], None),
    ("string array index", {**T, "array": "0"}, [np.zeros(2)], None),
    ("missing array", {**T, "array": 3}, [np.zeros(2)], None),
    ("object array", T, [np.array([{"a": 1}], dtype=object)], None),
    ("string array", T, [np.array(["a", "b"])], None),
    ("datetime array", T, [np.zeros(2, dtype="datetime64[s]")], None),
    ("integer tensor that requires grad", {**T, "requires_grad": True}, [np.zeros(2, dtype=np.int64)], None),
    ("numpy scalar of shape (2,)", {"type": "numpy_scalar", "array": 0}, [np.zeros(2)], None),
    ("complex with string parts", {"type": "complex", "real": "1", "imag": 0.0}, [], None),
    ("list without items", {"type": "list"}, [], None),
    ("dict item not a pair", {"type": "dict", "items": [[1, 2, 3]]}, [], None),
    ("dict key an array", {"type": "dict", "items": [[T, 1]]}, [np.zeros(2)], None),
    ("header declaring 10**12 elements", T, [], {"minigrad/arrays/0.npy": npy_header((10 ** 12,)) + b"\0" * 64}),
    ("header shorter than its data claims", T, [], {"minigrad/arrays/0.npy": npy_header((100,)) + b"\0" * 8}),
    ("not a .npy entry", T, [], {"minigrad/arrays/0.npy": b"hello world, not numpy"}),
    ("a valid array after a bad node", {"type": "list", "items": [T, {"type": "eval"}]}, [np.zeros(2)], None),
]


@pytest.mark.parametrize("name, structure, arrays, raw", MINIGRAD_CASES, ids=[c[0] for c in MINIGRAD_CASES])
def test_load_refuses_malformed_minigrad_archives_before_reading_arrays(name, structure, arrays, raw, monkeypatch):
    read = []
    real_read_array = np.lib.format.read_array
    monkeypatch.setattr(np.lib.format, "read_array", lambda *a, **k: read.append(1) or real_read_array(*a, **k))
    with pytest.raises(RuntimeError, match="not a valid minigrad archive"):
        mg.load(archive(structure, arrays, raw))
    assert not read, "array data was read before the whole archive was checked"


def test_load_refuses_deep_nesting_with_a_clear_error():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("minigrad/structure.json", '{"format": "minigrad", "version": 1, "root": '
                   + '{"type": "list", "items": [' * 100_000 + "0" + "]}" * 100_000 + "}")
    buffer.seek(0)
    with pytest.raises(RuntimeError):
        mg.load(buffer)


def test_load_array_sizes_count_against_max_bytes_before_reading(tmp_path):
    """A compressed archive (mg.save stores, but a file may compress): small on disk, large unpacked."""
    stored = saved_file(tmp_path, [mg.zeros(1000, dtype=mg.float64), mg.zeros(1000, dtype=mg.float64)])
    path = tmp_path / "deflated.mg"
    with zipfile.ZipFile(stored) as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            new.writestr(name, old.read(name))
    assert path.stat().st_size < 2000
    with pytest.raises(ValueError, match="would bring the memory it spends"):
        mg.load(path, max_bytes=10_000)
    assert len(mg.load(path, max_bytes=40_000)) == 2  # the arrays and the structure's objects


# =========================================================================== mg.load: PyTorch's pickle
def torch_archive(pickled, storages=None):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/byteorder", "little")
        for key, data in (storages or {}).items():
            z.writestr(f"archive/data/{key}", data)
    buffer.seek(0)
    return buffer


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


PICKLE_CASES = [
    ("REDUCE of os.system", pickle.dumps(_Boom(), protocol=2), "system"),
    ("protocol 4 STACK_GLOBAL of os.system", pickle.dumps(_Boom(), protocol=4), "system"),
    ("INST opcode", b"(ios\nsystem\nS'echo'\ntR.", "INST"),
    ("OBJ opcode", b"(]o.", "OBJ"),
    ("STACK_GLOBAL from memoized strings", b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94h\x00h\x01\x93.", "os.system"),
    ("STACK_GLOBAL of a computed name", b"\x80\x04\x8c\x02os\x94]\x93.", "computed"),
    ("NEWOBJ opcode", b"\x80\x02ccollections\nOrderedDict\n)\x81.", "NEWOBJ"),
    ("EXT1 opcode", b"\x80\x02\x82\x01.", "EXT1"),
    ("text INT opcode", b"I1\n.", "INT"),
    ("PERSID text opcode", b"P0\n.", "PERSID"),
    ("builtins.eval", b"\x80\x02c__builtin__\neval\nX\x04\x00\x00\x00'hi'\x85R.", "eval"),
    ("torch.load itself", b"\x80\x02ctorch\nload\n.", "torch.load"),
    ("numpy reconstruct", b"\x80\x02cnumpy.core.multiarray\n_reconstruct\n.", "_reconstruct"),
    ("truncated stream", b"\x80\x02}q\x00(X\x01\x00\x00\x00a", "malformed"),
    ("empty stream", b"", "malformed"),
]


@pytest.mark.parametrize("name, pickled, message", PICKLE_CASES, ids=[c[0] for c in PICKLE_CASES])
def test_load_refuses_pickles_outside_the_torch_subset_before_running_them(name, pickled, message, monkeypatch):
    ran = []
    monkeypatch.setattr(os, "system", lambda *a: ran.append(a))
    monkeypatch.setattr(serialization._TorchUnpickler, "load", lambda self: ran.append("unpickler ran"))
    with pytest.raises(pickle.UnpicklingError, match=message):
        mg.load(torch_archive(pickled))
    assert not ran


def _tensor_pickle(numel, size, key="0", dtype="FloatStorage"):
    """The pickle torch.save writes for one float tensor of ``size`` viewing storage ``key`` of ``numel``."""
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
            + b"X\x07\x00\x00\x00storagectorch\n" + dtype.encode() + b"\n"
            + b"X" + struct.pack("<I", len(key)) + key.encode() + b"X\x03\x00\x00\x00cpu"
            + b"J" + struct.pack("<i", numel) + b"tQK\x00"
            + b"J" + struct.pack("<i", size) + b"\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR.")


def test_hand_built_torch_pickle_loads(tmp_path):
    """The builder above writes what mg.load reads (so the refusals below are about what they change)."""
    loaded = mg.load(torch_archive(_tensor_pickle(3, 3), {"0": np.arange(3, dtype=np.float32).tobytes()}))
    np.testing.assert_array_equal(loaded.numpy(), [0, 1, 2])


TORCH_STORAGE_CASES = [
    ("storage smaller than its elements", _tensor_pickle(1000, 3), {"0": b"\0" * 12}),
    ("storage over max_bytes", _tensor_pickle(2000, 3), {"0": b"\0" * 8000}),
    ("storage missing from the archive", _tensor_pickle(3, 3, key="9"), {"0": b"\0" * 12}),
    ("view past the end of its storage", _tensor_pickle(3, 5), {"0": b"\0" * 12}),
]


@pytest.mark.parametrize("name, pickled, storages", TORCH_STORAGE_CASES, ids=[c[0] for c in TORCH_STORAGE_CASES])
def test_load_refuses_torch_storages_that_do_not_fit(name, pickled, storages):
    with pytest.raises((pickle.UnpicklingError, ValueError)):
        mg.load(torch_archive(pickled, storages), max_bytes=4000)


def test_load_of_a_real_torch_checkpoint_never_calls_pickle_load(tmp_path, monkeypatch):
    torch = torch_or_skip()
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(4, 3)).sum().backward()
    optimizer.step()
    for protocol in (2, 4, 5):
        path = tmp_path / f"p{protocol}.pt"
        torch.save({"model": model.state_dict(), "optim": optimizer.state_dict(), "misc": [1, 2.5, "s", (1,)]},
                   path, pickle_protocol=protocol)
        for name in ("load", "loads"):
            monkeypatch.setattr(pickle, name, lambda *a, **k: pytest.fail("pickle.load called"))
        loaded = mg.load(path)
        np.testing.assert_array_equal(loaded["model"]["weight"].numpy(), model.weight.detach().numpy())
        assert loaded["misc"] == [1, 2.5, "s", (1,)]
        opcodes = {op.name for op, _, _ in pickletools.genops(zipfile.ZipFile(path).read(
            [n for n in zipfile.ZipFile(path).namelist() if n.endswith("data.pkl")][0]))}
        assert opcodes <= serialization._ADMITTED_OPCODES


# =========================================================================== tiny_transformer --resume
TINY = ["--d-model", "16", "--n-layers", "1", "--n-heads", "2", "--batch-size", "2", "--eval-every", "0",
        "--seq-len", "8"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    tiny_transformer.main([*TINY, "--steps", "2", "--out", str(out)])
    with np.load(out / "checkpoint.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(str(arrays.pop("meta"))), arrays


def write_checkpoint(path, meta, arrays):
    np.savez(path, **({} if meta is None else {"meta": np.array(json.dumps(meta))}), **arrays)
    return path


def _meta(*path, value):
    def mutate(meta, arrays, tmp):
        target = meta
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value(tmp) if callable(value) else value
    return mutate


def _skeleton_of(meta, *path):
    node = meta
    for key in path:
        node = dict(node["dict"])[key] if isinstance(node, dict) and "dict" in node else node[key]
    return node


def _array(name, value):
    def mutate(meta, arrays, tmp):
        arrays[name] = value
    return mutate


def _moment(value):
    def mutate(meta, arrays, tmp):
        ref = _skeleton_of(meta, "optimizer", "state", 0, "exp_avg")["array"]
        arrays[ref] = value
    return mutate


def _optimizer_step(value):
    def mutate(meta, arrays, tmp):
        entry = _skeleton_of(meta, "optimizer", "state", 0)
        entry["dict"] = [[k, value if k == "step" else v] for k, v in entry["dict"]]
    return mutate


def _drop_meta(meta, arrays, tmp):
    meta.clear()
    meta["__drop__"] = True


# (name, mutate(meta, arrays, tmp_path), a phrase the message must contain)
RESUME_CASES = [
    ("config declaring billions of parameters", _meta("config", "d_model", value=2 ** 20), "--max-params"),
    ("config with 10**6 layers", _meta("config", "n_layers", value=10 ** 6), "--max-params"),
    ("text path that is a FIFO", _meta("config", "text", value=lambda tmp: str(make_fifo(tmp))), "regular file"),
    ("text path that is a directory", _meta("config", "text", value=lambda tmp: str(tmp)), "regular file"),
    ("text path that does not exist", _meta("config", "text", value=lambda tmp: str(tmp / "gone.txt")),
     "No such file"),
    ("text path a number", _meta("config", "text", value=5), "'text'"),
    ("string d_model", _meta("config", "d_model", value="16"), "'d_model'"),
    ("float n_heads", _meta("config", "n_heads", value=2.0), "'n_heads'"),
    ("bool batch_size", _meta("config", "batch_size", value=True), "'batch_size'"),
    ("negative steps", _meta("config", "steps", value=-1), "'steps'"),
    ("zero seq_len", _meta("config", "seq_len", value=0), "'seq_len'"),
    ("NaN lr", _meta("config", "lr", value=float("nan")), "'lr'"),
    ("string lr", _meta("config", "lr", value="0.1"), "'lr'"),
    ("unknown norm", _meta("config", "norm", value="batchnorm"), "'norm'"),
    ("d_model not a multiple of n_heads", _meta("config", "n_heads", value=3), "n_heads"),
    ("config a list", _meta("config", value=[1, 2]), "'config'"),
    ("config missing a key", lambda meta, arrays, tmp: meta["config"].pop("warmup"), "lacks"),
    ("string step", _meta("step", value="2"), "'step'"),
    ("step past the run's end", _meta("step", value=10 ** 6), "'step'"),
    ("history loss of the wrong length", _meta("history", "loss", value=[1.0]), "loss"),
    ("history not a dict", _meta("history", value="lost"), "'history'"),
    ("RNG state garbage", _meta("rng", value={"bit_generator": "MT19937"}), "'rng'"),
    ("optimizer moment of the wrong shape", _moment(np.zeros(3)), "exp_avg"),
    ("optimizer moment a string array", _moment(np.array(["a"] * 3)), "dtype"),
    ("optimizer step a string", _optimizer_step("7"), "'step'"),
    ("optimizer step negative", _optimizer_step(-3.0), "'step'"),
    ("optimizer with three groups", lambda meta, arrays, tmp: _skeleton_of(meta, "optimizer", "param_groups")
     .append(_skeleton_of(meta, "optimizer", "param_groups")[0]), "two parameter groups"),
    ("optimizer array reference missing", lambda meta, arrays, tmp: _skeleton_of(
        meta, "optimizer", "state", 0, "exp_avg").update(array="nowhere"), "does not hold"),
    ("scheduler last_epoch a string", lambda meta, arrays, tmp: _skeleton_of(meta, "scheduler")["dict"].append(
        ["last_epoch", "3"]), "last_epoch"),
    ("model array of the wrong shape", _array("model/head.weight", np.zeros((3, 3))), "head.weight"),
    ("model array of strings", _array("model/head.weight", np.array([["a"] * 16] * 11)), "dtype"),
    ("model array of ints", _array("model/head.weight", np.zeros((11, 16), dtype=np.int64)), "head.weight"),
    ("model array missing", lambda meta, arrays, tmp: arrays.pop("model/norm.weight"), "missing"),
    ("model array unexpected", _array("model/extra.weight", np.zeros(2)), "unexpected"),
    ("plain .npz without metadata", _drop_meta, "no 'meta' entry"),
]


def run_resume(path, *extra):
    """``main(--resume path)`` with model building forbidden: a refusal must come before it."""
    def forbidden(*args):
        raise AssertionError("the model was built before the checkpoint was refused")
    original = tiny_transformer.make_model
    tiny_transformer.make_model = forbidden
    try:
        return in_thread(lambda: tiny_transformer.main(["--resume", str(path), "--out", str(path.parent / "out"),
                                                        *extra]))
    finally:
        tiny_transformer.make_model = original


@pytest.mark.parametrize("name, mutate, phrase", RESUME_CASES, ids=[c[0] for c in RESUME_CASES])
def test_resume_refuses_malformed_checkpoints_before_building_anything(name, mutate, phrase, checkpoint, tmp_path):
    meta, arrays = copy.deepcopy(checkpoint[0]), dict(checkpoint[1])
    mutate(meta, arrays, tmp_path)
    path = write_checkpoint(tmp_path / "bad.npz", None if meta.get("__drop__") else meta, arrays)
    error = run_resume(path)
    assert isinstance(error, SystemExit), repr(error)
    assert phrase in str(error) and str(error).startswith("--resume"), str(error)


RESUME_FILE_CASES = [
    ("checkpoint is a FIFO", lambda tmp, good: make_fifo(tmp), "regular file"),
    ("checkpoint is a directory", lambda tmp, good: tmp, "regular file"),
    ("checkpoint is missing", lambda tmp, good: tmp / "gone.npz", "No such file"),
    ("checkpoint is a pickle", lambda tmp, good: (tmp / "p.npz").write_bytes(pickle.dumps({"a": 1}))
     and tmp / "p.npz", "not a readable checkpoint"),
    ("checkpoint is a plain .npy", lambda tmp, good: (np.save(tmp / "a.npy", np.zeros(3)), tmp / "a.npy")[1],
     "not a readable checkpoint"),
    ("checkpoint holds a pickled object array", lambda tmp, good: (np.savez(tmp / "o.npz", meta=np.array("{}"),
     x=np.array([{}], dtype=object)), tmp / "o.npz")[1], "dtype object"),
    ("checkpoint with a header declaring 10**12 elements", lambda tmp, good: _huge_header_npz(tmp),
     "stored bytes"),
    ("checkpoint meta not JSON", lambda tmp, good: (np.savez(tmp / "j.npz", meta=np.array("{oops")),
                                                     tmp / "j.npz")[1], "not valid JSON"),
    ("checkpoint meta a JSON list", lambda tmp, good: (np.savez(tmp / "l.npz", meta=np.array("[1]")),
                                                        tmp / "l.npz")[1], "JSON object"),
    ("checkpoint meta a number array", lambda tmp, good: (np.savez(tmp / "n.npz", meta=np.zeros(2)),
                                                           tmp / "n.npz")[1], "one JSON string"),
]


def _huge_header_npz(tmp):
    path = tmp / "huge.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("meta.npy", _npy_bytes(np.array("{}")))
        z.writestr("model/x.npy", npy_header((10 ** 12,)) + b"\0" * 64)
    return path


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("name, make, phrase", RESUME_FILE_CASES, ids=[c[0] for c in RESUME_FILE_CASES])
def test_resume_refuses_unreadable_checkpoint_files(name, make, phrase, checkpoint, tmp_path):
    path = make(tmp_path, checkpoint)
    error = run_resume(Path(path))
    assert isinstance(error, SystemExit), repr(error)
    assert phrase in str(error), str(error)


def test_resume_limits_are_visible_and_settable(checkpoint, tmp_path):
    path = write_checkpoint(tmp_path / "ok.npz", *checkpoint)
    help_text = tiny_transformer.build_parser().format_help()
    for option in ("--max-checkpoint-bytes", "--max-params", "--max-text-bytes"):
        assert option in help_text
    error = run_resume(path, "--max-checkpoint-bytes", "1000")
    assert isinstance(error, SystemExit) and "--max-checkpoint-bytes" in str(error)
    error = run_resume(path, "--max-params", "100")
    assert isinstance(error, SystemExit) and "--max-params" in str(error)
    text = tmp_path / "t.txt"
    text.write_text("abc\n" * 500)
    error = in_thread(lambda: tiny_transformer.main([*TINY, "--text", str(text), "--max-text-bytes", "100",
                                                     "--out", str(tmp_path / "o")]))
    assert isinstance(error, SystemExit) and "--max-text-bytes" in str(error)


def test_restore_of_a_bad_checkpoint_leaves_a_running_trainer_as_it_was(checkpoint):
    meta, arrays = checkpoint
    cfg = meta["config"]
    task = tiny_transformer.make_task(cfg)
    trainer = tiny_transformer.Trainer(mg, tiny_transformer.make_model(cfg, len(task.vocab)), task, cfg)
    trainer.train_step()

    def snapshot():
        return (module_state(trainer.model), optimizer_state(trainer.optimizer), scheduler_state(trainer.scheduler),
                trainer.step, frozen(trainer.history), frozen(mg.random.default_generator.get_state()))
    for name, mutate, _ in RESUME_CASES:
        if "text" in name:  # the text file is read by the task, before restore
            continue
        bad_meta, bad_arrays = copy.deepcopy(meta), dict(arrays)
        mutate(bad_meta, bad_arrays, None)
        raises_and_keeps(tiny_transformer.CheckpointError, snapshot,
                         lambda: tiny_transformer.restore(trainer, bad_meta, bad_arrays))
    tiny_transformer.restore(trainer, meta, arrays)  # the good one restores
    assert trainer.step == meta["step"]


def test_parameter_shapes_match_the_built_model():
    from llama import Llama, LlamaConfig
    for norm in ("rmsnorm", "layernorm"):
        cfg = LlamaConfig(vocab_size=7, seq_len=8, d_model=24, n_layers=2, n_heads=2, norm=norm)
        built = {name: tuple(p.shape) for name, p in Llama(cfg).state_dict().items()}
        assert list(built.items()) == list(cfg.parameter_shapes().items())
