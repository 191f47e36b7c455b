"""``minigrad.cpu.amp``: PyTorch's older spelling of ``minigrad.amp.autocast("cpu", ...)``, deprecated there
with a FutureWarning, as here."""
import warnings

from .. import amp as _amp
from .. import dtypes


def autocast(enabled=True, dtype=dtypes.bfloat16, cache_enabled=True):
    warnings.warn("`minigrad.cpu.amp.autocast(args...)` is deprecated. Please use `minigrad.amp.autocast('cpu', "
                  "args...)` instead.", FutureWarning, stacklevel=2)
    return _amp.autocast("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
