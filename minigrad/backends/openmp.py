"""``minigrad.backends.openmp``: whether numba runs its parallel kernels on OpenMP (``minigrad.has_openmp``)."""


def is_available():
    from .. import has_openmp
    return has_openmp
