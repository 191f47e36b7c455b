"""minigrad.utils.flop_counter against torch.utils.flop_counter: the counts per op and per module, forward and
backward (and create_graph), for products, convolutions, attention, einsum and recurrent layers, with every
combination of inputs needing gradients; the table's layout checked on counts worked out by hand; a planted
wrong backward formula is caught; users' formulas and the counter's errors.

The counts are compared as PyTorch's CPU build reports them (live, or recorded in tests/fixtures/). Where the two
differ on purpose (PyTorch's CPU attention and oneDNN LSTM kernels, which it does not count), the test says so.
"""
import itertools
import threading

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils import flop_counter as mg_flop_counter
from minigrad.utils.flop_counter import FlopCounterMode, register_flop_formula

from .mirror import torch_or_skip, torch_result


def _counter_of(lib):
    if lib is mg:
        return FlopCounterMode
    import torch.utils.flop_counter
    return torch.utils.flop_counter.FlopCounterMode


def _plain(counter):
    """get_flop_counts() with the ops as text ("aten.mm"), as both libraries print them."""
    return {module: {str(op): n for op, n in ops.items()} for module, ops in counter.get_flop_counts().items()}


# --------------------------------------------------------------------------- single ops, every needs-grad combination
OPS = {
    "mm": (lambda l, F, a, b: l.mm(a, b), [(3, 4), (4, 5)]),
    "matmul 1d@2d": (lambda l, F, a, b: l.matmul(a, b), [(4,), (4, 5)]),
    "matmul 2d@1d": (lambda l, F, a, b: l.matmul(a, b), [(3, 4), (4,)]),
    "matmul 1d@1d": (lambda l, F, a, b: l.matmul(a, b), [(4,), (4,)]),
    "matmul 3d@2d": (lambda l, F, a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "matmul 2d@3d": (lambda l, F, a, b: a @ b, [(3, 4), (2, 4, 5)]),
    "matmul 3d@1d": (lambda l, F, a, b: a @ b, [(2, 3, 4), (4,)]),
    "matmul 1d@3d": (lambda l, F, a, b: a @ b, [(4,), (2, 4, 5)]),
    "matmul 4d@3d broadcast": (lambda l, F, a, b: a @ b, [(2, 1, 3, 4), (5, 4, 6)]),
    "matmul transposed 3d@2d": (lambda l, F, a, b: a.transpose(0, 1) @ b, [(3, 2, 4), (4, 5)]),
    "bmm": (lambda l, F, a, b: l.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "addmm": (lambda l, F, a, b, c: l.addmm(a, b, c), [(5,), (3, 4), (4, 5)]),
    "baddbmm": (lambda l, F, a, b, c: l.baddbmm(a, b, c, beta=0.5), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm": (lambda l, F, a, b, c: l.addbmm(a, b, c), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "linear 2d": (lambda l, F, x, w, b: F.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    "linear 3d": (lambda l, F, x, w, b: F.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    "linear 4d": (lambda l, F, x, w, b: F.linear(x, w, b), [(2, 2, 3, 4), (5, 4), (5,)]),
    "linear 1d": (lambda l, F, x, w, b: F.linear(x, w, b), [(4,), (5, 4), (5,)]),
    "linear without bias": (lambda l, F, x, w: F.linear(x, w), [(2, 3, 4), (5, 4)]),
    "linear transposed input": (lambda l, F, x, w, b: F.linear(x.transpose(0, 1), w, b), [(3, 2, 4), (5, 4), (5,)]),
    "einsum bmm": (lambda l, F, a, b: l.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
    "einsum three": (lambda l, F, a, b, c: l.einsum("ij,jk,kl->il", a, b, c), [(2, 3), (3, 4), (4, 5)]),
    "einsum three batched": (lambda l, F, a, b, c: l.einsum("bij,bjk,bkl->bl", a, b, c),
                             [(2, 2, 3), (2, 3, 4), (2, 4, 5)]),
    "einsum outer": (lambda l, F, a, b: l.einsum("i,j->ij", a, b), [(3,), (4,)]),
    "einsum batched outer": (lambda l, F, a, b: l.einsum("bi,bj->bij", a, b), [(2, 3), (2, 4)]),
    "einsum full sum": (lambda l, F, a, b: l.einsum("ij,ij->", a, b), [(2, 3), (2, 3)]),
    "einsum diagonal": (lambda l, F, a, b: l.einsum("ii,ij->j", a, b), [(3, 3), (3, 4)]),
    "einsum ellipsis": (lambda l, F, a, b: l.einsum("...ij,...jk->...ik", a, b), [(2, 2, 3, 4), (2, 4, 5)]),
    "einsum summed alone": (lambda l, F, a, b: l.einsum("ijk,jl->il", a, b), [(2, 3, 4), (3, 5)]),
    "sdpa": (lambda l, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)]),
    "sdpa causal": (lambda l, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    [(2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)]),
    "sdpa grouped": (lambda l, F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                     [(2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)]),
    "sdpa 3d": (lambda l, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 3, 4), (2, 5, 4), (2, 5, 6)]),
    "conv2d": (lambda l, F, x, w, b: F.conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3), (4,)]),
    "conv1d grouped strided": (lambda l, F, x, w: F.conv1d(x, w, groups=2, stride=2), [(2, 4, 9), (6, 2, 3)]),
    "conv3d dilated": (lambda l, F, x, w: F.conv3d(x, w, dilation=2), [(1, 2, 6, 6, 6), (3, 2, 2, 2, 2)]),
    "conv_transpose2d": (lambda l, F, x, w: F.conv_transpose2d(x, w, stride=2), [(2, 3, 5, 5), (3, 4, 3, 3)]),
    "conv_transpose1d grouped": (lambda l, F, x, w, b: F.conv_transpose1d(x, w, b, groups=2, output_padding=1,
                                                                          stride=2),
                                 [(2, 4, 6), (4, 3, 3), (6,)]),
}


