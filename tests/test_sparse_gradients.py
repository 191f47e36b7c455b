"""Sparse gradients (``embedding``/``embedding_bag`` with ``sparse=True``) against PyTorch: the gradient's entries,
how it accumulates, hooks, ``autograd.grad``, create_graph, the optimizers that take it (SGD, Adagrad, SparseAdam,
LBFGS) and the errors of those that do not, ``zero_grad``, ``from_pretrained``, ``add_``/``sparse_mask``, saving;
and float64 finite differences of the gradient, which a planted mistake fails."""
import io
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.sparse import gradients as sparse_gradients

from .mirror import torch_result

RNG = np.random.default_rng(20261201)
TABLE = RNG.standard_normal((7, 3))


def described(grad):
    """A gradient as plain data, for either library: its layout, its entries as stored, and its dense value."""
    if grad is None:
        return None
    layout = str(grad.layout).rpartition(".")[2]
    out = {"layout": layout, "dense": (grad.to_dense() if layout == "sparse_coo" else grad).detach().clone().numpy()}
    if layout == "sparse_coo":            # (clones: PyTorch cannot resize a sparse tensor whose memory numpy() shows)
        out.update(indices=grad._indices().clone().numpy(), values=grad._values().detach().clone().numpy(),
                   coalesced=bool(grad.is_coalesced()))
    return out


def assert_same(mine, theirs, entries=True, rtol=1e-12, atol=1e-13):
    """``described`` records equal: layout, dense value and (``entries``) the stored entries in their order."""
    if theirs is None or mine is None:
        assert mine is None and theirs is None, (mine, theirs)
        return
    assert mine["layout"] == theirs["layout"]
    np.testing.assert_allclose(mine["dense"], theirs["dense"], rtol=rtol, atol=atol)
    if entries and mine["layout"] == "sparse_coo":
        np.testing.assert_array_equal(mine["indices"], theirs["indices"])     # integers: exact
        np.testing.assert_allclose(mine["values"], theirs["values"], rtol=rtol, atol=atol)
        assert mine["coalesced"] == theirs["coalesced"]


# --------------------------------------------------------------------------- the gradient of one lookup
LOOKUPS = {"1d": [1, 2, 1, 6], "2d": [[1, 2, 1], [5, 0, 2]], "empty": np.zeros((0,), np.int64), "0d": 4}


@pytest.mark.parametrize("lookup, padding_idx", [(lookup, padding_idx) for lookup in LOOKUPS for padding_idx in
                                                  (None, 2, -1) if lookup != "0d" or padding_idx is None])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_sparse_gradient_of_a_lookup_as_pytorch(lookup, padding_idx, dtype):
    """(A 0-d lookup with a padding_idx: test_a_0d_lookup_with_padding_idx; PyTorch 2.13 raises IndexError.)"""
    indices = np.asarray(LOOKUPS[lookup], dtype=np.int64)
    upstream = RNG.standard_normal(indices.shape + (3,))

    def run(lib):
        weight = lib.tensor(TABLE, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(indices), weight, padding_idx=padding_idx, sparse=True)
        out.backward(lib.tensor(upstream, dtype=out.dtype))
        return {"out": out.detach().numpy().copy(), "grad": described(weight.grad), "dtype": str(weight.grad.dtype)}
    theirs = torch_result(run, lookup, padding_idx, dtype)
    mine = run(mg)
    tolerance = dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else {}
    np.testing.assert_allclose(mine["out"], theirs["out"], **tolerance)
    assert_same(mine["grad"], theirs["grad"], **tolerance)
    assert mine["dtype"].rpartition(".")[2] == theirs["dtype"].rpartition(".")[2]


