"""Multi-head attention and the Transformer layers, with PyTorch's arguments, parameter names (so
state_dicts load both ways), initialization and masks.

Attention per head h, with E = embed_dim, H = num_heads, d = E / H:

    q_h = (query W_q^T + b_q)[..., h*d:(h+1)*d],  k_h, v_h alike
    weights_h = dropout(softmax(q_h k_h^T / sqrt(d) + mask))          (N, H, L, S)
    output = concat_h(weights_h v_h) W_o^T + b_o

Masks follow ``nn.MultiheadAttention``'s convention: a boolean ``attn_mask`` (L, S) or (N*H, L, S) or
``key_padding_mask`` (N, S) marks with True the positions that may NOT be attended; float masks are
added to the scores. Everything is composed from differentiable ops; autograd derives the backward.
"""
import copy
import math

import numpy as np

from .. import dtypes
from .._checks import as_index
from ..creation import empty, full
from ..ops.elementwise import as_tensor_operand
from ..ops.linalg import linear, matmul
from ..ops.mha import multi_head_attention_forward
from ..ops.shape import triu
from ..tensor import Tensor, check_device
from . import functional as F
from . import init
from .layers import Dropout, Linear, ModuleList, NonDynamicallyQuantizableLinear
from .module import Module, Parameter
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]


class MultiheadAttention(Module):
    """Multi-head attention as ``torch.nn.MultiheadAttention`` (the computation: ``multi_head_attention_forward``).

    Parameters: ``in_proj_weight`` (3E, E) holding W_q, W_k, W_v stacked (or ``q_proj_weight``,
    ``k_proj_weight`` (E, kdim), ``v_proj_weight`` (E, vdim) when kdim or vdim differ from E),
    ``in_proj_bias`` (3E,), ``bias_k`` and ``bias_v`` (1, 1, E) with ``add_bias_kv``, and ``out_proj`` (a Linear
    E -> E). Initialization as PyTorch: xavier-uniform projections, zero biases, xavier-normal bias_k and bias_v,
    ``out_proj.weight`` as a Linear's.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        check_device(device)
        embed_dim, num_heads = (as_index(n) if isinstance(n, Tensor) and as_index(n) is not None else n
                                for n in (embed_dim, num_heads))   # 0-d integer tensors, as PyTorch takes them
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError(f"embed_dim must be divisible by num_heads (got embed_dim={embed_dim}, "
                                 f"num_heads={num_heads})")
        super().__init__()
        dtype = dtype or dtypes.get_default_dtype()
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype)) if bias else None
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(one mask of (N, num_heads, L, L), its type: 1 key padding only, 2 with an attention mask, None without
        either) for self-attention on ``query`` (N, L, E), as PyTorch's fast path combines them (boolean masks add as
        ``or``, float masks as sums)."""
        merged, mask_type = key_padding_mask, None if key_padding_mask is None else 1
        if attn_mask is not None:
            batch, length, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch, -1, length, length)
            else:
                merged = attn_mask.view(1, 1, length, length).expand(batch, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch, 1, 1, length).expand(-1, self.num_heads, -1, -1)
        return merged, mask_type

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """query (L, N, E), key (S, N, kdim), value (S, N, vdim) ((N, L, E) ... with batch_first, or unbatched
        (L, E) ...). Returns (output (L, N, E), weights (N, L, S) averaged over heads, (N, H, L, S) with
        ``average_attn_weights=False``, or None with ``need_weights=False``)."""
        if query.ndim == 3 and self.batch_first:             # to (L, N, E)
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        output, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if query.ndim == 3 and self.batch_first:
            output = output.transpose(0, 1)                    # (N, L, E)
        return output, weights


def _get_activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: ``n_blocks - 1`` attention modules (``self_attn``, then
    ``multihead_attn`` over the memory), the feed-forward network ``linear2(dropout(activation(linear1(x))))``,
    and per block a LayerNorm ``norm{k}`` and a Dropout ``dropout{k}``, registered in PyTorch's order (so
    state_dict keys come out in the same order)."""

    def __init__(self, n_blocks, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                 norm_first, bias, device, dtype):
        check_device(device)
        super().__init__()
        for name in ("self_attn", "multihead_attn")[:n_blocks - 1]:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                   batch_first=batch_first, dtype=dtype))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        for k in range(1, n_blocks + 1):
            setattr(self, f"norm{k}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for k in range(1, n_blocks + 1):
            setattr(self, f"dropout{k}", Dropout(dropout))
        self.activation = _get_activation(activation)

    def _ff_block(self, x, dropout):
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def _residual(self, x, norm, block):
        """x + block(norm(x)) with ``norm_first``, norm(x + block(x)) otherwise (post-norm)."""
        return x + block(norm(x)) if self.norm_first else norm(x + block(x))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward network, each wrapped in a residual connection and a LayerNorm
    (after the residual, or before the block with ``norm_first``)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(2, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, bias, device, dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        def self_attention(x):
            out = self.self_attn(x, x, x, attn_mask=src_mask, key_padding_mask=src_key_padding_mask,
                                 need_weights=False, is_causal=is_causal)[0]
            return self.dropout1(out)

        x = self._residual(src, self.norm1, self_attention)
        return self._residual(x, self.norm2, lambda y: self._ff_block(y, self.dropout2))


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's output (``memory``), then a feed-forward network, each
    with a residual connection and a LayerNorm (``norm_first`` as in the encoder layer)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(3, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, bias, device, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        def self_attention(x):
            out = self.self_attn(x, x, x, attn_mask=tgt_mask, key_padding_mask=tgt_key_padding_mask,
                                 need_weights=False, is_causal=tgt_is_causal)[0]
            return self.dropout1(out)

        def cross_attention(x):
            out = self.multihead_attn(x, memory, memory, attn_mask=memory_mask,
                                      key_padding_mask=memory_key_padding_mask, need_weights=False,
                                      is_causal=memory_is_causal)[0]
            return self.dropout2(out)

        x = self._residual(tgt, self.norm1, self_attention)
        x = self._residual(x, self.norm2, cross_attention)
        return self._residual(x, self.norm3, lambda y: self._ff_block(y, self.dropout3))


def _clones(layer, num_layers):
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (independent parameters), then ``norm`` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` (independent parameters), then ``norm`` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The causal mask (sz, sz): 0 on and below the diagonal, -inf above (position i sees 0..i)."""
    check_device(device)
    return triu(full((sz, sz), -math.inf, dtype=dtype or dtypes.get_default_dtype()), diagonal=1)


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", as ``torch.nn.Transformer``: an
    encoder and a decoder stack, each ending in a LayerNorm; every matrix parameter xavier-uniform."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        check_device(device)
        super().__init__()
        layer_args = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                          layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first,
                          bias=bias, dtype=dtype)
        def stack(custom, stack_type, layer_type, num_layers):   # a custom stack, or layers and a final norm
            if custom is not None:
                return custom
            return stack_type(layer_type(d_model, nhead, **layer_args), num_layers,
                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))

        self.encoder = stack(custom_encoder, TransformerEncoder, TransformerEncoderLayer, num_encoder_layers)
        self.decoder = stack(custom_decoder, TransformerDecoder, TransformerDecoderLayer, num_decoder_layers)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_axis = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch_axis] != tgt.shape[batch_axis]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
