"""How many threads minigrad's parallel work uses now: the cores this process may use, less the cores other
processes are keeping busy.

A parallel kernel splits its work into equal parts, one per thread, and waits for the last. On a machine
where another process is busy (a browser on a laptop, a second job on a shared server), one of minigrad's
threads shares its core with that process and gets half of it, so every kernel waits for that half-speed part:
two threads then run slower than one. So before each parallel kernel minigrad asks ``team(requested)``:

* ``cores()``: the CPUs this process may run on (``os.sched_getaffinity``), capped by a cgroup CPU quota
  (containers: ``/sys/fs/cgroup/cpu.max``, or cgroup v1's ``cpu.cfs_quota_us``);
* ``busy_elsewhere()``: the cores' worth of CPU time other processes used lately, measured every
  ``INTERVAL`` seconds as the whole machine's busy time (``/proc/stat``, steal time included) less this
  process's own (``time.process_time``), over the wall time between the two readings;
* the team is ``requested`` (``set_num_threads``, by default all the cores) but at most the cores left
  free, rounded to the nearest whole core, and at least one: minigrad never runs below its one-thread speed.

With one team member the kernels run their serial twins on the calling thread, so numba's workers are not
woken, stop spinning after their brief spin, and leave the busy core alone. ``MINIGRAD_ADAPTIVE_THREADS=0``
turns the adaptation off (the team is then always ``requested``). Where ``/proc/stat`` does not exist
(macOS, Windows) nothing is measured and the team is ``requested``.
"""
import math
import os
import threading
import time

INTERVAL = 0.25          # seconds between two readings of the machine's load
_STAT = "/proc/stat"


def _quota(path_v2="/sys/fs/cgroup/cpu.max", path_v1="/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
    """The cgroup CPU quota in CPUs (a float), or None when there is none."""
    try:
        with open(path_v2) as f:
            quota, period = f.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(path_v1) as f:
            quota = int(f.read())
        with open(os.path.join(os.path.dirname(path_v1), "cpu.cfs_period_us")) as f:
            period = int(f.read())
        return None if quota <= 0 else quota / period
    except (OSError, ValueError):
        return None


def cores():
    """The CPUs this process may use: its affinity, capped by a cgroup quota (rounded up, at least 1)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:              # not on Linux
        n = os.cpu_count() or 1
    quota = _quota()
    if quota is not None:
        n = min(n, max(1, math.ceil(quota)))
    return max(1, n)


def _machine_busy_seconds():
    """Seconds of CPU time the whole machine has spent busy since boot (all CPUs; idle and iowait excluded), or
    None without /proc/stat."""
    try:
        with open(_STAT) as f:
            fields = f.readline().split()
    except OSError:
        return None
    ticks = [int(v) for v in fields[1:]]          # user nice system idle iowait irq softirq steal guest guest_nice
    busy = sum(ticks[:8]) - ticks[3] - ticks[4]   # guest time is already inside user time
    return busy / _HZ


try:
    _HZ = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):
    _HZ = 100


class _Load:
    """The latest measure of the CPU time other processes use (in cores), refreshed at most every INTERVAL."""

    def __init__(self):
        self.lock = threading.Lock()
        self.when = None                   # (wall, machine busy, own cpu) at the last reading
        self.others = 0.0
        self.next_check = 0.0

    def busy_elsewhere(self, now):
        if now < self.next_check:
            return self.others
        with self.lock:
            if now < self.next_check:
                return self.others
            machine = _machine_busy_seconds()
            if machine is None:
                self.next_check = float("inf")
                return 0.0
            own = time.process_time()
            if self.when is not None:
                wall = now - self.when[0]
                if wall > 0:
                    others = (machine - self.when[1] - (own - self.when[2])) / wall
                    self.others = max(0.0, others)
            self.when = (now, machine, own)
            self.next_check = now + INTERVAL
            return self.others


_load = _Load()
_CORES = cores()
_ENABLED = os.environ.get("MINIGRAD_ADAPTIVE_THREADS", "1").strip() not in ("0", "false", "False", "no")


def busy_elsewhere():
    """The cores' worth of CPU time other processes used over the last ``INTERVAL`` or so (0 without /proc/stat)."""
    return _load.busy_elsewhere(time.monotonic())


def team(requested):
    """How many threads a parallel kernel should use now: ``requested``, but no more than the cores other
    processes leave free (rounded), and at least 1 (see the module docstring)."""
    if requested <= 1 or not _ENABLED:
        return requested
    free = _CORES - _load.busy_elsewhere(time.monotonic())
    return max(1, min(requested, int(free + 0.5)))


def set_enabled(flag):
    """Turn the adaptation on or off for the process (``MINIGRAD_ADAPTIVE_THREADS`` sets the initial state)."""
    global _ENABLED
    _ENABLED = bool(flag)


def is_enabled():
    return _ENABLED
