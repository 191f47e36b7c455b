"""Elementwise ops: arithmetic with broadcasting, unary math, comparisons, where/masked_fill.

Each Function returns gradients at the broadcast output shape; the engine
(``autograd.engine.fit_gradient``) sums them down to each input's shape.
"""
import math
import warnings

import numpy as np

from .._checks import check_tensor, takes_tensors
from ..autograd import Function
from ..dtypes import (FLOAT8, FLOAT32_64, LIMITED, LIMITED_UINTS, LOW_PRECISION, cast_array, fitted_scalar,
                      get_default_dtype, is_differentiable, kind_of, real_values, result_type, result_type_of,
                      scalar_dtype_for)
from ..kernels.fused import relu as relu_array, relu_backward
from ..tensor import Tensor, wrap
from ..limited_dtypes import check_kernel
from ..low_precision import arithmetic_operand
from .layout import like_operands, row_major


# --------------------------------------------------------------------------- operands
def as_tensor_operand(value, like=None, exact=False):
    """A Tensor for ``value``; a Python scalar takes the dtype PyTorch gives it next to ``like``. An integer that
    does not fit ``like``'s integer dtype wraps around in it (``uint8 * -3``, as PyTorch), unless ``exact``: for ops
    that compute integers in a float dtype (``promoted_float``), where PyTorch converts the number's own value."""
    if isinstance(value, Tensor):
        return value
    if type(value) is float and like is not None and like._data.dtype in FLOAT32_64:     # x * 0.5: x's dtype
        return Tensor(np.asarray(value, dtype=like._data.dtype))
    if isinstance(value, np.ndarray):
        return Tensor(value)
    if like is not None and isinstance(value, (bool, int, float, complex, np.number)):
        dtype = scalar_dtype_for(like._data.dtype, value)
        if (dtype in LOW_PRECISION or dtype in FLOAT8) and not isinstance(value, (complex, np.complexfloating)):
            return Tensor(cast_array(np.asarray(value), dtype))    # through float32 (float8 saturating), as PyTorch
        try:
            return Tensor(np.asarray(value, dtype=dtype))
        except OverflowError:      # uint8 * -3: the number wraps around in the tensor's dtype, as in PyTorch
            return Tensor(np.asarray(value) if exact else np.asarray(value).astype(dtype))
    from ..creation import tensor
    return tensor(value)


