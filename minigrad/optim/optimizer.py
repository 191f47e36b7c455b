"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and PyTorch-format state_dicts.

Subclasses implement ``step()``: for each group, for each parameter with a gradient, update
``p`` in place (``p.add_``, under ``no_grad``) from ``p.grad`` and ``self.state[p]``.
"""
import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping
from itertools import chain
from typing import Optional

import numpy as np

from .. import dtypes
from ..autograd import enable_grad, no_grad
from ..ops.complex import view_as_real
from ..tensor import Tensor
from ..tensor import _RemovableHandle as RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_SCALAR_STATE = ("step", "mu_product", "eta", "mu")  # per-parameter state entries that are one number, not a moment
_KIND_NAMES = {"f": "floating-point", "c": "complex"}


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _describe(value):
    """A short description of a value for error messages: its type, and shape and dtype for arrays."""
    array = value._data if isinstance(value, Tensor) else value
    if isinstance(array, np.ndarray):
        return f"a {type(value).__name__} of shape {list(array.shape)} and dtype {array.dtype}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _scalar_value(value):
    """The float in ``value`` (a real number, or a one-element real Tensor/ndarray) if finite and >= 0, else None."""
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        array = np.asarray(value._data if isinstance(value, Tensor) else value)
        if array.size != 1 or dtypes.kind_of(array.dtype) not in "iuf":     # (bfloat16 is "f")
            return None
        number = float(array.reshape(()))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        return None
    return number if np.isfinite(number) and number >= 0 else None


def _scalar_tensor(value, fused=False):
    """A 0-d step counter with PyTorch's dtype: float64 if that is the default dtype, else float32 (always float32
    for a ``fused=True`` optimizer, as PyTorch's fused kernels keep it)."""
    dtype = dtypes.float64 if dtypes.get_default_dtype() == dtypes.float64 and not fused else dtypes.float32
    return Tensor(np.asarray(value, dtype=dtype))


def real_view(array):
    """A complex array as its (real, imaginary) pairs, sharing memory (``torch.view_as_real``); a real array as is."""
    if not np.iscomplexobj(array):
        return array
    return array.reshape(-1).view(array.real.dtype).reshape(*array.shape, 2)


def _real_entry(value, param):
    """A state entry of a complex parameter as the update on its real view sees it."""
    if isinstance(value, Tensor) and value.is_complex() and value.shape == param.shape:
        return Tensor(real_view(value._data))
    return value


def _complex_entry(value, param, original):
    """A state entry back from the update on a complex parameter's real view: the original complex tensor if the
    update wrote into it, else a new complex tensor of the pairs."""
    if not (isinstance(value, Tensor) and not value.is_complex() and value.shape == (*param.shape, 2)):
        return value
    if original is not None and np.shares_memory(value._data, original._data):
        return original
    return Tensor(np.ascontiguousarray(value._data).view(param._data.dtype).reshape(param.shape))


def _replaced(result, state_dict):
    """What a state_dict hook hands on: the dict it returned, or the one it was given."""
    return state_dict if result is None else result


def _names_of(group):
    """A group's 'param_names' entry, if any: ``load_state_dict`` keeps it unless the saved group names its own."""
    return {"param_names": group["param_names"]} if "param_names" in group else {}


def _as_numbers(group):
    """``group`` as an update reads it: a one-element Tensor ``lr`` or beta (PyTorch takes both, for schedules that
    change them in place) becomes a NumPy scalar of its dtype. NumPy's scalars combine with Python floats and arrays
    as PyTorch's 0-d tensors do (a float32 ``lr`` keeps ``1 - lr * weight_decay`` in float32), so the update rounds
    as PyTorch's. The group itself keeps the Tensor."""
    tensors = isinstance(group.get("lr"), Tensor) or any(isinstance(b, Tensor) for b in group.get("betas", ()))
    if not tensors:
        return group
    values = dict(group)
    values["lr"] = _number(group["lr"])
    if "betas" in group:
        values["betas"] = tuple(_number(b) for b in group["betas"])
    return values


