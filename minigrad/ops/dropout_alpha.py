"""Alpha dropout (Klambauer et al., 2017): dropout that keeps a SELU network's activations at zero mean and unit
variance. A dropped unit is set to SELU's negative saturation value -alpha' (alpha' = lambda alpha = 1.7581),
then the result is mapped affinely so that mean and variance are unchanged:

    y = a (x m + (-alpha') (1 - m)) + b,   m ~ Bernoulli(1 - p),
    a = ((1 - p)(1 + p alpha'^2))^(-1/2),   b = a alpha' p

computed as y = x (a m) + a alpha' (m - 1 + p): an affine map of x with a drawn slope a m, so dx = dout a m.
``feature_alpha_dropout`` draws one m per channel (per (n, c) of an (N, C, *) input) instead of per element.
"""
import numpy as np

from .._checks import takes_tensors
from ..random import numpy_rng
from ..tensor import Tensor

_SELU_SATURATION = 1.7580993408473766   # lambda * alpha of SELU


def _alpha_dropout(input, p, training, inplace, mask_shape):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    dtype = input.dtype
    if p == 1:
        return input.mul_(Tensor(np.zeros((), dtype))) if inplace else input * Tensor(np.zeros((), dtype))
    keep = (numpy_rng().random(mask_shape) >= p).astype(np.float64)
    a = 1.0 / np.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    slope = Tensor((keep * a).astype(dtype))
    shift = Tensor(((keep - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p).astype(dtype))
    return input.mul_(slope).add_(shift) if inplace else input * slope + shift


@takes_tensors("input")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of every element (identity unless ``training``)."""
    return _alpha_dropout(input, p, training, inplace, input.shape)


@takes_tensors("input")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels of (N, C, *) input (identity unless ``training``)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if training and 0 < p and input.numel() and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape[:2]) + (1,) * (input.ndim - 2))


__all__ = ["alpha_dropout", "feature_alpha_dropout"]
