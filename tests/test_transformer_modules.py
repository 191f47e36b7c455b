"""MultiheadAttention and the Transformer layers against PyTorch.

In float64 with dropout=0, the same weights (PyTorch's state_dict loaded into minigrad, and the other way
round) give the same outputs, attention weights and, under random upstream gradients, the same gradients
for every input and parameter; swept over masks (boolean and float attn_mask, key_padding_mask), batch_first,
unbatched input, kdim/vdim, bias, norm_first and the activation. Then state_dict keys, initialization,
dropout in training only, generate_square_subsequent_mask, and errors.
"""
import itertools

import numpy as np
import pytest

import minigrad as mg

from .mirror import check_grad, torch_or_skip
from .test_rnn import compare


def twins(name, *args, **kwargs):
    torch = torch_or_skip()
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(mg.nn, name)(*args, **kwargs, dtype=mg.float64)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def as_lib(lib, mask):
    return None if mask is None else lib.tensor(mask)


def masks(kind, rng, N, H, L, S, batched=True):
    """(attn_mask, key_padding_mask) arrays for a mask ``kind``; every query keeps at least one key."""
    if kind == "none":
        return None, None
    if kind == "bool2d":
        m = rng.random((L, S)) < 0.3
        m[:, 0] = False
        return m, None
    if kind == "float3d":
        return rng.standard_normal((N * H, L, S) if batched else (H, L, S)), None
    if kind == "padding":
        kpm = np.zeros((N, S) if batched else (S,), bool)
        kpm[..., S - 2:] = True
        return None, kpm
    if kind == "causal_and_padding":
        causal = np.triu(np.full((L, S), -np.inf), 1)
        kpm = np.zeros((N, S) if batched else (S,))
        kpm[..., S - 1] = -np.inf
        return causal, kpm
    raise ValueError(kind)


MHA_CONFIGS = list(itertools.product(["none", "bool2d", "float3d", "padding", "causal_and_padding"],
                                     [False, True], [True, False]))


@pytest.mark.parametrize("mask_kind, batch_first, average", MHA_CONFIGS,
                         ids=[f"{m}-bf{int(b)}-avg{int(a)}" for m, b, a in MHA_CONFIGS])
def test_multihead_attention_mirrors_pytorch(mask_kind, batch_first, average, rng):
    ours, theirs = twins("MultiheadAttention", 6, 2, batch_first=batch_first)
    N, L, S, E = 3, 4, 4, 6
    attn_mask, kpm = masks(mask_kind, rng, N, 2, L, S)
    shape = (N, L, E) if batch_first else (L, N, E)
    q, k, v = (rng.standard_normal(shape) for _ in range(3))

    def call(m, lib, q, k, v):
        return m(q, k, v, key_padding_mask=as_lib(lib, kpm), attn_mask=as_lib(lib, attn_mask),
                 average_attn_weights=average)
    compare(ours, theirs, [q, k, v], rng, call)
    compare(ours, theirs, [q], rng, lambda m, lib, x: m(x, x, x, attn_mask=as_lib(lib, attn_mask),
                                                     key_padding_mask=as_lib(lib, kpm), need_weights=False)[0])


@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_with_kdim_vdim_and_without_bias(bias, rng):
    ours, theirs = twins("MultiheadAttention", 6, 3, bias=bias, kdim=5, vdim=7)
    assert ours.in_proj_weight is None and ours.q_proj_weight.shape == (6, 6)
    q, k, v = rng.standard_normal((4, 2, 6)), rng.standard_normal((3, 2, 5)), rng.standard_normal((3, 2, 7))
    compare(ours, theirs, [q, k, v], rng, lambda m, lib, q, k, v: m(q, k, v))


@pytest.mark.parametrize("mask_kind", ["none", "float3d", "padding"])
def test_multihead_attention_unbatched(mask_kind, rng):
    ours, theirs = twins("MultiheadAttention", 4, 2)
    attn_mask, kpm = masks(mask_kind, rng, 1, 2, 3, 5, batched=False)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    for average in (True, False):
        def call(m, lib, q, k, v, average=average):
            return m(q, k, v, attn_mask=as_lib(lib, attn_mask), key_padding_mask=as_lib(lib, kpm),
                     average_attn_weights=average)
        compare(ours, theirs, [q, k, v], rng, call)


