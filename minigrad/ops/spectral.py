"""The short-time Fourier transform ``stft`` and its inverse ``istft`` (``torch.stft``/``torch.istft``), composed of
differentiable ops: framing (``Tensor.unfold``), the window, ``minigrad.fft``'s transforms, and the one op of
their own, ``OverlapAdd`` (the adjoint of framing).

stft, for a signal x (optionally padded by n_fft//2 on both sides, ``center``) and a window w (``win_length``
points, zero-padded to n_fft in the middle):

    X[f, t] = sum_k x[t hop + k] w[k] e^{-2 pi i f k / n_fft}        (f = 0 .. n_fft//2 when ``onesided``)

istft inverts it by least squares: each frame's inverse transform, windowed again, overlap-added, divided by
the overlap-added squared window (which must not vanish anywhere), then the centre padding cut away.
"""
import warnings

import numpy as np

from .._checks import takes_tensors
from ..autograd import Function
from ..tensor import Tensor
from . import shape as sh
from .complex import view_as_real
from .pool import pad as _pad


def overlap_add(frames, hop):
    """y[..., t hop + k] = sum of frames[..., t, k] (T frames of N points): the frames laid ``hop`` apart and
    summed. Vectorised over the frames: one pass per block of ``hop`` columns, ceil(N / hop) passes."""
    count, size = frames.shape[-2:]
    lead = frames.shape[:-2]
    blocks = -(-size // hop)
    out = np.zeros(lead + (hop * (count + blocks - 1),), frames.dtype)     # room for whole blocks
    for j in range(blocks):
        block = frames[..., j * hop:(j + 1) * hop]                        # (..., T, <= hop)
        # the output from j hop on, seen as (T, hop): row t starts at t hop + j hop (a view of out)
        rows = out[..., j * hop:(j + count) * hop].reshape(lead + (count, hop))
        rows[..., :block.shape[-1]] += block
    return out[..., :size + hop * (count - 1)].copy()


class OverlapAdd(Function):
    """y[b, t hop + k] = sum over the frames (t, k) landing there of frames[b, t, k]: y = A f with A^T the
    framing (unfold) of a signal. Backward: dframes = A^T g, g's frames: dframes[b, t, k] = g[b, t hop + k]."""

    @staticmethod
    def forward(ctx, frames, hop):
        ctx.hop, ctx.size = hop, frames.shape[-1]
        return overlap_add(frames._data, hop)

    @staticmethod
    def backward(ctx, dout):
        frames = np.lib.stride_tricks.sliding_window_view(dout._data, ctx.size, axis=-1)[..., ::ctx.hop, :]
        return frames.copy(), None                         # (B, T, N), fresh

    @staticmethod
    def graph_backward(ctx, dout):
        return dout.unfold(-1, ctx.size, ctx.hop), None


def _pad_ends(x, p, mode):
    """The signals x (B, L) extended by p points at both ends for ``center``: mirrored about the end points
    (``"reflect"``), the end points repeated (``"replicate"``), wrapped around (``"circular"``) or zeros
    (``"constant"``). Built from slices and a ``cat``, so each copied point's gradient flows back to its
    source; anything else (unknown mode, padding longer than the signal allows) goes to ``F.pad``, which
    raises PyTorch's error."""
    L = x.shape[-1]
    if mode == "reflect" and p < L:
        left, right = sh.flip(x[..., 1:p + 1], (-1,)), sh.flip(x[..., L - p - 1:L - 1], (-1,))
    elif mode == "replicate" and L > 0:
        left, right = sh.expand(x[..., :1], x.shape[:-1] + (p,)), sh.expand(x[..., L - 1:], x.shape[:-1] + (p,))
    elif mode == "circular" and p <= L:
        left, right = x[..., L - p:], x[..., :p]
    elif mode == "constant":
        left = right = Tensor(np.zeros(x.shape[:-1] + (p,), x.dtype))
    else:
        return _pad(x, (p, p), mode=mode)
    return sh.cat([left, x, right], -1)


def _window_of(window, win_length, n_fft, like, fname):
    """The window as n_fft points: ``window`` (or ones, the rectangular window) zero-padded in the middle."""
    if window is None:
        window = Tensor(np.ones(win_length, np.empty(0, like.dtype).real.dtype))
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{fname}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    return _pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


def _lengths(n_fft, hop_length, win_length, fname):
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"{fname}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{fname}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


@takes_tensors("input", "window")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform of a signal (L) or a batch (B, L): (B?, n_fft//2 + 1 or n_fft, frames).
    ``align_to_window`` (``center=False`` only): frames start where the window's ``win_length`` points start,
    not where its n_fft-point zero-padded form does."""
    from .. import fft
    is_complex = input.dtype.kind == "c" or (window is not None and window.dtype.kind == "c")
    if return_complex is None:
        if not is_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a {input.ndim}D tensor")
    onesided = not is_complex if onesided is None else onesided
    if onesided and is_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = input if input.ndim == 2 else sh.unsqueeze(input, 0)              # (B, L)
    if center and n_fft // 2:
        x = _pad_ends(x, n_fft // 2, pad_mode)
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    hop, win = _lengths(n_fft, hop_length, win_length, "stft")
    if align_to_window and win < n_fft:          # frame t reads x[t hop : t hop + win] through the window's points
        left = (n_fft - win) // 2
        x = _pad(x, (left, n_fft - win - left))
    frames = x.unfold(-1, n_fft, hop) * _window_of(window, win, n_fft, x, "stft")    # (B, T, n_fft)
    norm = "ortho" if normalized else "backward"
    spectrum = fft.rfft(frames, norm=norm) if onesided else fft.fft(frames, norm=norm)
    spectrum = sh.transpose(spectrum, -1, -2)                           # (B, F, T)
    if input.ndim == 1:
        spectrum = sh.squeeze(spectrum, 0)
    return spectrum if return_complex else view_as_real(spectrum.contiguous())


@takes_tensors("input", "window")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of ``stft`` (B?, F, T) -> (B?, L): real unless ``return_complex``."""
    from .. import fft
    if input.dtype.kind != "c":
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex numbers, got {input.ndim}")
    z = input if input.ndim == 3 else sh.unsqueeze(input, 0)               # (B, F, T)
    bins, count = z.shape[-2:]
    onesided = bins != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != bins:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {bins}")
    if not onesided and n_fft != bins:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {bins}")
    hop, win = _lengths(n_fft, hop_length, win_length, "istft")
    w = _window_of(window, win, n_fft, z, "istft")
    z = sh.transpose(z, -1, -2)                                         # (B, T, F)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft.ifft(z, norm=norm)
    else:
        if w.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        frames = fft.irfft(z if onesided else z[..., :n_fft // 2 + 1], n=n_fft, norm=norm)
    signal = OverlapAdd.apply(frames * w, hop)                          # (B, n_fft + hop (T - 1))
    envelope = OverlapAdd.apply(sh.expand(sh.unsqueeze(w * w, 0), (1, count, n_fft)), hop)
    full = signal.shape[-1]
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (full - n_fft // 2 if center else full)
    signal, envelope = signal[..., start:end], envelope[..., start:end]
    if envelope.numel() and float(np.abs(envelope.detach().numpy()).min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: the squared window overlap-adds to (nearly) 0 somewhere "
                           "(expected a window whose overlap-added square is nonzero everywhere)")
    out = signal / envelope
    if input.ndim == 2:
        out = sh.squeeze(out, 0)
    if end > full:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        out = _pad(out, (0, end - full))
    return out


METHODS = ["stft", "istft"]
