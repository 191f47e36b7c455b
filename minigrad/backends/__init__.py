"""``minigrad.backends``: PyTorch's backend switches, accepted so ported code runs; none changes what
minigrad computes (NumPy on the CPU, float32 matmuls in full float32 precision).

``backends.cudnn`` flags (``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``),
``backends.cuda.matmul.allow_tf32``, ``backends.mps.is_available()`` (False), and
``set_float32_matmul_precision``/``get_float32_matmul_precision`` (in ``cuda.py``, to which PyTorch ties them).
"""
from . import cuda, cudnn, mps
from .cuda import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["cuda", "cudnn", "mps", "get_float32_matmul_precision", "set_float32_matmul_precision"]
