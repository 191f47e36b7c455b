"""Compressed sparse layouts (CSR, CSC, BSR, BSC): construction and its checks, the index accessors, conversions
between dense, COO and the compressed layouts, and CSR/CSC products with dense matrices and vectors in every
spelling, with gradients to the values, to the dense operand and to the dense tensor a matrix was made from.

The first part needs no PyTorch: products against the dense product, gradients against their formulas, round
trips, and the index arrays of a matrix written out by hand. The second mirrors PyTorch in float64 with random
upstream gradients (``torch_or_skip``: skipped without PyTorch, an error under MINIGRAD_REQUIRE_TORCH=1)."""
import numpy as np
import pytest

import minigrad as mg
from tests.mirror import torch_or_skip

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")]

RNG = np.random.default_rng(7)
A = np.array([[1.5, 0.0, -2.0, 0.0, 0.0, 0.5],
              [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.0, 3.0, 0.0, 4.0, 0.0, 0.0],
              [5.0, 0.0, 0.0, 0.0, -1.0, 0.0]])            # 4 x 6, an empty row, 8 non-zeros
CROW = [0, 3, 3, 5, 7]
COL = [0, 2, 5, 1, 3, 0, 4]
VALS = [1.5, -2.0, 0.5, 3.0, 4.0, 5.0, -1.0]
CCOL = [0, 2, 3, 4, 5, 6, 7]
ROW = [0, 3, 2, 0, 2, 3, 0]
CVALS = [1.5, 5.0, 3.0, -2.0, 4.0, -1.0, 0.5]


def rand(*shape):
    return RNG.standard_normal(shape)


def csr_values(values, lib=mg):
    return lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL), values, A.shape)


# =========================================================================== without PyTorch
def test_csr_and_csc_of_a_matrix_written_by_hand():
    x = mg.tensor(A)
    c = x.to_sparse_csr()
    assert c.layout is mg.sparse_csr and c.is_sparse_csr and not c.is_sparse and c.shape == A.shape
    assert c.crow_indices().tolist() == CROW and c.col_indices().tolist() == COL and c.values().tolist() == VALS
    assert c._nnz() == 7 and c.crow_indices().dtype == mg.int64
    s = x.to_sparse_csc()
    assert s.layout is mg.sparse_csc and not s.is_sparse_csr
    assert s.ccol_indices().tolist() == CCOL and s.row_indices().tolist() == ROW and s.values().tolist() == CVALS
    b = x.to_sparse_bsr((2, 3))            # a 2 x 2 grid of 2 x 3 blocks, each holding a non-zero
    assert b.crow_indices().tolist() == [0, 2, 4] and b.col_indices().tolist() == [0, 1, 0, 1]
    np.testing.assert_array_equal(b.values().numpy()[1], A[:2, 3:])
    bc = mg.tensor(np.kron(np.eye(2), np.ones((2, 2)))).to_sparse_bsc(2)
    assert bc.ccol_indices().tolist() == [0, 1, 2] and bc.row_indices().tolist() == [0, 1]


def test_constructors_build_the_matrix():
    c = mg.sparse_csr_tensor(CROW, COL, VALS, A.shape, dtype=mg.float64)
    np.testing.assert_array_equal(c.to_dense().numpy(), A)
    s = mg.sparse_csc_tensor(mg.tensor(CCOL), mg.tensor(ROW), mg.tensor(CVALS, dtype=mg.float64), A.shape)
    np.testing.assert_array_equal(s.to_dense().numpy(), A)
    g = mg.sparse_compressed_tensor(mg.tensor(CROW), mg.tensor(COL), mg.tensor(VALS), A.shape, layout=mg.sparse_csr)
    assert g.layout is mg.sparse_csr and g.dtype == mg.float32
    blocks = rand(3, 2, 2)
    b = mg.sparse_bsr_tensor([0, 2, 3], [0, 2, 1], mg.tensor(blocks), (4, 6))
    expected = np.zeros((4, 6))
    expected[0:2, 0:2], expected[0:2, 4:6], expected[2:4, 2:4] = blocks
    np.testing.assert_array_equal(b.to_dense().numpy(), expected)
    bc = mg.sparse_bsc_tensor([0, 1, 1, 3], [1, 0, 1], mg.tensor(blocks), (4, 6))
    expected = np.zeros((4, 6))
    expected[2:4, 0:2], expected[0:2, 4:6], expected[2:4, 4:6] = blocks
    np.testing.assert_array_equal(bc.to_dense().numpy(), expected)
    assert mg.sparse_csr_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).shape == (2, 4)      # size inferred
    assert mg.sparse_csc_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).shape == (4, 2)


