"""``torch.nn.attention``: which implementations ``scaled_dot_product_attention`` may use (``sdpa_kernel``).

PyTorch picks among several attention kernels (math, flash, memory-efficient, cuDNN); on the CPU it has the math
and flash ones. minigrad has one implementation, which computes what either of those computes. So within
``sdpa_kernel(backends)`` attention runs as long as the list allows one of the CPU backends (MATH or
FLASH_ATTENTION), and otherwise raises PyTorch's CPU error, as a ported program would see it on a CPU machine.
"""
import contextlib
import enum

from ...ops import attention as _attention

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False
CPU_BACKENDS = ("MATH", "FLASH_ATTENTION")


class SDPBackend(enum.IntEnum):
    """The attention implementations PyTorch knows, with its numbering."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, ``scaled_dot_product_attention`` may use only ``backends`` (one SDPBackend or a list);
    ``set_priority`` (try them in the given order) changes nothing here."""
    listed = [backends] if isinstance(backends, SDPBackend) else backends
    if not isinstance(listed, (list, tuple, set)) or not all(isinstance(b, SDPBackend) for b in listed):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    before = _attention.sdpa_backend_available[0]
    _attention.sdpa_backend_available[0] = any(b.name in CPU_BACKENDS for b in listed)
    try:
        yield {}
    finally:
        _attention.sdpa_backend_available[0] = before
