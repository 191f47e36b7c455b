"""Each rank prints how many threads minigrad's kernels use after init_process_group, and how many CPUs it
may run on (tests/test_distributed.py checks the split)."""
import os

import minigrad as mg
import minigrad.distributed as dist

dist.init_process_group(backend="mpi")
cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
print(f"THREADS rank={dist.get_rank()} threads={mg.get_num_threads()} cpus={cpus}", flush=True)
dist.destroy_process_group()