def _common_pair(a, b):
    """(a, b) as ``_pair`` gives them for the most common operands, two tensors or a float32/float64 tensor and a
    Python float (``x * 0.5``: the number in the tensor's dtype), without its general checks; None for others."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            return a, b
        if b.__class__ is float and a._data.dtype in FLOAT32_64:
            return a, wrap(np.asarray(b, a._data.dtype))
    elif a.__class__ is float and isinstance(b, Tensor) and b._data.dtype in FLOAT32_64:
        return wrap(np.asarray(a, b._data.dtype)), b
    return None


def _pair(a, b, exact=False):
    """Two operands as Tensors (a number in the dtype PyTorch gives it next to the other: ``as_tensor_operand``)."""
    pair = _common_pair(a, b)
    if pair is not None:
        return pair
    if not isinstance(a, Tensor):
        a = as_tensor_operand(a, b if isinstance(b, Tensor) else None, exact)
    return a, b if isinstance(b, Tensor) else as_tensor_operand(b, a, exact)


def _arithmetic_pair(a, b, exact=False):
    """``_pair`` for ``*`` and ``/``: a Python number next to a float16/bfloat16 tensor stays float32, as PyTorch's
    CPU kernels keep it (``low_precision.arithmetic_operand``); otherwise as ``_pair``. (PyTorch's ``+`` and ``-``
    round the number to the tensor's dtype first, as ``_pair`` does.)"""
    pair = _common_pair(a, b)
    if pair is not None:
        return pair
    if isinstance(a, Tensor) and not isinstance(b, Tensor):
        b = arithmetic_operand(b, a) or b
    elif isinstance(b, Tensor) and not isinstance(a, Tensor):
        a = arithmetic_operand(a, b) or a
    return _pair(a, b, exact)


def check_broadcast(*shapes):
    """Raise PyTorch's error, naming the sizes, if ``shapes`` do not broadcast together."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        pass
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    for d in reversed(range(ndim)):  # PyTorch compares from the last dimension and reports the first mismatch
        sizes = {p[d] for p in padded} - {1}
        if len(sizes) > 1:
            a, b = [p[d] for p in padded if p[d] != 1][:2]
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                               f"non-singleton dimension {d} (shapes {', '.join(str(list(s)) for s in shapes)})")


def _apply_broadcasting(fn, *operands):
    try:
        return fn.apply(*operands)
    except ValueError:
        check_broadcast(*(t.shape for t in operands if isinstance(t, Tensor)))
        raise


def conj_if_complex(x):
    """conj(x) for a complex array; a real array itself. Backward passes multiply by conj(f'(z)) (PyTorch's
    convention for complex gradients, ``ops/complex.py``), which is f'(x) for real inputs."""
    return np.conj(x) if x.dtype.kind == "c" else x                  # (bfloat16 is kind "V": real)


def promoted(a, b):
    """The two operands' arrays in their common (PyTorch-promoted) dtype."""
    x, y = a._data, b._data
    if x.dtype != y.dtype:
        dt = result_type(x, y)
        x, y = x.astype(dt, copy=False), y.astype(dt, copy=False)
    return x, y


def promoted_float(a, b):
    """The two operands' arrays for an op that computes integers and bools in the default float dtype (true
    division, atan2, copysign, ...): in their promoted dtype if that is a float (or complex) one, else each converted
    from its own dtype, as PyTorch's: a 0-d int64 -1 next to a uint8 tensor is -1.0 (promoted first, it would wrap
    around to 255)."""
    x, y = promoted(a, b)
    if kind_of(x.dtype) not in "fc":
        x, y = a._data.astype(get_default_dtype()), b._data.astype(get_default_dtype())
    return x, y


def array_of(x):
    """The ndarray of a Tensor, or ``x`` itself: for masks in formulas written for both."""
    return x._data if isinstance(x, Tensor) else x


def select(condition, a, b):
    """``a`` where the boolean ndarray ``condition`` holds, else ``b``: ``np.where`` on ndarrays, the
    differentiable ``Where`` if ``a`` or ``b`` is a Tensor. So one gradient formula serves a Function's
    ``backward`` (ndarrays) and its ``graph_backward`` (Tensors in a graph)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        a, b = _pair(a, b)
        return Where.apply(Tensor(np.asarray(condition)), a, b)
    return np.where(condition, a, b)


class Routing(Function):
    """A Function whose backward routes the upstream gradient g by constant masks or weights (clamp,
    where, maximum, dropout, ...). Subclasses write ``grads(ctx, g)`` once, with operators, ``select`` and
    constants: ``backward`` passes g as an ndarray, ``graph_backward`` (create_graph=True) as a Tensor in
    a graph. The weights being constants, every second derivative is 0 and the gradient is linear in g."""

    @classmethod
    def backward(cls, ctx, dout):
        return cls.grads(ctx, dout._data)

    @classmethod
    def graph_backward(cls, ctx, dout):
        return cls.grads(ctx, dout)

    @staticmethod
    def grads(ctx, g):
        raise NotImplementedError


# --------------------------------------------------------------------------- arithmetic
class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted(a, b)
        return like_operands(x + y, x, y)

    @staticmethod
    def backward(ctx, dout):
        return dout._data, dout._data

    @staticmethod
    def graph_backward(ctx, dout):
        return dout, dout


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted(a, b)
        return like_operands(x - y, x, y)

    @staticmethod
    def backward(ctx, dout):
        return dout, -dout._data

    @staticmethod
    def graph_backward(ctx, dout):
        return dout, -dout


class Mul(Function):
    """a * b. Backward: grad * conj(b), grad * conj(a)."""
    saved_as = (("self", 0), ("other", 1))

    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted(a, b)
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None, y if ctx.needs_input_grad[0] else None)
        return like_operands(x * y, x, y)

    @staticmethod
    def backward(ctx, dout):
        x, y = ctx.saved_tensors
        da = dout._data * conj_if_complex(y) if y is not None else None
        db = dout._data * conj_if_complex(x) if x is not None else None
        return da, db

    @staticmethod
    def graph_backward(ctx, dout):
        x, y = ctx.saved_tensors
        da = dout * ctx.input_tensor(1, y).conj() if y is not None else None
        db = dout * ctx.input_tensor(0, x).conj() if x is not None else None
        return da, db


class Div(Function):
    """a / b. Backward: grad / conj(b), -grad * (conj(a) / conj(b)) / conj(b) (PyTorch's order: no b^2 to
    overflow or underflow)."""
    saved_as = (("self", 0), ("other", 1))

    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted_float(a, b)       # true division of integers gives the default float dtype
        ctx.save_for_backward(x, y)
        return like_operands(x / y, x, y)

    @staticmethod
    def backward(ctx, dout):
        x, y = ctx.saved_tensors
        x, y = conj_if_complex(x), conj_if_complex(y)
        da = dout._data / y if ctx.needs_input_grad[0] else None
        db = -dout._data * (x / y / y) if ctx.needs_input_grad[1] else None
        return da, db

    @staticmethod
    def graph_backward(ctx, dout):
        x, y = ctx.saved_tensors
        x, y = ctx.input_tensor(0, x).conj(), ctx.input_tensor(1, y).conj()
        da = dout / y if ctx.needs_input_grad[0] else None
        db = -dout * (x / y / y) if ctx.needs_input_grad[1] else None
        return da, db


class Pow(Function):
    saved_as = (("self", 0), ("exponent", 1), ("result", "out"))

    @staticmethod
    def forward(ctx, a, b, number=False):
        """``number``: the exponent was a Python number (``x ** 0.5``), which PyTorch's own kernel computes."""
        x, y = promoted(a, b)
        ctx.power = number_power if number and x.dtype.kind in "fV" else np.power
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):   # NaN/inf silently, as PyTorch
            out = like_operands(ctx.power(x, y), x, y)
        # the result only for the exponent's gradient (PyTorch saves it only then: a later write into the result of
        # x.pow_(2) is no error at backward)
        ctx.save_for_backward(x, y, out if ctx.needs_input_grad[1] else None)
        ctx.out_meta = out.shape, out.dtype
        return out

    @staticmethod
    def backward(ctx, dout):
        x, y, out = ctx.saved_tensors
        g = dout._data
        # d(x^y)/dx = y x^(y-1); PyTorch defines it as 0 where y == 0 (also at x == 0), inf at 0 ** (y < 1).
        # Complex operands take the conjugate derivative (conj_if_complex), as every backward here.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            dx = (np.where(y == 0, 0.0, g * conj_if_complex(y * ctx.power(x, y - 1))).astype(g.dtype)
                  if ctx.needs_input_grad[0] else None)
        # d(x^y)/dy = x^y log x; PyTorch masks x == 0 (where y is real and >= 0) to 0.
        if ctx.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                dy = np.where(_zero_base(x, y), 0.0, g * conj_if_complex(out * np.log(x))).astype(g.dtype)
        else:
            dy = None
        return dx, dy, None

    @staticmethod
    def graph_backward(ctx, dout):
        """``backward``'s formulas and masks with x, y and out in the graph, grouped as PyTorch groups them
        (which decides where a NaN from a masked-out 0 * inf reaches the second derivatives). A constant
        exponent 0 (``x ** 0``) gives a constant zero gradient, as PyTorch's scalar-exponent formula does."""
        x, y, out = ctx.saved_tensors
        if y.ndim == 0 and y == 0 and not ctx.needs_input_grad[1]:
            return Tensor(np.zeros(*ctx.out_meta)), None, None
        xt = ctx.input_tensor(0, x)
        dx = dy = None
        with np.errstate(divide="ignore", invalid="ignore"):   # log(0), 0 ** -1: masked as in backward
            if ctx.needs_input_grad[0]:
                yt = ctx.input_tensor(1, y)
                power = pow(xt, y.item() - 1) if ctx.power is number_power else xt ** (yt - 1)
                dx = select(y == 0, 0.0, dout * (yt * power).conj())
            if ctx.needs_input_grad[1]:
                dy = dout * select(_zero_base(x, y), 0.0, (ctx.output_tensor(out) * log(xt)).conj())
        return dx, dy, None


def number_power(x, e):
    """x ** e for a real float array x and a Python number e (0-d array) as PyTorch's scalar-exponent kernel
    computes it: e = -0.5 is 1 / sqrt(x) and e = -2 is 1 / (x x), so (-0) ** -0.5 = -inf, (-inf) ** -0.5 = NaN
    and (1e160) ** -2 = 0, where NumPy's power gives inf, 0 and 1e-320. Its backward's x ** (e - 1) too (the
    derivative of x ** 0.5 at -0 is -inf)."""
    if e == -0.5:
        return 1 / np.sqrt(x)
    if e == -2:
        return 1 / (x * x)
    return np.power(x, e)


def _zero_base(x, y):
    """Where pow's exponent gradient x^y log x is defined as 0: x == 0 and y real and >= 0 (PyTorch's mask)."""
    y_real_nonnegative = (y.imag == 0) & (y.real >= 0) if kind_of(y.dtype) == "c" else y >= 0
    return (x == 0) & y_real_nonnegative


