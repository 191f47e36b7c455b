"""Power-average and fractional max pooling modules (the maths is in ``minigrad/ops/pool_more.py``)."""
import numpy as np

from ..ops import pool_more as P
from .module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d"]


class _LPPoolNd(Module):
    """(sum over a window of x^p)^(1/p), p = ``norm_type``."""

    functional = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self).functional(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, " \
               f"ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPoolNd):
    functional = staticmethod(P.lp_pool1d)


class LPPool2d(_LPPoolNd):
    functional = staticmethod(P.lp_pool2d)


class LPPool3d(_LPPoolNd):
    functional = staticmethod(P.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    """Max pooling over windows at pseudo-random positions; ``_random_samples`` (a buffer, as in PyTorch) fixes
    them, otherwise each call draws new ones."""

    dims = 2
    functional = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        d, name = self.dims, type(self).__name__
        self.kernel_size = P._ntuple(kernel_size, d)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = P._ntuple(output_size, d) if output_size is not None else None
        ratio = output_ratio
        self.output_ratio = ((ratio,) * d if np.ndim(ratio) == 0 else tuple(ratio)) if ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self).functional(input, self.kernel_size, self.output_size, self.output_ratio,
                                     self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    functional = staticmethod(P.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    dims = 3
    functional = staticmethod(P.fractional_max_pool3d)
