"""``flex_attention``: scaled dot-product attention with a user's score modification and a block-sparse mask.

    scores = q k^T * scale                                        (B, Hq, L, S)
    post   = where(kept, score_mod(scores, b, h, q_idx, kv_idx), -inf)
    out    = softmax(post, -1) v                                  (B, Hq, L, Ev)   a row with nothing kept: 0
    lse    = logsumexp(post, -1)                                  (B, Hq, L)       a row with nothing kept: -inf

``kept`` is the block mask's (``block_mask.py``): elements of its partial tiles that its mask_mod keeps, and
all elements of its full tiles. With ``enable_gqa`` key and value have Hkv heads, a divisor of Hq, and query head
h reads key/value head h // (Hq / Hkv).

The score_mod is called once on the whole scores tensor with broadcasting index tensors (see ``block_mask.py``:
PyTorch calls it per element under vmap; the values are the same for elementwise code), so a score_mod may use
tensors it captures (``score + bias[h, q_idx - kv_idx]``), and gradients reach them: the whole computation is
composed of differentiable operations, and autograd derives its backward. The working precision is float64 for
float64 queries, float32 otherwise (float16 and bfloat16 included); the output has the query's dtype.

PyTorch 2.13 computes this uncompiled on the CPU (with a warning, and the same math) but refuses its backward and
``max_scores`` there ("not supported on CPU"), as its fused kernels for them exist on GPUs only; minigrad computes
both, as PyTorch does on a GPU.
"""
import math
import warnings
from typing import NamedTuple, Optional, TypedDict

import numpy as np

from ...ops.attention import Attention, _grouped, softmax_of_kept_rows
from ...ops.elementwise import masked_fill, where
from ...ops.linalg import matmul
from ...tensor import Tensor
from ...utils._pytree import GetAttrKey, TreeSpec, tree_flatten, tree_map_only, tree_unflatten  # noqa: F401
from .block_mask import (_LARGE_SPARSE_BLOCK_SIZE, BlockMask, _sliced_mask_mod_error, and_masks, call_mod,
                         create_block_mask, create_mask, empty_block_mask, noop_mask, or_masks)

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

# PyTorch's switch for running score_mod/mask_mod uncompiled (to debug them): minigrad always does
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False


class FlexKernelOptions(TypedDict, total=False):
    """Options of PyTorch's generated kernels (block sizes, warps, stages, BACKEND...): accepted and unused."""
    BACKEND: str
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool


_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")


class AuxRequest(NamedTuple):
    """Which extra outputs flex_attention returns (``return_aux``)."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's extra outputs: each None unless requested."""
    lse: Optional[Tensor] = None
    max_scores: Optional[Tensor] = None


_warned = set()


def _warn_once(key, message, category):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, category, stacklevel=3)


