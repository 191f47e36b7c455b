"""Higher-order gradients (create_graph=True) through the shape, indexing, linear-algebra and in-place ops:
indexing (basic, advanced, boolean), flip/roll/repeat/cat/diagonals, gather/scatter/index_select, matmul
(1-D, 2-D, batched, broadcast), linear, embedding, einsum, and in-place writes on non-leaves and through
views. Each is checked with a float64 ``gradgradcheck`` (finite differences of the create_graph gradients,
which must also equal the ordinary ones) and against PyTorch's double backward.

The shape ops are linear, so each tested function bends their output with a non-linear factor (``bend``):
otherwise every second-order term would be zero and a wrong ``graph_backward`` could pass.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops.linalg import MatMul

from .mirror import assert_double_mirror, check_gradgrad, run_both, torch_or_skip
from .strategies import broadcastable_shapes

RNG = np.random.default_rng(14)


def normal(*shape):
    return RNG.standard_normal(shape)


def bend(t):
    """t * exp(t): non-linear, with non-zero derivatives of every order."""
    return t * t.exp()


def nn_functional(lib):
    return lib.nn.functional


MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
INDEX = np.array([[2, 0, 2, 1], [1, 1, 0, 2]])            # for (3, 4) inputs along dim 0, with repeats
TOKENS = np.array([[0, 2, 1], [2, 2, 3]])                   # embedding lookups, row 2 repeated, 1 the padding


def long(lib, array):
    return lib.tensor(array)


def write_slice(lib, x, y):
    h = x * 2
    h[1:] = y.exp()
    return bend(h)


def write_rows(lib, x, y):
    h = x * x
    h[[0, 2]] = y                                          # advanced index: IndexPut with an index array
    return bend(h)


def write_through_view(lib, x, y):
    h = x * 2
    v = h[:, 1]                                            # a view; writing into it changes h (WriteRegion)
    v.mul_(y)
    return bend(h)


def read_stale_view(lib, x, y):
    h = x + 1
    v = h[1]                                               # h is then written: v reads h as it is now (ReadRegion)
    h.mul_(y)
    return bend(v) * x[0]


def write_transposed_view(lib, x, y):
    h = x * x
    h.t()[1:3] = y                                         # a non-contiguous view written in place
    return bend(h)


def copy_into(lib, x, y):
    h = x * 2
    h[0].copy_(y[0])                                       # Overwrite through a view of a non-leaf
    return bend(h) * x


def index_add(lib, x, y):
    return bend(x.clone().index_add_(0, long(lib, np.array([2, 0, 2])), y))


def scatter_add(lib, x, y):
    return bend(x * 1).scatter_add_(0, long(lib, INDEX), y[:2]) * x


def scatter(lib, x, y):
    return bend(x.scatter(0, long(lib, np.array([[2, 0, 1, 1]])), y[1:2]))


def scatter_larger_src(lib, x, y):
    """src larger than the index: its gradient is zero-padded (PyTorch's double backward refuses this case,
    so it is checked by finite differences only)."""
    return bend(x.scatter(0, long(lib, np.array([[2, 0, 1, 1]])), y))


def x34():
    return normal(3, 4)


# name -> (f(lib, *tensors), arrays): every op of shape.py, index.py, linalg.py, sort.py, inplace.py, views.py
CASES = {
    "index basic": (lambda lib, x: x[1:, ::2] * x[:2, 1::2].exp(), [x34()]),
    "index int and None": (lambda lib, x: bend(x[1, None, 1:3]) * x[0, :2], [x34()]),
    "index advanced repeats": (lambda lib, x: x[[0, 2, 0]] * bend(x[[1, 1, 2]]), [x34()]),
    "index mixed int and array": (lambda lib, x: bend(x[0, [1, 3, 1]]) * x[2, :3], [x34()]),
    "index boolean": (lambda lib, x: bend(x[lib.tensor(MASK)]), [x34()]),
    "index boolean rows": (lambda lib, x: bend(x[lib.tensor([True, False, True])]), [x34()]),
    "flip (negative steps)": (lambda lib, x: x.flip(0) * bend(x.flip((0, 1))), [x34()]),
    "roll": (lambda lib, x: x.roll((1, -2), (0, 1)) * bend(x.roll(1, 0)), [x34()]),
    "roll flattened": (lambda lib, x: bend(x.roll(5)) * x, [x34()]),
    "repeat": (lambda lib, x: bend(x.repeat(2, 1, 3)), [normal(2, 3)]),
    "cat dim 0": (lambda lib, x, y: bend(lib.cat([x, y * x], 0)) * lib.cat([y, x], 0), [x34(), x34()]),
    "cat dim -1": (lambda lib, x, y: bend(lib.cat([x, y[:, :2]], -1)), [x34(), x34()]),
    "stack": (lambda lib, x, y: bend(lib.stack([x, y], 1)) * lib.stack([y, x], 1), [normal(2, 3), normal(2, 3)]),
    "split and chunk": (lambda lib, x: bend(x.split([1, 3], 1)[1]) * x.chunk(2, 1)[0].sum(), [x34()]),
    "diagonal": (lambda lib, x: bend(x.diagonal(1)) * x.diagonal(-1, 1, 0), [x34()]),
    "diagonal 3-d": (lambda lib, x: bend(x.diagonal(0, 0, 2)), [normal(3, 2, 4)]),
    "diag_embed": (lambda lib, x: bend(lib.diag_embed(x, 1)) * lib.diag_embed(x, -1), [normal(2, 3)]),
    "diag": (lambda lib, x, m: bend(lib.diag(x)) * m + lib.diag(m).sum(), [normal(3), normal(3, 3)]),
    "gather": (lambda lib, x: bend(x.gather(0, long(lib, INDEX))), [x34()]),
    "sort and topk": (lambda lib, x: bend(x.sort(1)[0]) * x.topk(2, 0)[0][:1], [x34()]),
    "index_select": (lambda lib, x: bend(x.index_select(1, long(lib, np.array([3, 0, 3])))), [x34()]),
    "masked_select": (lambda lib, x: bend(x.masked_select(lib.tensor(MASK[0]))), [x34()]),
    "scatter": (scatter, [x34(), x34()]),
    "scatter_add_": (scatter_add, [x34(), x34()]),
    "index_add_": (index_add, [x34(), x34()]),
    "clone": (lambda lib, x: bend(x.clone()) * x, [x34()]),
    "setitem slice": (write_slice, [x34(), normal(2, 4)]),
    "setitem rows": (write_rows, [x34(), normal(1, 4)]),
    "write through a view": (write_through_view, [x34(), normal(3)]),
    "read a stale view": (read_stale_view, [x34(), x34()]),
    "write a transposed view": (write_transposed_view, [x34(), normal(3)]),
    "copy_ into a view": (copy_into, [x34(), x34()]),
    "linear": (lambda lib, x, w, b: bend(nn_functional(lib).linear(x, w, b)), [normal(2, 2, 3), normal(4, 3),
                                                                                normal(4)]),
    "linear without bias": (lambda lib, x, w: bend(nn_functional(lib).linear(x, w)), [normal(3, 3), normal(2, 3)]),
    "embedding": (lambda lib, w: bend(nn_functional(lib).embedding(long(lib, TOKENS), w)), [normal(4, 3)]),
    "embedding padding_idx": (lambda lib, w: bend(nn_functional(lib).embedding(long(lib, TOKENS), w, padding_idx=1)),
                              [normal(4, 3)]),
    "einsum matrix product": (lambda lib, a, b: bend(lib.einsum("ij,jk->ik", a, b)), [normal(2, 3), normal(3, 2)]),
    "einsum batched transpose": (lambda lib, a, b: bend(lib.einsum("bij,bkj->bki", a, b)),
                                 [normal(2, 2, 3), normal(2, 2, 3)]),
    "einsum trace and diagonal": (lambda lib, a, v: bend(lib.einsum("ii,i->i", a, v)) * lib.einsum("ii", a),
                                  [normal(3, 3), normal(3)]),
    "einsum ellipsis broadcast": (lambda lib, a, b: bend(lib.einsum("...ij,...j->...i", a, b)),
                                  [normal(2, 2, 3), normal(1, 3)]),
    "einsum ellipsis missing in one": (lambda lib, a, b: bend(lib.einsum("...ij,...j->...i", a, b)),
                                       [normal(2, 2, 3), normal(3)]),
    "einsum ellipsis summed out": (lambda lib, a, b: bend(lib.einsum("...ij,...j->i", a, b)),
                                   [normal(2, 2, 3), normal(3)]),
    "einsum three operands": (lambda lib, a, b, c: bend(lib.einsum("ij,jk,k->i", a, b, c)),
                              [normal(2, 3), normal(3, 2), normal(2)]),
    "einsum sum out": (lambda lib, a, b: bend(lib.einsum("ij,ij->", a, b)), [normal(2, 3), normal(2, 3)]),
}

MATMUL_SHAPES = [
    ((3,), (3,)),               # dot product: a 0-d result
    ((2, 3), (3,)),             # matrix @ vector
    ((3,), (3, 2)),             # vector @ matrix
    ((2, 3), (3, 2)),
    ((2, 2, 3), (3, 2)),        # batch @ shared matrix
    ((3,), (2, 3, 2)),          # vector @ batch
    ((2, 2, 3), (3,)),          # batch @ vector
    ((2, 2, 3), (2, 3, 2)),     # batched
    ((2, 1, 2, 3), (3, 3, 2)),  # batch dims broadcast both ways
]

for sa, sb in MATMUL_SHAPES:
    CASES[f"matmul {sa} @ {sb}"] = (lambda lib, a, b: bend(lib.matmul(a, b)), [normal(*sa), normal(*sb)])


@pytest.mark.parametrize("name", list(CASES))
def test_gradgrad(name):
    f, arrays = CASES[name]
    check_gradgrad(lambda *t: f(mg, *t), *arrays)


@pytest.mark.parametrize("name", list(CASES))
def test_double_mirror(name):
    f, arrays = CASES[name]
    assert_double_mirror(*run_both(f), *arrays)


@settings(max_examples=15)
@given(broadcastable_shapes(max_dims=2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from(["matrices", "vector @ batch", "batch @ vector"]), st.integers(0, 2**32 - 1))
def test_double_mirror_matmul_sweep(batches, n, k, p, kind, seed):
    """Batched matmul with broadcast batch dims (and 1-D operands) against PyTorch's double backward."""
    rng = np.random.default_rng(seed)
    shape_a = (k,) if kind == "vector @ batch" else batches[0] + (n, k)
    shape_b = (k,) if kind == "batch @ vector" else batches[1] + (k, p)
    assert_double_mirror(*run_both(lambda lib, a, b: bend(lib.matmul(a, b))), rng.standard_normal(shape_a),
                         rng.standard_normal(shape_b))


