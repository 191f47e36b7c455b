"""Normalization layers: minigrad (numba and NumPy backends) against PyTorch, JAX and the memory-bandwidth floor.

    python bench/bench_norms.py                        # the full run (about 7 minutes on a busy 2-core machine)
    python bench/bench_norms.py --quick                # small shapes, 2 rounds: a check that it runs
    python bench/bench_norms.py --json out.json --plot out.png
    python bench/bench_norms.py --bf16                  # also bfloat16 rows: minigrad and PyTorch, bf16 vs float32
    python bench/bench_norms.py --bf16 --sizes targets --rounds 2 --norms RMSNorm,LayerNorm   # a brief bf16 run

For RMSNorm and LayerNorm on rows (R, D) from 64x64 to 16384x4096, and BatchNorm2d (training),
InstanceNorm2d and GroupNorm(32) on (N, C, H, W) from 4x32x16x16 to 32x64x64x64, all float32 with
weight and bias (RMSNorm: weight only, as PyTorch's), and every other norm of the registry
(minigrad/ops/norm/registry.py: LocalResponseNorm, ScaleNorm, DyT, ... on the shapes of its kind, with the
parameters of its registry case, PyTorch's column running its ``torch_twin``), at 1 and 2 threads, it times
the forward alone (under no_grad) and forward + backward (with a random upstream gradient) of:

* ``minigrad`` / ``numpy``: minigrad's public API (``F.rms_norm(...)``, ``y.backward(g)``) on the
  numba and NumPy kernel backends (the NumPy backend up to 8M elements: it is single-threaded and
  slow, and compares minigrad with itself);
* ``raw``: minigrad's numba kernels called directly (no Tensor, no autograd);
* ``torch``: PyTorch's functional API, the same calls, when PyTorch is installed;
* ``jax``: the same layers written with ``jax.numpy``, forward and ``jax.vjp`` under ``jax.jit``,
  when JAX is installed;
* ``floor``: a parallel numba copy moving the bytes the layer must move at least, into
  preallocated memory: read x and write y (forward), plus read x and dy and write dx (backward);
  ``floor fresh`` writes into newly allocated arrays instead, as the layers do, so the difference
  is the cost of allocating (page faults on first touch);
* ``paired``: at the 8M-element shapes, minigrad's worker also times the floor itself, alternating it with
  minigrad's call sample by sample (15 pairs), and reports the median of the per-pair ratios. Both then run in
  one process, on the same memory pages and at the same moments of the machine's load, so the ratio does not
  carry the process-to-process swings of a shared machine (the floor's own processes differ by up to 1.8x).

Each library runs in its own fresh processes (bench/common.py): per round and thread count, one
process for minigrad, one for PyTorch, one for JAX and one for the floor, rounds alternating, the
thread count set alike for all before import. Each process warms every call up and reports its
median; the tables show the median over rounds. It also reports the first-call time of RMSNorm in
a new process (numba's cache cold, in a temporary NUMBA_CACHE_DIR, and warm) and the time of
``import minigrad``, checks the targets of issues 4 and 15, writes every round's numbers as JSON
and plots time against size (PNG, when matplotlib is installed).

With ``--bf16`` the minigrad and PyTorch processes also time every norm on a bfloat16 input and upstream
gradient with float32 parameters (PyTorch's mixed-dtype case, as under autocast: ``minigrad bf16`` and
``torch bf16``), through the same public calls, and the report adds their table: PyTorch's bfloat16 time
over minigrad's, and each library's bfloat16 time over its own float32 time. A norm that a library refuses
in bfloat16 is shown as "—" with the error. ``--sizes targets`` times only a mid-sized and the 8M-element
shape of each kind, ``--norms`` a subset of the norms.
"""
import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]   # bench/common.py, and this checkout's minigrad

from minigrad.ops.norm.registry import NORMS as REGISTRY  # noqa: E402 (imports no norm)

from common import (Worker, available, emit, environment, fmt_ms, machine_line, median_over_rounds,  # noqa: E402
                    ratio, run_rounds, set_threads, table, time_call, write_json)

