"""BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, GroupNorm, LocalResponseNorm and CrossMapLRN2d: the channel-family
normalization modules.

Each holds its per-channel affine parameters and (BatchNorm, optionally InstanceNorm) running
buffers, with PyTorch's signatures, defaults, ``state_dict`` keys and mode rules, and calls the
fused functional form (``F.batch_norm``, ``F.instance_norm``, ``F.group_norm``). Any error is
raised before a buffer changes: unlike PyTorch, ``num_batches_tracked`` is incremented only
after the batch was accepted.
"""
import warnings

import numpy as np

from .. import dtypes
from ..creation import tensor
from ..ops.norm.batchnorm import batch_norm
from ..ops.norm.channels import count_batch
from ..ops.norm.groupnorm import group_norm, instance_norm
from ..ops.norm.localresponse import cross_map_lrn2d, local_response_norm
from .._checks import as_index
from ..tensor import Tensor, check_device
from . import init
from .module import Module, Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "GroupNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _factory_dtype(dtype):
    return dtypes.get_default_dtype() if dtype is None else np.dtype(dtype)


def _register_affine(module, num_features, affine, bias, dtype):
    """Per-channel ``weight`` and ``bias`` Parameters of ``num_features`` (None when absent)."""
    dtype = _factory_dtype(dtype)
    module.register_parameter("weight", Parameter(np.empty(num_features, dtype)) if affine else None)
    module.register_parameter("bias", Parameter(np.empty(num_features, dtype)) if affine and bias else None)


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """What BatchNorm and InstanceNorm share: affine parameters, running buffers, resets, repr."""

    _version = 2   # version 2 added num_batches_tracked (PyTorch's numbering)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        check_device(device)
        negative = as_index(num_features) is not None and as_index(num_features) < 0
        if negative and (affine or track_running_stats):   # PyTorch's error for the parameters and buffers
            raise RuntimeError(f"Trying to create tensor with negative dimension {num_features}: [{num_features}]")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _register_affine(self, num_features, affine, bias, dtype)
        dtype = _factory_dtype(dtype)
        tracked = track_running_stats
        self.register_buffer("running_mean", tensor(np.zeros(num_features, dtype)) if tracked else None)
        self.register_buffer("running_var", tensor(np.ones(num_features, dtype)) if tracked else None)
        self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64) if tracked else None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1.0)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _keeps_when_missing(self, name, version):
        """num_batches_tracked came with version 2 of these modules: a state_dict of an older version (or one
        without PyTorch's versions) loads without it and keeps the module's count, as PyTorch's does."""
        return name == "num_batches_tracked" and (version is None or version < 2)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _NoDimError(AttributeError, TypeError):
    """PyTorch's error for a norm module called on what is not a Tensor (its forward calls ``input.dim()``),
    and a TypeError too: minigrad's kind for an argument of the wrong type."""


def check_module_input(input):
    """A norm module's input must be a Tensor: else PyTorch's AttributeError (also a TypeError)."""
    if not isinstance(input, Tensor):
        raise _NoDimError(f"'{type(input).__name__}' object has no attribute 'dim'")


class _BatchNorm(_NormBase):
    """Normalizes each channel over the batch and spatial axes (docs/derivations/batchnorm.md).

    Training: batch statistics (biased variance), running buffers updated with the unbiased
    variance and momentum m (``momentum=None``: m = 1/num_batches_tracked, a cumulative average).
    Eval: the running buffers, or batch statistics when the module tracks none.
    """

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        check_module_input(input)
        self._check_input_dim(input)
        running_mean, running_var, num_batches = self.running_mean, self.running_var, self.num_batches_tracked
        training = self.training
        counting = training and self.track_running_stats and num_batches is not None
        if self.momentum is not None:
            factor = self.momentum
        else:
            factor = 1.0 / (int(num_batches.item()) + 1) if counting else 0.0
        # Buffers are passed when they are updated (training, tracked, a non-empty batch: an empty one has
        # no statistics, and PyTorch leaves the buffers as they are) or used (eval, present).
        passed = not training or (self.track_running_stats and input.numel() > 0)
        use_batch_stats = training or (running_mean is None and running_var is None)
        out = batch_norm(input, running_mean if passed else None, running_var if passed else None,
                         self.weight, self.bias, use_batch_stats, factor, self.eps)
        if counting:
            count_batch(num_batches)
        return out


