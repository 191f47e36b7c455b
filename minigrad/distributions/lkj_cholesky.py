"""LKJCholesky(dim, concentration eta) (``torch.distributions.lkj_cholesky``): a distribution over lower
Cholesky factors L of dim x dim correlation matrices with density of M = L L^T proportional to det(M)^(eta - 1)
(eta = 1: uniform over correlation matrices).

In terms of L (det M = prod L_ii^2, and the Jacobian of L -> M is prod_i L_ii^(D - i), i = 1..D), the density is

    p(L) = prod_{i=2..D} L_ii^(2 (eta - 1) + D - i) / c(eta),
    log c = (D - 1) log(pi) / 2 + mvlgamma(eta + (D - 2) / 2, D - 1) - (D - 1) lgamma(eta + (D - 1) / 2).

Samples come from the onion method (Lewandowski, Kurowicka & Joe, 2009, Sec. 3.2), all rows at once: row i
(0-based) below the diagonal is sqrt(b_i) times a uniform direction on the unit sphere of R^i, with
b_i ~ Beta(i / 2, eta + (D - 1 - i) / 2) (``_row_radii``), and the diagonal entry completes the row's unit norm.
"""
import math

import numpy as np

from ..autograd import no_grad
from ..dtypes import float_info
from ..ops.gamma import mvlgamma
from ..random import normal_values, torch_stream
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma_family import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution over Cholesky factors of correlation matrices (event shape (dim, dim))."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        self._beta = self._row_radii(self.concentration, dim)
        super().__init__(tuple(self.concentration.shape), (dim, dim), validate_args=validate_args)

    @staticmethod
    def _row_radii(eta, dim):
        """The Beta laws of the squared norms of the below-diagonal parts of the rows: row i (0-based, i >= 1)
        has Beta(i / 2, eta + (D - 1 - i) / 2); row 0 (which has no such part) gets row 1's. (PyTorch 2.13 takes
        i - 1/2 as the first parameter, which is i / 2 only for row 1: its samples for dim >= 3 are not
        LKJ-distributed, e.g. correlation variances of 0.25 where LKJ(1) in 4 dims has 0.2.)"""
        offset = Tensor(np.concatenate([[0.0], np.arange(dim - 1)]).astype(eta.dtype))    # i - 1, row 0 as row 1
        marginal = eta + 0.5 * (dim - 2)
        return Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        """Onion-method samples (not differentiable: PyTorch's LKJCholesky has no rsample)."""
        with no_grad():
            radius2 = self._beta.sample(sample_shape)._data[..., None]       # (..., D, 1)
            shape = self._extended_shape(sample_shape)
            directions = np.tril(normal_values(torch_stream(), shape, radius2.dtype), -1)     # PyTorch's randn
            with np.errstate(invalid="ignore"):
                directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
            directions[..., 0, :] = 0.0                                       # row 0 was 0 / 0
            w = np.sqrt(radius2) * directions
            tiny = float_info(w.dtype).tiny
            diagonal = np.sqrt(np.maximum(1 - (w ** 2).sum(-1), tiny))
            return Tensor(w + diagonal[..., None] * np.eye(self.dim, dtype=w.dtype))

    def log_prob(self, value):
        """sum_{i>=2} (2 (eta - 1) + D - i) log L_ii - log c(eta)."""
        if self._validate_args:
            self._validate_sample(value)
        D = self.dim
        log_diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:].log()
        i = Tensor(np.arange(2, D + 1, dtype=self.concentration.dtype))
        order = 2 * (self.concentration - 1).unsqueeze(-1) + D - i
        unnormalized = (order * log_diagonal).sum(-1)
        alpha = self.concentration + 0.5 * (D - 1)
        log_normalizer = (0.5 * (D - 1) * math.log(math.pi) + mvlgamma(alpha - 0.5, D - 1)
                          - (D - 1) * alpha.lgamma())
        return unnormalized - log_normalizer
