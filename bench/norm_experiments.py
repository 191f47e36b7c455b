"""The norm papers' experiments with minigrad's own numbers: RMSNorm vs LayerNorm vs ScaleNorm vs DyT vs no norm
(and the placements: post-norm, Peri-LN, DeepNorm, QK-norm) in the LLaMA example on tinyshakespeare.

    python bench/norm_experiments.py                       # everything, into runs/norm_experiments/
    python bench/norm_experiments.py --quick               # 20 steps, 1 seed, 2 timing rounds: a check that it runs
    python bench/norm_experiments.py --only timing         # just the interleaved time per step
    python bench/norm_experiments.py --publish             # also copy the JSON and plots to docs/results/

Quality: each (norm, seed) trains the same small model (``examples/tiny_transformer.py``'s ``Trainer``, its
AdamW, warmup + cosine schedule and clipping) in its own fresh process, one run after another; the
validation loss (nats per character, fixed windows of the last 10% of the text, the same windows for every
norm at a given seed) is recorded every ``--eval-every`` steps. Reported: mean, min and max over seeds.

Time per step: the machine may be shared, so absolute times mean little. One process builds one model per
norm (same config, same batches) and, for ``--rounds`` rounds, runs ``--steps-per-round`` training steps of
each model in turn (the order rotated every round), timing each model's steps; within a round every norm
sees about the same machine load, so the per-round ratio to RMSNorm is what is reported (median and
quartiles over rounds). The same is done for the norm layers alone (forward + backward on (B*T, D) float32).

The text is ``--text``, else ``$MINIGRAD_DATA_DIR/tinyshakespeare.txt``, else ``../shared/data/tinyshakespeare.txt``
next to the repository. Results go to ``--out`` (``runs/norm_experiments``); tracked files under docs/results/
are written only with ``--publish``.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]   # this checkout's minigrad and the example

NORMS = ("rmsnorm", "layernorm", "scalenorm", "dyt", "none")
VARIANTS = {   # name: (norm, placement, qk_norm[, extra config]) beyond the pre-norm comparison
    "rmsnorm+post": ("rmsnorm", "post", "none"),
    "rmsnorm+peri": ("rmsnorm", "peri", "none"),
    "layernorm+deepnorm": ("layernorm", "deepnorm", "none"),
    "rmsnorm+qk-head": ("rmsnorm", "pre", "head"),
    "rmsnorm+qk-model": ("rmsnorm", "pre", "model"),
    "dyt a0=1": ("dyt", "pre", "none", {"dyt_alpha": 1.0}),     # DyT's alpha at initialization (paper: 0.5;
    "dyt a0=2": ("dyt", "pre", "none", {"dyt_alpha": 2.0}),     # its LLaMA runs tune it per layer type)
    "dyt+final rmsnorm": ("dyt", "pre", "none", {"final_rmsnorm": True}),
    "dyt a0=0.25": ("dyt", "pre", "none", {"dyt_alpha": 0.25}),
    "none+final rmsnorm": ("none", "pre", "none", {"final_rmsnorm": True}),
}
MODEL = dict(d_model=64, n_layers=2, n_heads=4, batch_size=16, seq_len=64, lr=2e-3, warmup=30)
PUBLISHED = ROOT / "docs" / "results" / "norm_experiments"


def text_path(given=None):
    if given:
        return Path(given)
    base = os.environ.get("MINIGRAD_DATA_DIR")
    return Path(base) / "tinyshakespeare.txt" if base else ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"


def config(text, norm, seed, steps, eval_every, placement="pre", qk_norm="none", extra=None):
    from tiny_transformer import DEFAULTS
    return {**DEFAULTS["common"], **DEFAULTS["text"], **MODEL, "text": str(text), "norm": norm, "seed": seed,
            "steps": steps, "eval_every": eval_every, "placement": placement, "qk_norm": qk_norm, **(extra or {})}


def adjust(model, cfg):
    """The experiment-only options of a config: DyT's alpha at initialization (``dyt_alpha``), or RMSNorm
    instead of DyT before the head (``final_rmsnorm``: is the bounded last layer what costs DyT here?)."""
    import minigrad as mg
    if "dyt_alpha" in cfg:
        for m in model.modules():
            if isinstance(m, mg.nn.DynamicTanh):
                m.alpha_init_value = cfg["dyt_alpha"]
                m.reset_parameters()
    if cfg.get("final_rmsnorm"):
        model.norm = mg.nn.RMSNorm(cfg["d_model"], eps=1e-5)
    return model


# --------------------------------------------------------------------------- workers (each in a fresh process)
def quality_worker(cfg):
    """Train one run; print its history as JSON (loss per step, evaluations, seconds per step)."""
    import minigrad as mg
    from tiny_transformer import Trainer, make_model, make_task
    task = make_task(cfg)
    trainer = Trainer(mg, adjust(make_model(cfg, len(task.vocab)), cfg), task, cfg)
    seconds = []
    while trainer.step < cfg["steps"]:
        start = time.perf_counter()
        loss = trainer.train_step()
        seconds.append(time.perf_counter() - start)
        if trainer.eval_due():
            trainer.evaluate()
        if not np.isfinite(loss):
            break
    print(json.dumps({"config": cfg, "loss": trainer.history["loss"], "evals": trainer.history["evals"],
                      "step_s": seconds}))


def timing_worker(text, rounds, steps_per_round, seed=0):
    """Interleaved time per training step, and per norm-layer forward + backward, of every norm (module docstring)."""
    import minigrad as mg
    from llama import NORMS as CHOICES
    from tiny_transformer import Trainer, make_model, make_task
    from minigrad.ops.norm.registry import transformer_norms
    trainers = {}
    for norm in NORMS:
        cfg = config(text, norm, seed, steps=10 ** 6, eval_every=0)
        task = make_task(cfg)
        trainers[norm] = Trainer(mg, make_model(cfg, len(task.vocab)), task, cfg)
        for _ in range(2):                                     # warm-up: numba compiles, buffers are allocated
            trainers[norm].train_step()
    rng = np.random.default_rng(0)
    rows, d = MODEL["batch_size"] * MODEL["seq_len"], MODEL["d_model"]
    x = mg.tensor(rng.standard_normal((rows, d), dtype=np.float32), requires_grad=True)
    g = mg.tensor(rng.standard_normal((rows, d), dtype=np.float32))
    specs = transformer_norms()
    layers = {n: (specs[n].make_transformer_norm(mg.nn, d, 1e-5) if n in specs else mg.nn.Identity()) for n in NORMS}
    assert set(CHOICES) == set(NORMS)

    def layer_step(norm):
        x.grad = None
        layers[norm](x).backward(g)
    step_s = {n: [] for n in NORMS}
    layer_s = {n: [] for n in NORMS}
    for r in range(rounds):
        order = NORMS[r % len(NORMS):] + NORMS[:r % len(NORMS)]
        for norm in order:
            start = time.perf_counter()
            for _ in range(steps_per_round):
                trainers[norm].train_step()
            step_s[norm].append((time.perf_counter() - start) / steps_per_round)
        for norm in order:
            layer_step(norm)
            start = time.perf_counter()
            for _ in range(20):
                layer_step(norm)
            layer_s[norm].append((time.perf_counter() - start) / 20)
    print(json.dumps({"step_s": step_s, "layer_s": layer_s, "rows": rows, "d_model": d}))


def run_worker(args, threads=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(args)], capture_output=True, text=True,
                         env=env)
    if out.returncode:
        raise RuntimeError(f"worker {args} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- summaries
def ratio_summary(times, base="rmsnorm"):
    """{norm: {median, q25, q75, min, max}} of the per-round time ratios norm / base, and base's median seconds."""
    base_t = np.array(times[base])
    out = {}
    for norm, t in times.items():
        r = np.array(t) / base_t
        out[norm] = {"median": float(np.median(r)), "q25": float(np.percentile(r, 25)),
                     "q75": float(np.percentile(r, 75)), "min": float(r.min()), "max": float(r.max()),
                     "median_s": float(np.median(t))}
    return out


