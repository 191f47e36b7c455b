"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` (the maths is in ``minigrad/ops/conv.py``).

Parameter shapes, state_dict keys, initialization and reprs follow PyTorch: weight (out, in/groups, *kernel)
(transposed: (in, out/groups, *kernel)) ~ kaiming_uniform(a=sqrt(5)), bias (out,) ~ U(-1/sqrt(fan_in),
1/sqrt(fan_in)). A ``padding_mode`` other than 'zeros' pads the input first (reflect, replicate or
circular) and convolves it without padding, as PyTorch does.
"""
import math

import numpy as np

from .. import dtypes
from ..creation import empty
from ..ops.conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, same_padding,
                        transposed_size)
from ..tensor import Tensor, check_device
from . import init
from .module import Module, Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _tuple(value, dims):
    return (value,) * dims if isinstance(value, (int, np.integer)) else tuple(value)


def _mode_positions(n, before, after, mode):
    """The source index of each of the n + before + after positions of a dimension padded by ``mode``."""
    positions = np.arange(-before, n + after)
    if mode == "reflect":                    # ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ...
        positions = np.abs(positions)
        return np.where(positions > n - 1, 2 * (n - 1) - positions, positions)
    if mode == "replicate":                  # 0 0 | 0 1 ... n-1 | n-1 n-1
        return np.clip(positions, 0, n - 1)
    return positions % n                     # circular: n-2 n-1 | 0 1 ... n-1 | 0 1


def _mode_pad(x, pads, mode):
    """x (N, C, *spatial) padded by ((before, after), ...) per spatial dimension in ``mode``: a gather of
    positions per dimension, so that gradients flow back to the positions read (several times at the edges).
    (F.pad will do this once it exists.)"""
    spatial = x.shape[2:]
    for axis, (n, (before, after)) in enumerate(zip(spatial, pads)):
        if mode == "reflect" and (before >= n or after >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({before}, {after}) at dimension {axis + 2} of input "
                               f"{list(x.shape)}")
        if mode == "circular" and (before > n or after > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    for axis, (n, (before, after)) in enumerate(zip(spatial, pads)):
        if before or after:
            x = x.index_select(axis + 2, Tensor(_mode_positions(n, before, after, mode)))
    return x


class _ConvNd(Module):
    """What the convolution layers share: arguments, checks, parameters, init and repr."""

    dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        """PyTorch's signature, so that a layer subclassing ``_ConvNd`` directly (passing ``_pair(k)`` and
        ``transposed``) builds as it does there; the number of spatial dims is the kernel tuple's length."""
        check_device(device)
        super().__init__()
        if transposed != type(self).transposed:
            self.transposed = bool(transposed)
        if isinstance(kernel_size, (tuple, list)) and len(kernel_size) != self.dims:
            self.dims = len(kernel_size)
        dims = self.dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size, self.stride = _tuple(kernel_size, dims), _tuple(stride, dims)
        self.dilation, self.output_padding = _tuple(dilation, dims), _tuple(output_padding, dims)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = same_padding(self.kernel_size, self.dilation) if padding == "same" else ((0, 0),) * dims
        else:
            padding = _tuple(padding, dims)
            pads = tuple((p, p) for p in padding)
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {PADDING_MODES}, but got padding_mode='{padding_mode}'")
        if self.transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.padding, self.padding_mode, self._pads = padding, padding_mode, pads
        # PyTorch's attribute: F.pad's argument order (last dimension first), before and after each
        self._reversed_padding_repeated_twice = [p for pair in reversed(pads) for p in pair]
        dtype = dtype or dtypes.get_default_dtype()
        shape = (in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*shape, *self.kernel_size, dtype=dtype))
        self.bias = Parameter(empty(out_channels, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _padded_input(self, input):
        """(input, padding to pass to the convolution): other modes pad here, zeros are the convolution's own."""
        if self.padding_mode == "zeros":
            return input, self.padding
        batched = input.ndim == self.dims + 2
        x = _mode_pad(input if batched else input.unsqueeze(0), self._pads, self.padding_mode)
        return (x if batched else x.squeeze(0)), 0

    def extra_repr(self):
        dims = self.dims
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    """Conv1d, Conv2d and Conv3d: PyTorch's signature; forward pads (other modes than zeros) and convolves."""

    functional = None  # conv1d, conv2d or conv3d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._padded_input(input)
        return type(self).functional(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L); weight (C_out, C_in/groups, k), bias (C_out,)."""

    dims = 1
    functional = staticmethod(conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in/groups, kh, kw), bias (C_out,)."""

    functional = staticmethod(conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_out, C_in/groups, kd, kh, kw),
    bias (C_out,)."""

    dims = 3
    functional = staticmethod(conv3d)


class _ConvTranspose(_ConvNd):
    """ConvTranspose1d/2d/3d, the adjoints of Conv1d/2d/3d in their input; weight (C_in, C_out/groups, *kernel).
    ``forward(input, output_size)`` picks the output_padding giving that size (a stride > 1 leaves a choice)."""

    transposed = True
    functional = None  # conv_transpose1d, conv_transpose2d or conv_transpose3d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding giving spatial size ``output_size`` (which may start with the batch and channel
        sizes, or the channel size for unbatched input), between the smallest output and one stride more."""
        if output_size is None:
            return self.output_padding
        dims, size = self.dims, list(output_size)
        leading = 2 if input.ndim == dims + 2 else 1                  # batch and channels, or channels
        if len(size) == dims + leading:
            size = size[leading:]
        if len(size) != dims:
            raise ValueError(f"ConvTranspose{dims}D: for {input.ndim}D input, output_size must have {dims} or "
                             f"{dims + leading} elements (got {len(output_size)})")
        spatial = tuple(input.shape[-dims:])
        smallest = transposed_size(spatial, self.kernel_size, self.stride, self.padding, (0,) * dims, self.dilation)
        largest = [n + s - 1 for n, s in zip(smallest, self.stride)]
        if any(not lo <= n <= hi for n, lo, hi in zip(size, smallest, largest)):
            raise ValueError(f"requested an output size of {size}, but valid sizes range from {list(smallest)} to "
                             f"{largest} (for an input of {spatial})")
        return tuple(n - lo for n, lo in zip(size, smallest))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self).functional(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                     self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-D convolution over (N, C_in, L) or (C_in, L); weight (C_in, C_out/groups, k)."""

    dims = 1
    functional = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution over (N, C_in, H, W) or (C_in, H, W); weight (C_in, C_out/groups, kh, kw)."""

    functional = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight
    (C_in, C_out/groups, kd, kh, kw)."""

    dims = 3
    functional = staticmethod(conv_transpose3d)
