"""The PyTorch twin of examples/llama.py, and the same training run in PyTorch.

The model is written independently with PyTorch ops (rotary embedding in its usual "rotate-half" form)
but with the same module tree, so ``state_dict`` keys match and minigrad's initial weights load
unchanged. Training reuses the example's ``Trainer`` and tasks (both take the tensor library as an
argument), so both libraries see the same batches, schedule and clipping:

    python bench/torch_llama.py --text --out runs/torch_shakespeare      # the shipped tinyshakespeare
    python bench/torch_llama.py --compare runs/tiny_transformer/tinyshakespeare-rmsnorm/history.json \\
        runs/torch_shakespeare/history.json --plot docs/results/text_lm_curves.png

The command-line options are tiny_transformer.py's; ``--threads`` sets PyTorch's thread count.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def rope_tables(seq_len, head_dim, base=10000.0):
    """cos and sin of the rotary angles t * base^(-2i / head_dim), each (seq_len, head_dim // 2), float64
    (examples/llama.py's tables, computed here so that importing this module does not import minigrad:
    bench/bench_transformer.py times PyTorch in a process without it)."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)     # (hd/2,)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inv_freq)              # (T, hd/2)
    return angles.cos(), angles.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.q_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.k_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.v_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.o_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q, k, v = (proj(x).view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)
                   for proj in (self.q_proj, self.k_proj, self.v_proj))          # (B, H, T, hd)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, d))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.d_model, cfg.hidden_dim, bias=False)
        self.w2 = nn.Linear(cfg.hidden_dim, cfg.d_model, bias=False)
        self.w3 = nn.Linear(cfg.d_model, cfg.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def make_norm(cfg):
    return (nn.RMSNorm if cfg.norm == "rmsnorm" else nn.LayerNorm)(cfg.d_model, eps=cfg.norm_eps)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attn_norm, self.attn = make_norm(cfg), Attention(cfg)
        self.mlp_norm, self.mlp = make_norm(cfg), MLP(cfg)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class TorchLlama(nn.Module):
    """examples/llama.py's Llama in PyTorch (same config object, same state_dict keys)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.norm = make_norm(cfg)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        cos, sin = (torch.cat([a, a], dim=-1)                                    # (T, hd): both halves
                    for a in rope_tables(cfg.seq_len, cfg.head_dim, cfg.rope_base))
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok_emb(idx)
        cos, sin = self.cos[:t].to(x.dtype), self.sin[:t].to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def twin_of(mg_model):
    """A TorchLlama holding the same weights (and dtype) as a minigrad Llama."""
    return twin_from_arrays(mg_model.cfg, {k: np.array(v) for k, v in mg_model.state_dict().items()})


def twin_from_arrays(cfg, arrays):
    """A TorchLlama for config ``cfg`` holding the weights ``arrays`` (state_dict key -> ndarray), in their dtype."""
    model = TorchLlama(cfg)
    state = {k: torch.from_numpy(np.asarray(v)) for k, v in arrays.items()}
    model.to(next(iter(state.values())).dtype).load_state_dict(state)
    return model


def train(argv):
    """tiny_transformer.py's run with PyTorch: same config, initial weights, batches and evaluations."""
    sys.path.insert(0, EXAMPLES)
    import tiny_transformer                  # imports minigrad: the initial weights are minigrad's
    parser = tiny_transformer.build_parser()
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    cfg, _, _ = tiny_transformer.resolve_config(args)
    task = tiny_transformer.make_task(cfg)
    model = twin_of(tiny_transformer.make_model(cfg, len(task.vocab)))
    trainer = tiny_transformer.Trainer(torch, model, task, cfg)
    bar = tiny_transformer.progress_bar(cfg["steps"], 0)
    start = time.perf_counter()
    while trainer.step < cfg["steps"]:
        bar.set_postfix_str(f"loss {trainer.train_step():.4f}")
        bar.update(1)
        if trainer.eval_due():
            bar.write(f"step {trainer.step}: " + ", ".join(f"{k} {v:.4f}" for k, v in trainer.evaluate().items()))
    bar.close()
    args.out = args.out or os.path.join("runs", "torch_llama", os.path.basename(tiny_transformer.run_dir(cfg)))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump({"config": cfg, "library": f"torch {torch.__version__}", "wall_time": time.perf_counter() - start,
                   **trainer.history}, f)
    print(f"done: {trainer.history['evals'][-1]} | saved {args.out}/history.json")


def compare(minigrad_json, torch_json, plot):
    """Print both runs' final evaluations and draw both loss curves into one PNG."""
    runs = {}
    for name, path in (("minigrad", minigrad_json), ("PyTorch", torch_json)):
        with open(path) as f:
            runs[name] = json.load(f)
    finals = {name: run["evals"][-1] for name, run in runs.items()}
    for name, final in finals.items():
        print(f"{name:8s}: step {final['step']}, " + ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k != "step"))
    metric = "val_loss" if "val_loss" in finals["minigrad"] else "loss"
    print(f"|difference| in {metric}: {abs(finals['minigrad'][metric] - finals['PyTorch'][metric]):.4f}")
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, (name, run) in enumerate(runs.items()):
            loss = np.array(run["loss"])
            smooth = np.convolve(loss, np.ones(20) / 20, mode="valid")       # 20-step moving average
            ax.plot(np.arange(20, len(loss) + 1), smooth, lw=1, color=f"C{i}", alpha=0.6, label=f"{name} train")
            ax.plot([e["step"] for e in run["evals"]], [e[metric] for e in run["evals"]], "o--", ms=3,
                    color=f"C{i}", label=f"{name} validation")
        ax.set(xlabel="step", ylabel="loss (nats/char)", title="Same model, weights and batches: minigrad vs PyTorch")
        ax.legend()
        fig.tight_layout()
        os.makedirs(os.path.dirname(plot) or ".", exist_ok=True)
        fig.savefig(plot, dpi=90)
        print(f"wrote {plot}")


if __name__ == "__main__":
    if "--compare" in sys.argv:
        p = argparse.ArgumentParser(description="compare a minigrad and a PyTorch run")
        p.add_argument("--compare", nargs=2, metavar=("MINIGRAD_HISTORY", "TORCH_HISTORY"), required=True)
        p.add_argument("--plot", metavar="PNG")
        a = p.parse_args()
        compare(*a.compare, a.plot)
    else:
        train(sys.argv[1:])
