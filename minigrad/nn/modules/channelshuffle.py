"""``torch.nn.modules.channelshuffle``."""
from ..pooling import ChannelShuffle

__all__ = ["ChannelShuffle"]
