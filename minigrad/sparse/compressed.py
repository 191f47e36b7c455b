"""Compressed sparse layouts: CSR, CSC, BSR and BSC matrices (``minigrad.sparse_csr_tensor`` ...,
``Tensor.to_sparse_csr()`` ...), their conversions, and their products with dense matrices and vectors.

A compressed matrix of size (R, C) stores its entries grouped by row (CSR, BSR) or by column (CSC, BSC):

    compressed_indices   (n + 1,)  entries of group g sit at positions compressed[g] : compressed[g + 1]
    plain_indices        (nnz,)    the other coordinate of each entry (the column for CSR, the row for CSC)
    values               (nnz,) for CSR/CSC; (nnz, bh, bw) for BSR/BSC, each entry a bh x bw block

For the blocked layouts the coordinates count blocks: n is R / bh (BSR) or C / bw (BSC). The scalar layouts are
handled here as blocked ones with 1 x 1 blocks, so one set of helpers serves all four.

Autograd follows PyTorch:

* A matrix made from ``values`` (``sparse_csr_tensor(crow, col, values)``) passes gradients to ``values``: the
  product's gradient with respect to the matrix, read at the entries' positions.
* A matrix made from a dense ``x`` (``x.to_sparse_csr()``) remembers ``x`` as its *source*. Its products pass
  ``x`` the full dense gradient dY D^T (zeros of ``x`` included), as PyTorch's ``ToSparseCsrBackward`` does,
  while ``values()`` and ``to_dense()`` pass ``x`` the gradient at the entries only.
* A leaf made with ``requires_grad=True`` keeps a private dense source; its ``.grad`` is that source's gradient,
  a dense matrix (PyTorch's, after a product, is dense too; after ``to_dense()`` PyTorch's is a CSR matrix of
  the same numbers).

Products run on the entries' (row, column) coordinates with ``products.sparse_dense_product`` (SciPy when it
is installed, else NumPy). Only CSR and CSC matrices multiply (PyTorch has no CPU kernel for BSR/BSC @ dense).
Batched compressed tensors (more than two dims) and hybrid values (dense dims after the entries) are not
supported. The index arrays are always checked for lengths, bounds and monotony (PyTorch checks them only
under ``check_invariants=True`` and otherwise reads out of bounds); sortedness and distinctness of the plain
indices within a group only with ``check_invariants=True``, as PyTorch.
"""
import numpy as np

from .. import layouts
from ..autograd import Function
from ..dtypes import scalar_type_name
from ..ops.index import IndexSelect
from ..tensor import Tensor
from .base import SparseBase
from .coo import SparseTensor, _segment_sum
from .products import _entry_grad, sparse_dense_product

_ROW = {layouts.sparse_csr: True, layouts.sparse_bsr: True, layouts.sparse_csc: False, layouts.sparse_bsc: False}
_BLOCKED = (layouts.sparse_bsr, layouts.sparse_bsc)
_NAMES = {layouts.sparse_csr: "SparseCsr", layouts.sparse_csc: "SparseCsc", layouts.sparse_bsr: "SparseBsr",
          layouts.sparse_bsc: "SparseBsc"}
_SHORT = {layouts.sparse_csr: "csr", layouts.sparse_csc: "csc", layouts.sparse_bsr: "bsr", layouts.sparse_bsc: "bsc"}

_NO_DENSE = ("this operation has no kernel for compressed sparse tensors in minigrad: convert with .to_dense() "
             "first. Compressed sparse tensors support: mm/matmul/@/addmm of a CSR or CSC matrix with a dense "
             "matrix or vector, to_dense, to_sparse*, the index accessors, values, t, the dtype casts")


