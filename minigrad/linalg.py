"""``minigrad.linalg``: PyTorch's ``torch.linalg``.

Norms: ``vector_norm`` is one differentiable op (``ops/reduce.py``). ``matrix_norm`` builds the norms of the
matrices in two dims: Frobenius as the vector 2-norm over them, the 1/inf norms as the largest (smallest)
absolute column/row sum, and the nuclear and spectral (2, -2) norms from singular values
(``svdvals``: the largest, smallest or their sum, as PyTorch composes them).

Factorizations and solves (second half of this file): PyTorch's signatures, argument checks and named tuples
around the differentiable ops of ``ops/decomp.py`` (inv, solve, det, slogdet, cholesky, qr, eigh, eig, svd,
lu, pinv, matrix_exp) and compositions of them (lstsq, lu_solve, tensorinv, tensorsolve, matrix_power, cond,
householder_product). LU, LDL and the matrix exponential need SciPy (the ``linalg`` extra).
"""
import numpy as np

from .ops.dims import normalize_dim
from .ops.reduce import amax, amin, vector_norm
from .ops.shape import movedim, unsqueeze

__all__ = ["vector_norm", "matrix_norm", "norm"]

_ORDS = ("fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ``ord`` norm of the matrices spanned by ``dim`` (a pair of dims): ``'fro'``, ``'nuc'``, inf, -inf, 1,
    -1, 2, -2 as in ``torch.linalg.matrix_norm``."""
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if kind_of(A.dtype) not in "fc":
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {A.dtype}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    if not any(ord == o and type(ord) is not bool and isinstance(ord, str) == isinstance(o, str) for o in _ORDS):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    rows, cols = (normalize_dim(d, A.ndim) for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({rows}, {cols})")
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord in (1, -1, np.inf, -np.inf):
        summed, across = (rows, cols) if abs(ord) == 1 else (cols, rows)   # 1: column sums, inf: row sums
        sums = vector_norm(A, 1, summed, keepdim=True)
        if ord > 0 and sums.shape[across] == 0:     # an empty matrix: norm 0 (its smallest sum, -1/-inf, raises)
            out = sums.sum(across, keepdim=True)
        else:
            out = (amax if ord > 0 else amin)(sums, across, keepdim=True)
        return out if keepdim else out.squeeze((rows, cols))
    S = svdvals(movedim(A, (rows, cols), (-2, -1)))         # batch dims in order; PyTorch's composition, so
    if ord == "nuc" or (ord == 2 and S.shape[-1] == 0):   # an empty matrix: norm 0 (its smallest, -2, raises)
        out = S.sum(-1)
    else:
        out = (amax if ord == 2 else amin)(S, -1)           # tied singular values share
    if keepdim:
        for d in sorted((rows, cols)):
            out = unsqueeze(out, d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.norm``: with ``ord`` a string or ``dim`` a pair, a matrix norm; otherwise a vector norm
    (of the flattened tensor when both are None)."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (ord is not None and dim is None
                                                                       and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# =========================================================================== factorizations and solves
# The differentiable Functions live in ``ops/decomp.py``; here: PyTorch's signatures, argument checks, named
# tuples, vectors as right-hand sides, and the ``_ex`` variants' ``info``.
from collections import namedtuple  # noqa: E402

from .dtypes import kind_of, scalar_type_name  # noqa: E402
from .ops import decomp as dc  # noqa: E402
from .ops import elementwise as _ew  # noqa: E402
from .ops import shape as _sh  # noqa: E402
from .ops.products import linalg_cross as cross, multi_dot, vander, vecdot  # noqa: E402,F401
from .ops.linalg import matmul  # noqa: E402  (torch.linalg.matmul: the same function)
from .tensor import Tensor  # noqa: E402
from .autograd.function import pytorch_saves

LinAlgError = dc.LinAlgError

__all__ += ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
            "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
            "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_power", "matrix_rank", "multi_dot",
            "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
            "tensorsolve", "vander", "vecdot"]


def _result(name, fields):
    """A named tuple type like ``torch.return_types.<name>``."""
    return namedtuple(name, fields)


SlogdetResult = _result("linalg_slogdet", ["sign", "logabsdet"])
QRResult = _result("linalg_qr", ["Q", "R"])
EighResult = _result("linalg_eigh", ["eigenvalues", "eigenvectors"])
EigResult = _result("linalg_eig", ["eigenvalues", "eigenvectors"])
SVDResult = _result("linalg_svd", ["U", "S", "Vh"])
LUResult = _result("linalg_lu", ["P", "L", "U"])
LUFactorResult = _result("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = _result("linalg_lu_factor_ex", ["LU", "pivots", "info"])
CholeskyExResult = _result("linalg_cholesky_ex", ["L", "info"])
InvExResult = _result("linalg_inv_ex", ["inverse", "info"])
SolveExResult = _result("linalg_solve_ex", ["result", "info"])
LDLFactorResult = _result("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = _result("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
LstsqResult = _result("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# --------------------------------------------------------------------------- checks
def _check_matrices(A, fname, square=False, name="A"):
    """A batch of matrices of a floating or complex dtype (square if asked); PyTorch's errors otherwise."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position 1) must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")
    if A.dtype.kind not in "fc" or A.dtype == np.float16:
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A.dtype)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _check_same_dtype(fname, A, B, names=("A", "B")):
    if A.dtype != B.dtype:
        raise RuntimeError(f"{fname}: Expected {names[0]} and {names[1]} to have the same dtype, but found "
                           f"{names[0]} of type {scalar_type_name(A.dtype)} and {names[1]} of type "
                           f"{scalar_type_name(B.dtype)} instead")


