"""scaled_dot_product_attention, composed from differentiable ops (matmul, softmax, masked_fill, dropout),
so autograd derives its backward: attention is the sum of those steps, nothing is fused.

    scores = q @ k^T * scale + bias          q (..., L, E), k (..., S, E), v (..., S, Ev)
    out    = dropout(softmax(scores)) @ v    (..., L, Ev)

``bias`` is 0 where a query may attend and -inf where it may not (a boolean ``attn_mask`` with True =
take part, or ``is_causal``), or a float ``attn_mask`` added as is. A query row with no key left to attend
to gets zeros instead of softmax's nan (PyTorch's behaviour), and zero gradient.
"""
import math

import numpy as np

from ..tensor import Tensor
from .activation import dropout
from .elementwise import as_tensor_operand, masked_fill
from .linalg import matmul
from .softmax import softmax


def _bias(attn_mask, is_causal, L, S, dtype):
    """The additive mask: a Tensor (a float attn_mask keeps its graph) or None for no mask."""
    if is_causal:
        # query i attends to keys 0..i (top-left aligned when L != S, as PyTorch)
        return Tensor(np.where(np.tri(L, S, dtype=bool), 0, -np.inf).astype(dtype))   # (L, S)
    if attn_mask is None:
        return None
    attn_mask = as_tensor_operand(attn_mask)
    if attn_mask.dtype.kind == "b":
        return Tensor(np.where(attn_mask._data, 0, -np.inf).astype(dtype))
    return attn_mask


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v with PyTorch's arguments; ``scale`` defaults to 1/sqrt(E).
    ``dropout_p`` applies dropout to the attention weights (always: this function has no training flag)."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"scaled_dot_product_attention: query, key and value must have at least 2 dimensions "
                           f"(..., L, E), got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    L, S = query.shape[-2], key.shape[-2]
    if key.shape[-1] != query.shape[-1] or value.shape[-2] != S:
        raise RuntimeError(f"scaled_dot_product_attention: expected query (..., L, E), key (..., S, E) and value "
                           f"(..., S, Ev), got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale

    scores = matmul(query * scale, key.mT)                            # (..., L, S)
    bias = _bias(attn_mask, is_causal, L, S, scores.dtype)
    dead_rows = None
    if bias is not None:
        blocked = np.all(bias._data == -np.inf, axis=-1, keepdims=True)  # (..., L, 1): no key left
        if blocked.any():
            # a finite row for softmax (its weights are zeroed below), so no nan reaches the gradient
            dead_rows = blocked
            bias = masked_fill(bias, dead_rows, 0.0)
        scores = scores + bias
    weights = softmax(scores, -1)
    if dead_rows is not None:
        weights = masked_fill(weights, dead_rows, 0.0)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return matmul(weights, value)                                     # (..., L, Ev)
