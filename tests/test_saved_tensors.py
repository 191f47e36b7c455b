"""What an op's backward keeps, as PyTorch keeps it: after the op, an in-place write into one of its inputs or outputs
makes the backward refuse ("modified by an inplace operation") exactly when PyTorch's does, and where minigrad runs
the backward, its gradient is never one silently computed from the changed values (``tests/saved_survey.py``).

Oracles: PyTorch's op database (every op minigrad has, float64 samples), and direct comparisons for the norms: which
writes PyTorch refuses (input, weight, bias, per dtype and per which of them require grad), whether each first
gradient requires grad under create_graph, and which inputs a second backward reaches.
"""
import itertools
import warnings

import numpy as np
import pytest

import minigrad as mg

from . import graph_survey, saved_survey
from .mirror import torch_or_skip
from .opinfo_harness import op_id

SHARDS = 4

# op id: why minigrad still refuses differently from PyTorch (the test fails once an op here agrees, so that its entry
# goes). Where PyTorch refuses and minigrad runs, minigrad's gradient is the one of the values the forward computed
# (the silent-gradient check holds for every op).
KNOWN = {
    "linalg.lstsq": "PyTorch saves the solution; minigrad keeps the outputs in one array (so it cannot refuse a write "
                    "into the solution without refusing one into the residuals, which PyTorch allows)",
    "linalg.lstsq.grad_oriented": "as linalg.lstsq",
    "linalg.slogdet": "minigrad saves (sign, logabsdet) as one array, so a write into logabsdet is refused; PyTorch "
                      "saves only the sign",
    "linalg.vander": "PyTorch's is a cumulative product of the input (it saves the input, not the output); minigrad's "
                     "is built of powers",
    "ldexp": "PyTorch's is input * 2^other, which saves 2^other and the product; minigrad's saves its inputs",
    "nn.functional.embedding_bag": "PyTorch saves the weight for some modes and not others; minigrad's backward reads "
                                   "copies",
    "sgn": "PyTorch saves input and output for a complex input; minigrad reads copies",
    "tensordot": "PyTorch's contraction saves permuted views of the inputs; minigrad's matrix product saves copies",
    "nn.functional.conv3d": "with padding='same' and an even dilated kernel PyTorch pads the input into a new tensor "
                            "first (its convolution saves that); minigrad's saves the input",
    "nn.functional.linear_cross_entropy.chunked": "PyTorch recomputes the chunks from saved intermediates; minigrad's "
                                                  "saves input and weight",
    "to_sparse": "minigrad's sparse COO tensors take no in-place multiplication (PyTorch's do)",
}


def _ops(shard):
    from .opinfo_util import op_db
    return op_db()[shard::SHARDS]


@pytest.mark.parametrize("shard", range(SHARDS))
def test_writes_after_an_op_are_refused_as_pytorch_refuses_them(shard):
    torch = torch_or_skip()
    pytest.importorskip("expecttest", reason="PyTorch's OpInfo database imports expecttest")
    new, fixed, silent = [], [], []
    for op in _ops(shard):
        differences, wrong, compared = saved_survey.outcomes(op, torch)
        name = op_id(op)
        if wrong:
            silent.append(f"{name}: {wrong}")
        if differences and name not in KNOWN:
            new.append(f"{name}: " + "; ".join(f"sample {i} write {t[0]}{t[1]}: PyTorch {a}, minigrad {b}"
                                                for i, t, a, b in differences))
        if not differences and name in KNOWN and compared:
            fixed.append(name)
    assert not silent, "minigrad's gradient read values written after the forward:\n" + "\n".join(silent)
    assert not new, "writes after the op refused differently from PyTorch:\n" + "\n".join(new)
    assert not fixed, f"now agree with PyTorch, remove them from KNOWN: {fixed}"


