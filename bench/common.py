"""Timing, process and reporting helpers shared by the benchmarks in bench/.

**Libraries are compared in separate processes.** Two libraries in one process change each other:
their thread pools (numba's and PyTorch's OpenMP workers, OpenBLAS's) compete for the same cores,
and which one was imported first decides how. So a comparison runs every library in its own fresh
process (a *worker*: ``python bench/X.py --worker LIB --threads N ...``), with the thread counts
set the same way for every library before it is imported; rounds alternate the libraries (round r
starts with a different one), each worker warms up, times its calls and prints their medians as
one JSON line; the parent reports, per library, the median over rounds. How the libraries behave
*together* is measured on its own (bench/bench_coexistence.py).

    from common import Worker, run_rounds, median_over_rounds
    results = run_rounds(__file__, [Worker("minigrad", ["--worker", "minigrad"]), ...], rounds=3)

Implementations of one library (minigrad's numba and NumPy backends, fused and composite forms)
may still be compared inside one process, interleaved: ``sample_interleaved``, ``time_interleaved``.
"""
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

# The libraries a comparison may run, and the module each needs; minigrad needs nothing beyond itself.
LIBRARY_MODULES = {"minigrad": "minigrad", "pytorch": "torch", "jax": "jax"}
RESULT_TAG = "BENCH-RESULT "          # the worker's result line: this tag, then JSON


# --------------------------------------------------------------------------- the machine
def cpu_info():
    """{"model", "cpus", "simd"}: the CPU's model name and SIMD level from /proc/cpuinfo, and the CPUs
    this process may run on."""
    model, flags = None, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model is None:
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    simd = next((name for flag, name in (("avx512f", "AVX-512 (avx512f)"), ("avx2", "AVX2"), ("avx", "AVX"),
                                         ("sse4_2", "SSE4.2"), ("sse2", "SSE2")) if flag in flags), "unknown")
    model = model or platform.processor() or platform.machine()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"model": model, "cpus": cpus, "simd": simd}


