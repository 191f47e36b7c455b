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
* parameters are None, 1-D arrays per feature (``weight``/``bias``) or scalars (0-d: ScaleNorm's gain,
  DynamicTanh's alpha), in the compute dtype;
* x is rows (R, D) for RMSNorm, LayerNorm, ScaleNorm and DynamicTanh, and (N, C, S) with S = prod(spatial) for GroupNorm
  (InstanceNorm is GroupNorm with G = C) and BatchNorm; statistics are (R,), (R, 1), (N, G) or (C,);
* every backward ends with the one gradient mask: a ``need_*`` flag per differentiable input, in input order
  (``need_dx, need_dw, need_db``; ScaleNorm's ``need_dx, need_dscale``): the gradients not asked for are
  returned as None, and are not computed. Each returned gradient is a fresh array. The numba twins run
  through one wrapper (``numba_kernels._backward``), which allocates one output per parameter gradient (per
  feature, or one element for a scalar).

Which norms have kernels: the ``kernels`` of their entries in ``minigrad/ops/norm/registry.py``.

numba is imported lazily, when the numba backend is first used, so ``import minigrad`` stays
fast. If numba cannot be imported, minigrad uses the NumPy kernels and warns once.

Threads: one pool. The norm and copy kernels run on numba's threads, and so do the large matrix
products: on the numba backend ``matmul`` below cuts a product into one block per numba thread and each
thread calls NumPy's own OpenBLAS (reached through ctypes, ``openblas.py``) for its block, with
OpenBLAS set to one thread meanwhile (``matmul_numba.py``). With a single pool its workers can spin
between kernels instead of sleeping: ``_choose_threading_layer`` puts ``GOMP_SPINCOUNT=SPIN_COUNT`` in
the environment only while numba's OpenMP runtime (libgomp) loads and reads it, then removes it, so a
PyTorch imported later, with its own libgomp, keeps its defaults; a user's ``OMP_WAIT_POLICY`` or
``GOMP_SPINCOUNT`` is left as it is, and ``NUMBA_THREADING_LAYER`` still chooses another layer.
Kernels on fewer than ``numba_kernels.SERIAL_BELOW`` elements run as serial twins on the calling
thread. The thread count is numba's (``NUMBA_NUM_THREADS``; ``set_num_threads`` below, or numba's own).

Why (2 threads on the 2-core Xeon VM, each case in a fresh process). Before, numba's workers slept
after each kernel (``OMP_WAIT_POLICY=PASSIVE`` while numba started) and OpenBLAS ran the products on
its own pool. Its workers spin for about 0.1 s after each product, so the numba kernels between two
products found the second core taken, and waking a sleeping numba worker cost about 85 us: the CNN
step of bench/bench_conv.py scaled 1.2x from 1 to 2 threads (PyTorch: 1.9-2x). Letting numba's
workers spin while OpenBLAS kept its pool was worse (the two pools took turns stealing the cores:
CNN step 31-34 ms against 26-28, the Transformer step 125-129 ms against 111-117). With one pool and
spinning workers: CNN step (GroupNorm) 23.3-24.5 -> 16.5-18 ms, Transformer step unchanged (109-110
against 110-114 ms); a product alone takes 0.6-1.3x the time OpenBLAS's own two threads take.
numba's workqueue layer, which never spins, is no way out: on a loaded machine its caller waits while
the workers queue for a core (LayerNorm 256x256 on 2 threads with other processes running: median
241 us against 34 us on OpenMP).

Living next to PyTorch in one process (bench/bench_coexistence.py, Transformer steps): minigrad's
step with PyTorch loaded first is no slower than alone (it was +59% with the two pools), PyTorch's
with minigrad loaded first +12-15% (was +50%), either loaded after the other's warm-up within 2%. An
idle spinning worker holds a core for about 0.8 ms after minigrad's last kernel (SPIN_COUNT), the
price of the cheap wake-ups. Two things minigrad does not change for the rest of the process:
OpenBLAS's own thread count is restored after every product (a product of another Python thread
that starts meanwhile runs on one thread), and ``OPENBLAS_THREAD_TIMEOUT`` (how long OpenBLAS's
workers spin after NumPy's own products, outside minigrad) stays the user's. """
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


def set_num_threads(num_threads):
    """``torch.set_num_threads``: how many threads minigrad's kernels and (numba backend) matrix products use
    from now on, in this Python thread; numba's count, which cannot exceed the threads it started with
    (``NUMBA_NUM_THREADS``, by default the number of CPUs): a larger request gets that many."""
    if type(num_threads) is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num_threads).__name__}")
    if num_threads <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    if _numba_kernels() is not None:
        import numba
        numba.set_num_threads(min(num_threads, numba.config.NUMBA_NUM_THREADS))


def get_num_threads():
    """``torch.get_num_threads``: the thread count ``set_num_threads`` set (1 without numba)."""
    if _numba_kernels() is None:
        return 1
    import numba
    return numba.get_num_threads()


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


def init_num_threads():
    """``torch.init_num_threads``: nothing to do. PyTorch copies its thread count to a new thread; numba's count is
    per thread too, but a new Python thread already starts with numba's default (``NUMBA_NUM_THREADS``)."""


# --------------------------------------------------------------------------- what this installation computes with
def _numpy_blas():
    """The name of the BLAS NumPy was built with (``scipy-openblas``, ``mkl-sdl``, ...; "" if NumPy does not say)."""
    try:
        return str(np.__config__.CONFIG["Build Dependencies"]["blas"]["name"])
    except (AttributeError, KeyError, TypeError):
        return ""


def _numba_has_openmp():
    """Whether the installed numba ships its OpenMP threading layer (looked up without importing numba)."""
    import glob
    import importlib.util
    try:
        spec = importlib.util.find_spec("numba")
    except (ImportError, ValueError):
        return False
    locations = [] if spec is None else list(spec.submodule_search_locations or ())
    return any(glob.glob(os.path.join(location, "np", "ufunc", "omppool*")) for location in locations)


has_openmp = _numba_has_openmp()       # numba's kernels' threads (the OpenMP layer is the one minigrad starts)
has_mkl = "mkl" in _numpy_blas().lower()   # NumPy's matrix products and linear algebra run on MKL
has_lapack = True                      # numpy.linalg: LAPACK (the BLAS's, or NumPy's bundled lapack_lite)
has_spectral = True                    # numpy.fft (pocketfft) behind minigrad.fft
