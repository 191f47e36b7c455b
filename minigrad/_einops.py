"""einops on minigrad tensors: a backend, and the layers as ``einops.layers.minigrad``.

einops finds the backend of a tensor among the subclasses of ``einops._backends.AbstractBackend`` whose
``framework_name`` is an imported module: defining ``MinigradBackend`` (``framework_name = "minigrad"``)
is the registration. ``minigrad/__init__.py`` imports this module when einops is installed (importing
einops costs ~17 ms), so ``rearrange``, ``reduce``, ``repeat``, ``einsum``, ``pack``/``unpack`` accept
minigrad tensors, differentiably: every step is a minigrad op (reshape, permute, expand, sum, ...).

The layers ``Rearrange``, ``Reduce`` and ``EinMix`` are einops' own mixins on ``minigrad.nn.Module``.
einops ships one module per framework (``einops.layers.torch``, ``einops.layers.flax``, ...); this one is
registered under the name ``einops.layers.minigrad``, so a program ported with ``import minigrad as torch``
changes ``from einops.layers.torch import Rearrange`` to ``from einops.layers.minigrad import Rearrange``
(``einops.layers.torch`` builds ``torch.nn.Module`` layers around PyTorch's own tensors).
"""
import sys

import einops.layers
from einops._backends import AbstractBackend
from einops.layers import RearrangeMixin, ReduceMixin
from einops.layers._einmix import _EinmixMixin

import minigrad
from minigrad import nn


class MinigradBackend(AbstractBackend):
    framework_name = "minigrad"

    def is_appropriate_type(self, tensor):
        return isinstance(tensor, minigrad.Tensor)

    def from_numpy(self, x):
        variable = minigrad.from_numpy(x)
        if self.is_float_type(variable):
            variable.requires_grad_(True)
        return variable

    def to_numpy(self, x):
        return x.detach().numpy()

    def arange(self, start, stop):
        return minigrad.arange(start, stop, dtype=minigrad.int64)

    def reduce(self, x, operation, reduced_axes):
        reduced_axes = tuple(reduced_axes)
        if operation == "min":
            return x.amin(dim=reduced_axes)
        if operation == "max":
            return x.amax(dim=reduced_axes)
        if operation in ("sum", "mean"):
            return getattr(x, operation)(dim=reduced_axes)
        if operation in ("any", "all", "prod"):
            if not hasattr(x, operation):
                raise NotImplementedError(f"einops reduction '{operation}': minigrad has no Tensor.{operation} yet")
            for axis in sorted(reduced_axes, reverse=True):   # one axis at a time, as for PyTorch
                x = getattr(x, operation)(dim=axis)
            return x
        raise NotImplementedError("Unknown reduction ", operation)

    def transpose(self, x, axes):
        return x.permute(tuple(axes))

    def stack_on_zeroth_dimension(self, tensors):
        return minigrad.stack(list(tensors))

    def add_axes(self, x, n_axes, pos2len):
        repeats = [-1] * n_axes
        for axis_position, axis_length in pos2len.items():
            x = self.add_axis(x, axis_position)
            repeats[axis_position] = axis_length
        return x.expand(repeats)

    def tile(self, x, repeats):
        return x.repeat(tuple(repeats))

    def concat(self, tensors, axis):
        return minigrad.cat(list(tensors), dim=axis)

    def add_axis(self, x, new_position):
        return minigrad.unsqueeze(x, new_position)

    def is_float_type(self, x):
        return x.dtype in (minigrad.float16, minigrad.float32, minigrad.float64)

    def layers(self):
        return sys.modules[__name__]

    def einsum(self, pattern, *x):
        return minigrad.einsum(pattern, *x)


# --------------------------------------------------------------------------- layers (einops.layers.minigrad)
class Rearrange(RearrangeMixin, nn.Module):
    def forward(self, input):
        return self._apply_recipe(input)


class Reduce(ReduceMixin, nn.Module):
    def forward(self, input):
        return self._apply_recipe(input)


class EinMix(_EinmixMixin, nn.Module):
    """einops' EinMix: an einsum with a managed weight (and bias), uniform in +-bound as einops initialises."""

    def _create_parameters(self, weight_shape, weight_bound, bias_shape, bias_bound):
        self.weight = nn.Parameter(minigrad.zeros(weight_shape).uniform_(-weight_bound, weight_bound))
        self.bias = None
        if bias_shape is not None:
            self.bias = nn.Parameter(minigrad.zeros(bias_shape).uniform_(-bias_bound, bias_bound))

    def _create_rearrange_layers(self, pre_reshape_pattern, pre_reshape_lengths, post_reshape_pattern,
                                 post_reshape_lengths):
        self.pre_rearrange = None
        if pre_reshape_pattern is not None:
            self.pre_rearrange = Rearrange(pre_reshape_pattern, **pre_reshape_lengths)
        self.post_rearrange = None
        if post_reshape_pattern is not None:
            self.post_rearrange = Rearrange(post_reshape_pattern, **post_reshape_lengths)

    def forward(self, input):
        if self.pre_rearrange is not None:
            input = self.pre_rearrange(input)
        result = minigrad.einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result = result + self.bias
        if self.post_rearrange is not None:
            result = self.post_rearrange(result)
        return result


__all__ = ["EinMix", "MinigradBackend", "Rearrange", "Reduce"]

# ``from einops.layers.minigrad import Rearrange``: this module under einops' per-framework name
sys.modules.setdefault("einops.layers.minigrad", sys.modules[__name__])
einops.layers.minigrad = sys.modules["einops.layers.minigrad"]
