"""``minigrad.xpu``: ``torch.xpu`` (Intel GPUs) as PyTorch's build without XPU answers it.

Device-agnostic scripts ask ``torch.xpu.is_available()`` before CUDA and MPS; here it is False and
``device_count()`` 0, so they pick the CPU. Seeding and ``empty_cache`` do nothing, the memory counters are
0 and ``memory_stats`` empty (as ``minigrad.cuda``'s); what needs an XPU runtime raises
``DeviceUnavailableError``, an ``AssertionError`` as PyTorch's "Torch not compiled with XPU enabled".
"""
from .cuda import manual_seed, manual_seed_all, seed, seed_all  # noqa: F401  (no-ops: no device random stream)
from .cuda.memory import (max_memory_allocated, max_memory_reserved, memory_allocated,  # noqa: F401
                          memory_reserved, memory_stats)
from .device import DeviceUnavailableError


def _no_xpu(*args, **kwargs):
    raise DeviceUnavailableError("minigrad is not compiled with XPU enabled (it runs on the CPU only)")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def empty_cache():
    """A no-op: minigrad keeps no device memory cache."""


def reset_peak_memory_stats(device=None):
    raise AttributeError("minigrad is built without XPU: xpu.reset_peak_memory_stats() has no implementation "
                         "(PyTorch's build without XPU raises this AttributeError too)")


# what needs an XPU runtime
init = synchronize = current_device = set_device = get_device_name = get_device_properties = _no_xpu
get_device_capability = initial_seed = get_rng_state = set_rng_state = mem_get_info = current_stream = _no_xpu