@pytest.mark.parametrize("blocksize", [(1, 1), (2, 3), (4, 2), 2])
def test_round_trips(blocksize):
    x = mg.tensor(A)
    for layout in ("csr", "csc"):
        np.testing.assert_array_equal(getattr(x, f"to_sparse_{layout}")().to_dense().numpy(), A)
    for layout in ("bsr", "bsc"):
        np.testing.assert_array_equal(getattr(x, f"to_sparse_{layout}")(blocksize).to_dense().numpy(), A)
        np.testing.assert_array_equal(x.to_sparse(layout=getattr(mg, f"sparse_{layout}"), blocksize=blocksize)
                                      .to_dense().numpy(), A)
    c = x.to_sparse_csr()
    back = c.to_sparse_csc().to_sparse_csr()
    assert back.crow_indices().tolist() == CROW and back.col_indices().tolist() == COL
    assert back.values().tolist() == VALS
    coo = c.to_sparse()
    assert coo.layout is mg.sparse_coo and coo.is_coalesced()
    np.testing.assert_array_equal(coo.indices().numpy(), np.stack(np.nonzero(A)))
    again = x.to_sparse().to_sparse_csr()
    assert again.crow_indices().tolist() == CROW and again.col_indices().tolist() == COL
    csc = x.to_sparse().to_sparse_csc()
    assert csc.ccol_indices().tolist() == CCOL and csc.row_indices().tolist() == ROW
    csc_coo = c.to_sparse_csc().to_sparse()          # CSC order: column by column, not coalesced
    assert not csc_coo.is_coalesced() and csc_coo._indices().tolist() == [ROW, sorted(np.nonzero(A)[1])]
    assert csc_coo.coalesce().indices().tolist() == coo.indices().tolist()
    blocks = x.to_sparse_bsr((2, 3)).to_sparse()     # every element of every block, zeros included
    assert blocks._nnz() == 24
    np.testing.assert_array_equal(blocks.to_dense().numpy(), A)
    t = c.t()
    assert t.layout is mg.sparse_csc and t.shape == A.T.shape
    np.testing.assert_array_equal(t.to_dense().numpy(), A.T)


def _product_case(spelling, S, D):
    """(minigrad result of ``spelling``, its dense reference) for the matrix S (minigrad) and dense D."""
    dense = S.to_dense().detach().numpy()
    if spelling == "s@d":
        return S @ D, dense @ D.detach().numpy()
    if spelling == "d@s":
        return D @ S, D.detach().numpy() @ dense
    raise AssertionError(spelling)


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("case", ["matrix", "vector", "left matrix", "left vector"])
def test_product_against_the_dense_product_with_gradients(layout, case):
    """S @ D and D @ S against NumPy's dense product; dvalues_k = (dY D^T)[r_k, c_k], dD = S^T dY."""
    values = mg.tensor(np.array(VALS if layout == "csr" else CVALS), requires_grad=True)
    S = (csr_values(values) if layout == "csr" else
         mg.sparse_csc_tensor(mg.tensor(CCOL), mg.tensor(ROW), values, A.shape))
    left = case.startswith("left")
    shape = {"matrix": (6, 3), "vector": (6,), "left matrix": (2, 4), "left vector": (4,)}[case]
    D = mg.tensor(rand(*shape), requires_grad=True)
    Y, reference = _product_case("d@s" if left else "s@d", S, D)
    np.testing.assert_allclose(Y.detach().numpy(), reference, rtol=1e-12, atol=1e-12)
    dY = rand(*Y.shape)
    Y.backward(mg.tensor(dY))
    d, dy = D.detach().numpy(), dY
    if left:            # Y = D S: dS = D^T dY, dD = dY S^T
        dS = np.outer(d, dy) if d.ndim == 1 else d.T @ dy
        dD = dy @ A.T
    else:               # Y = S D: dS = dY D^T, dD = S^T dY
        dS = np.outer(dy, d) if d.ndim == 1 else dy @ d.T
        dD = A.T @ dy
    rows, cols = np.nonzero(A) if layout == "csr" else np.nonzero(A.T)[::-1]
    np.testing.assert_allclose(values.grad.numpy(), dS[rows, cols], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.grad.numpy(), dD, rtol=1e-12, atol=1e-12)


