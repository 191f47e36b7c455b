"""What the elementwise math functions added beside ``elementwise.py`` share (``trig.py``, ``exp_log.py``).

``UnaryMath``: out = f(x) elementwise, with f'(x) written once (``derivative(x, out)``) from operators and
``on_both`` functions, so that one formula serves ``backward`` (ndarrays) and ``graph_backward`` (Tensors in
the graph, for ``create_graph=True``). The engine multiplies by conj(f'(x)) for complex inputs, PyTorch's
convention.
"""
import numpy as np

from ..autograd import Function
from ..tensor import Tensor
from .elementwise import _unary as public_unary, conj_if_complex  # noqa: F401 - re-exported for the op files


def on_both(array_fn, tensor_fn):
    """One function of ndarrays (``array_fn``) and of Tensors (``tensor_fn``, differentiable)."""
    def fn(v):
        return tensor_fn(v) if isinstance(v, Tensor) else array_fn(v)
    return fn


class UnaryMath(Function):
    """out = f(x); dx = dout * conj(f'(x)). Subclasses set ``f`` (NumPy's ufunc) and ``derivative(x, out)``."""

    @staticmethod
    def f(x):
        raise NotImplementedError

    @staticmethod
    def derivative(x, out):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, a):
        with np.errstate(all="ignore"):     # NaN/inf outside the domain, as PyTorch returns them silently
            out = cls.f(a._data)
        ctx.save_for_backward(a._data, out)
        return out

    @classmethod
    def backward(cls, ctx, dout):
        x, out = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return dout._data * conj_if_complex(np.asarray(cls.derivative(x, out)))

    @classmethod
    def graph_backward(cls, ctx, dout):
        x, out = ctx.saved_tensors
        with np.errstate(all="ignore"):
            d = cls.derivative(ctx.input_tensor(0, x), ctx.output_tensor(out))
        return dout * (d.conj() if d.dtype.kind == "c" else d)
