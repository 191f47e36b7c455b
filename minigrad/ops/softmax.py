"""softmax and log_softmax as fused Functions with numerically stable forward and hand-written backward.

Forward subtracts the maximum along ``dim`` before exponentiating, so exp never overflows (inputs of
1e4 are fine) and the largest term is exactly exp(0) = 1. With y = softmax(x) along the dim,

    softmax:      dx = y * (dout - sum(dout * y))
    log_softmax:  dx = dout - softmax(x) * sum(dout),   softmax(x) = exp(log_softmax(x))

(sums along ``dim``, kept for broadcasting). float16 input is computed in float32 and cast back, as
PyTorch's CPU kernels do.
"""
import warnings

import numpy as np

from .._checks import dtype_arg, takes_tensors
from ..autograd import Function
from ..dtypes import compute_dtype, kind_of
from .dims import normalize_dim
from ..tensor import Tensor
from .reduce import Sum
from .layout import row_major


def shifted_exp(x, axis):
    """The stable pieces along ``axis`` of the ndarray x, in its compute dtype: shifted = x - max(x),
    exp(shifted) and its sum (keepdims), so softmax = exp / sum and log_softmax = shifted - log(sum),
    with sum >= 1. A row that is all -inf gives nan, as in PyTorch."""
    x = x.astype(compute_dtype(x.dtype), copy=False)
    with np.errstate(invalid="ignore"):  # -inf - (-inf) in an all -inf row
        shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    exp = np.exp(shifted)
    return shifted, exp, np.sum(exp, axis=axis, keepdims=True)


def _keep_output(ctx, out, axis, dtype):
    """The output in the input's dtype, laid out row-major as PyTorch's (NumPy keeps the input's order), saved for
    backward as it is returned: PyTorch's saved result is the output itself, so a later in-place write into the
    output makes backward refuse (saving ``out`` before the copy missed that for a transposed input)."""
    ctx.axis = axis
    result = row_major(out, dtype)
    ctx.save_for_backward(result)
    return result


def _saved_output(ctx):
    """The saved output in its compute dtype (float16 and bfloat16 are computed in float32, as in PyTorch)."""
    (out,) = ctx.saved_tensors
    return out.astype(compute_dtype(out.dtype), copy=False)


def _axis(input, dim):
    axis = normalize_dim(dim, input.ndim)  # validated for a 0-d tensor too
    return axis if input.ndim else None


def _prepare(input, dim, dtype, name):
    """Cast to ``dtype`` if given (differentiably, as PyTorch does), check the dtype, and the axis."""
    if dtype is not None:
        input = input.to(dtype_arg(dtype, name))
    if dim is None:  # PyTorch's legacy implicit dim, with its warning
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                      "as an argument.", UserWarning, stacklevel=3)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    axis = _axis(input, dim)
    if kind_of(input.dtype) != "f" and input.numel():       # (no kernel runs for an empty input, of any dtype)
        raise NotImplementedError(f"{name}: expected a floating-point input, got {input.dtype} "
                                  f"(pass dtype=minigrad.float32 to compute in floating point)")
    return input, axis


def _apply(function, input, axis):
    """``function`` (Softmax or LogSoftmax) along ``axis``; for an empty input PyTorch runs no kernel: an empty
    result of the input's dtype, whatever it is."""
    if not input.numel() and not input.requires_grad:
        return Tensor(np.empty(input.shape, input._data.dtype))
    return function.apply(input, axis)


def softmax_grad(g, y, total):
    """dx = y * (g - sum(g * y)) = g y - y sum(g y), for ndarrays or Tensors; ``total`` sums along the
    softmax's dim, keeping it."""
    gy = g * y
    return gy - y * total(gy)


def _graph_total(axis):
    """Sum along ``axis`` (None: every axis of a 0-d tensor), keeping it, with a differentiable op."""
    return lambda t: Sum.apply(t, () if axis is None else (axis,), True)


