"""BatchNorm: each channel normalized over the batch and spatial axes, as ``torch.nn.functional.batch_norm``.

For x of shape (N, C, *spatial), viewed as (N, C, S), the statistics of channel c are taken over
A = {N, S} in training (the running buffers in eval, where the op is affine in x). The formulas are
written once, in the docstrings of the NumPy references below (dx in training is ``common.centered_dx``),
which docs/derivations/batchnorm.md quotes and derives (``docs/derivations/build.py --check`` keeps the
quotes equal to this file).

Training also updates the running buffers with the *unbiased* variance.

This file reads top to bottom: the NumPy reference kernels (the specification, with numba twins
of the same names in minigrad/kernels/numba_kernels.py), the ``BatchNormFunction`` that runs
them, the composite twin ``batch_norm_composite`` (ordinary minigrad ops that autograd
differentiates: the teaching reference and the tests' oracle), and the public ``batch_norm``,
whose statistics step checks the arguments and updates the running buffers.
"""
import numpy as np

from ..._checks import takes_tensors
from ...autograd import Function
from ...dtypes import cast_like, compute_dtype
from ...kernels import kernel
from ...tensor import Tensor
from .channels import (ChannelNormBackward, affine_channels, blend_running, buffer_array, buffer_written,
                       channel_affine, channel_array, channel_backward, channel_graph_backward, channel_operands,
                       channel_param_grads, channels_view, check_channel_input, check_param_dtypes, check_running_pair,
                       per_channel, save_for_channel_backward, verify_batch_size)
from .common import center, centered_dx, centering_overflows, normalize, square_mean64


# --------------------------------------------------------------------------- NumPy reference, x (N, C, S)
def batch_norm_stats(x):
    """Per-channel mean and biased variance (two-pass) of x (N, C, S) over N and S: (mean (C,), var (C,))."""
    mean = x.mean(axis=(0, 2), dtype=np.float64)      # (C,)
    xc = center(x, mean[:, None])                     # (N, C, S)
    return mean.astype(x.dtype), square_mean64(xc, "ncs->c").astype(x.dtype)   # squares in float64: no overflow


def batch_norm_train_stats(x, eps, momentum, running_mean, running_var):
    """Training's statistics of x (N, C, S): (mean (C,), rstd (C,)), rstd = 1/sqrt(var + eps) in x's dtype. Given
    running buffers ((C,) arrays of x's dtype, else None), also updates them in place with the unbiased
    variance var * n/(n-1), n = N*S (``channels.blend_running``): one kernel call for the whole step."""
    mean, var = batch_norm_stats(x)
    if running_mean is not None:
        n = x.shape[0] * x.shape[2]
        blend_running(running_mean, mean, momentum)
        blend_running(running_var, var * (n / (n - 1)), momentum)
    return mean, 1.0 / np.sqrt(var + eps)


def batch_norm_forward(x, mean, rstd, weight, bias):
    """y = (x - mean[c]) * rstd[c] * weight[c] + bias[c] on x (N, C, S) (batch or running statistics)."""
    return affine_channels((x - mean[:, None]) * rstd[:, None], weight, bias)


def batch_norm_train(x, eps, momentum, running_mean, running_var, weight, bias):
    """Training's forward in one call: (y, mean, rstd), ``batch_norm_forward`` with the statistics (and the running
    buffers' update) of ``batch_norm_train_stats``. (The numba twin reads each channel twice while it is in cache.)"""
    mean, rstd = batch_norm_train_stats(x, eps, momentum, running_mean, running_var)
    return batch_norm_forward(x, mean, rstd, weight, bias), mean, rstd


