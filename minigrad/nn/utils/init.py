"""``skip_init``: a module built without spending time or random numbers on its initial values, as PyTorch's
``torch.nn.utils.skip_init``."""
import inspect

from ...random import default_generator
from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` whose parameters and buffers are to be set by the caller.

    PyTorch builds the module on its "meta" device and leaves the memory uninitialised, so the global random
    stream does not move. minigrad has no meta device: it builds the module as usual and then puts the default
    generator back where it was. The values are the usual initial ones rather than garbage (any values are right
    for memory the caller overwrites); the random stream is as in PyTorch. As there, the class must take a
    ``device`` argument."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    state = default_generator.snapshot()
    try:
        return module_cls(*args, **kwargs)
    finally:
        default_generator.restore(state)
