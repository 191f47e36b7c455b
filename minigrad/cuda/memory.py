"""``minigrad.cuda``'s memory and device functions, each answering as PyTorch's CPU-only build does.

Training scripts call these unconditionally for logging (``torch.cuda.max_memory_allocated()``) or
housekeeping; what PyTorch without CUDA returns, they return (0, an empty dict), and where it raises, they
raise the same exception type:

* the counters (``memory_allocated``, ``max_memory_reserved``, ...) are 0 and ``memory_stats`` is empty;
* the functions that need a CUDA runtime (``synchronize``, ``get_device_name``, ...) raise
  ``DeviceUnavailableError``, an ``AssertionError`` as PyTorch's "Torch not compiled with CUDA enabled";
* the functions PyTorch's CPU build lacks a C binding for (``reset_peak_memory_stats``, ``set_device``)
  raise ``AttributeError`` as it does, naming the binding.
"""
import collections
import warnings

from ..device import check_device
from ..device import device as _device


def _no_cuda():
    """What PyTorch raises (AssertionError) where a CUDA runtime is needed."""
    check_device("cuda")


def _no_binding(name):
    """PyTorch's CPU build has no ``torch._C._cuda_*`` binding behind ``name``: AttributeError, as there."""
    raise AttributeError(f"minigrad is built without CUDA: cuda.{name}() has no implementation (PyTorch's CPU "
                         f"build raises this AttributeError too)")


# --------------------------------------------------------------------------- counters: 0, as PyTorch's CPU build
def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_cached(device=None):
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return 0


def max_memory_cached(device=None):
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return 0


def memory_stats(device=None):
    """An empty ``OrderedDict``: there is no allocator to report on."""
    return collections.OrderedDict()


def memory_summary(device=None, abbreviated=False):
    """Raises ``KeyError('allocated_bytes.all.current')``, as PyTorch's CPU build (its summary reads that key
    from the empty ``memory_stats``)."""
    raise KeyError("allocated_bytes.all.current")


# --------------------------------------------------------------------------- no C binding: AttributeError
def reset_peak_memory_stats(device=None):
    _no_binding("reset_peak_memory_stats")


def reset_max_memory_allocated(device=None):
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    _no_binding("reset_peak_memory_stats")


def reset_max_memory_cached(device=None):
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    _no_binding("reset_peak_memory_stats")


def reset_accumulated_memory_stats(device=None):
    _no_binding("reset_accumulated_memory_stats")


def memory_snapshot(*args, **kwargs):
    _no_binding("memory_snapshot")


def set_device(device):
    """A negative index is ignored; 'cpu' is a ValueError; a CUDA device an AttributeError (no binding)."""
    if isinstance(device, int) and not isinstance(device, bool):
        index = device
    else:
        device = _device(device)
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = -1 if device.index is None else device.index
    if index >= 0:
        _no_binding("set_device")


# --------------------------------------------------------------------------- need a CUDA runtime: AssertionError
def synchronize(device=None):
    _no_cuda()


def get_device_name(device=None):
    _no_cuda()


def get_device_properties(device=None):
    _no_cuda()


def get_device_capability(device=None):
    _no_cuda()


def mem_get_info(device=None):
    _no_cuda()


def init():
    _no_cuda()


def initial_seed():
    _no_cuda()


def ipc_collect():
    _no_cuda()


def current_stream(device=None):
    _no_cuda()


def default_stream(device=None):
    _no_cuda()


def get_rng_state(device="cuda"):
    _no_cuda()


def get_sync_debug_mode():
    _no_cuda()


# --------------------------------------------------------------------------- answered without a GPU
def is_initialized():
    return False


def get_arch_list():
    return []


def get_rng_state_all():
    return []


def set_rng_state(new_state, device="cuda"):
    """A no-op, as PyTorch's CPU build (the state would be applied lazily, on a CUDA init that never comes)."""


def set_rng_state_all(new_states):
    """A no-op, as ``set_rng_state``."""


class device:  # noqa: N801 - PyTorch's name
    """``with cuda.device(i):``: the object can be made, entering it raises as in PyTorch's CPU build."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx == -1:   # "no device": PyTorch enters without touching CUDA
            return None
        raise RuntimeError("minigrad was compiled without CUDA support")

    def __exit__(self, *exc):
        return False
