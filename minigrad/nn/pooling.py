"""Pooling, padding, resampling and channel-dropout modules: thin wrappers of ``minigrad.ops.pool`` that hold
the arguments, with PyTorch's constructor signatures and reprs."""
from ..ops import pool as P
from .layers import Dropout
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "ChannelShuffle",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


# --------------------------------------------------------------------------- max and average pooling
class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """``F.max_pool1d`` with fixed arguments."""
    _pool = staticmethod(P.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """``F.max_pool2d`` with fixed arguments."""
    _pool = staticmethod(P.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """``F.max_pool3d`` with fixed arguments."""
    _pool = staticmethod(P.max_pool3d)


def _tuple(v, d):
    """v as a d-tuple (a sequence as given)."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


class AvgPool1d(Module):
    """``F.avg_pool1d`` with fixed arguments (kept as 1-tuples, as PyTorch)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """``F.avg_pool2d`` / ``avg_pool3d`` with fixed arguments (kept as given)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """``F.avg_pool2d`` with fixed arguments."""
    _pool = staticmethod(P.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """``F.avg_pool3d`` with fixed arguments."""
    _pool = staticmethod(P.avg_pool3d)


# --------------------------------------------------------------------------- adaptive pooling
class _AdaptivePool(Module):
    """An adaptive average pooling (``_pool``) to a fixed ``output_size``."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._pool(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    _pool = staticmethod(P.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    _pool = staticmethod(P.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePool):
    _pool = staticmethod(P.adaptive_avg_pool3d)


class _AdaptiveMaxPool(_AdaptivePool):
    """An adaptive max pooling (``_pool``) to a fixed ``output_size``, returning the indices if asked."""

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return self._pool(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    _pool = staticmethod(P.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    _pool = staticmethod(P.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    _pool = staticmethod(P.adaptive_max_pool3d)


# --------------------------------------------------------------------------- max unpooling
class _MaxUnpoolNd(Module):
    """``F.max_unpool{d}d`` with fixed kernel_size, stride and padding (kept as d-tuples, as PyTorch); the
    output size may be given per call."""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self.dims)
        self.stride = _tuple(stride if stride is not None else kernel_size, self.dims)
        self.padding = _tuple(padding, self.dims)

    def forward(self, input, indices, output_size=None):
        return self._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d`` (``F.max_unpool1d``)."""
    dims, _unpool = 1, staticmethod(P.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d`` (``F.max_unpool2d``)."""
    dims, _unpool = 2, staticmethod(P.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d`` (``F.max_unpool3d``)."""
    dims, _unpool = 3, staticmethod(P.max_unpool3d)


# --------------------------------------------------------------------------- padding
def _pairs(padding, d):
    """An int pads both sides of the last d dims alike; a sequence is kept as given (as PyTorch: ``F.pad``
    checks it when the module is called)."""
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * d)


class _PadNd(Module):
    mode, dims = "constant", 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _pairs(padding, self.dims)

    def forward(self, input):
        return P.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return P.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class _ZeroFill:
    """A constant padding with zeros (before ``ConstantPad{d}d`` in the bases)."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroFill, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroFill, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroFill, ConstantPad3d):
    pass


class ReflectionPad1d(_PadNd):
    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    mode, dims = "replicate", 3


class _CircularPadNd(_PadNd):
    """Circular padding, of batched or unbatched input only (a ValueError otherwise, as PyTorch)."""
    mode = "circular"

    def forward(self, input):
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.ndim}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    dims = 1


class CircularPad2d(_CircularPadNd):
    dims = 2


class CircularPad3d(_CircularPadNd):
    dims = 3


# --------------------------------------------------------------------------- resampling
class Upsample(Module):
    """``F.interpolate`` with a fixed output ``size`` or ``scale_factor``."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input):
        return P.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample`` with mode ``nearest``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample`` with mode ``bilinear`` and ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _Rearrange(Module):
    """A pixel (un)shuffle or channel shuffle by a fixed factor, kept under PyTorch's attribute name."""

    def __init__(self, factor):
        super().__init__()
        setattr(self, self.factor_name, factor)

    def forward(self, input):
        return self._fn(input, getattr(self, self.factor_name))

    def extra_repr(self):
        return f"{self.factor_name}={getattr(self, self.factor_name)}"


class PixelShuffle(_Rearrange):
    """(*, C r², H, W) -> (*, C, H r, W r) (``F.pixel_shuffle``)."""
    factor_name, _fn = "upscale_factor", staticmethod(P.pixel_shuffle)

    def __init__(self, upscale_factor):
        super().__init__(upscale_factor)


class PixelUnshuffle(_Rearrange):
    """(*, C, H r, W r) -> (*, C r², H, W) (``F.pixel_unshuffle``)."""
    factor_name, _fn = "downscale_factor", staticmethod(P.pixel_unshuffle)

    def __init__(self, downscale_factor):
        super().__init__(downscale_factor)


class ChannelShuffle(_Rearrange):
    """(N, C, *) with the channels shuffled among ``groups`` groups (``F.channel_shuffle``)."""
    factor_name, _fn = "groups", staticmethod(P.channel_shuffle)

    def __init__(self, groups):
        super().__init__(groups)


# --------------------------------------------------------------------------- channel dropout
class Dropout1d(Dropout):
    """``F.dropout1d``: zero whole channels of (N, C, L) input in training."""

    def forward(self, input):
        return P.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """``F.dropout2d``: zero whole channels of (N, C, H, W) input in training."""

    def forward(self, input):
        return P.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """``F.dropout3d``: zero whole channels of (N, C, D, H, W) input in training."""

    def forward(self, input):
        return P.dropout3d(input, self.p, self.training, self.inplace)