def test_the_survey_catches_an_op_that_saves_more_than_pytorch(monkeypatch):
    """tan's backward reads its output only; made to save its input as well, a write into the input after the op
    makes minigrad's backward refuse where PyTorch's runs, and the survey reports it."""
    torch = torch_or_skip()
    pytest.importorskip("expecttest")
    from minigrad.ops.trig import Tan
    from .opinfo_util import opinfos
    monkeypatch.setattr(Tan, "saves", ("input", "output"))
    differences, _, _ = saved_survey.outcomes(opinfos("tan")[0], torch)
    assert any(t == ("in", 0) and a == "ok" and b.startswith("backward raised") for _, t, a, b in differences)


def test_the_survey_catches_a_silently_wrong_gradient(monkeypatch):
    """cdist's backward made to read its output outside the version check (as it once did): a write into the output
    changes the gradient, and the survey reports it as silent."""
    torch = torch_or_skip()
    pytest.importorskip("expecttest")
    from minigrad.ops import distance
    from .opinfo_util import opinfos
    forward = distance.Cdist.forward

    def unchecked(ctx, x1, x2, p):
        dist = forward(ctx, x1, x2, p)
        x1_saved, x2_saved, _ = ctx.saved
        ctx.saved = (x1_saved, x2_saved, dist.view())   # a view: the same memory, but no version check sees it...
        ctx.saved_at = float("inf")                     # ...and no write counts as one since the save
        return dist
    monkeypatch.setattr(distance.Cdist, "forward", staticmethod(unchecked))
    _, silent, _ = saved_survey.outcomes(opinfos("cdist")[0], torch)
    assert any(t == ("out", 0) for _, t in silent)


# --------------------------------------------------------------------------- the norms, directly
def _norms(L):
    F = L.nn.functional
    return {
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (3,), w, b, eps=0.1), (2, 3)),
        "rms_norm": (lambda x, w, b: F.rms_norm(x, (3,), w, eps=0.1), (2, 3)),
        "group_norm": (lambda x, w, b: F.group_norm(x, 3, w, b, eps=0.1), (2, 3, 2)),
        "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=0.1), (2, 3)),
        "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), w, b,
                                                         training=False, eps=0.1), (2, 3)),
        "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=0.1), (2, 3, 2)),
    }


NORMS = ("layer_norm", "rms_norm", "group_norm", "batch_norm", "batch_norm_eval", "instance_norm")


def _operands(L, shape, dtype, grads, leaves=False):
    """x (``shape``), weight and bias (3,) of ``dtype``, fixed values; each requiring grad per ``grads``: as leaves,
    or (``leaves`` False) as a leaf times 1, which may be written in place."""
    out = []
    for seed, size, wants in zip((0, 1, 2), (shape, (3,), (3,)), grads):
        t = L.tensor(np.random.default_rng(seed).standard_normal(size), dtype=getattr(L, dtype))
        if wants:
            t = t.requires_grad_() if leaves else t.requires_grad_() * 1
        out.append(t)
    return out


def _write_then_backward(L, name, dtype, grads, target):
    fn, shape = _norms(L)[name]
    x, w, b = _operands(L, shape, dtype, grads)
    y = fn(x, w, b)
    if not y.requires_grad:
        return "nothing requires grad"
    {"x": x, "w": w, "b": b}[target].mul_(2)
    return _backward_outcome(L, y)


def _backward_outcome(L, y):
    """"ran" or "refused" (PyTorch's error for a saved tensor written since): backward of a random-weighted sum."""
    upstream = L.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)))
    try:
        (y.to(L.float64) * upstream).sum().backward()
        return "ran"
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error), error
        return "refused"


@pytest.mark.parametrize("name", NORMS)
def test_a_norm_refuses_writes_after_its_forward_as_pytorch(name):
    """x, weight, bias written after the forward, for every choice of which require grad, in float64, float32 and
    float16: PyTorch refuses exactly the writes into what its backward saved (the fused norms: x, the weight, and
    LayerNorm's bias too; RMSNorm, composed of ops: x and the weight only when x requires grad, float32/64)."""
    torch = torch_or_skip()
    found = []
    for dtype, grads, target in itertools.product(("float64", "float32", "float16"),
                                                  itertools.product((True, False), repeat=3), "xwb"):
        want = _write_then_backward(torch, name, dtype, grads, target)
        got = _write_then_backward(mg, name, dtype, grads, target)
        if want != got:
            found.append(f"{dtype} requires_grad (x, w, b) = {grads}, write {target}: PyTorch {want}, minigrad {got}")
    assert not found, "\n".join(found)


