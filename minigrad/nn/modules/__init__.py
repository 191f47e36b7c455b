"""``torch.nn.modules``: PyTorch's module files, where programs import from (``from torch.nn.modules.utils
import _pair``, ``from torch.nn.modules.loss import _Loss``, ``from torch.nn.modules.batchnorm import
_BatchNorm``, ...). minigrad's modules live in ``minigrad/nn/*.py``; each file here re-exports, as the very same
objects, the names of PyTorch's file of its name (its ``__all__``, and the private bases programs subclass).
Names minigrad lacks are absent (each file's docstring lists them). ``utils`` holds PyTorch's helpers.

``minigrad/nn/__init__.py`` imports this package last: every file here imports from the finished ``minigrad.nn``.
"""
from . import (activation, adaptive, batchnorm, channelshuffle, container, conv, distance,  # noqa: F401
               dropout, flatten, fold, instancenorm, lazy, linear, linear_cross_entropy,
               linear_cross_entropy_options, loss, module, normalization, padding, pixelshuffle, pooling, rnn,
               sparse, transformer, upsampling, utils)
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module  # noqa: F401 - (as PyTorch: not the global hook registrations)
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

# PyTorch's torch.nn.modules.__all__: every file's __all__ but lazy's (LazyModuleMixin is not exported here) and
# module's global hook registrations (only its Module is).
__all__ = sorted({name for file in (activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout,
                                    flatten, fold, instancenorm, linear, loss, normalization, padding,
                                    pixelshuffle, pooling, rnn, sparse, transformer, upsampling)
                  for name in file.__all__} | {"Module"})
