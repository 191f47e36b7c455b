"""``torch.nn.modules.lazy``: ``LazyModuleMixin``, the mixin of the Lazy* modules."""
from ..lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
