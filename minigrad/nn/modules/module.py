"""``torch.nn.modules.module``: ``Module``, and the private helpers programs import from here.

Absent (minigrad has no global module hooks): ``register_module_forward_pre_hook``,
``register_module_forward_hook``, ``register_module_full_backward_pre_hook``, ``register_module_backward_hook``,
``register_module_full_backward_hook`` and the ``register_module_{buffer,module,parameter}_registration_hook``s.
"""
from ..module import Module, _IncompatibleKeys  # noqa: F401

__all__ = ["Module"]


def _addindent(s_, numSpaces):
    """``s_`` with every line but the first indented by ``numSpaces`` spaces, and blank lines (only whitespace)
    made empty, as PyTorch's (a one-line string is returned as it is)."""
    first, *rest = s_.split("\n")
    if not rest:
        return s_
    return "\n".join([first] + [" " * numSpaces + line if line.strip() else "" for line in rest])
