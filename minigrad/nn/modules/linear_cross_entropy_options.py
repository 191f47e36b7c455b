"""``torch.nn.modules.linear_cross_entropy_options``. Absent: ``LinearCrossEntropyOptions``."""

__all__ = []
