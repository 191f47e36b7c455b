"""``minigrad.autograd.profiler_util`` (``torch.autograd.profiler_util``): the profiler's event classes, from
``minigrad/profiler/_events.py``."""
from ..profiler._events import DeviceType, EventList, FunctionEvent, FunctionEventAvg, Interval

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]
