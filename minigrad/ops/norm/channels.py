"""What the channel norms share (BatchNorm, InstanceNorm, GroupNorm): checks, the (N, C, S) view, running stats.

x of shape (N, C, *spatial) is handed to the kernels as a C-contiguous (N, C, S) array with
S = prod(spatial) (1 for (N, C) input), in the compute dtype; weight and bias are per channel,
flat (C,) arrays. The families differ only in the axes A their statistics reduce over:

    BatchNorm      A = {N, S} of (N, C, S)             statistics (C,)
    GroupNorm      A = the last axis of (N, G, C/G*S)  statistics (N, G)
    InstanceNorm   GroupNorm with G = C                statistics (N, C)
"""
import math

import numpy as np

from ...autograd import Function
from ...autograd.version import bump
from ...dtypes import LOW_PRECISION, cast_like, compute_dtype, is_floating_point, scalar_type_name
from ...kernels import kernel
from ..elementwise import fused_node_grads
from .common import contiguous_as, centered_second_order, centered_statistics, input_grads, second_order_grads, sum64

_TORCH_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


# --------------------------------------------------------------------------- arguments
def check_channel_input(input, **per_channel):
    """The argument checks BatchNorm and InstanceNorm share: input (N, C, *spatial) with at least 2 dims,
    and each given per-channel tensor (weight, bias, running stats) holding C elements. Returns C."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    check_floating_channels("batch_norm", input)
    c = input.shape[1]
    for name, t in per_channel.items():
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    return c


def check_floating_channels(kernel, input):
    """PyTorch's NotImplementedError for integer or bool input to a channel norm (kernels are floating-point)."""
    if not is_floating_point(input.dtype):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input.dtype)}\'')


def check_param_dtypes(input, *params):
    """PyTorch's CPU rule for the parameters and buffers of BatchNorm, InstanceNorm and GroupNorm (None
    skipped; PyTorch's order: weight, bias, running_mean, running_var): each has the input's dtype, or
    all are float32 under float16 or bfloat16 input (mixed precision). Otherwise PyTorch's error for the case."""
    for t in params:   # the common case first: every parameter has the input's dtype
        if t is not None and t.dtype != input.dtype:
            break
    else:
        return
    dtypes = [t.dtype for t in params if t is not None]
    if input.dtype in LOW_PRECISION and all(d == np.float32 for d in dtypes):
        return
    if dtypes[0] == input.dtype:
        found = next(d for d in dtypes if d != input.dtype)
        names = [_TORCH_TYPE_NAMES.get(str(d), str(d)) for d in (input.dtype, found)]
        raise RuntimeError(f"expected scalar type {names[0]} but found {names[1]}")
    if any(d != np.float32 for d in dtypes):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def verify_batch_size(size):
    """PyTorch's check that a statistic over (N, *spatial) sees more than one value (size = N, C, *spatial)."""
    if math.prod((size[0],) + tuple(size[2:])) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(size)}")


def verify_spatial_size(size):
    """PyTorch's check that instance statistics see more than one spatial element (size = N, C, *spatial)."""
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(size)}")


def check_running_pair(running_mean, running_var):
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")


# --------------------------------------------------------------------------- running statistics (state)
def update_running_stats(running_mean, running_var, mean, unbiased_var, momentum):
    """running <- (1 - momentum) * running + momentum * statistic, in place and outside the graph: written
    straight into the buffers' memory, whose version counter counts the write (as ``copy_`` would,
    at half its cost)."""
    for running, stat in ((running_mean, mean), (running_var, unbiased_var)):
        blend_running(running._data, stat, momentum)
        bump(running._data)


def blend_running(running, statistic, momentum):
    """running <- momentum * statistic + (1 - momentum) * running, into the ndarray ``running``'s memory."""
    np.copyto(running, momentum * statistic + (1 - momentum) * running, casting="unsafe")


def buffer_array(buffer, dtype):
    """A running buffer (a Tensor of C elements) as the flat (C,) array of ``dtype`` that a kernel updates in
    place: a view of its memory when it is contiguous and of that dtype, else a copy (``buffer_written``)."""
    return np.ascontiguousarray(buffer._data.reshape(-1), dtype=dtype)


def buffer_written(buffer, array):
    """After a kernel updated ``array = buffer_array(buffer, ...)``: the values into the buffer's memory if
    ``array`` is a copy (cast to the buffer's dtype), and the write counted in its version."""
    if array.base is None:                          # a copy: a view of the buffer always has a base
        np.copyto(buffer._data, array.reshape(buffer._data.shape), casting="unsafe")
    bump(buffer._data)


def count_batch(num_batches_tracked):
    """``num_batches_tracked += 1``, written as ``update_running_stats`` writes (one version bump): a fifth of
    the cost of ``add_(1)``, which a small BatchNorm step notices."""
    num_batches_tracked._data += 1
    bump(num_batches_tracked._data)