@st.composite
def slices(draw, size):
    start = draw(st.integers(-size, size - 1))
    return slice(start, draw(st.none() | st.integers(-size, size)), draw(st.none() | st.integers(1, 3)))


@settings(max_examples=15)
@given(st.data())
def test_double_mirror_index_sweep(data):
    """x[rows, cols] for random slices, or an integer array (with repeats) in one of the two places."""
    rows = data.draw(slices(3) | st.lists(st.integers(-3, 2), min_size=1, max_size=4))
    cols = data.draw(slices(4))
    f = lambda lib, x: bend(x[rows, cols]) * x[rows, cols].exp()  # noqa: E731
    assert_double_mirror(*run_both(f), x34())


def _third_order(lib, f, arrays, seed=0):
    """d/dx of  <d/dx <d<u, f>/dx, v>, w>: three nested create_graph gradients (the gradients of the adjoint
    ops that each op's graph_backward builds are then differentiated too)."""
    rng = np.random.default_rng(seed)
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = f(lib, *xs)
    grads = lib.autograd.grad(out, xs, lib.tensor(rng.standard_normal(tuple(out.shape))), create_graph=True)
    second = lib.autograd.grad(sum((g * lib.tensor(rng.standard_normal(a.shape))).sum()
                                   for g, a in zip(grads, arrays)), xs, create_graph=True)
    third = lib.autograd.grad(sum((g * g).sum() for g in second), xs, allow_unused=True)
    return [np.zeros(a.shape) if t is None else t.detach().numpy() for t, a in zip(third, arrays)]