def _op_counts(lib, name, grads):
    """(forward counts, counts after a backward with a random upstream gradient), "Global" only."""
    f, shapes = OPS[name]
    values = np.random.default_rng(0)
    tensors = [lib.tensor(values.standard_normal(s), requires_grad=g) for s, g in zip(shapes, grads)]
    with _counter_of(lib)(display=False) as counter:
        out = f(lib, lib.nn.functional, *tensors)
        forward = _plain(counter).get("Global", {})
        if any(grads):
            out.backward(lib.tensor(values.standard_normal(tuple(out.shape))))
    return [forward, _plain(counter).get("Global", {})]


@pytest.mark.parametrize("name", list(OPS))
def test_op_counts_as_pytorch(name):
    for grads in itertools.product([True, False], repeat=len(OPS[name][1])):
        theirs = torch_result(lambda torch: _op_counts(torch, name, grads), name, grads)
        assert _op_counts(mg, name, grads) == theirs, grads


def test_a_wrong_backward_formula_is_caught(monkeypatch):
    """The comparison above catches a backward formula that counts one product where two run."""
    grads = (True, True)
    theirs = torch_result(lambda torch: _op_counts(torch, "mm", grads), "mm", grads)
    assert _op_counts(mg, "mm", grads) == theirs

    def one_product(node, grad_shape):
        name, flops = right(node, grad_shape)
        return name, flops // 2
    right = mg_flop_counter._matmul_backward
    monkeypatch.setattr(mg_flop_counter, "_matmul_backward", one_product)
    assert _op_counts(mg, "mm", grads) != theirs


# --------------------------------------------------------------------------- modules: per-module counts
def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Sequential(nn.Conv2d(4, 6, 3, stride=2, groups=2), nn.Flatten()), nn.Linear(54, 5))


def _attention(lib):
    nn = lib.nn

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.att = nn.MultiheadAttention(8, 2, batch_first=True)
            self.out = nn.Linear(8, 3)

        def forward(self, x):
            return self.out(self.att(x, x, x)[0])
    return SelfAttention()


def _decoder(lib):
    nn = lib.nn
    return nn.Sequential(nn.ConvTranspose2d(3, 2, 3, stride=2), nn.Tanh(), nn.Conv2d(2, 2, 1))


def _gru(lib):
    return lib.nn.GRU(4, 6, num_layers=2, batch_first=True)


MODELS = {"mlp": (_mlp, (5, 8)), "cnn": (_cnn, (2, 3, 8, 8)), "attention": (_attention, (2, 5, 8)),
          "decoder": (_decoder, (2, 3, 4, 4)), "gru": (_gru, (2, 5, 4))}


