"""Neural-network building blocks: modules, layers, the normalization layers, init and utils."""
from . import functional, init, utils  # noqa: F401
from .layers import (GELU, Dropout, Embedding, Identity, Linear, ModuleDict, ModuleList, ReLU,  # noqa: F401
                     Sequential, Sigmoid, SiLU, Tanh)
from .module import Module, Parameter  # noqa: F401
from .normalization import *  # noqa: F401,F403 - the norm modules (RMSNorm, ..., listed in their files' __all__)
