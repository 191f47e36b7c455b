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
from ..random import keep_mask
from ..tensor import Tensor
from .activation import check_dropout_p, dropout_gate
from .pool import feature_noise_shape

_SELU_SATURATION = 1.7580993408473766   # lambda * alpha of SELU


def _alpha_dropout(input, p, training, inplace, noise_shape):
    """Alpha dropout with one draw per entry of ``noise_shape(input)``."""
    check_dropout_p(p)
    done = dropout_gate(input, p, training, inplace, alpha=True, noise_shape=noise_shape)
    return alpha_noise(input, p, inplace, noise_shape(input)) if done is None else done


def alpha_noise(input, p, inplace, mask_shape):
    """Alpha dropout's draw, one per entry of ``mask_shape`` (``dropout_gate`` has passed the input and p)."""
    dtype = input.dtype
    keep = keep_mask(mask_shape, 1 - p, input if tuple(mask_shape) == tuple(input.shape) else None)
    keep = keep.astype(np.float64)
    a = 1.0 / np.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    slope = Tensor((keep * a).astype(dtype))
    shift = Tensor(((keep - 1) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p).astype(dtype))
    return input.mul_(slope).add_(shift) if inplace else input * slope + shift


@takes_tensors("input")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of every element (identity unless ``training``)."""
    return _alpha_dropout(input, p, training, inplace, lambda x: x.shape)


@takes_tensors("input")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels of (N, C, *) input (identity unless ``training``)."""
    return _alpha_dropout(input, p, training, inplace, feature_noise_shape)


__all__ = ["alpha_dropout", "feature_alpha_dropout"]
