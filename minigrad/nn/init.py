"""Parameter initialization with PyTorch's formulas and argument names.

Every ``*_`` function fills its tensor in place, outside autograd, from minigrad's global generator
(``minigrad.manual_seed``) unless a ``generator`` (a ``minigrad.Generator`` or NumPy's) is given, and returns the tensor. The random
streams differ from PyTorch's; the distributions (bounds, standard deviations, gains) are the same.

The scaled initializers keep the variance of activations (forward, ``mode='fan_in'``) or of gradients
(backward, ``mode='fan_out'``) roughly constant through a layer:

* ``xavier_*``: std = gain * sqrt(2 / (fan_in + fan_out))  (Glorot & Bengio, 2010)
* ``kaiming_*``: std = gain / sqrt(fan)  with gain = calculate_gain(nonlinearity, a)  (He et al., 2015)
* a uniform(-bound, bound) has std = bound / sqrt(3), so the uniform variants use bound = sqrt(3) * std.
"""
import math
import warnings

import numpy as np

from ..autograd import no_grad
from .._pytorch_stream import permutation
from ..random import default_generator, normal_values, torch_stream
from ..tensor import Tensor

__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_",
           "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_",
           "zeros_", "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]

_UNIT_GAIN = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The factor by which ``nonlinearity`` shrinks the standard deviation of its input (PyTorch's table)."""
    if nonlinearity in _UNIT_GAIN:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight shaped (out_features, in_features, *kernel): in/out times kernel size."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field_size, tensor.shape[0] * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, values):
    """Write ``values`` into ``tensor`` in place (cast to its dtype), outside autograd."""
    with no_grad():
        tensor.copy_(Tensor(np.asarray(values)))
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b) (``tensor.uniform_``, which checks the bounds: PyTorch's numbers after the same seed)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std**2) (``tensor.normal_``: PyTorch's numbers after the same seed)."""
    with no_grad():                                     # (normal_ checks std, as PyTorch's)
        return tensor.normal_(mean, std, generator=generator)


def _normal_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) conditioned on [a, b] (absolute bounds) by rejection, drawing as PyTorch does (the
    same numbers after the same seed): from normal draws, all redrawn where any fell outside, when the window holds
    more than 30% of the mass; else from uniform draws on [a, b], each kept with probability pdf(x) / pdf(mode) (so
    that a window far in a tail costs no more than a wide one)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    from .. import empty_like, where
    with no_grad():
        if _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std) > 0.3:
            lo, hi = (np.asarray(bound, dtype=tensor._data.dtype).item() for bound in (a, b))  # the tensor's bounds
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                result = where(outside, empty_like(result).normal_(mean, std, generator=generator), result)
        else:
            log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

            def rejected(x, pending=None):    # log U > log pdf(x) / pdf(mode), for the pending ones
                log_ratio = x.clone().sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                verdict = empty_like(x).uniform_(generator=generator).log_().gt(log_ratio)
                return verdict if pending is None else where(pending, verdict, pending)
            result = tensor.uniform_(a, b, generator=generator)
            pending = rejected(result)
            while pending.any():
                candidates = empty_like(result).uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                pending = rejected(candidates, pending)
        if result is not tensor:
            tensor.copy_(result)
    return tensor


def constant_(tensor, val):
    return _fill(tensor, val)


def ones_(tensor):
    return _fill(tensor, 1)


def zeros_(tensor):
    return _fill(tensor, 0)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan), or None (with PyTorch's warning) for a tensor with no elements."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def eye_(tensor):
    """The identity matrix (ones on the main diagonal of a 2-D tensor, not necessarily square)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """The Dirac delta of a convolution weight (out, in, *kernel): output channel d of each group copies input
    channel d (a 1 at the kernel's centre), for d < min(out / groups, in); a convolution with it is the identity
    on those channels."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_channels, in_channels = tensor.shape[:2]
    if out_channels % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = out_channels // groups
    d = np.arange(min(per_group, in_channels))
    outs = (np.arange(groups)[:, None] * per_group + d).reshape(-1)            # (groups * min_dim,)
    ins = np.tile(d, groups)
    centre = tuple(size // 2 for size in tensor.shape[2:])
    values = np.zeros(tensor.shape)
    values[(outs, ins) + centre] = 1
    return _fill(tensor, values)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (Saxe et al., 2013) over the first dim and the rest flattened: the Q of the QR
    factorisation of a Gaussian matrix, its columns' signs fixed by R's diagonal so that Q is Haar-distributed
    (Mezzadri, 2007), times ``gain``."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = normal_values(torch_stream(generator), (rows, cols), tensor._data.dtype)
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)                    # (max, min) with orthonormal columns
    q = q * np.sign(np.diagonal(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tensor.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std**2) entries with ceil(sparsity * rows) of each column set to zero, at random rows (Martens,
    2010); as PyTorch, the rows come from permutations of the default generator (not ``generator``)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
    values = tensor._data.copy()
    for col in range(cols):
        values[permutation(default_generator, rows)[:num_zeros], col] = 0
    return _fill(tensor, values)


def _make_deprecate(method):
    """PyTorch's old name of an initialiser (without the trailing underscore): the same, with a FutureWarning."""
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return method(*args, **kwargs)
    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"{old_name}(...): deprecated in favor of ``nn.init.{new_name}``."
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
