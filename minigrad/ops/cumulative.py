"""Running reductions and differences along one dimension: cummax, cummin, logcumsumexp, diff, and the
trapezoid rule (trapezoid, trapz, cumulative_trapezoid). cumsum and cumprod live in ``reduce.py``.

cummax/cummin return ``(values, indices)``: the running extremum and where it was last reached (a NaN, once
seen, stays the extremum), as PyTorch. The values are ``gather(x, dim, indices)``, so each value's gradient goes
to the element it came from (summed where one element is the running extremum for several positions).

logcumsumexp: out_i = log sum_{j <= i} exp(x_j), and

    dx_j = sum_{i >= j} dout_i exp(x_j - out_i)

(each exp(x_j - out_i) <= 1: x_j is one of the terms out_i sums).
"""
from collections import namedtuple

import numpy as np

from ..dtypes import kind_of
from .._checks import takes_tensors
from ..autograd import Function
from ..autograd.function import pytorch_saves
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from .dims import normalize_dim
from .elementwise_more import complex_logaddexp
from .index import gather
from .pointwise import not_implemented
from .reduce import cumsum, sum as reduce_sum
from .shape import cat, narrow, result_reshape
from .layout import row_major

cummax_result = namedtuple("cummax", ["values", "indices"])   # like torch.return_types.cummax
cummin_result = namedtuple("cummin", ["values", "indices"])


def _running_arg(x, axis, accumulate):
    """Per position i along ``axis``: the last j <= i where x_j equals the running extremum out_i (NaN counts
    as equal to NaN); int64. Every j where x_j equals its own running extremum out_j and j is the latest such
    position up to i has x_j = out_i, so a running maximum of those positions is the answer."""
    out = accumulate(x, axis=axis)
    reached = x == out
    if kind_of(x.dtype) == "f":
        reached |= np.isnan(x) & np.isnan(out)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    position = np.arange(x.shape[axis]).reshape(shape)
    return row_major(np.maximum.accumulate(np.where(reached, position, 0), axis=axis), np.int64)


def _cumulative_extremum(name, input, dim, accumulate, result):
    """PyTorch's order: the dim, an empty or 0-d input returned as it is (its own running extremum, index 0),
    then the dtype."""
    flat = input.reshape(1) if input.ndim == 0 else input
    axis = normalize_dim(dim, flat.ndim)
    if input.numel() == 0 or input.ndim == 0:
        return result(input.clone(), Tensor(np.zeros(input.shape, np.int64)))
    if kind_of(input.dtype) == "c":
        raise not_implemented(f"{name}_cpu", input.dtype)
    check_kernel(name, input)
    indices = _running_arg(flat._data, axis, accumulate)
    values = gather(flat, axis, Tensor(indices))
    if input.ndim == 0:
        return result(result_reshape(values, ()), Tensor(indices.reshape(())))
    return result(values, Tensor(indices))


@takes_tensors("input")
@pytorch_saves("input")
def cummax(input, dim):
    """(values, indices): the running maximum along ``dim`` and the index where it was last reached."""
    return _cumulative_extremum("cummax", input, dim, np.maximum.accumulate, cummax_result)


@takes_tensors("input")
@pytorch_saves("input")
def cummin(input, dim):
    """(values, indices): the running minimum along ``dim`` and the index where it was last reached."""
    return _cumulative_extremum("cummin", input, dim, np.minimum.accumulate, cummin_result)


# --------------------------------------------------------------------------- logcumsumexp
def _logcumsumexp(v, axis):
    """log sum_{j <= i} exp(v_j) along ``axis``: ``np.logaddexp.accumulate`` for real v; for complex v PyTorch's
    running complex logaddexp (``elementwise_more``), one step per position along ``axis``."""
    if kind_of(v.dtype) != "c":
        return np.logaddexp.accumulate(v, axis=axis)
    out = np.moveaxis(v.copy(), axis, 0)                                 # (n, ...): out[i] accumulates v[<= i]
    for i in range(1, out.shape[0]):
        out[i] = complex_logaddexp(out[i - 1], out[i])
    return np.moveaxis(out, 0, axis)


def _reverse_logcumsumexp(v, axis):
    """log sum_{i >= j} exp(v_i) along ``axis``."""
    return np.flip(_logcumsumexp(np.flip(v, axis), axis), axis)