@pytest.mark.parametrize("padding_idx", [2, 4])
def test_a_0d_lookup_with_padding_idx(padding_idx):
    """PyTorch's sparse backward raises IndexError for a 0-d index with a padding_idx; minigrad gives the gradient:
    the row's entry, or none when the row is the padding row."""
    weight = mg.tensor(TABLE, requires_grad=True)
    upstream = RNG.standard_normal(3)
    mg.nn.functional.embedding(mg.tensor(4), weight, padding_idx=padding_idx, sparse=True).backward(mg.tensor(upstream))
    expected = np.zeros_like(TABLE)
    if padding_idx != 4:
        expected[4] = upstream
    np.testing.assert_array_equal(weight.grad.to_dense().numpy(), expected)      # a copy of the upstream: exact
    assert weight.grad._nnz() == (padding_idx != 4)


def test_the_sparse_gradient_is_the_finite_difference_gradient():
    """<u, weight[indices]> differentiated numerically (float64, central differences) equals the sparse gradient,
    duplicates summed; the planted mistake below keeps one entry per row and fails the same check."""
    indices, upstream = np.array([[1, 2, 1], [5, 1, 2]]), RNG.standard_normal((2, 3, 3))
    assert _finite_difference_error(indices, upstream) < 1e-8


def test_a_wrong_sparse_gradient_is_caught(monkeypatch):
    right = sparse_gradients.lookup_gradient

    def first_entry_per_row(indices, dout, weight_shape, padding_idx):     # the mutant: repeats not added
        grad = right(indices, dout, weight_shape, padding_idx)
        _, first = np.unique(grad._idx[0], return_index=True)
        return sparse_gradients.SparseTensor(grad._idx[:, first], mg.tensor(grad._vals._data[first]), weight_shape)
    monkeypatch.setattr(sparse_gradients, "lookup_gradient", first_entry_per_row)
    indices, upstream = np.array([[1, 2, 1], [5, 1, 2]]), RNG.standard_normal((2, 3, 3))
    assert _finite_difference_error(indices, upstream) > 1e-3


def _finite_difference_error(indices, upstream, h=1e-6):
    weight = mg.tensor(TABLE.copy(), requires_grad=True)
    mg.nn.functional.embedding(mg.tensor(indices), weight, sparse=True).backward(mg.tensor(upstream))
    numeric = np.zeros_like(TABLE)
    for position in np.ndindex(TABLE.shape):
        shifted = []
        for step in (h, -h):
            table = TABLE.copy()
            table[position] += step
            shifted.append(float((table[indices] * upstream).sum()))
        numeric[position] = (shifted[0] - shifted[1]) / (2 * h)
    return np.abs(weight.grad.to_dense().numpy() - numeric).max()


def test_scale_grad_by_freq_with_sparse_fails_at_backward_as_pytorch():
    def run(lib):
        weight = lib.tensor(TABLE, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([1, 1, 2]), weight, scale_grad_by_freq=True, sparse=True)
        out.sum().backward()
    theirs = torch_result(run, "scale_grad_by_freq")
    with pytest.raises(Exception) as caught:
        run(mg)
    assert type(caught.value) is theirs.type and str(caught.value) == theirs.message


# --------------------------------------------------------------------------- how it meets other gradients
def _tied(lib, weight):
    """The table used twice sparse, once dense (a tied output projection): shares of one gradient that add."""
    F = lib.nn.functional
    rows = F.embedding(lib.tensor([1, 3]), weight, sparse=True) + F.embedding(lib.tensor([3, 0]), weight, sparse=True)
    return rows @ weight.t()                                                     # (2, 7)


STORIES = {
    "sparse_then_sparse": ["sparse", "sparse"],
    "dense_grad_then_sparse": ["zeros", "sparse"],
    "sparse_then_dense": ["sparse", "dense"],
    "two_lookups_in_one_graph": ["twice"],
    "tied_with_a_dense_use": ["tied"],
    "not_a_leaf": ["scaled"],
}


