"""What the row norms share (RMSNorm, LayerNorm): their argument checks, the (R, D) row view, the affine map.

Both normalize over the trailing dims given by ``normalized_shape`` (D = their product elements
per row) and both have elementwise parameters of shape ``normalized_shape``. The Functions hand
the kernels x as C-contiguous rows (R, D) in the compute dtype (float16 upcast to float32) and
parameters as flat (D,) arrays; gradients come back as rows and are reshaped here to the shapes
of the tensors they belong to. Each row is normalized on its own: per-row statistics are 1-D
arrays (R,), broadcast back over a row as ``stat[:, None]``.
"""
import numpy as np

from ..._checks import is_int, size_arg, type_name
from ...dtypes import cast_like, compute_dtype, is_floating_point, kind_of
from .common import contiguous_as, sum64


# --------------------------------------------------------------------------- arguments
def as_normalized_shape(normalized_shape, fname="layer_norm"):
    """``normalized_shape`` as a tuple of ints; an int ``n`` means ``(n,)`` (as the PyTorch modules take it).
    Floats, strings and negative sizes are refused (``_checks.size_arg``)."""
    if is_int(normalized_shape):
        return size_arg((normalized_shape,), fname, "normalized_shape", position=2)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type_name(normalized_shape)}")
    return size_arg((tuple(normalized_shape),), fname, "normalized_shape", position=2)


def functional_normalized_shape(normalized_shape, fname):
    """``F.layer_norm``/``F.rms_norm`` take a tuple or list only (the modules also take an int)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type_name(normalized_shape)}")
    return as_normalized_shape(normalized_shape, fname)


def check_row_norm_args(input, normalized_shape, weight=None, bias=None, *, rms=False):
    """PyTorch's checks for layer_norm (``rms=False``) or rms_norm (``rms=True``), in PyTorch's order
    and wording, before anything is computed. The two differ in PyTorch 2.13: rms_norm raises
    ValueError for an input with fewer dims than ``normalized_shape``, and writes the expected shape
    as ``[*3, 4]`` where layer_norm writes ``[*, 3, 4]``.
    Returns ``normalized_shape`` as a tuple of ints (an int ``n`` means ``(n,)``)."""
    shape = as_normalized_shape(normalized_shape, "rms_norm" if rms else "layer_norm")
    if len(shape) == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           f"one element, but got normalized_shape = {list(shape)}")
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(param.shape)} and normalized_shape = {list(shape)}")
    x_shape, n = tuple(input.shape), len(shape)
    if rms and len(x_shape) < n:
        raise ValueError(f"Input tensor must have at least {n} dimensions, but got {len(x_shape)}")
    if len(x_shape) < n or x_shape[len(x_shape) - n:] != shape:
        leading = "*" if rms else "*, "
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{leading}{', '.join(map(str, shape))}], but got input of size{list(x_shape)}")
    if not (is_floating_point(input.dtype) or (rms and kind_of(input.dtype) == "c")):   # (rms_norm: complex too)
        params = [p.dtype for p in (weight, bias) if p is not None]
        if not rms and any(d != input.dtype for d in params):   # layer_norm: PyTorch's mixed-dtype error comes first
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype." if all(
                d == np.float32 for d in params) else "mixed dtype (CPU): expect parameter to have scalar type of Float")
        raise NotImplementedError(f"normalization over rows is only implemented for floating-point input, "
                                  f"got {input.dtype}")
    return shape


# --------------------------------------------------------------------------- the row view (Functions)
def as_rows(a, d, dtype=None):
    """The ndarray ``a`` (*, D-elements trailing) as C-contiguous rows (R, D) in the compute dtype (or ``dtype``:
    the statistics' dtype, float64 where float32 would overflow, ``common.centering_overflows``)."""
    return contiguous_as(a.reshape(-1, d), compute_dtype(a.dtype) if dtype is None else dtype)


def row_param(t, dtype):
    """A weight or bias Tensor (normalized_shape) as a flat (D,) array of ``dtype``; None stays None."""
    return None if t is None else np.ascontiguousarray(t._data.reshape(-1), dtype=dtype)


def row_operands(input, weight, bias, d, dtype=None):
    """x as rows (R, D) and weight/bias as (D,), all in the compute dtype of ``input`` (or ``dtype``)."""
    x = as_rows(input._data, d, dtype)
    return x, row_param(weight, x.dtype), row_param(bias, x.dtype)


def from_rows(y, input):
    """A kernel's output rows (R, D) back in ``input``'s shape and dtype (the one cast back for float16)."""
    return cast_like(y.reshape(input.shape), input.dtype, pooled=True)


def shaped_grads(dx, dw, db, input_shape, normalized_shape):
    """Kernel gradients (rows (R, D) and (D,)) in the shapes of input, weight and bias; None stays None.
    The engine casts each to its tensor's dtype (float32 -> float16 for half inputs)."""
    return (None if dx is None else dx.reshape(input_shape),
            None if dw is None else dw.reshape(normalized_shape),
            None if db is None else db.reshape(normalized_shape))


# --------------------------------------------------------------------------- NumPy reference pieces
def rowdot(a, b):
    """sum_j a[r, j] * b[r, j] for each row, accumulated in float64, in a's dtype: (R,)."""
    return np.einsum("rd,rd->r", a, b, dtype=np.float64).astype(a.dtype, copy=False)


def affine_rows(xhat, weight, bias):
    """y = xhat * weight + bias, in place on xhat (R, D) (weight/bias (D,) or None)."""
    if weight is not None:
        xhat *= weight
    if bias is not None:
        xhat += bias
    return xhat


def row_param_grads(dy, xhat, need_dw, need_db):
    """dw = sum_rows(dy * xhat), db = sum_rows(dy): the affine part of every row norm's backward, (D,) each."""
    dw = sum64(dy * xhat, 0) if need_dw else None
    db = sum64(dy, 0) if need_db else None
    return dw, db


# --------------------------------------------------------------------------- composite twins
def row_dims(normalized_shape):
    """The trailing axes a row norm reduces over, as negative indices (for the composite twins)."""
    return tuple(range(-len(normalized_shape), 0))


def row_affine(xhat, weight, bias):
    """The composite elementwise affine map xhat * weight + bias, parameters cast to xhat's dtype."""
    if weight is not None:
        xhat = xhat * weight.to(xhat.dtype)
    if bias is not None:
        xhat = xhat + bias.to(xhat.dtype)
    return xhat
