"""``torch.utils.benchmark``'s result types and helpers: ``TaskSpec`` (what was timed: the statement and its labels),
``Measurement`` (the times of one statement, with their statistics and PyTorch's printed layout), and ``select_unit``,
``unit_to_english``, ``trim_sigfig``, ``ordered_unique``, ``set_torch_threads``.

PyTorch computes a few of these figures in float32 (its ``torch.tensor`` of a Python float; float64 for an
``np.float64``): the unit's choice, the significant figures and ``trim_sigfig``; NumPy does the same here in the
same precision, so the digits printed agree."""
import collections
import contextlib
import dataclasses
import math
import textwrap

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MOST_FIGURES = 4                 # significant figures claimed at most
_SMALLEST_INTERVAL = 25e-9        # a confidence interval below 25 ns is not believed
_WARN_SPREAD = 0.1                # IQR / median above which a Measurement warns
_GROSS_SPREAD = 0.25              # ... and above which the warning says "significant environmental influence"

_UNITS = (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3))
_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


def _torch_dtype(*values):
    """The precision PyTorch's ``torch.tensor(values)`` computes in: float32 for Python numbers, a NumPy scalar's
    own float type (float64 if any value is an ``np.float64``)."""
    kinds = [v.dtype for v in values if isinstance(v, np.floating)]
    if np.dtype(np.float64) in kinds:
        return np.float64
    return np.float32


def _log10_f32(x):
    """log10(x) in the precision PyTorch computes it in (``_torch_dtype``), correctly rounded: from the C library's
    float64 log10, rounded once. NumPy's SIMD float32 log10 is 1 ulp off on some CPUs (on an AVX-512 Xeon
    log10(float32(1e-6)) is -6.0000005, not -6.0), which put a time of exactly 1 us in the nanosecond band."""
    kind = _torch_dtype(x)
    v = float(kind(x))
    if v > 0 and math.isfinite(v):
        return float(kind(math.log10(v)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log10(kind(x)))         # 0, negative, inf, nan: as NumPy (and PyTorch) give them


def select_unit(t):
    """The unit to print the time ``t`` (seconds) in, and its size in seconds: ``("us", 1e-6)`` for 1e-6 to
    1e-3 and so on (``"s"`` from one second up)."""
    band = int(_log10_f32(t) // 3)     # -3: ns, -2: us, -1: ms
    if -3 <= band <= -1:
        return _UNITS[band + 3]
    return "s", 1


def unit_to_english(u):
    """``"us"`` -> ``"microsecond"`` (likewise ``ns``, ``ms``, ``s``)."""
    return _ENGLISH[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1), in float32 as PyTorch's is."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    digits = math.ceil(_log10_f32(abs(x)))
    step = 10 ** (digits - n)
    kind = _torch_dtype(x / step)
    return float(np.round(kind(x / step)) * kind(step))


def ordered_unique(elements):
    """The distinct elements in the order they first appear."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the ``with`` block with minigrad's thread count set to ``n``, then put the previous count back."""
    from ... import get_num_threads, set_num_threads
    before = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(before)


def _indented(text):
    return textwrap.indent(text, "  ")


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What a ``Timer`` times (everything but its globals): the statement, its setup and the labels that
    ``Compare`` groups by."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self):
        """``label`` (or a one-line ``stmt``) followed by ``": sub_label"``; a multi-line ``stmt`` is shown
        indented under ``"stmt:"``."""
        sub = self.sub_label
        if self.label is not None or "\n" not in self.stmt:
            head = self.stmt if self.label is None else self.label
            return f"{head}: {sub}" if sub else head
        return ("stmt: (" + sub + ")" if sub else "stmt:") + "\n" + _indented(self.stmt)

    def setup_str(self):
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + _indented(self.setup)
        return "setup: " + self.setup

    def summarize(self):
        """The title, description and setup, one per line (a multi-line part is followed by a blank line)."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASK_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(ordered, q):
    """Linear interpolation between the order statistics around ``q * (n - 1)``, in ``torch.lerp``'s form."""
    where = q * (len(ordered) - 1)
    below = math.floor(where)
    w = where - below
    lo, hi = ordered[below], ordered[min(below + 1, len(ordered) - 1)]
    return lo + w * (hi - lo) if w < 0.5 else hi - (hi - lo) * (1 - w)


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of one statement: ``raw_times[i]`` is the time of one block of ``number_per_run`` runs.
    Statistics are per run (``times``); fields of ``task_spec`` read through (``m.label``, ``m.num_threads``).
    ``metadata`` is the user's, untouched."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self):
        self._stats = None        # computed on first use: (sorted times, mean, p25, median, p75, warnings)

    def __getattr__(self, name):
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_stats"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._stats = None

    # -- statistics (per run) ------------------------------------------------------------------------------------
    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    def _computed(self):
        if self._stats is None:
            if not self.raw_times:
                return (), -1.0, -1.0, -1.0, -1.0, ()
            ordered = sorted(self.times)
            p25, median, p75 = (_quantile(ordered, q) for q in (0.25, 0.5, 0.75))
            mean = float(np.mean(np.asarray(ordered, dtype=np.float64)))
            warnings = ()
            spread = (p75 - p25) / median
            if not spread < _WARN_SPREAD:
                cause = ("This suggests significant environmental influence." if not spread < _GROSS_SPREAD
                         else "This could indicate system fluctuation.")
                warnings = (f"  WARNING: Interquartile range is {spread * 100:.1f}% of the median measurement.\n"
                            f"           {cause}",)
            self._stats = (tuple(ordered), mean, p25, median, p75, warnings)
        return self._stats

    @property
    def median(self):
        return self._computed()[3]

    @property
    def mean(self):
        return self._computed()[1]

    @property
    def iqr(self):
        stats = self._computed()
        return stats[4] - stats[2]

    @property
    def significant_figures(self):
        """A rough count of trustworthy digits (1 to 4): the median over a 90% confidence interval (z = 1.645)
        estimated from the interquartile points' spread. ``Compare.trim_significant_figures`` uses it."""
        ordered = self._computed()[0]
        n = len(ordered)
        middle = ordered[n // 4:math.ceil(np.float32(3 * n / 4))]
        spread = float(np.std(np.asarray(middle, dtype=_torch_dtype(*middle))))
        interval = max(1.645 * spread / float(np.sqrt(np.float32(len(middle)))), _SMALLEST_INTERVAL)
        figures = math.floor(_log10_f32(self.median / interval))
        return min(max(figures, 1), _MOST_FIGURES)

    @property
    def has_warnings(self):
        return bool(self._computed()[5])

    def meets_confidence(self, threshold=_WARN_SPREAD):
        """Whether IQR / median is below ``threshold``."""
        return self.iqr / self.median < threshold

    # -- naming --------------------------------------------------------------------------------------------------
    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        ordered, _, p25, median, p75, warnings = self._computed()
        n = len(ordered)
        unit, scale = select_unit(median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {(p75 - p25) / scale:.2f} {unit} ({p25 / scale:.2f} to {p75 / scale:.2f})")
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.extend(warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct ``task_spec`` (in first-seen order) holding all its replicates' per-run
        times (``number_per_run=1``; metadata dropped)."""
        pooled = collections.defaultdict(list)
        for m in measurements:
            pooled[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
                for spec, times in pooled.items()]
