"""``torch.nn.modules.batchnorm``: BatchNorm, its lazy twins, SyncBatchNorm, and the bases ``_NormBase`` and
``_BatchNorm`` (subclasses define ``_check_input_dim`` and may override ``forward``, as in PyTorch).
Absent: ``_LazyNormBase`` (minigrad's lazy norms mix ``LazyModuleMixin`` into the eager class instead)."""
from ..channel_norms import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase  # noqa: F401
from ..lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from ..sync_batchnorm import SyncBatchNorm

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
           "SyncBatchNorm"]
