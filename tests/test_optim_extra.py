"""Rprop, CyclicLR, ChainedScheduler, swa_utils (AveragedModel, SWALR, update_bn, the averaging functions) and
Adafactor as float64 mirrors of PyTorch: the same initial parameters and the same seeded gradients on both sides,
parameters compared after every step, lr sequences over several cycles, state_dict round trips."""
import copy
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.optim as optim
from minigrad.optim import lr_scheduler, swa_utils

from .mirror import torch_or_skip

SHAPES = [(3, 4), (5,), ()]


class Pair:
    """The same float64 parameters in both libraries and an optimizer on each side, stepped with the same gradient
    recipe g = noise + 0.5 * p (each side at its own p; some entries exactly 0 every fourth step)."""

    def __init__(self, torch, name, groups=False, seed=0, shapes=SHAPES, **kwargs):
        self.torch, self.rng = torch, np.random.default_rng(seed)
        inits = [self.rng.standard_normal(s) for s in shapes]
        self.ours = [nn.Parameter(mg.tensor(a.copy())) for a in inits]
        self.theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in inits]
        self.opt = getattr(optim, name)(self._groups(self.ours, groups), **kwargs)
        self.th_opt = getattr(torch.optim, name)(self._groups(self.theirs, groups), **kwargs)
        self.steps = 0

    @staticmethod
    def _groups(params, groups):
        return [{"params": params[:2]}, {"params": params[2:], "lr": 0.05}] if groups else params

    def step(self):
        self.steps += 1
        for p, q in zip(self.ours, self.theirs):
            noise = self.rng.standard_normal(p.shape)
            if self.steps % 4 == 0:
                noise = np.where(self.rng.random(p.shape) < 0.3, -0.5 * p.detach().numpy(), noise)
            p.grad = mg.tensor(noise + 0.5 * p.detach().numpy())
            q.grad = self.torch.tensor(noise + 0.5 * q.detach().numpy())
        self.opt.step()
        self.th_opt.step()

    def assert_close(self, rtol=1e-10, atol=1e-12):
        for i, (p, q) in enumerate(zip(self.ours, self.theirs)):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"param {i} after step {self.steps}")
        assert_state_close(self.opt.state_dict(), self.th_opt.state_dict(), rtol, atol)


def assert_state_close(ours, theirs, rtol=1e-10, atol=1e-12):
    """Same groups (hyperparameters and indices) and the same state keys and values as PyTorch's state_dict."""
    assert ours["param_groups"] == theirs["param_groups"]
    assert ours["state"].keys() == theirs["state"].keys()
    for index, state in theirs["state"].items():
        assert list(ours["state"][index]) == list(state), index
        for key, value in state.items():
            np.testing.assert_allclose(ours["state"][index][key].detach().numpy(), value.detach().numpy(), rtol=rtol,
                                       atol=atol, err_msg=f"state[{index}][{key!r}]")
            assert ours["state"][index][key].detach().numpy().dtype == value.detach().numpy().dtype, (index, key)


def load_copy(lib_opt_cls, params, state_dict, **kwargs):
    opt = lib_opt_cls(params, **kwargs)
    opt.load_state_dict(copy.deepcopy(state_dict))
    return opt


# ---------------------------------------------------------------------------------------------------- Rprop
RPROP = [{}, {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}, {"lr": 0.05, "maximize": True},
         {"foreach": True}]


@pytest.mark.parametrize("kwargs", RPROP, ids=["defaults", "etas_step_sizes", "maximize", "foreach"])
@pytest.mark.parametrize("groups", [False, True], ids=["one_group", "two_groups"])
def test_rprop_trajectory_and_state_equal_pytorch(kwargs, groups):
    torch = torch_or_skip()
    pair = Pair(torch, "Rprop", groups=groups, **kwargs)
    for _ in range(25):
        pair.step()
        pair.assert_close()


