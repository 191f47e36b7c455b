"""``Distribution``: the interface every distribution has (``torch.distributions.Distribution``).

Shapes: a distribution holds a batch of independent distributions (``batch_shape``), each over events of
``event_shape``; ``sample(sample_shape)`` has shape ``sample_shape + batch_shape + event_shape`` and
``log_prob(value)`` one number per event, ``sample_shape + batch_shape``.

Validation (``validate_args``, on by default as in PyTorch when Python runs without ``-O``): the parameters are
checked against ``arg_constraints`` when the distribution is built, and values against ``support`` in
``log_prob``/``cdf``/``icdf``; failures raise PyTorch's ``ValueError`` texts.
"""
import warnings

from ..autograd import no_grad
from ..tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _size(shape):
    """A shape argument (tuple, list, Size-like) as a tuple of ints."""
    return tuple(int(s) for s in shape)


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for distributions built afterwards without ``validate_args``."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = _size(batch_shape), _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                              "or initialize the distribution with `validate_args=False` to turn off validation.",
                              stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue     # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue     # not computed yet: the parameter given was the other form (probs or logits)
                value = getattr(self, param)
                if not constraint.check(value)._data.all():
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A view of this distribution with a larger ``batch_shape`` (parameters expanded, not copied)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample (or ``sample_shape`` of them) outside autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        """``sample_shape + batch_shape + event_shape``."""
        return _size(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        """PyTorch's checks of a value to score: a Tensor, whose rightmost dims are the event shape and
        broadcast with the batch shape, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {_show(value.shape)} vs "
                             f"{_show(self._event_shape)}.")
        actual, expected = tuple(value.shape), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {_show(actual)} vs "
                                 f"{_show(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not support.check(value)._data.all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else _show(self.__dict__[p].shape)}"
                          for p in names)
        return f"{type(self).__name__}({shown})"


def _show(shape):
    """A shape as minigrad prints one in errors (PyTorch: ``torch.Size([...])``)."""
    return f"minigrad.Size({list(shape)})"


class ExponentialFamily(Distribution):
    """Marks the distributions of exponential-family form (PyTorch's base class of Normal, Gamma, ...)."""
