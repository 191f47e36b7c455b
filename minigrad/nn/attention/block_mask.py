"""Masks for ``flex_attention``: mask_mod functions, the dense masks they describe, and ``BlockMask``, the
block-sparse form of a mask that PyTorch's kernels use to skip whole tiles of the scores.

A *mask_mod* says whether query ``q_idx`` of batch ``b`` and head ``h`` may attend to key ``kv_idx``:

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

PyTorch calls it on 0-d index tensors under four nested ``vmap``\\s; minigrad calls it once on index tensors
shaped to broadcast against the (B, H, Q_LEN, KV_LEN) mask: ``b`` (B, 1, 1, 1), ``h`` (1, H, 1, 1), ``q_idx``
(1, 1, Q_LEN, 1), ``kv_idx`` (1, 1, 1, KV_LEN), int64 as in PyTorch's eager path. Elementwise code, comparisons,
``torch.where`` and indexing a captured tensor with all its indices at once (``doc[q_idx] == doc[kv_idx]``,
``bias[h, q_idx]``) give the same mask either way.

A ``BlockMask`` cuts the mask into tiles of BLOCK_SIZE = (Q_BLOCK, KV_BLOCK) and keeps, for each row of tiles,
the tiles to compute:

    kv_num_blocks[b, h, i]        how many *partial* tiles row i has (mask_mod is applied inside them)
    kv_indices[b, h, i, :n]       their column numbers (the rest of the row lists the other columns)
    full_kv_num_blocks / _indices the same for *full* tiles (every element kept: mask_mod is not consulted)
    q_num_blocks / q_indices ...  the same tables transposed (per column of tiles), for a backward kernel

Tiles in neither list are skipped: every element in them is masked. ``create_block_mask`` builds these tables
from a mask_mod as PyTorch does (same tables, same order), ``BlockMask.from_kv_blocks`` from tables given.
"""
import functools
import inspect
import itertools
import operator
import warnings

import numpy as np

from ...creation import arange, zeros
from ...device import check_device
from ...dtypes import scalar_type_name
from ...tensor import Tensor

__all__ = ["BlockMask", "create_block_mask", "create_mask", "and_masks", "or_masks", "noop_mask"]

_BOOL = np.dtype(np.bool_)
_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30      # the block size of the mask used when none is given: one tile, all kept


def noop_mask(batch, head, token_q, token_kv):
    """The mask_mod that keeps everything."""
    return batch.new_ones(size=(), dtype=_BOOL)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    """The mask_mod of a sliced BlockMask: using it is an error (slicing drops the batch/head the mask_mod saw)."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the mask_mod attribute is "
        "reset. You must set it from the original BlockMask's mask_mod.\n\nIncorrect usage:\n  base_mask = "
        "create_block_mask(my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = "
        "apply_offset(sliced_mask.mask_mod, offset)  # WRONG!\n\nCorrect usage:\n  base_mask = create_block_mask("
        "my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = apply_offset("
        "base_mask.mask_mod, offset)  # Use base_mask!")


def _combined(mask_mods, name, identity, combine):
    """The mask_mod ``combine``-ing the results of ``mask_mods``, starting from ``identity`` (a bool)."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_BOOL) if identity else b.new_zeros((), dtype=_BOOL)
        for mask_mod in mask_mods:
            result = combine(result, mask_mod(b, h, q_idx, kv_idx))
        return result
    combined.__name__ = combined.__qualname__ = name
    return combined


def or_masks(*mask_mods):
    """The mask_mod keeping what any of ``mask_mods`` keeps."""
    return _combined(mask_mods, "or_mask", False, operator.or_)


def and_masks(*mask_mods):
    """The mask_mod keeping what all of ``mask_mods`` keep."""
    return _combined(mask_mods, "and_mask", True, operator.and_)


