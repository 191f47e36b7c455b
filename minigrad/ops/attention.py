"""scaled_dot_product_attention: one fused Function (``Attention``) for the common case, else composed
from differentiable ops (matmul, softmax, masked_fill, dropout) so that autograd derives the backward.

    scores = q @ k^T * scale + bias          q (..., L, E), k (..., S, E), v (..., S, Ev)
    out    = dropout(softmax(scores)) @ v    (..., L, Ev)

The fused Function covers q, k, v of one real float dtype and one batch shape, no dropout, and a mask that
is constant (boolean, causal, or a float mask without gradient) and leaves every query a key: it works
in place on one scores buffer and makes one graph node instead of six.

``bias`` is 0 where a query may attend and -inf where it may not (a boolean ``attn_mask`` with True =
take part, or ``is_causal``), or a float ``attn_mask`` added as is. A query row with no key left to attend
to gets zeros instead of softmax's nan (PyTorch's behaviour), and zero gradient.
"""
import functools
import math

import numpy as np

from .. import kernels
from .._checks import takes_tensors, type_name
from ..autograd import Function
from ..dtypes import compute_dtype, kind_of
from ..overrides import handle_torch_function, has_torch_function
from ..kernels.fused import masked_softmax_, softmax_backward_
from ..tensor import Tensor
from .activation import dropout
from .elementwise import as_tensor_operand, masked_fill
from .dims import normalize_dim
from .linalg import matmul
from .shape import repeat_interleave
from .softmax import Softmax, softmax, softmax_grad
from ..autocast_ops import autocast_op


def _bias(attn_mask, is_causal, L, S, dtype):
    """The additive mask: a Tensor (a float attn_mask keeps its graph) or None for no mask. With both
    ``attn_mask`` and ``is_causal`` the two are combined, as in PyTorch 2.13: a key is kept where the causal
    mask keeps it and ``attn_mask`` allows it (a float mask is added inside the causal triangle)."""
    causal = np.tri(L, S, dtype=bool) if is_causal else None   # (L, S): query i sees keys 0..i (top-left aligned)
    if attn_mask is None:
        return None if causal is None else Tensor(np.where(causal, 0, -np.inf).astype(dtype))
    attn_mask = as_tensor_operand(attn_mask)
    if kind_of(attn_mask.dtype) == "b":
        keep = attn_mask._data if causal is None else attn_mask._data & causal
        return Tensor(np.where(keep, 0, -np.inf).astype(dtype))
    if kind_of(attn_mask.dtype) != "f" and attn_mask.dtype != dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {attn_mask.dtype} and query.dtype: {dtype} instead.")
    return attn_mask if causal is None else masked_fill(attn_mask, Tensor(~causal), -np.inf)


