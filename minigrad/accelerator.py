"""``minigrad.accelerator``: PyTorch's device-agnostic accelerator queries; minigrad has no accelerator."""


def is_available():
    return False


def device_count():
    return 0


def current_accelerator(check_available=False):
    """None: the CPU is not an accelerator."""
    return None
