"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993), PyTorch's variant."""
import numpy as np

from ..tensor import Tensor
from ._moments import increment_step, speed_flags
from .optimizer import Optimizer, _scalar_tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """PyTorch's Rprop: each element has its own step size, grown while the gradient keeps its sign and
    shrunk when it flips. For each parameter p with gradient g (negated if ``maximize``), element-wise:

        g * prev > 0:  step_size = min(step_size * etaplus, step_size_max)
        g * prev < 0:  step_size = max(step_size * etaminus, step_size_min);  g = 0
        otherwise:     step_size unchanged
        p = p - sign(g) * step_size;  prev = g

    ``state[p]`` holds 'step', 'prev' (the last gradient used, 0 after a sign flip) and 'step_size'
    (starting at ``lr``). A complex parameter steps each of its real and imaginary parts
    (``Optimizer._update_as_real``).
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize,
                        **speed_flags(foreach=foreach, differentiable=differentiable, capturable=capturable))
        super().__init__(params, defaults)

    def _check_group(self, group):
        if not 0.0 <= group["lr"]:
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")

    def _required_state(self, group):
        return ("step", "prev", "step_size")

    def _update_group(self, group, params):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = _scalar_tensor(0.0)
                state["prev"] = Tensor(np.zeros_like(p._data))
                state["step_size"] = Tensor(np.full_like(p.grad._data, group["lr"]))
            increment_step(state)
            grad = -p.grad._data if group["maximize"] else p.grad._data
            prev, step_size = state["prev"]._data, state["step_size"]._data
            grad = np.array(grad, copy=True)
            factor = np.multiply(grad, prev, out=np.empty_like(grad))
            np.sign(factor, out=factor)              # +1: same sign, -1: flipped, 0: a zero (NaN stays NaN)
            factor[factor > 0] = etaplus
            factor[factor < 0] = etaminus
            factor[factor == 0] = 1
            step_size *= factor
            np.clip(step_size, step_size_min, step_size_max, out=step_size)
            grad[factor == etaminus] = 0             # after a sign flip: no move, and no flip seen next time
            update = np.sign(grad, out=np.empty_like(grad))
            update *= step_size
            np.negative(update, out=update)
            p.add_(Tensor(update))
            prev[...] = grad

