"""NumPy reference kernels for the normalization layers: the executable specification.

Every function here has a numba twin with the same name and signature in
``numba_kernels.py``; ``minigrad.kernels.backend()`` returns the active module.

Conventions (the callers in ``minigrad/ops/norm`` guarantee them):
* arrays are C-contiguous and already in the *compute* dtype (float32 or float64;
  float16 inputs are upcast to float32 by the caller, which casts results back once);
* ``weight``/``bias`` are None or 1-D arrays in the compute dtype;
* statistics are 1-D per row (row family) or (N, G) / (C,) (channel family);
* ``need_dx``/``need_dw``/``need_db`` say which gradients to compute; the others are None.

Row family, x of shape (R, D): RMSNorm and LayerNorm over the trailing dims.
Channel family, x of shape (N, C, S) with S = prod(spatial) (1 for (N, C) input):
GroupNorm (InstanceNorm is GroupNorm with G = C) and BatchNorm.
"""


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


def group_norm_forward(x, num_groups, weight, bias, eps):
    """GroupNorm on x (N, C, S): statistics per (n, g) over the C/G channels of group g and all S;
    per-channel affine weight/bias (C,). Returns (y, mean (N, G), rstd (N, G))."""
    raise NotImplementedError


def group_norm_backward(dy, x, mean, rstd, num_groups, weight, need_dx, need_dw, need_db):
    """The centered formula per (n, g) with gw = dy * weight[c]; dw_c = sum_{n,s} dy*xhat, db_c = sum_{n,s} dy."""
    raise NotImplementedError


def batch_norm_stats(x):
    """Per-channel mean and biased variance (two-pass) of x (N, C, S) over N and S: (mean (C,), var (C,))."""
    raise NotImplementedError


def batch_norm_forward(x, mean, rstd, weight, bias):
    """y = (x - mean[c]) * rstd[c] * weight[c] + bias[c] on x (N, C, S) (batch or running statistics)."""
    raise NotImplementedError


def batch_norm_backward(dy, x, mean, rstd, weight, training, need_dx, need_dw, need_db):
    """training: dx = rstd*(gw - mean_{N,S}(gw) - xhat*mean_{N,S}(gw*xhat)); eval (fixed statistics):
    dx = gw * rstd. dw_c = sum_{n,s} dy*xhat, db_c = sum_{n,s} dy."""
    raise NotImplementedError
