"""CPU autocast against PyTorch's: which ops run in bfloat16/float16, which in float32, which as their inputs;
a small model's loss and float32 gradients under autocast; GradScaler with float16."""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .low_precision_helpers import assert_ulps
from .mirror import torch_or_skip


def _arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# name: (fn(lib, F, *tensors), shapes, input dtype). Inputs are float32 for the lower-precision list (autocast
# casts them down), bfloat16 for the float32 list (autocast casts them up) and for ops on no list (they keep it).
AUTOCAST_OPS = {
    # PyTorch's CPU lower-precision list
    "linear": (lambda L, F, x, w, b: F.linear(x, w, b), [(3, 8), (5, 8), (5,)], "float32"),
    "matmul": (lambda L, F, a, b: a @ b, [(2, 3, 8), (8, 4)], "float32"),
    "mm": (lambda L, F, a, b: L.mm(a, b), [(3, 8), (8, 4)], "float32"),
    "bmm": (lambda L, F, a, b: L.bmm(a, b), [(2, 3, 8), (2, 8, 4)], "float32"),
    "addmm": (lambda L, F, c, a, b: L.addmm(c, a, b), [(3, 4), (3, 8), (8, 4)], "float32"),
    "baddbmm": (lambda L, F, c, a, b: L.baddbmm(c, a, b), [(2, 3, 4), (2, 3, 8), (2, 8, 4)], "float32"),
    "addbmm": (lambda L, F, c, a, b: L.addbmm(c, a, b), [(3, 4), (2, 3, 8), (2, 8, 4)], "float32"),
    "einsum": (lambda L, F, a, b: L.einsum("ij,jk->ik", a, b), [(3, 8), (8, 4)], "float32"),
    "conv1d": (lambda L, F, x, w: F.conv1d(x, w), [(1, 2, 9), (3, 2, 3)], "float32"),
    "conv2d": (lambda L, F, x, w: F.conv2d(x, w), [(1, 2, 6, 6), (3, 2, 3, 3)], "float32"),
    "conv_transpose2d": (lambda L, F, x, w: F.conv_transpose2d(x, w), [(1, 2, 5, 5), (2, 3, 3, 3)], "float32"),
    "prelu": (lambda L, F, x, w: F.prelu(x, w), [(3, 4), (1,)], "float32"),
    "sdpa": (lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
             [(1, 2, 5, 8), (1, 2, 5, 8), (1, 2, 5, 8)], "float32"),
    # PyTorch's CPU float32 list
    "cross_entropy": (lambda L, F, x: F.cross_entropy(x, L.tensor([0, 3, 1])), [(3, 5)], "bfloat16"),
    "nll_loss": (lambda L, F, x: F.nll_loss(x, L.tensor([0, 3, 1])), [(3, 5)], "bfloat16"),
    "mse_loss": (lambda L, F, a, b: F.mse_loss(a, b), [(3, 5), (3, 5)], "bfloat16"),
    "l1_loss": (lambda L, F, a, b: F.l1_loss(a, b), [(3, 5), (3, 5)], "bfloat16"),
    "smooth_l1_loss": (lambda L, F, a, b: F.smooth_l1_loss(a, b), [(3, 5), (3, 5)], "bfloat16"),
    "huber_loss": (lambda L, F, a, b: F.huber_loss(a, b), [(3, 5), (3, 5)], "bfloat16"),
    "kl_div": (lambda L, F, a, b: F.kl_div(a, b, reduction="batchmean"), [(3, 5), (3, 5)], "bfloat16"),
    "bce_with_logits": (lambda L, F, a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()), [(3, 5), (3, 5)],
                        "bfloat16"),
    "margin_ranking_loss": (lambda L, F, a, b, t: F.margin_ranking_loss(a, b, t.sign()), [(6,), (6,), (6,)],
                            "bfloat16"),
    "soft_margin_loss": (lambda L, F, a, t: F.soft_margin_loss(a, t.sign()), [(6,), (6,)], "bfloat16"),
    "cdist": (lambda L, F, a, b: L.cdist(a, b), [(3, 4), (2, 4)], "bfloat16"),
    "prod": (lambda L, F, a: a.prod(-1), [(3, 4)], "bfloat16"),
    "trace": (lambda L, F, a: L.trace(a), [(4, 4)], "bfloat16"),
    "avg_pool3d": (lambda L, F, x: F.avg_pool3d(x, 2), [(1, 1, 4, 4, 4)], "bfloat16"),
    # on no list: the inputs' dtype
    "softmax": (lambda L, F, x: F.softmax(x, -1), [(3, 5)], "bfloat16"),
    "layer_norm": (lambda L, F, x: F.layer_norm(x, (5,)), [(3, 5)], "bfloat16"),
    "gelu": (lambda L, F, x: F.gelu(x), [(3, 5)], "bfloat16"),
    "sum": (lambda L, F, x: x.sum(-1), [(3, 5)], "bfloat16"),
    "mv": (lambda L, F, a, b: L.mv(a, b), [(3, 4), (4,)], "float32"),
    "dot": (lambda L, F, a, b: L.dot(a, b), [(4,), (4,)], "float32"),
    "avg_pool2d": (lambda L, F, x: F.avg_pool2d(x, 2), [(1, 1, 4, 4)], "bfloat16"),
}


