"""Switches for graph recording: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``, and
anomaly detection (``detect_anomaly``, ``set_detect_anomaly``).

Each switch belongs to the **thread** that sets it, as in PyTorch: a thread inside ``no_grad`` does not stop
another thread from recording, and every new thread starts with recording on and anomaly detection off. Each
works as a context manager and as a decorator, like PyTorch's.
"""
import functools
import threading
import warnings


class _Modes(threading.local):
    """The calling thread's switches (a new thread sees these class defaults)."""

    enabled = True        # grad mode: ops record a graph
    inference = False     # inside inference_mode
    anomaly = False       # detect_anomaly: backward checks for NaN gradients
    anomaly_check_nan = True


_state = _Modes()


def is_grad_enabled():
    return _state.enabled


class set_grad_enabled:
    """Turn recording on or off; usable as a plain call, a context manager or a decorator."""

    def __init__(self, mode=True):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False

    def __call__(self, fn):
        mode = self.mode
        _state.enabled = self.prev  # used as a decorator: undo the switch made in __init__

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class _GradMode:
    mode = True

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _state.enabled = self.prev
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


def is_inference_mode_enabled():
    return _state.inference


class inference_mode(_GradMode):
    """``no_grad`` under PyTorch's name for inference (``with mg.inference_mode():``, ``@mg.inference_mode()``,
    ``@mg.inference_mode``): nothing inside records a graph. ``inference_mode(False)`` turns recording on,
    even inside ``no_grad``, as in PyTorch.
    A stand-in: PyTorch also marks tensors made inside as 'inference tensors' that autograd later refuses;
    minigrad's are ordinary tensors (views made inside are marked, so writing into them in place later raises
    PyTorch's error)."""

    def __new__(cls, mode=True):
        if callable(mode):  # bare @mg.inference_mode on a function
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.enabled = bool(mode)

    def __enter__(self):
        self.prev, self.prev_inference = _state.enabled, _state.inference
        _state.enabled, _state.inference = not self.enabled, self.enabled
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev, self.prev_inference
        return False

    def __call__(self, fn):
        enabled = self.enabled

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(enabled):
                return fn(*args, **kwargs)

        return wrapper


# --------------------------------------------------------------------------- anomaly detection
def is_anomaly_enabled():
    return _state.anomaly


def is_anomaly_check_nan_enabled():
    return _state.anomaly and _state.anomaly_check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off for this thread (a plain call or a context manager), as PyTorch's:
    while on, a backward function that returns NaN raises ``RuntimeError`` naming the function."""

    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = _state.anomaly, _state.anomaly_check_nan
        _state.anomaly, _state.anomaly_check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self.prev, self.prev_check_nan
        return False


class detect_anomaly(_GradMode):
    """Context manager and decorator: anomaly detection on inside (``with mg.autograd.detect_anomaly():``)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)
        self.prev, self.prev_check_nan = _state.anomaly, _state.anomaly_check_nan
        _state.anomaly, _state.anomaly_check_nan = True, bool(self.check_nan)
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self.prev, self.prev_check_nan
        return False

    def __call__(self, fn):
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(check_nan):
                return fn(*args, **kwargs)

        return wrapper


# --------------------------------------------------------------------------- backward's threads
_engine = {"multithreading": True}


def is_multithreading_enabled():
    return _engine["multithreading"]


class set_multithreading_enabled:
    """PyTorch's switch for running backward on one thread per device (a plain call or a context manager). minigrad's
    backward always runs on the calling thread (its kernels use numba's threads); the setting is recorded and
    reported back by ``is_multithreading_enabled``."""

    def __init__(self, mode):
        self.prev = _engine["multithreading"]
        _engine["multithreading"] = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _engine["multithreading"] = self.prev
        return False

