"""NumPy reference kernels, channel family: GroupNorm/InstanceNorm and BatchNorm on x (N, C, S).

See numpy_kernels.py for the conventions."""


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
