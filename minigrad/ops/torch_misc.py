"""Small top-level ``torch.*`` functions: the in-place functions ``torch.<name>_(input, ...)``, which are the Tensor
method ``input.<name>_(...)``; Tensor queries and views as functions (``t``, ``numel``, ``detach``, ``is_signed``,
...); ``concat`` and ``concatenate`` (``cat``); ``vander``; and the constructors ``asarray`` (sharing memory with
an ndarray or tensor when it can), ``frombuffer`` and the deprecated end-inclusive ``range``.
"""
import math
import warnings

import numpy as np

from .._checks import dtype_arg, takes_tensors, type_name
from ..creation import from_numpy, tensor
from ..dtypes import get_default_dtype, is_differentiable, promote_types, scalar_type_name
from ..tensor import Tensor
from .shape import cat
from .shape_more import unsafe_split_with_sizes  # noqa: F401 (exported here, as before)

# torch.<name>(input, *args, **kwargs) is input.<name>(*args, **kwargs)
_INPLACE = ["abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
            "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
            "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_",
            "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_",
            "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_",
            "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_"]


def _method_function(name):
    """The function ``torch.<name>``: the Tensor method of that name called on ``input``."""
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``."
    return fn


_METHODS = ["adjoint", "is_neg", "get_device", "is_distributed"]     # torch.<name>(input) is input.<name>() too

for _name in _INPLACE + _METHODS:
    globals()[_name] = _method_function(_name)
del _name


# --------------------------------------------------------------------------- tensor queries and views
@takes_tensors("input")
def t(input):
    """``input.t()``: the transpose of a matrix (a vector or a scalar unchanged), a view."""
    return input.t()


@takes_tensors("input")
def numel(input):
    """The number of elements of ``input`` (an int)."""
    return input.numel()


@takes_tensors("input")
def detach(input):
    """``input.detach()``: a view of ``input`` outside the autograd graph."""
    return input.detach()


@takes_tensors("input")
def detach_copy(input):
    """``input.detach()`` in memory of its own."""
    return input.detach().clone()


@takes_tensors("input")
def select_copy(input, dim, index):
    """``input.select(dim, index)`` in memory of its own."""
    return input.select(dim, index).clone()


@takes_tensors("input")
def slice_copy(input, dim=0, start=None, end=None, step=1):
    """``input[..., start:end:step, ...]`` along ``dim``, in memory of its own."""
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, end, step)
    return input[tuple(index)].clone()


@takes_tensors("tensor")
def split_copy(tensor, split_size, dim=0):
    """``split``'s pieces, each in memory of its own."""
    return tuple(piece.clone() for piece in tensor.split(split_size, dim))


@takes_tensors("input", "other")
def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return input.shape == other.shape


@takes_tensors("input")
def is_signed(input):
    """Whether ``input``'s dtype is signed (every dtype but uint8 and bool)."""
    return input.is_signed()


@takes_tensors("input")
def is_inference(input):
    """Whether ``input`` is an inference tensor: never in minigrad (inference_mode makes ordinary tensors)."""
    return input.is_inference()


def concat(tensors, dim=0, *, axis=None):
    """``cat`` (``axis`` is NumPy's name of ``dim``)."""
    return cat(tensors, dim if axis is None else axis)


def concatenate(tensors, axis=0, *, dim=None):
    """``cat`` with NumPy's argument name (``dim`` is accepted too)."""
    return cat(tensors, axis if dim is None else dim)


@takes_tensors("x")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the vector x: columns x^0, ..., x^(N-1) (reversed unless ``increasing``), in x's
    dtype promoted with int64; N defaults to len(x)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    x = x.to(promote_types(x.dtype, np.dtype(np.int64)))
    columns = [x.new_ones((x.shape[0], min(N, 1)))]
    if N > 1:
        columns.append(x.unsqueeze(1).repeat(1, N - 1).cumprod(1))     # x^1, ..., x^(N-1)
    powers = cat(columns, 1)
    return powers if increasing else powers.flip(1)


# --------------------------------------------------------------------------- constructors
_ASARRAY_WARNING = ("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. "
                    "Pass requires_grad=False explicitly to get the old behavior and silence this warning.")


def _alias_error(source, dtype):
    return ValueError(f"can't alias tensor with dtype '{scalar_type_name(source)}' into dtype "
                      f"'{scalar_type_name(dtype)}'.")


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``obj`` as a tensor: a tensor or an ndarray shares its memory unless ``copy`` is True or ``dtype`` asks for
    a conversion (refused with ``copy=False``); other objects (numbers, nested lists) are copied, as
    ``tensor``. ``requires_grad`` unspecified keeps a tensor's own, with PyTorch's warning."""
    dtype = None if dtype is None else dtype_arg(dtype, "asarray")
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            warnings.warn(_ASARRAY_WARNING, UserWarning, stacklevel=3)
        converts = dtype is not None and dtype != obj.dtype
        if converts and copy is False:
            raise _alias_error(obj.dtype, dtype)
        if not converts and not copy:
            return obj if requires_grad is None else obj.requires_grad_(requires_grad)
        source = obj if requires_grad is not False else obj.detach()
        out = source.to(dtype) if converts else source.clone()
        return out.requires_grad_(True) if requires_grad and out.is_leaf else out
    if not isinstance(obj, np.ndarray) and (hasattr(obj, "__array_interface__") or hasattr(obj, "__array__")):
        obj = np.asarray(obj)
    if isinstance(obj, np.ndarray):
        converts = dtype is not None and dtype != obj.dtype
        if converts and copy is False:
            raise _alias_error(obj.dtype, dtype)
        array = obj.astype(dtype) if converts else obj.copy() if copy else obj
        out = from_numpy(array)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        out = tensor(obj, dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor of ``count`` elements (all, with -1) of ``dtype`` read from the Python buffer ``buffer`` from
    byte ``offset`` on, sharing its memory."""
    dtype = dtype_arg(dtype, "frombuffer")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, dtype.itemsize
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count <= 0 and count != -1 or count == -1 and (length - offset) % size:
        if count == -1:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if count > 0 and count * size > length - offset:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to "
                      "a tensor. This type of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=3)
    out = from_numpy(np.frombuffer(view, dtype=dtype, count=count, offset=offset))
    return out.requires_grad_(True) if requires_grad else out


def range(start, end, step=1, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Deprecated (with PyTorch's warning): start, start + step, ..., up to and including ``end``;
    floor((end - start) / step) + 1 values, in the default float dtype unless ``dtype`` is given."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=3)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    dtype = get_default_dtype() if dtype is None else dtype_arg(dtype, "range")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    values = start + np.arange(n, dtype=np.float64) * step if is_differentiable(dtype) else \
        int(start) + np.arange(n, dtype=np.int64) * int(step)
    out = from_numpy(values.astype(dtype))
    return out.requires_grad_(True) if requires_grad else out


__all__ = _INPLACE + _METHODS + ["t", "numel", "detach", "detach_copy", "select_copy", "slice_copy", "split_copy",
                                 "unsafe_split_with_sizes", "is_same_size", "is_signed", "is_inference", "concat",
                                 "concatenate", "vander", "asarray", "frombuffer", "range"]
