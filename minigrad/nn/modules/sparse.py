"""``torch.nn.modules.sparse``."""
from ..layers import Embedding
from ..layers_more import EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
