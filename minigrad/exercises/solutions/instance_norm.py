"""InstanceNorm backward, worked solution.

Forward on x (N, C, *spatial): each (sample, channel) normalized over its positions; weight, bias per channel.
"""
import numpy as np


def backward(dy, x, weight, bias, eps):
    positions = tuple(range(2, x.ndim))                             # the spatial axes
    channel = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    mean = x.mean(axis=positions, keepdims=True)                   # (N, C, 1, ...)
    xc = x - mean
    rstd = 1 / np.sqrt((xc * xc).mean(axis=positions, keepdims=True) + eps)
    xhat = xc * rstd
    gw = dy * weight.reshape(channel)
    dx = rstd * (gw - gw.mean(axis=positions, keepdims=True)
                 - xhat * (gw * xhat).mean(axis=positions, keepdims=True))
    other = (0,) + positions
    return dx, (dy * xhat).sum(axis=other), dy.sum(axis=other)
