"""``minigrad.cuda``: the ``torch.cuda`` functions ported code calls, for a library without CUDA.

``is_available()`` is False and ``device_count()`` 0, so code that picks its device with them picks the
CPU. Seeding, synchronizing and freeing the cache are accepted and do nothing (there is no GPU state);
asking for a current device raises, as PyTorch without CUDA does.
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


def synchronize(device=None):
    """A no-op: every minigrad operation has finished when it returns."""


def empty_cache():
    """A no-op: minigrad keeps no device memory cache."""


from . import amp  # noqa: E402  (minigrad.cuda.amp.GradScaler / autocast, PyTorch's older spelling)
