"""PyTorch's NumPy-style keyword names: a ``torch`` function or Tensor method that takes ``dim`` also takes it as
``axis``, and ``keepdim`` as ``keepdims`` (PyTorch's argument parser maps them: ``torch.sum(x, axis=0,
keepdims=True)``). The functions of ``minigrad``, ``linalg``, ``special`` and ``fft`` take them through the ``out=``
wrapper they all have (``_out.py``); ``install()`` wraps the Tensor methods (and any namespace function without that
wrapper) that have such a parameter. A call without them goes straight through (one test of the keyword
arguments)."""
import functools
import inspect
import types

ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def renamed(fn, kwargs):
    """``kwargs`` with the NumPy names replaced by PyTorch's; both spellings at once is PyTorch's TypeError."""
    out = {}
    for key, value in kwargs.items():
        name = ALIASES.get(key, key)
        if name in out:
            raise TypeError(f"{fn.__name__}() got multiple values for argument '{name}'")
        out[name] = value
    return out


def taking_numpy_names(fn):
    """``fn`` (which has a ``dim`` or ``keepdim`` parameter) also taking ``axis`` / ``keepdims``."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            kwargs = renamed(fn, kwargs)
        return fn(*args, **kwargs)
    call.numpy_names = True
    return call


def wants_numpy_names(fn):
    """Whether ``fn`` has a ``dim`` or ``keepdim`` parameter and neither NumPy name (nor ``**kwargs``) of its own."""
    if not isinstance(fn, types.FunctionType) or hasattr(fn, "numpy_names"):
        return False
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return (("dim" in parameters or "keepdim" in parameters) and "axis" not in parameters and "keepdims" not in
            parameters and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()))


def install(namespaces, tensor_class):
    """Wrap, in place, every public function of ``namespaces`` (dicts: a module's ``globals()`` or ``vars()``) and
    every method of ``tensor_class`` that has a ``dim`` or ``keepdim`` parameter. A function found under several names
    is wrapped once."""
    wrapped = {}

    def wrap(fn):
        if id(fn) not in wrapped:
            wrapped[id(fn)] = taking_numpy_names(fn)
        return wrapped[id(fn)]

    for namespace in namespaces:
        for name, fn in list(namespace.items()):
            if not name.startswith("_") and wants_numpy_names(fn):
                namespace[name] = wrap(fn)
    for name, fn in list(vars(tensor_class).items()):
        if not name.startswith("_") and wants_numpy_names(fn):
            setattr(tensor_class, name, wrap(fn))
