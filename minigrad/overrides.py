"""``minigrad.overrides``: PyTorch's ``torch.overrides``, the ``__torch_function__`` protocol's helpers.

minigrad's own functions do not dispatch on ``__torch_function__``: ``minigrad.Tensor`` has no such method, so
``has_torch_function*`` are False for minigrad tensors (and their subclasses), and calling ``minigrad.add`` on an
object that defines ``__torch_function__`` does not reach that method. The one exception is the ``attn_mask`` of
``scaled_dot_product_attention``, through which ``nn.attention.bias.CausalBias`` computes the attention, as in
PyTorch. The helpers themselves work as PyTorch's
for code that uses the protocol in its own functions::

    def my_func(x):
        if has_torch_function((x,)):
            return handle_torch_function(my_func, (x,), x)
        ...

``has_torch_function`` is True for arguments whose type defines ``__torch_function__`` (or while a
``TorchFunctionMode`` is active), and ``handle_torch_function`` calls the active mode's, then the arguments'
``__torch_function__`` (subclasses before their bases), as PyTorch does. A ``TorchFunctionMode`` therefore sees
the calls made through ``handle_torch_function`` only, not minigrad's own ops (a stand-in).
``get_overridable_functions`` / ``get_testing_overrides`` / ``get_ignored_functions`` list minigrad's functions.
"""
import contextlib
import functools
import inspect
import threading
import types as _types

from .tensor import Tensor

