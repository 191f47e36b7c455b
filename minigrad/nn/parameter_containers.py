"""``nn.ParameterList``, ``nn.ParameterDict`` and ``nn.Buffer``, with PyTorch's registration rules.

A ParameterList registers its entries as parameters ``'0'``, ``'1'``, ... and a ParameterDict under their keys, so
they appear in ``parameters()``, ``named_parameters()`` and ``state_dict()``; a plain Tensor put in either becomes
a ``Parameter`` (sharing its data), other values are kept as ordinary attributes, as PyTorch keeps them.
``Buffer(tensor, persistent=True)`` assigned to a module attribute registers a buffer.
"""
from ..tensor import Tensor
from .module import Buffer, Module, Parameter  # noqa: F401 (Buffer: nn.Buffer lives with Module)


def _as_parameter(value):
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(value, Parameter) else value


class ParameterList(Module):
    """A list of parameters, registered as ``'0'``, ``'1'``, ..."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _index(self, idx):
        idx = int(idx)
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return idx % self._size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(self._size)[idx]])
        return getattr(self, str(self._index(idx)))

    def __setitem__(self, idx, value):
        setattr(self, str(self._index(idx)), _as_parameter(value))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, values):
        return self.extend(values)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        self._size += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        """PyTorch's lines, each indented by two spaces (so one entry prints as ``ParameterList(  (0): ...)``)."""
        lines = []
        for i, p in enumerate(self):
            if isinstance(p, Tensor):
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({i}): {kind} containing: [minigrad.{p.dtype} of size {_size(p)}]")
            else:
                lines.append(f"  ({i}): Object of type: {type(p).__name__}")
        return "\n".join(lines)


class ParameterDict(Module):
    """A dict of parameters, registered under their keys (insertion order kept)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, not {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def clear(self):
        for key in list(self._keys):
            del self[key]

    def copy(self):
        return ParameterDict(dict(self.items()))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self):
        """The last (key, parameter) added, removed."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with each of ``keys`` holding ``default``."""
        return ParameterDict((key, default) for key in keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __ior__(self, other):
        self.update(other)
        return self

    def update(self, parameters):
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        """PyTorch's lines: as ParameterList's, with the legacy type name (``minigrad.FloatTensor``)."""
        return "\n".join(f"  ({k}): {'Parameter' if isinstance(v, Parameter) else type(v).__name__} containing: "
                         f"[{v.type()} of size {_size(v)}]" if isinstance(v, Tensor) else
                         f"  ({k}): Object of type: {type(v).__name__}" for k, v in self.items())


def _size(t):
    """A tensor's size as PyTorch's containers print it: ``2x3``."""
    return "x".join(map(str, t.shape))


__all__ = ["ParameterList", "ParameterDict", "Buffer"]
