"""What every norm shares: the compute dtype, and the composite "normalize over these axes" step.

``normalize`` is the composite (autograd-differentiated) form of the one kernel behind all
five layers (normalization.md §1)::

    centered:   xhat = (x - mean_A(x)) / sqrt(mean_A((x - mean_A(x))^2) + eps)
    uncentered: xhat = x / sqrt(mean_A(x^2) + eps)                 (RMSNorm)

The fused Functions compute the same thing in one kernel call and differentiate it by hand.
"""
import numpy as np


def compute_dtype(dtype):
    """float16 is computed in float32 (so x**2 cannot overflow), then cast back once at the end."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def normalize(x, dims, eps, centered=True):
    """xhat over ``dims`` (a tuple of axes) with ordinary minigrad ops, so autograd differentiates it."""
    xc = x - x.mean(dims, keepdim=True) if centered else x
    var = (xc * xc).mean(dims, keepdim=True)
    return xc * (var + eps).rsqrt()
