"""What every norm shares: the compute dtype, and the composite "normalize over these axes" step.

``normalize`` is the composite (autograd-differentiated) form of the one kernel behind all
five layers (normalization.md §1)::

    centered:   xhat = (x - mean_A(x)) / sqrt(mean_A((x - mean_A(x))^2) + eps)
    uncentered: xhat = x / sqrt(mean_A(x^2) + eps)                 (RMSNorm)

The fused Functions compute the same thing in one kernel call and differentiate it by hand.
"""
import numpy as np

from ...dtypes import compute_dtype


def normalize(x, dims, eps, centered=True):
    """xhat over ``dims`` (a tuple of axes) with ordinary minigrad ops, so autograd differentiates it."""
    xc = x - x.mean(dims, keepdim=True) if centered else x
    var = (xc * xc).mean(dims, keepdim=True)
    return xc * (var + eps).rsqrt()


# --------------------------------------------------------------------------- channel family (BN, IN, GN)
def check_channel_input(input, **per_channel):
    """The argument checks BatchNorm and InstanceNorm share: input (N, C, *spatial) with at least 2 dims,
    and each given per-channel tensor (weight, bias, running stats) holding C elements. Returns C."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    c = input.shape[1]
    for name, t in per_channel.items():
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    return c


_TORCH_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}


def check_param_dtypes(input, *params):
    """PyTorch's CPU rule for the parameters and buffers of BatchNorm, InstanceNorm and GroupNorm (None
    skipped; PyTorch's order: weight, bias, running_mean, running_var): each has the input's dtype, or
    all are float32 under float16 input (mixed precision). Otherwise PyTorch's error for the case."""
    dtypes = [t.dtype for t in params if t is not None]
    if all(d == input.dtype for d in dtypes) or (input.dtype == np.float16 and all(d == np.float32 for d in dtypes)):
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
    if int(np.prod((size[0],) + tuple(size[2:]))) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(size)}")


def channels_view(a):
    """The ndarray ``a`` (N, C, *spatial) as a C-contiguous (N, C, S) array in the compute dtype,
    S = prod(spatial) (1 for (N, C) input): the layout the channel kernels take."""
    n, c = a.shape[:2]
    return np.ascontiguousarray(a.reshape(n, c, int(np.prod(a.shape[2:]))), dtype=compute_dtype(a.dtype))


def channel_array(t, dtype):
    """A per-channel Tensor (weight, bias, running stat) as a flat (C,) array of ``dtype``, None stays None.
    Always a copy: what a Function saves must not move when an optimizer or a running update writes in place."""
    return None if t is None else np.array(t._data.reshape(-1), dtype=dtype)


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


def verify_spatial_size(size):
    """PyTorch's check that instance statistics see more than one spatial element (size = N, C, *spatial)."""
    if int(np.prod(tuple(size[2:]))) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(size)}")


def channel_grads(ctx, dx, dw, db):
    """A channel kernel's (N, C, S) / (C,) gradients in the shapes of x, weight and bias
    (``ctx.shapes``, set by the fused Function's forward)."""
    x_shape, w_shape, b_shape = ctx.shapes
    return (None if dx is None else dx.reshape(x_shape), None if dw is None else dw.reshape(w_shape),
            None if db is None else db.reshape(b_shape))


def shape_of(t):
    return None if t is None else t.shape