ADJ = np.array([[0.0, 1.0, 0.0, 0.0, 2.0],
                [0.0, 0.0, 3.0, 0.0, 0.0],
                [4.0, 0.0, 0.0, 5.0, 0.0],
                [0.0, 0.0, 0.0, 0.0, 0.0],
                [0.0, 6.0, 0.0, 7.0, 8.0]])          # square and not symmetric: a graph's weighted adjacency


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_square_products_are_not_transposed(layout):
    """A square matrix multiplies either way round: S @ H, H @ S, S @ v, v @ S against the dense products, and
    the gradients of the values and of H (random upstream gradients)."""
    rows, cols = np.nonzero(ADJ) if layout == "csr" else np.nonzero(ADJ.T)[::-1]
    H = rand(5, 3)
    for left in (False, True):
        for h in (H, H[:, 0]):
            values = mg.tensor(ADJ[rows, cols], requires_grad=True)
            S = (mg.tensor(ADJ).to_sparse_csr() if layout == "csr" else mg.tensor(ADJ).to_sparse_csc())
            S = mg.sparse_compressed_tensor(S.crow_indices() if layout == "csr" else S.ccol_indices(),
                                            S.col_indices() if layout == "csr" else S.row_indices(), values,
                                            (5, 5), layout=S.layout)
            x = mg.tensor(h if not left else h.T.copy(), requires_grad=True)
            Y = x @ S if left else S @ x
            dense = x.detach().numpy() @ ADJ if left else ADJ @ x.detach().numpy()
            np.testing.assert_allclose(Y.detach().numpy(), dense, rtol=1e-12, atol=1e-12)
            dY = rand(*Y.shape)
            Y.backward(mg.tensor(dY))
            xd = x.detach().numpy()
            if left:
                dS = np.outer(xd, dY) if xd.ndim == 1 else xd.T @ dY
                dx = dY @ ADJ.T
            else:
                dS = np.outer(dY, xd) if xd.ndim == 1 else dY @ xd.T
                dx = ADJ.T @ dY
            np.testing.assert_allclose(values.grad.numpy(), dS[rows, cols], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(x.grad.numpy(), dx, rtol=1e-12, atol=1e-12)


def test_product_of_a_matrix_made_from_a_dense_tensor_passes_it_the_full_gradient():
    """x.to_sparse_csr() @ D: x gets dY D^T everywhere (zeros of x included), as PyTorch's ToSparseCsrBackward."""
    x = mg.tensor(A, requires_grad=True)
    D, dY = rand(6, 2), rand(4, 2)
    (x.to_sparse_csr() @ mg.tensor(D)).backward(mg.tensor(dY))
    np.testing.assert_allclose(x.grad.numpy(), dY @ D.T, rtol=1e-12, atol=1e-12)
    x.grad = None
    (mg.tensor(D.T) @ x.to_sparse_csc().t()).backward(mg.tensor(dY.T))       # D^T @ x^T = (x D)^T
    np.testing.assert_allclose(x.grad.numpy(), dY @ D.T, rtol=1e-12, atol=1e-12)
    x.grad = None
    g = rand(*A.shape)
    x.to_sparse_csr().to_dense().backward(mg.tensor(g))                    # to_dense: the entries only
    np.testing.assert_allclose(x.grad.numpy(), np.where(A != 0, g, 0), rtol=1e-12, atol=1e-12)


def test_products_without_scipy_match(monkeypatch):
    from minigrad.sparse import products
    D = rand(6, 3)
    with_scipy = (mg.tensor(A).to_sparse_csr() @ mg.tensor(D)).numpy()
    monkeypatch.setattr(products, "_scipy_sparse", lambda: None)
    np.testing.assert_allclose((mg.tensor(A).to_sparse_csr() @ mg.tensor(D)).numpy(), A @ D, rtol=1e-12)
    np.testing.assert_allclose(with_scipy, A @ D, rtol=1e-12)


def test_leaf_gets_a_dense_gradient():
    S = mg.tensor(A).to_sparse_csr().requires_grad_()
    assert S.is_leaf and S.requires_grad and S.grad_fn is None
    D, dY = rand(6, 3), rand(4, 3)
    (S @ mg.tensor(D)).backward(mg.tensor(dY))
    np.testing.assert_allclose(S.grad.numpy(), dY @ D.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make, message", [
    (lambda: mg.sparse_csr_tensor([0, 1], [0, 1], [1.0, 2.0], (2, 2)),
     r"crow_indices.shape\[-1\] must be equal to the number of rows \+ 1 \(=3\), but got 2"),
    (lambda: mg.sparse_csr_tensor([0, 1, 2], [0, 1], [1.0, 2.0, 3.0], (2, 2)),
     r"col_indices.shape\[-1\] must be equal to nnz \(=3\)"),
    (lambda: mg.sparse_csr_tensor([1, 1, 2], [0, 1], [1.0, 2.0], (2, 2)), r"crow_indices\[..., 0\] == 0"),
    (lambda: mg.sparse_csr_tensor([0, 1, 1], [0, 1], [1.0, 2.0], (2, 2)), r"crow_indices\[..., -1\] == nnz"),
    (lambda: mg.sparse_csr_tensor([0, 1, 2], [0, 5], [1.0, 2.0], (2, 2)), r"0 <= col_indices < ncols"),
    (lambda: mg.sparse_csc_tensor([0, 1, 2], [0, -1], [1.0, 2.0], (2, 2)), r"0 <= row_indices < nrows"),
    (lambda: mg.sparse_csr_tensor([0, 2, 1, 2], [0, 1], [1.0, 2.0], (3, 2)),
     r"0 <= crow_indices\[..., 1:\] - crow_indices\[..., :-1\] <= ncols"),
    (lambda: mg.sparse_csr_tensor([0, 2, 2], [1, 0], [1.0, 2.0], (2, 2), check_invariants=True),
     "are sorted and distinct"),
    (lambda: mg.sparse_csr_tensor([0, 2, 2], [1, 1], [1.0, 2.0], (2, 2), check_invariants=True),
     "are sorted and distinct"),
    (lambda: mg.sparse_bsr_tensor([0, 1], [0], mg.ones(1, 2, 2), (3, 4)),
     r"tensor shape\[0\] \(=3\) must be divisible with blocksize\[0\] \(=2\)"),
    (lambda: mg.sparse_compressed_tensor([0, 1], [0], [1.0], (1, 1)),
     "sparse_compressed_tensor expected sparse compressed tensor layout but got none"),
    (lambda: mg.randn(4, 4).to_sparse_bsr((3, 3)),
     r"dense_to_sparse_bsr: tensor sparse size \(4,4\) must be divisible by given blocksize \(3,3\)"),
    (lambda: mg.randn(2, 2).crow_indices(), "crow_indices expected sparse row compressed tensor layout but got "
                                            "Strided"),
    (lambda: mg.randn(2, 2).to_sparse().col_indices(), "col_indices expected sparse row compressed tensor layout "
                                                       "but got Sparse"),
    (lambda: mg.randn(2, 2).to_sparse_csr().ccol_indices(), "ccol_indices expected sparse column compressed "
                                                            "tensor layout but got SparseCsr"),
    (lambda: mg.randn(2, 2).to_sparse_csc().col_indices(), "col_indices expected sparse row compressed "
                                                           "tensor layout but got SparseCsc"),
    (lambda: mg.randn(2, 3).to_sparse_csr() @ mg.randn(2, 2),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x2\)"),
    (lambda: mg.randn(4, 3) @ mg.randn(2, 3).to_sparse_csr(),
     r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 2x3\)"),
    (lambda: mg.randn(2, 3).to_sparse_csr() @ mg.randn(2),
     r"size mismatch, got input \(2\), mat \(2x3\), vec \(2\)"),
    (lambda: mg.randn(2, 3).to_sparse_csr() @ mg.randn(3, 2, dtype=mg.float64),
     "expected scalar type Float but found Double"),
    (lambda: mg.randn(4, 4).to_sparse_bsc(2) @ mg.randn(4, 2),
     r"addmm: computation on CPU is not implemented for Strided \+ SparseBsc @ Strided"),
    (lambda: mg.randn(2, 4) @ mg.randn(4, 4).to_sparse_bsr(2),
     r"addmm: computation on CPU is not implemented for Strided \+ Strided @ SparseBsr"),
    (lambda: mg.randn(4, 4).to_sparse_bsr(2).to_sparse_bsr(1),
     r"to_sparse_bsr: conversion from SparseBsr to SparseBsr with blocksize changed from \[2, 2\] to \[1, 1\]"),
    (lambda: mg.sparse.mm(mg.randn(2, 3).to_sparse_csr(), mg.randn(3)), "mat2 must be a matrix, got 1-D tensor"),
    (lambda: mg.randn(4, 4).to_sparse_bsr(2).to_sparse_csr(),
     "sparse_compressed_to_sparse_csr: expected SparseCsr or SparseCsc layout but got SparseBsr"),
    (lambda: mg.randn(2, 4, 4).to_sparse().to_sparse_csr(),
     r"coo_to_sparse_csr: conversion from Sparse to SparseCsr for input tensors with sparse_dim\(\)!=2"),
])
def test_errors(make, message):
    with pytest.raises(RuntimeError, match=message):
        make()


