"""The rest of ``torch.cuda`` that CPU-only programs touch: streams, events, ``device_of``, the out-of-memory
error and the legacy ``cuda.FloatTensor``-style types, each answering as PyTorch's CPU-only build does.

``stream(None)`` and ``device_of(cpu_tensor)`` enter and leave without doing anything; making a ``Stream``
or an ``Event`` raises ``RuntimeError``; the legacy types exist (``Tensor = torch.cuda.FloatTensor if
cuda else torch.FloatTensor`` runs), no tensor is an instance of one, and calling one raises ``TypeError``.
"""

class OutOfMemoryError(RuntimeError):
    """PyTorch's ``torch.OutOfMemoryError`` (also ``torch.cuda.OutOfMemoryError``), for ``except`` clauses."""


class Stream:
    def __init__(self, device=None, priority=0, **kwargs):
        raise RuntimeError("minigrad.cuda.Stream requires CUDA support")


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        raise RuntimeError("minigrad has no CUDA: cuda.Event cannot be made (PyTorch's CPU build raises "
                           "RuntimeError too)")


class StreamContext:
    """``with cuda.stream(s):``: a no-op for ``s = None``, as in PyTorch (any other ``s`` could not exist)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


def device_of(obj):
    """``with cuda.device_of(t):``: for a CPU tensor, PyTorch's device(-1), which enters without CUDA."""
    from .memory import device
    return device(-1)


def set_per_process_memory_fraction(fraction, device=None):
    from .memory import _no_cuda
    _no_cuda()


def current_blas_handle():
    from .memory import _no_cuda
    _no_cuda()


def get_gencode_flags():
    return ""


class _LegacyCudaType(type):
    """``cuda.FloatTensor`` and its kin: names that exist; calling one raises as PyTorch without CUDA does."""

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled with CUDA enabled.")

    def __instancecheck__(cls, instance):
        return False


def _legacy(name):
    return _LegacyCudaType(name, (), {"__module__": "minigrad.cuda",
                                      "__doc__": f"The CUDA twin of minigrad.{name}: not available."})


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_legacy(n) for n in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                                     "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"))
