"""Indexing ops against PyTorch's own op database (OpInfo): index_put, index_fill, index_copy, index_add,
index_reduce, scatter_reduce, scatter (with the deprecated reduce=), masked_scatter, put, take, take_along_dim and
the *_scatter embedding ops. Every sample in float64 with the gradients of a random upstream, in float32, int64
and bool forward; the function, method and in-place variants; the error inputs (``tests/opinfo_checks.py``).
Then what the database cannot check: as_strided_scatter's gradient (PyTorch's own fails gradcheck), second
derivatives, nothing changed on an error, and a wrong backward that these checks catch.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import scatter_reduce as sr

from .mirror import torch_or_skip
from .opinfo_checks import assert_opinfo, check_opinfo

INDEX_OPS = ["index_put", "index_fill", "index_copy", "index_add", "index_reduce:prod", "index_reduce:mean",
             "index_reduce:amax", "index_reduce:amin", "scatter_reduce:sum", "scatter_reduce:prod",
             "scatter_reduce:mean", "scatter_reduce:amax", "scatter_reduce:amin", "scatter", "scatter_add", "gather",
             "index_select", "masked_scatter", "put", "take", "take_along_dim", "select_scatter", "slice_scatter",
             "diagonal_scatter", "as_strided_scatter", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate"]


@pytest.mark.parametrize("name", INDEX_OPS)
def test_opinfo_samples(name):
    base, _, variant = name.partition(":")
    assert_opinfo(base, variant or None, limit=30)


def test_as_strided_scatter_gradient_by_finite_differences():
    # PyTorch's OpInfo marks its own backward as failing gradcheck; minigrad's is checked against differences
    def f(x, src):
        return mg.as_strided_scatter(x, src, (2, 2), (1, 2), 1)
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    src = mg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    assert mg.gradcheck(f, (x, src))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_second_derivatives(reduce, include_self):
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    src = mg.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    index = mg.tensor([[0, 1, 0], [2, 1, 0], [0, 3, 3]])
    assert mg.gradgradcheck(lambda a, s: mg.scatter_reduce(a, 0, index, s, reduce, include_self=include_self),
                            (x, src))


def test_scatter_reduce_prod_with_zeros_matches_pytorch():
    # a lone zero and a repeated zero in the same target: the cases prod's gradient treats specially
    torch = torch_or_skip()
    x = np.array([2.0, 0.0, 3.0, -1.5])
    src = np.array([0.0, 4.0, 0.0, 0.0, 5.0, 0.5])
    index = np.array([0, 0, 1, 1, 2, 3])
    up = np.random.default_rng(2).standard_normal(4)
    grads = []
    for lib in (mg, torch):
        a, s = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
        out = lib.scatter_reduce(a, 0, lib.tensor(index), s, "prod")
        out.backward(lib.tensor(up))
        grads.append((out.detach().numpy(), a.grad.numpy(), s.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_index_put_accumulate_second_derivatives():
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    v = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    index = (mg.tensor([0, 2, 0]),)
    assert mg.gradgradcheck(lambda a, b: mg.index_put(a, index, b * b, accumulate=True), (x, v))


def test_failed_in_place_write_changes_nothing():
    x = mg.arange(6.0).reshape(2, 3)
    before = x.numpy().copy()
    with pytest.raises(IndexError):
        x.index_put_((mg.tensor([5]),), mg.tensor(1.0))
    with pytest.raises(RuntimeError):
        x.scatter_reduce_(0, mg.tensor([[0, 9, 0]]), mg.ones(1, 3), "sum")
    with pytest.raises(RuntimeError):
        x.put_(mg.tensor([0, 1]), mg.tensor([1.0]))
    np.testing.assert_array_equal(x.numpy(), before)
    assert x._version == 0


def test_a_wrong_backward_is_caught(monkeypatch):
    """The mutant: mean's gradient without the division by the number of values reduced into a position."""
    torch_or_skip()
    assert not check_opinfo("scatter_reduce", "mean", kinds=("function",), dtypes=(), errors=False, limit=6)
    right = sr._grads

    def mean_without_division(ctx, g, x, src, out):
        if ctx.reduce != "mean":
            return right(ctx, g, x, src, out)
        dx, dsrc = g, sr.sh.Index.apply(g, ctx.positions)
        return dx, dsrc, None, None, None
    monkeypatch.setattr(sr, "_grads", mean_without_division)
    failures = check_opinfo("scatter_reduce", "mean", kinds=("function",), dtypes=(), errors=False, limit=6)
    assert failures and all("gradient of input" in what for _, _, what in failures)


INT32_CASES = {
    "scatter_reduce": lambda lib, x, i, s: lib.scatter_reduce(x, 0, i, s, "sum"),
    "scatter": lambda lib, x, i, s: lib.scatter(x, 0, i, s),
    "scatter_add": lambda lib, x, i, s: lib.scatter_add(x, 0, i, s),
    "gather": lambda lib, x, i, s: lib.gather(x, 0, i),
    "index_fill": lambda lib, x, i, s: lib.index_fill(x, 0, i[0], 1.0),
    "index_copy": lambda lib, x, i, s: lib.index_copy(x, 1, i[0], s.expand(3, 3)),
    "index_add": lambda lib, x, i, s: lib.index_add(x, 1, i[0], s.expand(3, 3)),
    "index_reduce": lambda lib, x, i, s: lib.index_reduce(x, 1, i[0], s.expand(3, 3), "amax"),
    "index_select": lambda lib, x, i, s: lib.index_select(x, 1, i[0]),
    "take": lambda lib, x, i, s: lib.take(x, i),
    "put": lambda lib, x, i, s: lib.put(x, i, s),
    "take_along_dim": lambda lib, x, i, s: lib.take_along_dim(x, i, 1),
    "index_put": lambda lib, x, i, s: lib.index_put(x, (i[0],), s[0]),
}


@pytest.mark.parametrize("name", sorted(INT32_CASES))
def test_int32_index_accepted_or_refused_as_pytorch_does(name):
    torch = torch_or_skip()
    outcomes = []
    for lib in (torch, mg):
        x, i, s = lib.zeros(3, 3), lib.tensor(np.array([[0, 2, 1]], np.int32)), lib.ones(1, 3)
        try:
            outcomes.append(INT32_CASES[name](lib, x, i, s).numpy())
        except Exception as error:  # noqa: BLE001 - the exception type is what is compared
            outcomes.append(type(error))
    if isinstance(outcomes[0], type):
        assert outcomes[1] is outcomes[0]
    else:
        np.testing.assert_array_equal(outcomes[1], outcomes[0])
