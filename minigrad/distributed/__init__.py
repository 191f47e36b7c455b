"""``minigrad.distributed``: PyTorch's ``torch.distributed`` over MPI (mpi4py).

    mpiexec -n 2 python train.py          # each process: import minigrad.distributed as dist
                                          #               dist.init_process_group(backend="mpi")

MPI is the one backend: the launcher (``mpiexec``, ``srun``, ...) fixes each process's rank and the world
size, so ``init_process_group`` needs no address, port or store. mpi4py is an optional extra
(``pip install -e ".[distributed]"``): importing this module works without it, and only
``init_process_group`` and the collectives ask for it.

Collectives work in place on minigrad Tensors, as PyTorch's do, on the whole world (``group=None`` or
``group.WORLD``; sub-groups are not implemented). Every collective is a non-blocking MPI request that is
polled until it completes or the process group's ``timeout`` passes: then a ``RuntimeError`` says which
collective timed out, on which rank, and that another rank did not join (it may have raised). A rank that
raises an exception nobody catches, after ``init_process_group``, aborts the whole MPI job
(``MPI.COMM_WORLD.Abort``, from ``sys.excepthook``), so the other ranks stop at once rather than at their
timeout; the ``timeout`` covers a rank that is stuck, or that caught the exception and went elsewhere.

Threads: like torchrun, ``init_process_group`` gives each of the k ranks on a machine max(1, cpus // k)
threads unless ``NUMBA_NUM_THREADS`` or ``OMP_NUM_THREADS`` is set (``_share_cores``).

Differences from PyTorch: ``ReduceOp.AVG`` needs a floating-point or complex tensor (PyTorch's MPI backend
has no AVG at all); the bitwise ops and ``PREMUL_SUM`` are not offered; ``new_group`` is not implemented.
"""
import datetime
import importlib.util
import os
import pickle
import sys
import time
from enum import IntEnum

import numpy as np

from ..dtypes import is_differentiable, is_floating_point

__all__ = ["GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_object", "all_reduce",
           "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "get_backend", "get_rank",
           "get_world_size", "group", "init_process_group", "is_available", "is_initialized",
           "is_mpi_available", "reduce", "reduce_scatter"]

default_pg_timeout = datetime.timedelta(minutes=30)   # PyTorch's default for the CPU backends

# How long ``Work.wait`` polls without sleeping: sleeping between polls stalls MPICH's progress (a 433 KB
# all-reduce between 2 processes takes 0.07 ms polled, 0.7 ms with 1 ms sleeps); after this it sleeps.
_SPIN_SECONDS = 0.05
_FORWARD_SECONDS = 0.2   # the pause between printing an uncaught exception's traceback and aborting every rank
_MISSING_MPI = ('minigrad.distributed runs over MPI and needs mpi4py, which is not installed: '
                'pip install -e ".[distributed]" (that is: pip install mpi4py mpich)')