def test_blocksize_is_required():
    with pytest.raises(TypeError):
        mg.randn(4, 4).to_sparse_bsr()


# =========================================================================== mirrored against PyTorch
def _np(t):
    """A tensor's numbers as a dense ndarray (None stays None)."""
    if t is None:
        return None
    t = t.detach()
    return (t if repr(t.layout).endswith("strided") else t.to_dense()).numpy()


def _run(lib, f, arrays, upstream):
    """f(lib, *tensors) with every array as a float64 tensor requiring grad: its output and the gradients of the
    inputs (and of the tensors f returns second) after backward(upstream)."""
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    out, extra = f(lib, *tensors)
    dense_out = out.to_dense() if out.layout is not lib.strided else out
    dense_out.backward(lib.tensor(upstream))
    grads = [_np(t.grad) for t in tensors] + [_np(e.grad) for e in extra]
    return _np(dense_out), grads


def mirror(f, *arrays, seed=0):
    """f in both libraries: the same output and gradients, or (where PyTorch raises) the same error."""
    torch = torch_or_skip()
    out, _ = f(mg, *[mg.tensor(a) for a in arrays])
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    try:
        theirs = _run(torch, f, arrays, upstream)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as ours:
            _run(mg, f, arrays, upstream)
        assert str(ours.value) == str(error)
        return
    ours = _run(mg, f, arrays, upstream)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    assert len(ours[1]) == len(theirs[1])
    for mine, their in zip(ours[1], theirs[1]):
        assert (mine is None) == (their is None)
        if mine is not None:
            np.testing.assert_allclose(mine, their, rtol=1e-12, atol=1e-12)


