"""``minigrad.signal``: PyTorch's ``torch.signal`` (its ``windows`` module)."""
from . import windows  # noqa: F401
