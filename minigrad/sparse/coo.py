"""Sparse COO tensors: ``sparse_coo_tensor``, ``Tensor.to_sparse``, ``to_dense``, ``coalesce`` and the
accessors, with PyTorch's semantics for what requires grad.

A sparse tensor of ``size`` (s_0, ..., s_{d-1}, *dense) holds ``indices`` (d, nnz), int64, and ``values``
(nnz, *dense): entry k sits at ``indices[:, k]``; entries at the same position add up (an *uncoalesced*
tensor may list a position twice; ``coalesce()`` sorts the positions and sums the repeats).

Autograd runs through the values. ``SparseTensor`` keeps its values as a minigrad Tensor, and every
operation is written with differentiable minigrad ops on that Tensor (``IndexSelect`` to gather values,
``IndexAdd`` to sum them into positions) or with ``SparseDenseMM`` (``products.py``), so gradients reach
the values, and through them whatever made the values (the ``values`` tensor given to
``sparse_coo_tensor``, or the dense tensor ``to_sparse`` read them from). A sparse tensor made with
``requires_grad=True`` (or ``requires_grad_()``) is a leaf that owns a private values tensor; its
``.grad`` is the sparse tensor of those values' gradients on its distinct positions, as the gradient
``torch.sparse.mm`` gives a sparse leaf. (PyTorch's ``torch.mm`` gives such a leaf a dense gradient,
zeros included: minigrad gives the masked one for both.)

A sparse tensor is a ``Tensor`` (``isinstance`` holds, ``is_sparse`` is True, ``layout`` is
``minigrad.sparse_coo``), but has no dense array: an operation that needs one raises
``NotImplementedError`` naming ``to_dense()``, as PyTorch's operators without a sparse kernel raise.
"""
import numpy as np

from .. import layouts
from ..ops.index import IndexSelect
from ..ops.inplace import IndexAdd
from ..tensor import Tensor
from .base import SparseBase

_NO_DENSE = ("this operation has no sparse COO kernel in minigrad (as many have none in PyTorch, which raises "
             "NotImplementedError too): convert with .to_dense() first. Sparse tensors support: mm/matmul/@ with a "
             "dense matrix, minigrad.sparse.mm/sum/softmax/addmm, to_dense, coalesce, indices/values, t, "
             "transpose, +, * and / by a scalar or a dense tensor, and the dtype casts")


class _SparseConstruction:
    """The ``grad_fn`` a sparse tensor built from values that require grad reports (gradients flow through
    its values; this object only names the step, as PyTorch's node does)."""

    def __repr__(self):
        return "<SparseCooTensorWithDimsAndTensorsBackward>"

    def name(self):
        return "SparseCooTensorWithDimsAndTensorsBackward"


_CONSTRUCTION = _SparseConstruction()


