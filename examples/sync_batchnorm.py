"""SyncBatchNorm on two processes trains exactly like BatchNorm on one process with the whole batch.

    PYTHONPATH=. OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 mpiexec -n 2 python examples/sync_batchnorm.py
    python examples/sync_batchnorm.py        # one process: the reference alone (nothing to compare)

A small MLP with BatchNorm1d (a 2-class problem on random 2-D points: inside or outside a circle), float64,
trained with SGD for a few steps on one global batch of 48 points per step. Three runs from the same
initial weights:

    reference   one process, BatchNorm on the whole batch (every rank computes it itself, for comparison)
    sync        rank r holds its shard of each batch (unequal: rank r gets more points than rank r - 1);
                the model is converted with nn.SyncBatchNorm.convert_sync_batchnorm, gradients summed
                across ranks with dist.all_reduce (what DistributedDataParallel does, in buckets)
    per-shard   the same sharding with plain BatchNorm: each rank normalizes with its own shard's statistics

Each rank's loss is its samples' share of the global mean loss (sum over its shard / global batch size),
so the gradients summed across ranks are those of the global mean loss. Prints, after each step, the
largest difference of the weights (and running statistics) from the reference: about 1e-16 for sync,
about 1e-2 for per-shard.
"""
import numpy as np

import minigrad as mg
import minigrad.distributed as dist
import minigrad.nn as nn
import minigrad.nn.functional as F

GLOBAL_BATCH, STEPS, LR = 48, 5, 0.5


def make_model():
    mg.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 16), nn.BatchNorm1d(16), nn.ReLU(),
                         nn.Linear(16, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2)).to(mg.float64)


def batch(step):
    """The global batch of ``step`` (the same on every rank): points and their labels (inside the circle)."""
    rng = np.random.default_rng(step)
    points = rng.uniform(-1.5, 1.5, size=(GLOBAL_BATCH, 2))
    return points, (np.hypot(points[:, 0], points[:, 1]) < 1.0).astype(np.int64)


def shard_of(rank, world):
    """Unequal shards: rank r's share proportional to r + 1; (start, stop) of this rank's rows."""
    weights = np.arange(1, world + 1)
    bounds = np.concatenate([[0], np.cumsum(weights)]) * GLOBAL_BATCH // weights.sum()
    return bounds[rank], bounds[rank + 1]


def train_step(model, points, labels, reduce_gradients):
    loss = F.cross_entropy(model(mg.tensor(points)), mg.tensor(labels), reduction="sum") / GLOBAL_BATCH
    for p in model.parameters():
        p.grad = None
    loss.backward()
    if reduce_gradients:
        for p in model.parameters():
            dist.all_reduce(p.grad)                   # the sum over ranks: the global mean loss's gradient
    with mg.no_grad():
        for p in model.parameters():
            p -= LR * p.grad
    return loss.item()


def largest_difference(model, reference):
    """max |a - b| over every parameter and buffer (running statistics) of the two models."""
    ours, theirs = model.state_dict(), reference.state_dict()
    return max(float(np.max(np.abs(ours[k].numpy().astype(np.float64) - theirs[k].numpy()))) for k in ours)


def main():
    distributed = dist.is_available()
    if distributed:
        dist.init_process_group(backend="mpi")
    world, rank = (dist.get_world_size(), dist.get_rank()) if distributed else (1, 0)
    reference = make_model()
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(make_model())
    per_shard = make_model()
    start, stop = shard_of(rank, world)
    if rank == 0:
        print(f"{world} rank(s); rank 0 holds rows {start}:{stop} of each global batch of {GLOBAL_BATCH}")
        print(f"{'step':>4}  {'loss (reference)':>16}  {'max |sync - reference|':>22}  "
              f"{'max |per-shard - reference|':>27}")
    for step in range(STEPS):
        points, labels = batch(step)
        loss = train_step(reference, points, labels, reduce_gradients=False)
        train_step(sync, points[start:stop], labels[start:stop], reduce_gradients=world > 1)
        train_step(per_shard, points[start:stop], labels[start:stop], reduce_gradients=world > 1)
        d_sync, d_shard = largest_difference(sync, reference), largest_difference(per_shard, reference)
        if rank == 0:
            print(f"{step:>4}  {loss:>16.6f}  {d_sync:>22.2e}  {d_shard:>27.2e}")
    if world > 1:
        assert d_sync < 1e-12, f"SyncBatchNorm drifted from the one-process reference by {d_sync}"
        if rank == 0:
            print("SyncBatchNorm on the shards matches BatchNorm on the whole batch; per-shard BatchNorm does not.")


if __name__ == "__main__":
    main()
