"""Power-average and fractional max pooling, and the deprecated upsampling names.

* ``lp_pool1d/2d/3d``: (sum over a window of x^p)^(1/p), computed as PyTorch does from the average pool of x^p
  times the window size (a window whose sum is negative, possible for odd p, gives 0); p = inf is the max
  pool of |x|. Composed of differentiable ops: d/dx (sum x^p)^(1/p) = (x / y)^(p-1) dout, through avg_pool's
  and pow's backwards.
* ``fractional_max_pool2d/3d`` (Graham, 2014): windows of ``kernel_size`` starting at pseudo-random positions
  u_i = floor((i + s) a) - floor(s a), a = (in - k) / (out - 1), i < out - 1, and u_{out-1} = in - k, with one
  sample s in [0, 1) per (batch, channel, dimension) (``_random_samples``, drawn from minigrad's generator when
  not given). The positions are found in NumPy; the output is a gather of the input at each window's argmax,
  so the gradient (dout routed to the argmax) is the gather's.
* ``upsample_nearest``, ``upsample_bilinear``: ``interpolate`` (bilinear with align_corners=True) and
  PyTorch's deprecation warning.
"""
import warnings

import numpy as np

from .. import random as _random
from .._checks import refuses_complex, takes_tensors
from ..tensor import Tensor
from .elementwise import relu
from .pool import avg_pool1d, avg_pool2d, avg_pool3d, interpolate, max_pool1d, max_pool2d, max_pool3d

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _ntuple(value, d):
    return (int(value),) * d if np.ndim(value) == 0 else tuple(int(v) for v in value)


# --------------------------------------------------------------------------- power-average pooling
def _lp_pool(d, input, norm_type, kernel_size, stride, ceil_mode):
    if norm_type == float("inf"):
        return _MAX[d](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -_MAX[d](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    window = int(np.prod(_ntuple(kernel_size, d)))
    mean = _AVG[d](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (mean.sign() * relu(mean.abs())).mul(window).pow(1.0 / norm_type)


@takes_tensors("input")
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over windows of the last axis of x^p)^(1/p), p = ``norm_type``."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


@takes_tensors("input")
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over (kH, kW) windows of x^p)^(1/p), p = ``norm_type``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


@takes_tensors("input")
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over (kD, kH, kW) windows of x^p)^(1/p), p = ``norm_type``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# --------------------------------------------------------------------------- fractional max pooling
def fractional_starts(samples, in_size, out_size, kernel, dtype):
    """The window starts (..., out_size) for samples s (...): floor((i + s) a) - floor(s a), a = (in - k) / (out - 1),
    the last window ending at the input's end. Computed in the input's dtype, as PyTorch does."""
    s = samples.astype(dtype)[..., None]
    starts = np.empty(samples.shape + (out_size,), dtype=np.int64)
    if out_size > 1:
        alpha = dtype.type(in_size - kernel) / dtype.type(out_size - 1)
        i = np.arange(out_size - 1, dtype=dtype)
        starts[..., :-1] = np.trunc((i + s) * alpha).astype(np.int64) - np.trunc(s * alpha).astype(np.int64)
    starts[..., -1] = in_size - kernel
    return starts


def _fractional_max_pool(name, d, input, kernel_size, output_size, output_ratio, return_indices, samples):
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got: {list(input.shape)}")
    batched = input.ndim == d + 2
    x = input if batched else input.unsqueeze(0)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    kernel = _ntuple(kernel_size, d)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        ratio = (float(output_ratio),) * d if np.ndim(output_ratio) == 0 else tuple(output_ratio)
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    out = _ntuple(output_size, d)
    names = ("time", "height", "width")[3 - d:]
    for axis, (o, k, s) in enumerate(zip(out, kernel, spatial)):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}_out(): pool {names[axis]} {k} too large relative to input {names[axis]} {s}")
    if samples is None:
        samples = _random.rand(n, c, d, dtype=input.dtype)
    u = samples._data if isinstance(samples, Tensor) else np.asarray(samples)
    if u.ndim != 3 or u.shape[0] < n or u.shape[1:] != (c, d):   # PyTorch reads the first N rows of a larger one
        raise RuntimeError(f"{name}(): expected _random_samples of shape {[n, c, d]}, got {list(u.shape)}")
    u = u[:n]
    # PyTorch's sample order: (width, height) in 2-D, (time, height, width) in 3-D
    order = (1, 0) if d == 2 else (0, 1, 2)
    flat = np.zeros((n, c) + out + kernel, dtype=np.int64)     # (N, C, *out, *kernel) flat input positions
    place = 1
    for axis in reversed(range(d)):
        starts = fractional_starts(u[:, :, order[axis]], spatial[axis], out[axis], kernel[axis], input.dtype)
        positions = starts[..., None] + np.arange(kernel[axis])                      # (N, C, out_a, k_a)
        shape = [n, c] + [1] * (2 * d)
        shape[2 + axis], shape[2 + d + axis] = out[axis], kernel[axis]
        flat = flat + positions.reshape(shape) * place
        place *= spatial[axis]
    outputs, window = int(np.prod(out)), int(np.prod(kernel))
    windows = flat.reshape(n, c, outputs, window)                                     # (N, C, prod out, prod k)
    plane = x._data.reshape(n, c, int(np.prod(spatial)))
    values = np.take_along_axis(plane, windows.reshape(n, c, outputs * window), axis=2).reshape(windows.shape)
    if window:
        best = np.argmax(np.where(np.isnan(values), np.inf, values), axis=3)[..., None]   # a NaN wins, as a max
        indices = np.take_along_axis(windows, best, axis=3).reshape((n, c) + out)
    else:
        indices = np.zeros((n, c) + out, dtype=np.int64)
    y = x.flatten(2).gather(2, Tensor(indices.reshape(n, c, outputs))).reshape((n, c) + out)
    if not batched:
        y, indices = y.squeeze(0), indices[0]
    return (y, Tensor(indices)) if return_indices else y


@takes_tensors("input")
@refuses_complex('"fractional_max_pool2d_out_frame" not implemented for \'{dtype}\'')
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max over (kH, kW) windows at pseudo-random positions giving an (oH, oW) output (``output_size``, or the
    input size times ``output_ratio``); indices are flat positions h W + w."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


@takes_tensors("input")
@refuses_complex('"fractional_max_pool3d_out_frame" not implemented for \'{dtype}\'')
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max over (kT, kH, kW) windows at pseudo-random positions (see ``fractional_max_pool2d``)."""
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


# --------------------------------------------------------------------------- deprecated upsampling
def upsample_nearest(input, size=None, scale_factor=None):
    """``interpolate(mode='nearest')`` under its old name (deprecated, with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """``interpolate(mode='bilinear', align_corners=True)`` under its old name (deprecated, with PyTorch's
    warning)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """``interpolate`` under its old name (deprecated, with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "upsample",
           "upsample_bilinear", "upsample_nearest"]
