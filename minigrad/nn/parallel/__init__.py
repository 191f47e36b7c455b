"""``minigrad.nn.parallel``: ``DistributedDataParallel``, data-parallel training over ``minigrad.distributed``
(MPI). Importing it does not need mpi4py; constructing a ``DistributedDataParallel`` needs an initialised
process group."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
