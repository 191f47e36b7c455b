"""Sparse COO tensors (issue 28, item 5), mirrored against PyTorch in float64 with random upstream gradients:
construction and its checks, to_dense/to_sparse/coalesce and the accessors, sparse @ dense in every spelling
with gradients to the values and to the dense operand, sparse.sum/softmax, the arithmetic, a sparse leaf's
.grad, SciPy and NumPy products alike, double backward, a mutant backward caught. The graph networks
written as public code (pygcn's GCN, pyGAT's sparse GAT with its custom autograd Function) are programs of
the compatibility suite, ``tests/compat/gcn_sparse.py`` and ``gat_sparse.py``, run unchanged in both
libraries by ``tests/test_compat.py``."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.sparse import products
from tests.mirror import assert_mirror, check_grad, check_gradgrad, run_both, torch_or_skip

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled")

IDX = np.array([[0, 1, 1, 2, 0, 3], [1, 0, 2, 1, 1, 3]])     # (0, 1) twice: uncoalesced
RNG = np.random.default_rng(0)
V = RNG.standard_normal(6)
D = RNG.standard_normal((4, 3))
SIZE = (4, 4)


def S(lib, v, size=SIZE):
    return lib.sparse_coo_tensor(lib.tensor(IDX), v, size)


def mirror(f, *arrays, **kwargs):
    """``f(lib, *tensors)`` in both libraries: output and gradients of every float input (``assert_mirror``)."""
    assert_mirror(*run_both(f), *arrays, **kwargs)


# --------------------------------------------------------------------------- construction
def test_construction_mirrors_torch():
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        s = S(lib, lib.tensor(V))
        c = s.coalesce()
        results.append((tuple(s.shape), s.is_sparse, repr(s.layout).rpartition(".")[2], s.is_coalesced(), s._nnz(),
                        s.sparse_dim(), s.dense_dim(), s.numel(), s.dim(), c.is_coalesced(), c._nnz(),
                        c.indices().tolist(), c.values().tolist(), s.to_dense().tolist(), s._indices().tolist(),
                        s._values().tolist(), tuple(lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(V)).shape),
                        str(lib.sparse_coo_tensor(IDX.tolist(), [1, 2, 3, 4, 5, 6]).dtype).rpartition(".")[2],
                        str(lib.sparse_coo_tensor(IDX.tolist(), V.tolist()).dtype).rpartition(".")[2],
                        str(S(lib, lib.tensor(V), SIZE).float().dtype).rpartition(".")[2],
                        s.t().is_coalesced(), c.t().is_coalesced(), (s * 2).is_coalesced(), (c * 2).is_coalesced(),
                        (s + s).is_coalesced(), (c + c).is_coalesced(), s.to_sparse() is s))
    assert results[0] == results[1]


def test_hybrid_to_sparse_mirrors_torch():
    x = np.array([[0.0, 1.0], [0.0, 0.0], [2.0, 0.0]])
    mirror(lambda L, t: t.to_sparse(1).to_dense() * 3, x)
    ours, theirs = mg.tensor(x).to_sparse(1), torch_or_skip().tensor(x).to_sparse(1)
    assert ours._indices().tolist() == theirs._indices().tolist()
    assert ours._values().tolist() == theirs._values().tolist()


@pytest.mark.parametrize("make", [
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V[:5]), SIZE),                      # nnz mismatch
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V), (3, 4), check_invariants=True),  # index 3 >= 3
    lambda L: L.sparse_coo_tensor(L.tensor(-IDX), L.tensor(V), SIZE, check_invariants=True),   # negative
    lambda L: L.sparse_coo_tensor(L.tensor(IDX[0]), L.tensor(V), SIZE),                        # 1-D indices
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V), SIZE).values(),                  # uncoalesced
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V), SIZE).indices(),
    lambda L: L.ones(2).is_coalesced(),
    lambda L: L.ones(2).coalesce(),
    lambda L: L.ones(2).values(),
    lambda L: L.mm(L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V), SIZE), L.ones(3, 2, dtype=L.float64)),
    lambda L: L.mm(L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V), SIZE), L.ones(4, 2)),       # float64 @ float32
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V), SIZE) + L.ones(4, 4, dtype=L.float64),
])
def test_bad_input_raises_as_torch(make):
    torch = torch_or_skip()
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError) as ours:
        make(mg)
    assert str(ours.value).split(",")[0].split(":")[0] == str(theirs.value).split(",")[0].split(":")[0]


def test_dense_only_ops_raise_not_implemented_as_torch():
    torch = torch_or_skip()
    for lib in (torch, mg):
        s = S(lib, lib.tensor(V))
        for op in (lambda t: t.exp(), lambda t: t.view(16)):
            with pytest.raises(NotImplementedError):
                op(s)
    with pytest.raises(NotImplementedError, match=r"to_dense\(\)"):
        S(mg, mg.tensor(V)).exp()


# --------------------------------------------------------------------------- gradients to values and dense
PRODUCTS = {
    "sparse.mm": lambda L, v, d: L.sparse.mm(S(L, v), d),
    "mm": lambda L, v, d: L.mm(S(L, v), d),
    "matmul": lambda L, v, d: L.matmul(S(L, v), d),
    "spmm": lambda L, v, d: L.spmm(S(L, v), d),
    "@": lambda L, v, d: S(L, v) @ d,
    "Tensor.mm": lambda L, v, d: S(L, v).mm(d),
    "dense @ sparse": lambda L, v, d: d.t() @ S(L, v),
    "mm(dense, sparse)": lambda L, v, d: L.mm(d.t(), S(L, v).t()),
    "sparse.mm(dense, sparse)": lambda L, v, d: L.sparse.mm(d.t(), S(L, v)),
    "sparse @ vector": lambda L, v, d: S(L, v) @ d[:, 0],
    "coalesced @": lambda L, v, d: S(L, v).coalesce() @ d,
    "transposed @": lambda L, v, d: S(L, v).t() @ d,
    "addmm": lambda L, v, d: L.sparse.addmm(d[:, :2] * 0 + 1, S(L, v), d[:, :2], beta=0.5, alpha=2.0),
    "scaled @": lambda L, v, d: (S(L, v) * 2.5) @ d + (S(L, v) / 4) @ d + (-S(L, v)) @ d,
    "sum of sparse @": lambda L, v, d: (S(L, v) + S(L, v * v)) @ d,
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_product_mirrors_torch(name):
    mirror(PRODUCTS[name], V, D)


DENSE_RESULTS = {
    "to_dense": lambda L, v: S(L, v).to_dense(),
    "coalesce values": lambda L, v: S(L, v).coalesce().values() * L.arange(5),
    "dense + sparse": lambda L, v: L.ones(4, 4, dtype=L.float64) + S(L, v),
    "sparse * dense": lambda L, v: (S(L, v) * L.arange(16.0, dtype=L.float64).reshape(4, 4)).to_dense(),
    "sparse.sum": lambda L, v: L.sparse.sum(S(L, v)),
    "sparse.sum dim 0": lambda L, v: L.sparse.sum(S(L, v), 0).to_dense(),
    "sparse.sum dims": lambda L, v: L.sparse.sum(S(L, v), (0, 1)),
    "Tensor.sum": lambda L, v: S(L, v).sum(),
    "sparse.sum dim 1": lambda L, v: L.sparse.sum(S(L, v), 1).to_dense(),
    "softmax dim 1": lambda L, v: L.sparse.softmax(S(L, v), 1).to_dense(),
    "softmax dim 0": lambda L, v: L.sparse.softmax(S(L, v), 0).to_dense(),
    "log_softmax": lambda L, v: L.sparse.log_softmax(S(L, v), 1).to_dense(),
}


@pytest.mark.parametrize("name", DENSE_RESULTS)
def test_values_gradient_mirrors_torch(name):
    mirror(DENSE_RESULTS[name], V)


def test_to_sparse_passes_gradients_to_the_dense_tensor():
    x = RNG.standard_normal((4, 4)) * (RNG.random((4, 4)) < 0.5)
    mirror(lambda L, x, d: L.sparse.mm(x.to_sparse(), d), x, D)
    mirror(lambda L, x: x.to_sparse().to_dense() * 2 + x.to_sparse().coalesce().to_dense(), x)


def test_hybrid_values_sum_and_to_dense():
    idx = np.array([[0, 2, 0], [1, 1, 1]])
    values = RNG.standard_normal((3, 2))
    f = lambda L, v: L.sparse.sum(L.sparse_coo_tensor(L.tensor(idx), v, (3, 2, 2)), (1, 2)).to_dense()  # noqa
    mirror(f, values)
    mirror(lambda L, v: L.sparse_coo_tensor(L.tensor(idx), v, (3, 2, 2)).to_dense(), values)


def test_sparse_leaf_gets_a_sparse_gradient_as_torch():
    torch = torch_or_skip()
    upstream = RNG.standard_normal((4, 3))
    grads = []
    for lib in (mg, torch):
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(V), SIZE, requires_grad=True)
        assert s.is_leaf and s.requires_grad and s.grad_fn is None
        lib.sparse.mm(s, lib.tensor(D)).backward(lib.tensor(upstream))
        grads.append((s.grad.is_coalesced(), s.grad._indices().tolist(), s.grad._values().numpy()))
        t = S(lib, lib.tensor(V)).requires_grad_()
        lib.sparse.mm(t, lib.tensor(D)).backward(lib.tensor(upstream))
        grads.append((t.grad.is_coalesced(), t.grad._indices().tolist(), t.grad._values().numpy()))
    for ours, theirs in ((grads[0], grads[2]), (grads[1], grads[3])):
        assert ours[:2] == theirs[:2]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def test_values_that_require_grad_make_a_non_leaf_as_torch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        v = lib.tensor(V, requires_grad=True)
        s = S(lib, v)
        assert s.requires_grad and not s.is_leaf and s.grad_fn is not None
        with pytest.raises(RuntimeError, match="leaf"):
            s.requires_grad_(False)
        assert S(lib, lib.tensor(V)).is_leaf and not S(lib, lib.tensor(V)).requires_grad


# --------------------------------------------------------------------------- SciPy and NumPy products
def test_numpy_fallback_equals_scipy_product():
    pytest.importorskip("scipy")
    rows, cols = IDX
    dense = RNG.standard_normal((4, 5))
    with_scipy = products.sparse_dense_product(V, rows, cols, 4, dense, use_scipy=True)
    with_numpy = products.sparse_dense_product(V, rows, cols, 4, dense, use_scipy=False)
    expected = np.zeros((4, 4))
    np.add.at(expected, (rows, cols), V)
    np.testing.assert_allclose(with_scipy, expected @ dense, rtol=1e-13)
    np.testing.assert_allclose(with_numpy, expected @ dense, rtol=1e-13)


def test_products_mirror_torch_without_scipy(monkeypatch):
    monkeypatch.setattr(products, "_scipy_sparse", lambda: None)
    mirror(PRODUCTS["sparse.mm"], V, D)
    mirror(PRODUCTS["dense @ sparse"], V, D)


# --------------------------------------------------------------------------- finite differences, double backward
def test_product_gradcheck_and_gradgradcheck():
    f = lambda v, d: mg.sparse.mm(S(mg, v), d)   # noqa: E731
    check_grad(f, V, D)
    check_gradgrad(f, V, D)


class _WrongEntryGrad(products.SparseDenseMM):
    """A mutant: the values' gradient reads D at the rows instead of the columns."""

    @staticmethod
    def backward(ctx, dout):
        values, dense = ctx.saved_tensors
        dv = (dout._data[ctx.rows] * dense._data[ctx.rows]).sum(-1)
        return dv, products.sparse_dense_product(values._data, ctx.cols, ctx.rows, dense.shape[0], dout._data), \
            None, None, None


