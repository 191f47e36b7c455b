"""NumPy reference kernels, channel family: GroupNorm/InstanceNorm and BatchNorm on x (N, C, S).

See numpy_kernels.py for the conventions. Both layers run the same centered kernel
(normalization.md §1), only over different axes:

    GroupNorm   view x as (N, G, C/G*S), reduce axis 2      statistics (N, G)
    BatchNorm   reduce axes (0, 2) of (N, C, S)             statistics (C,)

and both apply a per-channel affine map on the (N, C, S) layout.
Variances are two-pass, mean((x - mean)^2), never E[x^2] - E[x]^2 (cancellation).
Means and sums accumulate in float64 and are rounded once to the compute dtype.
"""
import numpy as np

from .numpy_common import center, exact_mean, mean64, sum64


def _channel_affine(xhat, weight, bias):
    """xhat * weight[c] + bias[c] on (N, C, S), in place (xhat is a fresh array)."""
    if weight is not None:
        xhat *= weight[:, None]
    if bias is not None:
        xhat += bias[:, None]
    return xhat


def _centered_dx(gw, xhat, rstd, axes):
    """dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat)), A = ``axes``; rstd broadcasts against gw."""
    mean_gw = mean64(gw, axes, keepdims=True)
    mean_gw_xhat = mean64(gw * xhat, axes, keepdims=True)
    return rstd * (gw - mean_gw - xhat * mean_gw_xhat)


def group_norm_forward(x, num_groups, weight, bias, eps):
    """GroupNorm on x (N, C, S): statistics per (n, g) over the C/G channels of group g and all S;
    per-channel affine weight/bias (C,). Returns (y, mean (N, G), rstd (N, G))."""
    n, c, s = x.shape
    xg = x.reshape(n, num_groups, -1)                 # (N, G, C/G*S)
    mean = xg.mean(axis=2, dtype=np.float64, keepdims=True)  # (N, G, 1), float64 for exact centering
    xc = center(xg, mean)                                    # (N, G, C/G*S)
    var = mean64(xc * xc, 2, keepdims=True)                  # (N, G, 1), biased
    rstd = 1.0 / np.sqrt(var + eps)
    y = _channel_affine((xc * rstd).reshape(n, c, s), weight, bias)
    return y, mean.reshape(n, num_groups).astype(x.dtype), rstd.reshape(n, num_groups)


def group_norm_backward(dy, x, mean, rstd, num_groups, weight, need_dx, need_dw, need_db):
    """The centered formula per (n, g) with gw = dy * weight[c]; dw_c = sum_{n,s} dy*xhat, db_c = sum_{n,s} dy."""
    n, c, s = x.shape
    dx = dw = db = None
    if need_dx or need_dw:
        xg = x.reshape(n, num_groups, -1)                                         # (N, G, C/G*S)
        xc = center(xg, exact_mean(xg, mean[:, :, None], 2))                      # as the forward centered
        xhat = (xc * rstd[:, :, None]).reshape(n, c, s)                           # (N, C, S)
        if need_dw:
            dw = sum64(dy * xhat, (0, 2))
        if need_dx:
            gw = dy if weight is None else dy * weight[:, None]                   # (N, C, S)
            dx = _centered_dx(gw.reshape(n, num_groups, -1), xhat.reshape(n, num_groups, -1),
                              rstd[:, :, None], axes=2).reshape(n, c, s)
    if need_db:
        db = sum64(dy, (0, 2))
    return dx, dw, db


def batch_norm_stats(x):
    """Per-channel mean and biased variance (two-pass) of x (N, C, S) over N and S: (mean (C,), var (C,))."""
    mean = x.mean(axis=(0, 2), dtype=np.float64)      # (C,)
    xc = center(x, mean[:, None])                     # (N, C, S)
    return mean.astype(x.dtype), mean64(xc * xc, (0, 2))


def batch_norm_forward(x, mean, rstd, weight, bias):
    """y = (x - mean[c]) * rstd[c] * weight[c] + bias[c] on x (N, C, S) (batch or running statistics)."""
    return _channel_affine((x - mean[:, None]) * rstd[:, None], weight, bias)


def batch_norm_backward(dy, x, mean, rstd, weight, training, need_dx, need_dw, need_db):
    """training: dx = rstd*(gw - mean_{N,S}(gw) - xhat*mean_{N,S}(gw*xhat)); eval (fixed statistics):
    dx = gw * rstd. dw_c = sum_{n,s} dy*xhat, db_c = sum_{n,s} dy."""
    dx = dw = db = None
    if need_dw or (need_dx and training):
        xhat = (x - mean[:, None]) * rstd[:, None]                                # (N, C, S)
    if need_dw:
        dw = sum64(dy * xhat, (0, 2))
    if need_dx:
        gw = dy if weight is None else dy * weight[:, None]                       # (N, C, S)
        rstd_c = rstd[:, None]                                                    # (C, 1)
        dx = _centered_dx(gw, xhat, rstd_c, axes=(0, 2)) if training else gw * rstd_c
    if need_db:
        db = sum64(dy, (0, 2))
    return dx, dw, db
