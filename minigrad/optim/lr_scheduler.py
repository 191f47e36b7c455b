"""Learning-rate schedulers: ``LambdaLR``, ``MultiplicativeLR``, ``StepLR``, ``MultiStepLR``, ``ConstantLR``,
``LinearLR``, ``ExponentialLR``, ``PolynomialLR``, ``CosineAnnealingLR``, ``CosineAnnealingWarmRestarts``,
``OneCycleLR``, ``SequentialLR``, ``ReduceLROnPlateau``, and (from ``lr_scheduler_cyclic``) ``CyclicLR`` and
``ChainedScheduler``.

A scheduler rewrites ``group['lr']`` of its optimizer each time ``step()`` is called (once per
epoch or iteration, after ``optimizer.step()``). Construction performs a first step, so the lr at
epoch 0 is already set. The values follow PyTorch's formulas, including the recursive (chainable)
forms (``CosineAnnealingLR``, ``StepLR``, ...), so they agree with PyTorch to the last bit; the
attributes saved by ``state_dict()`` have PyTorch's names.
"""
import math
import numbers
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping

from ..tensor import Tensor  # (PyTorch's lr_scheduler module has this name too)
from .optimizer import Optimizer

inf = math.inf

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
           "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR", "OneCycleLR",
           "PolynomialLR", "ReduceLROnPlateau", "SequentialLR", "StepLR"]


def _checked(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    return optimizer


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)  # NumPy's numbers too


def _mismatch(current, loaded, path):
    """Why ``loaded`` cannot replace the scheduler's ``current`` value at ``path`` (an exception), or None.

    Values keep their kind: a number stays a number, a string a string, a bool a bool; lists keep their
    length (one entry per parameter group, milestone ...) and are checked entry by entry, as are the
    keys two dicts share. None and other values (functions, objects) accept anything.
    """
    for kind, test in (("a bool", lambda v: isinstance(v, bool)), ("a number", _is_number),
                       ("a string", lambda v: isinstance(v, str))):
        if test(current):
            return None if test(loaded) else TypeError(f"{path} must be {kind}, got {type(loaded).__name__} "
                                                       f"{loaded!r:.60}")
    if isinstance(current, (list, tuple)):
        if not isinstance(loaded, (list, tuple)):
            return TypeError(f"{path} must be a list, got {type(loaded).__name__}")
        if len(loaded) != len(current):
            return ValueError(f"{path} must have {len(current)} entries, got {len(loaded)}")
        return next((e for e in (_mismatch(c, v, f"{path}[{i}]") for i, (c, v) in enumerate(zip(current, loaded)))
                     if e), None)
    if isinstance(current, Mapping):
        if not isinstance(loaded, Mapping):
            return TypeError(f"{path} must be a dict, got {type(loaded).__name__}")
        return next((e for e in (_mismatch(current[k], loaded[k], f"{path}[{k!r}]") for k in current if k in loaded)
                     if e), None)
    return None


def set_lr(group, lr):
    """``group['lr'] = lr``, but a Tensor lr (PyTorch takes one for capturable steps) is filled in place and stays the
    same Tensor, as PyTorch's schedulers keep it."""
    if isinstance(group["lr"], Tensor):
        group["lr"].fill_(lr)
    else:
        group["lr"] = lr


def _copy(value):
    """A learning rate to keep (initial_lr, base_lrs, get_last_lr()): a Tensor is cloned, so it does not follow the
    group's lr as that changes in place (PyTorch's)."""
    return value.clone() if isinstance(value, Tensor) else value


