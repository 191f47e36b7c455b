"""``torch.nn.modules.normalization``. Absent: ``CrossMapLRN2d``."""
from ..channel_norms import GroupNorm, LocalResponseNorm
from ..row_norms import LayerNorm, RMSNorm

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]
