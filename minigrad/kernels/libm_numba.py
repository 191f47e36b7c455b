"""The C library's float64 log, log1p, exp, sin, cos and tan as NumPy ufuncs, for PyTorch's random streams
(``_pytorch_stream``, the in-place random fills), and its lgamma, which PyTorch's lgamma calls (``ops/gamma.py``).

PyTorch's CPU kernels turn float64 uniforms into normal, exponential, log-normal and Cauchy draws with the C
library's functions, one element at a time. NumPy's float64 log, log1p, sin and cos are SIMD routines of their own
that round the last bit otherwise now and then (on an AVX-512 EPYC: log1p in 7.4% of uniforms, exponential_ draws
6.1%, log_normal_ 4.6%, cauchy_ 0.4%, normal pairs 0.15%). These ufuncs, compiled by numba (loaded on first use),
call the C library's functions element by element, as PyTorch does: the same bits. (SciPy's gammaln loses up to
3e-9 of lgamma's value next to its zeros at 1 and 2; the C library's lgamma keeps the last bits there.)
"""
import math

from numba import vectorize

_UFUNC = dict(cache=True, nopython=True)


@vectorize(["float64(float64)"], **_UFUNC)
def log(x):
    return math.log(x)


@vectorize(["float64(float64)"], **_UFUNC)
def log1p(x):
    return math.log1p(x)


@vectorize(["float64(float64)"], **_UFUNC)
def exp(x):
    return math.exp(x)


@vectorize(["float64(float64)"], **_UFUNC)
def sin(x):
    return math.sin(x)


@vectorize(["float64(float64)"], **_UFUNC)
def cos(x):
    return math.cos(x)


@vectorize(["float64(float64)"], **_UFUNC)
def tan(x):
    return math.tan(x)


@vectorize(["float64(float64)"], **_UFUNC)
def lgamma(x):
    return math.lgamma(x)        # (numba calls the C library's lgamma; Python's math.lgamma is CPython's own)
