"""Activations and dropout: gelu (exact and tanh), silu, dropout, the ELU family (elu, selu, celu), the
piecewise-linear ones (leaky_relu, hardtanh, relu6, hardsigmoid, hardswish, shrinks, threshold), softplus,
mish, logsigmoid, softsign, tanhshrink, prelu and glu.

NumPy has no error function, and GELU needs the normal CDF Phi(x) = erfc(-x / sqrt(2)) / 2. ``erfc``
below evaluates W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev approximations for
the error function", Math. Comp. 23, 1969), which are accurate to about one unit in the last place of
float64. Computing Phi through erfc (rather than 1 + erf) keeps its relative accuracy far into the
negative tail, where 1 + erf(x) cancels to zero.
"""
import math

import numpy as np

from .._checks import float_arg, refuses_complex, takes_tensors
from ..autograd import Function
from ..dtypes import cast_refused, compute_dtype, finfo, kind_of, scalar_type_name
from .. import _pytorch_stream as stream
from ..random import keep_mask, torch_stream
from ..tensor import Tensor
from .dims import normalize_dim
from .elementwise import ConstantSlope, Exp, Routing, Sigmoid, Tanh, select
from .inplace import check_fill_dtype, write
from .layout import like_operands
from .shape import result_reshape
from ..autocast_ops import autocast_op

# --------------------------------------------------------------------------- erfc (Cody, 1969)
# Coefficients as published by Cody, highest power first.
# |x| <= 0.46875:       erf(x) = x * N1(x^2) / D1(x^2)
_N1 = (1.85777706184603153e-1, 3.16112374387056560e0, 1.13864154151050156e2, 3.77485237685302021e2,
       3.20937758913846947e3)
_D1 = (1.0, 2.36012909523441209e1, 2.44024637934444173e2, 1.28261652607737228e3, 2.84423683343917062e3)
# 0.46875 < |x| <= 4:   erfc(|x|) = exp(-x^2) * N2(|x|) / D2(|x|)
_N2 = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e0, 6.61191906371416295e1,
       2.98635138197400131e2, 8.81952221241769090e2, 1.71204761263407058e3, 2.05107837782607147e3,
       1.23033935479799725e3)
_D2 = (1.0, 1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2, 1.62138957456669019e3,
       3.29079923573345963e3, 4.36261909014324716e3, 3.43936767414372164e3, 1.23033935480374942e3)
# |x| > 4:              erfc(|x|) = exp(-x^2) / |x| * (1/sqrt(pi) - z N3(z) / D3(z)),  z = 1/x^2
_N3 = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
       1.60837851487422766e-2, 6.58749161529837803e-4)
_D3 = (1.0, 2.56852019228982242e0, 1.87295284992346725e0, 5.27905102951428412e-1, 6.05183413124413191e-2,
       2.33520497626869185e-3)
_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _horner(coeffs, t):
    acc = coeffs[0] * t + coeffs[1]
    for c in coeffs[2:]:
        acc *= t
        acc += c
    return acc


def _exp_neg_square(y):
    """exp(-y^2) without the rounding error of y*y: y = t + d with t = trunc(16 y)/16 (t^2 exact), so
    y^2 = t^2 + (y - t)(y + t) and exp(-y^2) = exp(-t^2) exp(-(y - t)(y + t))."""
    t = np.trunc(y * 16) / 16
    return np.exp(-t * t) * np.exp(-(y - t) * (y + t))


_BLOCK = 1 << 16  # elements per block: the ~30 temporaries of one block stay in cache (twice as fast)


def _cody(x, near_zero, tail):
    """Evaluate Cody's three pieces over a float ndarray x and finish each piece with the caller's
    formula: ``near_zero(erf(x), x)`` where |x| <= 0.46875, ``tail(erfc(|x|), x)`` elsewhere."""
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, _BLOCK):
        _cody_block(flat[start:start + _BLOCK], out[start:start + _BLOCK], near_zero, tail)
    return out.reshape(x.shape)


