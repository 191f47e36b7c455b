"""Matrix products: ``matmul`` (batched, broadcasting batch dimensions)."""
from ..autograd import Function  # noqa: F401


def matmul(input, other):
    raise NotImplementedError("minigrad.matmul is not implemented yet")