@pytest.mark.parametrize("story", STORIES)
def test_gradients_accumulate_as_pytorch(story):
    upstream = RNG.standard_normal((4, 3))

    def run(lib):
        F = lib.nn.functional
        weight = lib.tensor(TABLE, requires_grad=True)
        for event in STORIES[story]:
            idx = lib.tensor([1, 3, 1, 0])
            if event == "zeros":
                weight.grad = lib.zeros(7, 3, dtype=lib.float64)
            elif event in ("sparse", "dense"):
                F.embedding(idx, weight, sparse=event == "sparse").backward(lib.tensor(upstream))
            elif event == "twice":
                (F.embedding(idx, weight, sparse=True) * 2 + F.embedding(idx.flip(0), weight, sparse=True)).backward(
                    lib.tensor(upstream))
            elif event == "tied":
                _tied(lib, weight).backward(lib.tensor(RNG_TIED))
            else:                                                                # weight * 2 is not a leaf
                F.embedding(idx, weight * 2, sparse=True).backward(lib.tensor(upstream))
        return described(weight.grad)
    theirs = torch_result(run, story)
    mine = run(mg)
    if story == "not_a_leaf":       # PyTorch hands the sparse gradient through the product; minigrad makes it dense
        assert theirs["layout"] == "sparse_coo" and mine["layout"] == "strided"
        np.testing.assert_allclose(mine["dense"], theirs["dense"], rtol=1e-12, atol=1e-13)
    else:                           # PyTorch's sums of sparse gradients list their entries in an order of their own
        assert_same(mine, theirs, entries=False)


RNG_TIED = RNG.standard_normal((2, 7))


def test_hooks_and_autograd_grad_see_the_sparse_gradient_as_pytorch():
    upstream = RNG.standard_normal((3, 3))

    def run(lib):
        weight = lib.tensor(TABLE, requires_grad=True)
        seen = []
        weight.register_hook(lambda g: seen.append(described(g)))
        out = lib.nn.functional.embedding(lib.tensor([4, 1, 4]), weight, sparse=True)
        (grad,) = lib.autograd.grad(out, weight, lib.tensor(upstream))
        doubled = weight.register_hook(lambda g: g * 2)
        lib.nn.functional.embedding(lib.tensor([4, 1, 4]), weight, sparse=True).backward(lib.tensor(upstream))
        doubled.remove()
        return {"grad": described(grad), "seen": seen, "accumulated": described(weight.grad)}
    theirs = torch_result(run, "hooks")
    mine = run(mg)
    assert_same(mine["grad"], theirs["grad"])
    assert len(mine["seen"]) == len(theirs["seen"]) == 2
    for a, b in zip(mine["seen"], theirs["seen"]):
        assert_same(a, b)
    assert_same(mine["accumulated"], theirs["accumulated"])


def test_the_sparse_gradient_is_differentiable_with_create_graph_as_pytorch():
    upstream, weights = RNG.standard_normal((3, 3)), RNG.standard_normal((7, 3))

    def run(lib):
        weight = lib.tensor(TABLE, requires_grad=True)
        v = lib.tensor(upstream, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([4, 1, 4]), weight, sparse=True)
        (grad,) = lib.autograd.grad(out, weight, v, create_graph=True)
        (grad.to_dense() * lib.tensor(weights)).sum().backward()
        return {"layout": str(grad.layout).rpartition(".")[2], "requires_grad": grad.requires_grad,
                "v_grad": v.grad.numpy().copy()}
    theirs = torch_result(run, "create_graph")
    mine = run(mg)
    assert mine["layout"] == theirs["layout"] and mine["requires_grad"] == theirs["requires_grad"]
    np.testing.assert_allclose(mine["v_grad"], theirs["v_grad"], rtol=1e-12, atol=1e-13)


BAGS = {"sum": dict(mode="sum"), "mean": dict(mode="mean"), "sum_weighted": dict(mode="sum", weighted=True),
        "mean_padding": dict(mode="mean", padding_idx=2), "sum_last_offset": dict(mode="sum", include_last_offset=True)}