ROW_SHAPES = [(64, 64), (1024, 256), (4096, 1024), (8192, 1024), (16384, 4096)]
IMAGE_SHAPES = [(4, 32, 16, 16), (16, 64, 32, 32), (32, 64, 64, 64)]
QUICK_ROW_SHAPES, QUICK_IMAGE_SHAPES = [(64, 64), (512, 256)], [(4, 32, 16, 16)]
TARGET_ROWS, TARGET_IMAGE = (8192, 1024), (32, 64, 64, 64)            # 8M float32 elements each
SIZES = {"full": (ROW_SHAPES, IMAGE_SHAPES), "quick": (QUICK_ROW_SHAPES, QUICK_IMAGE_SHAPES),
         "targets": ([(1024, 256), TARGET_ROWS], [(16, 64, 32, 32), TARGET_IMAGE])}   # --sizes
NUMPY_MAX_ELEMENTS = 8 * 2 ** 20
GROUPS = 32
EPS = 1e-5
PASSES = ("fwd", "fwd+bwd")
LIBRARIES = ("minigrad", "pytorch", "jax", "floor")
IMPLS = ["minigrad", "raw", "numpy", "torch", "jax", "floor", "floor fresh"]
PAIRED = "paired"             # minigrad / floor, both timed in minigrad's process, alternating (a ratio, not seconds)
PAIRED_SAMPLES = 15
BF16_IMPLS = {"minigrad bf16": "minigrad", "torch bf16": "torch"}     # --bf16: each and its float32 twin
ERROR = "error|"                      # a worker's result key for a bfloat16 call its library refused


# --------------------------------------------------------------------------- the bandwidth floor
@functools.lru_cache(maxsize=None)
def floor_kernels():
    """Parallel numba copy and add (compiled on first use; imported only by the floor's worker)."""
    from numba import njit, prange

    @njit(parallel=True)
    def copy(src, dst):
        for i in prange(src.size):
            dst[i] = src[i]                                            # src, dst (n,)

    @njit(parallel=True)
    def add(a, b, dst):
        for i in prange(a.size):
            dst[i] = a[i] + b[i]                                       # a, b, dst (n,)
    return copy, add


def floor_forward(x, y=None):
    """Read x, write y (fresh unless given)."""
    copy, _ = floor_kernels()
    copy(x.reshape(-1), (np.empty_like(x) if y is None else y).reshape(-1))


def floor_step(x, dy, y=None, dx=None):
    """The forward's bytes, then read x and dy and write dx (fresh unless given)."""
    _, add = floor_kernels()
    floor_forward(x, y)
    add(x.reshape(-1), dy.reshape(-1), (np.empty_like(x) if dx is None else dx).reshape(-1))


# --------------------------------------------------------------------------- the norms
def _y_and_saved(outputs):
    """A forward kernel's (y, *statistics) as (y, statistics)."""
    return outputs[0], outputs[1:]


def _jax_normalize(jnp, x, axes, eps):
    """(x - mean) / sqrt(var + eps) over ``axes`` (biased variance), in jax.numpy."""
    mean = x.mean(axes, keepdims=True)
    centered = x - mean
    return centered / jnp.sqrt((centered * centered).mean(axes, keepdims=True) + eps)


def _jax_channels(jnp, x, w, b, axes, groups=None):
    """A channel norm of x (N, C, H, W) in jax.numpy: statistics over ``axes`` (of x, or of x as
    (N, groups, C/groups * H * W) when ``groups`` is given), then the per-channel affine."""
    n, c = x.shape[:2]
    xhat = (_jax_normalize(jnp, x.reshape(n, groups, -1), axes, EPS).reshape(x.shape) if groups
            else _jax_normalize(jnp, x, axes, EPS))
    return xhat * w.reshape(1, c, 1, 1) + b.reshape(1, c, 1, 1)


@dataclass
class Norm:
    """One layer: ``api(F, x, *params, buffers)`` calls the public function of ``F`` (minigrad's or PyTorch's
    nn.functional: the calls are the same); ``jax(jnp, x, w, b)`` is the layer in jax.numpy;
    ``raw_forward(k, x, w, b) -> (y, saved)`` and ``raw_backward(k, dy, x, saved, w)`` call the kernels
    of module k on x as rows (R, D) or (N, C, S) (None: not timed). ``registry``: the norm's registry name;
    ``params(rng, shape)``: its parameters (default: weight and, if ``bias``, bias, one per row element or
    channel)."""
    name: str
    rows: bool
    api: object
    jax: object = None
    raw_forward: object = None
    raw_backward: object = None
    bias: bool = True
    registry: str = None
    params: object = None


