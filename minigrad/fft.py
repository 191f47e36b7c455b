"""``minigrad.fft``: discrete Fourier transforms on ``numpy.fft``, with PyTorch's arguments and gradients.

Every transform is one of three linear maps, scaled by a number s that ``norm`` picks (``"backward"``, the
default: 1 forward, 1/n inverse; ``"ortho"``: 1/sqrt(n) both ways; ``"forward"``: 1/n forward, 1 inverse;
n the product of the transformed lengths), after the input is cut or zero-padded to the lengths asked
for (``Resize``, the ``n``/``s`` arguments). With F the DFT over the transformed dimensions,
(F x)_k = sum_t x_t w^{k.t}, w = e^{-2 pi i/n} (forward) or e^{+2 pi i/n} (inverse):

* ``C2C`` (fft, ifft, fft2, ifft2, fftn, ifftn): y = s F x, complex to complex (a real x is read as complex);
* ``R2C`` (rfft, rfft2, rfftn; ihfft*): the forward transform of a real x, keeping bins 0 .. n//2 of the
  last transformed dimension (the rest follow from y_{-k} = conj(y_k));
* ``C2R`` (irfft, irfft2, irfftn; hfft*): the inverse transform of the Hermitian spectrum whose bins
  0 .. n//2 on the last dimension are given: a real output of length n there.

hfft is irfft of the conjugate with the direction of ``norm`` swapped (a forward transform of a Hermitian
signal), ihfft the conjugate of rfft with ``norm`` swapped; fftshift/ifftshift are rolls.

Gradients follow PyTorch's convention for complex numbers (a complex z gets dL/dRe z + i dL/dIm z,
``ops/complex.py``): the gradient of a linear map is its adjoint applied to the upstream gradient. Each
Function's docstring derives its adjoint; the Hermitian bookkeeping of R2C and C2R is where they differ
from a plain transform.
"""
import math

import numpy as np

from ._checks import check_tensor, int_arg, is_int, takes_tensors
from .autograd import Function
from .creation import dtype_or, new_tensor
from .dtypes import complex_of, get_default_dtype, is_differentiable, scalar_type_name
from .ops.complex import conj
from .ops.dims import normalize_dim
from .ops.elementwise import cast
from .ops.shape import roll
from .tensor import Tensor

_NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# --------------------------------------------------------------------------- array helpers
def _scale(norm, n, forward):
    """The factor s of the module docstring for ``norm``, n points in all, a forward or inverse transform."""
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1 / n if (norm == "forward") == forward else 1.0


def _real_dtype(dtype):
    return np.empty(0, dtype).real.dtype


def _scaled(y, scale, dtype):
    """``y`` in ``dtype`` (NumPy may compute in double), multiplied by ``scale``; a fresh array."""
    y = y.astype(dtype, copy=False)
    if scale != 1.0:
        y *= np.asarray(scale, _real_dtype(dtype))
    return y


def _dft(x, dims, forward, scale):
    """s F x over ``dims`` (complex out): NumPy's unnormalized transforms, then the one scale."""
    y = np.fft.fftn(x, axes=dims) if forward else np.fft.ifftn(x, axes=dims, norm="forward")
    return _scaled(y, scale, complex_of(x.dtype))


def _real_dft(x, dims, scale):
    """P s F x for a real x: bins 0 .. n//2 of ``dims[-1]`` kept."""
    return _scaled(np.fft.rfftn(x, axes=dims), scale, complex_of(x.dtype))


def _hermitian_idft(z, dims, n_last, scale):
    """s F^{-1} (unnormalized) of the Hermitian spectrum given by its bins 0 .. n_last//2 on ``dims[-1]``."""
    shape = [z.shape[d] for d in dims[:-1]] + [n_last]
    return _scaled(np.fft.irfftn(z, s=shape, axes=dims, norm="forward"), scale, _real_dtype(z.dtype))


def _resize(a, dims, sizes):
    """``a`` cut or zero-padded at the end of each of ``dims`` to ``sizes``; a fresh array."""
    shape = list(a.shape)
    for d, n in zip(dims, sizes):
        shape[d] = n
    out = np.zeros(shape, a.dtype)
    common = tuple(slice(0, min(a.shape[d], shape[d])) for d in range(a.ndim))
    out[common] = a[common]
    return out


def _hermitian_weights(half, n_last, dim, ndim, dtype):
    """c_k on the half-spectrum axis ``dim``: 2 for the bins k = 1 .. n - half whose mirror n - k is not among
    the given bins, 1 for k = 0 and (n even) k = n/2. Shape 1 on every other axis, for broadcasting."""
    c = np.ones(half, dtype)
    c[1:n_last - half + 1] = 2
    shape = [1] * ndim
    shape[dim] = half
    return c.reshape(shape)


