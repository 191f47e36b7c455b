"""LayerNorm (Ba, Kiros & Hinton 2016), as ``torch.nn.functional.layer_norm``.

Per row x (the trailing ``normalized_shape`` dims). The formulas are written once, in the docstrings of the
NumPy references ``layer_norm_forward`` and ``layer_norm_backward`` below (dx is ``common.centered_dx``),
which docs/derivations/layernorm.md quotes and derives (``docs/derivations/build.py --check`` keeps the
quotes equal to this file); the other docstrings here cite them rather than repeat them.

This file reads top to bottom: the NumPy reference forward and backward (the specification, with
a numba twin of the same name in minigrad/kernels/numba_kernels.py), the ``LayerNormFunction``
that runs them, the composite twin ``layer_norm_composite`` (minigrad ops, differentiated by
autograd; the tests hold the two to 1e-12 in float64), and the public ``layer_norm`` with its checks.

float16 input is computed in float32 and cast back once at the end; its gradients come back as
float16. As in PyTorch, weight and bias must have the input's dtype (or float32 for float16 input).
"""
import math

import numpy as np

from ..._checks import float_arg, takes_tensors
from ...autograd import Function
from ...autograd.function import watching
from ...dtypes import compute_dtype
from ...kernels import kernel
from ..elementwise import fused_node_grads
from .common import (center, centered_dx, centered_second_order, centered_statistics, centering_overflows, exact_mean,
                     input_grads, normalize, second_order_grads, square_mean64)
from .rows import (affine_rows, as_rows, check_row_norm_args, from_rows, functional_normalized_shape, row_affine,
                   row_dims, row_operands, row_param, row_param_grads, shaped_grads)


# --------------------------------------------------------------------------- NumPy reference, x (R, D)
def layer_norm_forward(x, weight, bias, eps):
    """LayerNorm over each row of x (R, D): mean, biased var (two-pass), rstd = 1/sqrt(var + eps),
    y = (x - mean) * rstd * weight + bias. Returns (y, mean (R,), rstd (R,))."""
    mean = x.mean(axis=1, dtype=np.float64)              # (R,), float64: centering below loses nothing
    xc = center(x, mean[:, None])                        # (R, D)
    var = square_mean64(xc, "rd->r")                     # (R,) float64, biased: finite for any finite x
    with np.errstate(divide="ignore"):                   # eps = 0 on a constant row: rstd = inf, as PyTorch
        rstd = (1 / np.sqrt(var + eps)).astype(x.dtype)
    with np.errstate(invalid="ignore"):
        xc *= rstd[:, None]                              # xhat, in place
    return affine_rows(xc, weight, bias), mean.astype(x.dtype), rstd


def layer_norm_xhat(x, mean, rstd):
    """xhat = (x - mean) * rstd of rows x (R, D) from the saved statistics, centered exactly as the forward did."""
    return center(x, exact_mean(x, mean[:, None], 1)) * rstd[:, None]


def layer_norm_backward(dy, x, mean, rstd, weight, need_dx, need_dw, need_db):
    """dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), dw = sum_rows(dy*xhat), db = sum_rows(dy)."""
    with np.errstate(invalid="ignore"):
        xhat = layer_norm_xhat(x, mean, rstd) if need_dx or need_dw else None     # (R, D)
        dw, db = row_param_grads(dy, xhat, need_dw, need_db)           # (D,) each
        if not need_dx:
            return None, dw, db
        gw = dy * weight if weight is not None else dy.copy()         # (R, D), becomes dx in place
        dx = centered_dx(gw, xhat, rstd, axes=1)                       # (R, D)
    return dx, dw, db


