"""ContinuousBernoulli (Loaiza-Ganem & Cunningham, 2019): the density C(p) p^x (1 - p)^(1 - x) on [0, 1], the
normalised Bernoulli likelihood that VAEs on [0, 1]-valued pixels use.

Its normaliser, mean, variance and inverse CDF have removable singularities at p = 1/2; inside
``lims`` = (0.499, 0.501) PyTorch replaces them by Taylor polynomials in (p - 1/2), and so does minigrad.
"""
import math

from ..nn import functional as F
from ..ops.elementwise import where
from . import constraints
from .discrete import BinaryParameters, _expanded_probs_or_logits
from .distribution import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, uniform

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryParameters, ExponentialFamily):
    """The continuous Bernoulli with ``probs`` (clamped away from 0 and 1) or ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        batch_shape = self._take(probs, logits)
        if probs is not None:
            if validate_args is not None and not constraints.unit_interval.check(self.probs)._data.all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded_probs_or_logits(self, ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with those inside the unstable region moved to its lower edge (their result is replaced)."""
        return where(self._outside_unstable_region(), self.probs, self.probs * 0 + self._lims[0])

    def _cont_bern_log_norm(self):
        """log C(p) = log(|log(1 - p) - log p| / |1 - 2p|); log 2 + 4/3 x + 104/45 x^2 (x = (p - 1/2)^2) near 1/2."""
        cut = self._cut_probs()
        below_half = where(cut <= 0.5, cut, cut * 0)
        above_half = where(cut >= 0.5, cut, cut * 0 + 1)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(cut <= 0.5, (-2.0 * below_half).log1p(),
                                                                        (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    def rsample(self, sample_shape=()):
        """The inverse CDF of u ~ U(0, 1)."""
        return self.icdf(uniform(self._extended_shape(sample_shape), self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, value * 0, where(value >= 1.0, value * 0 + 1, unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverse = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return where(self._outside_unstable_region(), inverse, value)

    def entropy(self):
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

