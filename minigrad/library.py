"""``minigrad.library``: PyTorch's ``torch.library``, for defining custom operators.

    @minigrad.library.custom_op("mylib::my_sin", mutates_args=())
    def my_sin(x: Tensor) -> Tensor:
        return minigrad.from_numpy(np.sin(x.numpy()))

    my_sin.register_autograd(backward, setup_context=setup_context)
    my_sin(x)                         # or minigrad.ops.mylib.my_sin(x)

What it does, as PyTorch's CPU build does:

* ``custom_op`` infers the operator's schema from the function's annotations (``infer_schema``), checks the
  arguments of each call against it, runs the kernel with recording off, and refuses an output that is (or
  shares memory with) an input. Without a registered autograd formula, an output computed from inputs that
  require grad requires grad too, and backward through it raises PyTorch's error.
* ``register_autograd(backward, setup_context=...)``: ``setup_context(ctx, inputs, output)`` then
  ``backward(ctx, *grads)`` returning one gradient per input, on minigrad's ``Function`` machinery
  (``ctx.save_for_backward``, ``ctx.saved_tensors``, ``ctx.needs_input_grad`` as in PyTorch, which has one
  more entry than there are inputs in ``setup_context``, for a hidden last argument, and one per input in
  ``backward``).
* ``Library(ns, "DEF" | "IMPL" | "FRAGMENT")`` with ``define(schema)`` and ``impl(name, fn, key)`` for the keys
  CPU, CompositeExplicitAutograd, CompositeImplicitAutograd, Autograd / AutogradCPU and Meta; module-level
  ``define``, ``impl``, ``register_kernel``, ``register_fake``, ``register_autograd``.
* Operators are reachable as ``minigrad.library.ops.<ns>.<name>`` and, when ``<ns>`` is not one of minigrad's
  own op modules (``minigrad/ops/`` holds minigrad's implementations), as ``minigrad.ops.<ns>.<name>``.

Stand-ins (minigrad has no dispatcher, fake tensors, tracing or compiler): a fake (meta) implementation is
stored and run only by ``opcheck`` (on the real inputs, its output's shapes and dtypes compared with the real
output's); ``register_torch_dispatch``, ``register_vmap`` and ``register_autocast`` store their function,
which minigrad never calls; ``get_ctx().new_dynamic_size()`` has no symbolic sizes to make. ``opcheck`` runs
PyTorch's four test names with minigrad's own checks: mutation of inputs not declared in ``mutates_args``,
an autograd registration when inputs require grad, the fake implementation, and the registered backward
against finite differences (float64 copies of the inputs, a random upstream gradient).
"""
import contextlib
import enum
import importlib.util
import inspect
import re
import sys
import threading
import typing
import warnings

import numpy as np

from .autograd import grad_mode
from .autograd.function import Function, NoDerivative
from .dtypes import is_differentiable
from .tensor import Tensor

__all__ = ["CustomOpDef", "Library", "OpOverload", "custom_op", "define", "fallthrough_kernel", "get_ctx",
           "get_kernel", "impl", "impl_abstract", "infer_schema", "opcheck", "register_autocast",
           "register_autograd", "register_fake", "register_kernel", "register_torch_dispatch", "register_vmap"]


class EffectType(enum.Enum):
    """``torch.library.EffectType`` (side-effect annotations; recorded, minigrad orders nothing)."""
    ORDERED = "Ordered"


# =========================================================================== schemas
def _type_string(annotation, fname, pname):
    """The schema type of a Python annotation (PyTorch's spelling)."""
    import minigrad
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Tensor:
        return "Tensor"
    if annotation is int:
        return "SymInt"
    simple = {float: "float", bool: "bool", str: "str", np.dtype: "ScalarType", minigrad.device: "Device"}
    if annotation in simple:
        return simple[annotation]
    if origin is typing.Union or (sys.version_info >= (3, 10) and type(annotation).__name__ == "UnionType"):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return _type_string(rest[0], fname, pname) + "?"
        if set(rest) <= {int, float, bool}:
            return "Scalar" + ("?" if len(rest) < len(args) else "")
    import collections.abc
    if origin in (list, collections.abc.Sequence, typing.Sequence) and len(args) == 1:
        return _type_string(args[0], fname, pname) + "[]"
    raise ValueError(f"infer_schema(func): Parameter {pname} has unsupported type {annotation}. "
                     f"Got func with signature {fname})")


def _default_string(value):
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value) if not isinstance(value, float) else repr(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, np.dtype) or type(value).__name__ == "dtype":
        return str(value)
    return repr(value)