_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
             "mask, use the `~` or `logical_not()` operator instead.")


def check_no_bool_sub(a, b):
    """PyTorch refuses ``-`` with a bool operand (tensor or Python bool) instead of computing it."""
    if kind_of(a.dtype) == "b" and kind_of(b.dtype) == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if kind_of(a.dtype) == "b" or kind_of(b.dtype) == "b":
        raise RuntimeError(_BOOL_SUB)


def scaled_by_alpha(a, b, alpha):
    """``b * alpha`` for ``add(a, b)`` and ``sub(a, b)``, with ``check_alpha`` against their result's dtype kind; for
    a bool result alpha counts as a bool. The default alpha, the int 1, passes every check: b as it is."""
    if type(alpha) is int and alpha == 1:
        return b
    dtype = result_type(a._data, b._data)
    kind = kind_of(dtype)
    check_alpha(alpha, kind)
    if alpha == 1:
        return b
    if b._data.dtype != dtype:     # scaled in the result's dtype: a uint8 plus 2 * a bool stays uint8
        b = cast(b, dtype)
    return mul(b, bool(alpha)) if kind == "b" else mul(b, alpha)


def check_alpha(alpha, kind):
    """PyTorch's rules for add's and sub's ``alpha`` against the kind of their result's dtype: a float alpha is
    refused for integral (and bool) results, a complex one for real results, a bool one for non-bool results."""
    if isinstance(alpha, (bool, np.bool_)):
        if kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (float, np.floating)) and kind in "biu":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    elif isinstance(alpha, (complex, np.complexfloating)) and kind != "c":
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


@takes_tensors(numbers=("input", "other"))
def add(input, other, *, alpha=1):
    a, b = _pair(input, other)
    return _apply_broadcasting(Add, a, scaled_by_alpha(a, b, alpha))


@takes_tensors(numbers=("input", "other"))
def sub(input, other, *, alpha=1):
    if isinstance(input, bool) or isinstance(other, bool):  # here: _pair gives a Python bool the tensor's dtype
        check_no_bool_sub(as_tensor_operand(input), as_tensor_operand(other))
    a, b = _pair(input, other)
    check_no_bool_sub(a, b)
    return _apply_broadcasting(Sub, a, scaled_by_alpha(a, b, alpha))


@takes_tensors(numbers=("input", "other"))
def mul(input, other):
    return _apply_broadcasting(Mul, *_arithmetic_pair(input, other))


@takes_tensors(numbers=("input", "other"))
def div(input, other, *, rounding_mode=None):
    """input / other; with ``rounding_mode`` ``'trunc'`` or ``'floor'`` the quotient rounded, in the operands'
    promoted dtype (``ops/rounded_div.py``)."""
    if rounding_mode is not None:
        from .rounded_div import RoundedDiv, check_rounding_mode
        check_rounding_mode(rounding_mode)
        a, b = _pair(input, other)
        dtype = result_type(a._data, b._data)
        if kind_of(dtype) == "c":
            raise NotImplementedError(f'"div_{rounding_mode}_cpu" not implemented for \'{_type_name(dtype)}\'')
        return _apply_broadcasting(RoundedDiv, a, b, rounding_mode)
    return _apply_broadcasting(Div, *_arithmetic_pair(input, other, exact=True))


_C_INTS = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int"}
"""The C names PyTorch's messages give the integer dtypes a Python int exponent may not fit."""


@takes_tensors(numbers=("input", "exponent"))
def pow(input, exponent):
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"pow() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(exponent).__name__}): one of them must be a Tensor")
    a, b = _pair(input, exponent)
    if kind_of(a.dtype) == "b" and kind_of(b.dtype) == "b":
        if not isinstance(exponent, bool):      # a bool tensor to a Python bool power is PyTorch's one bool pow
            raise NotImplementedError('"pow" not implemented for \'Bool\'')
        return Tensor(a._data.copy() if exponent else np.ones_like(a._data))
    if b.ndim == 0 and not isinstance(exponent, Tensor) and kind_of(a.dtype) in "biu" and kind_of(b.dtype) in "iu" \
            and exponent < 0:                   # (the number as given: b, in a's dtype, may have wrapped around)
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool) and a.dtype.name in _C_INTS \
            and not np.iinfo(a.dtype).min <= exponent <= np.iinfo(a.dtype).max:   # PyTorch's checked conversion
        raise RuntimeError(f"value cannot be converted to type {_C_INTS[a.dtype.name]} without overflow")
    if kind_of(a.dtype) in "biu" and kind_of(b.dtype) in "iu" and (b._data < 0).any():
        return Tensor(_integer_pow(*promoted(a, b)))
    return _apply_broadcasting(Pow, a, b, not isinstance(exponent, Tensor))


def _integer_pow(x, y):
    """x ** y for integer arrays where some y < 0, as PyTorch computes it: 1 ** y = 1, (-1) ** y = +-1, and
    0 for every other base (the integer part of 1 / x ** |y|)."""
    x, y = np.broadcast_arrays(x, y)
    with np.errstate(all="ignore"):
        powers = x ** np.maximum(y, 0)
    minus_one = np.where(y % 2 == 0, 1, -1).astype(powers.dtype)
    return np.where(y >= 0, powers, np.where(x == 1, 1, np.where(x == -1, minus_one, 0)).astype(powers.dtype))


true_divide = divide = div
multiply = mul
subtract = sub


# --------------------------------------------------------------------------- unary math
class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return -a._data

    @staticmethod
    def backward(ctx, dout):
        return -dout._data

    @staticmethod
    def graph_backward(ctx, dout):
        return -dout


class ConstantSlope(Function):
    """``dout * slope``, or ``dout`` where ``slope`` is True and 0 elsewhere for a boolean mask (also for an inf or
    NaN dout), or ``dout`` itself for ``slope`` None: the backward of a piecewise-linear op (relu, abs, leaky_relu,
    hardtanh, ...) under create_graph. ``slope`` is a constant read off ``source``, the op's input or output. As
    PyTorch's ``threshold_backward`` and the like, the result depends on ``source`` with derivative zero: it requires
    grad when ``source`` does, and differentiating it sends zeros to ``source``."""

    @staticmethod
    def forward(ctx, dout, source, slope):
        ctx.source, ctx.slope, ctx.source_shape = source, slope, source.shape
        return ConstantSlope.sloped(dout._data, slope)

    @staticmethod
    def sloped(g, slope):
        if slope is None:                           # (depending_on_input: g itself)
            return g.copy()
        if slope.dtype == np.bool_:
            return np.where(slope, g, np.zeros((), g.dtype))
        return g * slope

    @staticmethod
    def backward(ctx, g):
        dsource = np.zeros(ctx.source_shape, g._data.dtype) if ctx.needs_input_grad[1] else None
        return ConstantSlope.sloped(g._data, ctx.slope), dsource, None

    @staticmethod
    def graph_backward(ctx, g):
        dsource = Tensor(np.zeros(ctx.source_shape, g._data.dtype)) if ctx.needs_input_grad[1] else None
        return ConstantSlope.apply(g, ctx.source, ctx.slope), dsource, None


