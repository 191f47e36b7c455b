"""Adagrad (Duchi et al., 2011) and Adadelta (Zeiler, 2012): per-coordinate step sizes from accumulated
squared gradients."""
import numpy as np

from ..sparse import gradients as sparse_gradients
from ..tensor import Tensor
from ._moments import (check_non_negative, decay_square_, effective_grad, increment_step, ratio,
                       speed_flags, zeros_state)
from .optimizer import Optimizer

__all__ = ["Adagrad", "Adadelta"]


class Adagrad(Optimizer):
    """PyTorch's Adagrad, for each parameter p with gradient g at step t:

        g = -g if maximize;  g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                                   'sum' (starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    As in PyTorch, the state ('step', 'sum') of every parameter exists from construction on.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, maximize=maximize,
                        **speed_flags(foreach=foreach, differentiable=differentiable, fused=fused))
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _check_group(self, group):
        check_non_negative(group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")

    def _required_state(self, group):
        return ("step", "sum")

    def _init_state(self, p, group):
        state = self.state[p]
        if not state:
            state.update(zeros_state(p, "sum", fill=group["initial_accumulator_value"], fused=group["fused"]))
        return state

    def _sparse_gradient_error(self, group):
        return "weight_decay option is not compatible with sparse gradients" if group["weight_decay"] != 0 else None

    def _update_group(self, group, params):
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        for p in params:
            state = self._init_state(p, group)
            step = increment_step(state)
            clr = lr / (1 + (step - 1) * lr_decay)
            if p.grad.is_sparse:
                self._sparse_update(group, p, state, clr)
                continue
            grad = effective_grad(group, p)
            sum_sq = state["sum"]._data
            sum_sq += grad * grad
            std = np.sqrt(sum_sq)
            std += eps
            p.add_(ratio(grad, std, -clr))

    @staticmethod
    def _sparse_update(group, p, state, clr):
        """The same update on the rows a sparse gradient lists (coalesced first, as the update is not linear); the
        other rows' gradient is zero, and so is their change."""
        at, values = sparse_gradients.coalesced(p.grad)                                # (nnz,), (nnz, *dense)
        if group["maximize"]:
            values = -values
        with sparse_gradients.rows(state["sum"]._data, p.grad) as sum_sq:             # (positions, *dense)
            sum_sq[at] += values * values
            std = np.sqrt(sum_sq[at])
        std += group["eps"]
        p.add_(sparse_gradients.on_positions(p.grad, at, values / std), alpha=-clr)


class Adadelta(Optimizer):
    """PyTorch's Adadelta, for each parameter p with gradient g:

        g = -g if maximize;  g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g                              'square_avg'
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta                      'acc_delta'
        p = p - lr * delta
    """

    _capturable_devices = "['cuda', 'xpu', 'hpu', 'privateuseone']"   # PyTorch's list for Adadelta

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        **speed_flags(foreach=foreach, capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def _check_group(self, group):
        check_non_negative(group, "lr")
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        check_non_negative(group, "eps", "weight_decay")

    def _required_state(self, group):
        return ("step", "square_avg", "acc_delta")

    def _update_group(self, group, params):
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p in params:
            state = self.state[p]
            if not state:
                state.update(zeros_state(p, "square_avg", "acc_delta"))
            increment_step(state)
            grad = effective_grad(group, p)
            square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
            decay_square_(square_avg, grad, rho)
            std = np.sqrt(square_avg + eps)
            delta = np.sqrt(acc_delta + eps)
            delta /= std
            delta *= grad
            decay_square_(acc_delta, delta, rho)
            p.add_(Tensor(delta), alpha=-lr)