# --------------------------------------------------------------------------- the linear maps
class Resize(Function):
    """Cut or zero-pad the end of ``dims`` to ``sizes``: y = R x with R a 0/1 selection matrix. Backward:
    dx = R^T g, which is ``Resize`` of g back to x's sizes (cutting undoes padding and vice versa)."""

    @staticmethod
    def forward(ctx, x, dims, sizes):
        ctx.dims, ctx.sizes = dims, tuple(x._data.shape[d] for d in dims)
        return _resize(x._data, dims, sizes)

    @staticmethod
    def backward(ctx, dout):
        return _resize(dout._data, ctx.dims, ctx.sizes), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return Resize.apply(dout, ctx.dims, ctx.sizes), None, None


class C2C(Function):
    """y = s F x over ``dims``. Backward: dx = s F^H g (adjoint of a complex-linear map), and
    F^H = conj(F) is the unnormalized transform in the other direction (conj(w^{kt}) = w^{-kt}): the
    gradient is ``C2C`` of g with ``forward`` flipped and the same s. A real x keeps Re(dx) (the engine)."""

    @staticmethod
    def forward(ctx, x, dims, forward, scale):
        ctx.adjoint = dims, not forward, scale
        return _dft(x._data, dims, forward, scale)

    @staticmethod
    def backward(ctx, dout):
        return _dft(dout._data, *ctx.adjoint), None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return C2C.apply(dout, *ctx.adjoint), None, None, None


class R2C(Function):
    """y = P s F x for a real x, P keeping bins 0 .. n//2 of ``dims[-1]``. For real x and the real-linear
    map y = A x, dL/dx = Re(A^H g) (PyTorch's convention: dL/dx_t = sum_k Re(g_k conj(dy_k/dx_t))). With
    A^H = s F^H P^T, P^T g being g zero-padded back to n bins: dx = Re(s F^H pad(g)), an unnormalized
    inverse transform."""

    @staticmethod
    def forward(ctx, x, dims, scale):
        ctx.dims, ctx.n_last, ctx.scale = dims, x._data.shape[dims[-1]], scale
        return _real_dft(x._data, dims, scale)

    @staticmethod
    def backward(ctx, dout):
        padded = _resize(dout._data, ctx.dims[-1:], (ctx.n_last,))
        return _dft(padded, ctx.dims, False, ctx.scale).real, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        padded = Resize.apply(dout, ctx.dims[-1:], (ctx.n_last,))
        return C2C.apply(padded, ctx.dims, False, ctx.scale).real, None, None


class C2R(Function):
    """y = s F^{-1}(H z), real, where H extends the bins k = 0 .. n//2 of ``dims[-1]`` to a Hermitian
    spectrum (z_{-k} = conj(z_k)) and F^{-1} is unnormalized. Each given bin k appears with its mirror, so
    y_t = s sum_k c_k Re(z_k w^{-k.t}) (over the given bins; Im z is ignored where the bin is its own
    mirror) with c_k = 2 where the mirror is not given and 1 at k = 0 and k = n/2 (``_hermitian_weights``).
    Differentiating, dL/dRe z_k + i dL/dIm z_k = s c_k sum_t g_t w^{k.t}: dz = c * (P s F g), the
    one-sided forward transform of the real g (``R2C``) with those bins doubled: PyTorch's correction."""

    @staticmethod
    def forward(ctx, z, dims, n_last, scale):
        ctx.dims, ctx.scale = dims, scale
        ctx.weights = _hermitian_weights(z._data.shape[dims[-1]], n_last, dims[-1], z._data.ndim,
                                         _real_dtype(z._data.dtype))
        return _hermitian_idft(z._data, dims, n_last, scale)

    @staticmethod
    def backward(ctx, dout):
        return _real_dft(dout._data, ctx.dims, ctx.scale) * ctx.weights, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return R2C.apply(dout, ctx.dims, ctx.scale) * Tensor(ctx.weights), None, None, None


# --------------------------------------------------------------------------- arguments
def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _one_dim(input, n, dim, fname):
    """((axis,), (n or None,)) for the 1-D transforms."""
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = normalize_dim(dim, input.ndim)
    if n is not None:
        n = _check_points(int_arg(n, f"fft_{fname}", "n"))
    return (axis,), (n,)


