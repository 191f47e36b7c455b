"""nn.utils.rnn: packing, padding and the recurrent layers on packed batches, against PyTorch in float64
(values, lengths, batch_sizes and index tensors, every gradient of a random upstream)."""
import numpy as np
import pytest

import minigrad as mg
from tests.mirror import torch_or_skip

LENGTHS = [3, 5, 1, 5, 2]


def _both(torch, arrays):
    return ([mg.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _close(a, b, what):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_and_pad_round_trip_as_torch(batch_first, enforce_sorted):
    torch = torch_or_skip()
    lengths = sorted(LENGTHS, reverse=True) if enforce_sorted else LENGTHS
    rng = np.random.default_rng(0)
    shape = (len(lengths), 6, 3) if batch_first else (6, len(lengths), 3)
    (x_mg,), (x_th,) = _both(torch, [rng.standard_normal(shape)])
    outs = []
    for lib, x in ((mg, x_mg), (torch, x_th)):
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor(lengths), batch_first=batch_first,
                                                       enforce_sorted=enforce_sorted)
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first=batch_first, padding_value=-1.0,
                                                            total_length=7)
        outs.append((packed, padded, lens))
    (p_mg, pad_mg, len_mg), (p_th, pad_th, len_th) = outs
    _close(p_mg.data, p_th.data, "data")
    assert p_mg.batch_sizes.tolist() == p_th.batch_sizes.tolist()
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(p_mg, name), getattr(p_th, name)
        assert (a is None and b is None) or a.tolist() == b.tolist(), name
    _close(pad_mg, pad_th, "padded")
    assert len_mg.tolist() == len_th.tolist() and len_mg.dtype == mg.int64
    g = np.random.default_rng(1).standard_normal(tuple(pad_th.shape))
    pad_mg.backward(mg.tensor(g))
    pad_th.backward(torch.tensor(g))
    _close(x_mg.grad, x_th.grad, "input gradient")


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_recurrent_layers_on_packed_batches_as_torch(mode, bidirectional, batch_first):
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    B, T, H_in, H = len(LENGTHS), max(LENGTHS), 3, 4
    shape = (B, T, H_in) if batch_first else (T, B, H_in)
    D = 2 if bidirectional else 1
    h0 = rng.standard_normal((2 * D, B, H))
    arrays = [rng.standard_normal(shape), h0] + ([rng.standard_normal((2 * D, B, H))] if mode == "LSTM" else [])
    ins_mg, ins_th = _both(torch, arrays)
    layers = []
    for lib in (mg, torch):
        lib.manual_seed(0)
        layers.append(getattr(lib.nn, mode)(H_in, H, num_layers=2, bidirectional=bidirectional,
                                            batch_first=batch_first).double())
    layers[0].load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in layers[1].state_dict().items()})
    results = []
    for lib, layer, ins in ((mg, layers[0], ins_mg), (torch, layers[1], ins_th)):
        packed = lib.nn.utils.rnn.pack_padded_sequence(ins[0], LENGTHS, batch_first=batch_first,
                                                       enforce_sorted=False)
        hx = (ins[1], ins[2]) if mode == "LSTM" else ins[1]
        out, state = layer(packed, hx)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        results.append((out, padded, state if mode == "LSTM" else (state,)))
    (o_mg, pad_mg, s_mg), (o_th, pad_th, s_th) = results
    assert o_mg.batch_sizes.tolist() == o_th.batch_sizes.tolist()
    _close(o_mg.data, o_th.data, "packed output")
    for a, b in zip(s_mg, s_th):
        _close(a, b, "final state")
    rng = np.random.default_rng(3)
    upstream = [rng.standard_normal(tuple(t.shape)) for t in (o_th.data, *s_th)]
    mg.autograd.backward([o_mg.data, *s_mg], [mg.tensor(u) for u in upstream])
    torch.autograd.backward([o_th.data, *s_th], [torch.tensor(u) for u in upstream])
    for a, b in zip(ins_mg, ins_th):
        _close(a.grad, b.grad, "input/state gradient")
    for (name, p), (_, q) in zip(layers[0].named_parameters(), layers[1].named_parameters()):
        _close(p.grad, q.grad, name)


def test_pad_sequence_and_pack_sequence_as_torch():
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 3)]
    for side in ("right", "left"):
        ins_mg, ins_th = _both(torch, arrays)
        a = mg.nn.utils.rnn.pad_sequence(ins_mg, batch_first=True, padding_value=7.0, padding_side=side)
        b = torch.nn.utils.rnn.pad_sequence(ins_th, batch_first=True, padding_value=7.0, padding_side=side)
        _close(a, b, side)
        g = rng.standard_normal(tuple(b.shape))
        a.backward(mg.tensor(g))
        b.backward(torch.tensor(g))
        for x, y in zip(ins_mg, ins_th):
            _close(x.grad, y.grad, "gradient")
    p_mg = mg.nn.utils.rnn.pack_sequence([mg.tensor(a) for a in arrays], enforce_sorted=False)
    p_th = torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=False)
    _close(p_mg.data, p_th.data, "pack_sequence")
    for x, y in zip(mg.nn.utils.rnn.unpack_sequence(p_mg), torch.nn.utils.rnn.unpack_sequence(p_th)):
        _close(x, y, "unpack_sequence")


def test_bad_lengths_refused_as_torch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.zeros(4, 2, 3)
        with pytest.raises(RuntimeError, match="sorted in decreasing order"):
            lib.nn.utils.rnn.pack_padded_sequence(x, [1, 3])
        with pytest.raises(RuntimeError, match="greater than 0"):
            lib.nn.utils.rnn.pack_padded_sequence(x, [3, 0])
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2])
        with pytest.raises(ValueError, match="total_length to be at least"):
            lib.nn.utils.rnn.pad_packed_sequence(packed, total_length=2)


def test_a_wrong_final_state_is_caught():
    """The comparison is not vacuous: taking every sequence's state at the padded end (what running the padded
    batch without packing gives) differs from PyTorch's packed result."""
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((max(LENGTHS), len(LENGTHS), 3))
    torch.manual_seed(0)
    layer = torch.nn.GRU(3, 4).double()
    packed_h = layer(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), LENGTHS, enforce_sorted=False))[1]
    mg_layer = mg.nn.GRU(3, 4).double()
    mg_layer.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in layer.state_dict().items()})
    padded_h = mg_layer(mg.tensor(x))[1]
    with pytest.raises(AssertionError):
        _close(padded_h, packed_h, "final state")
