"""Accumulation helpers shared by the NumPy reference kernels (numpy_rows.py, numpy_channels.py).

Sums and means accumulate in float64 and are rounded once to the data's dtype. Centering uses the
float64 mean split into hi + lo parts of the data's dtype: for x near the mean, ``x - hi`` is exact
(Sterbenz), so ``(x - hi) - lo`` is x - mean to the data's rounding even when |mean| >> std, where
subtracting the mean rounded to float32 would be off by up to ulp(mean)/2 (5e-4 at a mean of 1e4).
"""
import numpy as np


def sum64(a, axis, keepdims=False):
    """a.sum(axis) accumulated in float64, returned in a's dtype."""
    return a.sum(axis=axis, dtype=np.float64, keepdims=keepdims).astype(a.dtype, copy=False)


def mean64(a, axis, keepdims=False):
    """a.mean(axis) accumulated in float64, returned in a's dtype."""
    return a.mean(axis=axis, dtype=np.float64, keepdims=keepdims).astype(a.dtype, copy=False)


def center(x, mean):
    """x - mean with ``mean`` in float64 (broadcastable against x), computed in x's dtype as (x - hi) - lo."""
    hi = mean.astype(x.dtype)
    if x.dtype == np.float64:
        return x - hi
    return (x - hi) - (mean - hi).astype(x.dtype)


def exact_mean(x, saved_mean, axis):
    """The float64 mean of x over ``axis`` (keepdims) recovered from the mean a forward saved rounded to x's
    dtype: saved + mean(x - saved). One pass over x, and the backward centers exactly as the forward did."""
    return saved_mean.astype(np.float64) + (x - saved_mean).mean(axis=axis, dtype=np.float64, keepdims=True)
