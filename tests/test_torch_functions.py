"""The top-level ``torch.*`` forms of the nn functions (ops/torch_functional.py) and the small top-level functions
(ops/torch_misc.py), mirrored against PyTorch: float64 values, and gradients from a random upstream gradient."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

RTOL, ATOL = 1e-10, 1e-12


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def mirror(name, arrays, *args, differentiable=(), seed=0, call=None, **kwargs):
    """Call ``name`` in minigrad and in PyTorch on the ``arrays`` (as tensors, those at ``differentiable``
    requiring grad) followed by ``args`` (or as ``call(function, tensors)``); compare every output, then the
    gradients of the differentiable inputs from a random upstream gradient of every floating output."""
    torch = torch_or_skip()
    rng = np.random.default_rng(seed)
    ours = [mg.tensor(a, requires_grad=i in differentiable) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=i in differentiable) for i, a in enumerate(arrays)]
    call = call or (lambda fn, tensors: fn(*tensors, *args, **kwargs))
    out, tout = _as_tuple(call(getattr(mg, name), ours)), _as_tuple(call(getattr(torch, name), theirs))
    assert len(out) == len(tout)
    for o, t in zip(out, tout):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)
    if differentiable:
        floating = [(o, t) for o, t in zip(out, tout) if t.requires_grad]
        grads = [rng.standard_normal(tuple(t.shape)) for _, t in floating]
        mg.autograd.backward([o for o, _ in floating], [mg.tensor(g) for g in grads])
        torch.autograd.backward([t for _, t in floating], [torch.tensor(g) for g in grads])
        for i in differentiable:
            np.testing.assert_allclose(ours[i].grad.numpy(), theirs[i].grad.numpy(), rtol=RTOL, atol=ATOL)
    return out, tout


def randn(rng, *shape):
    return rng.standard_normal(shape)


# --------------------------------------------------------------------------- normalization
def test_layer_norm_and_rms_norm():
    rng = np.random.default_rng(1)
    x, w, b = randn(rng, 4, 3, 5), randn(rng, 3, 5), randn(rng, 3, 5)
    mirror("layer_norm", [x, w, b], differentiable=(0, 1, 2),
           call=lambda f, t: f(t[0], normalized_shape=[3, 5], weight=t[1], bias=t[2]))
    mirror("layer_norm", [x], (5,), None, None, 1e-3, False, differentiable=(0,))
    mirror("rms_norm", [x, w], differentiable=(0, 1), call=lambda f, t: f(t[0], (3, 5), t[1], eps=1e-4))
    mirror("rms_norm", [x], [5], differentiable=(0,))


def test_batch_norm_training_updates_running_statistics():
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    x, w, b = randn(rng, 6, 3, 4), randn(rng, 3), randn(rng, 3)
    rm, rv = randn(rng, 3), rng.random(3) + 0.5
    ours, theirs = (mg.tensor(rm), mg.tensor(rv)), (torch.tensor(rm), torch.tensor(rv))
    mirror("batch_norm", [x, w, b], None, None, True, 0.1, 1e-5, True, differentiable=(0, 1, 2))
    out = mg.batch_norm(mg.tensor(x), mg.tensor(w), mg.tensor(b), *ours, True, 0.3, 1e-5, False)
    tout = torch.batch_norm(torch.tensor(x), torch.tensor(w), torch.tensor(b), *theirs, True, 0.3, 1e-5, False)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=RTOL, atol=ATOL)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=RTOL, atol=ATOL)


def test_batch_norm_eval_and_instance_norm():
    rng = np.random.default_rng(3)
    x, w, b = randn(rng, 5, 3, 4), randn(rng, 3), randn(rng, 3)
    rm, rv = randn(rng, 3), rng.random(3) + 0.5
    mirror("batch_norm", [x, w, b, rm, rv], differentiable=(0, 1, 2),
           call=lambda f, t: f(*t, training=False, momentum=0.1, eps=1e-5, cudnn_enabled=True))
    mirror("instance_norm", [x, w, b], None, None, True, 0.1, 1e-5, False, differentiable=(0, 1, 2))
    mirror("instance_norm", [x, w, b, randn(rng, 3), rng.random(3) + 0.5], False, 0.1, 1e-5, False,
           differentiable=(0, 1, 2))


def test_group_norm():
    rng = np.random.default_rng(4)
    x, w, b = randn(rng, 2, 6, 5), randn(rng, 6), randn(rng, 6)
    mirror("group_norm", [x], 3, differentiable=(0,))
    mirror("group_norm", [x], 2, None, None, 1e-3, True, differentiable=(0,))
    torch = torch_or_skip()
    ours = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = mg.group_norm(ours[0], 2, ours[1], ours[2], 1e-3, False)
    tout = torch.group_norm(theirs[0], 2, theirs[1], theirs[2], 1e-3, False)
    g = np.random.default_rng(40).standard_normal(x.shape)
    out.backward(mg.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_norm_bad_input():
    torch = torch_or_skip()
    x = np.random.default_rng(5).standard_normal((4, 3, 5))
    for lib in (mg, torch):
        t = lib.tensor(x)
        with pytest.raises(RuntimeError):
            lib.layer_norm(t, [4])
        with pytest.raises(TypeError):
            lib.layer_norm(t, 5)
        with pytest.raises(TypeError):
            lib.rms_norm(t, 5)
        with pytest.raises(RuntimeError, match="divisible by num_groups"):
            lib.group_norm(t, 2)
        with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
            lib.batch_norm(t, None, None, None, None, False, 0.1, 1e-5, False)
        with pytest.raises(RuntimeError, match="use_input_stats is false"):
            lib.instance_norm(t, None, None, None, None, False, 0.1, 1e-5, False)


# --------------------------------------------------------------------------- dropout
DROPOUTS = ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"]


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_eval_is_identity(name):
    x = mg.randn(4, 5)
    assert getattr(mg, name)(x, 0.5, False) is x
    assert getattr(mg, name + "_")(x, 0.5, False) is x
    assert getattr(mg, name)(x, 0.0, True) is x


@pytest.mark.parametrize("name", ["dropout", "feature_dropout"])
def test_dropout_train_zeroes_and_scales(name):
    p = 0.3
    x = mg.tensor(np.random.default_rng(6).random((200, 100, 3)) + 1, requires_grad=True)
    out = getattr(mg, name)(x, p, True)
    y, kept = out.detach().numpy(), out.detach().numpy() != 0
    np.testing.assert_allclose(y[kept], x.detach().numpy()[kept] / (1 - p), rtol=1e-12)
    assert abs(1 - kept.mean() - p) < 0.02
    if name == "feature_dropout":          # one draw per (n, c): whole channels kept or zeroed
        assert (kept.all(axis=2) | ~kept.any(axis=2)).all()
    g = np.random.default_rng(7).standard_normal(y.shape)
    out.backward(mg.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * kept / (1 - p), rtol=1e-12)


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_train_values(name):
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    x = np.random.default_rng(8).standard_normal((100, 100, 2))
    y = getattr(mg, name)(mg.tensor(x), p, True).numpy()
    kept = np.isclose(y, a * x + a * alpha * p, rtol=1e-12, atol=0)
    dropped = np.isclose(y, a * alpha * (p - 1), rtol=1e-12, atol=0)
    assert (kept | dropped).all() and abs(dropped.mean() - p) < 0.02
    if name == "feature_alpha_dropout":
        assert (kept.all(axis=2) | dropped.all(axis=2)).all()


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_in_place_and_bad_input(name):
    torch = torch_or_skip()
    x = mg.ones(300, 4)
    assert getattr(mg, name + "_")(x, 0.5, True) is x and (x.numpy() != 1).any()
    assert (getattr(mg, name)(mg.ones(2, 3), 1.0, True).numpy() == 0).all()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            getattr(lib, name)(lib.ones(3, 3), 1.5, False)
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            getattr(lib, name)(lib.arange(6).reshape(2, 3), 0.5, True)
        with pytest.raises(TypeError):
            getattr(lib, name)(lib.ones(3, 3), 0.5, 1)
        if name.startswith("feature"):
            with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
                getattr(lib, name)(lib.ones(5), 0.5, True)


# --------------------------------------------------------------------------- embedding, shuffles, pdist, bilinear
def test_embedding_padding_and_order():
    rng = np.random.default_rng(9)
    w, idx = randn(rng, 6, 3), np.array([[0, 2, 5], [2, 2, 1]])
    for args in [(), (2,), (-1,), (-3, True)]:
        mirror("embedding", [w, idx], *args, differentiable=(0,))


def test_embedding_bad_input():
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
            lib.embedding(lib.ones(4), lib.tensor([1]))
        with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types"):
            lib.embedding(lib.ones(4, 2), lib.tensor([1.0]))


def test_shuffles_pdist_bilinear():
    rng = np.random.default_rng(10)
    mirror("pixel_shuffle", [randn(rng, 2, 8, 3, 3)], 2, differentiable=(0,))
    mirror("pixel_unshuffle", [randn(rng, 2, 2, 4, 6)], 2, differentiable=(0,))
    mirror("native_channel_shuffle", [randn(rng, 2, 6, 3)], 3)   # PyTorch's has no derivative
    mirror("pdist", [randn(rng, 5, 3)], 3.0, differentiable=(0,))
    mirror("bilinear", [randn(rng, 4, 3), randn(rng, 4, 2), randn(rng, 5, 3, 2), randn(rng, 5)],
           differentiable=(0, 1, 2, 3))
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
            lib.native_channel_shuffle(lib.ones(1, 4, 2), 3)


# --------------------------------------------------------------------------- losses
@pytest.mark.parametrize("reduction", [None, 0, 1, 2])
def test_losses_with_int_reduction(reduction):
    rng = np.random.default_rng(11)
    r = () if reduction is None else (reduction,)
    x, y = randn(rng, 4, 5), randn(rng, 4, 5)
    sign = np.where(rng.random((4, 5)) < 0.5, -1.0, 1.0)
    target = rng.random((4, 5))
    mirror("kl_div", [x, np.log(target)], *r, differentiable=(0, 1))
    mirror("kl_div", [x, np.log(target)], *r, differentiable=(0, 1), log_target=True)
    mirror("margin_ranking_loss", [x, y, sign], 0.3, *r, differentiable=(0, 1))
    mirror("hinge_embedding_loss", [x, sign], 0.5, *r, differentiable=(0,))
    mirror("cosine_embedding_loss", [x, y, sign[:, 0]], 0.1, *r, differentiable=(0, 1))
    mirror("triplet_margin_loss", [x, y, randn(rng, 4, 5)], 1.0, 2.0, 1e-6, True, *r, differentiable=(0, 1, 2))
    mirror("poisson_nll_loss", [x, target], True, True, 1e-8, 0 if reduction is None else reduction,
           differentiable=(0,))
    mirror("binary_cross_entropy_with_logits", [x, target, rng.random((4, 5)), rng.random(5)], *r,
           differentiable=(0, 1))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_ctc_loss(reduction):
    rng = np.random.default_rng(12)
    logits = randn(rng, 8, 2, 5)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = np.array([[1, 2, 2], [3, 4, 1]])
    mirror("ctc_loss", [log_probs, targets], [8, 7], [3, 2], 0, reduction, differentiable=(0,))
    mirror("ctc_loss", [log_probs, targets, np.array([8, 6]), np.array([2, 3])], 0, reduction, differentiable=(0,))


def test_loss_reduction_must_be_int():
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.ones(3)
        with pytest.raises(TypeError):
            lib.kl_div(x, x, "mean")
        with pytest.raises(TypeError):
            lib.hinge_embedding_loss(x, x, 1.0, "sum")


# --------------------------------------------------------------------------- pools and convolution
def test_pools():
    rng = np.random.default_rng(13)
    x1, x2, x3 = randn(rng, 2, 3, 9), randn(rng, 2, 2, 6, 7), randn(rng, 1, 2, 4, 5, 6)
    mirror("max_pool1d", [x1], 3, differentiable=(0,))
    mirror("max_pool1d", [x1], [2], [1], [1], [2], True, differentiable=(0,))
    mirror("max_pool2d", [x2], (2, 3), (), 1, differentiable=(0,))
    mirror("max_pool3d", [x3], 2, 1, differentiable=(0,))
    mirror("max_pool1d_with_indices", [x1], 2, differentiable=(0,))
    mirror("avg_pool1d", [x1], 3, 2, 1, False, False, differentiable=(0,))
    mirror("adaptive_avg_pool1d", [x1], 4, differentiable=(0,))
    mirror("adaptive_max_pool1d", [x1], 4, differentiable=(0,))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_convolution(dims, transposed):
    rng = np.random.default_rng(14 + dims)
    x = randn(rng, 2, 4, *(5,) * dims)
    w = randn(rng, *((4, 3) if transposed else (6, 2)), *(2,) * dims)   # groups=2
    b = randn(rng, 6)
    output_padding = [1] * dims if transposed else [0]
    mirror("convolution", [x, w, b], [2] * dims, [1], [1], transposed, output_padding, 2, differentiable=(0, 1, 2))


def test_convolution_bad_input():
    torch = torch_or_skip()
    for lib in (mg, torch):
        x, w = lib.ones(3, 5), lib.ones(2, 3, 2)
        with pytest.raises(RuntimeError, match="Expected 3-dimensional input for 3-dimensional weight"):
            lib.convolution(x, w, None, [1], [0], [1], False, [0], 1)
        with pytest.raises(TypeError):
            lib.convolution(x[None], w, None, 1, [0], [1], False, [0], 1)


# --------------------------------------------------------------------------- recurrent cells
def test_recurrent_cells():
    rng = np.random.default_rng(15)
    n, i, h = 4, 3, 5
    x, hx, cx = randn(rng, n, i), randn(rng, n, h), randn(rng, n, h)
    for name, gates in [("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)]:
        w_ih, w_hh = randn(rng, gates * h, i), randn(rng, gates * h, h)
        b_ih, b_hh = randn(rng, gates * h), randn(rng, gates * h)
        if name == "lstm_cell":
            torch = torch_or_skip()
            ours = [mg.tensor(a, requires_grad=True) for a in (x, hx, cx, w_ih, w_hh, b_ih, b_hh)]
            theirs = [torch.tensor(a, requires_grad=True) for a in (x, hx, cx, w_ih, w_hh, b_ih, b_hh)]
            out = mg.lstm_cell(ours[0], (ours[1], ours[2]), *ours[3:])
            tout = torch.lstm_cell(theirs[0], [theirs[1], theirs[2]], *theirs[3:])
            g = [rng.standard_normal((n, h)) for _ in range(2)]
            mg.autograd.backward(list(out), [mg.tensor(a) for a in g])
            torch.autograd.backward(list(tout), [torch.tensor(a) for a in g])
            for o, t in zip(out, tout):
                np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)
            for o, t in zip(ours, theirs):
                np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=RTOL, atol=ATOL)
        else:
            mirror(name, [x, hx, w_ih, w_hh, b_ih, b_hh], differentiable=range(6))
            mirror(name, [x, hx, w_ih, w_hh], differentiable=range(4))


def test_recurrent_cells_bad_input():
    torch = torch_or_skip()
    for lib in (mg, torch):
        x, h = lib.ones(2, 3), lib.ones(2, 2)
        with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3 expected 4"):
            lib.rnn_tanh_cell(x, h, lib.ones(2, 4), lib.ones(2, 2))
        with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 3, expected 2"):
            lib.lstm_cell(x, (h, lib.ones(2, 3)), lib.ones(8, 3), lib.ones(8, 2))
        with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 1"):
            lib.gru_cell(x, lib.ones(1, 2), lib.ones(6, 3), lib.ones(6, 2))
        with pytest.raises(RuntimeError, match="weight_ih first dim must be 3 \\* hidden_size = 6, but got 5"):
            lib.gru_cell(x, h, lib.ones(5, 3), lib.ones(6, 2))
        with pytest.raises(TypeError):
            lib.lstm_cell(x, h, lib.ones(8, 3), lib.ones(8, 2))
        with pytest.raises(IndexError):
            lib.rnn_tanh_cell(lib.ones(3), lib.ones(2), lib.ones(2, 3), lib.ones(2, 2))


# --------------------------------------------------------------------------- top-level in-place functions
INPLACE = [("abs_", ()), ("sigmoid_", ()), ("exp_", ()), ("tanh_", ()), ("sin_", ()), ("neg_", ()),
           ("clamp_", (-0.5, 0.5)), ("clamp_min_", (0.1,)), ("fill_", (2.5,)), ("xlogy_", (3.0,)),
           ("sqrt_", ()), ("logit_", (0.1,)), ("nan_to_num_", (0.0, 1.0, -1.0)), ("detach_", ())]


@pytest.mark.parametrize("name,args", INPLACE)
def test_inplace_functions(name, args):
    torch = torch_or_skip()
    x = np.random.default_rng(16).standard_normal((3, 4))
    x = np.abs(x) if name == "sqrt_" else x
    ours, theirs = mg.tensor(x), torch.tensor(x)
    out, tout = getattr(mg, name)(ours, *args), getattr(torch, name)(theirs, *args)
    assert out is ours
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=RTOL, atol=ATOL)


def test_inplace_functions_keywords_autograd_and_bad_input():
    torch = torch_or_skip()
    x = np.random.default_rng(17).standard_normal((2, 3))
    for lib in (mg, torch):
        t = lib.tensor(x)
        lib.clamp_(t, max=0.2)
        np.testing.assert_allclose(np.asarray(t.tolist()), np.minimum(x, 0.2))
        lib.index_put_(t, (lib.tensor([0, 1]), lib.tensor([2, 0])), lib.tensor(7.0, dtype=lib.float64), accumulate=True)
        assert t[0, 2].item() == min(x[0, 2], 0.2) + 7
        with pytest.raises(TypeError):
            lib.sin_([1.0])
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            lib.exp_(lib.ones(2, requires_grad=True))
    a = mg.tensor(x, requires_grad=True)
    ta = torch.tensor(x, requires_grad=True)
    b, tb = mg.sin_(a * 1), torch.sin_(ta * 1)
    g = np.random.default_rng(18).standard_normal(x.shape)
    b.backward(mg.tensor(g))
    tb.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------- small functions
def test_small_queries_and_views():
    torch = torch_or_skip()
    x = np.random.default_rng(19).standard_normal((2, 3))
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        assert lib.numel(t) == 6 and isinstance(lib.numel(t), int)
        assert tuple(lib.t(t).shape) == (3, 2) and lib.t(t)[1, 0].item() == x[0, 1]
        assert lib.is_same_size(t, lib.ones(2, 3)) and not lib.is_same_size(t, lib.ones(3, 2))
        assert lib.is_signed(t) and not lib.is_signed(lib.ones(2, dtype=lib.uint8))
        assert lib.is_inference(t) is False
        d = lib.detach(t)
        assert not d.requires_grad and d.numpy().__array_interface__["data"][0] == \
            t.detach().numpy().__array_interface__["data"][0]
        for cat in (lib.concat, lib.concatenate):
            assert tuple(cat([t, t], 1).shape) == (2, 6)
            assert tuple(cat([t, t], axis=1).shape) == (2, 6) and tuple(cat([t, t], dim=1).shape) == (2, 6)
        with pytest.raises(TypeError):
            lib.numel([1, 2])
    mirror("t", [x], differentiable=(0,))


def test_vander():
    rng = np.random.default_rng(20)
    v = randn(rng, 5)
    mirror("vander", [v])
    mirror("vander", [v], 3, True)
    # PyTorch's vander fails in backward (its cumprod's input is modified in place): d x^j = j x^(j-1)
    x, g = mg.tensor(v, requires_grad=True), rng.standard_normal((5, 4))
    mg.vander(x, 4).backward(mg.tensor(g))
    powers = np.arange(3, -1, -1)
    expected = (g * powers * v[:, None] ** np.maximum(powers - 1, 0)).sum(1)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=RTOL, atol=ATOL)
    mirror("vander", [v], N=0)
    mirror("vander", [np.array([1, 2, 3])], 4)
    mirror("vander", [np.array([True, False])], 3)
    mirror("vander", [np.array([2, 3], dtype=np.int32)])
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="x must be a one-dimensional tensor."):
            lib.vander(lib.ones(2, 2))
        with pytest.raises(RuntimeError, match="N must be non-negative."):
            lib.vander(lib.ones(2), -1)


def test_asarray_shares_memory():
    torch = torch_or_skip()
    a = np.arange(6.0)[::2]
    for lib in (mg, torch):
        b = a.copy()
        t = lib.asarray(b)
        t[0] = 5
        assert b[0] == 5 and t.dtype == lib.float64
        c = lib.asarray(b, copy=True)
        c[1] = 9
        assert b[1] == 2
        assert lib.asarray(b, dtype=lib.float32).dtype == lib.float32
        with pytest.raises(ValueError, match="can't alias tensor with dtype 'Double' into dtype 'Float'."):
            lib.asarray(b, dtype=lib.float32, copy=False)
        with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor."):
            lib.asarray([1, 2], copy=False)
        assert lib.asarray([1.0, 2.0]).dtype == lib.float32 and lib.asarray([1, 2]).dtype == lib.int64
        assert lib.asarray(3.5).dtype == lib.float32 and lib.asarray(np.float64(3.5)).dtype == lib.float64
        assert lib.asarray([1.0, 2.0], requires_grad=True).requires_grad
        x = lib.ones(3)
        assert lib.asarray(x) is x and lib.asarray(x, dtype=lib.float32, copy=False) is x
        y = lib.asarray(x, copy=True)
        y[0] = 4
        assert x[0].item() == 1
        leaf = lib.ones(3, requires_grad=True)
        with pytest.warns(UserWarning, match="unspecified requires_grad now defaults to obj.requires_grad"):
            assert lib.asarray(leaf) is leaf
        z = lib.asarray(leaf, dtype=lib.float64, requires_grad=True)
        assert z.requires_grad and not z.is_leaf and z.dtype == lib.float64
        assert not lib.asarray(lib.ones(2, requires_grad=True), dtype=lib.float64, requires_grad=False).requires_grad


def test_frombuffer():
    torch = torch_or_skip()
    for lib in (mg, torch):
        buffer = bytearray(np.arange(4, dtype=np.float32).tobytes())
        t = lib.frombuffer(buffer, dtype=lib.float32)
        t[0] = 9
        assert np.frombuffer(buffer, np.float32)[0] == 9
        assert lib.frombuffer(buffer, dtype=lib.float32, count=2, offset=4).tolist() == [1.0, 2.0]
        assert lib.frombuffer(buffer, dtype=lib.float32, requires_grad=True).requires_grad
        with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
            lib.frombuffer(buffer, dtype=lib.float32, count=5)
        with pytest.raises(ValueError, match="must be non-negative and no greater than buffer length"):
            lib.frombuffer(buffer, dtype=lib.float32, offset=16)
        with pytest.raises(ValueError, match="must be a multiple of element size"):
            lib.frombuffer(buffer, dtype=lib.float32, offset=2)
        with pytest.raises(ValueError, match="buffer protocol"):
            lib.frombuffer([1, 2], dtype=lib.float32)
        with pytest.raises(TypeError):
            lib.frombuffer(buffer, lib.float32)
        with pytest.warns(UserWarning, match="The given buffer is not writable"):
            assert lib.frombuffer(bytes(8), dtype=lib.float32).tolist() == [0.0, 0.0]


def test_range():
    torch = torch_or_skip()
    for args, kwargs in [((1, 4), {}), ((1, 2, 0.3), {}), ((5, 0, -1), {}), ((0, 1, 0.1), {}),
                         ((0, 5), {"dtype": "int64"}), ((1, 2, 0.5), {"dtype": "float64"}), ((2, 2), {})]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = mg.range(*args, **{k: getattr(mg, v) for k, v in kwargs.items()})
            tout = torch.range(*args, **{k: getattr(torch, v) for k, v in kwargs.items()})
        assert [str(w.message) for w in caught if w.category is UserWarning][0].startswith(
            "torch.range is deprecated and will be removed in a future release")
        assert caught[0].filename == __file__
        assert str(out.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1]
        np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert mg.range(0, 3, requires_grad=True).requires_grad
        for lib in (mg, torch):
            with pytest.raises(RuntimeError, match="step must be nonzero"):
                lib.range(0, 5, 0)
            with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
                lib.range(5, 0, 1)
            with pytest.raises(TypeError):
                lib.range(3)