# --------------------------------------------------------------------------- calling a score_mod or mask_mod
def positional_count(fn):
    """How many positional arguments without a default ``fn`` takes (5: a score_mod, 4: a mask_mod), counted as
    PyTorch counts them; its AssertionError for any other number."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        count = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        count = sum(1 for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty)
    if count not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {count}")
    return count


def index_tensors(shape, device=None):
    """b, h, q_idx, kv_idx for a (B, H, Q, KV) grid: int64 aranges, each along its own axis of four."""
    out = []
    for axis, size in enumerate(shape):
        view = [1, 1, 1, 1]
        view[axis] = size
        out.append(arange(size, device=device).reshape(view))
    return out


_HOW_CALLED = ("minigrad calls {what} once on index tensors that broadcast against each other (b {B}x1x1x1, "
               "h 1x{H}x1x1, q_idx 1x1x{L}x1, kv_idx 1x1x1x{S}) rather than on one element at a time: index a "
               "captured tensor with all its indices at once (bias[b, h]) rather than one after another (bias[b][h]), "
               "and use torch.where rather than Python's if on them")


def call_mod(fn, first, shape, what, device=None, expand=True):
    """``fn(*first, b, h, q_idx, kv_idx)`` over the (B, H, Q, KV) grid, as a Tensor of that shape (``expand``) or
    of four dimensions broadcasting to it. An error inside ``fn`` keeps its type and message, with a note on how
    minigrad calls it; a result of another shape is refused."""
    how = _HOW_CALLED.format(what=what, B=shape[0], H=shape[1], L=shape[2], S=shape[3])
    try:
        value = fn(*first, *index_tensors(shape, device))
    except Exception as error:
        error.add_note(how)
        raise
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
    try:
        fits = np.broadcast_shapes(tuple(value.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{what} returned a tensor of shape {tuple(value.shape)}, which does not broadcast to the "
                           f"scores' shape {shape}. {how}.")
    if not expand:
        return value.reshape((1,) * (4 - value.ndim) + tuple(value.shape))
    return value if tuple(value.shape) == shape else value.expand(shape)


def mask_values(mask_mod, shape, device=None):
    """mask_mod over the (B, H, Q, KV) grid: a bool ndarray of four dimensions broadcasting to that shape (a
    causal mask stays (1, 1, Q, KV))."""
    kept = call_mod(mask_mod, (), shape, "mask_mod", device, expand=False)
    if kept.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{scalar_type_name(kept.dtype)}")
    return kept.detach().numpy()


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) bool mask of a mask_mod, or of a score_mod (kept where its score of a
    zero score is not -inf). B and H of None mean 1."""
    device = "cpu" if device is None else device
    check_device(device)
    shape = (1 if B is None else B, 1 if H is None else H, Q_LEN, KV_LEN)
    if positional_count(mod_fn) == 5:
        score = call_mod(mod_fn, (zeros(shape),), shape, "score_mod", device)
        return Tensor(~np.isneginf(score.detach().numpy()))
    return Tensor(np.broadcast_to(mask_values(mod_fn, shape, device), shape).copy())


# --------------------------------------------------------------------------- the block tables (ndarrays)
def _ordered_to_dense(num_blocks, indices, num_cols):
    """(..., rows, num_cols) int32: 1 at the first num_blocks[..., r] columns listed in indices[..., r, :]."""
    valid = np.arange(indices.shape[-1]) < num_blocks[..., None]                  # (..., rows, entries)
    cols = np.where(valid, indices, num_cols)                                      # num_cols: a spare column
    dense = np.zeros(indices.shape[:-1] + (num_cols + 1,), np.int32)
    np.put_along_axis(dense, cols.astype(np.intp), 1, axis=-1)
    return dense[..., :num_cols]


def _dense_to_ordered(dense):
    """num_blocks (..., rows) and indices (..., rows, cols), int32: the kept columns of each row first, ascending,
    then the others, ascending (PyTorch's stable descending argsort)."""
    dense = dense.astype(np.int32)
    return dense.sum(-1, dtype=np.int32), np.argsort(-dense, axis=-1, kind="stable").astype(np.int32)


def _transpose_ordered(num_blocks, indices):
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(np.swapaxes(dense, -2, -1))


def _adjust_tables(num_blocks, indices, rows, cols):
    """The tables cropped to the first ``rows`` x ``cols`` tiles (``BlockMask._adjust``)."""
    indices = indices[:, :, :rows, :cols]
    num_blocks = np.minimum(num_blocks[:, :, :rows], cols)
    return np.sum(indices < num_blocks[..., None], axis=-1, dtype=np.int32), indices


