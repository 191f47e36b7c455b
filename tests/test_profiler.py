"""minigrad.profiler and minigrad.autograd.profiler: a training step profiled with record_function ranges and a
schedule (which steps are recorded, against PyTorch's on_trace_ready calls), op and backward-node counts, nesting
and self times, the table, Chrome traces, shapes, memory and stacks, the argument checks, and the engine left
untouched when nothing records. No test asserts a duration: only names, counts, structure and non-negative times."""
import gzip
import inspect
import json
import threading
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import engine
from minigrad.autograd.function import Function
from minigrad.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

from .mirror import torch_or_skip

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2)).double()


def _train(lib, prof, steps, model=None):
    """``steps`` training steps of a small regression, each in a "step{i}" range, with ``prof.step()`` after each."""
    model = model or _model(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x, y = lib.ones(4, 3, dtype=lib.float64), lib.zeros(4, 2, dtype=lib.float64)
    for i in range(steps):
        with lib.profiler.record_function(f"step{i}"):
            with lib.profiler.record_function("forward"):
                loss = ((model(x) - y) ** 2).mean()
            with lib.profiler.record_function("backward"):
                opt.zero_grad()
                loss.backward()
            opt.step()
        prof.step()


def _rows(table):
    """{name: "# of Calls"} from a table's rows."""
    lines = table.splitlines()
    titles = lines[1].split()
    assert titles[0] == "Name" and "Calls" in titles
    rows = {}
    for line in lines[3:]:
        if line.startswith("-"):
            break
        cells = line.split()
        rows[cells[0]] = int(cells[-1])
    return rows


# --------------------------------------------------------------------------- a profiled training loop
def test_training_step_table_counts_ops_and_ranges():
    tables = []
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: tables.append(p.key_averages().table(sort_by="cpu_time_total",
                                                                               row_limit=-1))) as prof:
        _train(mg, prof, 5)
    assert len(tables) == 1                                   # steps 2 and 3 recorded, handed over once
    rows = _rows(tables[0])
    active = 2                                                # each recorded step: 2 Linear, Tanh, Sub, Pow, Mean
    assert rows == {"ProfilerStep*": active, "step2": 1, "step3": 1, "forward": active, "backward": active,
                    "Linear": 2 * active, "Tanh": active, "Sub": active, "Pow": active, "Mean": active,
                    "MeanBackward": active, "PowBackward": active, "SubBackward": active,
                    "LinearBackward": 2 * active, "TanhBackward": active}
    averages = prof.key_averages()
    totals = [a.cpu_time_total for a in sorted(averages, key=lambda a: a.cpu_time_total, reverse=True)]
    order = [line.split()[0] for line in tables[0].splitlines()[3:3 + len(totals)]]
    assert [next(a.cpu_time_total for a in averages if a.key == name) for name in order] == totals
    assert "Self CPU time total:" in tables[0] and "Self CPU %" in tables[0]
    assert len(_rows(averages.table(row_limit=3))) == 3


@pytest.mark.parametrize("steps, kwargs", [
    (5, dict(wait=1, warmup=1, active=2)),
    (9, dict(wait=1, warmup=1, active=2, repeat=2)),
    (9, dict(wait=0, warmup=1, active=1, repeat=0, skip_first=2)),
    (7, dict(wait=2, warmup=0, active=1, skip_first=1, skip_first_wait=1)),
    (3, dict(wait=1, warmup=0, active=3)),                    # the block ends as an active span saves
    (3, dict(wait=0, warmup=1, active=4)),                    # ... in the middle of an active span
    (1, dict(wait=1, warmup=1, active=2)),                    # ... during warm-up: nothing handed over
])
@pytest.mark.parametrize("acc_events", [False, True])
def test_recorded_steps_match_pytorchs(steps, kwargs, acc_events):
    torch = torch_or_skip()
    seen = {}
    for lib in (mg, torch):
        calls = []

        def ready(prof):
            names = {e.name for e in prof.events()}
            calls.append(sorted(n for n in names if n.startswith("step")) + sorted(n for n in names if "Step" in n))
        with lib.profiler.profile(schedule=lib.profiler.schedule(**kwargs), on_trace_ready=ready,
                                  acc_events=acc_events) as prof:
            _train(lib, prof, steps)
        seen[lib.__name__] = calls
    assert seen["minigrad"] == seen["torch"]
    assert (seen["minigrad"] == []) == (steps == 1)          # (ended in warm-up: nothing handed over)