def _info(batch, values=None):
    return Tensor(np.zeros(batch, np.int32) if values is None else np.asarray(values, np.int32))


# --------------------------------------------------------------------------- solves and inverses
def _is_vector_rhs(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D, or when its shape is A's without the last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True, out=None):
    """X with A X = B (``left``) or X A = B; B a matrix, a batch of them, or vectors (see ``_is_vector_rhs``)."""
    return _solve(A, B, left, "linalg.solve")


def _solve(A, B, left, fname, quiet=False):
    _check_matrices(A, fname, square=True)
    if not isinstance(B, Tensor):
        raise TypeError(f"{fname}(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    _check_same_dtype(fname, A, B)
    vector = left and _is_vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor B must have at least 1 dimension.")
    n = A.shape[-1]
    if (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and "
                           f"{Bm.shape[-2]}x{Bm.shape[-1]})")
    try:
        np.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{fname}: the batch dimensions of A {list(A.shape[:-2])} and B "
                           f"{list(Bm.shape[:-2])} do not broadcast") from None
    X = dc.solve(A, Bm, left, quiet=quiet)
    return X.squeeze(-1) if vector else X


def _singular_info(A, X, check_errors, fname):
    """LAPACK getrf's ``info`` per matrix of A (an LU factorization only when the solve X is not finite: a
    singular A); with ``check_errors`` a singular one raises LinAlgError."""
    finite = np.all(np.isfinite(X._data))
    info = np.zeros(A.shape[:-2], np.int32) if finite else dc.lu_info(A._data)
    if check_errors and np.any(info):
        raise dc.singular_error(fname, A._data)
    return Tensor(info)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)``: ``solve`` that reports a singular A in ``info`` (the 1-based zero pivot) and returns
    the infs and NaNs of its LU solve instead of raising."""
    X = _solve(A, B, left, "linalg.solve_ex", quiet=True)
    return SolveExResult(X, _singular_info(A, X, check_errors, "linalg.solve_ex"))


def inv(A, *, out=None):
    """A^-1 for a batch of square matrices (a singular one raises ``LinAlgError``)."""
    _check_matrices(A, "linalg.inv", square=True)
    try:
        return dc.inv(A)
    except LinAlgError:
        raise dc.singular_error("linalg.inv", A._data, "inversion") from None


def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: ``inv`` reporting a singular matrix in ``info`` (and returning the infs and NaNs of
    its LU solve) instead of raising."""
    _check_matrices(A, "linalg.inv_ex", square=True)
    X = dc.inv(A, quiet=True)
    return InvExResult(X, _singular_info(A, X, check_errors, "linalg.inv_ex"))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (``left``) or X A = B, A upper or lower triangular (only that triangle is read)."""
    _check_matrices(A, "linalg.solve_triangular", square=True)
    _check_matrices(B, "linalg.solve_triangular", name="B")
    _check_same_dtype("linalg.solve_triangular", A, B)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return dc.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a map from its last dims to its first ``ind`` dims: shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows = int(np.prod(A.shape[:ind], dtype=np.int64))
    cols = int(np.prod(A.shape[ind:], dtype=np.int64))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B; ``dims`` of A are first moved to the end."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = _sh.movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    rows = int(np.prod(B.shape, dtype=np.int64))
    cols = int(np.prod(rest, dtype=np.int64))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(rest)


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring; A^0 is the identity (zero gradient) and n < 0 powers A^-1."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:   # integer matrices are fine for n >= 0
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    if n == 0:
        identity = Tensor(np.eye(A.shape[-1], dtype=A.dtype))
        return _ew.add(_ew.masked_fill(A, Tensor(np.ones((), bool)), 0), identity)
    base = inv(A) if n < 0 else A
    power, result, n = base, None, abs(n)
    while n:
        if n & 1:
            result = power if result is None else _mm(result, power)
        n >>= 1
        if n:
            power = _mm(power, power)
    return result


def _mm(a, b):
    return matmul(a, b)


def matrix_exp(A):
    """exp(A) = sum_k A^k / k! for a batch of square matrices (SciPy's ``expm``)."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: Expected a batch of square matrices, but got a tensor of shape "
                           f"{list(A.shape)}")
    if kind_of(A.dtype) not in "fc":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A.dtype)}")
    return dc.run(dc.MatrixExp, A)[0]