class SparseTensor(SparseBase):
    """A sparse COO tensor (see the module docstring); made by ``sparse_coo_tensor`` or ``to_sparse``."""

    __slots__ = ("_idx", "_coalesced", "_owns")
    _NO_DENSE = _NO_DENSE
    is_sparse = True
    layout = layouts.sparse_coo

    def __init__(self, indices, values, size, coalesced=False, owns=False):
        """Internal: ``indices`` an int64 ndarray (d, nnz), ``values`` a Tensor (nnz, *dense), ``size`` a tuple."""
        self._idx, self._vals, self._size = indices, values, tuple(int(s) for s in size)
        self._coalesced, self._owns = bool(coalesced), owns
        self._grad, self._grad_fn, self._hooks, self._base, self._requires_grad = None, None, (), None, False

    def _like(self, values, indices=None, coalesced=None):
        """A sparse tensor of this size with other values (and indices)."""
        return SparseTensor(self._idx if indices is None else indices, values, self._size,
                            self._coalesced if coalesced is None else coalesced)

    # ----------------------------------------------------------------- shape and dtype
    @property
    def ndim(self):
        return len(self._size)

    def dim(self):
        return len(self._size)

    def numel(self):
        return int(np.prod(self._size))

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return len(self._size) - self._idx.shape[0]

    def _nnz(self):
        return self._idx.shape[1]

    # ----------------------------------------------------------------- autograd (through the values)
    @property
    def requires_grad(self):
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    @property
    def is_leaf(self):
        return self._owns or not self._vals.requires_grad

    @property
    def grad_fn(self):
        return None if self.is_leaf else _CONSTRUCTION

    def requires_grad_(self, requires_grad=True):
        """Make this sparse tensor a leaf that requires grad: it owns its values from now on (they stay shared
        in memory with the values it was made from, which do not get gradients, as in PyTorch)."""
        if bool(requires_grad) == self.requires_grad:
            return self
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if not self._owns:
            self._vals, self._owns = self._vals.detach(), True
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        """A leaf's gradient: sparse, on this tensor's distinct positions in sorted order (a repeated position's
        entries all received the gradient at that position; it is counted once). Not flagged coalesced, as
        PyTorch's is not."""
        values_grad = self._vals.grad if self._owns else None
        if values_grad is None:
            return None
        positions, first = np.unique(_linear(self._idx, self._size), return_index=True)
        return SparseTensor(self._idx[:, first], Tensor(values_grad._data[first]), self._size)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError("minigrad can only clear a sparse tensor's .grad (assign None)")
        if self._owns:
            self._vals.grad = None

    @property
    def data(self):
        return self._like(self._vals.detach())

    def detach_(self):
        self._vals = self._vals.detach()
        return self

    def zero_(self):
        """No entries left, the size kept (PyTorch's sparse ``zero_``, as ``optimizer.zero_grad(set_to_none=False)``
        applies to a sparse gradient)."""
        self._idx = np.zeros((self.sparse_dim(), 0), np.int64)
        self._vals = Tensor(np.zeros((0,) + tuple(self._vals.shape[1:]), self._vals._data.dtype))
        self._coalesced = True
        return self

    def clone(self, memory_format=None):
        return self._like(self._vals.clone(), self._idx.copy())

    # ----------------------------------------------------------------- the parts
    def _indices(self):
        return Tensor(self._idx)

    def _values(self):
        return self._vals

    def indices(self):
        self._check_coalesced("indices")
        return Tensor(self._idx)

    def values(self):
        self._check_coalesced("values")
        return self._vals

    def _check_coalesced(self, what):
        if not self._coalesced:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")

    def is_coalesced(self):
        return self._coalesced

    def coalesce(self):
        """The same tensor with sorted, distinct positions: repeated entries summed (``IndexAdd``; its
        backward hands each original entry the gradient of its position)."""
        if self._coalesced:
            return self
        positions, slot = np.unique(_linear(self._idx, self._size), return_inverse=True)
        values = _segment_sum(self._vals, slot.reshape(-1), len(positions))
        indices = np.stack(np.unravel_index(positions, self._size[:self.sparse_dim()])).astype(np.int64)
        return SparseTensor(indices.reshape(self.sparse_dim(), -1), values, self._size, coalesced=True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor: each entry added at its position (``IndexAdd`` into zeros)."""
        positions = int(np.prod(self._size[:self.sparse_dim()]))
        flat = _segment_sum(self._vals, _linear(self._idx, self._size), positions)   # (positions, *dense)
        out = flat.reshape(self._size)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout in _COMPRESSED:
            from .compressed import to_compressed
            return to_compressed(self, layout, blocksize)
        _check_layout(layout)
        return self

    to_sparse_coo = to_sparse

    # ----------------------------------------------------------------- dtype and device
    def to(self, *args, dtype=None, **kwargs):
        """The values cast (``double()``, ``float()``, ... come here through ``Tensor``'s methods)."""
        values = self._vals.to(*args, dtype=dtype, **kwargs)
        return self if values is self._vals else self._like(values)

    # ----------------------------------------------------------------- shape ops
    def transpose(self, dim0, dim1):
        """The two sparse dims swapped (their index rows exchanged); no longer coalesced."""
        d = self.sparse_dim()
        dim0, dim1 = dim0 % self.ndim, dim1 % self.ndim
        if dim0 >= d or dim1 >= d:
            raise RuntimeError("transpose(): minigrad transposes the sparse dims of a sparse tensor only")
        order = list(range(d))
        order[dim0], order[dim1] = dim1, dim0
        size = list(self._size)
        size[dim0], size[dim1] = size[dim1], size[dim0]
        return SparseTensor(self._idx[order], self._vals, size, coalesced=self._nnz() <= 1)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self if self.ndim < 2 else self.transpose(0, 1)

    # ----------------------------------------------------------------- arithmetic
    def __mul__(self, other):
        """By a scalar (or 0-d tensor): the values scaled. By a dense tensor of this size: the values times
        the dense entries at their positions (the product is zero elsewhere)."""
        if isinstance(other, SparseTensor):
            raise NotImplementedError("sparse * sparse: " + _NO_DENSE)
        if isinstance(other, Tensor) and other.ndim > 0:
            dense = other.expand(self._size) if other.shape != self._size else other
            flat = dense.reshape((-1,) + self._size[self.sparse_dim():])
            other = IndexSelect.apply(flat, 0, _linear(self._idx, self._size))
        return self._like(self._vals * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Tensor) and other.ndim > 0:
            raise NotImplementedError("sparse / tensor: " + _NO_DENSE)
        return self._like(self._vals / other)

    def __neg__(self):
        return self._like(-self._vals)

    def __add__(self, other):
        """sparse + sparse of one size: the entries of both (coalesced when both were, as PyTorch's result).
        sparse + dense raises as in PyTorch (write dense + sparse)."""
        if not isinstance(other, SparseTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        if other.shape != self.shape:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(self.shape)} while other has size {list(other.shape)}")
        from ..ops.shape import cat
        both = SparseTensor(np.concatenate([self._idx, other._idx], axis=1), cat([self._vals, other._vals]),
                            self._size)
        return both.coalesce() if self._coalesced and other._coalesced else both

    def __radd__(self, other):
        """dense + sparse: the dense tensor with the entries added (a dense result)."""
        return self.to_dense() + other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self).__radd__(other)

    # ----------------------------------------------------------------- products and reductions
    def __matmul__(self, other):
        from .products import matmul
        return matmul(self, other)

    def __rmatmul__(self, other):
        from .products import matmul
        return matmul(other, self)

    def mm(self, mat2):
        from .products import mm
        return mm(self, mat2)

    matmul = __matmul__

    def sum(self, dim=None, keepdim=False, dtype=None):
        from . import sum as sparse_sum
        if keepdim:
            raise RuntimeError("sum(): keepdim is not supported for sparse tensors")
        return sparse_sum(self, dim, dtype=dtype)

    def relu(self):
        return self._like(self._vals.relu())

    # ----------------------------------------------------------------- printing
    def __repr__(self):
        pad = " " * len("tensor(indices=")
        indices = repr(Tensor(self._idx)).replace("\n", "\n" + pad)
        values = repr(self._vals.detach()).replace("\n", "\n" + " " * len("       values="))
        extras = self._repr_extras(" " * 7)
        return f"tensor(indices={indices},\n       values={values},\n       {extras})"

    def numpy(self):
        raise TypeError("can't convert a sparse tensor to numpy: use to_dense() first")


# --------------------------------------------------------------------------- helpers
def _linear(indices, size):
    """Each entry's position as one number: its row-major index among the sparse dims (nnz,)."""
    d = indices.shape[0]
    if d == 0:
        return np.zeros(indices.shape[1], np.int64)
    return np.ravel_multi_index(tuple(indices), size[:d]).astype(np.int64, copy=False)


def _segment_sum(values, slot, n):
    """out[j] = sum of the values whose slot is j (n slots): ``IndexAdd`` into zeros, differentiable; its
    backward gives each value the gradient of its slot."""
    zeros = Tensor(np.zeros((n,) + values.shape[1:], values.dtype))
    return IndexAdd.apply(zeros, values, 0, slot, 1)


_COMPRESSED = (layouts.sparse_csr, layouts.sparse_csc, layouts.sparse_bsr, layouts.sparse_bsc)


def _check_layout(layout):
    if layout is not None and layout is not layouts.sparse_coo:
        raise NotImplementedError(f"to_sparse(): minigrad has sparse COO tensors only, not {layout}")


def _as_values(values, dtype):
    if isinstance(values, SparseTensor):
        raise TypeError("sparse_coo_tensor(): values must be a dense tensor, not a sparse one")
    if not isinstance(values, Tensor):
        from ..creation import tensor
        return tensor(values, dtype=dtype)
    return values if dtype is None or values.dtype == np.dtype(dtype) else values.to(dtype)


def _as_indices(indices):
    array = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if array.dtype.kind not in "iu":
        raise RuntimeError(f"indices must be an int64 tensor, got {array.dtype}")
    return array.astype(np.int64, copy=False)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (repeats add up), of ``size`` (or the
    smallest that holds the indices). Shares ``values``' memory; when ``values`` requires grad the result
    is a non-leaf whose gradients reach ``values``; ``requires_grad=True`` makes a leaf instead. The
    indices are checked against ``size`` only with ``check_invariants=True``, as in PyTorch (an index out of
    range otherwise raises later, in the operation that meets it)."""
    from ..device import check_device
    check_device(device)
    idx = _as_indices(indices)
    vals = _as_values(values, dtype)
    if idx.ndim != 2:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: sparse indices must be a "
                           f"2-D (sparse_dim, nnz) tensor, got {idx.ndim}-D")
    if vals.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz, *dense_dims)")
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, nnz "
                           f"from values: {vals.shape[0]}")
    if size is None:
        sparse_size = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.shape[1] else (0,) * idx.shape[0]
        size = sparse_size + tuple(vals.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != idx.shape[0] + vals.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {idx.shape[0]}, dense_dim = {vals.ndim - 1}")
    if check_invariants:
        _check_indices(idx, size)
    coalesced = bool(is_coalesced) or idx.shape[1] <= 1
    out = SparseTensor(idx, vals, size, coalesced=coalesced)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_indices(idx, size):
    """PyTorch's invariant checks: indices non-negative and inside ``size``."""
    for d in range(idx.shape[0]):
        if idx.shape[1] and idx[d].min() < 0:
            raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
        if idx.shape[1] and idx[d].max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{int(idx[d].max())}")


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse()``: the non-zero entries of ``input`` (with ``sparse_dim``, the positions among the
    first ``sparse_dim`` dims whose slices hold a non-zero), coalesced. The values are gathered from
    ``input`` by ``IndexSelect``, so gradients reach ``input`` at those positions."""
    if isinstance(input, SparseTensor):
        return input.to_sparse(sparse_dim, layout=layout, blocksize=blocksize)
    if layout in _COMPRESSED:
        from .compressed import to_compressed
        return to_compressed(input, layout, blocksize)
    _check_layout(layout)
    d = input.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= d <= input.ndim:
        raise RuntimeError(f"sparse_dim argument must be in [0, {input.ndim}] range, but {d} is given")
    data = input._data
    nonzero = data != 0
    if d < data.ndim:
        nonzero = nonzero.any(axis=tuple(range(d, data.ndim)))
    idx = np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(d, -1)
    flat = input.reshape((-1,) + input.shape[d:])
    values = IndexSelect.apply(flat, 0, _linear(idx, input.shape))
    return SparseTensor(idx, values, input.shape, coalesced=True)


def to_dense(input, dtype=None, *, masked_grad=None):
    """``Tensor.to_dense()`` of a dense tensor: itself (cast to ``dtype`` if given), as in PyTorch."""
    return input if dtype is None else input.to(dtype)


def _strided_only(name, expected="sparse coordinate tensor"):
    def refuse(input, *args, **kwargs):
        raise RuntimeError(f"{name} expected {expected} layout but got Strided")
    refuse.__name__ = name
    return refuse


def _no_sparse_kernel(name):
    def refuse(input, *args, **kwargs):
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'CPU' backend: "
                                  f"{name}() is for sparse tensors")
    refuse.__name__ = name
    return refuse


# Methods of dense tensors (tensor.py binds them): to_sparse, to_dense, and PyTorch's errors for the
# sparse-only accessors.
DENSE_METHODS = {
    "to_sparse": to_sparse, "to_sparse_coo": to_sparse, "to_dense": to_dense,
    "is_coalesced": _strided_only("is_coalesced"), "coalesce": _strided_only("coalesce"),
    "indices": _strided_only("indices"), "values": _strided_only("values", "sparse tensor"),
    "_indices": _no_sparse_kernel("_indices"), "_values": _no_sparse_kernel("_values"),
    "_nnz": _no_sparse_kernel("_nnz"),
}
