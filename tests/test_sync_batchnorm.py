"""nn.SyncBatchNorm: PyTorch's module surface, and SyncBatchNorm on shards equal to BatchNorm on the whole batch.

The multi-rank checks are programs under tests/mpi/ run with ``mpiexec -n 2`` and ``-n 3`` (skipped when mpi4py
or mpiexec is missing, a failure under MINIGRAD_REQUIRE_MPI=1). In one process, SyncBatchNorm is BatchNorm
(no process group), and SyncBatchNormFunction with a one-rank all-reduce is checked against PyTorch's
batch_norm to second order.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.gradcheck import GradcheckError
from minigrad.ops.norm import syncbatchnorm
from tests.mirror import assert_double_mirror, assert_mirror, check_grad, check_gradgrad, torch_or_replay, torch_or_skip

ROOT = Path(__file__).resolve().parents[1]
MPI_TIMEOUT = 120


# --------------------------------------------------------------------------- several ranks (mpiexec)
def mpiexec_or_skip():
    """The mpiexec command, or a skip (a failure under MINIGRAD_REQUIRE_MPI=1) when MPI is missing."""
    required = os.environ.get("MINIGRAD_REQUIRE_MPI") == "1"
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        if required:
            pytest.fail("mpi4py is not installed but MINIGRAD_REQUIRE_MPI=1")
        pytest.skip("mpi4py not installed: multi-rank test skipped")
    mpiexec = shutil.which("mpiexec") or shutil.which("mpiexec", path=str(Path(sys.executable).parent))
    if mpiexec is None:
        if required:
            pytest.fail("mpiexec not found but MINIGRAD_REQUIRE_MPI=1")
        pytest.skip("mpiexec not found: multi-rank test skipped")
    return mpiexec


def run_mpi(program, ranks, **env):
    """Run ``program`` (a path from the repository root) on ``ranks`` processes (1 thread each); the
    CompletedProcess."""
    mpiexec = mpiexec_or_skip()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", **env}
    return subprocess.run([mpiexec, "-n", str(ranks), sys.executable, str(ROOT / program)],
                          env=env, capture_output=True, text=True, timeout=MPI_TIMEOUT)


@pytest.mark.parametrize("ranks", [1, 2, 3])   # 1: an initialized group of one rank is BatchNorm
def test_shards_equal_batchnorm_on_the_concatenated_batch(ranks):
    # forward, input/weight/bias gradients, running statistics, second order; unequal and empty shards, 1d and 2d
    result = run_mpi("tests/mpi/sync_batchnorm.py", ranks)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SyncBatchNorm equals BatchNorm") == ranks, result.stdout


def test_a_backward_without_the_all_reduce_is_caught():
    result = run_mpi("tests/mpi/sync_batchnorm.py", 2, SYNC_BN_BREAK="1")
    assert result.returncode != 0, result.stdout
    assert "input gradient" in result.stderr, result.stderr


def test_the_example_matches_the_one_process_run():
    result = run_mpi("examples/sync_batchnorm.py", 2)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches BatchNorm on the whole batch" in result.stdout, result.stdout


# --------------------------------------------------------------------------- one process
def one_rank(monkeypatch):
    """SyncBatchNormFunction's collectives over a world of one rank (the sum over one rank is a copy)."""
    monkeypatch.setattr(syncbatchnorm, "all_reduce_sum", lambda a, group: np.array(a, dtype=np.float64))


SHAPES = [(5, 3), (4, 2, 3), (3, 2, 2, 2)]


def sync_bn(lib, x, w, b):
    if lib is mg:
        return syncbatchnorm.sync_batch_norm(x, None, None, w, b, 0.1, 1e-5)
    return lib.nn.functional.batch_norm(x, None, None, w, b, training=True)


@pytest.mark.parametrize("shape", SHAPES)
def test_function_on_one_rank_mirrors_batch_norm(monkeypatch, shape):
    one_rank(monkeypatch)
    rng = np.random.default_rng(0)
    arrays = (3.0 + rng.normal(size=shape), rng.normal(size=shape[1]), rng.normal(size=shape[1]))
    torch = torch_or_replay()
    assert_mirror(lambda *t: sync_bn(mg, *t), lambda *t: sync_bn(torch, *t), *arrays, rtol=1e-12, atol=1e-12)
    assert_double_mirror(lambda *t: sync_bn(mg, *t), lambda *t: sync_bn(torch, *t), *arrays)
    check_grad(lambda *t: sync_bn(mg, *t), *arrays)
    check_gradgrad(lambda *t: sync_bn(mg, *t), *arrays)


def test_all_reduce_function_on_one_rank(monkeypatch):
    one_rank(monkeypatch)
    x = np.random.default_rng(1).normal(size=(3, 2))
    check_grad(lambda t: syncbatchnorm.AllReduceSum.apply(t) * t, x)
    check_gradgrad(lambda t: syncbatchnorm.AllReduceSum.apply(t) * t, x)


def doubled(original):
    """``original`` (a backward or graph_backward) with every gradient 2x off."""
    def wrong(ctx, dout):
        return tuple(None if g is None else 2 * g for g in original(ctx, dout))
    return staticmethod(wrong)


