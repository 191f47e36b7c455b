"""``torch.nn.modules.instancenorm``: InstanceNorm, its lazy twins, and the base ``_InstanceNorm`` (minigrad's
subclasses set the class attribute ``_no_batch_dim`` where PyTorch's define ``_get_no_batch_dim()``)."""
from ..channel_norms import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm  # noqa: F401
from ..lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]
