"""Training-step time and memory of the tiny LLaMA-style Transformer: minigrad against PyTorch eager.

    python bench/bench_transformer.py             # B=32, T=64, D=128, L=4, H=4, vocab 256, 2 threads
    python bench/bench_transformer.py --quick     # fewer rounds and steps

A step does the work of examples/tiny_transformer.py's ``Trainer.train_step`` (forward,
cross-entropy, backward, gradient clipping at 1.0, AdamW with its two parameter groups, LambdaLR
warmup), float32, on random tokens; ``make_step`` below is that step written once for both
libraries (the PyTorch process must not import the examples, which import minigrad). PyTorch runs
bench/torch_llama.py's twin of the model holding minigrad's initial weights. Printed, as markdown
tables:

1. step time, RMSNorm and LayerNorm models: each library in its own fresh processes (2 threads,
   set alike before import; bench/common.py), rounds alternating; each process warms up, times
   its steps and reports the median; the table shows the median over rounds and the ratio (JAX is
   not compared here: it would need the model written a third time);
2. memory: each library in a fresh process, RSS after import, after the first step, peak, and
   RSS along 500 steps (flat means no leak);
3. matrix products: each library's time per step in them (fresh processes; minigrad's timed around its
   product function, PyTorch's from torch.profiler), minigrad's GFLOP/s, and what a step of 0.85x
   PyTorch's would leave for everything else;
4. where minigrad's step goes: a cProfile of a few steps, self time grouped by category (time spent
   in NumPy, numba and builtins is charged to the minigrad function that called it).

How much each library slows the other in one process: bench/bench_coexistence.py.
"""
import argparse
import ast
import cProfile
import functools
import json
import os
import pstats
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, HERE)

from common import (Worker, available, emit, machine_line, median_over_rounds, run_rounds, set_threads,  # noqa: E402
                    spread, table, thread_env, time_call)

THREADS = 2
for _var, _value in thread_env(THREADS).items():
    os.environ.setdefault(_var, _value)   # this process's own profile run; workers get theirs from run_worker

import numpy as np  # noqa: E402

SHAPE = dict(batch_size=32, seq_len=64, d_model=128, n_layers=4, n_heads=4)
VOCAB = 256
NORMS = ("rmsnorm", "layernorm")
LIBRARIES = ("minigrad", "pytorch")
N_BATCHES = 8     # random batches, cycled


# --------------------------------------------------------------------------- the models and the step
def write_weights(directory):
    """Run with minigrad: each model's config and initial weights (seed 0) as DIR/<norm>.npz, for the PyTorch twin."""
    for norm in NORMS:
        model = minigrad_model(norm)
        cfg = dict(model.cfg.to_dict(), head_dim=model.cfg.head_dim, hidden_dim=model.cfg.hidden_dim)
        np.savez(os.path.join(directory, f"{norm}.npz"), __config__=json.dumps(cfg),
                 **{k: np.array(v) for k, v in model.state_dict().items()})


def minigrad_model(norm):
    sys.path.insert(0, EXAMPLES)
    import tiny_transformer
    cfg = dict(tiny_transformer.DEFAULTS["common"], **SHAPE, norm=norm)
    return tiny_transformer.make_model(cfg, VOCAB)


def torch_model(norm, weights):
    """bench/torch_llama.py's twin, from the arrays ``write_weights`` saved in the directory ``weights``."""
    from types import SimpleNamespace

    from torch_llama import twin_from_arrays
    with np.load(os.path.join(weights, f"{norm}.npz")) as f:
        arrays = {k: f[k] for k in f.files if k != "__config__"}
        cfg = SimpleNamespace(**json.loads(str(f["__config__"])))
    return twin_from_arrays(cfg, arrays)


