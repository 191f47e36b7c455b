"""RMSprop (Hinton's lecture 6e), with PyTorch's momentum and centered variants."""
import numpy as np

from ..tensor import Tensor
from ._moments import (check_non_negative, decay_square_, effective_grad, increment_step, lerp_, ratio,
                       speed_flags, zeros_state)
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """PyTorch's RMSprop, for each parameter p with gradient g:

        g = -g if maximize;  g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g                       'square_avg'
        centered:  m = lerp(m, g, 1 - alpha)                      'grad_avg'
                   avg = sqrt(v - m * m) + eps
        otherwise: avg = sqrt(v) + eps
        momentum > 0:  b = momentum * b + g / avg;  p = p - lr * b    'momentum_buffer'
        otherwise:     p = p - lr * g / avg

    ``state[p]`` holds 'step', 'square_avg', and 'momentum_buffer' / 'grad_avg' when used.
    ``foreach`` is accepted and ignored (a speed option in PyTorch).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, maximize=maximize,
                        **speed_flags(capturable=capturable, foreach=foreach, differentiable=differentiable))
        super().__init__(params, defaults)

    def _check_group(self, group):
        check_non_negative(group, "lr", "eps", "momentum", "weight_decay", "alpha")

    def _required_state(self, group):
        return ("step", "square_avg", *(["momentum_buffer"] if group["momentum"] > 0 else []),
                *(["grad_avg"] if group["centered"] else []))

    def _update_group(self, group, params):
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        for p in params:
            grad = effective_grad(group, p)
            state = self.state[p]
            if not state:
                state.update(zeros_state(p, *self._required_state(group)[1:]))  # all but 'step'
            increment_step(state)
            square_avg = state["square_avg"]._data
            decay_square_(square_avg, grad, alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"]._data
                lerp_(grad_avg, grad, 1 - alpha)
                avg = np.sqrt(square_avg - grad_avg * grad_avg)      # addcmul(m, m, value=-1).sqrt_()
            else:
                avg = np.sqrt(square_avg)
            avg += eps
            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                buf += grad / avg
                p.add_(Tensor(buf), alpha=-lr)
            else:
                p.add_(ratio(grad, avg, -lr))
