"""numba kernels of max pooling: the window scan (values and argmax in one pass), and the gather and
scatter-add by flat index that carry its gradients. They compute what ``minigrad/ops/pool.py``'s NumPy path
computes (the reference on the ``"numpy"`` backend; tests keep the two equal, values and indices exactly):

    scan:     per window, its elements inside the input in row-major order of the kernel offsets; the first
              starts the window, and an element replaces the best so far if it is greater or NaN (the first
              maximum wins a tie, the last NaN wins over numbers: PyTorch's CPU rule). Out: the best value
              and its flat index h W + w (int64).
    gather:   y[p, o] = x[p, index[p, o]]
    scatter:  dx[p, s] = sum of dy[p, o] over the outputs o with index[p, o] = s

Everything works on image planes: x (P, H, W) with P = the product of the batch dims (N * C); a 1-D pooling
is a 2-D one of height 1. One parallel task per plane (each task owns the plane it writes); kernels below
``SERIAL_BELOW`` elements run serially on the calling thread (``numba_kernels._run``). The windows come per
axis as runs (``pool.py``'s ``_window_runs`` of its position tables, strided and adaptive windows alike):
window o reads first[o] + t step, t < count[o], the positions inside the input (reading runs instead of the
(O, k) position and inside tables measured ~20% faster). Windows that tile the input (stride = kernel, no
padding or dilation, every window whole) have a kernel of their own, ~25% faster again. A single window
covering the whole plane (global max pooling) is NumPy's SIMD argmax of each plane, which picks the scan's
element except in a plane holding NaN, fixed up afterwards (``_plane_max``): ~6x faster than the scan, whose
running maximum is a chain of dependent compares (~1 ns an element here).

Each task first checks its plane for NaN (one vectorized pass, ~0.15 ns an element): a plane without NaN is
scanned with the plain ``v > best`` test, which the compiler turns into a loop ~2x faster than the one that
also tests for NaN (the test is dropped at compile time: ``nan_possible`` is a literal).

The scatter adds in the gradient's dtype, in output order within each plane: the same additions, in the
same order, as PyTorch's CPU backward (NumPy's reference adds in float64, so a float32 element that several
overlapping windows chose can differ from it in the last bit). Indices come from the scan, never from the
user, so the kernels do not check their bounds.

Dtypes: the scan and the gather take float32, float64 and the integer types (``SCAN_DTYPES``), the scatter
float32 and float64 (gradients); the caller keeps the NumPy path for anything else.
"""
import math

import numpy as np
from numba import literally, prange

from .numba_kernels import _helper, _kernel, _run

SCAN_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                               np.uint8, np.uint16, np.uint32, np.uint64))
SCATTER_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


@_helper
def _replaces(v, top, nan_possible):
    """PyTorch's rule: v replaces the best so far if it is greater or NaN (v != v). ``nan_possible`` is a
    compile-time constant (``literally``): without NaN the test is dropped, and the scan runs ~2x faster."""
    return v > top or (nan_possible and v != v)


@_helper
def _has_nan(plane):
    """Whether the plane holds a NaN (an integer plane never does: the loop folds away)."""
    flat = plane.reshape(-1)
    count = 0
    for t in range(flat.size):
        count += flat[t] != flat[t]            # a sum, not an early exit: it vectorizes
    return count > 0


@_helper
def _scan_plane(plane, p, h_first, h_count, h_step, w_first, w_count, w_step, best, index, nan_possible):
    literally(nan_possible)
    width = plane.shape[1]                     # plane (H, W); h_first, h_count (OH,); w_first, w_count (OW,)
    for oh in range(h_first.size):
        h0, nh = h_first[oh], h_count[oh]
        for ow in range(w_first.size):
            w0, nw = w_first[ow], w_count[ow]
            top, at = plane[h0, w0], h0 * width + w0
            for i in range(nh):
                h = h0 + i * h_step
                for j in range(nw):
                    w = w0 + j * w_step
                    v = plane[h, w]
                    if _replaces(v, top, nan_possible):
                        top, at = v, h * width + w
            best[p, oh, ow] = top                  # best, index (P, OH, OW)
            index[p, oh, ow] = at


@_kernel
def _scan(x, h_first, h_count, h_step, w_first, w_count, w_step, best, index):
    for p in prange(x.shape[0]):               # x (P, H, W)
        plane = x[p]
        if _has_nan(plane):
            _scan_plane(plane, p, h_first, h_count, h_step, w_first, w_count, w_step, best, index, True)
        else:                                  # the NaN test dropped: the loop runs ~2x faster
            _scan_plane(plane, p, h_first, h_count, h_step, w_first, w_count, w_step, best, index, False)


@_helper
def _scan_tiled_plane(plane, p, kh, kw, best, index, nan_possible):
    literally(nan_possible)
    width = plane.shape[1]                     # plane (H, W); window (oh, ow) is
    for oh in range(best.shape[1]):            # plane[oh kh : (oh + 1) kh, ow kw : (ow + 1) kw], all inside
        top_row = oh * kh
        for ow in range(best.shape[2]):
            left = ow * kw
            top, at = plane[top_row, left], top_row * width + left
            for i in range(kh):
                for j in range(kw):
                    v = plane[top_row + i, left + j]
                    if _replaces(v, top, nan_possible):
                        top, at = v, (top_row + i) * width + left + j
            best[p, oh, ow] = top                  # best, index (P, OH, OW)
            index[p, oh, ow] = at


