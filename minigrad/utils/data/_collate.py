"""``default_collate`` (samples -> one batch) and ``default_convert`` (one sample, no batching), following
PyTorch's rules for each element type."""
import collections.abc
import copy
import re

import numpy as np

from ...creation import tensor
from ...ops.shape import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_STRING_OR_OBJECT = re.compile(r"[SaUO]")  # ndarray dtype kinds that cannot become tensors


def _is_numpy_value(elem):
    return type(elem).__module__ == "numpy" and not isinstance(elem, (np.str_, np.bytes_))


def default_collate(batch):
    """Merge a list of samples into a batch, recursively by the type of the first sample:

    - Tensors: stacked along a new first dimension; ndarrays: the same, as tensors;
    - NumPy scalars: a 1-d tensor of their dtype; Python floats: float64; ints: int64 (bools: bool);
    - strings and bytes: the list as is;
    - mappings: the same mapping type, each key collated; namedtuples: the same type, each field collated;
    - other sequences (all of one length, else RuntimeError): transposed and each position collated; tuples
      give a list (as in PyTorch), lists a list.
    """
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if _is_numpy_value(elem):
        if isinstance(elem, np.ndarray):
            if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERROR.format(elem.dtype))
            return default_collate([Tensor(np.asarray(b)) for b in batch])
        if isinstance(elem, (np.bool_, np.number, np.object_)):  # NumPy scalars keep their dtype
            return Tensor(np.asarray(batch))
    if isinstance(elem, float):
        return Tensor(np.asarray(batch, dtype=np.float64))
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([sample[key] for sample in batch]) for key in elem}
        return _same_container(elem, collated, mapping=True)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(samples) for samples in zip(*batch)]  # per position (tuples, as in PyTorch)
        return collated if isinstance(elem, tuple) else _same_container(elem, collated, mapping=False)
    raise TypeError(_COLLATE_ERROR.format(elem_type))


def _same_container(elem, values, mapping):
    """``values`` (a dict or list) in ``elem``'s container type where that type can be rebuilt, else as is."""
    try:
        if isinstance(elem, (collections.abc.MutableMapping, collections.abc.MutableSequence)):
            clone = copy.copy(elem)
            if mapping:
                clone.update(values)
            else:
                for i, value in enumerate(values):
                    clone[i] = value
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def default_convert(data):
    """One sample without batching (``DataLoader(batch_size=None)``): ndarrays and NumPy scalars become
    tensors, containers are converted element by element (tuples give lists), anything else is kept."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _STRING_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        if isinstance(data, (np.ndarray, np.bool_, np.number)):
            return Tensor(np.asarray(data))
        return data
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _same_container(data, {key: default_convert(data[key]) for key in data}, mapping=True)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return _same_container(data, [default_convert(d) for d in data], mapping=False)
    return data
