"""Special functions (``torch.special``, and ``erfc``, ``erfinv``, ``i0``, ``sinc``, ``logit``, ``xlogy``, ``exp2``,
``igamma``, ``igammac`` at the top level): values from NumPy where it has the function (``i0``, ``sinc``,
``exp2``), otherwise from SciPy's ``scipy.special`` (an optional extra: ``pip install "minigrad[special]"``),
never computed here.

Gradients are PyTorch's (``tools/autograd/derivatives.yaml``), each derived on its Function. Where PyTorch
defines none, minigrad does what PyTorch does: the Bessel functions, Airy's Ai and the orthogonal
polynomials give outputs that do not require grad; ``zeta``'s first argument and ``igamma``/``igammac``'s
first argument raise NotImplementedError when backward reaches them.

Each derivative is written once, for ndarrays (``backward``) and Tensors in a graph (``graph_backward``):
the helpers ``exp``, ``log``, ``sign``, ``cos`` and the special functions themselves dispatch on the type.
"""
import math

import numpy as np

from .._checks import check_tensor, takes_tensors
from ..autograd import Function
from ..dtypes import LOW_PRECISION, compute_dtype, get_default_dtype, kind_of, result_type, scalar_type_name
from ..tensor import Tensor
from . import elementwise as ew
from .pointwise import check_common_kind, joined, kept, not_implemented


def scipy_special():
    """``scipy.special``, imported when a function first needs it."""
    try:
        import scipy.special
    except ImportError as error:      # pragma: no cover - SciPy is in the test extra
        raise ImportError('this special function needs SciPy: pip install "minigrad[special]" '
                          '(or pip install scipy)') from error
    return scipy.special


def _dispatch(array_fn, tensor_fn):
    """f(x): ``array_fn`` on ndarrays, ``tensor_fn`` (differentiable) on Tensors."""
    def f(*args):
        if any(isinstance(a, Tensor) for a in args):
            return tensor_fn(*args)
        return array_fn(*args)
    return f


exp = _dispatch(np.exp, ew.exp)
log = _dispatch(np.log, ew.log)
cos = _dispatch(np.cos, ew.cos)
sin = _dispatch(np.sin, ew.sin)
sign = _dispatch(np.sign, ew.sign)


def _scipy(name):
    """scipy.special.<name> as an array function (looked up when called)."""
    return lambda *arrays: getattr(scipy_special(), name)(*arrays)


# the special functions in derivatives: SciPy's on ndarrays, this module's (defined below) on Tensors
_i0 = _dispatch(np.i0, lambda x: i0(x))
_erfinv = _dispatch(_scipy("erfinv"), lambda x: erfinv(x))
_i0e = _dispatch(_scipy("i0e"), lambda x: i0e(x))
_i1 = _dispatch(_scipy("i1"), lambda x: i1(x))
_i1e = _dispatch(_scipy("i1e"), lambda x: i1e(x))
_xlogy = _dispatch(_scipy("xlogy"), lambda x, y: xlogy(x, y))
_xlog1py = _dispatch(_scipy("xlog1py"), lambda x, y: xlog1py(x, y))
_zeta = _dispatch(_scipy("zeta"), lambda x, q: zeta(x, q))


def _floating(input, name, complex_ok=False):
    """``input`` in a float dtype: integers and bools in the default one (PyTorch computes these there); complex
    tensors refused as PyTorch refuses them, unless ``complex_ok``."""
    if input.dtype.kind == "c" and not complex_ok:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    return ew.cast(input, get_default_dtype()) if input.dtype.kind in "biu" else input


def _computed(fn, *arrays):
    """``fn(*arrays)`` in the first array's compute dtype (float16 in float32), cast back; a fresh array."""
    dtype = arrays[0].dtype
    work = compute_dtype(dtype)
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*[a.astype(work, copy=False) for a in arrays]))
    return out.astype(dtype)


