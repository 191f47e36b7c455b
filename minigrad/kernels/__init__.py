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

Threads, and living next to PyTorch in one process. The tiny Transformer's training step
(bench/bench_transformer.py, 2 threads, a shared 2-core Xeon VM, each case in a fresh process):

=====================================================  =============  ======================================
numba threading layer, wait policy                     minigrad step  PyTorch step after minigrad's steps
=====================================================  =============  ======================================
workqueue                                              158 ms         88.9 ms (88.5 ms without them)
workqueue, PyTorch imported and run first              157 ms
omp, OMP_WAIT_POLICY unset                             272 ms         88.4 ms
omp, OMP_WAIT_POLICY=PASSIVE (in the environment)    160 ms         135 ms
=====================================================  =============  ======================================

OpenMP (libgomp) workers spin for a while after each parallel region, and between the norms OpenBLAS
runs the matmuls on the same two cores: numba's spinning workers steal them (272 ms). minigrad used to
set ``OMP_WAIT_POLICY=PASSIVE`` in ``os.environ`` for good; a PyTorch imported afterwards read it too
and lost a third of its speed (135 ms). workqueue avoids both, but on a loaded machine it stalls: its
caller waits while the workers queue for a core (LayerNorm 256x256 on 2 threads with other processes
running: median 241 us against 34 us on OpenMP). So minigrad now

* keeps numba's default layer (OpenMP here) and sets ``OMP_WAIT_POLICY=PASSIVE`` only while numba
  starts its threads (``_choose_threading_layer``: numba's libgomp reads it then), removing it right
  after, so a PyTorch imported later, with its own libgomp, never sees it; if the user set the
  variable, it is left as it is. ``NUMBA_THREADING_LAYER`` still chooses another layer;
* runs a kernel on fewer than ``numba_kernels.SERIAL_BELOW`` elements as its serial twin on the
  calling thread, waking no worker: on small tensors a wake-up costs more than the work. The thread
  count is numba's (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``).

The table's last row is this choice except for the scope of the variable (there it stayed in the
environment, which is what slowed PyTorch); with the variable removed after numba's start, PyTorch's
runtime reads the default. Measured after the change only under heavy load from other processes,
too noisy to quote.
Neither library slows the other by more than 1% in the table's measurements. One case remains:
minigrad and PyTorch steps *alternating* in one process (as an in-process benchmark does) slow
PyTorch's step to 180 ms, because NumPy's OpenBLAS workers spin after each matmul and steal the cores
PyTorch's next op needs; ``OPENBLAS_THREAD_TIMEOUT=4`` in the environment before NumPy is first
imported makes them sleep sooner (PyTorch 88 ms, minigrad unchanged). minigrad leaves that to the
user: it is a process-wide setting of NumPy's library, often loaded before minigrad anyway. """
import contextlib
import importlib
import os
import warnings

import numpy as np

BACKENDS = ("numpy", "numba")
ENV_VAR = "MINIGRAD_BACKEND"

_active = None      # (name, kernel module) once chosen; None until the first use
_numba = None       # the numba kernel module, or the ImportError that importing it raised


def _numba_kernels():
    """The numba kernel module, or None (after one warning) if numba cannot be imported."""
    global _numba
    if _numba is None:
        try:
            _choose_threading_layer()
            _numba = importlib.import_module(".numba_kernels", __name__)
        except ImportError as err:
            _numba = err
            warnings.warn(f"minigrad: numba could not be imported ({err}); the normalization layers use the "
                          f"slower NumPy kernels. Install numba, or set {ENV_VAR}=numpy to choose them explicitly.",
                          RuntimeWarning, stacklevel=4)
    return None if isinstance(_numba, ImportError) else _numba


SPIN_COUNT = "30000"
"""libgomp's GOMP_SPINCOUNT for numba's workers: how long they spin after a parallel region before they
sleep (module docstring; about 0.8 ms of one core on the 2-core Xeon)."""


def _choose_threading_layer():
    """Start numba's threads now, with ``GOMP_SPINCOUNT=SPIN_COUNT`` in the environment only while its
    OpenMP runtime loads and reads it (module docstring): numba's idle workers spin briefly, then sleep,
    and a PyTorch imported later does not see the setting. Nothing changes if numba's threads already run
    or the user set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``."""
    if os.environ.get("OMP_WAIT_POLICY") is not None or os.environ.get("GOMP_SPINCOUNT") is not None:
        return
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    try:
        from numba.np.ufunc import parallel
        parallel._launch_threads()
    finally:
        del os.environ["GOMP_SPINCOUNT"]


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


def numba_module(name):
    """The numba kernel module ``minigrad/kernels/<name>.py`` (``conv_numba``, ``pool_numba``, ``fused_numba``)
    when the numba backend is in use, else None: the caller then runs its NumPy reference."""
    return importlib.import_module(f"{__name__}.{name}") if get_backend() == "numba" else None


def matmul(a, b):
    """``np.matmul(a, b)``; on the numba backend large float products run on numba's threads, each thread
    calling NumPy's OpenBLAS for its block (matmul_numba.py), so that OpenBLAS's pool does not compete
    with numba's for the cores."""
    fast = numba_module("matmul_numba")
    return np.matmul(a, b) if fast is None else fast.matmul(a, b)


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
