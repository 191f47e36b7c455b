"""``minigrad.jit``: PyTorch's ``torch.jit`` names, as stand-ins that run the program eagerly.

minigrad has no TorchScript compiler. TorchScript does not change what a program computes, only how it is run,
so everything here lets the Python code run as written and give the same results:

* ``script`` and ``trace`` return what they are given. A module keeps its identity, parameters, state_dict,
  train/eval switch and hooks; its class becomes a subclass of its own class and of ``ScriptModule`` (so
  ``isinstance(m, jit.ScriptModule)`` holds and ``m.save(path)`` works, as for PyTorch's scripted modules).
  A function gets a mark that makes ``isinstance(f, jit.ScriptFunction)`` hold.
* ``trace`` does not run the function on the example inputs (PyTorch runs it to record the operations: state
  such as BatchNorm's running statistics changes during PyTorch's trace, not here), and the result is not
  frozen to the control flow of the example (here ``if`` and loops still depend on the data).
* ``ignore``, ``unused``, ``export``, ``interface``, ``script_method``, ``script_if_tracing``: decorators that
  return the function itself. ``is_scripting()`` and ``is_tracing()`` are False, so a program's eager branch
  runs. ``annotate(type, value)`` is ``value``; ``Final`` is ``typing.Final``; ``Attribute(value, type)`` is
  PyTorch's named tuple (a ``ScriptModule`` stores its ``value``).
* ``fork(fn, ...)`` calls ``fn`` at once and returns a finished ``Future``; ``wait(future)`` is its result.
* ``freeze`` and ``optimize_for_inference`` check their argument as PyTorch does and return the module
  (its parameters stay parameters: PyTorch's frozen module has none, its weights being inlined as constants).
* ``save``/``load`` write and read minigrad's own archive (``minigrad.save``'s zip format): the module's
  class names, attributes and tensors. PyTorch cannot read these files, and ``load`` cannot read PyTorch's
  TorchScript archives (there is no TorchScript interpreter here): it says so, and how to move the weights.
"""
import builtins
import contextlib
import os
import sys
import threading
import typing
import warnings
import zipfile
from collections import OrderedDict

import numpy as np

from . import serialization
from .device import device as _device
from .nn.module import Module
from .tensor import Tensor

__all__ = ["Attribute", "CompilationUnit", "Error", "Final", "Future", "ScriptFunction", "ScriptModule",
           "ScriptWarning", "TracerWarning", "annotate", "enable_onednn_fusion", "export", "fork", "freeze",
           "fuser", "ignore", "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution", "save", "script",
           "script_if_tracing", "script_method", "set_fusion_strategy", "strict_fusion", "trace", "trace_module",
           "unused", "wait"]

Final = typing.Final


class Error(RuntimeError):
    """``torch.jit.Error``: the exception TorchScript raises (nothing here raises it; programs may catch it)."""


class TracerWarning(Warning):
    """``torch.jit.TracerWarning``: PyTorch's tracer warns with it; programs filter it (nothing warns with it here)."""


class ScriptWarning(Warning):
    """``torch.jit.ScriptWarning`` (for warning filters)."""


class Attribute(typing.NamedTuple):
    """``torch.jit.Attribute(value, type)``: an attribute's value with its TorchScript type. A ``ScriptModule``
    stores only the value (as PyTorch's does); on other modules the pair stays as it is (as in eager PyTorch)."""
    value: typing.Any
    type: typing.Any


def _deprecated(name, instead="torch.compile or torch.export"):
    """PyTorch 2.13 deprecates most of torch.jit: the same DeprecationWarning (shown for code run as __main__)."""
    warnings.warn(f"`torch.jit.{name}` is deprecated in PyTorch (which suggests {instead}); minigrad runs the "
                  "program eagerly", DeprecationWarning, stacklevel=3)


