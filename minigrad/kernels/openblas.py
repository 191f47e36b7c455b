"""NumPy's own OpenBLAS, reached through ctypes: its gemm routines and its thread count.

minigrad's numba kernels and NumPy's matrix products both want the machine's cores. Left to itself,
OpenBLAS runs each large product on its own thread pool, whose workers keep spinning for a while
afterwards and take the cores numba's next kernel needs (measured in kernels/__init__.py). So the
numba backend runs the products on numba's threads instead (``matmul_numba.py``): each thread calls
OpenBLAS's gemm for its own block, with OpenBLAS set to one thread for the duration, so that one pool
owns the cores.

``find()`` returns the library's ``Blas`` (the gemm functions, ``get_threads``/``set_threads``) or None
when NumPy was not built with an OpenBLAS this module recognises (MKL, Accelerate, or a library whose
symbols it does not know): then the products stay with NumPy (``np.matmul``), as before. NumPy's wheels
ship OpenBLAS as ``scipy_openblas`` with 64-bit integers and the symbols prefixed ``scipy_`` and
suffixed ``64_``; older wheels and system builds use other spellings, tried in turn.
"""
import ctypes
import glob
import os
import sys
from dataclasses import dataclass

import numpy as np

# (symbol prefix, symbol suffix, BLAS integer) of the builds tried, NumPy's current wheels first
SPELLINGS = (("scipy_", "64_", ctypes.c_int64), ("", "64_", ctypes.c_int64), ("scipy_", "", ctypes.c_int32),
             ("", "", ctypes.c_int32))

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112                 # the cblas enums


@dataclass(frozen=True)
class Blas:
    path: str                  # the shared library
    sgemm: object              # cblas_sgemm / cblas_dgemm as ctypes functions; pointers are passed as integers
    dgemm: object
    get_threads: object        # openblas_get_num_threads() -> int
    set_threads: object        # openblas_set_num_threads(int)


def _loaded_paths():
    """Paths of the shared libraries named like OpenBLAS: those mapped into this process (Linux), then the
    ones beside NumPy's package (its wheels keep them in numpy.libs or numpy/.dylibs)."""
    paths = []
    try:
        with open(f"/proc/{os.getpid()}/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    root = os.path.dirname(np.__file__)
    for pattern in ("../numpy.libs/*openblas*", ".dylibs/*openblas*", "../numpy.libs/*OpenBLAS*"):
        paths += [p for p in sorted(glob.glob(os.path.join(root, pattern))) if p not in paths]
    return paths


def _bind(lib, prefix, suffix, blasint):
    """The Blas of ``lib`` under one symbol spelling, or None if a symbol is missing."""
    try:
        fns = {name: getattr(lib, f"{prefix}{name}{suffix}") for name in
               ("cblas_sgemm", "cblas_dgemm", "openblas_get_num_threads", "openblas_set_num_threads")}
    except AttributeError:
        return None
    pointer = ctypes.c_size_t                # arrays' data pointers, passed as integers (same ABI as void *)
    for name, real in (("cblas_sgemm", ctypes.c_float), ("cblas_dgemm", ctypes.c_double)):
        fns[name].restype = None
        fns[name].argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, blasint, blasint, blasint, real, pointer,
                              blasint, pointer, blasint, real, pointer, blasint]
    fns["openblas_get_num_threads"].restype = ctypes.c_int
    fns["openblas_get_num_threads"].argtypes = []
    fns["openblas_set_num_threads"].restype = None
    fns["openblas_set_num_threads"].argtypes = [ctypes.c_int]
    return Blas(lib._name, fns["cblas_sgemm"], fns["cblas_dgemm"], fns["openblas_get_num_threads"],
                fns["openblas_set_num_threads"])


def _blas_integer_width():
    """8 or 4: the width of the integers NumPy's BLAS was built with, from its build configuration (None if
    it does not say)."""
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:                        # older NumPy: no mode argument, or another layout
        return None
    if "openblas" not in str(config.get("name", "")).lower():
        return 0                             # not OpenBLAS: nothing here applies
    return 8 if "64" in str(config.get("name", "")) or "USE64BITINT" in str(config.get("openblas configuration", "")) \
        else 4


def find():
    """NumPy's OpenBLAS as a ``Blas``, or None (module docstring)."""
    if sys.platform == "win32":             # calling conventions and library names not checked there
        return None
    width = _blas_integer_width()
    if width == 0:
        return None
    for path in _loaded_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix, blasint in SPELLINGS:
            if ctypes.sizeof(blasint) != (width or 8) or (width is None and not suffix):
                continue                     # an unknown width: only the unambiguous 64_ symbols
            blas = _bind(lib, prefix, suffix, blasint)
            if blas is not None:
                return blas
    return None
