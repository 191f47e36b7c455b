"""numba twins of elementwise backward passes that NumPy does in several passes over memory. Each has a
NumPy reference of the same name and signature in ``minigrad/ops/elementwise.py``, which runs on the
``"numpy"`` backend and which the tests hold these to, bit for bit.

* ``relu_backward(out, dout)``: dx = dout where out > 0 or out is NaN, else 0, in one pass (NumPy: a
  comparison, its negation and a product with the boolean mask, three passes and two temporary masks;
  0.74 -> 0.43 ms at 32x32x32x32 float32 on 1 thread of the 2-core Intel Xeon).
"""
import numpy as np
from numba import prange

from . import buffers
from .numba_kernels import _kernel, _run


@_kernel
def _relu_backward(out, dout, dx):
    for i in prange(out.size):                         # out, dout, dx flat (L,)
        dx[i] = 0 if out[i] <= 0 else dout[i]          # a NaN output passes its gradient, as in PyTorch


def relu_backward(out, dout):
    """dx = dout where relu's output is positive or NaN, 0 elsewhere: dout's shape and dtype."""
    dx = buffers.empty(dout.shape, dout.dtype)
    _run(_relu_backward, out.size, np.ascontiguousarray(out).reshape(-1), np.ascontiguousarray(dout).reshape(-1),
         dx.reshape(-1))
    return dx
