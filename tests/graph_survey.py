"""Gradients of gradients, observed: take an op's first gradients under ``create_graph=True`` (for a constant random
upstream gradient), note which of them require grad, then backward through them and note which leaves get a
gradient (None, zeros, or values). PyTorch's answers follow its backward formulas: a gradient that reads an input
(even one whose derivative is zero, as pooling's reads the input's shape) requires grad when that input does.

``outcome(lib, fn, sample)`` runs this once; ``tests/test_gradient_graphs.py`` compares the two libraries on the
OpInfo samples.
"""
import numpy as np

import minigrad as mg

from .opinfo_util import flat_outputs
from .saved_survey import _walk, weighted_sum

ZERO = 1e-12      # a second-order gradient below this everywhere counts as zeros (rounding noise of an exact 0)


def _reached(lib, leaf):
    if leaf.grad is None:
        return None
    g = leaf.grad.detach()
    values = g.numpy(force=True) if lib is not mg else g.numpy()
    return "zeros" if np.abs(values).max(initial=0) < ZERO else "values"


def outcome(lib, fn, sample, torch):
    """(whether each first gradient requires grad, then for each leaf what a second backward gives it), or a string
    naming where the run stopped. ``sample``: (input, args, kwargs) of ``lib``'s tensors; those requiring grad are
    replaced by fresh leaves."""
    leaves = []

    def prepare(t):
        if not t.requires_grad:
            return t
        leaves.append(t.detach().clone().requires_grad_())
        return leaves[-1]
    inp, args, kwargs = (_walk(part, prepare, torch) for part in sample)
    try:
        out = fn(inp, *args, **kwargs)
    except Exception:
        return "op raised"
    outs = [o for o in flat_outputs(out) if isinstance(o, (torch.Tensor, mg.Tensor)) and o.requires_grad
            and o.is_floating_point()]
    if not outs or not leaves:
        return "nothing to differentiate"
    try:
        firsts = lib.autograd.grad(weighted_sum(lib, outs), leaves, create_graph=True, allow_unused=True)
    except Exception as error:
        return "first backward raised " + type(error).__name__
    return second_order(lib, firsts, leaves)


def second_order(lib, firsts, leaves):
    """(whether each of the first gradients ``firsts`` requires grad, then what a backward of a random-weighted sum of
    those that do gives each of ``leaves``: None, "zeros" or "values")."""
    flags = tuple(None if g is None else bool(g.requires_grad) for g in firsts)
    total = weighted_sum(lib, [g for g in firsts if g is not None and g.requires_grad], seed=50)
    if total is None:
        return flags, "no second backward"
    try:
        total.backward()
    except Exception as error:
        return flags, "second backward raised " + type(error).__name__
    return flags, tuple(_reached(lib, leaf) for leaf in leaves)