def _cody_block(x, out, near_zero, tail):
    """``_cody`` on one flat block. Each piece is gathered and scattered with integer indices
    (boolean-mask indexing, ``np.where`` and ``where=`` are several times slower on mixed masks), so the
    finishing formulas run on the piece only."""
    y = np.abs(x)
    small = y <= 0.46875
    i = np.flatnonzero(small)
    xs = x[i]
    t = xs * xs
    out[i] = near_zero(xs * (_horner(_N1, t) / _horner(_D1, t)), xs)
    i = np.flatnonzero(~small & (y <= 4))
    ym = y[i]
    out[i] = tail(_exp_neg_square(ym) * (_horner(_N2, ym) / _horner(_D2, ym)), x[i])
    i = np.flatnonzero(~(y <= 4))  # also inf and nan
    yl = np.minimum(y[i], 64)      # erfc(64) underflows to 0 already; keeps inf out of the arithmetic
    z = 1 / (yl * yl)
    out[i] = tail(_exp_neg_square(yl) * (_INV_SQRT_PI - z * (_horner(_N3, z) / _horner(_D3, z))) / yl, x[i])


def erfc(x):
    """The complementary error function of a float ndarray, elementwise, in x's dtype."""
    # erfc(-y) = 2 - erfc(y) for the negative tail
    return _cody(x, lambda erf_x, x: 1 - erf_x, lambda erfc_y, x: 2 * (x < 0) + np.copysign(erfc_y, x))


def erf(x):
    """The error function of a float ndarray, elementwise, in x's dtype."""
    return _cody(x, lambda erf_x, x: erf_x, lambda erfc_y, x: np.copysign(1 - erfc_y, x))


def normal_cdf(x):
    """Phi(x) = P(N(0, 1) <= x) = erfc(-x / sqrt(2)) / 2, accurate in both tails (never 1 + erf(..))."""
    # with z = x / sqrt(2):  z > 0.46875: 1 - erfc(z) / 2;   z < -0.46875: erfc(|z|) / 2
    return _cody(x / _SQRT_2, lambda erf_z, z: 0.5 + 0.5 * erf_z,
                 lambda erfc_abs_z, z: (z > 0) - np.copysign(0.5 * erfc_abs_z, z))


def normal_pdf(x):
    """phi(x) = exp(-x^2/2) / sqrt(2 pi) of an ndarray, or of a Tensor (differentiable)."""
    if isinstance(x, Tensor):
        return _INV_SQRT_2PI * Exp.apply(-0.5 * x * x)
    return _INV_SQRT_2PI * np.exp(-0.5 * x * x)


# --------------------------------------------------------------------------- gelu
_TANH_BETA = math.sqrt(2.0 / math.pi)
_TANH_KAPPA = 0.044715


def _tanh_gelu_slope(x, t):
    """d/dx of x/2 (1 + t), t = tanh(u), u = sqrt(2/pi) (x + 0.044715 x^3) (ndarrays or Tensors)."""
    du = _TANH_BETA * (1 + 3 * _TANH_KAPPA * x * x)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du


def _tanh_gelu_u(x):
    return _TANH_BETA * (x + _TANH_KAPPA * x * x * x)


class Gelu(Function):
    """y = x Phi(x) (exact) or y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3) ('tanh').

    Backward:  exact   dx = dout (Phi(x) + x phi(x)),  phi(x) = exp(-x^2/2) / sqrt(2 pi)
               tanh    dx = dout (1/2 (1 + tanh u) + x/2 (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2))
    float16 is computed in float32 and cast back.
    """

    @staticmethod
    def forward(ctx, a, approximate):
        x = a._data.astype(compute_dtype(a.dtype), copy=False)
        if approximate == "tanh":
            t = np.tanh(_tanh_gelu_u(x))
            ctx.save_for_backward(x, t)
            out = 0.5 * x * (1 + t)
        else:
            cdf = normal_cdf(x)
            ctx.save_for_backward(x, cdf)
            out = x * cdf
        ctx.approximate = approximate
        return like_operands(out.astype(a.dtype, copy=False), a._data, a._data)   # laid out as the input

    @staticmethod
    def backward(ctx, dout):
        x, s = ctx.saved_tensors  # s is tanh(u) or Phi(x)
        if ctx.approximate == "tanh":
            slope = _tanh_gelu_slope(x, s)
        else:
            slope = s + x * normal_pdf(x)
        return dout._data * slope, None

    @staticmethod
    def graph_backward(ctx, dout):
        """``backward``'s slope with x in the graph; tanh(u) and Phi(x) are recomputed from it."""
        x = ctx.input_tensor(0, ctx.saved_tensors[0])
        if ctx.approximate == "tanh":
            slope = _tanh_gelu_slope(x, Tanh.apply(_tanh_gelu_u(x)))
        else:
            slope = NormalCdf.apply(x) + x * normal_pdf(x)
        return dout * slope, None