def _return_string(annotation, signature):
    if annotation is None or annotation is type(None):
        return "()"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is tuple:
        return "(" + ", ".join(_type_string(a, signature, "return") for a in args) + ")"
    return _type_string(annotation, signature, "return")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema string of ``prototype_function`` from its type annotations (``torch.library.infer_schema``)."""
    sig = inspect.signature(prototype_function)
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:  # noqa: BLE001 - annotations that do not resolve: read them as written
        hints = {}
    parts, kw_started = [], False
    names = list(sig.parameters)
    if mutates_args != "unknown":
        if isinstance(mutates_args, str):
            raise ValueError("mutates_args must be a sequence of argument names or the string 'unknown'")
        for name in mutates_args:
            if name not in names:
                raise ValueError(f"{name} in mutates_args is not in the function's parameters {names}")
    for index, (name, param) in enumerate(sig.parameters.items()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ValueError(f"infer_schema(func): We don't support varargs or varkwargs. Got func with "
                             f"signature {sig})")
        if param.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {name} must have a type annotation. Got func with "
                             f"signature {sig})")
        type_str = _type_string(hints.get(name, param.annotation), sig, name)
        mutated = mutates_args == "unknown" or name in mutates_args
        if mutated and type_str.startswith("Tensor"):
            type_str = "Tensor(a%d!)" % index + type_str[len("Tensor"):]
        elif mutated and mutates_args != "unknown":
            raise ValueError(f"infer_schema(func): Parameter {name} is in mutable_args but only Tensors or "
                             f"collections of Tensors can be mutated")
        if param.kind == param.KEYWORD_ONLY and not kw_started:
            parts.append("*")
            kw_started = True
        text = f"{type_str} {name}"
        if param.default is not inspect.Parameter.empty:
            text += "=" + _default_string(param.default)
        parts.append(text)
    if sig.return_annotation is inspect.Signature.empty:
        raise ValueError(f"infer_schema(func): No return type annotation was provided. Please add one. Got func "
                         f"with signature {sig})")
    ret = _return_string(hints.get("return", sig.return_annotation), sig)
    schema = f"({', '.join(parts)}) -> {ret}"
    return schema if op_name is None else op_name + schema


class _Arg:
    __slots__ = ("type", "name", "default", "kwonly", "mutable")

    def __init__(self, type_, name, default, kwonly, mutable):
        self.type, self.name, self.default, self.kwonly, self.mutable = type_, name, default, kwonly, mutable


_NO_DEFAULT = inspect.Parameter.empty


def _split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_default(text):
    import minigrad
    text = text.strip()
    literals = {"None": None, "True": True, "False": False}
    if text in literals:
        return literals[text]
    if text.startswith(("\"", "'")):
        return text[1:-1]
    if text.startswith("["):
        return [_parse_default(p) for p in _split_top(text[1:-1])]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    if hasattr(minigrad, text) and isinstance(getattr(minigrad, text), np.dtype):
        return getattr(minigrad, text)
    return text


def _parse_schema(schema):
    """``name(args) -> returns`` (name optional) -> (name, [_Arg], returns text)."""
    match = re.fullmatch(r"\s*([\w.]*)\s*\((.*)\)\s*->\s*(.+?)\s*", schema, re.S)
    if match is None:
        raise RuntimeError(f"Could not parse the schema {schema!r}: expected 'name(Type arg, ...) -> Type'")
    name, body, returns = match.groups()
    args, kwonly = [], False
    for part in _split_top(body):
        if part == "*":
            kwonly = True
            continue
        decl, equals, default = part.partition("=")
        type_, _, arg_name = decl.strip().rpartition(" ")
        if not type_ or not arg_name:
            raise RuntimeError(f"Could not parse the argument {part!r} of the schema {schema!r}")
        args.append(_Arg(type_.strip(), arg_name, _parse_default(default) if equals else _NO_DEFAULT, kwonly,
                         "!" in type_))
    return name, args, returns


# =========================================================================== operators and their registry
_registry = {}          # "ns::name" -> _Operator
_libraries = {}         # namespace -> the Library that DEF'd it
_below_autograd = threading.local()

_FALLBACK_WARNING = ("{qualname}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
                     "backprop through it. This may lead to silently incorrect behavior. This behavior is deprecated "
                     "and will be removed in a future version of PyTorch. If your operator is differentiable, please "
                     "ensure you have registered an autograd kernel to the correct Autograd key (e.g. "
                     "DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If your operator is not "
                     "differentiable, or to squash this warning and use the previous behavior, please register "
                     "torch::CppFunction::makeFallthrough() to DispatchKey::Autograd.")

_KEYS = {"cpu": "CPU", "CPU": "CPU", "CompositeExplicitAutograd": "CompositeExplicitAutograd", "default":
         "CompositeExplicitAutograd", "CompositeImplicitAutograd": "CompositeImplicitAutograd",
         "Autograd": "Autograd", "AutogradCPU": "Autograd", "Meta": "Meta", "meta": "Meta"}


def _key(dispatch_key):
    if dispatch_key == "":
        return "CompositeImplicitAutograd"
    if dispatch_key in _KEYS:
        return _KEYS[dispatch_key]
    if isinstance(dispatch_key, str) and ("CUDA" in dispatch_key or dispatch_key in ("cuda", "mps", "xpu")):
        return None     # a kernel for hardware minigrad does not have: kept nowhere (never called on the CPU)
    raise ValueError(f"minigrad.library: unsupported dispatch key {dispatch_key!r} (minigrad knows CPU, "
                     "CompositeExplicitAutograd, CompositeImplicitAutograd, Autograd, AutogradCPU and Meta)")


def _tensors_in(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Tensor)]
    return []


class _Operator:
    """One registered operator: its schema and its kernels (shared by CustomOpDef, OpOverloadPacket, OpOverload)."""

    def __init__(self, qualname, schema_text, custom=False):
        self.qualname = qualname
        self.namespace, self.name = qualname.split("::")
        _, self.args, self.returns = _parse_schema(schema_text)
        self.schema_text = f"{qualname}{schema_text[schema_text.index('('):]}"
        params = [inspect.Parameter(a.name, inspect.Parameter.KEYWORD_ONLY if a.kwonly else
                                    inspect.Parameter.POSITIONAL_OR_KEYWORD, default=a.default) for a in self.args]
        self.signature = inspect.Signature(params)
        self.kernels = {}           # dispatch key -> function
        self.backward = self.setup_context = None
        self.custom = custom        # made by custom_op: PyTorch's custom-op rules (no aliasing, autograd error)
        self.torch_dispatch, self.vmap, self.autocast = {}, None, None
        self.disabled = set()

    # ---------------------------------------------------------------- arguments
    def bind(self, args, kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            missing = re.search(r"missing a required argument: '(\w+)'", str(error))
            if missing:
                raise RuntimeError(f"{self.qualname}() is missing value for argument '{missing.group(1)}'. "
                                   f"Declaration: {self.schema_text}") from None
            raise RuntimeError(f"{self.qualname}() {error}. Declaration: {self.schema_text}") from None
        bound.apply_defaults()
        values = bound.arguments
        for position, arg in enumerate(self.args):
            self._check_type(arg, values[arg.name], position)
        return values

    def _check_type(self, arg, value, position):
        base = arg.type.split("(")[0] + arg.type[arg.type.index(")") + 1:] if "(" in arg.type else arg.type
        optional = base.endswith("?")
        base = base.rstrip("?")
        if value is None and optional:
            return
        expected = {"Tensor": (Tensor,), "SymInt": (int, np.integer), "int": (int, np.integer),
                    "float": (float, int, np.floating, np.integer), "bool": (bool, np.bool_),
                    "str": (str,)}.get(base)
        if expected is None:
            return
        bad = not isinstance(value, expected) or (base in ("SymInt", "int") and isinstance(value, bool))
        if bad:
            name = {"SymInt": "int"}.get(base, base)
            raise RuntimeError(f"{self.qualname}() Expected a value of type '{name}' for argument '{arg.name}' but "
                               f"instead found type '{type(value).__name__}'.\nPosition: {position}\n"
                               f"Value: {value!r}\nDeclaration: {self.schema_text}")

    # ---------------------------------------------------------------- dispatch
    def backend_kernel(self):
        for key in ("CPU", "CompositeExplicitAutograd"):
            if key in self.kernels and key not in self.disabled:
                return self.kernels[key]
        raise NotImplementedError(
            f"Could not run '{self.qualname}' with arguments from the 'CPU' backend. This could be because the "
            "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
            f"(if using custom build). '{self.qualname}' has no kernel for the CPU (minigrad runs on the CPU only)")

    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        if "CompositeImplicitAutograd" in self.kernels:
            return self.kernels["CompositeImplicitAutograd"](*args, **kwargs)
        below = getattr(_below_autograd, "active", False)
        if "Autograd" in self.kernels and not below:
            _below_autograd.active = True
            try:
                return self.kernels["Autograd"](*args, **kwargs)
            finally:
                _below_autograd.active = False
        tensors = [t for v in values.values() for t in _tensors_in(v)]
        recording = grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors) and not below
        if recording and self.backward is not None:
            return _run_with_autograd(self, values)
        kernel = self.backend_kernel()
        if not self.custom:         # a Library kernel: PyTorch's fallback runs it, recording what it does
            out = kernel(*args, **kwargs)
            if recording:
                _warn_at_backward(self, out)
            return out
        with grad_mode.no_grad():
            out = kernel(*_detached(self.positional(values)), **_detached(self.keyword_only(values)))
        self.check_aliasing(values, out)
        if recording:
            message = (f"Trying to backward through {self.namespace}.{self.name}.default but no autograd formula "
                       "was registered. Please use register_autograd to add one.")
            out = _map_outputs(out, lambda t: NoDerivative.apply(RuntimeError, message, t, *tensors)
                               if is_differentiable(t.dtype) else t)
        return out

    def positional(self, values):
        return tuple(values[a.name] for a in self.args if not a.kwonly)

    def keyword_only(self, values):
        return {a.name: values[a.name] for a in self.args if a.kwonly}

    def check_aliasing(self, values, out):
        inputs = [t for v in values.values() for t in _tensors_in(v)]
        outputs = _tensors_in(out) if isinstance(out, (tuple, list)) else _tensors_in(out)
        for i, o in enumerate(outputs):
            others = inputs + outputs[:i]
            if any(o is t or np.shares_memory(o._data, t._data) for t in others):
                raise RuntimeError(
                    f"{self.name} (with implementation in {self.kernels.get('CPU')!r}): The output of this custom "
                    "operator (1) must not also be an input to this custom operator and (2) may not alias any inputs "
                    "to this custom operator or other returns. The most common way to trigger this error is if we "
                    "have y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
                    "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
                    "return y.")


def _detached(value):
    """Tensors as the kernel sees them (PyTorch runs it below autograd): detached, sharing memory (so that an
    in-place write into a mutated argument reaches the caller's tensor)."""
    if isinstance(value, Tensor):
        return value.detach() if value.requires_grad else value
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


def _map_outputs(out, fn):
    if isinstance(out, Tensor):
        return fn(out)
    if isinstance(out, tuple):
        return type(out)(*[_map_outputs(o, fn) for o in out]) if hasattr(out, "_fields") else \
            tuple(_map_outputs(o, fn) for o in out)
    if isinstance(out, list):
        return [_map_outputs(o, fn) for o in out]
    return out


def _warn_at_backward(op, out):
    def hook(grad):
        warnings.warn(_FALLBACK_WARNING.format(qualname=op.qualname), UserWarning, stacklevel=2)
    for t in _tensors_in(out) if isinstance(out, (list, tuple)) else _tensors_in(out):
        if t.requires_grad:
            t.register_hook(hook)


# --------------------------------------------------------------------------- register_autograd's Function
class _Layout:
    """How the op's inputs were flattened into the Function's arguments, and how its outputs were packed."""

    def __init__(self, op, values):
        self.op, self.values = op, values
        self.slots = []          # per positional input: None (not a tensor), an int (flat index) or a list of ints
        self.flat = []
        for a in op.args:
            v = values[a.name]
            if a.kwonly:
                continue
            if isinstance(v, Tensor):
                self.slots.append(len(self.flat))
                self.flat.append(v)
            elif isinstance(v, (list, tuple)) and v and all(isinstance(t, Tensor) for t in v):
                self.slots.append(list(range(len(self.flat), len(self.flat) + len(v))))
                self.flat.extend(v)
            else:
                self.slots.append(None)
        self.outputs = None      # the kernel's result (a Tensor, or a tuple possibly holding lists of tensors)


def _leaves(out):
    """The kernel's outputs as one flat tuple (a list of tensors inside the result contributes each tensor), which the
    Function returns as its several outputs (``autograd/custom_function.py``)."""
    flat = []
    for o in out:
        flat.extend(o if isinstance(o, list) else [o])
    return tuple(flat)


def _nested(flat, out):
    """``flat`` (one value per leaf of ``out``) in ``out``'s structure again: lists where ``out`` has lists, a named
    tuple of ``out``'s type."""
    values, at = [], 0
    for o in out:
        if isinstance(o, list):
            values.append(list(flat[at:at + len(o)]))
            at += len(o)
        else:
            values.append(flat[at])
            at += 1
    return type(out)(*values) if hasattr(out, "_fields") else type(out)(values)


def _call_setup(op, ctx, inputs, output, values):
    setup = op.setup_context
    if setup is None:
        return
    params = inspect.signature(setup).parameters
    if "keyword_only_inputs" in params:
        setup(ctx=ctx, inputs=inputs, output=output, keyword_only_inputs=op.keyword_only(values))
    else:
        setup(ctx=ctx, inputs=inputs, output=output)


def _make_function(op):
    def forward(ctx, layout, *flat):
        op_ = layout.op
        values = layout.values
        inputs = op_.positional(values)
        out = op_.backend_kernel()(*_detached(inputs), **_detached(op_.keyword_only(values)))
        op_.check_aliasing(values, out)
        needs = []
        for slot in layout.slots:
            if slot is None:
                needs.append(False)
            elif isinstance(slot, int):
                needs.append(bool(ctx.needs_input_grad[slot + 1]))
            else:
                needs.append(any(ctx.needs_input_grad[i + 1] for i in slot))
        ctx.needs_input_grad = tuple(needs) + (False,)     # PyTorch's has a last entry for a hidden argument
        ctx.layout = layout
        _call_setup(op_, ctx, inputs, out, values)
        layout.outputs = out
        return out if isinstance(out, Tensor) else _leaves(out)

    def backward(ctx, *grads):
        layout = ctx.layout
        op_ = layout.op
        if not isinstance(layout.outputs, Tensor):
            grads = _nested(grads, layout.outputs)
        ctx.needs_input_grad = ctx.needs_input_grad[:len(layout.slots)]   # as PyTorch's: one per input here
        result = op_.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(layout.slots)
        if len(result) != expected:
            raise RuntimeError(f"function {name}Backward returned an incorrect number of gradients (expected "
                               f"{expected + 1}, got {len(result) + 1})")
        flat = [None] * len(layout.flat)
        for slot, g in zip(layout.slots, result):
            if slot is None or g is None:
                continue
            if isinstance(slot, int):
                flat[slot] = g
            else:
                for i, gi in zip(slot, g):
                    flat[i] = gi
        return (None, *flat)

    name = f"GeneratedBackwardFor_{op.namespace}_{op.name}_default"
    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                    "written_by_user": True})


