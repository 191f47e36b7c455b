"""Gradient clipping (``clip_grad_norm_``, ``clip_grad_value_``) and flattening parameters into one vector
(``parameters_to_vector``, ``vector_to_parameters``), with PyTorch's semantics."""
import math

import numpy as np

from ...autograd import no_grad
from ...ops.shape import cat
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _grads(parameters):
    """The ``.grad`` tensors of ``parameters`` (one Tensor or an iterable of them), skipping missing grads."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(x, ord):
    """||x||_ord of a flattened array: (sum |x|^ord)^(1/ord), with max/min for +-inf and a count for 0."""
    x = np.abs(x.reshape(-1))
    if ord == math.inf:
        return x.max()
    if ord == -math.inf:
        return x.min()
    if ord == 0:
        return np.count_nonzero(x).astype(x.dtype)
    if ord == 1:
        return x.sum()
    if ord == 2:
        return np.sqrt(np.dot(x, x))
    return (x ** ord).sum() ** (1.0 / ord)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``.

    The total norm is the norm of the per-parameter norms (= the norm of all gradients concatenated).
    Gradients are multiplied in place by min(1, max_norm / (total_norm + 1e-6)), PyTorch's coefficient.
    Returns the total norm before clipping, as a 0-d Tensor.
    """
    max_norm, norm_type = float(max_norm), float(norm_type)
    grads = _grads(parameters)
    if not grads:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    dtype = np.result_type(*(g.dtype for g in grads))
    per_grad = np.array([_vector_norm(g._data, norm_type) for g in grads], dtype=dtype)
    total_norm = np.asarray(_vector_norm(per_grad, norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total_norm):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    clip_coef = np.asarray(max_norm, dtype) / (total_norm + np.asarray(1e-6, dtype))
    clip_coef_clamped = np.minimum(clip_coef, np.asarray(1.0, dtype))
    with no_grad():
        for g in grads:
            g.mul_(Tensor(clip_coef_clamped.astype(g.dtype)))
    return Tensor(total_norm)


def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient elementwise to [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-d Tensor (differentiable: a cat of views)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Give the ``parameters`` in turn consecutive slices of the 1-d ``vec`` as their new ``.data``
    (outside autograd; each parameter then shares its slice's memory, as in PyTorch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected minigrad.Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.ndim != 1 or vec.numel() < total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-d vector of at least {total} elements (the "
                           f"parameters' total size), got shape {list(vec.shape)}")
    start = 0
    for p in parameters:
        p.data = Tensor(vec._data[start:start + p.numel()].reshape(p.shape))   # a view of vec
        start += p.numel()
