"""``unfold`` (im2col) and ``fold`` (col2im): PyTorch's ``F.unfold`` and ``F.fold``.

``unfold`` cuts x (N, C, H, W), zero-padded, into its sliding blocks (N, C*kh*kw, L), one column per window
(L = OH*OW of them, row-major), rows ordered (c, i, j):

    blocks[n, (c, i, j), (p, q)] = xpad[n, c, p*sh + i*dh, q*sw + j*dw]

``fold`` is its adjoint, <unfold(x), b> = <x, fold(b)>: every block element is added back onto the pixel it
would have been read from (elements on the padding are dropped). Where windows overlap, fold(unfold(x)) is x
times the number of windows covering each pixel, not x. Each is the other's gradient:

    unfold:  dx = fold(dout)          fold:  dblocks = unfold(dout)

They are the convolution lowering's ``_columns`` and ``_add_columns`` (``ops/conv.py``) with one group, the
batch moved to the front.
"""
import math
from dataclasses import replace

import numpy as np

from .._checks import takes_tensors
from ..autograd import Function
from ..dtypes import kind_of, scalar_type_name
from .conv import Geometry, _add_columns, _arrays, _columns, _shape

__all__ = ["fold", "unfold"]


# --------------------------------------------------------------------------- the ndarray maps
def _blocks(x, geo):
    """unfold: x (N, C, H, W) -> (N, C*kh*kw, L)."""
    cols = _columns(x, geo)[0]                                                  # (C*kh*kw, N*L)
    return np.ascontiguousarray(cols.reshape(cols.shape[0], x.shape[0], math.prod(geo.out_size)).swapaxes(0, 1))


def _image(blocks, geo):
    """fold: blocks (N, C*kh*kw, L) -> (N, C, H, W), the adjoint of ``_blocks``."""
    n, rows, windows = blocks.shape
    cols = np.ascontiguousarray(blocks.swapaxes(0, 1)).reshape(1, rows, n * windows)  # (1 group, C*kh*kw, N*L)
    return _add_columns(cols, n, geo)


class Im2col(Function):
    """out = unfold(x). Backward: dx = fold(dout)."""

    @staticmethod
    def forward(ctx, x, geo):
        ctx.geo = geo
        return _blocks(*_arrays(x), geo).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        return _image(*_arrays(dout), ctx.geo), None

    @staticmethod
    def graph_backward(ctx, dout):
        return Col2im.apply(dout, ctx.geo), None


class Col2im(Function):
    """out = fold(blocks). Backward: dblocks = unfold(dout)."""

    @staticmethod
    def forward(ctx, blocks, geo):
        ctx.geo = geo
        return _image(*_arrays(blocks), geo).astype(blocks.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        return _blocks(*_arrays(dout), ctx.geo), None

    @staticmethod
    def graph_backward(ctx, dout):
        return Im2col.apply(dout, ctx.geo), None


# --------------------------------------------------------------------------- arguments and checks
def _pair(value, name, fname):
    """An int or a sequence of two ints as a pair; PyTorch's errors otherwise."""
    values = (value, value) if isinstance(value, (int, np.integer)) else value
    if not isinstance(values, (tuple, list)):
        raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    for position, v in enumerate(values):
        if not isinstance(v, (int, np.integer)):
            raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {position}")
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    return tuple(int(v) for v in values)


def _geometry(size, kernel_size, dilation, padding, stride, fname):
    """The Geometry of the windows over a (H, W) image, the arguments checked as PyTorch does."""
    kernel, dilation = _pair(kernel_size, "kernel_size", fname), _pair(dilation, "dilation", fname)
    padding, stride = _pair(padding, "padding", fname), _pair(stride, "stride", fname)
    for what, label, values, smallest in (("kernel size", "kernel", kernel, 1), ("dilation", "dilation", dilation, 1),
                                          ("padding", "pad", padding, 0), ("stride", "stride", stride, 1)):
        if any(v < smallest for v in values):
            condition = "greater than zero" if smallest else "non-negative"
            raise RuntimeError(f"{what} should be {condition}, but got {label}_height: {values[0]} "
                               f"{label}_width: {values[1]}")
    geo = Geometry(tuple(size), kernel, stride, tuple((p, p) for p in padding), dilation, 1)
    return replace(geo, out_size=geo.fitting)                                    # every window that fits


def _settings(geo):
    """The arguments as PyTorch's messages list them."""
    padding = tuple(lo for lo, _ in geo.padding)
    return f"kernel_size={geo.kernel}, dilation={geo.dilation}, padding={padding}"


def _check_kernel_dtype(input, kernel):
    """PyTorch's im2col/col2im kernels cover the floating, complex and bool dtypes, not the integer ones."""
    if kind_of(input.dtype) in "iu":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(input.dtype)}'")


@takes_tensors("input")
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of input (N, C, H, W) or (C, H, W), zero-padded: (N, C*kh*kw, L) (or (C*kh*kw, L)),
    L the number of windows; column l is the l-th window (row-major), its rows ordered (c, i, j)."""
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape(input.shape)}")
    _check_kernel_dtype(input, "im2col_out_cpu")
    geo = _geometry(input.shape[-2:], kernel_size, dilation, padding, stride, "im2col")
    if any(n < 1 for n in geo.out_size):
        raise RuntimeError(f"Given input with spatial size {geo.size}, {_settings(geo)}, calculated shape of the "
                           f"array of sliding blocks as {geo.out_size}, but its components must be at least one.")
    if input.ndim == 3:
        return Im2col.apply(input.unsqueeze(0), geo).squeeze(0)
    return Im2col.apply(input, geo)


@takes_tensors("input")
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of ``unfold``: blocks (N, C*kh*kw, L) or (C*kh*kw, L) summed back into an image
    (N, C, *output_size) (or (C, *output_size)), each element added where ``unfold`` would have read it."""
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape(input.shape)}")
    _check_kernel_dtype(input, "col2im_out_cpu")
    size = _pair(output_size, "output_size", "col2im")
    geo = _geometry(size, kernel_size, dilation, padding, stride, "col2im")
    rows, windows = input.shape[-2:]
    if rows % math.prod(geo.kernel):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={rows} and kernel_size={geo.kernel}.")
    blocks = geo.out_size
    if any(n < 1 for n in blocks) or math.prod(blocks) != windows:
        raise RuntimeError(f"Given output_size={size}, {_settings(geo)}, stride={geo.stride}, expected size of "
                           "input's dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={windows}.")
    if input.ndim == 2:
        return Col2im.apply(input.unsqueeze(0), geo).squeeze(0)
    return Col2im.apply(input, geo)