def warn_outside_step(scheduler):
    """PyTorch's warning when a scheduler's ``get_lr()`` is called by the user rather than by ``step()``: its value is
    the next step's (a chained formula applied once more), not the lr in use."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=3)


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (the new lr of each group, given ``self.last_epoch``)
    and optionally ``_get_closed_form_lr()`` (the lr at an arbitrary epoch, used by ``step(epoch)``)."""

    _get_lr_called_within_step = False     # True while step() calls get_lr() (an instance entry once stepped)

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = _checked(optimizer)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0.")
        self.base_lrs = [_copy(group["initial_lr"]) for group in optimizer.param_groups]
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
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
                          "where possible. Please use `scheduler.step()` to step the scheduler.", UserWarning,
                          stacklevel=2)
        last_epoch = self.last_epoch
        try:
            self._update_lr(epoch)
        except BaseException:       # e.g. OneCycleLR stepped past total_steps: nothing changed
            self.last_epoch = last_epoch
            raise
        self._step_count += 1

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self._stepped_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self._stepped_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            set_lr(group, lr)
        self._last_lr = self._group_lrs()

    def _stepped_lr(self):
        """``get_lr()`` called by a step (which it does not warn about)."""
        self._get_lr_called_within_step = True
        try:
            return self.get_lr()
        finally:
            self._get_lr_called_within_step = False

    def _group_lrs(self):
        return [_copy(group["lr"]) for group in self.optimizer.param_groups]

    def state_dict(self):
        """Everything but the optimizer (PyTorch's format)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore what ``state_dict()`` saved. All or nothing: ``_check_state`` vets every entry first."""
        self._check_state(state_dict)
        self._apply_state(state_dict)

    def _check_state(self, state_dict):
        """Raise (TypeError for a wrong type, ValueError for a wrong length or value) unless every entry of
        ``state_dict`` can replace the scheduler's own: same kinds and list lengths as ``state_dict()``.
        Entries this scheduler does not have are accepted (as attributes, like PyTorch) unless they would
        hide one of its methods or replace what ``state_dict()`` leaves out (its ``optimizer``: PyTorch takes
        that and fails at the next step)."""
        name = type(self).__name__
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{name}.load_state_dict expects a dict, got {type(state_dict).__name__}")
        current = self.state_dict()
        for key, value in state_dict.items():
            if not isinstance(key, str):
                raise TypeError(f"{name}.load_state_dict: keys must be strings, got {key!r}")
            if key in current:
                error = _mismatch(current[key], value, f"{name} state_dict[{key!r}]")
                if error:
                    raise error
            elif hasattr(type(self), key) or key in self.__dict__:  # a method, or what state_dict() leaves out
                raise ValueError(f"{name}.load_state_dict: the key {key!r} would replace the scheduler's {key}")

    def _apply_state(self, state_dict):
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """PyTorch's older name of the base class, which custom schedulers in public code still subclass."""


