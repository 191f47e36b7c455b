"""Adafactor (Shazeer & Stern, 2018), as PyTorch (2.5+) implements it: factored second moments for matrices,
a relative step size, update clipping, and no first moment."""
import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._moments import increment_step, lerp_, speed_flags
from .optimizer import Optimizer, _ArrayMismatch, _scalar_tensor

__all__ = ["Adafactor"]

_SECOND_MOMENTS = ("row_var", "col_var", "variance")


def _norm(array):
    """The 2-norm of an array, as a Python float."""
    return float(np.sqrt(np.vdot(array, array)))


class Adafactor(Optimizer):
    """PyTorch's Adafactor. For each parameter p with gradient g (negated if ``maximize``), at step t:

        beta2_t = 1 - t**beta2_decay;  rho_t = min(lr, 1 / sqrt(t))
        alpha = max(eps2, RMS(p)) * rho_t                     (relative step size, before the weight decay)
        p = p * (1 - lr * weight_decay)
        p a matrix (or batch of matrices, dim > 1): second moments factored into the last two axes,
            R = lerp(R, mean(g**2 over the last axis), 1 - beta2_t)          'row_var'  (..., m, 1)
            C = lerp(C, mean(g**2 over the second-last axis), 1 - beta2_t)   'col_var'  (..., 1, n)
            v = R @ C / max(mean(R over the rows), eps1)
        otherwise:  v = lerp(v, g * g, 1 - beta2_t)                         'variance'
        u = g / sqrt(max(v, eps1**2))
        p = p - alpha / max(1, RMS(u) / d) * u

    ``eps1`` None means the machine epsilon of the group's first parameter's dtype (as PyTorch, which then keeps
    it for the rest of the group). ``state[p]`` holds 'step' and 'row_var'/'col_var' or 'variance'.
    Complex parameters are refused, as in PyTorch.
    """

    _takes_complex = False   # refused at the step, as PyTorch refuses it

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        **speed_flags(foreach=foreach), maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        eps1, eps2 = group["eps"]
        if not 0.0 <= group["lr"]:
            raise ValueError(f"Learning rate should be >= 0 but is: {group['lr']}")
        if not 0.0 >= group["beta2_decay"]:
            raise ValueError(f"beta2_decay should be <= 0 but is: {group['beta2_decay']}")
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps1}")
        if not 0.0 <= eps2:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps2}")
        if not 1.0 <= group["d"]:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {group['d']}")
        if not 0.0 <= group["weight_decay"]:
            raise ValueError(f"weight_decay should be >= 0 but is: {group['weight_decay']}")

    def _check_step_inputs(self):
        super()._check_step_inputs()
        for group in self.param_groups:
            if any(p.is_complex() for p in self._params_with_grad(group)):
                raise RuntimeError("Adafactor does not support complex parameters")

    @staticmethod
    def _moment_shapes(param):
        """The second-moment buffers of ``param`` and their shapes: factored for dim > 1."""
        shape = tuple(param.shape)
        if len(shape) > 1:
            return {"row_var": shape[:-1] + (1,), "col_var": shape[:-2] + (1, shape[-1])}
        return {"variance": shape}

    def _required_state(self, group):
        return ("step",)

    def _state_error(self, param, state, group):
        """The base checks for 'step', plus: the second moments of ``param``'s kind, each of its shape."""
        if not isinstance(state, dict):
            return super()._state_error(param, state, group)
        error = super()._state_error(param, {k: v for k, v in state.items() if k not in _SECOND_MOMENTS}, group)
        if error or not state:
            return error
        expected = self._moment_shapes(param)
        missing = [name for name in expected if name not in state]
        if missing:
            return f"lacks {', '.join(repr(m) for m in missing)} (it holds {sorted(map(str, state))})"
        for name in _SECOND_MOMENTS:
            if name not in state:
                continue
            value = state[name]
            if not isinstance(value, (Tensor, np.ndarray)):
                return f"has {name!r} of type {type(value).__name__}, expected a Tensor"
            array = value._data if isinstance(value, Tensor) else value
            if name not in expected or array.shape != expected[name] or not dtypes.is_floating_point(array.dtype):
                return _ArrayMismatch(f"has {name!r} of shape {list(array.shape)} and dtype {array.dtype}, expected "
                                      f"{'no ' + repr(name) if name not in expected else list(expected[name])} "
                                      "and a floating-point dtype")
        return None

    def _update_group(self, group, params):
        lr, beta2_decay, d, weight_decay = group["lr"], group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for p in params:
            grad = -p.grad._data if group["maximize"] else p.grad._data
            state = self.state[p]
            if not state:
                state["step"] = _scalar_tensor(0.0)
                for name, shape in self._moment_shapes(p).items():
                    state[name] = Tensor(np.zeros(shape, dtype=grad.dtype))
            if eps1 is None:
                eps1 = float(dtypes.float_info(p._data.dtype).eps)
            step = increment_step(state)
            one_minus_beta2_t = step ** beta2_decay
            rho_t = min(lr, 1 / (step ** 0.5))
            alpha = max(eps2, _norm(p._data) / (p._data.size ** 0.5)) * rho_t      # max(eps2, RMS(p)) * rho_t
            if weight_decay != 0:
                p.mul_(1 - lr * weight_decay)
            if grad.ndim > 1:
                row_var, col_var = state["row_var"]._data, state["col_var"]._data
                row_mean = np.square(np.sqrt(np.sum(grad * grad, axis=-1, keepdims=True))) / grad.shape[-1]
                lerp_(row_var, row_mean, one_minus_beta2_t)
                col_mean = np.square(np.sqrt(np.sum(grad * grad, axis=-2, keepdims=True))) / grad.shape[-2]
                lerp_(col_var, col_mean, one_minus_beta2_t)
                var_estimate = np.matmul(row_var, col_var)
                var_estimate /= np.maximum(np.mean(row_var, axis=-2, keepdims=True), eps1)
            else:
                variance = state["variance"]._data
                lerp_(variance, grad * grad, one_minus_beta2_t)
                var_estimate = np.array(variance, copy=True)
            update = np.asarray(1 / np.sqrt(np.maximum(var_estimate, eps1 * eps1)))
            update *= grad
            denom = max(1.0, _norm(update) / ((update.size ** 0.5) * d))            # max(1, RMS(u) / d)
            p.add_(Tensor(update), alpha=-alpha / denom)