@pytest.mark.parametrize("case", BAGS)
def test_embedding_bag_sparse_gradient_as_pytorch(case):
    options = dict(BAGS[case])
    weighted = options.pop("weighted", False)
    indices, offsets = np.array([1, 2, 4, 4, 3, 2, 0]), np.array([0, 3, 3, 5])
    per_sample = RNG.standard_normal(7)

    def run(lib):
        weight = lib.tensor(TABLE, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor(indices), weight, lib.tensor(offsets), sparse=True,
                                              per_sample_weights=lib.tensor(per_sample) if weighted else None,
                                              **options)
        out.backward(lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))))
        return described(weight.grad)
    assert_same(run(mg), torch_result(run, case))


# --------------------------------------------------------------------------- optimizers
OPTIMIZERS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.1, momentum=0.9)),
    "sgd_nesterov": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    "sgd_dampening_maximize": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True)),
    "adagrad": ("Adagrad", dict(lr=0.1)),
    "adagrad_decay_maximize": ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2, maximize=True)),
    "sparse_adam": ("SparseAdam", dict(lr=0.1)),
    "sparse_adam_betas_maximize": ("SparseAdam", dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6, maximize=True)),
    "lbfgs": ("LBFGS", dict(lr=0.1, max_iter=2)),
}
STEPS = [(np.array([1, 3, 1, 6]), RNG.standard_normal((4, 3))), (np.array([0, 1]), RNG.standard_normal((2, 3))),
         (np.zeros(0, np.int64), np.zeros((0, 3))), (np.array([6, 6, 2]), RNG.standard_normal((3, 3)))]


def _train(lib, name, options, steps=STEPS, sparse=(True,) * len(STEPS)):
    weight = lib.tensor(TABLE, requires_grad=True)
    optimizer = getattr(lib.optim, name)([weight], **options)
    for (indices, upstream), is_sparse in zip(steps, sparse):
        def closure():
            optimizer.zero_grad()
            out = lib.nn.functional.embedding(lib.tensor(indices), weight, sparse=is_sparse)
            out.backward(lib.tensor(upstream))
            return (out * lib.tensor(upstream)).sum()
        if name == "LBFGS":
            optimizer.step(closure)
        else:
            closure()
            optimizer.step()
    return weight, optimizer


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_optimizers_take_sparse_gradients_as_pytorch(case):
    name, options = OPTIMIZERS[case]

    def run(lib):
        weight, optimizer = _train(lib, name, options)
        state = {key: described(value) if hasattr(value, "layout") and value.ndim else value
                 for key, value in optimizer.state[weight].items() if key in ("exp_avg", "exp_avg_sq", "sum",
                                                                               "momentum_buffer")}
        return {"weight": weight.detach().numpy().copy(), "state": state}
    theirs = torch_result(run, case)
    mine = run(mg)
    np.testing.assert_allclose(mine["weight"], theirs["weight"], rtol=1e-12, atol=1e-13)
    assert sorted(mine["state"]) == sorted(theirs["state"])
    for key in mine["state"]:
        assert_same(mine["state"][key], theirs["state"][key], entries=False)


@pytest.mark.parametrize("case", ["sgd_momentum", "adagrad", "sparse_adam"])
def test_a_parameter_laid_out_transposed_updates_as_a_contiguous_one(case):
    """A table whose memory is column-major (a transposed view made a Parameter): the rows a sparse update writes
    through a reshape that must copy are written back; the result equals the contiguous table's bit for bit."""
    name, options = OPTIMIZERS[case]
    results = []
    for transposed in (False, True):
        table = mg.tensor(TABLE.T.copy()).t() if transposed else mg.tensor(TABLE.copy())
        weight = mg.nn.Parameter(table)
        assert weight.is_contiguous() is not transposed
        optimizer = getattr(mg.optim, name)([weight], **options)
        for indices, upstream in STEPS:
            optimizer.zero_grad()
            mg.nn.functional.embedding(mg.tensor(indices), weight, sparse=True).backward(mg.tensor(upstream))
            optimizer.step()
        results.append(weight.detach().numpy().copy())
    assert not np.array_equal(results[0], TABLE)
    np.testing.assert_array_equal(results[1], results[0])       # the same operations on the same numbers: exact