class _Node:
    """The ``grad_fn`` a compressed tensor reports (gradients run through its values or its source; this object
    only names the step, as PyTorch's node does)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"<{self._name}>"

    def name(self):
        return self._name


def _is_compressed(x):
    return isinstance(x, CompressedTensor)


class CompressedTensor(SparseBase):
    """A 2-D compressed sparse tensor (module docstring); made by the ``sparse_*_tensor`` functions or the
    ``to_sparse_*`` methods."""

    __slots__ = ("_layout", "_cidx", "_pidx", "_block", "_source", "_owns", "_node", "_index_dtype")
    _NO_DENSE = _NO_DENSE
    is_sparse = False
    _compressed = True

    def __init__(self, layout, cidx, pidx, values, size, block=(1, 1), source=None, node=None,
                 index_dtype=np.int64):
        """Internal: ``cidx``, ``pidx`` int64 ndarrays; ``values`` a Tensor; ``size`` (R, C); ``block`` (bh, bw);
        ``source`` a dense Tensor of size (R, C) equal to this matrix, whose products pass it a dense gradient."""
        self._layout, self._cidx, self._pidx, self._vals = layout, cidx, pidx, values
        self._size, self._block, self._source = tuple(int(s) for s in size), tuple(block), source
        self._owns, self._node, self._index_dtype = False, node, np.dtype(index_dtype)
        self._grad, self._grad_fn, self._hooks, self._base, self._requires_grad = None, None, (), None, False

    def _like(self, values, source=None, node=None):
        return CompressedTensor(self._layout, self._cidx, self._pidx, values, self._size, self._block, source, node,
                                self._index_dtype)

    # ----------------------------------------------------------------- layout, shape and dtype
    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse_csr(self):
        return self._layout is layouts.sparse_csr

    @property
    def ndim(self):
        return 2

    def dim(self):
        return 2

    def numel(self):
        return self._size[0] * self._size[1]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def _nnz(self):
        return int(self._pidx.shape[0])

    # ----------------------------------------------------------------- the parts
    def _index(self, array):
        return Tensor(array.astype(self._index_dtype))

    def _accessor(self, name, row):
        if _ROW[self._layout] != row:
            kind = "row" if row else "column"
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got "
                               f"{_NAMES[self._layout]}")

    def crow_indices(self):
        self._accessor("crow_indices", True)
        return self._index(self._cidx)

    def col_indices(self):
        self._accessor("col_indices", True)
        return self._index(self._pidx)

    def ccol_indices(self):
        self._accessor("ccol_indices", False)
        return self._index(self._cidx)

    def row_indices(self):
        self._accessor("row_indices", False)
        return self._index(self._pidx)

    def values(self):
        return self._vals

    def _coords(self):
        """Each entry's (block) row and column, (nnz,) int64 each."""
        groups = np.repeat(np.arange(len(self._cidx) - 1, dtype=np.int64), np.diff(self._cidx))
        return (groups, self._pidx) if _ROW[self._layout] else (self._pidx, groups)

    def _element_coords(self):
        """The (row, column) of every stored scalar, in the order of ``values.reshape(-1)``."""
        rows, cols = self._coords()
        (bh, bw), n = self._block, self._nnz()
        rows = (rows[:, None, None] * bh + np.arange(bh)[None, :, None]) + np.zeros((1, 1, bw), np.int64)
        cols = (cols[:, None, None] * bw + np.arange(bw)[None, None, :]) + np.zeros((1, bh, 1), np.int64)
        return rows.reshape(n * bh * bw), cols.reshape(n * bh * bw)

    def _blocks(self):
        """The values as (nnz, bh, bw) blocks (a 1 x 1 block per entry for CSR/CSC)."""
        return self._vals.reshape((self._nnz(),) + self._block)

    # ----------------------------------------------------------------- autograd
    @property
    def requires_grad(self):
        return self._vals.requires_grad or (self._source is not None and self._source.requires_grad)

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    @property
    def is_leaf(self):
        return self._owns or not self.requires_grad

    @property
    def grad_fn(self):
        return None if self.is_leaf else _Node(self._node or "SparseCompressedTensorBackward0")

    def requires_grad_(self, requires_grad=True):
        """Make this a leaf that requires grad: it gets a private dense source (see the module docstring) and
        its values are read from it."""
        if bool(requires_grad) == self.requires_grad:
            return self
        if not self.is_leaf:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if not requires_grad:
            self._vals, self._source, self._owns = self._vals.detach(), None, False
            return self
        source = self.detach().to_dense().detach().requires_grad_()
        self._vals = _gather(source, self._layout, self._block, *self._coords())
        self._source, self._owns = source, True
        return self

    @property
    def grad(self):
        """A leaf's gradient: its private source's (dense)."""
        return self._source.grad if self._owns else None

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError("minigrad can only clear a compressed sparse tensor's .grad (assign None)")
        if self._owns:
            self._source.grad = None

    @property
    def data(self):
        return self.detach()

    def clone(self, memory_format=None):
        out = self._like(self._vals.clone(), self._source, self._node)
        out._cidx, out._pidx = self._cidx.copy(), self._pidx.copy()
        return out

    # ----------------------------------------------------------------- conversions
    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense matrix: each block added at its place (``IndexAdd`` into zeros, so the gradient reaches the
        values at their positions)."""
        rows, cols = self._coords()
        grid = (self._size[0] // self._block[0], self._size[1] // self._block[1])
        blocks = _segment_sum(self._blocks(), rows * grid[1] + cols, grid[0] * grid[1])
        out = _unblock(blocks, self._size, self._block)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not layouts.sparse_coo:
            return self._convert(layout, blocksize)
        if sparse_dim is not None and sparse_dim != 2:
            raise RuntimeError(f"sparse_dim argument must be 2 for a compressed sparse tensor, got {sparse_dim}")
        rows, cols = self._element_coords()        # every stored scalar, in storage order (as PyTorch)
        return SparseTensor(np.stack([rows, cols]).reshape(2, -1), self._vals.reshape(-1), self._size,
                            coalesced=self._layout is layouts.sparse_csr)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        return self._convert(layouts.sparse_csr, None)

    def to_sparse_csc(self, dense_dim=None):
        return self._convert(layouts.sparse_csc, None)

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        return self._convert(layouts.sparse_bsr, blocksize)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        return self._convert(layouts.sparse_bsc, blocksize)

    def _convert(self, layout, blocksize):
        block = _blocksize(layout, blocksize, self._size, "to_sparse_" + _SHORT.get(layout, "?"))
        if layout is self._layout and block == self._block:
            return self
        if self._layout in _BLOCKED and layout not in _BLOCKED:
            raise RuntimeError(f"sparse_compressed_to_sparse_{_SHORT[layout]}: expected SparseCsr or SparseCsc "
                               f"layout but got {_NAMES[self._layout]}")
        if self._layout in _BLOCKED and block != self._block:
            raise RuntimeError(f"to_sparse_{_SHORT[layout]}: conversion from {_NAMES[self._layout]} to "
                               f"{_NAMES[layout]} with blocksize changed from {list(self._block)} to {list(block)} "
                               "is not supported")
        if block != self._block:          # another block grid: through the dense matrix
            out = to_compressed(self.to_dense(), layout, blocksize)
            out._source = self._source
            return out
        rows, cols = self._coords()       # the same entries, in the other order
        order = np.lexsort((cols, rows)) if _ROW[layout] else np.lexsort((rows, cols))
        values = IndexSelect.apply(self._vals, 0, order)
        if layout in _BLOCKED and self._layout not in _BLOCKED:     # scalar entries as 1 x 1 blocks
            values = values.reshape(-1, 1, 1)
        return _assemble(layout, rows[order], cols[order], values, self._size, block, self._source,
                         f"ToSparse{_NAMES[layout][6:]}Backward0", self._index_dtype)

    # ----------------------------------------------------------------- dtype and device
    def to(self, *args, dtype=None, **kwargs):
        values = self._vals.to(*args, dtype=dtype, **kwargs)
        if values is self._vals:
            return self
        source = None if self._source is None else self._source.to(values.dtype)
        return self._like(values, source, self._node)

    # ----------------------------------------------------------------- shape ops
    def t(self):
        """The transpose: CSR <-> CSC (BSR <-> BSC, blocks transposed) on the same index arrays."""
        flip = {layouts.sparse_csr: layouts.sparse_csc, layouts.sparse_csc: layouts.sparse_csr,
                layouts.sparse_bsr: layouts.sparse_bsc, layouts.sparse_bsc: layouts.sparse_bsr}[self._layout]
        values = self._vals.transpose(1, 2) if self._layout in _BLOCKED else self._vals
        source = None if self._source is None else self._source.t()
        return CompressedTensor(flip, self._cidx, self._pidx, values, self._size[::-1], self._block[::-1], source,
                                "TBackward0", self._index_dtype)

    def transpose(self, dim0, dim1):
        if {dim0 % 2, dim1 % 2} == {0, 1}:
            return self.t()
        return self

    # ----------------------------------------------------------------- arithmetic and products
    def __mul__(self, other):
        if isinstance(other, Tensor) and other.ndim > 0:
            raise NotImplementedError("compressed sparse * tensor: " + _NO_DENSE)
        source = None if self._source is None else self._source * other
        return self._like(self._vals * other, source, "MulBackward0")

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def mm(self, mat2):
        return matmul(self, mat2)

    def mv(self, vec):
        return matmul(self, vec)

    matmul = __matmul__

    # ----------------------------------------------------------------- printing
    def __repr__(self):
        cname, pname = ("crow_indices", "col_indices") if _ROW[self._layout] else ("ccol_indices", "row_indices")
        pad = " " * 7

        def part(name, tensor):
            return f"{name}=" + repr(tensor).replace("\n", "\n" + " " * (len(name) + 8))
        extras = self._repr_extras(pad)
        return (f"tensor({part(cname, self._index(self._cidx))},\n{pad}{part(pname, self._index(self._pidx))},\n"
                f"{pad}{part('values', self._vals.detach())}, {extras})")

    def numpy(self):
        raise TypeError("can't convert a compressed sparse tensor to numpy: use to_dense() first")


# --------------------------------------------------------------------------- block helpers
def _block_view(dense, block):
    """The (R, C) tensor as its (R/bh * C/bw, bh, bw) blocks, row-major over the block grid (differentiable)."""
    (r, c), (bh, bw) = dense.shape, block
    return dense.reshape(r // bh, bh, c // bw, bw).permute(0, 2, 1, 3).reshape(-1, bh, bw)


def _unblock(blocks, size, block):
    """Inverse of ``_block_view``."""
    (r, c), (bh, bw) = size, block
    return blocks.reshape(r // bh, c // bw, bh, bw).permute(0, 2, 1, 3).reshape(r, c)


def _gather(dense, layout, block, rows, cols):
    """The values of the entries at block coordinates (rows, cols) read from ``dense`` (``IndexSelect``)."""
    grid_cols = dense.shape[1] // block[1]
    values = IndexSelect.apply(_block_view(dense, block), 0, rows * grid_cols + cols)
    return values if layout in _BLOCKED else values.reshape(-1)


def _assemble(layout, rows, cols, values, size, block, source, node, index_dtype=np.int64):
    """A compressed tensor of entries already in the layout's order (by row, or by column)."""
    groups, plain = (rows, cols) if _ROW[layout] else (cols, rows)
    n = size[0] // block[0] if _ROW[layout] else size[1] // block[1]
    cidx = np.concatenate([[0], np.cumsum(np.bincount(groups, minlength=n))]).astype(np.int64)
    return CompressedTensor(layout, cidx, np.asarray(plain, np.int64), values, size, block, source, node, index_dtype)


