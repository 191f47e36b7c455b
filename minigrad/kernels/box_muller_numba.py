"""PyTorch's scalar Box-Muller loop for many pairs at once (``_pytorch_stream.standard_normal_doubles``).

PyTorch's ``normal_distribution<double>`` calls the C library's log1p, sin and cos for each pair. NumPy's float64
log1p is a SIMD routine of its own that rounds the last bit otherwise (in 7% of uniforms on an AVX-512 EPYC), so
whole-array NumPy arithmetic drifted from PyTorch's draws, and from the sample PyTorch keeps in its generator's
state. Here numba calls the C library's functions element by element, as PyTorch does: the same bits.
"""
import math

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def box_muller_pairs(u):
    """(r cos theta, r sin theta) of each pair (u1, u2) of ``u`` (2 * pairs,), interleaved like u:
    r = sqrt(-2 log(1 - u2)), theta = 2 pi u1."""
    out = np.empty(u.size)
    for i in range(u.size // 2):
        u1, u2 = u[2 * i], u[2 * i + 1]
        radius, theta = math.sqrt(-2.0 * math.log1p(-u2)), 2.0 * math.pi * u1
        out[2 * i] = radius * math.cos(theta)
        out[2 * i + 1] = radius * math.sin(theta)
    return out