def _model_counts(lib, name, input_grad):
    build, shape = MODELS[name]
    lib.manual_seed(0)
    model = build(lib)
    values = np.random.default_rng(0)
    x = lib.tensor(values.standard_normal(shape), dtype=lib.float32, requires_grad=input_grad)
    with _counter_of(lib)(display=False) as counter:
        out = model(x)
        out = out[0] if isinstance(out, tuple) else out
        out.backward(lib.tensor(values.standard_normal(tuple(out.shape)), dtype=lib.float32))
    return _plain(counter)


@pytest.mark.parametrize("input_grad", [False, True])
@pytest.mark.parametrize("name", list(MODELS))
def test_module_counts_as_pytorch(name, input_grad):
    """Every module's counts, forward and backward: in the backward an op belongs to the modules whose outputs'
    gradients have arrived and whose inputs' have not (the model itself, whose output is the backward's one root,
    is not entered in the backward: PyTorch's tracker does not see it)."""
    theirs = torch_result(lambda torch: _model_counts(torch, name, input_grad), name, input_grad)
    assert _model_counts(mg, name, input_grad) == theirs


def _transformer_counts(lib):
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = lib.tensor(np.random.default_rng(0).standard_normal((2, 5, 8)), dtype=lib.float32)
    with _counter_of(lib)(display=False) as counter:
        layer(x).sum().backward()
    return _plain(counter)


def test_transformer_layer_counts_attention_which_pytorch_cpu_does_not():
    """PyTorch's CPU build runs the self-attention of a Transformer layer in a fused kernel it has no formula for
    (it counts nothing there); minigrad counts attention's two products. Everything else agrees."""
    theirs = torch_result(_transformer_counts)
    ours = _transformer_counts(mg)
    attention = {module: ops.pop("aten.bmm") for module, ops in ours.items() if "aten.bmm" in ops}
    assert ours == theirs
    # B*H = 4 products (L, E) @ (E, S) and 4 (L, S) @ (S, E), L = S = 5, E = 4: 2 * 4 * 5 * 5 * 4 flops each
    # kind, forward; the backward runs two products per product (q, k and v all need gradients)
    assert attention["TransformerEncoderLayer.self_attn"] == 3 * 2 * (2 * 4 * 5 * 5 * 4)


# --------------------------------------------------------------------------- recurrent layers
def _recurrent_counts(lib, mode, kwargs, input_grad, h0_grad):
    lib.manual_seed(0)
    layer = getattr(lib.nn, mode)(4, 6, **kwargs)
    batch_first = kwargs.get("batch_first", False)
    shape = (2, 5, 4) if batch_first else (5, 2, 4)
    values = np.random.default_rng(0)
    x = lib.tensor(values.standard_normal(shape), dtype=lib.float32, requires_grad=input_grad)
    states = (2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1)
    h0 = lib.zeros(states, 2, kwargs.get("proj_size") or 6, requires_grad=True) if h0_grad else None
    with _counter_of(lib)(display=False) as counter:
        if h0 is None:
            out = layer(x)[0]
        else:
            out = layer(x, (h0, lib.zeros(states, 2, 6)) if mode == "LSTM" else h0)[0]
        out.backward(lib.tensor(values.standard_normal(tuple(out.shape)), dtype=lib.float32))
    return _plain(counter)


def _pytorch_composite(compute):
    """PyTorch's LSTM runs a oneDNN kernel on the CPU, which its counter does not count; with oneDNN off it runs
    its composite cells, whose products it counts, and minigrad counts those."""
    def without_onednn(torch):
        with torch.backends.mkldnn.flags(enabled=False):
            return compute(torch)
    return without_onednn


@pytest.mark.parametrize("mode", ["RNN", "GRU", "LSTM"])
def test_recurrent_counts_as_pytorch(mode):
    options = itertools.product([False, True], [False, True], [1, 2], [True, False], [0, 3], [False, True],
                                [False, True])
    for batch_first, bidirectional, layers, bias, proj, input_grad, h0_grad in options:
        if proj and mode != "LSTM":
            continue
        kwargs = dict(batch_first=batch_first, bidirectional=bidirectional, num_layers=layers, bias=bias)
        if proj:
            kwargs["proj_size"] = proj
        key = (mode, sorted(kwargs.items()), input_grad, h0_grad)
        theirs = torch_result(_pytorch_composite(lambda torch: _recurrent_counts(torch, mode, kwargs, input_grad,
                                                                                 h0_grad)), *key)
        assert _recurrent_counts(mg, mode, kwargs, input_grad, h0_grad) == theirs, key