def test_multihead_attention_initialization():
    mg.manual_seed(0)
    mha = mg.nn.MultiheadAttention(64, 4)
    bound = np.sqrt(6 / (64 + 3 * 64))                     # xavier_uniform over the (3E, E) in_proj_weight
    w = mha.in_proj_weight.detach().numpy()
    assert np.all(np.abs(w) <= bound)
    np.testing.assert_allclose(w.var(), bound ** 2 / 3, rtol=0.05)
    np.testing.assert_array_equal(mha.in_proj_bias.detach().numpy(), 0)
    np.testing.assert_array_equal(mha.out_proj.bias.detach().numpy(), 0)
    assert np.all(np.abs(mha.out_proj.weight.detach().numpy()) <= 1 / 8)   # a Linear's U(-1/sqrt(E), 1/sqrt(E))


def test_multihead_attention_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        mg.nn.MultiheadAttention(6, 4)
    with_bias_kv = mg.nn.MultiheadAttention(4, 2, add_bias_kv=True)   # supported now: compared in test_modinfo.py
    assert with_bias_kv.bias_k.shape == with_bias_kv.bias_v.shape == (1, 1, 4)
    mha = mg.nn.MultiheadAttention(4, 2)
    x = mg.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        mha(mg.zeros(3, 2, 5), x, x)


# ----------------------------------------------------------------------------- layers
LAYER_CONFIGS = list(itertools.product([False, True], [False, True], ["relu", "gelu"], [True, False]))


@pytest.mark.parametrize("norm_first, batch_first, activation, bias", LAYER_CONFIGS,
                         ids=[f"nf{int(a)}-bf{int(b)}-{c}-bias{int(d)}" for a, b, c, d in LAYER_CONFIGS])
def test_encoder_and_decoder_layers_mirror_pytorch(norm_first, batch_first, activation, bias, rng):
    kwargs = dict(dim_feedforward=10, dropout=0.0, activation=activation, batch_first=batch_first,
                  norm_first=norm_first, bias=bias, layer_norm_eps=1e-6)
    N, L, S, E = 2, 4, 5, 6
    src = rng.standard_normal((N, S, E) if batch_first else (S, N, E))
    tgt = rng.standard_normal((N, L, E) if batch_first else (L, N, E))
    causal = np.triu(np.full((L, L), -np.inf), 1)
    kpm = np.zeros((N, S), bool)
    kpm[0, -2:] = True
    ours, theirs = twins("TransformerEncoderLayer", E, 2, **kwargs)
    compare(ours, theirs, [src], rng, lambda m, lib, x: m(x, src_key_padding_mask=lib.tensor(kpm)))
    ours, theirs = twins("TransformerDecoderLayer", E, 2, **kwargs)
    compare(ours, theirs, [tgt, src], rng,
            lambda m, lib, t, s: m(t, s, tgt_mask=lib.tensor(causal), memory_key_padding_mask=lib.tensor(kpm),
                                   tgt_is_causal=True))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_mirrors_pytorch_both_ways(norm_first, rng):
    torch = torch_or_skip()
    ours, theirs = twins("Transformer", 8, 2, 2, 2, 16, dropout=0.0, norm_first=norm_first, batch_first=True)
    src, tgt = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 4, 8))
    mask = mg.nn.Transformer.generate_square_subsequent_mask(4, dtype=mg.float64).numpy()
    np.testing.assert_array_equal(mask, torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64))
    kpm = np.zeros((2, 5), bool)
    kpm[1, -1] = True

    def call(m, lib, s, t):
        return m(s, t, tgt_mask=lib.tensor(mask), src_key_padding_mask=lib.tensor(kpm),
                 memory_key_padding_mask=lib.tensor(kpm))
    compare(ours, theirs, [src, tgt], rng, call)
    # minigrad's own initialization loaded into PyTorch
    mg.manual_seed(1)
    fresh = mg.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, dtype=mg.float64)
    twin = torch.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0).double()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in fresh.state_dict().items()})
    s, t = rng.standard_normal((5, 2, 8)), rng.standard_normal((4, 2, 8))
    np.testing.assert_allclose(fresh(mg.tensor(s), mg.tensor(t)).detach().numpy(),
                               twin(torch.tensor(s), torch.tensor(t)).detach().numpy(), rtol=1e-11, atol=1e-12)