def registry_norm(spec):
    """The benchmark of a registered norm that has no hand-written entry: its registry case's call and parameters
    (scaled to the benchmark's shapes: each parameter of the case's feature size gets the input's), PyTorch's
    column its ``torch_twin``."""
    def params(rng, shape):
        features = shape[-1] if spec.kind != "channel" else shape[1]
        case_features = spec.shape[-1] if spec.kind != "channel" else spec.shape[1]
        return [np.asarray(1 + 0.1 * rng.standard_normal(tuple(features if n == case_features else n for n in s)),
                           dtype=np.float32) for _, s in spec.params]

    def api(F, x, *rest):
        params = rest[:-1]
        if hasattr(F, spec.functional):
            return spec.call(getattr(F, spec.functional), x, *params)
        return spec.torch_twin(sys.modules["torch"], x, *params)
    return Norm(spec.name, spec.kind != "channel", api, registry=spec.name, params=params)


NORMS = [
    Norm("RMSNorm", True, lambda F, x, w, b, buf: F.rms_norm(x, (x.shape[-1],), w),
         lambda jnp, x, w, b: x / jnp.sqrt((x * x).mean(-1, keepdims=True) + np.finfo(np.float32).eps) * w,
         lambda k, x, w, b: k.rms_norm_forward(x, w, None, float(np.finfo(x.dtype).eps), x.shape[1], False),
         lambda k, dy, x, rstd, w: k.rms_norm_backward(dy, x, rstd, w, float(np.finfo(x.dtype).eps), x.shape[1],
                                                       False, True, True, False), bias=False, registry="RMSNorm"),
    Norm("LayerNorm", True, lambda F, x, w, b, buf: F.layer_norm(x, (x.shape[-1],), w, b, EPS),
         lambda jnp, x, w, b: _jax_normalize(jnp, x, -1, EPS) * w + b,
         lambda k, x, w, b: _y_and_saved(k.layer_norm_forward(x, w, b, EPS)),
         lambda k, dy, x, saved, w: k.layer_norm_backward(dy, x, *saved, w, True, True, True), registry="LayerNorm"),
    Norm("BatchNorm2d", False, lambda F, x, w, b, buf: F.batch_norm(x, *buf, w, b, True, 0.1, EPS),
         lambda jnp, x, w, b: _jax_channels(jnp, x, w, b, (0, 2, 3)),
         lambda k, x, w, b: _y_and_saved(k.batch_norm_train(x, EPS, 0.1, None, None, w, b)),
         lambda k, dy, x, saved, w: k.batch_norm_backward(dy, x, *saved, w, True, True, True, True),
         registry="BatchNorm"),
    Norm("InstanceNorm2d", False, lambda F, x, w, b, buf: F.instance_norm(x, weight=w, bias=b, eps=EPS),
         lambda jnp, x, w, b: _jax_channels(jnp, x, w, b, (2, 3)),
         lambda k, x, w, b: _y_and_saved(k.group_norm_forward(x, x.shape[1], w, b, EPS)),
         lambda k, dy, x, saved, w: k.group_norm_backward(dy, x, *saved, x.shape[1], w, True, True, True),
         registry="InstanceNorm"),
    Norm("GroupNorm", False, lambda F, x, w, b, buf: F.group_norm(x, GROUPS, w, b, EPS),
         lambda jnp, x, w, b: _jax_channels(jnp, x, w, b, -1, groups=GROUPS),
         lambda k, x, w, b: _y_and_saved(k.group_norm_forward(x, GROUPS, w, b, EPS)),
         lambda k, dy, x, saved, w: k.group_norm_backward(dy, x, *saved, GROUPS, w, True, True, True),
         registry="GroupNorm"),
]
NORMS += [registry_norm(spec) for spec in REGISTRY if spec.name not in {n.registry for n in NORMS}]


def key(norm, shape, pass_, impl):
    """The name of one timing in a worker's result."""
    return f"{norm}|{'x'.join(map(str, shape))}|{pass_}|{impl}"


