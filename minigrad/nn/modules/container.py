"""``torch.nn.modules.container``. Absent: ``Container`` (deprecated in PyTorch)."""
from ..layers import ModuleDict, ModuleList, Sequential
from ..module import _indent as _addindent  # noqa: F401 - PyTorch's container module has it too
from ..parameter_containers import ParameterDict, ParameterList

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
