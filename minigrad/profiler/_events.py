"""The profiler's results, with PyTorch's class and attribute names: ``FunctionEvent`` (one recorded range),
``FunctionEventAvg`` (the ranges of one name added up), ``EventList`` (a list of either, with ``table``,
``key_averages`` and ``export_chrome_trace``).

Times are in microseconds (floats), as PyTorch reports them. A range's *total* time runs from its start to its
end; its *self* time is the total less its children's totals (the ranges opened inside it, on its thread).
Memory, when the profile was asked for it (``profile_memory=True``), is the bytes of the new arrays ops return:
``cpu_memory_usage`` with the children's, ``self_cpu_memory_usage`` the range's own (minigrad counts arrays an
op's result owns, not temporary arrays inside it, nor frees).
"""
import enum
import gzip
import json
import os
import socket

from . import _table


class DeviceType(enum.Enum):
    """Where an event ran (PyTorch's ``DeviceType``): always the CPU in minigrad."""
    CPU = 0
    CUDA = 1


class Interval:
    """An event's ``time_range``: ``start`` and ``end`` in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start:.3f}, end={self.end:.3f})"


class _TimesMixin:
    """PyTorch's formatted-time properties and the device times (zero: minigrad runs on the CPU)."""

    device_time_total = self_device_time_total = cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = cuda_memory_usage = self_cuda_memory_usage = 0
    device_type = DeviceType.CPU
    is_async = is_remote = is_legacy = False
    node_id = -1

    @property
    def cpu_time(self):
        """The average total time of one call."""
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self):
        return 0.0

    cuda_time = device_time

    @property
    def cpu_time_str(self):
        return _table.format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _table.format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _table.format_time(self.self_cpu_time_total)


