"""``torch.nn.modules.conv``: the convolution layers and their private bases.

``_ConvNd`` and ``_ConvTransposeNd`` (minigrad's ``_ConvTranspose``) are minigrad's own bases: ``isinstance``
checks work as in PyTorch, but their constructors differ from PyTorch's (``_ConvNd`` takes no ``transposed``
argument, the class says it, and needs ``device`` and ``dtype``; ``_ConvTransposeNd`` takes ConvTranspose's
public signature), so a subclass calling PyTorch's ``_ConvNd.__init__`` raises a TypeError.
Absent: ``_ConvTransposeMixin`` (deprecated in PyTorch), ``_LazyConvXdMixin``.
"""
from ..conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ConvNd  # noqa: F401
from ..conv import _ConvTranspose as _ConvTransposeNd  # noqa: F401
from ..lazy import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                    LazyConvTranspose3d)

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
