"""``multi_head_attention_forward``: the computation of ``nn.MultiheadAttention`` as a function of its weights,
with PyTorch's arguments (sequence-first layout (L, N, E), or unbatched (L, E)).

Per head h (E = embed_dim, H = num_heads, d = E / H):

    q = query W_q^T + b_q,  k = key W_k^T + b_k,  v = value W_v^T + b_v           (then split into H heads)
    [bias_k, bias_v]   one learned key and value appended to every sequence (S -> S + 1)
    [add_zero_attn]    one zero key and value appended per head (S -> S + 1)
    weights_h = dropout(softmax(q_h k_h^T / sqrt(d) + mask))                     (N, H, L, S)
    output = concat_h(weights_h v_h) W_o^T + b_o

Masks follow PyTorch's convention: a boolean ``attn_mask`` (L, S) or (N*H, L, S), or ``key_padding_mask``
(N, S), marks with True the positions that may NOT be attended; float masks are added to the scores; both
get a zero column for each appended key. Composed of differentiable ops: autograd derives the backward.
"""
import math

import numpy as np

from ..dtypes import kind_of
from ..creation import zeros
from ..tensor import Tensor
from .activation import dropout
from .elementwise import as_tensor_operand
from .linalg import linear, matmul
from .pool import pad
from .shape import cat
from .softmax import softmax


def additive_mask(mask, dtype, name):
    """A mask as a float Tensor to add to the scores: a bool mask gives -inf where True (not attended),
    a float mask is used as it is (keeping its graph)."""
    if mask is None:
        return None
    mask = as_tensor_operand(mask)
    if kind_of(mask.dtype) == "b":
        return Tensor(np.where(mask._data, -np.inf, 0.0).astype(dtype))
    if kind_of(mask.dtype) != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported, got {mask.dtype}")
    return mask


def check_attn_mask(mask, shape_3d, batched):
    """PyTorch's shape errors for an attn_mask: (L, S), or (N*H, L, S) ((H, L, S) unbatched)."""
    if mask.ndim == 2 and mask.shape != shape_3d[1:]:
        raise RuntimeError(f"The shape of the 2D attn_mask is {list(mask.shape)}, but should be {shape_3d[1:]}.")
    if mask.ndim == 3 and mask.shape != shape_3d:
        raise RuntimeError(f"The shape of the 3D attn_mask is {list(mask.shape)}, but should be {shape_3d}.")
    if mask.ndim not in (2, 3):
        raise AssertionError(f"For {'batched (3-D)' if batched else 'unbatched (2-D)'} `query`, expected "
                             f"`attn_mask` to be `None`, 2-D or 3-D but found {mask.ndim}-D tensor instead")


def _one_more_key(*masks):
    """The masks (None or additive (..., S)) with a zero column for one appended key."""
    return tuple(None if m is None else pad(m, (0, 1)) for m in masks)


def _static(t, name, n_heads, head_dim):
    if t.shape[0] != n_heads:
        raise AssertionError(f"expecting {name}.size(0) of {n_heads}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """query (L, N, E), key (S, N, kdim), value (S, N, vdim) (or unbatched (L, E), ...). Returns (output (L, N, E),
    weights (N, L, S') averaged over heads, (N, H, L, S') with ``average_attn_weights=False``, None with
    ``need_weights=False``), S' counting the appended keys."""
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"query, key and value should be all 2-D (unbatched) or all 3-D (batched), got "
                             f"shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    if not batched:                                        # a batch of one, in the middle: (L, 1, E)
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = as_tensor_operand(key_padding_mask).unsqueeze(0)
    L, N, E = query.shape
    S, H = key.shape[0], num_heads
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    d = E // H
    if d * H != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {H}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        weights = in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))   # (L|S, N, E)

    mask = additive_mask(attn_mask, q.dtype, "attn_mask")
    if mask is not None:
        check_attn_mask(mask, (N * H if batched else H, L, S), batched)
    padding = additive_mask(key_padding_mask, q.dtype, "key_padding_mask")
    if padding is not None and padding.shape != (N, S):
        raise AssertionError(f"expecting key_padding_mask shape of {(N, S) if batched else (S,)}, but got "
                             f"{list(padding.shape[batched ^ 1:])}")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError(f"bias_{'k' if bias_v is None else 'v'} is set but bias_{'v' if bias_v is None else 'k'}"
                             " is None")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k = cat([k, bias_k.reshape(1, 1, E).expand(1, N, E)])                             # (S + 1, N, E)
        v = cat([v, bias_v.reshape(1, 1, E).expand(1, N, E)])
        mask, padding = _one_more_key(mask, padding)

    def heads(x):                                                                          # (T, N, E) -> (N*H, T, d)
        return x.reshape(x.shape[0], N * H, d).transpose(0, 1)

    q = heads(q)
    k = heads(k) if static_k is None else _static(static_k, "static_k", N * H, d)
    v = heads(v) if static_v is None else _static(static_v, "static_v", N * H, d)
    if add_zero_attn:
        k = cat([k, zeros(N * H, 1, d, dtype=k.dtype)], 1)
        v = cat([v, zeros(N * H, 1, d, dtype=v.dtype)], 1)
        mask, padding = _one_more_key(mask, padding)
    S = k.shape[1]
    if padding is not None:                                                                # (N, S) -> (N*H, 1, S)
        padding = padding.reshape(N, 1, 1, S).expand(N, H, 1, S).reshape(N * H, 1, S)
        mask = padding if mask is None else mask + padding
    scores = matmul(q * math.sqrt(1.0 / d), k.transpose(1, 2))                            # (N*H, L, S)
    if mask is not None:
        scores = mask + scores
    attention = softmax(scores, -1)
    if training and dropout_p > 0:
        attention = dropout(attention, dropout_p)
    out = matmul(attention, v).transpose(0, 1).reshape(L * N, E)                          # (L*N, E)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    attention = attention.reshape(N, H, L, S)
    if average_attn_weights:
        attention = attention.mean(1)
    return out, (attention if batched else attention.squeeze(0))


__all__ = ["multi_head_attention_forward"]
