"""Per-op autograd overhead: a 100-op chain of mul/add/tanh on a 4x4 tensor, forward + backward.

On tensors this small the arithmetic is free, so the time per op is the framework's
bookkeeping: creating the output and its graph node, and running the node's backward.
minigrad and PyTorch (when installed, 1 thread) run interleaved; medians are reported.

    python bench/bench_engine.py [--rounds 31] [--json PATH]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import environment, table, time_interleaved, write_json  # noqa: E402

import minigrad as mg  # noqa: E402

N_OPS = 99  # 33 x (mul, add, tanh): with the input, a 100-node chain


def chain(x):
    y = x
    for _ in range(N_OPS // 3):
        y = (y * 1.001 + 0.01).tanh()
    return y


def step(x, g):
    x.grad = None
    chain(x).backward(g)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31, help="interleaved timed rounds (median reported)")
    parser.add_argument("--json", help="also write the results as JSON here")
    args = parser.parse_args(argv)

    x = mg.randn(4, 4, requires_grad=True)
    g = mg.ones(4, 4)
    calls = {"minigrad": lambda: step(x, g)}
    try:
        import torch
        torch.set_num_threads(1)
        tx, tg = torch.randn(4, 4, requires_grad=True), torch.ones(4, 4)
        calls["pytorch"] = lambda: step(tx, tg)
    except ImportError:
        print("PyTorch not installed: minigrad only")

    medians = time_interleaved(calls, rounds=args.rounds, warmup=20, min_time=0.02)
    per_op = {k: v / N_OPS * 1e6 for k, v in medians.items()}
    rows = [[k, f"{medians[k] * 1e3:.3f}", f"{per_op[k]:.2f}",
             f"{per_op[k] / per_op['pytorch']:.2f}x" if "pytorch" in per_op else "—"] for k in calls]
    print(f"Forward + backward of a {N_OPS}-op mul/add/tanh chain on 4x4 float32 "
          f"(median of {args.rounds} interleaved rounds)\n")
    print(table(["framework", "ms per chain", "us per op", "vs PyTorch"], rows))
    if args.json:
        write_json(args.json, {"us_per_op": per_op, "environment": environment()})
    return per_op


if __name__ == "__main__":
    main()
