"""``minigrad.accelerator``: PyTorch's device-agnostic accelerator queries; minigrad has no accelerator,
so they answer as ``minigrad.cuda`` does."""
from .cuda import device_count, is_available  # noqa: F401

__all__ = ["current_accelerator", "device_count", "is_available"]


def current_accelerator(check_available=False):
    """None: the CPU is not an accelerator."""
    return None
