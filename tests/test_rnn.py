"""RNN, LSTM, GRU and their cells against PyTorch.

Mirrors in float64: the same weights (PyTorch's state_dict loaded into minigrad, and minigrad's into
PyTorch) give the same outputs and final states, and, under random upstream gradients on every output,
the same gradients for the input, the initial states and every parameter; swept over layers, directions,
batch_first, bias, unbatched input and given/absent initial states. Then the parameter names and shapes,
PyTorch's initialization bounds and statistics, dropout between layers, reprs and errors.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import assert_double_mirror, check_grad, torch_or_skip

KINDS = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {})]
KIND_IDS = ["RNN-tanh", "RNN-relu", "LSTM", "GRU"]


def twins(name, *args, **kwargs):
    """(minigrad module, PyTorch module) in float64 with PyTorch's random weights in both."""
    torch = torch_or_skip()
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(mg.nn, name)(*args, **kwargs, dtype=mg.float64)
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def flatten_outputs(out):
    """(output, h_n) or (output, (h_n, c_n)) or h' or (h', c') as a flat list of tensors."""
    if not isinstance(out, tuple):
        return [out]
    return [t for item in out for t in flatten_outputs(item)]


def compare(ours, theirs, inputs, rng, call):
    """Run ``call(module, lib, *inputs)`` in both libraries, compare every output and, after a backward of
    random upstream gradients, the gradient of every float input and every parameter."""
    torch = torch_or_skip()
    mg_in = [mg.tensor(a, requires_grad=True) for a in inputs]
    th_in = [torch.tensor(a, requires_grad=True) for a in inputs]
    out_mg, out_th = flatten_outputs(call(ours, mg, *mg_in)), flatten_outputs(call(theirs, torch, *th_in))
    assert len(out_mg) == len(out_th)
    total_mg, total_th = 0, 0
    for a, b in zip(out_mg, out_th):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-13)
        upstream = rng.standard_normal(a.shape)
        total_mg = total_mg + (a * mg.tensor(upstream)).sum()
        total_th = total_th + (b * torch.tensor(upstream)).sum()
    total_mg.backward()
    total_th.backward()
    for a, b in zip(mg_in, th_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-12, err_msg="input grad")
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-11, atol=1e-12,
                                   err_msg=name)


CONFIGS = list(itertools.product([1, 2], [False, True], [False, True], [True, False]))


@pytest.mark.parametrize("num_layers, bidirectional, batch_first, bias", CONFIGS,
                         ids=[f"L{c[0]}-bi{int(c[1])}-bf{int(c[2])}-bias{int(c[3])}" for c in CONFIGS])
@pytest.mark.parametrize("name, kwargs", KINDS, ids=KIND_IDS)
def test_recurrent_layer_mirrors_pytorch(name, kwargs, num_layers, bidirectional, batch_first, bias, rng):
    ours, theirs = twins(name, 3, 4, num_layers, bias=bias, batch_first=batch_first,
                         bidirectional=bidirectional, **kwargs)
    L, N, D = 5, 2, 2 if bidirectional else 1
    x = rng.standard_normal((N, L, 3) if batch_first else (L, N, 3))
    compare(ours, theirs, [x], rng, lambda m, lib, x: m(x))
    states = [rng.standard_normal((num_layers * D, N, 4)) for _ in range(2 if name == "LSTM" else 1)]
    compare(ours, theirs, [x, *states], rng,
            lambda m, lib, x, *s: m(x, tuple(s) if name == "LSTM" else s[0]))


@pytest.mark.parametrize("name, kwargs", KINDS, ids=KIND_IDS)
def test_unbatched_input(name, kwargs, rng):
    ours, theirs = twins(name, 3, 4, 2, bidirectional=True, **kwargs)
    x = rng.standard_normal((5, 3))
    compare(ours, theirs, [x], rng, lambda m, lib, x: m(x))
    states = [rng.standard_normal((4, 4)) for _ in range(2 if name == "LSTM" else 1)]
    compare(ours, theirs, [x, *states], rng, lambda m, lib, x, *s: m(x, tuple(s) if name == "LSTM" else s[0]))


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {}),
         ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("name, kwargs", CELLS, ids=[f"{n}{k}" for n, k in CELLS])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_mirror_pytorch(name, kwargs, batched, rng):
    ours, theirs = twins(name, 3, 4, **kwargs)
    assert repr(ours) == repr(theirs)
    shape = (2,) if batched else ()
    x = rng.standard_normal(shape + (3,))
    compare(ours, theirs, [x], rng, lambda m, lib, x: m(x))
    states = [rng.standard_normal(shape + (4,)) for _ in range(2 if name == "LSTMCell" else 1)]
    compare(ours, theirs, [x, *states], rng, lambda m, lib, x, *s: m(x, tuple(s) if name == "LSTMCell" else s[0]))