def _run_with_autograd(op, values):
    layout = _Layout(op, values)
    fn = op.__dict__.get("function")
    if fn is None:
        fn = op.function = _make_function(op)
    out = fn.apply(layout, *layout.flat)
    return out if isinstance(out, Tensor) else _nested(out, layout.outputs)


# =========================================================================== the public objects
class OpOverload:
    """``torch.ops.<ns>.<name>.default``: calls the operator."""

    def __init__(self, op):
        self._op = op

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def name(self):
        return self._op.qualname

    @property
    def _schema(self):
        return self._op.schema_text

    def __repr__(self):
        return f"{self._op.namespace}.{self._op.name}.default"


class OpOverloadPacket(OpOverload):
    """``torch.ops.<ns>.<name>``: calls the operator; ``.default`` is its (only) overload."""

    @property
    def default(self):
        return OpOverload(self._op)

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return f"{self._op.namespace}.{self._op.name}"


class _OpNamespace:
    """``torch.ops.<ns>``: its operators as attributes."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        op = _registry.get(f"{self._name}::{name}")
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'")
        return OpOverloadPacket(op)

    def __repr__(self):
        return f"minigrad.ops.{self._name}"


class _Ops:
    """``torch.ops``: one namespace object per operator namespace."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _OpNamespace(name)


