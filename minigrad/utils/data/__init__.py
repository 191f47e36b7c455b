"""Datasets, samplers and ``DataLoader``, as in ``torch.utils.data``.

Random choices (shuffling, ``random_split``, random samplers) draw from a ``minigrad.Generator`` given as
``generator=``, else from minigrad's default generator (``minigrad.manual_seed``): reproducible, but other
numbers than PyTorch's. ``DataLoader`` loads in the calling process: ``num_workers > 0`` falls back to
serial loading with a one-time warning, and ``get_worker_info()`` is always None.
"""
from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
