"""A LLaMA-style decoder-only Transformer written with minigrad (no PyTorch).

    tokens (B, T) ─ tok_emb ─> x (B, T, D)
    for each block:  x = x + attn(norm(x))    causal multi-head attention, rotary positions
                     x = x + mlp(norm(x))     SwiGLU: w2(silu(w1 x) * w3 x)
    norm ─ head ─> logits (B, T, V)

The norm is RMSNorm (LLaMA) by default; ``norm`` picks any norm of the registry that can stand in a
Transformer (``minigrad.ops.norm.registry.transformer_norms()``: "rmsnorm", "layernorm", "scalenorm", "dyt")
or "none", to compare them as the RMSNorm, ScaleNorm and DyT papers do. Where the norms go
(``placement``) and QK-norm (``qk_norm``) are options too:

    placement="pre"       x = x + f(norm(x)), a final norm before the head       (GPT-2, LLaMA; the default)
    placement="post"      x = norm(x + f(x)), no final norm                      (the original Transformer)
    placement="peri"      x = x + norm_out(f(norm(x))), a final norm             (Peri-LN, Kim et al. 2025;
                                                                                 Gemma 2's "sandwich" norm)
    placement="deepnorm"  x = norm(alpha * x + f(x)), alpha = (2N)^(1/4), and the value, output and MLP
                          matrices initialised smaller by beta = (8N)^(-1/4)    (DeepNet, Wang et al. 2022)
    qk_norm="head"        RMSNorm of q and k over each head's features, before the rotation (Qwen3, Gemma 3)
    qk_norm="model"       RMSNorm of q and k over all D features, before splitting heads (OLMo 2)

Parameter names follow the usual LLaMA layout (``tok_emb.weight``,
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
from minigrad.kernels.fused import rotate_pairs, swiglu_backward, swiglu_forward
from minigrad.ops.norm.registry import transformer_norms

IGNORE_INDEX = -100  # targets equal to this do not count in the loss (the prompt of the synthetic task)
NORMS = tuple(transformer_norms()) + ("none",)      # the choices of LlamaConfig.norm
PLACEMENTS = ("pre", "post", "peri", "deepnorm")
QK_NORMS = ("none", "head", "model")


@dataclass
class LlamaConfig:
    vocab_size: int
    seq_len: int            # the longest sequence the rotary tables cover
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    norm: str = "rmsnorm"   # any of NORMS
    norm_eps: float = 1e-5
    rope_base: float = 10000.0
    placement: str = "pre"  # any of PLACEMENTS (module docstring)
    qk_norm: str = "none"   # any of QK_NORMS

    def __post_init__(self):
        for name, choices in (("norm", NORMS), ("placement", PLACEMENTS), ("qk_norm", QK_NORMS)):
            if getattr(self, name) not in choices:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))} (got {getattr(self, name)!r})")
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
        shapes = {"tok_emb.weight": (v, d)}
        for i in range(self.n_layers):
            block = f"blocks.{i}."
            shapes.update(self._norm_shapes(f"{block}attn_norm.", d))
            shapes.update({f"{block}attn.{proj}_proj.weight": (d, d) for proj in "qk"})
            qk = self.head_dim if self.qk_norm == "head" else d
            for proj in "qk" if self.qk_norm != "none" else "":
                shapes.update({f"{block}attn.{proj}_norm.weight": (qk,)})
            shapes.update({f"{block}attn.{proj}_proj.weight": (d, d) for proj in "vo"})
            if self.placement == "peri":
                shapes.update(self._norm_shapes(f"{block}attn_out_norm.", d))
            shapes.update(self._norm_shapes(f"{block}mlp_norm.", d))
            shapes.update({f"{block}mlp.w1.weight": (h, d), f"{block}mlp.w2.weight": (d, h),
                           f"{block}mlp.w3.weight": (h, d)})
            if self.placement == "peri":
                shapes.update(self._norm_shapes(f"{block}mlp_out_norm.", d))
        if self.final_norm:
            shapes.update(self._norm_shapes("norm.", d))
        shapes["head.weight"] = (v, d)
        return shapes

    def _norm_shapes(self, prefix, d):
        spec = transformer_norms().get(self.norm)
        return {} if spec is None else {prefix + name: shape for name, shape in spec.transformer_params(d).items()}

    @property
    def final_norm(self):
        """Whether a norm stands before the head: not after post-norm blocks, whose output is normalized."""
        return self.placement in ("pre", "peri")

    def num_parameters(self):
        """The parameter count of ``parameter_shapes()``, in O(1) (a config may declare a million layers)."""
        d, h, v = self.d_model, self.hidden_dim, self.vocab_size
        norm = sum(math.prod(s) for s in self._norm_shapes("", d).values())
        norms = (4 if self.placement == "peri" else 2) * norm
        qk = {"none": 0, "head": 2 * self.head_dim, "model": 2 * d}[self.qk_norm]
        return 2 * v * d + self.n_layers * (norms + qk + 4 * d * d + 3 * h * d) + self.final_norm * norm


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
    """The config's norm over the D features, from the registry of norms (``nn.Identity`` for "none")."""
    spec = transformer_norms().get(cfg.norm)
    return nn.Identity() if spec is None else spec.make_transformer_norm(nn, cfg.d_model, cfg.norm_eps)