@pytest.mark.parametrize("pattern", [(True, False, True, False), (False, True, True, False)])
@pytest.mark.parametrize("case", ["sgd_momentum", "adagrad"])
def test_sparse_and_dense_steps_mix_as_pytorch(case, pattern):
    name, options = OPTIMIZERS[case]

    def run(lib):
        return _train(lib, name, options, sparse=pattern)[0].detach().numpy().copy()
    theirs = torch_result(run, case, pattern)
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(run(mg), theirs, rtol=1e-12, atol=1e-13)
        return
    with pytest.raises(Exception) as caught:         # a dense gradient meeting SGD's sparse momentum buffer
        run(mg)
    assert type(caught.value) is theirs.type and str(caught.value) == theirs.message


REFUSALS = {"Adam": {}, "AdamW": {}, "RMSprop": {}, "Adadelta": {}, "Adamax": {}, "NAdam": {}, "RAdam": {},
            "Rprop": {}, "ASGD": {}, "Adafactor": {}, "SGD": dict(weight_decay=0.1), "Adagrad": dict(weight_decay=0.1)}


@pytest.mark.parametrize("name", REFUSALS)
def test_optimizers_refuse_sparse_gradients_as_pytorch_and_change_nothing(name):
    def run(lib):
        weight, optimizer = _train(lib, name, dict(lr=0.1, **REFUSALS[name]), steps=STEPS[:0])
        lib.nn.functional.embedding(lib.tensor([1, 2]), weight, sparse=True).sum().backward()
        optimizer.step()
    theirs = torch_result(run, name)
    with pytest.raises(Exception) as caught:
        run(mg)
    assert type(caught.value) is theirs.type and str(caught.value) == theirs.message
    weight, optimizer = _train(mg, name, dict(lr=0.1, **REFUSALS[name]), steps=STEPS[:0])
    mg.nn.functional.embedding(mg.tensor([1, 2]), weight, sparse=True).sum().backward()
    with pytest.raises(RuntimeError):
        optimizer.step()
    np.testing.assert_array_equal(weight.detach().numpy(), TABLE)          # a copy: exact
    assert all(float(state["step"]) == 0 for state in optimizer.state.values())   # (Adagrad's exists from the start)


SPARSE_ADAM_ERRORS = {
    "dense_gradient": lambda lib: _dense_step(lib),
    "lr": lambda lib: lib.optim.SparseAdam([lib.zeros(2, requires_grad=True)], lr=0.0),
    "eps": lambda lib: lib.optim.SparseAdam([lib.zeros(2, requires_grad=True)], eps=-1.0),
    "beta": lambda lib: lib.optim.SparseAdam([lib.zeros(2, requires_grad=True)], betas=(0.9, 1.0)),
    "complex_param": lambda lib: lib.optim.SparseAdam([lib.zeros(2, requires_grad=True),
                                                       lib.zeros(2, dtype=lib.complex128, requires_grad=True)]),
}


def _dense_step(lib):
    weight = lib.tensor(TABLE, requires_grad=True)
    optimizer = lib.optim.SparseAdam([weight])
    lib.nn.functional.embedding(lib.tensor([1]), weight).sum().backward()
    optimizer.step()


@pytest.mark.parametrize("case", SPARSE_ADAM_ERRORS)
def test_sparse_adam_errors_as_pytorch(case):
    theirs = torch_result(SPARSE_ADAM_ERRORS[case], case)
    with pytest.raises(Exception) as caught:
        SPARSE_ADAM_ERRORS[case](mg)
    assert type(caught.value) is theirs.type and str(caught.value) == theirs.message


