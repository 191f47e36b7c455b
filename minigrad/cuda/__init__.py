"""``minigrad.cuda``: the ``torch.cuda`` functions ported code calls, for a library without CUDA.

``is_available()`` is False and ``device_count()`` 0, so code that picks its device with them picks the
CPU. Seeding and freeing the cache are accepted and do nothing (there is no GPU state); asking for a
current device or synchronizing raises, as PyTorch without CUDA does. The memory counters and the other
device functions (``memory.py``) answer as PyTorch's CPU-only build: 0, or its exception type.
"""
from ..device import check_device


def is_available():
    return False


def device_count():
    return 0


def is_bf16_supported(including_emulation=True):
    return False


def current_device():
    """Raises: there is no CUDA device."""
    check_device("cuda")


def manual_seed(seed):
    """A no-op (there is no GPU random stream): seed the CPU with ``minigrad.manual_seed``."""


def manual_seed_all(seed):
    """A no-op, as ``manual_seed``."""


def seed():
    """A no-op."""


def seed_all():
    """A no-op."""


def empty_cache():
    """A no-op: minigrad keeps no device memory cache."""


def _is_compiled():
    return False


def is_tf32_supported():
    return False


from . import amp  # noqa: E402  (minigrad.cuda.amp.GradScaler / autocast, PyTorch's older spelling)
from .memory import (current_stream, default_stream, device, get_arch_list, get_device_capability,  # noqa: E402
                     get_device_name, get_device_properties, get_rng_state, get_rng_state_all, get_sync_debug_mode,
                     init, initial_seed, ipc_collect, is_initialized, max_memory_allocated, max_memory_cached,
                     max_memory_reserved, mem_get_info, memory_allocated, memory_cached, memory_reserved,
                     memory_snapshot, memory_stats, memory_summary, reset_accumulated_memory_stats,
                     reset_max_memory_allocated, reset_max_memory_cached, reset_peak_memory_stats, set_device,
                     set_rng_state, set_rng_state_all, synchronize)
from .runtime import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, Event,  # noqa: E402
                      FloatTensor, HalfTensor, IntTensor, LongTensor, OutOfMemoryError, ShortTensor, Stream,
                      StreamContext, current_blas_handle, device_of, get_gencode_flags, set_per_process_memory_fraction,
                      stream)
from . import nvtx  # noqa: E402