def inputs(norm, shape):
    """x, dy and the parameters (w, b: b None without bias; or the norm's ``params``) as float32 arrays, the
    same in every process (seed 0)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    dy = rng.standard_normal(shape, dtype=np.float32)
    if norm.params is not None:
        return x, dy, norm.params(rng, shape)
    n_params = shape[-1] if norm.rows else shape[1]
    w = (1 + 0.1 * rng.standard_normal(n_params)).astype(np.float32)
    b = (0.1 * rng.standard_normal(n_params)).astype(np.float32) if norm.bias else None
    return x, dy, [w, b]


def api_calls(lib, norm, x, dy, params, low=None):
    """(forward, forward + backward) through the public API of ``lib`` (minigrad or torch); the tensors
    share the arrays' memory, except that with ``low`` (``lib.bfloat16``) the input and the upstream gradient
    are copies in that dtype (the parameters stay float32)."""
    n_params = x.shape[-1] if norm.rows else x.shape[1]
    buffers = [lib.zeros(n_params), lib.ones(n_params)]

    def tensor(a, lowered):
        t = lib.from_numpy(a)
        return t.to(low) if lowered and low is not None else t
    const = [tensor(a, i == 0) if a is not None else None for i, a in enumerate((x, *params))]
    leaves = [tensor(a, i == 0).requires_grad_() if a is not None else None for i, a in enumerate((x, *params))]
    g = tensor(dy, True)

    def forward():
        with lib.no_grad():
            norm.api(lib.nn.functional, *const, buffers)

    def step():
        for t in leaves:
            if t is not None:
                t.grad = None
        y = norm.api(lib.nn.functional, *leaves, buffers)
        y.backward(g if y.dtype == g.dtype else g.to(y.dtype))   # (a twin that promotes to float32)
    return forward, step


def calls_of(library, norm, shape, bf16=False):
    """{(impl, pass): fn()} that one worker times for one norm and input shape (with ``bf16``, also the
    bfloat16 calls of minigrad and PyTorch)."""
    x, dy, params = inputs(norm, shape)
    w, b = (params + [None, None])[:2]
    calls = {}
    if library == "minigrad":
        import minigrad
        from minigrad.kernels import numba_kernels as k, use_backend

        def on(backend, fn):
            def run():
                with use_backend(backend):
                    fn()
            return run
        backends = ("numba", "numpy") if x.size <= NUMPY_MAX_ELEMENTS else ("numba",)
        for backend in backends:
            forward, step = api_calls(minigrad, norm, x, dy, params)
            impl = "minigrad" if backend == "numba" else "numpy"
            calls[(impl, "fwd")], calls[(impl, "fwd+bwd")] = on(backend, forward), on(backend, step)
        if bf16:
            calls[("minigrad bf16", "fwd")], calls[("minigrad bf16", "fwd+bwd")] = api_calls(
                minigrad, norm, x, dy, params, low=minigrad.bfloat16)
        if norm.raw_forward is not None:
            xr = x.reshape(x.shape[0], -1) if norm.rows else x.reshape(*x.shape[:2], -1)     # (R, D) or (N, C, S)
            dyr = dy.reshape(xr.shape)
            calls[("raw", "fwd")] = lambda: norm.raw_forward(k, xr, w, b)

            def raw_step():
                y, saved = norm.raw_forward(k, xr, w, b)
                norm.raw_backward(k, dyr, xr, saved, w)
            calls[("raw", "fwd+bwd")] = raw_step
    elif library == "pytorch":
        import torch
        calls[("torch", "fwd")], calls[("torch", "fwd+bwd")] = api_calls(torch, norm, x, dy, params)
        if bf16:
            calls[("torch bf16", "fwd")], calls[("torch bf16", "fwd+bwd")] = api_calls(
                torch, norm, x, dy, params, low=torch.bfloat16)
    elif library == "jax":
        if norm.jax is None:
            return calls
        import jax
        import jax.numpy as jnp
        layer = functools.partial(norm.jax, jnp)
        forward = jax.jit(layer)
        step = jax.jit(lambda x, w, b, g: jax.vjp(layer, x, w, b)[1](g))
        args = [jnp.asarray(a) if a is not None else None for a in (x, w, b)]
        g = jnp.asarray(dy)
        calls[("jax", "fwd")] = lambda: jax.block_until_ready(forward(*args))
        calls[("jax", "fwd+bwd")] = lambda: jax.block_until_ready(step(*args, g))
    else:
        y_buf, dx_buf = np.empty_like(x), np.empty_like(x)
        calls[("floor", "fwd")] = lambda: floor_forward(x, y_buf)
        calls[("floor", "fwd+bwd")] = lambda: floor_step(x, dy, y_buf, dx_buf)
        calls[("floor fresh", "fwd")] = lambda: floor_forward(x)
        calls[("floor fresh", "fwd+bwd")] = lambda: floor_step(x, dy)
    return calls


def worker(library, threads, sizes, names, bf16):
    """In a fresh process: every norm, shape and pass of ``library``, each call's median seconds (a bfloat16
    call the library refuses: its error message, under ``ERROR + key``)."""
    if library == "minigrad":
        import minigrad.kernels.numba_kernels  # noqa: F401  (loads numba, whose thread count is set next)
    elif library == "floor":
        floor_forward(np.zeros(8, np.float32))                           # compiles the floor's kernels
        floor_step(np.zeros(8, np.float32), np.zeros(8, np.float32))
    set_threads(threads)
    result = {}
    for norm, shapes in plan(sizes, names):
        for shape in shapes:
            for (impl, pass_), fn in calls_of(library, norm, shape, bf16).items():
                k = key(norm.name, shape, pass_, impl)
                try:
                    result[k] = time_call(fn, warmup=2, samples=7, min_time=2e-3, budget=0.3)
                except (RuntimeError, TypeError, ValueError, NotImplementedError) as err:
                    if impl not in BF16_IMPLS:
                        raise
                    result[ERROR + k] = f"{type(err).__name__}: {err}".splitlines()[0][:160]
            if library == "minigrad" and shape in (TARGET_ROWS, TARGET_IMAGE):
                result.update(paired_ratios(norm, shape))
    emit(result)


def paired_ratios(norm, shape):
    """{key: minigrad's time / the floor's} for both passes, the two timed in this process in alternation: per
    sample, a block of minigrad's calls, then a block of the floor's; the median of the per-sample ratios."""
    x, dy, _ = inputs(norm, shape)
    y_buf, dx_buf = np.empty_like(x), np.empty_like(x)
    floors = {"fwd": lambda: floor_forward(x, y_buf), "fwd+bwd": lambda: floor_step(x, dy, y_buf, dx_buf)}
    calls = calls_of("minigrad", norm, shape)
    out = {}
    for pass_, floor in floors.items():
        ours = calls[("minigrad", pass_)]
        for fn in (ours, floor, ours, floor):                          # warm-up (the floor compiles here)
            fn()
        ratios = [time_call(ours, warmup=1, samples=1) / time_call(floor, warmup=1, samples=1)
                  for _ in range(PAIRED_SAMPLES)]
        out[key(norm.name, shape, pass_, PAIRED)] = float(np.median(ratios))
    return out


def plan(sizes="full", names=None):
    """(norm, its shapes) of a run: the shapes of ``SIZES[sizes]``, the norms named in ``names`` (all if None)."""
    rows, images = SIZES[sizes]
    return [(norm, rows if norm.rows else images) for norm in NORMS if names is None or norm.name in names]


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
def collect(results, sizes, names, thread_counts):
    """Records {norm, shape, threads, pass, median_s: {impl: s}, rounds_s: {impl: [s per round]}} from
    the workers' results (label "library threads" -> list of dicts, one per round)."""
    records = []
    for norm, shapes in plan(sizes, names):
        for shape in shapes:
            for threads in thread_counts:
                for pass_ in PASSES:
                    record = {"norm": norm.name, "shape": list(shape), "threads": threads, "pass": pass_,
                              "median_s": {}, "rounds_s": {}, "errors": {}}
                    for label, rounds in results.items():
                        if not label.endswith(f" {threads}"):
                            continue
                        medians = median_over_rounds([{k: v for k, v in r.items() if not k.startswith(ERROR)}
                                                      for r in rounds])
                        for impl in BF16_IMPLS:
                            errors = [r[ERROR + key(norm.name, shape, pass_, impl)] for r in rounds
                                      if ERROR + key(norm.name, shape, pass_, impl) in r]
                            if errors:
                                record["errors"][impl] = errors[0]
                        for impl in [*IMPLS, *BF16_IMPLS, PAIRED]:
                            k = key(norm.name, shape, pass_, impl)
                            if k in medians:
                                record["median_s"][impl] = medians[k]
                                record["rounds_s"][impl] = [r[k] for r in rounds if k in r]
                    records.append(record)
    return records