def test_gradcheck_catches_a_wrong_values_gradient():
    rows, cols = IDX
    d = mg.tensor(D, requires_grad=True)
    v = mg.tensor(V, requires_grad=True)
    assert not mg.gradcheck(lambda v, d: _WrongEntryGrad.apply(v, d, rows, cols, 4), (v, d), raise_exception=False)
    assert mg.gradcheck(lambda v, d: products.SparseDenseMM.apply(v, d, rows, cols, 4), (v, d))


# --------------------------------------------------------------------------- pygcn's legacy constructor
def test_legacy_sparse_float_tensor_constructor_as_torch():
    torch = torch_or_skip()
    built = []
    for lib in (mg, torch):
        s = lib.sparse.FloatTensor(lib.tensor(IDX), lib.tensor(V.astype(np.float32)), (4, 4))
        built.append((str(s.dtype).rpartition(".")[2], s.to_dense().numpy(), isinstance(s, lib.sparse.FloatTensor)))
    assert built[0][0] == built[1][0] and built[0][2] == built[1][2]
    np.testing.assert_array_equal(built[0][1], built[1][1])


# --------------------------------------------------------------------------- random patterns

@st.composite
def sparse_problems(draw):
    """A random (m, k) sparse pattern with repeated positions likely, its values, and a dense (k, n)."""
    m, k, n = draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    nnz = draw(st.integers(0, 12))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)])
    return idx, rng.standard_normal(nnz), rng.standard_normal((k, n)), (m, k)


@given(sparse_problems())
def test_random_patterns_mirror_torch(problem):
    idx, values, dense, size = problem

    def f(L, v, d):
        s = L.sparse_coo_tensor(L.tensor(idx), v, size)
        c = s.coalesce()
        return L.cat([L.sparse.mm(s, d).reshape(-1), s.to_dense().reshape(-1), (d.t() @ s.t()).reshape(-1),
                      c.to_dense().reshape(-1) * 2, L.sparse.sum(s, 1).to_dense()])
    mirror(f, values, dense)
    torch = torch_or_skip()
    ours = mg.sparse_coo_tensor(mg.tensor(idx), mg.tensor(values), size).coalesce()
    theirs = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(values), size).coalesce()
    assert ours.indices().tolist() == theirs.indices().tolist()
    np.testing.assert_allclose(ours.values().numpy(), theirs.values().numpy(), rtol=1e-12)
