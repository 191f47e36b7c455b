"""``Variable``: PyTorch's pre-0.4 wrapper, kept (as PyTorch keeps it) so that old programs run.

Since PyTorch 0.4 a Variable *is* a Tensor: ``Variable(t, requires_grad=True)`` returns a new tensor
sharing ``t``'s memory, cut from ``t``'s graph (a leaf), with ``requires_grad`` as asked; ``Variable()``
is an empty tensor, and ``isinstance(t, Variable)`` holds for every tensor. ``volatile`` is accepted
with PyTorch's warning and ignored.
"""
import warnings

from . import function as _function


class _VariableMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, _function.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: ``data`` detached, as a Tensor."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        Tensor = _function.Tensor
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from ..creation import tensor
            data = tensor([])
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