# =========================================================================== scripted modules and functions
class ScriptModule(Module):
    """What ``script`` and ``trace`` make of a module (and PyTorch's base class for old-style scripted modules,
    ``class M(torch.jit.ScriptModule)`` with ``@torch.jit.script_method``).

    A scripted module is the module itself with its class swapped for a subclass of both its own class and this
    one, made once per class (``_scripted_class``): everything the module did it still does, and it also has
    ``save``, ``original_name`` and ``isinstance(m, ScriptModule)``."""

    def __setattr__(self, name, value):
        if builtins.isinstance(value, Attribute):   # PyTorch's ScriptModule keeps the value of an Attribute
            value = value.value
        super().__setattr__(name, value)

    @property
    def original_name(self):
        """The name of the module's own class (``Linear``), as PyTorch's scripted modules report it."""
        return _original_class(type(self)).__name__

    def save(self, f, _extra_files=None):
        """``jit.save(self, f)``: minigrad's archive, not a TorchScript one (see ``minigrad.jit.save``)."""
        _save(self, f, _extra_files)

    def __reduce_ex__(self, protocol):
        # pickle and copy.deepcopy: rebuilt from the module's own class, which pickle can find by name (the
        # scripted subclass has the same name, so pickle would not find it)
        return _rebuild_scripted, (_original_class(type(self)),), self.__dict__


def _rebuild_scripted(cls):
    scripted = _scripted_class(cls)
    return scripted.__new__(scripted)


_scripted_classes = {}            # a module class -> its scripted subclass (made once)
_scripted_classes_lock = threading.Lock()


def _scripted_class(cls):
    """The subclass of ``cls`` and ``ScriptModule`` that scripted ``cls`` modules get: same name, same module."""
    if issubclass(cls, ScriptModule):
        return cls
    with _scripted_classes_lock:
        scripted = _scripted_classes.get(cls)
        if scripted is None:
            try:
                scripted = type(cls.__name__, (cls, ScriptModule), {
                    "__module__": cls.__module__, "__qualname__": cls.__qualname__, "_minigrad_original_class": cls,
                    "__doc__": cls.__doc__})
            except TypeError:         # a class that cannot be combined with ScriptModule (its metaclass): as it is
                scripted = cls
            _scripted_classes[cls] = scripted
    return scripted


def _original_class(cls):
    """The module's own class: ``cls`` before ``_scripted_class`` (itself for a class that was never swapped)."""
    return cls.__dict__.get("_minigrad_original_class", cls)


def _script_module(module):
    """Make ``module`` and every module inside it scripted (in place) and return it."""
    for m in module.modules():
        scripted = _scripted_class(type(m))
        if type(m) is not scripted:
            try:
                m.__class__ = scripted
            except TypeError:     # a class whose instances' layout differs (__slots__): left as it is
                pass
    return module


class _ScriptFunctionCheck(type):
    def __instancecheck__(cls, obj):
        return getattr(obj, "_minigrad_scripted", False) is True


