"""Normalization modules: the row family (RMSNorm, LayerNorm) and the channel family (BatchNorm, InstanceNorm, GroupNorm)."""
from .channel_norms import BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d
from .row_norms import LayerNorm, RMSNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "LayerNorm", "RMSNorm"]
