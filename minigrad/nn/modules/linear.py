"""``torch.nn.modules.linear``. Absent: ``NonDynamicallyQuantizableLinear`` (minigrad's MultiheadAttention
uses a plain ``Linear`` for ``out_proj``)."""
from ..layers import Identity, Linear
from ..layers_more import Bilinear
from ..lazy import LazyLinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