# --------------------------------------------------------------------------- one-input functions
class Special(Function):
    """out = f(x) elementwise for the f of a subclass (``value``, on ndarrays); dx = dout * conj(f'(x, out))
    (``derivative``, written once for ndarrays and Tensors; the conjugate is PyTorch's convention for the
    holomorphic ones that take complex numbers, ``exp2`` and ``sinc``)."""

    saves = ("input", "output")      # what ``derivative`` reads, as PyTorch's formula does (``UnaryMath.saves``)

    @classmethod
    def forward(cls, ctx, x):
        out = _computed(cls.value, x._data)
        ctx.save_for_backward(*kept(cls.saves, x._data, out))
        return out

    @classmethod
    def backward(cls, ctx, dout):
        x, out = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return dout._data * ew.conj_if_complex(cls.derivative(x, out))

    @classmethod
    def graph_backward(cls, ctx, dout):
        with np.errstate(all="ignore"):
            return dout * cls.derivative(*joined(ctx, *ctx.saved_tensors)).conj()

    @staticmethod
    def value(x):
        raise NotImplementedError

    @staticmethod
    def derivative(x, out):
        raise NotImplementedError


def _near_zero(x, elsewhere):
    """i1's and i1e's derivative: 1/2 (the limit at 0) where |x| is at most the dtype's epsilon, and where x is NaN:
    PyTorch's rule (|x| > eps selects the formula)."""
    x_ = ew.array_of(x)
    with np.errstate(invalid="ignore"):
        formula = np.abs(x_) > np.finfo(x_.dtype).eps
    return ew.select(formula, elsewhere, 0.5)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


class Erfc(Special):
    """erfc x = 1 - erf x; d/dx = -2/sqrt(pi) exp(-x^2)."""
    saves = ("input",)
    value = staticmethod(_scipy("erfc"))

    @staticmethod
    def derivative(x, out):
        return -_TWO_OVER_SQRT_PI * exp(-x * x)


class Erfinv(Special):
    """y = erf^{-1}(x); from erf(y) = x, dy/dx = 1 / erf'(y) = sqrt(pi)/2 exp(y^2), with y recomputed from x (PyTorch
    saves only the input)."""
    saves = ("input",)
    value = staticmethod(_scipy("erfinv"))

    @staticmethod
    def derivative(x, out):
        y = _erfinv(x)
        return (math.sqrt(math.pi) / 2) * exp(y * y)


class Erfcx(Special):
    """erfcx x = exp(x^2) erfc x; d/dx = 2x exp(x^2) erfc x + exp(x^2) erfc'(x) = 2x erfcx(x) - 2/sqrt(pi)."""
    value = staticmethod(_scipy("erfcx"))

    @staticmethod
    def derivative(x, out):
        return 2 * x * out - _TWO_OVER_SQRT_PI


class Exp2(Special):
    """2^x; d/dx = 2^x ln 2."""
    saves = ("output",)
    value = staticmethod(np.exp2)

    @staticmethod
    def derivative(x, out):
        return out * math.log(2)


class Sinc(Special):
    """sinc x = sin(pi x)/(pi x), 1 at 0. d/dx = (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0 (the limit, and
    PyTorch's value): from x alone, as PyTorch's."""
    saves = ("input",)
    value = staticmethod(np.sinc)

    @staticmethod
    def derivative(x, out):
        pi_x = math.pi * x
        pi_x_x = pi_x * x                   # 0 also where x^2 underflows (|x| < 1e-162): 0 there, as PyTorch
        return ew.select(ew.array_of(pi_x_x) == 0, 0.0, (pi_x * cos(pi_x) - sin(pi_x)) / pi_x_x)


class I0(Special):
    """The modified Bessel function I0; d/dx I0 = I1."""
    saves = ("input",)
    value = staticmethod(np.i0)

    @staticmethod
    def derivative(x, out):
        return _i1(x)


class I0e(Special):
    """i0e x = exp(-|x|) I0(x); d/dx = exp(-|x|) (I1(x) - sign(x) I0(x)) = i1e(x) - sign(x) i0e(x)."""
    value = staticmethod(_scipy("i0e"))

    @staticmethod
    def derivative(x, out):
        return _i1e(x) - sign(x) * out


class I1(Special):
    """The modified Bessel function I1; d/dx I1 = I0 - I1/x (Bessel's recurrence), 1/2 at x = 0."""
    value = staticmethod(_scipy("i1"))

    @staticmethod
    def derivative(x, out):
        return _near_zero(x, _i0(x) - out / x)


class I1e(Special):
    """i1e x = exp(-|x|) I1(x); d/dx = exp(-|x|)(I0 - I1/x - sign(x) I1) = i0e(x) - i1e(x) (sign(x) + 1/x),
    1/2 at x = 0."""
    value = staticmethod(_scipy("i1e"))

    @staticmethod
    def derivative(x, out):
        return _near_zero(x, _i0e(x) - out * (sign(x) + 1 / x))


