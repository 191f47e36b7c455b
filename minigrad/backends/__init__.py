"""``minigrad.backends``: PyTorch's backend switches, accepted so ported code runs; none changes what
minigrad computes (NumPy on the CPU, float32 matmuls in full float32 precision).

``backends.cudnn`` flags (``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``),
``backends.cuda.matmul.allow_tf32``, ``backends.mps.is_available()`` (False), ``backends.mkldnn``
(not used: False), ``backends.mkl`` and ``backends.openmp`` (what NumPy and numba use), and
``set_float32_matmul_precision``/``get_float32_matmul_precision`` (in ``cuda.py``, to which PyTorch ties them).
"""
from . import cuda, cudnn, mkl, mkldnn, mps, openmp
from .cuda import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "get_float32_matmul_precision",
           "set_float32_matmul_precision"]
