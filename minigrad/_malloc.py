"""Keep freed memory in the process for the next arrays: no page fault per fresh array.

A training step allocates and frees the same few hundred arrays every step (activations, gradients,
temporaries of 0.1-10 MB). glibc's malloc serves blocks above its mmap threshold with fresh ``mmap``
pages and gives freed memory at the top of the heap back to the OS above its trim threshold, so every
step touches new pages: on the README's Transformer step, about 11,500 page faults and 20 ms of kernel
time (10% of the step) against 1,600 for PyTorch, whose allocator caches blocks.

``keep_freed_memory()`` raises both thresholds (``mallopt``): arrays up to 32 MB come from the heap and
the heap is not trimmed, so the next step reuses the same pages (the step then takes ~2 page faults).
The cost is that the process keeps its peak heap until it exits, as PyTorch's caching allocator does.
Arrays above 32 MB still get their own ``mmap`` (and NumPy's huge pages). Applied when minigrad is
imported, on glibc only; ``MINIGRAD_MALLOC=default`` in the environment leaves malloc as it is.
"""
import ctypes
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3      # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 2 ** 20                    # glibc's largest allowed mmap threshold on 64-bit
TRIM_THRESHOLD = 2 ** 31 - 1                     # (an int): never give the top of the heap back


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds; returns whether both were set (False off glibc)."""
    if os.environ.get("MINIGRAD_MALLOC", "").strip().lower() == "default":
        return False
    try:
        try:                                     # glibc's name on Linux, without find_library's ldconfig run (7 ms)
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            from ctypes.util import find_library
            libc = ctypes.CDLL(find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):            # not glibc (macOS, Windows, musl without mallopt)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
