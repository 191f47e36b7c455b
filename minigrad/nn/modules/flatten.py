"""``torch.nn.modules.flatten``."""
from ..activation import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
