"""The distributions built on gamma variates: Gamma, Dirichlet (normalised gammas) and Beta (a two-category
Dirichlet). Their ``rsample`` is differentiable in the concentrations by implicit reparameterisation
(``_ops.py``); log_prob and entropy are written with lgamma and digamma (``minigrad/ops/gamma.py``)."""
import math
import numbers

import numpy as np

from ..dtypes import float_info
from ..ops.elementwise import where
from ..ops.shape import stack
from ..tensor import Tensor
from . import constraints
from ._ops import dirichlet_sample, gammainc, standard_gamma
from .continuous import _expanded
from .distribution import Distribution, ExponentialFamily
from .utils import broadcast_all, standard_normal, xlogy

__all__ = ["Gamma", "Chi2", "StudentT", "FisherSnedecor", "Dirichlet", "Beta"]


class Gamma(ExponentialFamily):
    """Gamma(concentration a, rate b): density b^a x^(a-1) exp(-b x) / Gamma(a) on x > 0."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if both_numbers else self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """A standard gamma sample of the concentration (implicit gradient) divided by the rate."""
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = float_info(value._data.dtype).tiny
        np.maximum(value._data, tiny, out=value._data)     # as PyTorch: away from 0, outside autograd
        return value

    def log_prob(self, value):
        """a log b + (a - 1) log x - b x - lgamma(a)."""
        value = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=self.rate.dtype))
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - self.concentration.lgamma())

    def entropy(self):
        """a - log b + lgamma(a) + (1 - a) digamma(a)."""
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(tuple(batch_shape))
        return new

    @property
    def mean(self):
        return where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """scale^2 df / (df - 2) for df > 2, inf for 1 < df <= 2, undefined (NaN) for df <= 1."""
        finite = self.scale.pow(2) * self.df / where(self.df > 2, self.df - 2, 1.0)
        return where(self.df > 2, finite, where(self.df > 1, float("inf"), float("nan")))

    def rsample(self, sample_shape=()):
        """loc + scale X / sqrt(Z / df), X ~ N(0, 1), Z ~ Chi2(df)."""
        X = standard_normal(self._extended_shape(sample_shape), self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * (Z / self.df).rsqrt())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma()
             - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - Z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """Fisher-Snedecor F(df1, df2): the ratio (X1 / df1) / (X2 / df2) of chi-squared variables, drawn as the ratio
    of Gamma(df / 2, df) variates."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1, self._gamma2 = Gamma(self.df1 * 0.5, self.df1), Gamma(self.df2 * 0.5, self.df2)
        both_numbers = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if both_numbers else tuple(self.df1.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return where(self.df2 <= 2, float("nan"), self.df2 / (self.df2 - 2))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, float("nan"), mode)

    @property
    def variance(self):
        df2 = where(self.df2 <= 4, float("nan"), self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).reshape(shape)
        X2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = float(float_info(X2.dtype).tiny)
        Y = X1 / X2.clamp(min=tiny)
        np.maximum(Y._data, tiny, out=Y._data)            # as PyTorch's clamp_ outside autograd
        return Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): density prod x_i^(a_i - 1) / B(a) on the simplex (the last dim)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = tuple(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self._event_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return dirichlet_sample(self.concentration.expand(shape))

    def log_prob(self, value):
        """sum (a_i - 1) log x_i + lgamma(sum a_i) - sum lgamma(a_i)."""
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + a.sum(-1).lgamma() - a.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        a_m1 = (self.concentration - 1).clamp(min=0.0)
        mode = a_m1 / a_m1.sum(-1, keepdim=True)
        below_one = (self.concentration < 1)._data.all(-1)
        if below_one.any():     # every a_i < 1: the mass piles up at a vertex, the largest a_i's
            vertex = np.eye(mode.shape[-1], dtype=mode.dtype)[self.concentration._data.argmax(-1)]
            mode = Tensor(np.where(below_one[..., None], vertex, mode._data))
        return mode

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        """log B(a) + (a_0 - k) digamma(a_0) - sum (a_i - 1) digamma(a_i), a_0 = sum a_i."""
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return a.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((a - 1.0) * a.digamma()).sum(-1)


class Beta(ExponentialFamily):
    """Beta(concentration1 a, concentration0 b) on [0, 1]: the first coordinate of Dirichlet([a, b])."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number):
            from ..creation import tensor
            pair = tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            pair = stack([c1, c0], -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(tuple(batch_shape))
        Distribution.__init__(new, tuple(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

