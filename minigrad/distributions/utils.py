"""Helpers shared by the distributions (``torch.distributions.utils``): broadcasting parameters, probabilities
and logits, lazily computed properties."""
import numbers

import numpy as np

from .. import dtypes
from ..dtypes import float_info
from .. import _pytorch_stream as _stream
from ..random import normal_values, torch_stream
from ..tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "euler_constant", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_all(*values):
    """``values`` (Tensors and numbers) as Tensors of one broadcast shape; numbers take the first Tensor's dtype
    (the default dtype if there is none)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), dtypes.get_default_dtype())
    tensors = [v if isinstance(v, Tensor) else Tensor(np.asarray(v, dtype=dtype)) for v in values]
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def standard_normal(shape, dtype, generator=None):
    """N(0, 1) noise of ``shape`` (a constant Tensor), drawn as PyTorch's ``torch.empty(shape).normal_()``."""
    return Tensor(normal_values(torch_stream(generator), tuple(shape), dtype))


def uniform(shape, dtype, low=0.0, high=1.0, generator=None):
    """U[low, high) noise of ``shape`` (a constant Tensor), drawn as PyTorch's ``torch.empty(shape).uniform_(low,
    high)`` (``torch.rand`` for the default bounds)."""
    n = int(np.prod(shape, dtype=np.int64))
    return Tensor(_stream.uniform(torch_stream(generator), n, np.dtype(dtype), low, high).reshape(shape))


def exponential(shape, dtype, generator=None):
    """Exp(1) noise of ``shape`` (a constant Tensor), drawn as PyTorch's ``torch.empty(shape).exponential_()``."""
    n = int(np.prod(shape, dtype=np.int64))
    return Tensor(_stream.exponential(torch_stream(generator), n, 1.0).astype(dtype).reshape(shape))


def sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.ndim - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities of logits: sigmoid for a binary event, softmax over the last dim otherwise."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def clamp_probs(probs):
    """``probs`` clamped into [eps, 1 - eps] (eps of their dtype), away from 0 and 1."""
    eps = float(float_info(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (binary) or log-probabilities of clamped probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def xlogy(x, y):
    """x * log(y), 0 where x == y == 0 (PyTorch's ``xlogy``); its gradients are log(y) in x and x / y in y."""
    from ..ops.elementwise import where
    return x * where((x == 0) & (y == 0), 1.0, y).log()


class CenteredAtLoc:
    """For distributions whose mean and mode are their ``loc`` (Normal, Laplace, the multivariate normals)."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class lazy_property:
    """A property computed once, on first access, and then stored as the instance's attribute."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        from ..autograd import enable_grad
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a ``lazy_property`` looks like on the class: a property too, for documentation tools."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def _tril_selection(n, diag, dtype):
    """(k, n * n) 0/1 matrix picking, row by row, the k entries of an n x n matrix on or below diagonal ``diag``."""
    rows, cols = np.nonzero(np.arange(n) < np.arange(n)[:, None] + (diag + 1))
    selection = np.zeros((rows.size, n * n), dtype=dtype)
    selection[np.arange(rows.size), rows * n + cols] = 1
    return Tensor(selection)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of ``mat`` (..., n, n) on and below diagonal ``diag``, row by row, as vectors (..., k)."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat @ _tril_selection(n, diag, mat.dtype).mT


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: (..., k) vectors into (..., n, n) lower triangles (zeros above)."""
    k = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * k + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float_info(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {k} which cannot be expressed as the lower triangular "
                         "part of a square D x D matrix.")
    n = round(n)
    return (vec @ _tril_selection(n, diag, vec.dtype)).reshape(tuple(vec.shape[:-1]) + (n, n))
