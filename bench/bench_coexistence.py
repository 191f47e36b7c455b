"""Coexistence: how much minigrad and PyTorch slow each other down when both are loaded in one process.

    python bench/bench_coexistence.py           # 3 rounds
    python bench/bench_coexistence.py --quick   # 1 round, few steps

Each of these runs in its own fresh process (2 threads, set alike before any import; rounds
alternate, bench/common.py), timing the Transformer training step of bench/bench_transformer.py
(RMSNorm model) and a LayerNorm forward + backward (8192x1024 float32, through
``nn.functional.layer_norm`` and ``backward``), both in the process's own library:

* ``minigrad`` alone; with PyTorch imported *before* minigrad (and one PyTorch op run, so that its
  thread pool exists); with PyTorch imported *after* minigrad's warm-up (and one op run);
* ``pytorch`` alone; with minigrad imported before PyTorch (and one minigrad norm run, starting
  numba's threads); with minigrad imported after PyTorch's warm-up (and one norm run).

The table shows medians over rounds and each slowdown against the same library alone (positive:
slower). Issue 15 asks for at most 5% either way.
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import bench_transformer  # noqa: E402  (sets the thread variables of this process, imports neither library)
from common import (Worker, available, emit, machine_line, median_over_rounds, run_rounds, set_threads,  # noqa: E402
                    table, time_call)

THREADS = 2
NORM_SHAPE = (8192, 1024)
OTHER = {"minigrad": "pytorch", "pytorch": "minigrad"}
PLACES = ("alone", "before", "after")          # where the other library is loaded


def norm_call(library):
    """A LayerNorm forward + backward in ``library``, the same code for both (their APIs agree)."""
    lib = __import__("minigrad" if library == "minigrad" else "torch")
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal(NORM_SHAPE, dtype=np.float32)).requires_grad_()
    g = lib.from_numpy(rng.standard_normal(NORM_SHAPE, dtype=np.float32))
    w, b = lib.ones(NORM_SHAPE[1], requires_grad=True), lib.zeros(NORM_SHAPE[1], requires_grad=True)

    def call():
        x.grad = w.grad = b.grad = None
        lib.nn.functional.layer_norm(x, NORM_SHAPE[1:], w, b).backward(g)
    return call


def load_other(library, threads):
    """Import the other library and run one of its ops, so that its thread pool is started."""
    other = OTHER[library]
    norm_call(other)()
    set_threads(threads)


def worker(library, place, threads, weights, steps):
    if place == "before":
        load_other(library, threads)
    step = bench_transformer.build_step(library, "rmsnorm", weights)
    norm = norm_call(library)
    set_threads(threads)
    step()
    norm()
    if place == "after":
        load_other(library, threads)
    emit({"step": bench_transformer.time_steps(step, steps), "norm": time_call(norm, warmup=3, samples=21)})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="one round, few steps (a smoke run)")
    p.add_argument("--rounds", type=int, help="fresh processes per configuration (default 3, quick 1)")
    p.add_argument("--worker", choices=tuple(OTHER), help=argparse.SUPPRESS)
    p.add_argument("--place", choices=PLACES, help=argparse.SUPPRESS)
    p.add_argument("--weights", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=15, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=THREADS, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.place, args.threads, args.weights, args.steps)
    print(f"# Coexistence of minigrad and PyTorch in one process ({THREADS} threads)\n\n{machine_line()}")
    if not available("pytorch"):
        print("\nPyTorch not installed: nothing to measure")
        return
    rounds, steps = (args.rounds or 1, 4) if args.quick else (args.rounds or 3, 15)
    with tempfile.TemporaryDirectory() as weights:
        run_rounds(bench_transformer.__file__, [Worker("weights", ["--worker", "weights", "--weights", weights])], 1,
                   progress=False)
        workers = [Worker(f"{lib} {place}", ["--worker", lib, "--place", place, "--weights", weights,
                                             "--steps", str(steps)], threads=THREADS)
                   for place in PLACES for lib in OTHER]
        results = run_rounds(__file__, workers, rounds)
    medians = {label: median_over_rounds(r) for label, r in results.items()}
    rows = []
    for lib in OTHER:
        for what, name in (("step", "Transformer step"), ("norm", f"LayerNorm fwd+bwd {NORM_SHAPE[0]}x{NORM_SHAPE[1]}")):
            alone = medians[f"{lib} alone"][what]
            row = [lib, name, f"{alone * 1e3:.1f}"]
            for place in PLACES[1:]:
                t = medians[f"{lib} {place}"][what]
                row += [f"{t * 1e3:.1f}", f"{(t / alone - 1) * 100:+.0f}%"]
            rows.append(row)
    other = "the other library"
    print(f"\n## Slowdown from {other} in the same process (median over {rounds} rounds of fresh processes; ms)\n")
    print(table(["library", "what", "alone ms", f"{other} loaded first, ms", "slowdown",
                 f"{other} loaded after warm-up, ms", "slowdown"], rows))


if __name__ == "__main__":
    main()
