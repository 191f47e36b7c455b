"""Reductions with ``dim``/``keepdim``: sum, mean, var, std, max/min, amax/amin, argmax/argmin, logsumexp, all/any.

Backward passes re-insert the reduced axes (``keepdim`` shape) and let NumPy
broadcasting spread the gradient back over them. Where several elements tie for a
max or min, PyTorch's rules decide who gets the gradient: ``amax``/``amin`` and the
no-``dim`` ``max``/``min`` share it evenly, ``max(dim)``/``min(dim)`` give it all to
the index they return.
"""
import builtins
import math
import warnings
from collections import namedtuple

import numpy as np

from .._checks import refuses_complex, takes_tensors
from ..autograd import Function
from ..dtypes import get_default_dtype, kind_of, scalar_type_name
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from .dims import normalize_dim, normalize_dims
from .shape import result_reshape
from .elementwise import ConstantSlope, conj_if_complex, maximum, minimum, sign_array
from .layout import row_major


def _keepdim_shape(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _count(shape, axes):
    """How many elements each output element reduces over."""
    return math.prod(shape[i] for i in axes)


def _sum_of(x, axes, keepdims, dtype=None):
    """``x.sum(...)`` through the ufunc itself: NumPy's warning about an inf - inf in the sum then comes from
    minigrad's frame, which minigrad's warning filter silences as PyTorch is silent (``minigrad/__init__.py``)."""
    return np.add.reduce(x, axis=axes, keepdims=keepdims, dtype=dtype)


def _mean_of(x, axes, keepdims):
    """``x.mean(...)`` of a float or complex array (the same sum and division), warning as ``_sum_of``."""
    return np.true_divide(_sum_of(x, axes, keepdims), _count(x.shape, axes if axes is not None else range(x.ndim)))


def _reduced(out, axes, keepdim):
    """A ``keepdims=True`` result with the reduced axes dropped unless ``keepdim``."""
    return out if keepdim else out.reshape([s for i, s in enumerate(out.shape) if i not in axes])


def _is_empty_dims(dim):
    """``dim=()``: all dims for var/amax, no dim for all/any (PyTorch)."""
    return isinstance(dim, (tuple, list)) and len(dim) == 0


class Sum(Function):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        ctx.shape, ctx.axes = a.shape, axes
        x = a._data
        dtype = x.dtype if x.dtype.kind in "iu" else None     # (NumPy would sum int8..int32 as int64)
        return row_major(np.asarray(_sum_of(x, axes, keepdim, dtype)))   # (row-major, as PyTorch's)

    @staticmethod
    def backward(ctx, dout):
        g = dout._data.reshape(_keepdim_shape(ctx.shape, ctx.axes))
        return np.broadcast_to(g, ctx.shape), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return dout.reshape(_keepdim_shape(ctx.shape, ctx.axes)).expand(ctx.shape), None, None


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        ctx.shape, ctx.axes = a.shape, axes
        return row_major(np.asarray(_mean_of(a._data, axes, keepdim)))   # (row-major, as PyTorch's)

    @staticmethod
    def backward(ctx, dout):
        n = _count(ctx.shape, ctx.axes)
        g = dout._data.reshape(_keepdim_shape(ctx.shape, ctx.axes)) / n
        return np.broadcast_to(g, ctx.shape), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        n = _count(ctx.shape, ctx.axes)
        return (dout.reshape(_keepdim_shape(ctx.shape, ctx.axes)) / n).expand(ctx.shape), None, None


@takes_tensors("input")
def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif kind_of(input.dtype) in "biu":
        input = input.to(np.int64)  # PyTorch sums integers and bools as int64
    return Sum.apply(input, normalize_dims(dim, input.ndim), keepdim)


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size``, which it must broadcast to (``Tensor.sum_to_size``): the leading
    dims and the dims where ``size`` is 1 are summed away. How a gradient undoes broadcasting."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    lead = input.ndim - len(size)
    if lead < 0 or builtins.any(s != 1 and s != n for s, n in zip(size, input.shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(input.shape)}}}.")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and input.shape[lead + i] != 1)
    if size == ():                              # PyTorch: a sum (integers and bools as int64), even of a 0-d tensor
        return sum(input)
    if not axes:
        return input.reshape(size) if input.shape != size else input
    if kind_of(input.dtype) in "biu":
        input = input.to(np.int64)
    out = Sum.apply(input, axes, True)
    return out.reshape(size) if out.shape != size else out


