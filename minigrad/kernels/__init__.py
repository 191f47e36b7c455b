"""Backend switch for the normalization kernels: ``"numpy"`` (the reference) or ``"numba"`` (jitted, parallel).

The norm Functions call ``backend().<kernel>(...)``; both modules have the same kernels with the
same signatures (numpy_kernels.py states the contract). The choice is made at the first use:

* ``MINIGRAD_BACKEND=numpy|numba`` in the environment, read once at the first use;
* otherwise numba when it can be imported, else NumPy;
* ``set_backend(name)`` / ``get_backend()`` at any time, ``use_backend(name)`` for a block.

numba is imported lazily, when the numba backend is first used, so ``import minigrad`` stays
fast. If numba cannot be imported, minigrad uses the NumPy kernels and warns once.

Thread pools: numba's parallel kernels run on OpenMP (libgomp) workers, which by default spin for
milliseconds after each kernel waiting for more work. Between the norms, OpenBLAS runs the matmuls
on the same cores, and spinning workers steal them: on 2 cores the tiny Transformer's training step
took twice as long (418 ms against 209 ms, bench/bench_transformer.py's shape). minigrad therefore
sets ``OMP_WAIT_POLICY=PASSIVE`` (workers sleep when idle) unless the environment already sets it;
it must be in place before the first parallel kernel loads libgomp. The price is a thread wake-up,
tens of microseconds, per kernel call.
"""
import contextlib
import importlib
import os
import warnings

from . import numpy_kernels

BACKENDS = ("numpy", "numba")
ENV_VAR = "MINIGRAD_BACKEND"

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_active = None      # (name, kernel module) once chosen; None until the first use
_numba = None       # the numba kernel module, or the ImportError that importing it raised


def _numba_kernels():
    """The numba kernel module, or None (after one warning) if numba cannot be imported."""
    global _numba
    if _numba is None:
        try:
            _numba = importlib.import_module(".numba_kernels", __name__)
        except ImportError as err:
            _numba = err
            warnings.warn(f"minigrad: numba could not be imported ({err}); the normalization layers use the "
                          f"slower NumPy kernels. Install numba, or set {ENV_VAR}=numpy to choose them explicitly.",
                          RuntimeWarning, stacklevel=4)
    return None if isinstance(_numba, ImportError) else _numba


def _resolve(name, source):
    """(name, module) of the backend that serves a request for ``name`` (numba falls back to numpy)."""
    if name not in BACKENDS:
        raise ValueError(f"invalid minigrad backend {name!r}{source}; valid backends are "
                         f"{', '.join(map(repr, BACKENDS))}")
    if name == "numba" and _numba_kernels() is not None:
        return "numba", _numba
    return "numpy", numpy_kernels


def backend():
    """The kernel module the norm Functions call (chosen at the first use, see the module docstring)."""
    global _active
    if _active is None:
        requested = os.environ.get(ENV_VAR, "").strip().lower()
        _active = _resolve(requested or "numba", f" in ${ENV_VAR}" if requested else "")
    return _active[1]


def set_backend(name):
    """Use the ``"numpy"`` or ``"numba"`` kernels from now on (numba falls back to NumPy if it cannot be imported)."""
    global _active
    _active = _resolve(name, "")


def get_backend():
    """The name of the backend in use: ``"numpy"`` or ``"numba"``."""
    backend()
    return _active[0]


@contextlib.contextmanager
def use_backend(name):
    """``with use_backend("numpy"): ...`` runs the block on that backend, then restores the previous choice."""
    global _active
    previous = _active
    set_backend(name)
    try:
        yield
    finally:
        _active = previous