def test_rprop_state_dict_round_trip_continues_the_trajectory():
    torch = torch_or_skip()
    pair = Pair(torch, "Rprop", lr=0.05, etas=(0.4, 1.3))
    for _ in range(7):
        pair.step()
    saved = pair.opt.state_dict()
    pair.opt = load_copy(optim.Rprop, pair.ours, saved)
    assert pair.opt.state[pair.ours[0]] is not saved["state"][0]
    for _ in range(8):
        pair.step()
        pair.assert_close()


def test_rprop_complex_parameters_equal_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    start = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    p, q = nn.Parameter(mg.tensor(start.copy())), torch.nn.Parameter(torch.tensor(start.copy()))
    ours, theirs = optim.Rprop([p], lr=0.1), torch.optim.Rprop([q], lr=0.1)
    for _ in range(10):
        g = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
        p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        ours.step()
        theirs.step()
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.state[p]["step_size"].numpy(), theirs.state[q]["step_size"].numpy(), rtol=1e-12)


BAD_HYPERPARAMETERS = ([("Rprop", kwargs) for kwargs in ({"lr": -0.1}, {"lr": float("nan")}, {"etas": (1.0, 1.2)},
                                                          {"etas": (0.0, 1.2)}, {"etas": (0.5, 1.0)})]
                       + [("Adafactor", kwargs) for kwargs in ({"lr": -1.0}, {"beta2_decay": 0.1},
                                                               {"eps": (-1.0, 1e-3)}, {"eps": (None, -1.0)},
                                                               {"d": 0.5}, {"weight_decay": -1.0})])


