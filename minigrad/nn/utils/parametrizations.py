"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as parametrizations (PyTorch's current
forms; ``nn.utils.parametrize`` explains the mechanism).

``weight_norm(module)`` stores ``parametrizations.weight.original0`` (g, the magnitude) and ``original1``
(v, the direction) and reads ``module.weight = _weight_norm(v, g, dim)``. ``spectral_norm(module)`` stores the
weight as ``parametrizations.weight.original`` and its power-iteration vectors as the buffers ``_u``, ``_v`` of
``parametrizations.weight.0``, and reads ``module.weight = weight / sigma``.
"""
from ...autograd import no_grad
from ...ops.norm.weightnorm import _weight_norm, norm_except_dim
from ...tensor import Tensor
from ..module import Module
from . import parametrize
from .spectral_norm import (check_power_iterations, default_dim, divided_by_sigma, power_iteration, random_unit,
                            weight_matrix)

__all__ = ["weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    """w = g * v / ||v|| (norm over every dim but ``dim``; the whole tensor for dim -1 or None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        """(g, v) = (||weight||, weight): the weight itself is a valid direction."""
        return norm_except_dim(weight, 2, self.dim), weight


def _parametrized_tensor(module, name):
    """``module.<name>``, which must be a Tensor (ValueError naming the module otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    return weight


def weight_norm(module, name="weight", dim=0):
    """Weight-normalize ``module.<name>`` as a parametrization; returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma = u^T W v estimated by power iteration on W = the weight as a matrix with ``dim``
    as rows (buffers ``_u``, ``_v``); a 1-d weight is simply divided by its norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}] but got "
                             f"{dim})")
        check_power_iterations(n_power_iterations)
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            W = weight_matrix(weight._data, self.dim)
            self.register_buffer("_u", Tensor(random_unit(W.shape[0], weight.dtype, eps)))
            self.register_buffer("_v", Tensor(random_unit(W.shape[1], weight.dtype, eps)))
            power_iteration(W, self._u, self._v, 15, eps, v_first=False)   # start from a good estimate

    def forward(self, weight):
        if weight.ndim == 1:
            return weight / weight.norm().clamp_min(self.eps)
        if self.training:
            with no_grad():
                power_iteration(weight_matrix(weight._data, self.dim), self._u, self._v, self.n_power_iterations,
                                self.eps, v_first=False)
        return divided_by_sigma(weight, self._u, self._v, self.dim)

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectrally normalize ``module.<name>`` as a parametrization; returns ``module``."""
    weight = _parametrized_tensor(module, name)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations,
                                                                     default_dim(module, dim), eps))
    return module