def test_schedule_actions_match_pytorchs():
    torch = torch_or_skip()
    for wait in range(3):
        for warmup in range(3):
            for active in range(1, 4):
                for repeat in range(3):
                    for skip_first in (0, 2):
                        for skip_first_wait in (0, 1):
                            args = dict(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                        skip_first=skip_first, skip_first_wait=skip_first_wait)
                            ours, theirs = schedule(**args), torch.profiler.schedule(**args)
                            assert [ours(s).name for s in range(25)] == [theirs(s).name for s in range(25)], args


def test_schedule_checks_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        for bad in (dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=0, active=0),
                    dict(wait=0, warmup=1, active=1, repeat=-1), dict(wait=0, warmup=1, active=1, skip_first=-2)):
            with pytest.raises(AssertionError, match=r"Invalid profiler schedule arguments\. Got wait="):
                lib.profiler.schedule(**bad)
        with pytest.raises(TypeError):
            lib.profiler.schedule(1, 1, 1)
        with pytest.warns(UserWarning, match="won't be using warmup"):
            lib.profiler.schedule(wait=0, warmup=0, active=1)
        with pytest.raises(AssertionError, match="Step must be non-negative"):
            lib.profiler.schedule(wait=0, warmup=1, active=1)(-1)


def test_schedule_written_by_hand():
    """A schedule is any function of the step: RECORD_AND_SAVE every step hands over each step alone."""
    handed = []
    with profile(schedule=lambda step: ProfilerAction.RECORD_AND_SAVE if step % 2 else ProfilerAction.NONE,
                 on_trace_ready=lambda p: handed.append(sorted(e.name for e in p.events()
                                                               if e.name.startswith("step")))) as prof:
        _train(mg, prof, 4)
    assert handed == [["step1"], ["step3"]]


# --------------------------------------------------------------------------- the events themselves
def test_events_nest_with_consistent_times():
    model = _model(mg)
    x = mg.ones(4, 3, dtype=mg.float64)
    with profile() as prof:
        with record_function("forward"):
            loss = model(x).tanh().sum()
        with record_function("backward"):
            loss.backward()
    events = prof.events()
    by_name = {}
    for event in events:
        by_name.setdefault(event.name, []).append(event)
        assert event.cpu_time_total >= 0 and event.self_cpu_time_total >= -1e-9
        assert event.time_range.start <= event.time_range.end
        np.testing.assert_allclose(event.self_cpu_time_total + sum(c.cpu_time_total for c in event.cpu_children),
                                   event.cpu_time_total, rtol=1e-12, atol=1e-9)
        for child in event.cpu_children:
            assert child.cpu_parent is event and child.thread == event.thread
            assert event.time_range.start <= child.time_range.start <= child.time_range.end <= event.time_range.end
    forward, backward = by_name["forward"][0], by_name["backward"][0]
    assert [c.name for c in forward.cpu_children] == ["Linear", "Tanh", "Linear", "Tanh", "Sum"]
    assert {c.name for c in backward.cpu_children} == {"SumBackward", "TanhBackward", "LinearBackward"}
    assert all(c.kind == "backward" for c in backward.cpu_children) and forward.kind == "user"
    assert [e.name for e in events if e.cpu_parent is None] == ["forward", "backward"]
    total = events.total_average()
    assert total.count == len(events) and total.key == "Total"
    np.testing.assert_allclose(events.self_cpu_time_total, forward.cpu_time_total + backward.cpu_time_total)
    assert _rows(events.table(top_level_events_only=True)) == {"forward": 1, "backward": 1}