@_kernel
def _scan_tiled(x, kh, kw, best, index):
    for p in prange(x.shape[0]):               # x (P, H, W)
        plane = x[p]
        if _has_nan(plane):
            _scan_tiled_plane(plane, p, kh, kw, best, index, True)
        else:
            _scan_tiled_plane(plane, p, kh, kw, best, index, False)


@_kernel
def _gather(x, index, y):
    n_planes, n_out = index.shape              # x (P, S), index, y (P, O)
    for p in prange(n_planes):
        for o in range(n_out):
            y[p, o] = x[p, index[p, o]]


@_kernel
def _scatter(g, index, dx):
    n_planes, n_out = index.shape              # g, index (P, O), dx (P, S)
    for p in prange(n_planes):
        row = dx[p]
        for s in range(row.size):
            row[s] = 0
        for o in range(n_out):
            row[index[p, o]] += g[p, o]


def _planes(a, d):
    """a (*B, *S) with d spatial axes as contiguous planes (P, H, W) (a 1-D S as height 1)."""
    spatial = a.shape[a.ndim - d:]
    return np.ascontiguousarray(a).reshape((-1,) + (1,) * (2 - d) + spatial)


def window_max(x, runs):
    """(values, index) of each window's maximum, both (*B, *O), index int64 flat in x's last d axes.
    x (*B, *S); ``runs``: per spatial axis (d = 1 or 2) the windows' inside positions as (first (O_j,), count
    (O_j,), step): window o reads first[o] + t step for t < count[o]."""
    d = len(runs)
    if d == 1:
        runs = ((np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64), 1),) + tuple(runs)
    (h_first, h_count, h_step), (w_first, w_count, w_step) = runs
    planes = _planes(x, d)
    out_shape = x.shape[:x.ndim - d] + tuple(first.size for first, _, _ in runs[2 - d:])
    if (h_count.size, w_count.size) == (1, 1) and (h_count[0], w_count[0]) == planes.shape[1:]:
        best, index = _plane_max(planes.reshape(planes.shape[0], -1))      # one window: the whole plane
        return best.reshape(out_shape), index.reshape(out_shape)
    best = np.empty((planes.shape[0], h_first.size, w_first.size), dtype=x.dtype)
    index = np.empty(best.shape, dtype=np.int64)
    work = planes.shape[0] * int(h_count.sum()) * int(w_count.sum())       # elements read
    _run(_scan, work, planes, h_first, h_count, h_step, w_first, w_count, w_step, best, index)
    return best.reshape(out_shape), index.reshape(out_shape)


def _plane_max(rows):
    """(values, index) (P,) of the maxima of rows (P, S) by the scan's rule, for a window that is the whole
    plane (global max pooling). NumPy's SIMD argmax gives the first maximum, the rule's choice, unless a row
    holds NaN: then it points at the row's first NaN, and those rows (only they) take their last NaN."""
    index = np.argmax(rows, axis=1)                                        # (P,)
    best = rows[np.arange(rows.shape[0]), index]
    nan_rows = np.flatnonzero(best != best)
    if nan_rows.size:
        last = rows.shape[1] - 1 - np.argmax(np.isnan(rows[nan_rows, ::-1]), axis=1)
        index[nan_rows], best[nan_rows] = last, rows[nan_rows, last]
    return best, index.astype(np.int64, copy=False)


def tiled_max(x, kernel, out_sizes):
    """``window_max`` for windows that tile x (*B, *S) (stride = kernel, no padding or dilation, O_j k_j <= S_j)."""
    d = len(kernel)
    planes = _planes(x, d)
    kh, kw = (1,) * (2 - d) + tuple(kernel)
    out_shape = x.shape[:x.ndim - d] + tuple(out_sizes)
    best = np.empty((planes.shape[0],) + (1,) * (2 - d) + tuple(out_sizes), dtype=x.dtype)
    index = np.empty(best.shape, dtype=np.int64)
    _run(_scan_tiled, best.size * kh * kw, planes, kh, kw, best, index)
    return best.reshape(out_shape), index.reshape(out_shape)


def take(x, index, size):
    """x[..., index]: x (*B, *size), index (*B, *O) flat positions in size -> (*B, *O)."""
    n_planes = math.prod(index.shape[:index.ndim - len(size)])
    n_out = math.prod(index.shape[index.ndim - len(size):])
    rows = np.ascontiguousarray(x).reshape(n_planes, math.prod(size))
    flat = np.ascontiguousarray(index).reshape(n_planes, n_out)
    y = np.empty(flat.shape, dtype=x.dtype)
    _run(_gather, y.size, rows, flat, y)
    return y.reshape(index.shape)


def scatter_add(g, index, size):
    """zeros (*B, *size) with g (*B, *O) added at the flat positions ``index`` (*B, *O)."""
    batch = index.shape[:index.ndim - len(size)]
    n_planes, n_out = math.prod(batch), math.prod(index.shape[index.ndim - len(size):])
    dx = np.empty((n_planes, math.prod(size)), dtype=g.dtype)
    _run(_scatter, dx.size + g.size, np.ascontiguousarray(g).reshape(n_planes, n_out),
         np.ascontiguousarray(index).reshape(n_planes, n_out), dx)
    return dx.reshape(batch + tuple(size))