class LogCumSumExp(Function):
    """out_i = log sum_{j <= i} exp(x_j) (``_logcumsumexp``: stable). Backward, the module docstring's sum in log
    space, split by the sign of dout so that every term is a log of a positive number:

        dx_j = exp(x_j + log sum_{i >= j} dout_i^+ e^(-out_i)) - (the same with dout^-)

    (log 0 taken as the dtype's lowest number, as PyTorch takes it: an infinite or NaN x or output gives NaN);

    and for complex x, where the logarithm of any nonzero number exists, as PyTorch computes it unsplit:
    dx_j = conj(exp(x_j + log sum_{i >= j} e^(log conj(dout_i) - out_i))).
    """

    @staticmethod
    def forward(ctx, a, axis):
        out = row_major(_logcumsumexp(a._data, axis))                 # (row-major, as PyTorch's)
        ctx.axis = axis
        ctx.save_for_backward(a._data, out)
        return out

    @staticmethod
    def backward(ctx, dout):
        x, out = ctx.saved_tensors
        g = dout._data
        with np.errstate(divide="ignore", invalid="ignore"):
            if kind_of(x.dtype) == "c":
                return np.conj(np.exp(x + _reverse_logcumsumexp(np.log(np.conj(g)) - out, ctx.axis))), None
            log_abs_g = np.log(np.abs(g))
            lowest = np.finfo(g.dtype).min          # PyTorch's stand-in for log 0: an infinite result still makes NaN
            parts = [np.exp(x + _reverse_logcumsumexp(np.where(sign * g > 0, log_abs_g, lowest) - out, ctx.axis))
                     for sign in (1, -1)]
        return parts[0] - parts[1], None

    @staticmethod
    def graph_backward(ctx, dout):
        """The module docstring's sum with Tensors, as a (..., n, n) matrix W[j, i] = exp(x_j - out_i) for
        i >= j (0 below: the exponent masked to -inf): dx = W dout. Quadratic in n, for double backward only."""
        x, out = ctx.saved_tensors
        axis = ctx.axis
        xt = ctx.input_tensor(0, x).movedim(axis, -1).unsqueeze(-1)                # (..., n, 1): j
        outt = ctx.output_tensor(out).movedim(axis, -1).unsqueeze(-2)              # (..., 1, n): i
        n = x.shape[axis]
        earlier = Tensor(np.tril(np.ones((n, n), bool), -1))                        # i < j
        weights = ew.exp(ew.masked_fill(xt - outt, earlier, float("-inf"))).conj()    # (conj: complex x)
        grad = reduce_sum(weights * dout.movedim(axis, -1).unsqueeze(-2), -1)      # (..., n)
        return grad.movedim(-1, axis), None


@takes_tensors("input")
def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along ``dim``, computed stably (floating-point and complex inputs)."""
    axis = normalize_dim(dim, input.ndim)
    if kind_of(input.dtype) not in "fc":
        raise not_implemented("logcumsumexp_out_cpu", input.dtype)
    if input.ndim == 0:
        return result_reshape(LogCumSumExp.apply(input.reshape(1), 0), ())
    return LogCumSumExp.apply(input, axis)


# --------------------------------------------------------------------------- differences and areas
@takes_tensors("input", optional=("prepend", "append"))
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``x[i+1] != x[i]`` for bools), after joining ``prepend``
    and ``append`` to ``input`` along ``dim`` (for n >= 1)."""
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    axis = normalize_dim(dim, input.ndim)
    if n == 0:                      # PyTorch: a copy of the input, prepend and append ignored
        return input.clone()
    parts = [t for t in (prepend, input, append) if t is not None]
    for t in parts:
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    out = cat(parts, axis) if len(parts) > 1 else input
    for _ in range(n):
        size = out.shape[axis]
        if size == 0:
            break
        later, earlier = narrow(out, axis, 1, size - 1), narrow(out, axis, 0, size - 1)
        out = ew.ne(later, earlier) if kind_of(out.dtype) == "b" else ew.sub(later, earlier)
    return out


def _neighbours(y, axis):
    """(y[1:], y[:-1]) along ``axis``: the right and left ends of each interval."""
    size = y.shape[axis]
    return narrow(y, axis, 1, size - 1), narrow(y, axis, 0, size - 1)


def _spacing(x, y, axis):
    """The interval widths diff(x) for sample points ``x`` (1-D: along ``axis`` of y; else y's shape)."""
    if x.ndim == 1:
        widths = diff(x)
        shape = [1] * y.ndim
        shape[axis] = widths.shape[0]
        return widths.reshape(shape)
    return diff(x, dim=axis)


def _areas(y, x, dx, dim, name):
    """The trapezoids' areas (dx / 2) (y_left + y_right) along ``dim``, and that axis."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: x and dx are exclusive")
    axis = normalize_dim(dim, y.ndim)
    right, left = _neighbours(y, axis)
    if x is None:
        return ew.mul(ew.add(left, right), (1 if dx is None else dx) / 2.0), axis
    if x.ndim == 1 and x.shape[0] != y.shape[axis]:
        raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    return ew.div(ew.mul(_spacing(x, y, axis), ew.add(left, right)), 2.0), axis


@takes_tensors("y", optional=("x",))
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoid rule, at sample points ``x`` or spacing ``dx`` (1)."""
    if y.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    axis = normalize_dim(dim, y.ndim)
    if y.shape[axis] == 0:
        return reduce_sum(ew._floating(y) if kind_of(y.dtype) == "b" else y, axis)
    if x is None:   # PyTorch's form for a constant spacing: dx (sum y - (y_first + y_last) / 2)
        spacing = 1 if dx is None else dx
        ends = ew.add(narrow(y, axis, 0, 1), narrow(y, axis, y.shape[axis] - 1, 1)).squeeze(axis)
        return ew.mul(ew.sub(reduce_sum(y, axis), ew.mul(ends, 0.5)), spacing)
    areas, axis = _areas(y, x, dx, dim, "trapezoid")
    return reduce_sum(areas, axis)


@takes_tensors("y", optional=("x",))
def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` under its NumPy name."""
    return trapezoid(y, x, dx=dx, dim=dim)


@takes_tensors("y", optional=("x",))
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of ``y`` along ``dim`` (one element fewer than ``y`` there)."""
    if y.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    areas, axis = _areas(y, x, dx, dim, "cumulative_trapezoid")
    return cumsum(areas, axis)


__all__ = ["cummax", "cummin", "logcumsumexp", "diff", "trapezoid", "trapz", "cumulative_trapezoid"]
METHODS = ["cummax", "cummin", "logcumsumexp", "diff"]
