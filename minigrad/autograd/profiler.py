"""``minigrad.autograd.profiler`` (``torch.autograd.profiler``): the older profiler API, on ``minigrad.profiler``.

``profile`` here has no schedule and takes PyTorch's older arguments (``enabled``, ``use_cuda``...); ``emit_nvtx``
and ``emit_itt`` are context managers that do nothing (they feed GPU and VTune profilers)."""
from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg
from ..profiler._profile import ProfilerActivity, emit_itt, emit_nvtx, record_function
from ..profiler._profile import autograd_profile as profile

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerActivity", "emit_itt", "emit_nvtx", "profile",
           "record_function"]