def _csr(L, v):
    return L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), v, A.shape)


def _csc(L, v):
    return L.sparse_csc_tensor(L.tensor(CCOL), L.tensor(ROW), v, A.shape)


PRODUCTS = {
    "@": lambda L, S, d, c: S @ d,
    "mm": lambda L, S, d, c: L.mm(S, d),
    "matmul": lambda L, S, d, c: L.matmul(S, d),
    "method mm": lambda L, S, d, c: S.mm(d),
    "sparse.mm": lambda L, S, d, c: L.sparse.mm(S, d),
    "addmm": lambda L, S, d, c: L.addmm(c, S, d, beta=0.5, alpha=-2.0),
    "sparse.addmm": lambda L, S, d, c: L.sparse.addmm(c, S, d, beta=0.5, alpha=-2.0),
    "vector": lambda L, S, d, c: S @ d[:, 1],
    "mv": lambda L, S, d, c: L.mv(S, d[:, 0]),
    "dense @ S": lambda L, S, d, c: c.t() @ S,
    "vector @ S": lambda L, S, d, c: c[:, 0] @ S,
    "S.t() @": lambda L, S, d, c: S.t() @ c,
}


@pytest.mark.parametrize("spelling", list(PRODUCTS))
@pytest.mark.parametrize("make", ["csr values", "csc values", "dense to csr", "dense to csc", "coo to csr"])
def test_products_mirror_torch(spelling, make):
    """Output and the gradients of the values (or of the dense tensor the matrix was made from) and of the dense
    operands, with a random upstream gradient."""
    product = PRODUCTS[spelling]

    def f(L, v, d, c):
        if make == "csr values":
            S = _csr(L, v)
        elif make == "csc values":
            S = _csc(L, v)
        else:
            x = L.zeros(A.shape, dtype=L.float64)
            x[np.nonzero(A)] = v          # x: A's pattern, v's numbers (gradient flows to v through x)
            S = {"dense to csr": x.to_sparse_csr, "dense to csc": x.to_sparse_csc,
                 "coo to csr": lambda: x.to_sparse().to_sparse_csr()}[make]()
        return product(L, S, d, c), ()
    v = np.array(VALS if make != "csc values" else CVALS) if make.endswith("values") else A[np.nonzero(A)]
    mirror(f, v, rand(6, 3), rand(4, 3))