def quality_summary(runs):
    """{name: {final: [per seed], mean, min, max, steps: [...], curve_mean/min/max: [...]}} over seeds."""
    out = {}
    for name, seeds in runs.items():
        finals = [s["evals"][-1]["val_loss"] if s["evals"] else float("nan") for s in seeds]
        steps = [e["step"] for e in seeds[0]["evals"]]
        curves = np.array([[e["val_loss"] for e in s["evals"]] for s in seeds if len(s["evals"]) == len(steps)])
        out[name] = {"final": finals, "mean": float(np.mean(finals)), "min": float(np.min(finals)),
                     "max": float(np.max(finals)), "steps": steps, "curve_mean": curves.mean(0).tolist(),
                     "curve_min": curves.min(0).tolist(), "curve_max": curves.max(0).tolist(),
                     "train_s_per_step_median": float(np.median([np.median(s["step_s"]) for s in seeds]))}
    return out


def plot(results, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plots)")
        return []
    paths = []
    for key, title in (("quality", "pre-norm, 5 norms"), ("variants", "placements and QK-norm")):
        summary = results.get(key)
        if not summary:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for name, s in summary.items():
            line, = ax.plot(s["steps"], s["curve_mean"], "o-", ms=3, label=f"{name} ({s['mean']:.3f})")
            ax.fill_between(s["steps"], s["curve_min"], s["curve_max"], color=line.get_color(), alpha=0.2)
        n = len(next(iter(summary.values()))["final"])
        ax.set(xlabel="step", ylabel="validation loss (nats/char)",
               title=f"tinyshakespeare, {title}: mean and min-max over {n} seed(s)")
        ax.set_ylim(top=min(4.5, ax.get_ylim()[1]))
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(out / f"{key}.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    for key in [k for k in results if k.startswith("timing")]:
        timing = results[key]
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        for ax, part, what in zip(axes, ("step", "layer"), ("training step", "norm layer fwd+bwd")):
            ratios = timing[f"{part}_ratios_raw"]
            names = list(ratios)
            ax.boxplot([ratios[n] for n in names])
            ax.set_xticks(range(1, len(names) + 1), names)
            ax.axhline(1.0, color="0.5", lw=0.8)
            ax.set(ylabel="time / RMSNorm's (same round)", title=f"{what}: {len(ratios[names[0]])} interleaved rounds, "
                   f"{timing.get('numba_threads', '?')} numba thread(s)")
            if part == "layer":
                ax.set_yscale("log")
        fig.tight_layout()
        paths.append(out / f"{key}.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


def markdown(results):
    """The results as Markdown tables (written next to the JSON as summary.md)."""
    setup = results.get("setup", {})
    m = setup.get("model", MODEL)
    lines = [f"# Norm experiments: {setup.get('text', 'tinyshakespeare')}, the LLaMA example (d_model {m['d_model']}, "
             f"{m['n_layers']} layers, {m['n_heads']} heads, batches of {m['batch_size']} x {m['seq_len']} characters, "
             f"AdamW lr {m['lr']}, {setup.get('steps')} steps)", "",
             "Written by bench/norm_experiments.py from results.json; plots quality.png, variants.png, timing*.png.", ""]
    for part, title in (("quality", "Pre-norm, five norms"), ("variants", "Placements, QK-norm, DyT variants")):
        summary = results.get(part)
        if not summary:
            continue
        base = summary.get("rmsnorm") or results.get("quality", {}).get("rmsnorm")
        lines += [f"## {title}: validation loss (nats/char) at the last step", "",
                  "| run | mean | min | max | per seed | paired difference to RMSNorm (same seeds) |",
                  "|---|---:|---:|---:|---|---|"]
        for name, v in summary.items():
            paired = ([a - b for a, b in zip(v["final"], base["final"])] if base else [])
            lines.append(f"| {name} | {v['mean']:.3f} | {v['min']:.3f} | {v['max']:.3f} | "
                         f"{', '.join(f'{x:.3f}' for x in v['final'])} | "
                         f"{', '.join(f'{x:+.3f}' for x in paired)} |")
        lines.append("")
    for key in [k for k in results if k.startswith("timing")]:
        t = results[key]
        lines += [f"## Time, {t.get('numba_threads', '?')} numba thread(s): ratio to RMSNorm in the same round "
                  f"(median [quartiles], {t['rounds']} rounds)", "",
                  "| norm | training step | step ms (median) | norm layer fwd+bwd | layer ms (median) |",
                  "|---|---|---:|---|---:|"]
        for name in t["step"]:
            st, la = t["step"][name], t["layer"][name]
            lines.append(f"| {name} | {st['median']:.3f} [{st['q25']:.3f}, {st['q75']:.3f}] | "
                         f"{st['median_s'] * 1e3:.1f} | {la['median']:.3f} [{la['q25']:.3f}, {la['q75']:.3f}] | "
                         f"{la['median_s'] * 1e3:.3f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--text", help="the text file (default: tinyshakespeare, module docstring)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--variant-seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--rounds", type=int, default=9, help="timing rounds")
    p.add_argument("--steps-per-round", type=int, default=3)
    p.add_argument("--timing-threads", type=int, nargs="+", default=[0],
                   help="numba thread counts of the timing runs (0: numba's default, all cores)")
    p.add_argument("--only", choices=("quality", "variants", "timing"), nargs="+")
    p.add_argument("--variants", nargs="+", choices=list(VARIANTS), help="which variants (default: all)")
    p.add_argument("--quick", action="store_true", help="20 steps, 1 seed, 2 timing rounds of 1 step")
    p.add_argument("--out", default=str(ROOT / "runs" / "norm_experiments"))
    p.add_argument("--publish", action="store_true", help=f"also copy results.json and the plots to {PUBLISHED}")
    p.add_argument("--report-only", action="store_true", help="run nothing: redraw the plots and summary.md from "
                   "results.json (with --publish: and copy them)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        job = json.loads(args.worker)
        return (quality_worker(job["cfg"]) if job["kind"] == "quality" else
                timing_worker(job["text"], job["rounds"], job["steps_per_round"]))
    if args.quick:
        args.steps, args.eval_every, args.seeds, args.variant_seeds = 20, 10, [0], [0]
        args.rounds, args.steps_per_round = 2, 1
    text = text_path(args.text)
    if not text.is_file():
        raise SystemExit(f"{text} not found: give --text or set MINIGRAD_DATA_DIR")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    if args.report_only:
        args.only = []
    else:                                      # one record per invocation (runs add to the same results.json)
        results["setup"] = {"model": MODEL, "steps": args.steps, "eval_every": args.eval_every, "text": text.name,
                            "cpus": os.cpu_count()}
        results.setdefault("invocations", []).append(
            {"argv": sys.argv[1:], "seeds": args.seeds, "variant_seeds": args.variant_seeds,
             "load_average_at_start": os.getloadavg()[0], "started": time.strftime("%Y-%m-%d %H:%M:%S")})
    parts = args.only if args.only is not None else ("timing", "quality", "variants")

    def save():
        path.write_text(json.dumps(results, indent=1))

    if "timing" in parts:
        for threads in args.timing_threads:
            t = run_worker({"kind": "timing", "text": str(text), "rounds": args.rounds,
                            "steps_per_round": args.steps_per_round}, threads)
            key = "timing" if not threads else f"timing_{threads}thread"
            results[key] = {"step": ratio_summary(t["step_s"]), "layer": ratio_summary(t["layer_s"]),
                            "step_ratios_raw": {n: (np.array(v) / np.array(t["step_s"]["rmsnorm"])).tolist()
                                                for n, v in t["step_s"].items()},
                            "layer_ratios_raw": {n: (np.array(v) / np.array(t["layer_s"]["rmsnorm"])).tolist()
                                                 for n, v in t["layer_s"].items()},
                            "rounds": args.rounds, "steps_per_round": args.steps_per_round, "numba_threads": threads
                            or os.cpu_count(), "layer_input": [t["rows"], t["d_model"]],
                            "load_average": os.getloadavg()[0]}
            save()
            print(f"{key}:", json.dumps({k: round(v["median"], 3) for k, v in results[key]["step"].items()}),
                  flush=True)
    for part, names, seeds in (("quality", {n: (n, "pre", "none") for n in NORMS}, args.seeds),
                               ("variants", {k: VARIANTS[k] for k in args.variants or VARIANTS},
                                args.variant_seeds)):
        if part not in parts:
            continue
        runs = {}
        for seed in seeds:                     # seed-major: a partial run still compares every norm
            for name, (norm, placement, qk, *extra) in names.items():
                start = time.perf_counter()
                run = run_worker({"kind": "quality", "cfg": config(text, norm, seed, args.steps, args.eval_every,
                                                                   placement, qk, *extra)})
                runs.setdefault(name, []).append(run)
                final = run["evals"][-1]["val_loss"] if run["evals"] else float("nan")
                print(f"{part} {name} seed {seed}: val loss {final:.4f} ({time.perf_counter() - start:.0f} s)",
                      flush=True)
                complete = {k: v for k, v in runs.items() if len(v) == len(runs[next(iter(runs))])}
                results[part] = {**results.get(part, {}), **quality_summary(complete)}   # other names kept
                results[f"{part}_runs"] = {**results.get(f"{part}_runs", {}),
                                           **{k: [{"seed": r["config"]["seed"], "evals": r["evals"],
                                                   "median_step_s": float(np.median(r["step_s"]))} for r in v]
                                              for k, v in runs.items()}}
                save()
    plots = plot(results, out)
    (out / "summary.md").write_text(markdown(results))
    print(f"results: {path}" + "".join(f"\nplot: {p}" for p in plots))
    if args.publish:
        PUBLISHED.mkdir(parents=True, exist_ok=True)
        for f in [path, out / "summary.md"] + plots:
            shutil.copy(f, PUBLISHED / f.name)
        print(f"copied to {PUBLISHED}")
    return results


if __name__ == "__main__":
    main()
