"""``torch.nn.modules.distance``."""
from ..distance import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
