"""``torch.utils.benchmark.Timer``: times a Python statement (a string, compiled with ``globals``, run by the
standard library's ``timeit``) with minigrad's thread count set to ``num_threads``, and returns a
``Measurement``. ``timeit(n)`` is one block of ``n`` runs after a warmup; ``blocked_autorange`` picks a block size
(runs per timer reading) by growing it tenfold until the timer's own overhead is negligible, then times blocks
until ``min_run_time`` has passed; ``adaptive_autorange`` also keeps going until the blocks agree (IQR / median
below ``threshold``) or ``max_run_time`` is spent.

Only Python statements: minigrad has no C++, so ``language="c++"`` and ``collect_callgrind`` raise."""
import enum
import textwrap
import timeit as _timeit_module

import numpy as np

from .measurement import Measurement, TaskSpec, set_torch_threads

__all__ = ["Timer", "timer", "Language"]

_LARGEST_BLOCK = 2147483647     # PyTorch stops growing the block before it passes a C int


def timer():
    """The default clock: ``timeit.default_timer`` (minigrad runs everything synchronously on the CPU, so there
    is no device to wait for)."""
    return _timeit_module.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _tidy(code):
    """Dedented, without the leading newline of a triple-quoted block or trailing whitespace."""
    code = textwrap.dedent(code)
    if code.startswith("\n"):
        code = code[1:]
    return code.rstrip()


class Timer:
    """Time ``stmt`` (a Python string) after ``setup``, with names from ``globals`` (``torch`` is minigrad unless
    given). ``label``, ``sub_label``, ``description`` and ``env`` only name the result, for its printout and for
    ``Compare`` (rows by ``sub_label``, columns by ``description``). ``num_threads`` is minigrad's thread count
    while timing (default 1, as in PyTorch); the previous count is restored afterwards. ``timer`` is the clock,
    called twice around each block."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        namespace = dict(globals or {})        # a copy: exec adds __builtins__, the statement may assign names
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("minigrad's Timer times Python statements only: minigrad has no C++ "
                                      "(language=Language.CPP is not supported)")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                             "be moved to `setup`.")
        if "torch" not in namespace:
            import minigrad
            namespace["torch"] = minigrad
        stmt, setup = _tidy(stmt), _tidy(setup)
        self._globals = namespace
        self._language = Language.PYTHON
        self._timer = _timeit_module.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _block(self, number):
        """Seconds for ``setup`` then ``number`` runs of ``stmt`` (setup untimed); at least 1 ns."""
        return max(self._timer.timeit(number), 1e-9)

    def _result(self, number, times):
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number=1000000):
        """``timeit.Timer.timeit``: one block of ``number`` runs, after a warmup block of ``max(number // 100, 2)``
        runs."""
        with set_torch_threads(self._task_spec.num_threads):
            self._block(max(int(number // 100), 2))
            return self._result(number, [self._block(number)])

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time):
        """Runs per block: the timer's overhead is the median of five empty blocks; start at 1 run and multiply by
        ten until a block takes at least ``min_run_time / 1000`` with the overhead at most 1e-4 of it, or takes
        more than ``min_run_time`` (or would pass 2**31 - 1 runs)."""
        empty = sorted(self._block(0) for _ in range(5))
        overhead = float(np.float32(empty[2]))            # PyTorch keeps it as a float32
        number = 1
        while True:
            took = self._block(number)
            if overhead / took <= 1e-4 and took >= min_run_time / 1000:
                return number
            if took > min_run_time or number * 10 > _LARGEST_BLOCK:
                return number
            number *= 10

    def _blocks(self, number, min_run_time, enough, max_run_time=None, callback=None):
        """Time blocks of ``number`` runs until at least ``min_run_time`` has been spent and ``enough(times)``
        agrees, or (if given) more than ``max_run_time`` has been spent; ``callback(number, seconds)`` after
        each."""
        times, spent = [], 0.0
        while True:
            took = self._block(number)
            times.append(took)
            spent += took
            if callback:
                callback(number, took)
            done = enough(times)
            if max_run_time and spent > max_run_time:
                return times
            if spent >= min_run_time and done:
                return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a fixed size (see ``_block_size``) until their total time reaches ``min_run_time``;
        ``callback(number, seconds)`` is called after each block."""
        with set_torch_threads(self._task_spec.num_threads):
            number = self._block_size(min_run_time)
            times = self._blocks(number, min_run_time, lambda times: True, callback=callback)
        return self._result(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Like ``blocked_autorange`` (block size chosen for 0.05 s) but, once ``min_run_time`` is spent, stop only
        when there are more than 3 blocks and IQR / median < ``threshold``, or when more than ``max_run_time`` has
        been spent."""
        def steady(times):
            return len(times) > 3 and self._result(number, times).meets_confidence(threshold=threshold)

        with set_torch_threads(self._task_spec.num_threads):
            number = self._block_size(0.05)
            times = self._blocks(number, min_run_time, steady, max_run_time=max_run_time, callback=callback)
        return self._result(number, times)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True, retain_out_file=False):
        raise NotImplementedError("Timer.collect_callgrind is not supported by minigrad (no Valgrind/Callgrind "
                                  "instruction counting); use blocked_autorange or adaptive_autorange")