@takes_tensors("input")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if kind_of(input.dtype) not in "fc":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {input.dtype}")
    return Mean.apply(input, normalize_dims(dim, input.ndim), keepdim)


# --------------------------------------------------------------------------- variance and standard deviation
def _variance(ctx, name, a, axes, keepdim, correction, whole):
    """var = sum(|x - mean|^2) / max(N - correction, 0) (real: for complex x, the real parts' variance plus the
    imaginary parts'); keeps on ``ctx`` what ``_variance_grad`` needs."""
    x = a._data
    centered = x - _mean_of(x, axes, True)
    squares = centered.real ** 2 + centered.imag ** 2 if x.dtype.kind == "c" else centered * centered
    ctx.dof, ctx.whole, ctx.keep_shape = _count(x.shape, axes) - correction, whole, _keepdim_shape(x.shape, axes)
    if ctx.dof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", stacklevel=6)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = row_major(np.asarray(_sum_of(squares, axes, keepdim) / builtins.max(ctx.dof, 0)))
    return var, centered


def _variance_grad(ctx, centered, dvar):
    """dx = dvar * 2 (x - mean) / (N - correction), with PyTorch's values when N - correction <= 0 (complex x:
    the same formula, PyTorch's gradient of a real function of x's real and imaginary parts).
    ndarrays, or Tensors under create_graph (``centered`` then a function of the input: see ``_centered``)."""
    g = dvar.reshape(ctx.keep_shape)
    if ctx.whole and ctx.dof <= 0:  # PyTorch: 2/0 times (x - mean) is nan where x == mean, inf elsewhere
        values = centered._data if isinstance(centered, Tensor) else centered
        return g * np.where(values == 0, np.nan, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (2 / ctx.dof if ctx.dof else np.inf) * g * centered


def _centered(ctx, x):
    """x - mean(x) over the reduced axes as a function of input 0 (for a graph_backward)."""
    x = ctx.input_tensor(0, x)
    return x - Mean.apply(x, ctx.axes, True)


def _centered_values(ctx, x):
    """x - mean(x) over the reduced axes, from the saved input as it is now: PyTorch's var/std backward recomputes it
    from the input it saved, so values written through ``.data`` since the forward are what it reads."""
    return x - _mean_of(x, ctx.axes, True)


class Var(Function):
    @staticmethod
    def forward(ctx, a, axes, keepdim, correction, whole):
        var, _ = _variance(ctx, "var", a, axes, keepdim, correction, whole)
        ctx.axes = axes
        ctx.save_for_backward(a._data)
        return var

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return _variance_grad(ctx, _centered_values(ctx, x), dout._data), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return _variance_grad(ctx, _centered(ctx, x), dout), None, None, None, None


class Std(Function):
    """std = sqrt(var); dvar = dout / (2 std), taken as 0 where std == 0 (PyTorch's choice: no inf/nan there)."""

    @staticmethod
    def forward(ctx, a, axes, keepdim, correction, whole):
        var, _ = _variance(ctx, "std", a, axes, keepdim, correction, whole)
        std = np.sqrt(var)
        ctx.axes = axes
        ctx.save_for_backward(std, a._data)
        return std

    @staticmethod
    def backward(ctx, dout):
        std, x = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            dvar = np.where(std == 0, 0, dout._data / (2 * std)).astype(dout.dtype, copy=False)
        return _variance_grad(ctx, _centered_values(ctx, x), dvar), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        std, x = ctx.saved_tensors
        std_t, zero = ctx.output_tensor(std), std == 0
        if zero.any():   # dvar = 0 where std == 0: divide by 1 there and mask the quotient
            dvar = dout * Tensor(~zero) / (2 * (std_t + Tensor(zero.astype(std.dtype))))
        else:
            dvar = dout / (2 * std_t)
        return _variance_grad(ctx, _centered(ctx, x), dvar), None, None, None, None


def _variance_op(fn, name, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # the legacy overload var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: unbiased given twice")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: pass either unbiased or "
                        f"correction, not both")
    if kind_of(input.dtype) not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    whole = dim is None or input.ndim == 0 or _is_empty_dims(dim)
    return fn.apply(input, normalize_dims(dim, input.ndim), keepdim, correction, whole)


@takes_tensors("input")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with ``correction`` (default 1, Bessel's; 0 gives the biased estimate).

    Also accepts the legacy forms ``var(x, unbiased)`` and ``var(x, dim, unbiased, keepdim)``.
    """
    return _variance_op(Var, "var", input, dim, unbiased, keepdim, correction)


@takes_tensors("input")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))`` with the same arguments as ``var``."""
    return _variance_op(Std, "std", input, dim, unbiased, keepdim, correction)


# --------------------------------------------------------------------------- max/min family
max_result = namedtuple("max", ["values", "indices"])  # like torch.return_types.max
min_result = namedtuple("min", ["values", "indices"])


def _tie_count(selected, axes):
    """How many elements are selected (the ties for a max or min) in each slice over ``axes``, keepdim
    shape: each gets 1/count of its slice's gradient (nan for a slice where nothing is selected)."""
    return selected.sum(axis=axes, keepdims=True)


class Extremum(Function):
    """amax/amin over ``axes``: elements equal to the result (ties) share its gradient evenly.

    ``nan_ties``: a NaN result selects the NaN inputs (the no-``dim`` ``max``/``min``);
    otherwise nothing equals a NaN result and the slice's gradient is NaN (``amax``/``amin``).
    The gradient is dout times constant shares, so its own derivative is those shares again.
    """

    @staticmethod
    def forward(ctx, a, axes, keepdim, reduce, nan_ties):
        out = row_major(np.asarray(reduce(a._data, axis=axes, keepdims=True)))   # (0-d: an array the output views)
        ctx.save_for_backward(a, out)
        ctx.axes, ctx.nan_ties = axes, nan_ties
        return _reduced(out, axes, keepdim)

    @staticmethod
    def _selected(ctx):
        """The elements that get the gradient, their count per slice, and the keepdim shape."""
        a, out = ctx.saved_tensors
        selected = a._data == out
        if ctx.nan_ties:
            selected |= np.isnan(a._data) & np.isnan(out)
        return selected, _tie_count(selected, ctx.axes), out.shape

    @staticmethod
    def backward(ctx, dout):
        selected, count, keep_shape = Extremum._selected(ctx)
        with np.errstate(divide="ignore", invalid="ignore"):
            return selected * (dout._data.reshape(keep_shape) / count), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        selected, count, keep_shape = Extremum._selected(ctx)
        with np.errstate(divide="ignore", invalid="ignore"):
            return dout.reshape(keep_shape) * Tensor(selected / count), None, None, None, None


class SelectAlong(Function):
    """``x`` at one index per slice along ``dim`` (max/min with ``dim``); the gradient goes to that index only."""

    @staticmethod
    def forward(ctx, a, indices, dim, keepdim):
        ctx.shape, ctx.indices, ctx.dim = a.shape, indices, dim  # indices: keepdim shape, size 1 along dim
        return _reduced(np.take_along_axis(a._data, indices, axis=dim), (dim,), keepdim)

    @staticmethod
    def backward(ctx, dout):
        grad = np.zeros(ctx.shape, dtype=dout.dtype)
        np.put_along_axis(grad, ctx.indices, dout._data.reshape(ctx.indices.shape), axis=ctx.dim)
        return grad, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """dout (keepdim shape) times the one-hot mask of the selected indices: linear in dout."""
        selected = np.zeros(ctx.shape, dtype=dout.dtype)
        np.put_along_axis(selected, ctx.indices, 1, axis=ctx.dim)
        return dout.reshape(ctx.indices.shape) * Tensor(selected), None, None, None


def _check_nonempty(name, input, axes, dim_given):
    """PyTorch refuses to take a max/min/argmax over nothing."""
    if input._data.size:
        return
    if not dim_given:
        message = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
        if name.startswith("arg"):
            raise IndexError(message)
        raise RuntimeError(message + " Specify the reduction dim with the 'dim' argument.")
    for d in axes:
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _arg_extremum(x, dim, arg):
    """Indices (int64, keepdim shape along ``dim``) of the first max/min; a NaN counts as the extremum."""
    return np.expand_dims(arg(x, axis=dim), dim).astype(np.int64)


def _extremum_with_indices(name, input, dim, keepdim, arg, result):
    flat = input.reshape(1) if input.ndim == 0 else input  # a 0-d tensor reduces along its only "dimension"
    d = normalize_dim(dim, flat.ndim)
    indices = _arg_extremum(flat._data, d, arg)
    values = SelectAlong.apply(flat, indices, d, keepdim and input.ndim > 0)
    indices = _reduced(indices, (d,), keepdim) if input.ndim else indices.reshape(())
    return result(result_reshape(values, ()) if input.ndim == 0 else values, Tensor(indices))


def _max_or_min(name, input, dim, keepdim, other_fn, reduce, arg, result):
    """PyTorch's order: the dim (and whether it is empty), then complex input, then (for a kernel that runs: not
    for a 0-d input nor an empty result) the limited dtypes."""
    if isinstance(dim, Tensor):  # max(input, other): the elementwise maximum
        return other_fn(input, dim)
    if dim is None:
        _check_nonempty(name, input, (), False)
        if input.dtype.kind == "c":   # complex numbers have no order in PyTorch (its two kernels word it otherwise)
            raise NotImplementedError(f'"{name}_all" not implemented for \'{scalar_type_name(input.dtype)}\'')
        return Extremum.apply(input, normalize_dims(None, input.ndim), False, reduce, True)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    d = normalize_dim(dim, input.ndim or 1)
    _check_nonempty(name, input, (d,), True)
    if input.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if input.ndim and input.numel():
        check_kernel(name, input)
    return _extremum_with_indices(name, input, dim, keepdim, arg, result)


@takes_tensors("input")
def max(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    """``max(x)``: the largest value (0-d); ``max(x, dim)``: ``(values, indices)``; ``max(x, other)``: maximum."""
    return _max_or_min("max", input, dim, keepdim, maximum, np.max, np.argmax, max_result)


@takes_tensors("input")
def min(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    """``min(x)``: the smallest value (0-d); ``min(x, dim)``: ``(values, indices)``; ``min(x, other)``: minimum."""
    return _max_or_min("min", input, dim, keepdim, minimum, np.min, np.argmin, min_result)


def _amax_or_amin(name, input, dim, keepdim, reduce):
    """PyTorch's order: the dims (and whether one is empty), then no kernel for an empty input, then the dtype."""
    axes = normalize_dims(dim, input.ndim)
    _check_nonempty(name, input, axes, not _is_empty_dims(dim))
    if not input.numel() and not input.requires_grad:
        shape = _keepdim_shape(input.shape, axes)
        return Tensor(np.empty(shape if keepdim else [s for i, s in enumerate(shape) if i not in axes],
                               input._data.dtype))
    if input.dtype.kind == "c":
        raise NotImplementedError(f'"{name[1:]}_values_cpu" not implemented for \'{scalar_type_name(input.dtype)}\'')
    check_kernel(name, input)
    return Extremum.apply(input, axes, keepdim, reduce, False)


@takes_tensors("input")
def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (all dims by default); tied elements share the gradient evenly."""
    return _amax_or_amin("amax", input, dim, keepdim, np.max)


@takes_tensors("input")
def amin(input, dim=(), keepdim=False):
    """Smallest value over ``dim`` (all dims by default); tied elements share the gradient evenly."""
    return _amax_or_amin("amin", input, dim, keepdim, np.min)


def _arg_op(name, input, dim, keepdim, arg):
    """PyTorch's order: bool and complex input, the dim (and whether it is empty), then (for a non-empty result)
    the limited dtypes."""
    if kind_of(input.dtype) == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        _check_nonempty(name, input, (), False)
        check_kernel(name, input)
        index = np.asarray(arg(input._data), dtype=np.int64)  # into the flattened tensor
        return Tensor(index.reshape((1,) * input.ndim if keepdim else ()))
    d = normalize_dim(dim, input.ndim)
    if input.ndim:
        _check_nonempty(name, input, (d,), True)
    if input.numel():
        check_kernel(name, input)
    if input.ndim == 0:
        return Tensor(np.zeros((), dtype=np.int64))
    return Tensor(_reduced(_arg_extremum(input._data, d, arg), (d,), keepdim))



@takes_tensors("input")
@refuses_complex('argmax(): does not support complex input', RuntimeError)
def argmax(input, dim=None, keepdim=False):
    """Index of the first largest value (int64, no gradient); over the flattened tensor when ``dim`` is None."""
    return _arg_op("argmax", input, dim, keepdim, np.argmax)


@takes_tensors("input")
@refuses_complex('argmin(): does not support complex input', RuntimeError)
def argmin(input, dim=None, keepdim=False):
    """Index of the first smallest value (int64, no gradient); over the flattened tensor when ``dim`` is None."""
    return _arg_op("argmin", input, dim, keepdim, np.argmin)


# --------------------------------------------------------------------------- logsumexp
class LogSumExp(Function):
    """out = m + log(sum(exp(x - m))) with m the max (0 where it is infinite); dx = dout * conj(exp(x - out)).

    Subtracting m keeps exp from overflowing. A row of -inf gives -inf (and a NaN
    gradient, as in PyTorch: exp(-inf - (-inf))). Complex x: m is the max of the real parts, as PyTorch's.
    """

    @staticmethod
    def forward(ctx, a, axes, keepdim):
        x = a._data
        m = (np.max(x.real, axis=axes, keepdims=True) if x.size
             else np.zeros(_keepdim_shape(x.shape, axes), x.real.dtype))
        m = np.where(np.isinf(m), np.zeros((), m.dtype), m)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(np.exp(x - m).sum(axis=axes, keepdims=True)) + m
        out = row_major(np.asarray(out))   # (a 0-d x gives a NumPy scalar: an array the output views; row-major)
        ctx.save_for_backward(a, out)
        ctx.axes, ctx.keepdim = axes, keepdim
        return _reduced(out, axes, keepdim)

    @staticmethod
    def backward(ctx, dout):
        a, out = ctx.saved_tensors
        with np.errstate(invalid="ignore"):
            return dout._data.reshape(out.shape) * conj_if_complex(np.exp(a._data - out)), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        a, out = ctx.saved_tensors
        out_t = ctx.output_tensor(_reduced(out, ctx.axes, ctx.keepdim)).reshape(out.shape)
        return dout.reshape(out.shape) * (ctx.input_tensor(0, a._data) - out_t).exp().conj(), None, None


@takes_tensors("input")
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed stably; integer inputs give the default float dtype."""
    if kind_of(input.dtype) not in "fc":
        input = input.to(get_default_dtype())
    return LogSumExp.apply(input, normalize_dims(dim, input.ndim), keepdim)


# --------------------------------------------------------------------------- all/any (no gradient)
def _logical_reduce(reduce, input, dim, keepdim):
    # dim=() reduces nothing here (PyTorch), unlike sum/amax where it means every dim
    axes = () if _is_empty_dims(dim) else normalize_dims(dim, input.ndim)
    out = row_major(np.asarray(reduce(input._data, axis=axes, keepdims=keepdim)))
    return Tensor(out.astype(np.uint8) if input.dtype == np.uint8 else out)   # PyTorch: uint8 in, uint8 out


@takes_tensors("input")
def all(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    """True where every element over ``dim`` is nonzero (bool, no gradient)."""
    return _logical_reduce(np.all, input, dim, keepdim)


@takes_tensors("input")
def any(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    """True where some element over ``dim`` is nonzero (bool, no gradient)."""
    return _logical_reduce(np.any, input, dim, keepdim)


# --------------------------------------------------------------------------- cumulative sum and product
def _reverse_cumsum(g, axis):
    """sum_{i >= k} g_i along ``axis``: what a cumulative sum's gradient is made of."""
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def _reverse_cumsum_graph(g, axis):
    """``_reverse_cumsum`` of a Tensor with differentiable ops: sum_{i >= k} g_i = sum_i g_i - sum_{i < k} g_i
    = total - cumsum(g)_k + g_k."""
    return Sum.apply(g, (axis,), True) - CumSum.apply(g, axis) + g


class CumSum(Function):
    """out_i = sum_{j <= i} x_j along ``dim``; dx_k = sum_{i >= k} dout_i (a reversed cumulative sum)."""

    @staticmethod
    def forward(ctx, a, axis):
        ctx.axis = axis
        return row_major(a._data.cumsum(axis=axis, dtype=a.dtype))   # (row-major, as PyTorch's; the method: _sum_of)

    @staticmethod
    def backward(ctx, dout):
        return _reverse_cumsum(dout._data, ctx.axis), None

    @staticmethod
    def graph_backward(ctx, dout):
        return _reverse_cumsum_graph(dout, ctx.axis), None


class CumProd(Function):
    """out_i = prod_{j <= i} x_j along ``dim``; dx_k = sum_{i >= k} dout_i conj(prod_{j <= i, j != k} x_j).

    Without zeros in a slice that is ``reverse_cumsum(dout * out) / x``. With its first zero at z: positions
    before z still use it (out_i is 0 for i >= z, so nothing divides by zero); position z gets
    ``out_{z-1} * sum_{i >= z} dout_i prod_{z < j <= i} x_j``; positions after z get 0 (their products hold x_z).
    """

    @staticmethod
    def forward(ctx, a, axis):
        out = row_major(a._data.cumprod(axis=axis, dtype=a.dtype))   # (row-major, as PyTorch's)
        ctx.axis = axis
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, dout):
        a, out = ctx.saved_tensors
        if a._data.size == 0:
            return np.zeros(a.shape, dout.dtype), None
        x = np.moveaxis(conj_if_complex(a._data), ctx.axis, -1)   # (..., n)
        n = x.shape[-1]
        x, p = x.reshape(-1, n), np.moveaxis(conj_if_complex(out), ctx.axis, -1).reshape(-1, n)
        g = np.moveaxis(dout._data, ctx.axis, -1).reshape(-1, n)   # (rows, n), one slice per row
        zero = x == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = np.where(zero, 0, _reverse_cumsum(g * p, -1) / x)
        for r in np.flatnonzero(zero.any(axis=1)):
            z = np.argmax(zero[r])                                 # the first zero of this slice
            grad[r, z + 1:] = 0
            before = p[r, z - 1] if z else 1
            after = np.cumprod(np.concatenate([[1], x[r, z + 1:]]))  # prod_{z < j <= i} x_j for i = z..n-1
            grad[r, z] = before * np.sum(g[r, z:] * after)
        grad = grad.reshape(np.moveaxis(dout._data, ctx.axis, -1).shape)
        return np.moveaxis(grad, -1, ctx.axis).astype(dout.dtype, copy=False), None

    @staticmethod
    def graph_backward(ctx, dout):
        """Without zeros: reverse_cumsum(dout * out) / x. With zeros, the defining sum itself, a polynomial
        in x: with M[k, j] = x_j off the diagonal and 1 on it (..., n, n), P = cumprod(M) along j holds
        P[k, i] = prod_{j <= i, j != k} x_j, and dx_k = sum_{i >= k} dout_i P[k, i] (O(n^2) per slice)."""
        a, out = ctx.saved_tensors
        x, axis = ctx.input_tensor(0, a._data).conj(), ctx.axis
        if not (a._data == 0).any():
            return _reverse_cumsum_graph(dout * ctx.output_tensor(out).conj(), axis) / x, None
        n = a.shape[axis]
        eye = np.eye(n, dtype=a.dtype)
        m = x.movedim(axis, -1).unsqueeze(-2) * Tensor(1 - eye) + Tensor(eye)        # (..., n, n): [k, j]
        prefix = CumProd.apply(m, m.ndim - 1)                                      # (..., n, n): [k, i]
        later = Tensor(np.triu(np.ones((n, n), dtype=a.dtype)))                   # [k, i]: 1 where i >= k
        grad = (prefix * dout.movedim(axis, -1).unsqueeze(-2) * later).sum(-1)     # (..., n)
        return grad.movedim(-1, axis), None


def _cumulative(fn, input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    elif kind_of(input.dtype) in "biu":
        input = input.to(np.int64)  # PyTorch accumulates integers and bools as int64
    flat = input.reshape(1) if input.ndim == 0 else input
    out = fn.apply(flat, normalize_dim(dim, flat.ndim))
    return result_reshape(out, ()) if input.ndim == 0 else out


@takes_tensors("input")
def cumsum(input, dim, *, dtype=None):
    """Running sums along ``dim``: out_i = x_0 + ... + x_i (integers and bools as int64)."""
    return _cumulative(CumSum, input, dim, dtype)


@takes_tensors("input")
def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``: out_i = x_0 * ... * x_i (integers and bools as int64)."""
    return _cumulative(CumProd, input, dim, dtype)


# --------------------------------------------------------------------------- vector norms
class VectorNorm(Function):
    """out = (sum |x|^p)^(1/p) over ``axes``; p = inf: max |x|, -inf: min |x|, 0: the count of nonzeros.

    Backward, with g = dout (keepdim shape) and sign(NaN) = 0 (PyTorch's sign):
        p = inf/-inf:  g sign(x) where |x| equals the norm (or is NaN), shared evenly between ties
        p = 0:         none (PyTorch defines no gradient for a count: the input's gradient stays None)
        p = 1:         g sign(x)
        p = 2:         g x / out, 0 where out == 0
        otherwise:     g sign(x) (|x| / out)^(p-1), 0 where out == 0 or x == 0; as in PyTorch's
                       g sign(x) |x|^(p-1) / out^(p-1), a NaN norm makes every gradient NaN, and for p < 1 an
                       infinite norm makes x == 0's NaN (0 times inf)
    """

    @staticmethod
    def forward(ctx, a, ord, axes, keepdim):
        x = a._data
        ax = np.abs(x)
        if ord == np.inf:
            out = ax.max(axis=axes, keepdims=True)
        elif ord == -np.inf:
            out = ax.min(axis=axes, keepdims=True)
        elif ord == 0:
            out = (x != 0).sum(axis=axes, keepdims=True).astype(x.dtype)
        elif ord == 1:
            out = ax.sum(axis=axes, keepdims=True)
        elif ord == 2:
            out = np.sqrt((x * x).sum(axis=axes, keepdims=True))
        else:
            with np.errstate(divide="ignore"):
                out = (ax ** ord).sum(axis=axes, keepdims=True) ** (1 / ord)
        out = row_major(np.asarray(out))   # (a 0-d x gives a NumPy scalar: an array the output views; row-major)
        ctx.ord, ctx.axes, ctx.keepdim = ord, axes, keepdim
        ctx.save_for_backward(a, out)
        return _reduced(out, axes, keepdim)

    @staticmethod
    def backward(ctx, dout):
        a, out = ctx.saved_tensors
        x, p = a._data, ctx.ord
        g = dout._data.reshape(out.shape)
        if p == 0:
            return None, None, None, None
        if p in (np.inf, -np.inf):
            selected = _extreme_or_nan(x, out)
            return g * sign_array(x) * selected / _tie_count(selected, ctx.axes), None, None, None
        if p == 1:
            return g * sign_array(x), None, None, None
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 2:
                return g * np.where(out == 0, 0, x / out), None, None, None
            grad = np.where((out == 0) | (x == 0), 0, g * sign_array(x) * (np.abs(x) / out) ** (p - 1))
        poisoned = np.isnan(out) | ((p < 1) & np.isinf(out) & (x == 0))
        return np.where(poisoned, np.nan, grad), None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """The same formulas with Tensors: p = 0, 1, +-inf are dout times a constant; otherwise
        g x |x|^(p-2) / out^(p-1) (g x / out for p = 2), where x == 0 or out == 0 divide by 1 and are masked."""
        a, out = ctx.saved_tensors
        x, p = a._data, ctx.ord
        g = dout.reshape(out.shape)
        if p == 0:
            return None, None, None, None
        if p in (np.inf, -np.inf):          # constants read off x: the gradient depends on x (derivative 0)
            selected = _extreme_or_nan(x, out)
            slope = sign_array(x) * selected / _tie_count(selected, ctx.axes)
            return ConstantSlope.apply(g, ctx.input_tensor(0, x), slope), None, None, None
        if p == 1:
            return ConstantSlope.apply(g, ctx.input_tensor(0, x), sign_array(x)), None, None, None
        x_t = ctx.input_tensor(0, x)
        out_t = ctx.output_tensor(_reduced(out, ctx.axes, ctx.keepdim)).reshape(out.shape)
        zero_out = out == 0
        if zero_out.any():
            g = g * Tensor(~zero_out)
            out_t = out_t + Tensor(zero_out.astype(x.dtype))
        if p == 2:
            return x_t * (g / out_t), None, None, None
        zero_x = x == 0
        abs_x = x_t.abs()
        if zero_x.any():
            g = g * Tensor(~zero_x)
            abs_x = abs_x + Tensor(zero_x.astype(x.dtype))
        return g * x_t * abs_x ** (p - 2) / out_t ** (p - 1), None, None, None


def _extreme_or_nan(x, out):
    """The elements the inf-norm's (or -inf-norm's) gradient goes to: |x| equal to the norm, or NaN (PyTorch)."""
    abs_x = np.abs(x)
    return (abs_x == out) | np.isnan(abs_x)


def _vector_norm(input, ord, dim, keepdim, dtype, name):
    if kind_of(input.dtype) not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(input.dtype)}")
    if dtype is not None:               # computed in dtype, which must be complex for complex input, else real
        if kind_of(dtype) not in "fc":
            raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                               f"{scalar_type_name(dtype)}")
        if (kind_of(input.dtype) == "c") != (kind_of(dtype) == "c"):
            kind = "complex" if kind_of(input.dtype) == "c" else "real"
            raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got {scalar_type_name(dtype)}")
        input = input.to(dtype)
    if kind_of(input.dtype) == "c":     # the norm of complex numbers is the norm of their moduli
        input = abs(input)
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.number)):
        raise RuntimeError(f"{name}: ord must be a number, got {ord!r}")
    axes = normalize_dims(dim, input.ndim)
    if ord < 0 and _count(input.shape, axes) == 0 or ord == np.inf and input._data.size == 0:
        raise RuntimeError(f"{name} cannot compute the {ord} norm on an empty tensor because the operation does "
                           f"not have an identity")
    return VectorNorm.apply(input, float(ord), axes, keepdim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all elements when None) as a vector: ``torch.linalg.vector_norm``."""
    return _vector_norm(x, ord, dim, keepdim, dtype, "linalg.vector_norm")


@takes_tensors("input")
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """PyTorch's ``torch.norm``/``Tensor.norm``: ``'fro'`` or a number is a vector norm over ``dim`` (all elements
    by default); ``'nuc'`` is the nuclear norm of the matrices in ``dim`` (the last two by default)."""
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        from ..linalg import matrix_norm
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if p == "fro":
        if dim is not None and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): p must be 'fro', 'nuc' or a number, got {p!r}")
    return _vector_norm(input, p, dim, keepdim, dtype, "linalg.vector_norm")
