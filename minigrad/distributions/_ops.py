"""The differentiable pieces the distributions need: Cholesky factors and triangular solves (MultivariateNormal)
and erfinv (Normal.icdf), from minigrad's public ops; and the samples of Gamma and Dirichlet distributions with
their implicit reparameterisation gradients (Gamma, Beta, Dirichlet ``rsample``).

Implicit reparameterisation (Figurnov, Mohamed & Mnih, 2018): a sample x with CDF F(x; a) is a fixed point of
F(x; a) = u for its uniform u. Holding u fixed, dF = 0 gives

    dx/da = -(dF/da) / (dF/dx) = -(dF/da)(x; a) / pdf(x; a).

For the standard gamma, F is the regularised lower incomplete gamma P(a, x) (``scipy.special.gammainc``); its
derivative in the shape a has no closed form, so it is taken by a five-point central difference of SciPy's
P (or of the upper tail Q = 1 - P where P > 1/2, which keeps the tail's digits), error O(h^4) with h = a / 1000.
For the Dirichlet PyTorch differentiates each coordinate through its Beta(a_i, a_0 - a_i) marginal (the other
concentrations fixed) and spreads the change over the simplex (see ``DirichletSample``).
"""

import numpy as np

from ..autograd import Function, once_differentiable
from ..autograd.function import NoDerivative
from ..dtypes import float_info
from ..ops.gamma import scipy_special
from .. import _pytorch_stream as stream
from ..random import torch_stream
from ..tensor import Tensor


class TensorFormula(Function):
    """A Function whose gradient is one formula in minigrad ops, ``gradients(ctx, *saved, dout)``: ``backward``
    runs it on the saved arrays as constants, ``graph_backward`` on them joined to the graph (so the gradient
    can be differentiated again). ``roles`` names each saved array: an input's position, or ``"out"``."""

    roles = ()

    @classmethod
    def backward(cls, ctx, dout):
        return cls.gradients(ctx, *[Tensor(a) for a in ctx.saved_tensors], dout)

    @classmethod
    def graph_backward(cls, ctx, dout):
        saved = [ctx.output_tensor(a) if role == "out" else ctx.input_tensor(role, a)
                 for role, a in zip(cls.roles, ctx.saved_tensors)]
        return cls.gradients(ctx, *saved, dout)


# --------------------------------------------------------------------------- from the public ops
def solve_triangular(A, B, *, upper):
    """``torch.linalg.solve_triangular(A, B, upper=upper)`` (left side): A^{-1} B, differentiable in A and B."""
    from ..linalg import solve_triangular as solve
    return solve(A, B, upper=upper)


def cholesky(A):
    """The lower Cholesky factor of the symmetric positive-definite matrices A (..., n, n), differentiable."""
    from ..linalg import cholesky as factor
    return factor(A)


def erfinv(x):
    from ..ops.special import erfinv as inverse
    return inverse(x)


# --------------------------------------------------------------------------- implicit reparameterisation
def _shape_derivative(cdf, ccdf, a, *others):
    """d/da of a CDF (``cdf(a, *others)``, its complement ``ccdf``) by a five-point central difference,
    h = a / 1000; from the upper tail where the CDF exceeds 1/2."""
    h = a * 1e-3
    lower = cdf(a, *others) <= 0.5

    def stencil(f):
        return (8 * (f(a + h, *others) - f(a - h, *others)) - (f(a + 2 * h, *others) - f(a - 2 * h, *others))) / (12 * h)
    with np.errstate(all="ignore"):
        return np.where(lower, stencil(cdf), -stencil(ccdf))


def standard_gamma_grad(x, alpha):
    """dx/dalpha of a standard gamma sample x ~ Gamma(alpha, 1), holding its uniform fixed:
    -(dP(alpha, x)/dalpha) / pdf(x; alpha), pdf = x^(alpha-1) e^(-x) / Gamma(alpha)."""
    special = scipy_special()
    x64, a64 = x.astype(np.float64), alpha.astype(np.float64)
    dP = _shape_derivative(special.gammainc, special.gammaincc, a64, x64)
    with np.errstate(all="ignore"):
        log_pdf = (a64 - 1) * np.log(x64) - x64 - special.gammaln(a64)
        return (-dP / np.exp(log_pdf)).astype(x.dtype)


