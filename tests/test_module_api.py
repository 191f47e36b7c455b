"""``nn.Module``'s hooks and state API against PyTorch: forward hooks with ``prepend``/``with_kwargs``/``always_call``,
the full backward hooks and backward pre-hooks (what they see, what they may replace, their errors), the global
``register_module_*`` hooks, state_dict and load_state_dict hooks, extra state, ``get_parameter``/``get_buffer``/
``set_submodule``, and the containers' ``insert``/``pop``/``+``/``*``. Each scenario is written once and run in both
libraries; PyTorch's side is live or recorded."""
import re
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_result

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((2, 3))
B = RNG.standard_normal(2)
UP = RNG.standard_normal((4, 2))


def values(obj):
    """Tensors as float64 arrays (None kept) inside tuples, lists and dicts; class names without their module."""
    if isinstance(obj, (tuple, list)):
        return [values(o) for o in obj]
    if isinstance(obj, dict):
        return {k: values(v) for k, v in obj.items()}
    if hasattr(obj, "detach") and hasattr(obj, "shape"):
        return np.array(obj.detach().numpy(), dtype=np.float64, copy=True)
    if isinstance(obj, str):                      # <class 'torch.nn.modules.activation.ReLU'>: <class 'ReLU'>
        return re.sub(r"(<class ')[\w.]*\.(\w+')", r"\1\2", obj).replace("dtype=torch.", "dtype=").replace(
            "dtype=minigrad.", "dtype=")
    return obj


def same(mine, theirs, rtol=1e-12, atol=1e-13):
    """Plain data equal, arrays within a tolerance."""
    if isinstance(theirs, np.ndarray):
        assert isinstance(mine, np.ndarray), (mine, theirs)
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol)
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(mine, (list, tuple)) and len(mine) == len(theirs), (mine, theirs)
        for a, b in zip(mine, theirs):
            same(a, b, rtol, atol)
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and set(mine) == set(theirs), (mine, theirs)
        for key in theirs:
            same(mine[key], theirs[key], rtol, atol)
    else:
        assert mine == theirs, (mine, theirs)


def linear(lib):
    """A float64 Linear(3, 2) with fixed weights."""
    layer = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(W))
        layer.bias.copy_(lib.tensor(B))
    return layer


def mirror(scenario, *key):
    """Run ``scenario(lib)`` in both libraries (PyTorch's live or recorded) and compare; an exception compares by
    type and message."""
    theirs = torch_result(lambda torch: values(scenario(torch)), scenario.__name__, *key)
    if hasattr(theirs, "type") and hasattr(theirs, "message"):
        with pytest.raises(Exception) as caught:
            scenario(mg)
        assert type(caught.value) is theirs.type and values(str(caught.value)) == values(theirs.message)
        return
    same(values(scenario(mg)), theirs)


def mirror_case(cases, case, prefix):
    """``mirror`` of the scenario ``cases[case]``, named ``<prefix>_<case>`` (the name keys PyTorch's record)."""
    scenario = cases[case]
    scenario.__name__ = f"{prefix}_{case}"
    mirror(scenario)


# --------------------------------------------------------------------------- forward hooks
def forward_hook_options(lib):
    layer, log = linear(lib), []
    layer.register_forward_pre_hook(lambda m, args: log.append("pre"))
    layer.register_forward_pre_hook(lambda m, args: log.append("pre first"), prepend=True)
    layer.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] * 2,), kwargs), with_kwargs=True)
    layer.register_forward_hook(lambda m, args, out: out + 1)
    layer.register_forward_hook(lambda m, args, kwargs, out: log.append(("kwargs", sorted(kwargs))) or out * 10,
                                with_kwargs=True, prepend=True)
    out = layer(lib.tensor(X))
    return {"out": out, "log": log}