def shown_impls(records):
    return [i for i in IMPLS if any(i in r["median_s"] for r in records)]


def report_norm(name, records):
    impls = shown_impls(records)
    compared = [i for i in ("torch", "jax") if i in impls]
    rows = []
    for r in (r for r in records if r["norm"] == name):
        t = r["median_s"]
        rows.append(["x".join(map(str, r["shape"])), r["threads"], r["pass"], *(fmt_ms(t.get(i)) for i in impls),
                     ratio(t["minigrad"], t["floor"]), paired(t), ratio(t.get("raw"), t["floor"]),
                     *(ratio(t.get(i), t["minigrad"]) for i in compared), ratio(t.get("numpy"), t["minigrad"])])
    headers = ["shape", "threads", "pass", *(f"{i} ms" for i in impls), "minigrad / floor",
               "minigrad / floor, paired", "raw / floor",
               *(f"{i} / minigrad" for i in compared), "numpy / minigrad"]
    print(f"\n## {name}\n\n{table(headers, rows)}")


def paired(t):
    """The paired ratio of a record's timings as text ("—" where it was not measured)."""
    return f"{t[PAIRED]:.2f}x" if t.get(PAIRED) else "—"


def report_bf16(records):
    """The bfloat16 table: minigrad's and PyTorch's times on a bf16 input and upstream gradient with float32
    parameters, PyTorch's over minigrad's, and each library's bf16 time over its own float32 time."""
    rows, errors = [], {}
    for r in records:
        t = r["median_s"]
        if not any(i in t or i in r["errors"] for i in BF16_IMPLS):
            continue
        errors.update({(r["norm"], impl): message for impl, message in r["errors"].items()})
        rows.append([r["norm"], "x".join(map(str, r["shape"])), r["threads"], r["pass"],
                     *(fmt_ms(t.get(i)) for i in BF16_IMPLS), ratio(t.get("torch bf16"), t.get("minigrad bf16")),
                     *(ratio(t.get(low), t.get(full)) for low, full in BF16_IMPLS.items())])
    if not rows:
        return
    print("\n## bfloat16: bf16 input and upstream gradient, float32 parameters (times in ms)\n")
    print(table(["norm", "shape", "threads", "pass", *(f"{i} ms" for i in BF16_IMPLS), "torch bf16 / minigrad bf16",
                 "minigrad bf16 / float32", "torch bf16 / float32"], rows))
    for (norm, impl), message in errors.items():
        print(f"\n{norm}, {impl}: not timed, the library refused it ({message})")


