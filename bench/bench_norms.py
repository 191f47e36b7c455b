"""Normalization layers: minigrad's numba and NumPy backends against PyTorch and the memory-bandwidth floor.

    python bench/bench_norms.py                        # the full run (about 10 minutes on 2 cores)
    python bench/bench_norms.py --quick                # a small subset, to check that it runs
    python bench/bench_norms.py --json out.json --plot out.png

For RMSNorm and LayerNorm on rows (R, D) and BatchNorm2d (training), InstanceNorm2d and
GroupNorm(32) on (N, C, H, W), all float32 with weight and bias (RMSNorm: weight only, as
PyTorch's), at 1 and 2 threads (``numba.set_num_threads``, ``torch.set_num_threads``), it times
the forward alone (under no_grad) and forward + backward (with a random upstream gradient) of:

* ``numba`` / ``numpy``: minigrad's public API (``F.rms_norm(...)``, ``y.backward(g)``) on each
  kernel backend; the NumPy backend is single-threaded;
* ``numba raw``: the numba kernels called directly (no Tensor, no autograd);
* ``torch``: PyTorch's functional API, when PyTorch is installed;
* ``floor``: a parallel numba copy moving the same bytes as the layer must move at least: read x
  and write a fresh y (forward), plus read x and dy and write a fresh dx (backward). Outputs are
  fresh arrays because the layers return fresh arrays: allocating costs page faults that a copy
  into a reused buffer (``floor prealloc``, shown too) does not pay.

Times are medians of interleaved rounds after warm-up (bench/common.py). It also reports the
first-call time of RMSNorm in a new process (numba's cache cold, in a temporary NUMBA_CACHE_DIR,
and warm) and the time of ``import minigrad``, checks the targets of issue 4, writes every sample
as JSON and plots time against size (PNG, when matplotlib is installed).
"""
import os

# numba's and PyTorch's thread pools (both GNU libgomp) spin-wait for up to ~10 ms after each parallel
# region; interleaving the two libraries then lets one's idle workers steal the cores the other needs.
# Passive waiting keeps the comparison fair, at the price of a thread wake-up (tens of microseconds)
# per parallel call, visible at the smallest sizes only. Set before numba and torch are loaded;
# OMP_WAIT_POLICY=ACTIVE in the environment restores the default.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from common import environment, fmt_ms, sample_interleaved, table, write_json  # noqa: E402
from minigrad.kernels import numba_kernels, use_backend  # noqa: E402

HERE = Path(__file__).resolve().parent
ROW_SHAPES = [(64, 64), (1024, 256), (4096, 1024), (8192, 1024), (16384, 4096)]
IMAGE_SHAPES = [(4, 32, 16, 16), (16, 64, 32, 32), (32, 64, 64, 64)]
QUICK_ROW_SHAPES, QUICK_IMAGE_SHAPES = [(64, 64), (512, 256)], [(2, 32, 8, 8)]
TARGET_ROWS, TARGET_IMAGE = (8192, 1024), (32, 64, 64, 64)            # 8M float32 elements each
GROUPS = 32
EPS = 1e-5


# --------------------------------------------------------------------------- the bandwidth floor
@njit(parallel=True, cache=True)
def _copy(src, dst):
    for i in prange(src.size):
        dst[i] = src[i]                                                # src, dst (n,)


@njit(parallel=True, cache=True)
def _add(a, b, dst):
    for i in prange(a.size):
        dst[i] = a[i] + b[i]                                           # a, b, dst (n,)


def floor_forward(x, y=None):
    """Read x, write y (fresh unless given)."""
    _copy(x.reshape(-1), (np.empty_like(x) if y is None else y).reshape(-1))


def floor_step(x, dy, y=None, dx=None):
    """The forward's bytes, then read x and dy and write dx (fresh unless given)."""
    floor_forward(x, y)
    _add(x.reshape(-1), dy.reshape(-1), (np.empty_like(x) if dx is None else dx).reshape(-1))


# --------------------------------------------------------------------------- the norms
def _y_and_saved(outputs):
    """A forward kernel's (y, *statistics) as (y, statistics)."""
    return outputs[0], outputs[1:]


def _bn_raw_forward(k, x3, w, b):
    mean, var = k.batch_norm_stats(x3)
    rstd = (1 / np.sqrt(var + EPS)).astype(x3.dtype)
    return k.batch_norm_forward(x3, mean, rstd, w, b), (mean, rstd)


@dataclass
class Norm:
    """One layer: ``minigrad(F, x, w, b, buffers)`` and ``torch(TF, x, w, b, buffers)`` call the public
    functions; ``raw_forward(k, x, w, b) -> (y, saved)`` and ``raw_backward(k, dy, x, saved, w)`` the
    kernels of module k on x as rows (R, D) or (N, C, S)."""
    name: str
    rows: bool
    minigrad: object
    torch: object
    raw_forward: object
    raw_backward: object
    bias: bool = True