# --------------------------------------------------------------------------- the (N, C, S) view (Functions)
def channels_view(a, dtype=None):
    """The ndarray ``a`` (N, C, *spatial) as a C-contiguous (N, C, S) array in the compute dtype (or ``dtype``:
    the statistics' dtype, float64 where float32 would overflow, ``centering_overflows``), S = prod(spatial)
    (1 for (N, C) input): the layout the channel kernels take."""
    n, c = a.shape[:2]
    return contiguous_as(a.reshape(n, c, math.prod(a.shape[2:])), compute_dtype(a.dtype) if dtype is None else dtype)


def channel_array(t, dtype):
    """A per-channel Tensor (weight, bias, running stat) as a flat (C,) array of ``dtype``, None stays None.
    Always a copy: what a Function saves must not move when an optimizer or a running update writes in place."""
    return None if t is None else np.array(t._data.reshape(-1), dtype=dtype)


def channel_operands(x, weight, bias, dtype=None):
    """x as (N, C, S) and weight/bias as (C,) arrays, all in the compute dtype of ``x`` (or ``dtype``). The weight
    is a copy (the backward keeps it); the bias is read once, by the forward kernel: a view when it already has
    the dtype."""
    x3 = channels_view(x._data, dtype)
    b = None if bias is None else np.ascontiguousarray(bias._data.reshape(-1), dtype=x3.dtype)
    return x3, channel_array(weight, x3.dtype), b


def save_for_channel_backward(ctx, x, weight, bias, mean, rstd, w, contiguous=False, **options):
    """What every channel backward reads: x's array, the statistics, the weight array w (all ndarrays: nothing
    to detach); the shapes of x, weight and bias, which its gradients take; and the family's options, as
    ``ctx.<name>``. ``contiguous``: x's array made contiguous first, as PyTorch's group (and instance) norm saves
    ``input.contiguous()`` (a copy of a non-contiguous x, which a later write into x does not reach)."""
    x_array = np.ascontiguousarray(x._data) if contiguous else x._data
    ctx.save_for_backward(x_array, mean, rstd, w)
    if weight is not None and not options.get("instance"):   # PyTorch's batch and group norm save the weight itself
        ctx.watch(weight._data)                              # (its instance norm a repeated copy)
    ctx.shapes = (x.shape, None if weight is None else weight.shape, None if bias is None else bias.shape)
    ctx.__dict__.update(options)


def channel_backward(ctx, dout, backward_kernel, **options):
    """Run a channel family's reference ``backward_kernel`` (or its numba twin, ``kernel``) on what
    ``save_for_channel_backward`` saved, for the gradients asked for; they come back in the shapes of
    input, weight and bias."""
    x, mean, rstd, w = ctx.saved_tensors
    need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
    dx, dw, db = kernel(backward_kernel)(channels_view(dout._data, rstd.dtype), channels_view(x, rstd.dtype), mean,
                                         rstd, weight=w, **options, need_dx=need_dx, need_dw=need_dw, need_db=need_db)
    x_shape, w_shape, b_shape = ctx.shapes
    return input_grads(ctx, None if dx is None else dx.reshape(x_shape), None if dw is None else dw.reshape(w_shape),
                       None if db is None else db.reshape(b_shape))


# --------------------------------------------------------------------------- create_graph=True
def channel_graph_backward(ctx, dout, dx_of, xhat_of, constant_db=False):
    """A channel norm Function's ``graph_backward`` (what ``save_for_channel_backward`` saved, with minigrad
    ops): dx = ``dx_of(dout, x, w)`` (x and w (C,) joined to the graph), dw_c = sum_{n,s}(g * xhat) with
    xhat = ``xhat_of(x)`` (the norm without affine, in the compute dtype), db_c = sum_{n,s}(g); each requiring
    grad when x or w does, as from PyTorch's one backward node (``fused_node_grads``), db not if ``constant_db``."""
    x, _, rstd, w = ctx.saved_tensors
    need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
    _, w_shape, b_shape = ctx.shapes
    x_t = ctx.input_tensor(0, x)
    g = dout.to(rstd.dtype)                                          # the compute dtype
    dims = (0,) + tuple(range(2, x.ndim))                            # N and the spatial axes
    dx = dw = db = None
    if need_dx:
        dx = dx_of(dout, x_t, None if w is None else ctx.input_tensor(1, w.reshape(w_shape)).reshape(-1))
    if need_dw:
        dw = (g * xhat_of(x_t.to(g.dtype))).sum(dims).reshape(w_shape)
    if need_db:
        db = g.sum(dims).reshape(b_shape)
    grads = fused_node_grads(ctx, (dx, dw, db), sources=(0, 1), constant=(2,) if constant_db else ())
    return input_grads(ctx, *grads)


