"""``minigrad.sparse``: sparse COO tensors and the ``torch.sparse`` functions graph networks use.

``minigrad.sparse_coo_tensor(indices, values, size)`` and ``Tensor.to_sparse()`` make them (``coo.py``);
``mm``, ``addmm`` and ``minigrad.mm``/``matmul``/``spmm``/``@`` multiply them by dense matrices
(``products.py``); ``sum`` and ``softmax`` reduce them. Gradients reach the values and the dense operand,
as in PyTorch.
"""
import numpy as np

from ..ops.dims import normalize_dim
from ..ops.index import IndexSelect
from ..tensor import Tensor
from .coo import SparseTensor, _linear, _segment_sum, sparse_coo_tensor, to_sparse
from .compressed import CompressedTensor, sampled_addmm
from .diagonals import spdiags
from .products import addmm, matmul, sparse_mm

__all__ = ["DoubleTensor", "FloatTensor", "addmm", "check_sparse_tensor_invariants", "log_softmax", "mm",
           "sampled_addmm", "softmax", "spdiags", "sum"]


def mm(mat1, mat2, reduce="sum"):
    """``mat1 @ mat2`` with one sparse operand, COO or compressed (PyTorch's ``torch.sparse.mm``)."""
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm(reduce={reduce!r}): minigrad supports reduce='sum' only")
    return matmul(mat1, mat2)


def sum(input, dim=None, dtype=None):  # noqa: A001 - PyTorch's name
    """The sum of a sparse tensor's entries: over every dim a dense 0-d tensor; over ``dim`` a sparse tensor
    of the remaining dims (coalesced), or a dense one when no sparse dim remains."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("sparse.sum(): expected a sparse COO tensor")
    values = input._vals if dtype is None else input._vals.to(dtype)
    if dim is None:
        return values.sum()
    dims = {normalize_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
    d = input.sparse_dim()
    dense_dims = tuple(1 + k - d for k in sorted(dims) if k >= d)
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [k for k in range(d) if k not in dims]
    dense_size = tuple(s for k, s in enumerate(input.shape[d:], start=d) if k not in dims)
    if not kept:
        return values.sum(0)
    indices = input._idx[kept]
    size = tuple(input.shape[k] for k in kept) + dense_size
    return SparseTensor(indices, values, size).coalesce()


def softmax(input, dim, dtype=None):
    """Softmax over the *specified* entries along ``dim`` (absent entries count as -inf, and stay absent),
    of a 2-D-or-more sparse tensor with scalar values, coalesced first as PyTorch does. Written with
    differentiable ops: y = exp(v - m) / s, with the group maxima m held constant (softmax does not change
    with the shift) and s the group sums of exp(v - m)."""
    return _group_softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, dtype=None):
    """log of ``softmax``: v - m - log s, over the specified entries along ``dim``."""
    return _group_softmax(input, dim, dtype, log=True)


def _group_softmax(input, dim, dtype, log):
    if not isinstance(input, SparseTensor) or input.dense_dim():
        raise RuntimeError("sparse softmax: expected a sparse COO tensor with scalar values")
    s = input.coalesce()
    values = s._vals if dtype is None else s._vals.to(dtype)
    dim = normalize_dim(dim, s.ndim)
    others = [k for k in range(s.ndim) if k != dim]
    group = (_linear(s._idx[others], tuple(s.shape[k] for k in others)) if others
             else np.zeros(s._nnz(), np.int64))
    groups, slot = np.unique(group, return_inverse=True)
    slot = slot.reshape(-1)
    peak = np.full(len(groups), -np.inf, values.dtype)
    np.maximum.at(peak, slot, values._data)                            # m per group, a constant
    shifted = values - Tensor(peak[slot])
    exp = shifted.exp()
    total = IndexSelect.apply(_segment_sum(exp, slot, len(groups)), 0, slot)   # s of each entry's group
    out = shifted - total.log() if log else exp / total
    return SparseTensor(s._idx, out, s.shape, coalesced=True)


class check_sparse_tensor_invariants:  # noqa: N801 - PyTorch's name
    """PyTorch's switch for index checks at construction; minigrad checks when ``check_invariants=True`` is
    passed to ``sparse_coo_tensor``, and this context manager is accepted (a no-op) for ported code."""

    def __init__(self, enable=True):
        self.enable = enable

    @staticmethod
    def is_enabled():
        return False

    @staticmethod
    def enable():
        pass

    @staticmethod
    def disable():
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _LegacySparseType(type):
    """``torch.sparse.FloatTensor(indices, values, size)``, PyTorch's pre-1.0 constructor pygcn-style code
    uses: ``sparse_coo_tensor`` with the class's dtype."""

    def __call__(cls, indices, values, size=None):
        return sparse_coo_tensor(indices, values, size, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, SparseTensor) and instance.dtype == cls.dtype


FloatTensor = _LegacySparseType("FloatTensor", (), {"dtype": np.dtype(np.float32)})
DoubleTensor = _LegacySparseType("DoubleTensor", (), {"dtype": np.dtype(np.float64)})
LongTensor = _LegacySparseType("LongTensor", (), {"dtype": np.dtype(np.int64)})


def spmm(input, mat2):
    """``minigrad.spmm``: sparse @ dense (``sparse.mm``)."""
    return sparse_mm(input, mat2)


del to_sparse  # bound as Tensor.to_sparse (tensor.py)
