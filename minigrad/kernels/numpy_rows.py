"""NumPy reference kernels, row family: RMSNorm (and variants) and LayerNorm on x (R, D).

See numpy_kernels.py for the conventions. Each row is normalized on its own; the
per-row statistics are 1-D arrays (R,), broadcast back over a row as ``stat[:, None]``.
Variances are two-pass (``mean((x - mean)^2)``), never ``E[x^2] - E[x]^2``, which loses
every digit when |mean| >> std (normalization.md §1). Sums accumulate in float64 and are
rounded once to the compute dtype.
"""
import numpy as np

from .numpy_common import center, exact_mean, sum64


def _rowdot(a, b):
    """sum_j a[r, j] * b[r, j] for each row, accumulated in float64, in a's dtype: (R,)."""
    return np.einsum("rd,rd->r", a, b, dtype=np.float64).astype(a.dtype, copy=False)


def _affine(xhat, weight, bias):
    """y = xhat * weight + bias, in place on xhat (weight/bias (D,) or None)."""
    if weight is not None:
        xhat *= weight
    if bias is not None:
        xhat += bias
    return xhat


def _param_grads(dy, xhat, need_dw, need_db):
    """dw = sum_rows(dy * xhat), db = sum_rows(dy): the affine part of every row norm's backward."""
    dw = sum64(dy * xhat, 0) if need_dw else None        # (D,)
    db = sum64(dy, 0) if need_db else None               # (D,)
    return dw, db


def _mean_square(x, k):
    """mean(x[:, :k]**2) per row: the (partial) mean square of RMSNorm, (R,)."""
    xk = x[:, :k]                                        # (R, k)
    return _rowdot(xk, xk) / k


def rms_norm_forward(x, weight, bias, eps, k, eps_outside):
    """RMSNorm and its variants over each row of x (R, D).

    ms = mean(x[:, :k]**2)  (k = D: plain RMSNorm; k < D: partial RMSNorm)
    rstd = 1/sqrt(ms + eps)      (eps_outside=False, PyTorch)
    rstd = 1/(sqrt(ms) + eps)    (eps_outside=True)
    y = x * rstd * weight + bias (weight/bias optional)
    Returns (y (R, D), rstd (R,)).
    """
    ms = _mean_square(x, k)                              # (R,)
    with np.errstate(divide="ignore"):                   # eps = 0 on a zero row: rstd = inf, as PyTorch
        rstd = 1 / (np.sqrt(ms) + eps) if eps_outside else 1 / np.sqrt(ms + eps)
    with np.errstate(invalid="ignore"):                  # 0 * inf = NaN, as PyTorch
        y = x * rstd[:, None]                            # (R, D)
    return _affine(y, weight, bias), rstd


def rms_norm_backward(dy, x, rstd, weight, eps, k, eps_outside, need_dx, need_dw, need_db):
    """Gradients of rms_norm_forward. With xhat = x*rstd, gw = dy*weight, mask = [j < k]:
    dx = rstd * (gw - c * x * mask * sum_j(gw*xhat)/k), c = rstd (eps inside) or 1/sqrt(ms) (eps outside)
    dw = sum_rows(dy * xhat), db = sum_rows(dy). Returns (dx, dw, db).

    For eps outside, ms is recomputed from x rather than from ``1/rstd - eps``, which would
    cancel when sqrt(ms) << eps; ``eps`` is part of the shared signature and unused here.
    """
    with np.errstate(invalid="ignore"):
        xhat = x * rstd[:, None] if need_dx or need_dw else None  # (R, D)
        dw, db = _param_grads(dy, xhat, need_dw, need_db)
        if not need_dx:
            return None, dw, db
        gw = dy * weight if weight is not None else dy            # (R, D)
        proj = _rowdot(gw, xhat) / k                # sum_j(gw*xhat)/k, (R,)
        with np.errstate(divide="ignore"):
            c = 1 / np.sqrt(_mean_square(x, k)) if eps_outside else rstd  # (R,)
        dx = gw.copy() if gw is dy else gw                        # never write into the caller's dy
        dx[:, :k] -= (c * proj)[:, None] * x[:, :k]               # only the RMS subset gets the correction
        dx *= rstd[:, None]
    return dx, dw, db


def layer_norm_forward(x, weight, bias, eps):
    """LayerNorm over each row of x (R, D): mean, biased var (two-pass), rstd = 1/sqrt(var + eps),
    y = (x - mean) * rstd * weight + bias. Returns (y, mean (R,), rstd (R,))."""
    mean = x.mean(axis=1, dtype=np.float64)              # (R,), float64: centering below loses nothing
    xc = center(x, mean[:, None])                        # (R, D)
    var = _rowdot(xc, xc) / x.shape[1]                   # (R,), biased
    with np.errstate(divide="ignore"):                   # eps = 0 on a constant row: rstd = inf, as PyTorch
        rstd = 1 / np.sqrt(var + eps)
    with np.errstate(invalid="ignore"):
        xc *= rstd[:, None]                              # xhat, in place
    return _affine(xc, weight, bias), mean.astype(x.dtype), rstd


def layer_norm_backward(dy, x, mean, rstd, weight, need_dx, need_dw, need_db):
    """dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), dw = sum_rows(dy*xhat), db = sum_rows(dy)."""
    with np.errstate(invalid="ignore"):
        if need_dx or need_dw:                                         # the forward's exact centering
            xhat = center(x, exact_mean(x, mean[:, None], 1)) * rstd[:, None]          # (R, D)
        else:
            xhat = None
        dw, db = _param_grads(dy, xhat, need_dw, need_db)
        if not need_dx:
            return None, dw, db
        gw = dy * weight if weight is not None else dy.copy()         # (R, D), written in place below
        d = x.shape[1]
        mean_gw = sum64(gw, 1) / d                                     # (R,)
        mean_gw_xhat = _rowdot(gw, xhat) / d                           # (R,)
        gw -= mean_gw[:, None]
        gw -= xhat * mean_gw_xhat[:, None]
        gw *= rstd[:, None]
    return gw, dw, db
