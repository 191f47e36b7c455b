"""``minigrad.backends.cudnn``: PyTorch's cuDNN flags with PyTorch's defaults; set them freely, they
change nothing (minigrad has no cuDNN)."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
