"""In-place variants (``tan_``, ``abs_``, ``remainder_``, ``bitwise_and_``, ``cumsum_``, ``tril_``, ...) of
elementwise, cumulative and masking ops, each its out-of-place twin written back through ``inplace.write``
(``inplace.py``: NumPy writes straight into the memory when nothing is recorded, the twin's history is taken
over otherwise).

``in_place(name, twin)`` first runs the twin on the current values, unrecorded: that checks the arguments and
gives the result's dtype and shape, which must fit the tensor (PyTorch's "result type Float can't be cast to
the desired output type Long" otherwise), all before anything is written. When nothing is recorded that result
is what gets written; when recording, ``write`` runs the twin again on the old values, in the graph.
"""
import numpy as np

from ..autograd import grad_mode
from ..tensor import Tensor
from . import bitwise, division, elementwise_more, floats, reduce, reduce_more, shape, trig
from . import complex as complex_ops
from . import elementwise as ew
from .inplace import check_result, write


def _detached(value):
    return Tensor(value._data) if isinstance(value, Tensor) else value


def in_place(name, twin):
    """``Tensor.name`` (ending in ``_``): ``self`` becomes ``twin(self, *args, **kwargs)``; returns ``self``."""
    def op(self, *args, **kwargs):
        with grad_mode.no_grad():
            result = twin(Tensor(self._data), *[_detached(a) for a in args],
                          **{k: _detached(v) for k, v in kwargs.items()})
        check_result(self, result.shape, result.dtype)
        operands = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
        return write(self, lambda old: twin(old, *args, **kwargs), operands,
                     lambda a: np.copyto(a, result._data, casting="unsafe"))
    op.__name__ = name
    op.__doc__ = f"In-place ``{twin.__name__}``; returns ``self``."
    return op


_TWINS = {
    trig: ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
           "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg"],
    ew: ["cos", "sin", "log", "log1p", "expm1", "log2", "log10", "reciprocal", "rsqrt", "erf", "abs", "atan2",
         "arctan2", "ceil", "floor", "frac", "round", "sign", "square", "trunc", "fix", "clamp_min", "clamp_max",
         "eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal", "not_equal",
         "logical_and", "logical_or", "logical_xor", "logical_not", "absolute", "negative", "multiply", "divide",
         "subtract", "true_divide"],
    elementwise_more: ["absolute", "hypot", "copysign", "float_power", "ldexp", "sgn"],
    floats: ["nextafter", "nan_to_num", "heaviside"],
    division: ["remainder", "fmod", "floor_divide"],
    bitwise: ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
              "gcd", "lcm"],
    reduce: ["cumsum", "cumprod"],
    reduce_more: ["renorm"],
    complex_ops: ["conj_physical"],
    shape: ["tril", "triu"],
}
_OPS = {name + "_": in_place(name + "_", getattr(module, name))
        for module, names in _TWINS.items() for name in names if hasattr(module, name)}
_float_power_ = _OPS["float_power_"]


def float_power_(self, exponent):
    """In-place ``float_power``: ``self`` must already be double (or complex double), as in PyTorch."""
    wanted = "ComplexDouble" if self.dtype.kind == "c" or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent.dtype.kind == "c") else "Double"
    if ew._type_name(self.dtype) != wanted:
        raise RuntimeError(f"the base given to float_power_ has dtype {ew._type_name(self.dtype)} but the "
                           f"operation's result requires dtype {wanted}")
    return _float_power_(self, exponent)


_OPS["float_power_"] = float_power_


def _refusing_complex(op):
    """``op`` (``abs_``, ``absolute_``), refusing a complex tensor as PyTorch does: its real result would lose the
    imaginary parts in place."""
    def checked(self, *args, **kwargs):
        if self.dtype.kind == "c":
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return op(self, *args, **kwargs)
    checked.__name__, checked.__doc__ = op.__name__, op.__doc__
    return checked


_OPS.update({name: _refusing_complex(_OPS[name]) for name in ("abs_", "absolute_")})
globals().update(_OPS)

METHODS = sorted(_OPS)
