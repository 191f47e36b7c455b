"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and PyTorch-format state_dicts.

Subclasses implement ``step()``: for each group, for each parameter with a gradient, update
``p`` in place (``p.add_``, under ``no_grad``) from ``p.grad`` and ``self.state[p]``.
"""
import copy
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from .. import dtypes
from ..autograd import enable_grad, no_grad
from ..tensor import Tensor

__all__ = ["Optimizer"]


def _scalar_tensor(value):
    """A 0-d step counter with PyTorch's dtype: float64 if that is the default dtype, else float32."""
    dtype = dtypes.float64 if dtypes.get_default_dtype() == dtypes.float64 else dtypes.float32
    return Tensor(np.asarray(value, dtype=dtype))


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of 'params' plus hyperparameters) and ``state``.

    ``params`` is an iterable of Parameters (one group) or of dicts, each a group whose missing
    hyperparameters are filled from ``defaults``.
    """

    def __init__(self, params, defaults):
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
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}")
            if param.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        group = {**self.defaults, **param_group, "params": params}
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
        """Update every parameter that has a gradient; ``closure`` re-evaluates and returns the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():  # parameters change in place, outside the graph (each write bumps their version)
            for group in self.param_groups:
                self._update_group(group, self._params_with_grad(group))
        return loss

    def _update_group(self, group, params):
        raise NotImplementedError

    # ------------------------------------------------------------------ state_dict
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` as in PyTorch.

        Parameters are replaced by their position in the concatenated groups. Like PyTorch, the state
        values are the live tensors: ``copy.deepcopy`` the result to snapshot it.
        """
        index_of = {}
        packed_groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        packed_state = {index_of[id(p)] if isinstance(p, Tensor) else p: s for p, s in self.state.items()}
        return {"state": packed_state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict):
        """Restore hyperparameters and state saved by ``state_dict()`` (values are copied, not shared).

        Floating state tensors are cast to their parameter's dtype, except 'step'; values may be
        Tensors or ndarrays.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        param_of = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                            chain.from_iterable(g["params"] for g in self.param_groups)))
        state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = {name: self._restore_value(param, name, v) for name, v in values.items()}
            else:
                state[key] = copy.deepcopy(values)
        self.state = state
        # options missing from an older state_dict keep this optimizer's defaults (PyTorch's __setstate__)
        self.param_groups = [{**self.defaults, **copy.deepcopy({k: v for k, v in saved.items() if k != "params"}),
                              "params": group["params"]}
                             for group, saved in zip(self.param_groups, saved_groups)]

    @staticmethod
    def _restore_value(param, name, value):
        if isinstance(value, (Tensor, np.ndarray)):
            array = np.array(value._data if isinstance(value, Tensor) else value)  # a copy
            if name != "step" and array.dtype.kind == "f":
                array = array.astype(param._data.dtype, copy=False)
            return Tensor(array)
        return copy.deepcopy(value)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"