def batch_norm_backward(dy, x, mean, rstd, weight, training, need_dx, need_dw, need_db):
    """training: dx = rstd*(gw - mean_{N,S}(gw) - xhat*mean_{N,S}(gw*xhat)); eval (fixed statistics):
    dx = gw * rstd. dw_c = sum_{n,s} dy*xhat, db_c = sum_{n,s} dy."""
    dx = None
    xhat = (x - mean[:, None]) * rstd[:, None] if need_dw or (need_dx and training) else None   # (N, C, S)
    dw, db = channel_param_grads(dy, xhat, need_dw, need_db)                                    # (C,) each
    if need_dx:
        gw = dy.copy() if weight is None else dy * weight[:, None]                # (N, C, S), a fresh array
        dx = centered_dx(gw, xhat, rstd, axes=(0, 2)) if training else gw * rstd[:, None]
    return dx, dw, db


# --------------------------------------------------------------------------- the Function
class BatchNormFunction(Function):
    """y = (x - mean[c]) * rstd[c] * w[c] + b[c], x viewed as (N, C, S).

    ``mean`` and ``rstd`` (C,) come from the caller: the batch's own (``training``) or the running
    buffers' (eval). With xhat = (x - mean) * rstd, gw = g * w and means over A = {N, S}:

        training (mean, rstd depend on x):  dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat))
        eval (mean, rstd are constants):    dx = rstd * gw
        dw = sum_A(g * xhat)                db = sum_A(g)

    Saves x, mean, rstd and w; backward recomputes xhat and computes only the gradients asked for.
    The kernels allocate every gradient they return, so the engine hands them to ``.grad`` without a copy.

    Under create_graph=True, ``graph_backward`` gives dx = ``BatchNormBackward`` (training: the fused
    formula, whose backward is the hand-derived double backward) or dout * w * rstd (eval, minigrad ops),
    and dw, db as minigrad sums of g * xhat and g, xhat being this Function without affine. ``eps`` (the
    one rstd was computed with) is needed only there, in training, to rebuild rstd as a function of x.
    """
    saved_as = (("input", 0), ("result1", None), ("result2", None), ("weight", 1))   # PyTorch's names: mean, rstd
    saved_values = {"training": "training", "eps": "eps"}

    @staticmethod
    def forward(ctx, x, weight, bias, mean, rstd, training, eps=None, y=None):
        x3, w, b = channel_operands(x, weight, bias, rstd.dtype)     # (N, C, S), (C,), (C,) in the statistics' dtype
        if y is None:                                                # (else computed with the statistics)
            y = kernel(batch_norm_forward)(x3, mean, rstd, w, b)
        save_for_channel_backward(ctx, x, weight, bias, mean, rstd, w, training=training, eps=eps)
        return cast_like(y.reshape(x.shape), x.dtype, pooled=True)

    @staticmethod
    def backward(ctx, dout):
        return channel_backward(ctx, dout, batch_norm_backward, training=ctx.training)

    @staticmethod
    def graph_backward(ctx, dout):
        _, mean, rstd, _ = ctx.saved_tensors
        training, eps = ctx.training, ctx.eps
        if training and eps is None:
            raise ValueError("BatchNormFunction needs eps= (the eps of rstd) to differentiate its training-mode "
                             "backward again (create_graph=True), but got eps=None")

        def dx_of(dout, x, w):
            if training:
                return BatchNormBackward.apply(dout, x, w, mean=mean, rstd=rstd, eps=eps, training=True)
            scale = Tensor(rstd) if w is None else w * Tensor(rstd)        # (C,): the statistics are constants
            return dout.to(rstd.dtype) * per_channel(scale, dout.ndim)

        def xhat_of(x):
            return BatchNormFunction.apply(x, None, None, mean=mean, rstd=rstd, training=training, eps=eps)
        return channel_graph_backward(ctx, dout, dx_of, xhat_of)


class BatchNormBackward(ChannelNormBackward):
    """BatchNorm's training-mode dx as a Function of (dout, x, weight), A = {N, S} of (N, C, S): the
    formulas of ``ChannelNormBackward`` with means over the batch and positions of each channel."""

    first_order = batch_norm_backward
    axes = (0, 2)

    @staticmethod
    def view(a, options):
        return a

    @staticmethod
    def statistics(x, mean, rstd, options):
        return (x - mean[:, None]) * rstd[:, None], rstd[:, None]       # (N, C, S), (C, 1)


