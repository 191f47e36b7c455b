"""GroupNorm and InstanceNorm: statistics per sample, never across the batch.

GroupNorm splits the C channels of x (N, C, *spatial) into G groups and normalizes each (sample, group)
over its C/G channels and all spatial positions, i.e. each row A of the (N, G, C/G * S) view; the affine
weight and bias are per *channel*. The formulas are written once, in the docstrings of the NumPy references
below (dx is ``common.centered_dx``), which docs/derivations/groupnorm.md and instancenorm.md quote and
derive (``docs/derivations/build.py --check`` keeps the quotes equal to this file).

InstanceNorm is GroupNorm with G = C (each (sample, channel) over its spatial positions), plus
running statistics:

* ``use_input_stats=True``: instance statistics; if running buffers are given they are updated
  with the batch average of the instance means and of the *unbiased* instance variances;
* ``use_input_stats=False``: the running buffers are used, exactly as BatchNorm in eval mode.

This file reads top to bottom: the NumPy reference kernels (the specification, with numba twins
of the same names in minigrad/kernels/numba_kernels.py), the ``GroupNormFunction`` that runs them
(for InstanceNorm too), the composite twins ``group_norm_composite`` and ``instance_norm_composite``
(ordinary minigrad ops that autograd differentiates), and the public ``group_norm`` and
``instance_norm`` with their checks.
"""
import math

import numpy as np

from ..._checks import int_arg, takes_tensors
from ...autograd import Function
from ...dtypes import cast_like, compute_dtype, is_floating_point
from ...kernels import kernel
from .batchnorm import batch_norm, batch_norm_composite, batch_norm_stats, empty_batch_norm
from .channels import (ChannelNormBackward, affine_channels, channel_affine, channel_backward, channel_graph_backward,
                       channel_operands, channel_param_grads, channels_view, check_channel_input,
                       check_floating_channels, check_param_dtypes, check_running_pair, save_for_channel_backward,
                       update_running_stats, verify_batch_size, verify_spatial_size)
from .common import center, centered_dx, centering_overflows, exact_mean, normalize, square_mean64


def as_groups(x, num_groups):
    """x (N, C, *spatial), an ndarray or a Tensor, as rows (N, G, C/G * S) (the sizes given: -1 cannot be inferred
    for an empty batch)."""
    return x.reshape(x.shape[0], num_groups, x.shape[1] // num_groups * math.prod(x.shape[2:]))


# --------------------------------------------------------------------------- NumPy reference, x (N, C, S)
def group_norm_forward(x, num_groups, weight, bias, eps):
    """GroupNorm on x (N, C, S): statistics per (n, g) over the C/G channels of group g and all S;
    per-channel affine weight/bias (C,). Returns (y, mean (N, G), rstd (N, G))."""
    n, c, s = x.shape
    xg = as_groups(x, num_groups)                            # (N, G, C/G*S)
    mean = xg.mean(axis=2, dtype=np.float64, keepdims=True)  # (N, G, 1), float64 for exact centering
    xc = center(xg, mean)                                    # (N, G, C/G*S)
    var = square_mean64(xc, "ngm->ng")[:, :, None]           # (N, G, 1) float64, biased: no overflow
    rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype)
    y = affine_channels((xc * rstd).reshape(n, c, s), weight, bias)
    return y, mean.reshape(n, num_groups).astype(x.dtype), rstd.reshape(n, num_groups)


def group_norm_xhat(x, mean, rstd, num_groups):
    """xhat of x (N, C, S) as rows (N, G, C/G*S), from the saved statistics (N, G), centered as the forward did."""
    xg = as_groups(x, num_groups)                                                 # (N, G, C/G*S)
    return center(xg, exact_mean(xg, mean[:, :, None], 2)) * rstd[:, :, None]


def group_norm_backward(dy, x, mean, rstd, num_groups, weight, need_dx, need_dw, need_db):
    """The centered formula per (n, g) with gw = dy * weight[c]; dw_c = sum_{n,s} dy*xhat, db_c = sum_{n,s} dy."""
    n, c, s = x.shape
    dx = xhat = None
    if need_dx or need_dw:
        xhat = group_norm_xhat(x, mean, rstd, num_groups).reshape(n, c, s)       # (N, C, S)
    dw, db = channel_param_grads(dy, xhat, need_dw, need_db)                      # (C,) each
    if need_dx:
        gw = dy.copy() if weight is None else dy * weight[:, None]                # (N, C, S), a fresh array
        rows, m = n * num_groups, c // num_groups * s                             # one row (m,) per (n, g)
        dx = centered_dx(gw.reshape(rows, m), xhat.reshape(rows, m), rstd.reshape(rows), axes=1)
        dx = dx.reshape(n, c, s)
    return dx, dw, db


