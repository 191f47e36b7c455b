"""A probe, not a benchmark of minigrad: could a direct 3x3 convolution written in numba replace the im2col +
OpenBLAS lowering of minigrad/ops/conv.py? It times, on the CNN layers of bench_conv.py (float32, stride 1,
padding 1), a register-blocked numba kernel against OpenBLAS's matmul on the same layer's im2col matrices
(the product the lowering computes), and reports GFLOP/s of each at the thread count given.

    python bench/probe_direct_conv.py            # 1 and 2 threads, one fresh process each

The kernel takes the input padded and channels-last, (N, H + 2, W + 2, C), so that a kernel row's 3 * C values
(kw, c) are contiguous, and the weight as (O, 3, 3 * C); each task is one output row of one image, computing
4 output channels by 4 positions at a time in 16 scalar accumulators whose loop over (kw, c) LLVM vectorizes.
It checks its result against NumPy before timing. Measured on the 2-core Xeon (README, "Convolutions"): a
fifth of OpenBLAS's GFLOP/s, so the lowering stays.
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_line  # noqa: E402

LAYERS = [(32, 3, 32, 32, 32), (32, 32, 16, 16, 64), (32, 64, 8, 8, 64)]   # N, C, H, W -> O


def probe(threads):
    os.environ["NUMBA_NUM_THREADS"] = str(threads)
    from numba import njit, prange

    @njit(parallel=True, fastmath=True, error_model="numpy", boundscheck=False)
    def conv3x3(xp, w, out):
        n_count, _, wp, c = xp.shape
        o_count, kh_count, kwc = w.shape
        h, width = out.shape[2], out.shape[3]
        for task in prange(n_count * h):
            n, row = task // h, task % h
            for o in range(0, o_count, 4):
                for q in range(0, width, 4):
                    a00 = a01 = a02 = a03 = a10 = a11 = a12 = a13 = np.float32(0)
                    a20 = a21 = a22 = a23 = a30 = a31 = a32 = a33 = np.float32(0)
                    for kh in range(kh_count):
                        xr = xp[n, row + kh].reshape(wp * c)             # one padded input row, (W + 2) * C
                        p0 = q * c
                        w0, w1, w2, w3 = w[o, kh], w[o + 1, kh], w[o + 2, kh], w[o + 3, kh]   # (3 * C,) each
                        for k in range(kwc):
                            x0, x1, x2, x3 = xr[p0 + k], xr[p0 + c + k], xr[p0 + 2 * c + k], xr[p0 + 3 * c + k]
                            a00 += w0[k] * x0; a01 += w0[k] * x1; a02 += w0[k] * x2; a03 += w0[k] * x3  # noqa: E702
                            a10 += w1[k] * x0; a11 += w1[k] * x1; a12 += w1[k] * x2; a13 += w1[k] * x3  # noqa: E702
                            a20 += w2[k] * x0; a21 += w2[k] * x1; a22 += w2[k] * x2; a23 += w2[k] * x3  # noqa: E702
                            a30 += w3[k] * x0; a31 += w3[k] * x1; a32 += w3[k] * x2; a33 += w3[k] * x3  # noqa: E702
                    for i, (b0, b1, b2, b3) in enumerate(((a00, a01, a02, a03), (a10, a11, a12, a13),
                                                          (a20, a21, a22, a23), (a30, a31, a32, a33))):
                        out[n, o + i, row, q], out[n, o + i, row, q + 1] = b0, b1
                        out[n, o + i, row, q + 2], out[n, o + i, row, q + 3] = b2, b3

    def best(fn, repeats=20):
        fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    rng = np.random.default_rng(0)
    for n, c, h, width, o in LAYERS:
        x = rng.standard_normal((n, c, h, width), dtype=np.float32)
        w = rng.standard_normal((o, c, 3, 3), dtype=np.float32)
        xp = np.zeros((n, h + 2, width + 2, c), np.float32)
        xp[:, 1:-1, 1:-1] = x.transpose(0, 2, 3, 1)
        w_rows = np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(o, 3, 3 * c)
        out = np.empty((n, o, h, width), np.float32)
        conv3x3(xp, w_rows, out)
        cols = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3),
                                                        axis=(2, 3))                  # (N, C, H, W, 3, 3)
        cols = np.ascontiguousarray(cols.transpose(1, 4, 5, 0, 2, 3)).reshape(c * 9, n * h * width)
        reference = (w.reshape(o, c * 9) @ cols).reshape(o, n, h, width).transpose(1, 0, 2, 3)
        np.testing.assert_allclose(out, reference, rtol=1e-3, atol=1e-3)
        flops = 2 * n * o * h * width * c * 9
        direct = best(lambda: conv3x3(xp, w_rows, out))
        blas = best(lambda: w.reshape(o, c * 9) @ cols)
        print(f"{threads} thread(s), {n}x{c}x{h}x{width} -> {o}: numba direct {flops / direct / 1e9:6.1f} GFLOP/s, "
              f"OpenBLAS matmul on im2col {flops / blas / 1e9:6.1f} GFLOP/s")


def main():
    if len(sys.argv) > 1:
        return probe(int(sys.argv[1]))
    print(machine_line())
    for threads in (1, 2):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
        subprocess.run([sys.executable, __file__, str(threads)], env=env, check=True)


if __name__ == "__main__":
    main()