# --------------------------------------------------------------------------- second order
def _second_order_counts(lib, name):
    values = np.random.default_rng(0)

    def make(*shape, grad=True):
        return lib.tensor(values.standard_normal(shape), requires_grad=grad)
    F = lib.nn.functional
    with _counter_of(lib)(display=False) as counter:
        if name == "linear":
            inputs = [make(3, 4), make(5, 4), make(5)]
            y = F.linear(*inputs).tanh()
        elif name == "bmm":
            inputs = [make(2, 3, 4), make(2, 4, 5)]
            y = (inputs[0] @ inputs[1]).tanh()
        elif name == "conv":
            inputs = [make(1, 2, 5, 5), make(3, 2, 3, 3)]
            y = F.conv2d(*inputs).tanh()
        else:
            inputs = [make(1, 4, 5, 5), make(4, 2, 3, 3)]
            y = F.conv_transpose2d(inputs[0], inputs[1], stride=2).tanh()
        grads = lib.autograd.grad((y * make(*y.shape, grad=False)).sum(), inputs, create_graph=True)
        sum((g * make(*g.shape, grad=False)).sum() for g in grads).backward()
    return _plain(counter)


@pytest.mark.parametrize("name", ["linear", "bmm", "conv", "conv_transpose"])
def test_create_graph_counts_as_pytorch(name):
    """Gradients of gradients: the first backward's products run as ops (counted as they run), and their
    backward is counted again. (Grouped convolutions, or a second backward through only some of the first one's
    gradients, count differently: PyTorch's first backward of a convolution is one op, minigrad's two.)"""
    theirs = torch_result(lambda torch: _second_order_counts(torch, name), name)
    assert _second_order_counts(mg, name) == theirs


def _grad_of_some_counts(lib):
    """autograd.grad with ``inputs`` naming some of the leaves: a node's backward computes only the gradients on
    the way to them (PyTorch's nodes do; minigrad's did all of them)."""
    values = np.random.default_rng(0)
    x, w, b = (lib.tensor(values.standard_normal(s), requires_grad=True) for s in [(3, 4), (5, 4), (5,)])
    with _counter_of(lib)(display=False) as counter:
        y = lib.nn.functional.linear(x, w, b).tanh()
        (gx,) = lib.autograd.grad((y * lib.tensor(values.standard_normal((3, 5)))).sum(), [x])
        h = (x @ w.T) @ w
        (gw,) = lib.autograd.grad((h * lib.tensor(values.standard_normal((3, 4)))).sum(), [w])
    return [_plain(counter), gx.detach().numpy(), gw.detach().numpy()]


def test_autograd_grad_of_some_inputs_computes_only_theirs():
    theirs = torch_result(_grad_of_some_counts)
    ours = _grad_of_some_counts(mg)
    assert ours[0] == theirs[0]
    for mine, want in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(mine, want, rtol=1e-12, atol=1e-12)


