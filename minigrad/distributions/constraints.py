"""Constraints: the sets a distribution's parameters and values live in (``torch.distributions.constraints``).

``constraint.check(value)`` gives a bool Tensor, one element per event: the value's shape with the
constraint's ``event_dim`` rightmost dims reduced. ``is_discrete`` and ``event_dim`` describe the set, and the
``repr`` is PyTorch's (it appears in the validation errors).
"""
import numpy as np

from ..dtypes import float_info
from ..tensor import Tensor

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "MixtureSameFamilyConstraint", "multinomial", "nonnegative", "nonnegative_integer",
           "one_hot", "positive", "positive_semidefinite", "positive_definite", "positive_integer", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


def _array(value):
    return value._data if isinstance(value, Tensor) else np.asarray(value)


class Constraint:
    """A region over which a variable is valid. Subclasses define ``_holds(array)`` (elementwise over the
    value's array) or override ``check``."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool Tensor: whether each event of ``value`` satisfies the constraint."""
        return Tensor(np.asarray(self._holds(_array(value))))

    def _holds(self, x):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder: the support depends on other variables, and nothing is checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is (an instance of) ``dependent``."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: ``support`` of distributions whose bounds are parameters
    (the class attribute is the placeholder, an instance's attribute the constraint the method returns)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more rightmost dims making up one event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"Expected base_constraint to be a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise AssertionError(f"Expected reinterpreted_batch_ndims to be a non-negative int, got "
                                 f"{reinterpreted_batch_ndims!r}")
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = _array(self.base_constraint.check(value))
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            raise ValueError(f"Expected value.dim() >= {result.ndim + n} but got {_array(value).ndim}")
        return Tensor(np.asarray(result.reshape(result.shape[:result.ndim - n] + (-1,)).all(-1)))

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily: ``base_constraint`` checked on the value against every component (the
    component dim added), then all components' answers joined."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        x = _array(value)
        if x.ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {x.ndim}")
        result = _array(self.base_constraint.check(np.expand_dims(x, -1 - self.event_dim)))
        keep = x.ndim - self.event_dim
        return Tensor(np.asarray(result.reshape(result.shape[:keep] + (-1,)).all(-1)))

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def _holds(self, x):
        return (x == 0) | (x == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def _holds(self, x):
        return ((x == 0) | (x == 1)).all(-1) & (x.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _holds(self, x):
        return (x % 1 == 0) & (_array(self.lower_bound) <= x) & (x <= _array(self.upper_bound))

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _holds(self, x):
        return (x % 1 == 0) & (x >= _array(self.lower_bound))

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    """The extended real line [-inf, inf] (NaN is refused)."""

    def _holds(self, x):
        return x == x


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _holds(self, x):
        return _array(self.lower_bound) < x

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def _holds(self, x):
        return _array(self.lower_bound) <= x


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def _holds(self, x):
        return x < _array(self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _holds(self, x):
        return (_array(self.lower_bound) <= x) & (x <= _array(self.upper_bound))

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def _holds(self, x):
        return (_array(self.lower_bound) <= x) & (x < _array(self.upper_bound))


class _Simplex(Constraint):
    """Non-negative vectors summing to 1 (to within 1e-6) in the last dim."""

    event_dim = 1

    def _holds(self, x):
        return (x >= 0).all(-1) & (np.abs(x.sum(-1) - 1) < 1e-6)


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def _holds(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def _holds(self, x):
        return (np.tril(x) == x).reshape(x.shape[:-2] + (-1,)).min(-1)


class _LowerCholesky(Constraint):
    """Lower triangular with a positive diagonal."""

    event_dim = 2

    def _holds(self, x):
        lower = (np.tril(x) == x).reshape(x.shape[:-2] + (-1,)).min(-1)
        return lower & (np.diagonal(x, axis1=-2, axis2=-1) > 0).min(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit norm."""

    event_dim = 2

    def _holds(self, x):
        tol = float_info(x.dtype).eps * x.shape[-1] * 10
        unit_rows = (np.abs(np.linalg.norm(x, axis=-1) - 1) <= tol).all(-1)
        return _LowerCholesky()._holds(x) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def _holds(self, x):
        return np.full(x.shape[:-2], x.shape[-2] == x.shape[-1], dtype=bool)


class _Symmetric(_Square):
    def _holds(self, x):
        square = super()._holds(x)
        if not square.all():
            return square
        return np.isclose(x, np.swapaxes(x, -1, -2), atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def _holds(self, x):
        symmetric = super()._holds(x)
        if not symmetric.all():
            return symmetric
        return (np.linalg.eigvalsh(x) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def _holds(self, x):
        symmetric = super()._holds(x)
        if not symmetric.all():
            return symmetric
        return (np.linalg.eigvalsh(x) > 0).all(-1)


class _Cat(Constraint):
    """Constraints ``cseq`` applied to consecutive pieces (``lengths``) of ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        x = _array(value)
        pieces, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            pieces.append(_array(constraint.check(np.take(x, range(start, start + length), axis=self.dim))))
            start += length
        return Tensor(np.concatenate(pieces, self.dim))


class _Stack(Constraint):
    """Constraints ``cseq`` applied to the slices of ``dim``."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        x = _array(value)
        return Tensor(np.stack([_array(c.check(np.take(x, i, axis=self.dim))) for i, c in enumerate(self.cseq)],
                               self.dim))


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
