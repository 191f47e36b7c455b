"""A differential fuzzer of ``flex_attention`` against PyTorch: random shapes, masks, score modifications and dtypes,
run as the same case in both libraries.

    python -m tests.flex_fuzz --cases 1000 --start 0      # prints the cases that differ

A case (``random_case(seed)``) draws batch, query heads (key/value heads a divisor: grouped-query attention),
query and key lengths (1 to 40), head sizes, sometimes one key/value batch shared by every query batch; a dtype
(float64, float32, bfloat16, float16); a ``scale`` or none; a mask_mod built from primitives (causal, causal
aligned to the bottom right, a sliding window, documents of random lengths, per head, per batch, a prefix, one
that keeps nothing) combined with ``and_masks``, ``or_masks`` and negation, turned into a BlockMask with random
tile sizes (1 to 16 and 128, square or not), for a batch and heads or shared (None), with or without separate full
tiles; and a score_mod built from primitives (a scale, a captured table indexed [h, q_idx, kv_idx], one indexed by
q_idx - kv_idx, ALiBi slopes per head, a tanh soft-cap, -inf above the diagonal, a per-batch offset), zero to two
of them chained.

What is compared: the output and the logsumexp of PyTorch's flex_attention (uncompiled, as it runs on the CPU,
given PyTorch's own block tables and a mask_mod reading them as its compiled kernels do (``_as_kernels_read_it``);
float64: to 1e-9 of the values' scale, float32: 1e-5, float16: 2e-3, bfloat16: 1.6e-2). PyTorch refuses the
backward on the CPU, so in float64 the gradients of a random upstream (through both the output and the finite
logsumexp) with respect to q, k, v and the tables a score_mod captures are compared with PyTorch's autograd through
the same attention written out (scores, score_mod, mask, PyTorch's ``_safe_softmax``, the product with v). If
PyTorch raises, minigrad must raise the same exception type.

``describe(seed)`` prints the case.
"""
import importlib
import traceback
import warnings

import numpy as np