ops = _Ops()


def _expose(namespace):
    """Make ``minigrad.ops.<namespace>`` the namespace object, unless minigrad's own op package has (or may import)
    something of that name: then the operators stay reachable through ``minigrad.library.ops`` only."""
    from . import ops as package
    if hasattr(package, namespace) and not isinstance(getattr(package, namespace), _OpNamespace):
        return
    if importlib.util.find_spec(f"{package.__name__}.{namespace}") is not None:
        return
    setattr(package, namespace, _OpNamespace(namespace))


def _new_operator(qualname, schema, custom=False):
    if "::" not in qualname:
        raise ValueError(f"expected a qualified name 'namespace::name', got {qualname!r}")
    if qualname in _registry:
        raise RuntimeError(f"Tried to register an operator ({qualname}{schema[schema.index('('):]}) with the same "
                           "name and overload name multiple times. Each overload's schema should only be registered "
                           "with a single call to def().")
    op = _Operator(qualname, schema, custom)
    _registry[qualname] = op
    _expose(op.namespace)
    return op


def _lookup(op):
    """The _Operator of ``op``: a qualified name, a CustomOpDef, an OpOverload or OpOverloadPacket."""
    if isinstance(op, (CustomOpDef, OpOverload)):
        return op._op
    if isinstance(op, str):
        ns, _, name = op.partition("::")
        found = _registry.get(op)
        if found is None:
            raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")
        return found
    raise TypeError(f"expected a qualified operator name, a CustomOpDef or an OpOverload, got {type(op).__name__}")


