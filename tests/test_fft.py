"""minigrad.fft against PyTorch's OpInfo samples (forward, dtypes, float64 gradients, error inputs), complex
gradients of complex outputs, finite differences of complex-to-real compositions, and a mutant."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.fft as mfft

from .mirror import torch_or_replay, torch_raises, torch_result
from .opinfo_util import (check_error_inputs, compare_complex_gradients, compare_sample, compare_samples, opinfos,
                          resolve, samples)

torch = torch_or_replay()

NAMES = ["fft.fft", "fft.ifft", "fft.fft2", "fft.ifft2", "fft.fftn", "fft.ifftn", "fft.rfft", "fft.irfft",
         "fft.rfft2", "fft.irfft2", "fft.rfftn", "fft.irfftn", "fft.hfft", "fft.ihfft", "fft.hfft2", "fft.ihfft2",
         "fft.hfftn", "fft.ihfftn", "fft.fftshift", "fft.ifftshift"]


def _op(name):
    (op,) = opinfos(name)
    return op


REAL_ONLY = ("fft.rfft", "fft.rfft2", "fft.rfftn", "fft.ihfft", "fft.ihfft2", "fft.ihfftn")


@pytest.mark.parametrize("name, dtype", [(n, d) for n in NAMES for d in ("float64", "complex128")
                                         if d == "float64" or n not in REAL_ONLY])
def test_opinfo_samples(name, dtype):
    fn = resolve(name)
    assert fn is not None, f"minigrad has no {name}"
    _, compared_complex = compare_samples(name, fn, lambda op, torch: samples(op, getattr(torch, dtype)), rtol=1e-10,
                                          atol=1e-10, grad_rtol=1e-9, grad_atol=1e-9, complex_gradients=True)
    complex_out = name not in ("fft.irfft", "fft.irfft2", "fft.irfftn", "fft.hfft", "fft.hfft2", "fft.hfftn")
    if complex_out and (dtype == "complex128" or "shift" not in name):
        assert compared_complex, "no complex gradient was compared"


@pytest.mark.parametrize("name", ["fft.fft", "fft.rfft2", "fft.irfftn", "fft.hfft", "fft.ihfftn"])
def test_single_precision_dtypes(name):
    """float32 in, complex64 (or float32) out, as PyTorch; values to float32 accuracy."""
    compare_samples(name, resolve(name), lambda op, torch: samples(op, torch.float32, requires_grad=False, limit=3),
                    rtol=1e-4, atol=1e-4)


def test_integer_input_is_transformed_in_the_default_dtype():
    x = np.arange(6)
    assert mfft.fft(mg.tensor(x)).dtype == mg.complex64
    assert mfft.irfft(mg.tensor(x)).dtype == mg.float32
    np.testing.assert_allclose(mfft.rfft(mg.tensor(x)).numpy(), np.fft.rfft(x), rtol=1e-6)


@pytest.mark.parametrize("name", [n for n in NAMES if "shift" not in n])
def test_error_inputs(name):
    assert check_error_inputs(name, resolve(name))


@pytest.mark.parametrize("call, error", [
    (lambda x, z: mfft.fft(x, n=0), RuntimeError),
    (lambda x, z: mfft.fft(x, norm="bad"), RuntimeError),
    (lambda x, z: mfft.fft(x, dim=2), IndexError),
    (lambda x, z: mfft.fftn(x, s=(3,), dim=(0, 1)), RuntimeError),
    (lambda x, z: mfft.fftn(x, dim=(0, 0)), RuntimeError),
    (lambda x, z: mfft.fftn(x, s=(2, 3, 4)), RuntimeError),
    (lambda x, z: mfft.rfft(z), RuntimeError),
    (lambda x, z: mfft.ihfft(z), RuntimeError),
    (lambda x, z: mfft.irfft(x[:, :1]), RuntimeError),
    (lambda x, z: mfft.fft(x.half()), RuntimeError),
    (lambda x, z: mfft.fft(x, n=3.5), TypeError),
    (lambda x, z: mfft.fftfreq(5, dtype=mg.int64), RuntimeError),
])
def test_bad_arguments_raise_pytorchs_exception(call, error):
    """Each raises in PyTorch too (the same call on torch tensors), with the same exception type."""
    x, z = np.random.default_rng(0).standard_normal((2, 4, 5))
    with pytest.raises(error):
        call(mg.tensor(x), mg.tensor(z + 1j * x))
    theirs = torch_raises(lambda torch: _on_torch(call, torch)(torch.tensor(x), torch.tensor(z + 1j * x)), x, z)
    assert issubclass(theirs.type, error), f"PyTorch raises {theirs!r}"


def _on_torch(call, torch):
    """``call`` with ``mfft``/``mg`` swapped for ``torch.fft``/``torch`` (the same lambda, PyTorch's names)."""
    import types
    globals_ = dict(call.__globals__, mfft=torch.fft, mg=torch)
    return types.FunctionType(call.__code__, globals_)


@pytest.mark.parametrize("n, d, dtype", [(5, 1.0, None), (6, 0.1, "float64"), (0, 1.0, None), (1, 2.0, "float64")])
def test_fftfreq_rfftfreq(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(mfft, name)(n, d, dtype=getattr(mg, dtype) if dtype else None)
        want = torch_result(lambda torch: getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype) if dtype else None),
                            name, n, d, dtype)
        assert str(got.dtype) == str(want.dtype).rpartition(".")[2]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert mfft.fftfreq(4, requires_grad=True).requires_grad


