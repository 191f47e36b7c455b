"""Rounding divisions: remainder (Python's %, the divisor's sign), fmod (C's, the dividend's sign) and
floor_divide (Python's //).

    remainder(a, b) = a - b floor(a / b):   d/da = 1,   d/db = -floor(a / b)
    fmod(a, b)      = a - b trunc(a / b):   d/da = 1,   d/db = -trunc(a / b)

The quotients are constants of the inputs (their derivative is 0 almost everywhere, PyTorch's too), so the
gradients are dout times constants (``Routing``). Integer division by zero raises, as in PyTorch.
"""
import numpy as np

from .._checks import takes_tensors
from ..dtypes import LIMITED
from ..tensor import Tensor
from . import elementwise as ew
from .pointwise import not_implemented, tensor_pair


class _RoundedRemainder(ew.Routing):
    """a - b * round(a / b) for the rounding ``quotient``; the gradient: dout to a, -dout * quotient to b."""

    watched_inputs = (0, 1)  # PyTorch's backward saves both operands

    reduce = None     # np.remainder or np.fmod
    quotient = None   # floor or trunc of a / b

    @classmethod
    def forward(cls, ctx, a, b):
        x, y = ew.promoted(a, b)
        with np.errstate(all="ignore"):
            out = cls.reduce(x, y)
            if ctx.needs_input_grad[1]:
                ctx.quotient = cls.quotient(x, y)
        return out

    @classmethod
    def grads(cls, ctx, g):
        db = -g * ctx.quotient if ctx.needs_input_grad[1] else None
        if isinstance(db, Tensor):          # create_graph: PyTorch's formula reads the inputs (derivative 0)
            db = ew.depending_on_input(ctx, 1, db)
        return g, db


def _remainder(x, y):
    """x mod y with y's sign, as PyTorch's: for floats C's fmod, moved by y where its sign is not y's, so an exact
    multiple keeps fmod's zero, with x's sign (1. % -1. is 0., NumPy's remainder gives -0.)."""
    if x.dtype.kind in "iu":
        return np.remainder(x, y)
    m = np.fmod(x, y)
    return np.where((m != 0) & ((y < 0) != (m < 0)), m + y, m)


class Remainder(_RoundedRemainder):
    reduce = staticmethod(_remainder)
    quotient = staticmethod(np.floor_divide)      # exact, as PyTorch's (np.floor(x / y) is 2 for 3x / x at times)


class Fmod(_RoundedRemainder):
    reduce = staticmethod(np.fmod)
    quotient = staticmethod(lambda x, y: np.trunc(x / y))   # (PyTorch's too: div(rounding_mode="trunc") rounds x / y)


def _operands(name, input, other, kernel):
    """The two operands as Tensors (numbers take PyTorch's dtype next to the tensor), checked for PyTorch's
    errors: complex or bool operands (``kernel`` names PyTorch's missing kernel), integer division by zero."""
    a, b = tensor_pair(name, input, other)
    x, y = ew.promoted(a, b)
    if x.dtype.kind in "bc":
        raise not_implemented(kernel, x.dtype)
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise RuntimeError("ZeroDivisionError")
    ew.check_broadcast(a.shape, b.shape)
    return a, b


@takes_tensors(numbers=("input", "other"))
def remainder(input, other):
    """Python's modulus: input - other * floor(input / other), with other's sign."""
    return ew._apply_broadcasting(Remainder, *_operands("remainder", input, other, "remainder_cpu"))


@takes_tensors("input", numbers=("other",))
def fmod(input, other):
    """C's modulus: input - other * trunc(input / other), with input's sign."""
    return ew._apply_broadcasting(Fmod, *_operands("fmod", input, other, "fmod_cpu"))


@takes_tensors(numbers=("input", "other"))
def floor_divide(input, other):
    """floor(input / other) elementwise, in the operands' promoted dtype (no gradient). Two numbers give a 0-d
    tensor, as in PyTorch (the first is read as a tensor: a float in the default dtype, an int as int64)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from ..creation import tensor          # (creation imports the ops)
        input = tensor(input)
    x, y = ew.promoted(*_operands("floor_divide", input, other, "div_floor_cpu"))
    if x.dtype in LIMITED:                                  # PyTorch has no such kernel for uint16/32/64 and float8
        raise not_implemented("div_floor_cpu", x.dtype)
    with np.errstate(all="ignore"):
        return Tensor(np.asarray(np.floor_divide(x, y)))


__all__ = ["remainder", "fmod", "floor_divide"]
METHODS = __all__
