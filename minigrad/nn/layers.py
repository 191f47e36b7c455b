"""The non-normalization layers: containers, Linear, Embedding, Dropout and activations.

Each layer owns its parameters and calls ``minigrad.nn.functional`` in ``forward``; the maths and the
backward passes live in ``minigrad/ops``. Defaults, initialization and reprs follow PyTorch.
"""
import math
import operator
from collections import OrderedDict

from .. import dtypes
from .._checks import size_param
from ..autograd import no_grad
from ..creation import empty
from ..tensor import check_device
from . import functional as F
from . import init
from .module import Module, Parameter, _indent

__all__ = ["Dropout", "Embedding", "GELU", "Identity", "Linear", "ModuleDict", "ModuleList", "ReLU",
           "Sequential", "SiLU", "Sigmoid", "Tanh"]


def _checked_index(idx, size, kind):
    """``idx`` as a non-negative position in a container of ``size`` (negative counts from the end)."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range for {kind} of length {size}")
    return idx % size


# ---------------------------------------------------------------------- containers
class Sequential(Module):
    """Chain of modules: ``forward(x)`` feeds ``x`` through each child in order.

    Built from modules (children named ``'0'``, ``'1'``, ...) or from one OrderedDict of named modules.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key(self, idx):
        return list(self._modules)[_checked_index(idx, len(self), "Sequential")]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            delattr(self, key)
        # keep the remaining children numbered 0..n-1, as PyTorch does
        renumbered = list(self._modules.items())
        self._modules.clear()
        self._modules.update((str(i), m) for i, (_, m) in enumerate(renumbered))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        """``module`` at position ``index`` (negative from the end), the later children moved up one."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))
        return self

    def pop(self, key):
        """The child (or a Sequential of the children, for a slice) at ``key``, removed."""
        value = self[key]
        del self[key]
        return value

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def _check_factor(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other):
        """A Sequential of these children repeated ``other`` times (the same module objects)."""
        self._check_factor(other)
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other):
        self._check_factor(other)
        return self.extend(list(self) * (other - 1))

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children ``'0'``, ``'1'``, ... (no ``forward`` of its own)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_checked_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_checked_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        kept = list(self._modules.values())
        del kept[idx if isinstance(idx, slice) else _checked_index(idx, len(self), "ModuleList")]
        self._modules.clear()
        self.extend(kept)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return type(self)(list(self) + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self.extend(modules)

    def pop(self, key):
        """The module (or a ModuleList, for a slice) at ``key``, removed."""
        value = self[key]
        del self[key]
        return value

    def _child_lines(self):
        """PyTorch's compact listing: runs of identical children print once as ``(2-4): 3 x Linear(...)``."""
        lines, reprs = [], [repr(m) for m in self]
        start = 0
        while start < len(reprs):
            end = start
            while end + 1 < len(reprs) and reprs[end + 1] == reprs[start]:
                end += 1
            text = _indent(reprs[start], 2)
            lines.append(f"({start}): {text}" if end == start else f"({start}-{end}): {end - start + 1} x {text}")
            start = end + 1
        return lines


class ModuleDict(Module):
    """A dict of modules, registered as children under their keys (insertion order kept)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


# ---------------------------------------------------------------------- layers with parameters
class Linear(Module):
    """y = x @ weight.T + bias, with weight (out_features, in_features) and bias (out_features,).

    Initialization as in PyTorch: weight ~ kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)),
    and bias ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        check_device(device)
        super().__init__()
        in_features = size_param(in_features, "Linear", "in_features")
        out_features = size_param(out_features, "Linear", "out_features")
        self.in_features, self.out_features = in_features, out_features
        dtype = dtype or dtypes.get_default_dtype()
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype))
        self.bias = Parameter(empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under PyTorch's name for MultiheadAttention's ``out_proj`` (which PyTorch's quantization tools
    leave alone); the same layer, so its type name and repr are PyTorch's."""


class Embedding(Module):
    """A lookup table: ``forward(indices)`` returns ``weight[indices]``, weight (num_embeddings, embedding_dim).

    Initialized N(0, 1) as in PyTorch; the row ``padding_idx`` (if given) starts at zero and receives
    no gradient.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        check_device(device)
        super().__init__()
        num_embeddings = size_param(num_embeddings, "Embedding", "num_embeddings")
        embedding_dim = size_param(embedding_dim, "Embedding", "embedding_dim")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype or dtypes.get_default_dtype()),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (num_embeddings, embedding_dim), sharing its memory; frozen
        (no gradient) unless ``freeze=False``. The ``padding_idx`` row is kept as given (not zeroed)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def _lookup_options(self):
        """The repr of the options other than ``padding_idx`` and ``sparse`` (shared with EmbeddingBag)."""
        text = "" if self.max_norm is None else f", max_norm={self.max_norm}"
        text += "" if self.norm_type == 2 else f", norm_type={self.norm_type}"
        return text + (", scale_grad_by_freq=True" if self.scale_grad_by_freq else "")

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text + self._lookup_options() + (", sparse=True" if self.sparse else "")


# ---------------------------------------------------------------------- dropout and activations
class Dropout(Module):
    """Zero each element with probability ``p`` in training and scale the rest by 1/(1-p); identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:   # as PyTorch: NaN passes here and is refused when the layer runs
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _Activation(Module):
    """An elementwise activation without state; ``inplace=True`` writes the result into the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Activation):
    """max(x, 0)."""

    def forward(self, input):
        return F.relu(input, self.inplace)


class SiLU(_Activation):
    """x * sigmoid(x)."""

    def forward(self, input):
        return F.silu(input, self.inplace)


class GELU(Module):
    """x * Phi(x) (``approximate='none'``) or its tanh approximation (``approximate='tanh'``)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)
