"""Global switch for graph recording: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

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


_inference = {"enabled": False}


def is_inference_mode_enabled():
    return _inference["enabled"]


class inference_mode(_GradMode):
    """``no_grad`` under PyTorch's name for inference (``with mg.inference_mode():``, ``@mg.inference_mode()``,
    ``@mg.inference_mode``): nothing inside records a graph. ``inference_mode(False)`` turns recording on,
even inside ``no_grad``, as in PyTorch.
    A stand-in: PyTorch also marks tensors made inside as 'inference tensors' that autograd later refuses;
    minigrad's are ordinary tensors."""

    def __new__(cls, mode=True):
        if callable(mode):  # bare @mg.inference_mode on a function
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.enabled = bool(mode)

    def __enter__(self):
        self.prev, self.prev_inference = _state["enabled"], _inference["enabled"]
        _state["enabled"], _inference["enabled"] = not self.enabled, self.enabled
        return self

    def __exit__(self, *exc):
        _state["enabled"], _inference["enabled"] = self.prev, self.prev_inference
        return False

    def __call__(self, fn):
        enabled = self.enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(enabled):
                return fn(*args, **kwargs)

        return wrapper
