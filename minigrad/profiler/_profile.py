"""``profile`` (torch.profiler's and torch.autograd.profiler's), ``record_function``, ``schedule`` and friends."""
import enum
import functools
import os
import socket
import time
import warnings

from . import _recorder
from ._events import EventList, build_events


class ProfilerActivity(enum.Enum):
    """What a profile records. minigrad runs on the CPU: only ``CPU`` records anything; the others are accepted
    (a program written for a GPU runs) and record nothing."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a profile does during one step, as a ``schedule`` says: nothing, warm up (minigrad has nothing to
    warm up), record, or record and then hand the recording to ``on_trace_ready``."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities():
    """The activities minigrad can record: the CPU's."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action of each step, for ``profile(schedule=...)``: after ``skip_first`` steps, cycles of ``wait``
    steps doing nothing, ``warmup`` steps warming up and ``active`` steps recording (the last of them also saving:
    ``on_trace_ready`` is called), ``repeat`` cycles (0: as many as there are steps). With ``skip_first_wait=1``
    the first cycle starts without its wait.

    ``schedule(wait=1, warmup=1, active=2)`` gives steps 0, 1, 2, 3, 4, ...:
    NONE, WARMUP, RECORD, RECORD_AND_SAVE, NONE, WARMUP, ..."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", UserWarning, stacklevel=2)
    cycle = wait + warmup + active

    def action(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait                # as if the first wait had already passed
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        place = step % cycle
        if place < wait:
            return ProfilerAction.NONE
        if place < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if place < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` handler writing each recording as a Chrome trace into ``dir_name`` (made if need be),
    named ``<worker_name>.<milliseconds>.pt.trace.json`` (``.gz`` with ``use_gzip``); ``worker_name`` defaults
    to "<host name>_<process id>". TensorBoard's profiler plugin, Perfetto and chrome://tracing open these."""
    def handler(prof):
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as err:
            raise RuntimeError(f"Can't create directory: {dir_name} ({err})") from None
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler


# --------------------------------------------------------------------------- record_function
class record_function:  # noqa: N801 - PyTorch's name
    """A named range of the program, timed while a profile records: ``with record_function("forward"): ...``,
    or ``@record_function("loss")`` on a function (each call is a range). Its time includes the ops inside it,
    which appear as its children. With no profile recording it does nothing."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise RuntimeError(f"record_function expects a str name, but got {type(name).__name__} ({name!r})")
        self.name, self.args = name, args
        self._range = None

    def __enter__(self):
        self._range = _recorder.open_range(self.name, "user")
        return self

    def __exit__(self, *exc):
        if self._range is not None:
            _recorder.close_range(self._range)
            self._range = None
        return False

    def __call__(self, fn):
        """As a decorator: each call of ``fn`` is a range of this name."""
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return timed


# --------------------------------------------------------------------------- torch.profiler.profile
def _check_activities(activities):
    """The activities as a set (dict form: its keys), each a ``ProfilerActivity``, as PyTorch checks them."""
    if activities is None:
        return supported_activities()
    chosen = set()
    for item in activities:
        for activity in (item.keys() if isinstance(item, dict) else [item]):
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"Expected ProfilerActivity or dict, got {type(activity)} (use "
                                "minigrad.profiler.ProfilerActivity.CPU)")
            chosen.add(activity)
    if not chosen:
        raise AssertionError("No valid profiler activities found")
    return chosen


class _Base:
    """What both profiles share: a ``Collector`` per recording, the events of the last one (or of all, with
    ``acc_events``), and the ways to look at them."""

    def __init__(self, record_cpu, record_shapes, profile_memory, with_stack, acc_events, with_flops=False):
        self._record_cpu = record_cpu
        self._options = dict(record_shapes=bool(record_shapes or with_flops), profile_memory=bool(profile_memory),
                             with_stack=bool(with_stack), with_flops=bool(with_flops))   # flops: shapes too, as PyTorch
        self._acc_events = acc_events
        self._collectors = []           # every recording since start(); the last one is the current one
        self._events = None             # built once a recording has stopped (cleared when another starts)
        self._started = False

    def _start_recording(self):
        collector = _recorder.Collector(**self._options)
        if not self._acc_events:
            self._collectors.clear()
        self._collectors.append(collector)
        self._events = None
        if self._record_cpu:
            collector.start()

    def _stop_recording(self):
        if self._collectors:
            self._collectors[-1].stop()
        self._events = None

    def _build(self):
        if self._events is None:
            events = EventList()
            for collector in self._collectors:
                built = build_events(collector)
                if not events:
                    events = built
                else:
                    events.extend(built)
            if any(c.recording for c in self._collectors):
                return events            # still recording: not kept (more events are coming)
            self._events = events
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One row per name (see ``EventList.key_averages``): ``.table(sort_by=..., row_limit=...)`` prints it."""
        return self._built("getting key averages").key_averages(group_by_input_shape, group_by_stack_n,
                                                                group_by_overload_name)

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the recorded events as a Chrome trace (JSON): open it in ui.perfetto.dev or chrome://tracing.
        (``use_python_export`` is accepted: minigrad's export is always in Python.)"""
        return self._built("exporting chrome trace").export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph input (needs ``with_stack=True``): see ``EventList.export_stacks``."""
        return self._built("exporting stacks").export_stacks(path, metric)

    def _built(self, what):
        if not self._started:
            raise AssertionError(f"Profiler must be initialized before {what} (use it in a `with` block, or call "
                                 "start() first)")
        return self._build()


class profile(_Base):  # noqa: N801 - PyTorch's name
    """``torch.profiler.profile``: records the time of each minigrad op, backward node and ``record_function``
    range while it is active (see ``minigrad.profiler`` for what is recorded)::

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            with record_function("train_step"):
                loss = model(x).sum(); loss.backward()
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

    With ``schedule`` (``minigrad.profiler.schedule(wait=1, warmup=1, active=2)``) the program calls
    ``prof.step()`` after each step; only the steps the schedule marks active are recorded, each step as a
    ``ProfilerStep#N`` range, and ``on_trace_ready(prof)`` is called at the end of each active span (also when
    the block ends during one). Without a schedule everything is recorded and ``on_trace_ready`` is called at
    the end. ``record_shapes`` adds each op's input shapes, ``profile_memory`` the bytes of the arrays ops
    return, ``with_stack`` the calling program's Python frames, ``with_flops`` each op's and backward node's flops
    (``FunctionEvent.flops``, a "Total FLOPs" column in the table; what ``utils.flop_counter`` counts: products,
    convolutions and attention, forward and backward) and the input shapes. Accepted and not acted on:
    ``with_modules``, ``experimental_config``, ``execution_trace_observer``,
    ``custom_trace_id_callback``, ``post_processing_timeout_s``; CUDA and other non-CPU activities record
    nothing."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        chosen = _check_activities(activities)
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated: pass `activities` instead", FutureWarning, stacklevel=2)
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
        other = sorted(a.name for a in chosen if a is not ProfilerActivity.CPU)
        if other:
            warnings.warn(f"minigrad runs on the CPU: the {', '.join(other)} activity records nothing",
                          UserWarning, stacklevel=2)
        if schedule is not None and not callable(schedule):
            raise TypeError(f"'{type(schedule).__name__}' object is not callable: schedule must be a function of the "
                            "step number returning a ProfilerAction (such as minigrad.profiler.schedule(wait=1, "
                            "warmup=1, active=2))")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(f"on_trace_ready must be a function of the profile, got {type(on_trace_ready).__name__}")
        super().__init__(ProfilerActivity.CPU in chosen, record_shapes, profile_memory, with_stack, acc_events,
                         with_flops)
        self.activities = chosen
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None      # ProfilerStep#N ranges, as PyTorch records them
        self.on_trace_ready = on_trace_ready
        self.with_flops, self.with_modules = with_flops, with_modules
        self.step_num = 0
        self.current_action = None
        self._step_range = None
        self._metadata = {}

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start the profile (what entering the ``with`` block does)."""
        self._started = True
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._transition(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        """End the profile (what leaving the ``with`` block does): a recording in progress is finished and handed
        to ``on_trace_ready``."""
        if self.current_action is None:
            return
        self._close_step()
        self._transition(self.current_action, None)
        self.current_action = None

    def step(self):
        """Mark the end of a step: the next step's action comes from the schedule."""
        if self.current_action is None:    # not started (or stopped): nothing to do
            return
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transition(previous, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps:
            self._step_range = _recorder.open_range(f"ProfilerStep#{self.step_num}", "step")

    def _close_step(self):
        if self._step_range is not None:
            _recorder.close_range(self._step_range)
            self._step_range = None

    def _transition(self, previous, current):
        """Act on the change of action from ``previous`` to ``current`` (None: the profile stops)."""
        if previous == ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording()
            self._trace_ready()
            if current in _RECORDING:
                self._start_recording()
        elif previous == ProfilerAction.RECORD:
            if current is None:
                self._stop_recording()
                self._trace_ready()
            elif current not in _RECORDING:
                warnings.warn(f"Incorrect schedule: RECORD followed by {current.name} (the recording is dropped: "
                              "end an active span with RECORD_AND_SAVE)", UserWarning, stacklevel=3)
                self._stop_recording()
        elif current in _RECORDING:              # from NONE or WARMUP
            self._start_recording()

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def events(self):
        """The recorded events (``FunctionEvent``), in the order they started."""
        return self._built("accessing events")

    def add_metadata(self, key, value):
        """Kept with the profile (minigrad's Chrome traces do not include it)."""
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        self._metadata[key] = value


# --------------------------------------------------------------------------- torch.autograd.profiler
class autograd_profile(_Base):  # noqa: N801 - exported as minigrad.autograd.profiler.profile
    """``torch.autograd.profiler.profile``: the older profile, without schedules::

        with minigrad.autograd.profiler.profile(record_shapes=True) as prof:
            model(x).sum().backward()
        print(prof.key_averages().table(sort_by="self_cpu_time_total"))

    ``enabled=False`` records nothing (the results are empty). ``use_cuda``/``use_device`` record nothing for a
    GPU (minigrad runs on the CPU); ``with_flops`` counts flops as ``minigrad.profiler.profile`` does;
    ``with_modules``, ``use_kineto`` and the other options are accepted."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        if use_cuda:
            warnings.warn("`use_cuda` is deprecated: pass use_device='cuda' (minigrad runs on the CPU and records "
                          "nothing for it)", FutureWarning, stacklevel=2)
        super().__init__(bool(enabled) and use_cpu, record_shapes, profile_memory, with_stack, acc_events, with_flops)
        self.enabled = enabled
        self.entered = False

    def __enter__(self):
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = self._started = True
        self._start_recording()
        return self

    def __exit__(self, *exc):
        self._stop_recording()
        return False

    @property
    def function_events(self):
        """The recorded events (an ``EventList``)."""
        return self._built("accessing events")

    def events(self):
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """``function_events.table(...)``: one row per event (``key_averages().table()`` for one per name)."""
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        return self.function_events.self_cpu_time_total

    def __str__(self):
        return str(self.function_events)


class emit_nvtx:  # noqa: N801 - PyTorch's name
    """``torch.autograd.profiler.emit_nvtx``: a context manager that does nothing (NVTX ranges are for NVIDIA's
    GPU profilers; minigrad runs on the CPU)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class emit_itt(emit_nvtx):  # noqa: N801 - PyTorch's name
    """``torch.autograd.profiler.emit_itt``: a context manager that does nothing (ITT ranges are for Intel VTune)."""