def test_ops_inside_an_ops_forward_are_its_children():
    class Outer(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return mg.exp(x) + 1          # two ops run inside this one

        @staticmethod
        def backward(ctx, grad):
            return grad
    with profile() as prof:
        Outer.apply(mg.ones(3, requires_grad=True))
    (outer,) = [e for e in prof.events() if e.name == "Outer"]
    assert [c.name for c in outer.cpu_children] == ["Exp", "Add"] and outer.cpu_parent is None


def test_record_function_as_decorator_and_without_a_profile():
    @record_function("loss_fn")
    def loss_fn(a):
        return (a * a).sum()

    a = mg.ones(3)
    with record_function("ignored"):           # nothing records: nothing happens
        loss_fn(a)
    with profile() as prof:
        for _ in range(3):
            loss_fn(a)
    rows = _rows(prof.key_averages().table())
    assert rows["loss_fn"] == 3 and rows["Mul"] == 3 and rows["Sum"] == 3 and "ignored" not in rows
    assert all(e.cpu_parent.name == "loss_fn" for e in prof.events() if e.name in ("Mul", "Sum"))
    with pytest.raises(RuntimeError, match="str"):
        record_function(123)


def test_input_shapes_memory_and_stacks(tmp_path):
    linear = mg.nn.Linear(3, 8).double()
    with profile(record_shapes=True, profile_memory=True, with_stack=True) as prof:
        with record_function("block"):
            linear(mg.ones(16, 3, dtype=mg.float64))
            linear(mg.ones(2, 3, dtype=mg.float64))
            mg.ones(2, 3).reshape(3, 2)                       # a view: no new memory
    events = {e.name: e for e in prof.events()}
    shapes = [e.input_shapes for e in prof.events() if e.name == "Linear"]
    assert shapes == [[[16, 3], [8, 3], [8]], [[2, 3], [8, 3], [8]]]
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert sorted((a.key, a.count) for a in by_shape if a.key == "Linear") == [("Linear", 1), ("Linear", 1)]
    assert "Input Shapes" in by_shape.table() and "[[16, 3], [8, 3], [8]]" in by_shape.table()
    block = events["block"]
    assert block.self_cpu_memory_usage == 0 and block.cpu_memory_usage == (16 + 2) * 8 * 8   # float64 outputs
    assert [e.cpu_memory_usage for e in prof.events() if e.name == "Linear"] == [16 * 8 * 8, 2 * 8 * 8]
    assert [e.cpu_memory_usage for e in prof.events() if e.name == "Reshape"] in ([], [0])
    assert "CPU Mem" in prof.key_averages().table()
    assert any("test_profiler.py" in frame for frame in block.stack)
    assert all("minigrad/" not in frame.split("(")[0] for frame in events["Linear"].stack)
    grouped = prof.key_averages(group_by_stack_n=1)
    assert "Source Location" in grouped.table() and "test_profiler.py" in grouped.table()
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    linear_lines = [line.rsplit(" ", 1)[0] for line in lines if line.rsplit(" ", 1)[0].endswith(";Linear")]
    assert len(linear_lines) == 2 and all("test_input_shapes_memory_and_stacks;Linear" in line for line in linear_lines)


def test_events_of_other_threads_keep_their_thread():
    def work():
        (mg.ones(2) * 2).sum()
    with profile() as prof:
        worker = threading.Thread(target=work)
        with record_function("main"):
            worker.start()
            worker.join()
    events = {e.name: e for e in prof.events()}
    assert events["Mul"].thread == worker.ident and events["Mul"].cpu_parent is None
    assert events["main"].thread == threading.get_ident() and events["main"].cpu_children == []


# --------------------------------------------------------------------------- exports
def test_chrome_trace_is_valid_json_with_the_ranges(tmp_path):
    with profile(record_shapes=True) as prof:
        _train(mg, prof, 1)
    for name in ("trace.json", "trace.json.gz"):
        path = tmp_path / name
        prof.export_chrome_trace(str(path))
        text = gzip.open(path, "rt").read() if name.endswith(".gz") else path.read_text()
        trace = json.loads(text)
        events = trace["traceEvents"]
        assert len(events) == len(prof.events())
        assert all(e["ph"] == "X" and e["dur"] >= 0 and isinstance(e["ts"], float) for e in events)
        names = [e["name"] for e in events]
        assert names.count("Linear") == 2 and names.count("LinearBackward") == 2 and "step0" in names
        step = next(e for e in events if e["name"] == "step0")
        inside = [e for e in events if step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"]]
        assert {e["name"] for e in inside} >= {"forward", "backward", "Linear", "TanhBackward"}
        linear = next(e for e in events if e["name"] == "Linear")
        assert linear["cat"] == "cpu_op" and linear["args"]["Input Dims"] == [[4, 3], [5, 3], [5]]
        assert step["cat"] == "user_annotation"


def test_tensorboard_trace_handler_writes_a_trace_per_recording(tmp_path):
    folder = tmp_path / "logs" / "run1"
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=mg.profiler.tensorboard_trace_handler(str(folder), worker_name="w0")) as prof:
        _train(mg, prof, 5)
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 2 and all(f.startswith("w0.") and f.endswith(".pt.trace.json") for f in files)
    for f in folder.iterdir():
        assert any(e["name"].startswith("ProfilerStep#") for e in json.loads(f.read_text())["traceEvents"])
    with profile(on_trace_ready=mg.profiler.tensorboard_trace_handler(str(folder), use_gzip=True)):
        mg.ones(2).exp()
    assert sum(p.name.endswith(".pt.trace.json.gz") for p in folder.iterdir()) == 1


# --------------------------------------------------------------------------- checks and the untouched engine
def test_bad_arguments_raise_as_pytorch(tmp_path):
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(TypeError, match="Expected ProfilerActivity or dict"):
            with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU, "cpu"]):
                pass
        with pytest.raises(TypeError, match="'int' object is not callable"):
            with lib.profiler.profile(schedule=3):
                pass
        waiting = lib.profiler.profile()
        for call, what in ((waiting.events, "accessing events"), (waiting.key_averages, "getting key averages"),
                           (lambda: waiting.export_chrome_trace(str(tmp_path / "t.json")), "exporting chrome trace")):
            with pytest.raises(AssertionError, match=f"Profiler must be initialized before {what}"):
                call()
        with lib.profiler.profile() as prof:
            lib.ones(2).exp()
        with pytest.raises(AttributeError, match="has no attribute 'no_such_column'"):
            prof.key_averages().table(sort_by="no_such_column")
        with pytest.raises(RuntimeError):
            lib.profiler.record_function(123).__enter__()
        assert lib.profiler.supported_activities() == {lib.profiler.ProfilerActivity.CPU}


