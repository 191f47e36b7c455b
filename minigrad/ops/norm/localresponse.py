"""Local response normalization (AlexNet's LRN, PyTorch's ``F.local_response_norm``), derived in
docs/derivations/localresponsenorm.md.

Each value of x (N, C, *spatial) is divided by a power of the mean square of its neighbours across channels::

    s[c] = sum over c' in W(c) of x[c']^2        W(c) = [c - size//2, c + (size-1)//2], cut to the channels
    d[c] = k + alpha / size * s[c]               (the divisor stays ``size`` at the edges, as in PyTorch)
    y[c] = x[c] * d[c]^(-beta)

y[c] depends on x[j] directly (j = c) and through d[c] for every c whose window holds j: c in the mirrored
window W'(j) = [j - (size-1)//2, j + size//2]. With g the upstream gradient and scale = d^(-beta)::

    dx[j] = g[j] * scale[j] - 2 * alpha * beta / size * x[j] * sum over c in W'(j) of g[c] * x[c] * scale[c] / d[c]

``nn.CrossMapLRN2d`` (PyTorch's port of Lua Torch's layer) is the same y on (N, C, H, W) with another window (the
``cross_map`` functions at the end of this file).

There are no parameters and no running statistics. The formulas are written once (``_divisor``, ``_input_grad``)
on ndarrays or Tensors alike: on arrays x (N, C, S), S = prod(spatial), they are the kernel contract's NumPy references
(``local_response_norm_forward`` and ``_backward``, numba twins of the same names in minigrad/kernels/numba_kernels.py),
which the Function runs; its ``graph_backward`` runs the backward on Tensors, so create_graph=True differentiates it
again; ``local_response_norm_composite`` runs the forward on Tensors (autograd's derivative, the tests' oracle).
"""
import operator

import numpy as np

from ..._checks import refuses_complex, takes_tensors
from ...autograd import Function
from ...dtypes import compute_dtype, get_default_dtype, is_floating_point, scalar_type_name
from ...kernels import kernel
from ...tensor import Tensor
from ..pool import pad


def window_sum(a, before, after):
    """out[:, c] = the sum of a[:, c'] over c' in [c - before, c + after] that are channels of a (N, C, ...)
    (zeros stand outside); an ndarray or a Tensor."""
    c = a.shape[1]
    if isinstance(a, Tensor):
        padded = pad(a, (0, 0) * (a.ndim - 2) + (before, after))      # F.pad's order: the last dim first
    else:
        padded = np.pad(a, [(0, 0), (before, after)] + [(0, 0)] * (a.ndim - 2))
    return sum(padded[:, i:i + c] for i in range(before + after + 1))  # (N, C, ...)


