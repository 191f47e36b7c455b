"""Reused memory for the large arrays the numba kernels return (y, dx): ``empty(shape, dtype)``.

A fresh NumPy array of megabytes is new memory from the operating system: the first write to each
page faults, and the OS zeroes the page before handing it over. Writing a fresh 32 MB output
therefore costs about one more pass over memory than writing into memory already in use
(RMSNorm 8192x1024 float32, a parallel copy standing in for the layer on 2 cores: 3.9 ms
into fresh memory, 2.2 ms into reused memory). A training loop frees the same large arrays every
step (the last step's activations and gradients) and asks for arrays of the same sizes again, so
the kernels take their outputs from here: blocks freed by earlier steps are handed out again.

A gradient from here (dx) may become a leaf's ``.grad`` as it is: the engine adopts an array nobody else
refers to (``autograd/engine.py``, ``unshared``) and does not count the pool's own reference to a block
(``lends``); once the user drops that ``.grad`` (``zero_grad``), the block is free for the next step's dx.

When is a block free? Every array handed out is a view of a pool block, and every further view of
it (a reshape, a slice, the Tensor holding it) refers to that same block as its ``.base``, so the
block's reference count counts its users: at the pool's own references alone, nobody can reach its
memory any more and it is handed out again. Arrays below ``MIN_BYTES`` come from ``np.empty`` (the
C allocator reuses small blocks by itself); the pool holds at most ``MAX_BYTES`` (used and free
blocks together; beyond it, plain ``np.empty``), and ``release()`` returns its free blocks to the OS.
"""
import math
import sys
import threading

import numpy as np

from ..autograd import version

MIN_BYTES = 1 << 20      # 1 MiB
MAX_BYTES = 1 << 30      # 1 GiB

_blocks = {}             # nbytes -> [block]: 1-D uint8 arrays owning their memory
_block_ids = set()       # id() of every block in _blocks
_held = 0                # bytes in _blocks
_lock = threading.Lock()


def _is_free(blocks, i):
    """Whether nothing but the pool refers to blocks[i] (the list entry and getrefcount's own argument)."""
    return sys.getrefcount(blocks[i]) == 2


def empty(shape, dtype):
    """An uninitialized C-contiguous array of ``shape`` and ``dtype``, like ``np.empty``, from a reused
    block when one of the same size is free."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    global _held
    with _lock:
        blocks = _blocks.setdefault(nbytes, [])
        for i in range(len(blocks)):
            if _is_free(blocks, i):
                version._versions.pop(id(blocks[i]), None)   # new storage to the user: its version starts at 0
                return blocks[i].view(dtype).reshape(shape)
        if _held + nbytes > MAX_BYTES:
            _release_locked(keep=nbytes)
        if _held + nbytes > MAX_BYTES:
            return np.empty(shape, dtype)
        block = np.empty(nbytes, np.uint8)
        blocks.append(block)
        _block_ids.add(id(block))
        _held += nbytes
        return block.view(dtype).reshape(shape)


def _release_locked(keep=None):
    """Drop the free blocks (of every size but ``keep``); the caller holds the lock."""
    global _held
    for nbytes, blocks in list(_blocks.items()):
        if nbytes == keep:
            continue
        for i in reversed(range(len(blocks))):
            if _is_free(blocks, i):
                _block_ids.discard(id(blocks[i]))
                del blocks[i]
                _held -= nbytes
        if not blocks:
            del _blocks[nbytes]


def release():
    """Return every free block to the operating system (blocks in use stay until their arrays die)."""
    with _lock:
        _release_locked()


def lends(array):
    """1 if ``array`` is a block of the pool (which then holds one reference to it), else 0."""
    return 1 if id(array) in _block_ids else 0


def held_bytes():
    """Bytes of memory the pool holds, in use or free."""
    return _held
