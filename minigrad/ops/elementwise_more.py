"""Elementwise arithmetic beside ``elementwise.py``: logaddexp/logaddexp2, hypot, copysign, float_power, ldexp,
lerp, addcmul/addcdiv, rsub, positive, sgn, fill (exp2 is with the special functions, ``ops/special.py``).

Derivatives (written once for ndarrays and Tensors, ``pointwise.py``):

    logaddexp:   d/da = e^a / (e^a + e^b) = exp(a - out),    d/db = exp(b - out)
    logaddexp2:  d/da = 2^(a - out),                          d/db = 2^(b - out)
    hypot:       d/dx = x / out,   d/dy = y / out
    copysign:    d/dx = out / x (the sign it was given; 0 at x = 0, PyTorch's choice),   d/dy = 0

The rest are compositions of differentiable ops (their gradients follow from the parts).
"""
import numpy as np

from .._checks import takes_tensors
from ..dtypes import float64, get_default_dtype, kind_of, result_type, result_type_of
from ..tensor import Tensor
from . import elementwise as ew
from .pointwise import BinaryMath, binary, check_common_kind, not_implemented, on_both
from ..autograd.function import watching

_exp = on_both(np.exp, ew.exp)
_exp2 = on_both(np.exp2, lambda t: ew.pow(2.0, t))    # 2^t, differentiable in t


def _logaddexp(x, y):
    """log(e^x + e^y): NumPy's for real arrays, ``complex_logaddexp`` for complex ones."""
    return complex_logaddexp(x, y) if kind_of(x.dtype) == "c" else np.logaddexp(x, y)


def complex_logaddexp(x, y):
    """PyTorch's log(e^x + e^y) of complex arrays: m + log1p(e^(n - m)) with m the operand of the larger real part
    and n the other (no overflow), n itself where both real parts are -inf, log(e^n + e^m) where both are +inf, and
    NaN + NaN j where either operand has a NaN part."""
    x, y = np.broadcast_arrays(x, y)
    m, n = np.where(x.real < y.real, y, x), np.where(x.real < y.real, x, y)
    infinite = ~np.isfinite(n.real) & (n.real == m.real)
    with np.errstate(all="ignore"):
        out = m + np.log1p(np.exp(n - m))
        out = np.where(infinite, np.where(n.real < 0, n, np.log(np.exp(n) + np.exp(m))), out)
    return np.where(np.isnan(x) | np.isnan(y), complex(np.nan, np.nan), out).astype(x.dtype, copy=False)


class LogAddExp(BinaryMath):
    """out = log_b(b^x + b^y) for base b = e (``LogAddExp2``: 2), computed as max + log_b(1 + b^-|x - y|) (no
    overflow); d/dx = b^x / (b^x + b^y) = 1 / (1 + b^(y - x)), d/dy = 1 / (1 + b^(x - y)): PyTorch's formulas, from
    the inputs only (so a write into the output after the forward is allowed, as in PyTorch). Complex inputs take
    the same formulas (holomorphic), conjugated in the backward as every gradient here."""

    f = staticmethod(_logaddexp)
    power = staticmethod(_exp)                     # b^v, for ndarrays and Tensors
    saves = ("input", "other")

    @classmethod
    def partials(cls, x, y, out, need):
        return 1 / (1 + cls.power(y - x)) if need[0] else None, 1 / (1 + cls.power(x - y)) if need[1] else None


class LogAddExp2(LogAddExp):
    f = staticmethod(np.logaddexp2)
    power = staticmethod(_exp2)


class Hypot(BinaryMath):
    """out = sqrt(x^2 + y^2) without overflow."""

    @staticmethod
    def f(x, y):
        return np.hypot(x, y)

    @staticmethod
    def partials(x, y, out, need):
        return x / out if need[0] else None, y / out if need[1] else None


class CopySign(BinaryMath):
    """out = |x| with the sign of y; dx = out / x (0 at x = 0), dy = 0: from x and out (y is not saved, as in
    PyTorch)."""

    saves = ("input", "output")

    @staticmethod
    def f(x, y):
        return np.copysign(x, y)

    @staticmethod
    def partials(x, y, out, need):
        dx = None
        if need[0]:
            zero = ew.array_of(x) == 0
            dx = ew.select(zero, 0.0, out / ew.select(zero, 1.0, x))
        dy = (Tensor(np.zeros_like(out._data)) if isinstance(out, Tensor) else np.zeros_like(out)) if need[1] \
            else None                       # zeros with no graph, as PyTorch's
        return dx, dy