__all__ = ["BaseTorchFunctionMode", "TorchFunctionMode", "enable_reentrant_dispatch", "get_default_nowrap_functions",
           "get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "is_tensor_method_or_property", "resolve_name", "wrap_torch_function"]

_modes = threading.local()


def _mode_stack():
    stack = getattr(_modes, "stack", None)
    if stack is None:
        stack = _modes.stack = []
    return stack


def _overrides(arg):
    return getattr(type(arg), "__torch_function__", None) is not None


def has_torch_function(relevant_args):
    """Whether any of ``relevant_args`` (a sequence) defines ``__torch_function__``, or a mode is active."""
    if not isinstance(relevant_args, (tuple, list)) and not hasattr(relevant_args, "__getitem__"):
        raise TypeError("expected a sequence")
    return bool(_mode_stack()) or any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(arg):
    """``has_torch_function((arg,))``."""
    return bool(_mode_stack()) or _overrides(arg)


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``."""
    return bool(_mode_stack()) or any(_overrides(a) for a in args)


def _overloaded_args(relevant_args):
    """The arguments with a ``__torch_function__``, one per type, a subclass before its base classes."""
    found, seen = [], set()
    for arg in relevant_args:
        kind = type(arg)
        if kind in seen or not _overrides(arg):
            continue
        seen.add(kind)
        position = len(found)
        for i, other in enumerate(found):
            if issubclass(kind, type(other)):
                position = i
                break
        found.insert(position, arg)
    return found


def _name(public_api):
    return f"{getattr(public_api, '__module__', '')}.{getattr(public_api, '__qualname__', public_api)}"


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the ``__torch_function__`` of the active mode, then of the overloading arguments, until one returns
    something other than ``NotImplemented``; raise TypeError if none does."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    stack = _mode_stack()
    if stack:
        mode = stack.pop()      # the mode is off inside its own __torch_function__
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            stack.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        method = type(arg).__torch_function__
        if isinstance(inspect.getattr_static(type(arg), "__torch_function__"), (classmethod, staticmethod)):
            result = method(public_api, types, args, kwargs)
        else:
            result = method(arg, public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"no implementation found for '{_name(public_api)}' on types that implement "
                    f"__torch_function__: {list(types)}")


def wrap_torch_function(dispatcher):
    """Decorator: the function dispatches through ``handle_torch_function`` on the arguments ``dispatcher(*args,
    **kwargs)`` returns."""
    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return decorate


def is_tensor_like(inp):
    """A minigrad Tensor (or subclass), or an object defining ``__torch_function__``."""
    return isinstance(inp, Tensor) or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    """Whether ``func`` is a method of ``minigrad.Tensor`` or a property's getter (``Tensor.grad.__get__``)."""
    for value in vars(Tensor).values():
        if func is value:
            return True
        if isinstance(value, property) and func in (value.fget, value.fset):
            return True
    for klass in type.mro(Tensor):
        if getattr(klass, getattr(func, "__name__", ""), None) is func:
            return True
    return getattr(func, "__name__", None) == "__get__"


class TorchFunctionMode:
    """Base class of ``__torch_function__`` modes: inside ``with mode:``, calls made through
    ``handle_torch_function`` go to ``mode.__torch_function__(func, types, args, kwargs)`` first. minigrad's own
    ops do not dispatch through it."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _mode_stack().append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        stack = _mode_stack()
        if stack and stack[-1] is self:
            stack.pop()
        elif self in stack:
            stack.remove(self)

    @classmethod
    def push(cls, *args, **kwargs):
        """Enter a new mode of this class (as a context manager)."""
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each function as called."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """Accepted: minigrad has no dispatcher to re-enter."""
    yield


def resolve_name(f):
    """The dotted name of ``f`` as a user writes it (``minigrad.add``, ``minigrad.Tensor.add``), or None."""
    import minigrad
    for prefix, namespace in (("minigrad", minigrad), ("minigrad.nn.functional", minigrad.nn.functional),
                              ("minigrad.linalg", minigrad.linalg), ("minigrad.fft", minigrad.fft),
                              ("minigrad.special", minigrad.special)):
        name = getattr(f, "__name__", None)
        if name is not None and getattr(namespace, name, None) is f:
            return f"{prefix}.{name}"
    if is_tensor_method_or_property(f) and getattr(f, "__name__", "") != "__get__":
        return f"minigrad.Tensor.{f.__name__}"
    return None


# ----------------------------------------------------------------------------- listings of minigrad's functions
_CREATION = ("arange", "as_tensor", "bartlett_window", "blackman_window", "can_cast", "compile", "device", "empty",
             "empty_permuted", "empty_strided", "eye", "finfo", "from_numpy", "full", "get_default_device",
             "get_default_dtype", "get_num_threads", "hamming_window", "hann_window", "iinfo", "initial_seed",
             "is_grad_enabled", "is_inference_mode_enabled", "kaiser_window", "linspace", "load", "logspace",
             "manual_seed", "ones", "promote_types", "rand", "randint", "randn", "randperm", "result_type", "save",
             "scalar_tensor", "seed", "set_default_device", "set_default_dtype", "set_num_threads",
             "set_printoptions", "set_rng_state", "get_rng_state", "tensor", "tril_indices", "triu_indices", "zeros",
             "fork", "wait")


def get_ignored_functions():
    """minigrad's public functions that take no tensor to dispatch on (creation, configuration): PyTorch's list,
    as far as minigrad has those names."""
    import minigrad
    ignored = {getattr(minigrad, n) for n in _CREATION if callable(getattr(minigrad, n, None))}
    ignored |= {Tensor.__init__, Tensor.__new__, Tensor.__repr__}
    return ignored


def _namespaces():
    import minigrad
    from . import functional
    return [(minigrad, minigrad), (functional, functional), (minigrad.nn.functional, minigrad.nn.functional),
            (minigrad.linalg, minigrad.linalg), (minigrad.fft, minigrad.fft), (minigrad.special, minigrad.special),
            (Tensor, Tensor)]


def get_overridable_functions():
    """``{namespace: [functions]}`` for minigrad, minigrad.functional, minigrad.nn.functional, linalg, fft, special
    and ``minigrad.Tensor`` (its methods and properties' getters)."""
    import collections
    ignored = get_ignored_functions()
    result = collections.defaultdict(list)
    for key, namespace in _namespaces():
        for name in dir(namespace):
            if name.startswith("_") and not (namespace is Tensor and name.startswith("__") and name.endswith("__")):
                continue
            try:
                value = inspect.getattr_static(namespace, name)
            except AttributeError:
                continue
            if isinstance(value, property):
                value = value.fget
            elif isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif not callable(value) or isinstance(value, type) or isinstance(value, _types.ModuleType):
                continue
            if value is None or value in ignored or namespace is Tensor and name in ("__init__", "__new__"):
                continue
            result[key].append(value)
    return result


def _dummy(func):
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None

    def dummy(*args, **kwargs):
        if signature is not None:
            signature.bind(*args, **kwargs)
        return -1
    if signature is not None:
        dummy.__signature__ = signature
    dummy.__name__ = getattr(func, "__name__", "dummy")
    return dummy


def get_testing_overrides():
    """``{function: dummy}``: for each overridable function, a function with the same signature returning -1."""
    return {f: _dummy(f) for functions in get_overridable_functions().values() for f in functions}


def get_default_nowrap_functions():
    """The Tensor property getters whose results a subclass's ``__torch_function__`` should not wrap."""
    return {Tensor.grad.fget} if isinstance(inspect.getattr_static(Tensor, "grad", None), property) else set()


def _install():
    """``torch.autograd`` re-exports three of these names."""
    from . import autograd
    autograd.is_tensor_like = is_tensor_like
    autograd.has_torch_function = has_torch_function
    autograd.handle_torch_function = handle_torch_function


_install()
