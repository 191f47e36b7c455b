"""``torch.nn.modules.padding``: the padding layers, ``_ConstantPadNd`` (minigrad's takes ``(padding, value)``,
PyTorch's ``(value)``) and ``_CircularPadNd``. Absent: ``_ReflectionPadNd`` and ``_ReplicationPadNd`` (minigrad's
reflection and replication pads share one base with every other mode)."""
from ..pooling import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                       ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                       ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, _CircularPadNd, _ConstantPadNd)  # noqa: F401

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]
