"""The thread governor: how many threads parallel kernels use when other processes keep cores busy, and that the
results do not depend on it."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.kernels import governor


class FakeMachine:
    """/proc/stat's busy seconds and this process's CPU time, advanced by hand."""

    def __init__(self, monkeypatch, cores):
        self.machine, self.own, self.now = 100.0, 10.0, 1000.0
        monkeypatch.setattr(governor, "_machine_busy_seconds", lambda: self.machine)
        monkeypatch.setattr(governor.time, "process_time", lambda: self.own)
        monkeypatch.setattr(governor.time, "monotonic", lambda: self.now)
        monkeypatch.setattr(governor, "_CORES", cores)
        monkeypatch.setattr(governor, "_load", governor._Load())
        monkeypatch.setattr(governor, "_ENABLED", True)

    def run(self, seconds, own_cores, other_cores):
        self.now += seconds
        self.own += seconds * own_cores
        self.machine += seconds * (own_cores + other_cores)


@pytest.mark.parametrize("cores, others, requested, expected", [
    (2, 0.0, 2, 2),      # an idle machine: every thread
    (2, 1.0, 2, 1),      # one busy process on two cores: one thread (never fewer)
    (2, 2.0, 2, 1),
    (2, 0.3, 2, 2),      # a little background work rounds away
    (4, 1.0, 4, 3),
    (4, 1.0, 2, 2),      # never more than requested
    (8, 2.6, 8, 5),
])
def test_team_is_the_cores_other_processes_leave_free(monkeypatch, cores, others, requested, expected):
    fake = FakeMachine(monkeypatch, cores)
    governor.team(requested)                     # the first reading
    fake.run(0.5, own_cores=1.0, other_cores=others)
    assert governor.busy_elsewhere() == pytest.approx(others)
    assert governor.team(requested) == expected


def test_the_load_is_read_at_most_every_interval(monkeypatch):
    fake = FakeMachine(monkeypatch, 2)
    governor.team(2)
    fake.run(0.5, own_cores=1.0, other_cores=1.0)
    assert governor.team(2) == 1
    fake.run(governor.INTERVAL / 10, own_cores=1.0, other_cores=0.0)   # too soon: the last measure stands
    assert governor.team(2) == 1
    fake.run(governor.INTERVAL, own_cores=2.0, other_cores=0.0)       # the other process has stopped
    assert governor.team(2) == 2


def test_switched_off_the_team_is_what_was_requested(monkeypatch):
    fake = FakeMachine(monkeypatch, 2)
    governor.team(2)
    fake.run(0.5, own_cores=1.0, other_cores=2.0)
    governor.set_enabled(False)
    assert governor.team(2) == 2
    governor.set_enabled(True)
    assert governor.team(2) == 1


def test_cgroup_quota_caps_the_cores(tmp_path):
    v2 = tmp_path / "cpu.max"
    v2.write_text("150000 100000\n")
    assert governor._quota(str(v2), str(tmp_path / "none")) == 1.5
    v2.write_text("max 100000\n")
    assert governor._quota(str(v2), str(tmp_path / "none")) is None
    v1 = tmp_path / "cpu.cfs_quota_us"
    v1.write_text("200000\n")
    (tmp_path / "cpu.cfs_period_us").write_text("100000\n")
    assert governor._quota(str(tmp_path / "none"), str(v1)) == 2.0


@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_results_do_not_depend_on_how_many_threads_the_governor_allows(monkeypatch, norm):
    """The row norms' dw/db are summed in chunks planned from the thread count set, not from the threads that run
    them: bit for bit the same with the whole team or with one thread left on a busy machine."""
    if mg.get_backend() != "numba" or mg.get_num_threads() < 2:
        pytest.skip("needs the numba backend with at least 2 threads")
    rng = np.random.default_rng(0)
    x, dy, w = rng.standard_normal((512, 256)), rng.standard_normal((512, 256)), rng.standard_normal(256)
    grads = []
    for team in (None, 1):
        if team is not None:
            monkeypatch.setattr(governor, "team", lambda requested: 1)
        xt, wt = mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)
        y = F.rms_norm(xt, (256,), weight=wt) if norm == "rms" else F.layer_norm(xt, (256,), weight=wt)
        y.backward(mg.tensor(dy))
        a = mg.ones(300, 400) @ mg.ones(400, 200)
        grads.append((xt.grad.numpy().copy(), wt.grad.numpy().copy(), a.numpy().copy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(got, want)
