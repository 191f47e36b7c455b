"""SyncBatchNorm: BatchNorm whose statistics are those of the batch concatenated over every rank.

Derived in docs/derivations/batchnorm.md, section "SyncBatchNorm: which sums cross the wire". Rank r
holds a shard x_r (N_r, C, S) of one global batch; the statistics of channel c are taken over
A = {all ranks, N_r, S}, n = sum_r N_r * S values. With g_r the upstream gradient on rank r::

    forward   mean_c = (1/n) sum_A x,  var_c = (1/n) sum_A (x - mean_c)^2,  rstd_c = 1/sqrt(var_c + eps)
              y_r = (x_r - mean_c) * rstd_c * w_c + b_c           (BatchNorm with the global statistics)
    backward  sum_dy_c = sum_A g,  sum_dy_xhat_c = sum_A g * xhat  (all-reduced: one message of 2C values)
              dx_r = rstd * (g_r w - w * sum_dy / n - xhat_r * w * sum_dy_xhat / n)
              dw_c = sum_{local} g_r * xhat_r,  db_c = sum_{local} g_r   (local, as PyTorch's)

Gradient semantics (PyTorch's): rank r's dx_r is the gradient of the *sum over ranks* of the losses
with respect to x_r (the statistics couple every rank's outputs to every rank's inputs); dw and db are
the rank's own contributions, whose sum over ranks is that same total's gradient, so that
DistributedDataParallel, averaging them, gives each parameter the gradient of the mean loss.

Which collectives, and why two in the forward: each rank knows only its shard, so the mean needs a sum
over ranks first (count and sum x: C + 1 values), and the variance is then the all-reduced centered
sum sum (x - mean)^2 (C values), the same two-pass algorithm as BatchNorm, so |mean| >> std costs no
digits. One all-reduce of (count, sum x, sum x^2) would give var = E[x^2] - mean^2, which loses every
digit when |mean| >> std; Chan et al.'s merge of per-rank (count, mean, M2) is exact but is not a sum
(it needs every rank's mean: PyTorch all-gathers them, a message growing with the world size). Two
all-reduces cost one extra latency per layer and keep the message at 2C + 1 values for any world size.

With no process group, world size 1, or in eval, the module calls BatchNorm itself (exactly equal).
"""
import math

import numpy as np

from ...autograd import Function
from ...kernels import kernel
from ...tensor import Tensor
from ..shape import stack
from .batchnorm import batch_norm_forward, check_batch_norm_arguments
from .channels import channel_operands, channels_view, save_for_channel_backward, update_running_stats
from .common import center, centered_dx, input_grads


# --------------------------------------------------------------------------- the collective
def all_reduce_sum(array, group):
    """The float64 ``array`` summed over the ranks of ``group`` (a new array; ``array`` is not changed)."""
    from ... import distributed as dist
    t = Tensor(np.array(array, dtype=np.float64))
    dist.all_reduce(t, op=dist.ReduceOp.SUM, group=group)
    return t._data


class AllReduceSum(Function):
    """y = sum over ranks of x (every rank gets the sum). Backward: the upstream gradient of every rank's
    y reaches every rank's x, so dx_r = sum_s g_s, an all-reduce of the gradient; the same on Tensors in
    ``graph_backward``, so SyncBatchNorm's composite backward can be differentiated again."""

    @staticmethod
    def forward(ctx, x, group=None):
        ctx.group = group
        return all_reduce_sum(x._data, group).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        return input_grads(ctx, all_reduce_sum(dout._data, ctx.group).astype(dout.dtype, copy=False))

    @staticmethod
    def graph_backward(ctx, dout):
        return input_grads(ctx, AllReduceSum.apply(dout, group=ctx.group))


# --------------------------------------------------------------------------- the global statistics
def sync_batch_norm_stats(x, group):
    """Global per-channel (mean (C,), biased var (C,), count n) of the shards x (N_r, C, S) of every rank:
    all-reduce (count, sum x), center with the global mean, all-reduce sum (x - mean)^2."""
    count_and_sum = all_reduce_sum(np.concatenate([[x.shape[0] * x.shape[2]],
                                                   x.sum(axis=(0, 2), dtype=np.float64)]), group)   # (1 + C,)
    n, mean = count_and_sum[0], count_and_sum[1:] / max(count_and_sum[0], 1)                       # (), (C,)
    xc = center(x, mean[:, None])                                                                     # (N, C, S)
    m2 = all_reduce_sum(np.einsum("ncs,ncs->c", xc, xc, dtype=np.float64), group)                     # (C,)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = m2 / n
    return mean.astype(x.dtype), var.astype(x.dtype), int(n)


def sync_statistics_composite(x, count, eps, group):
    """(xhat, rstd (1, C, 1)) of x (N, C, S) with the global statistics, as minigrad ops (AllReduceSum
    for the sums over ranks): differentiable to any order."""
    c = x.shape[1]
    mean = AllReduceSum.apply(x.sum((0, 2)), group=group) / count                  # (C,)
    xc = x - mean.reshape(1, c, 1)                                                 # (N, C, S)
    var = AllReduceSum.apply((xc * xc).sum((0, 2)), group=group) / count           # (C,)
    rstd = (var + eps).rsqrt().reshape(1, c, 1)
    return xc * rstd, rstd


