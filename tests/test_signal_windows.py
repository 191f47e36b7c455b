"""minigrad.signal.windows against PyTorch's OpInfo samples and reference inputs (sizes to 256, every shape
parameter), its error inputs, and the top-level ``*_window`` functions against PyTorch's."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_replay, torch_or_skip
from .opinfo_util import assert_raises_like, compare_sample, convert_sample, error_inputs, opinfos, resolve, samples

torch = torch_or_replay()

WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


@pytest.mark.parametrize("name", WINDOWS)
def test_samples_and_reference_inputs(name):
    (op,) = opinfos(f"signal.windows.{name}")
    fn = resolve(op)
    assert fn is not None
    found = samples(op) + list(op.reference_inputs("cpu", torch.float64))
    assert len(found) >= 12
    for sample in found:
        if name == "kaiser" and sample.kwargs.get("beta") == 100 and "dtype" not in sample.kwargs:
            # deliberate difference: PyTorch computes I0(100) ~ 1e42 in float32, which overflows (NaN and zeros);
            # minigrad computes in float64 and returns the window (checked against float64 PyTorch below)
            want = torch.signal.windows.kaiser(sample.input, dtype=torch.float64, **sample.kwargs)
            got = fn(sample.input, dtype=mg.float64, **sample.kwargs)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-300)
            continue
        # the reference inputs name no dtype: float32 windows, which PyTorch computes in float32
        tol = 1e-12 if sample.kwargs.get("dtype") == torch.float64 else 2e-6
        compare_sample(op, sample, fn, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", WINDOWS)
def test_float32(name):
    (op,) = opinfos(f"signal.windows.{name}")
    for sample in samples(op, torch.float32):
        compare_sample(op, sample, resolve(op), rtol=2e-6, atol=2e-6)   # PyTorch computes in float32


@pytest.mark.parametrize("name", WINDOWS)
def test_error_inputs(name):
    """Each error input minigrad can express (it has no sparse layouts and no bfloat16) raises PyTorch's type."""
    (op,) = opinfos(f"signal.windows.{name}")
    checked = 0
    for error in error_inputs(op):
        kwargs = error.sample_input.kwargs
        if kwargs.get("dtype") == torch.bfloat16 or kwargs.get("layout", torch.strided) != torch.strided:
            continue
        assert_raises_like(op, error, resolve(op))
        checked += 1
    assert checked >= 3


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
    th_kwargs = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    mg_kwargs = {k: getattr(mg, v) if k == "dtype" else v for k, v in kwargs.items()}
    want = getattr(torch, name)(*args, **th_kwargs)
    got = getattr(mg, name)(*args, **mg_kwargs)
    assert str(got.dtype) == str(want.dtype).rpartition(".")[2]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("call", [lambda lib: lib.hann_window(-1), lambda lib: lib.hann_window(3, dtype=lib.int64),
                                  lambda lib: lib.blackman_window(2.5), lambda lib: lib.kaiser_window(-2, True, 1.0)])
def test_top_level_errors(call):
    with pytest.raises(Exception) as th:
        call(torch)
    with pytest.raises(th.type):
        call(mg)