DTYPES = ("float64", "float32", "bfloat16", "float16")
DTYPE_WEIGHTS = (0.55, 0.25, 0.1, 0.1)
TOLERANCE = {"float64": 1e-9, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
MASKS = ("causal", "lower_right", "window", "documents", "per_head", "per_batch", "prefix", "nothing")
SCORES = ("scale", "table", "relative", "alibi", "softcap", "causal_inf", "batch_offset")


def _mask_tree(rng, depth=0):
    """A mask expression: a primitive name, ("not", e), or ("and"/"or", [e, ...])."""
    roll = rng.random()
    if depth < 2 and roll < 0.3:
        return (str(rng.choice(["and", "or"])), [_mask_tree(rng, depth + 1) for _ in range(int(rng.integers(2, 4)))])
    if depth < 2 and roll < 0.38:
        return ("not", _mask_tree(rng, depth + 1))
    return str(rng.choice(MASKS, p=[0.2, 0.12, 0.14, 0.14, 0.12, 0.1, 0.12, 0.06]))


def random_case(seed):
    """The case of ``seed``: plain values, the same in both libraries."""
    rng = np.random.default_rng(seed)
    kv_heads = int(rng.choice([1, 2]))
    heads = kv_heads * int(rng.choice([1, 1, 2, 3]))
    batch = int(rng.choice([1, 2, 3]))
    L, S = int(rng.integers(1, 41)), int(rng.integers(1, 41))
    masked = rng.random() < 0.8
    block = int(rng.choice([1, 2, 4, 8, 16, 128]))
    block = (block, int(rng.choice([1, 4, 8, 128]))) if rng.random() < 0.3 else block
    case = {
        "seed": seed, "dtype": str(rng.choice(DTYPES, p=DTYPE_WEIGHTS)), "batch": batch, "heads": heads,
        "kv_heads": kv_heads, "L": L, "S": S, "E": int(rng.choice([1, 2, 4, 8])), "Ev": int(rng.choice([1, 3, 4])),
        "shared_kv": masked and batch > 1 and rng.random() < 0.15,
        "scale": None if rng.random() < 0.6 else float(rng.uniform(0.05, 2.0)),
        "mask": _mask_tree(rng) if masked else None, "block": block,
        "mask_batch": bool(rng.random() < 0.5), "mask_heads": bool(rng.random() < 0.5),
        "separate": bool(rng.random() < 0.7),
        "scores": [str(s) for s in rng.choice(SCORES, size=int(rng.choice([0, 1, 1, 2])))],
        "window": int(rng.integers(0, 8)), "prefix": int(rng.integers(0, 10)),
        "documents": sorted(int(d) for d in rng.integers(1, 40, size=int(rng.integers(0, 4)))),
        "data_seed": int(rng.integers(2 ** 31)),
    }
    if case["shared_kv"]:
        case["mask_batch"] = True        # a shared key/value batch needs a block mask of the query's batch size
    return case


def describe(seed):
    return "\n".join(f"{k}: {v}" for k, v in random_case(seed).items())


def _flex(lib):
    return importlib.import_module(f"{lib.__name__}.nn.attention.flex_attention")


def _data(case):
    rng = np.random.default_rng(case["data_seed"])
    B, H, Hkv, L, S = case["batch"], case["heads"], case["kv_heads"], case["L"], case["S"]
    Bkv = 1 if case["shared_kv"] else B
    arrays = {"q": rng.standard_normal((B, H, L, case["E"])), "k": rng.standard_normal((Bkv, Hkv, S, case["E"])),
              "v": rng.standard_normal((Bkv, Hkv, S, case["Ev"])), "table": 0.5 * rng.standard_normal((H, L, S)),
              "relative": 0.5 * rng.standard_normal(L + S - 1), "slopes": rng.uniform(0.1, 1.0, H),
              "offsets": rng.standard_normal(B)}
    arrays["upstream"] = rng.standard_normal((B, H, L, case["Ev"]))
    arrays["upstream_lse"] = rng.standard_normal((B, H, L))
    return arrays


def _document_ids(case, n):
    return np.searchsorted(np.array(case["documents"], dtype=np.int64), np.arange(n), side="right")


def _mask_mod(lib, case, tree):
    """The mask_mod of ``tree`` in ``lib`` (and/or through the library's own and_masks/or_masks)."""
    L, S = case["L"], case["S"]
    if isinstance(tree, tuple):
        op, arg = tree
        if op == "not":
            inner = _mask_mod(lib, case, arg)
            return lambda b, h, q, kv: ~inner(b, h, q, kv)
        combine = _flex(lib).and_masks if op == "and" else _flex(lib).or_masks
        return combine(*(_mask_mod(lib, case, t) for t in arg))
    doc_q, doc_kv = lib.tensor(_document_ids(case, L)), lib.tensor(_document_ids(case, S))
    w, p = case["window"], case["prefix"]
    return {
        "causal": lambda b, h, q, kv: q >= kv,
        "lower_right": lambda b, h, q, kv: q + (S - L) >= kv,
        "window": lambda b, h, q, kv: (q - kv).abs() <= w,
        "documents": lambda b, h, q, kv: doc_q[q] == doc_kv[kv],
        "per_head": lambda b, h, q, kv: (kv + h) % 3 != 0,
        "per_batch": lambda b, h, q, kv: (q + kv + b) % 2 == 0,
        "prefix": lambda b, h, q, kv: kv < p,
        "nothing": lambda b, h, q, kv: q < 0,
    }[tree]


def _score_mod(lib, case, tensors):
    """The chained score_mod of the case (None for none), reading the captured tables in ``tensors``."""
    S = case["S"]
    table, relative, slopes, offsets = (tensors[n] for n in ("table", "relative", "slopes", "offsets"))
    primitives = {
        "scale": lambda s, b, h, q, kv: s * 1.7,
        "table": lambda s, b, h, q, kv: s + table[h, q, kv],
        "relative": lambda s, b, h, q, kv: s + relative[q - kv + S - 1],
        "alibi": lambda s, b, h, q, kv: s - slopes[h] * (q - kv).abs(),
        "softcap": lambda s, b, h, q, kv: 2 * lib.tanh(s / 2),
        "causal_inf": lambda s, b, h, q, kv: lib.where(q >= kv, s, -float("inf")),
        "batch_offset": lambda s, b, h, q, kv: s + offsets[b],
    }
    chain = [primitives[name] for name in case["scores"]]
    if not chain:
        return None

    def score_mod(s, b, h, q, kv):
        for mod in chain:
            s = mod(s, b, h, q, kv)
        return s
    return score_mod


def _block_mask(lib, case):
    if case["mask"] is None:
        return None
    return _flex(lib).create_block_mask(_mask_mod(lib, case, case["mask"]), case["batch"] if case["mask_batch"] else
                                        None, case["heads"] if case["mask_heads"] else None, case["L"], case["S"],
                                        BLOCK_SIZE=case["block"], separate_full_blocks=case["separate"])


def _as_kernels_read_it(torch, case, block_mask):
    """PyTorch's BlockMask of the case with its own tables and a mask_mod that says what its compiled kernels
    compute: the mask_mod inside partial tiles, everything in full tiles, nothing elsewhere (its uncompiled path
    applies only the mask_mod; the two differ when a mask made for B or H None is shared by batches or heads that the
    mask_mod treats differently)."""
    from torch.nn.attention.flex_attention import _ordered_to_dense
    if block_mask is None:
        return None
    L, S = case["L"], case["S"]
    q_block, kv_block = block_mask.BLOCK_SIZE

    def elements(num_blocks, indices):            # (Bm, Hm, L, S) bool
        tiles = _ordered_to_dense(num_blocks, indices, indices.shape[-1]).bool()
        return tiles.repeat_interleave(q_block, -2).repeat_interleave(kv_block, -1)[..., :L, :S]
    partial = elements(block_mask.kv_num_blocks, block_mask.kv_indices)
    full = (torch.zeros_like(partial) if block_mask.full_kv_num_blocks is None
            else elements(block_mask.full_kv_num_blocks, block_mask.full_kv_indices))
    mask_mod, (Bm, Hm) = block_mask.mask_mod, partial.shape[:2]

    def kernels_mask(b, h, q, kv):
        bi, hi = (b if Bm > 1 else b * 0), (h if Hm > 1 else h * 0)
        return (partial[bi, hi, q, kv] & mask_mod(b, h, q, kv)) | full[bi, hi, q, kv]
    return _flex(torch).BlockMask.from_kv_blocks(
        block_mask.kv_num_blocks, block_mask.kv_indices, block_mask.full_kv_num_blocks, block_mask.full_kv_indices,
        BLOCK_SIZE=block_mask.BLOCK_SIZE, mask_mod=kernels_mask, seq_lengths=(L, S))


def _tensors(lib, case, arrays, grad):
    dtype = getattr(lib, case["dtype"])
    out = {}
    for name, a in arrays.items():
        t = lib.tensor(a)
        if name in ("q", "k", "v"):
            t = t.to(dtype)
        out[name] = t.requires_grad_(grad and name not in ("upstream", "upstream_lse"))
    return out


def forward(lib, case, arrays):
    """(out, lse) of flex_attention in ``lib``, as float64 arrays."""
    t = _tensors(lib, case, arrays, grad=False)
    block_mask = _block_mask(lib, case)
    if lib.__name__ == "torch":
        block_mask = _as_kernels_read_it(lib, case, block_mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # PyTorch's about running uncompiled, minigrad's about shared tables
        out, aux = _flex(lib).flex_attention(
            t["q"], t["k"], t["v"], score_mod=_score_mod(lib, case, t), block_mask=block_mask,
            scale=case["scale"], enable_gqa=case["heads"] != case["kv_heads"],
            return_aux=_flex(lib).AuxRequest(lse=True))
    return out.double().numpy(), aux.lse.double().numpy()


GRADIENT_INPUTS = ("q", "k", "v", "table", "relative", "slopes", "offsets")


def _loss(lib, out, lse, t):
    finite = lib.where(lse == -float("inf"), lib.zeros_like(lse), lse)
    return (out * t["upstream"]).sum() + (finite * t["upstream_lse"]).sum()


def gradients_minigrad(mg, case, arrays):
    t = _tensors(mg, case, arrays, grad=True)
    fa = _flex(mg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, aux = fa.flex_attention(t["q"], t["k"], t["v"], score_mod=_score_mod(mg, case, t),
                                     block_mask=_block_mask(mg, case), scale=case["scale"],
                                     enable_gqa=case["heads"] != case["kv_heads"], return_aux=fa.AuxRequest(lse=True))
    _loss(mg, out, aux.lse, t).backward()
    return {n: None if t[n].grad is None else t[n].grad.numpy() for n in GRADIENT_INPUTS}


def gradients_written_out(torch, case, arrays):
    """PyTorch's autograd through the attention written out, on the dense mask of the case's mask_mod."""
    t = _tensors(torch, case, arrays, grad=True)
    B, H, L, S = case["batch"], case["heads"], case["L"], case["S"]
    group = H // case["kv_heads"]
    k = t["k"].repeat_interleave(group, 1).expand(B, H, S, case["E"])
    v = t["v"].repeat_interleave(group, 1).expand(B, H, S, case["Ev"])
    scale = case["scale"] if case["scale"] is not None else 1 / case["E"] ** 0.5
    idx = [torch.arange(n).reshape([n if i == a else 1 for i in range(4)]) for a, n in enumerate((B, H, L, S))]
    s = t["q"] @ k.transpose(-1, -2) * scale
    mod = _score_mod(torch, case, t)
    s = s if mod is None else mod(s, *idx)
    if case["mask"] is not None:
        kept = _as_kernels_read_it(torch, case, _block_mask(torch, case)).mask_mod(*idx)
        s = torch.where(kept.expand(B, H, L, S), s, -float("inf"))
    out = torch._safe_softmax(s, -1) @ v
    dead = (s == -float("inf")).all(-1, keepdim=True)         # rows with nothing kept: lse -inf, gradient 0 (not nan)
    lse = torch.logsumexp(s.masked_fill(dead, 0.0), -1).masked_fill(dead[..., 0], -float("inf"))
    _loss(torch, out, lse, t).backward()
    return {n: None if t[n].grad is None else t[n].grad.numpy() for n in GRADIENT_INPUTS}


def _compare(ours, theirs, tol, what):
    if ours.shape != theirs.shape:
        return f"{what}: shape {ours.shape}, PyTorch {theirs.shape}"
    same_inf = np.array_equal(np.isneginf(ours), np.isneginf(theirs))
    finite = np.isfinite(theirs)
    scale = max(1.0, float(np.abs(theirs[finite]).max(initial=0)))
    if not same_inf or not np.allclose(ours[finite], theirs[finite], rtol=tol, atol=tol * scale) \
            or not np.all(np.isfinite(ours) == finite):
        bad = np.abs(np.where(finite, ours - theirs, 0)).max(initial=0)
        return f"{what}: max difference {bad:.3g} (tolerance {tol:.0e} x {scale:.3g}), -inf where PyTorch: {same_inf}"
    return None


def differences(torch, mg, seed):
    """'' if the case agrees with PyTorch, else what differs (with the case)."""
    case = random_case(seed)
    arrays = _data(case)
    problems = []
    try:
        theirs = forward(torch, case, arrays)
    except Exception as error:  # noqa: BLE001 - PyTorch's refusal is the expected answer
        try:
            forward(mg, case, arrays)
        except Exception as ours:  # noqa: BLE001
            if not isinstance(ours, type(error)):
                problems.append(f"PyTorch raises {type(error).__name__}, minigrad {type(ours).__name__}: {ours}")
        else:
            problems.append(f"PyTorch raises {type(error).__name__} ({error}), minigrad computes")
        return _report(case, problems)
    try:
        ours = forward(mg, case, arrays)
        tol = TOLERANCE[case["dtype"]]
        problems += [p for p in (_compare(o, t, tol, w) for o, t, w in zip(ours, theirs, ("out", "lse"))) if p]
        if case["dtype"] == "float64":
            grads_ours, grads_theirs = gradients_minigrad(mg, case, arrays), gradients_written_out(torch, case, arrays)
            for name in GRADIENT_INPUTS:            # no gradient (an unused table) compares as zeros
                a, b = (np.zeros(arrays[name].shape) if g is None else g
                        for g in (grads_ours[name], grads_theirs[name]))
                problems += [p for p in [_compare(a, b, 1e-9, f"grad {name}")] if p]
    except Exception:  # noqa: BLE001 - any minigrad failure is a difference
        problems.append("minigrad raises:\n" + traceback.format_exc(limit=4))
    return _report(case, problems)


def _report(case, problems):
    if not problems:
        return ""
    return "\n".join([f"seed {case['seed']}:"] + problems + [f"  {k}: {v}" for k, v in case.items()])


if __name__ == "__main__":
    from tests.fuzz_cli import run_seeds
    run_seeds(differences, __doc__.split("\n")[0], default_cases=200)
