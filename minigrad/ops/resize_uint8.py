"""uint8 image resizing, as PyTorch's CPU kernels do it: ``interpolate`` in mode ``bilinear`` or ``bicubic`` on a
uint8 (N, C, H, W) image, with or without ``antialias``. Integer arithmetic in separable passes, so the result is
PyTorch's to the bit (tests/test_interpolate_uint8.py compares them) rather than a float resize rounded once.

One pass per resized axis: the last axis (W) first, then H; an axis whose size does not change is skipped, and each
pass's result is a uint8 image again. For an axis of ``size`` inputs and ``out`` outputs, output o reads the taps
``first[o] .. first[o] + k - 1`` (taps past the input have weight 0):

* the float64 weights: with antialias, the filter (triangle, or Keys' cubic with a = -0.5) widened by the
  downscaling factor and normalized to sum 1, as for float input (``_antialias_taps``); without, the k = 2 or 4
  fixed taps around the source position, with Keys' a = -0.75 as float bicubic, those outside the input added
  into the edge taps (``_fixed_taps``);
* as int16 at a precision of p bits, the largest p <= 22 at which the largest weight times 2^(p+1) stays below
  2^15: w_int = round(w * 2^p), halves away from zero (``_fixed_point``);
* out[o] = clamp((2^(p-1) + sum_j w_int[o, j] * x[first[o] + j]) >> p, 0, 255): a rounding of the weighted sum
  to the nearest integer in integer arithmetic (``_resample_axis``).

Integer images have no gradient: the result does not require grad.
"""
import functools
import math

import numpy as np

from .pool import _CUBIC_A, _cubic_aa, _step, _triangle


def _antialias_taps(size, out, step, kernel, half_width):
    """(first (out,), weights (out, k), their maximum): the filter widened by max(step, 1) around each output's
    centre, normalized to sum 1."""
    support = half_width * step if step >= 1 else half_width
    inverse = 1.0 / step if step >= 1 else 1.0
    k = math.ceil(support) * 2 + 1
    first, weights, w_max = np.zeros(out, np.int64), np.zeros((out, k)), 0.0
    for o in range(out):
        centre = step * (o + 0.5)
        lo = max(int(centre - support + 0.5), 0)                  # int(): toward zero, as the C++ cast
        n = min(max(min(int(centre + support + 0.5), size) - lo, 0), k)
        w = kernel((np.arange(n) + lo - centre + 0.5) * inverse)
        total = 0.0
        for v in w:                                               # in order: the same rounding as PyTorch's sum
            total += v
        if total != 0:
            w = w / total
            w_max = max(w_max, w.max(initial=0.0))
        first[o], weights[o, :n] = lo, w
    return first, weights, w_max


def _fixed_taps(size, out, step, align_corners, kernel, k):
    """(first, weights, running maximum): the k fixed taps floor(x) - k/2 + 1 .. floor(x) + k/2 of each output's
    source position x, the weights of taps outside the input added into the first or last tap inside it."""
    half = k // 2
    first, weights, w_max = np.zeros(out, np.int64), np.zeros((out, k)), 0.0
    for o in range(out):
        x = step * o if align_corners else step * (o + 0.5) - 0.5
        if not align_corners and k == 2 and x < 0:
            x = 0.0
        base = min(int(math.floor(np.float32(x))), size - 1)      # floor of x rounded to float32, as PyTorch
        t = min(max(x - base, 0.0), 1.0)
        lo_unbound = base - half + 1
        lo = max(lo_unbound, 0)
        n = min(max(min(base + half + 1, size) - lo, 0), k)
        slot = 0
        for j in range(k):
            if lo_unbound + j <= 0:
                slot = 0
            elif lo_unbound + j >= size - 1:
                slot = n - 1
            weights[o, slot] += float(kernel(np.float64(j + 1 - half) - t))
            w_max = max(w_max, weights[o, slot])                  # PyTorch's maximum runs over the partial sums
            slot += 1
        first[o] = lo
    return first, weights, w_max


def _fixed_point(weights, w_max):
    """(int weights, p): weights * 2^p rounded half away from zero, p the largest precision <= 22 at which
    w_max * 2^(p+1) (rounded) stays below 2^15."""
    p = 0
    while p < 22 and int(0.5 + w_max * (1 << (p + 1))) < (1 << 15):
        p += 1
    scaled = weights * (1 << p)
    return np.trunc(np.where(scaled < 0, scaled - 0.5, scaled + 0.5)).astype(np.int64), p


def _resample_axis(x, axis, first, w_int, p):
    """x (uint8) with ``axis`` resampled: out[o] = clamp((2^(p-1) + sum_j w_int[o, j] x[first[o] + j]) >> p)."""
    n_in = x.shape[axis]
    out_shape = x.shape[:axis] + (first.size,) + x.shape[axis + 1:]
    trailing = (1,) * (x.ndim - axis - 1)
    acc = np.full(out_shape, 1 << (p - 1), np.int64)
    for j in range(w_int.shape[1]):
        taps = np.take(x, np.minimum(first + j, n_in - 1), axis=axis).astype(np.int64)   # weight 0 past the input
        acc += taps * w_int[:, j].reshape((-1,) + trailing)
    return np.clip(acc >> p, 0, 255).astype(np.uint8)


def resize_uint8(x, sizes, scales, mode, align_corners, antialias):
    """x (N, C, H, W) uint8 resized to ``sizes`` (H', W') in ``mode`` bilinear or bicubic (``scales``: the given scale
    factors or None per axis), PyTorch's fixed-point way (module docstring)."""
    k = 2 if mode == "bilinear" else 4
    kernel = _triangle if k == 2 else (_cubic_aa if antialias else functools.partial(_cubic_aa, a=_CUBIC_A))
    out = x
    for axis in (3, 2):                                           # the last axis first
        size, size_out, scale = x.shape[axis], sizes[axis - 2], scales[axis - 2]
        if size == size_out:
            continue
        step = _step(size, size_out, scale, align_corners)
        if antialias:
            first, weights, w_max = _antialias_taps(size, size_out, step, kernel, k / 2)
        else:
            first, weights, w_max = _fixed_taps(size, size_out, step, align_corners, kernel, k)
        out = _resample_axis(out, axis, first, *_fixed_point(weights, w_max))
    return out.copy() if out is x else out
