"""THROWAWAY stand-in for ``minigrad.distributed`` (issue 17, the i17-sync branch only).

The real package is built on the i17-dist branch and replaces this file at the merge. It implements
just the contract names SyncBatchNorm and its tests use: is_available, init_process_group,
is_initialized, get_rank, get_world_size, all_reduce (SUM, in place), barrier, ReduceOp, group.WORLD.
"""
import numpy as np

from ..autograd.version import bump

__all__ = ["is_available", "init_process_group", "is_initialized", "get_rank", "get_world_size", "all_reduce", "barrier",
           "ReduceOp", "group"]

_COMM = None


class ReduceOp:
    SUM = "sum"


class group:
    WORLD = "WORLD"


def is_available():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def init_process_group(backend="mpi", **kwargs):
    global _COMM
    from mpi4py import MPI
    _COMM = MPI.COMM_WORLD


def is_initialized():
    return _COMM is not None


def get_rank(group=None):
    return _COMM.Get_rank()


def get_world_size(group=None):
    return _COMM.Get_size()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    from mpi4py import MPI
    assert op == ReduceOp.SUM and not async_op
    buf = np.ascontiguousarray(tensor._data)
    _COMM.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
    tensor._data[...] = buf
    bump(tensor._data)


def barrier(group=None, async_op=False):
    _COMM.Barrier()