def make_step(lib, model, lr=1e-3, weight_decay=0.1, warmup=100, grad_clip=1.0):
    """One training step of ``model`` in ``lib`` (minigrad or torch) as a function; returns the loss."""
    matrices = [p for p in model.parameters() if p.ndim >= 2]
    vectors = [p for p in model.parameters() if p.ndim < 2]         # norm gains and biases: no weight decay
    optimizer = lib.optim.AdamW([{"params": matrices, "weight_decay": weight_decay},
                                 {"params": vectors, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    scheduler = lib.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, size=(N_BATCHES, SHAPE["batch_size"], SHAPE["seq_len"] + 1))
    batches = [(lib.from_numpy(t[:, :-1]), lib.from_numpy(t[:, 1:].reshape(-1))) for t in tokens]
    count = [0]

    def step():
        x, y = batches[count[0] % N_BATCHES]
        count[0] += 1
        loss = lib.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y)
        optimizer.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        scheduler.step()
        return loss.item()
    return step


def build_step(library, norm, weights=None):
    """The training step of ``library`` ("minigrad" or "pytorch") on the model with ``norm``."""
    if library == "minigrad":
        import minigrad
        return make_step(minigrad, minigrad_model(norm))
    import torch
    return make_step(torch, torch_model(norm, weights))


def time_steps(step, steps, warmup=3):
    """Median seconds per step after ``warmup`` steps, ``steps`` timed (the budget is generous)."""
    return time_call(step, warmup=warmup, samples=steps, min_time=0.0, budget=1e9)


def step_worker(library, threads, weights, steps):
    """In a fresh process: the median step time of each model."""
    steps_by_norm = {norm: build_step(library, norm, weights) for norm in NORMS}
    set_threads(threads)
    emit({norm: time_steps(step, steps) for norm, step in steps_by_norm.items()})


# --------------------------------------------------------------------------- matrix products, in a fresh process
PRODUCT_OPS = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm")


def products_worker(library, threads, weights, steps):
    """In a fresh process, the RMSNorm model: the median step time, and the share of matrix products in the
    steps that measure them (minigrad: its product function timed around each call, with each product's
    multiply-adds; PyTorch: the self time of ``PRODUCT_OPS`` under torch.profiler, which leaves out the products
    inside its fused attention kernel). The share is of those steps' own wall time: measuring slows them, and the
    machine may have changed speed since the plain steps were timed (the share applied to the plain step is what
    the report shows)."""
    import time
    step = build_step(library, "rmsnorm", weights)
    set_threads(threads)
    seconds = time_steps(step, steps)
    if library == "minigrad":
        from minigrad.kernels import matmul_numba
        plain, spent = matmul_numba.matmul, {"s": 0.0, "flop": 0.0, "batched": 0.0}

        def timed(a, b, *args, **kwargs):
            start = time.perf_counter()
            out = plain(a, b, *args, **kwargs)
            seconds = time.perf_counter() - start
            spent["s"] += seconds
            spent["batched"] += seconds if a.ndim > 2 else 0.0      # attention's (B, H, T, T) products
            spent["flop"] += 2.0 * out.size * a.shape[-1]
            return out
        matmul_numba.matmul = timed
        start = time.perf_counter()
        for _ in range(steps):
            step()
        wall = time.perf_counter() - start
        matmul_numba.matmul = plain
        return emit({"step": seconds, "share": spent["s"] / wall, "products_timed": spent["s"] / steps,
                     "flop": spent["flop"] / steps, "batched_share": spent["batched"] / wall})
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        wall = time.perf_counter() - start
    us = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in PRODUCT_OPS)
    emit({"step": seconds, "share": us * 1e-6 / wall})


