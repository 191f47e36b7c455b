"""``minigrad.return_types``: PyTorch's ``torch.return_types``, the named-tuple types of the ops that return several
tensors (``values, indices = minigrad.max(x, 0)``, ``result.values``). These are the classes the ops themselves
return, so ``isinstance(minigrad.max(x, 0), minigrad.return_types.max)`` holds.

PyTorch's separate ``*_out`` types (what its ``out=`` forms return) are absent: minigrad's ``out=`` forms return
the same type as the plain call. ``histogramdd``'s type is a subclass of ``histogram``'s here (in PyTorch the two
are unrelated), and ``std_mean`` / ``var_mean`` return plain tuples, as PyTorch's do.
"""
from .linalg import (CholeskyExResult as linalg_cholesky_ex, EigResult as linalg_eig, EighResult as linalg_eigh,
                     InvExResult as linalg_inv_ex, LDLFactorExResult as linalg_ldl_factor_ex,
                     LDLFactorResult as linalg_ldl_factor, LstsqResult as linalg_lstsq,
                     LUFactorExResult as linalg_lu_factor_ex, LUFactorResult as linalg_lu_factor,
                     LUResult as linalg_lu, QRResult as linalg_qr, SlogdetResult as linalg_slogdet,
                     SolveExResult as linalg_solve_ex, SVDResult as linalg_svd)
from .linalg_legacy import (geqrf_result as geqrf, lu_unpack_result as lu_unpack, qr_result as qr,
                            slogdet_result as slogdet, svd_result as svd, triangular_solve_result as triangular_solve)
from .ops.counting import _HistogramddResult as histogramdd, _HistogramResult as histogram
from .ops.cumulative import cummax_result as cummax, cummin_result as cummin
from .ops.floats import frexp_result as frexp
from .ops.order_stats import (aminmax_result as aminmax, kthvalue_result as kthvalue, median_result as median,
                              mode_result as mode, nanmedian_result as nanmedian)
from .ops.reduce import max_result as max, min_result as min  # noqa: A004 - PyTorch's names
from .ops.sort import sort_result as sort, topk_result as topk

# PyTorch's class names (the classes themselves are counting.py's, which histogram/histogramdd return)
histogram.__name__ = histogram.__qualname__ = "histogram"
histogramdd.__name__ = histogramdd.__qualname__ = "histogramdd"

from .utils._pytree import SequenceKey, pytree_register_structseq, register_pytree_node  # noqa: E402,F401

__all__ = ["aminmax", "cummax", "cummin", "frexp", "geqrf", "histogram", "histogramdd", "kthvalue",
           "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_inv_ex", "linalg_ldl_factor",
           "linalg_ldl_factor_ex", "linalg_lstsq", "linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex",
           "linalg_qr", "linalg_slogdet", "linalg_solve_ex", "linalg_svd", "lu_unpack", "max", "median", "min",
           "mode", "nanmedian", "qr", "slogdet", "sort", "svd", "topk", "triangular_solve"]

for _name in __all__:          # each a pytree container of its fields, as PyTorch registers its structseqs
    pytree_register_structseq(globals()[_name])
del _name
