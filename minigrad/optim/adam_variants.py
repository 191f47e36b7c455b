"""Adam's relatives: Adamax (Kingma & Ba, 2015, section 7), NAdam (Dozat, 2016) and RAdam (Liu et al., 2020),
in PyTorch's operation order."""
import numpy as np

from ..tensor import Tensor
from ._moments import (check_betas, check_non_negative, decay_square_, decay_weights_, effective_grad,
                       increment_step, lerp_, ratio, speed_flags, zeros_state)
from .optimizer import Optimizer, _scalar_tensor

__all__ = ["Adamax", "NAdam", "RAdam"]


class _AdamFamily(Optimizer):
    """Shared validation (lr, eps, betas, weight_decay in PyTorch's order) and the moment buffers' state."""
    _state_names = ("exp_avg", "exp_avg_sq")

    def _check_group(self, group):
        check_non_negative(group, "lr", "eps")
        check_betas(group)
        check_non_negative(group, "weight_decay")

    def _required_state(self, group):
        return ("step", *self._state_names)

    def _state(self, p):
        state = self.state[p]
        if not state:
            state.update(zeros_state(p, *self._state_names))
        return state

    def _each_param(self, group, params):
        """For each parameter: (p, the gradient the update sees, p's state, the new step count)."""
        for p in params:
            grad = effective_grad(group, p)
            state = self._state(p)
            yield p, grad, state, increment_step(state)


class Adamax(_AdamFamily):
    """Adam with the infinity norm, for each parameter p with gradient g at step t:

        g = -g if maximize;  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1)                        'exp_avg'
        u = max(beta2 * u, |g| + eps)                    'exp_inf'
        p = p - lr / (1 - beta1**t) * m / u
    """
    _state_names = ("exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      **speed_flags(foreach=foreach, capturable=capturable,
                                                    differentiable=differentiable)))

    def _update_group(self, group, params):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p, grad, state, step in self._each_param(group, params):
            exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
            lerp_(exp_avg, grad, 1 - beta1)
            exp_inf *= beta2
            magnitude = np.abs(grad)
            magnitude += eps
            np.maximum(exp_inf, magnitude, out=exp_inf)
            p.add_(ratio(exp_avg, exp_inf, -(lr / (1 - beta1 ** step))))


class NAdam(_AdamFamily):
    """Adam with Nesterov momentum and a momentum schedule, for each parameter p with gradient g at step t:

        g = -g if maximize
        p = p * (1 - lr * weight_decay)  if decoupled_weight_decay,  else  g = g + weight_decay * p
        mu_t = beta1 * (1 - 0.96**(t * momentum_decay) / 2);   P_t = P_{t-1} * mu_t      'mu_product'
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - P_t) * g / denom - lr * mu_{t+1} / (1 - P_t * mu_{t+1}) * m / denom

    'mu_product' is a 0-d tensor of the step's dtype (float32 unless the default dtype is float64), multiplied
    in that dtype as in PyTorch.
    """

    _capturable_state = "params, mu_products and state_steps"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, **speed_flags(foreach=foreach, capturable=capturable,
                                                                       differentiable=differentiable)))

    def _check_group(self, group):
        super()._check_group(group)
        check_non_negative(group, "momentum_decay")

    def _required_state(self, group):
        return ("step", "mu_product", *self._state_names)

    def _state(self, p):
        state = self.state[p]
        if not state:
            state.update(step=_scalar_tensor(0.0), mu_product=_scalar_tensor(1.0))
            state.update((name, Tensor(np.zeros_like(p._data))) for name in self._state_names)
        return state

    def _update_group(self, group, params):
        lr, (beta1, beta2), eps, psi = group["lr"], group["betas"], group["eps"], group["momentum_decay"]
        for p, grad, state, step in self._each_param(group, params):
            bias_correction2 = 1 - beta2 ** step
            decay_weights_(group, p)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
            state["mu_product"]._data *= mu
            mu_product = state["mu_product"].item()
            mu_product_next = mu_product * mu_next
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            lerp_(exp_avg, grad, 1 - beta1)
            decay_square_(exp_avg_sq, grad, beta2)
            denom = np.sqrt(exp_avg_sq / bias_correction2)
            denom += eps
            p.add_(ratio(grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product)))
            p.add_(ratio(exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next)))


class RAdam(_AdamFamily):
    """Adam with a rectified adaptive step, for each parameter p with gradient g at step t:

        g = -g if maximize
        p = p * (1 - lr * weight_decay)  if decoupled_weight_decay,  else  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
                    p = p - m / (1 - beta1**t) * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
        otherwise:  p = p - m / (1 - beta1**t) * lr                     (plain momentum while v is unreliable)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      **speed_flags(foreach=foreach, capturable=capturable,
                                                    differentiable=differentiable),
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update_group(self, group, params):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p, grad, state, step in self._each_param(group, params):
            decay_weights_(group, p)
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            lerp_(exp_avg, grad, 1 - beta1)
            decay_square_(exp_avg_sq, grad, beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            update = exp_avg / bias_correction1
            update *= lr
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                root = np.sqrt(exp_avg_sq)
                root += eps
                update *= bias_correction2 ** 0.5 / root                 # the adaptive lr
                update *= rect
            p.add_(Tensor(update), alpha=-1.0)
