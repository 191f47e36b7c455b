"""Samplers: iterables of dataset indices (or, for ``BatchSampler``, of lists of indices)."""
import numpy as np

from ..._pytorch_stream import full_range_integers, integers, permutation
from ...random import Generator, default_generator, torch_stream
from ...tensor import Tensor

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and, where known, ``__len__``."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


def _check_num_samples(num_samples):
    if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
        raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Every index once in a random order (each iteration draws a new permutation); with ``num_samples`` larger
    than the dataset, whole permutations follow one another. ``replacement=True``: ``num_samples`` independent
    uniform draws. Drawn from ``generator``, else from minigrad's default generator."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        self.data_source, self.replacement, self._num_samples, self.generator = (data_source, replacement,
                                                                                  num_samples, generator)
        _check_num_samples(self.num_samples)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        gen = self.generator
        if gen is None:                 # as PyTorch: a generator of its own, seeded from the default one
            gen = Generator().manual_seed(int(full_range_integers(default_generator, 1, np.int64)[0]))
        gen = torch_stream(gen)
        if self.replacement:            # in draws of 32, as PyTorch
            for start in range(0, self.num_samples, 32):
                yield from integers(gen, min(32, self.num_samples - start), 0, n).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from permutation(gen, n).tolist()
        yield from permutation(gen, n)[:self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order, a new one each iteration."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in permutation(torch_stream(self.generator), len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (need not sum to one), with
    replacement by default; without replacement, at most as many as there are non-zero weights."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_num_samples(num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = np.asarray(weights._data if isinstance(weights, Tensor) else weights, dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, non-negative and not all "
                               f"zero), got weights={weights.tolist()}")
        if not replacement and num_samples > np.count_nonzero(weights):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement: "
                               f"num_samples={num_samples}, {np.count_nonzero(weights)} non-zero weights")
        self.weights, self.num_samples, self.replacement, self.generator = (weights, num_samples, replacement,
                                                                            generator)

    def __iter__(self):
        from ...random import multinomial        # PyTorch's draws: multinomial of the float64 weights
        return iter(multinomial(Tensor(self.weights), self.num_samples, self.replacement,
                                generator=self.generator).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` consecutive indices from ``sampler``; the last one shorter, or dropped with
    ``drop_last``."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