NORMS = [
    Norm("RMSNorm", True, lambda F, x, w, b, buf: F.rms_norm(x, (x.shape[-1],), w),
         lambda TF, x, w, b, buf: TF.rms_norm(x, (x.shape[-1],), w),
         lambda k, x, w, b: k.rms_norm_forward(x, w, None, float(np.finfo(x.dtype).eps), x.shape[1], False),
         lambda k, dy, x, rstd, w: k.rms_norm_backward(dy, x, rstd, w, float(np.finfo(x.dtype).eps), x.shape[1],
                                                       False, True, True, False), bias=False),
    Norm("LayerNorm", True, lambda F, x, w, b, buf: F.layer_norm(x, (x.shape[-1],), w, b, EPS),
         lambda TF, x, w, b, buf: TF.layer_norm(x, (x.shape[-1],), w, b, EPS),
         lambda k, x, w, b: _y_and_saved(k.layer_norm_forward(x, w, b, EPS)),
         lambda k, dy, x, saved, w: k.layer_norm_backward(dy, x, *saved, w, True, True, True)),
    Norm("BatchNorm2d", False, lambda F, x, w, b, buf: F.batch_norm(x, *buf, w, b, True, 0.1, EPS),
         lambda TF, x, w, b, buf: TF.batch_norm(x, *buf, w, b, True, 0.1, EPS),
         _bn_raw_forward,
         lambda k, dy, x, saved, w: k.batch_norm_backward(dy, x, *saved, w, True, True, True, True)),
    Norm("InstanceNorm2d", False, lambda F, x, w, b, buf: F.instance_norm(x, weight=w, bias=b, eps=EPS),
         lambda TF, x, w, b, buf: TF.instance_norm(x, weight=w, bias=b, eps=EPS),
         lambda k, x, w, b: _y_and_saved(k.group_norm_forward(x, x.shape[1], w, b, EPS)),
         lambda k, dy, x, saved, w: k.group_norm_backward(dy, x, *saved, x.shape[1], w, True, True, True)),
    Norm("GroupNorm", False, lambda F, x, w, b, buf: F.group_norm(x, GROUPS, w, b, EPS),
         lambda TF, x, w, b, buf: TF.group_norm(x, GROUPS, w, b, EPS),
         lambda k, x, w, b: _y_and_saved(k.group_norm_forward(x, GROUPS, w, b, EPS)),
         lambda k, dy, x, saved, w: k.group_norm_backward(dy, x, *saved, GROUPS, w, True, True, True)),
]


def torch_or_none():
    try:
        import torch
        return torch
    except ImportError:
        return None