class Attention(Function):
    """out = softmax(q k^T * scale + bias) v for q (..., L, E), k (..., S, E), v (..., S, Ev), bias an
    ndarray broadcasting to (..., L, S) or None. With w the attention weights and g = dout:

        dv = w^T g        dw = g v^T        ds = w * (dw - sum(dw * w, -1))    (softmax's backward)
        dq = ds k * scale                   dk = ds^T q * scale

    Under create_graph the same formulas run on Tensors, with w recomputed as softmax(q k^T * scale + bias)
    of the joined inputs (PyTorch's math path), so that they can be differentiated again.
    """

    @staticmethod
    def forward(ctx, q, k, v, bias, scale):
        ctx.dtype, dtype = q.dtype, compute_dtype(q.dtype)
        q, k, v = (t._data.astype(dtype, copy=False) for t in (q, k, v))
        scores = kernels.matmul(q, np.swapaxes(k, -1, -2))                             # (..., L, S)
        low = ctx.low_precision                      # float16/bfloat16 inputs, here as float32 (low_precision.py)
        out = _flash_low_precision(scores, v, scale, bias, low) if low is not None else None
        w = masked_softmax_(scores, scale, bias)
        ctx.scale, ctx.bias = scale, bias
        ctx.shapes = (q.shape, k.shape, v.shape)    # (for utils.flop_counter: the saved arrays may be freed)
        ctx.save_for_backward(q, k, v, w)
        return kernels.matmul(w, v).astype(ctx.dtype, copy=False) if out is None else out     # (..., L, Ev)

    @staticmethod
    def backward(ctx, dout):
        q, k, v, w = ctx.saved_tensors
        g = dout._data.astype(w.dtype, copy=False)
        dv = kernels.matmul(np.swapaxes(w, -1, -2), g) if ctx.needs_input_grad[2] else None
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
            return None, None, dv, None, None
        ds = softmax_backward_(kernels.matmul(g, np.swapaxes(v, -1, -2)), w, ctx.scale)   # (..., L, S)
        dq = kernels.matmul(ds, k) if ctx.needs_input_grad[0] else None
        dk = kernels.matmul(np.swapaxes(ds, -1, -2), q) if ctx.needs_input_grad[1] else None
        return dq, dk, dv, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        q, k, v, _ = ctx.saved_tensors
        q, k, v = (ctx.input_tensor(i, t) for i, t in enumerate((q, k, v)))          # in the compute dtype
        dout = dout.to(q.dtype)
        scores = matmul(q, k.mT) * ctx.scale                                       # (..., L, S)
        if ctx.bias is not None:
            scores = scores + Tensor(ctx.bias)
        w = Softmax.apply(scores, scores.ndim - 1)
        dv = matmul(w.mT, dout) if ctx.needs_input_grad[2] else None
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
            return None, None, dv, None, None
        ds = softmax_grad(matmul(dout, v.mT), w, lambda t: t.sum(-1, keepdim=True)) * ctx.scale
        dq = matmul(ds, k) if ctx.needs_input_grad[0] else None
        dk = matmul(ds.mT, q) if ctx.needs_input_grad[1] else None
        return dq, dk, dv, None, None


def _flash_low_precision(scores, v, scale, bias, dtype):
    """The output as PyTorch's CPU flash attention computes it for float16/bfloat16 (one block of keys): the
    unnormalized weights exp(s - max) in float32, rounded to ``dtype`` before the product with v, which is
    divided by their float32 row sums afterwards. (Normalizing first, then rounding, differs by up to tens of
    ulps in the output.)"""
    s = scores * np.float32(scale)
    if bias is not None:
        s = s + bias
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return kernels.matmul(e.astype(dtype).astype(np.float32), v) / e.sum(axis=-1, keepdims=True)