def depending_on_input(ctx, i, g):
    """The gradient ``g`` (a Tensor, computed under create_graph without reading input ``i``) made to depend on input
    ``i`` with derivative zero, as PyTorch's is when its backward formula reads that input (pooling's, say): it then
    requires grad whenever the input does."""
    if not ctx.needs_input_grad[i]:
        return g
    shape, dtype = ctx.input_meta[i]
    place = ctx.input_tensor(i, np.broadcast_to(np.zeros((), dtype), shape))
    return ConstantSlope.apply(g, place, None)


class InFusedNode(Function):
    """``g`` (a gradient computed under create_graph) made to require grad whenever one of ``sources`` does, with no
    gradient for them (None): the part of a fused backward node's output that does not read those inputs."""

    @staticmethod
    def forward(ctx, g, *sources):
        return g._data.copy()

    @staticmethod
    def backward(ctx, dout):
        return (dout._data,) + (None,) * (len(ctx.needs_input_grad) - 1)

    @staticmethod
    def graph_backward(ctx, dout):
        return (dout,) + (None,) * (len(ctx.needs_input_grad) - 1)


def fused_node_grads(ctx, grads, sources, constant=()):
    """create_graph gradients (Tensors or None, one per input) as PyTorch's fused backward nodes give them (a norm's,
    a convolution's): one node whose inputs include x and the weight (LayerNorm's the bias too), so each gradient
    requires grad whenever one of the inputs at positions ``sources`` does, even a part that reads none of them
    (db = sum of dout, or dw of a constant x), and differentiating that part gives those inputs no gradient
    (``InFusedNode``). Not the gradients at positions ``constant`` (GroupNorm's db: its node's bias gradient is not
    differentiable)."""
    places = [ctx.input_tensor(i, np.broadcast_to(np.zeros((), ctx.input_meta[i][1]), ctx.input_meta[i][0]))
              for i in sources if ctx.needs_input_grad[i]]
    return [g if g is None or n in constant or g.requires_grad or not places else InFusedNode.apply(g, *places)
            for n, g in enumerate(grads)]


class Abs(Function):
    """|a|. Backward: grad * sgn(a), with sgn(z) = z / |z| (0 at 0) for complex z, sign(x) for real x."""
    saved_as = (("self", 0),)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a._data)

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        x = a._data
        if kind_of(x.dtype) != "c":
            return dout._data * np.sign(np.nan_to_num(x))   # sign(NaN) = 0, as in PyTorch
        return Abs.complex_grad(dout._data, x, np.abs(x))

    @staticmethod
    def graph_backward(ctx, dout):
        """Real x: grad * sign(x), sign a constant (its derivative is 0, PyTorch's too, also at 0). Complex z:
        sgn(z) = z / |z| depends on z, so z and |z| join the graph."""
        (a,) = ctx.graph_saved()
        if kind_of(a._data.dtype) != "c":
            return ConstantSlope.apply(dout, a, np.sign(np.nan_to_num(a._data)))
        return Abs.complex_grad(dout, a, Abs.apply(a))

    @staticmethod
    def complex_grad(g, z, magnitude):
        """g * z / |z|, 0 where z = 0 (ndarrays, or Tensors in a graph)."""
        zero = array_of(magnitude) == 0
        return select(zero, 0, g * z / select(zero, 1, magnitude))


class Exp(Function):
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        out = np.exp(a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout._data * conj_if_complex(out)

    @staticmethod
    def graph_backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout * ctx.output_tensor(out).conj()


class Log(Function):
    saved_as = (("self", 0),)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a._data)

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        return dout._data / conj_if_complex(a._data)

    @staticmethod
    def graph_backward(ctx, dout):
        (a,) = ctx.graph_saved()
        return dout / a.conj()


class Sqrt(Function):
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout._data / (2 * conj_if_complex(out))

    @staticmethod
    def graph_backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout / (2 * ctx.output_tensor(out).conj())


