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

from .._checks import check_tensor
from ..autograd import grad_mode
from ..dtypes import can_cast, cast_limited, cast_refused, result_type
from ..tensor import Tensor
from . import bitwise, division, elementwise_more, floats, reduce, reduce_more, shape, trig
from . import complex as complex_ops
from . import elementwise as ew
from .inplace import check_result, write


def _detached(value):
    return Tensor(value._data) if isinstance(value, Tensor) else value


# binary ops PyTorch computes in their operands' common dtype, which must then fit self's before anything is run
_PROMOTING = {"atan2_", "arctan2_", "hypot_", "copysign_", "nextafter_", "heaviside_", "remainder_", "fmod_",
              "floor_divide_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
              "bitwise_right_shift_", "gcd_", "lcm_", "multiply_", "divide_", "subtract_", "true_divide_"}
_PROMOTING_TENSORS = {"clamp_min_", "clamp_max_"}     # (a number bound is refused or converted first)
# ops whose operand must be a Tensor (not a number): its parameter's name
_TENSOR_OPERAND = {"atan2_": "other", "arctan2_": "other", "hypot_": "other", "nextafter_": "other",
                   "heaviside_": "values", "gcd_": "other", "lcm_": "other"}


def check_fits(self, name, args):
    """PyTorch's checks of an in-place op's operands, made in its order, before the op's own (which kernels exist
    for which dtype): the tensors broadcast to ``self``'s shape (a 0-d ``self`` cannot take a 2x3 result), and for a
    promoting binary op their common dtype can be written into ``self`` (no float into an integer tensor)."""
    if name in _TENSOR_OPERAND and args:
        check_tensor(args[0], name, _TENSOR_OPERAND[name], 1)
    shapes = [a.shape for a in args if isinstance(a, Tensor)]
    try:
        shape = np.broadcast_shapes(self.shape, *shapes)
    except ValueError:
        return                      # the op's own check names the sizes that do not broadcast
    if shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if args and (name in _PROMOTING and isinstance(args[0], (Tensor, bool, int, float, complex)) or
                 name in _PROMOTING_TENSORS and isinstance(args[0], Tensor)):
        other = args[0]._data if isinstance(args[0], Tensor) else args[0]
        common = result_type(self._data, other)
        if not can_cast(common, self.dtype):
            raise cast_refused(common, self.dtype)


def in_place(name, twin):
    """``Tensor.name`` (ending in ``_``): ``self`` becomes ``twin(self, *args, **kwargs)``; returns ``self``."""
    def op(self, *args, **kwargs):
        check_fits(self, name, args)
        with grad_mode.no_grad():
            result = twin(Tensor(self._data), *[_detached(a) for a in args],
                          **{k: _detached(v) for k, v in kwargs.items()})
        check_result(self, result.shape, result.dtype)
        operands = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
        return write(self, lambda old: twin(old, *args, **kwargs), operands,
                     lambda a: np.copyto(a, cast_limited(result._data, a.dtype), casting="unsafe"))
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
