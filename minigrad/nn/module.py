"""``Module`` and ``Parameter``: the containers that give a model its tree, its state_dict and its modes.

A ``Module`` keeps three ordered registries, filled by plain attribute assignment:

* ``_parameters``: ``Parameter`` leaves that optimizers update (``self.weight = Parameter(...)``);
* ``_buffers``: state that is saved but not trained (``register_buffer('running_mean', t)``),
  persistent unless registered with ``persistent=False``;
* ``_modules``: child modules (``self.proj = Linear(...)``).

Everything else (``parameters()``, ``state_dict()``, ``to()``, ``train()``) walks these registries,
so keys, order and behaviour match PyTorch's for the same tree.
"""
import threading
from collections import OrderedDict, namedtuple
from typing import TypeVar

import numpy as np

from .. import dtypes
from ..autograd import no_grad
from ..device import check_device, cuda_device
from ..ops import layout
from ..tensor import Tensor, _RemovableHandle, parse_to_args
from . import module_hooks

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


EXTRA_STATE = "_extra_state"     # the state_dict entry of a module's get_extra_state()


def _defines(cls, name):
    """Whether the Module subclass ``cls`` defines its own ``name`` (``get_extra_state``/``set_extra_state``)."""
    return getattr(cls, name) is not getattr(Module, name)


def _load_own(module, state_dict, prefix, version, assign, missing, unexpected, errors, copies, extra):
    """``load_state_dict``'s work for one module (its entries under ``prefix``, in format ``version``): the missing,
    unexpected and refused keys appended to those lists, the checked values to ``copies`` and ``extra`` (written
    only once every module's entries checked out)."""
    local = dict(module._local_state())
    takes_extra = _defines(type(module), "set_extra_state")
    if takes_extra and prefix + EXTRA_STATE in state_dict:
        extra.append((module, state_dict[prefix + EXTRA_STATE]))
    elif takes_extra:                          # missing even when not strict, as PyTorch reports it
        missing.append(prefix + EXTRA_STATE)
    for name, target in local.items():
        key = prefix + name
        if key not in state_dict:
            if not module._keeps_when_missing(name, version):
                missing.append(key)
            continue
        error = _load_error(key, state_dict[key], target) or (assign and _assign_error(key, state_dict[key], target))
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
        own = head in local or (takes_extra and head == EXTRA_STATE)
        if (head not in module._modules) if rest else not own:
            unexpected.append(key)


_LOADING = threading.local()    # (assign, copies, extra) of the load_state_dict calling a _load_from_state_dict


class _ReturningStateHook:
    """A ``_register_state_dict_hook`` hook, which may return a new state_dict."""

    def __init__(self, hook):
        self.hook = hook

    def __call__(self, *args):
        return self.hook(*args)


class _WithoutModule:
    """A ``_register_load_state_dict_pre_hook`` hook registered without ``with_module``: called without it."""

    def __init__(self, hook):
        self.hook = hook

    def __call__(self, module, *args):
        return self.hook(*args)


def _dict_hook(module, registry, hook):
    """Register ``hook`` in the module's id -> hook dict ``registry`` (made on first use)."""
    hooks = module.__dict__.get(registry)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, registry, hooks)
    handle = _RemovableHandle(module_hooks._DictHooks(hooks), hook)
    hooks[handle.id] = hook
    return handle


