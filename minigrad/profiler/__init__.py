"""``minigrad.profiler`` (``torch.profiler``): where the time of a program goes, op by op.

    from minigrad.profiler import profile, record_function, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("forward"):
            loss = model(x).sum()
        with record_function("backward"):
            loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

The table has one row per name: the ``record_function`` ranges, each minigrad op (named after its ``Function``
subclass: ``MatMul``, ``Add``, ``Tanh``...) and each backward node (``MatMulBackward``...), with how often it ran,
its own ("self") time and its time including what ran inside it. ``prof.export_chrome_trace("trace.json")`` writes
the same ranges on a time line for ui.perfetto.dev or chrome://tracing.

What is recorded (``_recorder.py``): ``record_function`` ranges, ``ProfilerStep#N`` steps (with a schedule),
every call of ``Function.apply`` (the single entry of minigrad's differentiable ops) and every backward node.
Ops that bypass ``Function.apply`` have no row of their own, their time counting in the ranges around them:
tensor creation (``randn``, ``zeros``, ``tensor``), integer and boolean results computed on arrays
(comparisons, ``argmax``), and optimizers' in-place updates. Times are wall-clock times of the calling thread
(minigrad runs on the CPU: CUDA activities record nothing).

While no profile records, nothing here costs anything: the timing versions of ``Function.apply`` and the
engine's ``run_node`` are swapped in when a profile starts recording and swapped out when it stops.
"""
from ._events import DeviceType, EventList, FunctionEvent, FunctionEventAvg, Interval
from ._profile import (ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
                       tensorboard_trace_handler)


def kineto_available():
    """True: the profiler API (``minigrad.profiler``, ``autograd.profiler``) is there to use, as PyTorch's answer
    tells programs (minigrad's profiler is its own, not Kineto)."""
    return True


__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler", "kineto_available"]