class Attention(nn.Module):
    """Causal multi-head self-attention with rotary positions on q and k, and QK-norm if the config asks."""

    def __init__(self, cfg):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.q_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.k_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.qk_norm = cfg.qk_norm
        if cfg.qk_norm != "none":           # RMSNorm over each head's features, or over all D of them
            size = cfg.head_dim if cfg.qk_norm == "head" else cfg.d_model
            self.q_norm, self.k_norm = (nn.RMSNorm(size, eps=cfg.norm_eps) for _ in range(2))
        self.v_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.o_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        heads = (b, t, self.n_heads, d // self.n_heads)
        q, k = self.q_proj(x), self.k_proj(x)            # (B, T, D)
        if self.qk_norm == "model":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.view(heads), k.view(heads)             # (B, T, H, hd)
        if self.qk_norm == "head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)      # (B, H, T, hd)
        v = self.v_proj(x).view(heads).transpose(1, 2)
        q, k = Rotary.apply(q, cos, sin), Rotary.apply(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # (B, H, T, hd)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, d))


class SwiGLU(Function):
    """out = silu(a) * b = a s b with s = sigmoid(a), as one node whose forward and backward are one fused pass
    each (F.silu(a) * b makes two nodes and seven passes backward): da = dout b s (1 + a (1 - s)), db = dout a s
    (``minigrad.kernels.fused.swiglu_forward`` and ``swiglu_backward``)."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = np.asarray(a), np.asarray(b)
        out, s = swiglu_forward(x, y)
        ctx.save_for_backward(x, y, s)
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
    """A residual block, the norms placed as ``cfg.placement`` says (module docstring); pre-norm by default:
    x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, cfg):
        super().__init__()
        self.placement = cfg.placement
        self.attn_norm = make_norm(cfg)
        self.attn = Attention(cfg)
        if cfg.placement == "peri":
            self.attn_out_norm = make_norm(cfg)
        self.mlp_norm = make_norm(cfg)
        self.mlp = MLP(cfg)
        if cfg.placement == "peri":
            self.mlp_out_norm = make_norm(cfg)
        self.alpha = (2 * cfg.n_layers) ** 0.25 if cfg.placement == "deepnorm" else 1.0   # DeepNorm's residual scale

    def forward(self, x, cos, sin):
        if self.placement == "pre":
            x = x + self.attn(self.attn_norm(x), cos, sin)
            return x + self.mlp(self.mlp_norm(x))
        if self.placement == "peri":
            x = x + self.attn_out_norm(self.attn(self.attn_norm(x), cos, sin))
            return x + self.mlp_out_norm(self.mlp(self.mlp_norm(x)))
        residual = (lambda x: x * self.alpha) if self.alpha != 1.0 else (lambda x: x)   # post-norm and DeepNorm
        x = self.attn_norm(residual(x) + self.attn(x, cos, sin))
        return self.mlp_norm(residual(x) + self.mlp(x))


class Llama(nn.Module):
    """Token ids (B, T) to next-token logits (B, T, vocab_size)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.norm = make_norm(cfg) if cfg.final_norm else nn.Identity()
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.rope = rope_tables(cfg.seq_len, cfg.head_dim, cfg.rope_base)  # float64, not parameters
        self.reset_parameters()

    def reset_parameters(self):
        """GPT-2's init: weight matrices N(0, 0.02), the two projections back into the residual stream
        (o_proj, w2) scaled by 1/sqrt(2 * n_layers) so the residual's variance does not grow with depth;
        norms start as the identity. DeepNorm instead scales v_proj, o_proj, w1, w2 and w3 by
        beta = (8 * n_layers)^(-1/4) (DeepNet's decoder-only rule) and leaves the residual projections alone."""
        deepnorm = self.cfg.placement == "deepnorm"
        beta = (8 * self.cfg.n_layers) ** -0.25
        residual_std = 0.02 if deepnorm else 0.02 / math.sqrt(2 * self.cfg.n_layers)
        for name, p in self.named_parameters():
            if p.ndim == 2:
                residual = name.endswith(("o_proj.weight", "w2.weight"))
                std = residual_std if residual else 0.02
                if deepnorm and name.endswith(("v_proj.weight", "o_proj.weight", "w1.weight", "w2.weight",
                                               "w3.weight")):
                    std *= beta
                nn.init.normal_(p, mean=0.0, std=std)

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
