"""Window functions: ``minigrad.signal.windows`` (PyTorch's ``torch.signal.windows``, SciPy's definitions) and
the top-level ``hann_window``, ``hamming_window``, ``blackman_window``, ``bartlett_window``, ``kaiser_window``.

A window of M points samples a function at n = 0 .. M-1 over a period N: N = M - 1 for a symmetric window
(``sym=True``, for filter design; ``periodic=False`` in the ``*_window`` forms), N = M for a periodic one
(spectral analysis: the symmetric window of M + 1 points without its last point). Most are cosine sums,

    w_n = sum_i (-1)^i a_i cos(2 pi i n / N)        (hann: a = [1/2, 1/2], hamming: [0.54, 0.46], ...)

Values are computed in float64 with NumPy and returned in ``dtype`` as leaves (``requires_grad`` as asked).
"""
import numpy as np

from .._checks import is_int, type_name
from ..creation import dtype_or, new_tensor
from ..dtypes import get_default_dtype, is_floating_point


# --------------------------------------------------------------------------- checks, the shared sample grid
def _check(fname, M, dtype, layout):
    """PyTorch's checks of ``torch.signal.windows``: a non-negative int length, a strided float32/float64 result."""
    if not is_int(M):
        raise TypeError(f"{fname}(): argument 'M' must be int, not {type_name(M)}")
    if M < 0:
        raise ValueError(f"{fname} requires non-negative window length, got M={M}")
    if layout is not None and str(layout).rpartition(".")[2] != "strided":
        raise ValueError(f"{fname} is implemented for strided tensors only, got: {layout}")
    dtype = get_default_dtype() if dtype is None else dtype_or(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"{fname} expects float32 or float64 dtypes, got: minigrad.{dtype.name}")
    return dtype


def _period(M, sym):
    """N: M - 1 for a symmetric window, M for a periodic one (a single point is symmetric either way)."""
    return M - 1 if sym or M <= 1 else M


def _window(values, dtype, device, requires_grad):
    return new_tensor(np.asarray(values, np.float64).astype(dtype), device, requires_grad)


def _cosine_sum(M, a, N):
    """sum_i (-1)^i a_i cos(2 pi i n / N) at n = 0 .. M-1 (ones for a single point, where N = 0)."""
    if M == 1:
        return np.ones(1)
    n = np.arange(M)
    return sum((-1) ** i * a_i * np.cos(2 * np.pi * i * n / N) for i, a_i in enumerate(a))


def _bartlett(M, N):
    """The triangle 1 - |2n/N - 1|."""
    return np.ones(1) if M == 1 else 1 - np.abs(2 * np.arange(M) / N - 1)


def _kaiser(M, N, beta):
    """I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta), I0 NumPy's."""
    if M == 1:
        return np.ones(1)
    r = 2 * np.arange(M) / N - 1
    return np.i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / np.i0(beta)


# --------------------------------------------------------------------------- torch.signal.windows
def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine sum with coefficients ``a`` (a list or tuple)."""
    dtype = _check("general_cosine", M, dtype, layout)
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return _window(_cosine_sum(M, a, _period(M, sym)), dtype, device, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N)."""
    dtype = _check("general_hamming", M, dtype, layout)
    return _window(_cosine_sum(M, (alpha, 1.0 - alpha), _period(M, sym)), dtype, device, requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """0.54 - 0.46 cos(2 pi n / N)."""
    dtype = _check("hamming", M, dtype, layout)
    return _window(_cosine_sum(M, (0.54, 0.46), _period(M, sym)), dtype, device, requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """1/2 - 1/2 cos(2 pi n / N) = sin^2(pi n / N)."""
    dtype = _check("hann", M, dtype, layout)
    return _window(_cosine_sum(M, (0.5, 0.5), _period(M, sym)), dtype, device, requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    dtype = _check("blackman", M, dtype, layout)
    return _window(_cosine_sum(M, (0.42, 0.5, 0.08), _period(M, sym)), dtype, device, requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window (a = 0.3635819, 0.4891775, 0.1365995, 0.0106411)."""
    dtype = _check("nuttall", M, dtype, layout)
    a = (0.3635819, 0.4891775, 0.1365995, 0.0106411)
    return _window(_cosine_sum(M, a, _period(M, sym)), dtype, device, requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangle 1 - |2n/N - 1|."""
    dtype = _check("bartlett", M, dtype, layout)
    return _window(_bartlett(M, _period(M, sym)), dtype, device, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The sine window sin(pi (n + 1/2) / N') with N' = M (symmetric) or M + 1 (periodic), as SciPy's."""
    dtype = _check("cosine", M, dtype, layout)
    width = M + 1 if not sym and M > 1 else M
    return _window(np.sin(np.pi * (np.arange(M) + 0.5) / max(width, 1)), dtype, device, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-|n - center| / tau), ``center`` N/2 by default (and only then for a symmetric window)."""
    dtype = _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if center is None:
        center = _period(M, sym) / 2.0
    return _window(np.exp(-np.abs(np.arange(M) - center) / tau), dtype, device, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-(n - N/2)^2 / (2 std^2))."""
    dtype = _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    k = np.arange(M) - _period(M, sym) / 2.0
    return _window(np.exp(-k * k / (2.0 * std * std)), dtype, device, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta)."""
    dtype = _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window(_kaiser(M, _period(M, sym), float(beta)), dtype, device, requires_grad)


# --------------------------------------------------------------------------- torch.*_window
def _check_length(fname, window_length, dtype):
    """The checks of PyTorch's ``*_window`` functions (RuntimeError, unlike ``signal.windows``' ValueError)."""
    if not is_int(window_length):
        raise TypeError(f"{fname}(): argument 'window_length' (position 1) must be int, not "
                        f"{type_name(window_length)}")
    if window_length < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got window_length={window_length}")
    dtype = dtype_or(dtype)
    if not is_floating_point(dtype):                          # bfloat16 too (NumPy's kind "V")
        raise RuntimeError(f"{fname} expects floating point dtypes, got: minigrad.{dtype.name}")
    return dtype


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    """1/2 - 1/2 cos(2 pi n / N), N = window_length if ``periodic`` else window_length - 1."""
    dtype = _check_length("hann_window", window_length, dtype)
    M = window_length
    return _window(_cosine_sum(M, (0.5, 0.5), _period(M, not periodic)), dtype, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """alpha - beta cos(2 pi n / N)."""
    dtype = _check_length("hamming_window", window_length, dtype)
    M = window_length
    return _window(_cosine_sum(M, (alpha, beta), _period(M, not periodic)), dtype, device, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    dtype = _check_length("blackman_window", window_length, dtype)
    M = window_length
    return _window(_cosine_sum(M, (0.42, 0.5, 0.08), _period(M, not periodic)), dtype, device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """The triangle 1 - |2n/N - 1|."""
    dtype = _check_length("bartlett_window", window_length, dtype)
    M = window_length
    return _window(_bartlett(M, _period(M, not periodic)), dtype, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta)."""
    dtype = _check_length("kaiser_window", window_length, dtype)
    M = window_length
    return _window(_kaiser(M, _period(M, not periodic), float(beta)), dtype, device, requires_grad)


__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]
