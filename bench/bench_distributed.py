"""Data-parallel training throughput on this machine: samples per second with 1 and 2 MPI ranks, and the
time spent communicating.

    python bench/bench_distributed.py            # both models, 1 and 2 ranks, 3 rounds
    python bench/bench_distributed.py --quick    # 1 round, fewer steps
    python bench/bench_distributed.py --json docs/results/bench_distributed_intel_xeon.json
    python bench/bench_distributed.py --paper docs/results/bench_distributed_intel_xeon.json  # only the tables on paper

Each configuration runs as ``mpiexec -n R python bench/bench_distributed.py --worker MODEL`` with one thread
per rank (every thread pool; bench/common.py's ``thread_env``), R = 1 and 2, in fresh processes, rounds
alternating R. Strong scaling: one global batch per step, each rank computing on its 1/R share (rank 0
reports). A step is forward, loss, backward, the gradient all-reduce (all gradients packed into one
buffer: one bucket, one ``dist.all_reduce``, then divided by R: what DistributedDataParallel does without
overlap), and an SGD update. Models:

    transformer   examples/llama.py's model via tiny_transformer.make_model: d_model 64, 2 layers, 4 heads,
                  vocab 256, sequences of 32 tokens, global batch 16 sequences, float32
    bn-mlp        784 -> 512 -> SyncBatchNorm -> ReLU -> 512 -> SyncBatchNorm -> ReLU -> 10, global batch 256,
                  float32
    bn-cnn        conv 3x3 3->16, SyncBatchNorm, ReLU, max pool 2, conv 3x3 16->32, SyncBatchNorm, ReLU,
                  adaptive average pool, linear 32->10; global batch 64 images of 3x32x32, float32

Reported per configuration (medians over the timed steps, then over rounds): step time, samples per
second, the gradient all-reduce time, and for bn-mlp the time inside SyncBatchNorm's own collectives.
Communication times include waiting for the slower rank (they are wall time inside the collective).
Then the on-paper tables of docs/scaling.md (``paper``): the step time at 8, 64 and 512 nodes from the
gradient bytes, ring all-reduce in 25 MB buckets overlapping the backward, and published fabric figures.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, HERE)

from common import RESULT_TAG, emit, fmt_ms, machine_line, table, thread_env, write_json  # noqa: E402

MODELS = ("transformer", "bn-mlp", "bn-cnn")
CNN_BATCH = 64
RANKS = (1, 2)
TRANSFORMER = dict(batch_size=16, seq_len=32, d_model=64, n_layers=2, n_heads=4)
VOCAB = 256
MLP_BATCH, MLP_IN, MLP_HIDDEN, MLP_OUT = 256, 784, 512, 10


# --------------------------------------------------------------------------- the worker (one rank)
class Clock:
    """Wall time spent inside collectives since the last ``take()``."""

    def __init__(self):
        self.spent = 0.0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - start
        return timed

    def take(self):
        spent, self.spent = self.spent, 0.0
        return spent


def transformer_step(mg, rank, world):
    """(model, loss function of the step number, global batch size) for the Transformer."""
    import numpy as np
    sys.path.insert(0, EXAMPLES)
    import tiny_transformer
    model = tiny_transformer.make_model(dict(tiny_transformer.DEFAULTS["common"], **TRANSFORMER), VOCAB)
    per_rank = TRANSFORMER["batch_size"] // world
    tokens = np.random.default_rng(0).integers(0, VOCAB, size=(4, TRANSFORMER["batch_size"],
                                                                  TRANSFORMER["seq_len"] + 1))
    shards = [t[rank * per_rank:(rank + 1) * per_rank] for t in tokens]            # this rank's rows

    def loss(step):
        t = shards[step % len(shards)]
        logits = model(mg.from_numpy(t[:, :-1]))
        return mg.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), mg.from_numpy(t[:, 1:].reshape(-1)))
    return model, loss, per_rank * world


def mlp_step(mg, rank, world):
    """(model, loss function of the step number, global batch size) for the SyncBatchNorm MLP."""
    import numpy as np
    nn = mg.nn
    mg.manual_seed(0)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(
        nn.Linear(MLP_IN, MLP_HIDDEN), nn.BatchNorm1d(MLP_HIDDEN), nn.ReLU(),
        nn.Linear(MLP_HIDDEN, MLP_HIDDEN), nn.BatchNorm1d(MLP_HIDDEN), nn.ReLU(), nn.Linear(MLP_HIDDEN, MLP_OUT)))
    per_rank = MLP_BATCH // world
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, MLP_BATCH, MLP_IN)).astype(np.float32)[:, rank * per_rank:(rank + 1) * per_rank]
    y = rng.integers(0, MLP_OUT, size=(4, MLP_BATCH))[:, rank * per_rank:(rank + 1) * per_rank]

    def loss(step):
        i = step % len(x)
        return mg.nn.functional.cross_entropy(model(mg.from_numpy(x[i])), mg.from_numpy(y[i]))
    return model, loss, per_rank * world


def cnn_step(mg, rank, world):
    """(model, loss function of the step number, global batch size) for the SyncBatchNorm CNN."""
    import numpy as np
    nn = mg.nn
    mg.manual_seed(0)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(32, 10)))
    per_rank = CNN_BATCH // world
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, CNN_BATCH, 3, 32, 32)).astype(np.float32)[:, rank * per_rank:(rank + 1) * per_rank]
    y = rng.integers(0, 10, size=(4, CNN_BATCH))[:, rank * per_rank:(rank + 1) * per_rank]

    def loss(step):
        i = step % len(x)
        return mg.nn.functional.cross_entropy(model(mg.from_numpy(x[i])), mg.from_numpy(y[i]))
    return model, loss, per_rank * world


def worker(model_name, steps, warmup):
    import numpy as np

    import minigrad as mg
    import minigrad.distributed as dist
    from minigrad.ops.norm import syncbatchnorm
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    sync_clock, grad_clock = Clock(), Clock()
    syncbatchnorm.all_reduce_sum = sync_clock.wrap(syncbatchnorm.all_reduce_sum)
    build = {"transformer": transformer_step, "bn-mlp": mlp_step, "bn-cnn": cnn_step}[model_name]
    model, loss_of, global_batch = build(mg, rank, world)
    params = list(model.parameters())
    optimizer = mg.optim.SGD(params, lr=1e-3)
    bucket = mg.zeros(sum(p.numel() for p in params))                  # every gradient, packed (float32)
    all_reduce = grad_clock.wrap(dist.all_reduce)

    def step(i):
        loss = loss_of(i)
        optimizer.zero_grad()
        loss.backward()
        if world > 1:
            offsets = np.cumsum([0] + [p.numel() for p in params])
            for p, lo, hi in zip(params, offsets[:-1], offsets[1:]):
                bucket._data[lo:hi] = p.grad._data.reshape(-1)
            all_reduce(bucket)
            for p, lo, hi in zip(params, offsets[:-1], offsets[1:]):
                p.grad._data[...] = (bucket._data[lo:hi] / world).reshape(p.shape)
        optimizer.step()

    records = []
    for i in range(warmup + steps):
        dist.barrier()                                   # steps start together
        sync_clock.take(), grad_clock.take()
        start = time.perf_counter()
        step(i)
        records.append((time.perf_counter() - start, grad_clock.take(), sync_clock.take()))
    timed = records[warmup:]
    result = {key: statistics.median(r[k] for r in timed) for k, key in enumerate(("step", "grad_comm", "bn_comm"))}
    result.update(ranks=world, global_batch=global_batch, grad_bytes=4 * int(bucket.numel()),
                  samples_per_s=global_batch / result["step"])
    if rank == 0:
        emit(result)


# --------------------------------------------------------------------------- on paper (docs/scaling.md)
# Fabrics: (name, link bandwidth in bytes/s (line rate), per-message MPI latency in seconds). The latencies are
# typical small-message MPI ping-pong figures for each fabric (TCP over Ethernet: tens of microseconds;
# RoCE and InfiniBand: a few); the bandwidths are the nominal line rates.
FABRICS = [("10 GbE (TCP)", 10e9 / 8, 30e-6), ("25 GbE (TCP)", 25e9 / 8, 20e-6),
           ("100 GbE (RoCE)", 100e9 / 8, 5e-6), ("200 Gb/s InfiniBand HDR", 200e9 / 8, 2e-6)]
NODES = (8, 64, 512)
STRONG_BATCH = 1024
BUCKET = 25 * 2 ** 20              # DistributedDataParallel's default bucket_cap_mb = 25
BACKWARD_SHARE = 2 / 3             # backward ~ 2x forward: the part of a step communication can hide under
RESNET50 = dict(params=25_557_032, bn_layers=53, flop_per_sample=3 * 4.1e9)   # 3x the 4.1 GFLOP forward


def ring_all_reduce(nbytes, nodes, bandwidth, latency):
    """Seconds for a ring all-reduce of ``nbytes`` over ``nodes``: 2(N-1) steps, each one latency and
    nbytes/N on the wire (every rank sends and receives 2(N-1)/N of the bytes)."""
    return 2 * (nodes - 1) * (latency + nbytes / nodes / bandwidth)


def small_all_reduce(nodes, latency):
    """Seconds for an all-reduce of a few KB (SyncBatchNorm's): recursive doubling, log2(N) latencies."""
    import math
    return math.ceil(math.log2(nodes)) * latency


def step_time(compute, grad_bytes, nodes, bandwidth, latency, bn_layers=0):
    """(step seconds, all-reduce seconds) of data-parallel training with bucketed all-reduce overlapping the
    backward pass. The backward (BACKWARD_SHARE of ``compute``) hands over 25 MB buckets at an even rate
    (bucket i ready when its bytes are done); the ring all-reduces run one after another as buckets come;
    the step ends when the last one does (the optimizer step is left out: it is in ``compute``).
    SyncBatchNorm adds 3 small synchronous all-reduces per BN layer, which nothing hides."""
    buckets = [BUCKET] * int(grad_bytes // BUCKET) + ([grad_bytes % BUCKET] if grad_bytes % BUCKET else [])
    forward, backward = (1 - BACKWARD_SHARE) * compute, BACKWARD_SHARE * compute
    done, ready, comm = 0.0, 0.0, 0.0
    for b in buckets:
        ready += backward * b / grad_bytes                 # seconds into the backward when this bucket is full
        t = ring_all_reduce(b, nodes, bandwidth, latency)
        done, comm = max(done, ready) + t, comm + t
    return forward + max(done, backward) + 3 * bn_layers * small_all_reduce(nodes, latency), comm


def best_node_count(compute_per_sample, global_batch, grad_bytes, bandwidth, latency, bn_layers):
    """Strong scaling: the node count (a power of 2 up to the global batch) with the shortest step for a
    fixed global batch, each node computing global_batch / N samples; (N, step seconds)."""
    options = [2 ** k for k in range(0, 20) if 2 ** k <= global_batch]
    return min(((n, step_time(compute_per_sample * global_batch / n, grad_bytes, n, bandwidth, latency,
                              bn_layers)[0]) for n in options), key=lambda pair: pair[1])


def paper(measured=None):
    """The scaling tables of docs/scaling.md: weak scaling (fixed batch per node) at 8, 64, 512 nodes."""
    models = []
    if measured:
        t = measured["transformer/1"]
        models.append(("bench Transformer, 16 seq/node, this machine's 1 thread", t["step"], t["grad_bytes"], 0))
        m = measured["bn-mlp/1"]
        models.append(("bench BN-MLP, 256 samples/node, this machine's 1 thread", m["step"], m["grad_bytes"], 2))
    resnet_bytes = 4 * RESNET50["params"]
    for node, rate, batch in (("CPU node, 1 TFLOP/s sustained", 1e12, 32), ("GPU node, 10 TFLOP/s sustained", 1e13, 64)):
        models.append((f"ResNet-50, {batch} images/node, {node}", batch * RESNET50["flop_per_sample"] / rate,
                       resnet_bytes, RESNET50["bn_layers"]))
    for sync in (False, True):
        rows = []
        for name, compute, grad_bytes, bn_layers in models:
            if sync and not bn_layers:
                continue
            for fabric, bandwidth, latency in FABRICS:
                cells = [name, fmt_ms(compute), f"{grad_bytes / 1e6:.3g}", fabric]
                for nodes in NODES:
                    total, comm = step_time(compute, grad_bytes, nodes, bandwidth, latency, bn_layers if sync else 0)
                    cells.append(f"{fmt_ms(total)} ms ({compute / total:.0%})")
                rows.append(cells)
        title = "with SyncBatchNorm in every BN layer" if sync else "plain DDP (BatchNorm per node)"
        print(f"\nWeak scaling (a fixed batch per node): step time and efficiency (compute / step) at N nodes, "
              f"{title}:\n")
        print(table(["model", "compute ms", "gradient MB", "fabric"] + [f"N = {n}" for n in NODES], rows))
    print(f"\nStrong scaling (ResNet-50, a fixed global batch of {STRONG_BATCH} images, SyncBatchNorm): step time "
          "at N nodes (the batch split N ways), and the N with the shortest step:\n")
    rows = []
    for node, rate in (("CPU node, 1 TFLOP/s", 1e12), ("GPU node, 10 TFLOP/s", 1e13)):
        per_sample = RESNET50["flop_per_sample"] / rate
        for fabric, bandwidth, latency in FABRICS:
            cells = [node, fabric]
            for nodes in NODES:
                total, _ = step_time(per_sample * STRONG_BATCH / nodes, resnet_bytes, nodes, bandwidth, latency,
                                     RESNET50["bn_layers"])
                cells.append(f"{fmt_ms(total)} ms")
            best, total = best_node_count(per_sample, STRONG_BATCH, resnet_bytes, bandwidth, latency,
                                          RESNET50["bn_layers"])
            cells.append(f"N = {best}: {fmt_ms(total)} ms")
            rows.append(cells)
    print(table(["node", "fabric"] + [f"N = {n}" for n in NODES] + ["fastest"], rows))


# --------------------------------------------------------------------------- the parent
def run_ranks(model_name, ranks, steps, warmup):
    """Run one configuration under mpiexec, one thread per rank; rank 0's result dict."""
    mpiexec = shutil.which("mpiexec") or shutil.which("mpiexec", path=os.path.dirname(sys.executable))
    if mpiexec is None:
        sys.exit("bench_distributed needs mpiexec: pip install mpi4py mpich")
    env = {**os.environ, **thread_env(1), "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, os.path.abspath(__file__), "--worker",
                           model_name, "--steps", str(steps), "--warmup", str(warmup)],
                          env=env, capture_output=True, text=True, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{model_name} on {ranks} ranks failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT_TAG):])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--paper", metavar="JSON", nargs="?", const="",
                        help="print only the on-paper scaling tables (with the measured models from a --json file)")
    args = parser.parse_args()
    if args.paper is not None:
        measured = None
        if args.paper:
            with open(args.paper) as f:
                measured = json.load(f)["results"]
        paper(measured)
        return
    if args.worker:
        worker(args.worker, args.steps or 10, args.warmup)
        return
    steps, rounds = args.steps or (5 if args.quick else 15), args.rounds or (1 if args.quick else 3)
    print(machine_line())
    results = {}
    for r in range(rounds):
        for model_name in MODELS:
            order = RANKS if r % 2 == 0 else RANKS[::-1]
            for ranks in order:
                results.setdefault((model_name, ranks), []).append(run_ranks(model_name, ranks, steps, args.warmup))
                print(f"  [round {r + 1}/{rounds}] {model_name}, {ranks} rank(s)", file=sys.stderr, flush=True)
    rows, summary = [], {}
    for (model_name, ranks), runs in results.items():
        med = {k: statistics.median(run[k] for run in runs) for k in ("step", "grad_comm", "bn_comm", "samples_per_s")}
        base = statistics.median(run["samples_per_s"] for run in results[(model_name, 1)])
        summary[f"{model_name}/{ranks}"] = dict(med, grad_bytes=runs[0]["grad_bytes"],
                                                global_batch=runs[0]["global_batch"])
        rows.append([model_name, ranks, runs[0]["global_batch"], f"{runs[0]['grad_bytes'] / 1e6:.2f}",
                     fmt_ms(med["step"]), f"{med['samples_per_s']:.0f}", f"{med['samples_per_s'] / base:.2f}x",
                     fmt_ms(med["grad_comm"]) if ranks > 1 else "—",
                     fmt_ms(med["bn_comm"]) if ranks > 1 and model_name.startswith("bn-") else "—",
                     fmt_ms(med["step"] - med["grad_comm"] - med["bn_comm"])])
    print(f"\n{steps} timed steps per run (after {args.warmup} warm-up), median over {rounds} round(s); "
          "1 thread per rank\n")
    print(table(["model", "ranks", "global batch", "gradient MB", "step ms", "samples/s", "speedup",
                 "gradient all-reduce ms", "SyncBatchNorm collectives ms", "rest of the step ms"], rows))
    if args.json:
        write_json(args.json, {"machine": machine_line(), "steps": steps, "rounds": rounds, "results": summary})
    paper(summary)


if __name__ == "__main__":
    main()
