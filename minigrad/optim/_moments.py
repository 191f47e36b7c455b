"""In-place NumPy updates of optimizer state buffers, with PyTorch's rounding order.

Each helper names the PyTorch tensor op whose evaluation order it reproduces, so that an update
written with them agrees with PyTorch's single-tensor optimizer path to the last bits.
"""
import numpy as np

from ..tensor import Tensor
from .optimizer import _scalar_tensor

__all__ = ["lerp_", "decay_square_", "ratio", "effective_grad", "increment_step", "zeros_state", "check_betas",
           "check_non_negative", "check_tensor_options", "speed_flags"]


def check_non_negative(group, *names, nan_ok=False):
    """PyTorch's hyperparameter checks: 'Invalid learning rate: -1', 'Invalid momentum value: -1', ...
    NaN fails them too (PyTorch's ``not 0.0 <= lr``), except where PyTorch tests ``lr < 0.0`` (SGD: ``nan_ok``)."""
    labels = {"lr": "learning rate", "eps": "epsilon value"}
    for name in names:
        if group[name] < 0 or (not nan_ok and group[name] != group[name]):
            raise ValueError(f"Invalid {labels.get(name, name + ' value')}: {group[name]}")


def check_betas(group):
    """'Invalid beta parameter at index i: b' unless 0 <= b < 1; betas must be a pair (PyTorch: IndexError)."""
    if len(group["betas"]) != 2:
        raise IndexError(f"betas must be a pair (beta1, beta2), got {tuple(group['betas'])!r}")
    for i, beta in enumerate(group["betas"]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_tensor_options(group):
    """Adam's and AdamW's checks of a Tensor ``lr`` or betas (PyTorch takes them for capturable steps), in PyTorch's
    words: betas both floats or both Tensors, each Tensor one element, and none with ``foreach=True`` unless
    ``capturable``."""
    refused = group.get("foreach") and not group.get("capturable")
    if isinstance(group["lr"], Tensor) and refused:
        raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
    betas = group["betas"]
    if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor) and refused:
            raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
        if isinstance(beta, Tensor) and beta.numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")


def speed_flags(**flags):
    """PyTorch's implementation flags, checked as PyTorch checks them and kept in the defaults (so in every
    group and state_dict) as PyTorch keeps them. On the CPU, PyTorch 2.13 runs ``foreach`` and ``fused``
    (SGD, Adam, AdamW, Adagrad) with the same update as the single-tensor loop minigrad has, so they change
    nothing here; ``capturable=True`` fails at the step, and so does ``differentiable=True`` on leaf parameters
    that require grad (``Optimizer._check_flags``)."""
    if flags.get("fused") and flags.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if flags.get("fused") and flags.get("differentiable"):
        raise RuntimeError("`fused` does not support `differentiable`")
    return flags


def lerp_(avg, target, weight):
    """avg <- avg + weight * (target - avg), as ``torch.lerp_`` evaluates it (from the nearer end)."""
    diff = np.subtract(target, avg)
    if weight < 0.5:
        diff *= weight
        avg += diff
    else:
        diff *= 1 - weight
        np.subtract(target, diff, out=avg)


def decay_square_(avg_sq, grad, beta):
    """avg_sq <- beta * avg_sq + (1 - beta) * grad * grad (``mul_(beta).addcmul_(g, g, value=1 - beta)``)."""
    scaled = np.multiply(grad, 1 - beta)
    scaled *= grad
    avg_sq *= beta
    avg_sq += scaled


def ratio(numerator, denominator, value):
    """value * (numerator / denominator): the increment of ``addcdiv_(numerator, denominator, value)``."""
    out = np.divide(numerator, denominator)
    out *= value
    return Tensor(out)


def effective_grad(group, p):
    """The gradient the update sees: negated if ``maximize``, plus ``weight_decay * p`` (L2) unless the group
    decays the weights directly (``decoupled_weight_decay``, applied by the caller)."""
    grad = -p.grad._data if group["maximize"] else p.grad._data
    if group["weight_decay"] != 0 and not group.get("decoupled_weight_decay", False):
        grad = grad + group["weight_decay"] * p._data
    return grad


def decay_weights_(group, p):
    """Decoupled weight decay (AdamW-style): p <- p * (1 - lr * weight_decay)."""
    if group["weight_decay"] != 0 and group.get("decoupled_weight_decay", False):
        p.mul_(1 - group["lr"] * group["weight_decay"])


def increment_step(state):
    """Advance the 0-d 'step' counter and return the new step count as a Python float."""
    state["step"]._data += 1
    return state["step"].item()


def zeros_state(p, *names, fill=0.0, fused=False):
    """``{'step': 0, name: zeros_like(p) ...}`` (a new parameter's state, keys in PyTorch's order)."""
    state = {"step": _scalar_tensor(0.0, fused=fused)}
    for name in names:
        state[name] = Tensor(np.full_like(p._data, fill))
    return state
