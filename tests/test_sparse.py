"""Sparse COO tensors (issue 28, item 5), mirrored against PyTorch in float64 with random upstream gradients:
construction and its checks, to_dense/to_sparse/coalesce and the accessors, sparse @ dense in every spelling
with gradients to the values and to the dense operand, sparse.sum/softmax, the arithmetic, a sparse leaf's
.grad, SciPy and NumPy products alike, double backward, a mutant backward caught; and a GCN (pygcn style,
trained three Adam steps) and a sparse GAT (pyGAT style, with its custom autograd Function) run in both
libraries from the same weights, equal to 1e-9."""
import math
import warnings

import numpy as np
import pytest

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


# --------------------------------------------------------------------------- a GCN in pygcn's style
def gcn(torch):
    """Kipf & Welling's GCN as pygcn writes it: ``torch.mm`` for the features, ``torch.spmm`` with the
    normalized sparse adjacency, parameters made with the legacy ``torch.FloatTensor(n, m)``."""
    nn, F = torch.nn, torch.nn.functional

    class GraphConvolution(nn.Module):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__()
            self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
            if bias:
                self.bias = nn.Parameter(torch.FloatTensor(out_features))
            else:
                self.register_parameter("bias", None)
            self.reset_parameters()

        def reset_parameters(self):
            stdv = 1. / math.sqrt(self.weight.size(1))
            self.weight.data.uniform_(-stdv, stdv)
            if self.bias is not None:
                self.bias.data.uniform_(-stdv, stdv)

        def forward(self, input, adj):
            support = torch.mm(input, self.weight)
            output = torch.spmm(adj, support)
            return output + self.bias if self.bias is not None else output

    class GCN(nn.Module):
        def __init__(self, nfeat, nhid, nclass, dropout):
            super().__init__()
            self.gc1 = GraphConvolution(nfeat, nhid)
            self.gc2 = GraphConvolution(nhid, nclass)
            self.dropout = dropout

        def forward(self, x, adj):
            x = F.relu(self.gc1(x, adj))
            x = F.dropout(x, self.dropout, training=self.training)
            x = self.gc2(x, adj)
            return F.log_softmax(x, dim=1)

    return GCN


def normalized_adjacency(n=12, seed=4):
    """pygcn's preprocessing on a random graph: A + I (symmetric), row-normalized, as a SciPy COO matrix."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < 0.2).astype(np.float64)
    a = np.maximum(a, a.T) + np.eye(n)
    mx = sp.coo_matrix(a)
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    return sp.diags(r_inv).dot(mx).tocoo()


def sparse_mx_to_tensor(torch, sparse_mx):
    """pygcn's ``sparse_mx_to_torch_sparse_tensor``, with the modern constructor and float64 values."""
    indices = torch.from_numpy(np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    values = torch.from_numpy(sparse_mx.data)
    return torch.sparse_coo_tensor(indices, values, sparse_mx.shape)


def test_gcn_trains_as_in_pytorch():
    torch = torch_or_skip()
    pytest.importorskip("scipy")
    adj_mx = normalized_adjacency()
    rng = np.random.default_rng(5)
    features, labels = rng.standard_normal((12, 5)), rng.integers(0, 3, 12)
    idx_train = np.arange(8)
    torch.manual_seed(0)
    runs = {}
    for lib in (torch, mg):
        model = gcn(lib)(nfeat=5, nhid=6, nclass=3, dropout=0.5).double()
        if lib is mg:
            model.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in runs["torch"][2].items()})
        optimizer = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        adj, x = sparse_mx_to_tensor(lib, adj_mx), lib.tensor(features)
        y, train = lib.tensor(labels), lib.tensor(idx_train)
        initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.eval()                   # dropout off: the same function in both libraries
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            output = model(x, adj)
            loss = lib.nn.functional.nll_loss(output[train], y[train])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        runs["torch" if lib is torch else "mg"] = (losses, model(x, adj).detach().numpy(), initial,
                                                   {k: v.detach().numpy() for k, v in model.state_dict().items()})
    (loss_th, out_th, _, state_th), (loss_mg, out_mg, _, state_mg) = runs["torch"], runs["mg"]
    np.testing.assert_allclose(loss_mg, loss_th, rtol=1e-9)
    np.testing.assert_allclose(out_mg, out_th, rtol=1e-9, atol=1e-12)
    for k in state_th:
        np.testing.assert_allclose(state_mg[k], state_th[k], rtol=1e-9, atol=1e-12, err_msg=k)


def test_legacy_sparse_float_tensor_constructor_as_torch():
    torch = torch_or_skip()
    built = []
    for lib in (mg, torch):
        s = lib.sparse.FloatTensor(lib.tensor(IDX), lib.tensor(V.astype(np.float32)), (4, 4))
        built.append((str(s.dtype).rpartition(".")[2], s.to_dense().numpy(), isinstance(s, lib.sparse.FloatTensor)))
    assert built[0][0] == built[1][0] and built[0][2] == built[1][2]
    np.testing.assert_array_equal(built[0][1], built[1][1])


