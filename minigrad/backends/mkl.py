"""``minigrad.backends.mkl``: whether the BLAS behind NumPy is Intel's MKL (``minigrad.has_mkl``); ``verbose``
is accepted and prints nothing."""
import contextlib

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    from .. import has_mkl
    return has_mkl


@contextlib.contextmanager
def verbose(enable):
    """A context manager that does nothing (PyTorch's turns on MKL's verbose logging)."""
    yield