@pytest.mark.parametrize("name, kwargs", BAD_HYPERPARAMETERS)
def test_bad_hyperparameters_raise_like_pytorch(name, kwargs):
    torch = torch_or_skip()
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([nn.Parameter(mg.zeros(2))], **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_rprop_capturable_refused_at_the_step_like_pytorch():
    torch = torch_or_skip()
    p, q = nn.Parameter(mg.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    p.grad, q.grad = mg.ones(2), torch.ones(2)
    with pytest.raises(AssertionError) as theirs:
        torch.optim.Rprop([q], capturable=True).step()
    with pytest.raises(AssertionError) as ours:
        optim.Rprop([p], capturable=True).step()
    assert str(ours.value) == str(theirs.value)
    np.testing.assert_array_equal(p.detach().numpy(), 0)


# ---------------------------------------------------------------------------------------------------- CyclicLR
class Decay:
    """A callable-object scale_fn (its attributes are what CyclicLR's state_dict saves)."""

    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k ** x


def two_group_optimizers(torch, name, **kwargs):
    """The same optimizer in both libraries over one parameter per group, group i with lr 0.1 * (i + 1)."""
    def make(lib):
        return getattr(lib.optim, name)([{"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.1 * (i + 1)}
                                         for i in range(2)], **kwargs)
    return make(mg), make(torch)


def momenta(opt):
    return [g["betas"] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def history(opt, sched, steps):
    """lr and momentum after construction and after each of ``steps`` optimizer + scheduler steps."""
    out = [(sched.get_last_lr(), momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append((sched.get_last_lr(), momenta(opt)))
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return out


CYCLIC = {
    "triangular_sgd": ("SGD", {"momentum": 0.9}, lambda: dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "triangular2_per_group": ("SGD", {"momentum": 0.9}, lambda: dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                                                     step_size_up=3, step_size_down=5,
                                                                     mode="triangular2")),
    "exp_range_adam_betas": ("Adam", {}, lambda: dict(base_lr=0.001, max_lr=0.01, step_size_up=4, mode="exp_range",
                                                      gamma=0.95, base_momentum=[0.7, 0.75], max_momentum=0.95)),
    "scale_fn_iterations": ("SGD", {"momentum": 0.5}, lambda: dict(base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                                   step_size_down=6, scale_fn=lambda x: 0.9 ** x,
                                                                   scale_mode="iterations")),
    "scale_fn_object_cycle": ("RMSprop", {}, lambda: dict(base_lr=0.01, max_lr=0.1, step_size_up=5,
                                                          scale_fn=Decay(0.7), base_momentum=0.6)),
    "no_momentum_cycle": ("Adagrad", {}, lambda: dict(base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                      cycle_momentum=False)),
    "exp_range_user_scale_mode_ignored": ("SGD", {}, lambda: dict(base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                                  mode="exp_range", gamma=0.9, scale_mode="cycle")),
}


def _cyclic_pair(key):
    """The optimizers of case ``key`` in minigrad and PyTorch, each with its CyclicLR."""
    torch = torch_or_skip()
    name, opt_kwargs, sched_kwargs = CYCLIC[key]
    ours, theirs = two_group_optimizers(torch, name, **opt_kwargs)
    return (ours, theirs, lr_scheduler.CyclicLR(ours, **sched_kwargs()),
            torch.optim.lr_scheduler.CyclicLR(theirs, **sched_kwargs()))


@pytest.mark.parametrize("key", list(CYCLIC))
def test_cyclic_lr_and_momentum_sequences_equal_pytorch(key):
    ours, theirs, sched, th_sched = _cyclic_pair(key)
    assert history(ours, sched, 40) == history(theirs, th_sched, 40)       # five cycles or more
    assert [{k: v for k, v in g.items() if k != "params"} for g in ours.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in theirs.param_groups]
    assert list(sched.state_dict().items()) == list(th_sched.state_dict().items())


@pytest.mark.parametrize("key", ["triangular2_per_group", "exp_range_adam_betas", "scale_fn_object_cycle"])
def test_cyclic_state_dict_round_trip_continues_the_schedule(key):
    ours, theirs, sched, th_sched = _cyclic_pair(key)
    torch, (name, opt_kwargs, sched_kwargs) = torch_or_skip(), CYCLIC[key]
    history(ours, sched, 11)
    history(theirs, th_sched, 11)
    saved = copy.deepcopy(sched.state_dict())
    if key == "scale_fn_object_cycle":
        assert saved["_scale_fn_custom"] == {"k": 0.7}
        sched._scale_fn_custom.k = 0.1     # the load restores the object's attributes
    fresh_opt, _ = two_group_optimizers(torch, name, **opt_kwargs)
    fresh_opt.load_state_dict(ours.state_dict())
    fresh = lr_scheduler.CyclicLR(fresh_opt, **{**sched_kwargs(), "scale_fn": sched._scale_fn_custom})
    fresh.load_state_dict(saved)
    assert history(fresh_opt, fresh, 20)[1:] == history(theirs, th_sched, 20)[1:]


def test_cyclic_argument_errors_equal_pytorch():
    torch = torch_or_skip()
    cases = [("SGD", dict(base_lr=0.1, max_lr=1.0, mode="sawtooth"), ValueError),
             ("Adagrad", dict(base_lr=0.1, max_lr=1.0), ValueError),           # no momentum to cycle
             ("SGD", dict(base_lr=[0.1, 0.2, 0.3], max_lr=1.0), ValueError)]
    for name, kwargs, error in cases:
        ours, theirs = two_group_optimizers(torch, name)
        with pytest.raises(error) as th_info:
            torch.optim.lr_scheduler.CyclicLR(theirs, **kwargs)
        with pytest.raises(error) as info:
            lr_scheduler.CyclicLR(ours, **kwargs)
        assert str(info.value) == str(th_info.value)


# ---------------------------------------------------------------------------------------------------- ChainedScheduler
CHAINS = {
    "warmup_then_exponential": lambda s, o: [s.LinearLR(o, start_factor=0.1, total_iters=5),
                                             s.ExponentialLR(o, gamma=0.9)],
    "constant_step_polynomial": lambda s, o: [s.ConstantLR(o, factor=0.5, total_iters=4), s.StepLR(o, 3, gamma=0.5),
                                              s.PolynomialLR(o, total_iters=12, power=1.5)],
    # CosineAnnealingLR's recursion goes on from the lr ConstantLR halved
    "constant_cosine": lambda s, o: [s.ConstantLR(o, factor=0.5, total_iters=4), s.CosineAnnealingLR(o, T_max=7)],
}


@pytest.mark.parametrize("key", list(CHAINS))
def test_chained_scheduler_lr_sequence_and_state_dict_equal_pytorch(key):
    torch = torch_or_skip()
    ours, theirs = two_group_optimizers(torch, "SGD", momentum=0.9)
    sched = lr_scheduler.ChainedScheduler(CHAINS[key](lr_scheduler, ours))
    th_sched = torch.optim.lr_scheduler.ChainedScheduler(CHAINS[key](torch.optim.lr_scheduler, theirs),
                                                         optimizer=theirs)
    ours_h, theirs_h = history(ours, sched, 25), history(theirs, th_sched, 25)
    for (lrs, mom), (th_lrs, th_mom) in zip(ours_h, theirs_h):
        np.testing.assert_allclose(lrs, th_lrs, rtol=1e-13)
        assert mom == th_mom
    assert list(sched.state_dict()) == list(th_sched.state_dict()) == ["_last_lr", "_schedulers"]
    mine, reference = sched.state_dict(), th_sched.state_dict()
    assert mine["_last_lr"] == reference["_last_lr"]
    for ours_s, theirs_s in zip(mine["_schedulers"], reference["_schedulers"]):
        assert ours_s.keys() == theirs_s.keys()


def test_chained_scheduler_state_dict_round_trip():
    torch = torch_or_skip()
    ours, theirs = two_group_optimizers(torch, "SGD")
    sched = lr_scheduler.ChainedScheduler(CHAINS["constant_step_polynomial"](lr_scheduler, ours))
    th_sched = torch.optim.lr_scheduler.ChainedScheduler(CHAINS["constant_step_polynomial"](torch.optim.lr_scheduler,
                                                                                         theirs))
    history(ours, sched, 6)
    history(theirs, th_sched, 6)
    saved = copy.deepcopy(sched.state_dict())
    fresh_opt, _ = two_group_optimizers(torch, "SGD")
    fresh = lr_scheduler.ChainedScheduler(CHAINS["constant_step_polynomial"](lr_scheduler, fresh_opt))
    fresh.load_state_dict(saved)
    for group, lr in zip(fresh_opt.param_groups, saved["_last_lr"]):
        group["lr"] = lr                    # the optimizer's own state_dict carries the lr; here set it by hand
    assert fresh.get_last_lr() == th_sched.get_last_lr()
    for (lrs, _), (th_lrs, _) in zip(history(fresh_opt, fresh, 15), history(theirs, th_sched, 15)):
        np.testing.assert_allclose(lrs, th_lrs, rtol=1e-13)


def test_chained_scheduler_errors_equal_pytorch():
    torch = torch_or_skip()
    ours, theirs = two_group_optimizers(torch, "SGD")
    other, th_other = two_group_optimizers(torch, "SGD")
    for lib, opt, opt2 in ((lr_scheduler, ours, other), (torch.optim.lr_scheduler, theirs, th_other)):
        messages = []
        for schedulers in ([], [lib.StepLR(opt, 2), lib.ReduceLROnPlateau(opt)], [lib.StepLR(opt, 2), object()]):
            with pytest.raises((ValueError, TypeError)) as info:
                lib.ChainedScheduler(schedulers)
            messages.append((type(info.value), str(info.value)))
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
            lib.ChainedScheduler([lib.StepLR(opt, 2), lib.StepLR(opt2, 2)])
        if lib is lr_scheduler:
            ours_messages = messages
    assert ours_messages == messages


# ---------------------------------------------------------------------------------------------------- swa_utils
def small_models(torch, seed=0):
    """Linear-BatchNorm-ReLU-Linear in both libraries, float64, with the same seeded weights."""
    rng = np.random.default_rng(seed)
    models = [lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2)).double()
              for lib in (mg, torch)]
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        start = rng.standard_normal(tuple(p.shape))
        with mg.no_grad():
            p.copy_(mg.tensor(start))
        with torch.no_grad():
            q.copy_(torch.tensor(start))
    return models


def train_step(torch, models, rng):
    """A forward pass in training mode (moves the BatchNorm buffers) and the same random change to the weights."""
    ours, theirs = models
    x = rng.standard_normal((5, 3))
    ours(mg.tensor(x))
    theirs(torch.tensor(x))
    for p, q in zip(ours.parameters(), theirs.parameters()):
        change = rng.standard_normal(tuple(p.shape))
        with mg.no_grad():
            p.add_(mg.tensor(change))
        with torch.no_grad():
            q.add_(torch.tensor(change))


def assert_modules_close(ours, theirs, rtol=1e-12):
    """Same state_dict keys (in order), values and dtypes."""
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(reference)
    for key, value in reference.items():
        np.testing.assert_allclose(mine[key].numpy(), value.numpy(), rtol=rtol, atol=1e-14, err_msg=key)
        assert mine[key].numpy().dtype == value.numpy().dtype, key


AVERAGING = {
    "swa_default": lambda s: {},
    "ema_multi": lambda s: {"multi_avg_fn": s.get_ema_multi_avg_fn(0.9)},
    "ema_multi_decay_low": lambda s: {"multi_avg_fn": s.get_ema_multi_avg_fn(0.3)},   # lerp weight >= 0.5
    "ema_one_tensor": lambda s: {"avg_fn": s.get_ema_avg_fn(0.7)},
    "swa_multi": lambda s: {"multi_avg_fn": s.get_swa_multi_avg_fn()},                 # PyTorch's float32 weight
    "swa_one_tensor": lambda s: {"avg_fn": s.get_swa_avg_fn()},
    "custom_avg_fn": lambda s: {"avg_fn": lambda avg, cur, n: avg * 0.5 + cur * 0.5 + n * 1e-3},
}


@pytest.mark.parametrize("key, use_buffers", [(k, b) for k in AVERAGING for b in (False, True)
                                              if not (k == "swa_multi" and b)])   # see the integer test below
def test_averaged_model_equals_pytorch(key, use_buffers):
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    models = small_models(torch)
    ours = swa_utils.AveragedModel(models[0], use_buffers=use_buffers, **AVERAGING[key](swa_utils))
    theirs = torch.optim.swa_utils.AveragedModel(models[1], use_buffers=use_buffers,
                                                 **AVERAGING[key](torch.optim.swa_utils))
    assert_modules_close(ours, theirs)
    for _ in range(6):
        train_step(torch, models, rng)
        ours.update_parameters(models[0])
        theirs.update_parameters(models[1])
        assert_modules_close(ours, theirs)
    assert ours.n_averaged.item() == 6 and ours.n_averaged.dtype == mg.int64
    x = rng.standard_normal((4, 3))
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)


def test_averaged_model_copies_the_model_and_counts_in_a_buffer():
    torch = torch_or_skip()
    model = small_models(torch)[0]
    averaged = swa_utils.AveragedModel(model, device="cpu")
    assert averaged.module is not model and averaged.module[0].weight is not model[0].weight
    assert [name for name, _ in averaged.named_buffers()][0] == "n_averaged"
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


@pytest.mark.parametrize("num_averaged", ["tensor", "int"])
def test_swa_multi_avg_fn_on_integer_tensors_raises_like_pytorch(num_averaged):
    """PyTorch's get_swa_multi_avg_fn cannot average integer tensors (e.g. BatchNorm's num_batches_tracked with
    ``use_buffers=True``): addcdiv_ refuses integer division, add_ a float alpha."""
    torch = torch_or_skip()
    for lib, utils in ((torch, torch.optim.swa_utils), (mg, swa_utils)):
        n = lib.tensor(2) if num_averaged == "tensor" else 2
        with pytest.raises(RuntimeError):
            utils.get_swa_multi_avg_fn()([lib.tensor([3, 4])], [lib.tensor([5, 9])], n)


@pytest.mark.parametrize("maker", ["get_ema_multi_avg_fn", "get_ema_avg_fn"])
@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_out_of_range_raises_like_pytorch(maker, decay):
    torch = torch_or_skip()
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim.swa_utils, maker)(decay)
    with pytest.raises(ValueError) as ours:
        getattr(swa_utils, maker)(decay)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("loader_kind", ["list", "tuples", "dataloader"])
def test_update_bn_recomputes_running_stats_like_pytorch(loader_kind):
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    models = small_models(torch)
    for _ in range(3):
        train_step(torch, models, rng)          # running stats away from their reset values
    batches = [rng.standard_normal((n, 3)) for n in (6, 4, 7)]
    if loader_kind == "list":
        loaders = [[mg.tensor(b) for b in batches], [torch.tensor(b) for b in batches]]
    elif loader_kind == "tuples":
        loaders = [[(mg.tensor(b), mg.zeros(len(b))) for b in batches],
                   [(torch.tensor(b), torch.zeros(len(b))) for b in batches]]
    else:
        data = rng.standard_normal((10, 3))
        loaders = [mg.utils.data.DataLoader(mg.utils.data.TensorDataset(mg.tensor(data)), batch_size=4),
                   torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(data)), batch_size=4)]
    for model in models:
        model.eval()
        model[1].momentum = 0.3
    swa_utils.update_bn(loaders[0], models[0])
    torch.optim.swa_utils.update_bn(loaders[1], models[1], device="cpu")
    assert_modules_close(*models)
    assert not models[0].training and models[0][1].momentum == 0.3
    assert models[0][1].num_batches_tracked.item() == models[1][1].num_batches_tracked.item()


