"""minigrad.utils.benchmark against torch.utils.benchmark. No wall-clock time is asserted: the timing tests run
both Timers with a fake clock that only moves when it is read (a fixed overhead) and when the statement runs (a
deterministic cost), so block sizes, block times and stopping points are exact and must equal PyTorch's.
Measurement statistics, reprs and Compare tables are compared with PyTorch's built from the same raw times and
metadata."""
import dataclasses
import inspect
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils import benchmark

from .mirror import torch_or_skip


def _torch():
    torch = torch_or_skip()
    import torch.utils.benchmark  # noqa: F401  (not imported by `import torch`)
    return torch


class FakeClock:
    """Reading it costs ``overhead`` seconds; ``tick()`` (the statement) costs ``cost(k)`` for its k-th call;
    ``prepare()`` (the setup) is counted. ``reads`` keeps (time, statement calls so far) at each reading."""

    def __init__(self, overhead, cost):
        self.now, self.overhead, self.cost = 0.0, overhead, cost
        self.calls = self.setups = 0
        self.reads = []

    def __call__(self):
        t = self.now
        self.reads.append((t, self.calls))
        self.now += self.overhead
        return t

    def tick(self):
        self.now += self.cost(self.calls)
        self.calls += 1

    def prepare(self):
        self.setups += 1


def _timers(torch, overhead, cost, **kwargs):
    """The same fake-clocked Timer in both libraries: [(clock, timer), (clock, timer)]."""
    out = []
    for lib in (benchmark, torch.utils.benchmark):
        clock = FakeClock(overhead, cost)
        out.append((clock, lib.Timer("tick()", setup="prepare()", timer=clock,
                                     globals={"tick": clock.tick, "prepare": clock.prepare}, **kwargs)))
    return out


def _noisy(base):
    """A cost that varies (deterministically) from run to run."""
    return lambda k: base * (1 + 0.6 * ((k * 7919) % 13) / 13)


def _run(method, clock_timer, **kwargs):
    clock, timer = clock_timer
    calls = []
    if method != "timeit":
        kwargs["callback"] = lambda number, seconds: calls.append((number, seconds))
    m = getattr(timer, method)(**kwargs)
    return m, calls, clock


def _same_run(ours, theirs):
    (m, calls, clock), (t, tcalls, tclock) = ours, theirs
    assert m.number_per_run == t.number_per_run
    assert m.raw_times == t.raw_times               # exact: the same readings of the same fake clock
    assert calls == tcalls
    assert (clock.calls, clock.setups, clock.reads) == (tclock.calls, tclock.setups, tclock.reads)