@pytest.mark.parametrize("method", ["backward", "graph_backward"])
def test_a_wrong_backward_is_caught(monkeypatch, method):
    one_rank(monkeypatch)
    rng = np.random.default_rng(2)
    arrays = (rng.normal(size=(4, 2)), rng.normal(size=2), rng.normal(size=2))
    fn = syncbatchnorm.SyncBatchNormFunction
    monkeypatch.setattr(fn, method, doubled(getattr(fn, method)))
    torch = torch_or_skip()
    check = check_grad if method == "backward" else check_gradgrad
    with pytest.raises(GradcheckError):
        check(lambda *t: sync_bn(mg, *t), *arrays)
    mirror = assert_mirror if method == "backward" else assert_double_mirror
    with pytest.raises(AssertionError, match="gradient"):
        mirror(lambda *t: sync_bn(mg, *t), lambda *t: sync_bn(torch, *t), *arrays)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("momentum", [0.1, None])
def test_without_a_process_group_it_is_batchnorm(shape, momentum):
    # world size 1: the same code path as BatchNorm, so equal bit for bit (outputs, gradients, buffers)
    rng = np.random.default_rng(3)
    bn_cls = mg.nn.BatchNorm2d if len(shape) == 4 else mg.nn.BatchNorm1d
    sync, ref = mg.nn.SyncBatchNorm(shape[1], momentum=momentum), bn_cls(shape[1], momentum=momentum)
    ref.load_state_dict(sync.state_dict())
    for step in range(2):
        x = rng.normal(size=shape).astype(np.float32)
        xs, xr = mg.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
        ys, yr = sync(xs), ref(xr)
        (ys * ys).sum().backward()
        (yr * yr).sum().backward()
        np.testing.assert_array_equal(ys.detach().numpy(), yr.detach().numpy())
        np.testing.assert_array_equal(xs.grad.numpy(), xr.grad.numpy())
    for (name, a), (_, b) in zip(sync.state_dict().items(), ref.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    for p, q in zip(sync.parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    sync.eval(), ref.eval()
    x = mg.tensor(rng.normal(size=shape).astype(np.float32))
    np.testing.assert_array_equal(sync(x).detach().numpy(), ref(x).detach().numpy())


# --------------------------------------------------------------------------- the module surface, vs PyTorch
def test_state_dict_keys_repr_and_defaults_match_pytorch():
    torch = torch_or_skip()
    ours, theirs = mg.nn.SyncBatchNorm(4), torch.nn.SyncBatchNorm(4)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
        assert str(a.dtype) == str(b.dtype).replace("torch.", ""), name
    assert (ours.eps, ours.momentum, ours.affine, ours.track_running_stats, ours.process_group) == \
           (theirs.eps, theirs.momentum, theirs.affine, theirs.track_running_stats, theirs.process_group)
    assert isinstance(ours, mg.nn.channel_norms._BatchNorm)          # PyTorch's SyncBatchNorm is a _BatchNorm
    bare = mg.nn.SyncBatchNorm(3, affine=False, track_running_stats=False)
    assert list(bare.state_dict()) == list(torch.nn.SyncBatchNorm(3, affine=False, track_running_stats=False)
                                           .state_dict()) == []


@pytest.mark.parametrize("shape, message", [((3,), "expected at least 2D input (got 1D input)"),
                                            ((), "expected at least 2D input (got 0D input)"),
                                            ((2, 0, 3), "SyncBatchNorm number of input channels should be non-zero")])
def test_input_checks_match_pytorch(shape, message):
    torch = torch_or_skip()
    with pytest.raises(ValueError, match=re.escape(message)):
        torch.nn.SyncBatchNorm(0 if 0 in shape else 3)(torch.zeros(shape))
    module = mg.nn.SyncBatchNorm(0 if 0 in shape else 3)
    before = {k: v.numpy().copy() for k, v in module.state_dict().items()}
    with pytest.raises(ValueError, match=re.escape(message)):
        module(mg.zeros(shape))
    for k, v in module.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)


def test_any_number_of_dims_from_two():
    m = mg.nn.SyncBatchNorm(2)
    for shape in [(4, 2), (4, 2, 3), (2, 2, 2, 3), (2, 2, 1, 2, 3)]:
        assert m(mg.randn(*shape)).shape == shape


def build(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4, momentum=0.2),
                             lib.nn.Sequential(lib.nn.ReLU(), lib.nn.BatchNorm2d(4, eps=1e-3, affine=False)),
                             lib.nn.LayerNorm(4))


def test_convert_sync_batchnorm_matches_pytorch():
    torch = torch_or_skip()
    ours, theirs = build(mg), build(torch)
    ours[2][1].eval(), theirs[2][1].eval()
    ours[1].running_mean.add_(1.5)
    old_weight, old_running = ours[1].weight, ours[1].running_mean
    conv_ours = mg.nn.SyncBatchNorm.convert_sync_batchnorm(ours)
    conv_theirs = torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs)
    names = [(n, type(m).__name__) for n, m in conv_ours.named_modules()]
    assert names == [(n, type(m).__name__) for n, m in conv_theirs.named_modules()]
    assert list(conv_ours.state_dict()) == list(conv_theirs.state_dict())
    converted = conv_ours[1]
    assert converted.weight is old_weight and converted.running_mean is old_running      # shared, as PyTorch
    assert (converted.momentum, conv_ours[2][1].eps, conv_ours[2][1].affine) == (0.2, 1e-3, False)
    assert [m.training for m in conv_ours.modules()] == [m.training for m in conv_theirs.modules()]
    assert isinstance(mg.nn.SyncBatchNorm.convert_sync_batchnorm(mg.nn.BatchNorm1d(2)), mg.nn.SyncBatchNorm)
    untouched = mg.nn.Linear(2, 2)
    assert mg.nn.SyncBatchNorm.convert_sync_batchnorm(untouched) is untouched