@pytest.mark.parametrize("spelling", ["@", "dense @ S", "vector", "vector @ S", "S.t() @", "addmm"])
def test_square_products_mirror_torch(spelling):
    product = PRODUCTS[spelling]
    rows, cols = np.nonzero(ADJ)

    def f(L, v, d, c):
        return product(L, L.sparse_csr_tensor(L.tensor([0, 2, 3, 5, 5, 8]), L.tensor(cols), v, (5, 5)), d, c), ()
    mirror(f, ADJ[rows, cols], rand(5, 3), rand(5, 3))


def test_dense_source_gradient_mirrors_torch():
    """The dense tensor a CSR matrix is made from gets the full gradient of a product (zeros included), and the
    masked one through to_dense and values."""
    for use in (lambda L, S, d: S @ d, lambda L, S, d: L.addmm(d[:4], S, d, beta=2.0)):
        mirror(lambda L, x, d: (use(L, x.to_sparse_csr(), d), ()), A, rand(6, 3))
    mirror(lambda L, x: (x.to_sparse_csr().to_dense() * 2, ()), A)
    mirror(lambda L, x: (x.to_sparse_csc().values() * 3, ()), A)
    mirror(lambda L, x: (x.to_sparse_bsr((2, 3)).values() * 3, ()), A)
    mirror(lambda L, x: (x.to_sparse_bsc(2).to_dense() * 3, ()), A)


