"""PyTorch's ``native_*`` norm ops: the normalized output together with the statistics the backward saves.

    native_layer_norm(input, normalized_shape, weight, bias, eps)      -> (y, mean, rstd)   (*lead, 1, ..., 1) each
    native_batch_norm(input, weight, bias, running_mean, running_var,
                      training, momentum, eps)                         -> (y, mean, invstd) (C,) each; (0,) in eval
    _native_batch_norm_legit(...)                                       the same, also without running statistics
    native_group_norm(input, weight, bias, N, C, HxW, group, eps)      -> (y, mean, rstd)   (N, group) each

y is the public norm's output (its hand-derived backward). The statistics are mean and rstd = 1 / sqrt(var + eps)
of the normalized groups, var the biased variance, in the input's dtype: constants for layer and batch norm (PyTorch
gives them no gradient), differentiable for group norm (as PyTorch's are). The formulas are those of
docs/derivations/layernorm.md, batchnorm.md and groupnorm.md.
"""
import numpy as np

from ...autograd.function import NoDerivative, watching
from ...autograd.grad_mode import is_grad_enabled
from ...dtypes import compute_dtype, is_floating_point, scalar_type_name
from ...tensor import Tensor
from .batchnorm import batch_norm, batch_norm_stats
from .channels import blend_running, buffer_array, buffer_written, channels_view
from .groupnorm import group_norm
from .layernorm import layer_norm


def _statistics(x, axes, eps, dtype):
    """mean and rstd of ``x`` (an ndarray) over ``axes``, kept as dims of size 1, computed in float64."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    with np.errstate(divide="ignore"):
        rstd = 1.0 / np.sqrt(var + eps)
    return Tensor(mean.astype(dtype)), Tensor(rstd.astype(dtype))


def _saved(y, *statistics):
    """``y`` and the statistics, which PyTorch's backward of y saves: a write into one of them after the forward makes
    that backward refuse, as PyTorch's does (they are computed apart here: ``Context.watch``)."""
    return (watching(y, *statistics),) + statistics


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``torch.native_layer_norm``: (layer_norm's output, mean, rstd), the statistics shaped
    input.shape[:-len(normalized_shape)] followed by ones."""
    y = layer_norm(input, normalized_shape, weight, bias, eps)
    axes = tuple(range(input.ndim - len(tuple(normalized_shape)), input.ndim))
    mean, rstd = _statistics(input._data, axes, eps, y.dtype)
    return _saved(y, mean, rstd)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.native_batch_norm``: (batch_norm's output, the batch mean, its invstd) per channel in training
    (running statistics updated as batch_norm updates them); in eval the two statistics are empty."""
    y = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return y, Tensor(np.zeros(0, y.dtype)), Tensor(np.zeros(0, y.dtype))
    axes = (0,) + tuple(range(2, input.ndim))
    mean, invstd = _statistics(input._data, axes, eps, y.dtype)
    return _saved(y, mean.reshape(-1), invstd.reshape(-1))


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """``torch.batch_norm_update_stats``: the batch's per-channel mean and biased variance (over every dim but 1),
    and, where given, ``running_mean``/``running_var`` moved toward the mean and the unbiased variance
    var * n / (n - 1) by ``momentum``, in place, as batch_norm's training step moves them (n = 1 gives NaN).
    The statistics have the running buffers' dtype when given (float32 for a bfloat16 input), else the input's;
    they have no derivative (a backward reaching them raises), as in PyTorch. PyTorch's errors for a 1-D, empty or
    integer input and a float32 input with float64 buffers; buffers of another length than C are refused (PyTorch
    reads past them)."""
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got 1)")
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(input.shape)}")
    if not is_floating_point(input.dtype):
        raise NotImplementedError(f'"batch_norm_update_stats_cpu" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    for buffer in (running_mean, running_var):
        if buffer is None:
            continue
        if buffer.dtype != input.dtype and compute_dtype(input.dtype) == input.dtype:
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{scalar_type_name(input.dtype)}")
        if buffer.numel() != input.shape[1]:
            raise RuntimeError(f"batch_norm_update_stats: a running buffer of {buffer.numel()} elements for "
                               f"{input.shape[1]} channels")
    dtype = compute_dtype(input.dtype)
    x3 = channels_view(input._data)                                          # (N, C, S), compute dtype
    mean, var = batch_norm_stats(x3)                                         # (C,) each
    n = x3.shape[0] * x3.shape[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        unbiased = var * (n / (n - 1)) if n > 1 else var * np.nan
    for buffer, statistic in ((running_mean, mean), (running_var, unbiased)):
        if buffer is not None:
            array = buffer_array(buffer, dtype)
            blend_running(array, statistic, momentum)
            buffer_written(buffer, array)
    out_dtype = input.dtype if running_mean is None and running_var is None else \
        (running_mean if running_mean is not None else running_var).dtype
    if not (input.requires_grad and is_grad_enabled()):
        return Tensor(mean.astype(out_dtype)), Tensor(var.astype(out_dtype))
    message = "derivative for aten::batch_norm_update_stats is not implemented"    # reaching them in backward raises
    return tuple(NoDerivative.apply(RuntimeError, message, a.astype(out_dtype), input) for a in (mean, var))


def _native_batch_norm_legit(input, weight, bias, *args):
    """``torch._native_batch_norm_legit``: native_batch_norm's arguments, or (training, momentum, eps)
    without running statistics."""
    if len(args) == 3:
        training, momentum, eps = args
        return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)
    return native_batch_norm(input, weight, bias, *args)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``torch.native_group_norm``: (group_norm's output, mean, rstd), the statistics (N, group)."""
    y = group_norm(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, C // group * HxW)          # (N, G, C/G * HxW)
    mean = grouped.mean(2)                                       # (N, G); PyTorch differentiates these two
    rstd = (grouped.var(2, unbiased=False) + eps).rsqrt()        # (N, G)
    return _saved(y, mean, rstd)


__all__ = ["native_layer_norm", "native_batch_norm", "_native_batch_norm_legit", "native_group_norm",
           "batch_norm_update_stats"]