def _blocksize(layout, blocksize, size, fname):
    """(bh, bw) for ``layout``: (1, 1) for CSR/CSC; ``blocksize`` (an int or a pair) dividing ``size`` else."""
    if layout not in _ROW:
        raise RuntimeError(f"{fname}: expected a sparse compressed layout (minigrad.sparse_csr, sparse_csc, "
                           f"sparse_bsr or sparse_bsc), got {layout!r}")
    if layout not in _BLOCKED:
        return (1, 1)
    if blocksize is None:
        raise RuntimeError(f"{fname}: blocksize needs to be specified for {_NAMES[layout]} layout")
    block = (int(blocksize), int(blocksize)) if np.ndim(blocksize) == 0 else tuple(int(b) for b in blocksize)
    if len(block) != 2 or min(block) < 1:
        raise RuntimeError(f"{fname}: blocksize needs to be a tuple of two positive integers, got {blocksize}")
    if size[0] % block[0] or size[1] % block[1]:
        raise RuntimeError(f"dense_to_sparse_{_SHORT[layout]}: tensor sparse size ({size[0]},{size[1]}) must be "
                           f"divisible by given blocksize ({block[0]},{block[1]})")
    return block


# --------------------------------------------------------------------------- dense / COO -> compressed
def to_compressed(input, layout, blocksize=None):
    """``input`` (a dense matrix or a sparse COO one) in a compressed layout: the non-zero entries (blocks with a
    non-zero) of a dense matrix, the entries of a COO one (coalesced first)."""
    name = "to_sparse_" + _SHORT.get(layout, "?")
    if _is_compressed(input):
        return input._convert(layout, blocksize)
    if isinstance(input, SparseTensor):
        if input.sparse_dim() != 2 or input.dense_dim() != 0:
            raise RuntimeError(f"coo_to_sparse_{_SHORT.get(layout, '?')}: conversion from Sparse to "
                               f"{_NAMES.get(layout, '?')} for input tensors with sparse_dim()!=2 is not supported")
        if layout in _BLOCKED:
            return to_compressed(input.to_dense(), layout, blocksize)
        c = input.coalesce()
        rows, cols = c._idx
        order = np.arange(len(rows)) if _ROW[layout] else np.lexsort((rows, cols))
        values = c._vals if _ROW[layout] else IndexSelect.apply(c._vals, 0, order)
        return _assemble(layout, rows[order], cols[order], values, c.shape, (1, 1), None,
                         f"ToSparse{_NAMES[layout][6:]}Backward0")
    if input.ndim != 2:
        raise RuntimeError(f"{name}: minigrad supports 2-D (unbatched) compressed sparse tensors only, got a "
                           f"{input.ndim}-D tensor")
    block = _blocksize(layout, blocksize, input.shape, name)
    data = input._data
    (r, c), (bh, bw) = data.shape, block
    occupied = (data.reshape(r // bh, bh, c // bw, bw) != 0).any(axis=(1, 3))      # (R/bh, C/bw)
    if _ROW[layout]:
        rows, cols = np.nonzero(occupied)
    else:
        cols, rows = np.nonzero(occupied.T)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    values = _gather(input, layout, block, rows, cols)
    return _assemble(layout, rows, cols, values, input.shape, block, input, f"ToSparse{_NAMES[layout][6:]}Backward0")


def to_sparse_csr(input, dense_dim=None):
    """``Tensor.to_sparse_csr()``: the matrix in CSR layout."""
    return to_compressed(input, layouts.sparse_csr)


def to_sparse_csc(input, dense_dim=None):
    """``Tensor.to_sparse_csc()``: the matrix in CSC layout."""
    return to_compressed(input, layouts.sparse_csc)


def to_sparse_bsr(input, blocksize, dense_dim=None):
    """``Tensor.to_sparse_bsr(blocksize)``: the matrix in BSR layout, blocks of ``blocksize`` (int or pair)."""
    return to_compressed(input, layouts.sparse_bsr, blocksize)


def to_sparse_bsc(input, blocksize, dense_dim=None):
    """``Tensor.to_sparse_bsc(blocksize)``: the matrix in BSC layout, blocks of ``blocksize`` (int or pair)."""
    return to_compressed(input, layouts.sparse_bsc, blocksize)


# --------------------------------------------------------------------------- construction
def _as_index(indices, what):
    array = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if array.dtype.kind not in "iu":
        raise RuntimeError(f"{what} must be an int32 or int64 tensor, got {array.dtype}")
    if array.ndim != 1:
        raise NotImplementedError(f"{what}: minigrad supports 2-D (unbatched) compressed sparse tensors only: "
                                  f"expected a 1-D index tensor, got {array.ndim}-D")
    return array


def _check(layout, cidx, pidx, nnz, size, block, check_invariants):
    """PyTorch's invariant checks (its messages); the structural ones always, sortedness only when asked."""
    row = _ROW[layout]
    cname, pname = ("crow_indices", "col_indices") if row else ("ccol_indices", "row_indices")
    n_groups = size[0] // block[0] if row else size[1] // block[1]
    n_plain = size[1] // block[1] if row else size[0] // block[0]
    group, plain = ("rows", "ncols") if row else ("columns", "nrows")
    for d in (0, 1):
        if size[d] % block[d]:
            raise RuntimeError(f"tensor shape[{d}] (={size[d]}) must be divisible with blocksize[{d}] "
                               f"(={block[d]}) as defined by values shape")
    if len(cidx) != n_groups + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {group} + 1 (={n_groups + 1}), "
                           f"but got {len(cidx)}")
    if len(pidx) != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], "
                           f"but got {len(pidx)}")
    if cidx[0] != 0:
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if cidx[-1] != nnz:
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    steps = np.diff(cidx)
    if len(steps) and (steps.min() < 0 or steps.max() > n_plain):
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {plain}` is not satisfied.")
    if nnz and (pidx.min() < 0 or pidx.max() >= n_plain):
        raise RuntimeError(f"`0 <= {pname} < {plain}` is not satisfied.")
    if check_invariants and nnz:
        same_group = np.repeat(np.arange(n_groups), steps)
        later = (same_group[1:] == same_group[:-1])
        if np.any(later & (np.diff(pidx) <= 0)):
            raise RuntimeError(f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., "
                               f"{'nrows' if row else 'ncols'} are sorted and distinct along the last dimension "
                               "values` is not satisfied.")


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """A compressed sparse matrix of ``layout`` from its index arrays and ``values`` (module docstring). Shares
    ``values``' memory; when ``values`` requires grad the result is a non-leaf whose gradients reach it;
    ``requires_grad=True`` makes a leaf. ``size`` defaults to the smallest that holds the indices."""
    from ..creation import tensor
    from ..device import check_device
    check_device(device)
    if layout not in _ROW:
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got "
                           f"{'none' if layout is None else layout}")
    cidx = _as_index(compressed_indices, "compressed_indices")
    pidx = _as_index(plain_indices, "plain_indices")
    index_dtype = np.int32 if cidx.dtype == np.int32 and pidx.dtype == np.int32 else np.int64
    cidx, pidx = cidx.astype(np.int64), pidx.astype(np.int64)
    if isinstance(values, (SparseTensor, CompressedTensor)):
        raise TypeError("sparse_compressed_tensor(): values must be a dense tensor")
    vals = values if isinstance(values, Tensor) else tensor(values, dtype=dtype)
    if dtype is not None and vals.dtype != np.dtype(dtype):
        vals = vals.to(dtype)
    blocked = layout in _BLOCKED
    if vals.ndim != (3 if blocked else 1):
        raise NotImplementedError(f"sparse_compressed_tensor: minigrad supports {'(nnz, bh, bw)' if blocked else '1-D'}"
                                  f" values for {_NAMES[layout]} (no batch or dense dims), got values of shape "
                                  f"{list(vals.shape)}")
    block = tuple(vals.shape[1:]) if blocked else (1, 1)
    if size is None:
        n_groups = len(cidx) - 1
        n_plain = int(pidx.max()) + 1 if len(pidx) else 0
        grid = (n_groups, n_plain) if _ROW[layout] else (n_plain, n_groups)
        size = (grid[0] * block[0], grid[1] * block[1])
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError(f"sparse_compressed_tensor: minigrad supports 2-D compressed sparse tensors only, "
                                  f"got size {size}")
    _check(layout, cidx, pidx, vals.shape[0], size, block, check_invariants)
    out = CompressedTensor(layout, cidx, pidx, vals, size, block, index_dtype=index_dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _constructor(layout):
    cname, pname = ("crow_indices", "col_indices") if _ROW[layout] else ("ccol_indices", "row_indices")

    def construct(compressed, plain, values, size=None, *, dtype=None, device=None, pin_memory=False,
                  requires_grad=False, check_invariants=None):
        return sparse_compressed_tensor(compressed, plain, values, size, dtype=dtype, layout=layout, device=device,
                                        requires_grad=requires_grad, check_invariants=check_invariants)
    construct.__name__ = f"sparse_{_SHORT[layout]}_tensor"
    construct.__doc__ = (f"A {_NAMES[layout][6:].upper()} matrix from ``{cname}``, ``{pname}`` and ``values`` "
                         "(``sparse_compressed_tensor`` with this layout).")
    return construct


sparse_csr_tensor = _constructor(layouts.sparse_csr)
sparse_csc_tensor = _constructor(layouts.sparse_csc)
sparse_bsr_tensor = _constructor(layouts.sparse_bsr)
sparse_bsc_tensor = _constructor(layouts.sparse_bsc)


# --------------------------------------------------------------------------- products
class CompressedDenseMM(Function):
    """Y = S D for S given by its scalar entries (``values`` at ``rows``, ``cols``; ``n_rows`` rows) and a dense D.
    dvalues_k = <dY[r_k], D[c_k]>; dD = S^T dY; and, when S was made from a dense ``source``, dsource = dY D^T
    (the full gradient of the matrix, as PyTorch hands the dense tensor a CSR matrix was made from).
    ``refused`` maps an input's position to the error PyTorch raises when asked for that gradient."""

    @staticmethod
    def forward(ctx, values, dense, source, rows, cols, n_rows, refused):
        ctx.rows, ctx.cols, ctx.refused = rows, cols, refused
        ctx.save_for_backward(values, dense)
        return sparse_dense_product(values._data, rows, cols, n_rows, dense._data)

    @staticmethod
    def backward(ctx, dout):
        for position, message in ctx.refused.items():
            if ctx.needs_input_grad[position]:
                raise RuntimeError(message)
        values, dense = ctx.saved_tensors
        dy = dout._data
        dvalues = _entry_grad(dy, dense._data, ctx.rows, ctx.cols) if ctx.needs_input_grad[0] else None
        ddense = (sparse_dense_product(values._data, ctx.cols, ctx.rows, dense.shape[0], dy)
                  if ctx.needs_input_grad[1] else None)
        dsource = dy @ dense._data.T if ctx.needs_input_grad[2] else None
        return dvalues, ddense, dsource, None, None, None, None


def _unsupported(left_sparse, layout):
    """PyTorch's error for a product it has no CPU kernel for (S @ D with S BSC, D @ S with S BSR)."""
    operands = f"{_NAMES[layout]} @ Strided" if left_sparse else f"Strided @ {_NAMES[layout]}"
    return f"addmm: computation on CPU is not implemented for Strided + {operands}"


def _product(sparse, dense, transposed, sparse_api, vector=False):
    """S @ D (``transposed`` False) or S^T @ D, D 2-D: on the coordinates of every stored scalar (each element of
    a block for BSR/BSC). The product PyTorch computes is by the left operand's layout ``left`` (S's, or its
    transpose's); the gradients it refuses are refused here too (``CompressedDenseMM``'s ``refused``)."""
    rows, cols = sparse._element_coords()
    n_rows, source, layout = sparse.shape[0], sparse._source, sparse._layout
    left = _TRANSPOSED[layout] if transposed else layout
    if transposed:
        rows, cols, n_rows = cols, rows, sparse.shape[1]
        source = None if source is None else source.t()
    refused = {}                  # (in the order PyTorch meets them)
    if sparse_api and left is not layouts.sparse_csr:       # torch.sparse.mm/addmm: a CSR mat1's gradient only
        message = (f"sparse_addmm_sparse_backward: unsupported combination of layouts, grad: Strided, mat1: "
                   f"{_NAMES[left]}, mat2: Strided")
        refused[0] = refused[2] = message
    if left in _BLOCKED:          # dD needs left^T @ dY, which PyTorch has for no blocked left^T
        refused[1] = (f"torch.addmv: operation not supported for mat with {_NAMES[_TRANSPOSED[left]]} layout"
                      if vector and not transposed else _unsupported(True, layouts.sparse_bsc) if not transposed
                      else _unsupported(False, layouts.sparse_bsr))
    values = (sparse._vals.detach() if source is not None else sparse._vals).reshape(-1)
    return CompressedDenseMM.apply(values, dense, source, rows, cols, n_rows, refused)


_TRANSPOSED = {layouts.sparse_csr: layouts.sparse_csc, layouts.sparse_csc: layouts.sparse_csr,
               layouts.sparse_bsr: layouts.sparse_bsc, layouts.sparse_bsc: layouts.sparse_bsr}


def _check_product(sparse, dense, left, sparse_api):
    if _is_compressed(dense) or isinstance(dense, SparseTensor):
        raise NotImplementedError("sparse @ sparse: minigrad multiplies a compressed sparse matrix by a dense one "
                                  "only; convert one with to_dense()")
    if not isinstance(dense, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(dense).__name__}")
    if sparse_api and dense.ndim == 1:
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    if dense.ndim not in (1, 2):
        raise NotImplementedError(f"matmul: minigrad multiplies a compressed sparse matrix by a dense matrix or "
                                  f"vector only, got a {dense.ndim}-D tensor")
    if left and sparse._layout is layouts.sparse_bsc or not left and sparse._layout is layouts.sparse_bsr:
        raise RuntimeError(_unsupported(left, sparse._layout))
    if sparse._block[0] != sparse._block[1]:      # PyTorch's CPU kernel (MKL) takes square blocks only
        raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks.")
    a, b = (sparse, dense) if left else (dense, sparse)
    a_shape = "x".join(str(n) for n in a.shape)
    b_shape = "x".join(str(n) for n in b.shape)
    if left and b.ndim == 1 and a.shape[1] != b.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a_shape}), vec ({b.shape[0]})")
    if a.shape[-1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a_shape} and {b_shape})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(a.dtype)} but found {scalar_type_name(b.dtype)}")


