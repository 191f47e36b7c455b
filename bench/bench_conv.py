"""Conv2d, forward and forward + backward: minigrad against PyTorch eager, each in its own fresh processes.

    python bench/bench_conv.py                # 3 rounds at 1 and 2 threads (a few minutes on a busy 2-core machine)
    python bench/bench_conv.py --quick        # 1 round, fewer samples: a check that it runs
    python bench/bench_conv.py --json out.json

The channel norms (BatchNorm2d, GroupNorm(8), InstanceNorm2d, affine) forward + backward at the shapes a
CNN gives them, from 2x16x8x8 to 32x32x32x32. The max poolings (float32, forward + backward): MaxPool2d(2)
as in the CNN below, an overlapping padded MaxPool2d(3, 2, 1) and AdaptiveMaxPool2d to 7x7 and to 1x1.
Float32 ``nn.Conv2d`` layers with a 3x3 kernel, padding 1, bias, at the CNN shapes of issue 12:

* 32x3x32x32 -> 32 channels (a first layer: few input channels, large images);
* 32x64x16x16 -> 64 channels (a middle layer);
* 32x64x16x16 depthwise (groups = 64, one 3x3 filter per channel), and 32x64x32x32 depthwise at stride 2
  (the downsampling layer of MobileNet-style networks).

"fwd" is the layer under ``no_grad``; "fwd+bwd" the layer and ``y.backward(g)`` with a fixed random upstream
gradient (input, weight and bias gradients). Each library runs in its own fresh processes (bench/common.py):
per round and thread count one process per library, rounds alternating, thread counts set alike before
import; each process warms every call up and reports its medians, the tables the medians over rounds.

And one training step (zero_grad, forward, cross entropy, backward, SGD with momentum) of a small CNN on
32x3x32x32 batches, with BatchNorm2d or GroupNorm(8) after each convolution (issue 12's target: at most
1.5x PyTorch's time on 2 cores)::

    conv 3x3 3->32, norm, ReLU, max pool 2;  conv 3x3 32->64, norm, ReLU, max pool 2;
    conv 3x3 64->64, norm, ReLU, adaptive average pool to 1x1;  linear 64->10
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import (Worker, available, comparison_arguments, emit, environment, fmt_ms, machine_line,  # noqa: E402
                    median_over_rounds, ratio, run_rounds, set_threads, spread, table, time_call, write_json)

# name: (input shape N, C, H, W; out channels; groups; stride)
LAYERS = {
    "32x3x32x32 -> 32, 3x3": ((32, 3, 32, 32), 32, 1, 1),
    "32x64x16x16 -> 64, 3x3": ((32, 64, 16, 16), 64, 1, 1),
    "32x64x16x16 depthwise 3x3": ((32, 64, 16, 16), 64, 64, 1),
    "32x64x32x32 depthwise 3x3, stride 2": ((32, 64, 32, 32), 64, 64, 2),
}
PASSES = ("fwd", "fwd+bwd")
CNN_NORMS = ("BatchNorm2d", "GroupNorm(8)")
# the channel norms at the shapes a CNN gives them (issue 12, item 4): (N, C, H, W) after a convolution
NORM_SHAPES = [(2, 16, 8, 8), (8, 32, 16, 16), (32, 64, 8, 8), (32, 32, 32, 32)]
NORM_LAYERS = ("BatchNorm2d", "GroupNorm(8)", "InstanceNorm2d")
# the max poolings (issue 12): name -> (module arguments, input shape N, C, H, W)
POOL_LAYERS = {
    "MaxPool2d(2) 32x32x32x32": (("MaxPool2d", 2), (32, 32, 32, 32)),
    "MaxPool2d(2) 32x64x16x16": (("MaxPool2d", 2), (32, 64, 16, 16)),
    "MaxPool2d(3, 2, 1) 32x64x32x32": (("MaxPool2d", 3, 2, 1), (32, 64, 32, 32)),
    "AdaptiveMaxPool2d((7, 7)) 32x64x32x32": (("AdaptiveMaxPool2d", (7, 7)), (32, 64, 32, 32)),
    "AdaptiveMaxPool2d(1) 32x64x32x32": (("AdaptiveMaxPool2d", 1), (32, 64, 32, 32)),
}
LIBRARIES = ("minigrad", "pytorch")


def worker(library, threads, quick):
    """Time every layer and pass with ``library`` (imported here, after the thread variables are set)."""
    lib = __import__("minigrad" if library == "minigrad" else "torch")
    set_threads(threads)
    rng = np.random.default_rng(0)
    result = {}
    for name, (shape, out_channels, groups, stride) in LAYERS.items():
        lib.manual_seed(0)
        layer = lib.nn.Conv2d(shape[1], out_channels, 3, stride=stride, padding=1, groups=groups)
        x = lib.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=True)
        out_size = tuple((n - 1) // stride + 1 for n in shape[2:])          # 3x3, padding 1
        g = lib.tensor(rng.standard_normal((shape[0], out_channels) + out_size, dtype=np.float32))

        def forward(layer=layer, x=x):
            with lib.no_grad():
                layer(x)

        def step(layer=layer, x=x, g=g):
            layer(x).backward(g)

        for pass_name, fn in zip(PASSES, (forward, step)):
            result[f"{name}|{pass_name}"] = time_call(fn, samples=5 if quick else 11, budget=0.5 if quick else 1.5)
    for norm in NORM_LAYERS:
        for shape in NORM_SHAPES:
            result[f"{norm} {'x'.join(map(str, shape))}|fwd+bwd"] = time_call(
                norm_step(lib, norm, shape, rng), samples=5 if quick else 11, budget=0.3 if quick else 1.0)
    for name, (module, shape) in POOL_LAYERS.items():
        result[f"{name}|fwd+bwd"] = time_call(pool_step(lib, module, shape, rng), samples=5 if quick else 11,
                                              budget=0.3 if quick else 1.0)
    for norm in CNN_NORMS:
        result[f"CNN, {norm}|train step"] = time_call(cnn_step(lib, norm, rng), samples=5 if quick else 11,
                                                      budget=0.5 if quick else 2.0)
    emit(result)


def norm_step(lib, norm, shape, rng):
    """Forward + backward of one channel norm layer (affine, float32) on ``shape``, as a closure."""
    c = shape[1]
    layer = {"BatchNorm2d": lambda: lib.nn.BatchNorm2d(c), "GroupNorm(8)": lambda: lib.nn.GroupNorm(8, c),
             "InstanceNorm2d": lambda: lib.nn.InstanceNorm2d(c, affine=True)}[norm]()
    x = lib.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=True)
    g = lib.tensor(rng.standard_normal(shape, dtype=np.float32))

    def step():
        x.grad = None
        layer(x).backward(g)
    return step


def pool_step(lib, module, shape, rng):
    """Forward + backward of one pooling layer ``module`` (its class name and arguments) on a float32 ``shape``,
    as a closure."""
    name, *args = module
    layer = getattr(lib.nn, name)(*args)
    x = lib.tensor(rng.standard_normal(shape, dtype=np.float32), requires_grad=True)
    g = lib.tensor(rng.standard_normal(tuple(layer(x).shape), dtype=np.float32))

    def step():
        x.grad = None
        layer(x).backward(g)
    return step


def cnn_step(lib, norm, rng):
    """One SGD step of the module docstring's CNN with ``norm`` after each convolution, as a closure."""
    nn = lib.nn

    def block(c_in, c_out):
        layer_norm = nn.BatchNorm2d(c_out) if norm == "BatchNorm2d" else nn.GroupNorm(8, c_out)
        return [nn.Conv2d(c_in, c_out, 3, padding=1), layer_norm, nn.ReLU()]
    lib.manual_seed(0)
    model = nn.Sequential(*block(3, 32), nn.MaxPool2d(2), *block(32, 64), nn.MaxPool2d(2), *block(64, 64),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.tensor(rng.standard_normal((32, 3, 32, 32), dtype=np.float32))
    y = lib.tensor(rng.integers(0, 10, 32))

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def report(results, thread_counts):
    """The tables: per layer and pass, both libraries' times, minigrad/PyTorch ratio, and the rounds' spread."""
    records = []
    for threads in thread_counts:
        medians = {lib: median_over_rounds(results[f"{lib} {threads}"]) for lib in LIBRARIES
                   if f"{lib} {threads}" in results}
        rows = []
        keys = ([(name, p) for name in LAYERS for p in PASSES]
                + [(f"{n} {'x'.join(map(str, shape))}", "fwd+bwd") for n in NORM_LAYERS for shape in NORM_SHAPES]
                + [(name, "fwd+bwd") for name in POOL_LAYERS]
                + [(f"CNN, {n}", "train step") for n in CNN_NORMS])
        for name, pass_name in keys:
            key = f"{name}|{pass_name}"
            times = {lib: m.get(key) for lib, m in medians.items()}
            lo, hi = spread(results[f"minigrad {threads}"], key)
            rows.append([name, pass_name, fmt_ms(times.get("minigrad")), fmt_ms(times.get("pytorch")),
                         ratio(times.get("minigrad"), times.get("pytorch")), f"{fmt_ms(lo)}-{fmt_ms(hi)}"])
            records.append({"layer": name, "pass": pass_name, "threads": threads, "median_s": times})
        print(f"\n## {threads} thread{'s' * (threads > 1)}\n")
        print(table(["Conv2d (float32) / CNN", "pass", "minigrad ms", "PyTorch ms", "minigrad / PyTorch",
                     "minigrad over rounds"], rows))
    return records


def main(argv=None):
    args = comparison_arguments(__doc__.split("\n\n")[0], str(HERE / "results" / "conv.json"), LIBRARIES).parse_args(argv)
    if args.worker:
        return worker(args.worker, args.threads, args.quick)
    rounds = args.rounds or (1 if args.quick else 3)
    thread_counts = sorted({1, min(2, os.cpu_count() or 1)})
    libraries = [lib for lib in LIBRARIES if available(lib)]
    print(f"# Conv2d, float32: each library in its own fresh processes, median over {rounds} alternating rounds of "
          f"each process's median after warm-up\n\n{machine_line()}; threads {thread_counts}. Times in ms.")
    workers = [Worker(f"{lib} {threads}", ["--worker", lib] + ["--quick"] * args.quick, threads=threads)
               for threads in thread_counts for lib in libraries]
    start = time.perf_counter()
    results = run_rounds(__file__, workers, rounds)
    print(f"\n({time.perf_counter() - start:.0f} s of timing; load average after it {os.getloadavg()[0]:.2f}: above "
          f"~0.5, other processes competed for the {os.cpu_count()} cores)")
    records = report(results, thread_counts)
    write_json(args.json, {"environment": environment(), "rounds": rounds, "records": records})
    print(f"\njson: {args.json}")


if __name__ == "__main__":
    main()