def test_optimizer_state_with_sparse_entries_saves_and_loads():
    """SparseAdam's step stays an int; SGD's sparse momentum buffer goes through mg.save and load_state_dict, and
    training resumed from the copy continues exactly as the original."""
    weight, adam = _train(mg, "SparseAdam", dict(lr=0.1), steps=STEPS[:2])
    _, sgd = _train(mg, "SGD", dict(lr=0.1, momentum=0.9), steps=STEPS[:2])
    buffer = io.BytesIO()
    mg.save({"adam": adam.state_dict(), "sgd": sgd.state_dict()}, buffer)
    buffer.seek(0)
    saved = mg.load(buffer)
    assert saved["adam"]["state"][0]["step"] == 2 and type(saved["adam"]["state"][0]["step"]) is int
    momentum = saved["sgd"]["state"][0]["momentum_buffer"]
    assert momentum.layout == mg.sparse_coo
    np.testing.assert_array_equal(momentum.to_dense().numpy(),
                                  sgd.state_dict()["state"][0]["momentum_buffer"].to_dense().numpy())   # a copy
    for name, options, state in (("SparseAdam", dict(lr=0.1), saved["adam"]), ("SGD", dict(lr=0.1, momentum=0.9),
                                                                                  saved["sgd"])):
        original, optimizer = _train(mg, name, options, steps=STEPS[:2])
        copy = mg.tensor(original.detach().numpy().copy(), requires_grad=True)
        resumed = getattr(mg.optim, name)([copy], **options)
        resumed.load_state_dict(state)
        for w, opt in ((original, optimizer), (copy, resumed)):
            opt.zero_grad()
            mg.nn.functional.embedding(mg.tensor([1, 5]), w, sparse=True).backward(mg.tensor(STEPS[0][1][:2]))
            opt.step()
        np.testing.assert_array_equal(copy.detach().numpy(), original.detach().numpy())   # same operations: exact


def test_saved_sparse_tensors_are_checked_when_loaded(tmp_path):
    """A sparse tensor round-trips through mg.save; an archive whose indices leave the size is refused; another
    sparse layout is refused at save with what to do."""
    tensor = mg.sparse_coo_tensor([[0, 2, 0]], mg.tensor([1.0, 2.0, 3.0]), (4,)).requires_grad_()
    path = tmp_path / "sparse.pt"
    mg.save({"t": tensor}, path)
    back = mg.load(path)["t"]
    assert back.requires_grad and back.shape == (4,) and not back.is_coalesced()
    np.testing.assert_array_equal(back.to_dense().detach().numpy(), [4.0, 0.0, 2.0, 0.0])
    wrong = mg.sparse_coo_tensor([[0, 2, 0]], mg.tensor([1.0, 2.0, 3.0]), (4,))
    wrong._idx[0, 1] = 9                                                          # past the size
    mg.save(wrong, path)
    with pytest.raises(RuntimeError, match="index out of range"):
        mg.load(path)
    with pytest.raises(TypeError, match="to_sparse_coo"):
        mg.save(mg.eye(3).to_sparse_csr(), io.BytesIO())


# --------------------------------------------------------------------------- the rest of the surface
def test_zero_grad_keeps_an_empty_sparse_gradient_as_pytorch():
    def run(lib):
        embedding = lib.nn.Embedding(7, 3, sparse=True)
        optimizer = lib.optim.SGD(embedding.parameters(), lr=0.1)
        embedding(lib.tensor([1, 2])).sum().backward()
        optimizer.zero_grad(set_to_none=False)
        after_optimizer = described(embedding.weight.grad)
        embedding(lib.tensor([3])).sum().backward()
        embedding.zero_grad(set_to_none=False)
        return {"optimizer": after_optimizer, "module": described(embedding.weight.grad)}
    theirs = torch_result(run, "zero_grad")
    mine = run(mg)
    for key in ("optimizer", "module"):
        assert_same(mine[key], theirs[key], entries=False)
        assert mine[key]["values"].shape == theirs[key]["values"].shape == (0, 3)


