"""Dimension arguments as PyTorch takes them: negative indices, ints or tuples, range checks."""
from .._checks import is_int, type_name


def normalize_dim(dim, ndim):
    """One dimension index in [0, ndim); PyTorch's IndexError otherwise (a 0-d tensor accepts -1 and 0)."""
    if not is_int(dim):
        raise TypeError(f"dim must be int, not {type_name(dim)}")
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank if ndim else 0


def normalize_dims(dim, ndim):
    """``dim`` (None, an int, or a tuple/list of ints) as a sorted tuple of axes; None or () means all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        axes = tuple(normalize_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            repeated = next(a for i, a in enumerate(axes) if a in axes[:i])
            raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
        return tuple(sorted(axes)) if ndim else ()
    axis = normalize_dim(dim, ndim)  # validates the dim even for a 0-d tensor
    return (axis,) if ndim else ()
