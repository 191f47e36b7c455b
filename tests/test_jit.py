"""minigrad.jit: programs written for torch.jit run eagerly with PyTorch's results. A scripted fused activation, a
scripted module trained a step, a traced model, jit.save/jit.load round trips, ignored and unused methods,
is_scripting branches, fork/wait, jit.isinstance, the argument checks, and the refusal of TorchScript archives."""
import copy
import inspect
import io
import pickle
import sys
import threading
import types
import warnings
from typing import Dict, List, Optional, Tuple, Union

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

TOL = dict(rtol=1e-12, atol=1e-14)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")   # torch.jit's (and minigrad's copy of them)


def _copy_weights(ours, theirs, rng):
    """Give both modules the same random float64 values (parameters in the same order)."""
    torch = sys.modules["torch"]
    for p, q in zip(ours.parameters(), theirs.parameters()):
        values = rng.standard_normal(tuple(q.shape))
        q.data = torch.tensor(values)
        p.data = mg.tensor(values)


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2)).double()


# --------------------------------------------------------------------------- script
def _fused_activation(lib):
    @lib.jit.script
    def bias_gelu(bias, y):
        x = bias + y
        return x * 0.5 * (1.0 + lib.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
    return bias_gelu


def test_scripted_fused_activation_matches_pytorch(rng):
    torch = torch_or_skip()
    bias, y, upstream = rng.standard_normal(5), rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    results = []
    for lib in (mg, torch):
        fn = _fused_activation(lib)
        assert isinstance(fn, lib.jit.ScriptFunction)
        b, x = lib.tensor(bias, requires_grad=True), lib.tensor(y, requires_grad=True)
        out = fn(b, x)
        out.backward(lib.tensor(upstream))
        results.append([out.detach().numpy(), b.grad.numpy(), x.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL)


def _classifier_class(lib):
    class Classifier(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
            self.scale: float = 0.5

        def forward(self, x):
            return self.body(x) * self.scale
    return Classifier


Classifier = _classifier_class(mg)        # minigrad's at the top level: jit.load finds its class by name
Classifier.__qualname__ = "Classifier"


class _Classifier:
    @staticmethod
    def build(lib):
        return (Classifier if lib is mg else _classifier_class(lib))().double()


def test_scripted_module_trains_a_step_as_pytorch(rng):
    torch = torch_or_skip()
    ours, theirs = _Classifier.build(mg), _Classifier.build(torch)
    _copy_weights(ours, theirs, rng)
    x, target = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)
    results = []
    for lib, module in ((mg, ours), (torch, theirs)):
        scripted = lib.jit.script(module)
        assert isinstance(scripted, lib.jit.ScriptModule) and scripted.original_name == "Classifier"
        assert [n for n, _ in scripted.named_parameters()] == [n for n, _ in module.named_parameters()]
        opt = lib.optim.SGD(scripted.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(scripted(lib.tensor(x)), lib.tensor(target))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        scripted.eval()
        assert not scripted.training and not scripted.body.training
        results.append([np.array(losses)] + [v.numpy() for v in scripted.state_dict().values()]
                       + [p.detach().numpy() for p in module.parameters()])   # shared with the module scripted
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_script_keeps_the_module_and_marks_functions():
    module = _mlp(mg)
    weight = module[0].weight
    scripted = mg.jit.script(module)
    assert scripted is module and scripted[0].weight is weight
    assert isinstance(scripted, mg.nn.Sequential) and isinstance(scripted[0], mg.jit.ScriptModule)
    assert type(scripted).__name__ == "Sequential" and "Linear(in_features=3" in repr(scripted)
    assert mg.jit.script(scripted) is scripted and type(mg.jit.script(_mlp(mg))) is type(scripted)   # one class

    def plain(x):
        return x + 1
    assert not isinstance(plain, mg.jit.ScriptFunction)
    assert mg.jit.script(plain) is plain and isinstance(plain, mg.jit.ScriptFunction)
    assert not isinstance(module, mg.jit.ScriptFunction) and not isinstance(plain, mg.jit.ScriptModule)

    class Pair:
        pass
    assert mg.jit.script(Pair) is Pair
    with pytest.raises(TypeError):
        mg.jit.ScriptFunction()


# --------------------------------------------------------------------------- trace
def test_traced_model_gives_pytorchs_outputs(rng):
    torch = torch_or_skip()
    ours, theirs = _mlp(mg), _mlp(torch)
    _copy_weights(ours, theirs, rng)
    example, x = rng.standard_normal((2, 3)), rng.standard_normal((7, 3))
    outs = []
    for lib, module in ((mg, ours), (torch, theirs)):
        traced = lib.jit.trace(module, lib.tensor(example), check_trace=True, strict=False)
        assert isinstance(traced, lib.jit.ScriptModule)
        with lib.no_grad():
            outs.append(traced(lib.tensor(x)).numpy())
        traced_fn = lib.jit.trace(lambda t: t.tanh() * 2, example_inputs=(lib.tensor(example),))
        assert isinstance(traced_fn, lib.jit.ScriptFunction)
        outs.append(traced_fn(lib.tensor(x)).numpy())
        modules = lib.jit.trace_module(module, {"forward": lib.tensor(example)})
        with lib.no_grad():
            outs.append(modules(lib.tensor(x)).numpy())
    for a, b in zip(outs[:3], outs[3:]):
        np.testing.assert_allclose(a, b, **TOL)


def test_trace_does_not_run_the_module():
    calls = []
    module = _mlp(mg)
    module.register_forward_hook(lambda m, args, out: calls.append(1))
    assert mg.jit.trace(module, mg.ones(1, 3, dtype=mg.float64)) is module and calls == []


def test_trace_argument_errors_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        module = _mlp(lib)
        with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
            lib.jit.trace(module)
        with pytest.raises(AttributeError, match="expected a dictionary of"):
            lib.jit.trace_module(module, lib.ones(1, 3))
        with pytest.raises(AttributeError, match="expected torch.nn.Module as the first argument"):
            lib.jit.trace_module(lambda x: x, {"forward": lib.ones(1, 3)})
        with pytest.raises(TypeError, match="is a built-in class"):
            lib.jit.script(3)


# --------------------------------------------------------------------------- save / load
class _Tagger(mg.nn.Module):
    """A module of this file's own class (found again by jit.load), with tied weights, a buffer, a dict and a
    function attribute."""

    def __init__(self):
        super().__init__()
        self.embed = mg.nn.Embedding(10, 4)
        self.rnn = mg.nn.GRU(4, 4, batch_first=True)
        self.head = mg.nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight                     # tied
        self.register_buffer("steps", mg.zeros(()))
        self.settings = {"temperature": 0.5, "labels": ("a", "b"), "dtype": mg.float64, "seen": {1, 2}}
        self.activation = mg.nn.functional.gelu

    def forward(self, tokens):
        hidden, _ = self.rnn(self.embed(tokens))
        return self.head(self.activation(hidden)) / self.settings["temperature"]


@pytest.mark.parametrize("to_file", [True, False])
def test_save_load_round_trip_gives_the_same_module(tmp_path, to_file):
    model = mg.jit.script(_Tagger().double())
    model.eval()
    path = tmp_path / "tagger.pt"
    if to_file:
        model.save(path, _extra_files={"vocab.txt": "a b c"})
        extra = {"vocab.txt": ""}
        loaded = mg.jit.load(str(path), map_location="cpu", _extra_files=extra)
        assert extra == {"vocab.txt": b"a b c"}
    else:
        buffer = io.BytesIO()
        mg.jit.save(model, buffer)
        buffer.seek(0)
        loaded = mg.jit.load(buffer)
    assert type(loaded) is type(model) and isinstance(loaded, (_Tagger, mg.jit.ScriptModule))
    assert isinstance(loaded.rnn, mg.nn.GRU) and isinstance(loaded.rnn, mg.jit.ScriptModule)
    assert not loaded.training and not loaded.rnn.training
    assert loaded.head.weight is loaded.embed.weight and isinstance(loaded.head.weight, mg.nn.Parameter)
    assert loaded.settings == model.settings and loaded.activation is mg.nn.functional.gelu
    assert list(loaded.state_dict()) == list(model.state_dict())
    tokens = mg.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    with mg.no_grad():
        np.testing.assert_array_equal(loaded(tokens).numpy(), model(tokens).numpy())
    loaded.train()                                              # and it still trains
    loaded(tokens).sum().backward()
    assert loaded.embed.weight.grad is not None and loaded.rnn.weight_hh_l0.grad is not None


def test_save_load_round_trip_matches_pytorchs(tmp_path, rng):
    torch = torch_or_skip()
    ours, theirs = _Classifier.build(mg), _Classifier.build(torch)
    _copy_weights(ours, theirs, rng)
    x = rng.standard_normal((3, 4))
    outs = []
    for lib, module in ((mg, ours), (torch, theirs)):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.jit.save(lib.jit.script(module.eval()), str(path))
        loaded = lib.jit.load(str(path))
        assert isinstance(loaded, lib.jit.ScriptModule) and not loaded.training
        with lib.no_grad():
            outs.append(loaded(lib.tensor(x)).numpy())
    np.testing.assert_allclose(outs[0], outs[1], **TOL)


def test_scripted_modules_copy_and_pickle_as_scripted():
    model = mg.jit.script(_mlp(mg))
    for copied in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert type(copied) is type(model) and isinstance(copied[0], mg.jit.ScriptModule)
        assert copied[0].weight is not model[0].weight
        np.testing.assert_array_equal(copied(mg.ones(2, 3, dtype=mg.float64)).detach().numpy(),
                                      model(mg.ones(2, 3, dtype=mg.float64)).detach().numpy())


def test_save_needs_a_scripted_module_and_saveable_attributes(tmp_path):
    with pytest.raises(AttributeError, match="jit.script"):
        mg.jit.save(_mlp(mg), tmp_path / "x.pt")
    module = _mlp(mg)
    module.transform = lambda x: x
    with pytest.raises(TypeError, match="module.transform"):
        mg.jit.save(mg.jit.script(module), tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


def test_load_refuses_torchscript_and_other_files(tmp_path):
    torch = torch_or_skip()
    torch.jit.script(torch.nn.Linear(2, 2)).save(str(tmp_path / "scripted.pt"))
    for target in (str(tmp_path / "scripted.pt"), open(tmp_path / "scripted.pt", "rb")):
        with pytest.raises(RuntimeError, match=r"cannot read TorchScript.*state_dict\(\).*minigrad.load"):
            mg.jit.load(target)
    torch.save(torch.nn.Linear(2, 2).state_dict(), tmp_path / "weights.pt")
    with pytest.raises(RuntimeError, match="not written by minigrad.jit.save.*minigrad.load"):
        mg.jit.load(tmp_path / "weights.pt")
    for lib in (mg, torch):
        with pytest.raises(ValueError, match="does not exist"):
            lib.jit.load(str(tmp_path / "missing.pt"))


def _archive(module_class, state):
    """A jit.save archive written by hand (as a forger would): one module of ``module_class`` with ``state``."""
    return {"minigrad.jit": 1, "extra_files": {},
            "root": {"__jit__": "module", "index": 0, "class": module_class, "scripted": True, "state": state}}


def _tagged(kind, items=()):
    return {"__jit__": kind, "items": list(items)}


def test_load_builds_only_imported_module_classes(tmp_path):
    path = tmp_path / "forged.pt"
    mg.save(_archive("os:system", {}), path)                 # a file naming something that is not a module class
    with pytest.raises(RuntimeError, match="not an nn.Module subclass"):
        mg.jit.load(path)
    mg.save(_archive("minigrad_never_imported_module:Net", {}), path)
    with pytest.raises(ImportError, match="import minigrad_never_imported_module"):
        mg.jit.load(path)
    assert "minigrad_never_imported_module" not in sys.modules

    # a class the loading program defines (here a module made on the fly) is found; no __init__ runs
    made = types.ModuleType("jit_test_made_module")

    class Net(mg.nn.Module):
        def __init__(self):
            raise AssertionError("jit.load must not call __init__")

        def forward(self, x):
            return x * self.k
    Net.__module__, Net.__qualname__ = made.__name__, "Net"
    made.Net = Net
    sys.modules[made.__name__] = made
    try:
        state = {"k": 3.0, "training": True, "_parameters": _tagged("ordered_dict"), "_buffers": _tagged("dict"),
                 "_modules": _tagged("ordered_dict"), "_forward_pre_hooks": _tagged("list"),
                 "_forward_hooks": _tagged("list")}
        mg.save(_archive(f"{made.__name__}:Net", state), path)
        loaded = mg.jit.load(path)
        assert isinstance(loaded, Net) and loaded(mg.tensor(2.0)).item() == 6.0
    finally:
        del sys.modules[made.__name__]


# --------------------------------------------------------------------------- ignore, unused, is_scripting
def _annotated(lib):
    class Annotated(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 3)
            self.calls = 0

        @lib.jit.ignore
        def note(self, x: lib.Tensor) -> float:
            self.calls += 1                   # Python-only bookkeeping
            return float(x.detach().abs().max())

        @lib.jit.unused
        def legacy(self, x):
            raise AssertionError("never called")

        @lib.jit.export
        def twice(self, x):
            return 2 * x

        def forward(self, x):
            y = self.fc(x)
            self.note(y)
            if lib.jit.is_scripting():
                return y
            return y.tanh()
    return Annotated().double()


def test_ignored_unused_exported_methods_and_eager_branches(rng):
    torch = torch_or_skip()
    ours, theirs = _annotated(mg), _annotated(torch)
    _copy_weights(ours, theirs, rng)
    x = rng.standard_normal((2, 3))
    outs = []
    for lib, module in ((mg, ours), (torch, theirs)):
        eager = module(lib.tensor(x)).detach().numpy()
        scripted = lib.jit.script(module)
        out = scripted(lib.tensor(x)).detach().numpy()
        outs.append((eager, out, scripted.twice(lib.tensor(x)).numpy()))
        assert lib.jit.is_scripting() is False and lib.jit.is_tracing() is False
    (our_eager, our_scripted, our_double), (their_eager, their_scripted, their_double) = outs
    np.testing.assert_allclose(our_eager, their_eager, **TOL)            # the eager branch: tanh
    np.testing.assert_allclose(our_scripted, their_eager, **TOL)         # minigrad never scripts: still eager
    np.testing.assert_allclose(their_scripted, np.arctanh(their_eager), rtol=1e-9)   # (PyTorch's scripted branch)
    np.testing.assert_allclose(our_double, their_double, **TOL)
    assert ours.calls == 2


def test_decorators_return_the_function():
    def f(x):
        return x
    for decorate in (mg.jit.ignore, mg.jit.unused, mg.jit.export, mg.jit.interface, mg.jit.script_method,
                     mg.jit.script_if_tracing, mg.jit.ignore(drop=False)):
        assert decorate(f) is f
    with pytest.warns(FutureWarning, match="unused"):
        assert mg.jit.ignore(drop=True)(f) is f
    assert mg.jit.annotate(List[int], [1]) == [1] and mg.jit.Final is __import__("typing").Final


def test_old_style_script_module_subclass():
    class Counter(mg.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.step = mg.jit.Attribute(0, int)
            self.weight = mg.nn.Parameter(mg.ones(2))

        @mg.jit.script_method
        def forward(self, x):
            self.step += 1
            return x * self.weight

    counter = Counter()
    assert counter.step == 0 and isinstance(counter, mg.jit.ScriptModule)
    counter(mg.ones(2))
    assert counter.step == 1 and [n for n, _ in counter.named_parameters()] == ["weight"]
    plain = mg.nn.Module()
    plain.pair = mg.jit.Attribute(3, int)          # on a plain module it stays the pair, as in eager PyTorch
    assert plain.pair == (3, int)


# --------------------------------------------------------------------------- fork / wait
def test_fork_wait_matches_pytorch(rng):
    torch = torch_or_skip()
    xs = [rng.standard_normal((3, 3)) for _ in range(3)]
    results = []
    for lib in (mg, torch):
        def branch(x, power):
            return (x @ x.T).pow(power).sum(dim=1)
        futures = [lib.jit.fork(branch, lib.tensor(x), power=2) for x in xs]
        assert all(f.done() for f in futures)
        outs = [lib.jit.wait(f) for f in futures]
        chained = futures[0].then(lambda fut: fut.value() * 2).wait()
        results.append([o.numpy() for o in outs] + [chained.numpy()])
        with pytest.raises(ValueError, match="boom"):         # raised at fork, as in PyTorch
            lib.jit.fork(lambda: (_ for _ in ()).throw(ValueError("boom")))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL)


def test_future_set_from_another_thread():
    future = mg.jit.Future()
    seen = []
    future.add_done_callback(lambda f: seen.append(f.value()))
    assert not future.done()
    with pytest.raises(RuntimeError, match="wait"):
        future.value()
    threading.Timer(0.01, future.set_result, args=(41,)).start()
    assert mg.jit.wait(future) == 41 and seen == [41]
    with pytest.raises(RuntimeError, match="complete again"):
        future.set_result(1)
    failing = mg.jit.Future()
    failing.set_exception(KeyError("k"))
    with pytest.raises(KeyError):
        failing.wait()


# --------------------------------------------------------------------------- isinstance and switches
def test_jit_isinstance_matches_pytorch():
    torch = torch_or_skip()
    cases = [([1, 2], List[int]), ([1, "a"], List[int]), ({"a": 1.0}, Dict[str, float]), ({"a": 1}, Dict[str, str]),
             (None, Optional[int]), (3, Optional[int]), ("x", Optional[int]), ((1, "a"), Tuple[int, str]),
             ((1, 2), Tuple[int, str]), ((1,), Tuple[int, int]), (3, int), (True, int), (3.0, int),
             (3.0, Union[int, float]), ([[1], [2]], List[List[int]]), ([1], list[int]),
             ({"k": [1]}, dict[str, list[int]])]
    for obj, target in cases:
        assert mg.jit.isinstance(obj, target) == torch.jit.isinstance(obj, target), (obj, target)
    tensors = {"w": None}
    for lib in (mg, torch):
        tensors["w"] = lib.ones(2)
        assert lib.jit.isinstance(dict(tensors), Dict[str, lib.Tensor])
        assert not lib.jit.isinstance([lib.ones(1), 1], List[lib.Tensor])
        for bare, message in ((list, "list without a contained type"), (dict, "dict without contained types"),
                              (List, "List without a contained type"), (Optional, "Optional without")):
            with pytest.raises(RuntimeError, match=message):
                lib.jit.isinstance([1], bare)


def test_freeze_fusion_and_optimization_switches_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        plain = _mlp(lib)
        with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
            lib.jit.freeze(plain)
        with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
            lib.jit.optimize_for_inference(plain)
        scripted = lib.jit.script(_mlp(lib))
        with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
            lib.jit.freeze(scripted)
        scripted.eval()
        frozen = lib.jit.freeze(scripted)
        assert isinstance(frozen, lib.jit.ScriptModule)
        assert (frozen is scripted) == (lib is mg)     # minigrad: the module itself, its parameters kept
        assert isinstance(lib.jit.optimize_for_inference(lib.jit.script(_mlp(lib))), lib.jit.ScriptModule)
        with pytest.raises(ValueError, match="only supported 'STATIC' or 'DYNAMIC'"):
            lib.jit.set_fusion_strategy([("SOMETIMES", 2)])
        previous = lib.jit.set_fusion_strategy([("DYNAMIC", 3)])
        assert lib.jit.set_fusion_strategy(previous) == [("DYNAMIC", 3)]
        was = lib.jit.onednn_fusion_enabled()
        lib.jit.enable_onednn_fusion(True)
        assert lib.jit.onednn_fusion_enabled() is True
        lib.jit.enable_onednn_fusion(was)
        with pytest.warns(UserWarning, match="script mode"):
            with lib.jit.optimized_execution(False), lib.jit.fuser("fuser1"), lib.jit.strict_fusion():
                pass
        with pytest.raises(Exception, match="unrecognized fuser option"):
            with lib.jit.fuser("fuser9"):
                pass


def test_names_and_signatures_follow_pytorch():
    torch = torch_or_skip()
    missing = [name for name in torch.jit.__all__ if not hasattr(mg.jit, name)]
    assert missing == ["export_opnames"]           # (needs TorchScript's operator list)
    for name in ("script", "trace", "trace_module", "ignore", "unused", "export", "fork", "wait", "freeze",
                 "optimize_for_inference", "save", "load", "annotate", "isinstance", "set_fusion_strategy",
                 "enable_onednn_fusion", "onednn_fusion_enabled", "script_if_tracing", "interface", "is_scripting",
                 "is_tracing", "fuser", "optimized_execution", "run_frozen_optimizations", "script_method"):
        ours, theirs = inspect.signature(getattr(mg.jit, name)), inspect.signature(getattr(torch.jit, name))
        assert list(ours.parameters) == list(theirs.parameters), name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert issubclass(mg.jit.TracerWarning, Warning) and issubclass(mg.jit.Error, RuntimeError)


def test_deprecation_warnings_as_pytorch(tmp_path):
    torch = torch_or_skip()
    for lib in (mg, torch):
        def fn(x):
            return x
        with pytest.warns(DeprecationWarning, match="torch.jit.script"):
            scripted = lib.jit.script(lib.nn.Linear(2, 2))
        with pytest.warns(DeprecationWarning, match="torch.jit.trace"):
            lib.jit.trace(fn, lib.ones(1))
        with pytest.warns(DeprecationWarning, match="torch.jit.fork"):
            future = lib.jit.fork(fn, 1)
        with pytest.warns(DeprecationWarning, match="torch.jit.wait"):
            lib.jit.wait(future)
        with pytest.warns(DeprecationWarning, match="torch.jit.save"):
            lib.jit.save(scripted, str(tmp_path / "m.pt"))
        with pytest.warns(DeprecationWarning, match="torch.jit.load"):
            lib.jit.load(str(tmp_path / "m.pt"))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.jit.ignore(fn), lib.jit.unused(fn), lib.jit.is_scripting(), lib.jit.annotate(int, 1)


def test_load_refuses_to_reach_functions_outside_the_model(tmp_path):
    """A forged archive naming os.system as a named-tuple class or as a module attribute is refused: jit.load calls
    nothing the file names except named-tuple classes, and reaches only minigrad and the model's own modules."""
    from minigrad import serialization
    from minigrad.jit import _ARCHIVE_KEY, _ARCHIVE_VERSION, _TAG
    cls = mg.nn.Identity
    layer = {_TAG: "module", "index": 0, "class": f"{cls.__module__}:{cls.__qualname__}", "scripted": True}
    for state in ({"act": {_TAG: "global", "name": "os:system"}},
                  {"pair": {_TAG: "namedtuple", "class": "os:system", "items": ["echo forged"]}}):
        path = tmp_path / "forged.pt"
        serialization.save({_ARCHIVE_KEY: _ARCHIVE_VERSION, "root": dict(layer, state=state), "extra_files": {}},
                           str(path))
        with pytest.raises(RuntimeError, match="refusing"):
            mg.jit.load(str(path))