def _number(value):
    """A 0-d Tensor as a NumPy scalar of its dtype (a float32 one stays float32); anything else as it is."""
    return value._data.reshape(())[()] if isinstance(value, Tensor) else value


# --------------------------------------------------------------------------- step hooks
_global_step_pre_hooks, _global_step_post_hooks = [], []   # of every optimizer (PyTorch's global hooks)


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return ``(new_args, new_kwargs)``."""
    _global_step_pre_hooks.append(hook)
    return RemovableHandle(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    _global_step_post_hooks.append(hook)
    return RemovableHandle(_global_step_post_hooks, hook)


def _with_step_hooks(step):
    """``step`` running the step hooks around it, in PyTorch's order: global then the optimizer's pre hooks, the
    step, the optimizer's then global post hooks. Every ``step`` an Optimizer class defines is wrapped so."""
    @functools.wraps(step)
    def hooked_step(*args, **kwargs):          # args[0] is the optimizer: hooks see it among the args, as PyTorch's
        self = args[0]
        if self.__dict__.get("_stepping"):     # a subclass's step calling super().step(): the hooks ran once
            return step(*args, **kwargs)
        self._stepping = True
        try:
            return _run_step_hooks(step, self, args, kwargs)
        finally:
            self._stepping = False
    hooked_step.has_step_hooks = True
    return hooked_step


def _run_step_hooks(step, self, args, kwargs):
    for hook in [*_global_step_pre_hooks, *self._step_hooks[0]]:
        result = hook(self, args, kwargs)
        if result is not None:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but got "
                                   f"{result}.")
            args, kwargs = result
    out = step(*args, **kwargs)
    for hook in [*self._step_hooks[1], *_global_step_post_hooks]:
        hook(self, args, kwargs)
    return out


