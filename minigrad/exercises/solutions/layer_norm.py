"""LayerNorm backward, worked solution.

Forward per row of x (N, D):  mean, var = x.mean(1), x.var(1) (biased),  rstd = 1 / sqrt(var + eps),
xhat = (x - mean) * rstd,  y = xhat * weight + bias.
"""
import numpy as np


def backward(dy, x, weight, bias, eps):
    mean = x.mean(axis=1, keepdims=True)                           # (N, 1)
    xc = x - mean
    rstd = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + eps)
    xhat = xc * rstd                                               # (N, D)
    gw = dy * weight                                               # the gradient reaching xhat
    # the two means: gw's projections onto what normalization removes (shifts and scalings of the row)
    dx = rstd * (gw - gw.mean(axis=1, keepdims=True) - xhat * (gw * xhat).mean(axis=1, keepdims=True))
    dweight = (dy * xhat).sum(axis=0)
    dbias = dy.sum(axis=0)
    return dx, dweight, dbias
