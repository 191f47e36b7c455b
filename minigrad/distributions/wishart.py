"""Wishart(df nu, Sigma) over p x p positive-definite matrices (``torch.distributions.wishart``): the law of
sum_{k=1..nu} x_k x_k^T for x_k ~ N(0, Sigma) (any real nu > p - 1). With Sigma = L L^T,

    log p(X) = -nu (p log 2 / 2 + log det L) - mvlgamma(nu / 2, p) + (nu - p - 1) / 2 log det X
               - tr(Sigma^{-1} X) / 2.

Samples use the Bartlett decomposition: X = (L A)(L A)^T with A lower triangular, A_ii = sqrt(c_i),
c_i ~ Chi2(nu - i) (i = 0..p-1), and A_ij ~ N(0, 1) below the diagonal; differentiable in Sigma and (through the
implicit gradient of the chi-squared samples) in nu.
"""
import math
import numbers
import warnings

import numpy as np

from ..dtypes import float_info
from ..linalg import slogdet
from ..linalg_legacy import cholesky_solve
from ..ops.elementwise import where
from ..ops.gamma import mvlgamma
from ..tensor import Tensor
from . import constraints
from .distribution import ExponentialFamily
from .gamma_family import Chi2
from .multivariate import ScaleTrilMatrices
from .utils import broadcast_shapes, standard_normal, vec_to_tril_matrix

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum_{i=0..p-1} digamma(x - i / 2), defined for x > (p - 1) / 2."""
    if not (x > (p - 1) / 2)._data.all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = Tensor(np.arange(p, dtype=x.dtype) / 2)
    return (x.unsqueeze(-1) - halves).digamma().sum(-1)


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    """Wishart(df, covariance_matrix | precision_matrix | scale_tril): one of the three matrices (with optional
    batch dims) gives Sigma; ``df`` must exceed p - 1."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = {"covariance_matrix": covariance_matrix, "precision_matrix": precision_matrix,
                 "scale_tril": scale_tril}
        if sum(m is not None for m in given.values()) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        name, matrix = next((k, v) for k, v in given.items() if v is not None)
        if matrix.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(matrix.shape[:-2])
            self.df = Tensor(np.asarray(df, dtype=matrix.dtype))
        else:
            batch_shape = broadcast_shapes(matrix.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        p = matrix.shape[-1]
        if (self.df <= p - 1)._data.any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, matrix.expand(batch_shape + (p, p)))
        if (self.df < p)._data.any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        self._unbroadcasted_scale_tril = self._scale_tril_of(name, matrix)
        self._dist_chi2 = self._bartlett_chi2(self.df, batch_shape, p)

    @staticmethod
    def _bartlett_chi2(df, batch_shape, p):
        """Chi2(nu - i), i = 0..p-1: the laws of the squared diagonal of the Bartlett factor."""
        return Chi2(df.unsqueeze(-1) - Tensor(np.arange(p, dtype=df.dtype)).expand(tuple(batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        matrix_shape = batch_shape + self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        new._dist_chi2 = self._bartlett_chi2(new.df, batch_shape, self._event_shape[-1])
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    def _df_matrix(self):
        """nu shaped to multiply batches of matrices: batch_shape + (1, 1)."""
        return self.df.expand(self._batch_shape).reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        """nu Sigma."""
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        """(nu - p - 1) Sigma, NaN where nu <= p + 1."""
        factor = self._df_matrix() - self._event_shape[-1] - 1
        return where(factor <= 0, math.nan, factor) * self.covariance_matrix

    @property
    def variance(self):
        """Var X_ij = nu (Sigma_ij^2 + Sigma_ii Sigma_jj)."""
        V = self.covariance_matrix
        diagonal = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        """(L A)(L A)^T with the Bartlett factor A."""
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        chi = chi.clamp(min=float(float_info(chi.dtype).eps))
        below = standard_normal(tuple(sample_shape) + self._batch_shape + (p * (p - 1) // 2,), chi.dtype)
        A = chi.diag_embed() + vec_to_tril_matrix(below, diag=-1)
        factor = self._unbroadcasted_scale_tril @ A
        return factor @ factor.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A Bartlett sample; samples that come out singular (possible for p - 1 < df < p) are drawn again, up to
        ``max_try_correction`` (10) times, with a warning."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)._data
        if singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(sample_shape)
                sample = where(Tensor(singular[..., None, None]), redrawn, sample)
                singular = ~self.support.check(sample)._data
                if not singular.any():
                    break
        return sample

    def log_prob(self, value):
        """-nu (p log 2 / 2 + log det L) - mvlgamma(nu / 2, p) + (nu - p - 1) / 2 log det X - tr(Sigma^-1 X) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det_sigma = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _log_2 / 2 + half_log_det_sigma) - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        """(p + 1)(p log 2 / 2 + log det L) + mvlgamma(nu / 2, p) - (nu - p - 1) / 2 mvdigamma(nu / 2, p)
        + nu p / 2."""
        nu, p = self.df, self._event_shape[-1]
        half_log_det_sigma = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _log_2 / 2 + half_log_det_sigma) + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
