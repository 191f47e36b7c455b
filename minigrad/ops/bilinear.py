"""``bilinear``: y_o = x1^T W_o x2 + b_o for every output feature o, on the last dimension of two inputs whose
other dimensions agree. An einsum of differentiable ops: dx1 = sum_o dout_o W_o x2, dx2 = sum_o dout_o W_o^T x1,
dW_o = sum over the batch of dout_o x1 x2^T, db = dout summed over the batch."""
from .._checks import takes_tensors
from .linalg import einsum
from ..autocast_ops import autocast_op


@takes_tensors("input1", "input2", "weight", "bias")
@autocast_op("inputs")
def bilinear(input1, input2, weight, bias=None):
    """x1 (..., in1), x2 (..., in2), weight (out, in1, in2), bias (out,) -> (..., out)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out, in1, in2), got {weight.ndim}-D")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0] if bias.ndim else 1}"
                           f" but expected {weight.shape[0]}")
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    if len({t.dtype for _, t in tensors}) > 1:
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{name}: {t.dtype}" for name, t in tensors))
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


__all__ = ["bilinear"]
