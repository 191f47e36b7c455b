"""Version counters: how many in-place writes a tensor's memory has seen.

Every in-place op (``add_``, ``t[i] = v``, an optimizer step, ...) bumps the version of the memory it
writes. A backward node records the versions of the arrays it saved; if one changed before the
backward runs, the saved value is not the one the forward used, and ``Context.saved_tensors`` raises
PyTorch's "modified by an inplace operation" error instead of returning a silently wrong gradient.

The counter belongs to the *storage*, not to a Tensor object: the NumPy array that owns the memory
(``array.base`` followed to its end). So a tensor, its views (``x[0]``, ``x.T``, ``x.view(-1)``),
``x.data``, ``x.detach()`` and the arrays an op saved from ``x`` all see the same counter, as views
share their base's counter in PyTorch, with no bookkeeping in the view ops themselves. Storage that
was never written in place has no entry and is at version 0.
"""
import weakref

import numpy as np

_versions = {}   # id(storage) -> [version, weakref to the storage that drops the entry when it dies]
writes = [0]     # in-place writes ever made, anywhere: a cheap "has anything changed since?" test


def storage_of(array):
    """The ndarray that owns ``array``'s memory (``array`` itself if it owns it)."""
    base = array.base
    while isinstance(base, np.ndarray):
        array, base = base, base.base
    return array


def version_of(array):
    entry = _versions.get(id(storage_of(array)))
    return 0 if entry is None else entry[0]


def bump(array):
    """Record an in-place write into ``array``'s memory."""
    owner = storage_of(array)
    key = id(owner)
    entry = _versions.get(key)
    if entry is None:
        _versions[key] = [1, weakref.ref(owner, lambda _, key=key: _versions.pop(key, None))]
    else:
        entry[0] += 1
    writes[0] += 1
