"""What every norm shares: float64 accumulation, the centered backward formula, and ``normalize``.

All five layers normalize x over a set of axes A (docs/derivations/README.md's notation)::

    centered:   xhat = (x - mean_A(x)) * rstd,  rstd = 1 / sqrt(mean_A((x - mean_A(x))^2) + eps)
    uncentered: xhat = x * rstd,                rstd = 1 / sqrt(mean_A(x^2) + eps)        (RMSNorm)

and the centered ones (LayerNorm, BatchNorm in training, InstanceNorm, GroupNorm) share one
backward, written once here as ``centered_dx``::

    dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat)),   gw = dy * weight

and one double backward (create_graph=True), the gradients of <G, dx> for an upstream gradient G of
dx, derived in ``centered_dx_grads`` and applied to (dy, x, weight) by ``centered_second_order``: on
ndarrays in each norm's fused backward Function, on Tensors (a graph) for the third derivative on.

Accuracy of the NumPy references: sums and means accumulate in float64 and are rounded once to
the data's dtype. Centering uses the float64 mean split into hi + lo parts of the data's dtype:
for x near the mean, ``x - hi`` is exact (Sterbenz), so ``(x - hi) - lo`` is x - mean to the
data's rounding even when |mean| >> std, where subtracting the mean rounded to float32 would be
off by up to ulp(mean)/2 (5e-4 at a mean of 1e4). Variances are two-pass, mean((x - mean)^2),
never E[x^2] - E[x]^2, which loses every digit when |mean| >> std.
"""
import math

import numpy as np

from ...dtypes import LOW_PRECISION, bfloat16, cast_array, float32
from ...kernels import buffers


def contiguous_as(a, dtype):
    """``a`` as a C-contiguous array of ``dtype`` (itself if it already is one). A 16-bit array is widened into
    reused memory (``kernels/buffers.py``): into a fresh array, the page faults cost 5x the copy itself (8M
    bfloat16 elements to float32: 7.5 ms fresh, 1.5 ms reused, AMD EPYC). Widening is exact."""
    if a.dtype == dtype or a.dtype not in LOW_PRECISION:
        return np.ascontiguousarray(a, dtype=dtype)
    out = buffers.empty(a.shape, dtype)
    np.copyto(out, a)
    return out


def sum64(a, axis, keepdims=False):
    """a.sum(axis) accumulated in float64, returned in a's dtype."""
    return a.sum(axis=axis, dtype=np.float64, keepdims=keepdims).astype(a.dtype, copy=False)


def mean64(a, axis, keepdims=False):
    """a.mean(axis) accumulated in float64, returned in a's dtype."""
    return a.mean(axis=axis, dtype=np.float64, keepdims=keepdims).astype(a.dtype, copy=False)


def square_mean64(a, subscripts):
    """mean(a * a) over the axes the einsum reduction ``subscripts`` (such as ``"rd->r"``) removes, in float64:
    the squares are formed in float64 too, so the result is finite for every finite a (float32 squares
    overflow from |a| ~ 1.8e19 on), as the numba kernels compute it."""
    inner, kept = subscripts.split("->")
    count = math.prod(n for letter, n in zip(inner, a.shape) if letter not in kept)
    with np.errstate(invalid="ignore", divide="ignore"):   # no elements: NaN, as the mean of nothing
        return np.einsum(f"{inner},{inner}->{kept}", a, a, dtype=np.float64) / count


def centering_overflows(rstd, count, dtype):
    """Whether x - mean may overflow ``dtype`` in a row (or channel) of ``count`` values normalized with
    ``rstd``: |x - mean| <= sqrt(count * var) <= sqrt(count) / rstd, so only a row whose rstd is below
    sqrt(count) / max can (values of both signs near float32's max: 3e38 - (-3e38) is inf, and so is a
    float32 variance of them, making rstd 0). Normal data has rstd near 1/std, far above; one comparison
    per row. Such a norm is computed again in float64, where its exact (finite) answer is. Only float32 is
    checked: float16 is computed in float32, and float64 has no wider type."""
    if dtype != np.float32:
        return False
    return bool((rstd <= 2 * math.sqrt(count) / float(np.finfo(np.float32).max)).any())


