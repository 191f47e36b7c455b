"""Reducing scatters: ``scatter_reduce`` (sum, prod, mean, amax, amin; ``include_self``), ``index_reduce``
(the same with one index per slice), and the deprecated ``scatter(reduce='add'|'multiply')``.

Each element ``src[i]`` of ``src`` (``index``'s shape) is reduced into ``out[p(i)]``, where ``p(i)`` is ``i`` with
its ``dim`` coordinate replaced by ``index[i]``. A position no element reaches keeps ``self``'s value; a reached
one is the reduction of its elements, and of ``self``'s value there when ``include_self``.

Gradients, with ``n(p)`` the number of values reduced into ``p`` and ``out`` the result (PyTorch's conventions):

    sum:   dself = g                       dsrc[i] = g[p(i)]
    mean:  dself = g / n                   dsrc[i] = g[p(i)] / n(p(i))
    prod:  dself = g * out / self          dsrc[i] = g[p(i)] * out[p(i)] / src[i]
           (zeros handled exactly: the product of the *other* factors, computed again with the zero replaced
           by 1; two or more zeros reduced together give a zero gradient to each of them)
    amax, amin: the gradient is shared evenly by the values equal to the result (self's and src's):
           dself = [self = out] g / m       dsrc[i] = [src[i] = out[p(i)]] g[p(i)] / m(p(i))
           with m(p) the number of those values.

Without ``include_self``, ``self`` gets no gradient at the reached positions. The formulas are written once,
on Tensors (``_grads``): ``backward`` runs them on constants, ``graph_backward`` on the graph's tensors, so the
gradient can be differentiated again.
"""
import numpy as np

from ..dtypes import scalar_type_name
from ..autograd import Function, no_grad
from ..autograd.function import NoDerivative
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from . import shape as sh
from .dims import normalize_dim
from .inplace import _corner, _scatter_positions, zero_at

