"""The pytree functions minigrad's transforms use (``minigrad.utils._pytree``, PyTorch's pytrees): a transform
treats ``f(params_dict, (x, y))`` like ``f(a, b, c)`` by flattening its arguments and outputs."""
from ..utils._pytree import (TreeSpec, _broadcast_to_and_flatten, tree_flatten, tree_map, tree_structure,  # noqa: F401
                             tree_unflatten, treespec_pprint)

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "treespec_pprint", "broadcast_prefix"]


def broadcast_prefix(prefix, tree):
    """One value of ``prefix`` per leaf of ``tree``, where ``prefix`` is ``tree`` cut short: each of its leaves
    stands for every leaf of the subtree of ``tree`` at that place (vmap's ``in_dims=(0, None)`` for
    ``f(x, params_dict)``). None when ``prefix`` is not a prefix of ``tree``'s structure."""
    return _broadcast_to_and_flatten(prefix, tree_structure(tree))