class Module:
    """Base class of every layer and model: subclasses set attributes in ``__init__`` and define ``forward``."""

    _version = 1   # the format of this module's state_dict entries, as PyTorch numbers it (load_state_dict)
    T_destination = TypeVar("T_destination", bound=dict)    # PyTorch's type of a state_dict's destination

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
        if not module_hooks.hooked(self):
            return self.forward(*args, **kwargs)
        return module_hooks.call(self, args, kwargs)

    _call_impl = __call__

    # ------------------------------------------------------------------ hooks (module_hooks.py)
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` before ``forward``; a returned value replaces the positional args. With
        ``with_kwargs``: ``hook(module, args, kwargs)``, returning None or ``(args, kwargs)``."""
        return module_hooks.add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Call ``hook(module, args, output)`` after ``forward``; a returned value replaces the output. With
        ``with_kwargs``: ``hook(module, args, kwargs, output)``; ``always_call``: also when forward raises."""
        return module_hooks.add_hook(self._forward_hooks, hook, prepend, with_kwargs, always_call)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the gradients of this module's outputs are computed; a returned
        tuple replaces grad_output."""
        return module_hooks.add_hook(module_hooks.module_hooks(self, "_backward_pre_hooks"), hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of this module's inputs are computed; a
        returned tuple replaces grad_input."""
        module_hooks.check_backward_kind("full", self.__dict__.get("_is_full_backward_hook"), "on a single Module")
        object.__setattr__(self, "_is_full_backward_hook", "full")
        return module_hooks.add_hook(module_hooks.module_hooks(self, "_backward_hooks"), hook, prepend)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated form of ``register_full_backward_hook``; minigrad gives it the full hook's meaning
        (PyTorch's sees the gradients of the last operation of forward only)."""
        module_hooks.check_backward_kind("legacy", self.__dict__.get("_is_full_backward_hook"), "on a single Module")
        object.__setattr__(self, "_is_full_backward_hook", "legacy")
        return module_hooks.add_hook(module_hooks.module_hooks(self, "_backward_hooks"), hook)

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
        self._parameters[name] = module_hooks.registered("parameter", self, name, param)

    def register_buffer(self, name, tensor, persistent=True):
        """Add ``tensor`` (or None) as a buffer: module state that is not trained.

        Persistent buffers appear in ``state_dict()``; non-persistent ones are only converted by ``to()``.
        """
        self._check_new_name(name, "buffer", self.__dict__.get("_buffers", {}))
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(minigrad Tensor or None required)")
        self._buffers[name] = module_hooks.registered("buffer", self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add ``module`` (or None) as the child ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        self._check_new_name(name, "module", self.__dict__.get("_modules", {}))
        self._modules[name] = module_hooks.registered("module", self, name, module)

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
            modules[name] = module_hooks.registered("module", self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(minigrad.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(minigrad Tensor or None expected)")
            buffers[name] = module_hooks.registered("buffer", self, name, value)
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

    def modules(self, remove_duplicate=True):
        """This module and every descendant, depth first (a module reached twice only once, unless
        ``remove_duplicate=False``)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
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
            if not hasattr(module, part):
                raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
            module = getattr(module, part)
            if not isinstance(module, Module):
                raise AttributeError(f"`{part}` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at the dotted path ``target``, replacing a module there (``strict``: only replacing)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter at the dotted path ``target``."""
        module, name = self._owner_of(target)
        if not isinstance(getattr(module, name), Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return getattr(module, name)

    def get_buffer(self, target):
        """The buffer at the dotted path ``target``."""
        module, name = self._owner_of(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def _owner_of(self, target):
        """(the module holding the attribute at the dotted path ``target``, its name); PyTorch's error for none."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

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

    def to_empty(self, *, device=None, recurse=True):
        """Every parameter and buffer replaced by uninitialised memory of its shape and dtype on ``device`` (the CPU;
        PyTorch's way of materialising a model built on the meta device). The Parameter objects stay."""
        check_device(device)
        modules = self.modules() if recurse else [self]
        for module in modules:
            for registry in (module._parameters, module._buffers):
                for tensor in registry.values():
                    if tensor is not None:
                        tensor._data = np.empty_like(tensor._data)
        return self

    def share_memory(self):
        """``share_memory_()`` on every parameter and buffer (CPU memory: nothing to do, as in one process)."""
        return self

    def type(self, dst_type):
        """Every parameter and buffer cast to ``dst_type`` (a dtype, or a type name such as
        ``'torch.DoubleTensor'``), floating or not, as PyTorch's ``Module.type``."""
        for tensor in [p for p in self.parameters()] + [b for b in self.buffers()]:
            tensor._data = tensor.type(dst_type)._data
        return self

    def compile(self, *args, **kwargs):
        """``torch.compile`` of this module in place: minigrad compiles nothing, so the module runs as it is."""
        from ..compiler import compile as compile_fn
        compile_fn(self, **kwargs)

    call_super_init = False     # PyTorch's class flags: whether __init__ passes its arguments on, and the old
    dump_patches = False        # printing of source patches; both off, as in PyTorch

    def cuda(self, device=None):
        """Always raises: minigrad runs on the CPU only."""
        check_device(cuda_device(device))

    def xpu(self, device=None):
        """Always raises, as ``cuda``."""
        check_device(cuda_device(device, "xpu"))

    def mtia(self, device=None):
        """Always raises, as ``cuda``."""
        check_device(cuda_device(device, "mtia"))

    def ipu(self, device=None):
        """Always raises, as ``cuda``."""
        check_device(cuda_device(device, "ipu"))

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
        ``_metadata``: each module's format version, which ``load_state_dict`` reads. Each module's state_dict
        pre-hooks run before its entries are added, its post-hooks after its descendants'; a module whose class
        defines ``get_extra_state`` adds ``<prefix>_extra_state``."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        return self._state_into(destination, prefix, keep_vars)

    def _state_into(self, destination, prefix, keep_vars):
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, child in self._modules.items():
            if child is not None:
                child._state_into(destination, f"{prefix}{name}.", keep_vars)
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            result = hook(self, destination, prefix, local_metadata)
            if isinstance(hook, _ReturningStateHook):
                destination = destination if result is None else result   # (PyTorch's parents keep their own)
            elif result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries (not its children's) into ``destination``: parameters, persistent buffers and
        the extra state. PyTorch's method, which subclasses override to save otherwise."""
        for name, tensor in self._local_state():
            if prefix + name not in destination:
                destination[prefix + name] = tensor if keep_vars else tensor.detach()
        if _defines(type(self), "get_extra_state"):
            destination[prefix + EXTRA_STATE] = self.get_extra_state()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """This module's own entries (under ``prefix``) from ``state_dict``: PyTorch's method, which subclasses
        override to rename or convert entries before calling this one. Inside ``load_state_dict`` the values are
        checked here and written once every module's entries checked out (all or nothing); called on its own, it
        writes them at once when this module's entries raised no error."""
        version = local_metadata.get("version") if isinstance(local_metadata, dict) else None
        loading = getattr(_LOADING, "current", None)
        if loading is not None:
            assign, copies, extra = loading
            _load_own(self, state_dict, prefix, version, assign, missing_keys, unexpected_keys, error_msgs, copies,
                      extra)
            return
        copies, extra, errors = [], [], []
        _load_own(self, state_dict, prefix, version, False, missing_keys, unexpected_keys, errors, copies, extra)
        error_msgs.extend(errors)
        if not errors:
            self._copy_state(copies, extra, False)

    def _apply(self, fn, recurse=True):
        """PyTorch's ``_apply``: ``fn`` applied to every parameter, its grad and every buffer, the children's first
        (with ``recurse``); a parameter keeps its object and takes the result's values (as ``param.data = fn(param)``),
        a buffer is replaced by the result."""
        if recurse:
            for child in self.children():
                child._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is not None:
                    param._data = fn(param)._data
                    if param.grad is not None:
                        param.grad._data = fn(param.grad)._data
            for name, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[name] = fn(buf)
        return self

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` adds this module's entries."""
        return _dict_hook(self, "_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` added this module's entries and
        its descendants'; it may change ``state_dict`` in place (and must return None)."""
        return _dict_hook(self, "_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        before ``load_state_dict`` reads this module's entries; it may change ``state_dict`` (a copy of the caller's)
        in place, to rename or convert entries of an older format."""
        return _dict_hook(self, "_load_state_dict_pre_hooks", hook)

    def _register_state_dict_hook(self, hook):
        """PyTorch's older form of ``register_state_dict_post_hook``, which libraries still call: the hook may also
        return a new state_dict, which this module's ``state_dict`` then returns."""
        return _dict_hook(self, "_state_dict_hooks", _ReturningStateHook(hook))

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """PyTorch's older form of ``register_load_state_dict_pre_hook``, which libraries still call:
        ``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``, with the
        module first if ``with_module``."""
        return _dict_hook(self, "_load_state_dict_pre_hooks", hook if with_module else _WithoutModule(hook))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict``; it may change the missing and unexpected
        key lists in place, which ``strict`` then checks."""
        return _dict_hook(self, "_load_state_dict_post_hooks", hook)

    def get_extra_state(self):
        """The extra state a subclass keeps in its state_dict (``<prefix>_extra_state``): define it, and
        ``set_extra_state``, in the subclass."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state):
        """Take back what ``get_extra_state`` returned (``load_state_dict`` calls it)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values (Tensors or ndarrays) into this module's parameters and persistent buffers.

        All or nothing: every key, kind (numeric arrays only) and shape is checked, and every value cast
        to its destination's dtype, before the first copy, so a failed load leaves every parameter and
        buffer as it was. With ``strict=True`` missing and unexpected keys are errors, reported in
        PyTorch's words. Returns ``(missing_keys, unexpected_keys)``. Load post-hooks (which may change those
        lists before ``strict`` judges them) run after the copies, as in PyTorch: a strict error they leave then
        comes after the values were written.

        ``assign=True`` puts the state_dict's tensors themselves in place of the module's (their dtype and
        memory, no copy), as PyTorch does: a value for a parameter becomes a Parameter (a Parameter value is kept)
        with the module's ``requires_grad``; an ndarray is wrapped without a copy.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors, copies, extra = [], [], [], [], []
        versions = getattr(state_dict, "_metadata", None) or {}           # PyTorch's per-module format versions
        modules = list(self.named_modules(remove_duplicate=False))
        if any(_defines(type(m), "_load_from_state_dict") for _, m in modules):
            state_dict = OrderedDict(state_dict)                           # (which it may change: a copy)
        if any(m.__dict__.get("_load_state_dict_pre_hooks") for _, m in modules):
            metadata, state_dict = versions, OrderedDict(state_dict)       # the hooks change a copy, as PyTorch's
            for prefix, module in modules:
                local_metadata = (metadata.get(prefix) or {}) if isinstance(metadata, dict) else {}
                for hook in list(module.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
                    hook(module, state_dict, f"{prefix}." if prefix else "", local_metadata, strict, missing,
                         unexpected, errors)
        unexpected += [key for key in state_dict.keys() if not isinstance(key, str)]  # no module has such a key
        outer = getattr(_LOADING, "current", None)      # (a load inside a subclass's _load_from_state_dict)
        _LOADING.current = (assign, copies, extra)     # what each module's _load_from_state_dict checked, to write
        try:
            for prefix, module in modules:             # (a subclass's own _load_from_state_dict too, as PyTorch's)
                local_metadata = (versions.get(prefix) or {}) if isinstance(versions, dict) else {}
                module._load_from_state_dict(state_dict, f"{prefix}." if prefix else "", local_metadata, strict,
                                             missing, unexpected, errors)
        finally:
            _LOADING.current = outer
        post_hooks = [(m, hook) for _, m in modules
                      for hook in m.__dict__.get("_load_state_dict_post_hooks", {}).values()]
        incompatible = _IncompatibleKeys(missing, unexpected)
        if post_hooks and not errors:     # PyTorch's hooks see the loaded module and may clear the key lists
            self._copy_state(copies, extra, assign)
            for module, hook in post_hooks:
                if hook(module, incompatible) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None")
        if strict:
            for label, keys in (("Unexpected", unexpected), ("Missing", missing)):
                if keys:  # inserted in front: missing keys first, then unexpected, then the rest
                    quoted = ", ".join(f'"{k}"' if isinstance(k, str) else repr(k) for k in keys)
                    errors.insert(0, f"{label} key(s) in state_dict: {quoted}. ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(self._get_name(),
                                                                                       "\n\t".join(errors)))
        if not post_hooks:
            self._copy_state(copies, extra, assign)
        return incompatible

    @staticmethod
    def _copy_state(copies, extra, assign):
        """Write what ``load_state_dict`` checked: each value copied (or, ``assign``, put) in place; extra states."""
        if assign:
            for module, name, target, value in copies:
                setattr(module, name, _assigned(value, target))
        else:
            # Casting may still fail (or warn, as complex to real does): do it all before writing anything.
            sources = [np.asarray(value._data if isinstance(value, Tensor) else value).astype(target.dtype, copy=False)
                       for _, _, target, value in copies]
            with no_grad():
                for (_, _, target, _), source in zip(copies, sources):
                    if getattr(target, "lazy_placeholder", False):   # a lazy module's: the checkpoint's shape
                        target.materialize(source.shape)
                    target.copy_(Tensor(source))
        for module, state in extra:
            module.set_extra_state(state)

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
