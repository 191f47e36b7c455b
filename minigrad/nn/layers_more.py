"""Bilinear and EmbeddingBag layers (the maths is in ``minigrad/ops/bilinear.py`` and ``ops/embedding_bag.py``)."""
import math

from .. import dtypes
from ..creation import empty
from ..tensor import check_device
from . import functional as F
from . import init
from .layers import Dropout, Embedding
from .module import Module, Parameter

__all__ = ["AlphaDropout", "Bilinear", "EmbeddingBag", "FeatureAlphaDropout"]


class Bilinear(Module):
    """y = x1^T W x2 + b per output feature: weight (out, in1, in2), bias (out,), both ~ U(-1/sqrt(in1), 1/sqrt(in1))
    as in PyTorch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        check_device(device)
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        dtype = dtype or dtypes.get_default_dtype()
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype))
        self.bias = Parameter(empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class EmbeddingBag(Embedding):
    """Sums, means or maxima of bags of embeddings: ``forward(input, offsets, per_sample_weights)``; weight
    (num_embeddings, embedding_dim) ~ N(0, 1), the ``padding_idx`` row zero (Embedding's parameter and options)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise AssertionError("padding_idx must be within num_embeddings")
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                         _weight, False, device, dtype)
        self.mode, self.include_last_offset = mode, include_last_offset

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (num_embeddings, embedding_dim), sharing its memory; frozen
        unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}{self._lookup_options()}, mode='{self.mode}'"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class AlphaDropout(Dropout):
    """Alpha dropout in training (keeps a SELU network's mean and variance), the identity in eval."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels in training, the identity in eval."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