def dirichlet_grad(x, alpha, total):
    """PyTorch's ``_dirichlet_grad``: for x ~ Beta(alpha, beta), beta = total - alpha held fixed,
    (dx/dalpha) / (1 - x) = -(dI_x(alpha, beta)/dalpha) / pdf(x; alpha, beta) / (1 - x)."""
    special = scipy_special()
    x64, a64, b64 = x.astype(np.float64), alpha.astype(np.float64), (total - alpha).astype(np.float64)

    def cdf(a, b, x):
        return special.betainc(a, b, x)

    def ccdf(a, b, x):
        return special.betaincc(a, b, x)
    dI = _shape_derivative(cdf, ccdf, a64, b64, x64)
    with np.errstate(all="ignore"):
        log_pdf = (a64 - 1) * np.log(x64) + (b64 - 1) * np.log1p(-x64) - special.betaln(a64, b64)
        return (-dI / np.exp(log_pdf) / (1 - x64)).astype(x.dtype)


def _gamma_draws(a, generator):
    """Gamma(a, 1) draws in a's dtype, kept away from 0, as PyTorch's ``_standard_gamma`` draws them (its numbers
    after the same seed; a float32 alpha's own arithmetic in float32)."""
    g = stream.standard_gamma(torch_stream(generator), a, single=a.dtype.itemsize < 8).astype(a.dtype)
    tiny = float_info(a.dtype).tiny
    return np.where(g > tiny, g, tiny).astype(a.dtype)          # std::max(tiny, g): NaN becomes tiny too


class StandardGamma(Function):
    """A Gamma(alpha, 1) sample, differentiable in alpha by implicit reparameterisation:
    d(sample)/d(alpha) = ``standard_gamma_grad`` (PyTorch's ``_standard_gamma``). That gradient is a number from
    SciPy, not a formula in minigrad ops: differentiating it again raises PyTorch's NotImplementedError (minigrad's
    engine visits every node that leads to a leaf requiring grad, so this also happens when only the derivative
    in the upstream gradient is asked for, which PyTorch computes)."""

    @staticmethod
    def forward(ctx, alpha, generator):
        a = alpha._data
        x = _gamma_draws(a, generator)
        ctx.save_for_backward(x, a)
        return x

    @staticmethod
    def backward(ctx, dout):
        x, a = ctx.saved_tensors
        return dout._data * standard_gamma_grad(x, a), None

    @staticmethod
    def graph_backward(ctx, dout):
        x, a = ctx.saved_tensors
        slope = NoDerivative.apply(NotImplementedError, "the derivative for '_standard_gamma_grad' is not implemented.",
                                   standard_gamma_grad(x, a), ctx.input_tensor(0, a))
        return dout * slope, None


def standard_gamma(alpha, generator=None):
    return StandardGamma.apply(alpha, generator)


class DirichletSample(Function):
    """A Dirichlet(alpha) sample x = g / sum(g), g_i ~ Gamma(alpha_i, 1), over the last dim.

    Backward (PyTorch's ``_Dirichlet_backward``): with D_i = ``dirichlet_grad``(x_i, alpha_i, sum(alpha)),
        d alpha_i = D_i (G_i - sum_j x_j G_j):
    x_i moves by D_i (1 - x_i) and the others make room in proportion to their size. Once differentiable, as
    PyTorch's ``_Dirichlet`` is."""

    @staticmethod
    def forward(ctx, alpha, generator):
        a = alpha._data      # PyTorch: float64 gammas of the float64 alpha, normalized, rounded, kept inside (0, 1)
        gammas = _gamma_draws(a.astype(np.float64), generator)
        x = (gammas / gammas.sum(-1, keepdims=True)).astype(a.dtype)
        x = np.clip(x, float_info(a.dtype).tiny, np.nextafter(a.dtype.type(1), a.dtype.type(0)))
        ctx.save_for_backward(x, a)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, dout):
        x, a = ctx.saved_tensors
        G = dout._data
        return DirichletSample.slope(x, a) * (G - (x * G).sum(-1, keepdims=True)), None

    @staticmethod
    def slope(x, a):
        """D_i = dirichlet_grad(x_i, alpha_i, sum(alpha))."""
        return dirichlet_grad(x, a, np.broadcast_to(a.sum(-1, keepdims=True), a.shape))