class Ndtr(Special):
    """The standard normal CDF Phi(x); d/dx = phi(x) = exp(-x^2/2) / sqrt(2 pi). PyTorch composes it of erf, whose
    saved input is an intermediate: a copy of x is saved, so no later write makes backward refuse."""
    saves = ("input copy",)
    value = staticmethod(_scipy("ndtr"))

    @staticmethod
    def derivative(x, out):
        return exp(-0.5 * x * x) / _SQRT_2PI


class Ndtri(Special):
    """y = Phi^{-1}(x); dy/dx = 1 / phi(y) = sqrt(2 pi) exp(y^2/2)."""
    saves = ("output",)
    value = staticmethod(_scipy("ndtri"))

    @staticmethod
    def derivative(x, out):
        return _SQRT_2PI * exp(0.5 * out * out)


class LogNdtr(Special):
    """log Phi(x); d/dx = phi(x)/Phi(x) = exp(-x^2/2 - log Phi(x)) / sqrt(2 pi) (no underflow of Phi)."""
    value = staticmethod(_scipy("log_ndtr"))

    @staticmethod
    def derivative(x, out):
        return exp(-0.5 * x * x - out) / _SQRT_2PI


class Entr(Special):
    """entr x = -x log x (0 at 0, -inf for x < 0); d/dx = -(1 + log x) (NaN for x < 0, as PyTorch)."""
    saves = ("input",)
    value = staticmethod(_scipy("entr"))

    @staticmethod
    def derivative(x, out):
        return -(1 + log(x))


def _named(op, name, doc):
    op.__name__, op.__qualname__, op.__doc__ = name, name, doc
    return op


def _special_unary(fn, name):
    complex_ok = fn in (Exp2, Sinc)

    def op(input):
        check_tensor(input, name, "input", 1)
        return fn.apply(_floating(input, name, complex_ok))
    return _named(op, name, f"Elementwise {name} (differentiable; see ``{fn.__name__}``).")


erfc = _special_unary(Erfc, "erfc")
erfinv = _special_unary(Erfinv, "erfinv")
erfcx = _special_unary(Erfcx, "erfcx")
exp2 = _special_unary(Exp2, "exp2")
sinc = _special_unary(Sinc, "sinc")
i0 = _special_unary(I0, "i0")
i0e = _special_unary(I0e, "i0e")
i1 = _special_unary(I1, "i1")
i1e = _special_unary(I1e, "i1e")
ndtr = _special_unary(Ndtr, "ndtr")
ndtri = _special_unary(Ndtri, "ndtri")
log_ndtr = _special_unary(LogNdtr, "log_ndtr")
entr = _special_unary(Entr, "entr")