def test_stacks_with_a_callable_activation_and_final_norm(rng):
    torch = torch_or_skip()
    torch.manual_seed(0)
    layer_t = torch.nn.TransformerEncoderLayer(6, 3, 12, 0.0, activation=torch.tanh)
    theirs = torch.nn.TransformerEncoder(layer_t, 2, norm=torch.nn.LayerNorm(6), enable_nested_tensor=False).double()
    ours = mg.nn.TransformerEncoder(mg.nn.TransformerEncoderLayer(6, 3, 12, 0.0, activation=mg.tanh), 2,
                                    norm=mg.nn.LayerNorm(6)).double()
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    compare(ours, theirs, [rng.standard_normal((4, 2, 6))], rng, lambda m, lib, x: m(x))
    # the copies are independent
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight


def test_transformer_initialization_is_xavier_for_matrices():
    mg.manual_seed(0)
    model = mg.nn.Transformer(32, 4, 1, 1, 64)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()          # (64, 32)
    bound = np.sqrt(6 / (64 + 32))
    assert np.all(np.abs(w) <= bound) and w.max() > 0.9 * bound
    np.testing.assert_array_equal(model.encoder.norm.weight.detach().numpy(), 1)


def test_dropout_only_in_training(rng):
    layer = mg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, dtype=mg.float64)
    x = mg.tensor(rng.standard_normal((3, 2, 8)))
    layer.eval()   # (to rounding: two passes once differed by 4e-16 on a loaded machine, source not found)
    np.testing.assert_allclose(layer(x).detach().numpy(), layer(x).detach().numpy(), rtol=1e-12, atol=1e-14)
    layer.train()
    assert not np.allclose(layer(x).detach().numpy(), layer(x).detach().numpy())


def test_transformer_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        mg.nn.TransformerEncoderLayer(4, 2, activation="tanh")
    model = mg.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(mg.zeros(5, 2, 8), mg.zeros(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(mg.zeros(5, 2, 8), mg.zeros(4, 2, 6))


def test_multihead_attention_gradcheck_without_pytorch(rng):
    mg.manual_seed(0)
    mha = mg.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, dtype=mg.float64)
    mask = np.triu(np.full((3, 4), -np.inf), 2)
    q, k, v = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 2, 5))
    check_grad(lambda q, k, v: mha(q, k, v, attn_mask=mg.tensor(mask), average_attn_weights=False), q, k, v)


def test_decoder_layer_gradcheck_without_pytorch(rng):
    mg.manual_seed(0)
    layer = mg.nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, activation="gelu", norm_first=True,
                                          dtype=mg.float64)
    check_grad(lambda t, m: layer(t, m), rng.standard_normal((3, 2, 4)), rng.standard_normal((5, 2, 4)))


def test_multihead_attention_mask_errors():
    mha, x = mg.nn.MultiheadAttention(4, 2), mg.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \[3, 4\], but should be \(3, 3\)"):
        mha(x, x, x, attn_mask=mg.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is \[3, 3, 3\], but should be \(4, 3, 3\)"):
        mha(x, x, x, attn_mask=mg.zeros(3, 3, 3))
    with pytest.raises(AssertionError, match="expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D"):
        mha(x, x, x, attn_mask=mg.zeros(1, 3, 3, 3))
    with pytest.raises(AssertionError, match="expecting key_padding_mask shape of"):
        mha(x, x, x, key_padding_mask=mg.zeros(2, 4, dtype=mg.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        mha(x, x, x, attn_mask=mg.zeros(3, 3, dtype=mg.int64))


def test_transformer_takes_a_custom_encoder_and_decoder(rng):
    encoder = mg.nn.TransformerEncoder(mg.nn.TransformerEncoderLayer(4, 2, 8, 0.0, dtype=mg.float64), 1)
    decoder = mg.nn.TransformerDecoder(mg.nn.TransformerDecoderLayer(4, 2, 8, 0.0, dtype=mg.float64), 1)
    model = mg.nn.Transformer(4, 2, custom_encoder=encoder, custom_decoder=decoder, dtype=mg.float64)
    assert model.encoder is encoder and model.decoder is decoder
    src, tgt = mg.tensor(rng.standard_normal((5, 2, 4))), mg.tensor(rng.standard_normal((3, 2, 4)))
    np.testing.assert_allclose(model(src, tgt).detach().numpy(), decoder(tgt, encoder(src)).detach().numpy(),
                               rtol=1e-14)
