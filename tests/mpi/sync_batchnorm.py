"""Run under ``mpiexec -n N``: SyncBatchNorm on each rank's shard equals BatchNorm on the concatenated batch.

Every rank builds the same global batch (same seed), takes its shard (unequal sizes, one rank possibly
empty), and compares with BatchNorm run on the whole batch in its own process (float64, 1e-12): the
output, the input gradient, the sum over ranks of the weight and bias gradients (PyTorch's local
semantics), the running statistics and num_batches_tracked over two steps, and the second-order
gradients under create_graph=True. Exits non-zero, naming what differs, on any mismatch.

``SYNC_BN_BREAK=1`` swaps in a wrong backward (the local BatchNorm backward, no all-reduce): the run
must then fail (tests/test_sync_batchnorm.py checks that the comparison catches it).
"""
import os
import sys

import numpy as np

import minigrad as mg
import minigrad.distributed as dist

TOL = dict(rtol=1e-12, atol=1e-12)


def allsum(a):
    t = mg.tensor(np.array(a, dtype=np.float64))
    dist.all_reduce(t)
    return t._data


def shard_bounds(sizes, rank):
    start = sum(sizes[:rank])
    return start, start + sizes[rank]


def check(name, got, want, failures, scale=1.0):
    """``scale``: the data's |mean| / std (rounding the mean costs that many ulps of 1 in xhat on any order of
    summation); E[x^2] - mean^2 would lose scale^2 ulps instead, far outside this tolerance."""
    try:
        np.testing.assert_allclose(got, want, rtol=TOL["rtol"], atol=TOL["atol"] * scale)
    except AssertionError as e:
        failures.append(f"{name}: {e}")


def case(shape_tail, sizes, offset, momentum, affine, seed, failures, second_order):
    """One configuration: global batch (sum(sizes), C, *tail), rank r holding sizes[r] samples."""
    rank = dist.get_rank()
    c = shape_tail[0]
    rng = np.random.default_rng(seed)
    total = sum(sizes)
    bn_cls = {1: mg.nn.BatchNorm1d, 2: mg.nn.BatchNorm1d, 3: mg.nn.BatchNorm2d}[len(shape_tail)]
    group = dist.group.WORLD if seed % 2 else None                  # the world, named or by default
    sync = mg.nn.SyncBatchNorm(c, momentum=momentum, affine=affine, process_group=group, dtype=mg.float64)
    ref = bn_cls(c, momentum=momentum, affine=affine, dtype=mg.float64)
    if affine:
        w, b = rng.normal(size=c), rng.normal(size=c)
        for m in (sync, ref):
            m.weight.data.copy_(mg.tensor(w))
            m.bias.data.copy_(mg.tensor(b))
    lo, hi = shard_bounds(sizes, rank)
    scale = max(1.0, abs(offset))
    label = f"shape (N, {', '.join(map(str, shape_tail))}) sizes {sizes} offset {offset} momentum {momentum}"
    for step in range(2):
        spread = rng.uniform(0.5, 2.0, size=(1, c) + (1,) * (len(shape_tail) - 1))    # a std per channel
        x = offset + rng.normal(size=(total,) + shape_tail) * spread
        g = rng.normal(size=x.shape)
        x_full = mg.tensor(x, requires_grad=True)
        x_mine = mg.tensor(x[lo:hi].copy(), requires_grad=True)
        y_full, y_mine = ref(x_full), sync(x_mine)
        (y_full * mg.tensor(g)).sum().backward()
        (y_mine * mg.tensor(g[lo:hi])).sum().backward()
        where = f"{label} step {step}"
        check(f"{where}: output", y_mine._data, y_full._data[lo:hi], failures, scale)
        check(f"{where}: input gradient", x_mine.grad._data, x_full.grad._data[lo:hi], failures, scale)
        if affine:
            for pname in ("weight", "bias"):
                got = allsum(getattr(sync, pname).grad._data)
                want = getattr(ref, pname).grad._data
                check(f"{where}: {pname} gradient summed over ranks", got, want, failures, scale)
                getattr(sync, pname).grad = None
                getattr(ref, pname).grad = None
        for bname in ("running_mean", "running_var"):
            check(f"{where}: {bname}", getattr(sync, bname)._data, getattr(ref, bname)._data, failures, scale)
        if int(sync.num_batches_tracked.item()) != int(ref.num_batches_tracked.item()):
            failures.append(f"{where}: num_batches_tracked {sync.num_batches_tracked.item()} "
                            f"!= {ref.num_batches_tracked.item()}")
    if second_order:
        double_backward(sync, ref, x, g, lo, hi, label, failures, rng)


