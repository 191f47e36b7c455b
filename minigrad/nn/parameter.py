"""``minigrad.nn.parameter``: where PyTorch's programs import ``Parameter`` from
(``from torch.nn.parameter import Parameter``); the classes live in ``module.py`` and ``lazy.py``."""
from .lazy import UninitializedBuffer, UninitializedParameter
from .module import Parameter

__all__ = ["Parameter", "UninitializedBuffer", "UninitializedParameter"]