@takes_tensors("input")
def gelu(input, approximate="none"):
    """Gaussian Error Linear Unit, x Phi(x); ``approximate='tanh'`` uses the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, but got {approximate!r}")
    if kind_of(input.dtype) != "f":
        raise NotImplementedError(f'"GeluKernelImpl" not implemented for \'{scalar_type_name(input.dtype)}\'')
    return Gelu.apply(input, approximate)


# --------------------------------------------------------------------------- silu
class Silu(Function):
    """y = x sigmoid(x);  dx = dout * s (1 + x (1 - s)),  s = sigmoid(x)."""

    @staticmethod
    def forward(ctx, a):
        x = a._data.astype(compute_dtype(a.dtype), copy=False)
        with np.errstate(over="ignore"):  # exp(-x) = inf for x << 0 gives s = 1/inf = 0, the right limit
            s = np.exp(-x)
        s += 1
        np.reciprocal(s, out=s)           # in place: three passes, no np.where (5x faster on float32)
        ctx.save_for_backward(x, s)
        return (x * s).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, s = ctx.saved_tensors
        return dout._data * _silu_slope(x, s)

    @staticmethod
    def graph_backward(ctx, dout):
        x = ctx.input_tensor(0, ctx.saved_tensors[0])
        return dout * _silu_slope(x, Sigmoid.apply(x))


def _silu_slope(x, s):
    """d/dx x s(x) = s (1 + x (1 - s)), s = sigmoid(x) (ndarrays or Tensors)."""
    return s * (1 + x * (1 - s))


@takes_tensors("input")
def silu(input, inplace=False):
    """Sigmoid Linear Unit (swish): x * sigmoid(x); with ``inplace`` written into ``input`` (recorded like
    any in-place op, ``ops/inplace.py``)."""
    if kind_of(input.dtype) == "c" and input.requires_grad:
        raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
    if kind_of(input.dtype) in "biu":
        _check_floating("silu", input)
    # the kernel works on arrays: a 0-d tensor goes through as one element
    kernel = Silu.apply if input.ndim else (lambda x: result_reshape(Silu.apply(x.reshape(1)), ()))
    return write(input, kernel) if inplace else kernel(input)


# --------------------------------------------------------------------------- dropout
def check_dropout_p(p):
    """The check PyTorch's dropout functions make in Python: p outside [0, 1] is a ValueError (NaN passes it)."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout_gate(input, p, training, inplace, alpha=False, noise_shape=None):
    """What every dropout does before it draws its noise, as PyTorch's kernel (``_dropout_impl``): p checked (NaN
    refused); the input itself when nothing is dropped (not training, p == 0, no elements); ``input * 0`` when
    everything is (p == 1), in any dtype that multiplies. Otherwise None, once the input's dtype can take the noise,
    which PyTorch draws with ``bernoulli_`` in that dtype (complex and float8 refused) and divides by 1 - p in place
    (alpha dropout first adds -1, which makes bool noise int64): integer noise cannot hold that ("result type Float
    can't be cast to the desired output type Long"). ``noise_shape(input)``, the shape of the noise, is asked before
    the dtype is checked (a feature dropout's error for input below 2 dims comes first)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        zero = Tensor(np.zeros((), input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    if noise_shape is not None:
        noise_shape(input)
    check_fill_dtype(input, "bernoulli")
    kind = kind_of(input.dtype)
    if kind in "biu":
        raise cast_refused(np.float32, np.int64 if alpha and kind == "b" else input.dtype)
    return None


class Dropout(Routing):
    """y = x * mask / (1 - p) with mask ~ Bernoulli(1 - p), drawn once in forward; dx = dout * mask / (1 - p)."""

    @staticmethod
    def forward(ctx, a, p):
        x = a._data
        keep = keep_mask(x.shape, 1 - p, a)                # PyTorch: noise.bernoulli_(1 - p).div_(1 - p)
        scale = keep.astype(x.dtype) / x.dtype.type(1 - p)
        ctx.save_for_backward(scale)
        return x * scale

    @staticmethod
    def grads(ctx, g):
        (scale,) = ctx.saved_tensors
        return g * scale, None


@takes_tensors("input")
def dropout(input, p=0.5, training=True, inplace=False):
    """Inverted dropout: zero each element with probability p and scale the rest by 1/(1-p), so the
    expectation is unchanged; the identity when ``training`` is False or p == 0. With ``inplace`` the result
    is written into ``input`` (recorded like any in-place op)."""
    check_dropout_p(p)
    done = dropout_gate(input, p, training, inplace)
    return dropout_noise(input, p, inplace) if done is None else done


def dropout_noise(input, p, inplace):
    """Dropout's draw (0 < p < 1, a floating input with elements: ``dropout_gate`` has passed it)."""
    if inplace:
        return write(input, lambda old: Dropout.apply(old, p))
    return Dropout.apply(input, p)