def test_cuda_activity_records_nothing_and_raises_nothing():
    with pytest.warns(UserWarning, match="CUDA"):
        both = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with both:
        mg.ones(2).exp()
    assert [e.name for e in both.events()] == ["Exp"] and all(e.device_time_total == 0 for e in both.events())
    with pytest.warns(UserWarning):
        gpu_only = profile(activities=[ProfilerActivity.CUDA])
    with gpu_only:
        mg.ones(2).exp()
    assert list(gpu_only.events()) == [] and "Self CPU time total" in gpu_only.key_averages().table()


def test_engine_is_untouched_unless_a_profile_records():
    apply, run_node = Function.__dict__["apply"], engine.run_node
    with profile() as outer:
        assert Function.__dict__["apply"] is not apply and engine.run_node is not run_node   # timed while recording
        with profile() as inner:
            mg.ones(2).exp()
        mg.ones(2).sin()
        assert Function.__dict__["apply"] is not apply
    assert Function.__dict__["apply"] is apply and engine.run_node is run_node
    assert [e.name for e in inner.events()] == ["Exp"] and [e.name for e in outer.events()] == ["Exp", "Sin"]
    with pytest.raises(ZeroDivisionError):
        with profile():
            1 / 0
    assert Function.__dict__["apply"] is apply and engine.run_node is run_node
    with profile(schedule=schedule(wait=1, warmup=0, active=1)) as prof:
        assert Function.__dict__["apply"] is apply          # step 0 waits: nothing is timed
        prof.step()
        assert Function.__dict__["apply"] is not apply
        prof.step()
        assert Function.__dict__["apply"] is apply
    assert Function.__dict__["apply"] is apply


