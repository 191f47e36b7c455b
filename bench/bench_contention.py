"""The tiny Transformer's training step on a busy machine: each library alone, then with 1 and 2 other processes
keeping cores busy (a laptop with a browser open, a shared server).

    python bench/bench_contention.py [--rounds 3] [--steps 10] [--json PATH]

For every condition (0, 1 or 2 busy processes) and library, a fresh worker process runs bench_transformer.py's
step (the RMSNorm model, 2 threads, the same initial weights) and reports its median step time; the busy
processes (pure-Python loops, one core each) start before the worker and stop after it. Conditions and
libraries alternate round by round. Also timed, alone: each library at 1 thread, the speed minigrad must never
fall below. Printed: the median over rounds and its range, each library's slowdown against its own idle time, and
minigrad's time against PyTorch's under the same load. Tests never assert times; this is a measurement.
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import Worker, available, busy_processes, machine_line, run_worker, stop, table, write_json  # noqa: E402

SCRIPT = os.path.join(HERE, "bench_transformer.py")
LIBRARIES = ("minigrad", "pytorch")
BUSY = (0, 1, 2)
THREADS = 2
def measure(library, weights, steps, busy, threads):
    procs = busy_processes(busy)
    try:
        worker = Worker(library, ["--worker", library, "--weights", weights, "--steps", str(steps)], threads=threads)
        return run_worker(SCRIPT, worker)["rmsnorm"]
    finally:
        stop(procs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--json", help="also write the results as JSON")
    args = p.parse_args()
    libraries = [lib for lib in LIBRARIES if available(lib)]
    print(f"# Training step under load: the RMSNorm tiny Transformer, {THREADS} threads, busy processes 0/1/2\n\n"
          f"{machine_line()}\n")
    conditions = [(lib, busy, THREADS) for busy in BUSY for lib in libraries] + [(lib, 0, 1) for lib in libraries]
    times = {c: [] for c in conditions}
    with tempfile.TemporaryDirectory() as weights:
        run_worker(SCRIPT, Worker("weights", ["--worker", "weights", "--weights", weights]))
        for r in range(args.rounds):
            order = conditions[r % len(conditions):] + conditions[:r % len(conditions)]
            for library, busy, threads in order:
                seconds = measure(library, weights, args.steps, busy, threads)
                times[(library, busy, threads)].append(seconds)
                print(f"  [round {r + 1}/{args.rounds}] {library}, {busy} busy, {threads} thread(s): "
                      f"{seconds * 1e3:.1f} ms", file=sys.stderr, flush=True)
    median = {c: statistics.median(v) for c, v in times.items()}
    rows = []
    for busy in BUSY:
        row = [str(busy)]
        for lib in libraries:
            values = times[(lib, busy, THREADS)]
            slowdown = median[(lib, busy, THREADS)] / median[(lib, 0, THREADS)]
            row += [f"{median[(lib, busy, THREADS)] * 1e3:.1f} ({min(values) * 1e3:.0f}-{max(values) * 1e3:.0f})",
                    f"{slowdown:.2f}x"]
        if "pytorch" in libraries:
            row.append(f"{median[('minigrad', busy, THREADS)] / median[('pytorch', busy, THREADS)]:.2f}x")
        rows.append(row)
    headers = ["busy processes"] + [h for lib in libraries for h in (f"{lib} ms (range)", f"{lib} slowdown")]
    print(table(headers + (["minigrad / PyTorch"] if "pytorch" in libraries else []), rows))
    print()
    for lib in libraries:
        one = median[(lib, 0, 1)]
        worst = max(median[(lib, busy, THREADS)] for busy in BUSY)
        print(f"{lib}: 1 thread alone {one * 1e3:.1f} ms; worst with {THREADS} threads under load "
              f"{worst * 1e3:.1f} ms ({worst / one:.2f}x its 1-thread time)")
    if args.json:
        write_json(args.json, {"machine": machine_line(), "rounds": args.rounds, "steps": args.steps,
                               "times": {f"{lib}/{busy} busy/{threads} threads": v
                                         for (lib, busy, threads), v in times.items()}})


if __name__ == "__main__":
    main()
