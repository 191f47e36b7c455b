"""``unique``: the distinct values (or slices along ``dim``) of a tensor, sorted, as PyTorch's CPU kernel.

Not differentiable, as in PyTorch: the output of an input that requires grad requires grad too, and its
backward raises PyTorch's NotImplementedError. NaNs are kept apart (NaN != NaN), as PyTorch keeps them.
"""
import numpy as np

from .._checks import takes_tensors
from ..autograd import Function
from ..tensor import Tensor
from .dims import normalize_dim


class Unique(Function):
    """The sorted distinct values; backward: PyTorch has no derivative for unique."""

    @staticmethod
    def forward(ctx, input, values):
        return values

    @staticmethod
    def backward(ctx, dout):
        raise NotImplementedError("the derivative for 'unique' is not implemented.")


@takes_tensors("input")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements of ``input`` flattened (or its distinct slices along ``dim``), in ascending
    order (PyTorch's CPU result is sorted whatever ``sorted`` says); with ``return_inverse`` each element's
    index into them (input's shape, or (size along dim,)), with ``return_counts`` how often each occurs."""
    data = input._data
    if dim is None:
        values, inverse, counts = np.unique(data.reshape(-1), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        inverse = inverse.reshape(data.shape)
    else:
        axis = normalize_dim(dim, input.ndim)
        values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=axis)
        inverse = inverse.reshape(-1)
    out = Unique.apply(input, values) if input.requires_grad else Tensor(values)
    extras = ([Tensor(inverse.astype(np.int64))] if return_inverse else []) + \
             ([Tensor(counts.astype(np.int64))] if return_counts else [])
    return (out, *extras) if extras else out


METHODS = ["unique"]
