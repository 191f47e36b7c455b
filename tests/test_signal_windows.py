"""minigrad.signal.windows against PyTorch's OpInfo samples and reference inputs (sizes to 256, every shape
parameter), its error inputs, and the top-level ``*_window`` functions against PyTorch's."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_replay, torch_raises, torch_result
from .opinfo_util import check_error_inputs, compare_samples, resolve, samples

torch = torch_or_replay()

WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _samples_and_reference_inputs(op, torch):
    return samples(op) + list(op.reference_inputs("cpu", torch.float64))


def _kaiser_overflow(sample, torch):
    """kaiser(beta=100) in float32: a deliberate difference. PyTorch computes I0(100) ~ 1e42 in float32, which
    overflows (NaN and zeros); minigrad computes in float64 and returns the window."""
    return sample.kwargs.get("beta") == 100 and "dtype" not in sample.kwargs


def _found(group):
    """The samples and reference inputs of one comparison ``group``: "float64" (they name dtype=float64),
    "float32" (they name no dtype: float32 windows, which PyTorch computes in float32) or "kaiser overflow"
    (kaiser's overflowing float32 ones, compared in float64)."""
    def found(op, torch):
        listed = []
        for sample in _samples_and_reference_inputs(op, torch):
            if op.name.endswith("kaiser") and _kaiser_overflow(sample, torch):
                found_in = "kaiser overflow"
                sample = type(sample)(sample.input, args=sample.args, kwargs=dict(sample.kwargs, dtype=torch.float64))
            else:
                found_in = "float64" if sample.kwargs.get("dtype") == torch.float64 else "float32"
            if found_in == group:
                listed.append(sample)
        return listed
    return found


@pytest.mark.parametrize("name", WINDOWS)
def test_samples_and_reference_inputs(name):
    fn = resolve(f"signal.windows.{name}")
    assert fn is not None
    compared = compare_samples(f"signal.windows.{name}", fn, _found("float64"), rtol=1e-12, atol=1e-12)
    compared += compare_samples(f"signal.windows.{name}", fn, _found("float32"), rtol=2e-6, atol=2e-6)
    if name == "kaiser":
        compared += compare_samples("signal.windows.kaiser", fn, _found("kaiser overflow"), rtol=1e-10, atol=1e-300)
    assert compared >= 12


@pytest.mark.parametrize("name", WINDOWS)
def test_float32(name):
    compare_samples(f"signal.windows.{name}", resolve(f"signal.windows.{name}"),   # PyTorch computes in float32
                    lambda op, torch: samples(op, torch.float32), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", WINDOWS)
def test_error_inputs(name):
    """Each error input minigrad can express (it has no sparse layouts and no bfloat16) raises PyTorch's type."""
    def expressible(error, torch):
        kwargs = error.sample_input.kwargs
        return kwargs.get("dtype") != torch.bfloat16 and kwargs.get("layout", torch.strided) == torch.strided
    assert check_error_inputs(f"signal.windows.{name}", resolve(f"signal.windows.{name}"), expressible) >= 3


def test_requires_grad_and_dtype_keywords():
    w = mg.signal.windows.hann(5, dtype=mg.float64, requires_grad=True)
    assert w.requires_grad and w.dtype == mg.float64
    assert mg.signal.windows.kaiser(4).dtype == mg.get_default_dtype()


CALLS = [
    ("hann_window", (0,), {}), ("hann_window", (1,), {}), ("hann_window", (7,), {}), ("hann_window", (8, False), {}),
    ("hamming_window", (9,), {}), ("hamming_window", (6, False, 0.5), {}), ("hamming_window", (5, True, 0.5, 0.3), {}),
    ("blackman_window", (10,), {}), ("blackman_window", (7, False), {}),
    ("bartlett_window", (4,), {}), ("bartlett_window", (5, False), {}), ("bartlett_window", (1,), {}),
    ("kaiser_window", (6,), {}), ("kaiser_window", (7, False, 3.0), {}), ("kaiser_window", (1,), {}),
    ("hann_window", (6,), {"dtype": "float64"}), ("kaiser_window", (5, True, 8.0), {"dtype": "float64"}),
]


@pytest.mark.parametrize("name, args, kwargs", CALLS)
def test_top_level_windows(name, args, kwargs):
    want = torch_result(lambda torch: getattr(torch, name)(*args, **{k: getattr(torch, v) if k == "dtype" else v
                                                                      for k, v in kwargs.items()}), name, args, kwargs)
    mg_kwargs = {k: getattr(mg, v) if k == "dtype" else v for k, v in kwargs.items()}
    got = getattr(mg, name)(*args, **mg_kwargs)
    assert str(got.dtype) == str(want.dtype).rpartition(".")[2]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("call", [lambda lib: lib.hann_window(-1), lambda lib: lib.hann_window(3, dtype=lib.int64),
                                  lambda lib: lib.blackman_window(2.5), lambda lib: lib.kaiser_window(-2, True, 1.0)])
def test_top_level_errors(call):
    with pytest.raises(torch_raises(call).type):
        call(mg)