def test_a_cell_unrolled_by_hand_equals_the_layer(rng):
    """LSTMCell stepped over time with the layer's weights gives the layer's output (no PyTorch needed): the
    composite step (``cell_step``) against the layer's array time loop, up to rounding."""
    layer = mg.nn.LSTM(3, 4, dtype=mg.float64)
    cell = mg.nn.LSTMCell(3, 4, dtype=mg.float64)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = mg.tensor(rng.standard_normal((6, 2, 3)))
    out, (_, c_n) = layer(x)
    h = c = mg.zeros(2, 4, dtype=mg.float64)
    for t in range(6):
        h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(out[t].detach().numpy(), h.detach().numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c_n[0].detach().numpy(), c.detach().numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, kwargs", KINDS + [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {})],
                         ids=KIND_IDS + ["LSTMCell", "GRUCell", "RNNCell"])
def test_parameter_names_shapes_and_loading_into_pytorch(name, kwargs, rng):
    torch = torch_or_skip()
    args = (3, 5, 2) if not name.endswith("Cell") else (3, 5)
    extra = {} if name.endswith("Cell") else {"bidirectional": True}
    ours = getattr(mg.nn, name)(*args, **extra, **kwargs, dtype=mg.float64)
    theirs = getattr(torch.nn, name)(*args, **extra, **kwargs).double()
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((4, 2, 3) if not name.endswith("Cell") else (2, 3))
    a = flatten_outputs(ours(mg.tensor(x)))[0]
    b = flatten_outputs(theirs(torch.tensor(x)))[0]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU", "LSTMCell"])
def test_initialization_is_uniform_within_one_over_sqrt_hidden(name):
    mg.manual_seed(0)
    hidden = 64
    module = getattr(mg.nn, name)(32, hidden)
    bound = 1 / math.sqrt(hidden)
    values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
    assert values.dtype == np.float32 and values.size > 5000
    assert np.all(np.abs(values) <= bound)
    assert abs(values.mean()) < 0.05 * bound       # 7 standard errors of the mean
    np.testing.assert_allclose(values.var(), bound ** 2 / 3, rtol=0.05)   # the variance of U(-b, b)


def test_dropout_between_layers_in_training_only(rng):
    torch = torch_or_skip()
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        mg.nn.GRU(3, 4, dropout=0.5)
    ours, theirs = twins("LSTM", 3, 4, 3, dropout=0.5)
    x = rng.standard_normal((5, 2, 3))
    ours.eval()
    theirs.eval()
    compare(ours, theirs, [x], rng, lambda m, lib, x: m(x))
    ours.train()
    first, second = ours(mg.tensor(x))[0], ours(mg.tensor(x))[0]
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    # dropout=1 zeroes the input of every layer after the first: the last layer's output ignores x
    ones = mg.nn.RNN(3, 4, 2, dropout=1.0, dtype=mg.float64)
    a, b = ones(mg.tensor(x))[0], ones(mg.tensor(rng.standard_normal((5, 2, 3))))[0]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-14)
    del torch


