"""Modules for the distances of ``ops/distance.py``: CosineSimilarity, PairwiseDistance, with PyTorch's
arguments, attributes and reprs (neither shows its arguments in its repr)."""
from . import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim``."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p along the last dimension; the order ``p`` is kept as ``norm``, as in PyTorch."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