class FunctionEvent(_TimesMixin):
    """One recorded range: ``name``, ``thread``, ``time_range``, ``cpu_time_total`` and ``self_cpu_time_total``
    (microseconds), ``cpu_parent`` and ``cpu_children`` (the ranges it is inside, and opened inside it),
    ``input_shapes`` (with ``record_shapes=True``), ``stack`` (with ``with_stack=True``), memory (with
    ``profile_memory=True``), ``flops`` (with ``with_flops=True``: the flops of the op's own products, convolutions
    and attention, as ``utils.flop_counter`` counts them; 0 for the others) and ``kind``: "op" (a minigrad op's
    forward: a ``Function`` subclass's name), "backward" (a node of the backward pass), "user" (a
    ``record_function``) or "step" (``ProfilerStep*``)."""

    count = 1

    def __init__(self, id, name, kind, thread, start_us, end_us, trace_name=None, input_shapes=None, stack=None,
                 memory=0, flops=0):
        self.id, self.name, self.kind, self.thread = id, name, kind, thread
        self.flops = flops
        self.trace_name = trace_name or name
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.self_cpu_memory_usage = memory
        self.cpu_parent = None
        self.cpu_children = []

    key = property(lambda self: self.name)
    overload_name = ""

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_memory_usage(self):
        return self.self_cpu_memory_usage + sum(child.cpu_memory_usage for child in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} kind={self.kind} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total_str} self_cpu_time_total={self.self_cpu_time_total_str} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_TimesMixin):
    """The events of one key (a name; with its input shapes or stack when grouped so) added up: ``count``,
    ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time`` (the average per call), memory, ``flops``."""

    def __init__(self, key="", input_shapes=None, stack=None):
        self.key, self.count = key, 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = self.flops = 0
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.cpu_parent, self.cpu_children = None, []
        self.kind = None
        self.overload_name = ""

    def add(self, other):
        """Add an event (or another average) into this one."""
        if self.count == 0:
            self.kind, self.cpu_parent = other.kind, other.cpu_parent
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of ``FunctionEvent`` (``profile.events()``) or ``FunctionEventAvg`` (``key_averages()``)."""

    def __init__(self, *args, with_shapes=False, with_memory=False, with_stack=False, with_flops=False,
                 trace_meta=None):
        super().__init__(*args)
        self._with_shapes, self._with_memory, self._with_stack = with_shapes, with_memory, with_stack
        self._with_flops = with_flops
        self._trace_meta = trace_meta or {}

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self times: the time covered by the outermost ranges."""
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as a text table: one row each (``key_averages()`` first for one row per name), sorted by
        the attribute ``sort_by`` (descending: "cpu_time_total", "self_cpu_time_total", "count", ...), at most
        ``row_limit`` rows (a negative limit: all)."""
        return _table.build_table(self, sort_by=sort_by, row_limit=row_limit, header=header,
                                  max_src_column_width=max_src_column_width,
                                  max_name_column_width=max_name_column_width,
                                  max_shapes_column_width=max_shapes_column_width,
                                  top_level_events_only=top_level_events_only, time_unit=time_unit,
                                  with_shapes=self._with_shapes, with_memory=self._with_memory,
                                  with_stack=self._with_stack, with_flops=self._with_flops)

    def __str__(self):
        return self.table()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One ``FunctionEventAvg`` per name (per name and input shapes with ``group_by_input_shape``; per name and
        the ``group_by_stack_n`` innermost frames of the calling program with ``group_by_stack_n``), in the
        order the names first occur."""
        averages = {}
        for event in self:
            key = [event.key]
            if group_by_input_shape:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key.append(tuple(event.stack[:group_by_stack_n]))
            key = tuple(key)
            if key not in averages:
                averages[key] = FunctionEventAvg(
                    event.key, input_shapes=event.input_shapes if group_by_input_shape else None,
                    stack=event.stack[:group_by_stack_n] if group_by_stack_n > 0 else None)
            averages[key].add(event)
        return EventList(averages.values(), with_shapes=group_by_input_shape, with_memory=self._with_memory,
                         with_stack=group_by_stack_n > 0, with_flops=self._with_flops, trace_meta=self._trace_meta)

    def total_average(self):
        """All events added up into one ``FunctionEventAvg`` named "Total"."""
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON; gzipped when ``path`` ends in ".gz"): open it in Perfetto
        (ui.perfetto.dev) or chrome://tracing to see the ranges on a time line, nested as they ran."""
        if self and not isinstance(self[0], FunctionEvent):
            raise TypeError("export_chrome_trace needs the events themselves (profile.events()), not key_averages()")
        meta = self._trace_meta
        pid = os.getpid()
        events = []
        for event in self:
            args = {"External id": event.id, "kind": event.kind}
            if event.input_shapes:
                args["Input Dims"] = event.input_shapes
            if event.stack:
                args["Call stack"] = ";".join(event.stack)
            events.append({"ph": "X", "cat": "cpu_op" if event.kind in ("op", "backward") else "user_annotation",
                           "name": event.trace_name, "pid": pid, "tid": event.thread,
                           "ts": event.time_range.start, "dur": event.cpu_time_total, "args": args})
        trace = {"schemaVersion": 1, "deviceProperties": [], "record_shapes": meta.get("record_shapes", False),
                 "profile_memory": meta.get("profile_memory", False), "with_stack": meta.get("with_stack", False),
                 "host_name": socket.gethostname(), "displayTimeUnit": "ms",
                 "baseTimeNanoseconds": meta.get("base_time_ns", 0), "traceEvents": events,
                 "traceName": os.fspath(path)}
        text = json.dumps(trace)
        if os.fspath(path).endswith(".gz"):
            with gzip.open(path, "wt", encoding="utf-8") as out:
                out.write(text)
        else:
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        return path

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write one line per event with a stack (``with_stack=True``): its frames outermost first, joined by ";",
        then ``metric`` in whole microseconds: the input of flame-graph tools (``flamegraph.pl``)."""
        if metric not in ("self_cpu_time_total", "self_cuda_time_total", "self_device_time_total"):
            raise ValueError(f"metric should be one of: self_cpu_time_total, self_cuda_time_total, "
                             f"self_device_time_total (got {metric!r})")
        with open(path, "w", encoding="utf-8") as out:
            for event in self:
                if event.stack:
                    frames = ";".join(list(reversed(event.stack)) + [event.name])   # outermost frame first
                    out.write(f"{frames} {int(getattr(event, metric))}\n")


# --------------------------------------------------------------------------- building events from ranges
def build_events(collector):
    """The finished ranges of ``collector`` as an ``EventList`` of ``FunctionEvent``, in the order they started,
    each linked to its parent (the nearest enclosing range this collector recorded) and children."""
    ranges = [r for r in collector.ranges if r.end is not None]
    origin_wall, origin_clock = collector.wall_origin, collector.clock_origin

    def to_us(clock_ns):          # wall-clock microseconds (Chrome traces want absolute times)
        return (origin_wall + (clock_ns - origin_clock)) / 1000.0

    events, event_of = EventList(with_shapes=collector.record_shapes, with_memory=collector.profile_memory,
                                 with_stack=collector.with_stack, with_flops=collector.with_flops,
                                 trace_meta={"record_shapes": collector.record_shapes,
                                             "profile_memory": collector.profile_memory,
                                             "with_stack": collector.with_stack, "base_time_ns": origin_wall}), {}
    for index, rng in enumerate(ranges):
        name = "ProfilerStep*" if rng.kind == "step" else rng.name
        event = FunctionEvent(index, name, rng.kind, rng.thread, to_us(rng.start), to_us(rng.end),
                              trace_name=rng.name, input_shapes=rng.shapes, stack=rng.stack, memory=rng.memory,
                              flops=rng.flops)
        event_of[rng] = event
        events.append(event)
    for rng in ranges:
        parent = rng.parent
        while parent is not None and parent not in event_of:   # a range this collector did not finish
            parent = parent.parent
        if parent is not None:
            child = event_of[rng]
            child.cpu_parent = event_of[parent]
            child.cpu_parent.cpu_children.append(child)
    return events