def report_products(libraries, weights, rounds, steps):
    """Section 4: how much of each library's step its matrix products take, and what that leaves."""
    workers = [Worker(lib, ["--products-worker", lib, "--weights", weights, "--steps", str(steps)], threads=THREADS)
               for lib in libraries]
    results = run_rounds(__file__, workers, rounds, progress=False)
    medians = {lib: median_over_rounds(r) for lib, r in results.items()}
    rows = []
    for lib in libraries:
        m = medians[lib]
        m["products"] = m["share"] * m["step"]          # the measured share of the plain step
        rows.append([lib, f"{m['step'] * 1e3:.1f} ms", f"{m['products'] * 1e3:.1f} ms",
                     f"{m['share']:.0%}", f"{(m['step'] - m['products']) * 1e3:.1f} ms"])
    print(f"\n## Matrix products (RMSNorm model; each library in its own fresh processes, median over {rounds} "
          f"rounds of {steps} steps; the products' share of the steps that timed them, applied to the plain "
          "step)\n")
    print(table(["library", "step", "in matrix products", "share", "the rest"], rows))
    m = medians["minigrad"]
    print(f"\nminigrad's products: {m['flop'] / 1e9:.2f} GFLOP per step at {m['flop'] / m['products_timed'] / 1e9:.0f} "
          "GFLOP/s as timed (OpenBLAS's sgemm, one block per thread); attention's batched products are "
          f"{m['batched_share']:.0%} of the step and the linear layers' {m['share'] - m['batched_share']:.0%}. "
          "PyTorch's column counts its aten::mm/bmm/addmm only: the products inside its fused attention kernel are "
          "in its \"rest\".")
    if "pytorch" in medians:
        target = 0.85 * medians["pytorch"]["step"]
        print(f"0.85x PyTorch's step is {target * 1e3:.1f} ms: minigrad's products alone take "
              f"{m['products'] / target:.0%} of it, leaving {(target - m['products']) * 1e3:.1f} ms for everything "
              f"else, against {(m['step'] - m['products']) * 1e3:.1f} ms now.")


# --------------------------------------------------------------------------- memory, in a fresh process
def current_rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def peak_rss_mb():
    """The process's peak RSS (VmHWM: unlike getrusage's ru_maxrss it does not inherit the parent's peak)."""
    with open("/proc/self/status") as f:
        kib = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    return int(kib) / 1024


def rss_worker(library, weights, steps, every):
    """In a fresh process: RSS after import and along ``steps`` training steps, and the peak."""
    __import__("minigrad" if library == "minigrad" else "torch")        # counted in "after import"
    report = {"after_import": current_rss_mb(), "rss": {}}
    step = build_step(library, "rmsnorm", weights)
    for i in range(1, steps + 1):
        step()
        if i == 1 or i % every == 0:
            report["rss"][i] = current_rss_mb()
    report["peak"] = peak_rss_mb()
    emit(report)


# --------------------------------------------------------------------------- profile
CATEGORIES = [   # (category, substrings of "path::Qualname"), first match wins
    ("other (embedding, data, Python glue)", ("ops/linalg.py::Embedding", "ops/linalg.py::embedding")),
    ("matmul (linear, matmul)", ("ops/linalg.py",)),
    ("attention (sdpa, softmax, rotary)", ("ops/attention.py", "ops/softmax.py", "llama.py::Rotary", "llama.py::rotate",
                                           "_softmax", "_rotate", "softmax_", "rotate")),
    ("SwiGLU", ("llama.py::SwiGLU", "_swiglu", "swiglu")),
    ("norms", ("ops/norm/", "kernels/", "nn/row_norms.py", "nn/normalization.py")),
    ("cross-entropy", ("ops/loss.py",)),
    ("elementwise, shape, reductions", ("ops/elementwise.py", "ops/shape.py", "ops/reduce.py", "ops/activation.py",
                                        "ops/dims.py")),
    ("engine (graph, Tensor, Module calls)", ("autograd/", "minigrad/tensor.py", "nn/module.py", "minigrad/dtypes.py",
                                              "minigrad/creation.py")),
    ("optimizer (AdamW, clipping, schedule)", ("optim/", "nn/utils/")),
]
OTHER = CATEGORIES[0][0]
# minigrad's np.matmul (kernels.matmul and its numba twin): charged to the op that multiplies, like NumPy's
STAND_INS = ("kernels/matmul_numba.py::", "kernels/__init__.py::matmul")