# --------------------------------------------------------------------------- the Function
class GroupNormFunction(Function):
    """y = xhat * w[c] + b[c], xhat normalized per row of the (N, G, C/G * S) view of x.

    With gw = g * w[c] and means over the row A (the C/G channels of a group times S):

        dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat))
        dw_c = sum_{n, s}(g * xhat)          db_c = sum_{n, s}(g)

    Saves x, mean (N, G), rstd (N, G) and w; backward recomputes xhat. The kernels allocate every
    gradient they return, so the engine hands them to ``.grad`` without a copy.

    Under create_graph=True, ``graph_backward`` gives dx = ``GroupNormBackward`` (the fused formula, whose
    backward is the hand-derived double backward), and dw, db as minigrad sums of g * xhat and g, xhat
    being this Function without affine.

    ``zero_rstd`` (InstanceNorm with eps = 0, as PyTorch's, whose instance norm is its batch norm's kernel):
    a row of zero variance gets rstd = 0 instead of 1/sqrt(0), so xhat = 0, y = bias and every gradient
    through the row is 0 (GroupNorm itself gives NaN there, as PyTorch's does).
    """
    saved_as = (("input", 0), ("result1", None), ("result2", None), ("weight", 1))   # PyTorch's names: mean, rstd
    saved_values = {"group": "num_groups"}

    @staticmethod
    def forward(ctx, x, weight, bias, num_groups, eps, zero_rstd=False, instance=False):
        x3, w, b = channel_operands(x, weight, bias)                 # (N, C, S), (C,), (C,) in the compute dtype
        with np.errstate(divide="ignore" if zero_rstd else "warn"):  # eps = 0: 1/sqrt(0), made 0 below
            y, mean, rstd = kernel(group_norm_forward)(x3, num_groups, w, b, eps=eps)   # mean, rstd (N, G)
        if x3.size and centering_overflows(rstd, x3.size // (x3.shape[0] * num_groups), x3.dtype):   # C/G * S each
            x3, w, b = channel_operands(x, weight, bias, np.float64)  # then statistics and backward in float64
            y, mean, rstd = kernel(group_norm_forward)(x3, num_groups, w, b, eps=eps)
        if zero_rstd:
            _zero_rstd_of_constant_rows(y, rstd, b, num_groups)
        save_for_channel_backward(ctx, x, weight, bias, mean, rstd, w, contiguous=True, num_groups=num_groups,
                                  eps=eps, zero_rstd=zero_rstd, instance=instance)
        return cast_like(y.reshape(x.shape), x.dtype, pooled=True)

    @staticmethod
    def backward(ctx, dout):
        return channel_backward(ctx, dout, group_norm_backward, num_groups=ctx.num_groups)

    @staticmethod
    def graph_backward(ctx, dout):
        _, mean, rstd, _ = ctx.saved_tensors
        groups, eps = ctx.num_groups, ctx.eps

        def dx_of(dout, x, w):
            return GroupNormBackward.apply(dout, x, w, mean=mean, rstd=rstd, eps=eps, num_groups=groups)

        def xhat_of(x):
            return GroupNormFunction.apply(x, None, None, num_groups=groups, eps=eps, zero_rstd=ctx.zero_rstd)
        # PyTorch's instance norm is its batch norm, whose bias gradient requires grad as the others do; its group
        # norm's does not
        return channel_graph_backward(ctx, dout, dx_of, xhat_of, constant_db=not ctx.instance)


def _zero_rstd_of_constant_rows(y, rstd, bias, num_groups):
    """In place: rows of zero variance (rstd = 1/sqrt(0 + 0) = inf) get rstd = 0 and y = xhat * w + b = b.
    y (N, C, S), rstd (N, G), bias (C,) or None."""
    constant = np.isinf(rstd)                                                      # (N, G)
    if constant.any():
        rstd[constant] = 0
        n, c, s = y.shape
        rows = np.repeat(constant, c // num_groups, axis=1)                         # (N, C)
        y[rows] = 0 if bias is None else np.broadcast_to(bias, (n, c))[rows][:, None]


class GroupNormBackward(ChannelNormBackward):
    """GroupNorm's dx as a Function of (dout, x, weight), A = each row of the (N, G, C/G*S) view: the
    formulas of ``ChannelNormBackward`` with means over the C/G channels and positions of a group."""

    first_order = group_norm_backward
    axes = 2

    @staticmethod
    def view(a, options):
        return as_groups(a, options["num_groups"])                        # (N, G, C/G*S)

    @staticmethod
    def statistics(x, mean, rstd, options):
        return group_norm_xhat(x, mean, rstd, options["num_groups"]), rstd[:, :, None]   # (N, G, C/G*S), (N, G, 1)


# --------------------------------------------------------------------------- the composite twins
def group_norm_composite(input, num_groups, weight=None, bias=None, eps=1e-5):
    """``group_norm`` written with ordinary ops."""
    _check_group_norm(input, num_groups, weight, bias)
    return _group_norm_composite(input, num_groups, weight, bias, eps)


def instance_norm_composite(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                            momentum=0.1, eps=1e-5):
    """``instance_norm`` written with ordinary ops."""
    return _instance_norm(batch_norm_composite, _group_norm_composite, input, running_mean, running_var, weight, bias,
                          use_input_stats, momentum, eps)


def _group_norm_composite(input, num_groups, weight, bias, eps):
    """The composite normalization without argument checks (shared by GroupNorm and InstanceNorm)."""
    x = input.to(compute_dtype(input.dtype))
    xhat = normalize(as_groups(x, num_groups), (2,), eps).reshape(x.shape)   # rows of (N, G, C/G*S)
    return channel_affine(xhat, weight, bias).to(input.dtype)


# --------------------------------------------------------------------------- the public forms and their checks
@takes_tensors("input", "weight", "bias")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """``F.group_norm``."""
    _check_group_norm(input, num_groups, weight, bias)
    return GroupNormFunction.apply(input, weight, bias, num_groups=num_groups, eps=eps)


@takes_tensors("input", "running_mean", "running_var", "weight", "bias")
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """``F.instance_norm``: GroupNorm with G = C, or BatchNorm-eval on the running buffers. The result is a view (of
    itself), as PyTorch's is (of its batch norm's (1, N*C, ...) output): made under no_grad, a later write into it
    with grad enabled is refused, as in PyTorch."""
    out = _instance_norm(batch_norm, _group_norm_function, input, running_mean, running_var, weight, bias,
                         use_input_stats, momentum, eps)
    return out.view(out.shape)


def _group_norm_function(input, num_groups, weight, bias, eps):
    """InstanceNorm's GroupNorm: rstd = 0 on constant rows when eps = 0, as PyTorch's instance_norm. An empty input
    comes back as PyTorch's does (its instance_norm is batch_norm on the input seen as (1, N*C, ...), whose empty
    path copies it, scaled and shifted by the first weight and bias): no norm in its graph, and so no saved input
    whose in-place change would make backward refuse."""
    if input.numel() == 0:
        return empty_batch_norm(input, weight, bias)
    return GroupNormFunction.apply(input, weight, bias, num_groups=num_groups, eps=eps, zero_rstd=eps == 0,
                                   instance=True)


def _instance_norm(batch_norm_form, group_norm_form, input, running_mean, running_var, weight, bias, use_input_stats,
                   momentum, eps):
    """InstanceNorm on the running buffers (``batch_norm_form`` in eval mode) or on the instance statistics
    (``group_norm_form`` with G = C, after the checks and the running update). The forms are the
    Function-backed ones for ``instance_norm`` and the composite ones for ``instance_norm_composite``."""
    if not use_input_stats:
        _require_running_stats(running_mean, running_var)
        return batch_norm_form(input, running_mean, running_var, weight, bias, False, momentum, eps)
    _check_instance_args_and_update_running(input, running_mean, running_var, weight, bias, momentum)
    return group_norm_form(input, input.shape[1], weight, bias, eps)


def _check_group_norm(input, num_groups, weight, bias):
    """PyTorch's checks in PyTorch's order, including its quirk of rejecting N * C/G * prod(spatial) == 1
    (not the group size). weight and bias must be vectors of C elements (BatchNorm only counts elements)."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    if not is_floating_point(input.dtype):   # integer input: parameters of another dtype are PyTorch's first error
        check_param_dtypes(input, weight, bias)
    check_floating_channels("GroupNormKernelImpl", input)
    num_groups = int_arg(num_groups, "group_norm", "num_groups", 2)
    n, c = input.shape[:2]
    verify_batch_size((n * c // num_groups, num_groups) + input.shape[2:])
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != (c,):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    check_param_dtypes(input, weight, bias)


def _check_instance_args_and_update_running(input, running_mean, running_var, weight, bias, momentum):
    """Checks for the instance-statistics path, then (if buffers are given) the running update with
    the batch average of the instance means and unbiased instance variances."""
    verify_spatial_size(input.shape)
    check_running_pair(running_mean, running_var)
    check_channel_input(input, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    check_param_dtypes(input, weight, bias)          # PyTorch's InstanceNorm takes running stats of any dtype
    if running_mean is not None:
        x3 = channels_view(input._data)
        n, c, s = x3.shape
        mean, var = kernel(batch_norm_stats)(x3.reshape(1, n * c, s))   # per instance: (N*C,)
        update_running_stats(running_mean, running_var, mean.reshape(n, c).mean(0),
                             (var * (s / (s - 1))).reshape(n, c).mean(0), momentum)


def _require_running_stats(running_mean, running_var):
    if running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
