"""Reductions with ``dim``/``keepdim``: sum, mean, var, std, max/min, amax/amin, argmax/argmin, logsumexp.

Backward passes re-insert the reduced axes (``keepdim`` shape) and let NumPy
broadcasting spread the gradient back over them.
"""
import numpy as np

from ..autograd import Function
from ..tensor import Tensor
from .dims import normalize_dims


def _keepdim_shape(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


class Sum(Function):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        ctx.shape, ctx.axes = a.shape, axes
        return a.data.sum(axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, dout):
        g = dout.data.reshape(_keepdim_shape(ctx.shape, ctx.axes))
        return np.broadcast_to(g, ctx.shape), None, None


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        ctx.shape, ctx.axes = a.shape, axes
        return a.data.mean(axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, dout):
        n = int(np.prod([ctx.shape[i] for i in ctx.axes]))
        g = dout.data.reshape(_keepdim_shape(ctx.shape, ctx.axes)) / n
        return np.broadcast_to(g, ctx.shape), None, None


def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.kind in "bi":
        input = input.to(np.int64)  # PyTorch sums integers and bools as int64
    return Sum.apply(input, normalize_dims(dim, input.ndim), keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.kind != "f":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {input.dtype}")
    return Mean.apply(input, normalize_dims(dim, input.ndim), keepdim)


def _todo(name):
    def op(*args, **kwargs):
        raise NotImplementedError(f"minigrad.{name} is not implemented yet")
    op.__name__ = name
    return op


var = _todo("var")
std = _todo("std")
max = _todo("max")  # noqa: A001
min = _todo("min")  # noqa: A001
amax = _todo("amax")
amin = _todo("amin")
argmax = _todo("argmax")
argmin = _todo("argmin")
logsumexp = _todo("logsumexp")
all = _todo("all")  # noqa: A001
any = _todo("any")  # noqa: A001
