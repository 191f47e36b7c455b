"""Devices and modes on a CPU-only library: ``minigrad.device``, ``Tensor.device``/``cpu``/``cuda``, ``device=``
on every creator, ``minigrad.cuda``/``backends``/``accelerator`` queries and flags, ``inference_mode``,
``compile`` and the float32 matmul precision, each mirrored against PyTorch where PyTorch answers too."""
import pickle
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops.norm.registry import NORMS
from minigrad import nn
from tests.mirror import torch_or_skip

CUDA_ERROR = "^minigrad tensors live on the CPU only; cannot use device 'cuda"


# --------------------------------------------------------------------------- the device object
@pytest.mark.parametrize("args", [("cpu",), ("cpu", 0), ("cpu:0",), ("cuda",), ("cuda:1",), ("cuda", 2), ("mps",),
                                  ("meta",)])
def test_device_object_mirrors_torch(args):
    torch = torch_or_skip()
    ours, theirs = mg.device(*args), torch.device(*args)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)
    assert str(ours) == str(theirs)
    assert repr(ours) == repr(theirs)
    assert mg.device(ours) == ours and hash(mg.device(ours)) == hash(ours)


def test_device_equality_as_torch():
    torch = torch_or_skip()
    assert (mg.device("cpu") == mg.device("cpu")) == (torch.device("cpu") == torch.device("cpu")) is True
    assert (mg.device("cpu") == mg.device("cpu", 0)) == (torch.device("cpu") == torch.device("cpu", 0)) is False
    assert (mg.device("cpu") == "cpu") == (torch.device("cpu") == "cpu") is False  # not equal to a string
    assert pickle.loads(pickle.dumps(mg.device("cuda:1"))) == mg.device("cuda", 1)


@pytest.mark.parametrize("args", [("foo",), ("cpu", -1), ("cuda:x",), ("cuda:0", 1)])
def test_bad_device_raises_like_torch(args):
    torch = torch_or_skip()
    with pytest.raises(RuntimeError) as theirs:
        torch.device(*args)
    with pytest.raises(type(theirs.value)):
        mg.device(*args)


def test_default_device_and_device_context():
    torch = torch_or_skip()
    assert mg.get_default_device() == mg.device("cpu") and repr(mg.get_default_device()) == \
        repr(torch.get_default_device())
    mg.set_default_device("cpu")
    mg.set_default_device(None)
    with mg.device("cpu"):
        assert mg.zeros(1).device == mg.device("cpu")
    with pytest.raises(RuntimeError, match=CUDA_ERROR):
        mg.set_default_device("cuda")
    with pytest.raises(RuntimeError, match=CUDA_ERROR):
        with mg.device("cuda"):
            pass


def test_device_type_must_be_a_string():
    with pytest.raises(TypeError, match="must be str, not float"):
        mg.device(1.5)


# --------------------------------------------------------------------------- tensors and modules
def test_tensor_device_and_cpu():
    torch = torch_or_skip()
    x, t = mg.zeros(2), torch.zeros(2)
    assert x.device == mg.device("cpu") and repr(x.device) == repr(t.device)
    assert (x.is_cuda, x.is_cpu, x.get_device()) == (t.is_cuda, t.is_cpu, t.get_device()) == (False, True, -1)
    assert x.cpu() is x
    assert x.to(x.device) is x and x.to(mg.device("cpu"), mg.float64).dtype == mg.float64
    assert x.to("cpu", non_blocking=True) is x


def test_to_copy_returns_a_new_tensor():
    x = mg.ones(3)
    y = x.to("cpu", copy=True)
    assert y is not x and not np.shares_memory(y.numpy(), x.numpy())
    np.testing.assert_array_equal(y.numpy(), x.numpy())


@pytest.mark.parametrize("call", [lambda x: x.cuda(), lambda x: x.cuda(0), lambda x: x.to("cuda"),
                                  lambda x: x.to(mg.device("cuda", 1)), lambda x: x.to(0),
                                  lambda x: x.to(device="cuda:0", dtype=mg.float64)])
def test_cuda_raises_both_runtime_and_assertion_error(call):
    """PyTorch without CUDA raises AssertionError; the issue asks for a RuntimeError: the error is both."""
    x = mg.zeros(2)
    with pytest.raises(RuntimeError, match=CUDA_ERROR):
        call(x)
    with pytest.raises(AssertionError):
        call(x)


