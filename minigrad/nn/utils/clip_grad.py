"""Gradient clipping with PyTorch's semantics: ``clip_grad_norm_`` (its two halves ``get_total_norm`` and
``clip_grads_with_norm_``), ``clip_grad_value_``, and the old name ``clip_grad_norm``."""
import math
import types
import warnings

import numpy as np

from ...autograd import no_grad
from ...autograd.version import bump_tensor
from ...ops.inplace import check_writable
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    """One Tensor or an iterable of them (a generator is read once), as a list."""
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters):
    """The ``.grad`` tensors of ``parameters`` (a list), skipping missing grads."""
    return [p.grad for p in parameters if p.grad is not None]


def _vector_norm(x, ord):
    """||x||_ord of a flattened array: (sum |x|^ord)^(1/ord), with max/min for +-inf and a count for 0."""
    x = x.reshape(-1)
    if not (ord == 2 and x.dtype.kind == "f"):  # x x = |x|^2 for real x: no copy of |x| for the 2-norm
        x = np.abs(x)
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


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of ``tensors`` taken together: the norm of their norms, which is the norm of all
    their elements concatenated. A 0-d Tensor of their promoted dtype (float32 0.0 for no tensors), outside
    autograd. ``foreach``: accepted for PyTorch's signature (both of its ways give these values here)."""
    tensors, norm_type = _as_list(tensors), float(norm_type)
    if not tensors:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    dtype = np.result_type(*(t.dtype for t in tensors))
    per_tensor = np.array([_vector_norm(t._data, norm_type) for t in tensors], dtype=dtype)
    total_norm = np.asarray(_vector_norm(per_tensor, norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total_norm):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return Tensor(total_norm)


def _scale_all_(tensors, factor):
    """Multiply each of ``tensors`` in place by the 0-d array ``factor`` (cast to its dtype), as ``mul_`` under
    ``no_grad`` does, in one sweep (PyTorch's ``_foreach_mul_``): every tensor is checked before any is written,
    so an error leaves them all as they were; then each is multiplied and its version counted. A third of a
    millisecond for a Transformer's 39 gradients, where 39 ``mul_`` calls, each with its own checks, took 2 ms."""
    for t in tensors:
        check_writable(t._data)
    for t in tensors:
        np.multiply(t._data, factor.astype(t.dtype), out=t._data, casting="unsafe")
        bump_tensor(t)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by min(1, max_norm / (total_norm + 1e-6)), PyTorch's
    coefficient, for a ``total_norm`` computed beforehand (``get_total_norm``). ``foreach`` as there."""
    grads, max_norm = _grads(_as_list(parameters)), float(max_norm)
    if not grads:
        return
    total_norm = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    dtype = total_norm.dtype
    clip_coef = np.asarray(max_norm, dtype) / (total_norm + np.asarray(1e-6, dtype))
    _scale_all_(grads, np.minimum(clip_coef, np.asarray(1.0, dtype)))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``:
    ``get_total_norm`` of the gradients, then ``clip_grads_with_norm_``. Returns the total norm before
    clipping, as a 0-d Tensor. An empty generator of parameters warns, as in PyTorch."""
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if is_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    total_norm = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """PyTorch's old name of ``clip_grad_norm_``: the same, with a FutureWarning."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient elementwise to [-clip_value, clip_value], in place. ``foreach`` as in
    ``get_total_norm``."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(_as_list(parameters)):
            g.clamp_(-clip_value, clip_value)