class Softmax(Function):
    """y = exp(x - max) / sum(exp(x - max));  dx = y * (dout - sum(dout * y)).

    Under create_graph y is this node's output, so the double backward differentiates through y again."""
    saved_as = (("result", "out"),)
    saved_values = {"dim": "axis"}

    @staticmethod
    def forward(ctx, a, axis):
        _, y, total = shifted_exp(a._data, axis)
        y /= total
        return _keep_output(ctx, y, axis, a.dtype)

    @staticmethod
    def backward(ctx, dout):
        y = _saved_output(ctx)
        g = dout._data.astype(y.dtype, copy=False)
        return softmax_grad(g, y, lambda t: np.sum(t, axis=ctx.axis, keepdims=True)), None

    @staticmethod
    def graph_backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return softmax_grad(dout, ctx.output_tensor(y), _graph_total(ctx.axis)), None


class LogSoftmax(Function):
    """out = (x - max) - log(sum(exp(x - max)));  dx = dout - exp(out) * sum(dout)."""
    saved_as = (("result", "out"),)
    saved_values = {"dim": "axis"}

    @staticmethod
    def forward(ctx, a, axis):
        out, _, total = shifted_exp(a._data, axis)
        out -= np.log(total)
        return _keep_output(ctx, out, axis, a.dtype)

    @staticmethod
    def backward(ctx, dout):
        out = _saved_output(ctx)
        g = dout._data.astype(out.dtype, copy=False)
        return g - np.exp(out) * np.sum(g, axis=ctx.axis, keepdims=True), None

    @staticmethod
    def graph_backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout - ctx.output_tensor(out).exp() * _graph_total(ctx.axis)(dout), None


@takes_tensors("input")
def softmax(input, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``; ``dtype`` casts the input first (PyTorch's argument)."""
    input, axis = _prepare(input, dim, dtype, "softmax")
    return _apply(Softmax, input, axis)


@takes_tensors("input")
def log_softmax(input, dim, dtype=None):
    """log(softmax(x)) along ``dim``, computed as x - max - log(sum(exp(x - max))) (never log of a 0)."""
    input, axis = _prepare(input, dim, dtype, "log_softmax")
    return _apply(LogSoftmax, input, axis)


def _functional(name, function):
    """``nn.functional``'s form of a softmax (``dim`` may be omitted: PyTorch's legacy implicit dim, with its
    warning; ``_stacklevel`` third; no ``out=``), for the Function ``function``."""
    @takes_tensors("input", fname=name)
    def functional(input, dim=None, _stacklevel=3, dtype=None):
        input, axis = _prepare(input, dim, dtype, name)
        return _apply(function, input, axis)
    functional.__name__ = functional.__qualname__ = name
    functional.__doc__ = (f"``nn.functional.{name}``: as ``minigrad.{name}``, with ``dim`` optional (PyTorch's "
                          "legacy implicit choice, with its warning) and no ``out=``.")
    functional.no_out = True
    return functional


functional_softmax = _functional("softmax", Softmax)
functional_log_softmax = _functional("log_softmax", LogSoftmax)


@takes_tensors("input")
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``: exp(-x) / sum(exp(-x)); without ``dim``, PyTorch's legacy choice and warning.
    As in PyTorch, x is negated before the ``dtype`` cast (uint8 input wraps around; bool input refuses it)."""
    if kind_of(input.dtype) == "b":
        input.neg()                                 # raises PyTorch's error for negating a bool tensor
    negated, axis = _prepare(-input, dim, dtype, "softmin")
    return _apply(Softmax, negated, axis)


@takes_tensors("logits")
def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax (concrete) distribution: softmax((logits + g) / tau), g Gumbel(0, 1) noise
    drawn from minigrad's generator. ``hard=True``: the one-hot of its argmax in the forward pass with the soft
    sample's gradient (y_hard - y_soft.detach() + y_soft, the straight-through estimator). ``eps`` is unused, as
    in PyTorch."""
    from .. import creation
    gumbels = -creation.empty_like(logits).exponential_().log()          # Gumbel(0, 1) draws
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