_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce, dtype):
    """The value a position starts from when ``self`` is not included: the reduction's neutral element."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low = reduce == "amax"
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    if dtype.kind == "b":
        return not low
    info = np.iinfo(dtype)
    return info.min if low else info.max


def _counts(shape, positions, include_self):
    """How many values are reduced into each position: (self counted if ``include_self``) + the elements."""
    n = np.full(shape, int(include_self), dtype=np.int64)
    np.add.at(n, positions, 1)
    return n


def scatter_reduce_array(a, positions, src, reduce, include_self):
    """The forward on ndarrays: ``a`` with ``src`` reduced in at ``positions`` (``src``'s shape)."""
    out = a.copy()
    if not include_self:
        out[positions] = _identity(reduce, out.dtype)
    _UFUNCS[reduce].at(out, positions, src.astype(out.dtype, copy=False))
    if reduce == "mean":
        n = np.maximum(_counts(a.shape, positions, include_self), 1)
        out = (out / n if out.dtype.kind in "fc" else np.floor_divide(out, n)).astype(a.dtype, copy=False)
    return out


class ScatterReduce(Function):
    """out = self with src reduced in at ``positions`` (module docstring: forward and gradients)."""

    @staticmethod
    def forward(ctx, a, src, positions, reduce, include_self):
        ctx.positions, ctx.reduce, ctx.include_self = positions, reduce, include_self
        out = scatter_reduce_array(a._data, positions, src._data, reduce, include_self)
        ctx.save_for_backward(a._data, src._data, out)
        return out

    @staticmethod
    def backward(ctx, dout):
        a, src, out = ctx.saved_tensors
        return _grads(ctx, dout, Tensor(a), Tensor(src), Tensor(out))

    @staticmethod
    def graph_backward(ctx, dout):
        a, src, out = ctx.saved_tensors
        return _grads(ctx, dout, ctx.input_tensor(0, a), ctx.input_tensor(1, src), ctx.output_tensor(out))


def _grads(ctx, g, x, src, out):
    """(dself, dsrc, None, None, None) of ``ScatterReduce`` for the upstream ``g``; all arguments Tensors."""
    positions, reduce, include_self = ctx.positions, ctx.reduce, ctx.include_self

    def at(t):                                       # t[p(i)] for every element i: src's shape
        return sh.Index.apply(t, positions)

    if reduce == "sum":
        dx, dsrc = g, at(g)
    elif reduce == "mean":
        n = Tensor(np.maximum(_counts(x.shape, positions, include_self), 1).astype(g.dtype))
        dx, dsrc = ew.div(g, n), ew.div(at(g), at(n))
    elif reduce == "prod":
        dx, dsrc = _prod_grads(ctx, g, x, src, out)
    else:
        # the values equal to the result share its gradient evenly
        x_is = Tensor((x._data == out._data).astype(g.dtype))
        src_is = (src._data == out._data[positions]).astype(g.dtype)
        m = x_is._data.copy()
        np.add.at(m, positions, src_is)
        shared = ew.div(g, Tensor(np.maximum(m, 1)))
        dx, dsrc = ew.mul(x_is, shared), ew.mul(Tensor(src_is), at(shared))
    if not include_self:
        dx = zero_at(dx, positions)
    need = ctx.needs_input_grad
    return (dx if need[0] else None), (dsrc if need[1] else None), None, None, None


def _prod_grads(ctx, g, x, src, out):
    """prod's gradients: the product of the other factors at each position (exact when a factor is zero)."""
    positions, include_self = ctx.positions, ctx.include_self
    one = Tensor(np.ones((), g.dtype))
    x_zero = Tensor(x._data == 0)
    x_or_one = ew.where(x_zero, one, x)                                  # self with zeros replaced by 1
    others_of_x = ScatterReduce.apply(x_or_one, src, positions, "prod", include_self)
    dx = ew.div(ew.mul(g, others_of_x), x_or_one)
    src_zero = src._data == 0
    zeros_reduced = np.zeros(x.shape, np.int64)
    np.add.at(zeros_reduced, positions, src_zero)
    lone_zero = Tensor(src_zero & (zeros_reduced[positions] == 1))       # the only zero of its position
    src_or_one = ew.where(lone_zero, one, src)
    others_of_src = ScatterReduce.apply(x, src_or_one, positions, "prod", include_self)
    via_quotient = ew.div(sh.Index.apply(ew.mul(g, out), positions), ew.where(Tensor(src_zero), one, src))
    dsrc = ew.where(lone_zero, sh.Index.apply(ew.mul(g, others_of_src), positions), via_quotient)
    return dx, dsrc


# --------------------------------------------------------------------------- public functions
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _reduce_into(input, positions, src, reduce, include_self):
    """``ScatterReduce`` with a 0-d input viewed as 1-D (``positions`` then index that 1-D view)."""
    if input.ndim == 0:
        return sh.reshape(ScatterReduce.apply(sh.reshape(input, 1), src, positions, reduce, include_self), ())
    return ScatterReduce.apply(input, src, positions, reduce, include_self)


def _check_like_scatter(name, input, dim, index, src):
    """PyTorch's checks of a scatter: index int64 with self's number of dims, no larger than src, nor than self
    outside ``dim``, in range; src of self's dtype. Returns (dim, index array, the used part of src)."""
    if not isinstance(index, Tensor) or index.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")   # PyTorch names scatter for all
    if not isinstance(src, Tensor):
        raise TypeError(f"{name}(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, max(input.ndim, 1))
    if max(index.ndim, 1) != max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if max(index.ndim, 1) != max(src.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    x_shape, i_shape, s_shape = (t.shape or (1,) for t in (input, index, src))
    for i, n in enumerate(i_shape):
        if (i != d and n > x_shape[i]) or n > s_shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} to be "
                               f"smaller than self {list(input.shape)} apart from dimension {d} and to be smaller "
                               f"size than src {list(src.shape)}")
    idx = index._data.reshape(i_shape)
    if idx.size and (idx.min() < 0 or idx.max() >= x_shape[d]):
        bad = idx.max() if idx.max() >= x_shape[d] else idx.min()
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {d} with size {x_shape[d]}")
    used = sh.reshape(src, s_shape)
    if s_shape != i_shape:
        used = sh.index(used, _corner(i_shape))                          # the part of src that index uses
    return d, idx, used


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with each ``src[i]`` reduced (``reduce``: sum, prod, mean, amax, amin) into the position ``i``
    with its ``dim`` coordinate replaced by ``index[i]``; ``include_self`` reduces ``input``'s value in too."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce in ("amax", "amin") and input.dtype.kind == "c":        # complex numbers have no order in PyTorch
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    d, idx, used = _check_like_scatter("scatter_reduce", input, dim, index, src)
    check_kernel("scatter", input)
    return _reduce_into(input, _scatter_positions(idx, d), used, reduce, include_self)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with slice ``j`` of ``source`` along ``dim`` reduced (prod, mean, amax, amin) into slice
    ``index[j]``: ``scatter_reduce`` with ``index[j]`` repeated across slice ``j``."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if isinstance(index, Tensor) and index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(input.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if input.dtype.kind == "c":                  # (PyTorch's kernel is real only)
        raise NotImplementedError(f"\"index_func_\" not implemented for '{scalar_type_name(input.dtype)}'")
    d = normalize_dim(dim, max(input.ndim, 1))
    x_shape, s_shape = input.shape or (1,), source.shape or (1,)
    idx = index._data.reshape(-1).astype(np.int64)
    if len(s_shape) != len(x_shape) or s_shape[:d] + s_shape[d + 1:] != x_shape[:d] + x_shape[d + 1:] \
            or s_shape[d] != idx.size:
        raise RuntimeError(f"index_reduce_(): Source/destination tensor must have same slice shapes. Destination "
                           f"slice shape: {list(input.shape)} at dimension {d} and source slice shape: "
                           f"{list(source.shape)} at dimension {d}.")
    if idx.size and (idx.min() < -x_shape[d] or idx.max() >= x_shape[d]):
        raise IndexError("index out of range in self")
    along = (idx % x_shape[d]).reshape((-1,) + (1,) * (len(s_shape) - d - 1))   # index[j] at slice j along d
    positions = _scatter_positions(np.broadcast_to(along, s_shape), d)    # (*source.shape) positions in input
    check_kernel("index_reduce", input)
    return _reduce_into(input, positions, sh.reshape(source, s_shape), reduce, include_self)


def scatter_legacy_reduce(input, d, index, src, reduce):
    """``scatter(dim, index, src, reduce=...)``, deprecated in PyTorch: 'add' is scatter_add, 'multiply'
    a product including self (``src`` a Tensor already of the index's part)."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    d, idx, used = _check_like_scatter("scatter", input, d, index, src)
    check_kernel("scatter", input)
    with no_grad():
        out = _reduce_into(input, _scatter_positions(idx, d), used, "sum" if reduce == "add" else "prod", True)
    return NoDerivative.apply(RuntimeError, "derivative for aten::scatter is not implemented", out._data, input, src)


def _in_place(name, outofplace):
    from .index_more import _in_place as make
    return make(name, outofplace)


scatter_reduce_ = _in_place("scatter_reduce_", scatter_reduce)
index_reduce_ = _in_place("index_reduce_", index_reduce)

METHODS = ["scatter_reduce", "scatter_reduce_", "index_reduce", "index_reduce_"]
