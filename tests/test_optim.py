"""Optimizers and schedulers as float64 mirrors of PyTorch: same initial weights, same gradients, >= 5 steps."""
import copy
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.optim as optim
from minigrad.optim import lr_scheduler

from . import oracle
from .mirror import torch_or_replay, torch_or_skip

SHAPES = [(3, 4), (4,), (2, 2, 3)]


@pytest.fixture
def torch():
    return torch_or_replay()


def _trajectory(torch, make_th, seed, dtype, skips):
    """PyTorch's side of a Mirror after the steps ``skips`` lists (each step's parameters without a gradient):
    its parameters and optimizer, the gradients drawn from the same seeded noise as minigrad's."""
    rng = np.random.default_rng(seed)
    theirs = [torch.nn.Parameter(torch.tensor(rng.standard_normal(s).astype(dtype))) for s in SHAPES]
    th_opt = make_th(theirs)
    for skip in skips:
        for i, q in enumerate(theirs):
            noise = rng.standard_normal(q.shape).astype(dtype)
            q.grad = None if i in skip else torch.tensor(noise + 0.5 * q.detach().numpy())
        th_opt.step()
    return theirs, th_opt


def _recorded_steps(steps):
    """Which ``assert_close`` calls a fixture keeps (a live run compares at every one): after each of the first 6
    steps and every 25th; the others compare nothing without PyTorch."""
    return steps <= 6 or steps % 25 == 0


class Mirror:
    """The same parameters in minigrad and PyTorch, and one optimizer on each side.

    ``step()`` gives both sides the same gradient recipe, g = noise + 0.5 * p (so the trajectory feeds
    back into the gradients), each evaluated at that side's own parameters, then steps both optimizers.
    PyTorch's side is live or recorded: ``assert_close`` compares with PyTorch's parameters and optimizer state
    after the same steps (``torch_trajectory``, run from the start each time); ``theirs`` and ``th_opt`` are the
    live PyTorch objects (tests reading them need PyTorch).
    """

    def __init__(self, torch, make_mg, make_th, seed=0, dtype=np.float64):
        self.rng, self.seed, self.dtype, self.make_th = np.random.default_rng(seed), seed, dtype, make_th
        inits = [self.rng.standard_normal(s).astype(dtype) for s in SHAPES]
        self.ours = [nn.Parameter(mg.tensor(a)) for a in inits]
        self.opt = make_mg(self.ours)
        self.skips = []

    def step(self, skip=()):
        """One step; parameters whose index is in ``skip`` get no gradient this time."""
        for i, p in enumerate(self.ours):
            noise = self.rng.standard_normal(p.shape).astype(p.dtype)
            p.grad = None if i in skip else mg.tensor(noise + 0.5 * p.detach().numpy())
        self.opt.step()
        self.skips.append(tuple(skip))

    @property
    def theirs(self):
        return self._live()[0]

    @property
    def th_opt(self):
        return self._live()[1]

    def _live(self):
        torch = torch_or_skip()
        if getattr(self, "_live_at", None) != len(self.skips):
            self._live_objects = _trajectory(torch, self.make_th, self.seed, self.dtype, self.skips)
            self._live_at = len(self.skips)
        return self._live_objects

    def torch_trajectory(self, torch):
        theirs, th_opt = _trajectory(torch, self.make_th, self.seed, self.dtype, self.skips)
        return {"params": [oracle.snap(q.detach(), grad=False) for q in theirs],
                "state": {str(i): {k: oracle.snap(v, grad=False) for k, v in state.items()}
                          for i, state in th_opt.state_dict()["state"].items()}}

    def assert_close(self, rtol=1e-12, atol=1e-14):
        recorded = oracle.ask(self.torch_trajectory, inputs=(self.seed, str(np.dtype(self.dtype)), self.skips),
                              tolerance=(rtol, atol),
                              keep=lambda r, n=len(self.skips): r if _recorded_steps(n) else "left out")
        if recorded == "left out":    # a step whose comparison the fixture leaves out (replay only)
            return
        for i, (p, q) in enumerate(zip(self.ours, recorded["params"])):
            np.testing.assert_allclose(p.detach().numpy(), q.numpy(), rtol=rtol, atol=atol, err_msg=f"param {i}")
        ours, theirs = self.opt.state_dict()["state"], {int(i): s for i, s in recorded["state"].items()}
        assert ours.keys() == theirs.keys()
        for index, state in theirs.items():
            assert ours[index].keys() == state.keys(), index
            for key, value in state.items():
                np.testing.assert_allclose(ours[index][key].detach().numpy(), value.numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"state[{index}][{key!r}]")
                assert ours[index][key].dtype == value.numpy().dtype, (index, key)


