"""``DistributedSampler``: each rank of a data-parallel job reads its own part of the dataset.

The indices (shuffled by epoch, or in order) are padded by repeating their beginning until their number is
a multiple of ``num_replicas`` (or, with ``drop_last``, cut to the largest multiple), and rank r takes every
``num_replicas``-th one starting at r: the ranks' parts are disjoint (up to the padding) and equally long,
as PyTorch's are.

The shuffled order is a permutation drawn from a ``minigrad.Generator`` seeded with ``seed + epoch``, the same
on every rank; it is another permutation than PyTorch's (whose generator minigrad does not reproduce), but
padding, partitioning and ``drop_last`` are PyTorch's: with ``shuffle=False`` the indices are identical.
"""
import math

from ... import distributed as dist
from ...random import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` for rank ``rank`` of ``num_replicas`` (both default to the process
    group's); call ``set_epoch(epoch)`` before each epoch for a new shuffle."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)   # the largest multiple that fits
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            generator = Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        assert len(indices) == self.total_size
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The shuffle of the next iteration depends on ``epoch`` (the same on every rank)."""
        self.epoch = epoch
