"""Sparse gradients: what ``embedding(..., sparse=True)`` and ``embedding_bag(..., sparse=True)`` give their table.

The gradient of a lookup ``out = weight[indices]`` is nonzero only on the rows looked up, so it is kept as a sparse
COO tensor of weight's size (V, D): one entry per lookup, at its row, holding that position's upstream gradient

    dweight = sum_n e_{i_n} dout_n^T      indices (1, N) = i_n,  values (N, D) = dout_n

(the padding row's lookups left out). It is *uncoalesced*: a row looked up twice has two entries, which add up.

The autograd engine treats such a gradient as PyTorch's does where a leaf receives it: ``.grad`` becomes the sparse
tensor (or the sum of the sparse gradients of several backward calls), a dense ``.grad`` has the entries added into it
in place, and hooks and ``autograd.grad`` see it sparse. A sparse gradient that reaches an operation (a weight that
is not a leaf) is made dense first: PyTorch hands it on sparse where that operation's backward accepts it; the
values agree either way. The optimizers that accept sparse gradients (SGD, Adagrad, SparseAdam) update only the rows
listed.
"""
import contextlib

import numpy as np

from ..kernels.fused import add_rows_
from ..tensor import Tensor
from .coo import SparseTensor, _linear


def is_sparse(grad):
    """Whether ``grad`` (an ndarray, a Tensor or a sparse tensor) is a sparse gradient."""
    return getattr(grad, "is_sparse", False) is True


def lookup_gradient(indices, dout, weight_shape, padding_idx):
    """The sparse gradient of ``weight[indices]`` for upstream ``dout`` (indices.shape + (D,)): a Tensor with its
    graph if ``dout`` has one (create_graph=True), else plain values."""
    flat = indices.reshape(-1)                                                     # (N,)
    rows = dout.reshape(-1, weight_shape[1])                                       # (N, D)
    keep = None if padding_idx is None else flat != padding_idx
    if keep is not None and not keep.all():                                        # (indexing copies the rows)
        flat, rows = flat[keep], rows[Tensor(np.flatnonzero(keep))]
    elif not rows.requires_grad:                      # a gradient of its own (dout's memory may be reused)
        rows = Tensor(np.array(rows._data, copy=True))
    return SparseTensor(flat.reshape(1, -1).astype(np.int64), rows, weight_shape, coalesced=flat.size <= 1)


def fit(grad, meta, node, index):
    """A sparse gradient checked against its input's shape and cast to its dtype (``engine.fit_gradient``'s part)."""
    shape, dtype = meta
    if tuple(grad.shape) != tuple(shape):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - got shape "
                           f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
    return grad if grad._vals._data.dtype == dtype else grad.to(dtype)


def add(total, grad):
    """Two shares of one gradient, either of them sparse: sparse if both are, else dense (an ndarray when both were
    arrays or sparse without a graph, a Tensor otherwise)."""
    if is_sparse(total) and is_sparse(grad):
        return total + grad
    sparse, dense = (total, grad) if is_sparse(total) else (grad, total)
    if isinstance(dense, Tensor) or sparse.requires_grad:
        return (dense if isinstance(dense, Tensor) else Tensor(dense)) + sparse
    return add_into(np.array(dense, copy=True), sparse)


def densify(grad, graph):
    """The dense gradient an operation's backward receives: a Tensor in the graph, or an ndarray."""
    return grad.to_dense() if graph else add_into(np.zeros(grad.shape, grad._vals._data.dtype), grad)


@contextlib.contextmanager
def rows(array, grad):
    """``array`` (the dense shape of the sparse ``grad``) as (positions, prod(dense dims)), whose row p is the position
    that ``_linear`` numbers p, to read and write: a view, or for a layout no reshape can view (a transposed array) a
    copy, written back into ``array`` at the end."""
    view = array.reshape(-1, _width(grad))
    yield view
    if not np.may_share_memory(view, array):
        array[...] = view.reshape(array.shape)


def _width(grad):
    """How many numbers one entry of ``grad`` holds: the product of its dense dims."""
    return int(np.prod(grad.shape[grad.sparse_dim():], dtype=np.int64))


def _values(grad):
    """The entries' values as (nnz, width)."""
    return grad._vals._data.reshape(grad._nnz(), _width(grad))


def positions(grad):
    """Each entry's row in ``rows(array, grad)`` (nnz,)."""
    return _linear(grad._idx, grad.shape)


def coalesced(grad):
    """(positions, values) of the sparse ``grad`` with repeated positions summed: each distinct position once, in
    increasing order, as a row of ``rows(array, grad)`` (p,), and the sum of its entries in their order (p, width)."""
    at, slot = np.unique(positions(grad), return_inverse=True)
    sums = np.zeros((len(at), _width(grad)), grad._vals._data.dtype)
    add_rows_(sums, slot.reshape(-1), _values(grad))
    return at, sums


def add_into(array, grad, alpha=1):
    """Add ``alpha`` times each entry of the sparse ``grad`` into ``array`` (its dense shape) in place, in the order
    of the entries; returns it."""
    with rows(array, grad) as view:
        add_rows_(view, positions(grad), _values(grad), alpha)
    return array


def on_positions(like, at, values):
    """A coalesced sparse tensor of ``like``'s size holding ``values`` (p, width) at the positions ``at`` (p,)."""
    d = like.sparse_dim()
    indices = np.stack(np.unravel_index(at, like.shape[:d])).astype(np.int64).reshape(d, -1)
    return SparseTensor(indices, Tensor(values.reshape((len(at),) + tuple(like.shape[d:]))), like.shape, coalesced=True)


def accumulate(tensor, grad):
    """Add a sparse ``grad`` into ``tensor.grad`` as PyTorch's AccumulateGrad does: none yet, it becomes ``.grad``;
    a sparse ``.grad``, the sum (sparse, out of place); a dense one, the entries added in place, or out of place when
    either has a graph (create_graph=True)."""
    from ..autograd.version import bump
    old = tensor._grad
    if old is None:
        tensor._grad = grad
    elif is_sparse(old):
        tensor._grad = old + grad
    elif old.requires_grad or grad.requires_grad:
        tensor._grad = old + grad.to_dense()
    else:
        add_into(old._data, grad)
        bump(old._data)


def mask(dense, pattern):
    """``dense.sparse_mask(pattern)``: a sparse tensor with ``pattern``'s indices holding ``dense``'s values at them."""
    if not is_sparse(pattern) or not isinstance(pattern, SparseTensor):
        raise RuntimeError("sparse_mask: expected mask to be a sparse COO tensor")
    if tuple(pattern.shape) != tuple(dense.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(dense.shape)} but "
                           f"mask has size {list(pattern.shape)}")
    flat = dense.reshape((-1,) + tuple(dense.shape[pattern.sparse_dim():]))       # (positions, *dense)
    values = flat[Tensor(_linear(pattern._idx, pattern.shape))]                    # (nnz, *dense)
    return SparseTensor(pattern._idx, values, pattern.shape, coalesced=pattern.is_coalesced())
