"""``torch.nn.modules.pixelshuffle``."""
from ..pooling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
