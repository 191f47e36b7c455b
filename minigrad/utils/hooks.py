"""Hook helpers with ``torch.utils.hooks``'s names: ``RemovableHandle`` (what ``register_hook`` and a module's
``register_forward_hook`` return: ``remove()``, or ``with handle:``), ``unserializable_hook`` and
``warn_if_has_hooks`` (hooks are Python functions: saving a tensor does not save them)."""
import warnings

from ..tensor import Tensor, _RemovableHandle as RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark the hook ``f`` as one that is not expected to survive saving (``warn_if_has_hooks`` stays silent)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """PyTorch's warning for each backward hook on ``tensor`` that is not marked ``unserializable_hook``."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"warn_if_has_hooks: expected a Tensor, got {type(tensor).__name__}")
    hooks = tensor._hooks if tensor.grad_fn is None else tensor.grad_fn.pre_hooks
    for hook in hooks:
        if not getattr(hook, "__torch_unserializable__", False):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