def always_call(lib):
    class Failing(lib.nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")
    module, log = Failing(), []
    module.register_forward_hook(lambda m, args, out: log.append(("always", out)), always_call=True)
    module.register_forward_hook(lambda m, args, out: log.append("not called"))
    module.register_forward_hook(lambda m, args, out: 1 / 0, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module(lib.tensor(X))
        except ValueError as error:
            log.append(str(error))
    return {"log": log, "warnings": [str(w.message) for w in caught]}


def bad_kwargs_pre_hook(lib):
    layer = linear(lib)
    layer.register_forward_pre_hook(lambda m, args, kwargs: args, with_kwargs=True)
    layer(lib.tensor(X))


@pytest.mark.parametrize("scenario", [forward_hook_options, always_call, bad_kwargs_pre_hook])
def test_forward_hooks_as_pytorch(scenario):
    mirror(scenario)


# --------------------------------------------------------------------------- backward hooks
def backward_hooks_see(lib):
    layer, seen = linear(lib), []
    layer.register_full_backward_pre_hook(lambda m, grad_output: seen.append(("pre", grad_output)))
    layer.register_full_backward_hook(lambda m, grad_input, grad_output: seen.append(("full", grad_input,
                                                                                      grad_output)))
    x = lib.tensor(X, requires_grad=True)
    layer(x).backward(lib.tensor(UP))
    return {"seen": seen, "x": x.grad, "w": layer.weight.grad}


def backward_hooks_replace(lib):
    layer = linear(lib)
    layer.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 3,))
    layer.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0] + 1,))
    x = lib.tensor(X, requires_grad=True)
    (layer(x) * 2).backward(lib.tensor(UP))
    return {"x": x.grad, "w": layer.weight.grad, "b": layer.bias.grad}


def several_inputs_and_outputs(lib):
    class Two(lib.nn.Module):
        def forward(self, x, k, y, z):
            return x * k, x * 3 + z, "label"
    module, seen = Two(), []
    module.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", go)))
    module.register_full_backward_hook(lambda m, gi, go: seen.append(("full", gi, go)))
    x, y = lib.tensor(X, requires_grad=True), lib.tensor(X)
    z = lib.tensor(X * 2, requires_grad=True)
    a, b, label = module(x, 5, y, z)
    (a * lib.tensor(X)).sum().backward()          # b's gradient never arrives
    return {"seen": seen, "x": x.grad, "z": z.grad, "label": label}


def no_input_requires_grad(lib):
    layer, seen = linear(lib), []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer(lib.tensor(X)).backward(lib.tensor(UP))
    return {"seen": seen, "warned": any("no inputs require gradients" in str(w.message) for w in caught),
            "w": layer.weight.grad}


def wrong_number_of_grads(lib):
    layer = linear(lib)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    layer(lib.tensor(X, requires_grad=True)).backward(lib.tensor(UP))


def wrong_number_of_grad_outputs(lib):
    layer = linear(lib)
    layer.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    layer(lib.tensor(X, requires_grad=True)).backward(lib.tensor(UP))


def both_kinds_of_backward_hook(lib):
    layer = linear(lib)
    layer.register_full_backward_hook(lambda m, gi, go: None)
    layer.register_backward_hook(lambda m, gi, go: None)


def removed_hooks(lib):
    layer, seen = linear(lib), []
    handle = layer.register_full_backward_hook(lambda m, gi, go: seen.append("full"))
    with layer.register_full_backward_pre_hook(lambda m, go: seen.append("pre")):
        layer(lib.tensor(X, requires_grad=True)).sum().backward()
    handle.remove()
    layer(lib.tensor(X, requires_grad=True)).sum().backward()
    return seen


def nested_modules(lib):
    """Hooks on a Sequential and on its children: the order in which each sees its gradients."""
    net, seen = lib.nn.Sequential(linear(lib), lib.nn.Tanh(), lib.nn.Linear(2, 1).double()), []
    for name, module in [("net", net), ("0", net[0]), ("1", net[1]), ("2", net[2])]:
        module.register_full_backward_pre_hook(lambda m, go, name=name: seen.append(("pre", name)))
        module.register_full_backward_hook(lambda m, gi, go, name=name: seen.append(("full", name, gi)))
    with lib.no_grad():
        net[2].weight.fill_(0.5)
        net[2].bias.fill_(0.1)
    x = lib.tensor(X, requires_grad=True)
    net(x).sum().backward()
    return {"seen": seen, "x": x.grad}