class Rsqrt(Function):
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        out = 1 / np.sqrt(a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        out = conj_if_complex(ctx.saved_tensors[0])
        return -0.5 * dout._data * out * out * out

    @staticmethod
    def graph_backward(ctx, dout):
        out = ctx.output_tensor(ctx.saved_tensors[0]).conj()
        return -0.5 * dout * out * out * out


class Square(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a._data * a._data

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        return 2 * dout._data * conj_if_complex(a._data)

    @staticmethod
    def graph_backward(ctx, dout):
        (a,) = ctx.graph_saved()
        return 2 * dout * a.conj()


class Tanh(Function):
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        out = np.tanh(a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout._data * conj_if_complex(1 - out * out)

    @staticmethod
    def graph_backward(ctx, dout):
        out = ctx.output_tensor(ctx.saved_tensors[0]).conj()
        return dout * (1 - out * out)


class Sigmoid(Function):
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if kind_of(x.dtype) == "c":
            with np.errstate(all="ignore"):                  # inf/NaN at the poles, as PyTorch returns them
                out = 1 / (1 + np.exp(-x))
        else:                                                # exp of a non-positive number only: no overflow
            e = np.exp(-np.abs(x))                           # warnings for large |x|
            out = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        out = conj_if_complex(ctx.saved_tensors[0])
        return dout._data * out * (1 - out)

    @staticmethod
    def graph_backward(ctx, dout):
        out = ctx.output_tensor(ctx.saved_tensors[0]).conj()
        return dout * out * (1 - out)


class Relu(Function):
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        out = like_operands(relu_array(a._data), a._data, a._data)   # laid out as the input, as PyTorch's
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return relu_backward(out, dout._data)

    @staticmethod
    def graph_backward(ctx, dout):
        """``kernels.fused.relu_backward`` with Tensors: dout where out > 0 or NaN, else 0 (also for an inf or NaN dout), the
        mask a constant: relu's second derivative is 0 (at 0 too, as in PyTorch)."""
        (out,) = ctx.saved_tensors
        return ConstantSlope.apply(dout, ctx.output_tensor(out), ~(out <= 0))


class Sin(Function):
    saved_as = (("self", 0),)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a._data)

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        return dout._data * conj_if_complex(np.cos(a._data))

    @staticmethod
    def graph_backward(ctx, dout):
        (a,) = ctx.graph_saved()
        return dout * Cos.apply(a).conj()


class Cos(Function):
    saved_as = (("self", 0),)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.cos(a._data)

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        return -dout._data * conj_if_complex(np.sin(a._data))

    @staticmethod
    def graph_backward(ctx, dout):
        (a,) = ctx.graph_saved()
        return -dout * Sin.apply(a).conj()


def _floating(input):
    """``input``, integers and bools cast to the default float dtype (PyTorch computes math functions there)."""
    return cast(input, get_default_dtype()) if kind_of(input._data.dtype) in "biu" else input


def _unary(fn, floating=False, refused=None):
    """The public function for the one-input Function ``fn``: ``floating`` computes integers and bools in the
    default float dtype; ``refused`` maps a dtype kind ("b" bool, "c" complex) to the (exception class, message)
    PyTorch raises for such a tensor, where it refuses them."""

    def op(input):
        if input.__class__ is not Tensor:   # the check's call only when it can fail (a Parameter passes too)
            check_tensor(input, op.__name__, "input", 1)
        if input._data.dtype in FLOAT32_64:  # float32/float64, the common case: neither bool, integer nor complex
            return fn.apply(input)
        if refused and kind_of(input._data.dtype) in refused:
            error, message = refused[kind_of(input._data.dtype)]
            raise error(message.format(dtype=_type_name(input._data.dtype)))
        return fn.apply(_floating(input) if floating else input)
    op.__name__ = fn.__name__.lower()
    op.__doc__ = f"Elementwise {op.__name__} (differentiable; see ``{fn.__name__}.backward``)."
    return op


_neg = _unary(Neg)


def neg(input):
    """-input; like PyTorch, refuses a bool tensor (use ``~`` or ``logical_not`` to invert a mask)."""
    check_tensor(input, "neg", "input", 1)
    if kind_of(input.dtype) == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                           "a mask, use the `~` or `logical_not()` operator instead.")
    return _neg(input)


negative = neg
abs = _unary(Abs, refused={"b": (NotImplementedError, '"abs_cpu" not implemented for \'Bool\'')})  # noqa: A001
exp = _unary(Exp, floating=True)
log = _unary(Log, floating=True)
sqrt = _unary(Sqrt, floating=True)
rsqrt = _unary(Rsqrt, floating=True)
_square = _unary(Square)


def square(input):
    """input * input; a bool tensor squares to int64, as in PyTorch."""
    check_tensor(input, "square", "input", 1)
    return _square(cast(input, np.dtype(np.int64)) if kind_of(input._data.dtype) == "b" else input)


tanh = _unary(Tanh, floating=True)
sigmoid = _unary(Sigmoid, floating=True)
relu = _unary(Relu, refused={"b": (RuntimeError, "Boolean inputs not supported for relu"),
                              "c": (NotImplementedError, "clamp is not supported for complex types")})
sin = _unary(Sin, floating=True)
cos = _unary(Cos, floating=True)


class Log1p(Function):
    """out = log(1 + x), accurate for small x; dx = dout / conj(1 + x)."""
    saved_as = (("self", 0),)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log1p(a._data)

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        return dout._data / conj_if_complex(1 + a._data)

    @staticmethod
    def graph_backward(ctx, dout):
        (a,) = ctx.graph_saved()
        return dout / (1 + a).conj()


class Expm1(Function):
    """out = exp(x) - 1, accurate for small x; dx = dout * conj(out + 1)."""
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        out = np.expm1(a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return dout._data * conj_if_complex(out + 1)

    @staticmethod
    def graph_backward(ctx, dout):
        return dout * (ctx.output_tensor(ctx.saved_tensors[0]) + 1).conj()


class LogBase(Function):
    """out = log_b(x) for b = 2 or 10 (``log_b`` NumPy's log2 or log10); dx = dout / (conj(x) ln b)."""

    @staticmethod
    def forward(ctx, a, log_b, b):
        ctx.save_for_backward(a)
        ctx.ln_b = np.log(b)
        return log_b(a._data)

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        return dout._data / (conj_if_complex(a._data) * ctx.ln_b), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        (a,) = ctx.graph_saved()
        return dout / (a.conj() * float(ctx.ln_b)), None, None


class Reciprocal(Function):
    """out = 1 / x; dx = -dout * conj(out^2) (the conjugate for a complex x, PyTorch's convention)."""
    saved_as = (("result", "out"),)

    @staticmethod
    def forward(ctx, a):
        with np.errstate(divide="ignore"):
            out = np.reciprocal(a._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dout):
        (out,) = ctx.saved_tensors
        return -dout._data * conj_if_complex(out * out)

    @staticmethod
    def graph_backward(ctx, dout):
        out = ctx.output_tensor(ctx.saved_tensors[0])
        square = out * out
        return -dout * (square.conj() if square.dtype.kind == "c" else square)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


class Erf(Function):
    """out = erf(x) (Cody's rational approximations, ``ops/activation.py``); dx = dout * 2/sqrt(pi) exp(-x^2)."""
    saved_as = (("self", 0),)

    @staticmethod
    def forward(ctx, a):
        from .activation import erf as erf_array  # activation builds on this module: imported when used
        ctx.save_for_backward(a)
        return like_operands(erf_array(a._data), a._data, a._data)   # laid out as the input, as PyTorch's

    @staticmethod
    def backward(ctx, dout):
        (a,) = ctx.saved_tensors
        x = a._data
        return dout._data * (2 / np.sqrt(np.pi)) * np.exp(-x * x)

    @staticmethod
    def graph_backward(ctx, dout):
        (x,) = ctx.graph_saved()
        return dout * _TWO_OVER_SQRT_PI * Exp.apply(-x * x)


log1p = _unary(Log1p, floating=True)
expm1 = _unary(Expm1, floating=True)
reciprocal = _unary(Reciprocal, floating=True)
erf = _unary(Erf, floating=True, refused={"c": (NotImplementedError, '"erf_vml_cpu" not implemented for \'{dtype}\'')})


@takes_tensors("input")
def log2(input):
    """Elementwise base-2 logarithm (differentiable; see ``LogBase``)."""
    return LogBase.apply(_floating(input), np.log2, 2.0)


@takes_tensors("input")
def log10(input):
    """Elementwise base-10 logarithm (differentiable; see ``LogBase``)."""
    return LogBase.apply(_floating(input), np.log10, 10.0)


class Piecewise(Function):
    """A piecewise-constant function of x (sign, floor, ceil, trunc, round): dx = 0 everywhere (PyTorch's
    choice at the jumps too)."""

    @staticmethod
    def forward(ctx, a, fn):
        return fn(a._data)

    @staticmethod
    def backward(ctx, dout):
        return np.zeros_like(dout._data), None

    @staticmethod
    def graph_backward(ctx, dout):
        return Tensor(np.zeros_like(dout._data)), None   # a constant: every higher derivative is 0 too


_COMPLEX_PIECEWISE = {"sign": "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                "torch.sgn instead.", "round": '"round_vml_cpu" not implemented for \'{dtype}\''}


def _piecewise(name, fn):
    def op(input):
        check_tensor(input, name, "input", 1)
        if kind_of(input.dtype) == "b" and name != "sign":
            raise NotImplementedError(f'"{name}_vml_cpu" not implemented for \'Bool\'')
        if kind_of(input.dtype) == "c":               # PyTorch's words for each: no complex floor, sign, ...
            message = _COMPLEX_PIECEWISE.get(name, f"{name} is not supported for complex inputs")
            raise NotImplementedError(message.format(dtype=_type_name(input.dtype)))
        if name == "sign" and input._data.dtype in LIMITED:       # (uint16/32/64: PyTorch has no sign kernel)
            raise NotImplementedError(f'"sign_cpu" not implemented for \'{_type_name(input._data.dtype)}\'')
        if kind_of(input.dtype) in "biu":  # integers are their own floor, ceil, ...; bools their own sign
            return Tensor(fn(input._data) if kind_of(input.dtype) != "b" else input._data.copy())
        return Piecewise.apply(input, fn)
    op.__name__ = name
    op.__doc__ = f"Elementwise {name} (gradient 0, as in PyTorch)."
    return op


def sign_array(x):
    """PyTorch's sign of a real ndarray: 0 at NaN (NumPy's is NaN). Gradient formulas that take sign(x) use it."""
    return np.where(np.isnan(x), np.zeros((), x.dtype), np.sign(x))


sign = _piecewise("sign", sign_array)
floor = _piecewise("floor", np.floor)
ceil = _piecewise("ceil", np.ceil)
trunc = fix = _piecewise("trunc", np.trunc)
_round_half_even = _piecewise("round", np.round)


@takes_tensors("input")
def round(input, *, decimals=0):  # noqa: A001 - PyTorch's name
    """Round half to even, to ``decimals`` decimal places (gradient 0)."""
    if decimals == 0:
        return _round_half_even(input)
    if kind_of(input.dtype) in "biuc":
        raise NotImplementedError(f'"round_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    return Piecewise.apply(input, lambda x: np.round(x, decimals))


def _type_name(dtype):
    """PyTorch's scalar type name: Float, Double, Long, Bool, ..."""
    from ..autograd.function import type_name
    return type_name(dtype)[len("minigrad."):-len("Tensor")]


@takes_tensors("input")
def frac(input):
    """x - trunc(x), the fractional part with x's sign; dx = dout."""
    if kind_of(input.dtype) not in "f":
        raise NotImplementedError(f'"frac_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    return sub(input, trunc(input))


class Atan2(Function):
    """out = atan2(y, x), the angle of the point (x, y), y = input, x = other.

        dy = dout * x / (x^2 + y^2)        dx = -dout * y / (x^2 + y^2)

    At the origin, where the angle has no derivative, both are 0 (PyTorch's choice)."""
    saved_as = (("self", 0), ("other", 1))

    @staticmethod
    def forward(ctx, a, b):
        y, x = promoted_float(a, b)
        ctx.save_for_backward(y, x)
        return like_operands(np.arctan2(y, x), y, x)

    @staticmethod
    def backward(ctx, dout):
        y, x = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return Atan2.grads(dout._data, y, x)

    @staticmethod
    def graph_backward(ctx, dout):
        y, x = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            dy, dx = Atan2.grads(dout, ctx.input_tensor(0, y), ctx.input_tensor(1, x))
        return dy if ctx.needs_input_grad[0] else None, dx if ctx.needs_input_grad[1] else None

    @staticmethod
    def grads(g, y, x):
        """The formulas of the class docstring (ndarrays, or Tensors in a graph)."""
        denominator = x * x + y * y
        scale = select(array_of(denominator) == 0, np.zeros_like(array_of(g)), g / denominator)
        return scale * x, -scale * y


def atan2(input, other):
    """The angle of the point (other, input) in (-pi, pi]; both tensors (broadcasting), as in PyTorch."""
    for position, (name, t) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"atan2(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(t).__name__}")
    a, b = _pair(input, other)
    dtype = result_type(a._data, b._data)
    if kind_of(dtype) == "c":
        raise NotImplementedError(f'"atan2_cpu" not implemented for \'{_type_name(dtype)}\'')
    return _apply_broadcasting(Atan2, a, b)


arctan2 = atan2


def clamp_min(input, min):
    check_clamp_operands(input, min, None, via_clamp=False)
    return clamp(input, min=min)


def clamp_max(input, max):
    check_clamp_operands(input, None, max, via_clamp=False)
    return clamp(input, max=max)


class Cast(Function):
    low_precision_native = True   # a cast rounds once, to the dtype asked for (minigrad/low_precision.py)

    @staticmethod
    def forward(ctx, a, dtype):
        return cast_values(a._data, dtype)

    @staticmethod
    def backward(ctx, dout):
        return dout, None  # the engine casts the gradient back to the input's dtype

    graph_backward = backward


def cast_values(array, dtype, stacklevel=5):
    """``array`` as ``dtype``, as PyTorch converts it (``dtypes.cast_array``); complex numbers into a real dtype keep
    their real part, with PyTorch's warning, and into bool say whether they are nonzero (no warning)."""
    if kind_of(array.dtype) == "c" and kind_of(dtype) != "c":
        if kind_of(dtype) != "b":
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                          stacklevel=stacklevel)
        array = real_values(array, dtype)
    return cast_array(array, dtype)


def cast(input, dtype):
    if input._data.dtype == dtype:
        return input
    if input.requires_grad and not is_differentiable(dtype):
        return Tensor(cast_values(input._data, dtype, stacklevel=4))  # integer results are not differentiable
    return Cast.apply(input, dtype)


# --------------------------------------------------------------------------- clamp, min/max, selection
class Clamp(Routing):
    """out = min(max(x, lo), hi): where lo > hi every element is hi, as in PyTorch. The bounds are numbers,
    tensors (broadcasting with x) or None. The gradient goes to what the output equals:

        x   where lo <= x <= hi        lo  where x < lo < hi        hi  where x > hi or lo > hi

    (PyTorch's masks: where x < lo == hi the output equals both bounds and neither gets the gradient.)
    """

    @staticmethod
    def forward(ctx, a, lo, hi):
        x = a._data
        lo, hi = (b._data if isinstance(b, Tensor) else b for b in (lo, hi))
        ctx.save_for_backward(x, lo, hi)
        out = x if lo is None else np.maximum(x, lo)
        return out if hi is None else np.minimum(out, hi)

    @staticmethod
    def grads(ctx, g):
        """``g`` routed as the class docstring says (the masks are constants: every second derivative is 0,
        at the bounds too, as in PyTorch)."""
        x, lo, hi = ctx.saved_tensors
        zero = np.zeros((), g.dtype)
        crossed = np.asarray(False) if lo is None or hi is None else np.asarray(lo > hi)
        below_hi = np.asarray(True) if lo is None or hi is None else np.asarray(lo < hi)
        in_range = np.asarray(True) if lo is None else x >= lo
        if hi is not None:
            in_range = in_range & (x <= hi)
        dx = select(in_range, g, zero)
        dlo = select((x < lo) & below_hi, g, zero) if ctx.needs_input_grad[1] else None
        dhi = select((x > hi) | crossed, g, zero) if ctx.needs_input_grad[2] else None
        return dx, dlo, dhi


@takes_tensors("input", numbers=("min", "max"))
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if kind_of(input.dtype) == "f":      # PyTorch reads a number bound as a double: 3+0j is 3 (3+1j is refused)
        min, max = (b.real if isinstance(b, complex) and not b.imag else b for b in (min, max))
    check_clamp_operands(input, min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_to_tensors(input, min, max)
    if kind_of(input._data.dtype) in "biu" and any(isinstance(b, float) for b in (min, max)):
        input = cast(input, get_default_dtype())  # PyTorch: integers clamped to float bounds become floats
    elif kind_of(input._data.dtype) in "iu":      # int bounds in the tensor's dtype (-1 wraps into uint8: 255)
        min, max = (None if b is None else fitted_scalar(b, input._data.dtype) for b in (min, max))
    return Clamp.apply(input, min, max)


def _clamp_dtype(input, bounds):
    """The dtype clamp computes in with Tensor bounds: the promoted one of input and bounds (PyTorch's rule over
    all three: two 0-d bounds promote together before meeting the input)."""
    return result_type_of(input._data, *(b._data for b in bounds if b is not None))


def check_clamp_operands(input, min, max, via_clamp=True):
    """PyTorch's refusals of clamp's operands: complex numbers anywhere (``clamp`` of a float tensor refuses a
    Python complex bound as a value it cannot convert; ``via_clamp=False``: called as clamp_min or clamp_max),
    bool bounds on a bool tensor where it has no kernel."""
    kernel = "clamp" if min is not None and max is not None else ("clamp_min" if max is None else "clamp_max")
    bounds = [b for b in (min, max) if b is not None]
    complex_number = any(isinstance(b, complex) for b in bounds)
    if complex_number and via_clamp and kind_of(input.dtype) == "f":
        raise RuntimeError("value cannot be converted to type double without overflow")
    if kind_of(input.dtype) == "c" or complex_number:
        raise NotImplementedError("clamp is not supported for complex types")
    tensors = [b for b in bounds if isinstance(b, Tensor)]
    if input.dtype in LIMITED_UINTS and not tensors and not any(isinstance(b, float) for b in bounds):   # no kernel
        # (a float bound makes it a float op, which runs): refused before the bounds are read
        raise NotImplementedError(f'"{kernel}_scalar_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    for b in bounds:
        _check_number_fits(b, input)
    if tensors:
        dtype = _clamp_dtype(input, tensors)
        if kind_of(dtype) == "c" or kind_of(dtype) == "b" and len(tensors) == 2:
            name = {"clamp": "clamp", "clamp_min": "maximum", "clamp_max": "minimum"}[kernel]
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_type_name(dtype)}\'')
    elif kind_of(input.dtype) == "b" and all(isinstance(b, (bool, np.bool_)) for b in bounds):
        raise NotImplementedError(f'"{kernel}_scalar_cpu" not implemented for \'Bool\'')


def _clamp_to_tensors(input, min, max):
    """Tensor bounds: input and bounds in their promoted dtype, broadcast together, bounds differentiable."""
    bounds = [None if b is None else as_tensor_operand(b, input) for b in (min, max)]
    dtype = _clamp_dtype(input, bounds)
    bounds = [None if b is None else cast(b, dtype) for b in bounds]
    return _apply_broadcasting(Clamp, cast(input, dtype), *bounds)


clip = clamp


class _Extremum(Routing):
    """maximum or minimum of a and b: the gradient goes to the input the output equals; where the inputs
    tie, each gets half (PyTorch's convention), and a NaN gets all of it, as in PyTorch. The weights are
    constants: every second derivative is 0."""

    pick = None      # np.maximum or np.minimum
    loses = None     # loses(x, y): where x is not picked over y (np.less for maximum, np.greater for minimum)

    @classmethod
    def forward(cls, ctx, a, b):
        x, y = promoted(a, b)
        ctx.save_for_backward(x, y)
        return like_operands(cls.pick(x, y), x, y)

    @classmethod
    def grads(cls, ctx, g):
        """(g to a, g to b)."""
        x, y = ctx.saved_tensors
        share = np.where(x == y, 0.5, 1.0).astype(g.dtype)
        return g * share * ~cls.loses(x, y), g * share * ~cls.loses(y, x)


class Maximum(_Extremum):
    pick, loses = staticmethod(np.maximum), staticmethod(np.less)


class Minimum(_Extremum):
    pick, loses = staticmethod(np.minimum), staticmethod(np.greater)


def _check_ordered(name, a, b):
    """Complex numbers have no order: PyTorch refuses them in maximum/minimum."""
    if kind_of(a.dtype) == "c" or kind_of(b.dtype) == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return a, b


@takes_tensors("input", "other")
def maximum(input, other):
    return _apply_broadcasting(Maximum, *_check_ordered("maximum", *_pair(input, other)))


@takes_tensors("input", "other")
def minimum(input, other):
    return _apply_broadcasting(Minimum, *_check_ordered("minimum", *_pair(input, other)))


class Where(Routing):
    @staticmethod
    def forward(ctx, cond, a, b):
        x, y = promoted(a, b)
        ctx.save_for_backward(cond)
        return like_operands(np.where(cond._data, x, y), cond._data, x, y)

    @staticmethod
    def grads(ctx, g):
        """g where the condition holds to the first input, elsewhere to the second."""
        (cond,) = ctx.saved_tensors
        zero = np.zeros((), dtype=g.dtype)
        return None, select(cond._data, g, zero), select(cond._data, zero, g)


@takes_tensors(numbers=("condition", "input", "other"))
def where(condition, input, other):
    condition = as_tensor_operand(condition)
    if kind_of(condition.dtype) != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype}")
    _check_number_fits(input, other, converting=True)
    _check_number_fits(other, input, converting=True)
    return _apply_broadcasting(Where, condition, *_pair(input, other))


def _check_number_fits(number, tensor, converting=False):
    """A number next to ``tensor`` in an op must fit the dtype it takes there (300 next to a uint8 tensor is uint8,
    1e39 next to an integer one float32), as PyTorch checks (``dtypes.fitted_scalar``). ``converting``: the op
    converts a number into float16 or bfloat16 unchecked (``where``, as ``x[i] = v``: 70000 is inf in float16)."""
    if isinstance(tensor, Tensor) and not isinstance(number, Tensor):
        dtype = scalar_dtype_for(tensor.dtype, number)
        if not (converting and dtype in LOW_PRECISION):
            fitted_scalar(number, dtype)


class MaskedFill(Routing):
    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save_for_backward(mask)
        # row-major, as PyTorch's (its masked_fill clones contiguous first)
        v = real_values(value._data, a._data.dtype)   # (a complex value into a real tensor fits: checked)
        return row_major(np.where(mask._data, v.astype(a._data.dtype), a._data))

    @staticmethod
    def grads(ctx, g):
        """The input keeps g where not masked; the value gets the sum of g over the mask."""
        (mask,) = ctx.saved_tensors
        dvalue = (g * mask._data).sum() if ctx.needs_input_grad[2] else None
        return select(mask._data, np.zeros((), g.dtype), g), None, dvalue


def boolean_mask(mask, input, dtype_error):
    """``mask`` as a bool Tensor that broadcasts with ``input``; ``dtype_error`` (with ``{}`` for the dtype) or
    PyTorch's size error otherwise."""
    mask = as_tensor_operand(mask)
    if kind_of(mask.dtype) != "b":
        raise RuntimeError(dtype_error.format(mask.dtype))
    try:
        np.broadcast_shapes(mask.shape, input.shape)
    except ValueError:
        raise RuntimeError(f"The size of the mask {list(mask.shape)} must be broadcastable to the size of the "
                           f"input {list(input.shape)}") from None
    return mask


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_value_fits(value, dtype, converting=False):
    """PyTorch's check of a single value (a Python number or a 0-d tensor, read as a number) written into a tensor of
    ``dtype`` (``dtypes.fitted_scalar``: 300 does not fit uint8, 1+2j no real dtype); other values pass.
    ``converting``: a real number into float16 or bfloat16 converts unchecked (``x[i] = 70000`` writes inf)."""
    if converting and dtype in LOW_PRECISION and isinstance(value, (bool, int, float, np.integer, np.floating)):
        return
    if isinstance(value, Tensor):
        if value.ndim == 0:
            fitted_scalar(value._data, dtype)
        return
    if value.__class__ is float and (dtype == np.float64 or dtype == np.float32 and
                                     -_FLOAT32_MAX <= value <= _FLOAT32_MAX):
        return            # the common cases, decided without NumPy (a NaN fails the comparison: the long way)
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        fitted_scalar(value, dtype)


@takes_tensors("input", numbers=("mask", "value"))
def masked_fill(input, mask, value):
    mask = boolean_mask(mask, input, "masked_fill_ only supports boolean masks, but got mask with dtype {}")
    check_kernel("masked_fill", input)           # (uint16/32/64, float8: the dtype is refused before the value)
    check_value_fits(value, input.dtype)
    value = as_tensor_operand(value, input)
    if value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    return MaskedFill.apply(input, mask, value)


# --------------------------------------------------------------------------- comparisons and logic (no gradient)
def _compare(npfn, name, numbers_ok=True):
    """A comparison or logical op; ``numbers_ok``: its operands may be Python numbers (not for logical ops)."""
    def op(input, other):
        check_tensor(input, op.__name__, "input", 1)   # PyTorch: eq(2, t) is a TypeError
        check_tensor(other, op.__name__, "other", 2, numbers_ok)
        a, b = _pair(input, other)
        check_broadcast(a.shape, b.shape)
        x, y = promoted(a, b)
        # complex numbers have no order in PyTorch, and it has no such kernels for uint16/32/64 and float8
        if (x.dtype.kind == "c" or x.dtype in LIMITED) and name in ("lt", "le", "gt", "ge") or (
                x.dtype in LIMITED and name.startswith("logical")):
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_type_name(x.dtype)}\'')
        return Tensor(like_operands(npfn(x, y), x, y))
    op.__name__ = name
    return op


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = less = _compare(np.less, "lt")
le = less_equal = _compare(np.less_equal, "le")
gt = greater = _compare(np.greater, "gt")
ge = greater_equal = _compare(np.greater_equal, "ge")
logical_and = _compare(np.logical_and, "logical_and", numbers_ok=False)
logical_or = _compare(np.logical_or, "logical_or", numbers_ok=False)


