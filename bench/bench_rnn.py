"""Recurrent layers: a 2-layer LSTM and GRU (input 64, hidden 128, 128 steps, batch 32, float32), forward +
backward, minigrad against PyTorch.

Each library runs in its own fresh processes (bench/common.py), rounds alternating, with the thread count set
the same way for both before import; each process warms up, then times its calls (forward alone under no_grad,
and forward + backward with every gradient reset each call). Per call it records the wall time and the
process's CPU time. The table shows, per library, the median over processes of each process's median wall
time, the fastest call seen in any process (the least disturbed by other programs on a shared machine), the
spread of the per-process medians, the CPU time (at one thread, what the wall time would be on an idle core),
and the ratios to PyTorch. A third case doubles the sequence length (256 steps): with gradients linear in the
length its time is about twice the first's.

    python bench/bench_rnn.py [--rounds 5] [--threads 1 2] [--save | --out PATH]
"""
import argparse
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))   # the minigrad of this tree, not an installed one

from common import Worker, available, cpu_info, emit, fmt_ms, machine_line, run_rounds, set_threads, table

LIBRARIES = ("minigrad", "pytorch")
INPUT, HIDDEN, LAYERS, STEPS, BATCH = 64, 128, 2, 128, 32
CASES = {   # name: (module class, sequence length, whether the forward alone is timed too)
    "LSTM": ("LSTM", STEPS, True),
    "GRU": ("GRU", STEPS, True),
    "LSTM, 256 steps": ("LSTM", 2 * STEPS, False),
}


def time_calls(fn, warmup=2, samples=7, budget=3.0):
    """(median wall, min wall, median CPU) seconds per call of ``fn()`` after ``warmup`` calls; sampling stops
    after ``samples`` calls or, once 3 are taken, when ``budget`` seconds of wall time are spent."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    while len(wall) < samples and (len(wall) < 3 or sum(wall) < budget):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), min(wall), statistics.median(cpu)


def worker(library, threads):
    """In a fresh process: per case and measurement, (median wall, min wall, median CPU) seconds."""
    if library == "minigrad":
        import minigrad as lib
    else:
        import torch as lib
    import numpy as np
    set_threads(threads)
    rng = np.random.default_rng(0)
    result = {}
    for name, (kind, steps, forward_too) in CASES.items():
        lib.manual_seed(0)
        module = getattr(lib.nn, kind)(INPUT, HIDDEN, LAYERS)
        x = lib.tensor(rng.standard_normal((steps, BATCH, INPUT)).astype(np.float32), requires_grad=True)
        g = lib.tensor(rng.standard_normal((steps, BATCH, HIDDEN)).astype(np.float32))
        params = list(module.parameters())

        def forward(module=module, x=x):
            with lib.no_grad():
                module(x)

        def step(module=module, x=x, g=g, params=params):
            for p in [x] + params:
                p.grad = None
            module(x)[0].backward(g)

        if forward_too:
            result[f"{name} forward"] = time_calls(forward)
        result[f"{name} fwd+bwd"] = time_calls(step)
    emit(result)


def cpu_slug():
    """The CPU's name for a file name: 'AMD EPYC' -> 'amd_epyc'."""
    words = re.sub(r"\(.*?\)|@.*|processor|cpu|\d+-core", " ", cpu_info()["model"].lower()).split()
    return "_".join(re.sub(r"[^a-z0-9]", "", w) for w in words[:2] if re.sub(r"[^a-z0-9]", "", w))


def summarize(rounds, libraries):
    """Rows of the table from {library: [per-process result]}: per key and library, the median over processes
    of the medians, the min over processes of the fastest call, the spread of the medians, the median CPU
    time, and each as a ratio to PyTorch's."""
    stats = {}
    for lib in libraries:
        for key in rounds[lib][0]:
            per = [r[key] for r in rounds[lib]]
            medians = [p[0] for p in per]
            stats[key, lib] = (statistics.median(medians), min(p[1] for p in per), min(medians), max(medians),
                               statistics.median(p[2] for p in per))
    rows = []
    for key in rounds[libraries[0]][0]:
        for lib in libraries:
            med, best, low, high, cpu = stats[key, lib]
            ref = stats.get((key, "pytorch"))
            rows.append([key, lib, fmt_ms(med), fmt_ms(best), f"{fmt_ms(low)}-{fmt_ms(high)}", fmt_ms(cpu)]
                        + ([f"{med / ref[0]:.2f}x", f"{best / ref[1]:.2f}x", f"{cpu / ref[4]:.2f}x"] if ref else
                           ["—"] * 3))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per library and thread count")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", help="also write the markdown here")
    parser.add_argument("--save", action="store_true", help="write it to docs/results/bench_rnn_<cpu>.md")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.threads[0])

    libraries = [lib for lib in LIBRARIES if available(lib)]
    text = [(f"## Recurrent layers: {LAYERS}-layer, input {INPUT}, hidden {HIDDEN}, {STEPS} steps, batch {BATCH}, "
             f"float32\n\nEach library in its own fresh processes, {args.rounds} alternating rounds per thread count; "
             "'median' is the median over processes of each process's median call, 'fastest' the fastest call in "
             "any process, 'spread' the min-max of the per-process medians, 'CPU' the median CPU time of a call "
             "(all threads' time: at one thread, the wall time on an idle core).\n"), machine_line()]
    results = {}
    for threads in args.threads:
        load = os.getloadavg()[0]
        rounds = run_rounds(__file__, [Worker(lib, ["--worker", lib], threads=threads) for lib in libraries],
                            args.rounds)
        results[threads] = rounds
        text += [(f"\n### {threads} thread{'s' * (threads > 1)} (load average {load:.2f} before, "
                  f"{os.getloadavg()[0]:.2f} after)\n"),
                 table(["case", "library", "median ms", "fastest ms", "spread ms", "CPU ms", "vs PyTorch (median)",
                        "vs PyTorch (fastest)", "vs PyTorch (CPU)"], summarize(rounds, libraries))]
    text = "\n".join(text) + "\n"
    print(text)
    if args.save and not args.out:
        args.out = os.path.join(os.path.dirname(HERE), "docs", "results", f"bench_rnn_{cpu_slug()}.md")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
    return results


if __name__ == "__main__":
    main()