class _LambdaScheduler(LRScheduler):
    """Schedulers driven by ``lr_lambda``: one function, or one per parameter group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = _checked(optimizer)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """Plain functions cannot be saved and appear as None; callable objects save their ``__dict__``."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def _check_state(self, state_dict):
        super()._check_state(state_dict)
        saved = state_dict.get("lr_lambdas", [None] * len(self.lr_lambdas))
        for i, (fn, entry) in enumerate(zip(self.lr_lambdas, saved)):
            if entry is not None and (not isinstance(entry, Mapping) or not hasattr(fn, "__dict__")):
                raise TypeError(f"{type(self).__name__} state_dict['lr_lambdas'][{i}] must be None or the dict of "
                                f"a callable object's attributes, got {type(entry).__name__}")

    def _apply_state(self, state_dict):
        state = dict(state_dict)
        lr_lambdas = state.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr * lr_lambda(epoch); ``lr_lambda`` is one function or one per parameter group."""

    def get_lr(self):
        warn_outside_step(self)
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr = lr * lr_lambda(epoch) at each step after the first (a product of the factors so far)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        for fn in (lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]):
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        if self._is_initial:
            return self._group_lrs()
        return [group["lr"] * lmbda(self.last_epoch)
                for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


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
        warn_outside_step(self)
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:               # (resumed at epoch t > 0 too: the recursion goes on from the lr as it is)
            return self._group_lrs()
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
        warn_outside_step(self)
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


class _ComposedScheduler(LRScheduler):
    """A scheduler made of others (``SequentialLR``, ``ChainedScheduler``): its state_dict holds its own entries
    and, under '_schedulers', each scheduler's state_dict."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def _check_state(self, state_dict):
        super()._check_state(state_dict)  # also checks that '_schedulers' has one entry per scheduler
        for scheduler, saved in zip(self._schedulers, state_dict.get("_schedulers", ())):
            scheduler._check_state(saved)

    def _apply_state(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("_schedulers", [{}] * len(self._schedulers))
        self.__dict__.update(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler._apply_state(s)


class SequentialLR(_ComposedScheduler):
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
            set_lr(group, group["initial_lr"])
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


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` steps: initial_lr * gamma**(epoch // step_size)."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch in ``milestones`` (by gamma**k at a milestone listed k times)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor for the first ``total_iters`` steps, then initial_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._group_lrs()]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [lr * (1.0 / self.factor) for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial_lr * gamma**epoch (one multiplication by ``gamma`` per step)."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        if self._is_initial:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - min(epoch, total_iters) / total_iters)**power, applied as a ratio per step."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        t, total = self.last_epoch, self.total_iters
        if self._is_initial or t > total:
            return self._group_lrs()
        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [lr * decay for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter, 2017): cosine decay from initial_lr to ``eta_min`` over a period that restarts,
    the i-th period lasting T_0 * T_mult**i epochs:

        lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    ``step(epoch)`` accepts fractional epochs (``epoch + i / iters_per_epoch`` per batch).
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_outside_step(self)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:  # a restart
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # periods before the current one: n with T_0 (T_mult**n - 1) / (T_mult - 1) <= epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self._stepped_lr()):
            set_lr(group, lr)
        self._last_lr = self._group_lrs()


def _per_group(name, optimizer, value):
    """``value`` for each parameter group: a list/tuple of one per group, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018), stepped once per batch for ``total_steps`` steps.

    The lr rises from max_lr / div_factor to ``max_lr`` over the first ``pct_start`` of the steps, then falls to
    max_lr / div_factor / final_div_factor (``three_phase``: back to max_lr / div_factor first, then down to the
    minimum). Each phase anneals by half a cosine (``'cos'``) or linearly. With ``cycle_momentum`` the momentum
    (SGD's 'momentum', or beta1 of Adam-like 'betas') moves inversely between ``max_momentum`` and
    ``base_momentum``. Each group records 'initial_lr', 'max_lr', 'min_lr' (and 'max_momentum', 'base_momentum').
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        self.optimizer = _checked(optimizer)
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        # each phase: its last step, and the group keys holding the lr and momentum at its start and end
        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            phases = [(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                       "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, phase)) for phase in phases]  # PyTorch's state_dict entries
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, group_max, group_base in zip(optimizer.param_groups, max_momentums, base_momentums):
                    self._set_momentum(group, group_max)
                    group["max_momentum"], group["base_momentum"] = group_max, group_base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _anneal(self, start, end, pct):
        """From ``start`` (pct = 0) to ``end`` (pct = 1): half a cosine, or a straight line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        warn_outside_step(self)
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            phase_start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                if step <= phase["end_step"] or i == len(self._schedule_phases) - 1:
                    pct = (step - phase_start) / (phase["end_step"] - phase_start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[phase["start_momentum"]],
                                                               group[phase["end_momentum"]], pct))
                    break
                phase_start = phase["end_step"]
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once a metric given to ``step(metric)`` has not improved for more than
    ``patience`` steps, then wait ``cooldown`` steps before counting again; never below ``min_lr`` and only
    when the change exceeds ``eps``.

    Improvement (``mode='min'``): metric < best * (1 - threshold) (``threshold_mode='rel'``) or
    metric < best - threshold (``'abs'``); ``'max'`` mirrors it.
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        self.optimizer = _checked(optimizer)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = self._group_lrs()
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def _is_better(self, a, best):
        if self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold) if self.mode == "min" else a > best * (self.threshold + 1.0)
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def step(self, metrics, epoch=None):
        current = float(metrics)  # also a 0-d tensor
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
                          "where possible. Please use `scheduler.step()` to step the scheduler.", UserWarning,
                          stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)})"
                                   f" differs from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                                   "usually due to a new param group being added to the optimizer. Please modify "
                                   "the `min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                set_lr(group, new_lr)

    def _check_state(self, state_dict):
        super()._check_state(state_dict)
        mode, threshold_mode = state_dict.get("mode", self.mode), state_dict.get("threshold_mode", self.threshold_mode)
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau state_dict: mode {mode!r} must be 'min' or 'max' and threshold_mode "
                             f"{threshold_mode!r} 'rel' or 'abs'")

    def _apply_state(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


from .lr_scheduler_cyclic import ChainedScheduler, CyclicLR  # noqa: E402  (they build on the classes above)
