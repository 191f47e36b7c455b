"""The tensor operations ported PyTorch code uses beyond the basics: movement (unbind, narrow, movedim, roll,
flip, diagonals, repeat_interleave), bmm/outer/einsum, norms, sort/topk, gather/scatter/index_select/
masked_select, cumsum/cumprod, more unary and binary math, comparisons and closeness.

Each differentiable op is written once as ``f(lib, *tensors)`` and run with minigrad and with torch
(forward and every gradient, random upstream gradient, float64), then gradchecked in float64.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import assert_mirror, check_grad, run_both, torch_or_skip, torch_raises
from .strategies import check_on_views


def mirror_and_gradcheck(f, *arrays):
    assert_mirror(*run_both(f), *arrays)
    check_grad(lambda *t: f(mg, *t), *arrays)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


# name -> (f(lib, *tensors), input shapes); values are standard normal (distinct: no ties, no kinks)
DIFFERENTIABLE = {
    # movement
    "unbind": (lambda m, x: m.stack([p * (i + 1) for i, p in enumerate(m.unbind(x, 1))], 0), [(2, 3, 4)]),
    "unbind_method": (lambda m, x: x.unbind()[1], [(3, 2)]),
    "narrow": (lambda m, x: m.narrow(x, 1, 1, 2), [(2, 4, 3)]),
    "narrow_negative_start": (lambda m, x: x.narrow(-1, -2, 2), [(2, 4, 3)]),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, 2), [(2, 3, 4)]),
    "swapdims": (lambda m, x: x.swapdims(-1, 1), [(2, 3, 4)]),
    "movedim": (lambda m, x: m.movedim(x, 0, -1), [(2, 3, 4)]),
    "movedim_tuple": (lambda m, x: x.movedim((0, 1), (2, 0)), [(2, 3, 4, 5)]),
    "moveaxis": (lambda m, x: m.moveaxis(x, -1, 0), [(2, 3, 4)]),
    "roll": (lambda m, x: m.roll(x, 1, 0), [(3, 4)]),
    "roll_multi": (lambda m, x: x.roll((2, -1), (1, 0)), [(3, 4)]),
    "roll_flat": (lambda m, x: x.roll(5), [(3, 4)]),
    "flip": (lambda m, x: m.flip(x, (0, 2)), [(2, 3, 4)]),
    "fliplr": (lambda m, x: m.fliplr(x), [(2, 3)]),
    "flipud": (lambda m, x: x.flipud(), [(2, 3)]),
    "diagonal": (lambda m, x: m.diagonal(x), [(3, 4)]),
    "diagonal_offset": (lambda m, x: x.diagonal(1, 0, 2), [(3, 2, 4)]),
    "diagonal_negative": (lambda m, x: x.diagonal(-1, -1, 0), [(3, 2, 4)]),
    "diag_vector": (lambda m, x: m.diag(x), [(3,)]),
    "diag_vector_offset": (lambda m, x: m.diag(x, -2), [(3,)]),
    "diag_matrix": (lambda m, x: x.diag(1), [(3, 4)]),
    "diag_embed": (lambda m, x: m.diag_embed(x), [(2, 3)]),
    "diag_embed_dims": (lambda m, x: m.diag_embed(x, 1, 0, 2), [(2, 3)]),
    "repeat_interleave": (lambda m, x: m.repeat_interleave(x, 2), [(2, 3)]),
    "repeat_interleave_dim": (lambda m, x: x.repeat_interleave(idx(m, [1, 0, 3]), dim=1), [(2, 3)]),
    # products
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "outer": (lambda m, a, b: m.outer(a, b), [(3,), (4,)]),
    "einsum_matmul": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    "einsum_implicit": (lambda m, a, b: m.einsum("ij,jk", a, b), [(2, 3), (3, 4)]),
    "einsum_list": (lambda m, a, b: m.einsum("bij,bjk->bik", [a, b]), [(2, 2, 3), (2, 3, 4)]),
    "einsum_trace": (lambda m, a: m.einsum("ii", a), [(3, 3)]),
    "einsum_diagonal": (lambda m, a: m.einsum("ii->i", a), [(3, 3)]),
    "einsum_diag_mixed": (lambda m, a, b: m.einsum("iij,j->ij", a, b), [(2, 2, 3), (3,)]),
    "einsum_sum_only_here": (lambda m, a, b: m.einsum("ij,k->ik", a, b), [(2, 3), (4,)]),
    "einsum_outer": (lambda m, a, b: m.einsum("i,j->ij", a, b), [(2,), (3,)]),
    "einsum_three": (lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), [(2, 3), (3, 4), (4, 2)]),
    "einsum_ellipsis": (lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), [(2, 3, 4), (1, 4, 2)]),
    "einsum_ellipsis_rank": (lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), [(3, 4), (2, 4, 2)]),
    "einsum_ellipsis_middle": (lambda m, a, b: m.einsum("i...j,j->i...", a, b), [(2, 3, 1, 4), (4,)]),
    "einsum_ellipsis_summed": (lambda m, a: m.einsum("...ij->ij", a), [(2, 3, 4)]),
    "einsum_attention": (lambda m, q, k: m.einsum("bhqd,bhkd->bhqk", q, k), [(2, 2, 3, 4), (2, 2, 5, 4)]),
    "einsum_implicit_uppercase": (lambda m, a, b: m.einsum("bA,c", a, b), [(2, 3), (4,)]),  # output "Abc"
    "einsum_spaces": (lambda m, a, b: m.einsum("i j , j -> i", a, b), [(2, 3), (3,)]),
    # norms
    "norm": (lambda m, x: m.norm(x), [(3, 4)]),
    "norm_method_p1": (lambda m, x: x.norm(1, 1), [(3, 4)]),
    "norm_p3_keepdim": (lambda m, x: x.norm(3, (0, 2), keepdim=True), [(2, 3, 4)]),
    "norm_fro_dims": (lambda m, x: m.norm(x, "fro", (1, 2)), [(2, 3, 4)]),
    "norm_inf": (lambda m, x: x.norm(float("inf"), 0), [(3, 4)]),
    "norm_nuc": (lambda m, x: m.norm(x, "nuc"), [(3, 4)]),
    "vector_norm": (lambda m, x: m.linalg.vector_norm(x), [(3, 4)]),
    "vector_norm_half": (lambda m, x: m.linalg.vector_norm(x, 0.5, -1), [(3, 4)]),
    "vector_norm_neg": (lambda m, x: m.linalg.vector_norm(x, -1.5, (0, 1)), [(3, 4)]),
    "vector_norm_neg_inf": (lambda m, x: m.linalg.vector_norm(x, float("-inf"), 1, True), [(3, 4)]),
    "matrix_norm_fro": (lambda m, x: m.linalg.matrix_norm(x), [(2, 3, 4)]),
    "matrix_norm_nuc": (lambda m, x: m.linalg.matrix_norm(x, "nuc", (0, 2)), [(3, 2, 4)]),
    "matrix_norm_nuc_keepdim": (lambda m, x: m.linalg.matrix_norm(x, "nuc", (2, 0), keepdim=True), [(3, 2, 4)]),
    "matrix_norm_2": (lambda m, x: m.linalg.matrix_norm(x, 2), [(2, 3, 4)]),
    "matrix_norm_minus2": (lambda m, x: m.linalg.matrix_norm(x, -2), [(2, 4, 3)]),
    "matrix_norm_1": (lambda m, x: m.linalg.matrix_norm(x, 1), [(2, 3, 4)]),
    "matrix_norm_minus1": (lambda m, x: m.linalg.matrix_norm(x, -1, keepdim=True), [(2, 3, 4)]),
    "matrix_norm_inf": (lambda m, x: m.linalg.matrix_norm(x, float("inf"), (0, 1)), [(3, 4, 2)]),
    "matrix_norm_minus_inf": (lambda m, x: m.linalg.matrix_norm(x, float("-inf")), [(3, 4)]),
    "linalg_norm": (lambda m, x: m.linalg.norm(x), [(3, 4)]),
    "linalg_norm_vector": (lambda m, x: m.linalg.norm(x, 3, 1), [(3, 4)]),
    "linalg_norm_matrix_ord": (lambda m, x: m.linalg.norm(x, 1), [(3, 4)]),
    # ordering
    "sort": (lambda m, x: m.sort(x).values, [(3, 4)]),
    "sort_descending_dim0": (lambda m, x: x.sort(0, descending=True)[0], [(3, 4)]),
    "topk": (lambda m, x: m.topk(x, 2).values, [(3, 4)]),
    "topk_smallest": (lambda m, x: x.topk(2, 0, largest=False)[0], [(3, 4)]),
    "topk_0d": (lambda m, x: x.topk(1)[0], [()]),
    # gather and scatter
    "gather": (lambda m, x: m.gather(x, 1, idx(m, [[0, 0, 2], [1, 0, 1]])), [(2, 3)]),
    "gather_smaller_index": (lambda m, x: x.gather(0, idx(m, [[2, 0], [2, 1]])), [(3, 4)]),
    "scatter": (lambda m, x, s: m.scatter(x, 1, idx(m, [[2, 0], [1, 2]]), s), [(2, 3), (2, 2)]),
    "scatter_value": (lambda m, x: x.scatter(0, idx(m, [[1, 0]]), value=2.5), [(2, 3)]),
    "scatter_add": (lambda m, x, s: m.scatter_add(x, 0, idx(m, [[1, 1, 0], [1, 0, 0]]), s), [(2, 3), (2, 3)]),
    "index_select": (lambda m, x: m.index_select(x, 1, idx(m, [2, 0, 2])), [(2, 3)]),
    "index_select_0d_index": (lambda m, x: x.index_select(0, idx(m, 1)), [(3, 2)]),
    "masked_select": (lambda m, x: m.masked_select(x, m.tensor([[True, False, True]])), [(2, 3)]),
    "masked_select_broadcast_input": (lambda m, x: x.masked_select(m.tensor([[True], [False], [True]])), [(1, 4)]),
    # cumulative
    "cumsum": (lambda m, x: m.cumsum(x, 1), [(3, 4)]),
    "cumsum_method": (lambda m, x: x.cumsum(dim=-3), [(2, 3, 4)]),
    "cumprod": (lambda m, x: m.cumprod(x, 0), [(3, 4)]),
    "cumprod_0d": (lambda m, x: x.cumprod(0), [()]),
    # elementwise math
    "log1p": (lambda m, x: m.log1p(x.abs()), [(3, 4)]),
    "expm1": (lambda m, x: x.expm1(), [(3, 4)]),
    "log2": (lambda m, x: m.log2(x.abs()), [(3, 4)]),
    "log10": (lambda m, x: x.abs().log10(), [(3, 4)]),
    "reciprocal": (lambda m, x: m.reciprocal(x), [(3, 4)]),
    "erf": (lambda m, x: m.erf(x * 2), [(3, 4)]),
    "atan2": (lambda m, y, x: m.atan2(y, x), [(3, 4), (3, 4)]),
    "atan2_broadcast": (lambda m, y, x: y.atan2(x), [(3, 1), (4,)]),
    "arctan2_0d": (lambda m, y, x: m.arctan2(y, x), [(3,), ()]),
    "frac": (lambda m, x: m.frac(x * 3), [(3, 4)]),
    "clamp_min": (lambda m, x: m.clamp_min(x, 0.1), [(3, 4)]),
    "clamp_max": (lambda m, x: x.clamp_max(-0.1), [(3, 4)]),
    "clamp_min_tensor": (lambda m, x, lo: x.clamp_min(lo), [(3, 4), (4,)]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_differentiable_mirror_and_gradcheck(name):
    f, shapes = DIFFERENTIABLE[name]
    mirror_and_gradcheck(f, *(randn(*s, seed=i) for i, s in enumerate(shapes)))


# name -> f(lib, x): piecewise-constant ops, whose gradient PyTorch defines as zero
PIECEWISE = {
    "sign": lambda m, x: m.sign(x),
    "floor": lambda m, x: x.floor(),
    "ceil": lambda m, x: m.ceil(x),
    "trunc": lambda m, x: m.trunc(x),
    "fix": lambda m, x: x.fix(),
    "round": lambda m, x: m.round(x),
    "round_decimals": lambda m, x: x.round(decimals=2),
    "round_negative_decimals": lambda m, x: m.round(x * 100, decimals=-1),
}


@pytest.mark.parametrize("name", sorted(PIECEWISE))
def test_piecewise_constant_ops(name):
    values = np.array([[-2.5, -1.5, -0.5, 0.0, 0.5], [1.5, 2.5, 0.123456, -3.7, 7.25]])
    assert_mirror(*run_both(PIECEWISE[name]), values)


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "trunc", "round"])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_piecewise_on_integers_keeps_dtype(name, dtype):
    torch = torch_or_skip()
    values = np.array([-3, 0, 4], dtype=dtype)
    got = PIECEWISE[name](mg, mg.tensor(values))
    expected = PIECEWISE[name](torch, torch.tensor(values))
    assert got.dtype == np.dtype(dtype) and str(expected.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_scatter_src_larger_than_index():
    """Only src's part that index covers is used; PyTorch's own backward fails on this shape (it returns src's
    gradient at index's shape), so the forward is mirrored and the gradients gradchecked."""
    f = lambda m, x, s: x.scatter(0, idx(m, [[1, 0]]), s)  # noqa: E731
    x, s = randn(2, 3), randn(2, 3, seed=1)
    assert_mirror(*run_both(f), x, s, grads=[False, False])
    check_grad(lambda *t: f(mg, *t), x, s)
    xt, st_ = mg.tensor(x, requires_grad=True), mg.tensor(s, requires_grad=True)
    f(mg, xt, st_).sum().backward()
    np.testing.assert_array_equal(st_.grad.numpy(), [[1, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(xt.grad.numpy(), [[1, 0, 1], [0, 1, 1]])  # (1, 0), (0, 1) overwritten


# --------------------------------------------------------------------------- views
@pytest.mark.parametrize("make", [
    lambda x: x.narrow(1, 1, 2),
    lambda x: x.diagonal(),
    lambda x: x.diagonal(1, 1, 0),
    lambda x: x.movedim(0, 1),
    lambda x: x.swapaxes(0, 1),
    lambda x: x.moveaxis(1, 0),
], ids=["narrow", "diagonal", "diagonal_offset", "movedim", "swapaxes", "moveaxis"])
def test_views_share_memory_and_writes_reach_the_base(make):
    """As in PyTorch: these return views; writing into one changes the base and its gradient history."""
    torch = torch_or_skip()
    values, upstream = randn(3, 4), randn(3, 4, seed=1)
    results = []
    for lib in (mg, torch):
        leaf = lib.tensor(values, requires_grad=True)
        h = leaf * 1.0
        view = make(h)
        view.mul_(3.0)
        h.backward(lib.tensor(upstream))
        results.append((h.detach().numpy(), leaf.grad.numpy()))
    for got, expected in zip(*results):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    x = mg.tensor(values)
    assert np.shares_memory(make(x).numpy(), x.numpy())


@pytest.mark.parametrize("make", [lambda x: x.flip(0), lambda x: x.roll(1, 0), lambda x: mg.diag(x),
                                  lambda x: x.repeat_interleave(1, 0)], ids=["flip", "roll", "diag", "interleave"])
def test_copies_do_not_share_memory(make):
    x = mg.tensor(randn(3, 4))
    assert not np.shares_memory(make(x).numpy(), x.numpy())


@pytest.mark.parametrize("f", [lambda t: t.diagonal(1).sum(-1), lambda t: mg.einsum("bij,bjk->bik", t, t.mT),
                               lambda t: t.cumprod(-1), lambda t: t.norm(3, -1), lambda t: t.sort(1).values,
                               lambda t: t.flip(2).narrow(2, 1, 3)],
                         ids=["diagonal", "einsum", "cumprod", "norm", "sort", "flip_narrow"])
def test_ops_read_strided_memory(f):
    base = randn(4, 3, 5)
    check_on_views(f, base.transpose(1, 0, 2)[:, ::2])   # (3, 2, 5), non-contiguous


# --------------------------------------------------------------------------- results that are not differentiable
def both(f, *arrays):
    """f(lib, *tensors) run with minigrad and torch; the two results as ndarrays (or tuples of them)."""
    torch = torch_or_skip()
    got = f(mg, *(mg.tensor(a) for a in arrays))
    expected = f(torch, *(torch.tensor(a) for a in arrays))
    return got, expected


def assert_same(got, expected):
    """Same dtype, shape and values (exact: integers, bools, copies of the input's values)."""
    assert str(got.dtype) == str(expected.dtype).replace("torch.", ""), (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


WITH_NAN_AND_TIES = np.array([[1.0, np.nan, 1.0, 0.0, -2.0], [2.0, 2.0, -1.0, 3.0, 2.0]])


@pytest.mark.parametrize("kwargs", [{}, {"descending": True}, {"dim": 0}, {"dim": 0, "descending": True}])
def test_sort_nan_and_ties_stable(kwargs):
    got, expected = both(lambda m, x: m.sort(x, stable=True, **kwargs), WITH_NAN_AND_TIES)
    assert type(got).__name__ == "sort" and got._fields == ("values", "indices")
    assert_same(got.values, expected.values)
    assert_same(got.indices, expected.indices)
    got, expected = both(lambda m, x: m.argsort(x, stable=True, **kwargs), WITH_NAN_AND_TIES)
    assert_same(got, expected)


@pytest.mark.parametrize("values", [np.array([True, False, True, False]), np.array([3, -1, 3, 0], dtype=np.int32),
                                    np.array([[5, 1], [1, 5]], dtype=np.int64)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_integers_and_bools(values, descending):
    got, expected = both(lambda m, x: x.sort(descending=descending, stable=True), values)
    assert_same(got.values, expected.values)
    assert_same(got.indices, expected.indices)


@pytest.mark.parametrize("k, dim, largest", [(2, -1, True), (1, 0, False), (0, 1, True), (3, 1, False)])
def test_topk_values_and_indices(k, dim, largest):
    values = randn(3, 4)
    got, expected = both(lambda m, x: m.topk(x, k, dim, largest), values)
    assert type(got).__name__ == "topk" and got._fields == ("values", "indices")
    assert_same(got.values, expected.values)
    assert_same(got.indices, expected.indices)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
@settings(max_examples=30, deadline=None)
def test_sort_topk_sweep(shape, data):
    """Random shapes, dims and k, values with many ties (small integers as floats): stable order as PyTorch."""
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[dim]))
    values = np.random.default_rng(data.draw(st.integers(0, 99))).integers(-2, 3, shape).astype(np.float64)
    got, expected = both(lambda m, x: m.sort(x, dim=dim, descending=True, stable=True), values)
    assert_same(got.indices, expected.indices)
    got, expected = both(lambda m, x: m.topk(x, k, dim, largest=False), values)
    assert_same(got.values, expected.values)
    assert_mirror(*run_both(lambda m, x: m.sort(m.sin(x * 7 + 1), dim).values), values)


@pytest.mark.parametrize("values", [np.array([[0, 1.5], [2, 0]]), np.array([[[True, False]], [[False, True]]]),
                                    np.array([0, 0, 0]), np.array(3.0), np.array(0)])
def test_nonzero(values):
    got, expected = both(lambda m, x: m.nonzero(x), values)
    assert_same(got, expected)
    got, expected = both(lambda m, x: x.nonzero(as_tuple=True), values)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e)
    got, expected = both(lambda m, x: m.argwhere(x), values)
    assert_same(got, expected)


@pytest.mark.parametrize("f", [
    lambda m, x: m.cumsum(x, 0), lambda m, x: x.cumprod(1), lambda m, x: m.cumsum(x, 1, dtype=m.float64),
    lambda m, x: (x > 0).cumsum(0), lambda m, x: m.repeat_interleave(x, 2, 0),
    lambda m, x: m.repeat_interleave(x, m.tensor([2, 0, 1]), dim=1), lambda m, x: x.repeat_interleave(2),
    lambda m, x: m.repeat_interleave(m.tensor([1, 0, 2])), lambda m, x: m.masked_select(x, x > 0),
    lambda m, x: m.gather(x, 0, m.tensor([[1, 0, 1]])), lambda m, x: x.index_select(1, m.tensor([2, 2], dtype=m.int32)),
    lambda m, x: m.flip(x, [0, 1]), lambda m, x: m.roll(x, -1, 1), lambda m, x: m.diag(x, -1),
    lambda m, x: m.diagonal(x, 5), lambda m, x: m.narrow(x, 0, 2, 0), lambda m, x: x.sign(),
    lambda m, x: m.diag(x[0]), lambda m, x: m.bmm(x[None], x.T[None]), lambda m, x: m.outer(x[0], x[1]),
    lambda m, x: m.scatter_add(x, 1, m.tensor([[0, 0], [2, 2]]), x),
    lambda m, x: m.norm(x.double(), 0), lambda m, x: m.einsum("ij->j", x),
], ids=lambda f: "")
def test_integer_results_and_dtypes(f):
    """On integer tensors: the result dtype and values PyTorch gives (int64 accumulation, float promotion)."""
    values = np.array([[3, -1, 2], [0, 4, -5]], dtype=np.int64)
    got, expected = both(f, values)
    assert_same(got, expected)


def test_views_from_unbind_share_memory():
    """unbind's slices are views as in PyTorch (which refuses in-place writes into them; minigrad allows
    them, and the write reaches the base: see the in-place view tests)."""
    x = mg.tensor(randn(3, 4))
    for i, piece in enumerate(x.unbind(1)):
        assert np.shares_memory(piece.numpy(), x.numpy())
        np.testing.assert_array_equal(piece.numpy(), x.numpy()[:, i])


def test_atan2_of_integers_is_float32():
    got, expected = both(lambda m, y, x: m.atan2(y, x), np.array([[3, -1, 0]]), np.array([[3], [-2]]))
    assert got.dtype == np.float32 and str(expected.dtype) == "torch.float32"
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)  # float32 libm: last bits may differ


@pytest.mark.parametrize("zeros", [[(0, 1)], [(1, 0), (1, 2)], [(2, 3)], [(0, 0), (0, 3), (2, 0)]])
def test_cumprod_gradient_with_zeros(zeros):
    """The gradient at and before a slice's first zero, and 0 after it (a second zero in the slice too)."""
    values = randn(3, 4)
    for position in zeros:
        values[position] = 0.0
    for dim in (0, 1):
        mirror_and_gradcheck(lambda m, x: m.cumprod(x, dim), values)


@pytest.mark.parametrize("ord", [2, 1, 0.5, 3, float("inf"), float("-inf"), -1, 0])
def test_vector_norm_at_zeros_and_ties(ord):
    """Rows of zeros, zero entries and tied largest magnitudes: PyTorch's subgradients."""
    values = np.array([[3.0, -3.0, 1.0], [0.0, 0.0, 0.0], [0.0, 2.0, -0.5]])
    grads = None if ord != 0 else [False]  # PyTorch gives the 0-norm (a count) no gradient
    assert_mirror(*run_both(lambda m, x: m.linalg.vector_norm(x, ord, 1)), values, grads=grads)


def test_norm_0_has_no_gradient_as_in_pytorch():
    """PyTorch defines no gradient for the count of nonzeros: backward leaves x.grad None, and next to another
    term x's gradient is that term's alone."""
    x = mg.tensor(randn(3), requires_grad=True)
    mg.linalg.vector_norm(x, 0).backward()
    assert x.grad is None
    (mg.linalg.vector_norm(x, 0) + (x * 2).sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))


@pytest.mark.parametrize("ord", [1, float("inf")])
def test_matrix_norm_ties_share_the_gradient(ord):
    values = np.array([[1.0, -2.0], [-2.0, 1.0]])  # equal column and row sums
    assert_mirror(*run_both(lambda m, x: m.linalg.matrix_norm(x, ord)), values)


# --------------------------------------------------------------------------- comparisons and closeness
COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal", "not_equal",
               "logical_xor"]


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_as_functions_and_methods(name):
    a, b = np.array([[1.0, 2.0, np.nan]]), np.array([[1.0], [3.0]])
    got, expected = both(lambda m, x, y: getattr(m, name)(x, y), a, b)
    assert_same(got, expected)
    if name != "logical_xor":  # PyTorch takes a number there only for the comparisons
        got, expected = both(lambda m, x, y: getattr(x, name)(2.0), a, b)
        assert_same(got, expected)


@pytest.mark.parametrize("kwargs", [{}, {"rtol": 0.1}, {"atol": 0.5}, {"equal_nan": True}])
def test_isclose_allclose_equal(kwargs):
    a = np.array([1.0, np.nan, np.inf, -np.inf, 100.0, 0.0])
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 105.0, 0.3])
    got, expected = both(lambda m, x, y: m.isclose(x, y, **kwargs), a, b)
    assert_same(got, expected)
    got, expected = both(lambda m, x, y: x.allclose(y, **kwargs), a, a)
    assert got is expected
    got, expected = both(lambda m, x, y: m.allclose(x, y, **kwargs), a[:1], b[:1])
    assert got is expected
    for x, y in [(a, a), (a[:1], b[:1]), (a, a[:3]), (np.arange(3), np.arange(3.0))]:
        got, expected = both(lambda m, s, t: m.equal(s, t), x, y)
        assert got is expected