class CustomOpDef:
    """What ``custom_op`` returns: the operator, callable, with the ``register_*`` methods."""

    def __init__(self, op, init_fn):
        self._op = op
        self._init_fn = init_fn
        self._namespace, self._name = op.namespace, op.name
        self.__name__ = op.name
        self.__doc__ = init_fn.__doc__

    @property
    def _qualname(self):
        return self._op.qualname

    @property
    def _schema(self):
        return self._op.schema_text

    @property
    def _opoverload(self):
        """The operator's ``torch.ops.<ns>.<name>.default`` (PyTorch's attribute, used by its custom-op tests)."""
        return OpOverload(self._op)

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self):
        return f"<CustomOpDef({self._op.qualname})>"

    def register_kernel(self, device_types, fn=None):
        """A kernel for ``device_types`` ("cpu", or a list); others (cuda, ...) are kept and never run."""
        def register(fn):
            types = [device_types] if isinstance(device_types, str) or device_types is None else device_types
            for device_type in types:
                if device_type is None or device_type == "cpu":
                    self._op.kernels["CPU"] = fn
            return fn
        return register if fn is None else register(fn)

    def register_fake(self, fn, /):
        """The fake (meta) implementation: stored, run by ``opcheck`` (minigrad has no fake tensors)."""
        self._op.kernels["Meta"] = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """``setup_context(ctx, inputs, output)`` after the forward, ``backward(ctx, *grads)`` returning one
        gradient (or None) per input."""
        if not callable(backward):
            raise TypeError(f"Expected backward to be callable, got {type(backward).__name__}")
        self._op.backward, self._op.setup_context = backward, setup_context
        self._op.__dict__.pop("function", None)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        """Stored: minigrad has no ``__torch_dispatch__`` subclasses or modes, so it is never called."""
        def register(fn):
            self._op.torch_dispatch[torch_dispatch_class] = fn
            return fn
        return register if fn is None else register(fn)

    def register_vmap(self, func=None, /):
        """Stored: minigrad's vmap runs the op on each slice, never this rule."""
        def register(func):
            self._op.vmap = func
            return func
        return register if func is None else register(func)

    def register_autocast(self, device_type, cast_inputs):
        """Recorded: minigrad's autocast computes in the tensors' own dtypes."""
        self._op.autocast = (device_type, cast_inputs)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Turn the kernel registered for ``device_type`` off (the original function runs) or on, in the block."""
        key = "CPU"
        had = self._op.kernels.get(key)
        if not enabled and had is not None and had is not self._init_fn:
            self._op.kernels[key] = self._init_fn
        try:
            yield
        finally:
            if had is not None:
                self._op.kernels[key] = had


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` a custom operator ``name`` ("namespace::op_name"); used as ``@custom_op(name, mutates_args=())``."""
    def make(fn):
        ns, op_name = name.split("::") if name.count("::") == 1 else (_ for _ in ()).throw(
            ValueError(f"not enough values to unpack (expected 2, got 1): custom_op expects 'namespace::name', "
                       f"got {name!r}"))
        text = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        op = _new_operator(f"{ns}::{op_name}", text, custom=True)
        types = [device_types] if isinstance(device_types, str) or device_types is None else device_types
        if any(t is None or t == "cpu" for t in types):
            op.kernels["CPU"] = fn
        return CustomOpDef(op, fn)
    return make if fn is None else make(fn)


