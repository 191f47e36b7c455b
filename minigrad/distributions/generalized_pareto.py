"""GeneralizedPareto(loc mu, scale sigma, concentration xi) (``torch.distributions.generalized_pareto``).

With z = (x - mu) / sigma the survival function is

    S(x) = (1 + xi z)^(-1/xi)      (xi != 0),      exp(-z)      (xi = 0),

on z >= 0, bounded above by z <= -1/xi when xi < 0. Concentrations within ``isclose`` of 0 (|xi| <= 1e-8)
take the xi = 0 (exponential) branch, as in PyTorch. Samples are icdf(U), U ~ Uniform(0, 1): differentiable.
"""
import math
import numbers

import numpy as np

from ..ops.elementwise import where
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, uniform

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto: Exponential for (mu, xi) = (0, 0), Pareto for xi > 0 and mu = sigma / xi, Uniform for
    xi = -1."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        all_numbers = all(isinstance(p, numbers.Number) for p in (loc, scale, concentration))
        super().__init__(() if all_numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = tuple(batch_shape)
        new.loc, new.scale, new.concentration = (p.expand(batch_shape)
                                                 for p in (self.loc, self.scale, self.concentration))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _exponential_branch(self):
        """Where xi counts as 0, and xi with those entries replaced by 1 (so that 1 / xi stays finite)."""
        xi = self.concentration
        is_zero = Tensor(np.isclose(xi._data, 0.0, rtol=1e-5, atol=1e-8))
        return is_zero, where(is_zero, 1.0, xi)

    def _z(self, value):
        return (value - self.loc) / self.scale

    def rsample(self, sample_shape=()):
        u = uniform(self._extended_shape(sample_shape), self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        """-log sigma - (1 / xi + 1) log(1 + xi z)  (-log sigma - z for xi = 0)."""
        value = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=self.loc.dtype))
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        is_zero, xi = self._exponential_branch()
        power = 1 / xi + 1                                  # 0 for xi = -1: the density is flat (Uniform)
        with np.errstate(invalid="ignore", divide="ignore"):
            tail = where(power == 0, power, power * (xi * z).log1p())
        return -self.scale.log() - where(is_zero, z, tail)

    def log_survival_function(self, value):
        """log S(x) = -log(1 + xi z) / xi  (-z for xi = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        is_zero, xi = self._exponential_branch()
        with np.errstate(invalid="ignore", divide="ignore"):
            return where(is_zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value):
        with np.errstate(divide="ignore"):
            return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        """mu + sigma (exp(-xi log(1 - p)) - 1) / xi  (mu - sigma log(1 - p) for xi = 0)."""
        is_zero, xi = self._exponential_branch()
        with np.errstate(divide="ignore"):
            log_1mp = (-value).log1p()
        power_branch = self.loc + self.scale / xi * (-xi * log_1mp).expm1()
        return where(is_zero, self.loc - self.scale * log_1mp, power_branch)

    @property
    def mean(self):
        """mu + sigma / (1 - xi) for xi < 1, NaN otherwise."""
        finite = self.concentration < 1
        xi = where(finite, self.concentration, 0.5)
        return where(finite, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        """sigma^2 / ((1 - xi)^2 (1 - 2 xi)) for xi < 1/2, NaN otherwise."""
        finite = self.concentration < 0.5
        xi = where(finite, self.concentration, 0.25)
        return where(finite, self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        """log sigma + xi + 1."""
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[mu, mu - sigma / xi] for xi < 0, [mu, inf] otherwise."""
        negative = self.concentration < 0
        xi = where(negative, self.concentration, -1.0)
        return constraints.interval(self.loc, where(negative, self.loc - self.scale / xi, math.inf))