def version(package):
    """A package's installed version, without importing it (None when it is not installed)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_line():
    """One line naming what a result depends on: CPU model, CPU count, SIMD level, versions, load."""
    cpu = cpu_info()
    libs = ", ".join(f"{name} {version(name) or 'not installed'}" for name in ("numpy", "numba", "torch", "jax"))
    return (f"CPU: {cpu['model']}, {cpu['cpus']} CPUs, SIMD {cpu['simd']}; Python {platform.python_version()}, "
            f"{libs}; load average {os.getloadavg()[0]:.2f}")


def environment():
    """What a result depends on: machine, Python and library versions, thread settings."""
    info = {"platform": platform.platform(), **cpu_info(), "python": platform.python_version()}
    info.update({package: version(package) for package in ("numpy", "numba", "torch", "jax")})
    info.update({var: os.environ.get(var) for var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "MINIGRAD_BACKEND",
                                                      "OMP_WAIT_POLICY")})
    return info


def available(library):
    """Whether ``library`` ("minigrad", "pytorch", "jax") is installed; nothing is imported."""
    return importlib.util.find_spec(LIBRARY_MODULES[library]) is not None


# --------------------------------------------------------------------------- workers (child side)
def thread_env(threads):
    """Environment variables giving every thread pool ``threads`` threads; they must be set before
    NumPy, numba, PyTorch or JAX is imported, so the parent passes them to each worker."""
    env = {var: str(threads) for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                         "NUMBA_NUM_THREADS")}
    if threads == 1:        # XLA has no thread-count variable: one thread is its single-threaded Eigen mode
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return env


def set_threads(threads):
    """After import: the same thread count through each loaded library's own call."""
    if "numba" in sys.modules:
        sys.modules["numba"].set_num_threads(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def time_call(fn, warmup=2, samples=11, min_time=1e-3, budget=1.0):
    """Median seconds per call of ``fn()`` after ``warmup`` untimed calls. Each sample repeats the call
    until it lasts ``min_time`` (the same count for every sample), and sampling stops after ``samples``
    samples or, once 3 are taken, when ``budget`` seconds are spent."""
    for _ in range(max(warmup, 1)):
        start = time.perf_counter()
        fn()
        per_call = time.perf_counter() - start             # the last warm-up call's: compiling is over
    repeats = max(1, int(min_time / per_call)) if per_call > 0 else 1
    times, spent = [], 0.0
    while len(times) < samples and (len(times) < 3 or spent < budget):
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        elapsed = time.perf_counter() - start
        times.append(elapsed / repeats)
        spent += elapsed
    return statistics.median(times)


def emit(result):
    """Print a worker's result (a JSON-able dict) as the line the parent reads."""
    print(RESULT_TAG + json.dumps(result), flush=True)


# --------------------------------------------------------------------------- workers (parent side)
@dataclass
class Worker:
    """One kind of worker process: a label, its arguments after the script, and its thread count."""
    label: str
    args: list
    threads: int = 1
    env: dict = field(default_factory=dict)


def run_worker(script, worker, timeout=1800):
    """Run one worker in a fresh process; its result dict (ValueError with its stderr if it failed)."""
    env = {**os.environ, **thread_env(worker.threads), **worker.env}
    done = subprocess.run([sys.executable, script, *worker.args, "--threads", str(worker.threads)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if done.returncode != 0 or not lines:
        raise ValueError(f"worker {worker.label} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT_TAG):])


def run_rounds(script, workers, rounds, progress=True):
    """Run each worker ``rounds`` times, each run a fresh process, alternating: round r starts at worker
    r (mod their number). Returns label -> list of result dicts, one per round."""
    results = {w.label: [] for w in workers}
    for r in range(rounds):
        for worker in workers[r % len(workers):] + workers[:r % len(workers)]:
            start = time.perf_counter()
            results[worker.label].append(run_worker(script, worker))
            if progress:
                print(f"  [round {r + 1}/{rounds}] {worker.label}: {time.perf_counter() - start:.1f} s",
                      file=sys.stderr, flush=True)
    return results


def median_over_rounds(round_results):
    """The per-key median of a list of flat {key: seconds} dicts (keys missing in a round are skipped)."""
    keys = dict.fromkeys(k for r in round_results for k in r)
    return {k: statistics.median(r[k] for r in round_results if k in r) for k in keys}


def spread(round_results, key):
    """(min, max) of ``key`` over rounds: how far the fresh processes disagree."""
    values = [r[key] for r in round_results if key in r]
    return min(values), max(values)


SPIN = "import time\nwhile True:\n    time.perf_counter()\n"     # a process keeping one core busy


def busy_processes(n):
    """``n`` processes that each keep one core busy until killed (a laptop with a browser, a shared server)."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]
    time.sleep(0.5 if n else 0)          # let them get going (and the load measure see them)
    return procs


def stop(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def run_rounds_beside(busy, script, workers, rounds):
    """``run_rounds`` with ``busy`` processes keeping cores busy throughout."""
    procs = busy_processes(busy)
    try:
        return run_rounds(script, workers, rounds)
    finally:
        stop(procs)


def comparison_workers(args, libraries, threads=2):
    """(rounds, threads, the libraries installed, a Worker for each) of a comparison's parsed ``args``."""
    rounds = args.rounds or (1 if args.quick else 3)
    threads = min(threads, os.cpu_count() or 1)
    installed = [lib for lib in libraries if available(lib)]
    workers = [Worker(lib, ["--worker", lib] + ["--quick"] * args.quick, threads=threads) for lib in installed]
    return rounds, threads, installed, workers


def comparison_arguments(description, json_default, libraries, threads=1):
    """The command line of a library comparison: --quick, --json, --rounds, and the worker's --worker/--threads."""
    import argparse
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="one round, fewer samples (a smoke test)")
    parser.add_argument("--json", default=json_default, help="where to write all numbers")
    parser.add_argument("--rounds", type=int, default=None, help="fresh processes per library (default 3, quick 1)")
    parser.add_argument("--worker", choices=libraries, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=threads, help=argparse.SUPPRESS)
    return parser


# --------------------------------------------------------------------------- one process, interleaved
def sample_interleaved(calls, rounds=7, warmup=1, min_time=0.0):
    """Time each callable of ``calls`` (key -> fn()) in ``rounds`` interleaved rounds after ``warmup``
    untimed calls each; returns key -> list of seconds per call. A call faster than ``min_time`` is
    repeated within its sample (the same count every round) so that the timer's resolution and
    the loop overhead do not matter. For implementations inside one library only (see the module's
    docstring)."""
    keys = list(calls)
    repeats = {}
    for key in keys:
        start = time.perf_counter()
        for _ in range(max(warmup, 1)):
            calls[key]()
        per_call = (time.perf_counter() - start) / max(warmup, 1)
        repeats[key] = max(1, int(min_time / per_call)) if per_call > 0 else 1
    samples = {key: [] for key in keys}
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:        # rotate the order every round
            fn, n = calls[key], repeats[key]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[key].append((time.perf_counter() - start) / n)
    return samples


def time_interleaved(calls, rounds=7, warmup=1, min_time=0.0):
    """Median seconds per call of each callable in ``calls`` (see ``sample_interleaved``)."""
    return {key: statistics.median(s) for key, s in sample_interleaved(calls, rounds, warmup, min_time).items()}


# --------------------------------------------------------------------------- reporting
def _is_number(cell):
    try:
        float(cell.split()[0].rstrip("x%"))
        return True
    except (ValueError, IndexError):
        return False


def table(headers, rows):
    """A markdown table (cells converted with str()); columns of numbers ("1.5", "3.2x", "4 ms") are right-aligned."""
    rows = [[str(c) for c in row] for row in rows]
    right = [bool(rows) and all(_is_number(row[i]) for row in rows if row[i] not in ("", "—"))
             for i in range(len(headers))]
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def fmt_ms(seconds):
    """Seconds as milliseconds with three significant digits ("—" for None)."""
    if seconds is None:
        return "—"
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def ratio(a, b):
    """a / b as "1.23x" ("—" when either is missing)."""
    return f"{a / b:.2f}x" if a is not None and b is not None else "—"


def write_json(path, data):
    """Write ``data`` as indented JSON, creating the parent directory."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=str)