# --------------------------------------------------------------------------- pointwise activations
class _Pointwise(Function):
    """An elementwise activation y = f(x) with dx = dout * f'(x): subclasses define ``value(x, *args)``
    returning (y, f'(x)) on the compute-dtype array x; f'(x) is kept for backward. For create_graph,
    ``graph_slope(x, slope, *args)`` gives f'(x) again as a Tensor differentiable in x (x a Tensor in the
    graph, ``slope`` the saved array), so x is kept too, as PyTorch keeps it."""

    @staticmethod
    def value(x, *args):
        raise NotImplementedError

    @staticmethod
    def graph_slope(x, slope, *args):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, a, *args):
        x = a._data.astype(compute_dtype(a.dtype), copy=False)
        y, slope = cls.value(x, *args)
        ctx.save_for_backward(slope, x)
        ctx.args = args
        return y.astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        slope, _ = ctx.saved_tensors
        return (dout._data * slope,) + (None,) * len(ctx.args)

    @classmethod
    def graph_backward(cls, ctx, dout):
        slope, x = ctx.saved_tensors
        return (dout * cls.graph_slope(ctx.input_tensor(0, x), slope, *ctx.args),) + (None,) * len(ctx.args)


class _PiecewiseLinear(_Pointwise):
    """A _Pointwise whose slope is piecewise constant (leaky_relu, hardtanh, shrinks, ...): under create_graph
    the saved slope is a constant, the second derivative 0 (at the kinks too, as in PyTorch)."""

    @classmethod
    def graph_backward(cls, ctx, dout):
        slope, x = ctx.saved_tensors
        return (ConstantSlope.apply(dout, ctx.input_tensor(0, x), slope),) + (None,) * len(ctx.args)


class NormalCdf(_Pointwise):
    """Phi(x) (``normal_cdf``) as a Function, which exact GELU's graph_backward differentiates;
    dx = dout * phi(x)."""

    @staticmethod
    def value(x):
        return normal_cdf(x), normal_pdf(x)

    @staticmethod
    def graph_slope(x, slope):
        return normal_pdf(x)


def _maybe_inplace(fn, input, inplace, *args):
    """``fn.apply(input, *args)``, written into ``input`` with ``inplace`` (recorded like any in-place op)."""
    if inplace:
        return write(input, lambda old: fn.apply(old, *args))
    return fn.apply(input, *args)


def _softplus_parts(bx):
    """log(1 + exp(bx)) and its derivative sigmoid(bx), without overflow for large |bx|."""
    return np.logaddexp(0, bx), np.exp(-np.logaddexp(0, -bx))


class LeakyRelu(_PiecewiseLinear):
    """y = x if x > 0 else slope x;  dx = dout * (1 if x > 0 else slope)."""

    @staticmethod
    def value(x, negative_slope):
        positive = x > 0
        return np.where(positive, x, x * negative_slope), np.where(positive, 1.0, negative_slope).astype(x.dtype)