THIRD_ORDER = ["index advanced repeats", "index boolean", "flip (negative steps)", "roll", "repeat", "cat dim 0",
               "diagonal", "diag_embed", "gather", "index_select", "scatter", "setitem slice",
               "write through a view", "read a stale view", "linear", "embedding padding_idx",
               "einsum trace and diagonal", "einsum ellipsis broadcast", "einsum ellipsis summed out", "matmul (3,) @ (2, 3, 2)",
               "matmul (2, 1, 2, 3) @ (3, 3, 2)"]


@pytest.mark.parametrize("name", THIRD_ORDER)
def test_third_order_mirror(name):
    torch = torch_or_skip()
    f, arrays = CASES[name]
    for ours, theirs in zip(_third_order(mg, f, arrays), _third_order(torch, f, arrays)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_gradgrad_scatter_from_a_larger_src():
    check_gradgrad(lambda *t: scatter_larger_src(mg, *t), x34(), x34())


def test_cat_of_skipped_empty_tensor():
    """Cat skips PyTorch's legacy 1-D empty tensors; their gradient stays empty under create_graph too."""
    f = lambda lib, x, e: bend(lib.cat([e, x, e * 2], 0))  # noqa: E731
    arrays = [normal(2, 3), np.zeros(0)]
    check_gradgrad(lambda *t: f(mg, *t), *arrays)
    assert_double_mirror(*run_both(f), *arrays)


def test_matmul_graph_backward_float32_gradients_are_float32():
    a, b = (mg.tensor(normal(2, 3).astype(np.float32), requires_grad=True) for _ in range(2))
    ga, gb = mg.autograd.grad(bend(a @ b.t()).sum(), [a, b], create_graph=True)
    assert ga.dtype == gb.dtype == np.float32 and ga.requires_grad and gb.requires_grad


# ----------------------------------------------------------------------------- singular-value norms
@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (3, 3), (2, 3, 2)])
@pytest.mark.parametrize("ord_", ["nuc", 2, -2])
def test_singular_value_norm_double_backward(ord_, shape):
    f = lambda lib, a: lib.linalg.matrix_norm(a, ord_) * a.sum((-2, -1))  # noqa: E731
    a = normal(*shape)
    check_gradgrad(lambda t: f(mg, t), a)
    assert_double_mirror(*run_both(f), a)


