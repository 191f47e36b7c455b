"""The gamma function's logarithm and its derivatives: ``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``.

They form one family, indexed by the order n of the derivative of log Gamma:

    psi^(-1)(x) = lgamma(x) = log |Gamma(x)|
    psi^(0)(x)  = digamma(x) = d/dx lgamma(x)
    psi^(n)(x)  = polygamma(n, x) = d^n/dx^n digamma(x)

so the backward of every member is the next one: d psi^(n)(x)/dx = psi^(n+1)(x), and one Function,
``Polygamma`` (with n = -1 for lgamma), serves them all, to any order of differentiation.

The values come from SciPy (``scipy.special.psi``, ``polygamma``), an optional dependency:
``pip install "minigrad[special]"``, and lgamma's from the C library's ``lgamma``, as PyTorch's (SciPy's gammaln loses
up to 3e-9 of the value next to lgamma's zeros at 1 and 2, where the C library keeps the last bits).

mvlgamma(x, p) = p (p - 1) / 4 log(pi) + sum_{i=0}^{p-1} lgamma(x - i / 2)  (the multivariate log-gamma), is
built from lgamma, so its gradient is sum_i digamma(x - i / 2).
"""
import math

import numpy as np

from .._checks import check_tensor
from ..autograd import Function
from ..autograd.function import pytorch_saves
from ..tensor import Tensor
from . import inplace
from .._pytorch_stream import libm
from .elementwise import _floating


def scipy_special():
    """``scipy.special``, imported when first needed (SciPy is the optional extra ``special``)."""
    try:
        import scipy.special
    except ImportError as error:
        raise ImportError('minigrad\'s lgamma, digamma and polygamma compute with SciPy, which is not installed: '
                          'pip install "minigrad[special]"') from error
    return scipy.special


def psi(n, x):
    """psi^(n)(x) of an ndarray, in x's dtype: lgamma for n = -1, digamma for 0, polygamma(n) above."""
    special = scipy_special()
    wide = x.astype(np.float64)   # float16/float32 computed in float64 and rounded once
    with np.errstate(all="ignore"):
        if n == -1:
            # PyTorch: lgamma(-inf) = inf (log |Gamma| grows without bound), as the C library's; SciPy says -inf
            out = np.where(np.isneginf(wide), np.inf, libm(wide.size).lgamma(wide))
        elif n == 0:
            out = special.psi(wide)
        else:
            out = special.polygamma(n, wide)
    return np.asarray(out).astype(x.dtype)   # a fresh array, also for 0-d inputs


class Polygamma(Function):
    """out = psi^(n)(x), the n-th derivative of digamma (n = -1: lgamma, 0: digamma).
    Backward: d psi^(n)(x)/dx = psi^(n+1)(x), so dx = dout * psi^(n+1)(x)."""

    @staticmethod
    def forward(ctx, x, n):
        ctx.n = n
        ctx.save_for_backward(x._data)
        return psi(n, x._data)

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return dout._data * psi(ctx.n + 1, x), None

    @staticmethod
    def graph_backward(ctx, dout):
        """The same gradient with psi^(n+1) a Polygamma of x in the graph: every order is differentiable."""
        (x,) = ctx.saved_tensors
        return dout * Polygamma.apply(ctx.input_tensor(0, x), ctx.n + 1), None


_KERNELS = {-1: "lgamma_vml_cpu", 0: "digamma", 1: "trigamma"}   # PyTorch's kernel names, in its errors


def _apply(name, input, n, position=1):
    check_tensor(input, name, "input", position)
    if input.dtype.kind == "c":
        from ..autograd.function import type_name
        word = type_name(input.dtype)[len("minigrad."):-len("Tensor")]
        raise NotImplementedError(f"\"{_KERNELS.get(n, 'polygamma')}\" not implemented for '{word}'")
    return Polygamma.apply(_floating(input), n)


def lgamma(input):
    """log |Gamma(input)| elementwise; integers give the default float dtype."""
    return _apply("lgamma", input, -1)


def digamma(input):
    """d/dx lgamma(x) elementwise (digamma(0) = -inf, digamma(-0.) = inf, NaN at negative integers)."""
    return _apply("digamma", input, 0)


def _check_order(n):
    if isinstance(n, Tensor) or isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


def polygamma(n, input):
    """The n-th derivative of digamma at ``input`` (n = 0: digamma itself)."""
    return _apply("polygamma", input, _check_order(n), position=2)


def _polygamma_method(self, n):
    """``x.polygamma(n)`` (the order first, as in PyTorch's method)."""
    return polygamma(n, self)


def _check_mvlgamma(input, p):
    check_tensor(input, "mvlgamma", "input", 1)
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@pytorch_saves("input")
def mvlgamma(input, p):
    """The multivariate log-gamma of dimension ``p``, elementwise:
    p (p - 1) / 4 log(pi) + sum_{i<p} lgamma(x - i / 2). As in PyTorch 2.13, elements at or below (p - 1) / 2
    (outside the function's domain) are not refused: they give the sum's value (inf at the poles)."""
    _check_mvlgamma(input, p)
    from .reduce import sum as reduce_sum   # reduce imports elementwise only; imported here to keep gamma light
    x = _floating(input)
    halves = Tensor((np.arange(p, dtype=x.dtype) - (p - 1)) / 2)         # (p,): ..., -1, -1/2, +0 (PyTorch's order;
    #                                                                       +0, so that -0. gives lgamma(+0.)'s slope)
    terms = lgamma(x.unsqueeze(-1) + halves)                               # (*x.shape, p)
    return reduce_sum(terms, -1) + p * (p - 1) / 4 * math.log(math.pi)


# --------------------------------------------------------------------------- in place
def _in_place(name, outofplace):
    def op(self, *args):
        check_tensor(self, name, "input", 1)
        if self.dtype.kind != "f":
            inplace.check_result(self, self.shape, np.float32)   # a float result can't go into integers
        return inplace.write(self, lambda t: outofplace(t, *args))
    op.__name__ = name
    op.__doc__ = f"In-place ``{name[:-1]}``; returns ``self``."
    return op


lgamma_ = _in_place("lgamma_", lgamma)
digamma_ = _in_place("digamma_", digamma)


def polygamma_(self, n):
    """In-place ``polygamma(n, self)``; returns ``self``."""
    n = _check_order(n)
    return _in_place("polygamma_", lambda t: polygamma(n, t))(self)


def mvlgamma_(self, p):
    """In-place ``mvlgamma(self, p)``; returns ``self``."""
    _check_mvlgamma(self, p)
    return _in_place("mvlgamma_", mvlgamma)(self, p)


METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method, "mvlgamma": mvlgamma,
           "lgamma_": lgamma_, "digamma_": digamma_, "polygamma_": polygamma_, "mvlgamma_": mvlgamma_}

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma"]