def test_constructor_errors():
    with pytest.raises(ValueError, match="Unknown nonlinearity 'foo'. Select from 'tanh' or 'relu'."):
        mg.nn.RNN(4, 5, nonlinearity="foo")
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        mg.nn.LSTM(4, 5.0)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        mg.nn.GRU(4, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        mg.nn.GRU(4, 5, 0)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        mg.nn.LSTM(4, 5, 2, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        mg.nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(ValueError, match="proj_size should be a positive integer or zero"):
        mg.nn.LSTM(4, 5, proj_size=-1)
    for layer in (mg.nn.GRU, mg.nn.RNN):                      # PyTorch refuses the keyword itself, even 0
        for size in (0, 2):
            with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
                layer(4, 5, proj_size=size)
        with pytest.raises(TypeError, match="RNNBase.__init__.. got an unexpected keyword argument 'foo'"):
            layer(4, 5, foo=1)
    projected = mg.nn.LSTM(4, 5, num_layers=2, proj_size=2)   # supported: values compared in test_modinfo.py
    assert projected.weight_hr_l1.shape == (2, 5) and projected.weight_ih_l1.shape == (20, 2)


def test_forward_errors():
    lstm, gru, rnn = mg.nn.LSTM(4, 5, 2), mg.nn.GRU(4, 5), mg.nn.RNN(4, 5)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        lstm(mg.zeros(3, 2, 2, 4))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor instead"):
        rnn(mg.zeros(3, 2, 2, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 3"):
        gru(mg.zeros(3, 2, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 5\), got \[1, 2, 5\]"):
        lstm(mg.zeros(3, 2, 4), (mg.zeros(1, 2, 5), mg.zeros(2, 2, 5)))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 5\), got \[2, 2, 5\]"):
        gru(mg.zeros(3, 2, 4), mg.zeros(2, 2, 5))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx and cx should also be 2-D"):
        lstm(mg.zeros(3, 4), (mg.zeros(2, 1, 5), mg.zeros(2, 1, 5)))
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D instead"):
        mg.nn.RNNCell(4, 5)(mg.zeros(2, 2, 4))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3 expected 4"):
        mg.nn.LSTMCell(4, 5)(mg.zeros(2, 3))
    for module, x in ((lstm, mg.zeros(0, 2, 4)), (mg.nn.GRU(4, 5, batch_first=True), mg.zeros(2, 0, 4)),
                      (rnn, mg.zeros(0, 4))):
        with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
            module(x)
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: foo"):
        mg.nn.RNNCell(4, 5, nonlinearity="foo")(mg.zeros(2, 4))


@pytest.mark.parametrize("name, kwargs", KINDS, ids=KIND_IDS)
def test_recurrent_layer_gradcheck_without_pytorch(name, kwargs, rng):
    """Finite differences through the time loop, for the input and the initial states."""
    mg.manual_seed(0)
    module = getattr(mg.nn, name)(2, 3, 2, bidirectional=True, dtype=mg.float64, **kwargs)
    x = rng.standard_normal((4, 2, 2))
    states = [rng.standard_normal((4, 2, 3)) for _ in range(2 if name == "LSTM" else 1)]

    def f(x, *s):
        out, h = module(x, tuple(s) if name == "LSTM" else s[0])
        return out, *(h if name == "LSTM" else (h,))
    check_grad(f, x, *states)


@given(kind=st.sampled_from(range(len(KINDS))), L=st.integers(1, 4), N=st.integers(1, 3), H_in=st.integers(1, 3),
       H=st.integers(1, 3), num_layers=st.integers(1, 2), bidirectional=st.booleans(), seed=st.integers(0, 2 ** 16))
@settings(max_examples=15)
def test_recurrent_layer_sizes_sweep(kind, L, N, H_in, H, num_layers, bidirectional, seed):
    name, kwargs = KINDS[kind]
    rng = np.random.default_rng(seed)
    ours, theirs = twins(name, H_in, H, num_layers, bidirectional=bidirectional, **kwargs)
    compare(ours, theirs, [rng.standard_normal((L, N, H_in))], rng, lambda m, lib, x: m(x))


def test_flatten_parameters_is_accepted():
    lstm = mg.nn.LSTM(2, 3)
    assert lstm.flatten_parameters() is None


PROJ_CONFIGS = list(itertools.product([1, 2], [False, True], [False, True], [True, False]))


@pytest.mark.parametrize("num_layers, bidirectional, batch_first, bias", PROJ_CONFIGS,
                         ids=[f"L{c[0]}-bi{int(c[1])}-bf{int(c[2])}-bias{int(c[3])}" for c in PROJ_CONFIGS])
def test_lstm_with_projection_mirrors_pytorch(num_layers, bidirectional, batch_first, bias, rng):
    """proj_size: h = (o tanh(c)) W_hr^T is (N, P), c stays (N, H); h0 and c0 given with their own sizes."""
    ours, theirs = twins("LSTM", 3, 5, num_layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional,
                         proj_size=2)
    L, N, D = 4, 3, 2 if bidirectional else 1
    x = rng.standard_normal((N, L, 3) if batch_first else (L, N, 3))
    compare(ours, theirs, [x], rng, lambda m, lib, x: m(x))
    h0, c0 = rng.standard_normal((num_layers * D, N, 2)), rng.standard_normal((num_layers * D, N, 5))
    compare(ours, theirs, [x, h0, c0], rng, lambda m, lib, x, h, c: m(x, (h, c)))


@pytest.mark.parametrize("name, kwargs", KINDS + [("LSTM", {"proj_size": 24})], ids=KIND_IDS + ["LSTM-proj"])
def test_sizes_whose_step_products_run_on_numba_threads(name, kwargs, rng):
    """Batch 32, hidden 64 (96 for the RNN): each step's product is large enough for matmul_numba's planned
    path (kernels.matmul's threshold), whose blocks are cut once per loop; float64 against PyTorch."""
    hidden = 96 if name == "RNN" else 64
    ours, theirs = twins(name, 8, hidden, 2, bidirectional=True, **kwargs)
    x = rng.standard_normal((4, 32, 8))
    states = [rng.standard_normal((4, 32, kwargs.get("proj_size", hidden)))] + \
        ([rng.standard_normal((4, 32, hidden))] if name == "LSTM" else [])
    compare(ours, theirs, [x, *states], rng, lambda m, lib, x, *s: m(x, tuple(s) if name == "LSTM" else s[0]))


@pytest.mark.parametrize("name, kwargs", [("LSTM", {"proj_size": 2}), ("GRU", {}), ("RNN", {"nonlinearity": "relu"}),
                                          ("RNN", {})], ids=["LSTM-proj", "GRU", "RNN-relu", "RNN-tanh"])
def test_double_backward_mirrors_pytorch(name, kwargs, rng):
    """create_graph=True through two bidirectional layers (graph_backward: the composite step, differentiated
    by autograd): the gradients of a non-linear function of the first gradients, for the input, the initial
    states and every parameter, against PyTorch."""
    torch = torch_or_skip()
    ours, theirs = twins(name, 3, 4, 2, bidirectional=True, **kwargs)
    x = rng.standard_normal((3, 2, 3))
    h0 = rng.standard_normal((4, 2, kwargs.get("proj_size", 4)))
    weights = None
    results = []
    for lib, module in ((mg, ours), (torch, theirs)):
        xt, ht = lib.tensor(x, requires_grad=True), lib.tensor(h0, requires_grad=True)
        out, _ = module(xt, (ht, lib.zeros(4, 2, 4, dtype=lib.float64)) if name == "LSTM" else ht)
        if weights is None:
            weights = rng.standard_normal(tuple(out.shape))
        params = [p for _, p in module.named_parameters()]
        first = lib.autograd.grad((out * lib.tensor(weights)).sum() + (out * out).sum() / 2, [xt, ht] + params,
                                  create_graph=True)
        penalty = sum((g * g).sum() for g in first)
        results.append([g.detach().numpy() for g in first] + [g.numpy() for g in lib.autograd.grad(
            penalty, [xt, ht] + params)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_backward_graph_does_not_grow_with_the_sequence(name):
    """One node per layer and direction for the whole time loop: the graph of a 40-step sequence has as many
    nodes as that of a 4-step one (a per-step graph would hand each step's slice a full-size gradient)."""
    module = getattr(mg.nn, name)(3, 4, 2, bidirectional=True)
    sizes = []
    for steps in (4, 40):
        out = module(mg.randn(steps, 2, 3, requires_grad=True))[0]
        sizes.append(len(mg.viz.trace(out).ops()))
    assert sizes[0] == sizes[1] < 30


@pytest.mark.parametrize("name, kwargs", KINDS + [("LSTM", {"proj_size": 24})], ids=KIND_IDS + ["LSTM-proj"])
def test_numpy_and_numba_backends_agree(name, kwargs, rng):
    """The same layer on both kernel backends (NumPy references and np.matmul, numba twins and planned
    products), at sizes where the step products run on numba's threads."""
    from minigrad.kernels import use_backend
    mg.manual_seed(0)
    module = getattr(mg.nn, name)(8, 64, 2, bidirectional=True, dtype=mg.float64, **kwargs)
    x = rng.standard_normal((5, 32, 8))
    upstream = rng.standard_normal((5, 32, 2 * kwargs.get("proj_size", 64)))
    results = []
    for backend in ("numpy", "numba"):
        with use_backend(backend):
            xt = mg.tensor(x, requires_grad=True)
            module.zero_grad()
            module(xt)[0].backward(mg.tensor(upstream))
            results.append([xt.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name, kwargs", KINDS, ids=KIND_IDS)
def test_empty_batch(name, kwargs, rng):
    """A batch of 0 sequences gives empty outputs and gradients of the right shapes, as PyTorch."""
    ours, theirs = twins(name, 3, 4, 2, bidirectional=True, **kwargs)
    compare(ours, theirs, [rng.standard_normal((5, 0, 3))], rng, lambda m, lib, x: m(x))


@pytest.mark.parametrize("name, kwargs", [("LSTM", {"proj_size": 2}), ("GRU", {}), ("RNN", {})],
                         ids=["LSTM-proj", "GRU", "RNN"])
def test_double_backward_through_the_upstream_gradient(name, kwargs, rng):
    """assert_double_mirror: the first gradient's dependence on the input and on the upstream gradient, both
    differentiated again, against PyTorch (graph_backward keeps the upstream gradient in the graph)."""
    ours, theirs = twins(name, 3, 4, 2, bidirectional=True, **kwargs)
    assert_double_mirror(lambda t: ours(t)[0], lambda t: theirs(t)[0], rng.standard_normal((3, 2, 3)),
                         rtol=1e-9, atol=1e-11)
