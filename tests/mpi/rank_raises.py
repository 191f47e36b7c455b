"""Run under mpiexec -n N with one argument:

``caught``: the last rank raises, catches it and never joins the all_reduce; the others must get a
RuntimeError naming the timeout within seconds (timeout=2 s), print it, and every rank exits 0.
``uncaught``: the last rank raises and does not catch it; sys.excepthook aborts the MPI job, so the
others (waiting in an all_reduce with a 60 s timeout) are stopped at once: the job exits non-zero fast."""
import datetime
import sys
import time

import minigrad as mg
import minigrad.distributed as dist

mode = sys.argv[1]
dist.init_process_group(backend="mpi", timeout=datetime.timedelta(seconds=2 if mode == "caught" else 60))
rank, world = dist.get_rank(), dist.get_world_size()
dist.barrier()

if rank == world - 1:
    if mode == "uncaught":
        raise ZeroDivisionError("rank failed on purpose")
    try:
        1 / 0
    except ZeroDivisionError:
        print(f"rank {rank}: raised, not joining", flush=True)
    time.sleep(4)          # outlives the others' timeout, then leaves without the collective
else:
    start = time.monotonic()
    try:
        dist.all_reduce(mg.ones(3))
    except RuntimeError as error:
        took = time.monotonic() - start
        assert "timed out" in str(error) and "all_reduce" in str(error) and "did not join" in str(error), error
        assert 1.5 < took < 10, took
        print(f"rank {rank}: RuntimeError after {took:.1f} s: {error}", flush=True)
    else:
        raise AssertionError(f"rank {rank}: all_reduce returned although a rank never joined")
sys.stdout.flush()
