"""Stochastic gradient descent with optional momentum, dampening, Nesterov and L2 weight decay."""
import numpy as np

from ..sparse import gradients as sparse_gradients
from ..tensor import Tensor
from ._moments import check_non_negative, speed_flags
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's SGD, step by step for each parameter p with gradient g:

        g = -g if maximize;  g = g + weight_decay * p
        buf = g (first step)  or  momentum * buf + (1 - dampening) * g      (if momentum != 0)
        g = g + momentum * buf (nesterov)  or  buf
        p = p - lr * g
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize,
                        **speed_flags(foreach=foreach, differentiable=differentiable, fused=fused))
        super().__init__(params, defaults)

    def _check_group(self, group):
        check_non_negative(group, "lr", "momentum", "weight_decay", nan_ok=True)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _sparse_gradient_error(self, group):
        if group["weight_decay"] != 0:                   # PyTorch's error from adding the dense decay term
            return "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
        return None

    def _check_step_inputs(self):
        """A dense gradient cannot be added to a sparse momentum buffer (PyTorch's error, raised before any change)."""
        super()._check_step_inputs()
        for group in self.param_groups:
            for p in self._params_with_grad(group):
                buf = self.state[p].get("momentum_buffer") if p in self.state else None
                if group["momentum"] != 0 and getattr(buf, "is_sparse", False) and not p.grad.is_sparse:
                    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    def _update_group(self, group, params):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p in params:
            if p.grad.is_sparse:
                self._sparse_update(group, p)
                continue
            grad = -p.grad._data if group["maximize"] else p.grad._data
            if weight_decay != 0:
                grad = grad + weight_decay * p._data
            if momentum != 0:
                state = self.state[p]
                if state.get("momentum_buffer") is None:  # the first step starts the buffer at the gradient
                    state["momentum_buffer"] = Tensor(np.array(grad, copy=True))
                else:
                    state["momentum_buffer"]._data *= momentum
                    state["momentum_buffer"]._data += (1 - dampening) * grad
                buf = state["momentum_buffer"]._data
                grad = grad + momentum * buf if nesterov else buf
            p.add_(Tensor(grad), alpha=-lr)

    def _sparse_update(self, group, p):
        """The same update for a sparse gradient (``embedding(..., sparse=True)``), touching only the rows it lists.
        The momentum buffer starts sparse, as PyTorch's (kept coalesced here), and stays dense once dense; a dense
        gradient meeting a sparse buffer is refused (``_check_step_inputs``), as in PyTorch."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        grad = -p.grad if group["maximize"] else p.grad
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.clone()
            elif buf.is_sparse:
                buf = sparse_gradients.on_positions(grad, *sparse_gradients.coalesced(buf * momentum +
                                                                                     grad * (1 - dampening)))
            else:
                buf._data *= momentum
                sparse_gradients.add_into(buf._data, grad, 1 - dampening)
            state["momentum_buffer"] = buf
            if not group["nesterov"]:
                grad = buf
            elif buf.is_sparse:
                grad = grad + buf * momentum
            else:
                grad = Tensor(sparse_gradients.add_into(buf._data * momentum, grad))
        p.add_(grad, alpha=-lr)
