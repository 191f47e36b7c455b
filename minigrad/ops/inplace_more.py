"""In-place variants (``tan_``, ``abs_``, ``remainder_``, ``bitwise_and_``, ...) of the elementwise ops, each its
out-of-place twin written back through ``inplace.write`` (see ``inplace.py``: the fast NumPy path when nothing
is recorded, the twin's history otherwise)."""
import numpy as np

from . import elementwise as ew
from . import trig
from .inplace import _binary, _unary, check_result, write


def _unaries(module, names, floating=True):
    """``name_`` for each name: ``module.name`` written in place (NumPy's ufunc of the same name as the fast path
    where there is one; ``floating``: an integer tensor cannot hold the float result)."""
    return {name + "_": _unary(name + "_", getattr(module, name), _UFUNCS.get(name), floating) for name in names}


_UFUNCS = {"tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
           "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "arcsin": np.arcsin, "arccos": np.arccos,
           "arctan": np.arctan, "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
           "cos": np.cos, "sin": np.sin, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2,
           "log10": np.log10}

_FLOATING = _unaries(trig, ["tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin",
                            "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg"])
_FLOATING.update(_unaries(ew, ["cos", "sin", "log", "log1p", "expm1", "log2", "log10", "reciprocal", "rsqrt", "erf"]))
globals().update(_FLOATING)

METHODS = sorted(_FLOATING)
