"""Bitwise ops on integer and bool tensors (``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``) and gcd/lcm. None has a
gradient. Floating-point operands raise PyTorch's NotImplementedError ("not implemented for 'Float'"); a Python int
takes the tensor's dtype.

Shifts as PyTorch defines them past the width: ``a << b`` is 0 for b < 0 or b >= the bit width; ``a >> b`` for
b < 0 or b >= the width (minus the sign bit) is the sign fill (0 or -1).
"""
import numpy as np

from .._checks import check_tensor, takes_tensors
from ..dtypes import LIMITED_UINTS
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from .pointwise import not_implemented, tensor_pair


def _integer_operands(name, input, other, bools=True):
    """(x, y): the operands' arrays in their promoted integer (or bool) dtype, broadcast-checked."""
    a, b = tensor_pair(name, input, other)
    x, y = ew.promoted(a, b)
    if x.dtype.kind not in ("biu" if bools else "iu"):
        raise not_implemented(f"{name}_cpu", x.dtype)
    ew.check_broadcast(a.shape, b.shape)
    return x, y


def _bitwise(name, ufunc, bools=True, numbers=True):
    def op(input, other):
        if not numbers:
            check_tensor(input, name, "input", 1)
            check_tensor(other, name, "other", 2)
        return Tensor(np.asarray(ufunc(*_integer_operands(name, input, other, bools))))
    op.__name__ = name
    op.__doc__ = f"Elementwise {name} of integer or bool tensors (no gradient)."
    return op


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)
gcd = _bitwise("gcd", np.gcd, bools=False, numbers=False)
lcm = _bitwise("lcm", np.lcm, bools=False, numbers=False)


@takes_tensors("input")
def bitwise_not(input):
    """~input: every bit flipped (logical not for bool tensors)."""
    x = input._data
    if x.dtype.kind not in "biu" or x.dtype in LIMITED_UINTS:
        raise not_implemented("bitwise_not_cpu", x.dtype)
    return Tensor(np.invert(x))


def _shift_width(dtype):
    """Bits a shift may move before PyTorch's saturation: the width, less the sign bit for signed types."""
    return dtype.itemsize * 8 - (dtype.kind == "i")


def bitwise_left_shift(input, other):
    """input << other (0 where other < 0 or other >= the bit width)."""
    x, y = _integer_operands("lshift", input, other, bools=False)
    check_kernel("lshift", x.dtype)
    out_of_range = (y < 0) | (y >= x.dtype.itemsize * 8)
    with np.errstate(all="ignore"):
        shifted = np.left_shift(x, np.where(out_of_range, 0, y).astype(x.dtype))
    return Tensor(np.asarray(np.where(out_of_range, np.zeros((), x.dtype), shifted)))


def bitwise_right_shift(input, other):
    """input >> other (the sign fill where other < 0 or other >= the width)."""
    x, y = _integer_operands("rshift", input, other, bools=False)
    check_kernel("rshift", x.dtype)
    width = _shift_width(x.dtype)
    saturated = (y < 0) | (y >= width)
    with np.errstate(all="ignore"):
        y = np.where(saturated, width if x.dtype.kind == "i" else 0, y).astype(x.dtype)
        shifted = np.right_shift(x, y)
    if x.dtype.kind == "u":
        shifted = np.where(saturated, np.zeros((), x.dtype), shifted)
    return Tensor(np.asarray(shifted))


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
           "gcd", "lcm"]
METHODS = __all__
