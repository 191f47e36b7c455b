"""``torch.nn.attention.bias``: causal masks to pass to ``scaled_dot_product_attention`` as ``attn_mask``.

For L queries and S keys, query i may attend to key j when

    UPPER_LEFT  (``causal_upper_left(L, S)``):   j <= i              the triangle starts at the top-left corner
    LOWER_RIGHT (``causal_lower_right(L, S)``):  j <= i + (S - L)    it ends at the bottom-right corner

(the same when L == S). The lower-right one is the mask of a query block that continues a sequence whose first
S - L keys came earlier (decoding with a cache). With L > S its first L - S queries see no key: their output is
0 (PyTorch warns that it "will produce NaNs", which its CPU path does not).

``scaled_dot_product_attention`` hands a CausalBias to the bias itself, through PyTorch's ``__torch_function__``
protocol, as PyTorch does; the bias computes the attention with ``is_causal=True`` or with its materialized mask.
Unlike PyTorch's CausalBias (a Tensor subclass whose tensor data is never used), minigrad's is a plain object.
"""
import enum
import warnings

import numpy as np

from ...ops import attention as _attention
from ...tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(enum.IntEnum):
    """Where the causal triangle is anchored: UPPER_LEFT (j <= i) or LOWER_RIGHT (j <= i + S - L)."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of ``variant`` for ``seq_len_q`` queries and ``seq_len_kv`` keys, materialized only where
    needed."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                          stacklevel=2)

    def _materialize(self, device=None):
        """The (seq_len_q, seq_len_kv) bool mask, True where a query may attend."""
        offset = 0 if self.variant == CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        return Tensor(np.tri(self.seq_len_q, self.seq_len_kv, offset, dtype=bool))

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        """``scaled_dot_product_attention`` with this mask."""
        from ..functional import scaled_dot_product_attention
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout_p, is_causal=True,
                                                scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant != CausalVariant.LOWER_RIGHT:
            raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}")
        return scaled_dot_product_attention(query, key, value, attn_mask=attn_mask._materialize(), dropout_p=dropout_p,
                                            is_causal=False, scale=scale, enable_gqa=enable_gqa)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ..functional import scaled_dot_product_attention
        if func in (scaled_dot_product_attention, _attention.scaled_dot_product_attention):   # (F's refuses out=)
            return cls._dispatch(*args, **(kwargs or {}))
        return NotImplemented

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size):
    """The CausalBias with j <= i for size = (L, S)."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size):
    """The CausalBias with j <= i + (S - L) for size = (L, S)."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
