"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky, 1992), with PyTorch's step-size schedule."""
import numpy as np

from ..tensor import Tensor
from ._moments import check_non_negative, effective_grad, increment_step, speed_flags
from .optimizer import Optimizer, _scalar_tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """PyTorch's ASGD: SGD whose step size eta decays with the step count, plus a running average ``ax`` of the
    iterates (from step ``t0`` on). For each parameter p with gradient g at step t (PyTorch's single-tensor path):

        g = -g if maximize;  g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p  while mu == 1,  else  ax = ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    ``state[p]`` holds 'step', 'eta' and 'mu' (0-d tensors of PyTorch's scalar dtype, so eta is rounded to float32
    unless the default dtype is float64, as in PyTorch) and 'ax', the average. Complex parameters update as pairs of
    reals, which is the same arithmetic.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize,
                        **speed_flags(foreach=foreach, differentiable=differentiable, capturable=capturable))
        super().__init__(params, defaults)

    def _check_group(self, group):
        check_non_negative(group, "lr", "weight_decay")

    def _required_state(self, group):
        return ("step", "eta", "mu", "ax")

    def _update_group(self, group, params):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for p in params:
            state = self.state[p]
            if not state:
                state.update(step=_scalar_tensor(0.0), eta=_scalar_tensor(lr), mu=_scalar_tensor(1.0),
                             ax=Tensor(np.zeros_like(p._data)))
            grad = effective_grad(group, p)
            step = increment_step(state)
            eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]._data
            p.mul_(1 - lambd * eta)                              # decay term
            p.add_(Tensor(grad), alpha=-eta)                     # p = p - eta * g
            if mu != 1:
                ax += np.multiply(np.subtract(p._data, ax), mu)  # ax = ax + mu * (p - ax)
            else:
                ax[...] = p._data
            state["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
            state["mu"]._data[...] = 1 / max(1, step - t0)