def _run(lib, op, autocast_dtype, seed=0):
    fn, shapes, dtype = AUTOCAST_OPS[op]
    arrays = _arrays(seed, *shapes)
    tensors = [lib.tensor(a).to(getattr(lib, dtype)) for a in arrays]
    with lib.autocast("cpu", dtype=getattr(lib, autocast_dtype)):
        return fn(lib, lib.nn.functional, *tensors)


@pytest.mark.parametrize("autocast_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", sorted(AUTOCAST_OPS))
def test_op_dtype_and_values_under_autocast(op, autocast_dtype):
    """The op's output dtype under autocast is PyTorch's, and so are its values: within 1 ulp of the 16-bit dtype
    (or 2 of the largest value, for sums that cancel) or, for float32 outputs, float32's tolerance."""
    torch = torch_or_skip()
    got, want = _run(mg, op, autocast_dtype), _run(torch, op, autocast_dtype)
    assert str(got.dtype) == str(want.dtype).rpartition(".")[2], (op, got.dtype, want.dtype)
    if str(got.dtype) in ("bfloat16", "float16"):
        assert_ulps(got, want, 1, op, scale_ulps=2)
    else:
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_autocast_state_nesting_and_forms():
    torch = torch_or_skip()
    F = mg.nn.functional
    x, w = mg.randn(3, 4), mg.randn(5, 4)
    assert not mg.is_autocast_enabled("cpu") and mg.get_autocast_dtype("cpu") == mg.bfloat16
    with mg.autocast(device_type="cpu"):
        assert mg.is_autocast_enabled("cpu") and F.linear(x, w).dtype == mg.bfloat16
        with mg.autocast("cpu", enabled=False):
            assert not mg.is_autocast_enabled("cpu") and F.linear(x, w).dtype == mg.float32
        assert F.linear(x, w).dtype == mg.bfloat16
        assert F.linear(x.double(), w.double()).dtype == mg.float64        # float64 is never cast
    assert F.linear(x, w).dtype == mg.float32
    with pytest.warns(FutureWarning), warnings.catch_warnings():
        warnings.simplefilter("always")
        with mg.cpu.amp.autocast(dtype=mg.float16):
            assert F.linear(x, w).dtype == mg.float16

    @mg.autocast("cpu")
    def decorated(a, b):
        return a @ b.T
    assert decorated(x, w).dtype == mg.bfloat16
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        with mg.autocast("cpu", dtype=mg.float64):
            assert F.linear(x, w).dtype == mg.float32
    with pytest.raises(ValueError, match="device_type"):
        mg.autocast(mg.device("cpu"))
    with torch.autocast("cpu"):       # the same ops, the same answer
        assert torch.nn.functional.linear(torch.randn(3, 4), torch.randn(5, 4)).dtype == torch.bfloat16


