"""Backend switch for the normalization kernels: NumPy reference or numba (row-wise, parallel)."""
from . import numpy_kernels


def backend():
    """The module whose kernels the norm Functions call."""
    return numpy_kernels
