"""``torch.nn.modules.linear``. ``NonDynamicallyQuantizableLinear`` is here and not exported, as in PyTorch."""
from ..layers import Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from ..layers_more import Bilinear
from ..lazy import LazyLinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
