"""BatchNorm: each channel normalized over the batch and spatial axes (normalization.md §5).

For x of shape (N, C, *spatial), viewed as (N, C, S), the statistics of channel c are taken
over A = {N, S}: training mode uses the batch's mean and *biased* variance and updates the
running buffers with the *unbiased* one; eval mode uses the running buffers (the op is then
affine in x).

Two implementations with one signature:

* ``batch_norm`` (= ``F.batch_norm``): the fused ``FusedBatchNorm`` Function, one kernel call
  each way (``minigrad.kernels.backend()``) and the hand-derived backward;
* ``batch_norm_composite``: ordinary minigrad ops that autograd differentiates, the teaching
  reference and the tests' oracle. Use it by importing it from ``minigrad.ops.norm.batch``.
"""
import numpy as np

from ... import kernels
from ...autograd import Function
from ...tensor import Tensor
from .common import (channel_affine, channel_array, channel_grads, channels_view, check_channel_input,
                     check_param_dtypes, compute_dtype, normalize, per_channel, shape_of, verify_batch_size)


class FusedBatchNorm(Function):
    """y = (x - mean[c]) * rstd[c] * w[c] + b[c], x viewed as (N, C, S).

    ``mean`` and ``rstd`` (C,) come from the caller: the batch's own (``training``) or the running
    buffers' (eval). With xhat = (x - mean) * rstd, gw = g * w and means over A = {N, S}:

        training (mean, rstd depend on x):  dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat))
        eval (mean, rstd are constants):    dx = rstd * gw
        dw = sum_A(g * xhat)                db = sum_A(g)

    Saves x, mean, rstd and w; backward recomputes xhat and computes only the gradients asked for.
    The kernels allocate every gradient they return (``fresh_gradients``: no copy into ``.grad``).
    """
    fresh_gradients = True

    @staticmethod
    def forward(ctx, x, weight, bias, mean, rstd, training):
        x3 = channels_view(x._data)                                   # (N, C, S) in the compute dtype
        w = channel_array(weight, x3.dtype)
        y = kernels.backend().batch_norm_forward(x3, mean, rstd, w, channel_array(bias, x3.dtype))
        ctx.save_for_backward(x, mean, rstd, w)
        ctx.training, ctx.shapes = training, (x.shape, shape_of(weight), shape_of(bias))
        return y.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, mean, rstd, w = ctx.saved_tensors
        grads = kernels.backend().batch_norm_backward(channels_view(dout._data), channels_view(x._data), mean, rstd, w,
                                                      ctx.training, *ctx.needs_input_grad[:3])
        return channel_grads(ctx, *grads) + (None, None, None)


def update_running_stats(running_mean, running_var, mean, unbiased_var, momentum):
    """running <- (1 - momentum) * running + momentum * statistic, in place and outside the graph."""
    for running, stat in ((running_mean, mean), (running_var, unbiased_var)):
        running.copy_(Tensor(momentum * stat + (1 - momentum) * running._data))


def check_running_pair(running_mean, running_var):
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")


def _batch_statistics(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """Check the arguments (before any state changes), then return the per-channel (mean, var)
    to normalize with: in training the batch's (after updating the running buffers, if given,
    with the unbiased variance), in eval the running buffers'. Arrays in the compute dtype."""
    check_channel_input(input, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    if training:
        verify_batch_size(input.shape)
        if eps <= 0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
        check_running_pair(running_mean, running_var)
    else:
        if eps < 0:
            raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    check_param_dtypes(input, weight, bias, running_mean, running_var)
    dtype = compute_dtype(input.dtype)
    if not training:
        return channel_array(running_mean, dtype), channel_array(running_var, dtype)
    x3 = channels_view(input._data)                                   # (N, C, S)
    mean, var = kernels.backend().batch_norm_stats(x3)
    if running_mean is not None:
        n = x3.shape[0] * x3.shape[2]
        update_running_stats(running_mean, running_var, mean, var * (n / (n - 1)), momentum)
    return mean, var


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """``F.batch_norm``: PyTorch's semantics (module docstring), fused forward and backward."""
    mean, var = _batch_statistics(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return FusedBatchNorm.apply(input, weight, bias, mean, 1.0 / np.sqrt(var + eps), training)


def batch_norm_composite(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                         eps=1e-5):
    """``batch_norm`` written with ordinary ops (same arguments, checks and buffer updates)."""
    mean, var = _batch_statistics(input, running_mean, running_var, weight, bias, training, momentum, eps)
    x = input.to(compute_dtype(input.dtype))
    if training:
        xhat = normalize(x, (0,) + tuple(range(2, x.ndim)), eps)
    else:
        xhat = (x - per_channel(Tensor(mean), x.ndim)) * (per_channel(Tensor(var), x.ndim) + eps).rsqrt()
    return channel_affine(xhat, weight, bias).to(input.dtype)
