"""Normalization ops: one file per norm family, each reading top to bottom like its derivation page.

``registry.py`` lists them all (one ``NormSpec`` per norm: its file, page, functional, composite twin and
modules) and decides what this package exports; the families, for example:

    rmsnorm.py     RMSNorm (and its variants)            docs/derivations/rmsnorm.md
    layernorm.py   LayerNorm                             docs/derivations/layernorm.md
    groupnorm.py   GroupNorm and InstanceNorm (G = C)    docs/derivations/groupnorm.md, instancenorm.md

with what the row norms share in rows.py, what the channel norms share in channels.py, and what
all share (float64 sums, the centered backward formula, the composite ``normalize``) in common.py.

The public forms (``rms_norm``, ...) are what ``minigrad.nn.functional`` and the modules use; the
``*_composite`` twins take the same arguments and are written with ordinary minigrad ops, so
autograd differentiates them (the teaching reference and the tests' oracle). This package also
exports every family's NumPy reference kernels: it is the ``"numpy"`` backend of ``minigrad.kernels``.
"""
import importlib

from .registry import NORMS

from .batchnorm import batch_norm, batch_norm_backward, batch_norm_composite, batch_norm_forward  # noqa: F401
from .batchnorm import batch_norm_stats, batch_norm_train, batch_norm_train_stats  # noqa: F401
from .groupnorm import group_norm, group_norm_backward, group_norm_composite, group_norm_forward  # noqa: F401
from .groupnorm import instance_norm, instance_norm_composite  # noqa: F401
from .localresponse import local_response_norm, local_response_norm_composite  # noqa: F401
from .layernorm import layer_norm, layer_norm_backward, layer_norm_composite, layer_norm_forward  # noqa: F401
from .rmsnorm import rms_norm, rms_norm_backward, rms_norm_composite, rms_norm_forward  # noqa: F401

# what nn.functional exports: every registered norm's public function, and its composite twin next to it here
__all__ = [spec.functional for spec in NORMS]
for _spec in NORMS:
    _file = importlib.import_module(f".{_spec.source}", __name__)
    for _name in (_spec.functional, _spec.composite) + _spec.kernels:   # the kernels: the "numpy" backend's
        globals()[_name] = getattr(_file, _name)
