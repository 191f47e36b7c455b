"""What the ops added beside ``elementwise.py`` and ``reduce.py`` share (``trig.py``, ``elementwise_more.py``,
``floats.py``, ``division.py``, ``bitwise.py``, ``order_stats.py``, ``cumulative.py``, ``counting.py``).

``UnaryMath``: out = f(x) elementwise, with f'(x) written once (``derivative(x, out)``) from operators and
``on_both`` functions, so that one formula serves ``backward`` (ndarrays) and ``graph_backward`` (Tensors in
the graph, for ``create_graph=True``); the gradient is dout * conj(f'(x)), PyTorch's convention for complex
inputs. ``BinaryMath``: the same for out = f(x, y), with both partial derivatives. ``tensor_pair``: a binary
op's operands checked and made Tensors; ``not_implemented``: PyTorch's error for a dtype it has no kernel for,
``check_common_kind`` its check on the operands' common dtype.
"""
import numpy as np

from .._checks import check_tensor
from ..autograd import Function
from ..dtypes import kind_of, result_type
from ..tensor import Tensor
from .elementwise import (_apply_broadcasting, _floating, _pair, _type_name, conj_if_complex,
                          promoted, promoted_float)


def not_implemented(kernel, dtype):
    """PyTorch's error for a dtype its kernel ``kernel`` has no implementation for: NotImplementedError
    '"hypot_cpu" not implemented for 'Long''."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(dtype)}'")


def check_common_kind(kernel, a, b, kinds):
    """PyTorch promotes a binary op's operands to their common dtype first and looks for the kernel there:
    ``hypot(bool tensor, float16 tensor)`` computes in float16, ``hypot(int, int)`` has no kernel. ``kinds``: the
    dtype kinds the kernel has ("f" floats, "c" complex, ...)."""
    common = result_type(a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b)
    if kind_of(common) not in kinds:
        raise not_implemented(kernel, common)


def public_unary(fn):
    """The public function of the ``UnaryMath`` ``fn``: integers and bools computed in the default float dtype;
    complex inputs differentiable (the backward takes conj(f'(z)))."""
    def op(input):
        if input.__class__ is not Tensor:
            check_tensor(input, op.__name__, "input", 1)
        return fn.apply(_floating(input))
    op.__name__ = fn.__name__.lower()
    op.__doc__ = f"Elementwise {op.__name__} (differentiable; see ``{fn.__name__}``)."
    return op


def on_both(array_fn, tensor_fn):
    """One function of ndarrays (``array_fn``) and of Tensors (``tensor_fn``, differentiable)."""
    def fn(v):
        return tensor_fn(v) if isinstance(v, Tensor) else array_fn(v)
    return fn


def kept(saves, x, out):
    """(x, out) as a one-input Function keeps them for backward, by its ``saves`` (``UnaryMath.saves``): None for what
    it does not keep."""
    return (x.copy() if "input copy" in saves else x if "input" in saves else None,
            out if "output" in saves else None)


def joined(ctx, x, out):
    """The saved (x, out) as Tensors in the graph, for a ``graph_backward`` (None stays None)."""
    return None if x is None else ctx.input_tensor(0, x), None if out is None else ctx.output_tensor(out)


class UnaryMath(Function):
    """out = f(x); dx = dout * conj(f'(x)). Subclasses set ``f`` (NumPy's ufunc), ``derivative(x, out)`` and
    ``saves``."""

    saves = ("input", "output")
    """What ``derivative`` reads, as PyTorch's formula (derivatives.yaml) does: "input", "output" or both; "input copy"
    for an op PyTorch composes of others, whose saved tensor is an intermediate no write can reach. Only these are
    saved (the other argument of ``derivative`` is None), so a write into the input or the output after the forward
    makes backward refuse exactly when PyTorch's does."""

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
        ctx.save_for_backward(*kept(cls.saves, a._data, out))
        return out

    @classmethod
    def backward(cls, ctx, dout):
        x, out = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return dout._data * conj_if_complex(np.asarray(cls.derivative(x, out)))

    @classmethod
    def graph_backward(cls, ctx, dout):
        with np.errstate(all="ignore"):
            d = cls.derivative(*joined(ctx, *ctx.saved_tensors))
        return dout * (d.conj() if d.dtype.kind == "c" else d)


def _conj(d):
    return (d.conj() if d.dtype.kind == "c" else d) if isinstance(d, Tensor) else conj_if_complex(np.asarray(d))


BINARY_SAVES = ("input", "other", "output")


class BinaryMath(Function):
    """out = f(x, y) on the promoted operands (integers in the default float dtype when ``floating``);
    dx = dout * conj(df/dx), dy = dout * conj(df/dy). Subclasses set ``f`` and ``partials(x, y, out)``, which
    returns (df/dx, df/dy), either None when that input needs no gradient (``need``)."""

    floating = True
    saves = ("input", "other", "output")
    """What ``partials`` reads, as PyTorch's formula does (``UnaryMath.saves``); None is passed for the others."""

    @staticmethod
    def f(x, y):
        raise NotImplementedError

    @staticmethod
    def partials(x, y, out, need):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, a, b):
        x, y = promoted_float(a, b) if cls.floating else promoted(a, b)
        with np.errstate(all="ignore"):
            out = cls.f(x, y)
        ctx.save_for_backward(*[v if name in cls.saves else None for v, name in zip((x, y, out), BINARY_SAVES)])
        return out

    @classmethod
    def backward(cls, ctx, dout):
        x, y, out = ctx.saved_tensors
        with np.errstate(all="ignore"):
            parts = cls.partials(x, y, out, ctx.needs_input_grad)
        return tuple(None if d is None else dout._data * _conj(d) for d in parts)

    @classmethod
    def graph_backward(cls, ctx, dout):
        x, y, out = ctx.saved_tensors
        x, y = [None if v is None else ctx.input_tensor(i, v) for i, v in enumerate((x, y))]
        with np.errstate(all="ignore"):
            parts = cls.partials(x, y, None if out is None else ctx.output_tensor(out), ctx.needs_input_grad)
        return tuple(None if d is None else dout * _conj(d) for d in parts)


def tensor_pair(name, input, other, exact=False):
    """The operands of the binary op ``name`` as two Tensors: Tensors or numbers, not both numbers (a number
    takes PyTorch's dtype next to the tensor; ``exact``: ``as_tensor_operand``'s); TypeError otherwise."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): expected at least one Tensor argument, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    check_tensor(input, name, "input", 1, numbers_ok=True)
    check_tensor(other, name, "other", 2, numbers_ok=True)
    return _pair(input, other, exact)


def binary(fn, name):
    """The public function of the two-input Function ``fn``: Tensor or number operands (not both numbers),
    broadcast together."""
    def op(input, other):
        return _apply_broadcasting(fn, *tensor_pair(name, input, other,
                                                          exact=getattr(fn, "floating", False)))
    op.__name__ = name
    op.__doc__ = f"Elementwise {name} (differentiable; see ``{fn.__name__}``)."
    return op
