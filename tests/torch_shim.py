"""Run a program written against ``torch`` with minigrad standing in for it.

``minigrad_as_torch()`` is a context manager: inside it, ``import torch`` and ``import torch.<sub>`` resolve to
minigrad and its submodules (``torch.nn`` -> ``minigrad.nn``, ``torch.utils.data`` -> ``minigrad.utils.data``,
...), and a ``torch.<sub>`` that minigrad does not have fails with ``ModuleNotFoundError`` naming it. Real
PyTorch's modules (if it was imported) are put aside for the duration and restored on exit, so both libraries
can be used in one process: a program imported inside the context keeps minigrad in its globals afterwards.

``import_program(path, backend)`` imports a program file fresh, as a new module object, with ``backend``
"torch" (real PyTorch) or "minigrad" behind its ``import torch`` lines. Programs must import torch at module
level only (an ``import torch`` inside a function would see whatever ``sys.modules`` holds when it runs).
"""
import contextlib
import importlib
import importlib.abc
import importlib.util
import pkgutil
import sys
from pathlib import Path

import minigrad


def _is_torch_name(name):
    return name == "torch" or name.startswith("torch.")


def _minigrad_modules():
    """{'torch.X': module minigrad.X} for minigrad and every subpackage/submodule it has."""
    modules = {"torch": minigrad}
    for info in pkgutil.walk_packages(minigrad.__path__, prefix="minigrad."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        modules["torch" + info.name[len("minigrad"):]] = module
    return modules


class _NoOtherTorchModules(importlib.abc.MetaPathFinder):
    """Refuses ``torch.<sub>`` names minigrad has no module for (instead of finding files under minigrad/)."""

    def find_spec(self, fullname, path=None, target=None):
        if _is_torch_name(fullname):
            raise ModuleNotFoundError(f"minigrad has no module {fullname!r} (imported as torch)", name=fullname)
        return None  # not a torch name: the other finders look for it


@contextlib.contextmanager
def minigrad_as_torch():
    """Within the block, ``torch`` and its submodules are minigrad's; real PyTorch is restored on exit."""
    saved = {name: module for name, module in sys.modules.items() if _is_torch_name(name)}
    for name in saved:
        del sys.modules[name]
    finder = _NoOtherTorchModules()
    sys.modules.update(_minigrad_modules())
    sys.meta_path.insert(0, finder)
    try:
        yield minigrad
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if _is_torch_name(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def import_program(path, backend):
    """A fresh module object executing the program file ``path`` with ``backend`` ("torch" or "minigrad")."""
    path = Path(path)
    name = f"compat_{backend}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if backend == "torch":
        import torch  # noqa: F401  (real PyTorch in sys.modules before the program imports it)
        spec.loader.exec_module(module)
    elif backend == "minigrad":
        with minigrad_as_torch():
            spec.loader.exec_module(module)
    else:
        raise ValueError(f"import_program(): backend must be 'torch' or 'minigrad', got {backend!r}")
    return module