def test_singular_value_norm_third_order():
    """The norms come from ``svdvals``, whose backward is written with minigrad ops (the SVD itself): the
    gradient of the nuclear norm, U Vh, is differentiable to any order; its second derivative against finite
    differences."""
    x = mg.tensor(normal(3, 2), requires_grad=True)

    def gradient(t):
        (g,) = mg.autograd.grad(mg.linalg.matrix_norm(t, "nuc"), [t], create_graph=True)
        return g * g.exp()
    assert mg.gradgradcheck(gradient, [x], eps=1e-6, atol=1e-5, rtol=1e-4)


# ----------------------------------------------------------------------------- the checks catch a wrong one
def _factor_two_off(right, ctx, dout):
    """b's gradient twice too large: the first-order comparison with the ordinary backward fails."""
    da, db = right(ctx, dout)
    return da, None if db is None else db * 2


def _graph_cut(right, ctx, dout):
    """a's gradient with the right values but no dependence on b or dout: only the second order is wrong."""
    da, db = right(ctx, dout)
    return (None if da is None else da.detach() + da * 0), db


@pytest.mark.parametrize("wrong", [_factor_two_off, _graph_cut])
def test_a_wrong_graph_backward_is_caught(monkeypatch, wrong):
    """A deliberately wrong MatMul graph_backward fails both gradgradcheck and the PyTorch mirror."""
    right = MatMul.graph_backward
    monkeypatch.setattr(MatMul, "graph_backward", staticmethod(lambda ctx, dout: wrong(right, ctx, dout)))
    f, arrays = CASES["matmul (2, 3) @ (3, 2)"]
    with pytest.raises(mg.autograd.GradcheckError):
        check_gradgrad(lambda *t: f(mg, *t), *arrays)
    with pytest.raises(AssertionError):
        assert_double_mirror(*run_both(f), *arrays)
