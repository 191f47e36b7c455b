"""A LLaMA-style decoder-only Transformer written with minigrad (no PyTorch).

    tokens (B, T) ─ tok_emb ─> x (B, T, D)
    for each block:  x = x + attn(norm(x))    causal multi-head attention, rotary positions
                     x = x + mlp(norm(x))     SwiGLU: w2(silu(w1 x) * w3 x)
    norm ─ head ─> logits (B, T, V)

The norms are RMSNorm (LLaMA) or, with ``norm="layernorm"``, LayerNorm, to compare the two as the
RMSNorm paper does. Parameter names follow the usual LLaMA layout (``tok_emb.weight``,
``blocks.0.attn.q_proj.weight``, ``blocks.0.mlp.w1.weight``, ``norm.weight``, ``head.weight``), and
``bench/torch_llama.py`` builds the same tree in PyTorch, so one ``state_dict`` loads into both.
"""
import math
from dataclasses import asdict, dataclass

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import Function
from minigrad.kernels.fused import rotate_pairs, swiglu_backward

IGNORE_INDEX = -100  # targets equal to this do not count in the loss (the prompt of the synthetic task)


@dataclass
class LlamaConfig:
    vocab_size: int
    seq_len: int            # the longest sequence the rotary tables cover
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    norm: str = "rmsnorm"   # or "layernorm"
    norm_eps: float = 1e-5
    rope_base: float = 10000.0

    def __post_init__(self):
        if self.norm not in ("rmsnorm", "layernorm"):
            raise ValueError(f"norm must be 'rmsnorm' or 'layernorm' (got {self.norm!r})")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(f"d_model ({self.d_model}) must be n_heads ({self.n_heads}) times an even head size")

    @property
    def head_dim(self):
        return self.d_model // self.n_heads

    @property
    def hidden_dim(self):
        """SwiGLU width: LLaMA's 2/3 * 4 * D (same parameter count as a 4D GELU MLP), rounded up to 64."""
        return 64 * math.ceil(8 * self.d_model / 3 / 64)

    def to_dict(self):
        return asdict(self)

    def parameter_shapes(self):
        """``{name: shape}`` of the model's parameters in ``named_parameters()`` order, computed without
        building it: a checkpoint is checked against these before any array is allocated."""
        d, h, v = self.d_model, self.hidden_dim, self.vocab_size
        norm = ("weight",) if self.norm == "rmsnorm" else ("weight", "bias")
        shapes = {"tok_emb.weight": (v, d)}
        for i in range(self.n_layers):
            block = f"blocks.{i}."
            shapes.update({f"{block}attn_norm.{p}": (d,) for p in norm})
            shapes.update({f"{block}attn.{proj}_proj.weight": (d, d) for proj in "qkvo"})
            shapes.update({f"{block}mlp_norm.{p}": (d,) for p in norm})
            shapes.update({f"{block}mlp.w1.weight": (h, d), f"{block}mlp.w2.weight": (d, h),
                           f"{block}mlp.w3.weight": (h, d)})
        shapes.update({f"norm.{p}": (d,) for p in norm})
        shapes["head.weight"] = (v, d)
        return shapes

    def num_parameters(self):
        """The parameter count of ``parameter_shapes()``, in O(1) (a config may declare a million layers)."""
        d, h, v = self.d_model, self.hidden_dim, self.vocab_size
        norm = d if self.norm == "rmsnorm" else 2 * d
        return 2 * v * d + self.n_layers * (2 * norm + 4 * d * d + 3 * h * d) + norm


def rope_tables(seq_len, head_dim, base=10000.0):
    """cos and sin of the rotary angles, each (seq_len, head_dim // 2), in float64.

    Position t rotates the feature pair (i, i + head_dim/2) by the angle t * base^(-2i / head_dim)
    (the "rotate-half" pairing of GPT-NeoX and Hugging Face's LLaMA).
    """
    inv_freq = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)   # (hd/2,)
    angles = np.outer(np.arange(seq_len, dtype=np.float64), inv_freq)               # (T, hd/2)
    return np.cos(angles), np.sin(angles)


def rotate(x, cos, sin):
    """Turn each feature pair (x1, x2) = (x[..., i], x[..., i + hd/2]) of the ndarray x (..., T, hd) by
    its angle: y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin, with cos, sin (T, hd/2), into one fresh
    array; rotate(y, cos, -sin) turns it back. One fused pass (``minigrad.kernels.fused.rotate_pairs``)."""
    return rotate_pairs(x, cos, sin)