@functools.lru_cache(maxsize=None)
def _qualnames(path):
    """(first line, last line, qualified name) of every function in a source file, innermost last."""
    try:
        with open(path) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    spans = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in getattr(child, "decorator_list", [])])
                spans.append((start, child.end_lineno, name))   # a profile names a function by its first line
                visit(child, name + ".")
    visit(tree, "")
    return tuple(sorted(spans, key=lambda s: s[1] - s[0], reverse=True))


def _label(func):
    """'path::Qualname' of a profiled function, or None when it is not Python source of this project (or
    one of its STAND_INS)."""
    path, line, name = func
    path = path.replace(os.sep, "/")
    if "/minigrad/" not in path and not path.endswith("llama.py") and "tiny_transformer" not in path:
        return None
    qual = name
    for first, last, q in _qualnames(path):
        if first <= line <= last:
            qual = q
    label = f"{path}::{qual}"
    return None if any(stand_in in label for stand_in in STAND_INS) else label


def _own_category(label):
    for category, patterns in CATEGORIES:
        if any(p in label for p in patterns):
            return category
    return OTHER


def categorize(stats):
    """Self time per category; time in functions outside the project is split among their callers
    (in proportion to the time each caller spent in them), up to the nearest project function."""
    memo = {}

    def shares(func, depth=0):
        if func in memo:
            return memo[func]
        label = _label(func)
        if label is not None:
            result = {_own_category(label): 1.0}
        else:
            callers = stats[func][4] if func in stats else {}
            total = sum(v[2] for v in callers.values())
            result = {}
            if depth > 30 or total <= 0:
                result = {OTHER: 1.0}
            else:
                for caller, v in callers.items():
                    for cat, w in shares(caller, depth + 1).items():
                        result[cat] = result.get(cat, 0.0) + w * v[2] / total
        memo[func] = result
        return result

    times, top = {}, []
    for func, (_, _, tt, _, _) in stats.items():
        for cat, w in shares(func).items():
            times[cat] = times.get(cat, 0.0) + w * tt
        top.append((tt, _label(func) or f"{os.path.basename(func[0])}:{func[2]}", max(shares(func), key=shares(func).get)))
    return times, sorted(top, reverse=True)


def profile_steps(step, steps):
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    return pstats.Stats(profiler).stats


