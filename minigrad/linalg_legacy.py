"""PyTorch's top-level linear-algebra functions (``torch.det``, ``torch.svd``, ``torch.lu``, ``torch.geqrf``, ...):
their older signatures and named tuples, built on ``minigrad.linalg`` (whose ops carry the gradients). They
are also Tensor methods (``A.det()``, ``A.svd()``, ``b.lu_solve(LU, pivots)``)."""
from collections import namedtuple

import warnings

import numpy as np

from . import linalg
from ._checks import takes_tensors
from .ops import decomp as dc
from .ops import elementwise as ew
from .ops import reduce as rd
from .ops import shape as sh
from .tensor import Tensor
from .autograd.function import pytorch_saves

__all__ = ["det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_inverse", "cholesky_solve", "qr", "svd",
           "pinverse", "matrix_power", "matrix_exp", "lu", "lu_solve", "lu_unpack", "triangular_solve", "geqrf",
           "ormqr", "svd_lowrank", "pca_lowrank", "lstsq", "solve", "eig", "symeig", "matrix_rank", "orgqr",
           "frobenius_norm", "nuclear_norm"]

slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
qr_result = namedtuple("qr", ["Q", "R"])
svd_result = namedtuple("svd", ["U", "S", "V"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
geqrf_result = namedtuple("geqrf", ["a", "tau"])


def det(input):
    return linalg.det(input)


def slogdet(input):
    return slogdet_result(*linalg.slogdet(input))


def logdet(input):
    """log det A: NaN where det A < 0, -inf where it is 0 (the log of |det| where det > 0)."""
    sign, logabsdet = linalg.slogdet(input)
    if input.dtype.kind == "c":
        from .ops.complex import angle
        return ew.add(logabsdet, ew.mul(angle(sign), 1j))
    return ew.where(Tensor(sign._data < 0), Tensor(np.array(np.nan, input.dtype)), logabsdet)


def inverse(input):
    return linalg.inv(input)


def matrix_power(input, n):
    return linalg.matrix_power(input, n)


@takes_tensors("input")
def matrix_exp(input):
    return linalg.matrix_exp(input)


def cholesky(input, upper=False):
    return linalg.cholesky(input, upper=upper)


@pytorch_saves("input", "input2", outputs=(0,))
def cholesky_solve(input, input2, upper=False):
    """X with A X = B for A = L L^H (``input2`` = L, or U with A = U^H U): solved as (L L^H) X = B, whose
    gradient for L, -(gB X^H + X gB^H) L, is PyTorch's (all of L, not only its triangle)."""
    if input.ndim < 2 or input2.ndim < 2:
        raise RuntimeError("cholesky_solve: b and A should have at least 2 dimensions")
    A = sh.transpose(input2, -2, -1).conj() if upper else input2
    batch = tuple(np.broadcast_shapes(input.shape[:-2], A.shape[:-2]))   # B is always matrices here (linalg.solve
    B = sh.expand(input, batch + tuple(input.shape[-2:]))                 # reads a B of A's shape less one dim as
    A = sh.expand(A, batch + tuple(A.shape[-2:]))                         # vectors)
    return linalg.solve(_mm(A, dc.mH(A)), B)


def _mm(a, b):
    from .ops.linalg import matmul
    return matmul(a, b)


@takes_tensors("input")
def cholesky_inverse(input, upper=False):
    """(L L^H)^-1 (or (U^H U)^-1), the inverse of the matrix whose Cholesky factor is ``input``."""
    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    L = dc.mH(input) if upper else input
    return linalg.inv(_mm(L, dc.mH(L)))


def qr(input, some=True):
    return qr_result(*linalg.qr(input, "reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True):
    """``(U, S, V)`` with A = U diag(S) V^H (V, not V^H); without ``compute_uv``, U and V are zeros (m x m, n x n)."""
    if not compute_uv:
        m, n = input.shape[-2:]
        S = linalg.svdvals(input)
        return svd_result(Tensor(np.zeros(input.shape[:-2] + (m, m), input.dtype)), S,
                          Tensor(np.zeros(input.shape[:-2] + (n, n), input.dtype)))
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return svd_result(U, S, dc.mH(Vh))


def pinverse(input, rcond=1e-15):
    return linalg.pinv(input, rtol=rcond)


@pytorch_saves(outputs=(0,))
def lu(A, pivot=True, get_infos=False, out=None):
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``) of ``linalg.lu_factor_ex``."""
    LU_, pivots, infos = linalg.lu_factor_ex(A, pivot=pivot)
    return (LU_, pivots, infos) if get_infos else (LU_, pivots)


def lu_solve(b, LU_data, LU_pivots):
    return linalg.lu_solve(LU_data, LU_pivots, b)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` of a packed LU: L = tril(LU, -1) + I (m x k), U = triu(LU) (k x n), P from the pivots."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    P = Tensor(dc.permutation_of(LU_pivots._data, m).astype(LU_data.dtype)) if unpack_pivots else \
        Tensor(np.zeros((0,), LU_data.dtype))
    if not unpack_data:
        empty = Tensor(np.zeros((0,), LU_data.dtype))
        return lu_unpack_result(P, empty, empty)
    L = ew.add(sh.tril(LU_data[..., :, :k], -1), Tensor(np.eye(m, k, dtype=LU_data.dtype)))
    U = sh.triu(LU_data[..., :k, :])
    return lu_unpack_result(P, L, U)


@pytorch_saves("b", "A", outputs=(0,))
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(solution, cloned_coefficient)``: X with A X = b (A^T X = b with ``transpose``) and a copy of A."""
    if b.ndim < 2 or A.ndim < 2:
        raise RuntimeError(f"triangular_solve: expected b and A to have at least 2 dimensions, but got "
                           f"{b.ndim} and {A.ndim}")
    coefficient = A.mT if transpose else A
    X = linalg.solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result(X, A.clone())


@takes_tensors("input")
def geqrf(input):
    """``(a, tau)``: LAPACK geqrf's QR in Householder form (R on and above the diagonal of ``a``, the reflectors
    below it, their scales in ``tau``); not differentiable, as in PyTorch."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    a = input._data
    m, n = a.shape[-2:]
    flat = dc.batched(a)
    qr_ = np.zeros(flat.shape, a.dtype)
    tau = np.zeros((flat.shape[0], min(m, n)), a.dtype)
    if flat.size:
        geqrf_ = dc.scipy_linalg().lapack.get_lapack_funcs("geqrf", (flat,))
        for i, matrix in enumerate(flat):     # LAPACK factors one matrix per call
            qr_[i], tau[i] = geqrf_(matrix)[:2]
    return geqrf_result(Tensor(qr_.reshape(a.shape)), Tensor(tau.reshape(a.shape[:-2] + (min(m, n),))))


@pytorch_saves("input", "input2", "input3", outputs=(0,))
def ormqr(input, input2, input3, left=True, transpose=False):
    """Q C, Q^H C (``transpose``), C Q or C Q^H (not ``left``) for Q = H_1 ... H_k of geqrf's (``input``,
    ``input2`` = tau), without forming Q: one rank-1 update per reflector, differentiable in all three."""
    A, tau, C = input, input2, input3
    if A.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if C.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    m = C.shape[-2] if left else C.shape[-1]
    if tau.shape[-1] > min(m, A.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be less than or equal to min(other.shape"
                           f"[{-2 if left else -1}], input.shape[-1])")
    if A.shape[-2] != m:
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to other.shape[{-2 if left else -1}]")
    return linalg._apply_reflectors(linalg._reflectors(A, tau.shape[-1]), tau, C, left, transpose)


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` of the rank-q truncated SVD of A - M. Computed exactly (a full SVD, truncated) rather than
    by PyTorch's randomized range finder: the same factors when A - M has rank <= q, up to the signs of the
    singular vectors."""
    X = A if M is None else ew.sub(A, M)
    linalg._check_matrices(X, "linalg.svd")
    U, S, Vh = dc.run(dc.SVD, X, full_matrices=False, keep=q)     # no gradient through the dropped components
    return U[..., :, :q], linalg._real_part(S)[..., :q], dc.mH(Vh[..., :q, :])


def pca_lowrank(A, q=None, center=True, niter=2):
    """``svd_lowrank`` of A (centered over its rows with ``center``), q defaulting to min(6, m, n)."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    X = ew.sub(A, ew.div(rd.sum(A, -2, keepdim=True), m)) if center else A
    return svd_lowrank(X, q, niter)


METHODS = ["det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_inverse", "cholesky_solve", "qr", "svd",
           "pinverse", "matrix_power", "matrix_exp", "lu", "lu_solve", "triangular_solve", "geqrf", "ormqr", "orgqr"]

# --------------------------------------------------------------------------- removed: PyTorch's pointers to linalg
# PyTorch 1.9 deprecated these and later removed them; it still defines them, to raise its message naming the
# torch.linalg function that replaces each (the same messages here: ``import minigrad as torch`` programs read
# them as written).
_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_MATRIX_RANK = (f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' "
                "was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")
_SOLVE = (f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
          "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
          "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution "
          "should be replaced with:\nX = torch.linalg.solve(A, B)")
_LSTSQ = (f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
          "reversed arguments and does not return the QR decomposition in the returned tuple (although it returns "
          "other information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`."
          "\n\nThe returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns "
          "of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' "
          "of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution"
          "[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SYMEIG = (f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the matrix by "
           "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
           "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
           "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if "
           "upper else 'L')")
_EIG = (f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
        "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from PyTorch: raises, pointing to ``linalg.matrix_rank``."""
    raise RuntimeError(_MATRIX_RANK)


def solve(input, A, *, out=None):
    """Removed from PyTorch: raises, pointing to ``linalg.solve``."""
    raise RuntimeError(_SOLVE)


def lstsq(input, A, *, out=None):
    """Removed from PyTorch: raises, pointing to ``linalg.lstsq``."""
    raise RuntimeError(_LSTSQ)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from PyTorch: raises, pointing to ``linalg.eigh`` / ``linalg.eigvalsh``."""
    raise RuntimeError(_SYMEIG)


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from PyTorch: raises, pointing to ``linalg.eig`` / ``linalg.eigvals``."""
    raise RuntimeError(_EIG)


for _removed in (matrix_rank, solve, lstsq, symeig, eig):
    _removed.takes_out = True        # their own ``out``: the error, whatever ``out`` is (not _out.py's checks)
del _removed


# their Tensor methods, with PyTorch's parameters
def _lstsq_method(self, other):
    """Removed from PyTorch: raises, pointing to ``linalg.lstsq``."""
    raise RuntimeError(_LSTSQ)


def _solve_method(self, other):
    """Removed from PyTorch: raises, pointing to ``linalg.solve``."""
    raise RuntimeError(_SOLVE)


def _eig_method(self, eigenvectors=False):
    """Removed from PyTorch: raises, pointing to ``linalg.eig`` / ``linalg.eigvals``."""
    raise RuntimeError(_EIG)


def _symeig_method(self, eigenvectors=False):
    """Removed from PyTorch: raises, pointing to ``linalg.eigh`` / ``linalg.eigvalsh``."""
    raise RuntimeError(_SYMEIG)


for _name, _method in (("lstsq", _lstsq_method), ("solve", _solve_method), ("eig", _eig_method),
                       ("symeig", _symeig_method)):
    _method.__name__ = _method.__qualname__ = _name
    setattr(Tensor, _name, _method)
del _name, _method


@takes_tensors("input", "input2")
def orgqr(input, input2):
    """The Q of geqrf's (``input``, ``input2`` = tau): ``linalg.householder_product`` under its LAPACK name."""
    return linalg.householder_product(input, input2)


def _deprecated_norm(name, replacement):
    warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in a future "
                  f"PyTorch release. Please use `{replacement}` instead", UserWarning, stacklevel=3)


@takes_tensors("input")
def frobenius_norm(input, dim, keepdim=False):
    """sqrt(sum |x|^2) over ``dim`` (one or two dims), PyTorch's deprecated form of ``linalg.vector_norm``."""
    _deprecated_norm("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return linalg.vector_norm(input, 2.0, dims, keepdim)


@takes_tensors("input")
def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of the singular values over the last two dims (or ``dim``), PyTorch's deprecated form of
    ``linalg.matrix_norm(A, 'nuc')``; ``nuclear_norm(A, keepdim)`` is accepted as in PyTorch."""
    _deprecated_norm("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    if isinstance(dim, bool):                      # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)
