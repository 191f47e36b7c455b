"""numba twins of the NumPy reference kernels (same names, signatures and results as the functions in
minigrad/ops/norm/rmsnorm.py, layernorm.py, scalenorm.py, batchnorm.py, groupnorm.py, localresponse.py and
dynamictanh.py; the contract is in minigrad/kernels/__init__.py).

Each public function is a thin Python wrapper that copies a non-contiguous input once, replaces
a missing weight/bias by neutral ones (numba compiles poorly around Optional arrays), allocates
the outputs with NumPy and calls a jitted kernel. Allocating in NumPy is deliberate: NumPy asks
the OS for transparent huge pages, so a fresh 32 MB output costs ~16 page faults instead of ~8000,
which on this kind of VM roughly halves the time of a forward pass. The forward's y and the backward's
dx go one step further and reuse the memory of a y or dx that has died (``buffers.py``: no page faults
at all).

Every kernel is compiled twice from one source (``_kernel``): in parallel, its prange loops split
over numba's threads, and as a serial twin on the calling thread. The wrapper runs the twin below
``SERIAL_BELOW`` elements of x, where a second thread costs more than it saves, and the
parallel kernel above. Both give the same results, bit for bit, except the row backwards' dw and db,
whose partial sums per chunk depend on the number of threads (below).

How the kernels work (the formulas are derived in docs/derivations/*.md):

* one parallel task per row (row family, x (R, D)), per (n, g) group (GroupNorm/InstanceNorm,
  x (N, C, S) viewed as rows (N*G, C/G*S)) or per chunk of channels (BatchNorm in training, whose statistics
  span the batch, with long slices: ``BY_CHANNEL_SLICE_BYTES``); each task makes two passes over its data,
  statistics then normalize, while the data is still in cache, so memory sees one read of x (and dy)
  and one write of y (or dx). A BatchNorm with short slices, or in eval mode, runs one task per (n, c) slice, in
  two parallel steps (statistics, then normalize), each reading x once;
* the forwards of RMSNorm, LayerNorm and GroupNorm (so InstanceNorm; its backward with dx too; with long channel
  slices only, ``PIPELINED_SLICE_BYTES``) and BatchNorm's training kernels by channels run one task per chunk of
  rows, groups or channels (``n_chunks``, as the row backwards) and
  pipeline them: the loop that writes row r's y also takes row r + 1's
  sums, so that memory streams the next row in while this one is written, as a copy does, instead of reading and
  writing in turns. 8192x1024 float32, the kernels alone, old and new alternating in one process, 55 calls each,
  the minimum: LayerNorm 5.8-6.1 -> 5.0-5.1 ms on one thread and 3.0-3.1 -> 2.6-2.9 ms on two, RMSNorm 5.1-5.4 ->
  4.7-5.0 ms on one (AVX2 EPYC). The RMSNorm and LayerNorm backwards do the same (dx of row r with row r + 1's
  sums), which measured no faster on the AVX2 EPYC but is on the AVX-512 Xeon: 8192x1024 float32, the kernels alone,
  old and new in alternating fresh processes (4 each, median of 41 calls): RMSNorm's dx + dw 8.3-8.8 -> 7.8-8.0 ms on
  one thread and 3.6-3.9 -> 3.2-3.5 ms on two, LayerNorm's dx + dw + db 9.2-10.0 -> 8.8-9.2 ms on one (two: within
  the noise), on a busy shared machine. A chunk's first row is summed by the same loop writing into a scratch
  row, so a row's statistics have the same bits wherever the chunks start;
* statistics and every sum are accumulated in float64, also for float32 data: a float32 row of
  65,536 elements with |mean| >> std stays within 1e-5 of a float64 reference; the variance is
  never E[x^2] - E[x]^2: two-pass, mean((x - mean)^2), for float64 data, and for float32 data
  one pass of float64 sums around the slice's first element (``_moments`` bounds its error).
  The elementwise passes (y, dx) run in the data's dtype, as the NumPy kernels do, which for
  float32 doubles the SIMD width; a float64 mean enters them as hi + lo float32 parts, so
  centering loses nothing when |mean| >> std;
* the sums are the only code compiled with ``fastmath={"reassoc", "contract"}`` (the ``@_sum`` helpers, among them
  the pipelined forward loops, whose y may then take one FMA where it took two roundings, and a product of scalars
  hoisted out of the loop: last-bit differences. Without "nsz", LLVM does not reassociate the subtractions of
  (x - hi) - lo, which the LayerNorm and GroupNorm loops rely on (their compiled loops keep both ``vsubps``, and
  the tests of float32 rows with mean 1e4 and std 1e-2 fail if the two are folded into one)):
  reassoc lets LLVM keep several float64 partial sums in SIMD lanes, ~5x faster than one scalar chain,
  and contract fuses a product into its sum (one FMA where a multiply and an add would round twice:
  LayerNorm's statistics of 8192x1024 float32 on one thread, 1.24 -> 1.01 ms, the speed of reading x).
  The order of the additions is still fixed by the code and the row length, never by thread
  scheduling (a CPU without FMA rounds the products apart: a last-bit difference). The float32 exp and tanh of
  plain arithmetic (``_float32_own``) are compiled with ``contract`` alone, the same last-bit caveat; everything
  else with ``fastmath=False``;
* the gradient mask, the same in every backward kernel: dx, dw and db are output arrays, and each is
  computed if and only if it is not empty (the wrappers pass a 0-row dx and 0-element dw/db for the
  gradients not asked for; RMSNorm's backward sums dw in its dx pass either way and drops it);
* the parameter gradients dw, db sum over all rows. The row family partitions the rows into a
  fixed number of chunks (``n_chunks`` = the thread count set, 1 below SERIAL_BELOW), each chunk adds
  into its own float64 partial row (in blocks of ``ROWS_PER_BLOCK`` rows' terms, each block summed
  in the data's dtype: the one exception to float64 sums), and the partials are added in
  chunk order: bitwise identical results from run to run at a given thread count and size, also when a
  busy machine leaves fewer threads to run the chunks (``governor.py``: the serial twin then runs them
  one after the other). The channel family keeps one float64
  partial sum per (n, c) slice and adds them in n order, which does not even depend on the thread
  count.

Statistics are returned in the data's dtype (as the NumPy kernels do). The LayerNorm/GroupNorm
forwards normalize with the float64 mean; their backwards recover it from the rounded saved mean
(mean64 = mean + mean(x - mean), one more sum in the pass that reads x anyway), so a float32 mean
of 1e4 with a std of 1e-2 does not turn into a 5% error in the gradient.

The norm kernels live in this one file. numba's on-disk cache of a function follows *its own* source file, so the
kernels of other files that call helpers from this one (fused_numba.py, conv_numba.py, pool_numba.py) would keep
stale machine code after a change here alone: ``numba_cache.stamp_helper_files()``, called before any kernel below
is compiled, adds this file's hash to their cache's source stamp.
"""
import math
import types

import numba
import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, prange
from numba.extending import intrinsic, overload

from . import buffers, governor, numba_cache

numba_cache.stamp_helper_files()

# error_model="numpy": 1/0 is inf and 0/0 NaN (as in NumPy and PyTorch), not ZeroDivisionError
_parallel = njit(parallel=True, cache=True, fastmath=False, error_model="numpy")  # prange loops on numba's threads
_helper = njit(cache=True, fastmath=False, error_model="numpy")                   # called inside a task
_sum = njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")    # float64 sums, SIMD lanes, FMA
# The row backwards' dx loops that also take the next row's sums: reassoc for the sums' SIMD lanes, no contract, so
# that dx rounds as the plain loops do (g * w - mean(g * w) is exactly 0 where the two are equal, as for D = 1).
_sum_exact = njit(cache=True, fastmath={"reassoc"}, error_model="numpy")
# The elementwise helpers of the channel kernels run once per (n, c) slice, often of 64 elements or fewer:
# a call per slice cost more than its loop (BatchNorm2d forward at 32x64x8x8: 55 us called, 27 us inlined).
# Inlined at numba's level, they take the caller's flags: only for code without sums (``_sum`` must stay a call).
_inline = njit(cache=True, fastmath=False, error_model="numpy", inline="always")

SERIAL_BELOW = 1 << 14
"""Work size (elements of x) below which a kernel runs serially on the calling thread: there a second
thread costs more than it saves. numba's workers spin for a while after each parallel region (kernels/
__init__.py), so in a program that runs kernels back to back the team is awake. Forward + backward
through the public API, 2 threads on this 2-core Intel Xeon, float32, median us with the threshold at
2**18 / 2**14 / 0: BatchNorm2d 2x16x8x8 (2,048 elements) 55 / 55 / 69, 8x32x16x16 104 / 90 / 94,
32x64x8x8 192 / 148 / 145; GroupNorm(8) 32x64x8x8 159 / 98 / 98; InstanceNorm2d 32x64x8x8 223 / 122 /
121. (With sleeping workers, before the spin, the crossing was near 2**18: waking them cost ~85 us.)"""