_logaddexp = binary(LogAddExp, "logaddexp")
_logaddexp2 = binary(LogAddExp2, "logaddexp2")
_hypot = binary(Hypot, "hypot")
_copysign = binary(CopySign, "copysign")


@takes_tensors("input", numbers=("other",))
def copysign(input, other):
    """|input| with the sign of other (integers give the default float dtype)."""
    check_common_kind("copysign_cpu", input, other, "biuf")
    return _copysign(input, other)


@takes_tensors("input", "other")
def logaddexp(input, other):
    """log(exp(input) + exp(other)) elementwise, without overflow."""
    check_common_kind("logaddexp_cpu", input, other, "fc")
    return _logaddexp(input, other)


@takes_tensors("input", "other")
def logaddexp2(input, other):
    """log2(2**input + 2**other) elementwise, without overflow."""
    check_common_kind("logaddexp2_cpu", input, other, "f")
    return _logaddexp2(input, other)


@takes_tensors("input", "other")
def hypot(input, other):
    """sqrt(input**2 + other**2) elementwise (floating-point tensors)."""
    check_common_kind("hypot_cpu", input, other, "f")
    return _hypot(input, other)


# --------------------------------------------------------------------------- compositions
def _operand(value, like):
    return value if isinstance(value, Tensor) else ew.as_tensor_operand(value, like)


@takes_tensors(numbers=("input", "exponent"))
def float_power(input, exponent):
    """input ** exponent computed in double precision (complex128 if either is complex)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument")
    complex_ = any(isinstance(v, complex) or (isinstance(v, Tensor) and kind_of(v.dtype) == "c")
                   for v in (input, exponent))
    dtype = np.dtype(np.complex128) if complex_ else float64
    a = ew.cast(input, dtype) if isinstance(input, Tensor) else Tensor(np.asarray(input, dtype))
    b = ew.cast(exponent, dtype) if isinstance(exponent, Tensor) else Tensor(np.asarray(exponent, dtype))
    return ew.pow(a, b)


@takes_tensors("input", "other")
def ldexp(input, other):
    """input * 2 ** other, computed in the two's common dtype (integers and bools in the default float dtype); a
    bool exponent of a float input is refused, as PyTorch has no kernel for it."""
    if kind_of(input.dtype) == "f" and kind_of(other.dtype) == "b":
        raise not_implemented("ldexp_cpu_exp", other.dtype)
    dtype = result_type(input._data, other._data)
    if kind_of(dtype) in "biu":
        dtype = get_default_dtype()
    return ew.mul(ew.cast(input, dtype), _exp2(ew.cast(other, dtype)))


def lerp_values(input, end, weight):
    """PyTorch's formula: input + weight (end - input) where |weight| < 0.5, else end - (end - input)(1 - weight),
    which is exact at weight 1 and gives what PyTorch gives at infinite ends. One form for Tensors (differentiable)
    and ndarrays (``lerp_``'s fast path): operators, and ``select`` for the branch of a tensor weight."""
    with np.errstate(invalid="ignore"):     # (inf - inf in the branch not taken, or taken as PyTorch takes it)
        diff = end - input
        if not isinstance(weight, (Tensor, np.ndarray)):                  # a number: one branch
            return input + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
        return ew.select(ew.array_of(abs(weight) < 0.5), input + weight * diff, end - diff * (1 - weight))


@takes_tensors("input", "end", numbers=("weight",))
def lerp(input, end, weight):
    """input + weight * (end - input): the linear interpolation from ``input`` to ``end``."""
    dtype = check_lerp_operands(input, end, weight)
    if dtype is not None:
        input, end, weight = (t if t.dtype == dtype else ew.cast(t, dtype) for t in (input, end, weight))
    out = lerp_values(input, end, weight)
    if isinstance(weight, Tensor) and weight.requires_grad:   # PyTorch's backward then saves input and end too
        return watching(out, input, end)
    return out


def check_lerp_operands(input, end, weight):
    """PyTorch's checks of lerp's operands (``lerp_`` makes them too, before it writes): end (and a weight with dims)
    of input's dtype; a 0-d weight is promoted with them instead, and the kernel is looked for in the common dtype,
    which it returns; a number weight must fit input's dtype, whose kernel must exist (returns None)."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype != input.dtype and (name == "end" or t.ndim):
            raise RuntimeError(f"expected dtype {input.dtype} for `{name}` but got dtype {t.dtype}")
    if isinstance(weight, Tensor):
        dtype = result_type_of(input._data, end._data, weight._data)
        if kind_of(dtype) not in "fc":
            raise not_implemented("lerp_kernel_tensor", dtype)
        return dtype
    if kind_of(input.dtype) not in "fc":
        raise not_implemented("lerp_kernel_scalar", input.dtype)
    if isinstance(weight, complex) and weight.imag and kind_of(input.dtype) != "c":
        raise RuntimeError("value cannot be converted to type float without overflow")
    return None


def common_dtype(input, tensor1, tensor2):
    """The dtype PyTorch computes ``input + value * tensor1 (*|/) tensor2`` in: the three operands' common one (a 0-d
    operand does not widen a dimensioned one), not tensor1 and tensor2's alone (a bfloat16 times a float32 added to
    a float64 is computed in float64)."""
    return result_type_of(input._data, tensor1._data, tensor2._data)


def in_common_dtype(input, tensor1, tensor2):
    dtype = common_dtype(input, tensor1, tensor2)
    return tuple(t if t.dtype == dtype else t.to(dtype) for t in (tensor1, tensor2))


@takes_tensors("input", "tensor1", "tensor2")
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, computed in the three operands' common dtype."""
    check_addcmul_operands(input, tensor1, tensor2)
    value = addcmul_value(value, input, tensor1, tensor2)
    tensor1, tensor2 = in_common_dtype(input, tensor1, tensor2)
    return ew.add(input, ew.mul(ew.mul(tensor1, tensor2), value))