def test_other_device_types_raise():
    with pytest.raises(RuntimeError, match="cannot use device 'mps'"):
        mg.zeros(2).to("mps")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        mg.zeros(2).to("gpu")


CREATORS = {
    "tensor": lambda d: mg.tensor([1.0], device=d),
    "as_tensor": lambda d: mg.as_tensor([1.0], device=d),
    "zeros": lambda d: mg.zeros(2, device=d),
    "ones": lambda d: mg.ones(2, device=d),
    "empty": lambda d: mg.empty(2, device=d),
    "full": lambda d: mg.full((2,), 3.0, device=d),
    "zeros_like": lambda d: mg.zeros_like(mg.ones(2), device=d),
    "ones_like": lambda d: mg.ones_like(mg.ones(2), device=d),
    "empty_like": lambda d: mg.empty_like(mg.ones(2), device=d),
    "full_like": lambda d: mg.full_like(mg.ones(2), 5, device=d),
    "rand_like": lambda d: mg.rand_like(mg.ones(2), device=d),
    "randn_like": lambda d: mg.randn_like(mg.ones(2), device=d),
    "randint_like": lambda d: mg.randint_like(mg.ones(2), 5, device=d),
    "arange": lambda d: mg.arange(3, device=d),
    "linspace": lambda d: mg.linspace(0, 1, 3, device=d),
    "logspace": lambda d: mg.logspace(0, 1, 3, device=d),
    "eye": lambda d: mg.eye(2, device=d),
    "rand": lambda d: mg.rand(2, device=d),
    "randn": lambda d: mg.randn(2, device=d),
    "randint": lambda d: mg.randint(5, (2,), device=d),
    "randperm": lambda d: mg.randperm(4, device=d),
    "normal": lambda d: mg.normal(0.0, 1.0, (2,), device=d),
    "normal_tensor": lambda d: mg.normal(mg.zeros(2), 1.0, device=d),
    "Tensor": lambda d: mg.Tensor(2, device=d),
    "FloatTensor": lambda d: mg.FloatTensor([1.0], device=d),
    "new_zeros": lambda d: mg.ones(1).new_zeros(2, device=d),
    "new_ones": lambda d: mg.ones(1).new_ones(2, device=d),
    "new_empty": lambda d: mg.ones(1).new_empty(2, device=d),
    "new_full": lambda d: mg.ones(1).new_full((2,), 1.0, device=d),
    "new_tensor": lambda d: mg.ones(1).new_tensor([2.0], device=d),
    "Generator": lambda d: mg.Generator(device=d),
}


@pytest.mark.parametrize("name", CREATORS)
def test_every_creator_takes_the_cpu_and_refuses_cuda(name):
    make = CREATORS[name]
    for device in (None, "cpu", "cpu:0", mg.device("cpu")):
        made = make(device)
        assert isinstance(made, mg.Generator) or made.device == mg.device("cpu")
    for device in ("cuda", mg.device("cuda", 0)):
        with pytest.raises(RuntimeError, match=CUDA_ERROR):
            make(device)


def test_module_cpu_cuda_and_to():
    model = nn.Sequential(nn.Linear(2, 3, device="cpu"), nn.LayerNorm(3, device=mg.device("cpu")))
    assert model.cpu() is model
    assert model.to(mg.device("cpu")) is model and model.to("cpu", non_blocking=True) is model
    before = [p.detach().numpy().copy() for p in model.parameters()]
    for call in (lambda: model.cuda(), lambda: model.cuda(1), lambda: model.to("cuda"),
                 lambda: model.to(mg.device("cuda"), mg.float64)):
        with pytest.raises(RuntimeError, match=CUDA_ERROR):
            call()
    for p, old in zip(model.parameters(), before):  # nothing changed on error
        assert p.dtype == mg.float32
        np.testing.assert_array_equal(p.detach().numpy(), old)


@pytest.mark.parametrize("make", [lambda **kw: nn.Linear(2, 3, **kw), lambda **kw: nn.Embedding(4, 3, **kw),
                                  lambda **kw: nn.LayerNorm(3, **kw), lambda **kw: nn.RMSNorm(3, **kw),
                                  lambda **kw: nn.BatchNorm1d(3, **kw), lambda **kw: nn.GroupNorm(1, 3, **kw)])
def test_module_constructors_take_a_device_object(make):
    module = make(device=mg.device("cpu"))
    assert all(p.device == mg.device("cpu") for p in module.parameters())
    with pytest.raises(RuntimeError, match=CUDA_ERROR):
        make(device=mg.device("cuda"))