def both(torch, name, groups=False, **kwargs):
    """Optimizer factories for both libraries; ``groups=True`` splits the params into two groups with
    different learning rates (and, for the second, a different weight decay)."""

    def factory(lib_optim):
        def make(params):
            if groups:
                params = [{"params": params[:2]}, {"params": params[2:], "lr": 0.05, "weight_decay": 0.2}]
            return getattr(lib_optim, name)(params, **kwargs)
        return make

    return factory(optim), factory(torch.optim)


OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.3, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
]


@pytest.mark.parametrize("groups", [False, True], ids=["one_group", "two_groups"])
@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=[f"{n}-{k}" for n, k in OPTIMIZERS])
def test_optimizer_mirrors_pytorch(torch, name, kwargs, groups):
    m = Mirror(torch, *both(torch, name, groups=groups, **kwargs))
    for step in range(6):
        m.step(skip=(1,) if step in (0, 3) else ())  # a param without grad is skipped, its state kept
        m.assert_close()


def test_float32_adam_keeps_dtypes_like_pytorch(torch):
    m = Mirror(torch, *both(torch, "Adam", lr=0.01, amsgrad=True), dtype=np.float32)
    for _ in range(5):
        m.step()
    m.assert_close(rtol=1e-5, atol=1e-6)
    assert m.opt.state[m.ours[0]]["step"].dtype == mg.float32 and m.ours[0].dtype == mg.float32


ADAM_CASES = [("AdamW", dict(weight_decay=0.1)), ("Adam", {}), ("Adam", dict(amsgrad=True)),
              ("AdamW", dict(maximize=True, amsgrad=True)), ("Adam", dict(weight_decay=0.1))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, kwargs", ADAM_CASES, ids=[f"{n}-{k}" for n, k in ADAM_CASES])
def test_adam_one_pass_equals_its_numpy_operations(name, kwargs, dtype, monkeypatch):
    """On the numba backend Adam's step is one pass per parameter (kernels/fused_numba.py ``adam_step_``), the NumPy
    operations of optim/adam.py elementwise in their order: the same bits as the numpy backend's step (exact by
    construction: the same IEEE operations in one dtype, compiled without fastmath), the same version counts. L2
    weight decay (Adam's weight_decay) and a strided parameter keep the NumPy path."""
    from minigrad.kernels import fused_numba, use_backend
    calls = []
    real = fused_numba.adam_step_
    monkeypatch.setattr(fused_numba, "adam_step_", lambda *a: calls.append(a) or real(*a))
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(s).astype(dtype) for s in [(40, 30), (7,), (5, 6)]]
    grads = [[(rng.standard_normal(a.shape) * 10.0 ** rng.integers(-3, 3)).astype(dtype) for a in start]
             for _ in range(4)]
    results = {}
    for backend in ("numpy", "numba"):
        with use_backend(backend):
            params = [nn.Parameter(mg.tensor(a.copy())) for a in start[:2]]
            params.append(nn.Parameter(mg.tensor(start[2].T.copy()).t()))            # strided: the NumPy path
            opt = getattr(optim, name)(params, lr=0.01, **kwargs)
            versions = [p._version for p in params]
            for step_grads in grads:
                for p, g in zip(params, step_grads):
                    p.grad = mg.tensor(g)
                opt.step()
            results[backend] = ([p.detach().numpy().copy() for p in params],
                                [p._version - v for p, v in zip(params, versions)],
                                [{k: np.array(v) for k, v in opt.state[p].items()} for p in params])
    for ours, reference in zip(results["numba"][0], results["numpy"][0]):
        np.testing.assert_array_equal(ours, reference)
    assert results["numba"][1] == results["numpy"][1]
    for ours, reference in zip(results["numba"][2], results["numpy"][2]):
        assert ours.keys() == reference.keys()
        for key in ours:
            np.testing.assert_array_equal(ours[key], reference[key])
    fused = name == "AdamW" or "weight_decay" not in kwargs
    assert len(calls) == (2 * len(grads) if fused else 0)      # the two contiguous parameters, each step


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_default_hyperparameters_equal_pytorch(torch, name):
    p = nn.Parameter(mg.zeros(2))
    ours = getattr(optim, name)([p]).param_groups[0]
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))]).param_groups[0]
    assert {k: v for k, v in ours.items() if k != "params"} == {k: theirs[k] for k in ours if k != "params"}


def test_sgd_without_momentum_keeps_no_state(torch):
    m = Mirror(torch, *both(torch, "SGD", lr=0.1))
    m.step()
    assert m.opt.state_dict()["state"] == {} == m.th_opt.state_dict()["state"]