_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def _mpi():
    """mpi4py's ``MPI`` module (importing it initialises MPI), or an ImportError naming the extra."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(_MISSING_MPI) from error
    return MPI


def is_mpi_available():
    """Whether mpi4py can be imported (without initialising MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_available():
    """Whether minigrad.distributed can run: mpi4py is installed (PyTorch: built with distributed support)."""
    return is_mpi_available()


class RedOpType(IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4


class ReduceOp:
    """The reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter`` (PyTorch's values)."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX


class ProcessGroup:
    """The ranks that take part in a collective: here always the whole world (an MPI communicator)."""

    def __init__(self, comm, timeout):
        self.comm, self.timeout = comm, timeout

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def __repr__(self):
        return f"ProcessGroup(backend='mpi', rank={self.rank()}, size={self.size()})"


class GroupMember:
    """``group.WORLD``: the default process group once ``init_process_group`` ran, None before."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember
_excepthook = None   # what sys.excepthook was before init_process_group installed the abort


def is_initialized():
    return GroupMember.WORLD is not None


def _default_group(group=None):
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    if group is not None and group is not GroupMember.WORLD:
        raise ValueError(f"minigrad.distributed has only the default process group (group.WORLD), got {group!r}")
    return GroupMember.WORLD


def _abort_on_uncaught(kind, value, traceback):
    """sys.excepthook after init: report the exception, then abort every rank (none waits for this one)."""
    _excepthook(kind, value, traceback)
    if GroupMember.WORLD is not None:
        sys.stderr.flush()
        time.sleep(_FORWARD_SECONDS)    # the launcher may drop output not yet forwarded when the abort lands
        _mpi().COMM_WORLD.Abort(1)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default process group: this process's rank and the world size come from the MPI launcher.

    ``backend`` must be ``"mpi"`` (or None). ``world_size`` and ``rank``, when given (not -1), must agree with
    the launcher's. ``timeout`` (a ``datetime.timedelta``, 30 minutes by default) bounds every collective.
    ``init_method``, ``store``, ``group_name`` and ``pg_options`` are accepted for PyTorch programs and unused:
    MPI needs no rendezvous."""
    global _excepthook
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and (not isinstance(backend, str) or backend.lower() != "mpi"):
        raise ValueError(f"init_process_group(): minigrad.distributed has only the 'mpi' backend, got "
                         f"backend={backend!r} (launch with mpiexec -n N python ...)")
    if init_method is not None and not isinstance(init_method, str):
        raise TypeError(f"init_process_group(): init_method must be a str, got {type(init_method).__name__}")
    if timeout is None:
        timeout = default_pg_timeout
    elif not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    if device_id is not None and str(device_id) != "cpu":
        raise ValueError(f"init_process_group(): minigrad runs on the CPU, got device_id={device_id!r}")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    for name, value, actual in (("world_size", world_size, comm.Get_size()), ("rank", rank, comm.Get_rank())):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"init_process_group(): {name} must be an int, got {type(value).__name__}")
        if value != -1 and value != actual:
            raise ValueError(f"init_process_group(): {name}={value} but the MPI launcher started this process "
                             f"with {name}={actual} (leave it at -1 to take the launcher's)")
    GroupMember.WORLD = ProcessGroup(comm, timeout)
    _share_cores(MPI, comm)
    if _excepthook is None:
        _excepthook, sys.excepthook = sys.excepthook, _abort_on_uncaught


THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")


def _share_cores(MPI, comm):
    """torchrun's rule for several processes on one machine, applied at ``init_process_group`` since mpiexec
    does not apply it: unless the environment sets a thread count (``THREAD_VARIABLES``), each of the k ranks
    on this node runs minigrad's kernels on max(1, cpus // k) threads (cpus: those this process may run on),
    so that the ranks do not oversubscribe the cores. On 2 cores, ``mpiexec -n 2`` with 2 threads per rank
    took 18 s for 300 steps of the tiny Transformer with ``--ddp``, against 3 s with 1 thread per rank:
    each rank's spinning workers took the core the other rank's main thread needed. ``set_num_threads``
    afterwards still overrides it."""
    if any(os.environ.get(name) for name in THREAD_VARIABLES):
        return
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)             # the ranks sharing this machine's memory
    local_ranks = node.Get_size()
    node.Free()
    if local_ranks > 1:
        from .. import kernels
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        kernels.set_num_threads(max(1, cpus // local_ranks))


def destroy_process_group(group=None):
    """Leave the default process group (MPI itself stays initialised until the interpreter exits)."""
    global _excepthook
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    _default_group(group)
    GroupMember.WORLD = None
    if _excepthook is not None:
        sys.excepthook, _excepthook = _excepthook, None


def get_rank(group=None):
    return _default_group(group).rank()


def get_world_size(group=None):
    return _default_group(group).size()


def get_backend(group=None):
    _default_group(group)
    return "mpi"


# --------------------------------------------------------------------------- waiting with a deadline
class Work:
    """A collective in flight (``async_op=True``): ``wait()`` blocks until it completes, or raises a
    RuntimeError once the process group's timeout (or ``wait``'s own) has passed."""

    def __init__(self, requests, what, timeout, finish=None):
        self._requests, self._what, self._timeout, self._finish = list(requests), what, timeout, finish
        self._done = not self._requests
        if self._done and finish is not None:
            finish()

    def is_completed(self):
        """Whether the collective has completed (it progresses MPI, as ``MPI_Test`` does)."""
        if not self._done:
            MPI = _mpi()
            if MPI.Request.Testall(self._requests):
                self._complete()
        return self._done

    def _complete(self):
        self._done = True
        if self._finish is not None:
            self._finish()

    def wait(self, timeout=None):
        if self._done:
            return True
        timeout = self._timeout if timeout is None else timeout
        MPI = _mpi()
        start = time.monotonic()
        deadline, pause = start + timeout.total_seconds(), 0.0
        while not MPI.Request.Testall(self._requests):   # MPICH moves the collective on inside these calls
            now = time.monotonic()
            if now > deadline:
                comm = MPI.COMM_WORLD
                raise RuntimeError(
                    f"minigrad.distributed: {self._what} on rank {comm.Get_rank()} of {comm.Get_size()} timed out "
                    f"after {timeout}: another rank did not join this collective (it may have raised an "
                    "exception, exited, or be stuck elsewhere). The process group cannot be used any more: "
                    "end this process (MPI.COMM_WORLD.Abort).")
            if now - start < _SPIN_SECONDS:  # a short wait: poll, letting other processes run in between
                os.sched_yield()
            else:                               # a long one (a slow rank): poll less often, free the core
                time.sleep(pause)
                pause = min(2 * pause + 1e-5, 1e-3)
        self._complete()
        return True


def _run(requests, what, group, async_op, finish=None):
    work = Work(requests, what, group.timeout, finish)
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- tensors as MPI buffers
def _check_tensor(tensor, name, fn):
    from ..tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(tensor).__name__}")
    return tensor


def _wire(array, reducing):
    """``array`` in a dtype MPI knows. MPI has no type for ml_dtypes' floats (bfloat16, float8): reduced, they
    travel as float32 (summed there, rounded back once at the end); moved (broadcast, gathered), as their bits
    (unsigned integers of their size, exact). Other arrays as they are (NumPy's dtypes map to MPI's)."""
    if array.dtype.kind != "V" or not is_floating_point(array.dtype):
        return array
    return array.astype(np.float32) if reducing else array.view(f"u{array.dtype.itemsize}")


def _buffer(tensor, reducing=False):
    """A C-contiguous array for MPI to read and write, and a function that writes it back into ``tensor``
    when it had to be a copy (a non-contiguous view, or a float MPI has no type for: ``_wire``)."""
    data = tensor._data
    if data.flags.c_contiguous and data.flags.writeable:
        buf = _wire(data, reducing)
        if buf is data or not reducing:      # the tensor's own memory (as bits)
            return buf, None
    else:
        buf = _wire(np.ascontiguousarray(data), reducing)

    def write_back():
        tensor._data[...] = buf if reducing else buf.view(data.dtype)   # (assignment rounds float32 back)
    return buf, write_back


def _bump(tensor):
    from ..autograd.version import bump
    bump(tensor._data)


def _mpi_op(op, fn, dtype):
    MPI = _mpi()
    try:
        op = RedOpType(op)
    except ValueError:
        raise ValueError(f"{fn}(): op must be a ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), got {op!r}") from None
    if op == RedOpType.AVG and not is_differentiable(dtype):
        raise RuntimeError(f"{fn}(): ReduceOp.AVG needs a floating point or complex tensor, got {dtype} "
                           "(use ReduceOp.SUM and divide)")
    return {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
            RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX}[op], op == RedOpType.AVG


def _check_rank(value, name, fn, size):
    if value is None:
        value = 0
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < size:
        raise ValueError(f"{fn}(): {name} must be a rank in [0, {size - 1}], got {value!r}")
    return value


def _finish(*steps):
    def run():
        for step in steps:
            if step is not None:
                step()
    return run


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over all ranks with ``op``; every rank receives the result in place."""
    _check_tensor(tensor, "tensor", "all_reduce")
    pg = _default_group(group)
    buf, write_back = _buffer(tensor, reducing=True)
    mpi_op, average = _mpi_op(op, "all_reduce", buf.dtype)
    request = pg.comm.Iallreduce(_mpi().IN_PLACE, buf, mpi_op)

    def divide():
        buf[...] /= pg.size()
    return _run([request], "all_reduce", pg, async_op,
                _finish(divide if average else None, write_back, lambda: _bump(tensor)))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank."""
    _check_tensor(tensor, "tensor", "broadcast")
    pg = _default_group(group)
    src = _check_rank(src if group_src is None else group_src, "src", "broadcast", pg.size())
    buf, write_back = _buffer(tensor)
    request = pg.comm.Ibcast(buf, root=src)
    return _run([request], "broadcast", pg, async_op, _finish(write_back, lambda: _bump(tensor)))


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over all ranks with ``op`` into rank ``dst``'s ``tensor``; the others' are unchanged."""
    _check_tensor(tensor, "tensor", "reduce")
    pg = _default_group(group)
    dst = _check_rank(dst if group_dst is None else group_dst, "dst", "reduce", pg.size())
    buf, write_back = _buffer(tensor, reducing=True)
    mpi_op, average = _mpi_op(op, "reduce", buf.dtype)
    MPI = _mpi()
    if pg.rank() == dst:
        request = pg.comm.Ireduce(MPI.IN_PLACE, buf, mpi_op, root=dst)

        def divide():
            buf[...] /= pg.size()
        finish = _finish(divide if average else None, write_back, lambda: _bump(tensor))
    else:
        request = pg.comm.Ireduce(buf.copy(), None, mpi_op, root=dst)
        finish = None
    return _run([request], "reduce", pg, async_op, finish)


def _check_list(tensors, name, fn, tensor, size):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        got = f"a list of {len(tensors)}" if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{fn}(): {name} must be a list of world_size={size} tensors, got {got}")
    for i, t in enumerate(tensors):
        _check_tensor(t, f"{name}[{i}]", fn)
        if t.shape != tensor.shape or t.dtype != tensor.dtype:
            raise ValueError(f"{fn}(): {name}[{i}] has shape {list(t.shape)} and dtype {t.dtype}, expected "
                             f"{list(tensor.shape)} and {tensor.dtype} like the other tensor")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` receives rank r's ``tensor``, on every rank."""
    _check_tensor(tensor, "tensor", "all_gather")
    pg = _default_group(group)
    _check_list(tensor_list, "tensor_list", "all_gather", tensor, pg.size())
    send = _wire(np.ascontiguousarray(tensor._data), reducing=False)
    gathered = np.empty((pg.size(),) + send.shape, send.dtype)                  # (world, *shape)
    request = pg.comm.Iallgather(send, gathered)

    def scatter_locally():
        for r, out in enumerate(tensor_list):
            out._data[...] = gathered[r].view(tensor._data.dtype)
            _bump(out)
    return _run([request], "all_gather", pg, async_op, scatter_locally)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` on rank r receives the reduction over all ranks of their ``input_list[r]``."""
    _check_tensor(output, "output", "reduce_scatter")
    pg = _default_group(group)
    _check_list(input_list, "input_list", "reduce_scatter", output, pg.size())
    send = _wire(np.stack([t._data for t in input_list]), reducing=True)   # (world, *shape), contiguous
    buf, write_back = _buffer(output, reducing=True)
    mpi_op, average = _mpi_op(op, "reduce_scatter", buf.dtype)
    request = pg.comm.Ireduce_scatter_block(send, buf, mpi_op)

    def divide():
        buf[...] /= pg.size()
    return _run([request], "reduce_scatter", pg, async_op,
                _finish(divide if average else None, write_back, lambda: _bump(output)))


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank has reached this barrier (at most ``timeout``, else the group's)."""
    pg = _default_group(group)
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    work = Work([pg.comm.Ibarrier()], "barrier", timeout or pg.timeout)
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- Python objects (pickled)
def _exchange_bytes(pg, payload, what, root=None):
    """The pickled payloads of every rank (``root=None``: all-gather) or of ``root`` (broadcast), with the
    group's timeout: the lengths first, then the bytes."""
    MPI = _mpi()
    size = pg.size()
    if root is None:
        lengths = np.empty(size, np.int64)
        Work([pg.comm.Iallgather(np.array([len(payload)], np.int64), lengths)], what, pg.timeout).wait()
        data = np.empty(int(lengths.sum()), np.uint8)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        send = np.frombuffer(payload, np.uint8)
        Work([pg.comm.Iallgatherv(send, [data, lengths, offsets, MPI.BYTE])], what, pg.timeout).wait()
        return [data[o:o + n].tobytes() for o, n in zip(offsets, lengths)]
    length = np.array([len(payload) if payload is not None else 0], np.int64)
    Work([pg.comm.Ibcast(length, root=root)], what, pg.timeout).wait()
    data = np.frombuffer(payload, np.uint8).copy() if pg.rank() == root else np.empty(int(length[0]), np.uint8)
    Work([pg.comm.Ibcast(data, root=root)], what, pg.timeout).wait()
    return data.tobytes()


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` receives rank r's ``obj`` (pickled: only for objects you trust), on every rank."""
    pg = _default_group(group)
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"all_gather_object(): object_list must be a list of world_size={pg.size()} entries, "
                         f"got {object_list!r:.80}")
    for r, payload in enumerate(_exchange_bytes(pg, pickle.dumps(obj), "all_gather_object")):
        object_list[r] = pickle.loads(payload)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Every rank's ``object_list`` receives rank ``src``'s entries, in place (pickled: only trusted objects)."""
    pg = _default_group(group)
    src = _check_rank(src if group_src is None else group_src, "src", "broadcast_object_list", pg.size())
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list(): object_list must be a list, got {type(object_list).__name__}")
    payload = pickle.dumps(list(object_list)) if pg.rank() == src else None
    received = pickle.loads(_exchange_bytes(pg, payload, "broadcast_object_list", root=src))
    if len(received) != len(object_list):
        raise ValueError(f"broadcast_object_list(): rank {src} sent {len(received)} objects but this rank's "
                         f"object_list has {len(object_list)}")
    object_list[:] = received
