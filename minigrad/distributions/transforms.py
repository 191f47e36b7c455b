"""Invertible maps between supports (``torch.distributions.transforms``), with the log |det J| of the forward
map that ``TransformedDistribution.log_prob`` subtracts (change of variables: p_Y(y) = p_X(x) / |det dy/dx|).

    ExpTransform        y = exp x                 log|J| = x
    AffineTransform     y = loc + scale x         log|J| = log|scale|   (summed over event_dim dims)
    SigmoidTransform    y = sigmoid x             log|J| = -softplus(-x) - softplus(x)
    TanhTransform       y = tanh x                log|J| = 2 (log 2 - x - softplus(-2x))
    SoftmaxTransform    y = softmax x (last dim)  not bijective: no log|J|
    AbsTransform        y = |x|                   not bijective
    PowerTransform      y = x^k (x > 0)           log|J| = log|k y / x|
    SoftplusTransform   y = log(1 + e^x)          log|J| = -softplus(-x)
    IndependentTransform  a transform whose log|J| is summed over more rightmost dims
    StickBreakingTransform  R^(K-1) -> the K-simplex, bijective (stick-breaking with sigmoids)
    LowerCholeskyTransform  square matrices -> lower triangular with exp of the diagonal
    PositiveDefiniteTransform  square matrices -> L L^T with L the LowerCholeskyTransform of the input
    ReshapeTransform    the event reshaped (log|J| = 0)
    CumulativeDistributionTransform  y = F(x) of a distribution (log|J| = its log density)
    CatTransform, StackTransform  different transforms for consecutive pieces / the slices of one dim
    ComposeTransform    the parts in order        the sum of the parts', each summed to the composite's event dims

``t.inv`` is the inverse transform; ``cache_size=1`` remembers the last (x, y) pair so that ``t.inv(t(x))``
returns x itself (exactly, with x's gradient history).
"""
import math
import numbers
import weakref

import numpy as np

from ..dtypes import float_info
from ..nn import functional as F
from ..tensor import Tensor
from . import constraints
from .utils import sum_rightmost

__all__ = ["Transform", "ComposeTransform", "ExpTransform", "AffineTransform", "SigmoidTransform", "TanhTransform",
           "SoftmaxTransform", "AbsTransform", "PowerTransform", "SoftplusTransform", "IndependentTransform",
           "StickBreakingTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform",
           "CumulativeDistributionTransform", "CatTransform", "StackTransform", "identity_transform"]