class Elu(_Pointwise):
    """The ELU family (elu, selu, celu): with a = alpha, s = scale, c = input_scale,
    y = s x if x > 0 else s a (exp(c x) - 1);  dx = dout * (s if x > 0 else s a c exp(c x)).
    elu is (alpha, 1, 1), selu (1.6733..., 1.0507..., 1), celu (alpha, 1, 1/alpha). exp(c x) - 1 is expm1: exact
    to the last bit for small |x| (exp(x) - 1 cancels: elu(-1e-10) would be 0 in float32), and -inf for alpha = inf."""

    @staticmethod
    def value(x, alpha, scale, input_scale):
        # NaN counts as positive: y = NaN with slope s, as in PyTorch; so do +-0 for y (s x keeps the sign of 0, and
        # alpha = inf gives 0, not 0 inf), not for the slope, s a c at 0 (PyTorch's one-sided choice)
        cx = input_scale * np.where(x < 0, x, 0)                                 # c x <= 0: exp stays finite
        with np.errstate(invalid="ignore"):                                      # (0 inf where x >= 0: not taken)
            y = np.where(x < 0, np.expm1(cx) * (scale * alpha), scale * x)
        return y, np.where(~(x <= 0), scale, (scale * alpha * input_scale) * np.exp(cx)).astype(x.dtype)

    @staticmethod
    def graph_slope(x, slope, alpha, scale, input_scale):
        """s a c exp(c x) where x < 0, else the saved slope as a constant: at 0 the slope is s a c but its
        own derivative 0 (PyTorch's conventions). exp of min(x, 0), as in value: the branch not taken stays
        finite, so the zero gradient it gets stays zero."""
        negative_slope = (scale * alpha * input_scale) * Exp.apply(input_scale * x.clamp(max=0))
        return select(x._data < 0, negative_slope, slope)


class Softplus(_Pointwise):
    """y = log(1 + exp(beta x)) / beta, or x where beta x > threshold;
    dx = dout * sigmoid(beta x), or dout where beta x > threshold."""

    @staticmethod
    def value(x, beta, threshold):
        bx = x * beta
        linear = bx > threshold
        log1p_exp, sig = _softplus_parts(bx)
        return np.where(linear, x, log1p_exp / beta), np.where(linear, 1.0, sig).astype(x.dtype)

    @staticmethod
    def graph_slope(x, slope, beta, threshold):
        """sigmoid(beta x) where beta x < threshold; the saved slope as a constant elsewhere (at the threshold
        the slope is sigmoid's but its own derivative 0: PyTorch's conventions)."""
        return select(x._data * beta < threshold, Sigmoid.apply(x * beta), slope)


class Mish(_Pointwise):
    """y = x tanh(softplus(x));  dx = dout * (tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)),  sp = softplus(x)."""

    @staticmethod
    def value(x):
        sp, sig = _softplus_parts(x)
        t = np.tanh(sp)
        return x * t, Mish.slope(x, t, sig)

    @staticmethod
    def graph_slope(x, slope):
        t = Tanh.apply(Softplus.apply(x, 1.0, math.inf))   # no linear piece: softplus as in value
        return Mish.slope(x, t, Sigmoid.apply(x))

    @staticmethod
    def slope(x, t, sig):
        """f'(x) = t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x)) (ndarrays or Tensors)."""
        return t + x * sig * (1 - t * t)


class Hardswish(_Pointwise):
    """y = x relu6(x + 3) / 6 (0 for x <= -3, x for x >= 3);
    dx = dout * (0 for x <= -3, x/3 + 1/2 for -3 < x < 3, 1 for x >= 3) (PyTorch's choice at +-3)."""

    @staticmethod
    def value(x):
        y = x * np.clip(x + 3, 0, 6) / 6
        slope = np.where(x <= -3, 0.0, np.where(x < 3, x / 3 + 0.5, 1.0)).astype(x.dtype)
        return y, slope

    @staticmethod
    def graph_slope(x, slope):
        return select((x._data > -3) & (x._data < 3), x / 3 + 0.5, slope)


def _check_floating(name, input):
    """PyTorch's error for an integer or bool input to an activation."""
    if kind_of(input.dtype) != "f":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_type_name(input.dtype)}\' (expected a '
                                  'floating-point input)')