def _block_sums(mask, q_block, kv_block):
    """(B, H, Q/q_block, KV/kv_block): how many elements of each tile the (B, H, Q, KV) mask keeps, the mask padded
    with False to whole tiles."""
    B, H, Q, KV = mask.shape
    rows, cols = -(-Q // q_block), -(-KV // kv_block)
    padded = np.zeros((B, H, rows * q_block, cols * kv_block), bool)
    padded[:, :, :Q, :KV] = mask
    return padded.reshape(B, H, rows, q_block, cols, kv_block).sum(axis=(3, 5), dtype=np.int64)


def _array(t):
    return None if t is None else np.asarray(t.numpy() if isinstance(t, Tensor) else t)


def _tensor(a):
    return None if a is None else Tensor(np.ascontiguousarray(a, dtype=np.int32))


# --------------------------------------------------------------------------- BlockMask
class BlockMask:
    """A block-sparse attention mask: the tables of the module docstring, BLOCK_SIZE, the sequence lengths it
    was made for (``seq_lengths``) and the mask_mod applied inside partial tiles."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE), mask_mod=noop_mask, *,
                 dq_write_order=None, dq_write_order_full=None, dq_kv_order=None, dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        # metadata of PyTorch's deterministic GPU backward: kept, not used (the result does not depend on it)
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None, compute_q_blocks=True,
                       *, dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        """A BlockMask from its key/value tables; the query tables are derived from them (``compute_q_blocks``),
        ``seq_lengths`` defaults to the tables' size in elements, ``mask_mod`` to keeping everything."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_tables, full_q_tables = (None, None), (None, None)
        if compute_q_blocks:
            q_tables = _transpose_ordered(_array(kv_num_blocks), _array(kv_indices))
            if full_kv_num_blocks is not None:
                full_q_tables = _transpose_ordered(_array(full_kv_num_blocks), _array(full_kv_indices))
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                   *map(_tensor, q_tables), *map(_tensor, full_q_tables), BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=noop_mask if mask_mod is None else mask_mod, dq_write_order=dq_write_order,
                   dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten=True):
        """The fields in PyTorch's order (the form its kernels take)."""
        block_size = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        seq_lengths = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        return (*seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *block_size, self.mask_mod)

    @property
    def shape(self):
        """(batch dims..., Q_LEN, KV_LEN)."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def numel(self):
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self):
        """The percentage of tiles not computed."""
        computed = int(_array(self.kv_num_blocks).sum())
        if self.full_kv_num_blocks is not None:
            computed += int(_array(self.full_kv_num_blocks).sum())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def _dense_tiles(self):
        """(partial, full) as bool ndarrays (..., rows, cols) of tiles; full is None when not kept separately."""
        cols = self.kv_indices.shape[-1]
        partial = _ordered_to_dense(_array(self.kv_num_blocks), _array(self.kv_indices), cols).astype(bool)
        if self.full_kv_num_blocks is None:
            return partial, None
        full = _ordered_to_dense(_array(self.full_kv_num_blocks), _array(self.full_kv_indices),
                                 self.full_kv_indices.shape[-1])
        return partial, full.astype(bool)

    def to_dense(self):
        """The tiles computed (partial or full) as an int32 tensor (..., rows, cols) of 0 and 1."""
        partial, full = self._dense_tiles()
        return _tensor(partial if full is None else partial | full)

    def to_string(self, grid_size=(20, 20), limit=4):
        """A picture of the tiles: '█' all computed, '░' some, ' ' none, at most ``grid_size`` characters (each
        drawn twice across) per batch/head, for at most ``limit`` of them."""
        dense = _array(self.to_dense())
        *batch_dims, num_rows, num_cols = dense.shape
        max_rows, max_cols = (grid_size, grid_size) if isinstance(grid_size, int) else grid_size
        row_step, col_step = max(1, -(-num_rows // max_rows)), max(1, -(-num_cols // max_cols))
        pictures = []
        for count, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if count == limit:
                pictures += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                             "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            tiles = dense[batch_idx]
            lines = [f"{batch_idx}\n"]
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    share = tiles[r:r + row_step, c:c + col_step].astype(np.float32).mean()
                    lines.append(2 * ("█" if share == 1 else " " if share == 0 else "░"))
                lines.append("\n")
            pictures.append("".join(lines))
        return "\n".join(pictures)

    def __str__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"

    def __repr__(self):
        def shape_of(t):
            return None if t is None else t.shape
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(\n    kv_num_blocks={self.kv_num_blocks.shape},\n    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_of(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_of(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_of(self.q_num_blocks)},\n    q_indices={shape_of(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_of(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_of(self.full_q_indices)},\n    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)")

    def __getitem__(self, index):
        """The BlockMask of the batches/heads/rows of tiles ``index`` selects (an int keeps its dimension); its
        mask_mod cannot be used (it saw the original batch and head numbers)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Slicing BlockMask with tensor dq_kv_order is not supported yet. Construct a "
                                      "new BlockMask with matching precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1)) if isinstance(i, int) else i
                      for i, n in zip(padded, self.kv_num_blocks.shape[:3]))
        full = ((None, None) if self.full_kv_num_blocks is None
                else (self.full_kv_num_blocks[index], self.full_kv_indices[index]))
        return BlockMask.from_kv_blocks(self.kv_num_blocks[index], self.kv_indices[index], *full,
                                        BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
                                        seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len, new_kv_len):
        """The mask cropped to its top-left new_q_len x new_kv_len corner (right for masks that do not depend on
        the lengths, such as causal)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Adjusting BlockMask with tensor dq_kv_order is not supported yet. Construct a "
                                      "new BlockMask with matching precomputed dq_write_order metadata.")
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        tables = _adjust_tables(_array(self.kv_num_blocks), _array(self.kv_indices), rows, cols)
        full = (None, None)
        if self.full_kv_num_blocks is not None:
            full = _adjust_tables(_array(self.full_kv_num_blocks), _array(self.full_kv_indices), rows, cols)
        return self.from_kv_blocks(*map(_tensor, tables), *map(_tensor, full), BLOCK_SIZE=self.BLOCK_SIZE,
                                   mask_mod=self.mask_mod, seq_lengths=(new_q_len, new_kv_len),
                                   compute_q_blocks=self.q_indices is not None)

    def to(self, device):
        """The same mask (minigrad's tensors live on the CPU; other devices raise as tensors' ``to`` does)."""
        check_device(device)
        return self

    # ----------------------------------------------------------------------- what flex_attention reads
    def allowed(self, mask_shape, device=None):
        """The bool ndarray of the elements attention keeps, broadcasting to ``mask_shape`` (B, H, L, S): those of
        partial tiles that the mask_mod keeps, and those of full tiles. The tables' batch and head dimensions are 1
        or B and H."""
        B, H, L, S = mask_shape
        q_block, kv_block = self.BLOCK_SIZE
        partial, full = self._dense_tiles()                               # (Bm, Hm, rows, cols) each
        while partial.ndim < 4:
            partial = partial[None]
            full = None if full is None else full[None]
        for have, want, what in zip(partial.shape[:2], (B, H), ("batch size", "number of query heads")):
            if have not in (1, want):
                raise ValueError(f"block_mask has {what} {have}, which is neither 1 nor the query's {want}")
        kept = _tiles_to_elements(partial, q_block, kv_block, L, S)     # (Bm, Hm, L, S)
        mask = None if self.mask_mod is noop_mask else mask_values(self.mask_mod, mask_shape, device)
        if mask is not None:
            kept = kept & mask
        if full is not None:
            kept = kept | _tiles_to_elements(full, q_block, kv_block, L, S)
        if mask is not None and partial.shape[:2] != (B, H) and (
                np.broadcast_shapes(mask.shape, kept.shape) != kept.shape
                or not np.array_equal(kept, np.broadcast_to(mask, kept.shape))):
            _warn_shared_tables(partial.shape[:2], (B, H))
        return kept


def _warn_shared_tables(have, want):
    """The block mask was made for fewer batches or heads than attend, and its mask_mod differs between them."""
    warnings.warn(
        f"flex_attention: the block_mask was made for batch size {have[0]} and {have[1]} head(s) (create_block_mask "
        f"with B or H None) and is shared by {want[0]} batches and {want[1]} heads, but its mask_mod keeps different "
        "elements in different batches or heads, so the tiles it computes are not those the mask_mod needs. minigrad "
        "follows the block mask, as PyTorch's compiled kernels do (PyTorch's uncompiled CPU path applies the mask_mod "
        "to every element instead): create the block mask with B and H.", UserWarning, stacklevel=4)


def _tiles_to_elements(tiles, q_block, kv_block, L, S):
    """(..., rows, cols) tiles -> (..., L, S) elements: each tile's value over its q_block x kv_block elements
    (elements beyond the tables are masked)."""
    rows, cols = min(tiles.shape[-2], -(-L // q_block)), min(tiles.shape[-1], -(-S // kv_block))
    out = np.zeros(tiles.shape[:-2] + (L, S), bool)
    grown = np.repeat(np.repeat(tiles[..., :rows, :cols], q_block, axis=-2), kv_block, axis=-1)
    out[..., :min(L, grown.shape[-2]), :min(S, grown.shape[-1])] = grown[..., :L, :S]
    return out


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    """The BlockMask of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B, H None: 1, shared by all): tiles the mask
    keeps entirely are *full* (``separate_full_blocks``, else partial), tiles it keeps in part *partial*, the
    others skipped. ``compute_dq_write_order`` (metadata of PyTorch's deterministic GPU backward) is accepted and
    leaves that metadata empty; the results do not depend on it."""
    if positional_count(mask_mod) != 4:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn("_compile flag on create_block_mask was originally added to work around a torch.compile "
                      "limitation. That limitation has since been addressed. So, to compile create_block_mask, we "
                      "suggest doing torch.compile(create_block_mask). This still works for now, but will be removed "
                      "in the future.", DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    mask = _array(create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device))            # (B, H, Q_LEN, KV_LEN)
    sums = _block_sums(mask, q_block, kv_block)                                    # (B, H, rows, cols)
    if separate_full_blocks:
        whole = q_block * kv_block
        partial, full = (sums > 0) & (sums < whole), sums == whole
    else:
        partial, full = sums > 0, None
    full_tables = (None, None) if full is None else map(_tensor, _dense_to_ordered(full))
    return BlockMask.from_kv_blocks(*map(_tensor, _dense_to_ordered(partial)), *full_tables,
                                    BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


def empty_block_mask():
    """The mask flex_attention uses when given none: one tile covering everything, kept."""
    return BlockMask.from_kv_blocks(Tensor(np.ones((1, 1, 1), np.int32)), Tensor(np.zeros((1, 1, 1, 1), np.int32)),
                                    BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))
