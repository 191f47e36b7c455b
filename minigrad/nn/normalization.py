"""Normalization modules: the row family (RMSNorm, LayerNorm) and the channel family (BatchNorm, InstanceNorm, GroupNorm)."""
from .channel_norms import *  # noqa: F401,F403  (to be made explicit)
from .row_norms import *  # noqa: F401,F403
