"""Normalization modules: the row family (RMSNorm, LayerNorm) and the channel family (BatchNorm, InstanceNorm, GroupNorm).

Each family file lists its modules in ``__all__``; a new norm module is added there only."""
from . import channel_norms, row_norms
from .channel_norms import *  # noqa: F401,F403
from .row_norms import *  # noqa: F401,F403

__all__ = row_norms.__all__ + channel_norms.__all__