def report_summary(records, thread_counts, other="torch"):
    """One row per norm and shape: ``other``'s time over minigrad's for each pass and thread count."""
    columns = [(p, t) for p in PASSES for t in thread_counts]
    rows, seen = [], []
    for r in records:
        if (r["norm"], r["shape"]) in seen:
            continue
        seen.append((r["norm"], r["shape"]))
        row = [r["norm"], "x".join(map(str, r["shape"]))]
        for pass_, threads in columns:
            t = find(records, r["norm"], tuple(r["shape"]), threads, pass_)
            row.append(ratio(t.get(other), t["minigrad"]))
        rows.append(row)
    print(f"\n## Summary: {other} time / minigrad time (above 1.00x: minigrad faster; below: minigrad slower)\n")
    print(table(["norm", "shape", *(f"{p}, {t} thr" for p, t in columns)], rows))


def report_spread(records, impls=("minigrad", "torch", "floor")):
    """Process to process: for each norm's largest shape, forward + backward, each library's fastest, median and
    slowest process (each process's own median after warm-up) and slowest / fastest."""
    rows = []
    shown = {PAIRED: lambda v: f"{v:.2f}x"}                            # a ratio; the others are seconds
    for r in records:
        size = max(np.prod(q["shape"]) for q in records if q["norm"] == r["norm"])
        if r["pass"] != "fwd+bwd" or np.prod(r["shape"]) != size:
            continue
        for impl in (*impls, PAIRED):
            per_process = sorted(r["rounds_s"].get(impl, ()))
            if len(per_process) > 1:
                show = shown.get(impl, fmt_ms)
                rows.append([r["norm"], "x".join(map(str, r["shape"])), r["threads"],
                             "minigrad / floor, paired" if impl == PAIRED else impl,
                             *(show(t) for t in (per_process[0], float(np.median(per_process)), per_process[-1])),
                             ratio(per_process[-1], per_process[0])])
    if rows:
        print("\n## Spread over processes: the largest shape, forward + backward (each process's median)\n")
        print("The paired rows are ratios, not times: minigrad's time over the floor's, both timed in minigrad's own\n"
              "process in alternation; their spread is the part of the spread the machine's memory does not explain.\n")
        print(table(["norm", "shape", "threads", "library", "fastest", "median", "slowest",
                     "slowest / fastest"], rows))


