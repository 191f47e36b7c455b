"""``Module`` and ``Parameter``: the containers that give a model its tree, its state_dict and its modes.

A ``Module`` keeps three ordered registries, filled by plain attribute assignment:

* ``_parameters``: ``Parameter`` leaves that optimizers update (``self.weight = Parameter(...)``);
* ``_buffers``: state that is saved but not trained (``register_buffer('running_mean', t)``),
  persistent unless registered with ``persistent=False``;
* ``_modules``: child modules (``self.proj = Linear(...)``).

Everything else (``parameters()``, ``state_dict()``, ``to()``, ``train()``) walks these registries,
so keys, order and behaviour match PyTorch's for the same tree.
"""
from collections import OrderedDict, namedtuple

import numpy as np

from .. import dtypes
from ..autograd import no_grad
from ..device import check_device, cuda_device
from ..ops import layout
from ..tensor import Tensor, _RemovableHandle, parse_to_args

__all__ = ["Module", "Parameter", "Buffer"]


class Parameter(Tensor):
    """A Tensor that a ``Module`` registers as trainable when assigned as an attribute.

    Built from a Tensor it shares that tensor's data (no copy), as ``torch.nn.Parameter`` does.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = np.empty(0, dtype=dtypes.get_default_dtype())
        if not isinstance(data, (Tensor, np.ndarray)):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__} (convert it with "
                            "minigrad.tensor first)")
        array = data._data if isinstance(data, Tensor) else data
        super().__init__(array, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = Parameter(self._data.copy(), requires_grad=self.requires_grad)
        return memo[id(self)]


class Buffer(Tensor):
    """``nn.Buffer(data, persistent=True)``: a tensor that a module registers as a buffer when it is assigned as
    an attribute (``persistent=False``: left out of the state_dict), sharing ``data``'s memory."""

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            data = np.empty(0, dtype=dtypes.get_default_dtype())
        super().__init__(data._data if isinstance(data, Tensor) else data)
        self.persistent = persistent


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not fill and the keys it did not use."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def _indent(text, spaces):
    """Indent every line of ``text`` but the first (nested module reprs)."""
    lines = text.split("\n")
    return "\n".join(lines[:1] + [" " * spaces + line for line in lines[1:]])


def _type_name(value):
    return "None" if value is None else type(value).__name__


def _load_error(key, value, target):
    """Why ``load_state_dict`` cannot copy ``value`` into ``target`` (the entry ``key``), or None if it can."""
    source = value._data if isinstance(value, Tensor) else value
    if not isinstance(source, (np.ndarray, np.generic)):
        return (f'While copying the parameter named "{key}", expected Tensor or ndarray from checkpoint but '
                f"received {type(value)}")
    if dtypes.kind_of(source.dtype) not in "biufc":              # (bfloat16 is NumPy's kind "V")
        return (f'While copying the parameter named "{key}", expected a numeric Tensor or ndarray from checkpoint '
                f"but received an array of dtype {source.dtype}")
    if np.shape(source) != target.shape and not getattr(target, "lazy_placeholder", False):   # (it takes any shape)
        return (f"size mismatch for {key}: copying a param with shape {list(np.shape(source))} from checkpoint, "
                f"the shape in current model is {list(target.shape)}.")
    if not target._data.flags.writeable:
        return (f'While copying the parameter named "{key}", the parameter\'s array in the current model is '
                "read-only")
    return None


def _assign_error(key, value, target):
    """Why ``load_state_dict(assign=True)`` cannot put ``value`` in place of ``target``, or None if it can: a
    parameter that requires grad cannot become an integer or boolean tensor (PyTorch's words)."""
    source = value._data if isinstance(value, Tensor) else np.asarray(value)
    if isinstance(target, Parameter) and target.requires_grad and not dtypes.is_differentiable(source.dtype):
        return (f'While copying the parameter named "{key}", whose dimensions in the model are {list(target.shape)} '
                f"and whose dimensions in the checkpoint are {list(target.shape)}, an exception occurred : "
                "('Only Tensors of floating point and complex dtype can require gradients',).")
    return None


def _assigned(value, target):
    """What ``load_state_dict(assign=True)`` puts in place of ``target``: ``value`` itself (an ndarray wrapped
    without a copy), as a Parameter with ``target``'s ``requires_grad`` where ``target`` is one."""
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
    if not isinstance(target, Parameter):
        return value
    if isinstance(value, Parameter):
        return value.requires_grad_(target.requires_grad)
    return Parameter(value, requires_grad=target.requires_grad)


