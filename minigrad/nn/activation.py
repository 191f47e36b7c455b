"""Activation modules beyond the basic ones in ``layers.py`` (Softmax, LogSoftmax, Softmin, Softmax2d, LeakyReLU,
ELU, SELU, CELU, Softplus, Mish, Hardswish, Hardtanh, ReLU6, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink,
Softshrink, Hardshrink, Threshold, GLU, PReLU, RReLU) and the reshaping modules Flatten and Unflatten, with PyTorch's
arguments and reprs.

Each module stores its arguments and calls ``minigrad.nn.functional``; the maths is in ``ops/``.
"""

from .. import dtypes
from .._checks import size_param
from ..creation import empty
from ..tensor import check_device
from ..ops.dims import normalize_dim
from ..ops.shape import flatten
from . import functional as F
from . import init
from .layers import _Activation
from .module import Module, Parameter

__all__ = ["CELU", "ELU", "Flatten", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
           "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "RReLU", "ReLU6", "SELU", "Softmax", "Softmax2d", "Softmin",
           "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "Unflatten"]


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
        return F.softmax(input, self.dim)      # dim None: PyTorch's implicit choice, with its warning


class LogSoftmax(_AlongDim):
    """log(softmax(x)) along ``dim``."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Softmin(_AlongDim):
    """softmax(-x) along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim)


class GLU(_AlongDim):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim=-1):
        super().__init__(dim)

    def forward(self, input):
        return F.glu(input, self.dim)


class Softmax2d(Module):
    """softmax over the channels at every position of a (C, H, W) or (N, C, H, W) input (dim -3)."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class LeakyReLU(_Activation):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class _AlphaActivation(_Activation):
    """An activation with one parameter ``alpha`` (ELU, CELU)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace)
        self.alpha = alpha

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class ELU(_AlphaActivation):
    """x where x > 0, else alpha (exp(x) - 1)."""

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class _SilentInplace(_Activation):
    """An activation whose repr does not show ``inplace`` (PyTorch's Mish, Hardswish, Hardsigmoid)."""

    def extra_repr(self):
        return ""


class Mish(_SilentInplace):
    """x tanh(softplus(x))."""

    def forward(self, input):
        return F.mish(input, self.inplace)


class Hardswish(_SilentInplace):
    """x relu6(x + 3) / 6."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class SELU(_Activation):
    """scale * elu(x, alpha) with the self-normalizing constants alpha = 1.6733, scale = 1.0507."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class CELU(_AlphaActivation):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class Hardtanh(_Activation):
    """clamp(x, min_val, max_val)."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__(inplace)
        if not max_val > min_val:   # PyTorch's module asserts it (F.hardtanh accepts equal bounds)
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): Hardtanh(0, 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(_SilentInplace):
    """relu6(x + 3) / 6."""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Threshold(_Activation):
    """x where x > threshold, else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class _Shrink(Module):
    """A shrink with its threshold ``lambd``, shown bare in the repr as PyTorch does."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return str(self.lambd)


class Softshrink(_Shrink):
    """0 for |x| <= lambd, else x - lambd sign(x)."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """0 for |x| <= lambd, else x."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        return F.tanhshrink(input)


class PReLU(Module):
    """x where x > 0, else weight * x, with a learnable ``weight`` of ``num_parameters`` slopes (1, or one per
    channel: dim 1 of the input), each initialized to ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        check_device(device)
        super().__init__()
        self.num_parameters = size_param(num_parameters, "PReLU", "num_parameters")
        self.init = init
        self.weight = Parameter(empty(self.num_parameters, dtype=dtype or dtypes.get_default_dtype()))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(_Activation):
    """Randomized leaky ReLU: negative slopes drawn from U(lower, upper) in training, their mean in eval."""

    def __init__(self, lower=1 / 8, upper=1 / 3, inplace=False):
        super().__init__(inplace)
        self.lower, self.upper = lower, upper

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


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
