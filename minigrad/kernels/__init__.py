"""The accelerator: numba kernels for the norms (numba_kernels.py) and the switch that picks them.

Every norm's NumPy reference kernels live in its family file (``minigrad/ops/norm/rmsnorm.py``,
``layernorm.py``, ``batchnorm.py``, ``groupnorm.py``), the executable specification; each has a numba
twin of the same name and signature in numba_kernels.py. A norm's Function runs
``kernel(rms_norm_backward)(...)``: the reference itself on the ``"numpy"`` backend, its twin on
``"numba"`` (the default). ``backend()`` returns the whole set: ``minigrad.ops.norm`` (which exports
every reference kernel) or the numba module. The choice is made at the first use:

* ``MINIGRAD_BACKEND=numpy|numba`` in the environment, read once at the first use;
* otherwise numba when it can be imported, else NumPy;
* ``set_backend(name)`` / ``get_backend()`` at any time, ``use_backend(name)`` for a block.

What a kernel may assume (the callers in ``minigrad/ops/norm`` guarantee it):

* arrays are already in the *compute* dtype (float32 or float64; float16 inputs are upcast to float32
  by the caller, which casts results back once); they may be non-contiguous (numba copies them once);
* ``weight``/``bias`` are None or 1-D arrays in the compute dtype;
* x is rows (R, D) for RMSNorm and LayerNorm, and (N, C, S) with S = prod(spatial) for GroupNorm
  (InstanceNorm is GroupNorm with G = C) and BatchNorm; statistics are (R,), (N, G) or (C,);
* every backward ends with ``need_dx, need_dw, need_db``, the one gradient mask: the gradients not
  asked for are returned as None, and are not computed. Each returned gradient is a fresh array.

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
    return "numpy", importlib.import_module("minigrad.ops.norm")   # the references (imported by now)


def backend():
    """The module of the kernels in use: ``minigrad.ops.norm`` (the references) or numba_kernels."""
    global _active
    if _active is None:
        requested = os.environ.get(ENV_VAR, "").strip().lower()
        _active = _resolve(requested or "numba", f" in ${ENV_VAR}" if requested else "")
    return _active[1]


def kernel(reference):
    """What to run for the NumPy reference kernel ``reference``: itself on the numpy backend, its numba
    twin (the function of the same name in numba_kernels.py) on the numba backend."""
    kernels = backend()
    return reference if _active[0] == "numpy" else getattr(kernels, reference.__name__)


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