def _chains(lib, seed):
    """Random chains of 2-6 matrices (the first may be a row vector, the last a column) through
    ``linalg.multi_dot``: the counts (which reveal the order of the products) and the values."""
    values = np.random.default_rng(seed)
    results = []
    for _ in range(40):
        n = int(values.integers(2, 7))
        dims = [int(d) for d in values.integers(1, 9, size=n + 1)]
        arrays = [values.standard_normal((dims[i], dims[i + 1])) for i in range(n)]
        if values.random() < 0.2:
            arrays[0] = arrays[0][0]
        if values.random() < 0.2:
            arrays[-1] = arrays[-1][:, 0]
        tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
        with _counter_of(lib)(display=False) as counter:
            out = lib.linalg.multi_dot(tensors)
            out.backward(lib.tensor(values.standard_normal(tuple(out.shape))))
        results.append([_plain(counter), out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    return results


def test_multi_dot_multiplies_in_the_cheapest_order_as_pytorch():
    """linalg.multi_dot picks the order of the products with the fewest multiply-adds, as PyTorch does (minigrad
    multiplied left to right: a (3, 4) (4, 5) (5, 2) chain took 180 flops forward where PyTorch takes 128)."""
    theirs = torch_result(lambda torch: _chains(torch, 0))
    for mine, want in zip(_chains(mg, 0), theirs):
        assert mine[0] == want[0]
        for a, b in zip(mine[1:], want[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- the table, by hand
def test_table_layout_on_counts_worked_out_by_hand():
    """Linear(8, 3) then Linear(3, 2) on a batch of 2, input without gradient. Forward: addmm 2*2*8*3 = 96 and
    2*2*3*2 = 24. Backward: the second layer's two mm (24 each), the first layer's weight mm (96). Total 264,
    under 10,000: no unit, so the FLOP column holds plain numbers (as tabulate prints them). The model holds every
    flop (its output is not the backward's root here), so "Global" is not shown."""
    mg.manual_seed(0)
    model = mg.nn.Sequential(mg.nn.Linear(8, 3), mg.nn.ReLU(), mg.nn.Linear(3, 2))
    with FlopCounterMode(display=False, depth=2) as counter:
        y = model(mg.randn(2, 8))
        (y * mg.randn(2, 2)).sum().backward()
    assert counter.get_total_flops() == 264
    assert counter.get_table() == "\n".join([
        "Module            FLOP    % Total",
        "--------------  ------  ---------",
        "Sequential         264    100.00%",
        " - aten.addmm      120     45.45%",
        " - aten.mm         144     54.55%",
        " Sequential.0      192     72.73%",
        "  - aten.addmm      96     36.36%",
        "  - aten.mm         96     36.36%",
        " Sequential.2       72     27.27%",
        "  - aten.addmm      24      9.09%",
        "  - aten.mm         48     18.18%",
    ])
    assert [line.split() for line in counter.get_table(depth=1).splitlines()[2:]] == [
        ["Sequential", "264", "100.00%"], ["-", "aten.addmm", "120", "45.45%"], ["-", "aten.mm", "144", "54.55%"]]


def test_table_units_and_empty_counter(capsys):
    x = mg.randn(64, 64)
    with FlopCounterMode(display=True) as counter:
        x @ x                                    # 2 * 64^3 = 524,288: shown in thousands
    printed = capsys.readouterr().out
    assert printed.splitlines()[2].split() == ["Global", "524.288K", "100.00%"]
    assert counter.get_flop_counts() == {"Global": {"aten.mm": 524288}}
    with FlopCounterMode(display=False) as counter:
        pass
    assert counter.get_table().splitlines()[2].split() == ["Global", "0", "0%"]


def test_suffix_rules_as_pytorch():
    torch = torch_or_skip()
    from torch.utils import flop_counter as theirs
    for n in [0, 7, 99, 999, 1000, 9999, 10000, 123456, 10 ** 9, 1010 * 10 ** 6, 10 ** 15]:
        suffix = mg_flop_counter.get_suffix_str(n)
        assert suffix == theirs.get_suffix_str(n)
        assert mg_flop_counter.convert_num_with_suffix(n, suffix) == theirs.convert_num_with_suffix(n, suffix)
        assert mg_flop_counter.convert_to_percent_str(n, 10 ** 9) == theirs.convert_to_percent_str(n, 10 ** 9)
    for shapes in [((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)), ((1, 4, 7, 2), (1, 2, 3, 2), (1, 2, 3, 5))]:
        out = shapes[0][:-1] + shapes[2][-1:]
        assert mg_flop_counter.sdpa_flop(*shapes) == theirs.sdpa_flop(*shapes, out_val=None)
        assert mg_flop_counter.sdpa_backward_flop(out, *shapes) == theirs.sdpa_backward_flop(out, *shapes)
    # the formulas take tensors as well as shapes, as PyTorch's do
    a, b = mg.randn(3, 4), mg.randn(4, 5)
    assert mg_flop_counter.mm_flop(a, b) == theirs.mm_flop(torch.randn(3, 4), torch.randn(4, 5)) == 120
    assert torch is not None


# --------------------------------------------------------------------------- users' formulas, threads, errors
class Scale(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x._data * 3

    @staticmethod
    def backward(ctx, dout):
        return dout * 3


def test_users_formulas_for_their_functions():
    x = mg.randn(4, 5, requires_grad=True)
    with FlopCounterMode(display=False, custom_mapping={Scale: lambda x_shape, out_shape: x_shape[0] * x_shape[1]}) \
            as counter:
        Scale.apply(x).sum().backward()
    assert counter.get_flop_counts()["Global"] == {"Scale": 20}

    class Twice(Scale):
        pass

    @register_flop_formula(Twice)
    def twice_flops(x_shape, out_shape=None):
        return 2 * x_shape[0]
    try:
        with FlopCounterMode(display=False) as counter:
            Twice.apply(x) @ mg.randn(5, 2)
        assert counter.get_flop_counts()["Global"] == {"Twice": 8, "aten.mm": 2 * 4 * 5 * 2}
        with pytest.raises(RuntimeError, match="duplicate registrations"):
            register_flop_formula(Twice)(twice_flops)
    finally:
        mg_flop_counter.flop_registry.pop(Twice)


def test_bad_targets_and_mods_warning():
    with pytest.raises(ValueError, match="expected each target to be a minigrad.autograd.Function subclass"):
        register_flop_formula("aten.mm")
    with pytest.raises(ValueError, match="of type <class 'str'>"):
        FlopCounterMode(custom_mapping={"aten.mm": lambda *a, **k: 0})
    with pytest.warns(UserWarning, match="mods argument is not needed anymore"):
        FlopCounterMode(mg.nn.Linear(2, 2))


def test_only_the_entering_thread_is_counted():
    """As in PyTorch, whose counting mode is per thread: another thread's products are not counted."""
    a = mg.randn(8, 8)
    with FlopCounterMode(display=False) as counter:
        worker = threading.Thread(target=lambda: a @ a)
        worker.start()
        worker.join()
        a @ a
    assert counter.get_total_flops() == 2 * 8 ** 3


def test_counting_stops_on_leaving_and_profiler_still_records():
    """A counter inside a profile: each stops on its own, and the op and node runners are the engine's own after."""
    from minigrad.autograd import engine
    from minigrad.profiler import _recorder
    apply, run_node = mg.autograd.Function.__dict__["apply"], engine.run_node
    a = mg.randn(8, 8)
    with mg.profiler.profile() as prof:
        with FlopCounterMode(display=False) as counter:
            a @ a
        a @ a                                    # after the counter: not counted, still profiled
    assert counter.get_total_flops() == 2 * 8 ** 3
    assert sum(e.count for e in prof.key_averages() if e.key == "MatMul") == 2
    assert mg.autograd.Function.__dict__["apply"] is apply and engine.run_node is run_node
    assert not _recorder._listeners and not _recorder._collectors


# --------------------------------------------------------------------------- the profiler's with_flops
PROFILED = ["mm", "matmul 3d@2d", "matmul 4d@3d broadcast", "matmul transposed 3d@2d", "bmm", "addmm", "baddbmm",
            "linear 3d", "linear without bias", "linear 1d"]
PRODUCT_EVENTS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def _profiled_flops(lib, run):
    """The flops of each event of ``run()`` profiled with with_flops=True, as (name, flops) pairs: minigrad's every
    event, PyTorch's products (its profiler also counts aten::mul and aten::add at a flop per element, minigrad's
    profile what its flop counter counts)."""
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], with_flops=True) as prof:
        run()
    return [(e.name, e.flops) for e in prof.events() if lib is mg or e.name in PRODUCT_EVENTS]


def _op_run(lib, name):
    f, shapes = OPS[name]
    values = np.random.default_rng(0)
    tensors = [lib.tensor(values.standard_normal(s), requires_grad=True) for s in shapes]

    def run():
        out = f(lib, lib.nn.functional, *tensors)
        out.backward(lib.tensor(values.standard_normal(tuple(out.shape))))
    return run


def _profiled_total(lib, name):
    return sum(flops for _, flops in _profiled_flops(lib, _op_run(lib, name)))


@pytest.mark.parametrize("name", PROFILED)
def test_profiler_flops_of_products_as_pytorch(name):
    """The products' flops in a profile, forward and backward, total as PyTorch's profiler counts them."""
    theirs = torch_result(lambda torch: _profiled_total(torch, name), "profiled", name)
    assert _profiled_total(mg, name) == theirs


def test_profiler_flops_a_backward_left_uncounted_is_caught(monkeypatch):
    theirs = torch_result(lambda torch: _profiled_total(torch, "mm"), "profiled", "mm")
    monkeypatch.setattr(mg_flop_counter, "node_flops", lambda node, grad, graph: 0)
    assert _profiled_total(mg, "mm") != theirs


def _model_run(name):
    build, shape = MODELS[name]
    mg.manual_seed(0)
    model = build(mg)
    values = np.random.default_rng(0)
    x = mg.tensor(values.standard_normal(shape), dtype=mg.float32, requires_grad=True)

    def run():
        out = model(x)
        out = out[0] if isinstance(out, tuple) else out
        out.backward(mg.tensor(values.standard_normal(tuple(out.shape)), dtype=mg.float32))
    return run


@pytest.mark.parametrize("name", list(OPS) + list(MODELS))
def test_profiler_flops_are_the_flop_counters(name):
    """Event by event the profile holds what FlopCounterMode counts (convolutions, attention, einsum and recurrent
    layers too, which PyTorch's profiler leaves out): the totals agree, each op and backward node counted once."""
    run = _op_run(mg, name) if name in OPS else _model_run(name)
    with FlopCounterMode(display=False) as counter:
        run()
    run = _op_run(mg, name) if name in OPS else _model_run(name)
    assert sum(flops for _, flops in _profiled_flops(mg, run)) == counter.get_total_flops()
    assert counter.get_total_flops() > 0 or name in OPS       # (some products with a 1-D operand count none)


def test_profiler_flops_under_create_graph_are_the_flop_counters():
    """A gradient of a gradient: the first backward's products run as ops (the nodes with a graph_backward count
    nothing themselves), and are differentiated in turn."""
    def run():
        values = np.random.default_rng(0)
        x, w = (mg.tensor(values.standard_normal(s), requires_grad=True) for s in [(3, 4), (5, 4)])
        y = mg.nn.functional.linear(x, w).tanh()
        (gx,) = mg.autograd.grad((y * mg.tensor(values.standard_normal((3, 5)))).sum(), [x], create_graph=True)
        (gx * mg.tensor(values.standard_normal((3, 4)))).sum().backward()
    with FlopCounterMode(display=False) as counter:
        run()
    assert sum(flops for _, flops in _profiled_flops(mg, run)) == counter.get_total_flops() == 6 * 2 * 3 * 4 * 5


def _flops_table(lib):
    """The header cell of the flops column and the product's cell, in a profile of one (30, 40) @ (40, 50) product
    (120,000 flops) among ops that count none."""
    values = np.random.default_rng(0)
    a, b = lib.tensor(values.standard_normal((30, 40))), lib.tensor(values.standard_normal((40, 50)))
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], with_flops=True) as prof:
        (a @ b).tanh()
    lines = prof.key_averages().table(row_limit=-1).splitlines()
    product = "MatMul" if lib is mg else "aten::mm"
    row = next(line for line in lines if line.split()[0] == product).split()
    none = next(line for line in lines[3:] if line.split()[0] in ("Tanh", "aten::tanh")).split()
    return [lines[1].split()[-2:], row[-1], none[-1]]


def test_profiler_flops_column_as_pytorch():
    theirs = torch_result(_flops_table)
    assert _flops_table(mg) == theirs == [["Total", "KFLOPs"], "120.000", "--"]


def test_profiler_flops_add_up_by_name_and_are_off_by_default():
    values = np.random.default_rng(0)
    a, b = mg.tensor(values.standard_normal((3, 4))), mg.tensor(values.standard_normal((4, 5)))
    for flops in (True, False):
        with mg.profiler.profile(with_flops=flops) as prof:
            for _ in range(3):
                a @ b
        (average,) = [e for e in prof.key_averages() if e.key == "MatMul"]
        assert [e.flops for e in prof.events()] == [120 * flops] * 3 and average.flops == 360 * flops
        assert ("FLOPs" in prof.key_averages().table()) == flops
        assert bool(prof.events()[0].input_shapes) == flops          # with_flops records the shapes, as PyTorch