def test_an_op_that_raises_is_recorded_and_the_stack_recovers():
    with profile() as prof:
        with pytest.raises(RuntimeError):
            mg.ones(2, 3) @ mg.ones(2, 3)
        with record_function("after"):
            mg.ones(1).exp()
    events = {e.name: e for e in prof.events()}
    assert events["after"].cpu_parent is None and [c.name for c in events["after"].cpu_children] == ["Exp"]


# --------------------------------------------------------------------------- torch.autograd.profiler
def test_autograd_profiler_matches_pytorchs_counts():
    torch = torch_or_skip()
    counts = {}
    for lib in (mg, torch):
        model = _model(lib)
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            for _ in range(3):
                with lib.autograd.profiler.record_function("train_step"):
                    model(lib.ones(4, 3, dtype=lib.float64)).sum().backward()
        rows = {a.key: a.count for a in prof.key_averages()}
        top = [e.name for e in prof.function_events if e.cpu_parent is None and not e.name.startswith("aten::")]
        counts[lib.__name__] = (rows["train_step"], top)
        assert isinstance(prof.function_events, lib.autograd.profiler.EventList)
        assert "train_step" in prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
        assert prof.self_cpu_time_total > 0
        assert prof.total_average().count == sum(a.count for a in prof.key_averages())
    assert counts["minigrad"] == counts["torch"] == (3, ["train_step"] * 3)   # (the ops inside: aten's or minigrad's)


def test_autograd_profiler_options():
    model = _model(mg)
    with mg.autograd.profiler.profile() as prof:
        assert list(prof.function_events) == []              # nothing finished yet
        model(mg.ones(4, 3, dtype=mg.float64)).sum().backward()
    rows = {a.key: a.count for a in prof.key_averages()}
    assert rows == {"Linear": 2, "Tanh": 1, "Sum": 1, "SumBackward": 1, "LinearBackward": 2, "TanhBackward": 1}
    assert "Linear" in str(prof) and "Linear" in prof.table()
    with pytest.raises(RuntimeError, match="not reentrant"):
        prof.__enter__()
    with mg.autograd.profiler.profile(enabled=False) as off:
        mg.ones(2).exp()
    assert list(off.function_events) == []
    with pytest.warns(FutureWarning, match="use_cuda"):
        with mg.autograd.profiler.profile(use_cuda=True) as cuda:
            mg.ones(2).exp()
    assert [e.name for e in cuda.function_events] == ["Exp"]
    for context in (mg.autograd.profiler.emit_nvtx(), mg.autograd.profiler.emit_itt(record_shapes=True)):
        with context:
            mg.ones(2).exp()
    assert mg.autograd.profiler.record_function is record_function


def test_names_and_signatures_follow_pytorch():
    torch = torch_or_skip()
    for name in ("profile", "record_function", "schedule", "tensorboard_trace_handler", "supported_activities",
                 "ProfilerActivity", "ProfilerAction"):
        assert hasattr(mg.profiler, name), name
    assert [a.name for a in mg.profiler.ProfilerActivity] == list(torch.profiler.ProfilerActivity.__members__)
    assert [a.name for a in ProfilerAction] == [n for n in torch.profiler.ProfilerAction.__members__
                                                if n != "DEVICE_STOPPED"]
    pairs = [(mg.profiler.profile.__init__, torch.profiler.profile.__init__),
             (mg.profiler.schedule, torch.profiler.schedule),
             (mg.profiler.tensorboard_trace_handler, torch.profiler.tensorboard_trace_handler),
             (mg.profiler.record_function.__init__, torch.profiler.record_function.__init__),
             (mg.profiler.profile.key_averages, torch.profiler.profile.key_averages),
             (mg.profiler.profile.export_chrome_trace, torch.profiler.profile.export_chrome_trace),
             (mg.profiler.EventList.table, torch.autograd.profiler_util.EventList.table),
             (mg.autograd.profiler.profile.__init__, torch.autograd.profiler.profile.__init__),
             (mg.autograd.profiler.emit_nvtx.__init__, torch.autograd.profiler.emit_nvtx.__init__)]
    for ours, theirs in pairs:
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), ours
    for name in ("profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent"):
        assert hasattr(mg.autograd.profiler, name) and hasattr(torch.autograd.profiler, name), name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import minigrad.autograd.profiler  # noqa: F401  (importing warns nothing)
