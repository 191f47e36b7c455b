"""Matrix products on numba's threads: ``np.matmul``'s result, computed by NumPy's own OpenBLAS one block per
thread (the numba twin of ``np.matmul``, which is the reference on the ``"numpy"`` backend).

Why: OpenBLAS's own thread pool and numba's compete for the same cores (kernels/__init__.py). Here the
product of a (m, k) by b (k, n) is cut into one block per numba thread, and each thread calls OpenBLAS's
gemm (``openblas.py``) on its block with OpenBLAS set to one thread, so only numba's pool runs:

    batch of g >= threads matrices:   one gemm per matrix, the matrices shared out among the threads
    k >= LONG_INNER * max(m, n):       the inner dimension cut in parts: out = sum_p a[:, K_p] @ b[K_p, :]
    n >= m:                             the columns cut: out[:, J_p] = a @ b[:, J_p]
    otherwise:                          the rows cut:    out[I_p, :] = a[I_p, :] @ b

Each block is computed exactly as OpenBLAS computes it alone, so the row and column cuts give np.matmul's
floats up to OpenBLAS's own blocking; the inner cut adds the parts' sums in another order (the results
then differ from np.matmul's in the last bits, and depend on the thread count). Products below
``MIN_WORK`` multiply-adds, other dtypes, broadcast batches, 1-D operands, empty ones and layouts
without a unit stride go to ``np.matmul``, as does everything when NumPy's BLAS is not an OpenBLAS this
module can reach. With one numba thread a product is one gemm call with OpenBLAS set to one thread:
``set_num_threads(1)`` makes minigrad's products single-threaded too.
"""
import threading

import numba
import numpy as np
from numba import njit, prange

from . import governor, openblas

MIN_WORK = 1 << 18
"""m*n*k (times the batch) below which np.matmul runs: one thread is as fast there (OpenBLAS's own threshold
for threading is of the same size)."""
LONG_INNER = 8
"""The inner dimension is cut when it is at least this many times the longer side of the output."""
SPLIT_ALIGN = 16
"""Cuts fall on multiples of this many elements (a 64-byte cache line of float32)."""
MAX_THREADS = 32
"""At most this many numba threads call OpenBLAS at once: its memory buffers for concurrent callers are
sized by its build's thread limit (64 in NumPy's wheels), which a many-core machine can exceed."""

_state = {}                     # "blas": the Blas, "run": {dtype: compiled runner}; empty until first use
_lock = threading.Lock()        # one product at a time sets OpenBLAS's thread count and restores it


def _runner(gemm, real):
    """A parallel loop calling ``gemm`` once per row of ``tasks`` (T, 11): (trans_a, trans_b, m, n, k, a, lda,
    b, ldb, c, ldc), addresses as integers; alpha 1, beta 0. Not cached: gemm's address is compiled in."""
    @njit(parallel=True)
    def run(tasks):
        for t in prange(tasks.shape[0]):
            gemm(openblas.ROW_MAJOR, tasks[t, 0], tasks[t, 1], tasks[t, 2], tasks[t, 3], tasks[t, 4], real(1.0),
                 tasks[t, 5], tasks[t, 6], tasks[t, 7], tasks[t, 8], real(0.0), tasks[t, 9], tasks[t, 10])
    return run


def _gemm_agrees(blas):
    """A small product through each gemm, no-transpose and transposed, equal to np.matmul's: a guard
    against a library whose symbols matched but whose calling convention does not."""
    rng = np.random.default_rng(0)
    for dtype, gemm in ((np.float32, blas.sgemm), (np.float64, blas.dgemm)):
        a, b = rng.standard_normal((3, 5)).astype(dtype), rng.standard_normal((4, 5)).astype(dtype)
        out = np.full((3, 4), np.nan, dtype)
        gemm(openblas.ROW_MAJOR, openblas.NO_TRANS, openblas.TRANS, 3, 4, 5, 1.0, a.ctypes.data, 5, b.ctypes.data,
             5, 0.0, out.ctypes.data, 4)
        if not np.allclose(out, a @ b.T, rtol=1e-5, atol=1e-6):
            return False
    return True


def available():
    """Whether the products can run here (OpenBLAS found and checked); compiles nothing."""
    if "blas" not in _state:
        blas = openblas.find()
        _state["blas"] = blas if blas is not None and _gemm_agrees(blas) else None
    return _state["blas"] is not None


def _run(dtype):
    runs = _state.setdefault("run", {})
    if dtype not in runs:
        blas = _state["blas"]
        runs[dtype] = (_runner(blas.sgemm, np.float32) if dtype == np.float32 else _runner(blas.dgemm, np.float64))
    return runs[dtype]


