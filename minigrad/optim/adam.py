"""Adam (Kingma & Ba, 2015) and AdamW (Loshchilov & Hutter, 2019), in PyTorch's operation order.

On the numba backend a parameter's step is one pass (kernels/fused_numba.py ``adam_step_``) of the NumPy operations
written out in ``Adam._update_group``, which stay its reference and run for the cases the pass does not cover."""
import numpy as np

from ..autograd.version import bump_tensor
from ..kernels import numba_module
from ..tensor import Tensor
from .optimizer import Optimizer, _scalar_tensor
from ._moments import check_betas, check_non_negative, check_tensor_options, speed_flags

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam with optional L2 weight decay (added to the gradient, or decoupled as in AdamW with
    ``decoupled_weight_decay=True``) and AMSGrad.

    For each parameter p with gradient g, at step t (PyTorch's single-tensor path, same order):

        g = -g if maximize
        p = p * (1 - lr * weight_decay)            AdamW (decoupled)
        g = g + weight_decay * p                    Adam (L2 in the gradient)
        m = m + (1 - beta1) * (g - m)               (PyTorch's lerp)
        v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v
        step_size = lr / (1 - beta1**t)
        denom = sqrt(v_hat) / sqrt(1 - beta2**t) + eps
        p = p - step_size * m / denom

    ``state[p]`` holds 'step' (a 0-d float tensor, as PyTorch keeps it), 'exp_avg' (m), 'exp_avg_sq' (v)
    and with amsgrad 'max_exp_avg_sq'.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, **speed_flags(foreach=foreach, capturable=capturable,
                                                         differentiable=differentiable, fused=fused),
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_group(self, group):
        check_non_negative(group, "lr", "eps")
        check_betas(group)
        check_non_negative(group, "weight_decay")
        check_tensor_options(group)

    def _required_state(self, group):
        return ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _sparse_gradient_error(self, group):
        return "Adam does not support sparse gradients, please consider SparseAdam instead"   # AdamW's words too

    def _init_state(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = _scalar_tensor(0.0, fused=group["fused"])
            state["exp_avg"] = Tensor(np.zeros_like(p._data))
            state["exp_avg_sq"] = Tensor(np.zeros_like(p._data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor(np.zeros_like(p._data))
        return state

    @staticmethod
    def _fusable(p, grad, state, group):
        """Whether ``p``'s step can run as one pass of numba's (kernels/fused_numba.py ``adam_step_``): real float
        arrays of one dtype, each C-contiguous and apart, p writable, weight decay none or decoupled. Else the
        NumPy operations below run (they are the pass's reference)."""
        arrays = [p._data, grad] + [state[name]._data for name in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
                                    if name in state]
        return (p._data.dtype in (np.float32, np.float64) and p._data.flags.writeable
                and (group["weight_decay"] == 0 or group["decoupled_weight_decay"])
                and all(a.dtype == p._data.dtype and a.flags.c_contiguous for a in arrays)
                and not any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]))

    def _update_group(self, group, params):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        fused = numba_module("fused_numba") if not group.get("differentiable") else None
        for p in params:
            grad = -p.grad._data if group["maximize"] else p.grad._data
            state = self._init_state(p, group)
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            state["step"]._data += 1
            if fused is not None and self._fusable(p, grad, state, group):
                decays = weight_decay != 0 and group["decoupled_weight_decay"]
                fused.adam_step_(p._data, grad, exp_avg, exp_avg_sq, state["max_exp_avg_sq"]._data if amsgrad else None,
                                 lr, beta1, beta2, eps, state["step"].item(), 1 - lr * weight_decay if decays else 1)
                for _ in range(2 if decays else 1):     # p.mul_ and p.add_ below each count as a write
                    bump_tensor(p)
                continue
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad + weight_decay * p._data
            # In place with one scratch array (same roundings as the expressions in the docstring).
            scratch = np.subtract(grad, exp_avg, out=np.empty_like(exp_avg))   # an array even for a 0-d p
            scratch *= 1 - beta1
            exp_avg += scratch                                   # m += (1 - beta1) * (g - m)
            np.multiply(grad, 1 - beta2, out=scratch)
            scratch *= grad
            exp_avg_sq *= beta2
            exp_avg_sq += scratch                                # v = beta2 * v + (1 - beta2) * g * g

            step = state["step"].item()
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            if amsgrad:
                np.maximum(state["max_exp_avg_sq"]._data, exp_avg_sq, out=state["max_exp_avg_sq"]._data)
                second_moment = state["max_exp_avg_sq"]._data
            else:
                second_moment = exp_avg_sq
            denom = np.sqrt(second_moment, out=np.empty_like(second_moment))
            denom /= bias_correction2_sqrt
            denom += eps                                         # sqrt(v_hat) / sqrt(1 - beta2**t) + eps
            np.multiply(exp_avg, -step_size, out=scratch)
            scratch /= denom
            p.add_(Tensor(scratch))                               # p -= step_size * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay: p shrinks by ``lr * weight_decay * p`` before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
