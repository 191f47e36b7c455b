"""``minigrad.amp``: ``autocast`` and ``GradScaler`` for training loops written for mixed precision.

``autocast("cpu", dtype=bfloat16)`` (the default dtype; float16 too) is PyTorch's CPU autocast: inside it
the ops of PyTorch's CPU lists run in bfloat16 (matrix products, convolutions, attention) or in float32
(the losses, ...), the rest in their inputs' dtypes (``minigrad/autocast_ops.py`` has the lists). Parameters
stay float32 (master weights) and get float32 gradients. For 'cuda' it disables itself with PyTorch's
warning (PyTorch does the same without CUDA); another dtype than float16/bfloat16 disables it with
PyTorch's warning too.

``GradScaler`` is PyTorch's loss scaler. For 'cuda' (the default, and ``minigrad.cuda.amp.GradScaler``)
it disables itself with PyTorch's warning, as PyTorch does without CUDA: ``scale`` returns the loss,
``step`` calls ``optimizer.step()``. For 'cpu' it scales as PyTorch does: the loss is multiplied by
the scale, ``unscale_`` divides the gradients by it and looks for inf/NaN, ``step`` skips the
optimizer's step when it found some, and ``update`` halves the scale after such a step (``backoff_factor``)
or doubles it after ``growth_interval`` clean steps (``growth_factor``).
"""
import functools
import warnings

import numpy as np

from . import dtypes
from .autocast_ops import use_autocast_dtype
from .autograd.grad_mode import no_grad
from .device import device as Device
from .tensor import Tensor

_autocast = {"cpu": False}
_autocast_dtype = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}   # get_autocast_dtype / set_autocast_dtype


def _enabled_on_cpu(device, enabled, what):
    """``(device type, enabled)``: a request for any other device than the CPU is disabled with PyTorch's
    warning (PyTorch does the same on a machine without that device)."""
    device_type = Device(device).type
    if enabled and device_type != "cpu":
        warnings.warn(f"{device_type.upper()} is not available: minigrad runs on the CPU only. Disabling {what}.",
                      stacklevel=3)
        enabled = False
    return device_type, bool(enabled)


def is_autocast_available(device_type):
    """Whether ``autocast`` takes ``device_type``, as PyTorch answers: every device type it knows but 'meta' (an
    unknown one raises ``device``'s RuntimeError). Only 'cpu' autocasts here: the others disable themselves with a
    warning."""
    return Device(device_type).type != "meta"


def is_autocast_enabled(device_type="cuda"):
    return _autocast.get(device_type, False)


def get_autocast_dtype(device_type):
    """The dtype autocast uses on ``device_type`` when none is given: bfloat16 on the CPU, float16 on CUDA."""
    return _autocast_dtype[Device(device_type).type]


def set_autocast_dtype(device_type, dtype):
    _autocast_dtype[Device(device_type).type] = np.dtype(dtype)


# ---------------------------------------------------------------------- PyTorch's older, function-style autocast API
def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` (``set_autocast_enabled(enabled)``: CUDA's), as ``autocast``'s block
    does, until turned again. On the CPU the ops then run in ``get_autocast_dtype('cpu')``."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    device_type = Device(device_type).type
    _autocast[device_type] = bool(enabled)
    if device_type == "cpu":
        use_autocast_dtype(_autocast_dtype["cpu"] if enabled else None)


def _deprecated(old, new):
    warnings.warn(f"minigrad.{old} is deprecated. Please use minigrad.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


_cache = {"enabled": True, "nesting": 0}   # minigrad caches no casts: the flag and the count are kept for programs


def is_autocast_cache_enabled():
    return _cache["enabled"]


def set_autocast_cache_enabled(enabled):
    _cache["enabled"] = bool(enabled)


def clear_autocast_cache():
    """Nothing to clear: minigrad's autocast casts each op's arguments anew."""


def autocast_increment_nesting():
    _cache["nesting"] += 1
    return _cache["nesting"]


def autocast_decrement_nesting():
    _cache["nesting"] -= 1
    return _cache["nesting"]


class autocast:  # noqa: N801 - PyTorch's name
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` or as a decorator: on the
    CPU, the ops of PyTorch's CPU autocast lists run in ``dtype`` (default bfloat16) or float32 inside it
    (module docstring). ``cache_enabled`` is accepted; casts are not cached (each op casts its own arguments)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device_type, self.enabled = _enabled_on_cpu(device_type, enabled, "autocast")
        self.fast_dtype = np.dtype(dtype) if dtype is not None else _autocast_dtype.get(self.device_type)
        if self.enabled and self.fast_dtype not in dtypes.LOW_PRECISION:
            warnings.warn(f"In {self.device_type.upper()} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{self.device_type.upper()} Autocast only supports dtypes of "
                          "minigrad.bfloat16, minigrad.float16 currently.", stacklevel=2)
            self.enabled = False

    def __enter__(self):
        self.prev = _autocast.get(self.device_type, False)
        if self.device_type == "cpu":
            _autocast["cpu"] = self.enabled
            self.prev_dtype = use_autocast_dtype(self.fast_dtype if self.enabled else None)
        return self

    def __exit__(self, *exc):
        if self.device_type == "cpu":
            _autocast["cpu"] = self.prev
            use_autocast_dtype(self.prev_dtype)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class GradScaler:
    """PyTorch's ``GradScaler(device='cuda', init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``; see the module docstring for what it does here."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._enabled = _enabled_on_cpu(device, enabled, "the GradScaler")[1]
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._unscaled = {}  # id(optimizer) -> whether it found inf/NaN, since the last update()

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale, in place, and note whether any is inf or NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        inverse = np.float32(1.0 / self._scale)  # PyTorch multiplies by the float32 reciprocal
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(Tensor(inverse.astype(p.grad.dtype)))
                        found_inf = found_inf or not np.isfinite(p.grad._data).all()
        self._unscaled[id(optimizer)] = found_inf

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` after unscaling, unless the gradients hold inf or NaN (then None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._unscaled[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Back off the scale after a step that found inf/NaN; grow it after ``growth_interval`` clean ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._unscaled = {}

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


# --------------------------------------------------------------------------- custom Functions under autocast
def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of a custom ``autograd.Function``: inside an autocast region of
    ``device_type`` with ``cast_inputs`` given, its floating-point tensor arguments (float64 ones excepted,
    as in PyTorch) are cast to ``cast_inputs`` and it runs with autocast off; otherwise it runs as written.
    It notes in ``ctx`` whether autocast was on, for ``custom_bwd``. (For 'cuda', autocast is never on in
    minigrad.)"""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorated(ctx, *args, **kwargs):
        enabled = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = enabled and cast_inputs is None
        if cast_inputs is None or not enabled:
            return fwd(ctx, *args, **kwargs)

        def cast(value):   # floating-point tensors but float64 (as PyTorch), also inside lists, tuples and dicts
            if isinstance(value, Tensor):
                return value.to(cast_inputs) if value.is_floating_point() and value.dtype != np.float64 else value
            if isinstance(value, (list, tuple)):
                return type(value)(cast(v) for v in value)
            return {k: cast(v) for k, v in value.items()} if isinstance(value, dict) else value
        with autocast(device_type, enabled=False):
            return fwd(ctx, *[cast(a) for a in args], **{k: cast(v) for k, v in kwargs.items()})
    return decorated


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of a custom Function: it runs with autocast as ``forward`` had it."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorated(ctx, *grads):
        with autocast(device_type, enabled=getattr(ctx, "_fwd_used_autocast", False)):
            return bwd(ctx, *grads)
    return decorated
