"""Which tensors an op saves for its backward, observed: run the op, write in place into one of its inputs (one that
requires grad) or into one of its outputs, then backward. PyTorch refuses the backward ("modified by an inplace
operation") exactly when the write reached a tensor its backward saved; minigrad must refuse in the same cases.

And where minigrad runs such a backward, its gradient must be the gradient of the same program with the write made
out of place (the write after the op changes nothing the op computed): otherwise minigrad read a saved array that the
write had changed, without noticing, and its gradient is silently wrong.

``outcomes(op)`` runs this on an OpInfo's float64 samples (``tests/test_saved_tensors.py`` asserts on it).
"""
import warnings

import numpy as np

import minigrad as mg

from .opinfo_harness import is_random, minigrad_variant, torch_variant
from .opinfo_util import flat_outputs, samples, to_mg
from .view_fuzz import _windows_overlap

SAMPLES = 3                       # float64 samples per op
TARGETS = (("in", 0), ("in", 1), ("out", 0), ("out", 1))
NOT_THERE = "n/a"                 # the op has no such input or output
SHARED = "aliased"                # the output is a view of that input: the write reaches it, nothing to compare


def _walk(obj, fn, torch):
    if isinstance(obj, (torch.Tensor, mg.Tensor)):
        return fn(obj)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_walk(o, fn, torch) for o in obj)
    if isinstance(obj, dict):
        return {k: _walk(v, fn, torch) for k, v in obj.items()}
    return obj


def weighted_sum(lib, tensors, seed=0, factors=None):
    """sum_k factor_k (t_k * R_k).sum(), R_k a fixed random tensor of t_k's shape and dtype (seed ``seed + k``): a loss
    whose gradient is a random upstream (never all ones, which hides errors); None for no tensors."""
    total = None
    for k, t in enumerate(tensors):
        term = (t * (1.0 if factors is None else factors[k]) *
                lib.tensor(np.random.default_rng(seed + k).standard_normal(tuple(t.shape)), dtype=t.dtype)).sum()
        total = term if total is None else total + term
    return total


def _shares_memory(lib, a, b, torch):
    if lib is mg:
        if a.layout != mg.strided or b.layout != mg.strided:
            return False
        return np.shares_memory(a._data, b._data)
    return (a.layout == torch.strided and a.numel() > 0 and b.numel() > 0
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


def run(lib, fn, sample, target, write, torch):
    """One trial: ``fn`` on ``sample`` (input, args, kwargs of ``lib``'s tensors), each input that requires grad
    replaced by a fresh leaf times 1 (so that it can be written); then the ``target`` ("in" or "out", position)
    multiplied by 2 in place if ``write``, else (the out-of-place twin) that output's upstream doubled; then backward
    of a random-weighted sum of the outputs. Returns (outcome, the leaves' gradients or None)."""
    made, leaves = [], []

    def prepare(t):
        if not t.requires_grad:
            return t
        leaf = t.detach().clone().requires_grad_()
        leaves.append(leaf)
        made.append(leaf * 1)
        return made[-1]
    inp, args, kwargs = (_walk(part, prepare, torch) for part in sample)
    try:
        out = fn(inp, *args, **kwargs)
    except Exception:
        return "op raised", None
    outs = [o for o in flat_outputs(out) if isinstance(o, (torch.Tensor, mg.Tensor))]
    kind, n = target
    if kind == "in" and n >= len(made) or kind == "out" and (n >= len(outs) or not outs[n].is_floating_point()):
        return NOT_THERE, None
    if kind == "in" and any(_shares_memory(lib, o, made[n], torch) for o in outs):
        return SHARED, None
    if kind == "out" and lib is mg and outs[n].layout == mg.strided and _windows_overlap(outs[n]):
        return SHARED, None           # in place into overlapping windows: PyTorch updates a shared element per window
    factors = [1.0] * len(outs)
    try:
        if write:
            (made if kind == "in" else outs)[n].mul_(2)
        elif kind == "out":
            factors[n] = 2.0
    except Exception as error:
        return "write raised " + type(error).__name__, None
    differentiable = [k for k, o in enumerate(outs) if o.requires_grad and o.is_floating_point()]
    try:
        loss = weighted_sum(lib, [outs[k] for k in differentiable], factors=[factors[k] for k in differentiable])
    except Exception as error:
        return "loss raised " + type(error).__name__, None
    if loss is None:
        return "no loss", None
    try:
        loss.backward()
    except Exception as error:
        return "backward raised " + type(error).__name__, None
    return "ok", [None if leaf.grad is None else leaf.grad.detach().numpy().copy() for leaf in leaves]


def _same_gradients(a, b):
    return len(a) == len(b) and all(
        (x is None) == (y is None) and (x is None or (x.shape == y.shape and np.allclose(x, y, 1e-7, 1e-7, True)))
        for x, y in zip(a, b))


def outcomes(op, torch):
    """(differences, silent, compared) for the OpInfo ``op``: the trials where PyTorch and minigrad disagree on
    refusing, as (sample, target, PyTorch's outcome, minigrad's); those where minigrad ran but its gradient is not the
    out-of-place twin's, as (sample, target); and how many trials were compared (none for an op minigrad lacks, one
    PyTorch seeds at random, or one without float64)."""
    if not op.supports_autograd or is_random(op) or torch.float64 not in op.supported_dtypes("cpu"):
        return [], [], 0
    fn_th, fn_mg = torch_variant(op, "function"), minigrad_variant(op, "function")
    if fn_th is None or fn_mg is None:
        return [], [], 0
    differences, silent, compared = [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, sample in enumerate(samples(op, torch.float64, requires_grad=True, limit=SAMPLES)):
            theirs = (sample.input, sample.args, sample.kwargs)
            try:
                memo = {}
                ours = (to_mg(sample.input, memo), to_mg(sample.args, memo), to_mg(sample.kwargs, memo))
            except BaseException:     # a sample minigrad cannot hold (pytest.skip inside to_mg): not compared
                continue
            for target in TARGETS:
                want, _ = run(torch, fn_th, theirs, target, True, torch)
                got, grads = run(mg, fn_mg, ours, target, True, torch)
                if want == "op raised" or SHARED in (want, got) or want == got == NOT_THERE:
                    continue
                compared += 1
                if want != got:
                    differences.append((index, target, want, got))
                if got == "ok":
                    twin, clean = run(mg, fn_mg, ours, target, False, torch)
                    if twin == "ok" and not _same_gradients(grads, clean):
                        silent.append((index, target))
    return differences, silent, compared
