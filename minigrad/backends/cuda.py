"""``minigrad.backends.cuda``: ``matmul.allow_tf32`` and the float32 matmul precision it stands for.

PyTorch ties the two: ``set_float32_matmul_precision('high')`` or ``'medium'`` allows TF32 matmuls,
``'highest'`` forbids them, and setting ``matmul.allow_tf32`` sets the precision to 'high' or 'highest'.
Both are recorded and change nothing: minigrad's float32 matmuls are NumPy's, in full float32 precision.
"""
import warnings

_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = {"value": "highest"}


def set_float32_matmul_precision(precision):
    """Record the float32 matmul precision ('highest', 'high' or 'medium'); computations are unchanged.
    Another value is ignored with a warning, as in PyTorch."""
    if precision not in _PRECISIONS:
        warnings.warn(f"set_float32_matmul_precision: precision must be one of {', '.join(_PRECISIONS)}, got "
                      f"{precision!r}; the setting is unchanged", stacklevel=2)
        return
    _matmul_precision["value"] = precision


def get_float32_matmul_precision():
    return _matmul_precision["value"]


class _Matmul:
    """``backends.cuda.matmul``: ``allow_tf32`` reads and sets the float32 matmul precision."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _matmul_precision["value"] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, allowed):
        _matmul_precision["value"] = "high" if allowed else "highest"


matmul = _Matmul()


def is_built():
    return False
