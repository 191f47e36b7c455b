"""``minigrad.linalg``: PyTorch's ``torch.linalg`` norms.

``vector_norm`` is one differentiable op (``ops/reduce.py``). ``matrix_norm`` builds the norms of the
matrices in two dims: Frobenius as the vector 2-norm over them, the 1/inf norms as the largest (smallest)
absolute column/row sum, and the nuclear and spectral (2, -2) norms from singular values
(``ops/linalg.py::SingularValueNorm``).
"""
import numpy as np

from .ops.dims import normalize_dim
from .ops.linalg import SingularValueNorm
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
    if A.dtype.kind != "f":
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
    which = "sum" if ord == "nuc" else "max" if ord == 2 else "min"
    out = SingularValueNorm.apply(movedim(A, (rows, cols), (-2, -1)), which)   # batch dims in order
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