# --------------------------------------------------------------------------- determinants
def det(A, *, out=None):
    """det A for a batch of square matrices."""
    _check_matrices(A, "linalg.det", square=True)
    return dc.run(dc.Det, A)[0]


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` with det A = sign * exp(logabsdet) (sign 0 and logabsdet -inf when singular)."""
    _check_matrices(A, "linalg.slogdet", square=True)
    sign, logabsdet = dc.run(dc.SlogDet, A)
    return SlogdetResult(sign, _real_part(logabsdet))


# --------------------------------------------------------------------------- Cholesky
def cholesky(A, *, upper=False, out=None):
    """L lower triangular with A = L L^H (``upper``: U with A = U^H U), A Hermitian positive-definite."""
    _check_matrices(A, "linalg.cholesky", square=True)
    return dc.run(dc.Cholesky, A, upper=upper)[0]


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: ``info`` is the order of the first leading minor that is not positive-definite."""
    _check_matrices(A, "linalg.cholesky_ex", square=True)
    try:
        return CholeskyExResult(cholesky(A, upper=upper), _info(A.shape[:-2]))
    except LinAlgError:
        if check_errors:
            raise
        info = dc.cholesky_info(A._data, upper)
        return CholeskyExResult(Tensor(np.zeros(A.shape, A.dtype)), _info(info.shape, info))


# --------------------------------------------------------------------------- QR, eigen, SVD
def qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with A = QR: ``mode`` 'reduced' (Q m x k), 'complete' (Q m x m) or 'r' (Q empty)."""
    _check_matrices(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if mode == "r":
        R = dc.run(dc.QR, A, mode="r")[0]
        return QRResult(Tensor(np.zeros((0,), A.dtype)), R)
    return QRResult(*dc.run(dc.QR, A, mode=mode))


def _check_uplo(UPLO, fname):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{fname}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of a Hermitian A (its ``UPLO`` triangle), eigenvalues ascending (real)."""
    _check_matrices(A, "linalg.eigh", square=True)
    _check_uplo(UPLO, "linalg.eigh")
    L, V = dc.run(dc.Eigh, A, UPLO=UPLO)
    return EighResult(_real_part(L), V)


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of a Hermitian A, ascending."""
    _check_matrices(A, "linalg.eigvalsh", square=True)
    _check_uplo(UPLO, "linalg.eigvalsh")
    return _real_part(dc.run(dc.Eigh, A, UPLO=UPLO)[0])


def _real_part(t):
    if t.dtype.kind != "c":
        return t
    from .ops.complex import real
    return real(t)


def eig(A, *, out=None):
    """``(eigenvalues, eigenvectors)`` of a square A, complex (eigenvectors of norm 1)."""
    _check_matrices(A, "linalg.eig", square=True)
    if not np.all(np.isfinite(A._data)):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    return EigResult(*dc.run(dc.Eig, A))


def eigvals(A, *, out=None):
    """The (complex) eigenvalues of a square A."""
    _check_matrices(A, "linalg.eigvals", square=True)
    if not np.all(np.isfinite(A._data)):
        raise RuntimeError("torch.linalg.eigvals: input tensor should not contain infs or NaNs.")
    return dc.run(dc.Eig, A)[0]


def svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending (real)."""
    _check_matrices(A, "linalg.svd")
    U, S, Vh = dc.run(dc.SVD, A, full_matrices=full_matrices)
    return SVDResult(U, _real_part(S), Vh)


def svdvals(A, *, driver=None, out=None):
    """The singular values of A, descending."""
    _check_matrices(A, "linalg.svdvals")
    return _real_part(dc.run(dc.SVD, A, full_matrices=False)[1])


def _tolerances(A, atol, rtol, fname):
    """PyTorch's (atol, rtol): rtol defaults to eps * max(m, n) unless atol is given and positive."""
    def value(t):
        return None if t is None else (t._data if isinstance(t, Tensor) else np.asarray(t, np.float64))
    atol_v, rtol_v = value(atol), value(rtol)
    eps = np.finfo(np.empty(0, A.dtype).real.dtype).eps
    if rtol_v is None:
        rtol_v = np.asarray(eps * max(A.shape[-2:]) if atol_v is None or np.all(atol_v <= 0) else 0.0)
    atol_v = np.asarray(0.0) if atol_v is None else atol_v
    return atol_v[..., None], rtol_v[..., None]


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse; singular values below max(atol, rtol * largest) count as zero."""
    _check_matrices(A, "linalg.pinv")
    atol_v, rtol_v = _tolerances(A, atol, rtol, "linalg.pinv")
    return dc.run(dc.Pinv, A, atol=atol_v, rtol=rtol_v, hermitian=hermitian)[0]


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (eigenvalue magnitudes if ``hermitian``) above max(atol, rtol * largest)."""
    _check_matrices(A, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol_v, rtol_v = _tolerances(A, atol, rtol, "linalg.matrix_rank")
    a = A._data
    if a.size == 0:
        return Tensor(np.zeros(A.shape[:-2], np.int64))
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    smax = s.max(-1, keepdims=True)
    return Tensor((s > np.maximum(atol_v, rtol_v * smax)).sum(-1).astype(np.int64))


def cond(A, p=None, *, out=None):
    """The condition number ||A||_p ||A^-1||_p; for p None or 2 (-2) the ratio of the largest and smallest
    singular values."""
    _check_matrices(A, "linalg.cond")
    if p is None or p == 2 or p == -2:
        S = svdvals(A)
        big, small = S[..., 0], S[..., -1]
        return _ew.div(big, small) if p != -2 else _ew.div(small, big)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return _ew.mul(norm(A, p, dim=(-2, -1)), norm(inv(A), p, dim=(-2, -1)))


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the matrices spanned by ``dim1`` and ``dim2`` (``torch.diagonal`` with matrix defaults)."""
    return _sh.diagonal(A, offset, dim1, dim2)


# --------------------------------------------------------------------------- LU
@pytorch_saves(outputs=(0,))
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: L (below the diagonal, unit diagonal implied) and U packed in one matrix, LAPACK's
    1-based int32 pivots, and ``info`` > 0 for an exactly singular U."""
    _check_matrices(A, "torch.linalg.lu_factor_ex")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    P, L, U = dc.run(dc.LU, A)
    m, n = A.shape[-2:]
    k = min(m, n)
    if m >= n:   # L (m, k) holds the packed part below U (k, n)
        LU_ = _ew.add(_ew.sub(L, Tensor(np.eye(m, k, dtype=A.dtype))), _sh.cat(
            [U, Tensor(np.zeros(A.shape[:-2] + (m - k, n), A.dtype))], -2))
    else:
        LU_ = _ew.add(_sh.cat([_ew.sub(L, Tensor(np.eye(m, dtype=A.dtype))),
                               Tensor(np.zeros(A.shape[:-2] + (m, n - k), A.dtype))], -1), U)
    _, pivots = dc.lu_factor_arrays(A._data)
    zero = np.diagonal(U._data, 0, -2, -1) == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    if check_errors and np.any(info):   # PyTorch raises a plain RuntimeError here, not LinAlgError
        first = int(np.argmax(info.reshape(-1) > 0))
        batch = "" if A.ndim == 2 else f"(Batch element {first}): "
        raise RuntimeError(f"torch.linalg.lu_factor_ex: {batch}U[{info.reshape(-1)[first]},"
                           f"{info.reshape(-1)[first]}] is zero and using it on lu_solve would result in a "
                           "division by zero.")
    return LUFactorExResult(LU_, Tensor(pivots), Tensor(info))


@pytorch_saves(outputs=(0,))
def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)``: the LU factorization with partial pivoting in LAPACK's packed form."""
    LU_, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return LUFactorResult(LU_, pivots)


@pytorch_saves(outputs=(0, 1, 2))
def lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with A = P L U: P a permutation, L unit lower (m x k), U upper (k x n)."""
    _check_matrices(A, "linalg.lu")
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    P, L, U = dc.run(dc.LU, A)
    return LUResult(P.detach(), L, U)     # P has no gradient (PyTorch's is not differentiable either)


@pytorch_saves("LU", outputs=(0,))
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (``left``) or X A = B, A^H in place of A with ``adjoint``, from A's ``lu_factor``."""
    _check_matrices(LU, "linalg.lu_solve", square=True, name="LU")
    _check_matrices(B, "linalg.lu_solve", name="B")
    _check_same_dtype("linalg.lu_solve", LU, B, ("LU", "B"))
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    P = Tensor(dc.permutation_of(pivots._data, n).astype(LU.dtype))
    Pt = P.transpose(-2, -1)
    tri = dc.solve_triangular
    if left and not adjoint:         # A = P L U: X = U^-1 L^-1 P^T B
        return tri(LU, tri(LU, _mm(Pt, B), upper=False, unitriangular=True), upper=True)
    if left:                         # A^H X = B: X = P L^-H U^-H B
        LUh = dc.mH(LU)
        return _mm(P, tri(LUh, tri(LUh, B, upper=False), upper=True, unitriangular=True))
    if not adjoint:                  # X A = B: X = B U^-1 L^-1 P^T
        return _mm(tri(LU, tri(LU, B, upper=True, left=False), upper=False, left=False, unitriangular=True), Pt)
    LUh = dc.mH(LU)                  # X A^H = B: X = B P L^-H U^-H
    return tri(LUh, tri(LUh, _mm(B, P), upper=True, left=False, unitriangular=True), upper=False, left=False)


# --------------------------------------------------------------------------- least squares
def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of min ||A X - B||: the solution is pinv(A) B (its
    gradient is PyTorch's), residuals the squared column norms of A X - B when m > n, A has full rank and the
    driver is not 'gelsy'; rank (not for 'gels') and singular values ('gelsd', 'gelss') as LAPACK reports them."""
    _check_matrices(A, "torch.linalg.lstsq")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    _check_same_dtype("torch.linalg.lstsq", A, B, ("input", "other"))
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2:]
    if Bm.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    eps = np.finfo(np.empty(0, A.dtype).real.dtype).eps
    rcond_v = eps * max(m, n) if rcond is None else rcond
    X = _mm(pinv(A, rtol=rcond_v if driver != "gels" else None), Bm)
    s = np.linalg.svd(A._data, compute_uv=False) if A._data.size else np.zeros(A.shape[:-2] + (min(m, n),))
    rank = (s > rcond_v * s[..., :1]).sum(-1) if s.shape[-1] else np.zeros(A.shape[:-2], np.int64)
    real_dtype = np.empty(0, A.dtype).real.dtype
    if m > n and driver != "gelsy" and np.all(rank == n):
        r = _ew.sub(_mm(A, X), Bm)
        residuals = (r * r.conj() if r.dtype.kind == "c" else r * r).sum(-2)
        residuals = _real_part(residuals)
    else:   # empty, but part of the graph as PyTorch's is
        residuals = _real_part(X.reshape(-1)[:0])
    rank_t = Tensor(np.zeros((0,), np.int64) if driver == "gels" else rank.astype(np.int64))
    sv = Tensor(s.astype(real_dtype) if driver in ("gelsd", "gelss") else np.zeros((0,), real_dtype))
    return LstsqResult(X.squeeze(-1) if vector else X, residuals, rank_t, sv)


# --------------------------------------------------------------------------- Householder products
def _reflectors(A, k):
    """The Householder vectors v_i (columns, *, m, k): v_i[:i] = 0, v_i[i] = 1, below that column i of A."""
    m = A.shape[-2]
    return _ew.add(_sh.tril(A[..., :, :k], -1), Tensor(np.eye(m, k, dtype=A.dtype)))


def _apply_reflectors(V, tau, C, left, adjoint):
    """Q C, Q^H C, C Q or C Q^H with Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H: one rank-1 update per
    reflector (a loop over the k reflectors, each step vectorised)."""
    k = V.shape[-1]
    order = range(k) if left == adjoint else range(k - 1, -1, -1)
    for i in order:
        v = V[..., :, i:i + 1]                                    # (*, m, 1)
        t = tau[..., i:i + 1].unsqueeze(-1)                       # (*, 1, 1)
        if adjoint:
            t = t.conj()
        if left:
            C = _ew.sub(C, _ew.mul(t, _mm(v, _mm(dc.mH(v), C))))
        else:
            C = _ew.sub(C, _ew.mul(t, _mm(_mm(C, v), dc.mH(v))))
    return C


@pytorch_saves("A", "tau", outputs=(0,))
def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i the Householder vectors stored
    below the diagonal of A (m x n) as ``geqrf`` returns them."""
    fname = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fname}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{fname}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{fname}: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    _check_same_dtype(fname, A, tau, ("input", "tau"))
    identity = _ew.add(_ew.masked_fill(A, Tensor(np.ones((), bool)), 0), Tensor(np.eye(m, n, dtype=A.dtype)))
    return _apply_reflectors(_reflectors(A, tau.shape[-1]), tau, identity, left=True, adjoint=False)


# --------------------------------------------------------------------------- LDL (no gradients in PyTorch)
def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``(LD, pivots, info)``: LAPACK sytrf's Bunch-Kaufman factorization of a symmetric A (lower triangle)."""
    _check_matrices(A, "torch.linalg.ldl_factor_ex", square=True)
    lapack = dc.scipy_linalg().lapack
    a = A._data
    flat = dc.batched(a)
    LD = np.zeros(flat.shape, a.dtype)
    pivots = np.zeros(flat.shape[:-1], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    if flat.size:
        name = "hetrf" if hermitian and a.dtype.kind == "c" else "sytrf"
        sytrf = lapack.get_lapack_funcs(name, (flat,))
        for i, m in enumerate(flat):      # LAPACK factors one matrix per call
            ldu, ipiv, info[i] = sytrf(m, lower=1)[:3] if name == "sytrf" else sytrf(m, lower=1)[:3]
            LD[i], pivots[i] = np.tril(ldu), ipiv
    if check_errors and np.any(info):
        raise LinAlgError(f"torch.linalg.ldl_factor_ex: The factorization could not be completed because the "
                          f"input is singular (info {int(info[info != 0][0])}).")
    return LDLFactorExResult(Tensor(LD.reshape(a.shape)), Tensor(pivots.reshape(a.shape[:-1])),
                             Tensor(info.reshape(a.shape[:-2])))


def ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)`` of ``ldl_factor_ex``."""
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian)
    return LDLFactorResult(LD, pivots)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from A's ``ldl_factor`` (LAPACK sytrs)."""
    _check_matrices(LD, "torch.linalg.ldl_solve", square=True, name="LD")
    _check_matrices(B, "torch.linalg.ldl_solve", name="B")
    lapack = dc.scipy_linalg().lapack
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    ld = dc.batched(np.broadcast_to(LD._data, batch + LD.shape[-2:]))
    piv = dc.batched(np.broadcast_to(pivots._data, batch + pivots.shape[-1:]), 1)
    b = dc.batched(np.broadcast_to(B._data, batch + B.shape[-2:]))
    X = np.zeros(b.shape, np.result_type(ld, b))
    if X.size:
        name = "hetrs" if hermitian and ld.dtype.kind == "c" else "sytrs"
        sytrs = lapack.get_lapack_funcs(name, (ld[0], b[0]))
        for i in range(X.shape[0]):
            X[i] = sytrs(ld[i], piv[i], b[i], lower=1)[0]
    return Tensor(X.reshape(batch + B.shape[-2:]))
