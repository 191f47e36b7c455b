"""The classes and functions a user trusts in PyTorch checkpoints: ``serialization.add_safe_globals`` and its
companions, as PyTorch's ``torch.serialization`` has them.

``mg.load`` reads a ``torch.save`` pickle admitting only what a weights-only checkpoint holds. Checkpoints often
hold more: the training arguments (``argparse.Namespace``), a NumPy scalar (``best_acc``), a small class of the
project's own. PyTorch refuses them too under ``weights_only=True`` until the user lists them as safe; the same
list works here. A trusted global is the object itself when the pickle names it, so the pickle may call it
(a class is instantiated, a function called) and set the state of what it made: trust only code you would run.
What a trusted object holds is converted as the rest is (its tensors become minigrad tensors).
"""
import contextlib

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

_GIVEN = []          # what the user listed, as given (objects, or (object, "module.name") pairs)
_BY_NAME = {}        # "module.name" as a pickle names it -> the object


def _name_of(entry):
    if isinstance(entry, tuple):     # PyTorch's errors (it raises them at load time; here at once)
        if len(entry) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                             f"length: {len(entry)}")
        if type(entry[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                            f"{type(entry[1])}")
        return entry[1], entry[0]
    module, qualname = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        raise TypeError(f"{entry!r} has no __module__ and __qualname__ to be found by in a pickle: give it as an "
                        "(object, 'module.name') pair")
    return f"{module}.{qualname}", entry


def add_safe_globals(safe_globals):
    """Trust these globals (classes or functions, or ``(object, "module.name")`` pairs for an object the pickle
    names otherwise) in every later ``mg.load`` of a PyTorch checkpoint."""
    pairs = [_name_of(entry) for entry in safe_globals]      # all checked before any is added
    for (name, obj), entry in zip(pairs, safe_globals):
        _BY_NAME[name] = obj
        _GIVEN.append(entry)


def get_safe_globals():
    """What ``add_safe_globals`` was given, in order."""
    return list(_GIVEN)


def clear_safe_globals():
    """Trust nothing beyond the weights-only subset again."""
    _GIVEN.clear()
    _BY_NAME.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Trust these globals inside the ``with`` block only."""
    before = list(_GIVEN)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        clear_safe_globals()
        add_safe_globals(before)


def trusted(module, name):
    """The object the user trusts under ``module.name``, or None."""
    return _BY_NAME.get(f"{module}.{name}") if _BY_NAME else None


def any_trusted():
    return bool(_BY_NAME)
