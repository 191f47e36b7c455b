"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical, Binomial, Poisson.

Those with probabilities take exactly one of ``probs`` and ``logits``; the other is computed when first asked
for (a ``lazy_property``), so gradients flow to whichever was given. Samples are drawn outside autograd."""
import math
import numbers

import numpy as np

from ..autograd import no_grad
from ..dtypes import float_info
from ..nn import functional as F
from ..ops.elementwise import where
from ..ops.index import one_hot
from .. import _pytorch_stream as _stream
from ..random import bernoulli_values, multinomial, torch_stream
from ..tensor import Tensor
from . import constraints
from .continuous import _batch_shape_of, _expanded
from .distribution import Distribution, ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, uniform, xlogy

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Binomial",
           "NegativeBinomial", "Poisson", "Geometric", "Multinomial"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _expanded_probs_or_logits(self, cls, batch_shape, _instance, event_shape=(), extra=()):
    """``expand`` of a distribution given by probs or logits: whichever was given (and ``extra``) expanded."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = tuple(batch_shape)
    for name in ("probs", "logits"):
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(batch_shape + tuple(event_shape)))
            new._param = getattr(new, name)
    for name in extra:
        setattr(new, name, getattr(self, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


class ProbsOrLogits:
    """A distribution given by ``probs`` or by ``logits``, the other computed on first use from the one given
    (``_param``): log-odds of one event (``_binary``) or log-probabilities over the last dim."""

    _binary = True

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)


class BinaryParameters(ProbsOrLogits):
    """A success probability given as ``probs`` or as ``logits`` (log-odds), the other computed on first use
    (Bernoulli, Binomial, LogitRelaxedBernoulli); ``_param`` is the one given."""

    def _take(self, probs, logits):
        """Keep whichever of ``probs`` and ``logits`` is given (exactly one must be); returns the batch shape."""
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        return _batch_shape_of(probs if probs is not None else logits)

    def _take_with_count(self, total_count, probs, logits):
        """``_take`` with a ``total_count`` broadcast against the parameter and cast to its dtype."""
        _one_of(probs, logits)
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        count, param = broadcast_all(total_count, given)
        setattr(self, name, param)
        self.total_count, self._param = count.type_as(param), param
        return tuple(param.shape)



class Bernoulli(BinaryParameters, ExponentialFamily):
    """1 with probability ``probs`` (= sigmoid(``logits``)), else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(self._take(probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded_probs_or_logits(self, Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = self.probs._data              # PyTorch: torch.bernoulli(probs.expand(shape))
            return Tensor(bernoulli_values(torch_stream(), np.broadcast_to(probs, shape)).astype(probs.dtype))

    def log_prob(self, value):
        """-BCE(logits, value) = value * logits - log(1 + exp(logits))."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = Tensor(np.arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape)))
        return values.expand((2,) + self._batch_shape) if expand else values


class Categorical(ProbsOrLogits, Distribution):
    """One of K categories (0 .. K-1) with probabilities ``probs`` (normalised over the last dim) or
    log-probabilities ``logits`` (normalised by their logsumexp)."""

    has_enumerate_support = True
    _binary = False

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = tuple(self._param.shape[:-1]) if self._param.ndim > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded_probs_or_logits(self, Categorical, batch_shape, _instance, (self._num_events,))
        Distribution.__init__(new, tuple(batch_shape), validate_args=False)   # the event shape stays ()
        new._num_events = self._num_events
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return Tensor(np.full(self._extended_shape(), np.nan, dtype=self.probs.dtype))

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return Tensor(np.full(self._extended_shape(), np.nan, dtype=self.probs.dtype))

    def sample(self, sample_shape=()):
        """Category indices (int64) of shape ``sample_shape + batch_shape``: as PyTorch, ``multinomial`` of each row
        with replacement, one column per sample."""
        sample_shape = tuple(sample_shape)
        n = int(np.prod(sample_shape, dtype=np.int64))
        with no_grad():
            rows = self.probs._data.reshape(-1, self._num_events)                      # (R, K)
        indices = multinomial(Tensor(rows), n, True)._data.T if n else np.zeros((0, rows.shape[0]))   # (n, R)
        return Tensor(indices.reshape(self._extended_shape(sample_shape)).astype(np.int64))

    def log_prob(self, value):
        """logits[value] (the normalised log-probability of each category index)."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = tuple(np.broadcast_shapes(value.shape, self.logits.shape[:-1] + (1,)))
        value = value.expand(shape)
        log_pmf = self.logits.expand(shape[:-1] + (self._num_events,))
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        """-sum p log p, with the logits clamped to the dtype's lowest finite value (0 * -inf = 0)."""
        min_real = float(float_info(self.logits.dtype).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = Tensor(np.arange(self._num_events, dtype=np.int64).reshape((-1,) + (1,) * len(self._batch_shape)))
        return values.expand((self._num_events,) + self._batch_shape) if expand else values


class CategoricalParameters:
    """``probs``, ``logits`` and ``param_shape`` of the Categorical ``_categorical`` a distribution wraps
    (OneHotCategorical, ExpRelaxedCategorical)."""

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def _num_events(self):
        return self._categorical._num_events


class OneHotCategorical(CategoricalParameters, Distribution):
    """A Categorical whose samples are one-hot vectors of length K (the event shape)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=()):
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._num_events).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = Tensor(np.eye(n, dtype=self._param.dtype).reshape((n,) + (1,) * len(self._batch_shape) + (n,)))
        return values.expand((n,) + self._batch_shape + (n,)) if expand else values


class Binomial(BinaryParameters, Distribution):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(self._take_with_count(total_count, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded_probs_or_logits(self, Binomial, batch_shape, _instance, extra=("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            n = np.broadcast_to(self.total_count._data, shape)     # PyTorch: torch.binomial of the expanded two
            p = np.broadcast_to(self.probs._data, shape)
            single = self.probs.dtype.itemsize < 8
            return Tensor(_stream.binomial(torch_stream(), n, p, single).astype(self.probs.dtype))

    def log_prob(self, value):
        """log C(n, k) + k logits - n log(1 + exp(logits)), the last written without overflow."""
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = (self.total_count + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (self.total_count - value + 1).lgamma()
        # n * max(logits, 0) + n * log1p(exp(-|logits|)) = n * log(1 + exp(logits))
        positive_part = (self.logits.clamp(min=0) + self.logits - self.logits.clamp(max=0)) / 2
        normalize_term = (self.total_count * positive_part
                          + self.total_count * (-self.logits.abs()).exp().log1p() - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count._data.max())
        if not (self.total_count._data == total_count).all():
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count._data.max())
        if not (self.total_count._data == total_count).all():
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = Tensor(np.arange(1 + total_count, dtype=self._param.dtype)
                        .reshape((-1,) + (1,) * len(self._batch_shape)))
        return values.expand((1 + total_count,) + self._batch_shape) if expand else values


class NegativeBinomial(BinaryParameters, Distribution):
    """The number of successes before ``total_count`` failures in Bernoulli(``probs``) trials (a Poisson whose
    rate is Gamma(total_count, exp(-logits)) distributed)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(self._take_with_count(total_count, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded_probs_or_logits(self, NegativeBinomial, batch_shape, _instance, extra=("total_count",))

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()):
        """A Poisson count with a Gamma(total_count, exp(-logits)) rate."""
        from .gamma_family import Gamma
        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
            return Tensor(_stream.poisson(torch_stream(), rate._data).astype(rate._data.dtype))   # torch.poisson

    def log_prob(self, value):
        """n log sigmoid(-logits) + k log sigmoid(logits) + lgamma(n + k) - lgamma(1 + k) - lgamma(n)."""
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -(self.total_count + value).lgamma() + (1.0 + value).lgamma() + self.total_count.lgamma()
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization


class Poisson(ExponentialFamily):
    """Poisson(rate): P(k) = rate^k exp(-rate) / k!."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of(rate) if not isinstance(rate, numbers.Number) else (),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            rate = np.broadcast_to(self.rate._data, shape)
            return Tensor(_stream.poisson(torch_stream(), rate).astype(self.rate.dtype))   # torch.poisson

    def log_prob(self, value):
        """k log(rate) - rate - log(k!)."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - (value + 1).lgamma()



class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` is the straight-through estimator (Bengio et al., 2013): the one-hot
    sample in the forward pass, the gradient of ``probs`` in the backward pass (sample + probs - probs.detach())."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Geometric(BinaryParameters, Distribution):
    """The number of failures before the first success in Bernoulli(``probs``) trials: P(k) = (1 - p)^k p."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(self._take(probs, logits), validate_args=validate_args)
        if self._validate_args and probs is not None and not (self.probs._data > 0).all():
            invalid = Tensor(self.probs._data[~(self.probs._data > 0)])
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                             f"invalid values:\n{invalid}")

    def expand(self, batch_shape, _instance=None):
        return _expanded_probs_or_logits(self, Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """floor(log u / log(1 - p)), u ~ U(tiny, 1): the inverse CDF."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = np.broadcast_to(self.probs._data, shape)
            u = uniform(shape, probs.dtype, float(float_info(probs.dtype).tiny), 1)._data   # uniform_(tiny, 1)
            with np.errstate(divide="ignore"):
                return Tensor(np.floor(np.log(u) / np.log1p(-probs)).astype(probs.dtype))

    def log_prob(self, value):
        """k log(1 - p) + log p (0 log 0 = 0 at p = 1, k = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class Multinomial(CategoricalParameters, Distribution):
    """Counts of ``total_count`` draws from a Categorical over the last dim."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """``total_count`` category draws, counted per category."""
        sample_shape = tuple(sample_shape)
        draws = self._categorical.sample((self.total_count,) + sample_shape)._data     # (n, *sample, *batch)
        k = self._num_events
        cells = int(np.prod(draws.shape[1:], dtype=np.int64))
        flat = (np.arange(cells) * k + draws.reshape(self.total_count, cells)).ravel()
        counts = np.bincount(flat, minlength=cells * k).reshape(draws.shape[1:] + (k,))   # (*sample, *batch, k)
        return Tensor(counts.astype(self.probs.dtype))

    def log_prob(self, value):
        """log n! - sum log x_i! + sum x_i logits_i (0 * -inf = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = where((value == 0) & (logits == float("-inf")), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = self.total_count
        # PyTorch takes lgamma(n + 1) of an int64 tensor, which it computes in float32: rounded the same way here
        term1 = n * self._categorical.entropy() - float(np.float32(math.lgamma(n + 1)))
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum((0, -1))