class Rotary(Function):
    """Rotary position embedding of q or k (B, H, T, hd): each feature pair turns by the angle of its
    position and frequency (``rotate``). A rotation is orthogonal, so the backward pass is the rotation
    by the opposite angle: dx1 = dy1 cos + dy2 sin, dx2 = dy2 cos - dy1 sin.
    """

    @staticmethod
    def forward(ctx, x, cos, sin):
        # x (B, H, T, hd); cos, sin (T, hd/2) ndarrays in x's dtype
        ctx.cos, ctx.sin = cos, sin
        return rotate(np.asarray(x), cos, sin)

    @staticmethod
    def backward(ctx, dout):
        return rotate(np.asarray(dout), ctx.cos, -ctx.sin), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        """create_graph=True: the backward is the opposite rotation, itself a Rotary node (linear in dout)."""
        return Rotary.apply(dout, ctx.cos, -ctx.sin), None, None


def make_norm(cfg):
    if cfg.norm == "rmsnorm":
        return nn.RMSNorm(cfg.d_model, eps=cfg.norm_eps)
    return nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)


class Attention(nn.Module):
    """Causal multi-head self-attention with rotary positions on q and k."""

    def __init__(self, cfg):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.q_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.k_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.v_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.o_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        heads = (b, t, self.n_heads, d // self.n_heads)
        q = self.q_proj(x).view(heads).transpose(1, 2)   # (B, H, T, hd)
        k = self.k_proj(x).view(heads).transpose(1, 2)
        v = self.v_proj(x).view(heads).transpose(1, 2)
        q, k = Rotary.apply(q, cos, sin), Rotary.apply(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # (B, H, T, hd)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, d))


class SwiGLU(Function):
    """out = silu(a) * b = a s b with s = sigmoid(a), as one node whose backward is one fused pass
    (F.silu(a) * b makes two nodes and seven passes): da = dout b s (1 + a (1 - s)), db = dout a s
    (``minigrad.kernels.fused.swiglu_backward``)."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = np.asarray(a), np.asarray(b)
        s = np.negative(x)
        with np.errstate(over="ignore"):  # exp(-x) = inf for x << 0 gives s = 1/inf = 0, the right limit
            np.exp(s, out=s)
        s += 1
        np.reciprocal(s, out=s)
        ctx.save_for_backward(x, y, s)
        out = x * s
        out *= y
        return out

    @staticmethod
    def backward(ctx, dout):
        return swiglu_backward(np.asarray(dout), *ctx.saved_tensors)

    @staticmethod
    def graph_backward(ctx, dout):
        """create_graph=True: the same formulas with minigrad ops, so they are differentiated again."""
        x, y, _ = ctx.saved_tensors
        a, b = ctx.input_tensor(0, x), ctx.input_tensor(1, y)
        s = a.sigmoid()
        return dout * b * s * (1 + a * (1 - s)), dout * a * s


class MLP(nn.Module):
    """SwiGLU feed-forward: w2(silu(w1 x) * w3 x)."""

    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.d_model, cfg.hidden_dim, bias=False)
        self.w2 = nn.Linear(cfg.hidden_dim, cfg.d_model, bias=False)
        self.w3 = nn.Linear(cfg.d_model, cfg.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(SwiGLU.apply(self.w1(x), self.w3(x)))


class Block(nn.Module):
    """Pre-norm residual block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, cfg):
        super().__init__()
        self.attn_norm = make_norm(cfg)
        self.attn = Attention(cfg)
        self.mlp_norm = make_norm(cfg)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    """Token ids (B, T) to next-token logits (B, T, vocab_size)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.norm = make_norm(cfg)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.rope = rope_tables(cfg.seq_len, cfg.head_dim, cfg.rope_base)  # float64, not parameters
        self.reset_parameters()

    def reset_parameters(self):
        """GPT-2's init: weight matrices N(0, 0.02), the two projections back into the residual stream
        (o_proj, w2) scaled by 1/sqrt(2 * n_layers) so the residual's variance does not grow with depth;
        norms start as the identity."""
        residual_std = 0.02 / math.sqrt(2 * self.cfg.n_layers)
        for name, p in self.named_parameters():
            if p.ndim == 2:
                residual = name.endswith(("o_proj.weight", "w2.weight"))
                nn.init.normal_(p, mean=0.0, std=residual_std if residual else 0.02)

    def forward(self, idx):
        t = idx.shape[1]
        if t > self.cfg.seq_len:
            raise ValueError(f"sequence of length {t} is longer than the model's seq_len {self.cfg.seq_len}")
        x = self.tok_emb(idx)                                       # (B, T, D)
        cos, sin = (table[:t].astype(x.dtype) for table in self.rope)  # (T, hd/2)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))                              # (B, T, V)


def lm_loss(F, logits, targets):
    """Mean next-token cross entropy over the targets that are not IGNORE_INDEX.

    ``F`` is ``minigrad.nn.functional`` or ``torch.nn.functional``: the training loop is the same code
    for both libraries."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE_INDEX)
