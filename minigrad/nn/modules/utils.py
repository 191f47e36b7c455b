"""``torch.nn.modules.utils``: the argument normalizers modules use (``_single``, ``_pair``, ``_triple``,
``_quadruple``, ``_ntuple``, ``_reverse_repeat_tuple``, ``_list_with_default``) and
``consume_prefix_in_state_dict_if_present``, with PyTorch's semantics.

``_ntuple(n)(x)`` makes a tuple of any iterable as it is (no length check: ``_pair((1, 2, 3))`` is
``(1, 2, 3)``, a string gives its characters) and repeats anything else ``n`` times; a 0-d tensor or array is
iterable but has no elements, so it raises PyTorch's TypeError.
"""
import collections.abc

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A function turning a scalar into an ``n``-tuple of it, and any iterable into a tuple of its items."""

    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` in reverse order, each item ``n`` times: ``((1, 2), 2) -> (2, 2, 1, 1)`` (a padding per spatial
    dimension in ``F.pad``'s order, last dimension first)."""
    return tuple(item for item in reversed(tuple(t)) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pooling's output size: an int as it is; else a list where each None takes the matching
    trailing entry of ``defaults`` (the input's sizes), which must be longer than ``out_size``."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    trailing = list(defaults)[len(defaults) - len(out_size):]
    return [default if size is None else size for size, default in zip(out_size, trailing)]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` that start with it, in place (e.g. the ``module.`` a
    DataParallel/DistributedDataParallel wrapper adds). Renamed entries move to the end, as PyTorch's.

    The per-module versions in ``state_dict._metadata`` are renamed too; there the wrapper's own entry (the key
    ``prefix`` without its dots, e.g. ``module``) becomes the root entry ``''``, replacing the wrapper's root."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    if not hasattr(state_dict, "_metadata"):
        return
    metadata = state_dict._metadata
    wrapper = prefix.replace(".", "")
    for key in list(metadata.keys()):
        if key and (key == wrapper or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
