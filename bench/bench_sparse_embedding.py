"""Training a large embedding table with sparse gradients: minigrad against PyTorch eager, each in its own processes.

    python bench/bench_sparse_embedding.py              # 3 rounds, idle and with one busy process, 2 threads
    python bench/bench_sparse_embedding.py --quick      # 1 round: a check that it runs

One training step of a float32 table of (200,000, 64) (a word2vec- or recommender-sized vocabulary, 51 MB) on a
batch of 4,096 lookups (512 x 8; some rows repeat): the lookup, a loss of the rows, backward, the optimizer's step.
Four ways of training it:

* "sparse, SparseAdam" and "sparse, SGD": ``nn.Embedding(..., sparse=True)``, whose gradient lists only the rows
  looked up, so the step touches those rows;
* "dense, Adam" and "dense, SGD": the same table with a dense gradient, which backward and the optimizer sweep whole.

The sparse rows show what sparse gradients buy over the dense ones in each library, and minigrad's time against
PyTorch's. Each library runs in its own processes (bench/common.py), rounds alternating, thread counts set before
import; a second set of rounds runs beside one process keeping a core busy.
"""
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import (comparison_arguments, comparison_workers, emit, environment, fmt_ms, machine_line,  # noqa: E402
                    median_over_rounds, ratio, run_rounds_beside, set_threads, spread, table, time_call, write_json)

ROWS, DIM, BATCH, CONTEXT = 200_000, 64, 512, 8
CASES = {"sparse, SparseAdam": (True, "SparseAdam"), "sparse, SGD": (True, "SGD"), "dense, Adam": (False, "Adam"),
         "dense, SGD": (False, "SGD")}
LIBRARIES = ("minigrad", "pytorch")


def worker(library, threads, quick):
    lib = __import__("minigrad" if library == "minigrad" else "torch")
    set_threads(threads)
    rng = np.random.default_rng(0)
    table0 = rng.standard_normal((ROWS, DIM), dtype=np.float32)
    batches = [lib.tensor(rng.zipf(1.3, size=(BATCH, CONTEXT)) % ROWS) for _ in range(8)]   # frequent rows repeat
    target = lib.tensor(rng.standard_normal((BATCH, DIM), dtype=np.float32))
    samples, budget = (3, 0.5) if quick else (9, 2.0)
    result = {}
    for case, (sparse, optimizer_name) in CASES.items():
        embedding = lib.nn.Embedding(ROWS, DIM, sparse=sparse)
        with lib.no_grad():
            embedding.weight.copy_(lib.tensor(table0))
        optimizer = getattr(lib.optim, optimizer_name)(embedding.parameters(), lr=0.01)
        step = [0]

        def train_step():
            optimizer.zero_grad()
            context = embedding(batches[step[0] % len(batches)]).mean(1)              # (BATCH, DIM)
            ((context - target) ** 2).mean().backward()
            optimizer.step()
            step[0] += 1

        result[case] = time_call(train_step, warmup=2, samples=samples, budget=budget)
    emit(result)


def main(argv=None):
    args = comparison_arguments(__doc__.split("\n\n")[0], str(HERE / "results" / "sparse_embedding.json"), LIBRARIES,
                                threads=2).parse_args(argv)
    if args.worker:
        return worker(args.worker, args.threads, args.quick)
    rounds, threads, libraries, workers = comparison_workers(args, LIBRARIES)
    print(f"# An embedding table of ({ROWS:,}, {DIM}) float32, a batch of {BATCH} x {CONTEXT} lookups: one training "
          f"step, each library in its own fresh processes, median over {rounds} alternating rounds of each process's "
          f"median after warm-up\n\n{machine_line()}; {threads} threads. Times in ms; the range is over processes.")
    records = []
    for busy in (0, 1):
        results = run_rounds_beside(busy, __file__, workers, rounds)
        medians = {lib: median_over_rounds(results[lib]) for lib in libraries}
        rows = []
        for case, (sparse, _) in CASES.items():
            times = {lib: medians[lib].get(case) for lib in libraries}
            dense_case = "dense, SGD" if case.endswith("SGD") else "dense, Adam"
            ranges = [f"{fmt_ms(lo)}-{fmt_ms(hi)}" for lo, hi in (spread(results[lib], case) for lib in libraries)]
            rows.append([case, *(fmt_ms(times[lib]) for lib in libraries), ratio(times.get("minigrad"),
                                                                                    times.get("pytorch")),
                         ratio(medians["minigrad"].get(case), medians["minigrad"].get(dense_case)) if sparse else "",
                         *ranges])
            records.append({"case": case, "busy": busy, "median_s": times,
                            "processes_s": {lib: [r[case] for r in results[lib]] for lib in libraries}})
        print(f"\n## {'idle' if busy == 0 else 'beside one busy process'}\n")
        print(table(["training", *(f"{lib} ms" for lib in libraries), "minigrad / PyTorch",
                     "minigrad sparse / dense", *(f"{lib} over processes" for lib in libraries)], rows))
    write_json(args.json, {"environment": environment(), "rounds": rounds, "records": records})
    print(f"\njson: {args.json}")


if __name__ == "__main__":
    main()
