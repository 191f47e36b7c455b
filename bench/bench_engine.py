"""Per-op autograd overhead: a 100-op chain of mul/add/tanh on a 4x4 tensor, forward + backward.

On tensors this small the arithmetic is free, so the time per op is the framework's
bookkeeping: creating the output and its graph node, and running the node's backward.
minigrad and PyTorch (when installed) each run in their own fresh processes, one thread, rounds
alternating (bench/common.py); each process reports its median after warm-up, and the table
shows the median over rounds. (JAX is left out: under ``jax.jit`` the chain compiles into one
call, which has no per-op overhead to compare.)

    python bench/bench_engine.py [--rounds 5] [--json PATH]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (Worker, available, emit, machine_line, median_over_rounds, run_rounds, set_threads,  # noqa: E402
                    spread, table, time_call, write_json)

N_OPS = 99  # 33 x (mul, add, tanh): with the input, a 100-node chain
LIBRARIES = ("minigrad", "pytorch")


def chain(x):
    y = x
    for _ in range(N_OPS // 3):
        y = (y * 1.001 + 0.01).tanh()
    return y


def step(x, g):
    x.grad = None
    chain(x).backward(g)


def worker(library, threads):
    """In a fresh process: the median seconds of one forward + backward of the chain."""
    if library == "minigrad":
        import minigrad as lib
    else:
        import torch as lib
    set_threads(threads)
    x, g = lib.randn(4, 4, requires_grad=True), lib.ones(4, 4)
    emit({"chain": time_call(lambda: step(x, g), warmup=20, samples=31, min_time=0.02, budget=3.0)})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per library (median reported)")
    parser.add_argument("--json", help="also write the results as JSON here")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.threads)

    libraries = [lib for lib in LIBRARIES if available(lib)]
    if "pytorch" not in libraries:
        print("PyTorch not installed: minigrad only")
    rounds = run_rounds(__file__, [Worker(lib, ["--worker", lib], threads=1) for lib in libraries], args.rounds)
    medians = {lib: median_over_rounds(r)["chain"] for lib, r in rounds.items()}
    per_op = {k: v / N_OPS * 1e6 for k, v in medians.items()}
    rows = []
    for lib in libraries:
        low, high = spread(rounds[lib], "chain")
        rows.append([lib, f"{medians[lib] * 1e3:.3f}", f"{per_op[lib]:.2f}",
                     f"{low / N_OPS * 1e6:.2f}-{high / N_OPS * 1e6:.2f}",
                     f"{per_op[lib] / per_op['pytorch']:.2f}x" if "pytorch" in per_op else "—"])
    print(f"Forward + backward of a {N_OPS}-op mul/add/tanh chain on 4x4 float32, 1 thread; each library in its "
          f"own fresh processes, median over {args.rounds} alternating rounds\n\n{machine_line()}\n")
    print(table(["framework", "ms per chain", "us per op", "us per op, range over rounds", "vs PyTorch"], rows))
    if args.json:
        from common import environment
        write_json(args.json, {"us_per_op": per_op, "rounds": rounds, "environment": environment()})
    return per_op


if __name__ == "__main__":
    main()