@takes_tensors("input")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    _check_floating("leaky_relu", input)
    return _maybe_inplace(LeakyRelu, input, inplace, float_arg(negative_slope, "leaky_relu", "negative_slope", 2))


@takes_tensors("input")
def elu(input, alpha=1.0, inplace=False):
    """Exponential Linear Unit: x where x > 0, else alpha (exp(x) - 1)."""
    _check_floating("elu", input)
    return _maybe_inplace(Elu, input, inplace, float_arg(alpha, "elu", "alpha", 2), 1.0, 1.0)


@takes_tensors("input")
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, switching to x where beta x > threshold (PyTorch's arguments)."""
    _check_floating("softplus", input)
    return Softplus.apply(input, float_arg(beta, "softplus", "beta", 2),
                          float_arg(threshold, "softplus", "threshold", 3))


@takes_tensors("input")
def mish(input, inplace=False):
    """x tanh(softplus(x))."""
    _check_floating("mish", input)
    return _maybe_inplace(Mish, input, inplace)


@takes_tensors("input")
def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6."""
    _check_floating("hardswish", input)
    return _maybe_inplace(Hardswish, input, inplace)


# --------------------------------------------------------------------------- clamps, shrinks and thresholds
class RandomLeakyRelu(_PiecewiseLinear):
    """Randomized leaky ReLU (training): y = x if x > 0 (or NaN) else a x, with a ~ U(lower, upper) drawn per
    element in forward;  dx = dout * (1 or a)."""

    @staticmethod
    def value(x, lower, upper):
        positive = ~(x <= 0)
        slope = np.ones(x.shape, x.dtype)     # PyTorch draws a float64 U(lower, upper) per x <= 0, in order
        slope[~positive] = stream.uniform(torch_stream(), int(np.count_nonzero(~positive)), np.float64, lower, upper)
        return x * slope, slope


class Hardtanh(_PiecewiseLinear):
    """y = clamp(x, min_val, max_val);  dx = dout * (1 if min_val < x < max_val else 0): 0 at the bounds
    themselves, 1 at NaN (PyTorch's choices)."""

    @staticmethod
    def value(x, min_val, max_val):
        clipped = ~((x <= min_val) | (x >= max_val))
        return np.clip(x, min_val, max_val), clipped.astype(x.dtype)


class Hardsigmoid(_PiecewiseLinear):
    """y = relu6(x + 3) / 6;  dx = dout * (1/6 if -3 < x < 3 else 0) (0 at +-3 and at NaN, as in PyTorch)."""

    @staticmethod
    def value(x):
        inside = (x > -3) & (x < 3)
        return np.clip(x + 3, 0, 6) / 6, np.where(inside, 1 / 6, 0).astype(x.dtype)


class Shrink(_PiecewiseLinear):
    """Zero on [-lambd, lambd] (its ends included), elsewhere x - lambd sign(x) (``soft``) or x (hard);
    dx = dout * (0 on [-lambd, lambd], else 1). NaN stays NaN with slope 1, as in PyTorch."""

    @staticmethod
    def value(x, lambd, soft):
        dead = (x >= -lambd) & (x <= lambd)
        kept = x - np.sign(x) * lambd if soft else x
        return np.where(dead, 0, kept), (~dead).astype(x.dtype)


class Threshold(_PiecewiseLinear):
    """y = x if x > threshold else value;  dx = dout * (1 if x > threshold else 0) (NaN kept, slope 1)."""

    @staticmethod
    def value(x, threshold, value):
        kept = ~(x <= threshold)
        return np.where(kept, x, value), kept.astype(x.dtype)


class LogSigmoid(_Pointwise):
    """y = log(sigmoid(x)) = -softplus(-x);  dx = dout * sigmoid(-x)."""

    @staticmethod
    def value(x):
        with np.errstate(invalid="ignore"):   # NaN in, NaN out
            softplus_neg, sigmoid_neg = _softplus_parts(-x)
        return -softplus_neg, sigmoid_neg

    @staticmethod
    def graph_slope(x, slope):
        return Sigmoid.apply(-x)


def _integer_bound(value, input):
    """A float bound as an integer input's dtype holds it (truncated toward zero, as PyTorch casts it)."""
    return int(value) if kind_of(input.dtype) in "iu" else value


@takes_tensors("input")
@refuses_complex('clamp is not supported for complex types')
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val); integer inputs keep their dtype (the bounds truncated to integers)."""
    min_val = float_arg(min_val, "hardtanh", "min_val", 2)
    max_val = float_arg(max_val, "hardtanh", "max_val", 3)
    if min_val > max_val:
        raise ValueError(f"min_val cannot be greater than max_val (got min_val={min_val}, max_val={max_val})")
    if kind_of(input.dtype) == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if kind_of(input.dtype) == "u" and min_val < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _maybe_inplace(Hardtanh, input, inplace, _integer_bound(min_val, input), _integer_bound(max_val, input))


@takes_tensors("input")
def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """``hardtanh`` written into ``input``."""
    return hardtanh(input, min_val, max_val, inplace=True)


@takes_tensors("input")
@refuses_complex('clamp is not supported for complex types')
def relu6(input, inplace=False):
    """min(max(x, 0), 6): ``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


@takes_tensors("input")
def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    _check_floating("hardsigmoid", input)
    return _maybe_inplace(Hardsigmoid, input, inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@takes_tensors("input")
def selu(input, inplace=False):
    """Scaled ELU: scale * elu(x, alpha) with Klambauer et al.'s alpha = 1.6733 and scale = 1.0507."""
    _check_floating("elu", input)
    return _maybe_inplace(Elu, input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0)


@takes_tensors("input")
def selu_(input):
    """``selu`` written into ``input``."""
    return selu(input, inplace=True)


@takes_tensors("input")
def celu(input, alpha=1.0, inplace=False):
    """Continuously differentiable ELU: max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    alpha = float_arg(alpha, "celu", "alpha", 2)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _check_floating("elu", input)
    return _maybe_inplace(Elu, input, inplace, alpha, 1.0, 1 / alpha)


@takes_tensors("input")
def celu_(input, alpha=1.0):
    """``celu`` written into ``input``."""
    return celu(input, alpha, inplace=True)


@takes_tensors("input")
def relu_(input):
    """max(x, 0) written into ``input``: ``input.relu_()``."""
    return input.relu_()


@takes_tensors("input")
def elu_(input, alpha=1.0):
    """``elu`` written into ``input``."""
    return elu(input, alpha, inplace=True)


@takes_tensors("input")
def leaky_relu_(input, negative_slope=0.01):
    """``leaky_relu`` written into ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)


@takes_tensors("input")
def logsigmoid(input):
    """log(sigmoid(x)), computed as -softplus(-x) (finite for large |x|)."""
    _check_floating("log_sigmoid", input)
    return LogSigmoid.apply(input)


@takes_tensors("input")
def softsign(input):
    """x / (1 + |x|) (composed of differentiable ops, as in PyTorch: integers give float32)."""
    return input / (input.abs() + 1)


@takes_tensors("input")
def tanhshrink(input):
    """x - tanh(x) (composed of differentiable ops, as in PyTorch)."""
    return input - input.tanh()


def _shrink(input, lambd, soft, name):
    lambd = float_arg(lambd, name, "lambd", 2)
    _check_floating(name, input)
    if soft and not 0 <= lambd <= finfo(input.dtype).max:   # NaN fails too
        raise RuntimeError(f"lambda must be in range [0, {finfo(input.dtype).max:g}] for input dtype "
                           f"{scalar_type_name(input.dtype)}, but found {lambd:g}")
    return Shrink.apply(input, lambd, soft)


@takes_tensors("input")
def softshrink(input, lambd=0.5):
    """0 for |x| <= lambd, else x - lambd sign(x); lambd must be non-negative."""
    return _shrink(input, lambd, True, "softshrink")


@takes_tensors("input")
def hardshrink(input, lambd=0.5):
    """0 for |x| <= lambd, else x."""
    return _shrink(input, lambd, False, "hardshrink")


def _threshold(input, threshold, value, inplace):
    threshold = float_arg(threshold, "threshold", "threshold", 2)
    value = float_arg(value, "threshold", "value", 3)
    if kind_of(input.dtype) == "b":
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    return _maybe_inplace(Threshold, input, inplace, _integer_bound(threshold, input), _integer_bound(value, input))


@takes_tensors("input")
@refuses_complex('"threshold_cpu" not implemented for \'{dtype}\'')
def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value; integer inputs keep their dtype (threshold and value truncated)."""
    return _threshold(input, threshold, value, inplace)


@takes_tensors("input")
def threshold_(input, threshold, value):
    """``threshold`` written into ``input``."""
    return _threshold(input, threshold, value, True)


# --------------------------------------------------------------------------- gates with weights
class PRelu(Function):
    """y = x if x > 0 else w x, with w already shaped to broadcast against x (one weight per channel);
    dx = dout * (1 if x > 0 else w),  dw = dout * (0 if x > 0 else x), summed to w's shape by the engine.
    At x == 0 the negative side is taken (dx = w, dw = 0), at NaN too (dw = NaN), as in PyTorch. The double
    backward differentiates these same formulas, so at x == 0 it stays on the negative side (PyTorch's double
    backward switches to the positive side there, inconsistent with its own first gradient)."""

    @staticmethod
    def forward(ctx, a, w):
        x = a._data
        ctx.save_for_backward(x, w._data)
        return np.where(x > 0, x, w._data * x)

    @staticmethod
    def grads(positive, x, w, g):
        """(dx, dw) from ndarrays, or Tensors in a graph (``select`` serves both)."""
        return select(positive, g, g * w), select(positive, 0.0, g * x)

    @staticmethod
    def backward(ctx, dout):
        x, w = ctx.saved_tensors
        return PRelu.grads(x > 0, x, w, dout._data)

    @staticmethod
    def graph_backward(ctx, dout):
        x, w = ctx.saved_tensors
        return PRelu.grads(x > 0, ctx.input_tensor(0, x), ctx.input_tensor(1, w), dout)


@takes_tensors("input", "weight")
@autocast_op("lower")
def prelu(input, weight):
    """x where x > 0, else weight * x; ``weight`` holds one slope, or one per channel (dim 1 of ``input``)."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if weight.dtype != input.dtype:           # (PyTorch's first dtype check; then its kernel's)
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(weight.dtype)}")
    if kind_of(input.dtype) != "f":
        raise NotImplementedError(f'"prelu_cpu" not implemented for \'{scalar_type_name(input.dtype)}\'')
    if weight.numel() == 1:
        return PRelu.apply(input, weight.reshape(()))
    if input.ndim == 0:
        raise RuntimeError("Not allow zero-dim input tensor.")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    # weight (C,) -> (C, 1, ..., 1): broadcasts along dim 1 of x (N, C, *)
    return PRelu.apply(input, weight.reshape((channels,) + (1,) * (input.ndim - 2)))


