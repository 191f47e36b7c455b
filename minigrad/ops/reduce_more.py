"""Reductions beside ``reduce.py``: prod, nansum, nanmean, var_mean, std_mean, count_nonzero, hash_tensor, cov,
corrcoef, renorm, dist.

``prod`` has its own backward (``Prod``); the others are compositions of differentiable ops, so their
gradients are those of their parts (``renorm``'s, for one, is PyTorch's ``renorm_backward``: the scale
maxnorm / (norm + 1e-7) is differentiated through the norm).
"""
import warnings

import numpy as np

from ..dtypes import LIMITED, kind_of, scalar_type_name
from .._checks import refuses_complex, takes_tensors
from ..autograd import Function
from ..autograd.function import pytorch_saves
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from . import elementwise as ew
from .dims import normalize_dim, normalize_dims
from .layout import row_major
from .linalg import matmul
from .reduce import CumProd, _reduced, mean, std, sum as reduce_sum, var, vector_norm
from .shape import cat, flip, narrow
from ..autocast_ops import autocast_op


# --------------------------------------------------------------------------- prod
def _exclusive_cumprod(x, axis):
    """prod_{j < k} x_j along ``axis`` (1 at k = 0), for an ndarray or a Tensor."""
    n = x.shape[axis]
    if isinstance(x, Tensor):
        shifted = cat([Tensor(np.ones_like(np.take(x._data, [0], axis))), narrow(x, axis, 0, n - 1)], axis)
        return CumProd.apply(shifted, axis)
    shifted = np.concatenate([np.ones_like(np.take(x, [0], axis)), np.take(x, np.arange(n - 1), axis)], axis)
    return np.cumprod(shifted, axis=axis)


def _flip(x, axis):
    return flip(x, (axis,)) if isinstance(x, Tensor) else np.flip(x, axis)


def products_of_others(x, axis):
    """prod_{j != k} x_j along ``axis``: the exclusive prefix product times the exclusive suffix product (no
    division, so exact where x has zeros). ndarrays or Tensors."""
    return _exclusive_cumprod(x, axis) * _flip(_exclusive_cumprod(_flip(x, axis), axis), axis)


