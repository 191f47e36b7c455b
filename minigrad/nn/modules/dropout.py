"""``torch.nn.modules.dropout``. Absent: ``_DropoutNd`` (minigrad's Dropout1d/2d/3d, AlphaDropout and
FeatureAlphaDropout subclass ``Dropout`` itself)."""
from ..layers import Dropout
from ..layers_more import AlphaDropout, FeatureAlphaDropout
from ..pooling import Dropout1d, Dropout2d, Dropout3d

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