def test_leaf_gradient_mirrors_torch():
    torch = torch_or_skip()
    D, dY = rand(6, 3), rand(4, 3)
    grads = []
    for L in (mg, torch):
        S = L.tensor(A).to_sparse_csr().requires_grad_()
        (S @ L.tensor(D)).backward(L.tensor(dY))
        assert S.is_leaf and S.grad.layout is L.strided
        grads.append(S.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


def test_sampled_addmm_mirrors_torch():
    def f(L, v, a, b):
        return L.sparse.sampled_addmm(_csr(L, v), a, b, beta=0.5, alpha=2.0).values(), ()
    mirror(f, np.array(VALS), rand(4, 2), rand(2, 6))


@pytest.mark.parametrize("blocksize", [(2, 3), (4, 2), (1, 1), 2])
@pytest.mark.parametrize("source", ["dense", "coo", "csr", "csc"])
def test_conversions_mirror_torch(source, blocksize):
    torch = torch_or_skip()
    results = []
    for L in (mg, torch):
        x = L.tensor(A)
        x = {"dense": x, "coo": x.to_sparse(), "csr": x.to_sparse_csr(), "csc": x.to_sparse_csc()}[source]
        row = []
        conversions = [("csr", ()), ("csc", ())] if source != "dense" or blocksize != 2 else []
        if source in ("dense", "csr", "csc"):
            conversions += [("bsr", (blocksize,)), ("bsc", (blocksize,))]
        for name, args in conversions:
            c = getattr(x, f"to_sparse_{name}")(*args)
            kind = name[1:]
            compressed, plain = (c.crow_indices(), c.col_indices()) if kind == "sr" else (c.ccol_indices(),
                                                                                        c.row_indices())
            row.append((repr(c.layout).rpartition(".")[2], compressed.tolist(), plain.tolist(), c.values().tolist(),
                        tuple(c.shape), c._nnz(), c.is_sparse_csr, c.is_sparse, c.to_dense().tolist(),
                        str(compressed.dtype).rpartition(".")[2]))
        if source in ("csr", "csc"):
            coo = x.to_sparse()
            row.append((coo._indices().tolist(), coo._values().tolist(), coo.is_coalesced(), tuple(x.t().shape),
                        repr(x.t().layout).rpartition(".")[2], x.t().to_dense().tolist()))
        results.append(row)
    assert results[0] == results[1]


def test_construction_mirrors_torch():
    torch = torch_or_skip()
    results = []
    for L in (mg, torch):
        v = L.tensor(VALS, dtype=L.float64, requires_grad=True)
        s = _csr(L, v)
        leaf = _csr(L, L.tensor(VALS), ).requires_grad_()
        made = L.tensor(A, requires_grad=True).to_sparse_csr()
        i32 = L.sparse_csr_tensor(L.tensor(CROW, dtype=L.int32), L.tensor(COL, dtype=L.int32), L.tensor(VALS), A.shape)
        results.append((
            s.requires_grad, s.is_leaf, s.grad_fn.name(), leaf.is_leaf, leaf.requires_grad, leaf.grad_fn,
            made.grad_fn.name(), made.to_sparse_csc().layout is L.sparse_csc,
            tuple(L.sparse_csr_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).shape),
            tuple(L.sparse_csc_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).shape),
            tuple(L.sparse_bsr_tensor([0, 1, 1], [2], L.ones(1, 2, 3)).shape),
            str(L.sparse_csr_tensor([0, 1, 2], [0, 3], [1, 2]).dtype).rpartition(".")[2],
            str(L.sparse_csr_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).dtype).rpartition(".")[2],
            str(L.sparse_csr_tensor([0, 1, 2], [0, 3], [1.0, 2.0], dtype=L.float64).dtype).rpartition(".")[2],
            str(i32.crow_indices().dtype).rpartition(".")[2], str(i32.col_indices().dtype).rpartition(".")[2],
            str(s.double().dtype).rpartition(".")[2], str(s.float().dtype).rpartition(".")[2],
            s.detach().requires_grad, s.to_dense().tolist(), s.t().to_dense().tolist(),
            _csc(L, L.tensor(CVALS)).to_dense().tolist(),
            (s * 2).to_dense().tolist(), repr(L.tensor(A).to_sparse(layout=L.sparse_csc).layout).rpartition(".")[2],
            L.tensor(A).to_sparse(layout=L.sparse_bsr, blocksize=(2, 2)).values().tolist(),
            L.randn(2, 2).is_sparse_csr, L.sparse_csr is not L.sparse_csc,
        ))
    assert results[0] == results[1]


