"""Normalization ops: one fused Function per norm family, each with a composite twin."""
from .batch import batch_norm  # noqa: F401
from .group import group_norm, instance_norm  # noqa: F401
from .layer import layer_norm  # noqa: F401
from .rms import rms_norm  # noqa: F401
