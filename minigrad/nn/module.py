"""Module and Parameter (to be written)."""
from ..tensor import Tensor


class Parameter(Tensor):
    pass


class Module:
    pass