# ----------------------------------------------------------------------------- state_dict
@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                          ("AdamW", {"lr": 0.05})])
def test_state_dict_round_trip_continues_identically(torch, name, kwargs):
    """Save after 3 steps, load into a fresh optimizer over copies of the params, continue 3 more steps."""
    m = Mirror(torch, *both(torch, name, groups=True, **kwargs))
    for _ in range(3):
        m.step()
    saved = copy.deepcopy(m.opt.state_dict())
    assert [g["params"] for g in saved["param_groups"]] == [[0, 1], [2]]
    assert saved["param_groups"][1]["lr"] == 0.05
    clones = [nn.Parameter(mg.tensor(p.detach().numpy())) for p in m.ours]
    resumed = both(torch, name, groups=True, **kwargs)[0](clones)
    resumed.load_state_dict(saved)
    for _ in range(3):
        grads = [np.random.default_rng(i).standard_normal(p.shape) for i, p in enumerate(clones)]
        for p, q, g in zip(m.ours, clones, grads):
            p.grad, q.grad = mg.tensor(g), mg.tensor(g)
        m.opt.step()
        resumed.step()
        for p, q in zip(m.ours, clones):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_loads_a_pytorch_state_dict_and_continues_like_pytorch(torch):
    """PyTorch's optimizer state_dict (tensors converted with .numpy()) has the same format as ours."""
    m = Mirror(torch, *both(torch, "Adam", groups=True, lr=0.05))
    for _ in range(3):
        m.step()
    th_state = m.th_opt.state_dict()
    converted = {"state": {i: {k: v.numpy() for k, v in s.items()} for i, s in th_state["state"].items()},
                 "param_groups": th_state["param_groups"]}
    m.opt = optim.Adam([{"params": m.ours[:2]}, {"params": m.ours[2:]}])
    m.opt.load_state_dict(converted)
    assert m.opt.param_groups[1]["lr"] == 0.05 and m.opt.param_groups[0]["params"] == m.ours[:2]
    for _ in range(3):
        m.step()
        m.assert_close()


def test_a_state_dict_without_newer_options_loads_with_the_defaults(torch):
    """A state_dict saved before ``decoupled_weight_decay`` existed still loads, and AdamW stays decoupled."""
    m = Mirror(torch, *both(torch, "AdamW", lr=0.05))
    for _ in range(2):
        m.step()
    saved = copy.deepcopy(m.opt.state_dict())
    for group in saved["param_groups"]:
        del group["decoupled_weight_decay"]
    m.opt = optim.AdamW(m.ours)
    m.opt.load_state_dict(saved)
    assert m.opt.param_groups[0]["decoupled_weight_decay"] is True and m.opt.param_groups[0]["lr"] == 0.05
    for _ in range(2):
        m.step()
        m.assert_close()


def test_load_state_dict_errors_and_copies():
    params = [nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(3))]
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    for p in params:
        p.grad = mg.ones(*p.shape)
    opt.step()
    saved = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": params[:1]}, {"params": params[1:]}]).load_state_dict(saved)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD(params[:1]).load_state_dict(saved)
    other = optim.SGD(params)
    other.load_state_dict(saved)
    assert other.state[params[0]]["momentum_buffer"]._data is not opt.state[params[0]]["momentum_buffer"]._data


