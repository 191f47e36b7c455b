"""Convolution weights in another memory layout (``convert_conv2d_weight_memory_format``, its 3-D twin), as
PyTorch's ``torch.nn.utils.memory_format``. The layout changes where the weights' values sit, not the values."""
from ..conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    """Give every ``kinds`` module in ``module``'s tree (itself included) weights laid out in ``memory_format``."""
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` laid out in ``memory_format`` (such
    as ``minigrad.channels_last``); returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """The weights of every ``Conv3d`` and ``ConvTranspose3d`` in ``module`` laid out in ``memory_format`` (such
    as ``minigrad.channels_last_3d``); returns ``module``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