# --------------------------------------------------------------------------- the Function
class LayerNormFunction(Function):
    """LayerNorm over rows x (R, D): ``kernel(layer_norm_forward)`` and ``kernel(layer_norm_backward)`` (their
    docstrings have the formulas, docs/derivations/layernorm.md derives them). Saved: x, mean and rstd (one
    number each per row) and w. Each gradient is computed only if ``ctx.needs_input_grad`` asks for it; the
    kernels allocate every gradient they return, so the engine makes them the leaves' ``.grad`` without a copy.
    """
    saved_as = (("input", 0), ("result1", None), ("result2", None), ("weight", 1))   # PyTorch's names: mean, rstd
    saved_values = {"normalized_shape": "normalized_shape"}

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_shape, eps):
        d = math.prod(normalized_shape)
        x, w, b = row_operands(input, weight, bias, d)                                # (R, D), (D,), (D,)
        y, mean, rstd = kernel(layer_norm_forward)(x, w, b, eps=eps)
        if centering_overflows(rstd, d, x.dtype):          # float32 overflows: statistics and backward in float64
            x, w, b = row_operands(input, weight, bias, d, np.float64)
            y, mean, rstd = kernel(layer_norm_forward)(x, w, b, eps=eps)
        ctx.save_for_backward(input._data, mean, rstd, w)  # a float16 x stays float16 in memory
        ctx.watch(*[None if p is None else p._data for p in (weight, bias)])   # PyTorch saves both as they are
        ctx.normalized_shape, ctx.eps = normalized_shape, eps
        return from_rows(y, input)

    @staticmethod
    def backward(ctx, dout):
        x, mean, rstd, w = ctx.saved_tensors
        d = math.prod(ctx.normalized_shape)
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        dx, dw, db = kernel(layer_norm_backward)(as_rows(dout._data, d, rstd.dtype), as_rows(x, d, rstd.dtype), mean,
                                                 rstd, w, need_dx=need_dx, need_dw=need_dw, need_db=need_db)
        return input_grads(ctx, *shaped_grads(dx, dw, db, x.shape, ctx.normalized_shape))

    @staticmethod
    def graph_backward(ctx, dout):
        """The backward above as a graph (create_graph=True): dx = ``LayerNormBackward`` (the fused first-order
        formula, whose own backward is the hand-derived double backward); dw = g * xhat and db = g with
        xhat = this Function without affine, both summed over the rows by the engine (w's shape)."""
        x, mean, rstd, w = ctx.saved_tensors
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        ns, eps = ctx.normalized_shape, ctx.eps
        x_t = ctx.input_tensor(0, x)
        g = dout.to(rstd.dtype)                            # the compute dtype
        dx = dw = None
        if need_dx:
            w_t = None if w is None else ctx.input_tensor(1, w.reshape(ns))
            dx = LayerNormBackward.apply(dout, x_t, w_t, mean=mean, rstd=rstd, normalized_shape=ns, eps=eps)
        if need_dw:
            dw = g * LayerNormFunction.apply(x_t.to(g.dtype), None, None, normalized_shape=ns, eps=eps)
        return input_grads(ctx, *fused_node_grads(ctx, (dx, dw, g if need_db else None), sources=(0, 1, 2)))