# ----------------------------------------------------------------------------- API and errors
def test_zero_grad_and_closure():
    p = nn.Parameter(mg.ones(2))
    opt = optim.SGD([p], lr=0.5)
    p.grad = mg.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        p.grad = mg.tensor(2 * p.detach().numpy())  # d(sum p^2)/dp, set by hand to stay independent of the ops
        return loss

    assert opt.step(closure).item() == 2.0
    assert p.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("make, error, message", [
    (lambda o, ps: o.SGD(ps, lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda o, ps: o.SGD(ps, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda o, ps: o.SGD(ps, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda o, ps: o.SGD(ps, nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    (lambda o, ps: o.Adam(ps, betas=(0.9, 1.0)), ValueError, "Invalid beta parameter at index 1: 1.0"),
    (lambda o, ps: o.Adam(ps, eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
    (lambda o, ps: o.AdamW(ps, weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
    (lambda o, ps: o.SGD([]), ValueError, "optimizer got an empty parameter list"),
    (lambda o, ps: o.SGD(ps[0]), TypeError, "iterable of Tensors or dicts"),
    (lambda o, ps: o.SGD([{"params": set(ps)}]), TypeError, "ordered collections"),
    (lambda o, ps: o.SGD([ps[0] * 2]), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda o, ps: o.SGD([{"params": ps}, {"params": ps[:1]}]), ValueError, "more than one parameter group"),
])
def test_optimizer_argument_errors_match_pytorch(torch, make, error, message):
    """The same bad call fails the same way in both libraries (``make(optim_module, params)``)."""
    with pytest.raises(error, match=message):
        make(optim, [nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(2))])
    with pytest.raises(error, match=message):
        make(torch.optim, [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))])


def test_add_param_group_fills_defaults():
    a, b = nn.Parameter(mg.zeros(1)), nn.Parameter(mg.zeros(1))
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "eps": 1e-3})
    assert opt.param_groups[1]["lr"] == 0.1 and opt.param_groups[1]["eps"] == 1e-3
    assert opt.param_groups[1]["params"] == [b]
    assert repr(opt).startswith("Adam (\nParameter Group 0\n    amsgrad: False")


# ----------------------------------------------------------------------------- schedulers
def scheduler_pair(torch, make, lr=0.1, groups=1):
    """An SGD over one parameter per group on each side, with the scheduler ``make(lib_scheduler, opt)``."""
    ours = optim.SGD([{"params": [nn.Parameter(mg.zeros(1))], "lr": lr * (i + 1)} for i in range(groups)])
    theirs = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr * (i + 1)}
                              for i in range(groups)])
    return (ours, make(lr_scheduler, ours)), (theirs, make(torch.optim.lr_scheduler, theirs))


def assert_same_schedule(torch, make, steps=20, groups=1):
    (opt, sched), (th_opt, th_sched) = scheduler_pair(torch, make, groups=groups)
    history = [sched.get_last_lr()]
    assert sched.get_last_lr() == th_sched.get_last_lr()
    for _ in range(steps):
        opt.step()
        th_opt.step()
        sched.step()
        th_sched.step()
        assert sched.get_last_lr() == th_sched.get_last_lr()  # exactly: same formulas, same order
        assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in th_opt.param_groups]
        history.append(sched.get_last_lr())
    return history


SCHEDULES = {
    "lambda": lambda s, o: s.LambdaLR(o, lambda epoch: 0.9 ** epoch),
    "lambda_per_group": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.95 ** e]),
    "cosine": lambda s, o: s.CosineAnnealingLR(o, T_max=20),
    "cosine_restart": lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "linear": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=6),
    "warmup_cosine": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=4), s.CosineAnnealingLR(o, T_max=12, eta_min=1e-3)], [5]),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_scheduler_values_equal_pytorch_over_20_steps(torch, name):
    history = assert_same_schedule(torch, SCHEDULES[name], groups=2)
    assert len(set(map(tuple, history))) > 5  # the schedule actually moves


def test_cosine_values_follow_closed_form():
    opt = optim.SGD([nn.Parameter(mg.zeros(1))], lr=0.1)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.01)
    for t in range(1, 11):
        opt.step()
        sched.step()
        expected = 0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * t / 10)) / 2
        assert math.isclose(sched.get_last_lr()[0], expected, rel_tol=1e-12, abs_tol=1e-15)


def test_scheduler_state_dict_round_trip(torch):
    make = SCHEDULES["warmup_cosine"]
    (opt, sched), _ = scheduler_pair(torch, make)
    for _ in range(7):
        sched.step()
    saved = copy.deepcopy(sched.state_dict())
    assert "optimizer" not in saved and saved["last_epoch"] == 7
    expected = []
    for _ in range(5):
        sched.step()
        expected.append(sched.get_last_lr())
    (opt2, sched2), _ = scheduler_pair(torch, make)
    sched2.load_state_dict(saved)
    opt2.param_groups[0]["lr"] = saved["_last_lr"][0]
    got = []
    for _ in range(5):
        sched2.step()
        got.append(sched2.get_last_lr())
    assert got == expected


def test_scheduler_errors():
    opt = optim.SGD([nn.Parameter(mg.zeros(1))], lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.LambdaLR(object(), lambda e: 1.0)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0])
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        lr_scheduler.LinearLR(opt, start_factor=0)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.CosineAnnealingLR(optim.SGD([nn.Parameter(mg.zeros(1))]), T_max=3, last_epoch=4)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                                  "RAdam"])
def test_a_0d_parameter_steps_like_pytorch(torch, name):
    """A 0-d parameter (ScaleNorm's gain): Adam used to crash on it (NumPy returns a scalar, not an array, for
    an operation on 0-d arrays without ``out``)."""
    values = []
    for lib in (mg, torch):
        p = lib.nn.Parameter(lib.tensor(1.5, dtype=lib.float64))
        opt = getattr(lib.optim, name)([p], lr=0.1)
        for step in range(3):
            opt.zero_grad()
            (p * p * (step + 1.0)).backward()
            opt.step()
        assert p.shape == ()
        values.append(float(p))
    assert values[0] == pytest.approx(values[1], rel=1e-12)
