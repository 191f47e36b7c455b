"""``torch.nn.modules.pooling``: the pooling layers and their private bases.

Where minigrad's bases differ from PyTorch's: ``_AdaptiveAvgPoolNd`` is minigrad's ``_AdaptivePool``, which is
also the base of the adaptive max pools (``_AdaptiveMaxPoolNd``); AvgPool1d is not an ``_AvgPoolNd``; and
``_AvgPoolNd`` and ``_MaxUnpoolNd`` take the layer's arguments in ``__init__`` (PyTorch's take none).
"""
from ..pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                       AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
                       MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, _AvgPoolNd, _MaxPoolNd, _MaxUnpoolNd)  # noqa: F401
from ..pooling import _AdaptiveMaxPool as _AdaptiveMaxPoolNd  # noqa: F401
from ..pooling import _AdaptivePool as _AdaptiveAvgPoolNd  # noqa: F401
from ..pooling_more import (FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d, LPPool2d, LPPool3d,
                            _LPPoolNd)  # noqa: F401

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d"]