def double_backward(sync, ref, x, g, lo, hi, label, failures, rng):
    """h = sum(dx^2 * H) + <dw, K> + <db, K2> per rank (a function of the first gradients whose sum over
    ranks is the same function of the full batch's), differentiated again w.r.t. x, weight and bias."""
    H, K, K2 = rng.normal(size=x.shape), rng.normal(size=x.shape[1]), rng.normal(size=x.shape[1])
    results = []
    for module, xs, gs, Hs in ((ref, x, g, H), (sync, x[lo:hi], g[lo:hi], H[lo:hi])):
        xt = mg.tensor(xs.copy(), requires_grad=True)
        params = [xt] + ([module.weight, module.bias] if module.affine else [])
        y = module(xt)
        grads = mg.autograd.grad((y * mg.tensor(gs)).sum(), params, create_graph=True)
        h = (grads[0] * grads[0] * mg.tensor(Hs)).sum()
        if module.affine:
            h = h + (grads[1] * mg.tensor(K)).sum() + (grads[2] * mg.tensor(K2)).sum()
        second = mg.autograd.grad(h, params, allow_unused=True)     # bias: h is linear in it, so None
        results.append([np.zeros(p.shape) if s is None else s._data for s, p in zip(second, params)])
    want, got = results
    check(f"{label}: second-order input gradient", got[0], want[0][lo:hi], failures)
    for name, a, b in zip(("weight", "bias"), got[1:], want[1:]):
        check(f"{label}: second-order {name} gradient summed over ranks", allsum(a), b, failures)


def float32_case(failures):
    """float32 data (the default dtype): the same comparison at float32's tolerance."""
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(100)
    sizes = [r + 3 for r in range(world)]
    lo, hi = shard_bounds(sizes, rank)
    x = (5.0 + rng.normal(size=(sum(sizes), 4, 3))).astype(np.float32)
    g = rng.normal(size=x.shape).astype(np.float32)
    sync, ref = mg.nn.SyncBatchNorm(4), mg.nn.BatchNorm1d(4)
    x_full, x_mine = mg.tensor(x, requires_grad=True), mg.tensor(x[lo:hi].copy(), requires_grad=True)
    y_full, y_mine = ref(x_full), sync(x_mine)
    (y_full * mg.tensor(g)).sum().backward()
    (y_mine * mg.tensor(g[lo:hi])).sum().backward()
    w_grad = sync.weight.grad._data
    for name, got, want in (("output", y_mine._data, y_full._data[lo:hi]),
                            ("input gradient", x_mine.grad._data, x_full.grad._data[lo:hi]),
                            ("weight gradient summed over ranks", allsum(w_grad).astype(w_grad.dtype),
                             ref.weight.grad._data),
                            ("running_var", sync.running_var._data, ref.running_var._data)):
        if got.dtype != np.float32:
            failures.append(f"float32: {name} has dtype {got.dtype}")
        try:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        except AssertionError as e:
            failures.append(f"float32: {name}: {e}")


def main():
    if os.environ.get("SYNC_BN_BREAK") == "1":
        from minigrad.ops.norm import channels, syncbatchnorm
        from minigrad.ops.norm.batchnorm import batch_norm_backward

        def local_backward(ctx, dout):     # the bug: BatchNorm's backward on the local shard only
            return channels.channel_backward(ctx, dout, batch_norm_backward, training=True)
        syncbatchnorm.SyncBatchNormFunction.backward = staticmethod(local_backward)
    dist.init_process_group(backend="mpi")
    world, rank = dist.get_world_size(), dist.get_rank()
    failures = []
    uneven = [r + 2 for r in range(world)]                  # 2, 3, 4, ...
    with_empty = [0] + [3] * (world - 1)                   # rank 0 holds nothing
    configs = [
        ((3,), uneven, 0.0, 0.1, True, True),               # BatchNorm1d (N, C)
        ((2, 5), uneven, 3.0, None, True, True),            # BatchNorm1d (N, C, L), cumulative average
        ((2, 3, 2), [1] * world, 0.0, 0.3, True, True),     # BatchNorm2d, one sample per rank
        ((3, 2, 2), with_empty, 0.0, 0.1, False, False),    # BatchNorm2d, an empty shard, no affine
        ((4,), uneven, 1e6, 0.1, True, False),              # |mean| >> std: the centered reduction
    ]
    for seed, (tail, sizes, offset, momentum, affine, second) in enumerate(configs):
        case(tail, sizes, offset, momentum, affine, seed, failures, second)
    float32_case(failures)
    if failures:
        print(f"rank {rank}/{world}: {len(failures)} mismatches", file=sys.stderr)
        for f in failures[:20]:
            print(f"rank {rank}: {f}", file=sys.stderr)
        sys.stderr.flush()
        sys.exit(1)
    print(f"rank {rank}/{world}: SyncBatchNorm equals BatchNorm on the concatenated batch ({len(configs)} cases)")


if __name__ == "__main__":
    main()