# -- Timer -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("number", [1, 7, 250, 1000])
def test_timeit_runs_the_statement_number_times_after_a_warmup(number):
    torch = _torch()
    ours, theirs = _timers(torch, 1e-7, lambda k: 1e-6)
    results = [_run("timeit", pair, number=number) for pair in (ours, theirs)]
    _same_run(*results)
    m, _, clock = results[0]
    warmup = max(number // 100, 2)
    assert clock.calls == warmup + number and clock.setups == 2      # setup once before each block
    (t0, c0), (t1, c1) = clock.reads[-2:]
    assert c1 - c0 == number                                          # the timed block is exactly `number` runs
    assert m.number_per_run == number and m.raw_times == [t1 - t0] and len(m.times) == 1
    assert m.task_spec.stmt == "tick()" and m.task_spec.setup == "prepare()"


@pytest.mark.parametrize("overhead, cost, min_run_time", [
    (1e-7, lambda k: 1e-6, 0.2),        # block of 1000 (overhead 1e-4 of it), then blocks until 0.2 s
    (3e-8, lambda k: 2e-5, 0.05),
    (1e-7, lambda k: 1e-6, 1e-4),       # tiny min_run_time: the overhead rule alone decides
    (1e-3, lambda k: 0.05, 0.01),       # one run already exceeds min_run_time: block of 1
    (1e-6, _noisy(3e-6), 0.3),
    # exact binary fractions, so the boundaries are hit exactly: blocks of 10 runs, and 8 blocks total exactly
    # min_run_time (enough: no 9th block)
    (2 ** -20, lambda k: 2 ** -10, 8 * (10 * 2 ** -10 + 2 ** -20)),
    (2 ** -20, lambda k: 9999 * 2 ** -20, 0.05),   # one run: overhead exactly 1e-4 of the block is small enough
    (1e-7, lambda k: 1e-3 - 1e-7, 0.05),   # PyTorch's overhead is a float32, a hair above 1e-7: blocks of 10, not 1
])
def test_blocked_autorange_matches_pytorch_with_a_fake_clock(overhead, cost, min_run_time):
    torch = _torch()
    ours, theirs = _timers(torch, overhead, cost)
    results = [_run("blocked_autorange", pair, min_run_time=min_run_time) for pair in (ours, theirs)]
    _same_run(*results)
    m, calls, clock = results[0]
    assert sum(m.raw_times) >= min_run_time and sum(m.raw_times[:-1]) < min_run_time   # stops as soon as enough
    if overhead == 2 ** -20:
        assert (m.number_per_run, len(m.raw_times)) == ((10, 8) if cost(0) == 2 ** -10 else (1, 6))
    assert all(number == m.number_per_run for number, _ in calls) and [s for _, s in calls] == m.raw_times
    blocks = len(m.raw_times)
    assert clock.setups == 5 + (len(clock.reads) // 2 - 5 - blocks) + blocks          # setup once per block


def _bumpy(k):
    """A cost that changes every 700 runs: blocks of 1000 differ by up to ~30%."""
    return 2e-6 * (1 + 2 * (((k // 700) * 7919) % 101) / 101)


@pytest.mark.parametrize("cost, threshold, min_run_time, max_run_time, blocks", [
    (_noisy(2e-6), 0.1, 0.01, 10.0, 4),     # steady: stops after 4 blocks once min_run_time is spent
    (_noisy(2e-6), 0.1, 0.3, 10.0, 118),    # min_run_time dominates
    (_bumpy, 0.5, 0.01, 10.0, 4),
    (_bumpy, 0.2, 0.01, 10.0, 5),           # steady enough only after the 5th block
    (_bumpy, 0.1, 0.01, 0.5, 126),          # never steady: max_run_time stops it
])
def test_adaptive_autorange_matches_pytorch_with_a_fake_clock(cost, threshold, min_run_time, max_run_time, blocks):
    torch = _torch()
    ours, theirs = _timers(torch, 1e-7, cost)
    kwargs = dict(threshold=threshold, min_run_time=min_run_time, max_run_time=max_run_time)
    results = [_run("adaptive_autorange", pair, **kwargs) for pair in (ours, theirs)]
    _same_run(*results)
    m = results[0][0]
    total = sum(m.raw_times)
    assert len(m.raw_times) == blocks
    if total <= max_run_time:
        assert len(m.raw_times) > 3 and total >= min_run_time and m.meets_confidence(threshold)
    else:
        assert sum(m.raw_times[:-1]) <= max_run_time and not m.meets_confidence(threshold)


def test_a_real_statement_with_the_default_clock():
    x = mg.ones(50, 50)
    t = benchmark.Timer("torch.mm(x, x)", globals={"x": x}, label="mm", sub_label="50x50", description="ones")
    for m in (t.timeit(5), t.blocked_autorange(min_run_time=0.01), t.adaptive_autorange(max_run_time=0.05)):
        assert isinstance(m, benchmark.Measurement) and m.raw_times and all(r > 0 for r in m.raw_times)
        assert repr(m).splitlines()[1:3] == ["mm: 50x50", "ones"]
    assert "mm" in str(benchmark.Compare([m]))


def test_num_threads_is_set_while_timing_and_restored():
    before = mg.get_num_threads()
    seen = []
    clock = FakeClock(1e-7, lambda k: 1e-4)
    t = benchmark.Timer("tick(); seen.append(torch.get_num_threads())", timer=clock, num_threads=1,
                        globals={"seen": seen, "tick": clock.tick})
    t.timeit(3)
    t.blocked_autorange(min_run_time=1e-3)
    t.adaptive_autorange(min_run_time=1e-3, max_run_time=1e-2)
    assert seen and set(seen) == {1} and mg.get_num_threads() == before
    bad = benchmark.Timer("1 / 0", num_threads=1)
    with pytest.raises(ZeroDivisionError):
        bad.timeit(1)
    assert mg.get_num_threads() == before
    with benchmark.set_torch_threads(1):
        assert mg.get_num_threads() == 1
    assert mg.get_num_threads() == before


def test_globals_are_copied_and_torch_is_minigrad():
    names = {"x": mg.ones(3)}
    t = benchmark.Timer("y = torch.add(x, 1)", globals=names)
    t.timeit(2)
    assert names == {"x": names["x"]} and t._globals["torch"] is mg
    mine = object()
    assert benchmark.Timer("pass", globals={"torch": mine})._globals["torch"] is mine


def test_code_is_dedented_as_pytorch_does():
    torch = _torch()
    stmt, setup = "\n    a = 1\n    b = a + 1\n  ", "\n        import math\n        c = 2\n"
    for kwargs in ({}, {"label": "L", "sub_label": "s", "description": "d", "env": "e", "num_threads": 3}):
        ours = benchmark.Timer(stmt, setup, **kwargs)._task_spec
        theirs = torch.utils.benchmark.Timer(stmt, setup, **kwargs)._task_spec
        assert [getattr(ours, f) for f in _FIELDS] == [getattr(theirs, f) for f in _FIELDS]
        assert ours.title == theirs.title and ours.summarize() == theirs.summarize()


def test_signature_and_errors():
    torch = _torch()
    tb = torch.utils.benchmark
    for name in ("Timer", "Measurement", "TaskSpec", "Compare"):
        ours, theirs = inspect.signature(getattr(benchmark, name)), inspect.signature(getattr(tb, name))
        assert [(p.name, p.kind) for p in ours.parameters.values()] == \
               [(p.name, p.kind) for p in theirs.parameters.values()]
        for p in ours.parameters.values():
            if p.name not in ("timer", "language"):
                assert p.default == theirs.parameters[p.name].default
    for method in ("timeit", "repeat", "autorange", "blocked_autorange", "adaptive_autorange", "collect_callgrind"):
        ours = inspect.signature(getattr(benchmark.Timer, method)).parameters.values()
        theirs = inspect.signature(getattr(tb.Timer, method)).parameters.values()
        assert [(p.name, p.kind, p.default) for p in ours] == [(p.name, p.kind, p.default) for p in theirs]
    assert [(l.name, l.value) for l in benchmark.Language] == [(l.name, l.value) for l in tb.Language]
    for lib in (benchmark, tb):
        with pytest.raises(ValueError, match="only a `str` stmt"):
            lib.Timer(lambda: None)
        with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
            lib.Timer("pass", global_setup="#include <x>")
        with pytest.raises(ValueError, match="Invalid language"):
            lib.Timer("pass", language="fortran")
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            lib.Timer().repeat()
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            lib.Timer().autorange()
        with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
            lib.Compare([1.0])
    for language in (benchmark.Language.CPP, "cpp", "c++"):
        with pytest.raises(NotImplementedError, match="no C\\+\\+"):
            benchmark.Timer("pass", language=language)
    assert benchmark.Timer("pass", language="py")._language is benchmark.Language.PYTHON
    with pytest.raises(NotImplementedError, match="Callgrind"):
        benchmark.Timer().collect_callgrind()
    with pytest.raises(SyntaxError):
        benchmark.Timer("1 +")
    assert not any(hasattr(benchmark, name) for name in ("Fuzzer", "FuzzedTensor", "CallgrindStats"))


# -- Measurement -----------------------------------------------------------------------------------------------------

_FIELDS = ("stmt", "setup", "global_setup", "label", "sub_label", "description", "env", "num_threads")


def _random_times(rng, n):
    base = 10 ** rng.uniform(-8, 0)
    times = base * (1 + rng.uniform(0, 1) * rng.random(n) ** 3)
    if rng.random() < 0.3:                                       # ties and round values
        times = [float(f"{t:.{int(rng.integers(0, 3))}e}") for t in times]
    return [float(t) for t in times]


def _pair(torch, number, times, **spec):
    spec = {"stmt": "f(x)", "setup": "pass", **spec}
    return (benchmark.Measurement(number, list(times), benchmark.TaskSpec(**spec)),
            torch.utils.benchmark.Measurement(number, list(times), torch.utils.benchmark.TaskSpec(**spec)))


def test_statistics_match_pytorch(rng):
    torch = _torch()
    # quartiles between two values are torch.lerp's: from the upper one when 3/4 of the way (last digit differs)
    ours, theirs = _pair(torch, 1, [2.3451020166982397e-06, 6.5236911158798775e-06])
    assert (ours.iqr, ours.median) == (theirs.iqr, theirs.median)
    for trial in range(300):
        n = int(rng.integers(1, 60))
        times = _random_times(rng, n)
        if trial % 3 == 0:                    # NumPy scalars: PyTorch then computes the figures in float64
            times = [np.float64(t) for t in times]
        ours, theirs = _pair(torch, int(rng.choice([1, 10, 1000])), times)
        assert ours.times == theirs.times
        assert ours.median == theirs.median
        assert ours.iqr == theirs.iqr
        np.testing.assert_allclose(ours.mean, theirs.mean, rtol=1e-14)
        assert ours.significant_figures == theirs.significant_figures
        assert ours.has_warnings == theirs.has_warnings
        for threshold in (0.01, 0.05, 0.1, 0.25, 0.5):
            assert ours.meets_confidence(threshold) == theirs.meets_confidence(threshold)
        assert ours.meets_confidence() == theirs.meets_confidence()


def test_statistics_of_known_times():
    m = benchmark.Measurement(10, [10.0, 20.0, 30.0, 40.0, 1000.0], benchmark.TaskSpec("f()", "pass"))
    assert m.times == [1.0, 2.0, 3.0, 4.0, 100.0]
    assert (m.median, m.mean, m.iqr) == (3.0, 22.0, 2.0)
    assert not m.meets_confidence(0.5) and m.meets_confidence(0.7) and m.has_warnings
    even = benchmark.Measurement(1, [4.0, 1.0, 3.0, 2.0], benchmark.TaskSpec("f()", "pass"))
    assert even.median == 2.5 and even.iqr == 1.5


_METADATA = [
    {},
    {"label": "Add", "sub_label": "float", "description": "n=16", "num_threads": 4},
    {"stmt": "a = f(x)\nb = g(a)", "setup": "x = 1\ny = 2", "sub_label": "s"},
    {"stmt": "a = f(x)\nb = g(a)", "description": "two\nlines"},
    {"label": "L", "setup": "x = torch.ones(3)", "env": "A", "num_threads": 1},
    {"stmt": "", "sub_label": "only"},
]


@pytest.mark.parametrize("spec", _METADATA)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 9])
def test_repr_and_naming_match_pytorch(rng, spec, n):
    torch = _torch()
    for scale in (1e-9, 3e-7, 2e-5, 4e-2, 3.0):
        times = list(scale * (1 + 0.5 * rng.random(n)))
        ours, theirs = _pair(torch, 100, times, **spec)
        mine, torchs = repr(ours).splitlines(), repr(theirs).splitlines()
        assert mine[0].startswith("<minigrad.utils.benchmark.measurement.Measurement object at 0x")
        assert mine[1:] == torchs[1:]
        for name in ("title", "as_row_name", "env") + _FIELDS:
            assert getattr(ours, name) == getattr(theirs, name)
        assert ours.task_spec.setup_str() == theirs.task_spec.setup_str()
        assert ours.task_spec.summarize() == theirs.task_spec.summarize()


def test_repr_layout_for_one_measurement():
    m = benchmark.Measurement(100, [8.49e-4], benchmark.TaskSpec("f(x)", "pass", label="relu", sub_label="float",
                                                                  description="n=4"))
    assert repr(m).splitlines()[1:] == ["relu: float", "n=4", "  8.49 us", "  1 measurement, 100 runs , 1 thread"]


def test_merge_matches_pytorch(rng):
    torch = _torch()
    specs = [{"label": "A"}, {"label": "A", "env": "x"}, {"label": "B", "num_threads": 2}, {"label": "A"}]
    ours, theirs = [], []
    for spec in specs + specs[:2]:
        a, b = _pair(torch, int(rng.integers(1, 100)), _random_times(rng, 5), **spec)
        a.metadata, b.metadata = {"k": 1}, {"k": 1}
        ours.append(a)
        theirs.append(b)
    merged, expected = benchmark.Measurement.merge(ours), torch.utils.benchmark.Measurement.merge(theirs)
    assert len(merged) == len(expected) == 3
    for a, b in zip(merged, expected):
        assert (a.number_per_run, a.raw_times, a.metadata) == (b.number_per_run, b.raw_times, b.metadata)
        assert [getattr(a, f) for f in _FIELDS] == [getattr(b, f) for f in _FIELDS]


def test_pickling_and_equality(rng):
    spec = benchmark.TaskSpec("f(x)", "pass", label="L", sub_label="s", num_threads=2)
    m = benchmark.Measurement(10, _random_times(rng, 7), spec, metadata={"size": 3})
    m.median, m.significant_figures                       # statistics computed before pickling
    back = pickle.loads(pickle.dumps(m))
    assert back == m and back.task_spec == spec and hash(back.task_spec) == hash(spec)
    assert (back.median, back.iqr, back.mean, repr(back).splitlines()[1:]) == \
           (m.median, m.iqr, m.mean, repr(m).splitlines()[1:])
    assert pickle.loads(pickle.dumps(spec)) == spec
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.label = "other"
    with pytest.raises(AttributeError):
        m.not_a_field


def test_a_time_of_exactly_one_unit_is_shown_in_that_unit():
    """1 ns, 1 us, 1 ms and 1 s print in their own unit, as PyTorch's (whose log10 of them is exact): NumPy's SIMD
    float32 log10 is 1 ulp off on some CPUs (-6.0000005 for float32(1e-6) on an AVX-512 Xeon), which gave 1 us as
    "ns" there."""
    for t, unit in ((1e-9, "ns"), (1e-6, "us"), (1e-3, "ms"), (1.0, "s")):
        assert benchmark.select_unit(t)[0] == unit
        assert benchmark.select_unit(np.float64(t))[0] == unit
        assert benchmark.select_unit(t * 0.999)[0] != unit


def test_helpers_match_pytorch(rng):
    torch = _torch()
    tb = torch.utils.benchmark
    for t in list(10 ** rng.uniform(-10, 2, 200)) + [1e-9, 1e-6, 1e-3, 1.0, 999e-9, 1000e-9, 0.5, 5.0]:
        assert benchmark.select_unit(t) == tb.select_unit(t)
        assert benchmark.select_unit(float(t)) == tb.select_unit(float(t))
        for n in (1, 2, 3, 4):                  # float32 for a Python float, float64 for an np.float64, as PyTorch
            assert benchmark.trim_sigfig(t * 1e6, n) == tb.trim_sigfig(t * 1e6, n)
            assert benchmark.trim_sigfig(float(t * 1e6), n) == tb.trim_sigfig(float(t * 1e6), n)
    for u in ("ns", "us", "ms", "s"):
        assert benchmark.unit_to_english(u) == tb.unit_to_english(u)
    assert benchmark.ordered_unique([3, 1, 3, 2, 1]) == tb.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert benchmark.trim_sigfig(3.14159, 2) == tb.trim_sigfig(3.14159, 2)


# -- Compare ---------------------------------------------------------------------------------------------------------

def _result_set(lib, seed, scales):
    """Measurements over labels, thread counts, sub_labels and descriptions, with holes and replicates."""
    rng = np.random.default_rng(seed)
    out = []
    for label in ("Add", "Matmul"):
        for threads in (1, 4):
            for sub in ("float", "int", "a longer sub label"):
                for desc in ("n=1", "n=100", "[8, 8] x [8, 8]"):
                    if (sub, desc) == ("int", "n=100") or rng.random() < 0.1:
                        continue
                    scale = 10 ** rng.uniform(*scales)
                    for _ in range(1 + (rng.random() < 0.2)):             # sometimes a replicate
                        n = int(rng.integers(1, 12))
                        times = list(scale * 100 * (1 + 0.4 * rng.random(n) ** 2))
                        out.append(lib.Measurement(100, times, lib.TaskSpec(
                            "f(x)", "pass", label=label, sub_label=sub, description=desc, num_threads=threads)))
    spec = {"stmt": "g(x)\nh(x)", "setup": "x = 1", "description": "only"}
    out.append(lib.Measurement(10, [1e-3, 1.1e-3], lib.TaskSpec(**spec)))
    return out


_OPTIONS = [(), ("trim",), ("trim", "colour"), ("highlight",), ("trim", "highlight", "rows"), ("colour", "highlight")]


def _table(lib, results, options):
    c = lib.Compare(results[:3])
    c.extend_results(results[3:])
    if "trim" in options:
        c.trim_significant_figures()
    if "colour" in options:
        c.colorize()
    if "rows" in options:
        c.colorize(rowwise=True)
    if "highlight" in options:
        c.highlight_warnings()
    return str(c)


@pytest.mark.parametrize("options", _OPTIONS)
@pytest.mark.parametrize("seed, scales", [(0, (-7, -3)), (1, (-9, -6)), (2, (-4, 1)), (3, (-6, -5))])
def test_compare_matches_pytorch(options, seed, scales):
    torch = _torch()
    ours = _table(benchmark, _result_set(benchmark, seed, scales), options)
    theirs = _table(torch.utils.benchmark, _result_set(torch.utils.benchmark, seed, scales), options)
    assert ours == theirs


def test_compare_with_envs_matches_pytorch(rng):
    torch = _torch()
    tables = []
    for lib in (benchmark, torch.utils.benchmark):
        results = [lib.Measurement(1, [t * 1e-6], lib.TaskSpec("f(x)", "pass", label="L", sub_label=s, description=d,
                                                                 env=e, num_threads=th))
                   for t, (th, e, s, d) in enumerate([(1, "before", "a", "x"), (1, "after", "a", "x"),
                                                      (1, "before", "b", "y"), (2, "after", "b", "x"),
                                                      (2, "after", "a", "y"), (1, "after", "b", "x")], start=3)]
        tables.append(_table(lib, results, ("colour",)))
    assert tables[0] == tables[1] and "(before)" in tables[0]


def test_compare_printed_layout(capsys):
    spec = dict(stmt="f(x)", setup="pass", label="relu")
    results = [benchmark.Measurement(1, [t], benchmark.TaskSpec(**spec, sub_label=s, description=d))
               for t, s, d in [(1.5e-6, "float", "n=1"), (12.25e-6, "float", "n=100"), (2e-6, "int", "n=1")]]
    benchmark.Compare(results).print()
    assert capsys.readouterr().out == (                 # PyTorch's output for the same results
        "[----------- relu ----------]\n"
        "             |  n=1  |  n=100\n"
        "1 threads: ------------------\n"
        "      float  |  1.5  |   12.2\n"
        "      int    |  2.0  |       \n"
        "\n"
        "Times are in microseconds (us).\n\n")
