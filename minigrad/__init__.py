"""minigrad: a NumPy tensor library with reverse-mode autograd, built around normalization layers.

    import minigrad as mg
    x = mg.randn(4, 8, requires_grad=True)
    y = mg.nn.functional.rms_norm(x, (8,))
    y.backward(mg.randn(4, 8))
"""
from . import dtypes
from .autograd import enable_grad, gradcheck, is_grad_enabled, no_grad, set_grad_enabled
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
                       ones_like, rand, rand_like, randint, randn, randn_like, tensor, zeros, zeros_like)
from .dtypes import (bool, cdouble, cfloat, complex64, complex128, double, float, float16, float32, float64,
                     get_default_dtype, half, int32, int64, long, set_default_dtype)
from .kernels import get_backend, set_backend
from .ops.elementwise import (abs, add, clamp, clip, cos, div, eq, exp, ge, gt, isfinite, isnan, le, log,
                              logical_and, logical_not, logical_or, lt, masked_fill, maximum, minimum, mul, ne,
                              neg, pow, relu, rsqrt, sigmoid, sin, sqrt, square, sub, tanh, where)
from .ops.complex import (angle, complex, conj, conj_physical, imag, is_complex, is_conj, polar, real, resolve_conj,
                          view_as_complex, view_as_real)
from .ops.inplace import clone
from .ops.linalg import matmul
from .ops.reduce import all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, std, sum, var
from .ops.shape import (cat, chunk, expand, flatten, permute, repeat, reshape, split, squeeze, stack, transpose,
                        tril, triu, unsqueeze)
from .ops.softmax import log_softmax, softmax
from .random import Generator, default_generator, manual_seed
from .tensor import Tensor

from . import autograd, nn, optim  # noqa: E402  (subpackages that build on the names above)
from . import viz  # noqa: E402

__version__ = "0.1.0"

