"""Floating-point anatomy and IEEE special values: frexp, nextafter, nan_to_num, signbit, isposinf/isneginf,
isreal, fmax/fmin (maximum/minimum that skip NaN), heaviside.

Gradients, PyTorch's:

    frexp:      mantissa = x / 2^e with e held fixed: d mantissa / dx = 2^-e
    nextafter:  the step to the next float held fixed: d/dinput = 1 where input != other, 0 where they are
                equal (the output is other there); d/dother = 0
    nan_to_num: dout where x is finite, 0 where it was replaced
    fmax(a, b): all of dout to a where a >= b or b is NaN, else to b (ties go to a, unlike maximum's halves);
                fmin the same with a <= b
"""
from collections import namedtuple

import numpy as np

from ..dtypes import finfo, kind_of
from .._checks import check_tensor, takes_tensors
from ..autograd import Function
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from .pointwise import check_common_kind

frexp_result = namedtuple("frexp", ["mantissa", "exponent"])  # like torch.return_types.frexp


def _float_only(name, t):
    if kind_of(t.dtype) != "f":
        raise RuntimeError(f"torch.{name}() only supports floating-point dtypes")


class Frexp(ew.Routing):
    """The mantissa of x = mantissa * 2^exponent; dx = dout * 2^-exponent (the exponent a constant)."""

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.scale = np.ldexp(np.ones((), a.dtype), -exponent)
        return np.frexp(a._data)[0]

    @staticmethod
    def grads(ctx, g):
        return g * ctx.scale, None


@takes_tensors("input")
def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, |mantissa| in [0.5, 1) (exponent int32)."""
    _float_only("frexp", input)
    exponent = np.frexp(input._data)[1].astype(np.int32)
    return frexp_result(Frexp.apply(input, exponent), Tensor(exponent))


class NextAfter(Function):
    """The next float after a towards b, differentiable as PyTorch defines it (module docstring)."""

    watched_inputs = (0, 1)  # PyTorch's backward saves both operands
    low_precision_native = True   # the next float16/bfloat16, not the next float32 rounded back (the same number)

    @staticmethod
    def forward(ctx, a, b):
        a, b = ew.promoted(a, b)
        ctx.steps = a != b       # where the output is a's neighbour; where a == b it is b itself (broadcast shape)
        return np.nextafter(a, b)

    @staticmethod
    def backward(ctx, dout):
        """PyTorch's: the step to the next float is held constant, so d/dinput = 1 where input != other (NaN
        included) and 0 where they are equal, and d/dother = 0."""
        return dout * ctx.steps, (dout * 0 if ctx.needs_input_grad[1] else None)

    graph_backward = backward


@takes_tensors("input", "other")
def nextafter(input, other):
    """The next representable float after ``input`` towards ``other``."""
    a, b = ew._pair(input, other)
    check_common_kind("nextafter_cpu", a, b, "f")
    return ew._apply_broadcasting(NextAfter, a, b)


class NanToNum(ew.Routing):
    """NaN, +inf and -inf replaced by numbers; the gradient passes where x was finite."""

    watched_inputs = (0,)  # PyTorch's backward saves the input

    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        x = a._data
        ctx.finite = np.isfinite(x)
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def grads(ctx, g):
        return ew.select(ctx.finite, g, np.zeros((), g.dtype)), None, None, None


@takes_tensors("input")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default: the dtype's largest), -inf -> ``neginf`` (its lowest)."""
    if kind_of(input.dtype) not in "fc":
        return Tensor(input._data.copy())
    info = finfo(input.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    return NanToNum.apply(input, nan, posinf, neginf)


@takes_tensors("input")
def signbit(input):
    """True where the sign bit is set (-0.0 and negative NaNs included); bool."""
    if kind_of(input.dtype) == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    check_kernel("signbit", input)
    x = input._data
    return Tensor(np.signbit(x) if kind_of(x.dtype) == "f" else x < 0)


@takes_tensors("input")
def isposinf(input):
    """True where input is +inf (bool)."""
    if kind_of(input.dtype) == "c":
        raise RuntimeError("isposinf does not support complex inputs.")
    check_kernel("isposinf", input)
    return Tensor(np.isposinf(input._data) if kind_of(input.dtype) == "f" else np.zeros(input.shape, bool))


@takes_tensors("input")
def isneginf(input):
    """True where input is -inf (bool)."""
    if kind_of(input.dtype) == "c":
        raise RuntimeError("isneginf does not support complex inputs.")
    check_kernel("isneginf", input)
    return Tensor(np.isneginf(input._data) if kind_of(input.dtype) == "f" else np.zeros(input.shape, bool))


@takes_tensors("input")
def isreal(input):
    """True where the imaginary part is 0 (everywhere for a real tensor); bool."""
    x = input._data
    return Tensor(x.imag == 0 if kind_of(x.dtype) == "c" else np.ones(x.shape, bool))


class _NanSkipping(ew.Routing):
    """fmax or fmin: the NaN-skipping extremum; dout to a where a wins or ties or b is NaN, else to b."""

    watched_inputs = (0, 1)  # PyTorch's fmax/fmin backwards save both operands

    pick = None     # np.fmax or np.fmin
    wins = None     # np.greater_equal or np.less_equal

    @classmethod
    def forward(cls, ctx, a, b):
        x, y = ew.promoted(a, b)
        ctx.to_a = cls.wins(x, y) | np.isnan(y)
        return cls.pick(x, y)

    @classmethod
    def grads(cls, ctx, g):
        zero = np.zeros((), g.dtype)
        return ew.select(ctx.to_a, g, zero), ew.select(ctx.to_a, zero, g)


class Fmax(_NanSkipping):
    pick, wins = staticmethod(np.fmax), staticmethod(np.greater_equal)


class Fmin(_NanSkipping):
    pick, wins = staticmethod(np.fmin), staticmethod(np.less_equal)


@takes_tensors("input", "other")
def fmax(input, other):
    """The larger of input and other elementwise; a NaN loses to a number (NaN only where both are NaN)."""
    return ew._apply_broadcasting(Fmax, *ew._check_ordered("fmax", input, other))


@takes_tensors("input", "other")
def fmin(input, other):
    """The smaller of input and other elementwise; a NaN loses to a number (NaN only where both are NaN)."""
    return ew._apply_broadcasting(Fmin, *ew._check_ordered("fmin", input, other))


@takes_tensors("input", "values")
def heaviside(input, values):
    """0 where input < 0, ``values`` where input == 0, 1 where input > 0 (and 0 for NaN); no gradient."""
    check_tensor(values, "heaviside", "values", 2)
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    if kind_of(input.dtype) == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    ew.check_broadcast(input.shape, values.shape)
    x, v = input._data, values._data
    return Tensor(np.where(x == 0, v, x > 0).astype(x.dtype))


__all__ = ["frexp", "nextafter", "nan_to_num", "signbit", "isposinf", "isneginf", "isreal", "fmax", "fmin",
           "heaviside"]
METHODS = __all__
