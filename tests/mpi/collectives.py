"""Run under mpiexec -n N: every collective of minigrad.distributed against NumPy on the gathered inputs.

Each rank makes its inputs from (seed, rank), so every rank can compute every rank's inputs and the NumPy
reference locally. Exits non-zero (an AssertionError) on the first mismatch."""
import datetime

import numpy as np

import minigrad as mg
import minigrad.distributed as dist

dist.init_process_group(backend="mpi", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.group.WORLD is not None and dist.get_backend() == "mpi"

REDUCE = {dist.ReduceOp.SUM: lambda a: a.sum(0), dist.ReduceOp.PRODUCT: lambda a: a.prod(0),
          dist.ReduceOp.MIN: lambda a: a.min(0), dist.ReduceOp.MAX: lambda a: a.max(0),
          dist.ReduceOp.AVG: lambda a: a.sum(0) / world}
DTYPES = {"float32": (mg.float32, np.float32), "float64": (mg.float64, np.float64), "int64": (mg.int64, np.int64),
          "float16": (mg.float16, np.float16), "bfloat16": (mg.bfloat16, mg.bfloat16)}
LOW = ("float16", "bfloat16")     # references computed in float32 and rounded once, as minigrad reduces them
TOL = dict(float32=1e-5, float64=1e-12, int64=0, float16=1e-3, bfloat16=8e-3)


def inputs(dtype, shape, salt):
    """Every rank's input, (world, *shape): small integers-valued so that PRODUCT stays exact."""
    rng = np.random.default_rng(1000 * salt + 7)
    values = rng.integers(-3, 4, size=(world,) + shape)
    if dtype != "int64":
        values = values + rng.uniform(-0.5, 0.5, size=values.shape)
    return values.astype(DTYPES[dtype][1])


def reference(ref, values):
    """``ref`` of the ranks' ``values``, for float16/bfloat16 in float32 and rounded to their dtype once."""
    if str(values.dtype) in LOW:
        return ref(values.astype(np.float32)).astype(values.dtype)
    return ref(values)


def check(actual, expected, what):
    tol = TOL[str(expected.dtype)]
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol,
                               err_msg=f"rank {rank}: {what}")
    assert actual.dtype == expected.dtype, (what, actual.dtype, expected.dtype)


salt = 0
for dtype in DTYPES:
    for op, ref in REDUCE.items():
        if op == dist.ReduceOp.AVG and dtype == "int64":
            continue
        for async_op in (False, True):
            salt += 1
            everyone = inputs(dtype, (3, 4), salt)
            t = mg.tensor(everyone[rank])
            work = dist.all_reduce(t, op=op, async_op=async_op)
            if async_op:
                assert work.wait()
                assert work.is_completed()
            else:
                assert work is None
            check(t.numpy(), reference(ref, everyone), f"all_reduce {op!r} {dtype} async={async_op}")

            dst = salt % world
            t = mg.tensor(everyone[rank])
            work = dist.reduce(t, dst=dst, op=op, async_op=async_op)
            if async_op:
                work.wait()
            check(t.numpy(), reference(ref, everyone) if rank == dst else everyone[rank], f"reduce {op!r} {dtype}")

            lists = inputs(dtype, (world, 2, 3), salt)           # (rank, slot, 2, 3): rank's input_list
            out = mg.zeros(2, 3, dtype=DTYPES[dtype][0])
            work = dist.reduce_scatter(out, [mg.tensor(a) for a in lists[rank]], op=op, async_op=async_op)
            if async_op:
                work.wait()
            check(out.numpy(), reference(ref, lists[:, rank]), f"reduce_scatter {op!r} {dtype}")

    for async_op in (False, True):
        salt += 1
        everyone = inputs(dtype, (2, 5), salt)
        src = salt % world
        t = mg.tensor(everyone[rank])
        work = dist.broadcast(t, src=src, async_op=async_op)
        if async_op:
            work.wait()
        check(t.numpy(), everyone[src], f"broadcast {dtype}")

        outs = [mg.zeros(2, 5, dtype=DTYPES[dtype][0]) for _ in range(world)]
        work = dist.all_gather(outs, mg.tensor(everyone[rank]), async_op=async_op)
        if async_op:
            work.wait()
        check(np.stack([o.numpy() for o in outs]), everyone, f"all_gather {dtype}")

# A non-contiguous tensor (a transposed view) is reduced in place too.
base = mg.tensor(np.arange(6.0).reshape(2, 3) * (rank + 1))
view = base.t()
dist.all_reduce(view)
check(base.numpy(), np.arange(6.0).reshape(2, 3) * sum(range(1, world + 1)), "all_reduce of a view")

# Objects: different sizes on each rank.
gathered = [None] * world
dist.all_gather_object(gathered, {"rank": rank, "pad": "x" * (rank * 50)})
assert gathered == [{"rank": r, "pad": "x" * (r * 50)} for r in range(world)], gathered
objects = [rank, f"from {rank}", None] if rank == world - 1 else [None, None, None]
dist.broadcast_object_list(objects, src=world - 1)
assert objects == [world - 1, f"from {world - 1}", None], objects

# Errors: PyTorch's types, nothing sent.
for bad, kind in ((lambda: dist.all_reduce(np.ones(2)), TypeError),
                  (lambda: dist.all_reduce(mg.ones(2), op=17), ValueError),
                  (lambda: dist.broadcast(mg.ones(2), src=world), ValueError),
                  (lambda: dist.all_gather([mg.ones(2)] * (world + 1), mg.ones(2)), ValueError),
                  (lambda: dist.all_reduce(mg.ones(2, dtype=mg.int64), op=dist.ReduceOp.AVG), RuntimeError),
                  (lambda: dist.init_process_group("mpi"), ValueError)):
    try:
        bad()
    except kind:
        pass
    else:
        raise AssertionError(f"rank {rank}: expected {kind.__name__}")

dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {rank} of {world}: collectives OK", flush=True)
