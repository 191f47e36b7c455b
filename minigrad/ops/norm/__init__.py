"""Normalization ops: one fused Function per norm family, each with a composite twin.

The fused forms (``rms_norm``, ...) are what ``minigrad.nn.functional`` and the modules use; the
``*_composite`` twins take the same arguments and are written with ordinary minigrad ops, so
autograd differentiates them (the teaching reference and the tests' oracle).
"""
from .batch import batch_norm, batch_norm_composite  # noqa: F401
from .group import group_norm, group_norm_composite, instance_norm, instance_norm_composite  # noqa: F401
from .layer import layer_norm, layer_norm_composite  # noqa: F401
from .rms import rms_norm, rms_norm_composite  # noqa: F401
