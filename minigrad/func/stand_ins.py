"""``functionalize`` and ``debug_unwrap``: PyTorch's names, for code that calls them, with nothing to do here.

PyTorch's ``functionalize(f)`` traces f and rewrites in-place operations (and, with
``remove='mutations_and_views'``, views) into out-of-place ones, for compilers and for transforms that cannot
handle mutation; the function it returns computes the same results as f. minigrad has no functionalization
pass and its transforms are ordinary operations, so ``functionalize`` returns f itself, wrapped (the same
results, the same mutations of its inputs). PyTorch's ``debug_unwrap`` removes a transform's wrapper from a
tensor seen inside it; minigrad's transforms wrap nothing, so it returns the tensor.
"""
import functools

from ..tensor import Tensor

__all__ = ["functionalize", "debug_unwrap"]

_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """A stand-in: a function computing what ``func`` computes (see the module docstring). ``remove`` is checked
    as PyTorch checks it."""
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


def debug_unwrap(tensor, *, recurse=True):
    """``tensor`` itself: minigrad's transforms do not wrap tensors."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"debug_unwrap(): expected a Tensor, got {type(tensor).__name__}")
    return tensor