def _divisor(x, size, alpha, k):
    """d = k + alpha / size * (sum of x^2 over the window W(c) = [c - size//2, c + (size-1)//2])."""
    return k + alpha / size * window_sum(x * x, size // 2, (size - 1) // 2)


def _input_grad(g, x, d, scale, size, alpha, beta):
    """dx = g * scale - 2 alpha beta / size * x * (sum of g * x * scale / d over the mirrored window W')."""
    return g * scale - 2 * alpha * beta / size * x * window_sum(g * x * scale / d, (size - 1) // 2, size // 2)


def local_response_norm_forward(x, size, alpha, beta, k, keep=True):
    """(y, d) for x (N, C, S): y = x * d^(-beta), d = ``_divisor`` (None unless ``keep``: saved for a backward)."""
    d = _divisor(x, size, alpha, k)
    return x * d ** -beta, (d if keep else None)


def local_response_norm_backward(dy, x, d, size, alpha, beta, need_dx=True):
    """(dx,) for an upstream gradient dy (N, C, S), from the forward's d (the gradient mask: x's only)."""
    return (_input_grad(dy, x, d, d ** -beta, size, alpha, beta) if need_dx else None,)


class LocalResponseNormFunction(Function):
    """y = x * d^(-beta), d = k + alpha/size * windowed sum of x^2 across channels (module docstring): the
    backend's kernels (kernels/__init__.py) on x (N, C, S). Saves x and d."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        x = input._data.astype(compute_dtype(input.dtype), copy=False).reshape(*input.shape[:2], -1)  # (N, C, S)
        keep = ctx.needs_input_grad[0]                                # d is saved only for a gradient of x
        y, d = kernel(local_response_norm_forward)(x, size, alpha, beta, k, keep=keep)
        ctx.save_for_backward(x, d)
        ctx.options, ctx.k, ctx.shape = (size, alpha, beta), k, input.shape
        return y.reshape(input.shape).astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, d = ctx.saved_tensors
        if d is None:                                                  # x needs no gradient: nothing was saved
            return (None,) * 5
        dy = dout._data.astype(x.dtype, copy=False).reshape(x.shape)
        dx, = kernel(local_response_norm_backward)(dy, x, d, *ctx.options)
        return (dx.reshape(ctx.shape),) + (None,) * 4

    @staticmethod
    def graph_backward(ctx, dout):
        x, _ = ctx.saved_tensors
        size, alpha, beta = ctx.options
        x_t = ctx.input_tensor(0, x.reshape(ctx.shape))
        d = _divisor(x_t, size, alpha, ctx.k)
        return (_input_grad(dout.to(x.dtype), x_t, d, d ** -beta, size, alpha, beta),) + (None,) * 4


def _check_arguments(input, size):
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"local_response_norm(): argument 'size' must be int, not {type(size).__name__}")
    if size <= 0:
        raise RuntimeError(f"local_response_norm(): size should be greater than zero, but got size: {size}")


@takes_tensors("input")
@refuses_complex('"avg_pool2d" not implemented for \'{dtype}\'')
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``F.local_response_norm``: PyTorch's semantics (module docstring), the hand-derived backward. An empty
    input is returned as it is; integer input gives the default float dtype (PyTorch floors the window's mean
    square of integers first, and so does this)."""
    _check_arguments(input, size)
    if input.numel() == 0:
        return input
    if input.dtype.kind == "b" or input.dtype.kind in "iu" and input.dtype != np.int64:
        # (PyTorch pools the squares in the input's dtype, which its average pools refuse but for int64)
        raise NotImplementedError(f"\"{'avg_pool2d' if input.ndim == 3 else 'avg_pool3d_out_frame'}\" not implemented for "
                                  f"'{scalar_type_name(input.dtype)}'")
    if input.dtype.kind in "iu":
        return _integer_local_response_norm(input, operator.index(size), alpha, beta, k)
    return LocalResponseNormFunction.apply(input, operator.index(size), float(alpha), float(beta), float(k))


def _integer_local_response_norm(input, size, alpha, beta, k):
    """PyTorch's result for integer input: the window's sum of squares divided by size in integer arithmetic."""
    x = input._data.astype(np.int64)
    mean_square = window_sum(x * x, size // 2, (size - 1) // 2) // size
    dtype = get_default_dtype()
    return Tensor((x / (mean_square * alpha + k) ** beta).astype(dtype))


def local_response_norm_composite(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``local_response_norm`` written with ordinary minigrad ops (float input), differentiated by autograd."""
    _check_arguments(input, size)
    x = input.to(compute_dtype(input.dtype))
    return (x * _divisor(x, size, alpha, k) ** -beta).to(input.dtype)


# ------------------------------------------------------------------------------------------------ CrossMapLRN2d
# nn.CrossMapLRN2d computes y = x * d^(-beta) as above, on (N, C, H, W), with its own window: PyTorch's forward keeps a
# running sum over the channels that adds channel c + h (h = (size-1)//2) and drops channel c - h - 1 only when that
# is 1 or more, so channel 0 is never dropped. Its window is W(c) = [c - h, c + h] and channel 0:
#     d[c] = k + alpha/size * (sum over |c' - c| <= h of x[c']^2  +  [c > h] x[0]^2)
# Channel j's square reaches d[c] for |c - j| <= h (a symmetric window is its own mirror), and channel 0's also every
# d[c] with c > h; with t = g * x * d^(-beta) / d (docs/derivations/localresponsenorm.md, section 7):
#     dx[j] = g[j] d[j]^(-beta) - 2 alpha beta / size * x[j] * (sum over |c - j| <= h of t[c]  +  [j = 0] sum over c > h
#             of t[c])
# PyTorch's own backward is another formula (its window is off by a channel and it has no channel-0 term): it is not
# the derivative of its forward, and torch.autograd.gradcheck fails on it. minigrad's is the derivative.


def _channel_marks(x, h):
    """(beyond, first): arrays of shape (C, 1, ...) in x's dtype, broadcasting against x (N, C, ...): 1 where c > h,
    and 1 at channel 0."""
    c = np.arange(x.shape[1]).reshape((-1,) + (1,) * (x.ndim - 2))
    dtype = x._data.dtype if isinstance(x, Tensor) else x.dtype
    return (c > h).astype(dtype), (c == 0).astype(dtype)


def _channel_total(a):
    """a (N, C, ...) summed over the channels, keeping the axis; an ndarray or a Tensor."""
    return a.sum(dim=1, keepdim=True) if isinstance(a, Tensor) else a.sum(axis=1, keepdims=True)


def _cross_map_divisor(x, size, alpha, k):
    """d = k + alpha / size * (sum of x^2 over [c - h, c + h], h = (size-1)//2, plus x[0]^2 where c > h)."""
    h = (size - 1) // 2
    beyond, _ = _channel_marks(x, h)
    square = x * x
    return k + alpha / size * (window_sum(square, h, h) + square[:, :1] * beyond)


def _cross_map_input_grad(g, x, d, scale, size, alpha, beta):
    """dx = g * scale - 2 alpha beta / size * x * (t summed over [j - h, j + h], and at j = 0 also over c > h),
    t = g * x * scale / d."""
    h = (size - 1) // 2
    beyond, first = _channel_marks(x, h)
    t = g * x * scale / d
    return g * scale - 2 * alpha * beta / size * x * (window_sum(t, h, h) + _channel_total(t * beyond) * first)


class CrossMapLRN2dFunction(Function):
    """y = x * d^(-beta) with CrossMapLRN2d's window (the comment above); saves x and d."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        x = input._data.astype(compute_dtype(input.dtype), copy=False)                  # (N, C, H, W)
        d = _cross_map_divisor(x, size, alpha, k)
        ctx.save_for_backward(x, d)
        ctx.options, ctx.k = (size, alpha, beta), k
        return (x * d ** -beta).astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, d = ctx.saved_tensors
        size, alpha, beta = ctx.options
        dy = dout._data.astype(x.dtype, copy=False)
        return (_cross_map_input_grad(dy, x, d, d ** -beta, size, alpha, beta),) + (None,) * 4

    @staticmethod
    def graph_backward(ctx, dout):
        x, _ = ctx.saved_tensors
        size, alpha, beta = ctx.options
        x_t = ctx.input_tensor(0, x)
        d_t = _cross_map_divisor(x_t, size, alpha, ctx.k)
        return (_cross_map_input_grad(dout.to(x.dtype), x_t, d_t, d_t ** -beta, size, alpha, beta),) + (None,) * 4


def _check_cross_map_arguments(input, size):
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"CrossMapLRN2d: size must be an int, not {type(size).__name__}")
    if size <= 0:
        raise ValueError(f"CrossMapLRN2d: size must be at least 1, got {size}")
    if input.shape[1] == 0:
        raise IndexError(f"CrossMapLRN2d: expected at least one channel, got input of size {list(input.shape)}")
    if not is_floating_point(input.dtype):
        raise RuntimeError(f"CrossMapLRN2d: expected a floating point input, got {input.dtype}")


@takes_tensors("input")
@refuses_complex("CrossMapLRN2d: complex input is not supported (got {dtype})", error=TypeError)
def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """What ``nn.CrossMapLRN2d(size, alpha, beta, k)`` computes (PyTorch has no functional form): PyTorch's forward,
    the derivative of it as the backward (the comment above ``_channel_marks``)."""
    _check_cross_map_arguments(input, size)
    return CrossMapLRN2dFunction.apply(input, operator.index(size), float(alpha), float(beta), float(k))


def cross_map_lrn2d_composite(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``cross_map_lrn2d`` written with ordinary minigrad ops, differentiated by autograd (the tests' oracle)."""
    _check_cross_map_arguments(input, size)
    x = input.to(compute_dtype(input.dtype))
    return (x * _cross_map_divisor(x, size, alpha, k) ** -beta).to(input.dtype)