def define(qualname, schema, *, lib=None, tags=()):
    """Define the operator ``qualname`` with ``schema`` ("(Tensor x) -> Tensor")."""
    _new_operator(qualname, schema if schema.lstrip().startswith("(") else schema[schema.index("("):])


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """``op``'s kernel for ``device_types``; works as a decorator."""
    def register(func):
        operator = _lookup(op)
        types = [device_types] if isinstance(device_types, str) or device_types is None else device_types
        for t in types:
            key = _key(t)
            if key is not None:
                operator.kernels[key] = func
        return func
    return register if func is None else register(func)


def impl(qualname, types, func=None, *, lib=None):
    """``torch.library.impl``: as ``register_kernel`` (types "cpu", "CPU", "CompositeExplicitAutograd", ...)."""
    if isinstance(qualname, Library):      # the older impl(lib, name, dispatch_key) form
        return qualname._impl_decorator(types, func or "")
    return register_kernel(qualname, types, func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """The fake implementation of ``op`` (stored; run by ``opcheck``)."""
    def register(func):
        _lookup(op).kernels["Meta"] = func
        return func
    return register if func is None else register(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """``op``'s backward formula (see ``CustomOpDef.register_autograd``)."""
    operator = _lookup(op)
    if not callable(backward):
        raise TypeError(f"Expected backward to be callable, got {type(backward).__name__}")
    operator.backward, operator.setup_context = backward, setup_context
    operator.__dict__.pop("function", None)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """Stored: minigrad has no ``__torch_dispatch__``."""
    def register(func):
        _lookup(op).torch_dispatch[torch_dispatch_class] = func
        return func
    return register if func is None else register(func)


def register_vmap(op, func=None, /, *, lib=None):
    """Stored: minigrad's vmap never calls it."""
    def register(func):
        _lookup(op).vmap = func
        return func
    return register if func is None else register(func)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Recorded: minigrad's autocast computes in the tensors' own dtypes."""
    _lookup(op).autocast = (device_type, cast_inputs)


def get_kernel(op, dispatch_key):
    """The function registered for ``dispatch_key`` (a callable)."""
    operator = _lookup(op)
    key = _key(dispatch_key)
    if key not in operator.kernels:
        raise RuntimeError(f"no kernel registered for {operator.qualname} at {dispatch_key}")
    return operator.kernels[key]


def fallthrough_kernel():
    """A marker kernel (``Library.impl(name, fallthrough_kernel, key)``): the key is skipped."""
    raise NotImplementedError("fallthrough_kernel should never be called")


class Library:
    """``Library(ns, kind)``: ``kind`` "DEF" (defines ``ns``; once), "FRAGMENT" (more definitions) or "IMPL"
    (kernels for ``dispatch_key``)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in ("prim",) and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if kind == "DEF":
            if ns in _libraries:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of "
                    "your definitions in a single TORCH_LIBRARY block.  If you were trying to specify "
                    "implementations, consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really "
                    "intended to define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
            _libraries[ns] = self
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs = set()
        self._impls = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define an operator of this namespace from ``schema`` ("name(Tensor x) -> Tensor"); returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed in an IMPL library: use DEF or FRAGMENT")
        name = schema[:schema.index("(")].strip()
        _new_operator(f"{self.ns}::{name}", schema[schema.index("("):])
        self._op_defs.add(f"{self.ns}::{name}")
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Register ``fn`` as ``op_name``'s kernel for ``dispatch_key`` (this library's key if not given)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        dispatch_key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        name = op_name.name() if isinstance(op_name, OpOverload) else op_name
        qualname = name if "::" in name else f"{self.ns}::{name.split('.')[0]}"
        operator = _lookup(qualname)
        if fn is fallthrough_kernel:
            return
        key = _key(dispatch_key)
        if key is not None:
            operator.kernels[key] = fn
            self._impls.append((operator, key))

    def _impl_decorator(self, name, dispatch_key):
        def register(fn):
            self.impl(name, fn, dispatch_key)
            return fn
        return register

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        """Accepted: minigrad has no dispatcher fallbacks."""

    def _destroy(self):
        for operator, key in self._impls:
            operator.kernels.pop(key, None)
        for qualname in self._op_defs:
            _registry.pop(qualname, None)
        if _libraries.get(self.ns) is self:
            del _libraries[self.ns]


# =========================================================================== get_ctx and opcheck
class FakeImplCtx:
    """What ``get_ctx()`` returns inside a fake implementation."""

    def __init__(self):
        self.dynamic = False

    def new_dynamic_size(self, *, min=0, max=None):
        """A data-dependent size: minigrad has no symbolic sizes; under ``opcheck`` this returns ``min`` and the
        shapes of the fake output are then not compared."""
        self.dynamic = True
        return min

    create_unbacked_symint = new_dynamic_size


_ctx = threading.local()


def get_ctx():
    """The context of the fake implementation being run (by ``opcheck``)."""
    ctx = getattr(_ctx, "ctx", None)
    return ctx if ctx is not None else FakeImplCtx()


class OpCheckError(Exception):
    """What ``opcheck`` raises when one of its tests fails."""


def _clone_args(value):
    if isinstance(value, Tensor):
        c = value.detach().clone()
        c.requires_grad_(value.requires_grad)
        return c
    if isinstance(value, (list, tuple)):
        return type(value)(_clone_args(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone_args(v) for k, v in value.items()}
    return value


def _test_schema(op, args, kwargs, rtol, atol):
    a, k = _clone_args(args), _clone_args(kwargs)
    before = {n: [t._data.copy() for t in _tensors_in(v)] for n, v in op.bind(a, k).items()}
    op(*a, **k)
    for arg in op.args:
        value = op.bind(a, k)[arg.name]
        for old, t in zip(before[arg.name], _tensors_in(value)):
            if not arg.mutable and not np.array_equal(old, t._data, equal_nan=True):
                raise RuntimeError(f"{op.qualname}: argument {arg.name} is not defined as mutable but was mutated")


def _test_autograd_registration(op, args, kwargs, rtol, atol):
    values = op.bind(args, kwargs)
    if not any(t.requires_grad for v in values.values() for t in _tensors_in(v)):
        return
    has = op.backward is not None or {"Autograd", "CompositeImplicitAutograd"} & set(op.kernels)
    if not has:
        raise AssertionError(f"{op.qualname}: at least one input requires grad but the operator has no autograd "
                             "registration: register_autograd (or an Autograd kernel) is needed")


def _require_fake(op):
    fake = op.kernels.get("Meta")
    if fake is None:
        raise RuntimeError(f"There was no fake impl registered for <CustomOpDef({op.qualname})>. This is necessary "
                           "for torch.compile/export/fx tracing to work. Please use `"
                           f"{op.name}.register_fake` to add an fake impl.")
    return fake


def _test_faketensor(op, args, kwargs, rtol, atol):
    fake = _require_fake(op)
    with grad_mode.no_grad():
        real = op(*_clone_args(args), **_clone_args(kwargs))
        _ctx.ctx = ctx = FakeImplCtx()
        try:
            out = fake(*_clone_args(args), **_clone_args(kwargs))
        finally:
            _ctx.ctx = None
    reals = _tensors_in(real) if isinstance(real, (list, tuple)) else _tensors_in(real)
    fakes = _tensors_in(out) if isinstance(out, (list, tuple)) else _tensors_in(out)
    if len(reals) != len(fakes):
        raise AssertionError(f"{op.qualname}: the fake implementation returned {len(fakes)} tensors, the kernel "
                             f"{len(reals)}")
    for i, (r, f) in enumerate(zip(reals, fakes)):
        if r.dtype != f.dtype or (not ctx.dynamic and tuple(r.shape) != tuple(f.shape)):
            raise AssertionError(f"{op.qualname}: output {i} of the fake implementation has shape {tuple(f.shape)}"
                                 f" and dtype {f.dtype}, the kernel's {tuple(r.shape)} and {r.dtype}")


def _test_aot_dispatch_dynamic(op, args, kwargs, rtol, atol):
    from . import autograd
    _require_fake(op)            # PyTorch's test traces the op with fake tensors first
    values = op.bind(args, kwargs)
    if not any(t.requires_grad for v in values.values() for t in _tensors_in(v)) or not grad_mode.is_grad_enabled():
        return
    a64, k64 = _clone_args(args), _clone_args(kwargs)
    leaves = []

    def to64(v):
        if isinstance(v, Tensor) and v.requires_grad and v.is_floating_point():
            t = v.detach().to(np.float64).requires_grad_(True)
            leaves.append(t)
            return t
        if isinstance(v, (list, tuple)):
            return type(v)(to64(x) for x in v)
        return v
    a64 = tuple(to64(v) for v in a64)
    k64 = {k: to64(v) for k, v in k64.items()}
    out = op(*a64, **k64)
    outs = [o for o in (_tensors_in(out) if isinstance(out, (list, tuple)) else _tensors_in(out))
            if o.requires_grad]
    if not outs:
        return
    rng = np.random.default_rng(0)
    ups = [Tensor(rng.standard_normal(o.shape)) for o in outs]
    grads = autograd.grad(outs, leaves, ups, allow_unused=True)
    eps = 1e-6
    for leaf, g in zip(leaves, grads):
        numeric = np.zeros(leaf.shape)
        flat = leaf._data.reshape(-1)
        for j in range(flat.size):
            saved = flat[j]
            vals = []
            for step in (eps, -eps):
                flat[j] = saved + step
                with grad_mode.no_grad():
                    o = op(*a64, **k64)
                os_ = [x for x in (_tensors_in(o) if isinstance(o, (list, tuple)) else _tensors_in(o))
                       if is_differentiable(x.dtype)][:len(outs)]
                vals.append(sum(float((x._data * u._data).sum()) for x, u in zip(os_, ups)))
            flat[j] = saved
            numeric.reshape(-1)[j] = (vals[0] - vals[1]) / (2 * eps)
        analytic = np.zeros(leaf.shape) if g is None else g._data
        np.testing.assert_allclose(analytic, numeric, rtol=rtol or 1e-4, atol=atol or 1e-5,
                                   err_msg=f"{op.qualname}: the registered backward disagrees with finite "
                                           "differences")


_TESTS = {"test_schema": _test_schema, "test_autograd_registration": _test_autograd_registration,
          "test_faketensor": _test_faketensor, "test_aot_dispatch_dynamic": _test_aot_dispatch_dynamic}


def opcheck(op, args, kwargs=None, *, test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                                  "test_aot_dispatch_dynamic"), raise_exception=True, atol=None,
            rtol=None):
    """Check a custom operator on ``args``: PyTorch's four tests, each "SUCCESS" in the returned dict (see the
    module's docstring for what each checks in minigrad)."""
    operator = _lookup(op)
    kwargs = {} if kwargs is None else kwargs
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    results = {}
    for name in test_utils:
        if name not in _TESTS:
            raise ValueError(f"test_utils: unknown test {name!r}; expected one of {list(_TESTS)}")
        try:
            _TESTS[name](operator, args, kwargs, rtol, atol)
        except Exception as error:  # noqa: BLE001 - reported (or raised) per test, as PyTorch's opcheck does
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error} (scroll up for stack trace)") \
                    from error
            results[name] = error
            continue
        results[name] = "SUCCESS"
    return results