ERRORS = [
    lambda L: L.sparse_csr_tensor([0, 1], [0, 1], [1.0, 2.0], (2, 2)),
    lambda L: L.sparse_csr_tensor([0, 1, 2], [0, 1], [1.0, 2.0, 3.0], (2, 2)),
    lambda L: L.sparse_csr_tensor([1, 1, 2], [0, 1], [1.0, 2.0], (2, 2)),
    lambda L: L.sparse_csr_tensor([0, 1, 1], [0, 1], [1.0, 2.0], (2, 2)),
    lambda L: L.sparse_csr_tensor([0, 1, 2], [0, 5], [1.0, 2.0], (2, 2)),
    lambda L: L.sparse_csc_tensor([0, 1, 2], [0, 5], [1.0, 2.0], (2, 2)),
    lambda L: L.sparse_csr_tensor([0, 2, 1, 2], [0, 1], [1.0, 2.0], (3, 2)),
    lambda L: L.sparse_csr_tensor([0, 2, 2], [1, 0], [1.0, 2.0], (2, 2)),
    lambda L: L.sparse_bsr_tensor([0, 1], [0], L.ones(1, 2, 2), (3, 4)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_invariant_errors_mirror_torch(case):
    """PyTorch checks the invariants under check_invariants=True (minigrad always checks the structural ones):
    the same error type, and the same message."""
    torch = torch_or_skip()
    messages = []
    for L in (mg, torch):
        with pytest.raises(RuntimeError) as error:
            with L.sparse.check_sparse_tensor_invariants():
                ERRORS[case](L) if L is torch else ERRORS[case](_Checked(L))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


class _Checked:
    """minigrad with check_invariants=True passed to the constructors (PyTorch's context manager turns its
    checks on; minigrad's is a no-op switch)."""

    def __init__(self, lib):
        self._lib = lib

    def __getattr__(self, name):
        attr = getattr(self._lib, name)
        if name.startswith("sparse_") and name.endswith("_tensor"):
            return lambda *args, **kwargs: attr(*args, check_invariants=True, **kwargs)
        return attr


PRODUCT_ERRORS = [
    lambda L: L.randn(2, 3).to_sparse_csr() @ L.randn(2, 2),
    lambda L: L.randn(4, 3) @ L.randn(2, 3).to_sparse_csr(),
    lambda L: L.randn(2, 3).to_sparse_csr() @ L.randn(2),
    lambda L: L.randn(2, 3).to_sparse_csr() @ L.randn(3, 2, dtype=L.float64),
    lambda L: L.sparse.mm(L.randn(2, 3).to_sparse_csr(), L.randn(2, 2)),
    lambda L: L.randn(4, 4).to_sparse_bsr((3, 3)),
    lambda L: L.randn(4, 4).to_sparse_bsr(2).to_sparse_csr(),
    lambda L: L.randn(2, 2).crow_indices(),
    lambda L: L.randn(2, 2).to_sparse().col_indices(),
    lambda L: L.randn(2, 2).to_sparse_csr().ccol_indices(),
    lambda L: L.randn(2, 2).values(),
    lambda L: L.randn(2, 4, 4).to_sparse().to_sparse_csr(),
    lambda L: L.sparse_compressed_tensor([0, 1], [0], [1.0], (1, 1)),
]


@pytest.mark.parametrize("case", range(len(PRODUCT_ERRORS)))
def test_usage_errors_mirror_torch(case):
    torch = torch_or_skip()
    messages = []
    for L in (mg, torch):
        with pytest.raises(RuntimeError) as error:
            PRODUCT_ERRORS[case](L)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


BLOCKED = {
    "bsr @": lambda L, S, d: S @ d,
    "mm": lambda L, S, d: L.mm(S, d),
    "bsr @ vector": lambda L, S, d: S @ d[:, 0],
    "addmm": lambda L, S, d: L.addmm(d[:4, :2], S, d[:, :2], alpha=3.0),
    "@ bsc": lambda L, S, d: d.t() @ S.t(),
    "sparse.mm": lambda L, S, d: L.sparse.mm(S, d),
}


@pytest.mark.parametrize("spelling", list(BLOCKED))
@pytest.mark.parametrize("dense_grad", [False, True])
@pytest.mark.parametrize("make", ["values", "dense"])
def test_blocked_products_mirror_torch(spelling, dense_grad, make):
    """BSR @ dense (and dense @ BSC): PyTorch computes it and passes gradients to the blocks or to the dense
    source, but raises for the dense operand's gradient (no BSC kernel), and sparse.mm refuses the blocks'."""
    D = rand(6, 3)
    v = A.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(6, 2, 2) if make == "values" else A

    def f(L, v, *d):
        d = d[0] if d else L.tensor(D)
        S = (L.sparse_bsr_tensor(L.tensor([0, 3, 6]), L.tensor([0, 1, 2, 0, 1, 2]), v, (4, 6)) if make == "values"
             else v.to_sparse_bsr(2))
        return BLOCKED[spelling](L, S, d), ()
    mirror(f, v, *([D] if dense_grad else []))


def test_blocked_products_refused_as_torch():
    torch = torch_or_skip()
    for L in (mg, torch):
        with pytest.raises(RuntimeError, match="addmm: computation on CPU is not implemented for Strided"):
            L.randn(4, 4).to_sparse_bsc(2) @ L.randn(4, 2)
        with pytest.raises(RuntimeError, match="addmm: computation on CPU is not implemented for Strided"):
            L.randn(2, 4) @ L.randn(4, 4).to_sparse_bsr(2)
        with pytest.raises(RuntimeError, match="MKL Sparse doesn't support matrices with non-square blocks"):
            L.randn(4, 6).to_sparse_bsr((2, 3)) @ L.randn(6, 2)