# --------------------------------------------------------------------------- a sparse GAT in pyGAT's style
def spgat(torch):
    """pyGAT's sparse graph attention (``SpGAT``): edge scores from ``adj.nonzero()``, and a custom autograd
    Function that builds a ``sparse_coo_tensor`` from the edge values and multiplies it by a dense matrix,
    its backward written by hand from ``_indices()`` (the shape is passed as a tuple where pyGAT writes
    ``torch.Size``)."""
    nn, F = torch.nn, torch.nn.functional

    class SpecialSpmmFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, indices, values, shape, b):
            assert indices.requires_grad is False
            a = torch.sparse_coo_tensor(indices, values, shape)
            ctx.save_for_backward(a, b)
            ctx.N = shape[0]
            return torch.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_values = grad_b = None
            if ctx.needs_input_grad[1]:
                grad_a_dense = grad_output.matmul(b.t())
                edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
                grad_values = grad_a_dense.view(-1)[edge_idx]
            if ctx.needs_input_grad[3]:
                grad_b = a.t().matmul(grad_output)
            return None, grad_values, None, grad_b

    class SpecialSpmm(nn.Module):
        def forward(self, indices, values, shape, b):
            return SpecialSpmmFunction.apply(indices, values, shape, b)

    class SpGraphAttentionLayer(nn.Module):
        def __init__(self, in_features, out_features, dropout, alpha, concat=True):
            super().__init__()
            self.in_features, self.out_features, self.alpha, self.concat = in_features, out_features, alpha, concat
            self.W = nn.Parameter(torch.zeros(size=(in_features, out_features)))
            nn.init.xavier_normal_(self.W.data, gain=1.414)
            self.a = nn.Parameter(torch.zeros(size=(1, 2 * out_features)))
            nn.init.xavier_normal_(self.a.data, gain=1.414)
            self.dropout = nn.Dropout(dropout)
            self.leakyrelu = nn.LeakyReLU(self.alpha)
            self.special_spmm = SpecialSpmm()

        def forward(self, input, adj):
            N = input.size()[0]
            edge = adj.nonzero().t()
            h = torch.mm(input, self.W)
            assert not torch.isnan(h).any()
            edge_h = torch.cat((h[edge[0, :], :], h[edge[1, :], :]), dim=1).t()
            edge_e = torch.exp(-self.leakyrelu(self.a.mm(edge_h).squeeze()))
            assert not torch.isnan(edge_e).any()
            e_rowsum = self.special_spmm(edge, edge_e, (N, N), torch.ones(size=(N, 1), dtype=h.dtype))
            edge_e = self.dropout(edge_e)
            h_prime = self.special_spmm(edge, edge_e, (N, N), h)
            assert not torch.isnan(h_prime).any()
            h_prime = h_prime.div(e_rowsum)
            return F.elu(h_prime) if self.concat else h_prime

    class SpGAT(nn.Module):
        def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
            super().__init__()
            self.dropout = dropout
            self.attentions = [SpGraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha, concat=True)
                               for _ in range(nheads)]
            for i, attention in enumerate(self.attentions):
                self.add_module('attention_{}'.format(i), attention)
            self.out_att = SpGraphAttentionLayer(nhid * nheads, nclass, dropout=dropout, alpha=alpha, concat=False)

        def forward(self, x, adj):
            x = F.dropout(x, self.dropout, training=self.training)
            x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
            x = F.dropout(x, self.dropout, training=self.training)
            x = F.elu(self.out_att(x, adj))
            return F.log_softmax(x, dim=1)

    return SpGAT


def test_sparse_gat_runs_as_in_pytorch():
    torch = torch_or_skip()
    pytest.importorskip("scipy")
    adj = normalized_adjacency(n=10, seed=6).toarray()
    rng = np.random.default_rng(7)
    features, upstream = rng.standard_normal((10, 4)), rng.standard_normal((10, 3))
    torch.manual_seed(1)
    model_th = spgat(torch)(nfeat=4, nhid=5, nclass=3, dropout=0.6, alpha=0.2, nheads=2).double().eval()
    model_mg = spgat(mg)(nfeat=4, nhid=5, nclass=3, dropout=0.6, alpha=0.2, nheads=2).double().eval()
    model_mg.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in model_th.state_dict().items()})
    x_th, x_mg = torch.tensor(features, requires_grad=True), mg.tensor(features, requires_grad=True)
    out_th, out_mg = model_th(x_th, torch.tensor(adj)), model_mg(x_mg, mg.tensor(adj))
    np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().numpy(), rtol=1e-9, atol=1e-12)
    out_th.backward(torch.tensor(upstream))
    out_mg.backward(mg.tensor(upstream))
    np.testing.assert_allclose(x_mg.grad.numpy(), x_th.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (name, p_th), (_, p_mg) in zip(model_th.named_parameters(), model_mg.named_parameters()):
        np.testing.assert_allclose(p_mg.grad.numpy(), p_th.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
