"""``minigrad.cpu``: PyTorch's ``torch.cpu`` namespace, for ``minigrad.cpu.amp.autocast``."""
from . import amp  # noqa: F401
