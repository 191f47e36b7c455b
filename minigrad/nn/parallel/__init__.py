"""``minigrad.nn.parallel``: ``DataParallel`` (a pass-through on the CPU, as PyTorch's without GPUs) and
``DistributedDataParallel``, data-parallel training over ``minigrad.distributed``
(MPI). Importing it does not need mpi4py; constructing a ``DistributedDataParallel`` needs an initialised
process group."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
