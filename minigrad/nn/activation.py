"""Activation modules beyond the basic ones in ``layers.py`` (Softmax, LogSoftmax, LeakyReLU, ELU, Softplus,
Mish, Hardswish) and the reshaping modules Flatten and Unflatten, with PyTorch's arguments and reprs.

Each module stores its arguments and calls ``minigrad.nn.functional``; the maths is in ``ops/``.
"""
import warnings

from ..ops.dims import normalize_dim
from ..ops.shape import flatten
from . import functional as F
from .layers import _Activation
from .module import Module

__all__ = ["ELU", "Flatten", "Hardswish", "LeakyReLU", "LogSoftmax", "Mish", "Softmax", "Softplus", "Unflatten"]


class _AlongDim(Module):
    """A module applying a function along one dimension ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """softmax along ``dim``: exp(x) / sum(exp(x))."""

    def forward(self, input):
        return F.softmax(input, _implicit_dim(self.dim, input))


class LogSoftmax(_AlongDim):
    """log(softmax(x)) along ``dim``."""

    def forward(self, input):
        return F.log_softmax(input, _implicit_dim(self.dim, input))


def _implicit_dim(dim, input):
    """PyTorch's legacy choice when no ``dim`` is given: 0 for 0-, 1- and 3-d inputs, else 1 (with its warning)."""
    if dim is not None:
        return dim
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if input.ndim in (0, 1, 3) else 1


class LeakyReLU(_Activation):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(_Activation):
    """x where x > 0, else alpha (exp(x) - 1)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(_Activation):
    """x tanh(softplus(x))."""

    def forward(self, input):
        return F.mish(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardswish(_Activation):
    """x relu6(x + 3) / 6."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class Flatten(Module):
    """Flatten dimensions ``start_dim``..``end_dim`` into one (by default all but the batch dimension)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (a tuple or list of ints, one of which may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("minigrad.nn.Unflatten: named dimensions are not supported; dim must be an int, "
                            f"got {dim!r}")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"unflattened_size must be tuple of ints, but found type {type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        dim = normalize_dim(self.dim, input.ndim)
        shape = input.shape[:dim] + tuple(self.unflattened_size) + input.shape[dim + 1:]
        return input.reshape(shape)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