def _n_dims(input, s, dim, fname):
    """(axes, sizes) for the n-D transforms, PyTorch's defaults: every dimension, or the last len(s) ones when
    only ``s`` is given; a size is None where ``s`` does not set it (or sets -1)."""
    if s is not None:
        s = [int_arg(n, f"fft_{fname}", "s") for n in ([s] if is_int(s) else s)]
    if dim is not None:
        dim = [dim] if is_int(dim) else list(dim)
        if dim and input.ndim == 0:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        if s is not None and len(s) > input.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {input.ndim} dimensions.")
        axes = tuple(range(input.ndim - (len(s) if s is not None else input.ndim), input.ndim))
    else:
        axes = tuple(normalize_dim(d, input.ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError("FFT dims must be unique")
    sizes = tuple(None if s is None or s[i] == -1 else _check_points(s[i]) for i in range(len(axes)))
    return axes, sizes


def _transformable(input, fname, real=False):
    """``input`` in a dtype the transforms take: integers and bools in the default float dtype; refused:
    float16 (as on PyTorch's CPU) and, where ``real``, complex tensors."""
    kind = input.dtype.kind
    if real and kind == "c":
        raise RuntimeError(f"{fname} expects a real input tensor, but got {scalar_type_name(input.dtype)}")
    if input.dtype == np.float16:
        raise RuntimeError("Unsupported dtype Half")
    return cast(input, get_default_dtype()) if kind in "biu" else input


def _resized(x, axes, sizes):
    """``x`` resized on the axes whose size is set and differs (``Resize``)."""
    change = [(a, n) for a, n in zip(axes, sizes) if n is not None and n != x.shape[a]]
    if not change:
        return x
    return Resize.apply(x, tuple(a for a, _ in change), tuple(n for _, n in change))


def _filled_sizes(x, axes, sizes):
    return tuple(x.shape[a] if n is None else n for a, n in zip(axes, sizes))


# --------------------------------------------------------------------------- the transforms
def _c2c(input, axes, sizes, norm, forward, fname):
    x = _transformable(input, fname)
    norm = _norm(norm)
    if not axes:                                 # fftn of a 0-d tensor: itself, as complex numbers
        return cast(x, complex_of(x.dtype)) if x.dtype.kind != "c" else x.clone()
    x = _resized(x, axes, sizes)
    return C2C.apply(x, axes, forward, _scale(norm, math.prod(_filled_sizes(x, axes, sizes)), forward))


def _r2c(input, axes, sizes, norm, fname):
    x = _transformable(input, fname, real=True)
    norm = _norm(norm)
    if not axes:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resized(x, axes, sizes)
    return R2C.apply(x, axes, _scale(norm, math.prod(_filled_sizes(x, axes, sizes)), True))


def _c2r(input, axes, sizes, norm, fname):
    """irfft*: the last axis's output length is its size if set, else 2 (m - 1) for m given bins."""
    z = _transformable(input, fname)
    norm = _norm(norm)
    if not axes:
        raise RuntimeError(f"{fname} must transform at least one axis")
    n_last = sizes[-1] if sizes[-1] is not None else _check_points(2 * (z.shape[axes[-1]] - 1))
    z = _resized(z, axes, sizes[:-1] + (n_last // 2 + 1,))
    n = math.prod(_filled_sizes(z, axes[:-1], sizes[:-1])) * n_last
    return C2R.apply(z, axes, n_last, _scale(norm, n, False))


def _forward(input, axes, sizes, norm, fname):
    return _c2c(input, axes, sizes, norm, True, fname)


def _inverse(input, axes, sizes, norm, fname):
    return _c2c(input, axes, sizes, norm, False, fname)


def _hermitian(input, axes, sizes, norm, fname):
    """hfft*: the forward transform of a Hermitian signal given by its first half = irfft*(conj x), ``norm``'s
    direction swapped."""
    return _c2r(conj(_transformable(input, fname)), axes, sizes, _SWAPPED[_norm(norm)], fname)


def _inverse_hermitian(input, axes, sizes, norm, fname):
    """ihfft*: the inverse transform of a real signal, bins 0 .. n//2 = conj(rfft*(x)), ``norm``'s direction
    swapped."""
    return conj(_r2c(input, axes, sizes, _SWAPPED[_norm(norm)], fname))


def _one_dimensional(name, transform, doc):
    def op(input, n=None, dim=-1, norm=None):
        check_tensor(input, f"fft_{name}", "input", 1)
        return transform(input, *_one_dim(input, n, dim, name), norm, name)
    op.__name__, op.__qualname__, op.__doc__ = name, name, doc
    return op


def _n_dimensional(name, transform, doc, default_dim=None):
    def op(input, s=None, dim=default_dim, norm=None):
        check_tensor(input, f"fft_{name}", "input", 1)
        return transform(input, *_n_dims(input, s, dim, name), norm, name)
    op.__name__, op.__qualname__, op.__doc__ = name, name, doc
    return op


_LAST_TWO = (-2, -1)
fft = _one_dimensional("fft", _forward, "The 1-D discrete Fourier transform along ``dim`` (complex output; ``n`` "
                                        "cuts or zero-pads first).")
ifft = _one_dimensional("ifft", _inverse, "The 1-D inverse discrete Fourier transform along ``dim``.")
fftn = _n_dimensional("fftn", _forward, "The n-D discrete Fourier transform over ``dim`` (all dimensions by "
                                        "default, the last len(s) when only ``s`` is given) with sizes ``s``.")
ifftn = _n_dimensional("ifftn", _inverse, "The n-D inverse discrete Fourier transform.")
fft2 = _n_dimensional("fft2", _forward, "``fftn`` over the last two dimensions by default.", _LAST_TWO)
ifft2 = _n_dimensional("ifft2", _inverse, "``ifftn`` over the last two dimensions by default.", _LAST_TWO)
rfft = _one_dimensional("rfft", _r2c, "The transform of a real signal: bins 0 .. n//2 along ``dim`` (the others "
                                      "are their conjugates).")
rfftn = _n_dimensional("rfftn", _r2c, "The n-D transform of a real signal, one-sided on the last of ``dim``.")
rfft2 = _n_dimensional("rfft2", _r2c, "``rfftn`` over the last two dimensions by default.", _LAST_TWO)
irfft = _one_dimensional("irfft", _c2r, "The inverse of ``rfft``: a real signal of length ``n`` (default 2 (m - 1)) "
                                        "from its m bins 0 .. n//2.")
irfftn = _n_dimensional("irfftn", _c2r, "The inverse of ``rfftn``.")
irfft2 = _n_dimensional("irfft2", _c2r, "``irfftn`` over the last two dimensions by default.", _LAST_TWO)
hfft = _one_dimensional("hfft", _hermitian, "The transform of a Hermitian signal given by its first half: real, "
                                            "length ``n`` (default 2 (m - 1)).")
hfftn = _n_dimensional("hfftn", _hermitian, "The n-D ``hfft``: Hermitian (half given) on the last of ``dim``.")
hfft2 = _n_dimensional("hfft2", _hermitian, "``hfftn`` over the last two dimensions by default.", _LAST_TWO)
ihfft = _one_dimensional("ihfft", _inverse_hermitian, "The inverse of ``hfft``: bins 0 .. n//2 of the inverse "
                                                      "transform of a real signal.")
ihfftn = _n_dimensional("ihfftn", _inverse_hermitian, "The inverse of ``hfftn``.")
ihfft2 = _n_dimensional("ihfft2", _inverse_hermitian, "``ihfftn`` over the last two dimensions by default.",
                        _LAST_TWO)


# --------------------------------------------------------------------------- shifts and frequencies
def _shift(input, dim, sign):
    axes = range(input.ndim) if dim is None else [normalize_dim(d, input.ndim)
                                                  for d in ([dim] if is_int(dim) else dim)]
    axes = list(axes)
    if not axes:
        raise RuntimeError("`shifts` required")
    return roll(input, [sign * (input.shape[a] // 2) for a in axes], axes)


@takes_tensors("input")
def fftshift(input, dim=None):
    """Move the zero frequency to the centre of ``dim`` (all dimensions by default): a roll by n//2."""
    return _shift(input, dim, 1)


@takes_tensors("input")
def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by -(n//2)."""
    return _shift(input, dim, -1)


def _frequencies(fname, n, d, dtype, device, requires_grad, onesided):
    n = int_arg(n, fname, "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = dtype_or(dtype)
    if not is_differentiable(dtype):                          # floating (bfloat16 too) or complex
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    k = np.arange(n // 2 + 1) if onesided else np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    with np.errstate(divide="ignore", invalid="ignore"):    # n = 0: rfftfreq's one bin is 0 * inf = NaN, as PyTorch's
        values = k * np.divide(1.0, np.float64(n) * d)
    return new_tensor(values.astype(dtype), device, requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``fft`` of n points spaced by d: [0, 1, ..., -(n//2), ..., -1] / (d n)."""
    return _frequencies("fftfreq", n, d, dtype, device, requires_grad, onesided=False)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``rfft`` of n points spaced by d: [0, 1, ..., n//2] / (d n)."""
    return _frequencies("rfftfreq", n, d, dtype, device, requires_grad, onesided=True)


__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]