BACKWARD = [backward_hooks_see, backward_hooks_replace, several_inputs_and_outputs, no_input_requires_grad,
            wrong_number_of_grads, wrong_number_of_grad_outputs, both_kinds_of_backward_hook, removed_hooks,
            nested_modules]


@pytest.mark.parametrize("scenario", BACKWARD, ids=lambda f: f.__name__)
def test_backward_hooks_as_pytorch(scenario):
    mirror(scenario)


def test_a_backward_hook_that_scales_grad_input_gives_the_finite_difference_gradient_scaled():
    """The hook's replacement is what reaches the input: 2x the float64 finite-difference gradient of the layer."""
    layer = linear(mg)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
    x = mg.tensor(X, requires_grad=True)
    layer(x).backward(mg.tensor(UP))
    numeric = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        shifted = [X.copy(), X.copy()]
        shifted[0][i] += 1e-6
        shifted[1][i] -= 1e-6
        loss = [float(((s @ W.T + B) * UP).sum()) for s in shifted]
        numeric[i] = (loss[0] - loss[1]) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), 2 * numeric, rtol=1e-7, atol=1e-8)


# --------------------------------------------------------------------------- global hooks
def global_hooks(lib):
    module_file = lib.nn.modules.module
    seen = []
    handles = [module_file.register_module_forward_pre_hook(lambda m, args: seen.append(("pre", type(m).__name__))),
               module_file.register_module_forward_hook(lambda m, args, out: seen.append(("fwd", type(m).__name__))),
               module_file.register_module_full_backward_pre_hook(
                   lambda m, go: seen.append(("bwd pre", type(m).__name__))),
               module_file.register_module_full_backward_hook(
                   lambda m, gi, go: seen.append(("bwd", type(m).__name__)))]
    try:
        net = lib.nn.Sequential(linear(lib), lib.nn.ReLU())
        net(lib.tensor(X, requires_grad=True)).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    net(lib.tensor(X, requires_grad=True)).sum().backward()        # removed: nothing more
    return seen


def registration_hooks(lib):
    module_file = lib.nn.modules.module
    seen = []
    handles = [module_file.register_module_parameter_registration_hook(
                   lambda m, name, p: seen.append(("parameter", name))),
               module_file.register_module_buffer_registration_hook(
                   lambda m, name, b: seen.append(("buffer", name)) or (b * 0 if b is not None else b)),
               module_file.register_module_module_registration_hook(
                   lambda m, name, child: seen.append(("module", name)))]
    try:
        net = lib.nn.Sequential(lib.nn.Linear(2, 2))
        net.register_buffer("steps", lib.ones(3))
    finally:
        for handle in handles:
            handle.remove()
    return {"seen": seen, "steps": net.steps}


@pytest.mark.parametrize("scenario", [global_hooks, registration_hooks], ids=lambda f: f.__name__)
def test_global_hooks_as_pytorch(scenario):
    mirror(scenario)


# --------------------------------------------------------------------------- state_dict
def state_dict_hooks(lib):
    net, log = lib.nn.Sequential(linear(lib), lib.nn.BatchNorm1d(2).double()), []
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
    net[0].register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre 0", prefix)))
    net[1].register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop(prefix + "num_batches_tracked"))
    net.register_state_dict_post_hook(lambda m, sd, prefix, meta: log.append(("post", sorted(sd), meta)))
    keys = list(net.state_dict(keep_vars=True))
    return {"log": log, "keys": keys}


def load_hooks(lib):
    """A pre-hook renaming an older key, a post-hook forgiving a missing one (so strict loading passes)."""
    source = linear(lib).state_dict()
    old = {"old_weight": source["weight"]}
    layer = lib.nn.Linear(3, 2).double()

    def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        if prefix + "old_weight" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "old_weight")

    def forgive(module, incompatible):
        incompatible.missing_keys.remove("bias")
    layer.register_load_state_dict_pre_hook(rename)
    layer.register_load_state_dict_post_hook(forgive)
    result = layer.load_state_dict(old)
    return {"weight": layer.weight, "missing": result.missing_keys, "unexpected": result.unexpected_keys,
            "caller's": sorted(old)}


