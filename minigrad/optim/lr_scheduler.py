"""Learning-rate schedulers: ``LambdaLR``, ``CosineAnnealingLR``, ``LinearLR``, ``SequentialLR``.

A scheduler rewrites ``group['lr']`` of its optimizer each time ``step()`` is called (once per
epoch or iteration, after ``optimizer.step()``). Construction performs a first step, so the lr at
epoch 0 is already set. The values follow PyTorch's formulas, including the recursive (chainable)
form of ``CosineAnnealingLR``, so they agree with PyTorch to the last bit.
"""
import math
import types
import warnings
from bisect import bisect_right

from .optimizer import Optimizer

__all__ = ["CosineAnnealingLR", "LRScheduler", "LambdaLR", "LinearLR", "SequentialLR"]


def _checked(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    return optimizer


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (the new lr of each group, given ``self.last_epoch``)
    and optionally ``_get_closed_form_lr()`` (the lr at an arbitrary epoch, used by ``step(epoch)``)."""

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = _checked(optimizer)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0.")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None):
        self._step_count += 1
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
                          "where possible. Please use `scheduler.step()` to step the scheduler.", UserWarning,
                          stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _group_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Everything but the optimizer (PyTorch's format)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch); ``lr_lambda`` is one function or one per parameter group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = _checked(optimizer)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self):
        """Plain functions cannot be saved and appear as None; callable objects save their ``__dict__``."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        lr_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class CosineAnnealingLR(LRScheduler):
    """Cosine decay from the initial lr to ``eta_min`` over ``T_max`` steps (then back up, periodically).

    Closed form: eta_min + (initial_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2. ``step()`` applies it
    recursively, as PyTorch does, by multiplying the current lr's distance to eta_min by
    (1 + cos(pi t / T)) / (1 + cos(pi (t-1) / T)), so changes made to the lr by others carry over.
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and t > 0:  # resumed at epoch t: start from the closed form
            return self._get_closed_form_lr()
        if (t - 1 - T) % (2 * T) == 0:  # restarting from the minimum, where the ratio below is 0/0
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (group["lr"] - eta_min)
                + eta_min for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the initial lr by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` steps (a warm-up with the defaults), applied recursively as in PyTorch."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, start, end = self.last_epoch, self.start_factor, self.end_factor
        if t == 0:
            return [lr * start for lr in self._group_lrs()]
        if self._is_initial or t > self.total_iters:
            return self._group_lrs()
        ratio = 1.0 + (end - start) / (self.total_iters * start + (t - 1) * (end - start))
        return [lr * ratio for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        factor = (self.start_factor + (self.end_factor - self.start_factor) * min(self.total_iters, self.last_epoch)
                  / self.total_iters)
        return [base_lr * factor for base_lr in self.base_lrs]


class SequentialLR(LRScheduler):
    """Run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]`` (e.g. warm-up then cosine);
    each later scheduler restarts from its epoch 0 at its milestone."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(scheduler).__name__} at index {i} with a different optimizer.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Constructing the schedulers stepped them once each: reset the lr and undo those steps,
        # then let only the scheduler that owns epoch 0 take its initial step.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)
