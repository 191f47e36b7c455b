"""Neural-network building blocks: modules, layers, the normalization layers, init and utils."""
from . import functional, init, utils  # noqa: F401
from .layers import *  # noqa: F401,F403  (explicit __all__ in each module; to be made explicit)
from .module import Module, Parameter  # noqa: F401
from .normalization import *  # noqa: F401,F403
