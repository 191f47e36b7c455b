"""``torch.utils.benchmark`` for Python statements: ``Timer`` (``timeit``, ``blocked_autorange``,
``adaptive_autorange``), its result ``Measurement`` (with ``TaskSpec``), ``Compare`` tables, and the helpers
``select_unit``, ``unit_to_english``, ``trim_sigfig``, ``ordered_unique``, ``set_torch_threads``. No C++ timing,
Callgrind or fuzzers (``Fuzzer``, ``FuzzedTensor``)."""
from .compare import Colorize, Compare
from .measurement import (Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig,
                          unit_to_english)
from .timer import Language, Timer, timer

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "ordered_unique", "select_unit",
           "set_torch_threads", "timer", "trim_sigfig", "unit_to_english"]
