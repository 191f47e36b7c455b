"""Training-step time and memory of the tiny LLaMA-style Transformer: minigrad against PyTorch eager.

    python bench/bench_transformer.py             # B=32, T=64, D=128, L=4, H=4, vocab 256, 2 threads
    python bench/bench_transformer.py --quick     # fewer rounds and steps

A step is examples/tiny_transformer.py's ``Trainer.train_step`` (forward, cross-entropy, backward,
gradient clipping, AdamW, LR schedule), float32, on random tokens, the same code for both libraries
(PyTorch runs bench/torch_llama.py's twin of the model, holding the same weights). Printed, as
markdown tables:

1. step time: median over interleaved steps (minigrad, PyTorch, minigrad, ...), and the ratio;
2. the same with LayerNorm in place of every RMSNorm;
3. memory: each library in a fresh subprocess, RSS after import, after the first step, peak, and
   RSS along 500 steps (flat means no leak);
4. where minigrad's step goes: a cProfile of a few steps, self time grouped by category (time spent
   in NumPy, numba and builtins is charged to the minigrad function that called it).
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")  # before NumPy loads: 2 threads, like torch.set_num_threads(2)

import argparse  # noqa: E402
import ast  # noqa: E402
import cProfile  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import minigrad as mg  # noqa: E402
import tiny_transformer  # noqa: E402
from common import table, time_interleaved  # noqa: E402
from lm_tasks import step_rng  # noqa: E402

THREADS = 2
SHAPE = dict(batch_size=32, seq_len=64, d_model=128, n_layers=4, n_heads=4)
VOCAB = 256


class RandomTokens:
    """Uniform random token ids, a fixed batch per step: the benchmark times steps, not learning."""

    def batch(self, step, batch_size):
        tokens = step_rng(0, step).integers(0, VOCAB, size=(batch_size, SHAPE["seq_len"] + 1))
        return tokens[:, :-1], tokens[:, 1:]


def make_trainer(library, norm="rmsnorm"):
    """A Trainer for ``library`` ("minigrad" or "torch") on the benchmark model; both start from minigrad's
    initial weights."""
    cfg = dict(tiny_transformer.DEFAULTS["common"], **SHAPE, norm=norm, steps=10 ** 6, lr=1e-3, warmup=100,
               eval_every=0)
    model = tiny_transformer.make_model(cfg, VOCAB)
    lib = mg
    if library == "torch":
        import torch
        torch.set_num_threads(THREADS)
        sys.path.insert(0, HERE)
        from torch_llama import twin_of
        model, lib = twin_of(model), torch
    return tiny_transformer.Trainer(lib, model, RandomTokens(), cfg)


def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


# --------------------------------------------------------------------------- memory, in a fresh process
def current_rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def peak_rss_mb():
    """The process's peak RSS (VmHWM: unlike getrusage's ru_maxrss it does not inherit the parent's peak)."""
    with open("/proc/self/status") as f:
        kib = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    return int(kib) / 1024


def rss_worker(library, steps, every):
    """Run in a subprocess: RSS after import and along ``steps`` training steps, and the peak, as JSON."""
    if library == "torch":
        import torch  # noqa: F401  (counted in "after import")
    report = {"after_import": current_rss_mb()}
    trainer = make_trainer(library)
    report["rss"] = {}
    for _ in range(steps):
        trainer.train_step()
        if trainer.step == 1 or trainer.step % every == 0:
            report["rss"][trainer.step] = current_rss_mb()
    report["peak"] = peak_rss_mb()
    print(json.dumps(report))


