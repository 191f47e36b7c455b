"""Names public PyTorch programs use that minigrad lacked: nn.ParameterList/ParameterDict/Buffer, F.gumbel_softmax,
F.upsample, Tensor.ndimension/nelement/adjoint/swapaxes_/fill_diagonal_/random_/share_memory_/pin_memory;
each against PyTorch where its values are deterministic."""
import numpy as np
import pytest

import minigrad as mg
from tests.mirror import torch_or_skip


def _model(lib):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(3)])
            self.table = lib.nn.ParameterDict({"scale": lib.ones(3), "shift": lib.nn.Parameter(lib.zeros(3))})
            self.offset = lib.nn.Buffer(lib.full((3,), 0.5))
            self.scratch = lib.nn.Buffer(lib.zeros(3), persistent=False)

        def forward(self, x):
            h = x @ self.weights[0] + self.weights[1]
            return h * self.table["scale"] + self.table["shift"] + self.offset
    return Model()


def test_parameter_containers_and_buffers_register_as_pytorch():
    torch = torch_or_skip()
    models = [_model(mg), _model(torch)]
    for attribute in ("named_parameters", "named_buffers"):
        names = [[n for n, _ in getattr(m, attribute)()] for m in models]
        assert names[0] == names[1]
    assert list(models[0].state_dict()) == list(models[1].state_dict())
    assert [type(p).__name__ for p in models[0].weights] == ["Parameter", "Parameter"]
    models[0].load_state_dict({k: mg.tensor(v.numpy()) for k, v in models[1].state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    upstream = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    for m, lib in zip(models, (mg, torch)):
        m(lib.tensor(x)).backward(lib.tensor(upstream))
    for (name, a), (_, b) in zip(models[0].named_parameters(), models[1].named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, err_msg=name)


def test_parameter_dict_and_list_behave_as_containers():
    d = mg.nn.ParameterDict({"a": mg.ones(1)})
    d.update({"b": mg.zeros(2)})
    assert list(d) == ["a", "b"] and "b" in d and len(d) == 2 and d.get("c") is None
    assert d.pop("a").shape == (1,) and list(d.keys()) == ["b"]
    p = mg.nn.ParameterList()
    p.append(mg.ones(1)).extend([mg.ones(2)])
    assert len(p) == 2 and p[-1].shape == (2,) and len(p[0:1]) == 1
    with pytest.raises(IndexError):
        p[2]


@pytest.mark.parametrize("shape, wrap", [((5, 3), True), ((5, 3), False), ((3, 5), False), ((2, 2, 2), False)])
def test_fill_diagonal_as_pytorch_with_gradient(shape, wrap):
    torch = torch_or_skip()
    a = np.random.default_rng(2).standard_normal(shape)
    outs = []
    for lib in (mg, torch):
        leaf = lib.tensor(a, requires_grad=True)
        out = (leaf * 2).fill_diagonal_(7.0, wrap=wrap)
        out.backward(lib.ones_like(out) * 3)
        outs.append((out.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_small_tensor_methods_as_pytorch():
    torch = torch_or_skip()
    a = np.arange(6.0).reshape(2, 3)
    for lib in (mg, torch):
        t = lib.tensor(a)
        assert t.ndimension() == 2 and t.nelement() == 6
        np.testing.assert_array_equal(t.adjoint().numpy(), a.T)
        assert t.clone().swapaxes_(0, 1).shape == (3, 2) and t.clone().swapdims_(0, 1).shape == (3, 2)
        assert t.share_memory_() is t
        with pytest.raises(RuntimeError, match="accelerator"):
            t.pin_memory()
        with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
            lib.zeros(2, 3, 2).fill_diagonal_(1)


def test_random_fills_ranges_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        draws = lib.zeros(2000).random_(2, 5).numpy()
        assert set(np.unique(draws)) == {2.0, 3.0, 4.0}
        assert set(np.unique(lib.zeros(2000, dtype=lib.int64).random_(3).numpy())) == {0, 1, 2}
        assert lib.zeros(1000, dtype=lib.int8).random_().numpy().min() >= 0
        with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
            lib.zeros(3).random_(5, 2)


def test_gumbel_softmax_straight_through():
    """The hard sample is one-hot at the soft sample's argmax and carries the soft sample's gradient (the same
    seed draws the same noise)."""
    logits = mg.tensor(np.random.default_rng(3).standard_normal((4, 5)), requires_grad=True)
    upstream = mg.tensor(np.random.default_rng(4).standard_normal((4, 5)))
    grads = []
    for hard in (False, True):
        mg.manual_seed(0)
        logits.grad = None
        y = mg.nn.functional.gumbel_softmax(logits, tau=0.7, hard=hard)
        (y * upstream).sum().backward()
        grads.append(logits.grad.numpy())
        if hard:
            assert np.array_equal(y.detach().numpy().sum(-1), np.ones(4)) and set(np.unique(y.detach().numpy())) <= {0, 1}
        else:
            soft = y.detach().numpy()
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
    assert (soft.argmax(-1) == y.detach().numpy().argmax(-1)).all()


def test_upsample_is_interpolate_with_a_warning():
    torch = torch_or_skip()
    x = np.random.default_rng(5).standard_normal((1, 2, 3, 3))
    outs = []
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="upsample` is deprecated"):
            outs.append(lib.nn.functional.upsample(lib.tensor(x), scale_factor=2, mode="bilinear",
                                                   align_corners=False).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


def test_factory_kwargs_and_lr_scheduler_names_as_pytorch():
    """nn.factory_kwargs merges device/dtype/memory_format with a factory_kwargs dict and refuses others, as PyTorch's;
    lr_scheduler has PyTorch's module-level names (inf, Tensor)."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        merged = lib.nn.factory_kwargs({"dtype": lib.float64, "factory_kwargs": {"device": "cpu"}})
        assert set(merged) == {"dtype", "device"} and merged["dtype"] == lib.float64
        assert lib.nn.factory_kwargs(None) == {}
        assert lib.empty(2, **merged).dtype == lib.float64
        with pytest.raises(TypeError, match=r"unexpected kwargs \{'foo'\}"):
            lib.nn.factory_kwargs({"foo": 1})
        with pytest.raises(TypeError, match="dtype specified twice, in \\*\\*kwargs and in factory_kwargs"):
            lib.nn.factory_kwargs({"dtype": lib.float64, "factory_kwargs": {"dtype": lib.float32}})
        assert lib.optim.lr_scheduler.inf == float("inf") and lib.optim.lr_scheduler.Tensor is lib.Tensor


def test_native_channel_shuffle_and_functional_dispatch_names_as_pytorch():
    torch = torch_or_skip()
    x = np.random.default_rng(8).standard_normal((2, 6, 3))
    upstream = np.random.default_rng(9).standard_normal((2, 6, 3))
    results = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.native_channel_shuffle(t, 3)
        results.append(y.detach().numpy())
        assert y.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"):
            y.backward(lib.tensor(upstream))
        assert lib.nn.functional.has_torch_function((lib.ones(2),)) is False
        assert lib.nn.functional.Tensor is lib.Tensor
    np.testing.assert_array_equal(results[0], results[1])      # a permutation of the input: exact


def test_legacy_norms_and_orgqr_as_pytorch():
    """frobenius_norm, nuclear_norm (deprecated in PyTorch, with its UserWarning) and orgqr: values and gradients from
    a random upstream gradient in float64, as PyTorch's."""
    torch = torch_or_skip()
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4))
    results = []
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
            f = lib.frobenius_norm(t, (1, 2), True)
        with pytest.warns(UserWarning, match="nuclear_norm is deprecated"):
            n = lib.nuclear_norm(t)
        with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3 dimensions instead."):
            lib.frobenius_norm(t, (0, 1, 2))
        a, tau = lib.geqrf(lib.tensor(x[0].T))
        a.requires_grad_()
        q = lib.orgqr(a, tau)
        total = ((f * lib.tensor(rng.standard_normal(f.shape))).sum() + (n * lib.tensor([0.3, -1.2])).sum()
                 + (q * lib.tensor(np.arange(12.0).reshape(4, 3) / 7)).sum())
        total.backward()
        results.append([f.detach().numpy(), n.detach().numpy(), q.detach().numpy(), a.orgqr(tau).detach().numpy(),
                        t.grad.numpy(), a.grad.numpy()])
        rng = np.random.default_rng(11)
        rng.standard_normal((2, 3, 4))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_native_dropout_and_binomial():
    """native_dropout: output = input * mask / (1 - p) and the gradient through the same mask (without PyTorch);
    evaluation and p = 1 and the errors as PyTorch's. binomial: the mean of many draws, PyTorch's edge cases
    (probability beyond 1, negative count), its dtype error and its missing derivative."""
    x = mg.tensor(np.random.default_rng(12).standard_normal(2000), requires_grad=True)
    out, mask = mg.native_dropout(x, 0.25, True)
    assert mask.dtype == mg.bool and 0.70 < mask.float().mean().item() < 0.80
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() * mask.numpy() / 0.75, rtol=1e-6)
    upstream = np.random.default_rng(13).standard_normal(2000)
    out.backward(mg.tensor(upstream, dtype=mg.float32))
    np.testing.assert_allclose(x.grad.numpy(), upstream * mask.numpy() / 0.75, rtol=1e-6)
    draws = mg.binomial(mg.full((20000,), 10.0), mg.full((20000,), 0.3))
    assert abs(draws.mean().item() - 3.0) < 0.05 and draws.dtype == mg.float32
    torch = torch_or_skip()
    for lib in (mg, torch):
        kept, every = lib.native_dropout(lib.ones(5), 0.5, False)
        assert every.all() and (kept == 1).all()
        zeros, none = lib.native_dropout(lib.ones(5), 1.0, True)
        assert not none.any() and (zeros == 0).all()
        with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=-0.5"):
            lib.native_dropout(lib.ones(3), 1.5, True)
        edge = lib.binomial(lib.tensor([5.0, -1.0, 4.0]), lib.tensor([1.5, 0.5, 0.0]))
        assert edge.tolist() == [5.0, 0.0, 0.0]
        with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
            lib.binomial(lib.tensor([5]), lib.tensor([0.5]))
        y = lib.binomial(lib.tensor([5.0, 7.0], requires_grad=True), lib.tensor([0.5, 0.2]))
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            y.sum().backward()


def test_function_style_autocast_api_as_pytorch():
    """The older autocast functions: values, PyTorch's DeprecationWarnings, set_autocast_enabled turning CPU autocast
    on for the ops that follow, the nesting count; torch.GradScaler is torch.amp.GradScaler."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.warns(DeprecationWarning, match=r"get_autocast_cpu_dtype\(\) is deprecated. Please use"):
            assert lib.get_autocast_cpu_dtype() == lib.bfloat16
        with pytest.warns(DeprecationWarning, match=r"is_autocast_cpu_enabled\(\) is deprecated"):
            assert lib.is_autocast_cpu_enabled() is False
        with pytest.warns(DeprecationWarning, match=r"get_autocast_gpu_dtype\(\) is deprecated"):
            assert lib.get_autocast_gpu_dtype() == lib.float16
        lib.set_autocast_enabled("cpu", True)
        try:
            assert lib.is_autocast_enabled("cpu")
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.bfloat16
        finally:
            lib.set_autocast_enabled("cpu", False)
        assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.float32
        assert lib.is_autocast_cache_enabled() is True
        lib.clear_autocast_cache()
        assert [lib.autocast_increment_nesting(), lib.autocast_decrement_nesting()] == [1, 0]
        assert lib.GradScaler is lib.amp.GradScaler


def test_hash_tensor_as_pytorch():
    """hash_tensor: the xor of the elements' 64 bits after widening (every float16 pattern, NaN payloads included,
    and the integer dtypes), over dims, and PyTorch's refusals (a mode, an empty reduction, dtypes without a
    kernel) with its exception types."""
    torch = torch_or_skip()
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.int16).reshape(256, 256)
    cases = [lambda L: L.tensor(halves).view(L.float16), lambda L: L.tensor(halves).view(L.bfloat16),
             lambda L: L.tensor(halves).view(L.float16).float(), lambda L: L.tensor(halves),
             lambda L: L.tensor(halves).to(L.int8), lambda L: L.tensor(halves) > 0]
    for make in cases:
        for dim, keepdim in ((None, False), (1, False), (0, True), ((0, 1), True), ([], False)):
            want = torch.hash_tensor(make(torch), dim, keepdim=keepdim).numpy()
            got = mg.hash_tensor(make(mg), dim, keepdim=keepdim)
            assert got.dtype == mg.uint64
            np.testing.assert_array_equal(got.numpy(), want)
    assert make(mg).hash_tensor(1).shape == (256,)
    for bad in (lambda L: L.hash_tensor(L.ones(2), mode=1), lambda L: L.hash_tensor(L.zeros(0)),
                lambda L: L.hash_tensor(L.zeros(2, 0), 1), lambda L: L.hash_tensor(L.ones(2, dtype=L.complex64)),
                lambda L: L.hash_tensor(L.ones(2, dtype=L.uint32)),
                lambda L: L.hash_tensor(L.ones(2), out=L.empty(0, dtype=L.int64))):
        with pytest.raises(Exception) as theirs:
            bad(torch)
        with pytest.raises(type(theirs.value), match="hash_tensor|xor_sum_cpu|uint64"):
            bad(mg)
    assert mg.hash_tensor(mg.zeros(2, 0), 0).shape == (0,)