def _layout(shape, strides, itemsize):
    """(cblas transpose flag, leading dimension) of a matrix of ``shape`` and ``strides`` in bytes, stored
    row-major (NO_TRANS) or as a transposed view of a row-major matrix (TRANS); None without a unit stride.
    The stride of an axis of length 1 is never used, and NumPy may give it any value (0 when broadcast)."""
    (r, c), (s0, s1) = shape, strides
    s1 = itemsize if c == 1 else s1
    s0 = c * itemsize if r == 1 else s0
    if s1 == itemsize and s0 % itemsize == 0 and s0 >= c * itemsize:
        return openblas.NO_TRANS, s0 // itemsize
    if s0 == itemsize and s1 % itemsize == 0 and s1 >= r * itemsize:
        return openblas.TRANS, s1 // itemsize
    return None


def _batch_offsets(x):
    """Byte offsets (g,) of each matrix of x (*batch, r, c) from its first, in C order over the batch."""
    offsets = np.zeros(x.shape[:-2], dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(x.shape[:-2], x.strides[:-2])):
        offsets += (np.arange(size, dtype=np.int64) * stride).reshape((size,) + (1,) * (x.ndim - 3 - axis))
    return offsets.reshape(-1)


def _cuts(size, parts):
    """``parts`` + 1 cut points of range(size), inner ones on multiples of SPLIT_ALIGN (a part may be empty)."""
    return [0] + [min(size, -(-size * p // parts) // SPLIT_ALIGN * SPLIT_ALIGN) for p in range(1, parts)] + [size]


def _tasks(a, b, layouts, threads):
    """The cblas calls of a @ b (module docstring) as a (T, 11) int64 array, the output's address column (9)
    holding byte offsets into the output; and the output's shape: (g, m, n), or (g, parts, m, n) when the
    inner dimension is cut (the parts are summed afterwards). ``layouts``: a's and b's ``_layout``."""
    (m, k), n, it = a.shape[-2:], b.shape[-1], a.itemsize
    (ta, lda), (tb, ldb) = layouts
    a0, b0 = a.ctypes.data, b.ctypes.data
    offsets_a, offsets_b = _batch_offsets(a), _batch_offsets(b)     # (g,) each; g = 1 for matrices
    g = len(offsets_a)
    if g >= threads:                                   # whole matrices, shared out by prange
        tasks = np.empty((g, 11), dtype=np.int64)
        tasks[:] = (openblas.NO_TRANS, openblas.NO_TRANS, m, n, k, 0, lda, 0, ldb, 0, n)
        tasks[:, 0], tasks[:, 1] = ta, tb
        tasks[:, 5], tasks[:, 7], tasks[:, 9] = a0 + offsets_a, b0 + offsets_b, np.arange(g) * (m * n * it)
        return tasks, (g, m, n)
    # each matrix cut along k, n or m into one block per thread: a block's (rows, cols, inner) and where it
    # starts in a, b (steps in elements along the cut axis, per the layout) and in the output (elements)
    inner_cut = k >= LONG_INNER * max(m, n)
    axis = k if inner_cut else n if n >= m else m
    cut = _cuts(axis, threads)
    rows = []
    for i in range(g):
        pa, pb = a0 + int(offsets_a[i]), b0 + int(offsets_b[i])
        for p in range(threads):
            lo, size = cut[p], cut[p + 1] - cut[p]
            if size == 0:
                continue
            if inner_cut:
                block = (m, n, size, pa + lo * (1 if ta == openblas.NO_TRANS else lda) * it,
                         pb + lo * (ldb if tb == openblas.NO_TRANS else 1) * it, (i * threads + p) * m * n)
            elif axis == n:
                block = (m, size, k, pa, pb + lo * (1 if tb == openblas.NO_TRANS else ldb) * it, i * m * n + lo)
            else:
                block = (size, n, k, pa + lo * (lda if ta == openblas.NO_TRANS else 1) * it, pb, i * m * n + lo * n)
            rows_, cols, inner, a_at, b_at, out_at = block
            rows.append((ta, tb, rows_, cols, inner, a_at, lda, b_at, ldb, out_at * it, n))
    return np.array(rows, dtype=np.int64), ((g, threads, m, n) if inner_cut else (g, m, n))


def _layouts(a, b, min_work):
    """a's and b's ``_layout`` when ``matmul`` computes a @ b on numba's threads, else None."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim >= 2 and a.ndim == b.ndim
            and a.dtype == b.dtype and a.dtype in (np.float32, np.float64) and a.shape[:-2] == b.shape[:-2]
            and a.shape[-1] == b.shape[-2] and a.size and b.size):
        return None
    if a.size // a.shape[-1] * b.shape[-1] * a.shape[-1] < min_work:
        return None
    it = a.itemsize
    layouts = _layout(a.shape[-2:], a.strides[-2:], it), _layout(b.shape[-2:], b.strides[-2:], it)
    return layouts if None not in layouts and available() else None


def usable(a, b, min_work=MIN_WORK):
    """Whether ``matmul`` computes a @ b on numba's threads rather than handing it to np.matmul."""
    return _layouts(a, b, min_work) is not None


def matmul(a, b, min_work=MIN_WORK):
    """np.matmul(a, b); on numba's threads when ``usable`` (module docstring)."""
    layouts = _layouts(a, b, min_work)
    if layouts is None:
        return np.matmul(a, b)
    threads = numba.get_num_threads()
    parts = min(threads, MAX_THREADS)
    tasks, out_shape = _tasks(a, b, layouts, parts)       # the blocks (and so the result) depend on parts only
    team = governor.team(parts)                           # how many threads run them: fewer on a busy machine
    out = (np.zeros if len(out_shape) == 4 else np.empty)(out_shape, dtype=a.dtype)   # zeros: a part may be empty
    tasks[:, 9] += out.ctypes.data
    _execute(tasks, a.dtype, team, threads)
    if len(out_shape) == 4:
        out = out.sum(axis=1)                # the inner dimension's parts
    return out.reshape(a.shape[:-1] + b.shape[-1:])


def _execute(tasks, dtype, team, threads):
    """Run the gemm calls of ``tasks`` on ``team`` numba threads (of the caller's ``threads``), OpenBLAS on one."""
    blas, run = _state["blas"], _run(dtype)
    with _lock:
        blas_threads = blas.get_threads()
        blas.set_threads(1)
        if team < threads:
            numba.set_num_threads(team)
        try:
            run(tasks)                       # writes the output through the addresses in tasks
        finally:
            if team < threads:
                numba.set_num_threads(threads)
            blas.set_threads(blas_threads)


def planned(a, b, out, team=None, min_work=MIN_WORK):
    """``matmul`` for a series of products a[i] @ b -> ``out`` with one ``b``, ``a`` a stack (K, m, k) of the
    left operands and ``out`` (m, n) C-contiguous (the time steps of a recurrent layer): the blocks are cut
    once, here, and each call ``product(i)`` only points them at a[i] (about half of the cost of a (32, 128)
    by (128, 512) float32 product on one thread is ``matmul``'s planning). ``team``: at most this many numba
    threads (default all). Returns ``product``."""
    first = a[0]
    layouts = _layouts(first, b, min_work)
    threads = numba.get_num_threads()
    team = min(threads, MAX_THREADS, team or threads)
    tasks, out_shape = _tasks(first, b, layouts, team) if layouts is not None else (None, ())
    if len(out_shape) != 3 or not out.flags.c_contiguous:   # np.matmul's case, or the inner dimension cut
        return lambda i: np.copyto(out, matmul(a[i], b, min_work))
    a_at, step = tasks[:, 5].copy(), a.strides[0]
    tasks[:, 9] += out.ctypes.data
    dtype = a.dtype
    if len(tasks) == 1:                      # one gemm: called here, on this thread, without a parallel region
        return _planned_alone(tasks[0].tolist(), step, (a, b, out))

    def product(i, _operands=(a, b, out)):   # the tasks hold their addresses: they must stay alive
        np.add(a_at, i * step, out=tasks[:, 5])
        _execute(tasks, dtype, team, threads)
    return product


def _planned_alone(task, step, operands):
    """``planned``'s product for a single gemm ``task`` (the row of ``_tasks``): OpenBLAS called through ctypes
    on the calling thread, set to one thread meanwhile (6 us less per (32, 128) by (128, 512) product than a
    numba region of one thread)."""
    blas = _state["blas"]
    gemm = blas.sgemm if operands[0].dtype == np.float32 else blas.dgemm
    trans_a, trans_b, m, n, k, a_at, lda, b_at, ldb, c_at, ldc = task

    def product(i, _operands=operands):     # the task holds their addresses: they must stay alive
        with _lock:
            blas_threads = blas.get_threads()
            blas.set_threads(1)
            try:
                gemm(openblas.ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, a_at + i * step, lda, b_at, ldb, 0.0,
                     c_at, ldc)
            finally:
                blas.set_threads(blas_threads)
    return product