def measure_rss(library, steps, every):
    out = subprocess.run([sys.executable, __file__, "--rss-worker", library, "--rss-steps", str(steps),
                          "--rss-every", str(every)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# --------------------------------------------------------------------------- profile
CATEGORIES = [   # (category, substrings of "path::Qualname"), first match wins
    ("other (embedding, data, Python glue)", ("ops/linalg.py::Embedding", "ops/linalg.py::embedding")),
    ("matmul (linear, matmul)", ("ops/linalg.py",)),
    ("norms", ("ops/norm/", "kernels/", "nn/row_norms.py", "nn/normalization.py")),
    ("attention (sdpa, softmax, rotary)", ("ops/attention.py", "ops/softmax.py", "llama.py::Rotary", "llama.py::rotate")),
    ("cross-entropy", ("ops/loss.py",)),
    ("elementwise, shape, reductions", ("ops/elementwise.py", "ops/shape.py", "ops/reduce.py", "ops/activation.py",
                                        "ops/dims.py")),
    ("engine (graph, Tensor, Module calls)", ("autograd/", "minigrad/tensor.py", "nn/module.py", "minigrad/dtypes.py",
                                              "minigrad/creation.py")),
    ("optimizer (AdamW, clipping, schedule)", ("optim/", "nn/utils.py")),
]
OTHER = CATEGORIES[0][0]


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
    """'path::Qualname' of a profiled function, or None when it is not Python source of this project."""
    path, line, name = func
    path = path.replace(os.sep, "/")
    if "/minigrad/" not in path and not path.endswith("llama.py") and "tiny_transformer" not in path:
        return None
    qual = name
    for first, last, q in _qualnames(path):
        if first <= line <= last:
            qual = q
    return f"{path}::{qual}"


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


def profile_steps(trainer, steps):
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        trainer.train_step()
    profiler.disable()
    return pstats.Stats(profiler).stats


# --------------------------------------------------------------------------- report
def mb(x):
    return f"{x:.0f} MB"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds and steps (a smoke run)")
    p.add_argument("--rss-worker", choices=("minigrad", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--rss-steps", type=int, default=500)
    p.add_argument("--rss-every", type=int, default=50)
    args = p.parse_args()
    if args.rss_worker:
        return rss_worker(args.rss_worker, args.rss_steps, args.rss_every)
    rounds, rss_steps, profiled = (5, 50, 2) if args.quick else (30, args.rss_steps, 10)
    torch = torch_or_none()
    libraries = ["minigrad"] + (["torch"] * (torch is not None))
    print(f"# Tiny Transformer training step: B={SHAPE['batch_size']}, T={SHAPE['seq_len']}, "
          f"D={SHAPE['d_model']}, L={SHAPE['n_layers']}, H={SHAPE['n_heads']}, vocab {VOCAB}, float32, "
          f"{THREADS} threads" + (f", PyTorch {torch.__version__}" if torch else ", PyTorch not installed"))

    trainers = {(lib, norm): make_trainer(lib, norm) for norm in ("rmsnorm", "layernorm") for lib in libraries}
    medians = time_interleaved({key: t.train_step for key, t in trainers.items()}, rounds=rounds, warmup=3)
    rows = []
    for norm in ("rmsnorm", "layernorm"):
        ours = medians[("minigrad", norm)]
        row = [norm, f"{ours * 1e3:.1f} ms"]
        if torch is not None:
            theirs = medians[("torch", norm)]
            row += [f"{theirs * 1e3:.1f} ms", f"{ours / theirs:.2f}x"]
        rows.append(row)
    print("\n## Step time (median of interleaved steps)\n")
    print(table(["model", "minigrad", "PyTorch eager", "minigrad / PyTorch"][:len(rows[0])], rows))
    ratio = medians[("minigrad", "rmsnorm")] / medians[("minigrad", "layernorm")]
    print(f"\nminigrad RMSNorm model / LayerNorm model: {ratio:.3f}x "
          f"({'faster' if ratio < 1 else 'NOT faster'} with RMSNorm)")

    print(f"\n## Memory (fresh process each, {rss_steps} steps)\n")
    reports = {lib: measure_rss(lib, rss_steps, args.rss_every if not args.quick else 10) for lib in libraries}
    rows = []
    for lib, r in reports.items():
        rss = {int(k): v for k, v in r["rss"].items()}
        first, last = rss[1], rss[max(rss)]
        middle = rss[min(s for s in rss if s >= max(rss) // 5)]
        rows.append([lib, mb(r["after_import"]), mb(first), mb(r["peak"]),
                     f"{mb(middle)} -> {mb(last)} ({last - middle:+.1f} MB)"])
    print(table(["library", "RSS after import", "after step 1", "peak RSS",
                 f"RSS step {max(rss) // 5} -> {max(rss)}"], rows))

    print(f"\n## Where minigrad's step goes (cProfile, {profiled} steps, self time incl. the NumPy/numba "
          "calls each function makes)\n")
    trainer = trainers[("minigrad", "rmsnorm")]
    times, top = categorize(profile_steps(trainer, profiled))
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
