"""RMSNorm backward, worked solution.

Forward per row of x (N, D):  rstd = 1 / sqrt(mean(x^2) + eps),  xhat = x * rstd,  y = xhat * weight.
"""
import numpy as np


def backward(dy, x, weight, eps):
    rstd = 1 / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)   # (N, 1)
    xhat = x * rstd                                                # (N, D)
    gw = dy * weight                                               # the gradient reaching xhat
    # xhat depends on x directly (factor rstd) and through rstd: d rstd / dx_i = -rstd^3 x_i / D
    dx = rstd * (gw - xhat * (gw * xhat).mean(axis=1, keepdims=True))
    dweight = (dy * xhat).sum(axis=0)                              # weight is shared by every row
    return dx, dweight
