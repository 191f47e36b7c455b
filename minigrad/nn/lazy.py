"""Lazy modules: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d and
LazyInstanceNorm1d/2d/3d, whose input size (``in_features``, ``in_channels``, ``num_features``) is read from
the first input they see.

Until then their parameters and running buffers are ``UninitializedParameter`` / ``UninitializedBuffer``
placeholders (no shape; ``Module.to`` still records their dtype). The first call materialises them from the
input's shape, initialises them as the eager module does (``reset_parameters``), and the module then becomes
that eager module (``LazyConv2d`` turns into a ``Conv2d``), as in PyTorch.
"""
import numpy as np

from .. import dtypes
from ..tensor import Tensor, check_device
from .channel_norms import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import Linear
from .module import Module, Parameter

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear", "UninitializedBuffer",
           "UninitializedParameter"]


def _placeholder(dtype):
    return np.empty(0, dtype=dtypes.get_default_dtype() if dtype is None else np.dtype(dtype))


class _Uninitialized:
    """The placeholder's behaviour: ``materialize(shape)`` gives it data (of its recorded dtype) and turns it
    into the eager class."""

    __slots__ = ()
    eager = None
    lazy_placeholder = True   # load_state_dict gives it the checkpoint's shape (nn/module.py), as PyTorch's lazy hook

    def materialize(self, shape, device=None, dtype=None):
        check_device(device)
        dtype = self._data.dtype if dtype is None else np.dtype(dtype)
        self._data = np.empty(tuple(shape), dtype=dtype)
        self.__class__ = self.eager

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape the first forward decides."""

    __slots__ = ()
    eager = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        check_device(device)
        super().__init__(_placeholder(dtype), requires_grad=requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape the first forward decides."""

    __slots__ = ()
    eager = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        check_device(device)
        super().__init__(_placeholder(dtype), requires_grad=requires_grad)


def _is_uninitialized(t):
    return isinstance(t, _Uninitialized)


class LazyModuleMixin:
    """Materialises the placeholders at the first call (``initialize_parameters(input)``), then becomes
    ``cls_to_become``."""

    cls_to_become = None
    size_name = None   # the attribute the first input decides: in_features, in_channels or num_features

    def has_uninitialized_params(self):
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(_is_uninitialized(t) for t in tensors)

    def __call__(self, *args, **kwargs):
        # the first call (then the module becomes cls_to_become): also after load_state_dict filled the placeholders
        self.initialize_parameters(*args, **kwargs)
        if not self.has_uninitialized_params() and self.cls_to_become is not None:
            self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)

    def reset_parameters(self):
        """The eager module's initialisation, once the parameters exist (a no-op before)."""
        if not self.has_uninitialized_params() and getattr(self, self.size_name) != 0:
            super().reset_parameters()

    def _materialize_all(self, shapes):
        """Give every placeholder named in ``shapes`` its shape, then initialise as the eager module does. Tensors
        a partial ``load_state_dict(..., strict=False)`` filled keep their loaded values (PyTorch 2.13 crashes on
        such a module's first call); a loaded one of another shape than the input implies is refused."""
        loaded = {}
        for name, shape in shapes.items():
            t = getattr(self, name, None)
            if _is_uninitialized(t):
                t.materialize(shape)
            elif t is not None:
                if tuple(t.shape) != tuple(shape):
                    raise RuntimeError(f"{type(self).__name__}: the loaded {name} has shape {list(t.shape)}, but the "
                                       f"first input makes it {list(shape)}")
                loaded[name] = t.detach().numpy().copy()
        self.reset_parameters()
        for name, values in loaded.items():
            getattr(self, name)._data[...] = values


# --------------------------------------------------------------------------- Linear
class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose ``in_features`` is the last dimension of its first input."""

    cls_to_become = Linear
    size_name = "in_features"

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self._materialize_all({"weight": (self.out_features, self.in_features), "bias": (self.out_features,)})
        if self.in_features == 0:          # the weight came from load_state_dict: as PyTorch, check and take its size
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# --------------------------------------------------------------------------- convolutions
class _LazyConv(LazyModuleMixin):
    """A convolution whose ``in_channels`` is the channel size of its first input."""

    size_name = "in_channels"

    def _lazy_init(self, out_channels, bias, dtype):
        self.out_channels = out_channels
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():   # loaded by load_state_dict: in_channels stays 0, as in PyTorch
            return
        batched = input.ndim == self.dims + 2
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise RuntimeError(f"Expected {self.dims + 1}D (unbatched) or {self.dims + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        self.in_channels = input.shape[1] if batched else input.shape[0]
        if self.in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        self._materialize_all({"weight": (*shape, *self.kernel_size), "bias": (self.out_channels,)})


def _lazy_conv(eager, transposed):
    """The lazy twin of a convolution class: its signature without ``in_channels``."""
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            eager.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                           padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            eager.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device,
                           dtype)
            self._lazy_init(out_channels, bias, dtype)
    name = "Lazy" + eager.__name__
    doc = f"{eager.__name__} whose ``in_channels`` is the channel size of its first input."
    return type(name, (_LazyConv, eager), {"__init__": __init__, "cls_to_become": eager, "__doc__": doc,
                                           "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)


# --------------------------------------------------------------------------- norms
class _LazyNorm(LazyModuleMixin):
    """A BatchNorm or InstanceNorm whose ``num_features`` is the channel size of its first input."""

    size_name = "num_features"

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = Tensor(np.array(0, dtype=np.int64))

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():   # loaded by load_state_dict: num_features stays 0, as in PyTorch
            return
        self.num_features = input.shape[1]   # as PyTorch, also for unbatched input
        shape = (self.num_features,)
        self._materialize_all({name: shape for name in ("weight", "bias", "running_mean", "running_var")})


def _lazy_norm(eager):
    """The lazy twin of a norm class. As in PyTorch, the lazy InstanceNorms default to affine=True and
    track_running_stats=True too (their eager classes to False)."""
    doc = f"{eager.__name__} whose ``num_features`` is the channel size of its first input."
    return type("Lazy" + eager.__name__, (_LazyNorm, eager), {"cls_to_become": eager, "__doc__": doc,
                                                              "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
