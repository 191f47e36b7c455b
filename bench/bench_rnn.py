"""Recurrent layers: a 2-layer LSTM and GRU (input 64, hidden 128, 128 steps, batch 32, float32), forward +
backward, minigrad against PyTorch.

Each library runs in its own fresh processes (bench/common.py), rounds alternating, with the thread count set
the same way for both before import; each process warms up, then reports the median of its timed calls
(forward alone, and forward + backward with every parameter's gradient reset each call), and the table shows
the median over processes, their spread (min-max over processes) and the ratio to PyTorch. A third case
doubles the sequence length (256 steps): linear gradients keep its time at about twice the first's.

    python bench/bench_rnn.py [--rounds 5] [--threads 2] [--out docs/results/bench_rnn_<cpu>.md]
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))   # the minigrad of this tree, not an installed one

from common import (Worker, available, cpu_info, emit, fmt_ms, machine_line, median_over_rounds,  # noqa: E402
                    run_rounds, set_threads, spread, table, time_call)

LIBRARIES = ("minigrad", "pytorch")
INPUT, HIDDEN, LAYERS, STEPS, BATCH = 64, 128, 2, 128, 32
CASES = {   # name: (module class, sequence length)
    "LSTM": ("LSTM", STEPS),
    "GRU": ("GRU", STEPS),
    "LSTM, 256 steps": ("LSTM", 2 * STEPS),
}


def worker(library, threads):
    """In a fresh process: median seconds of forward and of forward + backward, per case."""
    if library == "minigrad":
        import minigrad as lib
    else:
        import torch as lib
    import numpy as np
    set_threads(threads)
    rng = np.random.default_rng(0)
    result = {}
    for name, (kind, steps) in CASES.items():
        lib.manual_seed(0)
        module = getattr(lib.nn, kind)(INPUT, HIDDEN, LAYERS)
        x = lib.tensor(rng.standard_normal((steps, BATCH, INPUT)).astype(np.float32), requires_grad=True)
        g = lib.tensor(rng.standard_normal((steps, BATCH, HIDDEN)).astype(np.float32))
        params = list(module.parameters())

        def forward():
            with lib.no_grad():
                module(x)

        def step():
            for p in [x] + params:
                p.grad = None
            module(x)[0].backward(g)

        result[f"{name} forward"] = time_call(forward, warmup=3, samples=9, budget=4.0)
        result[f"{name} fwd+bwd"] = time_call(step, warmup=3, samples=9, budget=6.0)
    emit(result)


def cpu_slug():
    """The CPU's name for a file name: 'AMD EPYC' -> 'amd_epyc'."""
    words = re.sub(r"\(.*?\)|@.*|processor|cpu|\d+-core", " ", cpu_info()["model"].lower()).split()
    return "_".join(re.sub(r"[^a-z0-9]", "", w) for w in words[:2] if re.sub(r"[^a-z0-9]", "", w))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per library (median reported)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", help="also write the markdown here (default: print only)")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.threads)

    libraries = [lib for lib in LIBRARIES if available(lib)]
    load_before = os.getloadavg()[0]
    rounds = run_rounds(__file__, [Worker(lib, ["--worker", lib], threads=args.threads) for lib in libraries],
                        args.rounds)
    medians = {lib: median_over_rounds(r) for lib, r in rounds.items()}
    rows = []
    for key in medians[libraries[0]]:
        for lib in libraries:
            low, high = spread(rounds[lib], key)
            vs = f"{medians[lib][key] / medians['pytorch'][key]:.2f}x" if "pytorch" in medians else "—"
            rows.append([key, lib, fmt_ms(medians[lib][key]), f"{fmt_ms(low)}-{fmt_ms(high)}", vs])
    text = (f"## Recurrent layers: {LAYERS}-layer, input {INPUT}, hidden {HIDDEN}, batch {BATCH}, float32, "
            f"{args.threads} threads\n\nEach library in its own fresh processes, median over {args.rounds} "
            f"alternating rounds (each process: median of its timed calls after warm-up); 'spread' is the min-max "
            f"over processes. Load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after.\n\n"
            f"{machine_line()}\n\n"
            + table(["case", "library", "ms (median)", "spread over processes, ms", "vs PyTorch"], rows) + "\n")
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
    return medians


if __name__ == "__main__":
    main()
