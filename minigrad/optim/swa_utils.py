"""Weight averaging (``torch.optim.swa_utils``): Stochastic Weight Averaging (Izmailov et al., 2018) and
exponential moving averages of a model's parameters.

``AveragedModel`` keeps a copy of a model whose parameters (and with ``use_buffers`` its buffers) are averaged
over the calls to ``update_parameters``; ``SWALR`` anneals the lr to a constant ``swa_lr``; ``update_bn``
recomputes BatchNorm running statistics for the averaged weights with one pass over the data. The averaging
functions come in two forms, as in PyTorch: ``avg_fn(averaged, current, num_averaged)`` returning the new
average of one tensor, and ``multi_avg_fn(averaged_list, current_list, num_averaged)`` updating lists in place.
"""
import itertools
import math
from copy import deepcopy

from .. import dtypes
from ..autograd import no_grad
from ..creation import tensor
from ..nn.channel_norms import _BatchNorm
from ..nn.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group, warn_outside_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_inexact(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """In-place exponential moving average of tensor lists: ema <- lerp(ema, current, 1 - decay)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if _is_inexact(ema_param_list[0]):
                for ema, current in zip(ema_param_list, current_param_list):
                    ema.lerp_(current, 1 - decay)
            else:                           # integer buffers: the float average, truncated
                for ema, current in zip(ema_param_list, current_param_list):
                    ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean of tensor lists: avg <- avg + (current - avg) / (num_averaged + 1)."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if _is_inexact(averaged_param_list[0]):
                # PyTorch's weight 1 / (n + 1) is a default-dtype (float32) number when n is a tensor
                weight = 1 / (num_averaged + 1)
                weight = weight.item() if isinstance(weight, Tensor) else weight
                for averaged, current in zip(averaged_param_list, current_param_list):
                    averaged.lerp_(current, weight)
            else:
                for averaged, current in zip(averaged_param_list, current_param_list):
                    diff = current - averaged
                    if isinstance(num_averaged, Tensor):
                        averaged.addcdiv_(diff, num_averaged + 1)
                    else:
                        averaged.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """Exponential moving average of one tensor: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """Running mean of one tensor: averaged + (current - averaged) / (num_averaged + 1)."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _by_dtype(averaged, current):
    """The pairs of tensors grouped by dtype, in order of first appearance (PyTorch's per-device/dtype groups)."""
    groups = {}
    for a, c in zip(averaged, current):
        pair = groups.setdefault(a.dtype, ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return list(groups.values())


class AveragedModel(Module):
    """A deep copy of ``model`` (``.module``) whose parameters are the average of the ``model``'s parameters
    at each ``update_parameters(model)`` call: the running mean (SWA) by default, or what ``avg_fn`` (one tensor
    at a time) or ``multi_avg_fn`` (lists of tensors of one dtype, in place) computes, e.g. an EMA
    (``multi_avg_fn=get_ema_multi_avg_fn(0.999)``). The first update copies the model. Buffers are copied from
    the model at each update, or averaged as well with ``use_buffers=True``. The ``n_averaged`` buffer (int64)
    counts the updates.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dtypes.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the averages."""
        if self.use_buffers:
            averaged_tensors = itertools.chain(self.module.parameters(), self.module.buffers())
            model_tensors = itertools.chain(model.parameters(), model.buffers())
        else:
            averaged_tensors, model_tensors = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        with no_grad():
            for p_averaged, p_model in zip(averaged_tensors, model_tensors):
                averaged.append(p_averaged.detach())
                current.append(p_model.detach())
                if first:
                    p_averaged.detach().copy_(p_model.detach())
            if not first:
                if self.avg_fn is not None:
                    for p_averaged, p_model in zip(averaged, current):
                        p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged))
                elif self.multi_avg_fn is not None:
                    for group_averaged, group_current in _by_dtype(averaged, current):
                        self.multi_avg_fn(group_averaged, group_current, self.n_averaged)
                else:   # PyTorch on the CPU: the one-tensor running mean
                    swa = get_swa_avg_fn()
                    for p_averaged, p_model in zip(averaged, current):
                        p_averaged.copy_(swa(p_averaged, p_model, self.n_averaged))
            if not self.use_buffers:
                for b_averaged, b_model in zip(self.module.buffers(), model.buffers()):
                    b_averaged.detach().copy_(b_model.detach())
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the running mean and variance of every BatchNorm module of ``model`` with one pass over
    ``loader`` (batches, or tuples/lists whose first entry is the input): the statistics are reset, then
    averaged over the batches with equal weights (momentum None). The model's modes and momenta are restored."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr from its current value to its ``swa_lr`` over ``anneal_epochs`` steps, then hold it.

    At step s (t = min(1, s / anneal_epochs)), with alpha = t ('linear') or (1 - cos(pi t)) / 2 ('cos'):
    lr = alpha * swa_lr + (1 - alpha) * lr0, where lr0 is recovered from the current lr and the previous alpha,
    so the schedule is applied recursively as in PyTorch. Each group records 'swa_lr'.
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for group, group_swa_lr in zip(optimizer.param_groups, _per_group("swa_lr", optimizer, swa_lr)):
            group["swa_lr"] = group_swa_lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr annealing started from, given the lr ``alpha`` of the way to ``swa_lr``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        warn_outside_step(self)
        step = self._step_count     # steps completed before this one (PyTorch: its counter minus 1)
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        start_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                     for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, start_lrs)]

    def state_dict(self):
        """The attributes but the optimizer and the anneal function (PyTorch's)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def _check_state(self, state_dict):
        super()._check_state(state_dict)
        if state_dict.get("_anneal_strategy", self._anneal_strategy) not in ("cos", "linear"):
            raise ValueError("SWALR state_dict['_anneal_strategy'] must be 'cos' or 'linear', got "
                             f"{state_dict['_anneal_strategy']!r}")

    def _apply_state(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