def test_update_bn_without_batchnorm_changes_nothing():
    model = nn.Linear(3, 2)
    model.eval()
    swa_utils.update_bn([mg.ones(2, 3)], model)
    assert not model.training


SWALR_CASES = {
    "cos_default": lambda: dict(swa_lr=0.05),
    "linear_per_group": lambda: dict(swa_lr=[0.05, 0.01], anneal_epochs=4, anneal_strategy="linear"),
    "no_annealing": lambda: dict(swa_lr=0.5, anneal_epochs=0),
    "one_epoch": lambda: dict(swa_lr=0.5, anneal_epochs=1, anneal_strategy="linear"),
}


@pytest.mark.parametrize("key", list(SWALR_CASES))
def test_swalr_lr_sequence_and_state_dict_equal_pytorch(key):
    torch = torch_or_skip()
    ours, theirs = two_group_optimizers(torch, "SGD")
    sched = swa_utils.SWALR(ours, **SWALR_CASES[key]())
    th_sched = torch.optim.swa_utils.SWALR(theirs, **SWALR_CASES[key]())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert history(ours, sched, 15) == history(theirs, th_sched, 15)
    assert [g["swa_lr"] for g in ours.param_groups] == [g["swa_lr"] for g in theirs.param_groups]
    assert list(sched.state_dict().items()) == list(th_sched.state_dict().items())


