"""Global switch for graph recording: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each works as a context manager and as a decorator, like PyTorch's.
"""
import functools

_state = {"enabled": True}


def is_grad_enabled():
    return _state["enabled"]


class set_grad_enabled:
    """Turn recording on or off; usable as a plain call, a context manager or a decorator."""

    def __init__(self, mode=True):
        self.prev = _state["enabled"]
        self.mode = bool(mode)
        _state["enabled"] = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state["enabled"] = self.prev
        return False

    def __call__(self, fn):
        mode = self.mode
        _state["enabled"] = self.prev  # used as a decorator: undo the switch made in __init__

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class _GradMode:
    mode = True

    def __enter__(self):
        self.prev = _state["enabled"]
        _state["enabled"] = self.mode
        return self

    def __exit__(self, *exc):
        _state["enabled"] = self.prev
        return False

    def __call__(self, fn):
        cls = type(self)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with cls():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Nothing computed inside records a graph (``with mg.no_grad():`` or ``@mg.no_grad()``)."""

    mode = False


class enable_grad(_GradMode):
    """Re-enables recording inside a ``no_grad`` block."""

    mode = True
