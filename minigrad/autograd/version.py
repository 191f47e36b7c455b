"""Version counters: how many in-place writes a tensor's memory has seen.

Every in-place op (``add_``, ``t[i] = v``, an optimizer step, ...) bumps the version of the memory it
writes. A backward node notes when it saved its arrays (a count of all writes so far, ``writes``); if
one of them was written after that, the saved value is not the one the forward used, and
``Context.saved_tensors`` raises PyTorch's "modified by an inplace operation" error instead of
returning a silently wrong gradient. Saving costs one integer read; the arrays are looked at only
when something was written in place since the save.

The counter belongs to the *storage*, not to a Tensor object: the NumPy array that owns the memory
(``array.base`` followed to its end). So a tensor, its views (``x[0]``, ``x.T``, ``x.view(-1)``),
``x.data``, ``x.detach()`` and the arrays an op saved from ``x`` all see the same counter, as views
share their base's counter in PyTorch, with no bookkeeping in the view ops themselves. Storage that
was never written in place has no entry and is at version 0.
"""
import weakref

import numpy as np

_versions = {}   # id(storage) -> (counter, since, weakref that drops the entry with the storage)
writes = [0]     # in-place writes ever made, anywhere: the stamp of the latest one
own_counters_in_use = [False]   # set once a tensor with a counter of its own (.data) exists: Function.apply notes
_KEPT_STAMPS = 64
# A counter is [version, stamps of its latest writes]. Several storages share one after ``alias``; ``since`` is the
# stamp before which a storage's entry ignores its counter's writes (0 for a storage's own counter).


def storage_of(array):
    """The ndarray that owns ``array``'s memory (``array`` itself if it owns it). NumPy's ``as_strided`` puts a
    small wrapper between a view and its array (``DummyArray``, whose ``.base`` is the array): it is followed too."""
    base = array.base
    while base is not None:
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)      # as_strided's DummyArray
            if not isinstance(base, np.ndarray):
                break
        array, base = base, base.base
    return array


def version_of(array):
    entry = _versions.get(id(storage_of(array)))
    return 0 if entry is None else entry[0][0]


def writes_since(array, stamp):
    """How many in-place writes ``array``'s memory has seen after the global count was ``stamp``."""
    entry = _versions.get(id(storage_of(array)))
    if entry is None:
        return 0
    after = max(stamp, entry[1])
    return sum(1 for s in entry[0][1] if s > after)


def _entry(owner, counter, since):
    key = id(owner)
    _versions[key] = (counter, since, weakref.ref(owner, lambda _, key=key: _versions.pop(key, None)))
    return _versions[key]


def bump(array):
    """Record an in-place write into ``array``'s memory."""
    writes[0] += 1
    owner = storage_of(array)
    entry = _versions.get(id(owner))
    if entry is None:
        _entry(owner, [1, [writes[0]]], 0)
        return
    counter = entry[0]
    counter[0] += 1
    counter[1].append(writes[0])
    if len(counter[1]) > _KEPT_STAMPS:
        del counter[1][0]


def alias(array, target):
    """From now on ``array``'s memory counts ``target``'s writes as its own (writes already made do not count).

    An in-place op computes its result in a new array, which its backward may have saved (``tanh_`` saves its
    output), then copies it into the tensor: in PyTorch that output *is* the tensor, so a later write into the
    tensor must make that backward raise. Aliasing the new array to the tensor's memory does so."""
    owner, target_owner = storage_of(array), storage_of(target)
    if owner is target_owner:
        return
    entry = _versions.get(id(target_owner)) or _entry(target_owner, [0, []], 0)
    _entry(owner, entry[0], writes[0])


def tensor_version(t):
    """The version a tensor sees: its memory's, or for a ``.data`` tensor (and its views) a counter of its own,
    as PyTorch gives ``.data`` a fresh version counter."""
    counter = getattr(t, "_own_counter", None)
    return version_of(t._data) if counter is None else counter[0]


def bump_tensor(t):
    """Record an in-place write into ``t``: into its memory's counter, or its own (``.data``)."""
    counter = getattr(t, "_own_counter", None)
    if counter is None:
        bump(t._data)
    else:
        writes[0] += 1
        counter[0] += 1