def _tiny_model(lib, params):
    """Embedding -> Linear -> RMSNorm -> GELU -> Linear -> cross_entropy, written once for both libraries."""
    F = lib.nn.functional

    def loss(tokens, targets):
        h = F.embedding(tokens, params["emb"])                    # (B, T, D) float32
        h = F.linear(h, params["w1"], params["b1"])               # bfloat16 under autocast
        h = F.rms_norm(h, (h.shape[-1],), params["g"])            # bfloat16 input, float32 weight: bfloat16
        h = F.gelu(h)
        logits = F.linear(h, params["w2"])                        # bfloat16
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))   # float32
    return loss


@pytest.mark.parametrize("autocast_dtype", ["bfloat16", "float16"])
def test_small_model_loss_and_float32_gradients_match_pytorch(autocast_dtype):
    """A small model under autocast: the loss is float32 and within a 16-bit rounding of PyTorch's; every
    parameter stays float32 and its gradient is float32, equal to PyTorch's within the 16-bit rounding of the
    activations it went through (a few ulps of the 16-bit dtype relative to the gradient's scale)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    shapes = {"emb": (11, 16), "w1": (32, 16), "b1": (32,), "g": (32,), "w2": (11, 32)}
    values = {k: (rng.standard_normal(s) * 0.5).astype(np.float32) for k, s in shapes.items()}
    tokens = rng.integers(0, 11, (4, 6))
    targets = rng.integers(0, 11, (4, 6))
    results = {}
    for lib in (mg, torch):
        params = {k: lib.tensor(v, requires_grad=True) for k, v in values.items()}
        with lib.autocast("cpu", dtype=getattr(lib, autocast_dtype)):
            loss = _tiny_model(lib, params)(lib.tensor(tokens), lib.tensor(targets))
        loss.backward()
        results[lib.__name__] = (loss, params)
    (loss_mg, p_mg), (loss_th, p_th) = results["minigrad"], results["torch"]
    assert loss_mg.dtype == mg.float32
    eps = 2.0 ** -7 if autocast_dtype == "bfloat16" else 2.0 ** -10
    np.testing.assert_allclose(loss_mg.item(), loss_th.item(), rtol=eps)
    for name in shapes:
        assert p_mg[name].dtype == mg.float32 and p_mg[name].grad.dtype == mg.float32
        want = p_th[name].grad.numpy()
        np.testing.assert_allclose(p_mg[name].grad.numpy(), want, rtol=0, atol=4 * eps * np.abs(want).max(),
                                   err_msg=name)


def test_grad_scaler_with_float16_autocast_matches_pytorch():
    """GradScaler on the CPU with float16 autocast: the scaled float16 backward overflows at a large scale, the step
    is skipped and the scale halved; clean steps then update the float32 weights as PyTorch's do, and after
    growth_interval clean steps the scale doubles."""
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    w0 = (rng.standard_normal((4, 8)) * 0.3).astype(np.float32)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    y = rng.integers(0, 4, 16)
    history = {}
    for lib in (mg, torch):
        w = lib.tensor(w0.copy(), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 30, growth_interval=3)
        scales, weights = [], []
        for _ in range(6):
            opt.zero_grad()
            with lib.autocast("cpu", dtype=lib.float16):
                loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(lib.tensor(x), w), lib.tensor(y))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            weights.append(w.detach().numpy().copy())
        history[lib.__name__] = (scales, weights)
    assert history["minigrad"][0] == history["torch"][0]
    assert history["minigrad"][0][0] == 2.0 ** 29           # the first step overflowed in float16 and was skipped
    for got, want in zip(history["minigrad"][1], history["torch"][1]):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