class Prod(Function):
    """out = prod_j x_j along ``axis``; dx_k = dout * conj(prod_{j != k} x_j) (conj: for complex x).

    As PyTorch: dout * out / x_k when the input holds no zero at all (inf / inf gives NaN, as there), the
    products of the others otherwise (``products_of_others``: a single zero of a slice gets the product of the
    rest, every other element of that slice 0)."""

    @staticmethod
    def forward(ctx, a, axis, keepdim):
        x = a._data
        ctx.axis, ctx.keepdim = axis, keepdim
        if axis is None:           # a 0-d x: the element itself, and its gradient dout (PyTorch's reads no input then,
            out = x.copy()         # but saves x and the result as for any prod: a write into either is refused)
            ctx.save_for_backward(x, out)
            return out
        out = row_major(np.asarray(np.multiply.reduce(x, axis=axis, keepdims=True, dtype=x.dtype)))   # (as PyTorch's)
        ctx.save_for_backward(x, out)
        return _reduced(out, (axis,), keepdim)

    @staticmethod
    def _grad(x, out, g, axis, zeros):
        if x.shape[axis] == 0:
            return g * 0 if isinstance(g, Tensor) else np.zeros(x.shape, g.dtype)
        if not zeros:
            return g * out / x
        if x.shape[axis] == 1:          # the product of no others is 1: dout itself (PyTorch's: no graph to x)
            return g
        return g * products_of_others(x, axis)

    @staticmethod
    def backward(ctx, dout):
        if ctx.axis is None:
            ctx.saved_tensors                      # (refuses x or the result written since the forward)
            return dout._data, None, None
        x, out = ctx.saved_tensors
        g = dout._data.reshape(out.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = Prod._grad(ew.conj_if_complex(x), ew.conj_if_complex(out), g, ctx.axis, bool((x == 0).any()))
        return np.broadcast_to(grad, x.shape), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        if ctx.axis is None:
            ctx.saved_tensors
            return dout, None, None
        x, out = ctx.saved_tensors
        g = dout.reshape(out.shape)
        out_t = ctx.output_tensor(_reduced(out, (ctx.axis,), ctx.keepdim)).reshape(out.shape)
        grad = Prod._grad(ctx.input_tensor(0, x).conj(), out_t.conj(), g, ctx.axis, bool((x == 0).any()))
        if x.shape[ctx.axis] == 0:      # empty slices: zeros that depend on the input, as PyTorch's (derivative 0)
            grad = ew.depending_on_input(ctx, 0, grad)
        return grad.expand(x.shape), None, None


@takes_tensors("input")
@autocast_op("float32")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements (0-d), or along ``dim``; integers and bools multiply as int64."""
    if dtype is not None:
        input = input.to(dtype)
    elif kind_of(input.dtype) in "biu":
        input = input.to(np.int64)
    if input.ndim == 0:
        normalize_dim(0 if dim is None else dim, 0)
        return Prod.apply(input, None, keepdim)
    if dim is None:
        return Prod.apply(input.reshape(-1), 0, False).reshape((1,) * input.ndim if keepdim else ())
    return Prod.apply(input, normalize_dim(dim, input.ndim), keepdim)


# --------------------------------------------------------------------------- NaN-skipping sums and means
def _without_nans(input):
    """``input`` with NaNs replaced by 0 (their gradient 0), and the mask of the elements kept."""
    if kind_of(input.dtype) not in "fc":
        return input, None
    kept = ~np.isnan(input._data)
    return ew.where(Tensor(kept), input, Tensor(np.zeros((), input.dtype))), kept


@takes_tensors("input")
@pytorch_saves("input")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` treating NaN as 0."""
    if kind_of(input.dtype) == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    _check_nansum_dtype(input, dtype)
    return reduce_sum(_without_nans(input)[0], dim, keepdim, dtype=dtype)


def _check_nansum_dtype(input, dtype):
    """PyTorch's nansum of floats has no complex kernel, for a complex ``dtype=`` either (integers are summed)."""
    if dtype is not None and kind_of(dtype) == "c" and kind_of(input.dtype) == "f":
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{ew._type_name(dtype)}'")


@takes_tensors("input")
@pytorch_saves("input")
@refuses_complex('nansum on CPU does not support complex inputs', RuntimeError)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``mean`` of the non-NaN elements (NaN where a slice has none)."""
    if kind_of(input.dtype) not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{ew._type_name(input.dtype)}")
    if dtype is not None and kind_of(dtype) not in "fc":
        raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must be either a floating "
                           f"point or complex dtype. Got: {ew._type_name(dtype)}")
    _check_nansum_dtype(input, dtype)
    values, kept = _without_nans(input)
    count = row_major(np.asarray(kept.sum(axis=normalize_dims(dim, input.ndim), keepdims=keepdim)))
    total = reduce_sum(values, dim, keepdim, dtype=dtype)
    return ew.div(total, Tensor(count.astype(total.dtype)))            # (in ``dtype`` when given)


# --------------------------------------------------------------------------- statistics
def _legacy_unbiased(dim, unbiased):
    """``var_mean(x, True)``: PyTorch's legacy overload whose second argument is ``unbiased``."""
    return (None, dim) if isinstance(dim, bool) else (dim, unbiased)


@takes_tensors("input")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over ``dim``, with ``var``'s arguments."""
    check_kernel("var_mean", input)
    dim, unbiased = _legacy_unbiased(dim, unbiased)
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


@takes_tensors("input")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over ``dim``, with ``std``'s arguments."""
    check_kernel("var_mean", input)
    dim, unbiased = _legacy_unbiased(dim, unbiased)
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


@takes_tensors("input")
def count_nonzero(input, dim=None):
    """How many elements over ``dim`` (all by default) are not zero (int64)."""
    check_kernel("nonzero", input)
    axes = normalize_dims(dim, input.ndim)
    return Tensor(row_major(np.asarray(np.count_nonzero(input._data, axis=axes), dtype=np.int64)))


# --------------------------------------------------------------------------- hash_tensor
@takes_tensors("input")
def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """A uint64 hash of the elements over ``dim`` (all by default; no gradient), PyTorch's mode 0: each element
    widened to float64 (a float) or int64 (an integer or bool), its 64 bits read as a uint64 and xor-ed together.
    A reduced dim must not be empty (xor has no value to start from that PyTorch accepts)."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    x = input._data
    if x.dtype in LIMITED or kind_of(x.dtype) == "c":       # uint16/32/64, float8, complex: PyTorch has no kernel
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{scalar_type_name(x.dtype)}'")
    every = dim is None or isinstance(dim, (tuple, list)) and len(dim) == 0
    axes = normalize_dims(dim, input.ndim)
    if every and x.size == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    for axis in axes:
        if x.shape[axis] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {axis} to have non-zero size.")
    if x.dtype == np.float16:        # through float32, as PyTorch: a signaling NaN comes out quiet, its payload kept
        x = x.astype(np.float32)
    with np.errstate(invalid="ignore"):                  # (ml_dtypes warns of a NaN it widens)
        wide = x.astype(np.float64 if kind_of(x.dtype) == "f" else np.int64)     # exact; NaN payloads kept
    hashed = np.bitwise_xor.reduce(wide.view(np.uint64), axis=axes, keepdims=keepdim)
    return Tensor(row_major(np.asarray(hashed, dtype=np.uint64)))


def _check_weights(name, weights, observations, integral):
    if weights is None:
        return
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{weights.ndim} dimensions")
    if integral and kind_of(weights.dtype) not in "iu":
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{ew._type_name(weights.dtype)} dtype")
    if not integral and kind_of(weights.dtype) != "f":
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{ew._type_name(weights.dtype)} dtype")
    if weights.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {weights.numel()} != {observations}")
    if (weights._data < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


@takes_tensors("input", optional=("fweights", "aweights"))
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in ``input``'s rows (observations in its columns), weighted by
    the frequencies ``fweights`` and the importances ``aweights``:

        cov = (x - avg) W (x - avg)^T / (sum w - correction * sum(w a) / sum w),   w = f a, avg = x w / sum w
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    observations = x.shape[1]
    _check_weights("fweights", fweights, observations, True)
    _check_weights("aweights", aweights, observations, False)
    if kind_of(x.dtype) in "biu":
        x = ew._floating(x)
    w = None
    for weights in (fweights, aweights):
        if weights is not None:
            w = weights if w is None else ew.mul(w, weights)
    if w is None:
        avg = mean(x, 1, keepdim=True)
        total = observations
        norm = observations - correction
    else:
        total = reduce_sum(w)
        avg = ew.div(reduce_sum(ew.mul(x, w), 1, keepdim=True), total)
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = ew.sub(total, correction)
        else:
            norm = ew.sub(total, ew.div(ew.mul(reduce_sum(ew.mul(w, aweights)), correction), total))
    norm_value = float(norm._data) if isinstance(norm, Tensor) else norm
    if norm_value <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", RuntimeWarning, stacklevel=2)
        norm = 0
    centered = ew.sub(x, avg)                                                  # (variables, observations)
    weighted = centered if w is None else ew.mul(centered, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = ew.div(matmul(centered, weighted.conj().transpose(0, 1)), norm)
    return c.squeeze()


@takes_tensors("input")
def corrcoef(input):
    """Pearson's correlation coefficients of the variables in ``input``'s rows: cov / (std_i std_j), clipped
    to [-1, 1] for real inputs."""
    c = cov(input)
    if c.ndim == 0:
        return ew.div(c, c)
    std_dev = ew.sqrt(c.diagonal() if kind_of(c.dtype) != "c" else c.diagonal().real)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = ew.div(ew.div(c, std_dev.unsqueeze(1)), std_dev.unsqueeze(0))
    return ew.clamp(c, -1, 1) if kind_of(c.dtype) != "c" else c


@takes_tensors("input")
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm`` (PyTorch's
    scale: maxnorm / (norm + 1e-7))."""
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if not p > 0:                                           # (NaN too)
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    d = normalize_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norm = vector_norm(input, p, others, keepdim=True)
    scale = ew.where(ew.gt(norm, maxnorm), ew.div(maxnorm, ew.add(norm, 1e-7)), Tensor(np.ones((), input.dtype)))
    return ew.mul(input, scale)


@takes_tensors("input", "other")
@pytorch_saves("input", "other")
def dist(input, other, p=2):
    """The ``p``-norm of input - other (broadcast), a 0-d tensor."""
    return vector_norm(ew.sub(input, other), p)


__all__ = ["prod", "nansum", "nanmean", "var_mean", "std_mean", "count_nonzero", "cov", "corrcoef", "renorm", "dist",
           "hash_tensor"]
METHODS = ["prod", "nansum", "nanmean", "count_nonzero", "cov", "corrcoef", "renorm", "dist", "hash_tensor"]
