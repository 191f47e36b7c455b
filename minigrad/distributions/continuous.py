"""Continuous distributions on the real line with location and scale parameters: Normal, Laplace, Uniform,
Exponential. Each ``rsample`` is a differentiable function of the parameters and of noise from minigrad's
generator: loc + scale * eps (Normal), the inverse CDF of a uniform (Laplace, Uniform, Exponential)."""
import math
import numbers

import numpy as np

from ..dtypes import float_info
from . import constraints
from ._ops import erfinv
from .distribution import Distribution, ExponentialFamily
from .. import _pytorch_stream as _stream
from ..random import torch_stream
from ..tensor import Tensor
from .utils import CenteredAtLoc, broadcast_all, euler_constant, exponential, standard_normal, uniform

__all__ = ["Normal", "Laplace", "Cauchy", "Gumbel", "Uniform", "Exponential"]

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


def _expanded(self, cls, batch_shape, _instance, names):
    """``self`` with each parameter in ``names`` expanded to ``batch_shape`` (the common ``expand``)."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = tuple(batch_shape)
    for name in names:
        setattr(new, name, getattr(self, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def _batch_shape_of(value):
    return () if isinstance(value, numbers.Number) else tuple(value.shape)


class _LocationScale(CenteredAtLoc):
    """What Normal and Laplace share: real ``loc`` (the mean and mode) and positive ``scale``, broadcast."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        shape = () if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number) else self.loc.shape
        Distribution.__init__(self, shape, validate_args=validate_args)


class Normal(_LocationScale, ExponentialFamily):
    """N(loc, scale^2)."""

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """-(x - loc)^2 / (2 scale^2) - log scale - log sqrt(2 pi)."""
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """1/2 + log(sqrt(2 pi) scale)."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Laplace(_LocationScale, Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        """The inverse CDF of u ~ U(eps - 1, 1): loc - scale sign(u) log(1 - |u|)."""
        eps = float(float_info(self.loc.dtype).eps)
        u = uniform(self._extended_shape(sample_shape), self.loc.dtype, eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Cauchy(_LocationScale, Distribution):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2)); no mean or variance."""

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc * float("nan")

    @property
    def variance(self):
        return self.loc * 0 + float("inf")

    def rsample(self, sample_shape=()):
        """loc + scale tan(pi (u - 1/2)), u ~ U(0, 1) in float64 (PyTorch's ``cauchy_`` noise, then its affine map)."""
        shape = self._extended_shape(sample_shape)
        u = _stream.uniform(torch_stream(), int(np.prod(shape, dtype=np.int64)), np.float64).reshape(shape)
        return self.loc + Tensor(_stream.libm(u.size).tan(np.pi * (u - 0.5)).astype(self.loc.dtype)) * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return ((value - 0.5) * math.pi).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(_LocationScale, Distribution):
    """Gumbel(loc, scale): the distribution of maxima, CDF exp(-exp(-(x - loc) / scale))."""

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gumbel, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        """loc - scale log(-log u), u ~ U(tiny, 1 - eps)."""
        info = float_info(self.loc.dtype)
        low, high = float(info.tiny), 1 - float(info.eps)        # PyTorch's Uniform(tiny, 1 - eps): low + rand * span
        u = uniform(self._extended_shape(sample_shape), self.loc.dtype) * (high - low) + low
        return self.loc - self.scale * (-(u.log())).log()

    def log_prob(self, value):
        """z - exp(z) - log scale, z = (loc - x) / scale."""
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-((self.loc - value) / self.scale).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-(value.log())).log()

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class Uniform(Distribution):
    """U[low, high)."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        shape = () if isinstance(low, numbers.Number) and isinstance(high, numbers.Number) else self.low.shape
        super().__init__(shape, validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        u = uniform(self._extended_shape(sample_shape), self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (value < self.high)
        return inside.to(self.low.dtype).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    """Exponential(rate): density rate exp(-rate x) on x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of(rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate * 0

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """Standard exponential noise e = -log(1 - u) (PyTorch's ``exponential_``), divided by the rate."""
        return exponential(self._extended_shape(sample_shape), self.rate.dtype) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