def test_swalr_after_cosine_state_dict_round_trip():
    """SWALR taking over from another scheduler mid-run, saved and loaded into a fresh scheduler."""
    torch = torch_or_skip()
    ours, theirs = two_group_optimizers(torch, "SGD", momentum=0.9)
    for opt, sched_lib in ((ours, lr_scheduler), (theirs, torch.optim.lr_scheduler)):
        history(opt, sched_lib.StepLR(opt, 2, gamma=0.5), 5)
    sched = swa_utils.SWALR(ours, swa_lr=0.02, anneal_epochs=6)
    th_sched = torch.optim.swa_utils.SWALR(theirs, swa_lr=0.02, anneal_epochs=6)
    history(ours, sched, 3)
    history(theirs, th_sched, 3)
    saved = copy.deepcopy(sched.state_dict())
    fresh = swa_utils.SWALR(ours, swa_lr=0.02, anneal_strategy="linear")
    fresh.load_state_dict(saved)
    for group, lr in zip(ours.param_groups, saved["_last_lr"]):
        group["lr"] = lr                          # undo the fresh scheduler's first step (the optimizer's lr)
    assert fresh.anneal_func(0.25) == sched.anneal_func(0.25) != 0.25    # 'cos' restored
    assert history(ours, fresh, 10) == history(theirs, th_sched, 10)


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.1, anneal_strategy="exp"), dict(swa_lr=0.1, anneal_epochs=-1),
                                    dict(swa_lr=0.1, anneal_epochs=2.0), dict(swa_lr=[0.1, 0.2, 0.3])])
