"""``sparse.spdiags``: a sparse matrix from diagonals, as SciPy's ``spdiags`` and PyTorch's ``torch.sparse.spdiags``.

Diagonal k (row ``diagonals[k]``) goes to offset ``offsets[k]`` (0 the main diagonal, > 0 above it, < 0 below),
and ``diagonals[k, j]`` lands in column j: entry (j - offsets[k], j) for each column j the diagonal crosses inside
the (m, n) shape. The entries are listed diagonal by diagonal in the given order, then by column, uncoalesced,
as PyTorch lists them. PyTorch gives the result no derivative, and neither does minigrad.
"""
import numpy as np

from ..autograd.function import NoDerivative
from ..dtypes import scalar_type_name
from ..layouts import sparse_coo
from ..tensor import Tensor
from .coo import sparse_coo_tensor

__all__ = ["spdiags"]


def spdiags(diagonals, offsets, shape, layout=None):
    """The (m, n) = ``shape`` sparse matrix whose offset ``offsets[k]`` diagonal holds ``diagonals[k]`` (column j
    of the matrix takes ``diagonals[k, j]``); COO unless ``layout`` is ``sparse_csr`` or ``sparse_csc``."""
    if not isinstance(diagonals, Tensor) or not isinstance(offsets, Tensor):
        raise TypeError("spdiags(): diagonals and offsets must be Tensors")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    if offsets.dtype.name != "int64":
        raise RuntimeError(f"Offset Tensor must have dtype Long but got {scalar_type_name(offsets.dtype)}")
    if diagonals.ndim > 2 or offsets.ndim > 1:
        raise RuntimeError(f"Diagonals must be vector or matrix (got {diagonals.ndim}-D) and offsets a vector or "
                           f"scalar (got {offsets.ndim}-D)")
    diag_rows = diagonals.reshape(1, -1) if diagonals.ndim < 2 else diagonals     # (d, L)
    offs = offsets._data.reshape(-1)                                               # (d,)
    if diag_rows.shape[0] != offs.size:
        raise RuntimeError(f"Number of diagonals ({diag_rows.shape[0]}) does not match the number of offsets "
                           f"({offs.size})")
    if np.unique(offs).size != offs.size:
        raise RuntimeError("Offset tensor contains duplicate values")
    m, n = (int(s) for s in shape)
    rows, cols, taken = [], [], []
    length = diag_rows.shape[1]
    for k, offset in enumerate(offs.tolist()):
        columns = np.arange(max(0, offset), min(n, m + offset, length), dtype=np.int64)   # inside the shape
        rows.append(columns - offset)
        cols.append(columns)
        taken.append(k * length + columns)                      # where each value sits in diag_rows, flattened
    order = np.concatenate(taken) if taken else np.zeros(0, np.int64)
    values = diag_rows.detach()._data.reshape(-1)[order]
    indices = np.stack([np.concatenate(rows), np.concatenate(cols)]) if rows else np.zeros((2, 0), np.int64)
    if diagonals.requires_grad:        # PyTorch's spdiags has no derivative: reaching it in backward raises
        values = NoDerivative.apply(RuntimeError, "derivative for aten::_spdiags is not implemented",
                                    values, diagonals)
    else:
        values = Tensor(values)
    result = sparse_coo_tensor(Tensor(indices), values, (m, n))
    if layout is None or layout is sparse_coo:
        return result
    return result.to_sparse(layout=layout)