class ScriptFunction(metaclass=_ScriptFunctionCheck):
    """``isinstance(f, jit.ScriptFunction)`` holds for a function given to ``script`` or ``trace`` (which return
    the function itself, marked). Not to be instantiated."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("minigrad.jit.ScriptFunction cannot be created directly: decorate a function with "
                        "minigrad.jit.script")


def _mark_function(fn):
    try:
        fn._minigrad_scripted = True
    except (AttributeError, TypeError):   # a builtin or bound method: no attributes of its own; returned as is
        pass
    return fn


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``torch.jit.script``: ``obj`` itself, to be run eagerly (minigrad compiles nothing).

    A module becomes a ``ScriptModule`` in place (its submodules too) and is returned; a function is returned
    marked as a ``ScriptFunction``; a class (a TorchScript class) is returned unchanged. Works as a decorator.
    ``optimize`` and ``example_inputs`` are accepted and ignored, as PyTorch ignores ``optimize``."""
    _deprecated("script")
    if optimize is not None:
        warnings.warn("script(optimize=...) is deprecated and does nothing (PyTorch points to "
                      "`with torch.jit.optimized_execution(...)`)", FutureWarning, stacklevel=2)
    if builtins.isinstance(obj, Module):
        return _script_module(obj)
    if builtins.isinstance(obj, type):
        if obj.__module__ == "builtins":
            raise TypeError(f"{obj} is a built-in class")   # PyTorch's error
        return obj
    if not callable(obj):
        raise TypeError(f"{type(obj)} is a built-in class" if type(obj).__module__ == "builtins" else
                        f"minigrad.jit.script expects a function, a class or a module, got {type(obj).__name__}")
    return _mark_function(obj)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """``torch.jit.trace``: ``func`` itself (a module made a ``ScriptModule`` in place, a function marked), to be
    run eagerly. The example inputs are required, as in PyTorch, but not run: minigrad records nothing, and its
    result keeps the Python control flow (PyTorch's traced result replays the operations of the example)."""
    _deprecated("trace")
    if example_inputs is None and not builtins.isinstance(example_kwarg_inputs, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict (minigrad.jit.trace needs example_inputs, a "
                           "tensor or tuple of tensors, or example_kwarg_inputs, a dict of them)")
    if builtins.isinstance(func, Module):
        return _script_module(func)
    if not callable(func):
        raise TypeError(f"minigrad.jit.trace expects a function or a module, got {type(func).__name__}")
    return _mark_function(func)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """``torch.jit.trace_module``: ``mod`` made a ``ScriptModule`` in place; ``inputs`` must map method names
    to example inputs, as in PyTorch (they are not run)."""
    _deprecated("trace_module")
    if not builtins.isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not builtins.isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name in inputs:
        if not callable(getattr(mod, name, None)):
            raise AttributeError(f"'{type(mod).__name__}' object has no method '{name}' to trace")
    return _script_module(mod)


def script_method(fn):
    """``torch.jit.script_method`` (old-style ``ScriptModule`` methods): ``fn`` itself."""
    return fn


def script_if_tracing(fn):
    """``torch.jit.script_if_tracing``: ``fn`` itself (nothing is ever traced here)."""
    return fn


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` and ``@torch.jit.ignore(drop=True)``: the function itself (it runs in Python)."""
    if callable(drop):                # used bare: @ignore
        return drop
    if drop:
        warnings.warn("ignore(drop=True) is deprecated in PyTorch: use torch.jit.unused (both return the "
                      "function here)", FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """``@torch.jit.unused``: the function itself (it still runs when called)."""
    return fn


def export(fn):
    """``@torch.jit.export``: the method itself."""
    return fn


def interface(obj):
    """``@torch.jit.interface``: the class itself."""
    return obj


def is_scripting():
    """False: code never runs under TorchScript in minigrad (``if not torch.jit.is_scripting():`` branches run)."""
    return False


def is_tracing():
    """False: nothing is ever traced in minigrad."""
    return False


def annotate(the_type, the_value):
    """``torch.jit.annotate(type, value)``: ``value`` (the type is for TorchScript's compiler)."""
    return the_value


# --------------------------------------------------------------------------- jit.isinstance
def isinstance(obj, target_type):  # noqa: A001 - PyTorch's name
    """``torch.jit.isinstance``: whether ``obj`` is a ``target_type`` given with TorchScript's container types
    (``List[int]``, ``Dict[str, Tensor]``, ``Tuple[int, str]``, ``Optional[Tensor]``), elements included. A bare
    container type (``list``, ``Dict``) raises RuntimeError as in PyTorch: it needs its element types."""
    _check_parameters(target_type)
    return _matches(obj, target_type)


_CONTAINERS = {list: "list", dict: "dict", tuple: "tuple", typing.List: "List", typing.Dict: "Dict",
               typing.Tuple: "Tuple", typing.Optional: "Optional"}


def _check_parameters(target_type):
    name = _CONTAINERS.get(target_type)
    if name is not None:
        example = {"dict": "dict[int, int]", "Dict": "Dict[int, int]"}.get(name, f"{name}[int]")
        what = "contained types. Please add contained type" if name.lower() == "dict" else \
            "a contained type. Please add a contained type"
        raise RuntimeError(f"Attempted to use {name} without {what}, e.g. {example}")
    for arg in typing.get_args(target_type):
        if arg is not Ellipsis:
            _check_parameters(arg)


def _matches(obj, target):
    if target is typing.Any:
        return True
    if target is None or target is type(None):
        return obj is None
    origin, args = typing.get_origin(target), typing.get_args(target)
    if origin is None:
        if target is float and builtins.isinstance(obj, int) and not builtins.isinstance(obj, bool):
            return False
        return builtins.isinstance(obj, target)
    if origin is typing.Union or type(target).__name__ == "UnionType":
        return any(_matches(obj, arg) for arg in args)
    if origin is list:
        if not builtins.isinstance(obj, list):
            return False
        _warn_if_empty(obj)
        return all(_matches(item, args[0]) for item in obj)
    if origin is dict:
        if not builtins.isinstance(obj, dict):
            return False
        _warn_if_empty(obj)
        return all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(item, args[0]) for item in obj)
        return len(obj) == len(args) and all(_matches(item, arg) for item, arg in zip(obj, args))
    return builtins.isinstance(obj, origin)


def _warn_if_empty(container):
    if not container:
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance in eager mode: an "
                      "empty container matches any element type (List[int] as well as List[str]).", stacklevel=4)


# --------------------------------------------------------------------------- fork / wait
from .futures import Future  # noqa: E402  (torch.jit.Future is torch.futures.Future)


def fork(func, *args, **kwargs):
    """``torch.jit.fork``: call ``func(*args, **kwargs)`` now (as PyTorch does outside TorchScript) and return a
    finished ``Future`` of its result. An exception ``func`` raises is raised here, as in PyTorch."""
    _deprecated("fork", "torch.compile")
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future):
    """``torch.jit.wait(future)``: ``future.wait()``."""
    _deprecated("wait", "torch.compile")
    return future.wait()


# --------------------------------------------------------------------------- freezing and fusion switches
def _require_script_module(mod, who):
    if not builtins.isinstance(mod, ScriptModule):
        raise RuntimeError(f"{who} expects a ScriptModule as input. Please use torch.jit.script or torch.jit.trace "
                           "to script your 'nn.Module'.")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """``torch.jit.freeze``: ``mod`` itself, after PyTorch's checks (a ScriptModule, in eval mode). PyTorch's
    frozen module turns parameters into constants; minigrad's keeps them (``parameters()`` still lists them)."""
    _deprecated("freeze", "torch.compile")
    _require_script_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() on "
                           "your module before freezing.")
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    """``torch.jit.run_frozen_optimizations``: nothing to do."""


def optimize_for_inference(mod, other_methods=None):
    """``torch.jit.optimize_for_inference``: ``mod`` (a ScriptModule) switched to eval mode, as PyTorch's freezing
    leaves it; nothing is compiled."""
    _deprecated("optimize_for_inference", "torch.compile")
    _require_script_module(mod, "optimize_for_inference")
    return mod.eval()


_onednn_fusion = [False]
_fusion_strategy = [[("STATIC", 2), ("DYNAMIC", 10)]]


def enable_onednn_fusion(enabled):
    """``torch.jit.enable_onednn_fusion``: remembered for ``onednn_fusion_enabled``; nothing is fused."""
    _onednn_fusion[0] = bool(enabled)


def onednn_fusion_enabled():
    return _onednn_fusion[0]


def set_fusion_strategy(strategy):
    """``torch.jit.set_fusion_strategy``: checked as PyTorch checks it, remembered, and the previous strategy
    returned; nothing is fused."""
    _deprecated("set_fusion_strategy", "torch.compile")
    for item in strategy:
        kind = item[0] if builtins.isinstance(item, (tuple, list)) and len(item) == 2 else None
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind if kind else item}")
    previous, _fusion_strategy[0] = _fusion_strategy[0], [tuple(item) for item in strategy]
    return previous


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """``with torch.jit.optimized_execution(flag):`` accepted; changes nothing."""
    yield


@contextlib.contextmanager
def fuser(name):
    """``with torch.jit.fuser("fuser1"):`` checked as PyTorch checks the name; changes nothing."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")   # noqa: TRY002 - PyTorch's exception type
    yield


class strict_fusion:  # noqa: N801 - PyTorch's name
    """``with torch.jit.strict_fusion():`` accepted; checks nothing (nothing is fused). It warns, as PyTorch's
    does outside TorchScript."""

    def __init__(self):
        warnings.warn("strict_fusion only works in script mode (TorchScript): it checks nothing here", UserWarning,
                      stacklevel=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CompilationUnit:
    """``torch.jit.CompilationUnit``: minigrad cannot compile TorchScript source."""

    def __init__(self, lang=None, _frames_up=0):
        if lang is not None:
            raise RuntimeError("minigrad.jit.CompilationUnit cannot compile TorchScript source: minigrad has no "
                               "TorchScript compiler (write the functions in Python)")


# =========================================================================== save / load
_ARCHIVE_KEY = "minigrad.jit"       # the top-level key that marks a jit.save archive
_ARCHIVE_VERSION = 1
_TAG = "__jit__"                    # every non-plain value is stored as a dict {_TAG: kind, ...}


def save(m, f, _extra_files=None):
    """``torch.jit.save``: write the scripted (or traced) module ``m`` to ``f`` (a path or binary file object)
    so that ``minigrad.jit.load(f)`` gives back an equivalent module.

    The file is minigrad's own archive (``minigrad.save``'s zip of JSON and ``.npy`` files), NOT a TorchScript
    archive: PyTorch cannot read it, and it holds no code. It records, for ``m`` and each module inside it, the
    name of its class and its attributes: tensors and parameters (tied ones stay tied), numbers, strings, lists,
    tuples, dicts and sets of these, dtypes, devices, and functions or classes by their importable names.
    ``load`` therefore needs the module's classes to be importable (defined or imported by the loading program),
    where PyTorch's archive carries its own TorchScript code. An attribute of another kind (a lambda, an open
    file) raises TypeError naming it, before ``f`` is written. A scripted function is saved by its name.
    ``_extra_files`` (name -> str or bytes) is stored too and read back by ``load``'s ``_extra_files``."""
    _deprecated("save", "torch.export")
    _save(m, f, _extra_files)


def _save(m, f, _extra_files):
    if builtins.isinstance(m, Module) and not builtins.isinstance(m, ScriptModule):
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save': minigrad.jit.save expects a "
                             "scripted or traced module (minigrad.jit.script(model)), or save model.state_dict() "
                             "with minigrad.save")
    if not builtins.isinstance(m, Module) and not builtins.isinstance(m, ScriptFunction):
        raise TypeError(f"minigrad.jit.save expects a ScriptModule or ScriptFunction, got {type(m).__name__}")
    extra = {}
    for name, contents in (_extra_files or {}).items():
        data = contents.encode() if builtins.isinstance(contents, str) else bytes(contents)
        extra[str(name)] = np.frombuffer(data, dtype=np.uint8).copy()
    root = _Encoder().encode(m, "module")
    serialization.save({_ARCHIVE_KEY: _ARCHIVE_VERSION, "root": root, "extra_files": extra}, f)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """``torch.jit.load``: the module (or function) ``minigrad.jit.save`` wrote to ``f``.

    Nothing in the file is run: it is read by ``minigrad.load`` (JSON and ``.npy``), and the classes and
    functions it names are looked up in modules the program has already imported (a module not imported yet
    raises an error asking to import it; a module entry must name an ``nn.Module`` subclass). Each module is
    rebuilt without calling its ``__init__``: its attributes are set as they were saved. ``map_location`` may
    be None or the CPU. ``_extra_files`` (a dict of names) gets the saved contents of those names, as bytes.

    A TorchScript archive written by PyTorch (``torch.jit.save``) cannot be read: minigrad has no TorchScript
    interpreter. The error says what to do instead: in PyTorch, ``torch.save(model.state_dict(), path)``; in
    minigrad, build the model in Python and ``model.load_state_dict(minigrad.load(path))``."""
    _deprecated("load", "torch.export")
    if builtins.isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
    if _is_torchscript(f):
        raise RuntimeError(
            "minigrad.jit.load cannot read TorchScript archives (files written by PyTorch's torch.jit.save or "
            "ScriptModule.save): minigrad has no TorchScript interpreter. Save the weights instead: in PyTorch, "
            "torch.save(model.state_dict(), 'weights.pt'); in minigrad, build the same model in Python and "
            "model.load_state_dict(minigrad.load('weights.pt')).")
    archive = serialization.load(f, map_location=map_location)
    if not (builtins.isinstance(archive, dict) and archive.get(_ARCHIVE_KEY) == _ARCHIVE_VERSION):
        what = type(archive).__name__
        raise RuntimeError(f"minigrad.jit.load: this file was not written by minigrad.jit.save (it holds an object "
                           f"of type {what}); "
                           "read it with minigrad.load (a state_dict goes into model.load_state_dict)")
    if _extra_files is not None:
        stored = archive.get("extra_files", {})
        for name in list(_extra_files):
            if name in stored:
                _extra_files[name] = np.asarray(stored[name]).tobytes()
    return _Decoder(archive["root"]).decode(archive["root"], "module")


def _is_torchscript(f):
    """Whether ``f`` (a path or a seekable binary file object) is a zip archive laid out as TorchScript's."""
    try:
        if builtins.isinstance(f, (str, os.PathLike)):
            if not zipfile.is_zipfile(f):
                return False
            with zipfile.ZipFile(f) as archive:
                names = archive.namelist()
        else:
            start = f.tell()
            try:
                if not zipfile.is_zipfile(f):
                    return False
                f.seek(start)
                names = zipfile.ZipFile(f).namelist()
            finally:
                f.seek(start)
    except (OSError, zipfile.BadZipFile, ValueError, AttributeError):
        return False        # minigrad.load reports what is wrong with the file
    return any(name.endswith("/constants.pkl") or "/code/__torch__" in name for name in names)


_PUBLIC_NAMESPACES = ("minigrad.nn.functional", "minigrad", "minigrad.special", "minigrad.linalg", "minigrad.fft")


def _global_name(obj):
    """``module:qualname`` of a function or class that can be found again by that name, else None. A function
    wrapped by a decorator that copied the inner function's names (``mg.nn.functional.gelu``) is looked for in
    minigrad's public namespaces, then in every imported module."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:        # a lambda or a function defined inside a function
        return None
    try:
        if _lookup(module, qualname) is obj:
            return f"{module}:{qualname}"
    except (ImportError, AttributeError):
        pass
    if "." in qualname:
        return None
    for candidate in list(_PUBLIC_NAMESPACES) + sorted(sys.modules):
        namespace = getattr(sys.modules.get(candidate), "__dict__", {})   # (no module __getattr__ is run)
        if namespace.get(qualname) is obj:
            return f"{candidate}:{qualname}"
    return None


def _lookup(module, qualname):
    """The object ``qualname`` names in ``module``, which must already be imported (nothing is imported here)."""
    if module not in sys.modules:
        raise ImportError(f"minigrad.jit.load: the file refers to {qualname} in the module {module}, which is not "
                          f"imported: import {module} (or define {qualname}) before loading")
    obj = sys.modules[module]
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


class _Encoder:
    """Turns a module tree into the nested dicts, lists and tensors ``minigrad.save`` stores. Modules are
    numbered, so a module used twice (shared) is stored once and refers back."""

    def __init__(self):
        self.modules = {}            # id(module) -> number
        self.tensors = {}            # id(tensor) -> number
        self.kept = []               # the tensors numbered (kept alive, so that their ids stay theirs)

    def encode(self, value, path):
        if builtins.isinstance(value, Module):
            return self.module(value, path)
        if builtins.isinstance(value, Tensor):               # numbered: one tensor used twice (tied) stays one
            if id(value) in self.tensors:
                return {_TAG: "tensor_ref", "index": self.tensors[id(value)]}
            self.tensors[id(value)] = len(self.kept)
            self.kept.append(value)
            return {_TAG: "tensor", "index": self.tensors[id(value)], "value": value}
        if value is None or builtins.isinstance(value, (bool, int, float, complex, str, np.ndarray, np.generic)):
            return value                                     # minigrad.save stores these itself
        if builtins.isinstance(value, np.dtype):
            return {_TAG: "dtype", "name": value.name}
        if builtins.isinstance(value, _device):
            return {_TAG: "device", "name": str(value)}
        if builtins.isinstance(value, (set, frozenset)):
            return {_TAG: type(value).__name__, "items": [self.encode(v, f"{path} item") for v in value]}
        if builtins.isinstance(value, tuple) and hasattr(value, "_fields"):          # a named tuple
            return {_TAG: "namedtuple", "class": self.global_name(type(value), path),
                    "items": [self.encode(v, f"{path}.{k}") for k, v in zip(value._fields, value)]}
        if builtins.isinstance(value, (list, tuple)):
            return {_TAG: type(value).__name__, "items": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(value)]}
        if builtins.isinstance(value, dict):
            return {_TAG: "ordered_dict" if builtins.isinstance(value, OrderedDict) else "dict",
                    "items": [[self.encode(k, f"{path} key"), self.encode(v, f"{path}[{k!r}]")]
                              for k, v in value.items()]}
        if callable(value) and _global_name(value) is not None:   # a function or class, by its name
            return {_TAG: "global", "name": _global_name(value)}
        raise TypeError(f"minigrad.jit.save cannot save {path} (a {type(value).__name__}): only tensors, numbers, "
                        "strings, containers of these, dtypes, devices, modules and module-level functions or "
                        "classes can be saved. Save model.state_dict() with minigrad.save instead, or make the "
                        "attribute one of these")

    def global_name(self, obj, path):
        name = _global_name(obj)
        if name is None:
            raise TypeError(f"minigrad.jit.save cannot save {path}: {obj!r} cannot be found again by its name "
                            "(define it at the top level of a module)")
        return name

    def module(self, module, path):
        if id(module) in self.modules:
            return {_TAG: "module_ref", "index": self.modules[id(module)]}
        index = self.modules[id(module)] = len(self.modules)
        cls = _original_class(type(module))
        state = {name: self.encode(value, f"{path}.{name}") for name, value in vars(module).items()}
        return {_TAG: "module", "index": index, "class": self.global_name(cls, f"{path} (class {cls.__name__})"),
                "scripted": builtins.isinstance(module, ScriptModule), "state": state}


class _Decoder:
    """``_Encoder`` backwards: no code from the file runs; names are looked up in imported modules only."""

    def __init__(self, root):
        self.modules = {}
        self.tensors = {}
        self.model_modules = set()     # the modules defining the saved modules' classes (``referenced``)
        stack = [root]
        while stack:
            value = stack.pop()
            if builtins.isinstance(value, dict):
                if value.get(_TAG) == "module" and builtins.isinstance(value.get("class"), str):
                    module, _, qualname = value["class"].partition(":")
                    try:
                        cls = _lookup(module, qualname)
                    except (ImportError, AttributeError):
                        cls = None                      # (decode reports it)
                    if builtins.isinstance(cls, type) and issubclass(cls, Module):
                        self.model_modules.add(module)
                stack.extend(value.values())
            elif builtins.isinstance(value, list):
                stack.extend(value)

    def decode(self, value, path):
        if not builtins.isinstance(value, dict):
            return value
        kind = value.get(_TAG)
        if kind == "module":
            return self.module(value, path)
        if kind == "module_ref":
            return self.modules[value["index"]]
        if kind == "tensor":
            tensor = self.tensors[value["index"]] = value["value"]
            return tensor
        if kind == "tensor_ref":
            return self.tensors[value["index"]]
        if kind == "dtype":
            return np.dtype(value["name"])
        if kind == "device":
            return _device(value["name"])
        if kind in ("set", "frozenset", "list", "tuple"):
            items = [self.decode(v, path) for v in value["items"]]
            return {"set": set, "frozenset": frozenset, "list": list, "tuple": tuple}[kind](items)
        if kind == "namedtuple":
            cls = self.referenced(value["class"], path)
            if not (builtins.isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise RuntimeError(f"minigrad.jit.load: {path} names {value['class']} as a named tuple class, which "
                                   "it is not: refusing to call it")
            return cls(*[self.decode(v, path) for v in value["items"]])
        if kind in ("dict", "ordered_dict"):
            pairs = [(self.decode(k, path), self.decode(v, path)) for k, v in value["items"]]
            return OrderedDict(pairs) if kind == "ordered_dict" else dict(pairs)
        if kind == "global":
            return self.referenced(value["name"], path)
        raise RuntimeError(f"minigrad.jit.load: unknown entry {kind!r} at {path}: the file is damaged or was written "
                           "by a newer minigrad")

    def referenced(self, name, path):
        """A function or class the file names as a value: looked up only in minigrad, in ``math``, and in the
        modules that define the saved modules' classes (a file naming ``os:system`` as a module's attribute is
        refused, so no function outside the model's own code can be reached through a loaded module)."""
        module = name.partition(":")[0]
        if not (module == "math" or module == "minigrad" or module.startswith("minigrad.")
                or module in self.model_modules):
            raise RuntimeError(f"minigrad.jit.load: {path} refers to {name}, outside minigrad and the modules that "
                               "define the saved model's classes: refusing to load it")
        return self.named(name, path)

    def named(self, name, path):
        module, _, qualname = name.partition(":")
        try:
            return _lookup(module, qualname)
        except AttributeError:
            raise ImportError(f"minigrad.jit.load: {path} refers to {qualname} in {module}, which has no such "
                              "name (was it renamed since the file was saved?)") from None

    def module(self, value, path):
        cls = self.named(value["class"], path)
        if not (builtins.isinstance(cls, type) and issubclass(cls, Module)):
            raise RuntimeError(f"minigrad.jit.load: {path} names {value['class']}, which is not an nn.Module "
                               "subclass: refusing to build it")
        if value.get("scripted"):
            cls = _scripted_class(cls)
        module = cls.__new__(cls)
        self.modules[value["index"]] = module
        state = {name: self.decode(v, f"{path}.{name}") for name, v in value["state"].items()}
        module.__dict__.update(state)          # no __init__, no __setattr__: the attributes as saved
        return module
