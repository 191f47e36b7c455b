"""Process-wide switches PyTorch programs set at start-up, with PyTorch's names and checks: deterministic
algorithms, warnings shown always, anomaly detection, flushing denormals, inter-op threads, and ``typename``.

minigrad's kernels are deterministic already: the same inputs and thread count give the same bits (the matrix
products cut their work by the thread count set, never by the load; kernels/matmul_numba.py), and no op adds
with atomics. So ``use_deterministic_algorithms(True)`` has nothing to forbid; it is recorded and reported back
as in PyTorch.
"""
from .autograd import grad_mode
from .autograd.grad_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401 (exported here)

__all__ = ["are_deterministic_algorithms_enabled", "get_deterministic_debug_mode", "get_num_interop_threads",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "is_warn_always_enabled", "set_anomaly_enabled", "set_deterministic_debug_mode", "set_flush_denormal",
           "set_num_interop_threads", "set_warn_always", "typename", "use_deterministic_algorithms"]

_switches = {"deterministic": False, "warn_only": False, "warn_always": False, "interop_threads": 1}
_DEBUG_MODES = ("default", "warn", "error")      # get_deterministic_debug_mode's 0, 1, 2


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (every minigrad op is one: module docstring)."""
    if type(mode) is not bool:
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _switches["deterministic"], _switches["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _switches["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _switches["deterministic"] and _switches["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": on, warning only; 2 / "error": on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _switches["deterministic"]:
        return 0
    return 1 if _switches["warn_only"] else 2


def set_warn_always(b):
    """Recorded for ``is_warn_always_enabled`` (minigrad's warnings follow Python's warning filters)."""
    _switches["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _switches["warn_always"]


def set_anomaly_enabled(enabled, check_nan=True):
    """Anomaly detection on or off for this thread, as ``autograd.set_detect_anomaly``."""
    grad_mode._state.anomaly, grad_mode._state.anomaly_check_nan = bool(enabled), bool(check_nan)


def set_flush_denormal(mode):
    """Whether denormal floats could be flushed to zero: False, NumPy gives no control of the CPU's flag (PyTorch
    returns False where it cannot either); nothing changes."""
    return False


def set_num_interop_threads(num):
    """Recorded: minigrad runs no inter-op pool (its ops run one after another on the calling thread)."""
    if type(num) is not int or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _switches["interop_threads"] = num


def get_num_interop_threads():
    return _switches["interop_threads"]


def typename(obj):
    """A tensor's legacy type name ("minigrad.FloatTensor"); else the qualified name of ``obj`` itself if it
    has one (a class, a function), or of its class; without the module for builtins."""
    from .tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(named, "__module__", None) or ""
    return named.__qualname__ if module in ("", "builtins") else f"{module}.{named.__qualname__}"