class Transform:
    """An invertible (``bijective``) or at least computable map with ``domain`` and ``codomain`` constraints."""

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None
        self._cached_x_y = None, None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return tuple(shape)

    def inverse_shape(self, shape):
        return tuple(shape)

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: its call is the other's inverse, its log|J| the other's negated."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied in order; an empty list is the identity."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim       # the event dims every part's input must cover
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x * 0
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total, event_dim = 0, self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:]):
            total = total + sum_rightmost(part.log_abs_det_jacobian(x_in, y_out), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


def _clipped_sigmoid(x):
    """sigmoid(x) kept inside [tiny, 1 - eps] of x's dtype, so that its inverse stays finite."""
    info = float_info(x.dtype)
    return x.sigmoid().clamp(min=float(info.tiny), max=1.0 - float(info.eps))


class SigmoidTransform(Transform):
    """y = sigmoid(x) = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = float_info(y.dtype)
        y = y.clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        """log sigmoid'(x) = log sigmoid(x) + log sigmoid(-x) = -softplus(-x) - softplus(x)."""
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        """atanh(y) = (log1p(y) - log1p(-y)) / 2."""
        return (y.log1p() - (-y).log1p()) / 2

    def log_abs_det_jacobian(self, x, y):
        """log(1 - tanh^2 x) = 2 (log 2 - x - softplus(-2x)), stable for large |x|."""
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale * x, over events of ``event_dim`` dims."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                      self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = Tensor(np.full(shape, math.log(abs(self.scale)), dtype=x.dtype))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:result.ndim - self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return tuple(np.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


def _same(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a.shape == b.shape and bool((a == b)._data.all())
    return False


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim (exp(x - max x) normalised); its inverse log y is one of many
    preimages, so it is not bijective and has no log|J|."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape)

    inverse_shape = forward_shape



class AbsTransform(Transform):
    """y = |x| (its ``inv`` returns y, one of the two preimages)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        from .utils import broadcast_all
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return tuple(np.broadcast_shapes(shape, tuple(self.exponent.shape)))

    inverse_shape = forward_shape


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); inverse x = y + log(1 - exp(-y))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-((-y).expm1())).log() + y

    def log_abs_det_jacobian(self, x, y):
        """log sigmoid(x) = -softplus(-x)."""
        return -F.softplus(-x)


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims in each event: the same map,
    its log|J| summed over those dims."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.ndim < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.ndim < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class StickBreakingTransform(Transform):
    """R^(K-1) onto the K-simplex: z_k = sigmoid(x_k - log(K - k)) (the offset maps x = 0 to the centre),
    y_k = z_k prod_{j<k} (1 - z_j), the last coordinate the stick that remains."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    @staticmethod
    def _offset(n, like):
        """log(n, n - 1, ..., 1) as a constant of ``like``'s dtype."""
        return Tensor(np.log(np.arange(n, 0, -1, dtype=like.dtype)))

    def _call(self, x):
        z = _clipped_sigmoid(x - self._offset(x.shape[-1], x))
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=float(float_info(y.dtype).tiny))
        return y_crop.log() - remaining.log() + self._offset(y_crop.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x.shape[-1], x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """A square matrix to a lower Cholesky factor: its strict lower triangle, exp of its diagonal."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """A square matrix to the positive-definite L L^T, L its LowerCholeskyTransform; inverse by Cholesky."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y):
        from ._ops import cholesky
        return LowerCholeskyTransform().inv(cholesky(y))


class ReshapeTransform(Transform):
    """The rightmost ``in_shape`` dims reshaped to ``out_shape`` (same number of elements); volume-preserving."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape,
                                                                            cache_size=cache_size)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.ndim - len(self.in_shape)]) + self.out_shape)

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.ndim - len(self.out_shape)]) + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return Tensor(np.zeros(x.shape[:x.ndim - len(self.in_shape)], dtype=x.dtype))

    @staticmethod
    def _reshaped(shape, old, new):
        shape = tuple(shape)
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected minigrad.Size({list(shape[cut:])}) but got "
                             f"minigrad.Size({list(old)})")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class CumulativeDistributionTransform(Transform):
    """y = F(x), the CDF of ``distribution``: onto (0, 1), with log|J| = log p(x)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                            cache_size=cache_size)


def _check_dim(dim, t, what, size, expected, name):
    if not -t.ndim <= dim < t.ndim:
        raise AssertionError(f"dim {dim} out of range for {what} with {t.ndim} dimensions")
    if t.shape[dim] != expected:
        raise AssertionError(f"{name}.size({dim}) = {t.shape[dim]} must equal {size} {expected}")


class CatTransform(Transform):
    """``tseq[i]`` applied to the i-th piece (``lengths[i]`` long) of ``dim``; the results concatenated."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _pieces(self, t):
        start = 0
        for transform, length in zip(self.transforms, self.lengths):
            yield transform, t.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        from ..ops.shape import cat
        _check_dim(self.dim, x, "tensor", "length", self.length, "x")
        return cat([transform(piece) for transform, piece in self._pieces(x)], self.dim)

    def _inverse(self, y):
        from ..ops.shape import cat
        _check_dim(self.dim, y, "tensor", "length", self.length, "y")
        return cat([transform.inv(piece) for transform, piece in self._pieces(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        from ..ops.shape import cat
        _check_dim(self.dim, x, "x", "length", self.length, "x")
        _check_dim(self.dim, y, "y", "length", self.length, "y")
        terms = []
        for (transform, x_piece), (_, y_piece) in zip(self._pieces(x), self._pieces(y)):
            term = transform.log_abs_det_jacobian(x_piece, y_piece)
            if transform.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - transform.event_dim)
            terms.append(term)
        dim = (self.dim - x.ndim if self.dim >= 0 else self.dim) + self.event_dim
        return cat(terms, dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` applied to slice i of ``dim``; the results stacked again."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _map(self, t, name, how):
        from ..ops.shape import stack
        _check_dim(self.dim, t, "tensor", "len(transforms)", len(self.transforms), name)
        return stack([how(transform, piece) for transform, piece in zip(self.transforms, t.unbind(self.dim))],
                     self.dim)

    def _call(self, x):
        return self._map(x, "x", lambda transform, piece: transform(piece))

    def _inverse(self, y):
        return self._map(y, "y", lambda transform, piece: transform.inv(piece))

    def log_abs_det_jacobian(self, x, y):
        from ..ops.shape import stack
        _check_dim(self.dim, x, "tensor", "len(transforms)", len(self.transforms), "x")
        _check_dim(self.dim, y, "tensor", "len(transforms)", len(self.transforms), "y")
        return stack([transform.log_abs_det_jacobian(x_piece, y_piece) for transform, x_piece, y_piece
                      in zip(self.transforms, x.unbind(self.dim), y.unbind(self.dim))], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) onto Cholesky factors of D x D correlation matrices (lower triangular, positive diagonal,
    rows of unit norm). The vector fills the strict lower triangle row by row as r = tanh(x) in (-1, 1); each row
    is then a signed stick-breaking of the squares: y_ij = r_ij sqrt(prod_{k<j} (1 - r_ik^2)) below the
    diagonal, and y_ii = sqrt(prod_{k<i} (1 - r_ik^2)) takes what remains of the unit norm.
    log|J| is that of x and the flattened strict lower triangle of y."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        from ..creation import eye
        from .utils import vec_to_tril_matrix
        eps = float(float_info(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r.pow(2)).sqrt().cumprod(-1)       # sqrt(prod_{k<=j} (1 - r_ik^2))
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * F.pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        from .utils import tril_matrix_to_vec
        remaining = 1 - (y * y).cumsum(-1)                    # 1 - sum_{k<=j} y_ik^2
        remaining_before = F.pad(remaining[..., :-1], [1, 0], value=1)
        r = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(remaining_before, diag=-1).sqrt()
        return (r.log1p() - (-r).log1p()) / 2                 # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        """1/2 sum_{j<i-1} log(1 - sum_{k<=j} y_ik^2) (stick-breaking) + sum log(1 - tanh^2 x)."""
        from .utils import tril_matrix_to_vec
        remaining = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick_breaking = 0.5 * remaining.log().sum(-1)
        tanh = 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        """(..., N) -> (..., D, D) with N = D (D - 1) / 2."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (D, D)

    def inverse_shape(self, shape):
        """(..., D, D) -> (..., D (D - 1) / 2)."""
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return tuple(shape[:-2]) + (D * (D - 1) // 2,)


__all__.append("CorrCholeskyTransform")
