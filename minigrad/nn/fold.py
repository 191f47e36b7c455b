"""``Unfold`` and ``Fold``: the sliding blocks of an image and their adjoint (``minigrad/ops/fold.py``)."""
from ..ops.fold import fold, unfold
from .module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """The sliding blocks of (N, C, H, W) or (C, H, W) input: (N, C*kh*kw, L) (``F.unfold``)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Sliding blocks (N, C*kh*kw, L) or (C*kh*kw, L) summed back into (N, C, *output_size) (``F.fold``)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