# --------------------------------------------------------------------------- the composite twin
def batch_norm_composite(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                         eps=1e-5):
    """``batch_norm`` written with ordinary ops (same arguments, checks and buffer updates)."""
    mean, rstd, _ = _check_statistics_and_update_running(input, running_mean, running_var, weight, bias, training,
                                                         momentum, eps)
    x = input.to(compute_dtype(input.dtype))
    if training:
        xhat = normalize(x, (0,) + tuple(range(2, x.ndim)), eps)
    else:                                                           # the running statistics: constants
        xhat = (x - per_channel(Tensor(mean), x.ndim)) * per_channel(Tensor(rstd), x.ndim)
    return channel_affine(xhat, weight, bias).to(input.dtype)


# --------------------------------------------------------------------------- the public form and its checks
@takes_tensors("input", "weight", "bias", optional=("running_mean", "running_var"))
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """``F.batch_norm``: PyTorch's semantics (module docstring), the hand-derived backward."""
    if input.numel() == 0:
        return empty_batch_norm(input, weight, bias)
    mean, rstd, y = _check_statistics_and_update_running(input, running_mean, running_var, weight, bias, training,
                                                         momentum, eps, normalize=True)
    return BatchNormFunction.apply(input, weight, bias, mean=mean, rstd=rstd, training=training, eps=eps, y=y)


def empty_batch_norm(input, weight, bias):
    """PyTorch's batch_norm of an empty input: a copy scaled and shifted by the first weight and bias (when
    given), with no checks and no norm in its graph (so no saved input). instance_norm's empty path too."""
    out = input.clone()
    out = out if weight is None else out * weight[0]
    return out if bias is None else out + bias[0]


def _check_statistics_and_update_running(input, running_mean, running_var, weight, bias, training, momentum, eps,
                                          normalize=False):
    """Check the arguments (before any state changes), then return the per-channel (mean, rstd) to normalize
    with, rstd = 1/sqrt(var + eps): in training the batch's (after updating the running buffers, if given,
    with the unbiased variance), in eval the running buffers'. Arrays in the compute dtype. Third, with
    ``normalize`` in training, y (N, C, S), the forward's output computed with the statistics (``batch_norm_train``:
    one read of x from memory); else None."""
    check_batch_norm_arguments(input, running_mean, running_var, weight, bias, training, eps)
    dtype = compute_dtype(input.dtype)
    if not training:
        return channel_array(running_mean, dtype), 1.0 / np.sqrt(channel_array(running_var, dtype) + eps), None
    x3 = channels_view(input._data)                                   # (N, C, S)
    buffers = (None, None) if running_mean is None else (buffer_array(running_mean, dtype),
                                                         buffer_array(running_var, dtype))   # (C,) each
    if normalize:
        w, b = channel_array(weight, dtype), channel_array(bias, dtype)
        y, mean, rstd = kernel(batch_norm_train)(x3, eps, momentum, *buffers, w, b)
    else:
        y, (mean, rstd) = None, kernel(batch_norm_train_stats)(x3, eps, momentum, *buffers)
    if running_mean is not None:
        buffer_written(running_mean, buffers[0])
        buffer_written(running_var, buffers[1])
    if centering_overflows(rstd, x3.shape[0] * x3.shape[2], dtype):   # float32 overflows: normalize in float64
        y, (mean, rstd) = None, kernel(batch_norm_train_stats)(x3.astype(np.float64), eps, momentum, None, None)
    return mean, rstd, y


def check_batch_norm_arguments(input, running_mean, running_var, weight, bias, training, eps, check_batch_size=True):
    """batch_norm's argument checks, in PyTorch's order (SyncBatchNorm checks its batch size over all ranks
    itself: ``check_batch_size=False``)."""
    check_channel_input(input, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    if training:
        if check_batch_size:
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