def _kernel(fn):
    """The parallel kernel compiled from ``fn``, with ``.serial``: the same source compiled without
    ``parallel`` (prange is then range), which runs on the calling thread and wakes no worker. The
    serial twin is a copy of fn under another qualified name, so numba caches the two apart."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "_serial"
    kernel = _parallel(fn)
    kernel.serial = _helper(twin)
    return kernel


def _kernel_per_power(fn):
    """{roots: the ``_kernel`` of fn's source in which the global name ROOTS is that bool}, for the two ways of
    ``_negative_power``: numba compiles a global as a constant, so LLVM decides the branch on it and vectorises the
    loop with square roots. Each copy has a qualified name of its own, so numba caches them apart. (The copies see
    the module's names as they are when fn is defined: fn may use only what is defined above it.)"""
    kernels = {}
    for roots in (True, False):
        name = f"{fn.__name__}_{'roots' if roots else 'pow'}"
        copy = types.FunctionType(fn.__code__, {**fn.__globals__, "ROOTS": roots}, name, fn.__defaults__,
                                  fn.__closure__)
        copy.__qualname__ = fn.__qualname__.replace(fn.__name__, name)
        kernels[roots] = _kernel(copy)
    return kernels


def team_size(work):
    """How many parts a kernel over ``work`` elements of x is planned in: 1 below SERIAL_BELOW, else numba's thread
    count. (The parts, and so every result, do not depend on how many threads then run them: ``_run``.)"""
    return 1 if work < SERIAL_BELOW else numba.get_num_threads()


def _run(kernel, work, *args):
    """``kernel(*args)`` on numba's threads, or its serial twin on the calling thread if ``work`` (elements of x) is
    too small to share or other processes leave no core to spare (``governor.py``); with fewer cores spare than
    threads, on that many threads."""
    return _launch(kernel, team_size(work), *args)


def _launch(kernel, planned, *args):
    """``kernel(*args)`` on at most ``planned`` threads, as many as the machine has free (``governor.team``)."""
    team = governor.team(planned) if planned > 1 else 1
    if team <= 1:
        return kernel.serial(*args)
    if team == planned:
        return kernel(*args)
    numba.set_num_threads(team)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(planned)


# --------------------------------------------------------------------------- sums over one contiguous 1-D slice
@_sum
def _sum_dev(a, m):
    """sum_j (a_j - m) in float64 (m is a float64)."""
    s = 0.0
    for j in range(a.size):
        s += a[j] - m                                    # a (L,)
    return s


@_sum
def _sum_sq_dev(a, m):
    """sum_j (a_j - m)^2 in float64."""
    s = 0.0
    for j in range(a.size):
        v = a[j] - m                                     # a (L,)
        s += v * v
    return s


@_sum
def _sum_wdot_dev(g, w, a, m):
    """sum_j g_j w_j (a_j - m) in float64 (RMSNorm's backward)."""
    s = 0.0
    for j in range(a.size):
        s += np.float64(g[j]) * w[j] * (a[j] - m)        # g, w, a (L,)
    return s


@_sum
def _dot(a, b):
    """sum_j a_j b_j in float64 (ScaleNorm's backward)."""
    s = 0.0
    for j in range(a.size):
        s += np.float64(a[j]) * b[j]                     # a, b (L,)
    return s


@_sum
def _weighted_sums(g, w, a, m):
    """(sum_j (a_j - m), sum_j g_j w_j, sum_j g_j w_j (a_j - m)) in float64, in one pass (LayerNorm's backward)."""
    s_a = s_g = s_ga = 0.0
    for j in range(a.size):
        gw, ac = np.float64(g[j]) * w[j], a[j] - m       # g, w, a (L,)
        s_a += ac
        s_g += gw
        s_ga += gw * ac
    return s_a, s_g, s_ga


@_sum
def _slice_sums(g, a, m):
    """(sum_j (a_j - m), sum_j g_j, sum_j g_j (a_j - m)) in float64, in one pass (per-channel slices of GN, BN)."""
    s_a = s_g = s_ga = 0.0
    for j in range(a.size):
        ac = a[j] - m                                    # g, a (L,)
        s_a += ac
        s_g += g[j]                                      # g (L,)
        s_ga += g[j] * ac
    return s_a, s_g, s_ga


@_sum
def _shifted_sums(a, k):
    """(sum_j (a_j - k), sum_j (a_j - k)^2) in float64, in one pass."""
    s1 = s2 = 0.0
    for j in range(a.size):
        v = a[j] - k                                     # a (L,)
        s1 += v
        s2 += v * v
    return s1, s2


@_inline
def _moments(a):
    """float64 mean and M2 = sum_j (a_j - mean)^2 of the slice a (L,).

    float64 data: two passes, M2 = sum((a - mean)^2). float32 data: one pass of float64 sums around
    k = a_0, M2 = sum((a - k)^2) - L * (mean - k)^2: half the reads. Its rounding error relative to M2 is
    about 2^-52 * (1 + L * (mean - k)^2 / M2), and (mean - k)^2 <= M2 since a_0 is one of the deviations,
    so it stays below float32's own rounding (2^-24) for every slice shorter than ~2^26."""
    n = a.size
    if a.itemsize == 4:
        k = np.float64(a[0]) if n else 0.0
        s1, s2 = _shifted_sums(a, k)
        return _moments_from_shifted(a, k, s1, s2)
    m = _sum_dev(a, 0.0) / n
    return m, _sum_sq_dev(a, m)


@_inline
def _moments_from_shifted(a, k, s1, s2):
    """``_moments`` of the slice a (L,) from its shifted sums (s1, s2) around k (``_shifted_sums``, k = a_0): as
    they are for float32 data; float64 data sums M2 again around the mean, in a second pass over a."""
    n = a.size
    m = k + s1 / n
    if a.itemsize == 4:
        return m, max(s2 - s1 * (s1 / n), 0.0)
    return m, _sum_sq_dev(a, m)


@_inline
def _mean_rstd(a, eps):
    """float64 mean and 1/sqrt(biased var + eps) of the slice a (L,) (``_moments``)."""
    m, m2 = _moments(a)
    return m, 1.0 / np.sqrt(m2 / a.size + eps)


@_inline
def _hi_lo(m, like):
    """The float64 m as hi + lo in the dtype of the array ``like``: ((x - hi) - lo) centers x with nearly
    float64 accuracy in float32 arithmetic (x - hi is exact for x near m; lo is 0 for float64 data)."""
    hi = like.dtype.type(m)
    return hi, like.dtype.type(m - hi)


@_inline
def _affine_segment(xs, ys, m, s, wc, bc):
    """ys = (xs - m) * s * wc + bc on one slice (L,) with scalar statistics and parameters (GN, BN)."""
    m_hi, m_lo = _hi_lo(m, xs)
    s_ = xs.dtype.type(s)
    for t in range(xs.size):
        ys[t] = ((xs[t] - m_hi) - m_lo) * s_ * wc + bc  # xs, ys (L,)


@_inline
def _centered_dx_segment(dys, xs, dxs, wc, s, m, mean_gw, coef):
    """dxs = s * (wc*dys - mean_gw - (xs - m)*coef), coef = s * mean(gw * xhat): the centered dx on a slice (L,)."""
    m_hi, m_lo = _hi_lo(m, xs)
    s_, mean_gw_, coef_ = xs.dtype.type(s), xs.dtype.type(mean_gw), xs.dtype.type(coef)
    for t in range(xs.size):
        dxs[t] = s_ * (wc * dys[t] - mean_gw_ - ((xs[t] - m_hi) - m_lo) * coef_)  # dys, xs, dxs (L,)


# --------------------------------------------------------------------------- row family: x (R, D)
ROWS_PER_BLOCK = 16
"""The row backwards (RMSNorm, LayerNorm, DynamicTanh) add their parameter gradients' terms of this many rows in the
data's dtype before adding them into the float64 partial row of their chunk: a float32 block row (D,) takes half the
cache of a float64 one and twice as many terms per SIMD instruction, at a relative error of about
ROWS_PER_BLOCK * 2^-24 of a block's terms. 8192x1024 float32, median of 5 fresh processes each: LayerNorm's dx + dw
+ db 8.3 -> 7.0 ms on one thread, 4.7 -> 3.6 ms on two (AVX-512 Xeon); RMSNorm's dx + dw, 15 rounds in one process
each on the AVX2 EPYC, 11.3 -> 10.4 ms on one thread, 6.7 -> 5.9 ms on two.
LayerNorm adds dw's and db's terms in a loop of their own over the row its dx loop has just read (still in cache):
in the dx loop, which also takes the next row's sums, they made it slower."""


@_sum
def _scale_row_summing_next(xr, s, w, b, k, yr, xn):
    """yr = xr * s * w + b (D,), and sum_{j<k} xn_j^2 in float64 of the next row xn (D,) in the same loop."""
    acc = 0.0
    for j in range(k):
        yr[j] = xr[j] * s * w[j] + b[j]                                # xr, yr, xn, w, b (D,)
        v = np.float64(xn[j])
        acc += v * v
    for j in range(k, xr.size):
        yr[j] = xr[j] * s * w[j] + b[j]
    return acc


@_kernel
def _rms_norm_forward(x, w, b, eps, k, eps_outside, n_chunks, y, rstd):
    r_count, d = x.shape
    for c in prange(n_chunks):
        first, end = c * r_count // n_chunks, (c + 1) * r_count // n_chunks
        if first == end:
            continue
        # row pipelining: each row's sum of squares is taken in the loop that writes the row before it; the first
        # row's by the same loop writing into a scratch row (the same code, so the same bits wherever chunks start)
        sum_sq = _scale_row_summing_next(x[first], x.dtype.type(0), w, b, k, np.empty(d, x.dtype), x[first])
        for r in range(first, end):
            ms = sum_sq / k
            s = x.dtype.type(1.0 / (np.sqrt(ms) + eps) if eps_outside else 1.0 / np.sqrt(ms + eps))
            rstd[r] = s                                                # rstd (R,)
            sum_sq = _scale_row_summing_next(x[r], s, w, b, k, y[r], x[min(r + 1, end - 1)])  # x, y (R, D)


@_helper
def _zero(a):
    """a[:] = 0 for a 1-D array, as a plain loop (in a parallel kernel, np.zeros or a[:] = 0 would be a
    parallel region of its own: one more wake-up of the workers)."""
    for j in range(a.size):
        a[j] = 0.0


@_helper
def _add_partials(part, out):
    """out[j] = sum over chunks of part[c, j], in chunk order (part (chunks, D), out (D,) float64)."""
    for j in range(out.size):
        acc = 0.0
        for c in range(part.shape[0]):
            acc += part[c, j]                                          # part (chunks, D)
        out[j] = acc                                                   # out (D,)


@_helper
def _flush(block, part):
    """part += block, then block[:] = 0 (block (D,) in the data's dtype; part a float64 partial row (D,), or (0,)
    for a gradient not asked for)."""
    for j in range(part.size):
        part[j] += block[j]                                            # part, block (D,)
    for j in range(block.size):
        block[j] = 0.0


@_sum
def _rms_dx_row_summing_next(dyr, xr, w, s, coef, k, dxr, dw_block, dyn, xn):
    """dxr = s * (dyr * w - coef * xr) on the RMS subset [:k] and s * dyr * w beyond it (no correction there),
    dw_block += dyr * (xr * s), and in the same loop sum_j dyn_j w_j xn_j in float64 of the next row (D,)."""
    acc = 0.0
    for j in range(k):
        g, a = dyr[j], xr[j]                                           # dyr, xr, dxr, w, dw_block, dyn, xn (D,)
        dxr[j] = s * (g * w[j] - coef * a)
        dw_block[j] += g * (a * s)
        acc += np.float64(dyn[j]) * w[j] * xn[j]
    for j in range(k, xr.size):
        g, a = dyr[j], xr[j]
        dxr[j] = s * (g * w[j])
        dw_block[j] += g * (a * s)
        acc += np.float64(dyn[j]) * w[j] * xn[j]
    return acc


@_kernel
def _rms_norm_backward(dy, x, rstd, w, k, eps_outside, n_chunks, dx, dw, db):
    r_count, d = x.shape
    need_dx = dx.size > 0
    zero = x.dtype.type(0)
    # dw is summed in the same pass as dx, always, into a partial row per chunk that is added up only if dw is
    # asked for: 8192x1024 float32 on one thread, dx + dw took 7.0 ms in two passes and 5.1 ms in one (dx alone
    # 4.4, now 5.1 ms). A branch on need_dw inside the loop, or db summed in it too, stopped LLVM vectorizing it.
    # Row pipelining, as in the forwards: the loop writing row r's dx takes row r + 1's sum, so memory streams the
    # next rows in while this one is written (measured in this module's docstring).
    dw_part, db_part = np.empty((n_chunks, d)), np.empty((n_chunks, db.size))  # (chunks, D); (chunks, D or 0)
    for c in prange(n_chunks):
        _zero(dw_part[c])
        _zero(db_part[c])
        dw_block, db_block = np.zeros(d, x.dtype), np.zeros(db.size, x.dtype)  # (D,): ROWS_PER_BLOCK rows' terms
        first, end = c * r_count // n_chunks, (c + 1) * r_count // n_chunks
        if need_dx and first < end:           # the first row's sum by the same loop, into scratch rows
            wdot = _rms_dx_row_summing_next(dy[first], x[first], w, zero, zero, k, np.empty(d, x.dtype),
                                            np.zeros(d, x.dtype), dy[first], x[first])
        for r in range(first, end):
            s = rstd[r]                                                # rstd (R,)
            if need_dx:
                proj = wdot * s / k                                    # sum_j(gw*xhat)/k
                xk = x[r, :k]                                          # (k,): the RMS subset
                coef = x.dtype.type((1.0 / np.sqrt(_sum_sq_dev(xk, 0.0) / k) if eps_outside else s) * proj)
                nxt = min(r + 1, end - 1)
                wdot = _rms_dx_row_summing_next(dy[r], x[r], w, s, coef, k, dx[r], dw_block, dy[nxt], x[nxt])
            elif dw.size:
                for j in range(d):
                    dw_block[j] += dy[r, j] * (x[r, j] * s)
            for j in range(db.size):
                db_block[j] += dy[r, j]                                # db_block (D,)
            if (r - first) % ROWS_PER_BLOCK == ROWS_PER_BLOCK - 1 or r == end - 1:
                _flush(dw_block, dw_part[c])                           # dw_part, db_part (chunks, D)
                _flush(db_block, db_part[c])
    if dw.size:
        _add_partials(dw_part, dw)
    _add_partials(db_part, db)


@_kernel
def _scale_norm_forward(x, g, eps, y, s, active):
    r_count, d = x.shape
    for r in prange(r_count):
        n = np.sqrt(_sum_sq_dev(x[r], 0.0))                            # ||x_r||, x[r] (D,)
        s_r = max(n, eps)
        s[r], active[r] = s_r, 1.0 if n > eps else 0.0                 # s, active (R,)
        c = x.dtype.type(g / s_r)
        for j in range(d):
            y[r, j] = x[r, j] * c                                      # x, y (R, D)


@_kernel
def _scale_norm_backward(dy, x, g, s, active, n_chunks, dx, dg):
    r_count, d = x.shape
    need_dx = dx.size > 0
    dg_part = np.empty((n_chunks, dg.size))                            # (chunks, 1) or (chunks, 0)
    for c in prange(n_chunks):
        _zero(dg_part[c])
        for r in range(c * r_count // n_chunks, (c + 1) * r_count // n_chunks):
            dot = _dot(dy[r], x[r])                                    # sum_j dy_j x_j; dy[r], x[r] (D,)
            if need_dx:                                                # dx = g/s (dy - a x (dy . x) / s^2)
                c1 = x.dtype.type(g / s[r])
                c2 = x.dtype.type(active[r] * dot / (s[r] * s[r]))
                for j in range(d):
                    dx[r, j] = c1 * (dy[r, j] - c2 * x[r, j])          # dy, x, dx (R, D)
            for j in range(dg.size):
                dg_part[c, j] += dot / s[r]                            # dg = sum_rows (dy . x) / s
    _add_partials(dg_part, dg)


@_sum
def _normalize_row_summing_next(xr, m_hi, m_lo, s, w, b, yr, xn, k_next):
    """yr = ((xr - m_hi) - m_lo) * s * w + b (D,), and in the same loop the shifted sums (``_shifted_sums``) of the
    next row xn (D,) around k_next."""
    s1 = s2 = 0.0
    for j in range(xr.size):
        yr[j] = ((xr[j] - m_hi) - m_lo) * s * w[j] + b[j]              # xr, yr, xn, w, b (D,)
        v = xn[j] - k_next
        s1 += v
        s2 += v * v
    return s1, s2


@_kernel
def _layer_norm_forward(x, w, b, eps, n_chunks, y, mean, rstd):
    r_count, d = x.shape
    zero = x.dtype.type(0)
    for c in prange(n_chunks):
        first, end = c * r_count // n_chunks, (c + 1) * r_count // n_chunks
        if first == end:
            continue
        # row pipelining (as in RMSNorm's forward): row r's sums are taken in the loop that writes row r - 1
        k = np.float64(x[first, 0]) if d else 0.0
        s1, s2 = _normalize_row_summing_next(x[first], zero, zero, zero, w, b, np.empty(d, x.dtype), x[first], k)
        for r in range(first, end):
            m, m2 = _moments_from_shifted(x[r], k, s1, s2)            # x[r] (D,)
            s = 1.0 / np.sqrt(m2 / d + eps)
            mean[r], rstd[r] = m, s                                    # mean, rstd (R,)
            m_hi, m_lo = _hi_lo(m, x)
            nxt = min(r + 1, end - 1)
            k = np.float64(x[nxt, 0]) if d else 0.0
            s1, s2 = _normalize_row_summing_next(x[r], m_hi, m_lo, x.dtype.type(s), w, b, y[r], x[nxt], k)  # (R, D)


@_sum_exact
def _layer_dx_row_summing_next(dyr, xr, w, m_hi, m_lo, s, mean_gw, coef, dxr, dyn, xn, m_next):
    """dxr = s * (dyr * w - mean_gw - ((xr - m_hi) - m_lo) * coef) (D,), and in the same loop the next row's
    ``_weighted_sums`` around its saved mean m_next."""
    s_a = s_g = s_ga = 0.0
    for j in range(xr.size):
        dxr[j] = s * (dyr[j] * w[j] - mean_gw - ((xr[j] - m_hi) - m_lo) * coef)  # dyr, xr, dxr, w, dyn, xn (D,)
        gw, ac = np.float64(dyn[j]) * w[j], xn[j] - m_next
        s_a += ac
        s_g += gw
        s_ga += gw * ac
    return s_a, s_g, s_ga


@_helper
def _add_layer_terms(dyr, xr, m_hi, m_lo, s, dw_block, db_block, need_dw, need_db):
    """dw_block += dyr * ((xr - m_hi) - m_lo) * s and/or db_block += dyr (D,): a row's parameter gradient terms,
    one loop per case (a branch inside the loop stops LLVM vectorizing it)."""
    if need_dw and need_db:
        for j in range(xr.size):
            g = dyr[j]                                                 # dyr, xr, dw_block, db_block (D,)
            dw_block[j] += g * (((xr[j] - m_hi) - m_lo) * s)
            db_block[j] += g
    elif need_dw:
        for j in range(xr.size):
            dw_block[j] += dyr[j] * (((xr[j] - m_hi) - m_lo) * s)
    elif need_db:
        for j in range(xr.size):
            db_block[j] += dyr[j]


@_kernel
def _layer_norm_backward(dy, x, mean, rstd, w, n_chunks, dx, dw, db):
    r_count, d = x.shape
    need_dx = dx.size > 0
    zero = x.dtype.type(0)
    dw_part, db_part = np.empty((n_chunks, dw.size)), np.empty((n_chunks, db.size))  # (chunks, D) or (chunks, 0)
    for c in prange(n_chunks):
        _zero(dw_part[c])
        _zero(db_part[c])
        dw_block, db_block = np.zeros(d, x.dtype), np.zeros(d, x.dtype)  # (D,): ROWS_PER_BLOCK rows' terms
        first, end = c * r_count // n_chunks, (c + 1) * r_count // n_chunks
        # With dx, row pipelining (as in the forward): the loop writing row r's dx takes row r + 1's sums; the first
        # row's by the same loop, into a scratch row. dw's and db's terms then take one more loop over the row, which
        # is still in cache (in the dx loop they made it slower).
        if need_dx and first < end:
            sums = _layer_dx_row_summing_next(dy[first], x[first], w, zero, zero, zero, zero, zero,
                                              np.empty(d, x.dtype), dy[first], x[first], np.float64(mean[first]))
        for r in range(first, end):
            s, m = np.float64(rstd[r]), np.float64(mean[r])            # rstd, mean (R,)
            sum_xc = sum_gw = sum_gw_xc = 0.0                          # around the saved (rounded) mean m
            if need_dx:
                sum_xc, sum_gw, sum_gw_xc = sums
            elif dw.size:
                sum_xc, sum_gw, sum_gw_xc = _weighted_sums(dy[r], w, x[r], m)  # dy[r], x[r], w (D,)
            delta = sum_xc / d                                         # the forward's float64 mean is m + delta
            m_hi, m_lo = _hi_lo(m + delta, x)
            s_ = x.dtype.type(s)
            if need_dx:
                mean_gw = x.dtype.type(sum_gw / d)
                coef = x.dtype.type(s * (sum_gw_xc - delta * sum_gw) / d * s)  # s * mean(gw * xhat)
                nxt = min(r + 1, end - 1)
                sums = _layer_dx_row_summing_next(dy[r], x[r], w, m_hi, m_lo, s_, mean_gw, coef, dx[r], dy[nxt],
                                                  x[nxt], np.float64(mean[nxt]))  # dy, x, dx (R, D)
            _add_layer_terms(dy[r], x[r], m_hi, m_lo, s_, dw_block, db_block, dw.size > 0, db.size > 0)
            if (dw.size or db.size) and ((r - first) % ROWS_PER_BLOCK == ROWS_PER_BLOCK - 1 or r == end - 1):
                _flush(dw_block, dw_part[c])                           # dw_part, db_part (chunks, D)
                _flush(db_block, db_part[c])
    _add_partials(dw_part, dw)
    _add_partials(db_part, db)


# --------------------------------------------------------------------------- channel family: x (N, C, S)
@_helper
def _add_over_n(part_nc, out):
    """out[c] = sum_n part_nc[n, c], in n order (part_nc (N, C), out (C,)); nothing if out is empty."""
    for c in range(out.size):
        out[c] = _sum_dev(part_nc[:, c], 0.0)                          # part_nc[:, c] (N,)


@_inline
def _split(i, inner):
    """(i // inner, i % inner) for a task index i >= 0, in unsigned arithmetic: Python's floor division of signed
    integers costs sign fix-ups, and indices that may be negative cost a wraparound check at every array
    access (BatchNorm2d forward at 32x64x8x8: 26 -> 16 us)."""
    u, d = np.uint64(i), np.uint64(inner)
    q = u // d
    return q, u - q * d


@_sum
def _affine_segment_summing_next(xs, ys, m_hi, m_lo, s, wc, bc, xn, k_next):
    """ys = ((xs - m_hi) - m_lo) * s * wc + bc on one channel's slice (S,) with scalar parameters, and in the same loop
    the shifted sums (``_shifted_sums``) of the slice xn (S,) around k_next."""
    s1 = s2 = 0.0
    for t in range(xs.size):
        ys[t] = ((xs[t] - m_hi) - m_lo) * s * wc + bc                  # xs, ys, xn (S,)
        v = xn[t] - k_next
        s1 += v
        s2 += v * v
    return s1, s2


@_sum
def _centered_dx_segment_summing_next(dys, xs, dxs, wc, s, m_hi, m_lo, mean_gw, coef, dyn, xn, m_next):
    """dxs = s * (wc*dys - mean_gw - ((xs - m_hi) - m_lo)*coef) on one slice (S,), as ``_centered_dx_segment`` (its
    scalars in x's dtype), and in the same loop the next slice's ``_slice_sums`` (dyn, xn (S,) around m_next)."""
    s_a = s_g = s_ga = 0.0
    for t in range(xs.size):
        dxs[t] = s * (wc * dys[t] - mean_gw - ((xs[t] - m_hi) - m_lo) * coef)  # dys, xs, dxs, dyn, xn (S,)
        ac = xn[t] - m_next
        s_a += ac
        s_g += dyn[t]
        s_ga += dyn[t] * ac
    return s_a, s_g, s_ga


@_inline
def _normalize_group_summing_next(xg, yg, m_hi, m_lo, s, w, b, c0, s_count, xn, k_next):
    """yg = ((xg - m_hi) - m_lo) * s * w_c + b_c over one group (C/G*S,), whose channels c0, c0 + 1, ... take s_count
    elements each; and, channel slice by channel slice, the shifted sums of the next group xn around k_next."""
    s1 = s2 = 0.0
    for j in range(xg.size // s_count if s_count else 0):
        a, z = j * s_count, (j + 1) * s_count                          # channel c0 + j's slice of the group
        t1, t2 = _affine_segment_summing_next(xg[a:z], yg[a:z], m_hi, m_lo, s, w[c0 + j], b[c0 + j], xn[a:z], k_next)
        s1 += t1
        s2 += t2
    return s1, s2


@_kernel
def _group_norm_forward(x, num_groups, w, b, eps, y, mean, rstd):
    n_count, c_count, s_count = x.shape
    cg = c_count // num_groups
    size = cg * s_count                                                # elements per group
    samples = x.reshape(n_count, c_count * s_count)                    # (N, C*S): group g is one 1-D slice
    for i in prange(n_count * num_groups):
        n, g = _split(i, num_groups)
        m, s = _mean_rstd(samples[n, g * size:(g + 1) * size], eps)   # the group (C/G*S,), contiguous, no copy
        mean[n, g], rstd[n, g] = m, s                                  # mean, rstd (N, G)
        for c in range(g * cg, (g + 1) * cg):
            _affine_segment(x[n, c], y[n, c], m, s, w[c], b[c])        # x[n, c], y[n, c] (S,); w, b (C,)


@_kernel
def _group_norm_forward_pipelined(x, num_groups, w, b, eps, n_chunks, y, mean, rstd):
    n_count, c_count, s_count = x.shape
    cg = c_count // num_groups
    size = cg * s_count                                                # elements per group
    groups, y_groups = x.reshape(n_count * num_groups, size), y.reshape(n_count * num_groups, size)  # (N*G, C/G*S)
    zero = x.dtype.type(0)
    for c in prange(n_chunks):
        first, end = c * (n_count * num_groups) // n_chunks, (c + 1) * (n_count * num_groups) // n_chunks
        if first == end:
            continue
        # row pipelining, as in LayerNorm's forward: group i's sums are taken in the loop that writes group i - 1
        k = np.float64(groups[first, 0]) if size else 0.0
        s1, s2 = _normalize_group_summing_next(groups[first], np.empty(size, x.dtype), zero, zero, zero, w, b, 0,
                                               s_count, groups[first], k)
        for i in range(first, end):
            n, g = _split(i, num_groups)
            m, m2 = _moments_from_shifted(groups[i], k, s1, s2)       # groups[i] (C/G*S,): group g of sample n
            s = 1.0 / np.sqrt(m2 / size + eps)
            mean[n, g], rstd[n, g] = m, s                              # mean, rstd (N, G)
            m_hi, m_lo = _hi_lo(m, x)
            nxt = min(i + 1, end - 1)
            k = np.float64(groups[nxt, 0]) if size else 0.0
            s1, s2 = _normalize_group_summing_next(groups[i], y_groups[i], m_hi, m_lo, x.dtype.type(s), w, b, g * cg,
                                                   s_count, groups[nxt], k)


@_kernel
def _group_norm_backward(dy, x, mean, rstd, num_groups, w, dx, dw, db):
    n_count, c_count, s_count = x.shape
    need_dx = dx.size > 0
    cg = c_count // num_groups
    size = cg * s_count                                                # elements per group
    need_x = need_dx or dw.size > 0
    dw_nc, db_nc = np.empty((n_count, c_count)), np.empty((n_count, c_count))   # per (n, c) slice
    for i in prange(n_count * num_groups):
        n, g = _split(i, num_groups)
        s, m = np.float64(rstd[n, g]), np.float64(mean[n, g])          # rstd, mean (N, G)
        sum_gw = sum_gw_xc = sum_xc = 0.0                              # sums around the saved (rounded) mean m
        for c in range(g * cg, (g + 1) * cg):
            if need_x:                                                 # dx or dw: the sums that read x
                xc, db_nc[n, c], dw_nc[n, c] = _slice_sums(dy[n, c], x[n, c], m)  # dy[n, c], x[n, c] (S,); (N, C)
                sum_xc, sum_gw_xc = sum_xc + xc, sum_gw_xc + w[c] * dw_nc[n, c]   # w (C,)
            else:
                db_nc[n, c], dw_nc[n, c] = _sum_dev(dy[n, c], 0.0), 0.0  # dy[n, c] (S,); db_nc, dw_nc (N, C)
            sum_gw += w[c] * db_nc[n, c]                               # w (C,); db_nc (N, C)
        delta = sum_xc / size                                          # the forward's float64 mean is m + delta
        for c in range(g * cg, (g + 1) * cg):
            dw_nc[n, c] = s * (dw_nc[n, c] - delta * db_nc[n, c])      # sum_s dy * xhat; (N, C)
        if need_dx:
            coef = s * (sum_gw_xc - delta * sum_gw) / size * s         # s * mean(gw * xhat)
            for c in range(g * cg, (g + 1) * cg):
                _centered_dx_segment(dy[n, c], x[n, c], dx[n, c], w[c], s, m + delta, sum_gw / size,
                                     coef)                                     # dy[n, c], x[n, c], dx[n, c] (S,)
    _add_over_n(dw_nc, dw)
    _add_over_n(db_nc, db)


@_kernel
def _group_norm_backward_pipelined(dy, x, mean, rstd, num_groups, w, n_chunks, dx, dw, db):
    """``_group_norm_backward`` with dx, one task per chunk of groups, pipelined as the forward: the loop that writes
    group i's dx, channel slice by channel slice, takes group i + 1's slice sums. A chunk's first group is summed by
    the same loop writing into a scratch slice."""
    n_count, c_count, s_count = x.shape
    cg = c_count // num_groups
    size = cg * s_count                                                # elements per group
    n_groups = n_count * num_groups
    xc_nc, g_nc, gx_nc = np.empty((n_count, c_count)), np.empty((n_count, c_count)), np.empty((n_count, c_count))
    dw_nc, db_nc = np.empty((n_count, c_count)), np.empty((n_count, c_count))   # per (n, c) slice
    zero = x.dtype.type(0)
    for chunk in prange(n_chunks):
        first, end = chunk * n_groups // n_chunks, (chunk + 1) * n_groups // n_chunks
        scratch = np.empty(s_count, x.dtype)
        if first < end:
            n, g = _split(first, num_groups)
            for c in range(g * cg, (g + 1) * cg):                      # the slice sums, around the saved mean
                xc_nc[n, c], g_nc[n, c], gx_nc[n, c] = _centered_dx_segment_summing_next(
                    dy[n, c], x[n, c], scratch, zero, zero, zero, zero, zero, zero, dy[n, c], x[n, c],
                    np.float64(mean[n, g]))                            # dy[n, c], x[n, c] (S,); *_nc (N, C)
        for i in range(first, end):
            n, g = _split(i, num_groups)
            s, m = np.float64(rstd[n, g]), np.float64(mean[n, g])      # rstd, mean (N, G)
            sum_gw = sum_gw_xc = sum_xc = 0.0                          # sums around the saved (rounded) mean m
            for c in range(g * cg, (g + 1) * cg):
                sum_xc, sum_gw_xc = sum_xc + xc_nc[n, c], sum_gw_xc + w[c] * gx_nc[n, c]  # w (C,); *_nc (N, C)
                sum_gw += w[c] * g_nc[n, c]
            delta = sum_xc / size                                      # the forward's float64 mean is m + delta
            for c in range(g * cg, (g + 1) * cg):
                db_nc[n, c], dw_nc[n, c] = g_nc[n, c], s * (gx_nc[n, c] - delta * g_nc[n, c])  # sum_s dy * xhat
            coef = s * (sum_gw_xc - delta * sum_gw) / size * s         # s * mean(gw * xhat)
            t = x.dtype.type
            m_hi, m_lo = _hi_lo(m + delta, x)
            n1, g1 = _split(min(i + 1, end - 1), num_groups)           # the next group (this one, at the end)
            for j in range(cg):
                c, c1 = g * cg + j, g1 * cg + j
                xc_nc[n1, c1], g_nc[n1, c1], gx_nc[n1, c1] = _centered_dx_segment_summing_next(
                    dy[n, c], x[n, c], dx[n, c], w[c], t(s), m_hi, m_lo, t(sum_gw / size), t(coef), dy[n1, c1],
                    x[n1, c1], np.float64(mean[n1, g1]))
    _add_over_n(dw_nc, dw)
    _add_over_n(db_nc, db)


@_inline
def _merge_slices(seg_mean, seg_m2, s_count, eps, c, mean, var, rstd):
    """Channel c's mean, biased var and rstd (stored in x's dtype) from the float64 moments of its N slices, merged in
    n order (seg_mean, seg_m2 (N,): each slice's mean and M2 over its s_count elements)."""
    n_count = seg_mean.size
    m = _sum_dev(seg_mean, 0.0) / n_count
    m2 = _sum_dev(seg_m2, 0.0) + s_count * _sum_sq_dev(seg_mean, m)       # the total variance's numerator
    mean[c], var[c] = m, m2 / (n_count * s_count)                      # mean, var, rstd (C,)
    rstd[c] = mean.dtype.type(1.0) / np.sqrt(var[c] + mean.dtype.type(eps))  # in x's dtype, as the reference


@_helper
def _blend_running(mean, var, count, momentum, running_mean, running_var):
    """The reference's blend of the running buffers (C,) with the batch's mean and unbiased var, in x's dtype
    (nothing without buffers)."""
    if running_mean.size:
        t = mean.dtype.type
        mom, keep, unbias = t(momentum), t(1 - momentum), t(count / (count - 1))
        for c in range(mean.size):
            running_mean[c] = mom * mean[c] + keep * running_mean[c]   # running_mean, running_var (C,)
            running_var[c] = mom * (var[c] * unbias) + keep * running_var[c]


@_kernel
def _batch_norm_stats(x, eps, momentum, running_mean, running_var, mean, var, rstd):
    n_count, c_count, s_count = x.shape
    seg_mean, seg_m2 = np.empty((n_count, c_count)), np.empty((n_count, c_count))  # per (n, c) slice, float64
    for i in prange(n_count * c_count):
        n, c = _split(i, c_count)
        seg_mean[n, c], seg_m2[n, c] = _moments(x[n, c])               # x[n, c] (S,); seg_mean, seg_m2 (N, C)
    for c in prange(c_count):
        _merge_slices(seg_mean[:, c], seg_m2[:, c], s_count, eps, c, mean, var, rstd)
    _blend_running(mean, var, n_count * s_count, momentum, running_mean, running_var)


@_kernel
def _batch_norm_train_pipelined(x, eps, momentum, running_mean, running_var, w, b, n_chunks, y, mean, var, rstd):
    """Training's statistics and y, one task per chunk of channels, pipelined as GroupNorm's forward: the loop that
    writes channel c's y, slice by slice, takes channel c + 1's shifted sums, so that memory streams the next
    channel in while this one is written (its slices are in cache when they are normalized). A chunk's first
    channel is summed by the same loop writing into a scratch slice: the same bits wherever the chunks start."""
    n_count, c_count, s_count = x.shape
    seg_mean, seg_m2 = np.empty((n_count, c_count)), np.empty((n_count, c_count))  # per (n, c) slice, float64
    zero = x.dtype.type(0)
    for chunk in prange(n_chunks):
        first, end = chunk * c_count // n_chunks, (chunk + 1) * c_count // n_chunks
        scratch = np.empty(s_count, x.dtype)
        for n in range(n_count if first < end else 0):
            xn = x[n, first]                                           # x[n, c] (S,)
            k = np.float64(xn[0]) if s_count else 0.0
            s1, s2 = _affine_segment_summing_next(xn, scratch, zero, zero, zero, zero, zero, xn, k)
            seg_mean[n, first], seg_m2[n, first] = _moments_from_shifted(xn, k, s1, s2)  # seg_mean, seg_m2 (N, C)
        for c in range(first, end):
            _merge_slices(seg_mean[:, c], seg_m2[:, c], s_count, eps, c, mean, var, rstd)
            m_hi, m_lo = _hi_lo(np.float64(mean[c]), x)
            nxt = min(c + 1, end - 1)
            for n in range(n_count):
                xn = x[n, nxt]
                k = np.float64(xn[0]) if s_count else 0.0
                s1, s2 = _affine_segment_summing_next(x[n, c], y[n, c], m_hi, m_lo, rstd[c], w[c], b[c], xn, k)
                seg_mean[n, nxt], seg_m2[n, nxt] = _moments_from_shifted(xn, k, s1, s2)
    _blend_running(mean, var, n_count * s_count, momentum, running_mean, running_var)


@_kernel
def _batch_norm_forward(x, mean, rstd, w, b, y):
    n_count, c_count, s_count = x.shape
    for i in prange(n_count * c_count):
        n, c = _split(i, c_count)
        _affine_segment(x[n, c], y[n, c], np.float64(mean[c]), np.float64(rstd[c]), w[c], b[c])  # (S,); (C,)


@_inline
def _channel_sums(dy, x, mean, n, c):
    """(sum_s dy, sum_s dy * (x - mean_c)) in float64 over the slice (n, c) of dy, x (N, C, S)."""
    _, s_dy, s_dy_xc = _slice_sums(dy[n, c], x[n, c], np.float64(mean[c]))  # dy[n, c], x[n, c] (S,)
    return s_dy, s_dy_xc


@_inline
def _channel_dx(dy, x, mean, rstd, w, training, sum_dy, sum_dy_xhat, n, c, dx):
    """dx on the slice (n, c) of (N, C, S), given channel c's sums over A = {N, S} (training) or none (eval)."""
    if training:
        s = np.float64(rstd[c])                                        # rstd (C,)
        size = x.shape[0] * x.shape[2]                                 # elements per channel
        mean_gw, coef = w[c] * sum_dy / size, s * w[c] * sum_dy_xhat / size   # coef = s * mean(gw * xhat)
        _centered_dx_segment(dy[n, c], x[n, c], dx[n, c], w[c], s, np.float64(mean[c]), mean_gw,
                             coef)                                             # dy[n, c], x[n, c], dx[n, c] (S,)
    else:                                                              # eval: mean and rstd are constants
        for t in range(x.shape[2]):
            dx[n, c, t] = rstd[c] * (w[c] * dy[n, c, t])               # dx, dy (N, C, S); rstd, w (C,)


@_kernel
def _batch_norm_backward(dy, x, mean, rstd, w, training, dx, dw, db):
    n_count, c_count, s_count = x.shape
    need_dx = dx.size > 0
    need_sums = dw.size > 0 or db.size > 0 or (need_dx and training)   # sum_A(dy), sum_A(dy * xhat)
    sum_dy, sum_dy_xhat = np.zeros(c_count), np.zeros(c_count)         # (C,)
    if need_sums:
        dy_nc, dy_xc_nc = np.empty((n_count, c_count)), np.empty((n_count, c_count))   # per (n, c) slice
        for i in prange(n_count * c_count):
            n, c = _split(i, c_count)
            dy_nc[n, c], dy_xc_nc[n, c] = _channel_sums(dy, x, mean, n, c)             # (N, C)
        _add_over_n(dy_nc, sum_dy)
        _add_over_n(dy_xc_nc, sum_dy_xhat)
        for c in range(c_count):
            sum_dy_xhat[c] *= rstd[c]                                  # sum_{n,s} dy * xhat; (C,)
    if need_dx:
        for i in prange(n_count * c_count):
            n, c = _split(i, c_count)
            _channel_dx(dy, x, mean, rstd, w, training, sum_dy[c], sum_dy_xhat[c], n, c, dx)
    _channel_param_grads(sum_dy, sum_dy_xhat, dw, db)


@_kernel
def _batch_norm_backward_pipelined(dy, x, mean, rstd, w, n_chunks, dx, dw, db):
    """Training's backward with dx, one task per chunk of channels, pipelined as the forward
    (``_batch_norm_train_pipelined``): the loop that writes channel c's dx takes channel c + 1's sums."""
    n_count, c_count, s_count = x.shape
    size = n_count * s_count                                           # elements per channel
    sum_dy, sum_dy_xhat = np.zeros(c_count), np.zeros(c_count)         # (C,)
    dy_nc, dy_xc_nc = np.empty((n_count, c_count)), np.empty((n_count, c_count))   # per (n, c) slice
    zero = x.dtype.type(0)
    for chunk in prange(n_chunks):
        first, end = chunk * c_count // n_chunks, (chunk + 1) * c_count // n_chunks
        scratch = np.empty(s_count, x.dtype)
        for n in range(n_count if first < end else 0):
            dyn, xn = dy[n, first], x[n, first]                        # dy[n, c], x[n, c] (S,)
            _, dy_nc[n, first], dy_xc_nc[n, first] = _centered_dx_segment_summing_next(
                dyn, xn, scratch, zero, zero, zero, zero, zero, zero, dyn, xn, np.float64(mean[first]))  # (N, C)
        for c in range(first, end):
            sum_dy[c], sum_dy_xhat[c] = _sum_dev(dy_nc[:, c], 0.0), _sum_dev(dy_xc_nc[:, c], 0.0)  # as _add_over_n
            sum_dy_xhat[c] *= rstd[c]                                  # sum_{n,s} dy * xhat; (C,)
            s = np.float64(rstd[c])                                    # rstd (C,)
            mean_gw, coef = w[c] * sum_dy[c] / size, s * w[c] * sum_dy_xhat[c] / size   # coef = s * mean(gw * xhat)
            t = x.dtype.type
            m_hi, m_lo = _hi_lo(np.float64(mean[c]), x)
            nxt = min(c + 1, end - 1)
            for n in range(n_count):
                _, dy_nc[n, nxt], dy_xc_nc[n, nxt] = _centered_dx_segment_summing_next(
                    dy[n, c], x[n, c], dx[n, c], w[c], t(s), m_hi, m_lo, t(mean_gw), t(coef), dy[n, nxt], x[n, nxt],
                    np.float64(mean[nxt]))
    _channel_param_grads(sum_dy, sum_dy_xhat, dw, db)


@_helper
def _channel_param_grads(sum_dy, sum_dy_xhat, dw, db):
    """dw = sum_A(dy * xhat), db = sum_A(dy), each if asked for (else (0,)); loops, not dw[:] = ...: no parallel
    region."""
    for c in range(dw.size):
        dw[c] = sum_dy_xhat[c]                                         # (C,) or (0,)
    for c in range(db.size):
        db[c] = sum_dy[c]                                              # (C,) or (0,)


# --------------------------------------------------------------------------- Dynamic Tanh: x rows (R, D)
# numba calls the C library's scalar tanhf once per element, which LLVM cannot vectorise: a numba DyT on it was 1.5x
# slower than NumPy's SIMD tanh. So float32 has its own tanh of plain arithmetic, which LLVM vectorises; float64 keeps
# the C library's (correctly rounded to float64 precision, where an approximation would lose the precision the
# gradient checks hold the library to). The float32 formula, with a = |z| (tanh is odd; NaN passes through):
#   a < 0.55:  tanh a = a + a^3 S(a^2)           S a degree-4 polynomial, fitted (relative error 1e-9) on [0, 0.55]
#   a >= 0.55: tanh a = 1 - 2 / (e^(2a) + 1)     e^y = 2^k e^r, k = round(y / ln 2), |r| <= ln(2) / 2,
#                                                e^r = 1 + r + r^2 E(r), E of degree 4 (relative error 3e-9)
# with a clamped at 10 (beyond it tanh rounds to 1). Over all float32 z in [1e-7, 12] (every fifth): at most 1.5 ulp
# from the float64 tanh, 0.15 ulp on average (NumPy's own float32 tanh: 1.4 ulp). Compiled with fused multiply-adds
# (``_float32_own``): the same bounds, and 8M tanh in cache 6.0 -> 4.7 ms on one thread (AVX-512 EPYC).
_F32 = np.float32
_S = tuple(_F32(c) for c in (-0.33333317565896076, 0.13332586368153612, -0.05385233571323569, 0.021071791646281562,
                             -0.006274406999923309))
_E = tuple(_F32(c) for c in (0.49999993415759536, 0.1666652018378125, 0.041668394048016755, 0.008368771364384532,
                             0.0013814431484540535))
_LOG2E, _LN2_HI, _LN2_LO = _F32(1.4426950408889634), _F32(0.693145751953125), _F32(1.4286068203094173e-06)


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose IEEE bits are the int32 ``bits`` (a bit cast, which LLVM vectorises)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.FloatType())
    return numba.types.float32(numba.types.int32), codegen


@_inline
def _exp_reduced_float32(y):
    """e^y = e^r 2^k for a float32 y with -126 <= k = round(y / ln 2) <= 127 (|y| below about 87.3), in float32
    arithmetic only (the formula above the constants); no range checks: the callers clamp y."""
    one = _F32(1.0)
    k = np.floor(y * _LOG2E + _F32(0.5))
    r = (y - k * _LN2_HI) - k * _LN2_LO
    e_r = one + r + r * r * ((((_E[4] * r + _E[3]) * r + _E[2]) * r + _E[1]) * r + _E[0])
    return e_r * _float32_from_bits((np.int32(k) + np.int32(127)) << np.int32(23))


_EXP_LO, _EXP_HI = _F32(-87.3), _F32(88.3)
"""``_exp_float32``'s range, where -126 <= k <= 127: below it e^y is 0 (IEEE's is subnormal there, from 1.2e-38 down),
above it inf (IEEE's is finite up to 88.72)."""


def _float32_own(float32_impl, libm):
    """A function of one number for kernels: ``float32_impl`` (plain float32 arithmetic, which LLVM vectorizes) for
    a float32, the C library's ``libm`` (a scalar call) otherwise, chosen by numba at compile time (an overload).
    Compiled with ``contract``: each product and the sum it feeds are one fused multiply-add where the CPU has them
    (one rounding instead of two); LLVM inlines it into the kernel with these flags, the kernel keeps its own."""
    def function(x):
        return libm(x)

    @overload(function, jit_options={"fastmath": {"contract"}, "error_model": "numpy"})
    def _by_type(x):
        if x == numba.types.float32:
            return float32_impl
        return lambda x: libm(x)
    function.__doc__ = f"{libm.__name__} in a kernel: {float32_impl.__name__} for float32, else the C library's."
    return function


def _exp_float32(x):
    """e^x for a float32 x in float32 arithmetic, vectorizable: ``_exp_reduced_float32`` of x clamped to
    [_EXP_LO, _EXP_HI]; 0 below, inf above, NaN stays NaN. Within 2 ulp of the float64 exp in that range
    (tests/test_fused_kernels.py). The attention softmax (fused_numba.py) calls it on x <= 0, where it is the exp
    of every normal float32 result."""
    e = _exp_reduced_float32(min(max(x, _EXP_LO), _EXP_HI))
    e = _F32(0.0) if x < _EXP_LO else e
    e = _F32(np.inf) if x > _EXP_HI else e
    return e if x == x else x


def _tanh_float32(x):
    """tanh(x) for a float32 x in float32 arithmetic only (the formula above the constants)."""
    one, two = _F32(1.0), _F32(2.0)
    a = min(abs(x), _F32(10.0))
    u = a * a
    near = a + a * u * ((((_S[4] * u + _S[3]) * u + _S[2]) * u + _S[1]) * u + _S[0])
    far = one - two / (_exp_reduced_float32(a + a) + one)              # e^(2a) = e^r 2^k, 0 <= k <= 29
    t = math.copysign(near if a < _F32(0.55) else far, x)
    return t if x == x else x


_exp = _float32_own(_exp_float32, math.exp)
_tanh = _float32_own(_tanh_float32, math.tanh)


@_kernel
def _dynamic_tanh_forward(x, alpha, w, b, y, t):
    r_count, d = x.shape
    keep = t.size > 0                                                  # t (R, D), or (0, D) when nothing is saved
    for r in prange(r_count):
        if keep:
            for j in range(d):
                t_rj = _tanh(alpha * x[r, j])                          # x, y, t (R, D); w, b (D,)
                t[r, j] = t_rj
                y[r, j] = w[j] * t_rj + b[j]
        else:                                                          # (one loop each: a branch inside a loop
            for j in range(d):                                         # stops LLVM vectorizing it)
                y[r, j] = w[j] * _tanh(alpha * x[r, j]) + b[j]


@_kernel
def _dynamic_tanh_backward(dy, x, alpha, w, t, n_chunks, dx, dalpha, dw, db):
    r_count, d = x.shape
    one = t.dtype.type(1.0)
    everything = dx.size and dalpha.size and dw.size and db.size
    da_part = np.empty((n_chunks, d if dalpha.size else 0))           # (chunks, D): per column, summed at the end
    dw_part, db_part = np.empty((n_chunks, dw.size)), np.empty((n_chunks, db.size))  # (chunks, D) or (chunks, 0)
    for c in prange(n_chunks):
        _zero(da_part[c])
        _zero(dw_part[c])
        _zero(db_part[c])
        da_block, dw_block, db_block = np.zeros(d, x.dtype), np.zeros(d, x.dtype), np.zeros(d, x.dtype)  # (D,)
        first, end = c * r_count // n_chunks, (c + 1) * r_count // n_chunks
        for r in range(first, end):
            if everything:                                             # one pass (training: the usual case)
                for j in range(d):
                    g, t_rj = dy[r, j], t[r, j]                        # dy, x, t, dx (R, D); w, *_block (D,)
                    dz = g * w[j] * (one - t_rj * t_rj)                # the gradient reaching z = alpha x
                    dx[r, j] = alpha * dz
                    da_block[j] += dz * x[r, j]
                    dw_block[j] += g * t_rj
                    db_block[j] += g
            else:                                                      # one loop per gradient asked for (a branch
                if dx.size:                                            # inside a loop stops LLVM vectorising it)
                    for j in range(d):
                        dx[r, j] = alpha * (dy[r, j] * w[j] * (one - t[r, j] * t[r, j]))
                if dalpha.size:
                    for j in range(d):
                        da_block[j] += dy[r, j] * w[j] * (one - t[r, j] * t[r, j]) * x[r, j]
                if dw.size:
                    for j in range(d):
                        dw_block[j] += dy[r, j] * t[r, j]
                if db.size:
                    for j in range(d):
                        db_block[j] += dy[r, j]
            if (r - first) % ROWS_PER_BLOCK == ROWS_PER_BLOCK - 1 or r == end - 1:
                _flush(da_block, da_part[c])                           # *_part (chunks, D)
                _flush(dw_block, dw_part[c])
                _flush(db_block, db_part[c])
    _add_partials(dw_part, dw)
    _add_partials(db_part, db)
    if dalpha.size:
        da_columns = np.empty(d)
        _add_partials(da_part, da_columns)                             # (D,), then over the columns in order
        acc = 0.0
        for j in range(d):
            acc += da_columns[j]
        dalpha[0] = acc


# --------------------------------------------------------------------------- LocalResponseNorm: x (N, C, S)
# One task per (n, span of positions s): it walks the channels in order, so the few rows of a window are read from
# cache, and every inner loop runs over a long span (a loop over a few hundred positions costs as much in set-up and
# alias checks as in work). The spans are whole rows unless there are fewer images than twice the threads. Each step
# of the walk is one loop that reads the step's new rows from memory and computes everything of them (the window's
# sum, the power, the outputs), so that the reads and the arithmetic overlap: at 32 x 64 x 4096 float32, 1 thread,
# forward 12 -> 7 ms and backward 14 -> 10-11 ms against passes of their own (the powers cost about 5 ms per pass in
# cache: this layer is bound by its arithmetic, not its memory).


ROOT_BETAS = (0.5, 0.75, 1.0)
"""The betas whose powers d^(-beta) LocalResponseNorm takes from square roots (``_negative_power``)."""
ROOTS = None
"""In each copy of a LocalResponseNorm kernel, whether beta is one of ROOT_BETAS (``_kernel_per_power`` sets it)."""


@_inline
def _negative_power(d, beta, roots, one):
    """d^(-beta) for a number d (``one``: 1 in its dtype). With ``roots`` (beta is one of ROOT_BETAS: 0.75, the
    default, 0.5 or 1) from square roots, r = d^(-1/2): r sqrt(r), r, or 1 / d (d may be negative then), which
    vectorise; with pow otherwise. ``roots`` is a constant of the kernel (``_kernel_per_power``): a pow left in a
    loop keeps LLVM from vectorising it; the choice among the three is a select, which does not."""
    if roots:
        r = one / np.sqrt(d)                                           # d^(-1/2)
        quarter = np.sqrt(r)                                           # d^(-1/4)
        return r * quarter if beta == 0.75 else (r if beta == 0.5 else one / d)
    return d ** -beta


@_inline
def _window_row(a, n, c, c_count, s0, pad):
    """Channel c's row of a window: a[n, c % R, s0:s0 + width] for a (N, R, S) that holds every channel (R = C)
    or a ring of the last R channels' rows; the row ``pad`` (width,) when c is not one of the c_count channels
    (the zero padding of the NumPy reference's ``window_sum``; c = -1 for a row the window does not have)."""
    if c < 0 or c >= c_count:
        return pad
    return a[n, c % a.shape[1], s0:s0 + pad.size]


@_inline
def _window_head(a, n, first, count, c_count, s0, zero, squared, out):
    """out = the sum from 0, in channel order, of the first ``count`` rows of a window, channels first, first + 1,
    ... (``_window_row``), squared or not; four rows a pass (count a multiple of 4; out is left as it is if count is
    0). The caller adds the window's last 1-4 rows in its own loop, with the newest row as it reads it from memory:
    a pass of its own would first wait for memory, then compute, and not both at once."""
    for g in range(first, first + count, 4):
        r0, r1 = _window_row(a, n, g, c_count, s0, zero), _window_row(a, n, g + 1, c_count, s0, zero)
        r2, r3 = _window_row(a, n, g + 2, c_count, s0, zero), _window_row(a, n, g + 3, c_count, s0, zero)
        base = zero if g == first else out                             # r*, out, zero (width,)
        if squared:
            for s in range(out.size):
                out[s] = base[s] + r0[s] * r0[s] + r1[s] * r1[s] + r2[s] * r2[s] + r3[s] * r3[s]
        else:
            for s in range(out.size):
                out[s] = base[s] + r0[s] + r1[s] + r2[s] + r3[s]


@_inline
def _window_tail(a, n, first, count, c_count, s0, zero):
    """Rows first, ..., first + count - 1 of a window (0 <= count <= 4; ``_window_row``), zero rows for the rest of
    four."""
    return (_window_row(a, n, first if count > 0 else -1, c_count, s0, zero),
            _window_row(a, n, first + 1 if count > 1 else -1, c_count, s0, zero),
            _window_row(a, n, first + 2 if count > 2 else -1, c_count, s0, zero),
            _window_row(a, n, first + 3 if count > 3 else -1, c_count, s0, zero))


@_kernel_per_power
def _local_response_norm_forward(x, size, alpha, beta, k, span, y, d):
    n_count, c_count, s_count = x.shape
    before = size // 2                                                 # the window W(c) = [c - before, c + after]
    head = (size - 1) // 4 * 4                                         # its first rows, summed ahead; 1-4 rows remain
    spans = (s_count + span - 1) // span
    a, k_, beta_, one = x.dtype.type(alpha / size), x.dtype.type(k), x.dtype.type(beta), x.dtype.type(1.0)
    keep = d.size > 0                                                  # d (N, C, S), or (0, C, S) when not saved
    for task in prange(n_count * spans):
        n, s0 = task // spans, task % spans * span
        width = min(span, s_count - s0)
        zero, sq_head = np.zeros(width, x.dtype), np.zeros(width, x.dtype)   # (width,): sq_head, the head's squares
        d_scratch = np.empty(0 if keep else width, x.dtype)           # (width,): d of channel c if d is not saved
        for c in range(c_count):
            first = c - before
            _window_head(x, n, first, head, c_count, s0, zero, True, sq_head)
            r0, r1, r2, r3 = _window_tail(x, n, first + head, size - head, c_count, s0, zero)   # up to c + after
            d_row = d[n, c, s0:s0 + width] if keep else d_scratch
            y_row, x_row = y[n, c, s0:s0 + width], x[n, c, s0:s0 + width]   # x, y, d (N, C, S); *_row, r* (width,)
            for s in range(width):
                d_row[s] = k_ + a * (sq_head[s] + r0[s] * r0[s] + r1[s] * r1[s] + r2[s] * r2[s] + r3[s] * r3[s])
                y_row[s] = x_row[s] * _negative_power(d_row[s], beta_, ROOTS, one)


@_kernel_per_power
def _local_response_norm_backward(dy, x, d, size, alpha, beta, span, dx):
    n_count, c_count, s_count = x.shape
    if dx.size == 0:
        return
    before = size // 2                                                 # W'(j) = [j - after, j + before], mirrored
    head = (size - 1) // 4 * 4                                         # its first rows, summed ahead; 1-4 rows remain
    spans = (s_count + span - 1) // span
    beta_, coef, one = x.dtype.type(beta), x.dtype.type(2 * alpha * beta / size), x.dtype.type(1.0)
    for task in prange(n_count * spans):
        n, s0 = task // spans, task % spans * span
        width = min(span, s_count - s0)
        q = np.empty((1, size, width), x.dtype)                        # ring: q[0, c % size] = g x scale / d, channel c
        zero, q_head = np.zeros(width, x.dtype), np.zeros(width, x.dtype)   # (width,): q_head, the head's sum
        ones, scratch = np.ones(width, x.dtype), np.empty(width, x.dtype)  # d and dx of a channel past the last
        # Step c takes in channel c (its first term of dx and its q) and finishes channel j = c - before, whose mirrored
        # window [c - size + 1, c] ends with c. Past the last channel, c is a padding channel (g = x = 0, d = 1: q = 0,
        # the window's zero padding); before the first j, j's rows are a scratch row and zeros.
        for c in range(c_count + before):
            j = c - before
            _window_head(q, 0, c - size + 1, head, c_count, 0, zero, False, q_head)
            t0, t1, t2, _ = _window_tail(q, 0, c - size + 1 + head, size - head - 1, c_count, 0, zero)
            g_row, x_row = _window_row(dy, n, c, c_count, s0, zero), _window_row(x, n, c, c_count, s0, zero)
            d_row, dx_row = _window_row(d, n, c, c_count, s0, ones), _window_row(dx, n, c, c_count, s0, scratch)
            xj_row, dxj_row = _window_row(x, n, j, c_count, s0, zero), _window_row(dx, n, j, c_count, s0, scratch)
            q_row = q[0, c % size]                                     # dy, x, d, dx (N, C, S); *_row, t* (width,)
            for s in range(width):
                scale = _negative_power(d_row[s], beta_, ROOTS, one)
                q_c = g_row[s] * x_row[s] * scale / d_row[s]
                q_row[s] = q_c
                dx_row[s] = g_row[s] * scale                           # channel c's first term
                dxj_row[s] -= coef * xj_row[s] * (q_head[s] + t0[s] + t1[s] + t2[s] + q_c)   # channel j's second


# --------------------------------------------------------------------------- the wrappers (the public kernels)
def _neutral(param, size, dtype, value):
    """A (size,) parameter array for the kernels: ``param`` itself, or ``value`` everywhere if it is None."""
    return np.full(size, value, dtype) if param is None else np.ascontiguousarray(param, dtype)


def _row_chunks(x):
    """How many chunks of rows a row kernel over x (R, D) splits into: the team size, at most R, at least 1."""
    return max(1, min(team_size(x.size), x.shape[0]))


def _backward(kernel, dy, x, args, needs, sizes, shapes=None, chunks="rows"):
    """The one backward wrapper: ``kernel(dy, x, *args, [n_chunks,] dx, *param_grads)``, with one gradient mask
    entry per differentiable input in input order (``needs``: x, then each parameter) and one output per
    parameter (``sizes``: its element count, D or C per feature, 1 for a scalar; ``shapes``: the shapes to return
    them in, default as computed). dx is allocated like x, each parameter gradient in float64; each is empty
    (0 rows or 0 elements: the gradient mask, the kernel skips it) unless needed, and comes back as None then.
    Row kernels (``chunks="rows"``) sum the parameter gradients over n_chunks = the team size (at most R) chunks
    of rows, one per thread, then add the chunks in order; channel kernels sum per channel themselves, and take
    n_chunks (``chunks``, an int) if they are pipelined, none if ``chunks`` is None."""
    dy, x = np.ascontiguousarray(dy), np.ascontiguousarray(x)
    dx = buffers.empty(x.shape, x.dtype) if needs[0] else np.empty((0,) + x.shape[1:], x.dtype)
    grads = [np.empty(size if need else 0) for size, need in zip(sizes, needs[1:])]
    if chunks is not None:
        n_chunks = _row_chunks(x) if chunks == "rows" else chunks
        _launch(kernel, n_chunks, dy, x, *args, n_chunks, dx, *grads)
    else:
        _run(kernel, x.size, dy, x, *args, dx, *grads)
    out = [dx if needs[0] else None]                                  # the contract's gradients, dtype of x
    for i, g in enumerate(grads):
        if not needs[i + 1]:
            out.append(None)
        elif shapes is None:
            out.append(g.astype(x.dtype))
        else:
            out.append(g.astype(x.dtype).reshape(shapes[i]))
    return tuple(out)


def _row_backward(kernel, dy, x, stats, weight, options, need_dx, need_dw, need_db):
    """A row norm's ``kernel(dy, x, *stats, w, *options, n_chunks, dx, dw, db)`` through ``_backward``."""
    d = x.shape[1]
    args = [np.ascontiguousarray(a) for a in stats] + [_neutral(weight, d, x.dtype, 1), *options]
    return _backward(kernel, dy, x, args, (need_dx, need_dw, need_db), (d, d))


def rms_norm_forward(x, weight, bias, eps, k, eps_outside):
    """The numba twin of rms_norm_forward in minigrad/ops/norm/rmsnorm.py."""
    x = np.ascontiguousarray(x)
    r_count, d = x.shape
    y, rstd = buffers.empty(x.shape, x.dtype), np.empty(r_count, x.dtype)
    n_chunks = _row_chunks(x)
    _launch(_rms_norm_forward, n_chunks, x, _neutral(weight, d, x.dtype, 1), _neutral(bias, d, x.dtype, 0),
            float(eps), int(k), bool(eps_outside), n_chunks, y, rstd)
    return y, rstd


def rms_norm_backward(dy, x, rstd, weight, eps, k, eps_outside, need_dx, need_dw, need_db):
    """The numba twin of rms_norm_backward in minigrad/ops/norm/rmsnorm.py."""
    return _row_backward(_rms_norm_backward, dy, x, (rstd,), weight, (int(k), bool(eps_outside)),
                         need_dx, need_dw, need_db)


def scale_norm_forward(x, scale, eps):
    """The numba twin of scale_norm_forward in minigrad/ops/norm/scalenorm.py (x rows (R, D), scale 0-d)."""
    x = np.ascontiguousarray(x)
    r_count = x.shape[0]
    y, s, active = buffers.empty(x.shape, x.dtype), np.empty(r_count, x.dtype), np.empty(r_count, x.dtype)
    _run(_scale_norm_forward, x.size, x, float(scale), float(eps), y, s, active)
    return y, s[:, None], active[:, None]


def scale_norm_backward(dy, x, scale, s, active, need_dx=True, need_dscale=True):
    """The numba twin of scale_norm_backward in minigrad/ops/norm/scalenorm.py: one scalar parameter gradient."""
    return _backward(_scale_norm_backward, dy, x, (float(scale), np.ascontiguousarray(s.reshape(-1)),
                                                   np.ascontiguousarray(active.reshape(-1))),
                     (need_dx, need_dscale), (1,), (np.shape(scale),))


def layer_norm_forward(x, weight, bias, eps):
    """The numba twin of layer_norm_forward in minigrad/ops/norm/layernorm.py."""
    x = np.ascontiguousarray(x)
    r_count, d = x.shape
    y, mean, rstd = buffers.empty(x.shape, x.dtype), np.empty(r_count, x.dtype), np.empty(r_count, x.dtype)
    n_chunks = _row_chunks(x)
    _launch(_layer_norm_forward, n_chunks, x, _neutral(weight, d, x.dtype, 1), _neutral(bias, d, x.dtype, 0),
            float(eps), n_chunks, y, mean, rstd)
    return y, mean, rstd


def layer_norm_backward(dy, x, mean, rstd, weight, need_dx, need_dw, need_db):
    """The numba twin of layer_norm_backward in minigrad/ops/norm/layernorm.py."""
    return _row_backward(_layer_norm_backward, dy, x, (mean, rstd), weight, (), need_dx, need_dw, need_db)


PIPELINED_SLICE_BYTES = 4096
"""GroupNorm's (and InstanceNorm's) forward pipelines its groups (``_group_norm_forward_pipelined``) when each
channel's slice takes at least this many bytes: it makes one call per channel slice, whose cost a short slice does
not repay. Forward, float32, the kernels alone, old and new alternating in one process, min ms at 1 / 2 threads:
GroupNorm(32) 32x64x4096 5.85 / 3.40 -> 4.97 / 3.10, InstanceNorm 5.67 / 3.83 -> 4.86 / 3.54; but GroupNorm(32)
32x64x64 0.08 / 0.05 -> 0.13 / 0.09 and 32x64x16 0.08 / 0.04 -> 0.15 / 0.08 (AVX2 EPYC). The backward with dx
does the same (``_group_norm_backward_pipelined``): through the API, forward + backward, float32, 32x64x64x64, old
and new in alternating fresh processes (6 each), median ms at 1 / 2 threads: GroupNorm(32) 12.2-14.2 / 6.1-6.6 ->
10.4-12.2 / 4.9-6.5, InstanceNorm2d 12.1-14.3 / 5.4-6.8 -> 10.0-12.4 / 4.8-5.8; 16x64x32x32 (4 MB) unchanged, 1.0-1.2 /
0.7 (AVX-512 Xeon). The two kernels' results may differ in the last bit; which one runs depends on the shape alone
(and, for the backward, on whether dx is asked for)."""


def group_norm_forward(x, num_groups, weight, bias, eps):
    """The numba twin of group_norm_forward in minigrad/ops/norm/groupnorm.py."""
    x = np.ascontiguousarray(x)
    n, c, _ = x.shape
    y, mean, rstd = buffers.empty(x.shape, x.dtype), np.empty((n, num_groups), x.dtype), np.empty((n, num_groups),
                                                                                                    x.dtype)
    params = (int(num_groups), _neutral(weight, c, x.dtype, 1), _neutral(bias, c, x.dtype, 0), float(eps))
    if x.shape[2] * x.itemsize >= PIPELINED_SLICE_BYTES:
        n_chunks = _row_chunks(x.reshape(n * num_groups, -1))             # the groups as rows (N*G, C/G*S)
        _launch(_group_norm_forward_pipelined, n_chunks, x, *params, n_chunks, y, mean, rstd)
    else:
        _run(_group_norm_forward, x.size, x, *params, y, mean, rstd)
    return y, mean, rstd


def group_norm_backward(dy, x, mean, rstd, num_groups, weight, need_dx, need_dw, need_db):
    """The numba twin of group_norm_backward in minigrad/ops/norm/groupnorm.py."""
    n, c, _ = x.shape
    stats = (np.ascontiguousarray(mean), np.ascontiguousarray(rstd), int(num_groups), _neutral(weight, c, x.dtype, 1))
    if need_dx and x.shape[2] * x.itemsize >= PIPELINED_SLICE_BYTES:
        n_chunks = _row_chunks(np.reshape(x, (n * num_groups, -1)))     # the groups as rows (N*G, C/G*S)
        return _backward(_group_norm_backward_pipelined, dy, x, stats, (need_dx, need_dw, need_db), (c, c),
                         chunks=n_chunks)
    return _backward(_group_norm_backward, dy, x, stats, (need_dx, need_dw, need_db), (c, c), chunks=None)


def batch_norm_stats(x):
    """The numba twin of batch_norm_stats in minigrad/ops/norm/batchnorm.py."""
    return _batch_norm_statistics(x, 0.0, 0.0, None, None)[:2]


def batch_norm_train_stats(x, eps, momentum, running_mean, running_var):
    """The numba twin of batch_norm_train_stats in minigrad/ops/norm/batchnorm.py."""
    mean, _, rstd = _batch_norm_statistics(x, eps, momentum, running_mean, running_var)
    return mean, rstd


BY_CHANNEL_SLICE_BYTES = 4096
BY_CHANNEL_CHANNELS_PER_THREAD = 2
"""BatchNorm's training kernels run by chunks of channels, pipelined (``_batch_norm_train_pipelined``,
``_batch_norm_backward_pipelined``: x and dy read from memory once, y and dx written once), when its slices (n, c)
are long (``BY_CHANNEL_SLICE_BYTES``: the kernels make one call per slice, which a short slice does not repay) and
there are at least ``BY_CHANNEL_CHANNELS_PER_THREAD`` channels per thread numba may run
(``numba.config.NUMBA_NUM_THREADS``, fixed for the process: which kernel runs, and so its bits, depends on the shape
alone, not on ``set_num_threads``); else one task per slice (n, c), in two parallel steps (statistics then y, sums
then dx), each reading x (and dy) once. The two may differ in the last bit. BatchNorm2d through the API, float32,
forward + backward, median ms per slice / pipelined, 1 thread and 2 threads, 3 fresh processes each, alternating
(Intel Xeon with AVX-512, 2 cores): 32x64x64x64 (32 MB, 16 KB slices) 16.4-17.1 / 12.3-13.0 and 7.4-8.0 / 6.1-6.6
(the earlier kernel, by channel but not pipelined); 8x64x128x128 14.3-15.7 / 11.3-11.8 and 6.9-7.5 / 5.5-5.8;
32x64x32x32 (4 KB slices) 2.7 / 2.0-2.1 and 1.6 / 1.1-1.2; 4x64x64x64 (4 MB) 1.5-1.6 / 1.0-1.1 and 0.9-1.0 / 0.7;
but 16x64x16x16 (1 KB slices) 0.5 / 0.5 and 0.3 / 0.3, and 32x64x8x8 0.25 / 0.4 and 0.18 / 0.2."""


def _by_channel(x):
    """Whether BatchNorm's training kernels on x (N, C, S) run by chunks of channels (``BY_CHANNEL_SLICE_BYTES``)."""
    n_count, c_count, s_count = x.shape
    return (s_count * x.itemsize >= BY_CHANNEL_SLICE_BYTES
            and c_count >= BY_CHANNEL_CHANNELS_PER_THREAD * numba.config.NUMBA_NUM_THREADS)


def _channel_chunks(x):
    """How many chunks of channels a pipelined BatchNorm kernel over x (N, C, S) splits into: the team size, at most
    C, at least 1."""
    return max(1, min(team_size(x.size), x.shape[1]))


def _batch_norm_statistics(x, eps, momentum, running_mean, running_var, weight=None, bias=None, y=None):
    """(mean, var, rstd) (C,) of x (N, C, S); the running buffers ((C,) arrays of x's dtype) blended in place
    unless None. Given ``y`` (an array like x), also y = the normalized x times weight plus bias."""
    x = np.ascontiguousarray(x)
    c = x.shape[1]
    no_buffer = np.empty(0, x.dtype)
    running = (no_buffer if running_mean is None else running_mean, no_buffer if running_var is None else running_var)
    mean, var, rstd = np.empty(c, x.dtype), np.empty(c, x.dtype), np.empty(c, x.dtype)
    params = (_neutral(weight, c, x.dtype, 1), _neutral(bias, c, x.dtype, 0))
    if y is not None and _by_channel(x):
        n_chunks = _channel_chunks(x)
        _launch(_batch_norm_train_pipelined, n_chunks, x, float(eps), float(momentum), *running, *params, n_chunks,
                y, mean, var, rstd)
        return mean, var, rstd
    _run(_batch_norm_stats, x.size, x, float(eps), float(momentum), *running, mean, var, rstd)
    if y is not None:
        _run(_batch_norm_forward, x.size, x, mean, rstd, *params, y)
    return mean, var, rstd


def batch_norm_train(x, eps, momentum, running_mean, running_var, weight, bias):
    """The numba twin of batch_norm_train in minigrad/ops/norm/batchnorm.py."""
    y = buffers.empty(x.shape, x.dtype)
    mean, _, rstd = _batch_norm_statistics(x, eps, momentum, running_mean, running_var, weight, bias, y)
    return y, mean, rstd


def batch_norm_forward(x, mean, rstd, weight, bias):
    """The numba twin of batch_norm_forward in minigrad/ops/norm/batchnorm.py."""
    x = np.ascontiguousarray(x)
    c = x.shape[1]
    y = buffers.empty(x.shape, x.dtype)
    _run(_batch_norm_forward, x.size, x, np.ascontiguousarray(mean), np.ascontiguousarray(rstd),
         _neutral(weight, c, x.dtype, 1), _neutral(bias, c, x.dtype, 0), y)
    return y


def batch_norm_backward(dy, x, mean, rstd, weight, training, need_dx, need_dw, need_db):
    """The numba twin of batch_norm_backward in minigrad/ops/norm/batchnorm.py."""
    c = x.shape[1]
    stats = (np.ascontiguousarray(mean), np.ascontiguousarray(rstd), _neutral(weight, c, x.dtype, 1))
    if training and need_dx and _by_channel(x):
        return _backward(_batch_norm_backward_pipelined, dy, x, stats, (need_dx, need_dw, need_db), (c, c),
                         chunks=_channel_chunks(x))
    return _backward(_batch_norm_backward, dy, x, stats + (bool(training),), (need_dx, need_dw, need_db), (c, c),
                     chunks=None)


def dynamic_tanh_forward(x, alpha, weight, bias, keep=True):
    """The numba twin of dynamic_tanh_forward in minigrad/ops/norm/dynamictanh.py (x rows (R, D), alpha 0-d)."""
    x = np.ascontiguousarray(x)
    d = x.shape[1]
    y = buffers.empty(x.shape, x.dtype)
    t = buffers.empty(x.shape, x.dtype) if keep else np.empty((0, d), x.dtype)   # (t: saved for backward)
    _run(_dynamic_tanh_forward, x.size, x, x.dtype.type(alpha), _neutral(weight, d, x.dtype, 1),
         _neutral(bias, d, x.dtype, 0), y, t)
    return y, (t if keep else None)


def dynamic_tanh_backward(dy, x, alpha, weight, t, need_dx=True, need_dalpha=True, need_dw=True, need_db=True):
    """The numba twin of dynamic_tanh_backward in minigrad/ops/norm/dynamictanh.py: alpha's gradient 0-d."""
    d = x.shape[1]
    return _backward(_dynamic_tanh_backward, dy, x, (x.dtype.type(alpha), _neutral(weight, d, x.dtype, 1),
                                                     np.ascontiguousarray(t)),
                     (need_dx, need_dalpha, need_dw, need_db), (1, d, d), ((), (d,), (d,)))


def local_response_norm_forward(x, size, alpha, beta, k, keep=True):
    """The numba twin of local_response_norm_forward in minigrad/ops/norm/localresponse.py (x (N, C, S))."""
    x = np.ascontiguousarray(x)
    y = buffers.empty(x.shape, x.dtype)
    d = buffers.empty(x.shape, x.dtype) if keep else np.empty((0,) + x.shape[1:], x.dtype)   # (d: saved for backward)
    _run(_local_response_norm_forward[beta in ROOT_BETAS], x.size, x, int(size), float(alpha), float(beta), float(k),
         _lrn_span(x), y, d)
    return y, (d if keep else None)


def local_response_norm_backward(dy, x, d, size, alpha, beta, need_dx=True):
    """The numba twin of local_response_norm_backward in minigrad/ops/norm/localresponse.py (no parameters)."""
    return _backward(_local_response_norm_backward[beta in ROOT_BETAS], dy, x,
                     (np.ascontiguousarray(d), int(size), float(alpha), float(beta), _lrn_span(x)), (need_dx,), (),
                     chunks=None)


def _lrn_span(x):
    """Positions per LocalResponseNorm task: whole rows, or rows cut so that there are about twice as many tasks as
    threads (results do not depend on it: no sum runs across positions)."""
    n, _, s = x.shape
    pieces = -(-2 * team_size(x.size) // max(n, 1))                   # ceil(2 threads / N)
    return max(1, -(-s // pieces))