@takes_tensors("input")
def glu(input, dim=-1):
    """Gated linear unit: a * sigmoid(b), a and b the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if kind_of(input.dtype) != "f":
        raise NotImplementedError(f'"glu_cpu" not implemented for \'{scalar_type_name(input.dtype)}\'')
    axis = normalize_dim(dim, input.ndim)
    if input.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {input.shape[axis]}")
    a, b = input.chunk(2, axis)
    return a * b.sigmoid()


@takes_tensors("input")
def rrelu(input, lower=1 / 8, upper=1 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training the negative side's slope is drawn per element from U(lower, upper);
    in evaluation it is their mean, ``leaky_relu(x, (lower + upper) / 2)``."""
    lower, upper = float_arg(lower, "rrelu", "lower", 2), float_arg(upper, "rrelu", "upper", 3)
    for bound, name in ((lower, "lower"), (upper, "upper")):
        if not math.isfinite(bound):
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {bound:g}")
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound (got lower={lower}, "
                           f"upper={upper})")
    _check_floating("rrelu_with_noise_out", input)
    if training:
        return _maybe_inplace(RandomLeakyRelu, input, inplace, lower, upper)
    return _maybe_inplace(LeakyRelu, input, inplace, (lower + upper) / 2)


@takes_tensors("input")
def rrelu_(input, lower=1 / 8, upper=1 / 3, training=False):
    """``rrelu`` written into ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)