@takes_tensors("input")
def logical_not(input):
    if input._data.dtype in LIMITED:                   # PyTorch has no such kernel for uint16/32/64 and float8
        raise NotImplementedError(f'"logical_not_cpu" not implemented for \'{_type_name(input._data.dtype)}\'')
    return Tensor(np.logical_not(input._data))


@takes_tensors("input")
def isnan(input):
    return Tensor(np.isnan(input._data))


@takes_tensors("input")
def isfinite(input):
    check_kernel("isfinite", input)
    return Tensor(np.isfinite(input._data))


not_equal = ne
logical_xor = _compare(np.logical_xor, "logical_xor", numbers_ok=False)


@takes_tensors("input")
def isinf(input):
    check_kernel("isinf", input)
    return Tensor(np.isinf(input._data))


@takes_tensors("input", "other")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| elementwise (infinities equal only to themselves)."""
    for name, tolerance in (("rtol", rtol), ("atol", atol)):
        if tolerance < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tolerance}")
    a, b = _pair(input, other)
    if a.dtype != b.dtype:
        raise RuntimeError(f"{_type_name(a.dtype)} did not match {_type_name(b.dtype)}")
    check_broadcast(a.shape, b.shape)
    check_kernel("isclose", a)
    return Tensor(np.asarray(np.isclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


@takes_tensors("input", "other")
def equal(input, other):
    """True if the tensors have the same shape and the same values (a Python bool)."""
    if input.shape != other.shape:
        return False
    x, y = promoted(input, other)
    if x.ctypes.data == y.ctypes.data and x.strides == y.strides:   # the same memory: PyTorch looks for NaNs with a
        check_kernel("equal", x.dtype)                              # kernel float8 lacks (others compare bytes)
    return bool(np.array_equal(x, y))
