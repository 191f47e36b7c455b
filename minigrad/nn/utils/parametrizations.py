"""``nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal`` as parametrizations (PyTorch's
current forms; ``nn.utils.parametrize`` explains the mechanism).

``weight_norm(module)`` stores ``parametrizations.weight.original0`` (g, the magnitude) and ``original1``
(v, the direction) and reads ``module.weight = _weight_norm(v, g, dim)``. ``spectral_norm(module)`` stores the
weight as ``parametrizations.weight.original`` and its power-iteration vectors as the buffers ``_u``, ``_v`` of
``parametrizations.weight.0``, and reads ``module.weight = weight / sigma``. ``orthogonal(module)`` reads
``module.weight`` as an orthogonal matrix made from an unconstrained one (below).
"""
import numpy as np

from ... import linalg
from ...autograd import no_grad
from ...creation import eye
from ...dtypes import float_info
from ...random import randn
from ...ops.shape import cat
from ...ops.norm.weightnorm import _weight_norm, norm_except_dim
from ...tensor import Tensor
from ..module import Module
from . import parametrize
from .spectral_norm import (check_power_iterations, default_dim, divided_by_sigma, power_iteration, random_unit,
                            weight_matrix)

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """w = g * v / ||v|| (norm over every dim but ``dim``; the whole tensor for dim -1 or None)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        """(g, v) = (||weight||, weight): the weight itself is a valid direction."""
        return norm_except_dim(weight, 2, self.dim), weight


def _parametrized_tensor(module, name):
    """``module.<name>``, which must be a Tensor (ValueError naming the module otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    return weight


def weight_norm(module, name="weight", dim=0):
    """Weight-normalize ``module.<name>`` as a parametrization; returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma = u^T W v estimated by power iteration on W = the weight as a matrix with ``dim``
    as rows (buffers ``_u``, ``_v``); a 1-d weight is simply divided by its norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}] but got "
                             f"{dim})")
        check_power_iterations(n_power_iterations)
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            W = weight_matrix(weight._data, self.dim)
            self.register_buffer("_u", Tensor(random_unit(W.shape[0], weight.dtype, eps)))
            self.register_buffer("_v", Tensor(random_unit(W.shape[1], weight.dtype, eps)))
            power_iteration(W, self._u, self._v, 15, eps, v_first=False)   # start from a good estimate

    def forward(self, weight):
        if weight.ndim == 1:
            return weight / weight.norm().clamp_min(self.eps)
        if self.training:
            with no_grad():
                power_iteration(weight_matrix(weight._data, self.dim), self._u, self._v, self.n_power_iterations,
                                self.eps, v_first=False)
        return divided_by_sigma(weight, self._u, self._v, self.dim)

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectrally normalize ``module.<name>`` as a parametrization; returns ``module``."""
    weight = _parametrized_tensor(module, name)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations,
                                                                     default_dim(module, dim), eps))
    return module


# --------------------------------------------------------------------------- orthogonal
MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    """An (n, k) matrix Q with orthonormal columns (rows, if n < k: then everything below runs on the transpose), as a
    function of an unconstrained matrix X of the same shape:

    * ``matrix_exp``: Q = the first k columns of exp(A), A = L - L^H skew-Hermitian, L the lower triangle of X
      padded with zeros to (n, n) (the exponential of a skew-Hermitian matrix is unitary);
    * ``cayley``: the same A, Q = (I - A/2)^-1 (I + A/2);
    * ``householder``: Q = the product of the Householder reflections whose vectors are the columns below the
      diagonal of X (``linalg.householder_product`` with tau = 2 / (1 + |v|^2)), each column's sign from X's diagonal.

    With ``use_trivialization`` (the default) Q is ``base @ Q(X)``: ``base`` is an orthogonal matrix set when a value is
    assigned (the value itself when it is orthogonal), and X starts where Q(X) = I, so training moves away from
    ``base`` along the manifold."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        wide = n < k
        if wide:
            X, n, k = X.mT, k, n
        if self.orthogonal_map == "householder":
            V = X.tril(diagonal=-1)                                     # (..., n, k) the reflection vectors
            tau = 2.0 / (1.0 + (V * V).sum(dim=-2))                     # (..., k)
            Q = linalg.householder_product(V, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)    # column signs (X's diagonal, -1 at the start)
        else:
            L = X.tril()
            if n != k:
                L = cat([L, L.new_zeros(n, n - k).expand(*L.shape[:-2], n, n - k)], dim=-1)   # (..., n, n)
            A = L - L.mH                                                # skew-Hermitian
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                identity = eye(n, dtype=A.dtype)
                Q = linalg.solve(identity - A / 2, identity + A / 2)
            Q = Q[..., :k]
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return Q.mT if wide else Q

    @no_grad()
    def right_inverse(self, Q):
        """The X whose forward gives ``Q``: with ``use_trivialization``, ``base`` becomes ``Q`` (made orthogonal, and
        completed to (n, n) with random columns when Q is not square) and X the matrix where Q(X) = I."""
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{Q.shape}.")
        given = Q
        n, k = Q.size(-2), Q.size(-1)
        wide = n < k
        if wide:
            Q, n, k = Q.mT, k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            V, tau = _qr_reflections(Q)
            return V.mT if wide else V
        if n == k:
            self.base = Q.clone() if _is_orthogonal(Q) else _orthogonalized(Q)
        else:
            completion = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
            self.base = _orthogonalized(cat([Q, completion], dim=-1))
        start = given.new_zeros(given.shape)            # X = -I (on its diagonal): Q(X) = I for every map
        start.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return start


def _qr_reflections(Q):
    """X for the householder map without a base: Q's QR reflections below the diagonal (LAPACK's geqrf), and on the
    diagonal the signs of R's diagonal, negated where LAPACK made no reflection (tau = 0)."""
    from ... import geqrf
    V, tau = geqrf(Q)
    diagonal = V.diagonal(dim1=-2, dim2=-1)
    diagonal.sign_()
    diagonal[tau == 0.0] *= -1
    return V, tau


def _is_orthogonal(Q):
    """Whether Q^H Q = I to 10 n eps."""
    n, k = Q.size(-2), Q.size(-1)
    tolerance = 10.0 * n * float(float_info(Q.detach().numpy().dtype).eps)
    return bool((Q.mH @ Q - eye(k, dtype=Q.dtype)).abs().max() <= tolerance)


def _orthogonalized(A):
    """The orthogonal Q of A = QR with R's diagonal made positive (so that an orthogonal A gives A)."""
    from ... import geqrf
    V, tau = geqrf(A)
    Q = linalg.householder_product(V, tau)
    return Q * V.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Make ``module.<name>`` (a matrix or a batch of them) orthogonal, as a parametrization; returns ``module``.
    ``orthogonal_map``: "matrix_exp" (the default for square or complex matrices), "cayley" or "householder" (the
    default otherwise); ``_Orthogonal`` has the maps."""
    weight = _parametrized_tensor(module, name)
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrize.register_parametrization(module, name, _Orthogonal(weight, orthogonal_map,
                                                                   use_trivialization=use_trivialization), unsafe=True)
    return module