def extra_state(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
            self.count = 0

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]
    source, target = Counter(), Counter()
    source.count = 7
    state = source.state_dict()
    target.load_state_dict(state)
    net = lib.nn.Sequential(Counter())
    missing = net.load_state_dict({"0.scale": lib.ones(2, dtype=lib.float64)}, strict=False)
    return {"keys": list(state), "count": target.count, "extra": state["_extra_state"],
            "missing": missing.missing_keys}


def missing_extra_state(lib):
    class Counter(lib.nn.Module):
        def get_extra_state(self):
            return 1

        def set_extra_state(self, state):
            pass
    lib.nn.Sequential(Counter()).load_state_dict({})


def post_hook_returning(lib):
    layer = linear(lib)
    layer.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd)
    layer.state_dict()


def private_state_hooks(lib):
    """PyTorch's older private hooks, which libraries call: a state_dict hook returning a new dict (the top module's
    is what state_dict returns, a child's is dropped), load pre-hooks with and without the module."""
    net, log = lib.nn.Sequential(linear(lib)), []
    net[0]._register_state_dict_hook(lambda m, sd, prefix, meta: {"child": 1})
    net._register_state_dict_hook(lambda m, sd, prefix, meta: {k.upper(): v for k, v in sd.items()})
    returned = net.state_dict()
    layer = lib.nn.Linear(3, 2).double()

    def rename(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        log.append(("plain", prefix))

    def with_module(module, state_dict, prefix, *rest):
        log.append(("module", type(module).__name__, prefix))
    layer._register_load_state_dict_pre_hook(rename)
    layer._register_load_state_dict_pre_hook(with_module, with_module=True)
    source = linear(lib).state_dict()
    layer.load_state_dict({"w": source["weight"], "bias": source["bias"]})
    return {"returned": returned, "weight": layer.weight, "log": log}


def overridden_state_methods(lib):
    """A subclass's own _load_from_state_dict (renaming an older key before the default loading) and
    _save_to_state_dict (an extra entry), as PyTorch calls them; both called directly too; _apply."""
    class Renamed(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
            self.register_buffer("b", lib.zeros(2, dtype=lib.float64))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            if prefix + "weight" in state_dict:
                state_dict[prefix + "w"] = state_dict.pop(prefix + "weight")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "note"] = lib.tensor([7.0], dtype=lib.float64)
    net = lib.nn.Sequential(Renamed(), lib.nn.Linear(2, 1).double())
    source = {"0.weight": lib.arange(3, dtype=lib.float64), "0.b": lib.ones(2, dtype=lib.float64),
              "1.weight": lib.ones(1, 2, dtype=lib.float64), "1.bias": lib.zeros(1, dtype=lib.float64)}
    result = net.load_state_dict(source)
    out = {"caller's": sorted(source), "w": net[0].w, "b": net[0].b, "keys": list(net.state_dict()),
           "missing": result.missing_keys, "unexpected": result.unexpected_keys}
    try:
        net.load_state_dict({"0.weight": lib.arange(4, dtype=lib.float64)})
    except RuntimeError as error:
        out["refused"] = str(error).splitlines()[1]
    out["w after"] = net[0].w
    saved, missing, unexpected, errors = {}, [], [], []
    net[1]._save_to_state_dict(saved, "p.", False)
    layer = lib.nn.Linear(2, 1).double()
    layer._load_from_state_dict({"x.weight": lib.full((1, 2), 3.0, dtype=lib.float64)}, "x.", {}, True, missing,
                                unexpected, errors)
    norm = lib.nn.BatchNorm1d(2)._apply(lambda t: t * 2)
    return {**out, "saved": sorted(saved), "direct": [missing, unexpected, errors], "loaded": layer.weight,
            "applied": norm.running_var, "cast": str(layer._apply(lambda t: t.float()).weight.dtype).split(".")[-1]}


STATE = [state_dict_hooks, load_hooks, extra_state, missing_extra_state, post_hook_returning, private_state_hooks,
         overridden_state_methods]


@pytest.mark.parametrize("scenario", STATE, ids=lambda f: f.__name__)
def test_state_dict_hooks_and_extra_state_as_pytorch(scenario):
    mirror(scenario)


# --------------------------------------------------------------------------- lookups and containers
def model(lib):
    net = lib.nn.Sequential(linear(lib), lib.nn.BatchNorm1d(2))
    net.add_module("head", lib.nn.Sequential(lib.nn.Linear(2, 1)))
    return net


LOOKUPS = {
    "parameter": lambda lib: model(lib).get_parameter("0.weight"),
    "buffer": lambda lib: model(lib).get_buffer("1.running_var"),
    "parameter_missing": lambda lib: model(lib).get_parameter("0.scale"),
    "parameter_not_one": lambda lib: model(lib).get_parameter("1.running_var"),
    "buffer_not_one": lambda lib: model(lib).get_buffer("0.weight"),
    "buffer_missing_module": lambda lib: model(lib).get_buffer("7.running_var"),
    "submodule_not_a_module": lambda lib: model(lib).get_submodule("0.weight"),
    "set_submodule": lambda lib: _set(lib, "head.0", strict=True),
    "set_new_submodule": lambda lib: _set(lib, "head.extra"),
    "set_new_strict": lambda lib: _set(lib, "head.extra", strict=True),
    "set_empty": lambda lib: _set(lib, ""),
    "set_not_a_module": lambda lib: model(lib).set_submodule("head.0", 3),
    "set_over_a_parameter": lambda lib: _set(lib, "0.weight"),
}


def _set(lib, target, strict=False):
    net = model(lib)
    net.set_submodule(target, lib.nn.Tanh(), strict=strict)
    return repr(net)


@pytest.mark.parametrize("case", LOOKUPS)
def test_lookups_by_dotted_path_as_pytorch(case):
    mirror_case(LOOKUPS, case, "lookup")


def sequential_edits(lib):
    nn = lib.nn
    net = nn.Sequential(nn.ReLU(), nn.Tanh())
    net.insert(1, nn.Sigmoid())
    net.insert(-1, nn.Identity())
    popped = net.pop(0)
    doubled = net * 2
    net += nn.Sequential(nn.ReLU())
    net *= 2
    modules = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    params = nn.ParameterDict({"a": nn.Parameter(lib.ones(1)), "b": nn.Parameter(lib.zeros(2))})
    last = params.popitem()[0]
    params.setdefault("c", nn.Parameter(lib.ones(3)))
    params |= {"d": nn.Parameter(lib.ones(4))}
    return {"net": repr(net), "popped": repr(popped), "doubled": repr(doubled), "sum": repr(net + (3 * net)[:1]),
            "module_pop": repr(modules.pop(-1)), "modules": repr(modules), "last": last,
            "reversed": list(reversed(params)), "fromkeys": list(params.fromkeys(["x", "y"]).keys())}


CONTAINER_ERRORS = {
    "add": lambda lib: lib.nn.Sequential() + lib.nn.ReLU(),
    "mul_zero": lambda lib: lib.nn.Sequential() * 0,
    "mul_float": lambda lib: lib.nn.Sequential() * 1.5,
    "insert_far": lambda lib: lib.nn.Sequential(lib.nn.ReLU()).insert(3, lib.nn.ReLU()),
    "popitem_empty": lambda lib: lib.nn.ParameterDict().popitem(),
}


def test_container_edits_as_pytorch():
    mirror(sequential_edits)


@pytest.mark.parametrize("case", CONTAINER_ERRORS)
def test_container_errors_as_pytorch(case):
    mirror_case(CONTAINER_ERRORS, case, "container")


def test_the_rest_of_the_module_surface():
    """to_empty keeps the Parameter objects and shapes, type casts every parameter and buffer, share_memory and
    compile return as PyTorch's, and the class flags are PyTorch's."""
    net = model(mg)
    weight = net[0].weight
    assert net.to_empty(device="cpu") is net and net[0].weight is weight and weight.shape == (2, 3)
    assert net.type(mg.float32) is net and net[0].weight.dtype == mg.float32
    assert net[1].num_batches_tracked.dtype == mg.float32                   # type() casts integer buffers too
    assert net.share_memory() is net and net.compile() is None
    assert mg.nn.Module.call_super_init is False and mg.nn.Module.dump_patches is False
    assert mg.nn.Module.T_destination is not None


# --------------------------------------------------------------------------- the recurrent layers' helpers
def _lstm(lib):
    return lib.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2).double()


