"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration, for 2-d parameters (PyTorch's
``torch.optim.Muon``)."""
import math

import numpy as np

from ..dtypes import bfloat16
from ..tensor import Tensor
from ._moments import check_non_negative, lerp_
from .optimizer import Optimizer

__all__ = ["Muon"]

NEWTON_SCHULZ = (3.4445, -4.7750, 2.0315)


class Muon(Optimizer):
    """PyTorch's Muon, step by step for each (rows, cols) parameter p with gradient g:

        buf = buf + (1 - momentum) * (g - buf)                 (buf starts at 0)
        u = g + momentum * (buf - g)  if nesterov,  else buf
        O = newton_schulz(u)                                   (about U V^T for u = U S V^T; in bfloat16)
        p = p * (1 - lr * weight_decay) - lr * ratio * O

    ``ratio`` is sqrt(max(1, rows / cols)) ("original", the default) or 0.2 sqrt(max(rows, cols))
    ("match_rms_adamw", which gives the update AdamW's typical size)."""

    _takes_complex = False   # refused at the step, as PyTorch refuses it

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=NEWTON_SCHULZ, eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _check_group(self, group):
        if not float(group["lr"]) >= 0:
            raise ValueError(f"Learning rate should be >= 0 but is: {group['lr']}")
        if not group["momentum"] >= 0:
            raise ValueError(f"momentum should be >= 0 but is: {group['momentum']}")
        check_non_negative(group, "weight_decay")

    def _update_group(self, group, params):
        lr, momentum, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
        for p in params:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            grad = p.grad._data
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = Tensor(np.zeros_like(grad))
            buf = state["momentum_buffer"]._data
            lerp_(buf, grad, 1 - momentum)
            if group["nesterov"]:
                update = np.array(grad, copy=True)
                lerp_(update, buf, momentum)
            else:
                update = buf
            update = newton_schulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            p._data *= 1 - lr * weight_decay
            update = update.astype(p._data.dtype)     # (exact: the parameter's dtype holds every bfloat16 value)
            p.add_(Tensor(update), alpha=-lr * lr_ratio(group["adjust_lr_fn"], p.shape))


def lr_ratio(adjust_lr_fn, shape):
    """The factor on the learning rate for a (rows, cols) parameter (the class docstring)."""
    rows, cols = shape[:2]
    if adjust_lr_fn in (None, "original"):
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


def _bf16(values):
    """Round float32 values to bfloat16 (each op of the iteration computes in float32 and rounds once, as PyTorch's
    bfloat16 matrix products accumulate in float32)."""
    return np.asarray(values, dtype=np.float32).astype(bfloat16)


def newton_schulz(G, coefficients, steps, eps):
    """An approximately orthogonal matrix with G's singular vectors, in bfloat16: X = G / ||G||_F, then ``steps``
    times X <- a X + (b A + c A^2) X with A = X X^T, over the wider orientation (so that A is the smaller Gram matrix).
    The quintic's coefficients push every singular value of X towards 1 (near, not to, 1: about U S' V^T with S'
    in roughly [0.7, 1.2])."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if G.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = G.shape[0] > G.shape[1]
    X = (G.T if tall else G).astype(bfloat16)                            # (m, n), m <= n; rounded once
    norm = _bf16(np.sqrt(np.sum(np.square(X.astype(np.float32)))))
    X = _bf16(X.astype(np.float32) / max(np.float32(norm), np.float32(eps)))
    for _ in range(steps):
        X32 = X.astype(np.float32)
        A = _bf16(X32 @ X32.T).astype(np.float32)                        # (m, m)
        B = _bf16(b * A + c * (A @ A)).astype(np.float32)
        X = _bf16(a * X32 + B @ X32)
    return X.T if tall else X
