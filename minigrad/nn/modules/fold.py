"""``torch.nn.modules.fold``."""
from ..fold import Fold, Unfold

__all__ = ["Fold", "Unfold"]