RNN_HELPERS = {
    "sizes": lambda lib: [_lstm(lib).get_expected_hidden_size(lib.zeros(5, 7, 3), None),
                          _lstm(lib).get_expected_cell_size(lib.zeros(5, 7, 3), None),
                          lib.nn.GRU(3, 4, batch_first=True).get_expected_hidden_size(lib.zeros(5, 7, 3), None),
                          lib.nn.RNN(3, 4).get_expected_hidden_size(lib.zeros(9, 3), lib.tensor([4, 3, 2]))],
    "checked": lambda lib: _lstm(lib).check_forward_args(lib.zeros(5, 7, 3, dtype=lib.float64),
                                                          (lib.zeros(4, 7, 2), lib.zeros(4, 7, 4)), None) or "passed",
    "bad_cell": lambda lib: _lstm(lib).check_forward_args(lib.zeros(5, 7, 3, dtype=lib.float64),
                                                           (lib.zeros(4, 7, 2), lib.zeros(4, 7, 2)), None),
    "bad_hidden": lambda lib: lib.nn.GRU(3, 4).double().check_forward_args(lib.zeros(5, 7, 3, dtype=lib.float64),
                                                                           lib.zeros(1, 6, 4), None),
    "bad_dims": lambda lib: lib.nn.GRU(3, 4).double().check_input(lib.zeros(5, 3, dtype=lib.float64), None),
    "bad_features": lambda lib: lib.nn.GRU(3, 4).double().check_input(lib.zeros(5, 2, 2, dtype=lib.float64), None),
    "permuted": lambda lib: _lstm(lib).permute_hidden((lib.tensor(X.reshape(1, 4, 3)),) * 2, lib.tensor([2, 0, 3, 1])),
}