def _check_inputs(query, key, value, block_mask, enable_gqa, kernel_options):
    """PyTorch's checks, in its order, with its exception types and messages."""
    for t in (query, key, value):
        if not isinstance(t, Tensor):
            raise TypeError(f"flex_attention(): query, key and value must be Tensors, not {type(t).__name__}")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.ndim}, key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got "
                         f"E={query.shape[-1]} and E={key.shape[-1]}.")
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    Hq, Hkv = query.shape[1], key.shape[1]
    if not enable_gqa and Hq != Hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={Hq} and "
                         f"Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and (Hkv == 0 or Hq % Hkv != 0):
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} and "
                         f"Hkv={Hkv}.")
    if query.shape[0] != key.shape[0]:
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but "
                             f"got block_mask=None, Bq={query.shape[0]}, and Bkv={key.shape[0]}.")
        if block_mask.kv_num_blocks.shape[0] != query.shape[0]:
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.shape[0]}, Bkv={key.shape[0]}, "
                             f"B_block_mask={block_mask.kv_num_blocks.shape[0]}.")
    if block_mask is not None and block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if block_mask is not None and tuple(block_mask.BLOCK_SIZE) != (_LARGE_SPARSE_BLOCK_SIZE,) * 2:
        (mask_q, mask_kv), L, S = block_mask.shape[-2:], query.shape[-2], key.shape[-2]
        if L > mask_q or S > mask_kv:
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                             f"kv_len={S}. As the block mask was created for a smaller length than you're using it "
                             "for, you likely need to create a new block mask.")
        if (L, S) != (mask_q, mask_kv):
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                             f"kv_len={S}. As the block mask was created for a larger length than you're using it "
                             "for, you can either 1. create a new block mask with the correct length, or 2. 'adjust' "
                             "the existing block mask to the correct length by calling block_mask._adjust(q_len, "
                             "kv_len). This essentially 'crops' the block mask to the upper left corner, which does "
                             "not work for all mask_mods!")
    options = {} if kernel_options is None else dict(kernel_options)
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError("BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes the "
                           "legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired BACKEND.")
    if "BACKEND" in options and options["BACKEND"] not in _BACKENDS:
        raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of {_BACKENDS}")
    for internal in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if internal in options:
            raise AssertionError(f"{internal} must not be in kernel_options")
    return options


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """Attention of query (B, Hq, L, E) over key (B, Hkv, S, E) and value (B, Hkv, S, Ev): the module docstring's
    formulas. ``score_mod(score, b, h, q_idx, kv_idx)`` changes the scaled scores, ``block_mask`` (from
    ``create_block_mask``) masks them, ``scale`` defaults to 1/sqrt(E). Returns the output (B, Hq, L, Ev), with
    ``return_aux=AuxRequest(lse=True, max_scores=True)`` also an ``AuxOutput`` of (B, Hq, L) tensors (the
    logsumexp and the maximum of each row of ``post``); ``return_lse=True`` (deprecated) returns (out, lse)."""
    options = _check_inputs(query, key, value, block_mask, enable_gqa, kernel_options)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("return_lse", "return_lse is deprecated and will be removed in v2.10. Please use "
                   "return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    if options.get("BACKEND") == "FLASH" and want_max:
        raise NotImplementedError("Returning max scores is not supported with BACKEND='FLASH'. Use "
                                  "return_aux=AuxRequest(lse=True) or omit max_scores.")
    block_mask = empty_block_mask() if block_mask is None else block_mask
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale

    B, Hq, L = query.shape[:3]
    S = key.shape[2]
    if key.shape[0] != B:                                              # one key/value batch shared by all queries
        if key.shape[0] != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={B} and Bkv={key.shape[0]}")
        key, value = key.expand((B, *key.shape[1:])), value.expand((B, *value.shape[1:]))
    key, value = _grouped(query, key, value)                           # (B, Hq, S, E), (B, Hq, S, Ev)
    shape = (B, Hq, L, S)
    kept = None                                                        # None: everything kept
    if tuple(block_mask.BLOCK_SIZE) != (_LARGE_SPARSE_BLOCK_SIZE,) * 2 or block_mask.mask_mod is not noop_mask:
        kept = block_mask.allowed(shape)                  # bool, broadcasting to (B, Hq, L, S): (1, 1, L, S) if causal

    if score_mod is None and not (want_lse or want_max) and _fusable(query, key, value, kept):
        zero, minus_inf = np.zeros((), query.dtype), np.array(-np.inf, query.dtype)
        bias = None if kept is None else np.where(kept, zero, minus_inf)
        return _finish(Attention.apply(query, key, value, bias, scale), None, None, return_lse, return_aux)

    work = np.float64 if query.dtype == np.float64 else np.float32    # PyTorch's working precision
    scores = matmul(query.to(work), key.to(work).mT) * scale           # (B, Hq, L, S)
    if score_mod is not None:
        scores = call_mod(score_mod, (scores,), shape, "score_mod")
    post = scores if kept is None else where(Tensor(kept), scores, Tensor(np.array(-np.inf, work)))
    dead = np.all(post.detach().numpy() == -np.inf, axis=-1, keepdims=True)    # (B, Hq, L, 1): nothing kept
    weights, finite = softmax_of_kept_rows(post, dead)
    out = matmul(weights.to(query.dtype), value.to(query.dtype))      # (B, Hq, L, Ev)
    lse = max_scores = None
    if want_lse:
        lse = finite.logsumexp(-1)
        lse = masked_fill(lse, Tensor(dead[..., 0]), -np.inf) if dead.any() else lse
    if want_max:
        max_scores = post.max(-1).values
    return _finish(out, lse, max_scores, return_lse, return_aux)


def _fusable(query, key, value, kept):
    """Whether the fused attention Function computes this call: float32/float64 inputs of one dtype, and a
    mask that leaves every query a key."""
    dtype = query.dtype
    return (dtype in (np.float32, np.float64) and key.dtype == dtype and value.dtype == dtype
            and (kept is None or kept.any(axis=-1).all()))


def _finish(out, lse, max_scores, return_lse, return_aux):
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    return (out, lse) if return_lse else out