def test_all_any_with_dim():
    values = np.array([[True, False], [True, True]])
    for f in (lambda m, x: x.all(1), lambda m, x: m.any(x, 0, keepdim=True), lambda m, x: m.all(x)):
        assert_same(*both(f, values))


# --------------------------------------------------------------------------- errors
# f(lib) -> the bad call; mg's message must contain ``match`` (PyTorch's wording where it has one)
ERRORS = {
    "narrow_length": (lambda m: m.narrow(m.ones(2, 3), 0, 0, -1), "length must be non-negative"),
    "narrow_past_end": (lambda m: m.ones(2, 3).narrow(1, 2, 3), r"start \(2\) \+ length \(3\) exceeds dimension size"),
    "narrow_start": (lambda m: m.ones(2, 3).narrow(1, 5, 0), r"start out of range .* but got 5"),
    "unbind_0d": (lambda m: m.unbind(m.tensor(1.0)), "tensor has no dimensions"),
    "movedim_lengths": (lambda m: m.movedim(m.ones(2, 3), (0, 1), (1,)), "should contain the same number of dims"),
    "movedim_repeated": (lambda m: m.movedim(m.ones(2, 3), (0, 0), (0, 1)), "repeated dim in `source`"),
    "roll_align": (lambda m: m.roll(m.ones(2, 3), (1, 2), 0), "shifts and dimensions must align"),
    "roll_flat_align": (lambda m: m.roll(m.ones(2, 3), (1, 2)), "shifts and dimensions must align"),
    "flip_repeated": (lambda m: m.flip(m.ones(2, 3), (0, 0)), "dim 0 appears multiple times"),
    "fliplr_1d": (lambda m: m.fliplr(m.ones(3)), r"Input must be >= 2-d"),
    "diagonal_same_dims": (lambda m: m.diagonal(m.ones(2, 3), 0, 1, 1), "diagonal dimensions cannot be identical"),
    "diag_3d": (lambda m: m.diag(m.ones(2, 3, 4)), r"Supports 1D or 2D tensors. Got 3D"),
    "repeat_interleave_sizes": (lambda m: m.repeat_interleave(m.ones(3), m.tensor([1, 2])),
                                "repeats must have the same size as input along dim"),
    "repeat_interleave_negative": (lambda m: m.repeat_interleave(m.ones(3), -1), "Repeats must be non-negative"),
    "bmm_2d": (lambda m: m.bmm(m.ones(2, 3), m.ones(2, 3)), "batch1 must be a 3D tensor"),
    "bmm_sizes": (lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 5, 4)),
                  r"first two dimensions of batch2 tensor to be: \[2, 4\] but got: \[2, 5\]"),
    "outer_2d": (lambda m: m.outer(m.ones(2, 2), m.ones(2)), "outer: Expected 1-D argument self, but got 2-D"),
    "einsum_operands": (lambda m: m.einsum("ij,jk", m.ones(2, 3)), "fewer operands were provided"),
    "einsum_rank": (lambda m: m.einsum("ij", m.ones(2, 3, 4)), r"number of subscripts in the equation \(2\)"),
    "einsum_sizes": (lambda m: m.einsum("ij,jk", m.ones(2, 3), m.ones(4, 2)), "einsum()"),
    "topk_k": (lambda m: m.topk(m.ones(3), 4), "selected index k out of range"),
    "gather_bounds": (lambda m: m.gather(m.ones(2, 3), 1, m.tensor([[5]])), "index 5 is out of bounds for dimension 1"),
    "gather_negative": (lambda m: m.gather(m.ones(2, 3), 1, m.tensor([[-1]])), "index -1 is out of bounds"),
    "gather_float_index": (lambda m: m.gather(m.ones(2, 3), 1, m.tensor([[0.0]])), "int64 for index"),
    "index_select_2d": (lambda m: m.index_select(m.ones(2, 3), 1, m.tensor([[0]])), "Index is supposed to be a vector"),
    "index_select_float": (lambda m: m.index_select(m.ones(2, 3), 1, m.tensor([1.0])), "int32 or int64 for index"),
    "masked_select_mask": (lambda m: m.masked_select(m.ones(2, 3), m.ones(2, 3)), "expected BoolTensor for mask"),
    "scatter_missing": (lambda m: m.scatter(m.ones(2, 3), 0, m.tensor([[0]])), "scatter()"),
    "cumsum_dim": (lambda m: m.cumsum(m.ones(2), 2), "Dimension out of range"),
    "vector_norm_int": (lambda m: m.linalg.vector_norm(m.tensor([1, 2])), "Expected a floating point"),
    "vector_norm_empty_inf": (lambda m: m.linalg.vector_norm(m.ones(0), float("inf")), "on an empty tensor"),
    "matrix_norm_ord": (lambda m: m.linalg.matrix_norm(m.ones(2, 2), 3), "Order 3 not supported"),
    "matrix_norm_1d": (lambda m: m.linalg.matrix_norm(m.ones(3)), "must have at least 2 dimensions"),
    "norm_nuc_3d": (lambda m: m.norm(m.ones(2, 3, 4), "fro", (0, 1, 2)), "dim must be a 2-tuple"),
    "atan2_number": (lambda m: m.atan2(m.ones(2), 0.5), "must be Tensor, not float"),
    "round_int_decimals": (lambda m: m.round(m.tensor([1, 2]), decimals=1), "not implemented for 'Long'"),
    "frac_int": (lambda m: m.frac(m.tensor([1, 2])), "not implemented for 'Long'"),
    "isclose_dtypes": (lambda m: m.isclose(m.ones(2), m.ones(2, dtype=m.float64)), "Float did not match Double"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_pytorch(name):
    f, match = ERRORS[name]
    expected = torch_raises(f)
    with pytest.raises(expected.type, match=match):
        f(mg)


def test_failed_call_changes_nothing():
    x = mg.tensor(randn(2, 3), requires_grad=True)
    before = x.detach().numpy().copy()
    with pytest.raises(RuntimeError):
        mg.scatter(x, 1, mg.tensor([[7]]), mg.ones(1, 1, dtype=mg.float64))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None and x._version == 0


# --------------------------------------------------------------------------- einsum sweep
@st.composite
def einsum_cases(draw):
    """A random two-operand equation over letters a-e (sizes 1-3; repeats within an operand allowed), with an
    explicit output of distinct letters drawn from those used, or the implicit form."""
    sizes = dict(zip("abcde", draw(st.lists(st.integers(1, 3), min_size=5, max_size=5))))
    ops = [draw(st.lists(st.sampled_from("abcde"), min_size=0, max_size=3)) for _ in range(2)]
    used = sorted(set(ops[0]) | set(ops[1]))
    explicit = draw(st.booleans())
    output = draw(st.permutations(used).flatmap(lambda p: st.integers(0, len(p)).map(lambda n: p[:n])))
    equation = ",".join("".join(o) for o in ops) + ("->" + "".join(output) if explicit else "")
    return equation, [tuple(sizes[c] for c in o) for o in ops]


@given(case=einsum_cases(), seed=st.integers(0, 99))
@settings(max_examples=60, deadline=None)
def test_einsum_sweep(case, seed):
    equation, shapes = case
    arrays = [randn(*s, seed=seed + i) for i, s in enumerate(shapes)]
    mirror_and_gradcheck(lambda m, a, b: m.einsum(equation, a, b), *arrays)


def test_one_hot_matches_torch():
    torch = torch_or_skip()
    for classes, n in (([0, 2, 1], 4), ([[0, 2], [1, 1]], -1), ([], 3)):
        ours = mg.nn.functional.one_hot(mg.tensor(classes, dtype=mg.int64), n)
        theirs = torch.nn.functional.one_hot(torch.tensor(classes, dtype=torch.int64), n)
        assert ours.dtype == mg.int64 and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for classes, n in (([0.0, 1.0], -1), ([0, 5], 3), ([-1, 0], -1), ([], -1)):
        for lib in (torch, mg):
            dtype = lib.float32 if isinstance(classes[0] if classes else 0, float) else lib.int64
            with pytest.raises(RuntimeError):
                lib.nn.functional.one_hot(lib.tensor(classes, dtype=dtype), n)