class ChannelNormBackward(Function):
    """A centered channel norm's dx as a Function of (dout, x, weight), x (N, C, *spatial), weight (C,):
    what its Function's ``graph_backward`` returns for x, so that dx can be differentiated again.

    Forward: the family's first-order kernel (``first_order``, its ``options``), dx = rstd * (gw - mean_A(gw)
    - xhat * mean_A(gw * xhat)), gw = dout * w_c. Backward, with G the upstream gradient of dx, means over
    A (common.centered_second_order)::

        a = mean_A(G * xhat),  m = mean_A(gw * xhat),  Gc = G - mean_A(G)
        d gw   = rstd * (Gc - xhat * a)
        d dout = d gw * w_c          d w_c = sum_{n,s}(d gw * dout)
        d x    = -rstd^2 * (m * Gc + a * (gw - mean_A(gw)) + xhat * (mean_A(Gc * gw) - 3 * a * m))

    ``graph_backward`` evaluates the same formulas on Tensors, xhat and rstd recomputed from x with minigrad
    ops, so the third derivative (and beyond) comes from autograd through them. A family gives
    ``first_order``, the axes A of its statistics ``view`` of (N, C, S), and xhat and rstd (keeping A's
    axes) in that view from the saved statistics (``statistics``).
    """

    first_order = None        # the family's NumPy reference backward kernel
    axes = None               # A, in the view

    @staticmethod
    def view(a, options):
        """(N, C, S) -> the layout whose ``axes`` are A."""
        raise NotImplementedError

    @staticmethod
    def statistics(x, mean, rstd, options):
        """(xhat, rstd) in the view, from x (N, C, S) and the statistics the forward saved (ndarrays)."""
        raise NotImplementedError

    @staticmethod
    def forward(ctx, dout, x, weight, mean, rstd, eps, **options):
        x3, w, _ = channel_operands(x, weight, None, rstd.dtype)                  # (N, C, S), (C,)
        dx, _, _ = kernel(ctx.fn.first_order)(channels_view(dout._data, rstd.dtype), x3, mean, rstd, weight=w,
                                              **options, need_dx=True, need_dw=False, need_db=False)
        ctx.save_for_backward(dout._data, x._data, mean, rstd, w)
        ctx.w_shape, ctx.eps, ctx.options = None if weight is None else weight.shape, eps, options
        return cast_like(dx.reshape(x.shape), x.dtype)

    @staticmethod
    def backward(ctx, G):
        dout, x, mean, rstd, w = ctx.saved_tensors
        xhat, rstd_a = ctx.fn.statistics(channels_view(x, rstd.dtype), mean, rstd, ctx.options)   # in the view
        grads = centered_second_order(channels_view(G._data, rstd.dtype), channels_view(dout, rstd.dtype),
                                      None if w is None else w[:, None], xhat, rstd_a, ctx.fn.axes, (0, 2),
                                      lambda a: ctx.fn.view(a, ctx.options))
        return second_order_grads(ctx, grads, (x.shape, x.shape, ctx.w_shape))

    @staticmethod
    def graph_backward(ctx, G):
        dout, x, _, rstd, w = ctx.saved_tensors
        n, c = x.shape[:2]

        def view(a):
            return ctx.fn.view(a, ctx.options)

        def as_nsc(t):                                                # (N, C, S), compute dtype
            return t.to(rstd.dtype).reshape(n, c, math.prod(x.shape[2:]))
        xhat, rstd_a = centered_statistics(view(as_nsc(ctx.input_tensor(1, x))), ctx.fn.axes, ctx.eps)
        w_t = None if w is None else ctx.input_tensor(2, w.reshape(ctx.w_shape)).reshape(c, 1)
        grads = centered_second_order(as_nsc(G), as_nsc(ctx.input_tensor(0, dout)), w_t, xhat, rstd_a, ctx.fn.axes,
                                      (0, 2), view)
        return second_order_grads(ctx, grads, (x.shape, x.shape, ctx.w_shape))


# --------------------------------------------------------------------------- NumPy reference pieces
def affine_channels(xhat, weight, bias):
    """xhat * weight[c] + bias[c] on (N, C, S), in place (xhat is a fresh array)."""
    if weight is not None:
        xhat *= weight[:, None]
    if bias is not None:
        xhat += bias[:, None]
    return xhat


def channel_param_grads(dy, xhat, need_dw, need_db):
    """dw_c = sum_{n,s}(dy * xhat), db_c = sum_{n,s}(dy) on (N, C, S): every channel norm's affine backward."""
    dw = sum64(dy * xhat, (0, 2)) if need_dw else None
    db = sum64(dy, (0, 2)) if need_db else None
    return dw, db


# --------------------------------------------------------------------------- composite twins
def per_channel(t, ndim):
    """A per-channel Tensor (C,) reshaped to (C, 1, ..., 1), to broadcast against (N, C, *spatial) of ``ndim``."""
    return t.reshape((-1,) + (1,) * (ndim - 2))


def channel_affine(xhat, weight, bias):
    """The composite per-channel affine map xhat * weight[c] + bias[c] (either may be None)."""
    if weight is not None:
        xhat = xhat * per_channel(weight, xhat.ndim)
    if bias is not None:
        xhat = xhat + per_channel(bias, xhat.ndim)
    return xhat
