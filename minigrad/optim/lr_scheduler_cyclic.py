"""``CyclicLR`` (Smith, 2017: cyclical learning rates, with momentum cycled inversely) and ``ChainedScheduler``
(several schedulers stepped together). Exported by ``minigrad.optim.lr_scheduler``."""
import math
import types
from collections.abc import Mapping
from functools import partial

from .lr_scheduler import (LRScheduler, ReduceLROnPlateau, _checked, _ComposedScheduler, _copy, _per_group, set_lr,
                           warn_outside_step)

__all__ = ["ChainedScheduler", "CyclicLR"]


def _triangular_scale(x):
    return 1.0


def _triangular2_scale(x):
    return 1 / (2.0 ** (x - 1))


def _exp_range_scale(gamma, x):
    return gamma ** x


class CyclicLR(LRScheduler):
    """The lr goes from ``base_lr`` up to ``max_lr`` in ``step_size_up`` steps and back down in ``step_size_down``
    (default: the same), over and over; step it after every batch. With t = last_epoch:

        cycle = floor(1 + t / total_size);  x = 1 + t / total_size - cycle       (position in the cycle, 0..1)
        rise = x / step_ratio  if x <= step_ratio  else  (x - 1) / (step_ratio - 1)
        lr = base_lr + (max_lr - base_lr) * rise * scale_fn(cycle or t)

    ``mode``: 'triangular' (scale 1), 'triangular2' (halved each cycle), 'exp_range' (gamma**t); or a custom
    ``scale_fn`` of the cycle number (``scale_mode='cycle'``) or of t (``'iterations'``). With ``cycle_momentum``
    the momentum (SGD's 'momentum', or beta1 of Adam-like 'betas') moves inversely, from ``max_momentum`` down to
    ``base_momentum``; each group records 'max_momentum' and 'base_momentum'.
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        self.optimizer = _checked(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                set_lr(group, lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for group, group_max, group_base in zip(optimizer.param_groups, self.max_momentums,
                                                        self.base_momentums):
                    self._set_momentum(group, group_max)
                    group["max_momentum"], group["base_momentum"] = group_max, group_base
        super().__init__(optimizer, last_epoch)  # the first step uses the groups' 'initial_lr' as base_lrs ...
        self.base_lrs = base_lrs                 # ... later steps base_lr (as in PyTorch)

    def _init_scale_fn(self):
        """The built-in scale function of ``mode`` (and its ``scale_mode``), unless a custom one was given."""
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref, self.scale_mode = _triangular_scale, "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref, self.scale_mode = _triangular2_scale, "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref, self.scale_mode = partial(_exp_range_scale, self.gamma), "iterations"

    def scale_fn(self, x):
        """The amplitude's scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def get_lr(self):
        warn_outside_step(self)
        t = self.last_epoch
        cycle = math.floor(1 + t / self.total_size)
        x = 1.0 + t / self.total_size - cycle
        rise = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else t)
        lrs = [base_lr + (max_lr - base_lr) * rise * scale for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, top - (top - base) * rise * scale)
        return lrs

    def state_dict(self):
        """PyTorch's: the attributes but the optimizer and the built-in scale function; a custom ``scale_fn`` is
        saved as None if a plain function, or as its ``__dict__`` if a callable object."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def _check_state(self, state_dict):
        state = dict(state_dict) if isinstance(state_dict, Mapping) else state_dict
        saved_fn = state.pop("_scale_fn_custom", None) if isinstance(state, dict) else None
        super()._check_state(state)
        if saved_fn is not None and (not isinstance(saved_fn, Mapping) or not hasattr(self._scale_fn_custom,
                                                                                      "__dict__")):
            raise TypeError("CyclicLR state_dict['_scale_fn_custom'] must be None or the dict of a callable "
                            f"scale_fn object's attributes, got {type(saved_fn).__name__}")
        mode = state.get("mode", self.mode)
        if self._scale_fn_custom is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"CyclicLR state_dict: mode {mode!r} is invalid and scale_fn is None")

    def _apply_state(self, state_dict):
        state = dict(state_dict)
        saved_fn = state.pop("_scale_fn_custom", None)
        self.__dict__.update(state)
        if saved_fn is not None:
            self._scale_fn_custom.__dict__.update(saved_fn)
        self._init_scale_fn()


class ChainedScheduler(_ComposedScheduler):
    """Step several schedulers of one optimizer together: each ``step()`` steps them all, in order, so their
    changes to the lr compound (e.g. a warm-up ``LinearLR`` chained with ``ExponentialLR``)."""

    def __init__(self, schedulers, optimizer=None):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                                 "kwargs to be specified when calling `step`, but got one at index "
                                 f"{i} in the given schedulers sequence.")
            if optimizer != scheduler.optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                                 f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is "
                                 f"different from {type(optimizer).__name__}.")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [_copy(group["lr"]) for group in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [_copy(group["lr"]) for group in self._schedulers[-1].optimizer.param_groups]
