"""``minigrad.special``: PyTorch's ``torch.special`` namespace.

The functions live in ``ops/special.py`` (SciPy-valued ones, with their gradients), ``ops/elementwise.py``
(``erf``, ``expm1``, ``log1p``, ``round``, ``sigmoid`` as ``expit``), ``ops/softmax.py`` and
``ops/reduce.py``. The gamma family (``gammaln``, ``digamma``/``psi``, ``polygamma``, ``multigammaln``) is
minigrad's ``lgamma``, ``digamma``, ``polygamma`` and ``mvlgamma``, found here under PyTorch's special names
once they exist (``__getattr__`` below).
"""
from .ops.elementwise import erf, expm1, log1p, round, sigmoid as expit  # noqa: A004, F401
from .ops.reduce import logsumexp  # noqa: F401
from .ops.softmax import log_softmax, softmax  # noqa: F401
from .ops.special import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t,  # noqa: F401
                          chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w, entr, erfc, erfcx,
                          erfinv, exp2, gammainc, gammaincc, hermite_polynomial_h, hermite_polynomial_he, i0, i0e,
                          i1, i1e, laguerre_polynomial_l, legendre_polynomial_p, log_ndtr, logit,
                          modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, ndtr, ndtri,
                          scaled_modified_bessel_k0, scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t,
                          shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
                          shifted_chebyshev_polynomial_w, sinc, spherical_bessel_j0, xlog1py, xlogy, zeta)

# torch.special's name -> minigrad's top-level name, for functions defined elsewhere in minigrad
_GAMMA_FAMILY = {"gammaln": "lgamma", "digamma": "digamma", "psi": "digamma", "polygamma": "polygamma",
                 "multigammaln": "mvlgamma"}


def __getattr__(name):
    if name in _GAMMA_FAMILY:
        import minigrad
        found = getattr(minigrad, _GAMMA_FAMILY[name], None)
        if found is not None:
            return found
    raise AttributeError(f"module 'minigrad.special' has no attribute '{name}'")