class LayerNormBackward(Function):
    """LayerNorm's dx as a Function of (dout, x, weight): ``LayerNormFunction.graph_backward``'s dx.

    Forward: the first-order kernel, dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = dout * w,
    means over each row. Backward, with G the upstream gradient of dx (common.centered_second_order)::

        a = mean(G * xhat),  m = mean(gw * xhat),  Gc = G - mean(G)
        d gw   = rstd * (Gc - xhat * a)
        d dout = d gw * w          d w = sum over rows of d gw * dout
        d x    = -rstd^2 * (m * Gc + a * (gw - mean(gw)) + xhat * (mean(Gc * gw) - 3 * a * m))

    ``graph_backward`` evaluates the same formulas on Tensors, xhat and rstd recomputed from x with
    minigrad ops, so the third derivative (and beyond) comes from autograd through them.
    """

    @staticmethod
    def forward(ctx, dout, x, weight, mean, rstd, normalized_shape, eps):
        d = math.prod(normalized_shape)
        w = row_param(weight, rstd.dtype)
        dx, _, _ = kernel(layer_norm_backward)(as_rows(dout._data, d, rstd.dtype), as_rows(x._data, d, rstd.dtype),
                                               mean, rstd, w, need_dx=True, need_dw=False, need_db=False)
        ctx.save_for_backward(dout._data, x._data, mean, rstd, w)
        ctx.normalized_shape, ctx.eps = normalized_shape, eps
        return dx.reshape(x.shape).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, G):
        dout, x, mean, rstd, w = ctx.saved_tensors
        d = math.prod(ctx.normalized_shape)
        x_rows = as_rows(x, d, rstd.dtype)                                           # (R, D)
        with np.errstate(invalid="ignore"):
            grads = centered_second_order(as_rows(G._data, d, rstd.dtype), as_rows(dout, d, rstd.dtype), w,
                                          layer_norm_xhat(x_rows, mean, rstd), rstd[:, None], axes=1, param_axes=0)
        return second_order_grads(ctx, grads, (x.shape, x.shape, ctx.normalized_shape))

    @staticmethod
    def graph_backward(ctx, G):
        dout, x, _, rstd, w = ctx.saved_tensors
        ns = ctx.normalized_shape
        d = math.prod(ns)

        def rows(t):                                                                 # (R, D), compute dtype
            return t.to(rstd.dtype).reshape(-1, d)
        xhat, rstd_t = centered_statistics(rows(ctx.input_tensor(1, x)), 1, ctx.eps)   # (R, D), (R, 1)
        w_t = None if w is None else ctx.input_tensor(2, w.reshape(ns)).reshape(d)
        grads = centered_second_order(rows(G), rows(ctx.input_tensor(0, dout)), w_t, xhat, rstd_t, axes=1,
                                      param_axes=0)
        return second_order_grads(ctx, grads, (x.shape, x.shape, ctx.normalized_shape))


# --------------------------------------------------------------------------- the composite twin
def layer_norm_composite(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``layer_norm`` written with minigrad ops and differentiated by autograd: the teaching reference."""
    normalized_shape = _ln_options(input, normalized_shape, weight, bias)
    xhat = normalize(input.to(compute_dtype(input.dtype)), row_dims(normalized_shape), float(eps))
    return row_affine(xhat, weight, bias).to(input.dtype)


# --------------------------------------------------------------------------- the public form and its checks
@takes_tensors("input", "weight", "bias")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """LayerNorm over the trailing ``normalized_shape`` dims (``torch.nn.functional.layer_norm``)."""
    normalized_shape = _ln_options(input, functional_normalized_shape(normalized_shape, "layer_norm"), weight, bias)
    eps = float_arg(eps, "layer_norm", "eps", 5)
    if input.numel() == 0:  # nothing to normalize: the composite gives the empty output and gradients (and its node
        #                     refuses writes into what PyTorch's layer norm saves, as the fused Function's does)
        return watching(layer_norm_composite(input, normalized_shape, weight, bias, eps), input, weight, bias)
    return LayerNormFunction.apply(input, weight, bias, normalized_shape=normalized_shape, eps=float(eps))


def _check_param_dtypes(input, weight, bias):
    """PyTorch's CPU rule: parameters share one dtype, the input's or (float16 input) float32."""
    dtypes = {p.dtype for p in (weight, bias) if p is not None}
    if not dtypes or dtypes == {input.dtype}:                  # the common case, decided without compute_dtype
        return
    allowed = {input.dtype, compute_dtype(input.dtype)}
    if dtypes and (len(dtypes) > 1 or not dtypes <= allowed):
        raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                           f"{' or '.join(sorted(map(str, allowed)))} (layer_norm got input {input.dtype}, weight "
                           f"{None if weight is None else weight.dtype}, bias {None if bias is None else bias.dtype})")


def _ln_options(input, normalized_shape, weight, bias):
    normalized_shape = check_row_norm_args(input, normalized_shape, weight, bias)
    _check_param_dtypes(input, weight, bias)
    return normalized_shape
