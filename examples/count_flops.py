"""Count the floating-point operations of one training step of the tiny Transformer, module by module.

    python examples/count_flops.py                  # the model of examples/llama.py, 4 layers, D=128
    python examples/count_flops.py --depth 4        # down to each block's attention and MLP

``minigrad.utils.flop_counter.FlopCounterMode`` (PyTorch's ``torch.utils.flop_counter``) counts the matrix
products of the forward and backward passes: a (m, k) @ (k, n) product is 2*m*k*n flops. Three things to read
in what it prints:

* the backward costs twice the forward: each product y = x W gives two in the backward, dx = dy W^T and
  dW = x^T dy (every product's input needs a gradient here, even the first's: it is the embedding's output);
* the rule of thumb "a training step costs 6 N flops per token" (N the parameters: 2 N forward, 4 N
  backward) comes out close; it leaves out attention's own products (scores and weighted values, which grow
  with the sequence length) and counts the embedding table, which is looked up, not multiplied;
* the norms, softmax and SwiGLU count 0: they are elementwise and reductions. Their cost is the memory they
  move, not arithmetic (docs/benchmarks.md measures the norms against a memory copy).
"""
import argparse
import os
import sys

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.utils.flop_counter import FlopCounterMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # llama.py lives next to this file
from llama import Llama, LlamaConfig, lm_loss  # noqa: E402


def count_step(batch_size=32, seq_len=64, d_model=128, n_layers=4, n_heads=4, vocab=256, depth=3, seed=0):
    """One forward and backward pass of an untrained model on random tokens, counted. Returns the model, the
    forward's counter and the whole step's counter."""
    mg.manual_seed(seed)
    model = Llama(LlamaConfig(vocab_size=vocab, seq_len=seq_len, d_model=d_model, n_layers=n_layers,
                              n_heads=n_heads))
    tokens = np.random.default_rng(seed).integers(0, vocab, size=(batch_size, seq_len + 1))
    x, y = mg.from_numpy(tokens[:, :-1]), mg.from_numpy(tokens[:, 1:])
    with FlopCounterMode(display=False, depth=depth) as forward:
        loss = lm_loss(F, model(x), y)
    with FlopCounterMode(display=False, depth=depth) as step:
        loss = lm_loss(F, model(x), y)
        loss.backward()
    return model, forward, step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=3, help="module levels in the table (default 3)")
    args = parser.parse_args(argv)

    model, forward, step = count_step(depth=args.depth)
    tokens = 32 * 64
    params = sum(p.numel() for p in model.parameters())
    total, fwd = step.get_total_flops(), forward.get_total_flops()
    print("One training step (B=32, T=64, D=128, 4 layers, 4 heads, vocab 256), forward and backward:\n")
    print(step.get_table())
    print(f"\nforward {fwd / 1e9:.3f} GFLOP, backward {(total - fwd) / 1e9:.3f} GFLOP: {(total - fwd) / fwd:.2f}x "
          "the forward")
    print(f"6 N per token: 6 x {params:,} parameters x {tokens:,} tokens = {6 * params * tokens / 1e9:.3f} GFLOP, "
          f"counted {total / 1e9:.3f} GFLOP")
    return dict(model=model, forward=forward, step=step, params=params, tokens=tokens)


if __name__ == "__main__":
    main()