def _write_base_then_backward(L, name, layout, x_grad):
    """The norm of a view of a (4, 4) base (transposed, or a slice), then the base written: PyTorch's group and
    instance norms save ``input.contiguous()`` (a copy of such a view), the others the view itself."""
    base = L.tensor(np.random.default_rng(0).standard_normal((4, 4)))
    if x_grad:
        base = base.requires_grad_() * 1
    x = (base.t() if layout == "transposed" else base)[:, :3]                   # (4, 3), a view of base
    if name == "instance_norm":
        x = x.unsqueeze(-1).expand(-1, -1, 2)                                     # (4, 3, 2): positions to normalize
    fn, _ = _norms(L)[name]
    y = fn(x, L.tensor(np.random.default_rng(1).standard_normal(3), requires_grad=True), None)
    base.mul_(2)
    return _backward_outcome(L, y)


@pytest.mark.parametrize("name", NORMS)
def test_a_norm_of_a_view_refuses_writes_into_its_base_as_pytorch(name):
    torch = torch_or_skip()
    for layout, x_grad in itertools.product(("transposed", "sliced"), (True, False)):
        want = _write_base_then_backward(torch, name, layout, x_grad)
        assert _write_base_then_backward(mg, name, layout, x_grad) == want, (layout, x_grad, want)


def _first_and_second(L, name, grads, bias, upstream_grad):
    """(whether each first gradient requires grad, under create_graph; then after a second backward through them,
    for x, w, b: None, "zeros" or "values")."""
    fn, shape = _norms(L)[name]
    x, w, b = _operands(L, shape, "float64", grads, leaves=True)
    y = fn(x, w, b if bias else None)
    if not y.requires_grad:
        return "nothing requires grad"
    upstream = L.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)), requires_grad=upstream_grad)
    wanted = [t for t in (x, w, b if bias else None) if t is not None and t.requires_grad]
    firsts = L.autograd.grad((y * upstream).sum(), wanted, create_graph=True, allow_unused=True)
    return graph_survey.second_order(L, firsts, (x, w, b))


@pytest.mark.parametrize("name", NORMS)
def test_a_norms_create_graph_gradients_are_pytorchs(name):
    """PyTorch computes a fused norm's gradients in one backward node whose inputs include x and the weight
    (LayerNorm's the bias too): each first gradient requires grad when one of them does, even db = sum(dout); a second
    backward through such a part reaches none of them (GroupNorm's db stays a constant)."""
    torch = torch_or_skip()
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for grads, bias, upstream_grad in itertools.product(itertools.product((True, False), repeat=3),
                                                            (True, False), (False, True)):
            want = _first_and_second(torch, name, grads, bias, upstream_grad)
            got = _first_and_second(mg, name, grads, bias, upstream_grad)
            if want != got:
                found.append(f"requires_grad (x, w, b) = {grads}, bias {bias}, upstream requires grad "
                             f"{upstream_grad}: PyTorch {want}, minigrad {got}")
    assert not found, "\n".join(found)


def test_softmax_of_a_transposed_input_saves_the_output_it_returns():
    """softmax's result is laid out row-major (a copy for a transposed input): what its backward saves must be that
    result, so that a write into it makes the backward refuse, as PyTorch's does."""
    torch = torch_or_skip()
    for L in (torch, mg):
        a = L.tensor(np.random.default_rng(0).standard_normal((3, 2)), requires_grad=True)
        y = (a * 1).t().softmax(0)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (y * L.tensor(np.random.default_rng(1).standard_normal((2, 3)))).sum().backward()
