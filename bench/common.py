"""Timing and reporting helpers shared by the benchmarks in bench/.

The machine is shared and noisy, so every benchmark compares implementations *interleaved*: each
round runs every candidate once (starting at a different one each round), and the reported time
is the median over rounds, after warm-up calls that are not timed.

    from common import time_interleaved, table, write_json
    medians = time_interleaved({"numba": f, "numpy": g}, rounds=7, warmup=1)
    print(table(["impl", "ms"], [[k, f"{v * 1e3:.2f}"] for k, v in medians.items()]))
"""
import importlib.metadata
import json
import os
import platform
import statistics
import time


def sample_interleaved(calls, rounds=7, warmup=1, min_time=0.0):
    """Time each callable of ``calls`` (key -> fn()) in ``rounds`` interleaved rounds after ``warmup``
    untimed calls each; returns key -> list of seconds per call. A call faster than ``min_time`` is
    repeated within its sample (the same count every round) so that the timer's resolution and
    the loop overhead do not matter."""
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


def environment():
    """What a result depends on: machine, Python and library versions, thread settings."""
    info = {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version()}
    for package in ("numpy", "numba", "torch"):
        try:
            info[package] = importlib.metadata.version(package)         # without importing it
        except importlib.metadata.PackageNotFoundError:
            info[package] = None
    info.update({var: os.environ.get(var) for var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "MINIGRAD_BACKEND")})
    return info


def write_json(path, data):
    """Write ``data`` as indented JSON, creating the parent directory."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=str)