# --------------------------------------------------------------------------- report
def mb(x):
    return f"{x:.0f} MB"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds and steps (a smoke run)")
    p.add_argument("--rounds", type=int, help="fresh processes per library (default 5, quick 2)")
    p.add_argument("--rss-steps", type=int, default=500)
    p.add_argument("--rss-every", type=int, default=50)
    p.add_argument("--products-only", action="store_true", help="only the matrix products' section")
    p.add_argument("--worker", choices=LIBRARIES + ("weights",), help=argparse.SUPPRESS)
    p.add_argument("--rss-worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    p.add_argument("--products-worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    p.add_argument("--weights", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=20, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=THREADS, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "weights":
        return emit({"written": write_weights(args.weights)})
    if args.worker:
        return step_worker(args.worker, args.threads, args.weights, args.steps)
    if args.rss_worker:
        return rss_worker(args.rss_worker, args.weights, args.rss_steps, args.rss_every)
    if args.products_worker:
        return products_worker(args.products_worker, args.threads, args.weights, args.steps)

    rounds = args.rounds or (2 if args.quick else 5)
    steps, rss_steps, rss_every, profiled = (3, 20, 10, 1) if args.quick else (20, args.rss_steps, args.rss_every, 10)
    libraries = [lib for lib in LIBRARIES if available(lib)]
    print(f"# Tiny Transformer training step: B={SHAPE['batch_size']}, T={SHAPE['seq_len']}, "
          f"D={SHAPE['d_model']}, L={SHAPE['n_layers']}, H={SHAPE['n_heads']}, vocab {VOCAB}, float32, "
          f"{THREADS} threads\n\n{machine_line()}")
    with tempfile.TemporaryDirectory() as weights:
        run_rounds(__file__, [Worker("weights", ["--worker", "weights", "--weights", weights])], 1, progress=False)
        if args.products_only:
            return report_products(libraries, weights, rounds, steps)
        workers = [Worker(lib, ["--worker", lib, "--weights", weights, "--steps", str(steps)], threads=THREADS)
                   for lib in libraries]
        results = run_rounds(__file__, workers, rounds)
        medians = {lib: median_over_rounds(r) for lib, r in results.items()}

        rows = []
        for norm in NORMS:
            row = [norm]
            for lib in libraries:
                low, high = spread(results[lib], norm)
                row += [f"{medians[lib][norm] * 1e3:.1f} ms", f"{low * 1e3:.0f}-{high * 1e3:.0f}"]
            if "pytorch" in medians:
                row.append(f"{medians['minigrad'][norm] / medians['pytorch'][norm]:.2f}x")
            rows.append(row)
        headers = ["model"] + [h for lib in libraries for h in (f"{lib} (median)", f"{lib} range ms")]
        print(f"\n## Step time (each library in its own fresh processes; median over {rounds} alternating rounds "
              f"of each process's median of {steps} steps after 3 warm-up steps)\n")
        print(table(headers + (["minigrad / PyTorch"] if "pytorch" in medians else []), rows))
        ratio = medians["minigrad"]["rmsnorm"] / medians["minigrad"]["layernorm"]
        print(f"\nminigrad RMSNorm model / LayerNorm model: {ratio:.3f}x "
              f"({'faster' if ratio < 1 else 'NOT faster'} with RMSNorm)")

        print(f"\n## Memory (fresh process each, {rss_steps} steps)\n")
        rows = []
        for lib in libraries:
            r = run_rounds(__file__, [Worker(lib, ["--rss-worker", lib, "--weights", weights, "--rss-steps",
                                                   str(rss_steps), "--rss-every", str(rss_every)], THREADS)],
                           1, progress=False)[lib][0]
            rss = {int(k): v for k, v in r["rss"].items()}
            first, last = rss[1], rss[max(rss)]
            middle = rss[min(s for s in rss if s >= max(rss) // 5)]
            rows.append([lib, mb(r["after_import"]), mb(first), mb(r["peak"]),
                         f"{mb(middle)} -> {mb(last)} ({last - middle:+.1f} MB)"])
        print(table(["library", "RSS after import", "after step 1", "peak RSS",
                     f"RSS step {max(rss) // 5} -> {max(rss)}"], rows))
        report_products(libraries, weights, 1 if args.quick else 3, steps)

    print(f"\n## Where minigrad's step goes (cProfile, {profiled} steps in this process, minigrad only; self time "
          "incl. the NumPy/numba calls each function makes)\n")
    step = build_step("minigrad", "rmsnorm")
    set_threads(THREADS)
    for _ in range(3):
        step()
    times, top = categorize(profile_steps(step, profiled))
    total = sum(times.values())
    rows = [[cat, f"{t / profiled * 1e3:.1f} ms", f"{t / total:.0%}"]
            for cat, t in sorted(times.items(), key=lambda kv: -kv[1])]
    rows.append(["total (profiled; cProfile adds overhead per Python call)", f"{total / profiled * 1e3:.1f} ms", ""])
    print(table(["category", "per step", "share"], rows))
    print("\nTop functions by self time:\n")
    rows = [[name.split("/minigrad/")[-1].split("/examples/")[-1], cat, f"{tt / profiled * 1e3:.2f} ms"]
            for tt, name, cat in top[:15]]
    print(table(["function", "category", "per step"], rows))


if __name__ == "__main__":
    main()
