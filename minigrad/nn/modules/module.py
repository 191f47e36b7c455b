"""``torch.nn.modules.module``: ``Module``, the hooks registered for every module (``register_module_*``: forward
pre- and post-hooks, full and legacy backward hooks and backward pre-hooks, and the buffer, module and parameter
registration hooks; ``nn/module_hooks.py`` runs them), and the private helpers programs import from here."""
from numpy import dtype  # noqa: F401 - names PyTorch's file imports, which programs import from it (minigrad.dtype)

from ...device import device  # noqa: F401
from ...tensor import Tensor  # noqa: F401
from ...utils.hooks import RemovableHandle  # noqa: F401
from ..module import Buffer, Module, Parameter, _IncompatibleKeys  # noqa: F401
from ..module_hooks import (register_module_backward_hook, register_module_buffer_registration_hook,  # noqa: F401
                            register_module_forward_hook, register_module_forward_pre_hook,
                            register_module_full_backward_hook, register_module_full_backward_pre_hook,
                            register_module_module_registration_hook, register_module_parameter_registration_hook)

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook", "register_module_parameter_registration_hook"]


def _addindent(s_, numSpaces):
    """``s_`` with every line but the first indented by ``numSpaces`` spaces, and blank lines (only whitespace)
    made empty, as PyTorch's (a one-line string is returned as it is)."""
    first, *rest = s_.split("\n")
    if not rest:
        return s_
    return "\n".join([first] + [" " * numSpaces + line if line.strip() else "" for line in rest])