def candidates(norm, shape, torch, rng):
    """{(impl, pass): fn()} for one norm and input shape; pass is "fwd" or "fwd+bwd"."""
    x = rng.standard_normal(shape, dtype=np.float32)
    dy = rng.standard_normal(shape, dtype=np.float32)
    n_params = shape[-1] if norm.rows else shape[1]
    w = (1 + 0.1 * rng.standard_normal(n_params)).astype(np.float32)
    b = (0.1 * rng.standard_normal(n_params)).astype(np.float32) if norm.bias else None
    calls = {}

    def mg_calls(backend):
        buffers = [mg.zeros(n_params), mg.ones(n_params)]
        const = [mg.tensor(a) if a is not None else None for a in (x, w, b)]
        leaves = [mg.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
        g = mg.tensor(dy)

        def forward():
            with use_backend(backend), mg.no_grad():
                norm.minigrad(F, *const, buffers)

        def step():
            with use_backend(backend):
                for t in leaves:
                    if t is not None:
                        t.grad = None
                norm.minigrad(F, *leaves, buffers).backward(g)
        return forward, step

    for backend in ("numba", "numpy"):
        calls[(backend, "fwd")], calls[(backend, "fwd+bwd")] = mg_calls(backend)

    k = numba_kernels
    xr = x.reshape(x.shape[0], -1) if norm.rows else x.reshape(*x.shape[:2], -1)      # (R, D) or (N, C, S)
    dyr = dy.reshape(xr.shape)
    calls[("numba raw", "fwd")] = lambda: norm.raw_forward(k, xr, w, b)

    def raw_step():
        y, saved = norm.raw_forward(k, xr, w, b)
        norm.raw_backward(k, dyr, xr, saved, w)
    calls[("numba raw", "fwd+bwd")] = raw_step

    if torch is not None:
        import torch.nn.functional as TF
        t_const = [torch.from_numpy(a) if a is not None else None for a in (x, w, b)]
        t_leaves = [torch.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
        t_buffers, t_g = [torch.zeros(n_params), torch.ones(n_params)], torch.from_numpy(dy)

        def t_forward():
            with torch.no_grad():
                norm.torch(TF, *t_const, t_buffers)

        def t_step():
            for t in t_leaves:
                if t is not None:
                    t.grad = None
            norm.torch(TF, *t_leaves, t_buffers).backward(t_g)
        calls[("torch", "fwd")], calls[("torch", "fwd+bwd")] = t_forward, t_step

    y_buf, dx_buf = np.empty_like(x), np.empty_like(x)
    calls[("floor", "fwd")] = lambda: floor_forward(x)
    calls[("floor", "fwd+bwd")] = lambda: floor_step(x, dy)
    calls[("floor prealloc", "fwd")] = lambda: floor_forward(x, y_buf)
    calls[("floor prealloc", "fwd+bwd")] = lambda: floor_step(x, dy, y_buf, dx_buf)
    return calls


def set_threads(n, torch):
    numba.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


# --------------------------------------------------------------------------- first call and import
PROBE = """
import time
t0 = time.perf_counter()
import minigrad as mg, minigrad.nn.functional as F
t1 = time.perf_counter()
x, w = mg.randn(64, 256, requires_grad=True), mg.ones(256, requires_grad=True)
F.rms_norm(x, (256,), w).backward(mg.randn(64, 256))
t2 = time.perf_counter()
assert mg.get_backend() == "numba"
print(t1 - t0, t2 - t1)
"""


def probe(cache_dir=None):
    """(import seconds, first RMSNorm forward+backward seconds) in a new process."""
    env = {k: v for k, v in os.environ.items() if k not in ("MINIGRAD_BACKEND", "NUMBA_DISABLE_JIT")}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return tuple(float(v) for v in out.stdout.split())


def startup_times(runs):
    """Import time and first-call time: cold numba cache (once, fresh NUMBA_CACHE_DIR), warm cache (medians)."""
    with tempfile.TemporaryDirectory() as cache:
        cold = probe(cache)[1]
        warm = [probe(cache) for _ in range(runs)]
    default = [probe() for _ in range(runs)]                           # the package's own cache dir
    return {"first_call_cold_s": cold, "first_call_warm_s": float(np.median([w[1] for w in warm + default])),
            "import_s": float(np.median([w[0] for w in warm + default]))}


# --------------------------------------------------------------------------- reporting
IMPLS = ["numba", "numba raw", "numpy", "torch", "floor", "floor prealloc"]


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b is not None else "—"


def report_norm(norm, records):
    rows = []
    for r in records:
        t = r["median_s"]
        rows.append(["x".join(map(str, r["shape"])), r["threads"], r["pass"], *(fmt_ms(t.get(i)) for i in IMPLS),
                     ratio(t["numba"], t["floor"]), ratio(t["numba raw"], t["floor"]),
                     ratio(t.get("torch"), t["numba"]), ratio(t["numpy"], t["numba"])])
    headers = ["shape", "threads", "pass", *(f"{i} ms" for i in IMPLS), "numba / floor", "raw / floor",
               "torch / numba", "numpy / numba"]
    print(f"\n## {norm.name}\n\n{table(headers, rows)}")


def find(records, norm, shape, threads, pass_):
    for r in records:
        if r["norm"] == norm and tuple(r["shape"]) == shape and r["threads"] == threads and r["pass"] == pass_:
            return r["median_s"]
    return None


def targets(records, startup, threads):
    """Issue 4's targets, measured at 8M float32 elements, forward + backward, ``threads`` threads."""
    rms, ln = (find(records, n, TARGET_ROWS, threads, "fwd+bwd") for n in ("RMSNorm", "LayerNorm"))
    rows = []

    def check(name, value, ok, text):
        rows.append([name, text.format(value), "met" if ok else "NOT met"])
    if rms:
        check("RMSNorm within 1.5x of the bandwidth floor (API)", rms["numba"] / rms["floor"],
              rms["numba"] <= 1.5 * rms["floor"], "{:.2f}x")
        check("RMSNorm within 1.5x of the bandwidth floor (raw kernels)", rms["numba raw"] / rms["floor"],
              rms["numba raw"] <= 1.5 * rms["floor"], "{:.2f}x")
        if rms.get("torch"):
            check("RMSNorm >= 15x faster than PyTorch F.rms_norm", rms["torch"] / rms["numba"],
                  rms["torch"] >= 15 * rms["numba"], "{:.1f}x")
        check("numba >= 5x faster than the NumPy backend (RMSNorm)", rms["numpy"] / rms["numba"],
              rms["numpy"] >= 5 * rms["numba"], "{:.1f}x")
    if rms and ln:
        check("RMSNorm >= 1.2x faster than LayerNorm (minigrad)", ln["numba"] / rms["numba"],
              ln["numba"] >= 1.2 * rms["numba"], "{:.2f}x")
    for norm in NORMS:
        t = find(records, norm.name, TARGET_ROWS if norm.rows else TARGET_IMAGE, threads, "fwd+bwd")
        if t and t.get("torch"):
            check(f"{norm.name} faster than PyTorch", t["torch"] / t["numba"], t["numba"] < t["torch"],
                  "{:.2f}x faster")
    if startup:
        check("import minigrad < 0.3 s", startup["import_s"], startup["import_s"] < 0.3, "{:.3f} s")
        check("first RMSNorm call, warm cache < 1 s", startup["first_call_warm_s"], startup["first_call_warm_s"] < 1,
              "{:.3f} s")
    if rows:
        print(f"\n## Targets (issue 4; float32, 8M elements, forward + backward, {threads} threads)\n")
        print(table(["target", "measured", "status"], rows))
    return rows


def plot(records, path, threads):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib not installed: no plot)")
        return
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    axes = axes.ravel()
    for ax in axes[len(NORMS):]:
        ax.axis("off")
    for ax, norm in zip(axes, NORMS):
        mine = sorted((r for r in records if r["norm"] == norm.name and r["threads"] == threads
                       and r["pass"] == "fwd+bwd"), key=lambda r: np.prod(r["shape"]))
        for impl in ("numba", "numpy", "torch", "floor"):
            points = [(np.prod(r["shape"]), r["median_s"][impl] * 1e3) for r in mine if impl in r["median_s"]]
            if points:
                ax.loglog(*zip(*points), marker="o", label=impl)
        ax.set_title(f"{norm.name}, fwd+bwd, {threads} thr")
        ax.set_xlabel("elements (float32)")
        ax.set_ylabel("ms")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"\nplot: {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small shapes and few rounds (a smoke test)")
    parser.add_argument("--json", default=str(HERE / "results" / "norms.json"), help="where to write all samples")
    parser.add_argument("--plot", default=str(HERE / "results" / "norms.png"), help="PNG of time against size")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved timed rounds (default 7, quick 3)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 7)
    row_shapes, image_shapes = (QUICK_ROW_SHAPES, QUICK_IMAGE_SHAPES) if args.quick else (ROW_SHAPES, IMAGE_SHAPES)
    thread_counts = sorted({1, numba.config.NUMBA_NUM_THREADS})
    torch = torch_or_none()
    rng = np.random.default_rng(0)

    print(f"# Normalization layers, float32 (median of {rounds} interleaved rounds after warm-up)\n")
    floor_forward(np.zeros(8, np.float32))                             # starts numba's threads: its layer is known
    print(f"numba {numba.__version__} ({numba.threading_layer()} threading layer), "
          f"NumPy {np.__version__}, {'PyTorch ' + torch.__version__ if torch else 'PyTorch not installed'}, "
          f"{os.cpu_count()} CPUs, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; threads {thread_counts}; "
          f"load average at start {os.getloadavg()[0]:.2f}. Times in ms.")
    records = []
    for norm in NORMS:
        norm_records = []
        for shape in row_shapes if norm.rows else image_shapes:
            calls = candidates(norm, shape, torch, rng)
            for threads in thread_counts:
                set_threads(threads, torch)
                for pass_ in ("fwd", "fwd+bwd"):
                    mine = {impl: fn for (impl, p), fn in calls.items() if p == pass_}
                    samples = sample_interleaved(mine, rounds=rounds, warmup=2, min_time=0.005)
                    norm_records.append({"norm": norm.name, "shape": list(shape), "threads": threads, "pass": pass_,
                                         "median_s": {i: float(np.median(v)) for i, v in samples.items()},
                                         "samples_s": samples})
            del calls
        report_norm(norm, norm_records)
        records += norm_records
    set_threads(thread_counts[-1], torch)

    print(f"\nload average after the timings: {os.getloadavg()[0]:.2f} (the machine is shared: above ~0.5, "
          f"other processes competed for the {os.cpu_count()} cores)")
    start = time.perf_counter()
    startup = startup_times(runs=2 if args.quick else 5)
    print(f"\n## Start-up (new processes, {time.perf_counter() - start:.0f} s to measure)\n")
    print(table(["what", "seconds"], [["import minigrad (median)", f"{startup['import_s']:.3f}"],
                                      ["first RMSNorm fwd+bwd, cold numba cache (compiles)",
                                       f"{startup['first_call_cold_s']:.2f}"],
                                      ["first RMSNorm fwd+bwd, warm cache (median)",
                                       f"{startup['first_call_warm_s']:.3f}"]]))
    target_rows = targets(records, startup, thread_counts[-1])
    write_json(args.json, {"environment": environment(), "rounds": rounds, "records": records, "startup": startup,
                           "targets": target_rows})
    print(f"\njson: {args.json}")
    plot(records, args.plot, thread_counts[-1])


if __name__ == "__main__":
    main()