class Logit(Function):
    """logit x = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when ``eps`` is given.
    d/dx = 1 / (x (1 - x)) inside; outside, 0 with ``eps`` (the clamp is flat there) and NaN without it
    (x outside [0, 1]), as PyTorch."""

    @staticmethod
    def forward(ctx, x, eps):
        a = x._data
        clamped = a if eps is None else np.clip(a, eps, 1 - eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(clamped / (1 - clamped))
        ctx.save_for_backward(a)
        ctx.eps = eps
        return out

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return Logit.grad(x, dout._data, ctx.eps), None

    @staticmethod
    def graph_backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return Logit.grad(x, dout, ctx.eps, ctx.input_tensor(0, x)), None

    @staticmethod
    def grad(x, g, eps, xt=None):
        """dx for the ndarray x (``xt``: x as a Tensor in the graph, for graph_backward)."""
        lo, hi, outside = (0.0, 1.0, np.nan) if eps is None else (eps, 1 - eps, 0.0)
        v = x if xt is None else xt
        with np.errstate(divide="ignore", invalid="ignore"):
            return ew.select((x < lo) | (x > hi), outside, g / (v * (1 - v)))


@takes_tensors("input")
def logit(input, eps=None):
    """log(p / (1 - p)); with ``eps``, p is first clamped to [eps, 1 - eps] (a negative or NaN eps clamps nothing, as
    in PyTorch)."""
    eps = None if eps is None or not float(eps) >= 0 else float(eps)
    return Logit.apply(_floating(input, "logit"), eps)


# --------------------------------------------------------------------------- two-input functions
def _float_pair(input, other, fname):
    """Both operands as Tensors in their PyTorch-promoted float dtype (numbers take the tensor's dtype); integers
    and bools in the default float dtype, each converted from its own dtype (``ew.promoted_float``)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected at least one Tensor")
    check_tensor(input, fname, "input", 1, numbers_ok=True)
    check_tensor(other, fname, "other", 2, numbers_ok=True)
    a, b = ew._pair(input, other, exact=True)
    if a.dtype != b.dtype:
        dtype = result_type(a._data, b._data)
        if kind_of(dtype) in "fc":
            a, b = ew.cast(a, dtype), ew.cast(b, dtype)
    return _floating(a, fname), _floating(b, fname)


class Binary(Function):
    """out = f(x, y) elementwise (broadcast) for the f of a subclass (``value``); the gradients ``grads``
    written once for ndarrays and Tensors."""

    @classmethod
    def forward(cls, ctx, x, y):
        ctx.save_for_backward(x._data, y._data)
        return _computed(cls.value, x._data, y._data)

    @classmethod
    def backward(cls, ctx, dout):
        x, y = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return cls.grads(ctx, dout._data, x, y, x, y)

    @classmethod
    def graph_backward(cls, ctx, dout):
        x, y = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return cls.grads(ctx, dout, x, y, ctx.input_tensor(0, x), ctx.input_tensor(1, y))

    @staticmethod
    def grads(ctx, g, x, y, xv, yv):
        """(dx, dy) for the upstream g; x, y the saved ndarrays (for masks), xv, yv the values to compute with
        (the same ndarrays, or Tensors in the graph)."""
        raise NotImplementedError


def _not_implemented(what):
    raise NotImplementedError(f"the derivative for '{what}' is not implemented.")


class Xlogy(Binary):
    """x log y, 0 where x = 0 (unless y is NaN). dx = g log y, as xlogy(g, y), 0 where x = 0 and y <= 0;
    dy = g x / y."""
    value = staticmethod(_scipy("xlogy"))

    @staticmethod
    def grads(ctx, g, x, y, xv, yv):
        dx = ew.select((x == 0) & (y <= 0), 0.0, _xlogy(g, yv)) if ctx.needs_input_grad[0] else None
        dy = g * xv / yv if ctx.needs_input_grad[1] else None
        return dx, dy


class Xlog1py(Binary):
    """x log(1 + y), 0 where x = 0 (unless y is NaN). dx = xlog1py(g, y), 0 where x = 0 and y <= -1;
    dy = g x / (1 + y)."""
    value = staticmethod(_scipy("xlog1py"))

    @staticmethod
    def grads(ctx, g, x, y, xv, yv):
        dx = ew.select((x == 0) & (y <= -1), 0.0, _xlog1py(g, yv)) if ctx.needs_input_grad[0] else None
        dy = g * xv / (yv + 1) if ctx.needs_input_grad[1] else None
        return dx, dy


class Zeta(Binary):
    """Hurwitz's zeta(x, q) = sum_k (k + q)^{-x}. d/dq = -x sum_k (k + q)^{-x-1} = -x zeta(x + 1, q); d/dx is
    not implemented (PyTorch raises)."""
    value = staticmethod(_scipy("zeta"))

    @staticmethod
    def grads(ctx, g, x, y, xv, yv):
        if ctx.needs_input_grad[0]:
            _not_implemented("zeta")
        return None, -g * xv * _zeta(xv + 1, yv)


def _gammaln(a):
    return scipy_special().gammaln(a)


def _incomplete_gamma(lower):
    """SciPy's regularized incomplete gamma P(a, x) (``lower``) or Q(a, x), with PyTorch's values at the edges,
    the first rule that applies winning: NaN for a < 0 or x < 0; at a = 0, P = 1 (Q = 0) for x > 0, else NaN;
    at x = 0, P = 0; for an infinite a, P = 0 (NaN if x is infinite too); for an infinite x, P = 1. (PyTorch
    applies these before looking at NaNs: P(inf, NaN) = 0.)"""
    def value(a, x):
        p = getattr(scipy_special(), "gammainc" if lower else "gammaincc")(a, x)
        at_infinity, at_zero = (1.0, 0.0) if lower else (0.0, 1.0)     # the limits x -> inf and x -> 0
        edges = [((a < 0) | (x < 0), np.nan),
                 (a == 0, np.where(x > 0, at_infinity, np.nan)),
                 (x == 0, at_zero),
                 (np.isinf(a), np.where(np.isinf(x), np.nan, at_zero)),
                 (np.isinf(x), at_infinity)]
        return np.select([c for c, _ in edges], [np.broadcast_to(v, p.shape) for _, v in edges], p)
    return value


class Igamma(Binary):
    """The regularized lower incomplete gamma P(a, x) = int_0^x t^{a-1} e^{-t} dt / Gamma(a) (``igammac``:
    Q = 1 - P). dP/dx = x^{a-1} e^{-x} / Gamma(a) = exp((a - 1) log x - x - lgamma(a)), dQ/dx = -dP/dx;
    d/da is not implemented (PyTorch raises). lgamma(a) is a constant here: a does not require grad."""
    value = staticmethod(_incomplete_gamma(lower=True))
    sign = 1.0
    name = "igamma"

    @classmethod
    def grads(cls, ctx, g, x, y, xv, yv):
        if ctx.needs_input_grad[0]:
            _not_implemented(f"{cls.name}: input")
        density = exp((xv - 1) * log(yv) - yv - _gammaln(x))
        return None, cls.sign * g * density


class Igammac(Igamma):
    value = staticmethod(_incomplete_gamma(lower=False))
    sign = -1.0
    name = "igammac"


def _binary(fn, name, numbers=True, low_precision=True):
    """The public function of ``fn`` (numbers as operands unless ``numbers`` is False; float16 and bfloat16 refused
    as PyTorch's kernel refuses them unless ``low_precision``)."""
    def op(input, other):
        if not numbers:
            check_tensor(input, name, "input", 1)
            check_tensor(other, name, "other", 2)
            check_common_kind(f"{name}_cpu", input, other, "f")
        a, b = _float_pair(input, other, name)
        if not low_precision and a.dtype in LOW_PRECISION:
            raise not_implemented(f"{name}_cpu", a.dtype)
        return ew._apply_broadcasting(fn, a, b)
    return _named(op, name, f"Elementwise {name} (broadcasting; see ``{fn.__name__}``).")


xlogy = _binary(Xlogy, "xlogy")
xlog1py = _binary(Xlog1py, "xlog1py")
zeta = _binary(Zeta, "zeta", low_precision=False)
igamma = _binary(Igamma, "igamma", numbers=False)
igammac = _binary(Igammac, "igammac", numbers=False)
gammainc, gammaincc = igamma, igammac


# --------------------------------------------------------------------------- functions without gradients
def _constant_unary(fn, name):
    """A function PyTorch does not differentiate: its output never requires grad."""
    def op(input):
        check_tensor(input, name, "input", 1)
        return Tensor(_computed(fn, _floating(input, name)._data))
    return _named(op, name, f"Elementwise {name} (no gradient, as in PyTorch).")


def _airy_ai(x):
    """Ai(x) from SciPy, 0 where it has underflowed (finite x > 105: Ai(104) is 1e-300), where SciPy gives NaN from
    1e8 on and PyTorch 0 (at +inf both give NaN)."""
    with np.errstate(invalid="ignore"):
        return np.where((x > 105) & (x < np.inf), 0.0, scipy_special().airy(x)[0])


airy_ai = _constant_unary(_airy_ai, "airy_ai")
bessel_j0 = _constant_unary(_scipy("j0"), "bessel_j0")
bessel_j1 = _constant_unary(_scipy("j1"), "bessel_j1")
bessel_y0 = _constant_unary(_scipy("y0"), "bessel_y0")
bessel_y1 = _constant_unary(_scipy("y1"), "bessel_y1")
modified_bessel_i0 = _constant_unary(_scipy("i0"), "modified_bessel_i0")
modified_bessel_i1 = _constant_unary(_scipy("i1"), "modified_bessel_i1")
modified_bessel_k0 = _constant_unary(_scipy("k0"), "modified_bessel_k0")
modified_bessel_k1 = _constant_unary(_scipy("k1"), "modified_bessel_k1")
scaled_modified_bessel_k0 = _constant_unary(_scipy("k0e"), "scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _constant_unary(_scipy("k1e"), "scaled_modified_bessel_k1")
spherical_bessel_j0 = _constant_unary(lambda x: scipy_special().spherical_jn(0, x), "spherical_bessel_j0")


def _polynomial(evaluate):
    """p_n(x) for PyTorch's float n: truncated to an integer, 0 for n < 0; ``evaluate(n, x)`` SciPy's."""
    def value(x, n):
        degree = np.trunc(np.where(np.isfinite(n), n, -1)).astype(np.int64)
        return np.where(degree < 0, 0.0, evaluate(np.maximum(degree, 0), x))
    return value


def _chebyshev_third_or_fourth(sign):
    """V_n = U_n - U_{n-1} (third kind), W_n = U_n + U_{n-1} (fourth kind), with U_{-1} = 0."""
    def evaluate(n, x):
        u = scipy_special().eval_chebyu
        return u(n, x) + sign * np.where(n > 0, u(np.maximum(n - 1, 0), x), 0.0)
    return evaluate


def _shifted(evaluate):
    """p*_n(x) = p_n(2x - 1)."""
    return lambda n, x: evaluate(n, 2 * x - 1)


def _scipy_polynomial(name):
    return lambda n, x: getattr(scipy_special(), name)(n, x)


def _constant_binary(value, name):
    def op(input, n):
        a, b = _float_pair(input, n, name)
        a, b = np.broadcast_arrays(a._data, b._data)
        return Tensor(_computed(value, a, b))
    return _named(op, name, f"The polynomial {name} of degree n (truncated to an integer; 0 for n < 0) at x; no "
                            "gradient.")


_chebyshev_v = _chebyshev_third_or_fourth(-1)
_chebyshev_w = _chebyshev_third_or_fourth(1)
chebyshev_polynomial_t = _constant_binary(_polynomial(_scipy_polynomial("eval_chebyt")), "chebyshev_polynomial_t")
chebyshev_polynomial_u = _constant_binary(_polynomial(_scipy_polynomial("eval_chebyu")), "chebyshev_polynomial_u")
chebyshev_polynomial_v = _constant_binary(_polynomial(_chebyshev_v), "chebyshev_polynomial_v")
chebyshev_polynomial_w = _constant_binary(_polynomial(_chebyshev_w), "chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _constant_binary(_polynomial(_scipy_polynomial("eval_sh_chebyt")),
                                                  "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _constant_binary(_polynomial(_scipy_polynomial("eval_sh_chebyu")),
                                                  "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _constant_binary(_polynomial(_shifted(_chebyshev_v)),
                                                  "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _constant_binary(_polynomial(_shifted(_chebyshev_w)),
                                                  "shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _constant_binary(_polynomial(_scipy_polynomial("eval_hermite")), "hermite_polynomial_h")
hermite_polynomial_he = _constant_binary(_polynomial(_scipy_polynomial("eval_hermitenorm")), "hermite_polynomial_he")
laguerre_polynomial_l = _constant_binary(_polynomial(_scipy_polynomial("eval_laguerre")), "laguerre_polynomial_l")
legendre_polynomial_p = _constant_binary(_polynomial(_scipy_polynomial("eval_legendre")), "legendre_polynomial_p")


# --------------------------------------------------------------------------- in place and methods
def _inplace_unary(name, outofplace):
    from .inplace import _unary
    return _unary(name + "_", outofplace)


def _inplace_binary(name, outofplace, numbers=True):
    from .inplace import _binary

    def op(self, other):
        if not numbers:
            check_tensor(other, name + "_", "other", 1)

        def ufunc(a, y, out, casting):
            np.copyto(out, outofplace(Tensor(a), Tensor(np.asarray(y)))._data, casting=casting)
        return _binary(self, other, name, ufunc, outofplace)
    return _named(op, name + "_", f"In-place ``{name}``; returns ``self``.")


erfc_ = _inplace_unary("erfc", erfc)
erfinv_ = _inplace_unary("erfinv", erfinv)
exp2_ = _inplace_unary("exp2", exp2)
sinc_ = _inplace_unary("sinc", sinc)
i0_ = _inplace_unary("i0", i0)
xlogy_ = _inplace_binary("xlogy", xlogy)
igamma_ = _inplace_binary("igamma", igamma, numbers=False)
igammac_ = _inplace_binary("igammac", igammac, numbers=False)


def logit_(self, eps=None):
    """In-place ``logit``; returns ``self``."""
    from .inplace import check_result, write
    if self.dtype.kind != "f":
        check_result(self, self.shape, np.float32)
    return write(self, lambda old: logit(old, eps))


METHODS = ["erfc", "erfc_", "erfinv", "erfinv_", "exp2", "exp2_", "sinc", "sinc_", "i0", "i0_", "logit", "logit_",
           "xlogy", "xlogy_", "igamma", "igamma_", "igammac", "igammac_"]