def find(records, norm, shape, threads, pass_):
    for r in records:
        if r["norm"] == norm and tuple(r["shape"]) == shape and r["threads"] == threads and r["pass"] == pass_:
            return r["median_s"]
    return None


def targets(records, startup, threads):
    """The targets of issues 4 and 15, at 8M float32 elements, forward + backward, ``threads`` threads."""
    rms, ln = (find(records, n, TARGET_ROWS, threads, "fwd+bwd") for n in ("RMSNorm", "LayerNorm"))
    rows = []

    def check(name, value, ok, text):
        rows.append([name, text.format(value), "met" if ok else "NOT met"])
    if rms:
        check("RMSNorm within 1.5x of the bandwidth floor (API)", rms["minigrad"] / rms["floor"],
              rms["minigrad"] <= 1.5 * rms["floor"], "{:.2f}x")
        check("RMSNorm within 1.5x of the bandwidth floor (raw kernels)", rms["raw"] / rms["floor"],
              rms["raw"] <= 1.5 * rms["floor"], "{:.2f}x")
        if rms.get("torch"):
            check("RMSNorm >= 15x faster than PyTorch F.rms_norm", rms["torch"] / rms["minigrad"],
                  rms["torch"] >= 15 * rms["minigrad"], "{:.1f}x")
        if rms.get("numpy"):
            check("numba >= 5x faster than the NumPy backend (RMSNorm)", rms["numpy"] / rms["minigrad"],
                  rms["numpy"] >= 5 * rms["minigrad"], "{:.1f}x")
    if rms and ln:
        check("RMSNorm >= 1.2x faster than LayerNorm (minigrad)", ln["minigrad"] / rms["minigrad"],
              ln["minigrad"] >= 1.2 * rms["minigrad"], "{:.2f}x")
    for norm in NORMS:
        t = find(records, norm.name, TARGET_ROWS if norm.rows else TARGET_IMAGE, threads, "fwd+bwd")
        if t and t.get("torch"):
            check(f"{norm.name} faster than PyTorch", t["torch"] / t["minigrad"], t["minigrad"] < t["torch"],
                  "{:.2f}x (torch / minigrad)")
    for norm in NORMS:
        t = find(records, norm.name, TARGET_ROWS if norm.rows else TARGET_IMAGE, threads, "fwd+bwd")
        if t and t.get("minigrad bf16"):
            check(f"{norm.name} in bfloat16 at least as fast as in float32 (minigrad, issue 27)",
                  t["minigrad bf16"] / t["minigrad"], t["minigrad bf16"] <= t["minigrad"], "{:.2f}x (bf16 / float32)")
    largest = [r for r in records if r["threads"] == threads and r["pass"] == "fwd+bwd"
               and np.prod(r["shape"]) >= np.prod(TARGET_ROWS)]
    for r in largest:
        t = r["median_s"]
        check(f"{r['norm']} {'x'.join(map(str, r['shape']))} within 1.5x of the floor (API, issue 15)",
              t["minigrad"] / t["floor"], t["minigrad"] <= 1.5 * t["floor"], "{:.2f}x")
        if t.get(PAIRED):
            check(f"{r['norm']} {'x'.join(map(str, r['shape']))} within 1.5x of the floor, paired in one process",
                  t[PAIRED], t[PAIRED] <= 1.5, "{:.2f}x")
    slower = [r for r in records if r["median_s"].get("torch") and r["median_s"]["minigrad"] > r["median_s"]["torch"]]
    if any(r["median_s"].get("torch") for r in records):
        check("every norm, shape, pass and thread count at least as fast as PyTorch (issue 15)", len(slower),
              not slower, "{} of " + f"{len(records)} slower")
    if startup:
        check("import minigrad < 0.3 s", startup["import_s"], startup["import_s"] < 0.3, "{:.3f} s")
        check("first RMSNorm call, warm cache < 1 s", startup["first_call_warm_s"], startup["first_call_warm_s"] < 1,
              "{:.3f} s")
    if rows:
        print(f"\n## Targets (issues 4, 15 and 27; 8M elements, forward + backward, {threads} threads)\n")
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
    fig, axes = plt.subplots(-(-len(NORMS) // 3), 3, figsize=(13, 3.75 * -(-len(NORMS) // 3)))
    axes = axes.ravel()
    for ax in axes[len(NORMS):]:
        ax.axis("off")
    for ax, norm in zip(axes, NORMS):
        mine = sorted((r for r in records if r["norm"] == norm.name and r["threads"] == threads
                       and r["pass"] == "fwd+bwd"), key=lambda r: np.prod(r["shape"]))
        for impl in ("minigrad", "numpy", "torch", "jax", "floor"):
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
    parser.add_argument("--quick", action="store_true", help="small shapes and 2 rounds (a smoke test)")
    parser.add_argument("--sizes", choices=SIZES, default=None,
                        help="the shapes: full (default), quick, or targets (a mid-sized and the 8M-element one)")
    parser.add_argument("--norms", default=None, help="comma-separated norm names to time (default: all)")
    parser.add_argument("--bf16", action="store_true",
                        help="also time minigrad and PyTorch on bfloat16 inputs (float32 parameters)")
    parser.add_argument("--json", default=str(HERE / "results" / "norms.json"), help="where to write all numbers")
    parser.add_argument("--plot", default=str(HERE / "results" / "norms.png"), help="PNG of time against size")
    parser.add_argument("--rounds", type=int, default=None, help="fresh processes per library (default 3, quick 2)")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = args.sizes or ("quick" if args.quick else "full")
    names = None if args.norms is None else args.norms.split(",")
    unknown = sorted(set(names or ()) - {norm.name for norm in NORMS})
    if unknown:
        parser.error(f"--norms: unknown {', '.join(unknown)} (known: {', '.join(norm.name for norm in NORMS)})")
    if args.worker:
        return worker(args.worker, args.threads, sizes, names, args.bf16)
    rounds = args.rounds or (2 if args.quick else 3)
    thread_counts = sorted({1, min(2, os.cpu_count() or 1)})
    libraries = [lib for lib in LIBRARIES if lib == "floor" or available(lib)]

    print(f"# Normalization layers, float32{' and bfloat16' if args.bf16 else ''}: each library in its own fresh processes, median over {rounds} "
          f"alternating rounds of each process's median after warm-up\n\n{machine_line()}; threads {thread_counts}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}. Times in ms. Libraries: "
          f"{', '.join(lib for lib in libraries if lib != 'floor')} (not installed: "
          f"{', '.join(lib for lib in LIBRARIES if lib not in libraries) or 'none'}).")
    passed = ["--sizes", sizes] + ["--norms", args.norms] * (names is not None) + ["--bf16"] * args.bf16
    workers = [Worker(f"{lib} {threads}", ["--worker", lib, *passed], threads=threads)
               for threads in thread_counts for lib in libraries]
    start = time.perf_counter()
    results = run_rounds(__file__, workers, rounds)
    records = collect(results, sizes, names, thread_counts)
    print(f"\n({time.perf_counter() - start:.0f} s of timing; load average after it {os.getloadavg()[0]:.2f}: the "
          f"machine is shared, and above ~0.5 other processes competed for the {os.cpu_count()} cores)")
    for norm, _ in plan(sizes, names):
        report_norm(norm.name, records)
    report_bf16(records)
    if "pytorch" in libraries:
        report_summary(records, thread_counts, "torch")
    if "jax" in libraries:
        report_summary(records, thread_counts, "jax")
    report_spread(records)

    start = time.perf_counter()
    startup = startup_times(runs=5 if sizes == "full" else 2)
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