def test_swalr_argument_errors_equal_pytorch(kwargs):
    torch = torch_or_skip()
    ours, theirs = two_group_optimizers(torch, "SGD")
    with pytest.raises(ValueError) as th_info:
        torch.optim.swa_utils.SWALR(theirs, **kwargs)
    with pytest.raises(ValueError) as info:
        swa_utils.SWALR(ours, **kwargs)
    assert str(info.value) == str(th_info.value)


# ---------------------------------------------------------------------------------------------------- Adafactor
WITH_BATCHED_MATRIX = SHAPES + [(2, 3, 4)]     # factored second moments over the last two axes
ADAFACTOR = [{}, {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 1.1, "weight_decay": 0.1},
             {"maximize": True, "lr": 0.02}, {"foreach": True}]


@pytest.mark.parametrize("kwargs", ADAFACTOR, ids=["defaults", "all_options", "maximize", "foreach"])
@pytest.mark.parametrize("groups", [False, True], ids=["one_group", "two_groups"])
def test_adafactor_trajectory_and_state_equal_pytorch(kwargs, groups):
    torch = torch_or_skip()
    pair = Pair(torch, "Adafactor", groups=groups, shapes=WITH_BATCHED_MATRIX, **kwargs)
    for _ in range(20):
        pair.step()
        pair.assert_close()
    assert list(pair.opt.state[pair.ours[0]]) == ["step", "row_var", "col_var"]
    assert list(pair.opt.state[pair.ours[1]]) == ["step", "variance"]