@pytest.mark.parametrize("module", ["Embedding", "EmbeddingBag"])
@pytest.mark.parametrize("freeze", [True, False])
def test_from_pretrained_as_pytorch(module, freeze):
    def run(lib):
        table = lib.tensor(TABLE)
        options = dict(padding_idx=1) if module == "Embedding" else dict(mode="sum")
        layer = getattr(lib.nn, module).from_pretrained(table, freeze=freeze, sparse=True, **options)
        out = layer(lib.tensor([[1, 2]]))
        if not freeze:
            out.sum().backward()
        return {"repr": repr(layer), "requires_grad": layer.weight.requires_grad, "out": out.detach().numpy().copy(),
                "shares": layer.weight.data_ptr() == table.data_ptr(), "grad": described(layer.weight.grad)}
    theirs = torch_result(run, module, freeze)
    mine = run(mg)
    assert {k: mine[k] for k in ("repr", "requires_grad", "shares")} == {k: theirs[k] for k in
                                                                          ("repr", "requires_grad", "shares")}
    np.testing.assert_allclose(mine["out"], theirs["out"], rtol=1e-12)
    assert_same(mine["grad"], theirs["grad"])


def test_from_pretrained_refuses_a_table_that_is_not_2d_as_pytorch():
    def run(lib):
        return lib.nn.Embedding.from_pretrained(lib.zeros(3))
    theirs = torch_result(run, "1d")
    with pytest.raises(Exception) as caught:
        run(mg)
    assert type(caught.value) is theirs.type and str(caught.value) == theirs.message


def test_dense_add_sub_and_sparse_mask_with_a_sparse_operand_as_pytorch():
    def run(lib):
        sparse = lib.sparse_coo_tensor(lib.tensor([[0, 2, 0]]), lib.tensor(RNG_ROWS), (4, 2))
        dense = lib.tensor(DENSE)
        added = dense.clone().add_(sparse, alpha=-0.5)
        subtracted = dense.clone()
        subtracted -= sparse
        return {"added": added.numpy(), "subtracted": subtracted.numpy(), "sum": (dense + sparse).numpy(),
                "mask": described(dense.sparse_mask(sparse.coalesce()))}
    theirs = torch_result(run, "add")
    mine = run(mg)
    for key in ("added", "subtracted", "sum"):
        np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-12, atol=1e-13)
    assert_same(mine["mask"], theirs["mask"])


RNG_ROWS, DENSE = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2))


def test_a_sparse_matrix_adds_into_a_transposed_dense_one():
    """Both dims sparse: the dense tensor's rows of one number each cannot be viewed in a column-major matrix, so the
    sums are written back; the same as adding into a contiguous copy."""
    sparse = mg.sparse_coo_tensor([[0, 3, 0, 2], [1, 0, 1, 1]], mg.tensor([1.0, 2.0, 3.0, 4.0]), (4, 2))
    transposed = mg.tensor(DENSE.T.copy()).t()
    assert not transposed.is_contiguous()
    transposed.add_(sparse, alpha=0.5)
    expected = DENSE.copy()
    for (i, j), v in zip([(0, 1), (3, 0), (0, 1), (2, 1)], [1.0, 2.0, 3.0, 4.0]):
        expected[i, j] += 0.5 * v
    np.testing.assert_allclose(transposed.numpy(), expected, rtol=1e-15, atol=0)


def test_a_recorded_write_of_a_sparse_operand_is_differentiable():
    """Under autograd (the dense tensor in a graph), add_ of a sparse tensor is the recorded dense sum."""
    x = mg.tensor(DENSE, requires_grad=True)
    values = mg.tensor(RNG_ROWS, requires_grad=True)
    y = x * 1
    y.add_(mg.sparse_coo_tensor([[0, 2, 0]], values, (4, 2)), alpha=3)
    upstream = RNG.standard_normal((4, 2))
    y.backward(mg.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), upstream, rtol=1e-15)
    np.testing.assert_allclose(values.grad.numpy(), 3 * upstream[[0, 2, 0]], rtol=1e-15)


def test_clip_grad_norm_refuses_sparse_gradients_as_pytorch():
    def run(lib):
        embedding = lib.nn.Embedding(7, 3, sparse=True)
        embedding(lib.tensor([1, 2])).sum().backward()
        lib.nn.utils.clip_grad_norm_(embedding.parameters(), 1.0)
    theirs = torch_result(run, "clip")
    with pytest.raises(Exception) as caught:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(mg)
    assert type(caught.value) is theirs.type