# --------------------------------------------------------------------------- the Function
class SyncBatchNormFunction(Function):
    """y = (x - mean[c]) * rstd[c] * w[c] + b[c] (x viewed as (N, C, S)), mean and rstd global (module
    docstring). Backward, with xhat = (x - mean) * rstd, n the global count::

        local:   db_c = sum_{n,s} g,   dw_c = sum_{n,s} g * xhat           (returned as they are)
        (Sdy, Sdyxhat) = all_reduce(db, dw)                                 (one message, 2C values)
        dx = rstd * (g * w - w * Sdy / n - xhat * w * Sdyxhat / n)          (common.centered_dx, the means given)

    ``graph_backward`` writes the same with minigrad ops, the statistics recomputed from x through
    ``AllReduceSum`` (whose backward is an all-reduce), so create_graph=True differentiates it again.
    Every rank must run the same backward (the collectives pair up by order).
    """

    @staticmethod
    def forward(ctx, x, weight, bias, mean, rstd, count, eps, group=None):
        x3, w, b = channel_operands(x, weight, bias)                   # (N, C, S), (C,), (C,)
        y = kernel(batch_norm_forward)(x3, mean, rstd, w, b)
        save_for_channel_backward(ctx, x, weight, bias, mean, rstd, w, count=count, eps=eps, group=group)
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, mean, rstd, w = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        x_shape, w_shape, b_shape = ctx.shapes
        dy, x3 = channels_view(dout._data), channels_view(x)                      # (N, C, S)
        xhat = (x3 - mean[:, None]) * rstd[:, None]                               # (N, C, S)
        sum_dy = dy.sum(axis=(0, 2), dtype=np.float64)                            # (C,) local
        sum_dy_xhat = np.einsum("ncs,ncs->c", dy, xhat, dtype=np.float64)         # (C,) local
        dx = None
        if need_dx:
            c = sum_dy.shape[0]
            total = all_reduce_sum(np.concatenate([sum_dy, sum_dy_xhat]), ctx.group) / ctx.count   # (2C,)
            scale = np.ones(c) if w is None else w.astype(np.float64)
            gw = dy.copy() if w is None else dy * w[:, None]                      # (N, C, S), a fresh array
            mean_gw, mean_gw_xhat = (scale * total[:c]).astype(gw.dtype), (scale * total[c:]).astype(gw.dtype)
            dx = centered_dx(gw, xhat, rstd, (0, 2), means=(mean_gw, mean_gw_xhat)).reshape(x_shape)
        dw = sum_dy_xhat.astype(xhat.dtype).reshape(w_shape) if need_dw else None
        db = sum_dy.astype(xhat.dtype).reshape(b_shape) if need_db else None
        return input_grads(ctx, dx, dw, db)

    @staticmethod
    def graph_backward(ctx, dout):
        x, _, rstd, w = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        x_shape, w_shape, b_shape = ctx.shapes
        n, c = x.shape[:2]
        spatial = math.prod(x.shape[2:])
        x3 = ctx.input_tensor(0, x).to(rstd.dtype).reshape(n, c, spatial)  # (N, C, S), compute dtype
        g = dout.to(rstd.dtype).reshape(n, c, spatial)                            # (N, C, S)
        xhat, rstd_t = sync_statistics_composite(x3, ctx.count, ctx.eps, ctx.group)
        sum_dy, sum_dy_xhat = g.sum((0, 2)), (g * xhat).sum((0, 2))               # (C,) local
        dx = None
        if need_dx:
            scale = Tensor(np.ones(c, rstd.dtype)) if w is None else ctx.input_tensor(1, w.reshape(w_shape))
            scale = scale.reshape(c).to(rstd.dtype)
            total = AllReduceSum.apply(stack([sum_dy, sum_dy_xhat]), group=ctx.group) / ctx.count   # (2, C)
            w3 = scale.reshape(1, c, 1)
            dx = rstd_t * (g * w3 - (scale * total[0]).reshape(1, c, 1)
                           - xhat * (scale * total[1]).reshape(1, c, 1))
            dx = dx.reshape(x_shape)
        return input_grads(ctx, dx, sum_dy_xhat.reshape(w_shape) if need_dw else None,
                           sum_dy.reshape(b_shape) if need_db else None)


# --------------------------------------------------------------------------- the public form
def sync_batch_norm(input, running_mean, running_var, weight, bias, momentum, eps, group=None):
    """Training-mode batch norm with statistics over the shards of every rank of ``group`` (None: the
    world); the running buffers (if given) are updated with the global mean and unbiased variance,
    identically on every rank. Checks the arguments as ``batch_norm`` does before any state changes;
    the "more than 1 value per channel" check sees the global count (so every rank raises alike)."""
    check_batch_norm_arguments(input, running_mean, running_var, weight, bias, True, eps, check_batch_size=False)
    x3 = channels_view(input._data)                                          # (N, C, S)
    mean, var, n = sync_batch_norm_stats(x3, group)
    if n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {n} "
                         "(summed over the ranks)")
    if running_mean is not None:
        update_running_stats(running_mean, running_var, mean, var * (n / (n - 1)), momentum)
    return SyncBatchNormFunction.apply(input, weight, bias, mean=mean, rstd=1.0 / np.sqrt(var + eps), count=n,
                                       eps=eps, group=group)


__all__ = ["sync_batch_norm", "SyncBatchNormFunction", "AllReduceSum"]
