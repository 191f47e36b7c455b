"""GroupNorm backward, worked solution.

Forward on x (N, C, *spatial): the C channels split into num_groups consecutive groups; each (sample, group)
normalized over its C/G channels and all positions; weight and bias per channel.
"""
import numpy as np


def backward(dy, x, num_groups, weight, bias, eps):
    n, c = x.shape[:2]
    channel = (1, c) + (1,) * (x.ndim - 2)                          # weight (C,) against x
    xg = x.reshape(n, num_groups, -1)                              # (N, G, C/G * S): one row per (sample, group)
    mean = xg.mean(axis=2, keepdims=True)
    xc = xg - mean
    rstd = 1 / np.sqrt((xc * xc).mean(axis=2, keepdims=True) + eps)
    xhat = xc * rstd                                               # (N, G, C/G * S)
    gw = (dy * weight.reshape(channel)).reshape(xhat.shape)        # per-channel weight, seen as groups
    dx = rstd * (gw - gw.mean(axis=2, keepdims=True) - xhat * (gw * xhat).mean(axis=2, keepdims=True))
    xhat = xhat.reshape(x.shape)
    other = (0,) + tuple(range(2, x.ndim))                          # every axis but the channels
    return dx.reshape(x.shape), (dy * xhat).sum(axis=other), dy.sum(axis=other)
