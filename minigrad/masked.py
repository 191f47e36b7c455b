"""``torch.masked``: reductions and normalizations that ignore the elements where ``mask`` is False.

Each op replaces the masked-out elements by the identity of its reduction (0 for sums, 1 for products, -inf for
maxima and log-sum-exp, +inf for minima, NaN for the median, which then ignores NaNs) and runs the ordinary op,
so gradients reach the kept elements only. The mask is broadcast to the input's shape and read as bool.
``mean``, ``var`` and ``std`` divide by the number of kept elements (a slice with none gives NaN). Plain tensors
in and out, as PyTorch's functions give for them (the prototype ``MaskedTensor`` class is not provided).
"""
import numpy as np

from . import linalg
from ._checks import takes_tensors
from .dtypes import is_floating_point, scalar_type_name
from .ops.dims import normalize_dim
from .tensor import Tensor

_SMALL_INTS = (np.uint8, np.bool_, np.int8, np.int16, np.int32)   # summed and multiplied as int64


def _dims(dim, ndim):
    """``dim`` as a sorted tuple of dims (None or () meaning all), PyTorch's errors for repeats and range."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if normalize_dim(d, max(ndim, 1)) in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        dims.append(normalize_dim(d, max(ndim, 1)))
    return tuple(sorted(dims))


def _mask(input, mask):
    """The mask broadcast to ``input``'s shape, as bool (all True when None)."""
    if mask is None:
        return Tensor(np.ones(input.shape, bool))
    if mask.ndim > input.ndim:
        raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
    return Tensor(np.broadcast_to(mask._data, input.shape).astype(bool))


def _identity(kind, input):
    """The value masked-out elements take for a reduction of ``kind`` on ``input``'s dtype."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if kind in ("max", "min"):
        if is_floating_point(input.dtype) or input.dtype.kind == "c":
            return -np.inf if kind == "max" else np.inf
        info = np.iinfo(input.dtype)
        return info.min if kind == "max" else info.max
    raise ValueError(kind)


def _filled(input, mask, kind):
    """``input`` with its masked-out elements set to the identity of ``kind`` (no gradient reaches them)."""
    if mask is None:
        return input
    value = Tensor(np.asarray(_identity(kind, input), dtype=input.dtype))
    return input.where(_mask(input, mask), value)


def _accumulating_dtype(input, dtype):
    return dtype if dtype is not None else (np.dtype(np.int64) if input.dtype.type in _SMALL_INTS else input.dtype)


# --------------------------------------------------------------------------- reductions
@takes_tensors("input", optional=("mask",))
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _filled(input, mask, "sum").sum(_dims(dim, input.ndim), keepdim=bool(keepdim),
                                          dtype=_accumulating_dtype(input, dtype))


@takes_tensors("input", optional=("mask",))
def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    result = _filled(input, mask, "prod").to(_accumulating_dtype(input, dtype))
    for d in reversed(_dims(dim, input.ndim)):
        result = result.prod(d, keepdim=bool(keepdim))
    return result


@takes_tensors("input", optional=("mask",))
def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _filled(input, mask, "sum").cumsum(_dims(dim, input.ndim)[0], dtype=dtype).to(dtype)


@takes_tensors("input", optional=("mask",))
def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _filled(input, mask, "prod").cumprod(_dims(dim, input.ndim)[0], dtype=dtype).to(dtype)


@takes_tensors("input", optional=("mask",))
def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = _filled(input, mask, "max").amax(_dims(dim, input.ndim), keepdim=bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = _filled(input, mask, "min").amin(_dims(dim, input.ndim), keepdim=bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = _filled(input, mask, "max").argmax(dim, keepdim=bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = _filled(input, mask, "min").argmin(dim, keepdim=bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def _count(input, dim, keepdim, mask):
    """How many elements each slice keeps (int64)."""
    return _mask(input, mask).sum(_dims(dim, input.ndim), keepdim=bool(keepdim))


@takes_tensors("input", optional=("mask",))
def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    target = input.dtype if dtype is None else np.dtype(dtype)
    if not (is_floating_point(target) or target.kind == "c"):
        source = "Input" if dtype is None else "Optional"
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {scalar_type_name(target)}")
    return sum(input, dim, keepdim=keepdim, dtype=target, mask=mask) / _count(input, dim, keepdim, mask)


@takes_tensors("input", optional=("mask",))
def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    floating = is_floating_point(input.dtype)
    x = input if floating else input.float()
    if mask is not None:
        x = x.where(_mask(input, mask), Tensor(np.asarray(np.nan, dtype=x.dtype)))
    out = x.nanmedian(_dims(dim, input.ndim)[0], keepdim=keepdim).values
    if floating:
        return out
    if bool(out.isnan().any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype)


@takes_tensors("input", optional=("mask",))
def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = _filled(input, mask, "max").logsumexp(_dims(dim, input.ndim), keepdim=keepdim)
    return out.to(input.dtype if dtype is None else dtype)


@takes_tensors("input", "other", optional=("input_mask", "other_mask"))
def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    out = _filled(input, input_mask, "max").logaddexp(_filled(other, other_mask, "max"))
    return out.to(input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    kind = "min" if ord == -np.inf else "sum"       # the -inf norm is a minimum: masked elements read +inf
    return linalg.vector_norm(_filled(input, mask, kind), ord, _dims(dim, input.ndim), bool(keepdim),
                              dtype=input.dtype if dtype is None else dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    c = 1.0 if unbiased is None and correction is None else float(correction if correction is not None else unbiased)
    dtype = input.dtype if dtype is None else np.dtype(dtype)
    if not (is_floating_point(dtype) or dtype.kind == "c"):
        dtype = np.dtype(np.float32)
    count = _count(input, dim, True, mask)                                # kept elements per slice
    deviation = input - sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    total = sum(deviation * deviation.conj(), dim, keepdim=keepdim, dtype=dtype, mask=mask)
    count = count.reshape(total.shape)
    if c != 0:
        real = np.dtype(np.float32 if dtype == np.complex64 else np.float64 if dtype == np.complex128 else dtype)
        count = (count.to(real) - c).clamp(min=0)
    out = (total / count).to(dtype)
    return out.sqrt() if take_sqrt else out


@takes_tensors("input", optional=("mask",))
def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


@takes_tensors("input", optional=("mask",))
def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


# --------------------------------------------------------------------------- normalizations
@takes_tensors("input", optional=("mask",))
def softmax(input, dim, *, dtype=None, mask=None):
    from .nn import functional as F
    return F.softmax(_filled(input, mask, "max"), _dims(dim, input.ndim)[0], dtype=input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def log_softmax(input, dim, *, dtype=None, mask=None):
    from .nn import functional as F
    return F.log_softmax(_filled(input, mask, "max"), _dims(dim, input.ndim)[0], dtype=input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def softmin(input, dim, *, dtype=None, mask=None):
    from .nn import functional as F
    return F.softmin(_filled(input, mask, "min"), _dims(dim, input.ndim)[0], dtype=input.dtype if dtype is None else dtype)


@takes_tensors("input", optional=("mask",))
def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input / max(its masked norm along ``dim``, eps), the masked-out elements 0."""
    length = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _filled(input, mask, "sum") / length.clamp(min=eps)


__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean", "median", "logsumexp",
           "logaddexp", "norm", "var", "std", "softmax", "log_softmax", "softmin", "normalize"]