class Module:
    """Base class of every layer and model: subclasses set attributes in ``__init__`` and define ``forward``."""

    _version = 1   # the format of this module's state_dict entries, as PyTorch numbers it (load_state_dict)

    def __init__(self):
        # object.__setattr__: our __setattr__ needs these registries to exist already.
        set_plain = super().__setattr__
        set_plain("training", True)
        set_plain("_parameters", OrderedDict())
        set_plain("_buffers", OrderedDict())
        set_plain("_non_persistent_buffers_set", set())
        set_plain("_modules", OrderedDict())
        set_plain("_forward_pre_hooks", [])
        set_plain("_forward_hooks", [])

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        for hook in self._forward_pre_hooks:
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in self._forward_hooks:
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook):
        """Call ``hook(module, args)`` before ``forward``; a returned value replaces the positional args."""
        self._forward_pre_hooks.append(hook)
        return _RemovableHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """Call ``hook(module, args, output)`` after ``forward``; a returned value replaces the output."""
        self._forward_hooks.append(hook)
        return _RemovableHandle(self._forward_hooks, hook)

    # ------------------------------------------------------------------ registration
    def _check_new_name(self, name, kind, registry):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter, or None for an absent one such as ``bias=False``) as ``name``."""
        self._check_new_name(name, "parameter", self.__dict__.get("_parameters", {}))
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(minigrad.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add ``tensor`` (or None) as a buffer: module state that is not trained.

        Persistent buffers appear in ``state_dict()``; non-persistent ones are only converted by ``to()``.
        """
        self._check_new_name(name, "buffer", self.__dict__.get("_buffers", {}))
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(minigrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add ``module`` (or None) as the child ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        self._check_new_name(name, "module", self.__dict__.get("_modules", {}))
        self._modules[name] = module

    register_module = add_module

    def _forget(self, name, *registries):
        for registry in registries:
            self.__dict__[registry].pop(name, None)
        self.__dict__.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __setattr__(self, name, value):
        params, buffers, modules = (self.__dict__.get(k) for k in ("_parameters", "_buffers", "_modules"))
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(minigrad.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Buffer):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, "_parameters", "_modules")
            self.register_buffer(name, value, persistent=value.persistent)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "_parameters", "_buffers")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(minigrad.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(minigrad Tensor or None expected)")
            buffers[name] = value
        else:
            super().__setattr__(name, value)

    def __getattr__(self, name):
        # Called only when normal lookup fails, i.e. for registered parameters, buffers and children.
        state = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in state and name in state[registry]:
                return state[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, ()):
                self._forget(name, registry)
                return
        super().__delattr__(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Yield ``(dotted_name, module)`` for this module and every descendant, depth first, each once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and child not in seen:
                seen.add(child)
                yield name, child

    def children(self):
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        """Yield ``(dotted_name, tensor)`` from one registry of this module (and descendants), skipping None."""
        owners = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for owner_prefix, owner in owners:
            for name, value in owner.__dict__[registry].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{owner_prefix}.{name}" if owner_prefix else name), value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target):
        """The descendant at the dotted path ``target`` (``''`` is this module)."""
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules or module._modules[part] is None:
                raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
            module = module._modules[part]
        return module

    def apply(self, fn):
        """Call ``fn`` on every descendant (children first) and then on this module; return self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and gradients
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        super().__setattr__("training", mode)
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Drop (``set_to_none=True``) or zero in place every parameter's ``.grad``."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad.detach_()
                param.grad.zero_()

    # ------------------------------------------------------------------ dtype conversion
    def to(self, *args, dtype=None, device=None, non_blocking=False, memory_format=None):
        """Cast floating-point parameters, their grads and floating buffers to ``dtype``, in place; with
        ``memory_format``, lay out the 4-D and 5-D ones in it (as PyTorch, for channels_last weights).

        Takes PyTorch's forms: ``to(dtype)``, ``to('cpu')``, ``to('cpu', dtype)``, ``to(tensor)`` (its
        dtype) and the keywords; the device must be the CPU (minigrad has no other).
        The Parameter and buffer objects stay the same (optimizers holding them keep working);
        only their ``._data`` arrays are replaced. Integer buffers such as ``num_batches_tracked`` keep
        their dtype, as in PyTorch.
        """
        dtype = parse_to_args(args, dtype, device)
        if dtype is not None:
            dtype = np.dtype(dtype)
            if not dtypes.is_differentiable(dtype):     # floating (bfloat16 too: NumPy's kind 'V') or complex
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
        if memory_format is not None:
            layout.check_format(memory_format, "to")
        tensors = [t for _, t in self.named_parameters(remove_duplicate=True)]
        tensors += [p.grad for p in tensors if p.grad is not None]
        tensors += [b for _, b in self.named_buffers(remove_duplicate=True)]
        for tensor in tensors:
            if dtype is not None and dtypes.is_floating_point(tensor._data.dtype):
                tensor._data = tensor._data.astype(dtype, copy=False)
            if memory_format is not None and tensor.ndim in (4, 5):
                tensor._data = layout.laid_out(tensor._data, memory_format)
        return self

    def cpu(self):
        """``self``: every minigrad module lives on the CPU."""
        return self

    def cuda(self, device=None):
        """Always raises: minigrad runs on the CPU only."""
        check_device(cuda_device(device))

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def bfloat16(self):
        return self.to(dtypes.bfloat16)

    # ------------------------------------------------------------------ state_dict
    def _keeps_when_missing(self, name, version):
        """Whether a state_dict without the entry ``name`` of this module, in the module format ``version`` (None:
        a state_dict without PyTorch's ``_metadata``), loads with that entry left as it is, not missing: an entry
        a later version of the module added (PyTorch fills it with the module's own value)."""
        return False

    def _state_errors(self, state_dict, prefix, version):
        """(errors, keys) of what this module refuses in ``state_dict`` (its entries under ``prefix``, written in
        its format ``version``) beyond missing, unexpected and mismatched entries; the keys are not unexpected."""
        return [], []

    def _local_state(self):
        """This module's own saved state: ``(name, tensor)`` for parameters, then persistent buffers."""
        for name, param in self._parameters.items():
            if param is not None:
                yield name, param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                yield name, buf

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """An OrderedDict from dotted names to tensors sharing this module's data (PyTorch's keys), with PyTorch's
        ``_metadata``: each module's format version, which ``load_state_dict`` reads."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            if hasattr(destination, "_metadata"):
                destination._metadata[module_prefix] = {"version": module._version}
            for name, tensor in module._local_state():
                key = f"{module_prefix}.{name}" if module_prefix else name
                if key not in destination:
                    destination[key] = tensor if keep_vars else tensor.detach()
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values (Tensors or ndarrays) into this module's parameters and persistent buffers.

        All or nothing: every key, kind (numeric arrays only) and shape is checked, and every value cast
        to its destination's dtype, before the first copy, so a failed load leaves every parameter and
        buffer as it was. With ``strict=True`` missing and unexpected keys are errors, reported in
        PyTorch's words. Returns ``(missing_keys, unexpected_keys)``.

        ``assign=True`` puts the state_dict's tensors themselves in place of the module's (their dtype and
        memory, no copy), as PyTorch does: a value for a parameter becomes a Parameter (a Parameter value is kept)
        with the module's ``requires_grad``; an ndarray is wrapped without a copy.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, errors, copies = [], [], []
        unexpected = [key for key in state_dict.keys() if not isinstance(key, str)]  # no module has such a key
        versions = getattr(state_dict, "_metadata", None) or {}           # PyTorch's per-module format versions
        for prefix, module in self.named_modules(remove_duplicate=False):
            version = (versions.get(prefix) or {}).get("version") if isinstance(versions, dict) else None
            prefix = f"{prefix}." if prefix else ""
            local = dict(module._local_state())
            for name, target in local.items():
                key = prefix + name
                if key not in state_dict:
                    if not module._keeps_when_missing(name, version):
                        missing.append(key)
                    continue
                error = _load_error(key, state_dict[key], target) or (assign and _assign_error(key, state_dict[key],
                                                                                               target))
                if error:
                    errors.append(error)
                else:
                    copies.append((module, name, target, state_dict[key]))
            refused, handled = module._state_errors(state_dict, prefix, version)
            errors.extend(refused)
            for key in state_dict.keys():
                if not isinstance(key, str) or not key.startswith(prefix) or key in handled:
                    continue
                head, *rest = key[len(prefix):].split(".", 1)
                if (head not in module._modules) if rest else (head not in local):
                    unexpected.append(key)
        if strict:
            for label, keys in (("Unexpected", unexpected), ("Missing", missing)):
                if keys:  # inserted in front: missing keys first, then unexpected, then the rest
                    quoted = ", ".join(f'"{k}"' if isinstance(k, str) else repr(k) for k in keys)
                    errors.insert(0, f"{label} key(s) in state_dict: {quoted}. ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(self._get_name(),
                                                                                       "\n\t".join(errors)))
        if assign:
            for module, name, target, value in copies:
                setattr(module, name, _assigned(value, target))
            return _IncompatibleKeys(missing, unexpected)
        # Casting may still fail (or warn, as complex to real does): do it all before writing anything.
        sources = [np.asarray(value._data if isinstance(value, Tensor) else value).astype(target.dtype, copy=False)
                   for _, _, target, value in copies]
        with no_grad():
            for (_, _, target, _), source in zip(copies, sources):
                if getattr(target, "lazy_placeholder", False):   # a lazy module's: the checkpoint's shape, as PyTorch
                    target.materialize(source.shape)
                target.copy_(Tensor(source))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses in ``repr`` (subclasses show their arguments)."""
        return ""

    def _child_lines(self):
        return [f"({name}): {_indent(repr(child), 2)}" for name, child in self._modules.items()]

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = self._child_lines()
        if not child_lines and len(extra_lines) <= 1:
            return f"{self._get_name()}({extra})"
        body = "\n  ".join(extra_lines + child_lines)
        return f"{self._get_name()}(\n  {body}\n)"
