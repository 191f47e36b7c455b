"""``div(a, b, rounding_mode='trunc' | 'floor')``: division rounded to an integer value, in the operands'
promoted dtype (integers stay integers, as in PyTorch).

* ``'trunc'`` rounds toward zero (C's integer division); ``'floor'`` toward -inf (Python's ``//``). Floats
  follow PyTorch's (and NumPy's) floor division: ``fmod`` first, then the quotient corrected by one where the
  remainder's sign differs from the divisor's; a zero divisor gives ``a / 0`` (inf or nan).
* An integer division by zero raises, as PyTorch does ("ZeroDivisionError").

Backward: the result is piecewise constant in both operands, so both gradients are zero (PyTorch's
``div_tensor_self_backward`` with a rounding mode); they exist (zeros, not None), as PyTorch's do.
"""
import numpy as np

from ..autograd import Function
from ..dtypes import scalar_type_name
from ..tensor import Tensor

ROUNDING_MODES = (None, "trunc", "floor")


def check_rounding_mode(rounding_mode):
    if rounding_mode not in ROUNDING_MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")


def rounded_quotient(x, y, rounding_mode, low_precision=None):
    """x / y rounded by ``rounding_mode`` ('trunc' or 'floor') for ndarrays of one dtype. ``low_precision``: the
    16-bit dtype of float32 ``x``, ``y`` (``minigrad/low_precision.py``), to which PyTorch rounds the quotient
    before truncating it (so 2.9999 becomes 3 first)."""
    if x.dtype.kind == "b":
        raise NotImplementedError(f'"div_{rounding_mode}_cpu" not implemented for \'Bool\'')
    if x.dtype.kind in "iu":
        if np.any(y == 0):
            raise RuntimeError("ZeroDivisionError")
        floor = np.floor_divide(x, y)
        if rounding_mode == "floor":
            return floor
        inexact = np.remainder(x, y) != 0
        return floor + (inexact & ((x < 0) != (y < 0))).astype(x.dtype)     # toward zero: one up when negative
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if rounding_mode == "floor":
            return np.floor_divide(x, y)
        quotient = x / y
        return np.trunc(quotient if low_precision is None else quotient.astype(low_precision).astype(x.dtype))


class RoundedDiv(Function):
    """trunc(a / b) or floor(a / b). Backward: zero for both (the result is piecewise constant)."""

    watched_inputs = (0, 1)  # PyTorch's backward saves both operands

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        from .elementwise import promoted
        x, y = promoted(a, b)
        return rounded_quotient(x, y, rounding_mode, ctx.low_precision)

    @staticmethod
    def backward(ctx, dout):
        zeros = np.zeros_like(dout._data)
        return (zeros if ctx.needs_input_grad[0] else None), (zeros if ctx.needs_input_grad[1] else None), None

    @staticmethod
    def graph_backward(ctx, dout):
        zeros = Tensor(np.zeros_like(dout._data))
        return (zeros if ctx.needs_input_grad[0] else None), (zeros if ctx.needs_input_grad[1] else None), None


__all__ = ["RoundedDiv", "check_rounding_mode", "rounded_quotient", "ROUNDING_MODES", "scalar_type_name"]
