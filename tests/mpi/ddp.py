"""Run under mpiexec -n N: DistributedDataParallel on N ranks, each with its shard of every global batch,
equals one process on the whole batch (float64, 1e-12) for several steps with SGD momentum and AdamW.

Every rank builds its replica from its own seed (different weights: DDP's broadcast must make them equal)
and computes the one-process reference locally, from rank 0's seed. Exits non-zero on a mismatch."""
import datetime

import numpy as np

import minigrad as mg
import minigrad.distributed as dist
import minigrad.nn as nn
from minigrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="mpi", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
mg.set_default_dtype(mg.float64)
GLOBAL_BATCH, STEPS = 12, 4                     # 12 splits evenly over 2 and 3 ranks


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.LayerNorm(16), nn.Linear(16, 3))
        self.register_buffer("scale", mg.randn(3))

    def forward(self, x):
        return self.body(x) * self.scale


def make(seed):
    mg.manual_seed(seed)
    return Net()


def batch(step):
    rng = np.random.default_rng(100 + step)
    return mg.tensor(rng.standard_normal((GLOBAL_BATCH, 5))), mg.tensor(rng.standard_normal((GLOBAL_BATCH, 3)))


def shard(t):
    n = GLOBAL_BATCH // world
    return t[rank * n:(rank + 1) * n]


def loss_of(model, x, y):
    return ((model(x) - y) ** 2).mean()


def check(actual, expected, what):
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12,
                               err_msg=f"rank {rank}: {what}")


OPTIMIZERS = {"SGD momentum": lambda ps: mg.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-3),
              "AdamW": lambda ps: mg.optim.AdamW(ps, lr=0.01, weight_decay=0.1)}
for name, make_opt in OPTIMIZERS.items():
    reference = make(0)
    replica = make(rank)                        # different weights on each rank ...
    if rank:
        assert not np.allclose(replica.body[0].weight.detach().numpy(), reference.body[0].weight.detach().numpy())
    model = DDP(replica, bucket_cap_mb=0.0002)  # ... until DDP broadcasts rank 0's; tiny buckets: several
    assert len(model._buckets) > 2
    for (k, p), (_, q) in zip(model.module.state_dict().items(), reference.state_dict().items()):
        check(p, q, f"{name}: {k} after the broadcast")
    opt, ref_opt = make_opt(model.parameters()), make_opt(reference.parameters())
    for step in range(STEPS):
        x, y = batch(step)
        opt.zero_grad()
        loss_of(model, shard(x), shard(y)).backward()
        ref_opt.zero_grad()
        loss_of(reference, x, y).backward()
        for (k, p), q in zip(model.module.named_parameters(), reference.parameters()):
            check(p.grad, q.grad, f"{name}: grad of {k} at step {step}")
        opt.step()
        ref_opt.step()
    for (k, p), q in zip(model.module.named_parameters(), reference.parameters()):
        check(p, q, f"{name}: {k} after {STEPS} steps")

# no_sync: two micro-batches, the first kept local, the second synchronised: the mean over ranks of the
# summed gradients, i.e. the one-process gradient of (loss on half 1) + (loss on half 2).
reference, model = make(0), DDP(make(rank))
x, y = batch(99)
half = GLOBAL_BATCH // 2                         # two micro-batches of 6: 3 or 2 rows per rank
per = half // world
mine = slice(rank * per, (rank + 1) * per)
with model.no_sync():
    loss_of(model, x[:half][mine], y[:half][mine]).backward()
everyone = [None] * world
dist.all_gather_object(everyone, next(model.parameters()).grad.numpy().copy())
assert not np.allclose(everyone[0], everyone[1]), f"rank {rank}: no_sync still averaged the gradients"
loss_of(model, x[half:][mine], y[half:][mine]).backward()
loss_of(reference, x[:half], y[:half]).backward()
loss_of(reference, x[half:], y[half:]).backward()
for (k, p), q in zip(model.module.named_parameters(), reference.parameters()):
    check(p.grad, q.grad, f"no_sync: accumulated grad of {k}")

# state_dict keys carry the module. prefix; forward passes through; .module is the wrapped model.
keys = list(model.state_dict())
assert keys == ["module." + k for k in reference.state_dict()], keys
assert isinstance(model.module, Net)

# A parameter that gets no gradient: an error without find_unused_parameters, zeros in the mean with it.
class Partial(nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        return self.used(x)


model = DDP(Partial())
try:
    model(mg.ones(1, 2)).sum().backward()
except RuntimeError as error:
    assert "find_unused_parameters=True" in str(error), error
else:
    raise AssertionError("a parameter without gradient went unnoticed")
model = DDP(Partial(), find_unused_parameters=True)
model(mg.ones(1, 2) * (rank + 1)).sum().backward()
np.testing.assert_allclose(model.module.used.weight.grad.numpy(), np.full((2, 2), (world + 1) / 2), rtol=1e-12)
assert model.module.unused.weight.grad is None or not model.module.unused.weight.grad.numpy().any()
dist.destroy_process_group()
print(f"rank {rank} of {world}: DistributedDataParallel OK", flush=True)
