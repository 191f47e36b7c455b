"""float32 -> bfloat16 rounding as one serial numba loop on the bits, for large arrays.

A bfloat16 is the upper half of a float32, so rounding to nearest, ties to even, is integer arithmetic on
the float32's bits u: add 0x7FFF plus the lowest kept bit (bit 16), then keep the upper 16 bits (a carry
into the exponent rounds up to the next binade, or to infinity, as it should). A NaN becomes the quiet NaN
0x7FC0 with its sign, as ``ml_dtypes`` (and PyTorch) give it. Bit for bit ``ml_dtypes``' cast, over every
bfloat16 pattern with the low halves of ties and their neighbours (tests/test_bfloat16_numba.py).

Why: ``ml_dtypes`` rounds one element at a time through a generic cast loop, 3-4x slower than this loop
(which LLVM vectorizes) from about 64K elements up: 8M elements 3.5-6.3 ms against 1.5-1.8 ms, one thread,
AMD EPYC. Widening is a shift too, but ``ml_dtypes``' widening is already as fast as the memory traffic, so
it stays with ``ml_dtypes``. Serial on purpose: a parallel version (measured) lost to ``ml_dtypes`` on the
shared 2-core machine when another process held the other core (its threads wait for each other), and a
copy is memory-bound anyway. ``dtypes.cast_array`` calls ``narrow`` on the numba backend for arrays of at
least ``NARROW_FROM`` elements. Self-contained (numba's on-disk cache is per file).
"""
import numpy as np
from numba import njit

from . import buffers


@njit(cache=True, error_model="numpy")
def _narrow(src, dst):
    for i in range(src.size):
        u = src[i]                                                      # src (n,) uint32: float32 bits
        if (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):         # NaN: quiet, sign kept
            dst[i] = np.uint16(((u >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7FC0))
        else:                                                           # + 0x7FFF + bit 16: ties go to even
            dst[i] = np.uint16((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))


def narrow(array, bfloat16, pooled=False):
    """The float32 ``array`` rounded to a new C-contiguous array of dtype ``bfloat16`` (of its shape); in reused
    memory (``buffers.empty``: no page faults) if ``pooled``, for a norm's output or input gradient."""
    src = np.ascontiguousarray(array, dtype=np.float32).reshape(-1).view(np.uint32)
    out = (buffers.empty if pooled else np.empty)(array.shape, np.uint16)
    _narrow(src, out.reshape(-1))                                       # out (n,) uint16: bfloat16 bits
    return out.view(bfloat16)
