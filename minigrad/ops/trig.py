"""Trigonometric and hyperbolic functions beside sin/cos/tanh (``elementwise.py``), their inverses, and
degree/radian conversions. Integers and bools are computed in the default float dtype, as in PyTorch; complex
inputs are differentiable (dout * conj(f'(z))).

Each derivative is written once (``UnaryMath.derivative``) for ndarrays and Tensors, from what PyTorch's reads (tan's
from its output, the others' from their input; ``UnaryMath.saves``):

    tan' = 1 + tan^2        sinh' = cosh        cosh' = sinh
    asin' = (1 - x^2)^(-1/2)    acos' = -(1 - x^2)^(-1/2)    atan' = 1 / (1 + x^2)
    asinh' = (x^2 + 1)^(-1/2)   acosh' = (x^2 - 1)^(-1/2), complex (z - 1)^(-1/2) (z + 1)^(-1/2)
    atanh' = 1 / (1 - x^2)
"""
import math

import numpy as np

from .._checks import refuses_complex, takes_tensors
from . import elementwise as ew
from .pointwise import UnaryMath, on_both, public_unary


class Tan(UnaryMath):
    saves = ("output",)
    f = staticmethod(np.tan)

    @staticmethod
    def derivative(x, out):
        return 1 + out * out


class Sinh(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.sinh)

    @staticmethod
    def derivative(x, out):
        return _cosh(x)


class Cosh(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.cosh)

    @staticmethod
    def derivative(x, out):
        return _sinh(x)


_cosh = on_both(np.cosh, lambda t: Cosh.apply(t))
_sinh = on_both(np.sinh, lambda t: Sinh.apply(t))


def _inverse_sqrt_one_minus_square(x):
    """1 / sqrt(1 - x^2): NaN outside [-1, 1] for real x, at +-inf too (``** -0.5`` would give 0 there, from
    (-inf) ** -0.5 = 0; PyTorch's rsqrt gives NaN)."""
    one_minus_square = 1 - x * x
    with np.errstate(invalid="ignore"):
        return 1 / (np.sqrt(one_minus_square) if not isinstance(one_minus_square, ew.Tensor) else
                    one_minus_square.sqrt())


class Asin(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.arcsin)

    @staticmethod
    def derivative(x, out):
        return _inverse_sqrt_one_minus_square(x)


class Acos(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.arccos)

    @staticmethod
    def derivative(x, out):
        return -_inverse_sqrt_one_minus_square(x)


class Atan(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.arctan)

    @staticmethod
    def derivative(x, out):
        return 1 / (1 + x * x)


class Asinh(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.arcsinh)

    @staticmethod
    def derivative(x, out):
        return (x * x + 1) ** -0.5


class Acosh(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.arccosh)

    @staticmethod
    def derivative(x, out):
        if ew.array_of(x).dtype.kind == "c":     # not (z^2 - 1)^(-1/2): the branch for complex z
            return (x - 1) ** -0.5 * (x + 1) ** -0.5
        return (x * x - 1) ** -0.5               # PyTorch's real form: also defined for x <= -1 (outside the domain)


class Atanh(UnaryMath):
    saves = ("input",)
    f = staticmethod(np.arctanh)

    @staticmethod
    def derivative(x, out):
        return 1 / (1 - x * x)


tan = public_unary(Tan)
sinh = public_unary(Sinh)
cosh = public_unary(Cosh)
asin = arcsin = public_unary(Asin)
acos = arccos = public_unary(Acos)
atan = arctan = public_unary(Atan)
asinh = arcsinh = public_unary(Asinh)
acosh = arccosh = public_unary(Acosh)
atanh = arctanh = public_unary(Atanh)


@takes_tensors("input")
@refuses_complex('deg2rad is not supported for complex tensors.', RuntimeError)
def deg2rad(input):
    """input * pi / 180 (integers and bools give the default float dtype); dx = dout * pi / 180."""
    return ew.mul(ew._floating(input), math.pi / 180)


@takes_tensors("input")
@refuses_complex('rad2deg is not supported for complex tensors.', RuntimeError)
def rad2deg(input):
    """input * 180 / pi (integers and bools give the default float dtype); dx = dout * 180 / pi."""
    return ew.mul(ew._floating(input), 180 / math.pi)


__all__ = ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
           "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg"]
METHODS = __all__