# --------------------------------------------------------------------------- finite differences, double backward
def _complex_input(shape, seed=0):
    """A real float64 leaf (..., 2) and the complex tensor it views: gradcheck perturbs real numbers."""
    pairs = mg.tensor(np.random.default_rng(seed).standard_normal(shape + (2,)), requires_grad=True)
    return pairs


COMPOSITIONS = {
    # real -> complex -> real
    "abs rfft": (lambda x: mfft.rfft(x, n=7, norm="ortho").abs(), (2, 6), False),
    "irfft of rfft times a filter": (lambda x: mfft.irfft(mfft.rfft(x) * mg.tensor(np.linspace(0.5, 2, 4)), n=7),
                                     (3, 7), False),
    "hfft2": (lambda z: mfft.hfft2(mg.view_as_complex(z), s=(3, 6)), (3, 4), True),
    "irfftn, odd length": (lambda z: mfft.irfftn(mg.view_as_complex(z), s=(4, 5), norm="forward"), (3, 4), True),
    "real part of ifftn": (lambda z: mg.view_as_real(mfft.ifftn(mg.view_as_complex(z), s=(5, 2))), (4, 3), True),
    "ihfft then irfft": (lambda x: mfft.irfft(mfft.ihfft(x), n=6), (2, 6), False),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_gradcheck_complex_to_real(name):
    fn, shape, is_complex = COMPOSITIONS[name]
    x = _complex_input(shape) if is_complex else mg.tensor(np.random.default_rng(0).standard_normal(shape),
                                                          requires_grad=True)
    assert mg.gradcheck(fn, (x,), eps=1e-6, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("name", ["abs rfft", "hfft2", "irfftn, odd length"])
def test_gradgradcheck(name):
    fn, shape, is_complex = COMPOSITIONS[name]
    x = _complex_input(shape, seed=2) if is_complex else mg.tensor(np.random.default_rng(2).standard_normal(shape),
                                                                  requires_grad=True)
    if name == "abs rfft":
        fn = (lambda f: lambda x: f(x) ** 2)(fn)    # |.| has a kink at 0; its square is smooth
    assert mg.gradgradcheck(fn, (x,), atol=1e-6, rtol=1e-5)


def test_mutant_without_hermitian_doubling_is_caught(monkeypatch):
    """C2R's backward without PyTorch's doubling of the mirrored bins: finite differences and PyTorch both
    disagree with it."""
    fn, shape, _ = COMPOSITIONS["irfftn, odd length"]
    x = _complex_input(shape, seed=3)
    assert mg.gradcheck(fn, (x,), atol=1e-7, rtol=1e-6)
    monkeypatch.setattr(mfft, "_hermitian_weights", lambda half, n_last, dim, ndim, dtype: np.ones(1, dtype))
    assert not mg.gradcheck(fn, (x,), atol=1e-7, rtol=1e-6, raise_exception=False)
    with pytest.raises(AssertionError, match="gradient"):
        compare_samples("fft.irfft", resolve("fft.irfft"))


def test_inputs_are_not_modified():
    x = mg.tensor(np.random.default_rng(4).standard_normal((3, 5)), requires_grad=True)
    before = x.detach().numpy().copy()
    for f in (mfft.fft, mfft.rfft, mfft.irfft, mfft.hfft, mfft.ihfft, mfft.fftshift):
        y = f(x)
        y.backward(mg.tensor(np.ones(y.shape, y.dtype)))
    np.testing.assert_array_equal(x.detach().numpy(), before)


# --------------------------------------------------------------------------- stft, istft
def _fresh_leaves(sample):
    """``sample`` with every tensor a fresh leaf (same values and requires_grad). istft's last sample passes a
    window made as a no-grad view of a complex leaf, for which PyTorch's autograd returns no gradient at all;
    a fresh leaf of the same values gets PyTorch's (correct, finite-difference-checked) gradient."""
    from torch.testing._internal.opinfo.core import SampleInput

    def fresh(t):
        return t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t
    return SampleInput(fresh(sample.input), args=tuple(fresh(a) for a in sample.args),
                       kwargs={k: fresh(v) for k, v in sample.kwargs.items()})


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name, dtype", [("stft", "float64"), ("stft", "complex128"), ("istft", "complex128")])
def test_stft_istft_opinfo_samples(name, dtype):
    (op,) = opinfos(name)
    compared_complex = 0
    for sample in samples(op, getattr(torch, dtype)):
        sample = _fresh_leaves(sample)
        for fn in (resolve(op), resolve(op, "method")):
            compare_sample(op, sample, fn, rtol=1e-10, atol=1e-10, grad_rtol=1e-9, grad_atol=1e-9)
        compared_complex += compare_complex_gradients(op, sample, resolve(op))
    assert compared_complex >= (2 if name == "istft" else 5)   # istft is real unless return_complex


@pytest.mark.parametrize("count, size, hop", [(5, 8, 3), (7, 6, 6), (4, 5, 1), (1, 8, 4), (3, 4, 7)])
def test_overlap_add(count, size, hop):
    """The blockwise overlap-add against its definition, one frame element at a time (np.add.at)."""
    from minigrad.ops.spectral import overlap_add
    frames = np.random.default_rng(11).standard_normal((2, count, size))
    positions = np.arange(count)[:, None] * hop + np.arange(size)
    want = np.zeros((2, size + hop * (count - 1)))
    np.add.at(want, (Ellipsis, positions), frames)
    np.testing.assert_allclose(overlap_add(frames, hop), want, rtol=1e-14, atol=1e-14)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("n_fft", [1, 2, 9, 16])
def test_stft_pad_modes(mode, n_fft):
    """center=True pads n_fft//2 points at each end in ``pad_mode``: values and gradients of a random complex
    upstream, against PyTorch."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 20))
    a, b = torch.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
    want = torch.stft(a, n_fft, 2, pad_mode=mode, return_complex=True)
    got = mg.stft(b, n_fft, 2, pad_mode=mode, return_complex=True)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    up = rng.standard_normal(want.shape) + 1j * rng.standard_normal(want.shape)
    want.backward(torch.tensor(up))
    got.backward(mg.tensor(up))
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_stft_istft_round_trip():
    x = np.random.default_rng(5).standard_normal((2, 50))
    window = mg.hann_window(16, dtype=mg.float64)
    spec = mg.stft(mg.tensor(x), 16, hop_length=4, window=window, return_complex=True)
    np.testing.assert_allclose(mg.istft(spec, 16, hop_length=4, window=window, length=50).numpy(), x, atol=1e-12)


@pytest.mark.parametrize("n_fft, hop, win, length", [(8, 4, 6, 20), (8, 3, 4, 23), (6, 2, 6, 11)])
def test_stft_align_to_window(n_fft, hop, win, length):
    x = np.random.default_rng(9).standard_normal((2, length))
    w = np.random.default_rng(10).uniform(0.5, 1.5, win)
    for align in (True, False):
        want = torch.stft(torch.tensor(x), n_fft, hop, win, torch.tensor(w), center=False, return_complex=True,
                          align_to_window=align)
        got = mg.stft(mg.tensor(x), n_fft, hop, win, mg.tensor(w), center=False, return_complex=True,
                      align_to_window=align)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError):
        mg.stft(mg.tensor(x), n_fft, return_complex=True, align_to_window=True)


def test_stft_istft_gradcheck():
    """Finite differences through stft (signal and window) and istft (spectrum and window)."""
    rng = np.random.default_rng(6)
    x = mg.tensor(rng.standard_normal(20), requires_grad=True)
    w = mg.tensor(rng.uniform(0.5, 1.5, 6), requires_grad=True)
    assert mg.gradcheck(lambda x, w: mg.view_as_real(mg.stft(x, 8, 3, 6, w, return_complex=True)), (x, w))
    pairs = _complex_input((5, 7), seed=7)
    assert mg.gradcheck(lambda z, w: mg.istft(mg.view_as_complex(z), 8, 2, 6, w), (pairs, w))
    assert mg.gradgradcheck(lambda z, w: mg.istft(mg.view_as_complex(z), 8, 2, 6, w), (pairs, w),
                            atol=1e-6, rtol=1e-5)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("call", [
    lambda lib, x, z: lib.stft(x, 8),
    lambda lib, x, z: lib.stft(x, 8, hop_length=0, return_complex=True),
    lambda lib, x, z: lib.stft(x, 8, win_length=9, return_complex=True),
    lambda lib, x, z: lib.stft(x, 8, window=lib.ones(5, dtype=lib.float64), return_complex=True),
    lambda lib, x, z: lib.stft(x[None], 8, return_complex=True),
    lambda lib, x, z: lib.stft(x * (1 + 0j), 8, onesided=True, return_complex=True),
    lambda lib, x, z: lib.istft(z.real.contiguous(), 16),
    lambda lib, x, z: lib.istft(z, 10),
    lambda lib, x, z: lib.istft(z, 16, window=lib.zeros(16, dtype=lib.float64)),
    lambda lib, x, z: lib.istft(z, 8, return_complex=True, onesided=True),
    lambda lib, x, z: lib.stft(x, 40, 2, return_complex=True),
    lambda lib, x, z: lib.stft(x, 44, 2, pad_mode="circular", return_complex=True),
    lambda lib, x, z: lib.stft(x, 8, 2, pad_mode="bogus", return_complex=True),
])
def test_stft_istft_errors_like_pytorch(call):
    rng = np.random.default_rng(8)
    x, z = rng.standard_normal((2, 20)), rng.standard_normal((9, 5)) + 1j * rng.standard_normal((9, 5))
    with pytest.raises(Exception) as raised:
        call(torch, torch.tensor(x), torch.tensor(z))
    with pytest.raises(raised.type):
        call(mg, mg.tensor(x), mg.tensor(z))