def test_adafactor_state_dict_round_trip_continues_the_trajectory():
    torch = torch_or_skip()
    pair = Pair(torch, "Adafactor", shapes=WITH_BATCHED_MATRIX, lr=0.03, weight_decay=0.05)
    for _ in range(6):
        pair.step()
    pair.opt = load_copy(optim.Adafactor, pair.ours, pair.opt.state_dict(), lr=0.5)
    assert pair.opt.param_groups[0]["lr"] == 0.03
    for _ in range(6):
        pair.step()
        pair.assert_close()
    bad = copy.deepcopy(pair.opt.state_dict())
    bad["state"][0]["row_var"] = bad["state"][0]["col_var"]       # (1, 4) where (3, 1) belongs
    with pytest.raises(RuntimeError, match="row_var"):
        optim.Adafactor(pair.ours).load_state_dict(bad)


def test_adafactor_float32_equals_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    start = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3,)]]
    ours = [nn.Parameter(mg.tensor(a.copy())) for a in start]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in start]
    opt, th_opt = optim.Adafactor(ours), torch.optim.Adafactor(theirs)   # eps1 = float32's machine epsilon
    for _ in range(10):
        for p, q in zip(ours, theirs):
            g = rng.standard_normal(p.shape).astype(np.float32)
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        opt.step()
        th_opt.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-6)
    assert opt.state[ours[0]]["row_var"].dtype == mg.float32


def test_adafactor_refuses_complex_parameters_like_pytorch():
    torch = torch_or_skip()
    messages = []
    for lib, lib_optim in ((torch, torch.optim), (mg, optim)):
        p = lib.nn.Parameter(lib.zeros(2, dtype=lib.complex128))
        p.grad = lib.ones(2, dtype=lib.complex128)
        with pytest.raises(RuntimeError) as info:
            lib_optim.Adafactor([p]).step()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("last_epoch", [0, 4, 7, 13])
def test_cosine_annealing_resumed_at_an_epoch_goes_on_from_the_current_lr_as_pytorch(last_epoch):
    """A CosineAnnealingLR built with last_epoch >= 0 keeps the lr it finds and steps its recursion from there
    (it took its closed form from initial_lr at the first step once, which PyTorch does not)."""
    torch = torch_or_skip()
    sequences = []
    for lib in (mg, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.5)
        opt.param_groups[0]["initial_lr"] = 0.7
        scheduler = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.01, last_epoch=last_epoch)
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(16):
            opt.step()
            scheduler.step()
            lrs.append(opt.param_groups[0]["lr"])
        sequences.append(lrs)
    np.testing.assert_allclose(sequences[0], sequences[1], rtol=1e-12)
