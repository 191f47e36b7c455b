"""Which normalization does a small CNN want, as the batch gets small? The GroupNorm paper's experiment
(Wu & He, "Group Normalization", ECCV 2018, Figure 1) at the scale of this machine, on real data.

    pip install -e ".[examples]"          # scikit-learn, for its bundled copy of the digits
    python examples/cnn_norms.py          # the full study (a few minutes on 2 cores): runs/cnn_norms/full/
    python examples/cnn_norms.py --quick  # two batch sizes, one seed, under a minute: runs/cnn_norms/quick/
    python examples/cnn_norms.py --write-results   # the full study, also into docs/results/ (the committed numbers)

Data: the UCI handwritten digits that scikit-learn ships inside its package (1,797 images of 8x8
pixels, 10 classes; no download), split once into 1,437 training and 360 test images by a fixed
permutation. Model, the same for every normalization N:

    conv 3x3 (1 -> 16) - N - ReLU - max pool 2 - conv 3x3 (16 -> 32) - N - ReLU - max pool 2 - linear (128 -> 10)

with N one of: none, BatchNorm2d, GroupNorm with G = 1 (LayerNorm-like), 4 and C (InstanceNorm-like),
InstanceNorm2d (affine) and LayerNorm over (C, H, W). Each is trained with SGD + momentum 0.9 for the
same number of epochs at each batch size, the learning rate scaled linearly with the batch size
(lr = 0.1 * B / 32, the paper's rule), from several seeds; the test accuracy is measured in eval mode
(BatchNorm then uses its running statistics, which a batch of 2 estimates badly: the paper's point).

Prints a table (mean and spread over seeds), writes it as JSON (``cnn_norms.json``) and, with matplotlib,
draws test error against batch size (``cnn_norms.png``), into ``--out DIR``: by default
``runs/cnn_norms/<config>``, where the config is ``full`` (the defaults), ``quick``, or the settings that
differ from the defaults. ``--write-results`` (the full study only) also writes both into ``docs/results/``,
whose copies the README and the docs show.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH_SIZES = (2, 4, 8, 16, 32, 64)
SEEDS, EPOCHS = 3, 8            # the full study's
NORMS = {   # name: a factory of the norm layer for (channels, height, width)
    "none": lambda c, h, w: nn.Identity(),
    "BatchNorm": lambda c, h, w: nn.BatchNorm2d(c),
    "GroupNorm G=1": lambda c, h, w: nn.GroupNorm(1, c),
    "GroupNorm G=4": lambda c, h, w: nn.GroupNorm(4, c),
    "GroupNorm G=C": lambda c, h, w: nn.GroupNorm(c, c),
    "InstanceNorm": lambda c, h, w: nn.InstanceNorm2d(c, affine=True),
    "LayerNorm": lambda c, h, w: nn.LayerNorm([c, h, w]),
}


def load_digits_split(seed=0, n_test=360):
    """(x_train, y_train, x_test, y_test): images (N, 1, 8, 8) scaled to [0, 1], float32; a fixed split."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("examples/cnn_norms.py needs scikit-learn for its bundled digits: pip install -e \".[examples]\"")
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]          # (1797, 1, 8, 8)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def make_model(norm):
    factory = NORMS[norm]
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), factory(16, 8, 8), nn.ReLU(), nn.MaxPool2d(2),     # (B, 16, 4, 4)
        nn.Conv2d(16, 32, 3, padding=1), factory(32, 4, 4), nn.ReLU(), nn.MaxPool2d(2),    # (B, 32, 2, 2)
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def train_and_test(norm, batch_size, seed, epochs, data):
    """Test accuracy of one run: ``epochs`` passes over the training set in shuffled batches."""
    x_train, y_train, x_test, y_test = data
    mg.manual_seed(seed)
    model = make_model(norm)
    opt = mg.optim.SGD(model.parameters(), lr=0.1 * batch_size / 32, momentum=0.9)
    rng = np.random.default_rng(seed)
    model.train()
    for _ in range(epochs):
        order = rng.permutation(len(x_train))
        for start in range(0, len(order) - batch_size + 1, batch_size):   # full batches only
            idx = order[start:start + batch_size]
            loss = F.cross_entropy(model(mg.tensor(x_train[idx])), mg.tensor(y_train[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with mg.no_grad():
        predicted = model(mg.tensor(x_test)).argmax(-1).numpy()
    return float((predicted == y_test).mean())


def progress_bar(total):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="run", dynamic_ncols=True)


def run_study(norms, batch_sizes, seeds, epochs):
    data = load_digits_split()
    runs = [(n, b, s) for n in norms for b in batch_sizes for s in range(seeds)]
    bar, start, results = progress_bar(len(runs)), time.perf_counter(), {}
    for i, (norm, b, seed) in enumerate(runs):
        acc = train_and_test(norm, b, seed, epochs, data)
        results.setdefault(norm, {}).setdefault(str(b), []).append(acc)
        if bar is not None:
            bar.set_postfix_str(f"{norm}, B={b}, seed {seed}: {acc:.3f}")
            bar.update(1)
        else:
            print(f"[{i + 1}/{len(runs)}] {norm}, B={b}, seed {seed}: test accuracy {acc:.3f}", flush=True)
    if bar is not None:
        bar.close()
    return results, time.perf_counter() - start


def table(results, batch_sizes):
    """Test accuracy, mean ± standard deviation over seeds, one row per norm."""
    head = f"{'normalization':<16}" + "".join(f"{'B=' + str(b):>15}" for b in batch_sizes)
    lines = [head, "-" * len(head)]
    for norm, by_batch in results.items():
        cells = []
        for b in batch_sizes:
            accs = np.array(by_batch[str(b)])
            cells.append(f"{accs.mean():.3f} ± {accs.std():.3f}".rjust(15))
        lines.append(f"{norm:<16}" + "".join(cells))
    return "\n".join(lines)


def plot(results, batch_sizes, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (pip install -e \".[extras]\")")
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for norm, by_batch in results.items():
        errors = [100 * (1 - np.mean(by_batch[str(b)])) for b in batch_sizes]
        spread = [100 * np.std(by_batch[str(b)]) for b in batch_sizes]
        ax.errorbar(batch_sizes, errors, yerr=spread, marker="o", capsize=3, label=norm)
    ax.set_xscale("log", base=2)
    ax.set_xticks(batch_sizes, [str(b) for b in batch_sizes])
    ax.set_xlabel("batch size (images per worker)")
    ax.set_ylabel("test error (%)")
    ax.set_title("UCI digits, small CNN: test error vs batch size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot: {path}")


def run_name(args, batch_sizes, seeds, epochs):
    """The folder name of a configuration: ``full``, ``quick``, or its settings (``seeds1-epochs2-b8-16``)."""
    if args.quick:
        return "quick"
    parts = [f"seeds{seeds}" if seeds != SEEDS else "", f"epochs{epochs}" if epochs != EPOCHS else "",
             "b" + "-".join(map(str, batch_sizes)) if batch_sizes != BATCH_SIZES else "",
             "norms-" + "-".join(n.replace(" ", "").replace("=", "") for n in args.norms)
             if args.norms != list(NORMS) else ""]
    return "-".join(p for p in parts if p) or "full"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="batch sizes 2 and 32, one seed, 3 epochs")
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--norms", nargs="+", choices=list(NORMS), default=list(NORMS))
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=None, help=f"default {list(BATCH_SIZES)}")
    parser.add_argument("--out", metavar="DIR", help="where the JSON and the plot go (default: runs/cnn_norms/<config>)")
    parser.add_argument("--json", help="the JSON's path (default: OUT/cnn_norms.json)")
    parser.add_argument("--plot", help="the plot's path (default: OUT/cnn_norms.png)")
    parser.add_argument("--write-results", action="store_true",
                        help="also write the JSON and the plot into docs/results/ (the committed copies; full study only)")
    args = parser.parse_args(argv)
    batch_sizes = tuple(args.batch_sizes or ((2, 32) if args.quick else BATCH_SIZES))
    seeds, epochs = (1, 3) if args.quick else (args.seeds, args.epochs)
    name = run_name(args, batch_sizes, seeds, epochs)
    if args.write_results and name != "full":
        parser.error(f"--write-results replaces the committed results of the full study: run it without --quick "
                     f"and with the default settings (this configuration is {name!r})")
    out = args.out or os.path.join("runs", "cnn_norms", name)
    targets = [(args.json or os.path.join(out, "cnn_norms.json"), args.plot or os.path.join(out, "cnn_norms.png"))]
    if args.write_results:
        targets.append((os.path.join(ROOT, "docs", "results", "cnn_norms.json"),
                        os.path.join(ROOT, "docs", "results", "cnn_norms.png")))

    results, seconds = run_study(args.norms, batch_sizes, seeds, epochs)
    print(f"\ntest accuracy on 360 held-out digits, mean ± std over {seeds} seed(s), {epochs} epochs, "
          f"lr = 0.1 * B / 32 ({seconds:.0f} s):\n")
    print(table(results, batch_sizes))
    for json_path, plot_path in targets:
        os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
        with open(json_path, "w") as fh:
            json.dump({"batch_sizes": list(batch_sizes), "seeds": seeds, "epochs": epochs, "seconds": seconds,
                       "accuracy": results}, fh, indent=1)
        print(f"numbers: {json_path}")
        os.makedirs(os.path.dirname(os.path.abspath(plot_path)), exist_ok=True)
        plot(results, batch_sizes, plot_path)


if __name__ == "__main__":
    main()