def check_addcmul_operands(input, tensor1, tensor2):
    """PyTorch's refusal of addcmul (and addcmul_) in bool: it has no such kernel."""
    if kind_of(common_dtype(input, tensor1, tensor2)) == "b":
        raise not_implemented("addcmul_cpu_out", input.dtype)


def addcmul_value(value, input, tensor1, tensor2):
    """addcmul's ``value`` in the operands' common dtype, as PyTorch takes it: a float value truncated toward zero
    when the three tensors are integral."""
    integral = all(kind_of(t.dtype) in "iu" for t in (input, tensor1, tensor2))
    return int(value) if integral and isinstance(value, (float, np.floating)) else value


@takes_tensors("input", "tensor1", "tensor2")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, computed in the three operands' common dtype (floating point: PyTorch
    refuses integer division here)."""
    check_addcdiv_operands(tensor1, tensor2)
    tensor1, tensor2 = in_common_dtype(input, tensor1, tensor2)
    return ew.add(input, ew.mul(ew.div(tensor1, tensor2), value))


def check_addcdiv_operands(tensor1, tensor2):
    """PyTorch's error for addcdiv (and addcdiv_) of two integral tensors."""
    if kind_of(tensor1.dtype) in "biu" and kind_of(tensor2.dtype) in "biu":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                           "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")


@takes_tensors("input", numbers=("other",))
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return ew.sub(other, input, alpha=alpha)


@takes_tensors("input")
def positive(input):
    """``input`` itself (``+x``); PyTorch refuses a bool tensor."""
    if kind_of(input.dtype) == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@takes_tensors("input")
def sgn(input):
    """z / |z| for complex z (0 at 0), sign(x) for real x (gradient 0)."""
    if kind_of(input.dtype) != "c":
        return ew.sign(input)
    magnitude = ew.abs(input)
    return ew.Abs.complex_grad(1, input, magnitude)


@takes_tensors("input")
def fill(input, value):
    """A tensor like ``input`` with every element ``value`` (a number or a 0-d tensor, whose gradient is the sum
    of the output's; input's gradient is 0)."""
    from .layout import clone
    return clone(input).fill_(value)


@takes_tensors("input")
def resolve_neg(input):
    """``input`` itself: minigrad never holds a lazily negated tensor."""
    return input


absolute = ew.abs
divide, multiply, subtract, negative, true_divide = ew.divide, ew.multiply, ew.subtract, ew.negative, ew.true_divide

__all__ = ["absolute", "divide", "multiply", "subtract", "negative", "true_divide", "logaddexp", "logaddexp2",
           "hypot", "copysign", "float_power", "ldexp", "lerp", "addcmul", "addcdiv", "rsub", "positive", "sgn",
           "fill", "resolve_neg"]
METHODS = [n for n in __all__ if n not in ("rsub", "fill")]