def matmul(input, other, sparse_api=False):
    """``mm``/``matmul``/``mv``/``@`` with a compressed operand: S @ D, or D @ S = (S^T D^T)^T. ``sparse_api``:
    called as ``torch.sparse.mm``/``addmm``, which take matrices only and refuse some gradients (``_product``)."""
    if _is_compressed(input):
        _check_product(input, other, True, sparse_api)
        if other.ndim == 1:
            return _product(input, other.unsqueeze(1), False, sparse_api, vector=True).squeeze(1)
        return _product(input, other, False, sparse_api)
    _check_product(other, input, False, sparse_api)
    if input.ndim == 1:
        return _product(other, input.unsqueeze(1), True, sparse_api, vector=True).squeeze(1)
    return _product(other, input.t(), True, sparse_api).t()


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) with a compressed operand; ``input`` dense."""
    if _is_compressed(input):
        raise RuntimeError(f"addmm: computation on CPU is not implemented for {_NAMES[input._layout]} + Strided @ "
                           "Strided")
    return input * beta + matmul(mat1, mat2) * alpha


# --------------------------------------------------------------------------- dense tensors' methods
def _strided_only(name, row):
    kind = "row" if row else "column"

    def refuse(input, *args, **kwargs):
        got = "Sparse" if isinstance(input, SparseTensor) else "Strided"
        raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {got}")
    refuse.__name__ = name
    return refuse


DENSE_METHODS = {
    "to_sparse_csr": to_sparse_csr, "to_sparse_csc": to_sparse_csc, "to_sparse_bsr": to_sparse_bsr,
    "to_sparse_bsc": to_sparse_bsc,
    "crow_indices": _strided_only("crow_indices", True), "col_indices": _strided_only("col_indices", True),
    "ccol_indices": _strided_only("ccol_indices", False), "row_indices": _strided_only("row_indices", False),
}
"""Methods of dense (and COO) tensors (tensor.py binds them on Tensor; coo.py's SparseTensor inherits them)."""


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """``torch.sparse.sampled_addmm``: beta * input + alpha * (mat1 @ mat2) at the entries of the CSR matrix
    ``input`` only (a CSR matrix of ``input``'s pattern). Each entry's product is the dot product of a row of
    ``mat1`` and a column of ``mat2``, written with differentiable ops, so gradients reach all three."""
    if out is not None:
        raise NotImplementedError("sparse.sampled_addmm(out=...) is not supported by minigrad")
    if not _is_compressed(input) or input._layout is not layouts.sparse_csr:
        got = "Strided" if not isinstance(input, (SparseTensor, CompressedTensor)) else (
            "Sparse" if isinstance(input, SparseTensor) else _NAMES[input._layout])
        raise RuntimeError(f"sampled_addmm: Expected self to be a sparse CSR tensor, but got {got}")
    for name, mat in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(mat, Tensor) or _is_compressed(mat) or isinstance(mat, SparseTensor) or mat.ndim != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a dense 2-D tensor")
    if mat1.shape[1] != mat2.shape[0] or (mat1.shape[0], mat2.shape[1]) != input.shape:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[0]}x{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]}) into "
                           f"self of size ({input.shape[0]}x{input.shape[1]})")
    rows, cols = input._coords()
    products = (IndexSelect.apply(mat1, 0, rows) * IndexSelect.apply(mat2.t(), 0, cols)).sum(-1)
    values = input._vals * beta + products * alpha
    return CompressedTensor(layouts.sparse_csr, input._cidx, input._pidx, values, input.shape, (1, 1), None,
                            "SparseSampledAddmmBackward0", input._index_dtype)
