"""Activation checkpointing on the tiny LLaMA-style Transformer: memory saved and time paid, minigrad and PyTorch.

    python bench/bench_checkpoint.py            # B=32, T=64, D=128, L=4 (bench_transformer.py's model), 3 rounds
    python bench/bench_checkpoint.py --quick    # 1 round, fewer steps

Each library trains its model (bench_transformer.py's step: forward, cross-entropy, backward, clipping, AdamW) once
as it is and once with every block under ``checkpoint(block, x, cos, sin, use_reentrant=False)``, each in a fresh
process, rounds alternating. A process reports its peak RSS above the RSS it had before its first step (the
activations a step holds, plus gradients and optimizer state from the first step on, and what the first step loads
once), the same peak above the RSS after a step on one token (which loads that with almost no activations), and its
median step time.
Printed as a markdown table: per library the memory and time with checkpointing over without.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_transformer import (current_rss_mb, make_step, minigrad_model, peak_rss_mb, time_steps,  # noqa: E402
                               torch_model, write_weights)
from common import Worker, available, emit, machine_line, run_rounds, set_threads, table  # noqa: E402

THREADS = 2


def checkpointed(lib, model):
    """``model`` with each block's forward run under activation checkpointing (``lib``'s)."""
    checkpoint = lib.utils.checkpoint.checkpoint
    for block in model.blocks:
        forward = block.forward
        block.forward = lambda x, cos, sin, forward=forward: checkpoint(forward, x, cos, sin, use_reentrant=False)
    return model


def worker(library, mode, weights, steps):
    """In a fresh process: peak RSS above the RSS before the first step, and the median step time."""
    if library == "minigrad":
        import minigrad as lib
        model = minigrad_model("rmsnorm")
    else:
        import torch as lib
        model = torch_model("rmsnorm", weights)
    if mode == "checkpoint":
        model = checkpointed(lib, model)
    step = make_step(lib, model)
    set_threads(THREADS)
    before = current_rss_mb()
    one_token_step(lib, model)                 # what the first step loads once: kernels, libraries' own buffers
    after_warm_up = current_rss_mb()
    seconds = time_steps(step, steps)
    emit({"memory_mb": peak_rss_mb() - before, "warm_memory_mb": peak_rss_mb() - after_warm_up,
          "seconds": seconds})


def one_token_step(lib, model):
    """Forward and backward on one sequence of one token (activations of a few KB), the gradients dropped."""
    tokens = lib.zeros((1, 1), dtype=lib.int64)
    lib.nn.functional.cross_entropy(model(tokens).reshape(1, -1), tokens.reshape(1)).backward()
    for p in model.parameters():
        p.grad = None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--worker", nargs=2, metavar=("LIBRARY", "MODE"))
    parser.add_argument("--weights")
    parser.add_argument("--threads", type=int, default=THREADS)
    args = parser.parse_args()
    if args.worker:
        if args.worker[0] == "weights":
            write_weights(args.weights)
            return emit({})
        return worker(*args.worker, args.weights, args.steps)
    rounds, steps = (1, 4) if args.quick else (args.rounds, args.steps)
    libraries = ["minigrad"] + (["pytorch"] if available("pytorch") else [])
    print(f"# Activation checkpointing, tiny LLaMA step (B=32, T=64, D=128, 4 blocks), {THREADS} threads\n")
    print(machine_line() + f"; {rounds} rounds, {steps} timed steps per process\n")
    with tempfile.TemporaryDirectory() as weights:
        run_rounds(__file__, [Worker("weights", ["--worker", "weights", "plain", "--weights", weights])], 1,
                   progress=False)
        workers = [Worker(f"{lib} {mode}", ["--worker", lib, mode, "--weights", weights, "--steps", str(steps)],
                          threads=THREADS) for lib in libraries for mode in ("plain", "checkpoint")]
        results = run_rounds(__file__, workers, rounds)
    rows = []
    for lib in libraries:
        plain, checked = results[f"{lib} plain"], results[f"{lib} checkpoint"]
        median = lambda rs, key: sorted(r[key] for r in rs)[len(rs) // 2]     # noqa: E731
        rows.append([lib, f"{median(plain, 'memory_mb'):.0f}", f"{median(checked, 'memory_mb'):.0f}",
                     f"{median(checked, 'memory_mb') / median(plain, 'memory_mb'):.2f}x",
                     f"{median(plain, 'warm_memory_mb'):.0f} -> {median(checked, 'warm_memory_mb'):.0f} "
                     f"({median(checked, 'warm_memory_mb') / median(plain, 'warm_memory_mb'):.2f}x)",
                     f"{median(checked, 'seconds') / median(plain, 'seconds'):.2f}x",
                     " / ".join(f"{min(r['seconds'] for r in rs) * 1e3:.0f}-{max(r['seconds'] for r in rs) * 1e3:.0f}"
                                for rs in (plain, checked))])
    print(table(["library", "step memory MB, plain", "with checkpointing", "memory ratio",
                 "after a one-token step: plain -> checkpointed MB", "time ratio",
                 "step ms over processes (plain / checkpointed)"], rows))
    print("\nStep memory: peak RSS above the RSS before the first step (activations, gradients, optimizer state, and "
          "what the first step loads once). After a one-token step: the same peak above the RSS after a forward and "
          "backward on one token, which loads minigrad's numba kernels and PyTorch's libraries with almost no "
          "activations.")


if __name__ == "__main__":
    main()