def dirichlet_sample(alpha, generator=None):
    return DirichletSample.apply(alpha, generator)


class RegularizedGamma(TensorFormula):
    """P(a, x), the regularised lower incomplete gamma function (the standard gamma CDF, PyTorch's
    ``special.gammainc``). Backward in x: dP/dx = x^(a-1) e^(-x) / Gamma(a), the density; in a there is no
    closed form and PyTorch refuses it, as minigrad does."""

    roles = (0, 1)

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a._data, x._data)
        return np.asarray(scipy_special().gammainc(a._data, x._data)).astype(x._data.dtype)

    @staticmethod
    def gradients(ctx, a, x, dout):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        return None, dout * ((a - 1) * x.log() - x - a.lgamma()).exp()


def gammainc(a, x):
    return RegularizedGamma.apply(a, x)


# --------------------------------------------------------------------------- modified Bessel functions
def _bessel_ratio(k):
    """A(k) = I1(k) / I0(k) of an ndarray, from SciPy's exponentially scaled i1e / i0e (no overflow)."""
    special = scipy_special()
    return (special.i1e(k) / special.i0e(k)).astype(k.dtype)


def _log_i0(k):
    """log I0(k): log(i0e(k)) + |k|, and below |k| = 1 log1p of the series I0(k) - 1 = sum_j (k^2/4)^j / (j!)^2,
    14 terms (the first form loses digits to cancellation as log I0(k) -> k^2 / 4)."""
    quarter_sq = k * k / 4
    series = np.zeros_like(k)
    term = np.ones_like(k)
    for j in range(1, 15):
        term = term * quarter_sq / (j * j)
        series = series + term
    with np.errstate(divide="ignore"):
        large = np.log(scipy_special().i0e(k)) + np.abs(k)
    return np.where(np.abs(k) < 1, np.log1p(series), large)


class LogBesselI0(Function):
    """out = log I0(k), the modified Bessel function of order 0 (the von Mises normaliser), k >= 0.
    Backward: d log I0 / dk = I1(k) / I0(k) = A(k)."""

    @staticmethod
    def forward(ctx, k):
        x = k._data
        ctx.save_for_backward(x)
        return _log_i0(x.astype(np.float64)).astype(x.dtype)

    @staticmethod
    def backward(ctx, dout):
        return dout._data * _bessel_ratio(ctx.saved_tensors[0])

    @staticmethod
    def graph_backward(ctx, dout):
        return dout * BesselRatio.apply(ctx.input_tensor(0, ctx.saved_tensors[0]))


class BesselRatio(TensorFormula):
    """A(k) = I1(k) / I0(k). Backward: from I0' = I1 and I1' = I0 - I1 / k, A'(k) = 1 - A / k - A^2
    (A / k -> 1/2 as k -> 0, where A'(0) = 1/2)."""

    roles = (0, "out")

    @staticmethod
    def forward(ctx, k):
        A = _bessel_ratio(k._data)
        ctx.save_for_backward(k._data, A)
        return A

    @staticmethod
    def gradients(ctx, k, A, dout):
        small = k._data < 1e-4
        A_over_k = _select(small, 0.5 - k * k / 16, A / _select(small, 1.0, k))
        return dout * (1 - A_over_k - A * A)


def _select(condition, a, b):
    from ..ops.elementwise import select
    return select(condition, a, b)


def log_bessel_i0(k):
    return LogBesselI0.apply(k)


def bessel_ratio(k):
    return BesselRatio.apply(k)
