"""Neural-network building blocks: modules, layers, the normalization layers, init and utils."""
from . import functional  # noqa: F401