@pytest.mark.parametrize("case", RNN_HELPERS)
def test_recurrent_layer_helpers_as_pytorch(case):
    """The helpers subclasses of nn.LSTM/GRU/RNN call (check_forward_args, get_expected_*_size, permute_hidden)."""
    mirror_case(RNN_HELPERS, case, "rnn")


def _packed(lib):
    return lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(X[:2, :, None]), lib.tensor([3, 2]), batch_first=True)


SMALLER = {
    "packed_casts": lambda lib: [(str(getattr(_packed(lib), cast)().data.dtype).rpartition(".")[2],
                                  getattr(_packed(lib), cast)().data) for cast in
                                 ("double", "float", "half", "long", "int", "short", "char", "byte")],
    "packed_cpu": lambda lib: [_packed(lib).cpu() is not None, _packed(lib).to(lib.float64).data],
    "packed_pin_memory": lambda lib: _packed(lib).pin_memory(),
    "generator_clone_state": lambda lib: _clone(lib),
    "merge_masks": lambda lib: _merged(lib),
}


def _clone(lib):
    generator = lib.Generator().manual_seed(5)
    lib.rand(3, generator=generator)
    clone = generator.clone_state()
    return [lib.rand(4, generator=generator).tolist() == lib.rand(4, generator=clone).tolist(), clone.initial_seed()]


PER_HEAD = RNG.standard_normal((6, 5, 5))


def _merged(lib):
    attention = lib.nn.MultiheadAttention(4, 2, batch_first=True)
    query = lib.zeros(3, 5, 4)
    padding = lib.tensor(np.arange(15).reshape(3, 5) % 4 == 0)
    square = lib.tensor(np.triu(np.ones((5, 5)), 1) * -1e9)
    per_head = lib.tensor(PER_HEAD)
    return [attention.merge_masks(None, None, query), attention.merge_masks(None, padding, query),
            attention.merge_masks(square, None, query), attention.merge_masks(square, padding.double(), query),
            attention.merge_masks(per_head, None, query)]


@pytest.mark.parametrize("case", SMALLER)
def test_smaller_members_as_pytorch(case):
    """PackedSequence's casts, Generator.clone_state, MultiheadAttention.merge_masks."""
    mirror_case(SMALLER, case, "member")
