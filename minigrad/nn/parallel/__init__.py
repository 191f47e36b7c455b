"""``minigrad.nn.parallel``: importable so that PyTorch programs that name it load unchanged.

minigrad runs in one process on the CPU, so there is nothing to parallelise yet. A later issue adds
``DistributedDataParallel`` here; until then this package is deliberately empty.
"""
__all__ = []
