"""MultivariateNormal (given by its covariance, precision or lower Cholesky factor) and Independent
(reinterpreting batch dims of another distribution as event dims)."""
import math

from ..creation import eye
from . import constraints
from ._ops import cholesky, solve_triangular
from .distribution import Distribution, _show
from .utils import CenteredAtLoc, broadcast_shapes, lazy_property, standard_normal, sum_rightmost

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal", "Independent"]


def _batch_mv(matrices, vectors):
    """M v for batches of matrices (..., n, n) and vectors (..., n) that broadcast."""
    return (matrices @ vectors.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(L, x):
    """x^T (L L^T)^{-1} x = |L^{-1} x|^2 for batches of L (..., n, n) and x (..., n) that broadcast."""
    n = x.shape[-1]
    batch = broadcast_shapes(L.shape[:-2], x.shape[:-1])
    y = solve_triangular(L.expand(batch + (n, n)), x.expand(batch + (n,)).unsqueeze(-1), upper=False)
    return y.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor L of P^{-1} (L L^T = P^{-1}) without inverting P: with F the flip of both
    dims (J P J for the reversal J), chol(J P J) = J U J for an upper U with U^T U = P, and L = U^{-1}."""
    Lf = cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).mT                         # lower: L_inv L_inv^T = P
    identity = eye(P.shape[-1], dtype=P.dtype)
    return solve_triangular(L_inv, identity.expand(L_inv.shape), upper=False)


class ScaleTrilMatrices:
    """The three matrices of a distribution given by a lower Cholesky factor L (``_unbroadcasted_scale_tril``),
    expanded to ``_matrix_shape()``: ``scale_tril`` L, ``covariance_matrix`` L L^T, ``precision_matrix``
    (L L^T)^{-1} (MultivariateNormal, Wishart)."""

    @staticmethod
    def _scale_tril_of(name, matrix):
        """L from whichever of the three matrices, ``name``, was given (unbroadcast)."""
        if name == "scale_tril":
            return matrix
        return cholesky(matrix) if name == "covariance_matrix" else _precision_to_scale_tril(matrix)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """(L L^T)^{-1} = L^{-T} L^{-1}."""
        L = self._unbroadcasted_scale_tril
        identity = eye(L.shape[-1], dtype=L.dtype).expand(L.shape)
        L_inv = solve_triangular(L, identity, upper=False)
        return (L_inv.mT @ L_inv).expand(self._matrix_shape())


class MultivariateNormal(ScaleTrilMatrices, CenteredAtLoc, Distribution):
    """N(loc, Sigma) over vectors of the last dim; Sigma = L L^T from ``scale_tril`` L, the Cholesky factor of
    ``covariance_matrix``, or of the inverse of ``precision_matrix``."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = {"scale_tril": scale_tril, "covariance_matrix": covariance_matrix,
                 "precision_matrix": precision_matrix}
        name, matrix = next((k, v) for k, v in given.items() if v is not None)
        if matrix.ndim < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions"
                             if name != "scale_tril" else "scale_tril matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        n = matrix.shape[-1]
        setattr(self, name, matrix.expand(batch_shape + (n, n)))
        self.loc = loc.expand(batch_shape + (loc.shape[-1],))
        super().__init__(batch_shape, tuple(self.loc.shape[-1:]), validate_args=validate_args)
        self._unbroadcasted_scale_tril = self._scale_tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(batch_shape + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + (n, n)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        n = self._event_shape[0]
        return self._batch_shape + (n, n)

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        """loc + L eps, eps ~ N(0, I)."""
        eps = standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        """-(n log(2 pi) + |L^{-1}(x - loc)|^2) / 2 - log det L."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        """n (1 + log(2 pi)) / 2 + log det L."""
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if not self._batch_shape else H.expand(self._batch_shape)


def _with_identity(K):
    """K + I for a batch of square matrices."""
    return K + eye(K.shape[-1], dtype=K.dtype)


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix I + W^T D^{-1} W (m x m for a rank-m factor W)."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return cholesky(_with_identity(Wt_Dinv @ W))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det D (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^{-1} x by the Woodbury identity: x^T D^{-1} x - |C^{-1} W^T D^{-1} x|^2."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(Wt_Dinv, x))


class LowRankMultivariateNormal(CenteredAtLoc, Distribution):
    """N(loc, W W^T + diag(D)) with a low-rank ``cov_factor`` W (n x m) and ``cov_diag`` D: densities and
    samples cost O(n m^2) through the m x m capacitance matrix instead of O(n^3)."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if cov_diag.shape[-1:] != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape minigrad.Size([{n}])")
        try:
            shape = broadcast_shapes(loc.shape + (1,), cov_factor.shape, cov_diag.shape + (1,))
        except ValueError:
            raise ValueError(f"Incompatible batch shapes: loc {_show(loc.shape)}, cov_factor "
                             f"{_show(cov_factor.shape)}, cov_diag {_show(cov_diag.shape)}") from None
        self.cov_factor = cov_factor.expand(shape)
        self.loc, self.cov_diag = loc.expand(shape[:-1]), cov_diag.expand(shape[:-1])
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(shape[:-2], (n,), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = tuple(batch_shape) + self._event_shape
        new.loc, new.cov_diag = self.loc.expand(loc_shape), self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            self._batch_shape + self._event_shape)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        """D^(1/2) chol(I + D^(-1/2) W W^T D^(-1/2))."""
        sqrt_diag = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / sqrt_diag
        return (sqrt_diag * cholesky(_with_identity(Dinvsqrt_W @ Dinvsqrt_W.mT))).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (W @ W.mT + self._unbroadcasted_cov_diag.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """D^{-1} - A^T A with A = C^{-1} W^T D^{-1} (Woodbury)."""
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return (self._unbroadcasted_cov_diag.reciprocal().diag_embed() - A.mT @ A).expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        """loc + W eps_W + sqrt(D) eps_D."""
        shape = self._extended_shape(sample_shape)
        eps_W = standard_normal(shape[:-1] + self.cov_factor.shape[-1:], self.loc.dtype)
        eps_D = standard_normal(shape, self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W) + self._unbroadcasted_cov_diag.sqrt() * eps_D

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                       value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if not self._batch_shape else H.expand(self._batch_shape)


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims made event dims:
    log_prob and entropy are summed over them."""

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        shape = base_distribution.batch_shape + base_distribution.event_shape
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = tuple(batch_shape)
        new.base_dist = self.base_dist.expand(
            batch_shape + self._event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"