def center(x, mean):
    """x - mean with ``mean`` in float64 (broadcastable against x), computed in x's dtype as (x - hi) - lo."""
    hi = mean.astype(x.dtype)
    if x.dtype == np.float64:
        return x - hi
    return (x - hi) - (mean - hi).astype(x.dtype)


def exact_mean(x, saved_mean, axis):
    """The float64 mean of x over ``axis`` (keepdims) recovered from the mean a forward saved rounded to x's
    dtype: saved + mean(x - saved). One pass over x, and the backward centers exactly as the forward did."""
    return saved_mean.astype(np.float64) + (x - saved_mean).mean(axis=axis, dtype=np.float64, keepdims=True)


def centered_dx(gw, xhat, rstd, axes, means=None):
    """dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat)), A = ``axes``: every centered norm's backward.

    gw, xhat: rows (R, D) with A = 1 (LayerNorm; GroupNorm as rows (N*G, C/G*S)), or (N, C, S) with
    A = (0, 2) (BatchNorm). rstd and the two means hold one value per row or channel, (R,) or (C,), and
    ``[:, None]`` broadcasts them back. The two means are the projections of gw onto what normalization
    removes: shifts (the constant vector) and scalings (xhat itself). gw must be a fresh array: dx is
    computed in place in its memory. ``means``: the two means given, as (mean_gw, mean_gw_xhat), instead of
    taken over gw (SyncBatchNorm: over every rank's shard, one all-reduce)."""
    mean_gw, mean_gw_xhat = means if means is not None else (mean64(gw, axes), mean64(gw * xhat, axes))   # (R,)/(C,)
    gw -= mean_gw[:, None]
    gw -= xhat * mean_gw_xhat[:, None]
    gw *= rstd[:, None]
    return gw


def centered_dx_grads(G, gw, xhat, rstd, mean):
    """The double backward of ``centered_dx``: given G, the upstream gradient of dx, the gradients of
    <G, dx> with respect to gw and to x (through xhat and rstd, both statistics of x over A)::

        a = mean(G * xhat),  m = mean(gw * xhat),  Gc = G - mean(G),  gwc = gw - mean(gw)
        d gw = rstd * (Gc - xhat * a)
        d x  = -rstd^2 * (m * Gc + a * gwc + xhat * (mean(Gc * gw) - 3 * a * m))

    ``mean`` is the mean over A keeping its axes, so that it and ``rstd`` broadcast back against G, gw
    and xhat (one layout, any shape). Written with arithmetic only, it runs on ndarrays (``mean`` = a
    float64-accumulated mean: the hand-derived double backward) and on Tensors (``Tensor.mean``, with
    xhat and rstd Tensors of x: a graph for the third derivative and beyond).

    Derivation (n = |A|). dx = rstd * P(gw) with P(g) = g - mean(g) - xhat * mean(g * xhat), and
    <G, P(g)> = <P(G), g>: P is symmetric, so d gw = rstd * P(G) = centered_dx(G). For x, hold rstd
    fixed first: d<G, dx>/d xhat = -rstd * (m * G + a * gw) =: h, and d<G, dx>/d rstd = <G, P(gw)> =: s.
    xhat and rstd depend on x as in the forward, so x receives the norm's own backward of h,
    rstd * P(h), plus s * d rstd/dx = -s * rstd^2 * xhat / n (d var/dx = 2 xc / n). With
    mean(h) = -rstd * (m * mean(G) + a * mean(gw)), mean(h * xhat) = -2 * rstd * a * m and
    s / n = mean(Gc * gw) - a * m, the two sum to the line above (exact for any eps).
    """
    a = mean(G * xhat)                       # G's component along xhat
    m = mean(gw * xhat)                      # gw's component along xhat
    Gc = G - mean(G)
    d_gw = rstd * (Gc - xhat * a)
    d_x = -(rstd * rstd) * (m * Gc + a * (gw - mean(gw)) + xhat * (mean(Gc * gw) - 3 * a * m))
    return d_gw, d_x