REGISTERED_MODULES = [(spec, i) for spec in NORMS if spec.takes_device for i in range(len(spec.modules))]


@pytest.mark.parametrize("spec, i", REGISTERED_MODULES, ids=[s.modules[i] for s, i in REGISTERED_MODULES])
def test_every_registered_norm_module_takes_a_device_object(spec, i):
    """The matrix above for every module of the registry of norms (minigrad/ops/norm/registry.py)."""
    test_module_constructors_take_a_device_object(lambda **kw: spec.module_class(i)(*spec.module_args, **kw))


# --------------------------------------------------------------------------- cuda, backends, accelerator
def test_cuda_queries_match_torch_without_cuda():
    torch = torch_or_skip()
    assert mg.cuda.is_available() is torch.cuda.is_available() is False
    assert mg.cuda.device_count() == torch.cuda.device_count() == 0
    assert mg.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    with pytest.raises(AssertionError):
        torch.cuda.current_device()
    with pytest.raises(AssertionError, match=CUDA_ERROR):
        mg.cuda.current_device()


def test_cuda_housekeeping_calls_are_no_ops():
    state = mg.default_generator.get_state()
    for call in (lambda: mg.cuda.manual_seed(3), lambda: mg.cuda.manual_seed_all(3), mg.cuda.seed,
                 mg.cuda.seed_all, mg.cuda.empty_cache):   # synchronize raises, as PyTorch's (test_cuda_functions)
        assert call() is None
    np.testing.assert_array_equal(mg.default_generator.get_state().numpy(), state.numpy())  # CPU stream untouched


def test_backends_and_accelerator_match_torch_defaults():
    torch = torch_or_skip()
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(mg.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert mg.backends.cudnn.is_available() == torch.backends.cudnn.is_available()
    assert mg.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert mg.backends.mps.is_built() is torch.backends.mps.is_built() is False
    assert mg.backends.cuda.is_built() is torch.backends.cuda.is_built() is False
    assert mg.accelerator.is_available() is torch.accelerator.is_available() is False
    assert mg.accelerator.device_count() == torch.accelerator.device_count() == 0
    assert mg.accelerator.current_accelerator() is torch.accelerator.current_accelerator() is None


def test_backend_modules_import_as_in_ported_code():
    import minigrad.backends.cudnn as cudnn
    saved = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert mg.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = saved


def test_matmul_precision_is_recorded_and_tied_to_allow_tf32():
    torch = torch_or_skip()
    saved = mg.get_float32_matmul_precision()
    assert saved == torch.get_float32_matmul_precision() == "highest"
    a = mg.tensor(np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32))
    exact = (a @ a).numpy().copy()
    try:
        for precision, tf32 in (("high", True), ("medium", True), ("highest", False)):
            mg.set_float32_matmul_precision(precision)
            assert mg.get_float32_matmul_precision() == precision
            assert mg.backends.cuda.matmul.allow_tf32 is tf32
            np.testing.assert_array_equal((a @ a).numpy(), exact)  # changes nothing
        mg.backends.cuda.matmul.allow_tf32 = True
        assert mg.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="precision must be one of"):
            mg.set_float32_matmul_precision("low")
        assert mg.get_float32_matmul_precision() == "high"
    finally:
        mg.set_float32_matmul_precision(saved)


# --------------------------------------------------------------------------- inference_mode and compile
def _records():
    return mg.ones(1, requires_grad=True).mul(2).requires_grad


def test_inference_mode_as_context_manager_mirrors_torch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        assert not lib.is_inference_mode_enabled()
        with lib.inference_mode():
            assert not lib.is_grad_enabled() and lib.is_inference_mode_enabled()
            with lib.inference_mode(mode=False):
                assert lib.is_inference_mode_enabled() is False and lib.is_grad_enabled()
            assert lib.is_inference_mode_enabled()
        with lib.no_grad(), lib.inference_mode(False):
            assert lib.is_grad_enabled()
        assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            assert lib.is_grad_enabled()
    with mg.inference_mode():
        assert not _records()
    assert _records()


def test_inference_mode_restores_on_error():
    with pytest.raises(ValueError):
        with mg.inference_mode():
            raise ValueError
    assert mg.is_grad_enabled() and not mg.is_inference_mode_enabled()