def _grouped(query, key, value):
    """key and value with each head (dim -3) repeated to the query's head count, as ``repeat_interleave`` does:
    query head h reads key/value head h // (query heads / key heads). Their gradients add up over the group."""
    for t in (query, key, value):
        normalize_dim(-3, t.ndim)                                     # PyTorch's IndexError below 3 dimensions
    q_heads, k_heads, v_heads = query.shape[-3], key.shape[-3], value.shape[-3]
    if not (q_heads == k_heads == v_heads or (k_heads and v_heads and q_heads % k_heads == q_heads % v_heads == 0)):
        raise RuntimeError(f"Number of heads in key and value must divide the number of heads in query: got "
                           f"query {q_heads}, key {k_heads} and value {v_heads} heads")
    return (t if t.shape[-3] == q_heads else repeat_interleave(t, q_heads // t.shape[-3], -3) for t in (key, value))


def _fusable(query, key, value, bias, dropout_p):
    """Whether ``Attention`` computes this call: see the module docstring."""
    dtype = query.dtype
    if dropout_p > 0 or kind_of(dtype) != "f" or key.dtype != dtype or value.dtype != dtype:
        return False
    if not (query.shape[:-2] == key.shape[:-2] == value.shape[:-2]):
        return False
    if bias is None:
        return True
    scores_shape = query.shape[:-1] + key.shape[-2:-1]               # (..., L, S)
    return (not bias.requires_grad and bias.dtype == dtype and bias.ndim <= len(scores_shape)
            and all(b in (1, s) for b, s in zip(bias.shape[::-1], scores_shape[::-1]))
            and not np.all(bias._data == -np.inf, axis=-1).any())   # every query keeps a key


def softmax_of_kept_rows(scores, dead):
    """softmax(scores, -1), except that the rows ``dead`` marks (a bool ndarray broadcasting to (..., L, 1): every
    score -inf, no key kept) give zeros and zero gradient instead of softmax's nan: each is made a finite row first,
    and its weights are zeroed after. Returns the weights and the scores with those rows made finite."""
    if not dead.any():
        return softmax(scores, -1), scores
    finite = masked_fill(scores, Tensor(dead), 0.0)
    return masked_fill(softmax(finite, -1), Tensor(dead), 0.0), finite


sdpa_backend_available = [True]   # False within nn.attention.sdpa_kernel(...) that allows no CPU backend


def _mask_dispatches(fn):
    """PyTorch's ``__torch_function__`` protocol on ``attn_mask``: a mask object that defines it (``nn.attention.
    bias.CausalBias``) computes the attention itself."""
    @functools.wraps(fn)
    def scaled_dot_product_attention(query, key, value, attn_mask=None, *args, **kwargs):
        if attn_mask is not None and not isinstance(attn_mask, Tensor) and has_torch_function((attn_mask,)):
            return handle_torch_function(scaled_dot_product_attention, (attn_mask,), query, key, value, attn_mask,
                                         *args, **kwargs)
        return fn(query, key, value, attn_mask, *args, **kwargs)
    return scaled_dot_product_attention


@_mask_dispatches
@takes_tensors("query", "key", "value", numbers=("attn_mask",))
@autocast_op("lower")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v with PyTorch's arguments; ``scale`` defaults to 1/sqrt(E).
    ``dropout_p`` applies dropout to the attention weights (always: this function has no training flag).
    ``enable_gqa`` (grouped-query attention): key and value may have fewer heads (dim -3) than query, a
    divisor of its count; each of their heads then serves that many consecutive query heads."""
    if not sdpa_backend_available[0]:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    if not isinstance(enable_gqa, (bool, np.bool_)):
        raise TypeError(f"scaled_dot_product_attention(): argument 'enable_gqa' must be bool, not "
                        f"{type_name(enable_gqa)}")
    if dropout_p < 0:
        raise RuntimeError(f"scaled_dot_product_attention: dropout_p must be in [0, 1], got {dropout_p}")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"scaled_dot_product_attention: query, key and value must have at least 2 dimensions "
                           f"(..., L, E), got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    L, S = query.shape[-2], key.shape[-2]
    if key.shape[-1] != query.shape[-1] or value.shape[-2] != S:
        raise RuntimeError(f"scaled_dot_product_attention: expected query (..., L, E), key (..., S, E) and value "
                           f"(..., S, Ev), got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    if enable_gqa:
        key, value = _grouped(query, key, value)
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if S == 0:  # no keys: every output row is 0 (PyTorch's value for a query that sees no key)
        return matmul(matmul(query * scale, key.mT), value)
    bias = _bias(attn_mask, is_causal, L, S, query.dtype)
    if _fusable(query, key, value, bias, dropout_p):
        return Attention.apply(query, key, value, None if bias is None else bias._data, scale)

    scores = matmul(query * scale, key.mT)                            # (..., L, S)
    if bias is None:
        weights = softmax(scores, -1)
    else:
        blocked = np.all(bias._data == -np.inf, axis=-1, keepdims=True)  # (..., L, 1): no key left
        weights, _ = softmax_of_kept_rows(scores + bias, blocked)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return matmul(weights, value)                                     # (..., L, Ev)
