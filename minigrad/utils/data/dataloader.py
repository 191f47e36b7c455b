"""``DataLoader``: batches from a dataset through a sampler and a collate function, in the calling process."""
import warnings

import numpy as np

from ..._pytorch_stream import full_range_integers
from ...random import torch_stream

from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

_warned_serial = False


def get_worker_info():
    """Always None: minigrad loads data in the calling process (as PyTorch's main process does)."""
    return None


def _warn_serial_once(num_workers):
    global _warned_serial
    if not _warned_serial:
        _warned_serial = True
        warnings.warn(f"DataLoader(num_workers={num_workers}): minigrad loads batches in the calling process, one "
                      "after another (worker_init_fn is not called; get_worker_info() returns None). The batches are "
                      "the same as with num_workers=0.", UserWarning, stacklevel=3)


class DataLoader:
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    Map-style datasets: indices come from ``batch_sampler``, else from ``sampler`` (default: sequential, or a
    ``RandomSampler`` drawing from ``generator`` with ``shuffle=True``) grouped by ``batch_size`` (``drop_last``
    drops a short last batch); each batch of samples goes through ``collate_fn`` (default ``default_collate``).
    ``batch_size=None`` disables batching: each sample goes through ``default_convert``. Iterable datasets are
    read in order and grouped likewise.

    Differences from PyTorch: ``num_workers > 0`` loads serially in this process (a one-time warning, same
    batches); ``pin_memory`` changes nothing (CPU only); ``timeout``, ``worker_init_fn``,
    ``multiprocessing_context``, ``prefetch_factor`` and ``persistent_workers`` apply to workers and are
    accepted without effect beyond PyTorch's argument checks.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if isinstance(dataset, IterableDataset):
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                                     f"{name}={value}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        self.dataset, self.num_workers, self.pin_memory, self.timeout = dataset, num_workers, pin_memory, timeout
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.generator, self.batch_size, self.drop_last = generator, batch_size, drop_last
        self._iterable = isinstance(dataset, IterableDataset)
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_convert if self._auto_collation is False else default_collate
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def __iter__(self):
        if self.num_workers > 0:
            _warn_serial_once(self.num_workers)
        return _SerialIterator(self)

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)  # TypeError when the stream has no length, as in PyTorch
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


class _SerialIterator:
    """One pass over a ``DataLoader``: fetches and collates one batch per ``next()``."""

    def __init__(self, loader):
        self._loader = loader
        if loader._iterable:
            self._stream = iter(loader.dataset)
        else:
            self._indices = iter(loader.batch_sampler if loader._auto_collation else loader.sampler)
        # PyTorch draws a base seed for its workers from the loader's generator at each pass: drawn here too, so
        # that a shuffling sampler, which draws its own seed at the first batch, sees PyTorch's stream
        self._base_seed = int(full_range_integers(torch_stream(loader.generator), 1, np.int64)[0])

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        loader = self._loader
        if loader._iterable:
            if not loader._auto_collation:
                return loader.collate_fn(next(self._stream))
            batch = []
            for sample in self._stream:
                batch.append(sample)
                if len(batch) == loader.batch_size:
                    break
            if not batch or (loader.drop_last and len(batch) < loader.batch_size):
                raise StopIteration
            return loader.collate_fn(batch)
        index = next(self._indices)
        dataset = loader.dataset
        if not loader._auto_collation:
            return loader.collate_fn(dataset[index])
        if callable(getattr(dataset, "__getitems__", None)):
            samples = dataset.__getitems__(index)
        else:
            samples = [dataset[i] for i in index]
        return loader.collate_fn(samples)
