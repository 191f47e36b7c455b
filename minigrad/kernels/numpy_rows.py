"""NumPy reference kernels, row family: RMSNorm (and variants) and LayerNorm on x (R, D).

See numpy_kernels.py for the conventions."""


def rms_norm_forward(x, weight, bias, eps, k, eps_outside):
    """RMSNorm and its variants over each row of x (R, D).

    ms = mean(x[:, :k]**2)  (k = D: plain RMSNorm; k < D: partial RMSNorm)
    rstd = 1/sqrt(ms + eps)      (eps_outside=False, PyTorch)
    rstd = 1/(sqrt(ms) + eps)    (eps_outside=True)
    y = x * rstd * weight + bias (weight/bias optional)
    Returns (y (R, D), rstd (R,)).
    """
    raise NotImplementedError


def rms_norm_backward(dy, x, rstd, weight, eps, k, eps_outside, need_dx, need_dw, need_db):
    """Gradients of rms_norm_forward. With xhat = x*rstd, gw = dy*weight, mask = [j < k]:
    dx = rstd * (gw - c * x * mask * sum_j(gw*xhat)/k), c = rstd (eps inside) or 1/sqrt(ms) (eps outside)
    dw = sum_rows(dy * xhat), db = sum_rows(dy). Returns (dx, dw, db).
    """
    raise NotImplementedError


def layer_norm_forward(x, weight, bias, eps):
    """LayerNorm over each row of x (R, D): mean, biased var (two-pass), rstd = 1/sqrt(var + eps),
    y = (x - mean) * rstd * weight + bias. Returns (y, mean (R,), rstd (R,))."""
    raise NotImplementedError


def layer_norm_backward(dy, x, mean, rstd, weight, need_dx, need_dw, need_db):
    """dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), dw = sum_rows(dy*xhat), db = sum_rows(dy)."""
    raise NotImplementedError
