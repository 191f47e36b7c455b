"""Normalization modules: the row family (RMSNorm, LayerNorm), the channel family (BatchNorm, InstanceNorm,
GroupNorm, LocalResponseNorm), and every other module of the registry of norms (minigrad/ops/norm/registry.py),
which lives in its norm's own file.

Each family file lists its modules in ``__all__``; a registered norm's modules are exported from where its
``NormSpec`` says they live."""
from ..ops.norm.registry import NORMS
from . import channel_norms, row_norms
from .channel_norms import *  # noqa: F401,F403
from .row_norms import *  # noqa: F401,F403

__all__ = row_norms.__all__ + channel_norms.__all__
for _spec in NORMS:
    for _i, _name in enumerate(_spec.modules):
        if _name not in __all__:
            globals()[_name] = _spec.module_class(_i)
            __all__.append(_name)
