"""``torch.nn.modules.normalization``."""
from ..channel_norms import CrossMapLRN2d, GroupNorm, LocalResponseNorm
from ..row_norms import LayerNorm, RMSNorm

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]
