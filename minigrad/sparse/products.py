"""Sparse @ dense products: ``mm``/``matmul``/``spmm``/``@`` with a sparse COO matrix on either side.

For S (M, K) sparse, with entry k holding v_k at (r_k, c_k), and D (K, N) dense:

    Y = S D,       Y[i, :] = sum_{k: r_k = i} v_k D[c_k, :]
    dD = S^T dY    (the same product with rows and columns exchanged)
    dv_k = <dY[r_k, :], D[c_k, :]>   (the gradient of the matrix S, read at the entries' positions)

The product runs on SciPy's CSR matrices when SciPy is installed, else as a NumPy scatter-add
(``np.add.at`` of the scaled rows of D into the rows of Y; repeated positions add up either way).
D @ S is (S^T D^T)^T.
"""
import numpy as np

from ..autograd import Function
from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .coo import SparseTensor


def _scipy_sparse():
    try:
        import scipy.sparse
    except ImportError:
        return None
    return scipy.sparse


def sparse_dense_product(values, rows, cols, n_rows, dense, use_scipy=None):
    """Y (n_rows, N) = S D for S given by its entries (values at rows, cols) and D (K, N), as ndarrays.
    ``use_scipy=None`` uses SciPy when it is installed; False forces the NumPy scatter-add."""
    scipy_sparse = _scipy_sparse() if use_scipy is not False else None
    if scipy_sparse is not None:
        matrix = scipy_sparse.csr_matrix((values, (rows, cols)), shape=(n_rows, dense.shape[0]))
        return np.asarray(matrix @ dense, dtype=np.result_type(values, dense))
    out = np.zeros((n_rows, dense.shape[1]), np.result_type(values, dense))
    np.add.at(out, rows, values[:, None] * dense[cols])                     # out[r_k] += v_k D[c_k]
    return out


def _entry_grad(dout, dense, rows, cols):
    """dv_k = <dY[r_k], D[c_k]>, for ndarrays or Tensors alike (fancy indexing and a sum over the last dim)."""
    return (dout[rows] * dense[cols]).sum(-1)


class SparseDenseMM(Function):
    """Y = S D for a sparse S (the entries ``values`` at ``rows``, ``cols``; ``n_rows`` rows) and a dense D
    (see the module docstring for the gradients)."""

    @staticmethod
    def forward(ctx, values, dense, rows, cols, n_rows):
        ctx.rows, ctx.cols, ctx.n_rows = rows, cols, n_rows
        ctx.save_for_backward(values, dense)
        return sparse_dense_product(values._data, rows, cols, n_rows, dense._data)

    @staticmethod
    def backward(ctx, dout):
        values, dense = ctx.saved_tensors
        dy = dout._data
        dvalues = _entry_grad(dy, dense._data, ctx.rows, ctx.cols) if ctx.needs_input_grad[0] else None
        ddense = (sparse_dense_product(values._data, ctx.cols, ctx.rows, dense.shape[0], dy)
                  if ctx.needs_input_grad[1] else None)
        return dvalues, ddense, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """The same two formulas with minigrad ops: dD is this Function again (differentiable in the values
        and in dY), dv the row dot products by Tensor indexing."""
        values, dense = ctx.saved_tensors
        values, dense = ctx.input_tensor(0, values._data), ctx.input_tensor(1, dense._data)
        dvalues = _entry_grad(dout, dense, Tensor(ctx.rows), Tensor(ctx.cols)) if ctx.needs_input_grad[0] else None
        ddense = (SparseDenseMM.apply(values, dout, ctx.cols, ctx.rows, dense.shape[0])
                  if ctx.needs_input_grad[1] else None)
        return dvalues, ddense, None, None, None


def _check_product(sparse, dense, left_sparse):
    if sparse.sparse_dim() != 2 or sparse.dense_dim() != 0:
        raise RuntimeError(f"sparse matrix products need a 2-D sparse matrix with scalar values, got sparse_dim = "
                           f"{sparse.sparse_dim()}, dense_dim = {sparse.dense_dim()}")
    if isinstance(dense, SparseTensor):
        raise NotImplementedError("sparse @ sparse: minigrad multiplies a sparse matrix by a dense one only; "
                                  "convert one with to_dense()")
    if not isinstance(dense, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(dense).__name__}")
    if dense.ndim not in (1, 2):
        raise RuntimeError(f"mm(): the dense operand must be a matrix or a vector, but got a {dense.ndim}-D tensor")
    expected, got = (sparse.shape[1], dense.shape[0]) if left_sparse else (sparse.shape[0], dense.shape[-1])
    if expected != got:   # PyTorch's message, from the addmm that computes S @ D (and D @ S as (S^T D^T)^T)
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {expected}, got {got}")
    a, b = (sparse, dense) if left_sparse else (dense, sparse)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(a.dtype)} but found {scalar_type_name(b.dtype)}")


def sparse_mm(sparse, dense):
    """S @ D for a sparse matrix S and a dense matrix (or vector) D."""
    if getattr(sparse, "_compressed", False):
        from .compressed import matmul as compressed_matmul
        return compressed_matmul(sparse, dense)
    _check_product(sparse, dense, left_sparse=True)
    if dense.ndim == 1:
        return sparse_mm(sparse, dense.unsqueeze(1)).squeeze(1)
    rows, cols = sparse._idx
    return SparseDenseMM.apply(sparse._vals, dense, rows, cols, sparse.shape[0])


def matmul(input, other):
    """``mm``/``matmul``/``@`` with a sparse operand: S @ D, or D @ S = (S^T @ D^T)^T."""
    if getattr(input, "_compressed", False) or getattr(other, "_compressed", False):   # (torch.sparse.mm/addmm)
        from .compressed import matmul as compressed_matmul
        return compressed_matmul(input, other, sparse_api=True)
    if isinstance(input, SparseTensor):
        return sparse_mm(input, other)
    if not isinstance(other, SparseTensor):
        raise TypeError("sparse matmul: one operand must be a sparse tensor")
    _check_product(other, input, left_sparse=False)
    if input.ndim == 1:
        return sparse_mm(other.t(), input)
    return sparse_mm(other.t(), input.t()).t()


mm = matmul


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), ``mat1`` sparse (``minigrad.sparse.addmm``)."""
    product = matmul(mat1, mat2)
    return (input.to_dense() if isinstance(input, SparseTensor) else input) * beta + product * alpha