def test_inference_mode_as_decorator_bare_and_called():
    @mg.inference_mode
    def bare():
        return _records(), mg.is_inference_mode_enabled()

    @mg.inference_mode()
    def called():
        return _records()

    @mg.inference_mode(mode=False)
    def off():
        return _records()

    assert bare() == (False, True) and bare.__name__ == "bare"
    assert called() is False and off() is True
    assert mg.is_grad_enabled() and not mg.is_inference_mode_enabled()


def test_compile_returns_its_argument_unchanged():
    model = nn.Linear(2, 2)
    assert mg.compile(model) is model
    assert mg.compile(model, mode="max-autotune", fullgraph=True, dynamic=False, backend="inductor") is model

    def f(x):
        return x * 2

    assert mg.compile(f) is f

    @mg.compile
    def g(x):
        return x + 1

    @mg.compile(fullgraph=True)
    def h(x):
        return x - 1

    assert g(1) == 2 and h(1) == 0 and h.__name__ == "h"
    assert mg.compiler.is_compiling() is False


def test_no_warnings_from_device_plumbing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mg.zeros(2, device="cpu").to("cpu").cpu()


# --------------------------------------------------------------------------- amp
def _scaled_training(lib, device, **scaler_options):
    """SGD on a linear model through a GradScaler; step 2's loss is made infinite, so that step is skipped."""
    lib.manual_seed(0)
    w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float64, requires_grad=True)
    x = lib.tensor(np.linspace(0.5, 2, 12).reshape(4, 3), dtype=lib.float64)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler(device, **scaler_options)
    history = []
    for step in range(7):
        _step(lib, step, w, x, opt, scaler)
        history.append((scaler.get_scale(), w.detach().numpy().copy()))
    return history, scaler.state_dict()


def _step(lib, step, w, x, opt, scaler):
    with np.errstate(invalid="ignore"):  # the infinite loss's NaN gradients (NumPy warns, PyTorch does not)
        opt.zero_grad()
        with lib.autocast(device_type="cpu", enabled=False):
            loss = ((x @ w.T) ** 2).mean() * (float("inf") if step == 2 else 1.0)
        scaler.scale(loss).backward()
        if step % 2:
            scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()


def test_grad_scaler_on_the_cpu_mirrors_torch():
    torch = torch_or_skip()
    ours, theirs = _scaled_training(mg, "cpu", init_scale=8.0, growth_interval=3), \
        _scaled_training(torch, "cpu", init_scale=8.0, growth_interval=3)
    for (scale, w), (their_scale, their_w) in zip(ours[0], theirs[0]):
        assert scale == their_scale
        np.testing.assert_allclose(w, their_w, rtol=1e-12, atol=1e-14)
    assert [s for s, _ in ours[0]] == [8.0, 8.0, 4.0, 4.0, 4.0, 8.0, 8.0]  # backoff at the inf step, growth after 3
    assert ours[1] == {k: (v.item() if hasattr(v, "item") else v) for k, v in theirs[1].items()}


def test_grad_scaler_for_cuda_disables_itself_as_torch_does_without_cuda():
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="Disabling"):
            scaler = lib.amp.GradScaler("cuda")
        assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with pytest.warns(UserWarning, match="Disabling"):
        disabled_history, _ = _scaled_training(mg, "cuda")
    w = mg.tensor([1.0], requires_grad=True)
    assert mg.cuda.amp.GradScaler(enabled=False).scale(w) is w
    assert not mg.cuda.amp.GradScaler(enabled=False).is_enabled()
    assert all(scale == 1.0 for scale, _ in disabled_history)


def test_grad_scaler_refuses_a_second_unscale_and_an_empty_state():
    scaler = mg.amp.GradScaler("cpu")
    w = mg.ones(2, requires_grad=True)
    opt = mg.optim.SGD([w], lr=0.1)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="state dict is empty"):
        scaler.load_state_dict({})


def test_autocast_is_a_stand_in():
    torch = torch_or_skip()
    a = mg.ones(2, 2)
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="Disabling"):
            with lib.autocast("cuda"):
                assert not lib.is_autocast_enabled()
    with mg.autocast("cpu", dtype=mg.float16):
        assert mg.amp.is_autocast_enabled("cpu")
        assert (a @ a).dtype == mg.float16  # the CPU autocast runs products in its dtype, as PyTorch's
    assert not mg.amp.is_autocast_enabled("cpu")

    @mg.autocast("cpu")
    def f():
        return mg.amp.is_autocast_enabled("cpu")

    assert f() is True
