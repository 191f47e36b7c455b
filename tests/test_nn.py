"""nn.Module, Parameter, containers, layers, init and clip_grad_norm_, mirrored against PyTorch where it has them."""
import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn

from .mirror import torch_or_skip


@pytest.fixture
def torch():
    return torch_or_skip()


def implemented(fn, *args, **kwargs):
    """Call ``fn``; skip the test while a colleague's functional op is still a stub."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError as e:
        pytest.skip(f"functional op not implemented yet: {e}")


def make_tree(lib, tnn):
    """The same module tree in minigrad (``lib=mg``) or PyTorch: nested containers, buffers of every kind."""

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.proj = tnn.Linear(4, 3, dtype=lib.float64)
            self.heads = tnn.ModuleList([tnn.Linear(3, 3, bias=False, dtype=lib.float64), tnn.ReLU(),
                                         tnn.Linear(3, 2, dtype=lib.float64)])
            self.table = tnn.ModuleDict({"emb": tnn.Embedding(5, 4, padding_idx=0, dtype=lib.float64),
                                         "act": tnn.GELU(approximate="tanh")})
            self.register_buffer("scale", lib.ones(3, dtype=lib.float64))
            self.register_buffer("cache", lib.zeros(2, dtype=lib.float64), persistent=False)
            self.register_buffer("absent", None)
            self.register_buffer("count", lib.tensor(0))

    class Model(tnn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = tnn.Sequential(Block(), tnn.Dropout(0.25), Block())
            self.head = tnn.Linear(2, 1, dtype=lib.float64)

    return Model()


def torch_state_as_numpy(module):
    return OrderedDict((k, v.detach().numpy()) for k, v in module.state_dict().items())


def loaded_from_torch(torch):
    """A minigrad tree carrying exactly the weights of a fresh PyTorch tree."""
    th = make_tree(torch, torch.nn)
    model = make_tree(mg, nn)
    model.load_state_dict(torch_state_as_numpy(th))
    return model, th


def error_text(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


# ----------------------------------------------------------------------------- Parameter
def test_parameter_is_a_leaf_tensor_sharing_data():
    t = mg.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert isinstance(p, mg.Tensor) and p.requires_grad and p.is_leaf
    p.data[0] = 5.0
    assert t.detach().numpy()[0] == 5.0
    assert repr(p).startswith("Parameter containing:\ntensor([5., 2.], requires_grad=True)")
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert type(p * 2) is mg.Tensor


def test_parameter_deepcopy_copies_data():
    p = nn.Parameter(mg.tensor([1.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q._data is not p._data
    np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())


# ----------------------------------------------------------------------------- registration
class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(mg.ones(2))
        self.register_buffer("stat", mg.zeros(2))
        self.child = nn.Linear(2, 2)
        self.plain = 3


def test_setattr_registers_parameters_buffers_and_children():
    m = Pair()
    assert list(m._parameters) == ["weight"] and list(m._buffers) == ["stat"] and list(m._modules) == ["child"]
    assert [n for n, _ in m.named_parameters()] == ["weight", "child.weight", "child.bias"]
    assert [n for n, _ in m.named_buffers()] == ["stat"]
    assert list(m.children()) == [m.child] and list(m.modules()) == [m, m.child]
    assert [n for n, _ in m.named_modules()] == ["", "child"]
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["weight"]
    assert m.plain == 3 and "plain" not in m._parameters
    m.stat = mg.ones(2)  # a registered buffer can be replaced by a Tensor
    assert m._buffers["stat"] is m.stat


def test_reassigning_and_deleting_registered_names():
    m = Pair()
    m.weight = None
    assert m.weight is None and "weight" in m._parameters
    assert [n for n, _ in m.named_parameters()] == ["child.weight", "child.bias"]
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        m.weight = mg.ones(2)
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'stat'"):
        m.stat = 1
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'child'"):
        m.child = 1
    m.stat = nn.Parameter(mg.ones(2))  # a Parameter moves a name from the buffers to the parameters
    assert "stat" not in m._buffers and "stat" in m._parameters
    del m.child
    assert "child" not in m._modules and not hasattr(m, "child")
    with pytest.raises(AttributeError, match="'Pair' object has no attribute 'child'"):
        m.child


def test_registration_errors():
    m = Pair()
    with pytest.raises(KeyError, match="buffer name can"):
        m.register_buffer("a.b", mg.zeros(1))
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", mg.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'x'"):
        m.register_buffer("x", 1)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' object to parameter 'x'"):
        m.register_parameter("x", mg.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mg.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_shared_parameters_and_modules_are_listed_once():
    m = nn.Module()
    m.a = nn.Linear(2, 2)
    m.b = m.a
    m.c = nn.Linear(2, 2)
    m.c.weight = m.a.weight
    assert len(list(m.parameters())) == 3
    assert [n for n, _ in m.named_modules()] == ["", "a", "c"]
    assert list(m.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias", "c.weight", "c.bias"]


# ----------------------------------------------------------------------------- state_dict
def test_state_dict_keys_equal_pytorch(torch):
    seq = [(mg, nn), (torch, torch.nn)]
    mg_seq, th_seq = (tnn.Sequential(tnn.Linear(3, 4), tnn.ReLU(), tnn.Linear(4, 2)) for _, tnn in seq)
    assert list(mg_seq.state_dict()) == list(th_seq.state_dict())
    model, th = loaded_from_torch(torch)
    assert list(model.state_dict()) == list(th.state_dict())
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in th.named_parameters()]
    assert [n for n, _ in model.named_buffers()] == [n for n, _ in th.named_buffers()]
    assert [n for n, _ in model.named_modules()] == [n for n, _ in th.named_modules()]
    assert [n for n, _ in model.named_children()] == [n for n, _ in th.named_children()]


def test_state_dict_values_share_data_and_are_detached(torch):
    model, th = loaded_from_torch(torch)
    sd = model.state_dict()
    for key, value in th.state_dict().items():
        np.testing.assert_array_equal(sd[key].detach().numpy(), value.numpy())
        assert sd[key].dtype == value.numpy().dtype
    assert type(sd["head.weight"]) is mg.Tensor and not sd["head.weight"].requires_grad
    assert sd["head.weight"]._data is model.head.weight._data
    assert model.state_dict(keep_vars=True)["head.weight"] is model.head.weight
    assert list(model.blocks.state_dict(prefix="blocks.")) == list(th.blocks.state_dict(prefix="blocks."))


def test_load_state_dict_accepts_tensors_and_casts_to_existing_dtype():
    src = nn.Linear(3, 2, dtype=mg.float32)
    dst = nn.Linear(3, 2, dtype=mg.float64)
    weight_array = dst.weight.detach().numpy()
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.weight._data is weight_array and dst.weight.dtype == mg.float64  # copied into the same array
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy().astype(np.float64))


def test_strict_errors_match_pytorch_wording(torch):
    th = torch.nn.Linear(3, 2)
    sd = {"weight": np.zeros((2, 3), np.float32), "extra": np.zeros(1, np.float32)}
    expected = error_text(lambda: th.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}))
    assert error_text(lambda: nn.Linear(3, 2).load_state_dict(sd)) == expected
    assert expected.startswith('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". ')


def test_strict_false_reports_keys_like_pytorch(torch):
    model, th = loaded_from_torch(torch)
    sd = torch_state_as_numpy(th)
    del sd["blocks.0.proj.bias"], sd["blocks.2.count"]
    sd["blocks.0.nothing"] = np.zeros(1)
    sd["blocks.9.proj.weight"] = np.zeros(1)
    ours = model.load_state_dict(sd, strict=False)
    theirs = th.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}, strict=False)
    assert ours.missing_keys == theirs.missing_keys
    assert ours.unexpected_keys == theirs.unexpected_keys


def test_failed_load_changes_nothing(torch):
    model, th = loaded_from_torch(torch)
    before = {k: np.asarray(v).copy() for k, v in model.state_dict().items()}
    sd = {k: v + 1 for k, v in torch_state_as_numpy(th).items()}
    sd["head.weight"] = np.zeros((2, 2))  # one bad shape among many good values
    text = error_text(lambda: model.load_state_dict(sd))
    assert "size mismatch for head.weight" in text and "[2, 2]" in text and "[1, 2]" in text
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.detach().numpy(), before[key])
    sd["head.weight"] = "not an array"
    assert 'While copying the parameter named "head.weight"' in error_text(lambda: model.load_state_dict(sd))


def test_loaded_torch_weights_give_torch_outputs(torch):
    torch.manual_seed(0)
    th = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3), torch.nn.Sigmoid()).double()
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3), nn.Sigmoid()).double()
    model.load_state_dict(torch_state_as_numpy(th))
    x = np.random.default_rng(0).standard_normal((6, 4))
    out = implemented(model, mg.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), th(torch.tensor(x)).detach().numpy(), rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------- modes, dtype, apply
def test_to_float64_keeps_identity_and_integer_buffers(torch):
    model, _ = loaded_from_torch(torch)
    model.float()
    params = list(model.parameters())
    params[0].grad = mg.ones(*params[0].shape)
    assert params[0].dtype == mg.float32 and model.blocks[0].count.dtype == mg.int64
    assert model.to(mg.float64) is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    assert all(p.dtype == mg.float64 for p in model.parameters())
    assert params[0].grad.dtype == mg.float64
    assert model.blocks[0].scale.dtype == mg.float64 and model.blocks[0].cache.dtype == mg.float64
    assert model.blocks[0].count.dtype == mg.int64
    assert model.half().head.weight.dtype == mg.float16
    with pytest.raises(TypeError, match="only accepts floating point"):
        model.to(mg.int64)


def test_train_eval_and_zero_grad():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.Linear(2, 1)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model and not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="boolean"):
        model.train("no")
    for p in model.parameters():
        p.grad = mg.ones(*p.shape)
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not np.asarray(p.grad).any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_apply_visits_children_first_like_pytorch(torch):
    model, th = loaded_from_torch(torch)
    ours, theirs = [], []
    model.apply(lambda m: ours.append(type(m).__name__))
    th.apply(lambda m: theirs.append(type(m).__name__))
    assert ours == theirs


def test_repr_equals_pytorch(torch):
    model, th = loaded_from_torch(torch)
    assert repr(model) == repr(th)
    assert repr(nn.Sequential(nn.SiLU(), nn.ReLU(inplace=True), nn.Identity())) == \
        repr(torch.nn.Sequential(torch.nn.SiLU(), torch.nn.ReLU(inplace=True), torch.nn.Identity()))


def test_forward_hooks_and_missing_forward():
    m = nn.Identity()
    seen = []
    handle = m.register_forward_hook(lambda mod, args, out: seen.append(out) or out * 2)
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    assert m(mg.tensor(1.0)).item() == 4.0 and seen[0].item() == 2.0
    handle.remove()
    pre.remove()
    assert m(mg.tensor(1.0)).item() == 1.0
    with pytest.raises(NotImplementedError, match="missing the required \"forward\""):
        nn.Module()(1)


# ----------------------------------------------------------------------------- containers
def test_sequential_indexing_matches_pytorch(torch):
    def build(tnn):
        s = tnn.Sequential(OrderedDict([("a", tnn.ReLU()), ("b", tnn.Tanh()), ("c", tnn.Linear(2, 2))]))
        s.append(tnn.Sigmoid())
        return s

    ours, theirs = build(nn), build(torch.nn)
    assert len(ours) == 4 and type(ours[-1]) is nn.Sigmoid and type(ours[1]) is nn.Tanh
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    assert list(ours[1:3]._modules) == list(theirs[1:3]._modules) == ["b", "c"]
    ours[0], theirs[0] = nn.Identity(), torch.nn.Identity()
    del ours[1]
    del theirs[1]
    assert list(ours._modules) == list(theirs._modules)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with pytest.raises(IndexError):
        ours[4]


def test_module_list_and_dict_match_pytorch(torch):
    def build(tnn):
        ml = tnn.ModuleList([tnn.Linear(1, 1), tnn.ReLU()])
        ml.append(tnn.Linear(1, 2))
        ml.extend([tnn.Tanh()])
        ml.insert(1, tnn.Linear(2, 1))
        del ml[0]
        ml[-1] = tnn.Linear(3, 3)
        md = tnn.ModuleDict({"x": tnn.Linear(1, 1)})
        md["y"] = tnn.Linear(2, 2)
        md.update([("z", tnn.ReLU())])
        md.pop("x")
        root = tnn.Module()
        root.ml, root.md = ml, md
        return root

    ours, theirs = build(nn), build(torch.nn)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    assert len(ours.ml) == 4 and type(ours.ml[1:][0]) is nn.ReLU
    assert list(ours.md) == ["y", "z"] and "y" in ours.md and len(ours.md) == 2


# ----------------------------------------------------------------------------- layers
def test_linear_and_embedding_initialization():
    mg.manual_seed(0)
    lin = nn.Linear(300, 200)
    bound = 1 / math.sqrt(300)
    assert lin.weight.shape == (200, 300) and lin.bias.shape == (200,) and lin.weight.dtype == mg.float32
    assert np.abs(lin.weight.detach().numpy()).max() <= bound and np.abs(lin.bias.detach().numpy()).max() <= bound
    assert abs(lin.weight.detach().numpy().std() / (bound / math.sqrt(3)) - 1) < 0.02
    assert nn.Linear(2, 3, bias=False).bias is None
    emb = nn.Embedding(400, 300, padding_idx=-2)
    assert emb.padding_idx == 398 and not emb.weight.detach().numpy()[398].any()
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.01 and abs(emb.weight.detach().numpy().mean()) < 0.01
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_to_and_layers_take_pytorchs_device_and_dtype_forms(torch):
    model, th_model = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    for args, kwargs in [(("cpu",), {}), (("cpu", "float64"), {}), ((), {"dtype": "float16"}),
                         ((), {"device": "cpu", "dtype": "float64"}), (("zeros32",), {})]:
        assert model.to(*[mg.zeros(1) if a == "zeros32" else a if a == "cpu" else np.dtype(a) for a in args],
                        **{k: v if k == "device" else np.dtype(v) for k, v in kwargs.items()}) is model
        th_model.to(*[torch.zeros(1) if a == "zeros32" else a if a == "cpu" else getattr(torch, a) for a in args],
                    **{k: v if k == "device" else getattr(torch, v) for k, v in kwargs.items()})
        assert str(model.weight.dtype) == str(th_model.weight.dtype).replace("torch.", "")
    lin = nn.Linear(3, 2, True, "cpu", mg.float64)  # PyTorch's positional order
    assert lin.weight.dtype == mg.float64 == torch.nn.Linear(3, 2, True, "cpu", torch.float64).weight.detach().numpy().dtype
    assert nn.Embedding(4, 2, device="cpu", dtype=mg.float64).weight.dtype == mg.float64
    with pytest.raises(RuntimeError, match="CPU only"):
        nn.Linear(3, 2, device="cuda")
    with pytest.raises(RuntimeError, match="CPU only"):
        model.to("cuda")


@pytest.mark.parametrize("make", [lambda **kw: nn.Linear(3, 2, **kw), lambda **kw: nn.Embedding(4, 2, **kw),
                                  lambda **kw: nn.RMSNorm(3, **kw), lambda **kw: nn.LayerNorm(3, **kw),
                                  lambda **kw: nn.BatchNorm2d(3, **kw), lambda **kw: nn.InstanceNorm1d(3, **kw),
                                  lambda **kw: nn.GroupNorm(1, 3, **kw)])
def test_every_module_takes_the_cpu_and_refuses_other_devices(make):
    """One device check for every constructor: None, 'cpu' and 'cpu:0' pass; anything else is the same error."""
    for device in (None, "cpu", "cpu:0"):
        make(device=device)
    with pytest.raises(RuntimeError, match="^minigrad tensors live on the CPU only; cannot use device 'cuda'$"):
        make(device="cuda")


def test_linear_and_embedding_mirror(torch):
    rng = np.random.default_rng(5)
    th_lin = torch.nn.Linear(4, 3, dtype=torch.float64)
    lin = nn.Linear(4, 3, dtype=mg.float64)
    lin.load_state_dict(torch_state_as_numpy(th_lin))
    x, g = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = implemented(lin, xm)
    out.backward(mg.tensor(g))
    th_lin(xt).backward(torch.tensor(g))
    np.testing.assert_allclose(out.detach().numpy(), th_lin(xt).detach().numpy(), rtol=1e-12)
    for a, b in [(xm.grad, xt.grad), (lin.weight.grad, th_lin.weight.grad), (lin.bias.grad, th_lin.bias.grad)]:
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-12, atol=1e-14)

    th_emb = torch.nn.Embedding(6, 3, padding_idx=1, dtype=torch.float64)
    emb = nn.Embedding(6, 3, padding_idx=1, dtype=mg.float64)
    emb.load_state_dict(torch_state_as_numpy(th_emb))
    idx = np.array([[0, 1, 5], [1, 1, 2]])
    g = rng.standard_normal((2, 3, 3))
    out = implemented(emb, mg.tensor(idx))
    out.backward(mg.tensor(g))
    th_emb(torch.tensor(idx)).backward(torch.tensor(g))
    np.testing.assert_array_equal(out.detach().numpy(), th_emb(torch.tensor(idx)).detach().numpy())
    np.testing.assert_allclose(emb.weight.grad.numpy(), th_emb.weight.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name, kwargs", [("ReLU", {}), ("GELU", {}), ("GELU", {"approximate": "tanh"}),
                                          ("SiLU", {}), ("Tanh", {}), ("Sigmoid", {}), ("Identity", {})])
def test_activation_modules_mirror(torch, name, kwargs):
    x = np.random.default_rng(7).standard_normal((3, 4))
    out = implemented(getattr(nn, name)(**kwargs), mg.tensor(x))
    expected = getattr(torch.nn, name)(**kwargs)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-15)


def test_dropout_module_follows_training_flag():
    x = mg.ones(1000, dtype=mg.float64)
    drop = nn.Dropout(0.25)
    out = implemented(drop, x).detach().numpy()
    assert set(np.unique(out)) <= {0.0, 1 / 0.75} and 0.15 < (out == 0).mean() < 0.35
    np.testing.assert_array_equal(drop.eval()(x).detach().numpy(), x.detach().numpy())


# ----------------------------------------------------------------------------- init
@pytest.mark.parametrize("shape", [(4, 5), (4, 5, 3), (2, 3, 4, 5), (7, 1)])
def test_fan_in_and_fan_out_equal_pytorch(torch, shape):
    ours = nn.init._calculate_fan_in_and_fan_out(mg.zeros(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
    for mode in ("fan_in", "fan_out"):
        assert nn.init._calculate_correct_fan(mg.zeros(*shape), mode) == \
            torch.nn.init._calculate_correct_fan(torch.zeros(*shape), mode)


def test_fan_and_gain_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(mg.zeros(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_normal_(mg.zeros(3, 3), mode="fan_avg")
    with pytest.raises(ValueError, match="Unsupported nonlinearity softplus"):
        nn.init.calculate_gain("softplus")
    with pytest.raises(ValueError, match="negative_slope"):
        nn.init.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize("args", [("linear",), ("sigmoid",), ("conv2d",), ("tanh",), ("relu",), ("selu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5))])
def test_calculate_gain_equals_pytorch(torch, args):
    assert nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


SHAPE = (300, 200)  # fan_in 200, fan_out 300; 60k samples: sample std within ~1% of the target
GAIN = nn.init.calculate_gain("leaky_relu", math.sqrt(5))


@pytest.mark.parametrize("fill, bound, std", [
    (lambda t: nn.init.uniform_(t, -2.0, 3.0), (-2.0, 3.0), 5 / math.sqrt(12)),
    (lambda t: nn.init.normal_(t, 0.0, 0.5), None, 0.5),
    (lambda t: nn.init.xavier_uniform_(t, gain=2.0), 2 * math.sqrt(6 / 500), 2 * math.sqrt(2 / 500)),
    (lambda t: nn.init.xavier_normal_(t), None, math.sqrt(2 / 500)),
    (lambda t: nn.init.kaiming_uniform_(t, a=math.sqrt(5)), GAIN * math.sqrt(3 / 200), GAIN / math.sqrt(200)),
    (lambda t: nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"), None, math.sqrt(2 / 300)),
])
def test_init_statistics(fill, bound, std):
    mg.manual_seed(1)
    t = nn.Parameter(mg.zeros(*SHAPE, dtype=mg.float64))
    assert fill(t) is t and t.dtype == mg.float64 and t.requires_grad
    values = t.detach().numpy()
    assert abs(values.std() / std - 1) < 0.02
    if bound is not None:
        low, high = bound if isinstance(bound, tuple) else (-bound, bound)
        assert low <= values.min() and values.max() <= high
        assert values.min() < low + 0.01 * (high - low) and values.max() > high - 0.01 * (high - low)


def test_trunc_normal_statistics():
    mg.manual_seed(2)
    t = nn.init.trunc_normal_(mg.zeros(*SHAPE, dtype=mg.float64), mean=1.0, std=2.0, a=0.0, b=3.0)
    # N(1, 4) truncated to [0, 3], i.e. the standard normal on [alpha, beta] = [-0.5, 1]
    alpha, beta = -0.5, 1.0
    pdf = [math.exp(-z * z / 2) / math.sqrt(2 * math.pi) for z in (alpha, beta)]
    mass = (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2))) / 2
    mean = 1.0 + 2.0 * (pdf[0] - pdf[1]) / mass
    var = 4.0 * (1 + (alpha * pdf[0] - beta * pdf[1]) / mass - ((pdf[0] - pdf[1]) / mass) ** 2)
    assert 0.0 <= np.asarray(t).min() and np.asarray(t).max() <= 3.0
    assert abs(np.asarray(t).mean() - mean) < 0.02 and abs(np.asarray(t).std() / math.sqrt(var) - 1) < 0.02


def test_constant_fills_and_generator_reproducibility():
    t = nn.Parameter(mg.zeros(2, 3))
    assert (nn.init.constant_(t, 0.5).detach().numpy() == 0.5).all() and (nn.init.ones_(t).detach().numpy() == 1).all()
    assert not nn.init.zeros_(t).detach().numpy().any()
    a = nn.init.kaiming_uniform_(mg.zeros(4, 4), generator=np.random.default_rng(3)).detach().numpy()
    b = nn.init.kaiming_uniform_(mg.zeros(4, 4), generator=np.random.default_rng(3)).detach().numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.warns(UserWarning, match="zero-element"):
        nn.init.kaiming_uniform_(mg.zeros(0, 3))


# ----------------------------------------------------------------------------- clip_grad_norm_
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_equals_pytorch(torch, max_norm, norm_type):
    rng = np.random.default_rng(11)
    grads = [rng.standard_normal(s) for s in [(3, 4), (5,), (2, 2, 2)]]
    ours = [nn.Parameter(mg.zeros(*g.shape, dtype=mg.float64)) for g in grads]
    theirs = [torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64)) for g in grads]
    for p, q, g in zip(ours, theirs, grads):
        p.grad, q.grad = mg.tensor(g), torch.tensor(g)
    ours.append(nn.Parameter(mg.zeros(2)))  # no grad: ignored
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, mg.Tensor) and total.dtype == mg.float64
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases():
    p = nn.Parameter(mg.zeros(2))
    assert nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0
    p.grad = mg.tensor([np.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    p.grad = mg.tensor([3.0, -4.0])
    nn.utils.clip_grad_value_(p, 2.0)
    assert p.grad.tolist() == [2.0, -2.0]


@pytest.mark.parametrize("lazy, eager, x_shape", [
    ("LazyLinear", "Linear", (2, 7)), ("LazyConv1d", "Conv1d", (2, 4, 7)), ("LazyConvTranspose2d", "ConvTranspose2d",
                                                                             (2, 4, 5, 5)),
    ("LazyBatchNorm1d", "BatchNorm1d", (3, 4)), ("LazyInstanceNorm2d", "InstanceNorm2d", (2, 4, 3, 3))])
def test_a_lazy_module_takes_a_state_dict_before_its_first_call(lazy, eager, x_shape):
    """As PyTorch's lazy load hook: load_state_dict gives the placeholders the checkpoint's shapes and values, the
    first call then turns the module into its eager class without drawing new weights (in_channels and num_features
    stay 0, as in PyTorch; LazyLinear takes in_features from the weight, checking the input's size against it)."""
    rng = np.random.default_rng(0)
    sizes = {"Linear": (7, 5), "Conv1d": (4, 5, 3), "ConvTranspose2d": (4, 5, 3), "BatchNorm1d": (4,),
             "InstanceNorm2d": (4,)}[eager]
    kwargs = {"affine": True, "track_running_stats": True} if eager == "InstanceNorm2d" else {}
    source = getattr(mg.nn, eager)(*sizes, **kwargs)
    state = {k: mg.tensor(rng.standard_normal(v.shape) ** (2 if "var" in k else 1)) if v.dtype.kind == "f" else v
             for k, v in source.state_dict().items()}                                 # (a variance is positive)
    source.load_state_dict(state)
    m = getattr(mg.nn, lazy)(*sizes[1:] if eager in ("Linear", "Conv1d", "ConvTranspose2d") else (), **kwargs)
    assert m.load_state_dict(state) is not None and type(m).__name__ == lazy
    for name, value in source.state_dict().items():
        np.testing.assert_array_equal(m.state_dict()[name].numpy(), value.numpy())   # copies: exact
    x = mg.tensor(rng.standard_normal(x_shape), dtype=mg.float32)
    if eager == "InstanceNorm2d":      # num_features stayed 0: PyTorch's own check refuses the input
        with pytest.raises(ValueError, match="num_features"):
            m(x)
        return
    # the same weights through the same code; not asserted bitwise: a vectorized loop may split its sums by the
    # arrays' alignment, which differs between the two modules' weights
    np.testing.assert_allclose(m.eval()(x).detach().numpy(), source.eval()(x).detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    assert type(m).__name__ == eager
    if eager == "Linear":
        assert m.in_features == 7
        wrong = mg.nn.LazyLinear(5)
        wrong.load_state_dict(state)
        with pytest.raises(AssertionError, match="in_features"):
            wrong(mg.ones(2, 6))


@pytest.mark.parametrize("lazy, loaded, x_shape", [
    ("LazyLinear", {"weight": (3, 2)}, (4, 2)), ("LazyLinear", {"bias": (3,)}, (4, 2)),
    ("LazyConv1d", {"bias": (3,)}, (1, 2, 5)), ("LazyBatchNorm1d", {"weight": (2,), "running_mean": (2,)}, (4, 2))])
def test_a_partly_loaded_lazy_module_keeps_what_was_loaded(lazy, loaded, x_shape):
    """load_state_dict(strict=False) filling some placeholders: the first call materializes the others and keeps
    the loaded values (before, the eager initialization overwrote them; PyTorch 2.13 crashes on this call with an
    AttributeError). A loaded tensor whose shape the input contradicts is refused."""
    rng = np.random.default_rng(1)
    args = {"LazyLinear": (3,), "LazyConv1d": (3, 2), "LazyBatchNorm1d": ()}[lazy]
    m = getattr(mg.nn, lazy)(*args)
    values = {name: rng.standard_normal(shape) + 2 for name, shape in loaded.items()}   # (a variance stays > 0)
    result = m.load_state_dict({name: mg.tensor(v, dtype=mg.float32) for name, v in values.items()}, strict=False)
    assert set(result.missing_keys) and not result.unexpected_keys
    m.eval()(mg.ones(*x_shape))                     # (eval: a training step would move the running mean)
    for name, v in values.items():
        np.testing.assert_array_equal(getattr(m, name).detach().numpy(), v.astype(np.float32))   # copies: exact
    wrong = mg.nn.LazyLinear(3)
    wrong.load_state_dict({"weight": mg.ones(3, 5)}, strict=False)
    with pytest.raises(RuntimeError, match="loaded weight has shape"):
        wrong(mg.ones(4, 2))
