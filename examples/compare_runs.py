"""Draw the loss curves of several tiny_transformer.py runs in one picture, and summarize them in a JSON file.

    python examples/tiny_transformer.py                      # float32: runs/tiny_transformer/sort-rmsnorm/
    python examples/tiny_transformer.py --dtype bfloat16     # autocast: runs/tiny_transformer/sort-rmsnorm-bfloat16/
    python examples/compare_runs.py runs/tiny_transformer/sort-rmsnorm runs/tiny_transformer/sort-rmsnorm-bfloat16
        # -> runs/compare_runs/sort-rmsnorm-vs-sort-rmsnorm-bfloat16/curves.png and summary.json

Each argument is a run's folder (or its ``history.json``). A run is labelled by the settings in which it
differs from the others (``dtype bfloat16``), or by its folder's name. The picture (``curves.png``, with
matplotlib) has every run's training loss per step and its evaluations; the summary (``summary.json``) each
run's config, evaluations, final training loss and wall time, and the machine it was written on. They go
to ``--out DIR``, by default ``runs/compare_runs/<run>-vs-<run>...``.
"""
import argparse
import json
import os
import platform
import sys

import numpy as np

from tiny_transformer import plot_histories


def read_history(path):
    """The history.json of a run folder (or the file itself)."""
    path = os.path.join(path, "history.json") if os.path.isdir(path) else path
    with open(path) as f:
        return json.load(f)


def labels_of(paths, histories):
    """A label per run: the config values that differ between the runs (the folder name if none do)."""
    configs = [h["config"] for h in histories]
    keys = sorted({k for c in configs for k in c if len({json.dumps(d.get(k)) for d in configs}) > 1})
    return [", ".join(f"{k} {c.get(k)}" for k in keys) or os.path.basename(os.path.normpath(p))
            for p, c in zip(paths, configs)]


def machine():
    """The CPU, thread count and library versions the runs are assumed to have shared."""
    import numba
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "numba_threads": numba.get_num_threads(),
            "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__}


def summarize(labels, histories):
    runs = []
    for label, history in zip(labels, histories):
        runs.append({"label": label, "config": history["config"], "evals": history["evals"],
                     "final": history["evals"][-1] if history["evals"] else None,
                     "final_train_loss": history["loss"][-1] if history["loss"] else None,
                     "wall_time_s": history.get("wall_time_s")})
    return {"runs": runs, "machine": machine()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", metavar="RUN", help="a run folder (or its history.json)")
    p.add_argument("--out", metavar="DIR",
                   help="where curves.png and summary.json go (default: runs/compare_runs/<run>-vs-<run>...)")
    p.add_argument("--title", help="the picture's title (default: the task, the norm and the runs' labels)")
    args = p.parse_args(argv)
    histories = [read_history(path) for path in args.runs]
    labels = labels_of(args.runs, histories)
    names = [os.path.basename(os.path.normpath(os.path.dirname(p) if p.endswith(".json") else p)) for p in args.runs]
    out = args.out or os.path.join("runs", "compare_runs", "-vs-".join(names))
    os.makedirs(out, exist_ok=True)
    cfg = histories[0]["config"]
    metric = "val_loss" if cfg.get("text") else "accuracy"
    title = args.title or f"{'text' if cfg.get('text') else 'sort'}, {cfg['norm']}: " + " vs ".join(labels)
    plot = os.path.join(out, "curves.png")
    if not plot_histories(plot, dict(zip(labels, histories)), metric, title):
        plot = None
        print("(matplotlib not installed: no picture, pip install matplotlib)", file=sys.stderr)
    summary = summarize(labels, histories)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for run in summary["runs"]:
        final = run["final"] or {}
        print(f"{run['label']}: " + ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k != "step") +
              f" at step {final.get('step')} | final train loss {run['final_train_loss']:.4f}" +
              (f" | {run['wall_time_s']} s" if run["wall_time_s"] is not None else ""))
    print(f"wrote {out}/" + ("curves.png and " if plot else "") + "summary.json")
    return summary


if __name__ == "__main__":
    main()