def centered_second_order(G, dy, weight, xhat, rstd, axes, param_axes, view=None):
    """The gradients of <G, dx> with respect to (dy, x, weight), dx = centered_dx(dy * weight, ...):
    every centered norm's double backward, on ndarrays or on Tensors alike.

    G, dy: one layout ((R, D) rows, or (N, C, S)); weight (or None) broadcasts against it; ``view``
    (identity if None) reshapes that layout to the one whose ``axes`` are A (GroupNorm: (N, G, C/G*S)),
    where xhat and rstd (keeping A's axes) are given. ``param_axes``: what dw sums over in the layout.

        gw = dy * w;  (d gw, d x) = centered_dx_grads;  d dy = d gw * w;  d w = sum(d gw * dy)
    """
    if isinstance(G, np.ndarray):
        def mean(a): return mean64(a, axes, keepdims=True)
    else:
        def mean(a): return a.mean(axes, keepdim=True)
    view = view or (lambda a: a)
    gw = dy if weight is None else dy * weight
    d_gw, d_x = centered_dx_grads(view(G), view(gw), xhat, rstd, mean)
    d_gw = d_gw.reshape(G.shape)
    if weight is None:
        return d_gw, d_x, None
    d_w = sum64(d_gw * dy, param_axes) if isinstance(G, np.ndarray) else (d_gw * dy).sum(param_axes)
    return d_gw * weight, d_x, d_w


def second_order_grads(ctx, grads, shapes):
    """A backward Function's (d dout, d x, d w) reshaped to ``shapes``, each None unless asked for."""
    return input_grads(ctx, *(g.reshape(shape) if g is not None and need else None
                              for g, shape, need in zip(grads, shapes, ctx.needs_input_grad)))


def centered_statistics(x, dims, eps):
    """(xhat, rstd) of x over ``dims`` (keeping them) with minigrad ops: both as differentiable Tensors of x."""
    xc = x - x.mean(dims, keepdim=True)
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    return xc * rstd, rstd


def input_grads(ctx, *grads):
    """A norm Function's backward result: ``grads`` for its tensor inputs (input, weight, bias), then None for
    each option passed positionally. The norms pass their options as keywords, so they get no padding; a
    direct ``RMSNormFunction.apply(x, w, b, (4,), 1e-5, 4, False)`` works as well. A float32 gradient array of
    a bfloat16 input is rounded here (``cast_array``, faster than the engine's ``astype`` for large arrays), into
    reused memory as the float32 kernels' dx is (``kernels/buffers.py``)."""
    meta = getattr(ctx, "input_meta", ())
    grads = tuple(cast_array(g, bfloat16, pooled=True) if isinstance(g, np.ndarray) and g.dtype == float32 and i < len(meta)
                  and meta[i] and meta[i][1] == bfloat16 else g for i, g in enumerate(grads))
    return grads + (None,) * (len(ctx.needs_input_grad) - len(grads))


def normalize(x, dims, eps, centered=True):
    """xhat over ``dims`` (a tuple of axes) with ordinary minigrad ops, so autograd differentiates it."""
    xc = x - x.mean(dims, keepdim=True) if centered else x
    var = (xc * xc).mean(dims, keepdim=True)
    return xc * (var + eps).rsqrt()


# --------------------------------------------------------------------------- for formulas written once (arrays or Tensors)
def last_dim_sum(a):
    """sum over the last dim, kept as size 1: float64-accumulated on an ndarray, a minigrad op on a Tensor."""
    return sum64(a, -1, keepdims=True) if isinstance(a, np.ndarray) else a.sum(-1, keepdim=True)


def sum_to_shape(a, shape):
    """``a`` summed down to ``shape`` (a parameter's: its leading broadcast dims and size-1 dims summed away),
    float64-accumulated on an ndarray, ``Tensor.sum_to_size`` on a Tensor (the engine would do the same)."""
    shape = tuple(shape)
    if not isinstance(a, np.ndarray):
        return a.sum_to_size(shape)
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and a.shape[lead + i] != 1)
    return sum64(a, axes).reshape(shape)
