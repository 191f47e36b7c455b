"""BatchNorm (training) backward, worked solution.

Forward on x (N, C), per channel over the batch:  mean, var = x.mean(0), x.var(0) (biased),
rstd = 1 / sqrt(var + eps),  xhat = (x - mean) * rstd,  y = xhat * weight + bias.
"""
import numpy as np


def backward(dy, x, weight, bias, eps):
    mean = x.mean(axis=0)                                          # (C,)
    xc = x - mean
    rstd = 1 / np.sqrt((xc * xc).mean(axis=0) + eps)               # (C,)
    xhat = xc * rstd                                               # (N, C)
    gw = dy * weight
    # the batch statistics depend on every sample: the same two means as LayerNorm, over axis 0
    dx = rstd * (gw - gw.mean(axis=0) - xhat * (gw * xhat).mean(axis=0))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)