class _ArrayMismatch(str):
    """``Optimizer._state_error``'s phrase for an array entry of the wrong shape or dtype kind."""


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of 'params' plus hyperparameters) and ``state``.

    ``params`` is an iterable of Parameters (one group) or of dicts, each a group whose missing
    hyperparameters are filled from ``defaults``.
    """

    # hook lists (class-level empty defaults, so that an instance made without __init__ has them too)
    _step_hooks = ((), ())                     # (pre, post): hook(optimizer, args, kwargs)
    _state_dict_hooks = ((), ())               # (pre: hook(optimizer), post: hook(optimizer, state_dict))
    _load_state_dict_hooks = ((), ())          # (pre: hook(optimizer, state_dict), post: hook(optimizer))

    # PyTorch's names: the types of step hooks, and the decorator that runs them around a step (every ``step`` an
    # Optimizer subclass defines gets it already; applying it again adds nothing)
    OptimizerPreHook = Callable[["Optimizer", tuple, dict], Optional[tuple]]
    OptimizerPostHook = Callable[["Optimizer", tuple, dict], None]
    profile_hook_step = staticmethod(lambda step: step if getattr(step, "has_step_hooks", False)
                                     else _with_step_hooks(step))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "has_step_hooks", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self._step_hooks, self._state_dict_hooks, self._load_state_dict_hooks = ([], []), ([], []), ([], [])
        self.defaults = defaults
        self.state = defaultdict(dict)  # Parameter -> its state dict
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with 'params'), filling unspecified options from the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        # ``model.named_parameters()``: (name, parameter) pairs; the names go to 'param_names' (kept in state_dicts)
        names = [param[0] for param in params if isinstance(param, tuple)]
        params = [param[1] if isinstance(param, tuple) else param for param in params]
        if names and len(names) != len(params):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}")
            if param.grad_fn is not None:
                if param_group.get("differentiable", self.defaults.get("differentiable")):
                    raise NotImplementedError("differentiable=True with a non-leaf parameter (autograd through the "
                                              "optimizer step) is not implemented in minigrad")
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in group) != bool(names):
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{'with' if names else 'without'} names to the optimizer")
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        group = {**self.defaults, **param_group, "params": params}
        if names:
            group["param_names"] = names
        if isinstance(group.get("lr"), Tensor) and group["lr"].numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group):
        """Validate one group's hyperparameters (subclasses raise PyTorch's ValueErrors)."""

    def zero_grad(self, set_to_none=True):
        """Drop (``set_to_none=True``) or zero in place the ``.grad`` of every parameter."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    param.grad.detach_()
                    param.grad.zero_()

    def _params_with_grad(self, group):
        return [p for p in group["params"] if p.grad is not None]

    def step(self, closure=None):
        """Update every parameter that has a gradient; ``closure`` re-evaluates and returns the loss.

        All or nothing: every group's hyperparameters, every gradient (a Tensor of its parameter's shape
        and dtype) and every parameter's existing state are checked before the first parameter, state
        value or step count changes, so a failed step leaves the model and the optimizer as they were.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._check_step_inputs()
        with no_grad():  # parameters change in place, outside the graph (each write bumps their version)
            for group in self.param_groups:
                self._update_as_real(_as_numbers(group), self._params_with_grad(group))
        return loss

    _takes_complex = True   # False where PyTorch refuses complex parameters (the subclass raises)

    def _update_as_real(self, group, params):
        """``_update_group``, with each complex parameter updated as PyTorch updates it: as the real tensor of its
        (real, imaginary) pairs (``view_as_real``), its gradient and state viewed the same way. So Adam's second
        moment squares each part (not ``|g|^2``) and Rprop steps each part by its own size. The views share the
        parameter's memory and version counter; state made meanwhile is turned back into complex tensors."""
        moved, views = [], []
        for p in params:
            if not (self._takes_complex and p.is_complex()):
                views.append(p)
                continue
            real = view_as_real(p)
            real.grad = view_as_real(p.grad)
            originals = dict(self.state[p]) if p in self.state else {}
            self.state[real] = {name: _real_entry(value, p) for name, value in originals.items()}
            moved.append((p, real, originals))
            views.append(real)
        try:
            self._update_group(group, views)
        finally:
            for p, real, originals in moved:
                entries = self.state.pop(real)
                if entries or p in self.state:
                    self.state[p] = {name: _complex_entry(value, p, originals.get(name))
                                     for name, value in entries.items()}

    def _check_step_inputs(self):
        """Raise (TypeError for a non-Tensor gradient, RuntimeError otherwise) before ``step`` changes anything."""
        for g, group in enumerate(self.param_groups):
            self._check_group(group)  # hyperparameters may have been edited since construction
            self._check_flags(group)
            for i, param in enumerate(group["params"]):
                where = f"param_groups[{g}]['params'][{i}]"
                grad = param.grad
                if grad is None:
                    continue
                if not isinstance(grad, Tensor):
                    raise TypeError(f"optimizer step: the .grad of {where} must be a Tensor or None, got "
                                    f"{type(grad).__name__}; nothing was updated")
                if grad.shape != param.shape or grad.dtype != param.dtype:
                    raise RuntimeError(f"optimizer step: the .grad of {where} has shape {list(grad.shape)} and "
                                       f"dtype {grad.dtype}, but the parameter has shape {list(param.shape)} and "
                                       f"dtype {param.dtype}; nothing was updated")
                if grad.is_sparse:
                    refusal = self._sparse_gradient_error(group)
                    if refusal:
                        raise RuntimeError(refusal)
                if param in self.state:
                    error = self._state_error(param, self.state[param], group)
                    if error:
                        raise RuntimeError(f"optimizer step: the state of {where} {error}; nothing was updated")

    def _sparse_gradient_error(self, group):
        """PyTorch's refusal of a sparse gradient (``embedding(..., sparse=True)``) in ``group``, or None where this
        optimizer takes one (SGD, Adagrad, SparseAdam, LBFGS override it)."""
        return f"{type(self).__name__} does not support sparse gradients"

    # what PyTorch 2.13 on the CPU says about the flags when a step runs
    _capturable_state = "params and state_steps"
    _capturable_devices = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"

    def _check_flags(self, group):
        """``capturable=True`` needs an accelerator (PyTorch's AssertionError); ``differentiable=True`` makes
        the step an in-place write recorded by autograd (PyTorch turns grad mode on for it, even under no_grad),
        refused on leaves that require grad."""
        params = self._params_with_grad(group)
        if group.get("capturable") and params:
            raise AssertionError(f"If capturable=True, {self._capturable_state} must be on supported devices: "
                                 f"{self._capturable_devices}.")
        if group.get("differentiable") and any(p.requires_grad for p in params):
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")

    def _required_state(self, group):
        """The names a parameter's state must hold once its first step has made it (subclasses)."""
        return ()

    def _state_error(self, param, state, group):
        """Why ``state`` cannot be the state of ``param`` in ``group`` (a phrase; an ``_ArrayMismatch`` if an
        array entry has the wrong shape or dtype), or None if it can.

        Scalar entries ('step', NAdam's 'mu_product') are one finite, non-negative real number; every
        other array entry has the parameter's shape and a floating dtype of its kind (real or complex).
        """
        if not isinstance(state, dict):
            return f"must be a dict, got {type(state).__name__}"
        required = self._required_state(group) if state else ()
        missing = [name for name in required if name not in state]
        if missing:
            return f"lacks {', '.join(repr(m) for m in missing)} (it holds {sorted(map(str, state))})"
        for name, value in state.items():
            if name in _SCALAR_STATE:
                number = _scalar_value(value)
                if number is None:
                    return f"has {name!r} = {_describe(value)}, expected one finite non-negative real number"
            elif isinstance(value, (Tensor, np.ndarray)):
                array = value._values() if getattr(value, "is_sparse", False) else value   # (SGD's sparse momentum)
                array = array._data if isinstance(array, Tensor) else array
                shape = tuple(value.shape)
                kind = dtypes.kind_of(param._data.dtype)
                if shape != tuple(param.shape) or dtypes.kind_of(array.dtype) != kind:
                    return _ArrayMismatch(f"has {name!r} of shape {list(shape)} and dtype {array.dtype}, "
                                          f"expected shape {list(param.shape)} and a {_KIND_NAMES[kind]} dtype")
            elif name in required or not (value is None or isinstance(value, (bool, int, float, str))):
                return f"has {name!r} = {_describe(value)}, expected a Tensor"
        return None

    def _update_group(self, group, params):
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each ``step``; it may return ``(new_args, new_kwargs)``."""
        return self._add_hook(self._step_hooks[0], hook, False)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._add_hook(self._step_hooks[1], hook, False)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return self._add_hook(self._state_dict_hooks[0], hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` on the dict ``state_dict`` built; a returned dict replaces it."""
        return self._add_hook(self._state_dict_hooks[1], hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` before loading; a returned dict is loaded instead."""
        return self._add_hook(self._load_state_dict_hooks[0], hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after ``load_state_dict`` has loaded."""
        return self._add_hook(self._load_state_dict_hooks[1], hook, prepend)

    @staticmethod
    def _add_hook(hooks, hook, prepend):
        hooks.insert(0, hook) if prepend else hooks.append(hook)
        return RemovableHandle(hooks, hook)

    # ------------------------------------------------------------------ state_dict
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` as in PyTorch.

        Parameters are replaced by their position in the concatenated groups. Like PyTorch, the state
        values are the live tensors: ``copy.deepcopy`` the result to snapshot it. The state_dict hooks run
        before and after.
        """
        for hook in list(self._state_dict_hooks[0]):
            hook(self)
        index_of = {}
        packed_groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        packed_state = {index_of[id(p)] if isinstance(p, Tensor) else p: s for p, s in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": packed_groups}
        for hook in list(self._state_dict_hooks[1]):
            state_dict = _replaced(hook(self, state_dict), state_dict)
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore hyperparameters and state saved by ``state_dict()`` (values are copied, not shared).

        All or nothing: the groups (count, sizes, parameter indices), the hyperparameters, and every
        parameter's state (the entries its optimizer needs, each a numeric Tensor or ndarray of the
        parameter's shape; 'step' one finite non-negative number) are checked before anything changes.
        Missing 'state'/'param_groups' raise KeyError, wrong types TypeError, wrong sizes or values
        ValueError. Floating state tensors are cast to their parameter's dtype, except 'step'. The
        load_state_dict hooks run before and after.
        """
        for hook in list(self._load_state_dict_hooks[0]):
            state_dict = _replaced(hook(self, state_dict), state_dict)
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Optimizer.load_state_dict expects a dict with 'state' and 'param_groups', got "
                            f"{type(state_dict).__name__}")
        saved_groups, saved_state = state_dict["param_groups"], state_dict["state"]
        if not isinstance(saved_groups, (list, tuple)) or not all(isinstance(g, Mapping) for g in saved_groups):
            raise TypeError(f"state_dict['param_groups'] must be a list of dicts, got {_describe(saved_groups)}")
        if not isinstance(saved_state, Mapping):
            raise TypeError(f"state_dict['state'] must be a dict, got {_describe(saved_state)}")
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for i, saved in enumerate(saved_groups):
            indices = saved["params"]
            if not isinstance(indices, (list, tuple)) or not all(_is_int(k) for k in indices):
                raise TypeError(f"state_dict['param_groups'][{i}]['params'] must be a list of ints, got "
                                f"{_describe(indices)}")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        saved_indices = list(chain.from_iterable(g["params"] for g in saved_groups))
        if len(set(saved_indices)) != len(saved_indices):
            raise ValueError(f"loaded state dict lists a parameter index twice: {saved_indices}")
        # options missing from an older state_dict keep this optimizer's defaults (PyTorch's __setstate__)
        groups = [{**self.defaults, **_names_of(group),
                   **copy.deepcopy({k: v for k, v in saved.items() if k != "params"}), "params": group["params"]}
                  for group, saved in zip(self.param_groups, saved_groups)]
        for group in groups:
            self._check_group(group)
        param_of = dict(zip(saved_indices, chain.from_iterable(g["params"] for g in self.param_groups)))
        group_of = {id(p): group for group in groups for p in group["params"]}
        state = defaultdict(dict)
        for key, values in saved_state.items():
            if key not in param_of:
                state[key] = copy.deepcopy(values)
                continue
            param = param_of[key]
            if not isinstance(values, Mapping):
                raise TypeError(f"state_dict['state'][{key!r}] must be a dict, got {_describe(values)}")
            error = self._state_error(param, dict(values), group_of[id(param)])
            if error:  # a moment of the wrong shape or dtype: RuntimeError, what PyTorch raises at its next step
                kind = RuntimeError if isinstance(error, _ArrayMismatch) else ValueError
                raise kind(f"state_dict['state'][{key!r}] {error}")
            state[param] = {name: self._restore_value(param, name, v) for name, v in values.items()}
        self.state = state
        self.param_groups = groups
        for hook in list(self._load_state_dict_hooks[1]):
            hook(self)

    @staticmethod
    def _restore_value(param, name, value):
        if name in _SCALAR_STATE:  # a 0-d tensor; the plain number older checkpoints hold gets PyTorch's scalar dtype
            array = np.asarray(value._data if isinstance(value, Tensor) else value)
            floating = isinstance(value, (Tensor, np.ndarray)) and dtypes.is_floating_point(array.dtype)
            return Tensor(np.array(array.reshape(()), dtype=array.dtype if floating else _scalar_tensor(0.0).dtype))
        if getattr(value, "is_sparse", False):                                      # SGD's sparse momentum
            return value.to(param.dtype).clone()
        if isinstance(value, (Tensor, np.ndarray)):
            array = np.array(value._data if isinstance(value, Tensor) else value)  # a copy
            if dtypes.is_floating_point(array.dtype):
                array = array.astype(param._data.dtype, copy=False)
            return Tensor(array)
        return copy.deepcopy(value)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"


Optimizer.step = _with_step_hooks(Optimizer.step)   # (subclasses' own steps are wrapped by __init_subclass__)
