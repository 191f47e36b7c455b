"""All parameters as one vector and back (``parameters_to_vector``, ``vector_to_parameters``), with PyTorch's
semantics."""
from ...ops.shape import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-d Tensor (differentiable: a cat of views)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Give the ``parameters`` in turn consecutive slices of the 1-d ``vec`` as their new ``.data``
    (outside autograd; each parameter then shares its slice's memory, as in PyTorch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected minigrad.Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.ndim != 1 or vec.numel() < total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-d vector of at least {total} elements (the "
                           f"parameters' total size), got shape {list(vec.shape)}")
    start = 0
    for p in parameters:
        p.data = Tensor(vec._data[start:start + p.numel()].reshape(p.shape))   # a view of vec
        start += p.numel()