class BatchNorm1d(_BatchNorm):
    """BatchNorm over (N, C) or (N, C, L) input: statistics over N (and L) per channel."""

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """BatchNorm over (N, C, H, W) input: statistics over N, H, W per channel."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """BatchNorm over (N, C, D, H, W) input: statistics over N, D, H, W per channel."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _InstanceNorm(_NormBase):
    """Normalizes each (sample, channel) over its spatial axes (docs/derivations/instancenorm.md).

    Instance statistics in training, and in eval unless ``track_running_stats=True`` (then the
    running buffers, updated in training with the batch average of the instance statistics).
    ``momentum=None`` is passed as 0.0: the buffers never move, ``num_batches_tracked`` stays 0.
    Unbatched input (one dim fewer) is normalized as a batch of one.
    """

    _no_batch_dim = None  # the input dim of an unbatched sample

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _state_errors(self, state_dict, prefix, version):
        """A state_dict without versions that holds running statistics for a module without them: a checkpoint
        from before PyTorch 0.4, when InstanceNorm tracked them by default. PyTorch's error, whatever ``strict``."""
        keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
        if version is not None or self.track_running_stats or not keys:
            return [], []
        klass, names = type(self).__name__, " and ".join(f'"{key}"' for key in keys)
        return [f"Unexpected running stats buffer(s) {names} for "
                f"{klass} with track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, this may "
                f"be expected because {klass} does not track running stats by default since 0.4.0. Please remove "
                f"these keys from state_dict. If the running stats are actually needed, instead set "
                f"track_running_stats=True in {klass} to enable them. See the documentation of {klass} for "
                f"details."], keys

    def _check_input_dim(self, input):
        if input.ndim not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D input "
                             f"(got {input.ndim}D input)")

    def forward(self, input):
        check_module_input(input)
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        unbatched = input.ndim == self._no_batch_dim
        # An empty input has no statistics: the running buffers stay as they are (PyTorch makes them NaN).
        updates_empty = self.training and input.numel() == 0
        running_mean, running_var = (None, None) if updates_empty else (self.running_mean, self.running_var)
        out = instance_norm(input.unsqueeze(0) if unbatched else input, running_mean, running_var,
                            self.weight, self.bias, self.training or not self.track_running_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """InstanceNorm over (N, C, L), or unbatched (C, L): statistics over L per sample and channel."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """InstanceNorm over (N, C, H, W), or unbatched (C, H, W): statistics over H, W per sample and channel."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """InstanceNorm over (N, C, D, H, W), or unbatched (C, D, H, W): statistics over D, H, W per sample and
    channel."""

    _no_batch_dim = 4


class GroupNorm(Module):
    """Normalizes each sample over groups of C/G channels and all spatial positions; per-channel affine
    (docs/derivations/groupnorm.md). No running statistics: the same in training and eval."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        num_groups, num_channels = (as_index(n) if isinstance(n, Tensor) and as_index(n) is not None else n
                                    for n in (num_groups, num_channels))   # a 0-d integer tensor, as PyTorch
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        check_device(device)
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _register_affine(self, num_channels, affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        check_module_input(input)
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Divides each value by a power of its neighbours' mean square across ``size`` channels (AlexNet's LRN,
    docs/derivations/localresponsenorm.md): y = x * (k + alpha/size * windowed sum of x^2)^(-beta). No
    parameters, no buffers."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        check_module_input(input)
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """LocalResponseNorm's formula on (N, C, H, W) with the window of PyTorch's port of Lua Torch's layer: channels
    [c - (size-1)//2, c + (size-1)//2], and channel 0 in every window, as PyTorch computes it. Its gradient is the
    derivative of that forward, where PyTorch's hand-written backward is not (docs/derivations/localresponsenorm.md,
    section 7). No parameters, no buffers."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        check_module_input(input)
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
