"""Matrix products: ``matmul`` (batched, broadcasting batch dimensions)."""
from ..autograd import Function  # noqa: F401


def matmul(input, other):
    raise NotImplementedError("minigrad.matmul is not implemented yet")


def linear(input, weight, bias=None):
    raise NotImplementedError("minigrad linear is not implemented yet")


def embedding(input, weight, padding_idx=None):
    raise NotImplementedError("minigrad embedding is not implemented yet")
