"""Convolutions: ``conv1d``, ``conv2d``, ``conv3d`` and ``conv_transpose1d/2d/3d`` (PyTorch's ``F.conv*``),
lowered onto BLAS.

A 2-D convolution of x (N, C, H, W), zero-padded, with weight w (O, C/g, kh, kw) in g groups is

    out[n, o, p, q] = sum_{c in o's group, i, j} w[o, c, i, j] * xpad[n, c, p*sh + i*dh, q*sw + j*dw]

(a cross-correlation, as in PyTorch). Three bilinear maps carry everything, each the adjoint of another
with respect to one argument (<a, b> is the sum of the elementwise product):

    C(x, w)   the convolution                        out-shaped
    T(y, w)   the transposed convolution, x-shaped:  <C(x, w), y> = <x, T(y, w)>
    W(x, y)   the weight correlation, w-shaped:      <C(x, w), y> = <w, W(x, y)>

so the gradients of each are the others:

    C(x, w) + b:   dx = T(dout, w)    dw = W(x, dout)    db = sum of dout over (N, H, W)
    T(y, w) + b:   dy = C(dout, w)    dw = W(dout, y)    db = sum of dout over (N, H, W)
    W(x, y):       dx = T(y, dout)    dy = C(x, dout)

The ndarray kernels lower each map to one batched matmul (one per group) by im2col: the *columns*
cols[g, (c, i, j), (n, p, q)] = xpad[n, g*Cg + c, p*sh + i*dh, q*sw + j*dw] gather every window of x, so that
C is w_g @ cols_g, W is y_g @ cols_g^T, and T is w_g^T @ y_g scattered back onto x (col2im). The
``graph_backward``s use the three Functions themselves, so gradients of any order exist. Everything above holds
in any number of spatial dimensions (indices (p, q) and (i, j) become tuples): 3-D convolutions run the same
Functions on the NumPy lowering; ``conv1d`` and ``conv_transpose1d`` are their 2-D versions on height-1 images.
``conv_reference`` is a direct-loop version for the tests.

On the numba backend the copies around the matmuls (the columns, col2im, and the exchange of the channel and
batch axes between NCHW arrays and the matmuls' (channels, N*OH*OW) rows, with the bias added on the way) run
numba kernels (``kernels/conv_numba.py``), one pass each instead of NumPy's padding, strided view and
transposing copy; the NumPy code is their reference on the ``"numpy"`` backend. Backward makes dout's rows
once, for dx, dw and db.

Depthwise convolutions (one input channel per group) run numba kernels on the numba backend
(``kernels/conv_numba.py``: about 3x faster than their im2col, whose matmuls are tiny); the im2col path
stays their reference on the ``"numpy"`` backend, and the tests keep the two equal.
"""
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import kernels
from .._checks import takes_tensors
from ..autograd import Function
from ..dtypes import compute_dtype
from ..autocast_ops import autocast_op
from .elementwise import conj_if_complex, fused_node_grads

__all__ = ["conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


# --------------------------------------------------------------------------- geometry
@dataclass(frozen=True)
class Geometry:
    """Where the windows of one convolution sit, one entry per spatial dimension (2-D: (H, W)). ``size`` is
    the spatial size of the convolution's input x (for a transposed convolution: of its output), ``padding``
    ((before, after), ...) of zeros around x (2-D: ((top, bottom), (left, right))), ``out_size`` (2-D: (OH, OW))
    the windows used: all that fit (``fitting``), or fewer for a transposed convolution whose output_padding is
    at least its stride (its last rows then receive nothing)."""
    size: tuple
    kernel: tuple
    stride: tuple
    padding: tuple
    dilation: tuple
    groups: int
    out_size: tuple = None

    @property
    def dims(self):
        """The number of spatial dimensions."""
        return len(self.kernel)

    @property
    def padded(self):
        return tuple(n + lo + hi for n, (lo, hi) in zip(self.size, self.padding))

    @property
    def span(self):
        """The dilated kernel's extent (d * (k - 1) + 1 per dimension)."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))

    @property
    def fitting(self):
        """How many windows fit per dimension: (H + top + bottom - d*(k-1) - 1) // s + 1."""
        return tuple((n - e) // s + 1 for n, e, s in zip(self.padded, self.span, self.stride))


def _interior(geo):
    """The index of x (N, C, *size) inside its padded array (N, C, *padded)."""
    return (slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(geo.size, geo.padding))


def _pad_zeros(x, geo):
    """x (N, C, H, W) inside zeros: (N, C, H + top + bottom, W + left + right) (any number of spatial dimensions)."""
    if not any(lo or hi for lo, hi in geo.padding):
        return x
    xp = np.zeros(x.shape[:2] + geo.padded, dtype=x.dtype)
    xp[_interior(geo)] = x
    return xp


def _crop(xp, geo):
    """The inverse of ``_pad_zeros``: the (H, W) interior of a padded (N, C, Hp, Wp) array."""
    return xp[_interior(geo)]


# --------------------------------------------------------------------------- the ndarray kernels
def _copy_kernels(a, dims):
    """The numba kernels of the lowering's copies (``kernels/conv_numba.py``: im2col, col2im, the NCHW <-> rows
    exchange) for float32/float64 data of 2-D convolutions (``dims`` spatial dimensions) on the numba backend,
    or None: then the NumPy code below, which is also the reference the kernels are tested against. The
    matmuls are BLAS's on both."""
    return kernels.numba_module("conv_numba") if dims == 2 and a.dtype in (np.float32, np.float64) else None


def _columns(x, geo):
    """im2col: x (N, C, H, W) -> cols (g, Cg*kh*kw, N*OH*OW), rows ordered (c, i, j), columns (n, p, q); in
    d spatial dimensions rows (c, *kernel offset), columns (n, *window position)."""
    n, c = x.shape[:2]
    g, dims, window_count = geo.groups, geo.dims, n * math.prod(geo.out_size)
    fast = _copy_kernels(x, dims)
    if fast is not None:
        cols = fast.columns(_pad_zeros(x, geo), geo.kernel, geo.stride, geo.dilation, geo.out_size)
        return cols.reshape(g, c // g * math.prod(geo.kernel), window_count)
    windows = sliding_window_view(_pad_zeros(x, geo), geo.span, axis=tuple(range(2, 2 + dims)))
    starts = tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(geo.out_size, geo.stride))   # the windows used
    taps = tuple(slice(None, None, d) for d in geo.dilation)                        # the kernel's taps in a span
    windows = windows[(slice(None), slice(None)) + starts + taps]                      # (N, C, OH, OW, kh, kw)
    windows = windows.reshape((n, g, c // g) + geo.out_size + geo.kernel)              # (N, g, Cg, OH, OW, kh, kw)
    positions, offsets = tuple(range(3, 3 + dims)), tuple(range(3 + dims, 3 + 2 * dims))
    cols = np.ascontiguousarray(windows.transpose((1, 2) + offsets + (0,) + positions))  # (g, Cg, kh, kw, N, OH, OW)
    return cols.reshape(g, c // g * math.prod(geo.kernel), window_count)


def _add_columns(cols, n, geo):
    """col2im, the adjoint of ``_columns``: cols (g, Cg*kh*kw, N*OH*OW) -> x (N, C, H, W), each column element
    added back where it was read from (reads of the zero padding are dropped)."""
    kernel_volume = math.prod(geo.kernel)
    c = geo.groups * cols.shape[1] // kernel_volume
    fast = _copy_kernels(cols, geo.dims)
    if fast is not None:
        xp = fast.add_columns(cols.reshape(c * kernel_volume, n * math.prod(geo.out_size)), geo.kernel, geo.stride,
                              geo.dilation, geo.out_size, (n, c) + geo.padded)
        return np.ascontiguousarray(_crop(xp, geo))
    cols = cols.reshape((c,) + geo.kernel + (n,) + geo.out_size)                     # (C, kh, kw, N, OH, OW)
    xp = np.zeros((c, n) + geo.padded, dtype=cols.dtype)                             # (C, N, Hp, Wp): as cols
    for offset in itertools.product(*map(range, geo.kernel)):                        # (i, j): one tap of the kernel
        reads = tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                      for i, d, o, s in zip(offset, geo.dilation, geo.out_size, geo.stride))
        xp[(slice(None), slice(None)) + reads] += cols[(slice(None),) + offset]
    return np.ascontiguousarray(_crop(xp.swapaxes(0, 1), geo))


def _group_rows(y, groups):
    """y (N, O, P, Q) -> (g, O/g, N*P*Q): each group's channels as rows over all positions."""
    n, o, positions = y.shape[0], y.shape[1], math.prod(y.shape[2:])      # explicit sizes: any of them may be 0
    fast = _copy_kernels(y, y.ndim - 2)
    if fast is not None:
        return fast.to_rows(y).reshape(groups, o // groups, n * positions)
    rows = y.reshape(n, groups, o // groups, positions).transpose(1, 2, 0, 3)
    return np.ascontiguousarray(rows).reshape(groups, o // groups, n * positions)


def _from_group_rows(rows, n, size, bias=None):
    """The inverse of ``_group_rows``: (g, O/g, N*P*Q) -> (N, O, P, Q), plus ``bias`` (O,) per channel if given."""
    g, og = rows.shape[:2]
    fast = _copy_kernels(rows, len(size))
    if fast is not None:
        return fast.from_rows(rows.reshape(g * og, rows.shape[2]), n, size, bias)
    out = rows.reshape(g, og, n, math.prod(size)).transpose(2, 0, 1, 3)              # (N, g, O/g, P)
    out = np.ascontiguousarray(out) if bias is None else np.add(out, bias.reshape(g, og, 1), order="C")
    return out.reshape((n, g * og) + tuple(size))


def _weight_rows(w, groups):
    """w (O, Cg, kh, kw) -> (g, O/g, Cg*kh*kw)."""
    return w.reshape(groups, w.shape[0] // groups, math.prod(w.shape[1:]))


def _product(a, b):
    """a @ b per group, a (g, m, k), b (g, k, n); for k = 1 (depthwise: one channel per group) as a broadcast
    product, which NumPy does 7x faster than its matmul loop over tiny matrices."""
    return a * b if a.shape[2] == 1 else kernels.matmul(a, b)


def _conv_from_columns(cols, w, n, geo, bias=None):
    """C(x, w) (+ bias) from x's columns: (N, O, OH, OW)."""
    return _from_group_rows(kernels.matmul(_weight_rows(w, geo.groups), cols), n, geo.out_size, bias)


def _weight_from_columns(cols, y, geo, rows=None):
    """W(x, y) from x's columns: (O, Cg, kh, kw) = y_g @ cols_g^T per group (``rows``: y's, if already made)."""
    rows = _group_rows(y, geo.groups) if rows is None else rows
    # (cols_g @ rows_g^T)^T: OpenBLAS makes the long-inner-dimension product 10-20% faster with the many
    # column rows (Cg*kh*kw) as its output's rows than with the few channels (1 thread, this machine)
    dw = kernels.matmul(cols, rows.transpose(0, 2, 1)).transpose(0, 2, 1)             # (g, O/g, Cg*kh*kw)
    return np.ascontiguousarray(dw).reshape((y.shape[1], dw.shape[2] // math.prod(geo.kernel)) + tuple(geo.kernel))


def _adjoint_geometry(geo):
    """For stride 1, T(y, w) = C(y, w'), a convolution of y padded by d*(k-1) - before (after) with w' the
    weight flipped in space and with its channel axes swapped per group: the geometry of that convolution,
    or None when it does not exist (a stride, padding beyond d*(k-1), which crops, or an output_padding
    whose last rows receive nothing)."""
    if any(s != 1 for s in geo.stride) or geo.out_size != geo.fitting or any(max(pair) > e - 1
                                                                             for pair, e in zip(geo.padding, geo.span)):
        return None
    padding = tuple((e - 1 - lo, e - 1 - hi) for (lo, hi), e in zip(geo.padding, geo.span))
    return Geometry(geo.out_size, geo.kernel, geo.stride, padding, geo.dilation, geo.groups, geo.size)


def _flipped(w, groups):
    """w (O, Cg, kh, kw) -> w' (C, O/g, kh, kw): per group the channel axes swapped, the kernel turned 180 degrees
    (reversed along every spatial axis)."""
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    swapped = w.reshape((groups, o // groups, cg) + kernel).swapaxes(1, 2)             # (g, Cg, O/g, kh, kw)
    reversed_kernel = (Ellipsis,) + (slice(None, None, -1),) * len(kernel)
    return np.ascontiguousarray(swapped[reversed_kernel]).reshape((groups * cg, o // groups) + kernel)


def _transpose_by_columns(y, w, geo, rows=None):
    """T(y, w): y (N, O, OH, OW) -> (N, C, H, W). With stride 1 and O <= C, unless y's ``rows`` are already
    made, a convolution of y (``_adjoint_geometry``: one im2col of y and a matmul; on the NumPy copies 1.2-1.6x
    faster than col2im at 64 -> 64 channels), else the columns w_g^T @ y_g added back onto x (col2im: cheaper
    when x has fewer channels than y, as a first layer's; with the numba copies and the rows that the weight
    gradient needs anyway, within about 10% of the other at 64 -> 64, either way round, 1 and 2 threads)."""
    fewer = rows is None and w.shape[0] <= geo.groups * w.shape[1]
    adjoint = _adjoint_geometry(geo) if fewer else None                            # im2col of y: O <= C
    if adjoint is not None:
        return _conv_from_columns(_columns(y, adjoint), _flipped(w, geo.groups), y.shape[0], adjoint)
    rows = _group_rows(y, geo.groups) if rows is None else rows
    cols = _product(_weight_rows(w, geo.groups).transpose(0, 2, 1), rows)           # (g, Cg*kh*kw, N*OH*OW)
    return _add_columns(cols, y.shape[0], geo)


# --------------------------------------------------------------------------- depthwise: numba kernels
def _depthwise_kernels(channels_per_group, geo, dtype):
    """The numba kernels (``kernels/conv_numba.py``) for a real 2-D depthwise convolution (one input channel per
    group, weight (O, 1, kh, kw)) on the numba backend; None otherwise (complex numbers too): then the im2col path
    above, which is also the reference the kernels are tested against."""
    if channels_per_group != 1 or geo.dims != 2 or dtype.kind == "c":
        return None
    return kernels.numba_module("conv_numba")


def _conv(x, w, geo, cols=None, bias=None):
    """C(x, w) (+ bias): (N, O, OH, OW); ``cols`` x's columns if already made."""
    fast = _depthwise_kernels(w.shape[1], geo, x.dtype) if cols is None else None
    if fast is not None:
        return fast.depthwise_conv(x, w, bias, geo.padding, geo.stride, geo.dilation, geo.out_size)
    return _conv_from_columns(_columns(x, geo) if cols is None else cols, w, x.shape[0], geo, bias)


def _conv_weight(x, y, geo, cols=None, rows=None):
    """W(x, y): (O, Cg, kh, kw); ``cols`` x's columns, ``rows`` y's, if already made."""
    fast = _depthwise_kernels(x.shape[1] // geo.groups, geo, x.dtype) if cols is None else None
    if fast is not None:
        return fast.depthwise_conv_weight(x, y, geo.padding, geo.stride, geo.dilation, geo.kernel)
    return _weight_from_columns(_columns(x, geo) if cols is None else cols, y, geo, rows)


def _transpose(y, w, geo, rows=None):
    """T(y, w): (N, C, H, W); ``rows`` y's rows (``_group_rows``) if already made."""
    fast = _depthwise_kernels(w.shape[1], geo, y.dtype)
    if fast is not None:
        return fast.depthwise_conv_transpose(y, w, geo.groups, geo.padding, geo.stride, geo.dilation, geo.size)
    return _transpose_by_columns(y, w, geo, rows)


def _arrays(*tensors):
    """The tensors' arrays in their compute dtype (float16 is computed in float32); None stays None."""
    return [None if t is None else t._data.astype(compute_dtype(t.dtype), copy=False) for t in tensors]


def _add_bias(out, b):
    if b is not None:
        out += b.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def _batch_and_space(ndim):
    """The axes a bias gradient sums over: all but the channels (axis 1)."""
    return (0,) + tuple(range(2, ndim))


def _bias_grad(dout):
    return dout.sum(_batch_and_space(dout.ndim))


# --------------------------------------------------------------------------- the Functions
class Conv(Function):
    """out = C(x, w) + b (module docstring). Backward (complex x, w: each formula takes the other operand's
    conjugate, as a product does):

        dx = T(dout, w)  (the transposed convolution of dout)
        dw = W(x, dout)  (the correlation of x with dout: dw[o, c, i, j] = sum_{n,p,q} dout[n,o,p,q] xpad[n,c,p*sh+i*dh,q*sw+j*dw])
        db = sum of dout over (N, OH, OW)
    """

    @staticmethod
    def forward(ctx, x, w, b, geo):
        xa, wa, ba = _arrays(x, w, b)
        cols = None if _depthwise_kernels(wa.shape[1], geo, xa.dtype) else _columns(xa, geo)  # kept for dw
        ctx.geo, ctx.cols = geo, cols if ctx.needs_input_grad[1] else None
        ctx.shapes = (xa.shape, wa.shape)      # (for utils.flop_counter: the saved arrays may be freed)
        ctx.save_for_backward(x._data if ctx.needs_input_grad[1] else None,
                              w._data if ctx.needs_input_grad[0] else None)
        return _conv(xa, wa, geo, cols, ba).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, w = ctx.saved_tensors
        g, geo, needs = _arrays(dout)[0], ctx.geo, ctx.needs_input_grad
        rows = None if ctx.cols is None else _group_rows(g, geo.groups)      # im2col path: made once for dx, dw, db
        cols = None if ctx.cols is None else conj_if_complex(ctx.cols)      # (conjugates: complex operands)
        dx = _transpose(g, conj_if_complex(w).astype(g.dtype, copy=False), geo, rows) if needs[0] else None
        dw = _conv_weight(conj_if_complex(x).astype(g.dtype, copy=False), g, geo, cols, rows) if needs[1] else None
        db = (_bias_grad(g) if rows is None else rows.sum(-1).reshape(-1)) if needs[2] else None
        return dx, dw, db, None

    @staticmethod
    def graph_backward(ctx, dout):
        x, w = ctx.saved_tensors
        geo, needs = ctx.geo, ctx.needs_input_grad
        dx = ConvTranspose.apply(dout, ctx.input_tensor(1, w).conj(), None, geo) if needs[0] else None
        dw = ConvWeight.apply(ctx.input_tensor(0, x).conj(), dout, geo) if needs[1] else None
        db = dout.sum(_batch_and_space(dout.ndim)) if needs[2] else None
        return (*fused_node_grads(ctx, (dx, dw, db), sources=(0, 1)), None)   # (PyTorch's one backward node)


class ConvTranspose(Function):
    """out = T(y, w) + b, the adjoint of the convolution C(., w) whose input has ``geo.size``. Backward:

        dy = C(dout, w)  (the convolution of dout)
        dw = W(dout, y)  (the correlation of dout with y)
        db = sum of dout over (N, H, W)
    """

    @staticmethod
    def forward(ctx, y, w, b, geo):
        ya, wa, ba = _arrays(y, w, b)
        ctx.geo, ctx.shapes = geo, (ya.shape, wa.shape)   # (shapes: for utils.flop_counter)
        ctx.save_for_backward(y._data if ctx.needs_input_grad[1] else None,
                              w._data if ctx.needs_input_grad[0] else None)
        return _add_bias(_transpose(ya, wa, geo), ba).astype(y.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        y, w = ctx.saved_tensors
        g, geo, needs = _arrays(dout)[0], ctx.geo, ctx.needs_input_grad
        depthwise = _depthwise_kernels(g.shape[1] // geo.groups, geo, g.dtype)
        cols = _columns(g, geo) if (needs[0] or needs[1]) and not depthwise else None    # shared by dy and dw
        dy = _conv(g, conj_if_complex(w).astype(g.dtype, copy=False), geo, cols) if needs[0] else None
        dw = _conv_weight(g, conj_if_complex(y).astype(g.dtype, copy=False), geo, cols) if needs[1] else None
        return dy, dw, _bias_grad(g) if needs[2] else None, None

    @staticmethod
    def graph_backward(ctx, dout):
        y, w = ctx.saved_tensors
        geo, needs = ctx.geo, ctx.needs_input_grad
        dy = Conv.apply(dout, ctx.input_tensor(1, w).conj(), None, geo) if needs[0] else None
        dw = ConvWeight.apply(dout, ctx.input_tensor(0, y).conj(), geo) if needs[1] else None
        db = dout.sum(_batch_and_space(dout.ndim)) if needs[2] else None
        return (*fused_node_grads(ctx, (dy, dw, db), sources=(0, 1)), None)


class ConvWeight(Function):
    """out = W(x, y), the weight gradient of a convolution as an op of its own (for gradients of gradients).
    Backward, with G = dout (weight-shaped):

        dx = T(y, G)    dy = C(x, G)
    """

    @staticmethod
    def forward(ctx, x, y, geo):
        xa, ya = _arrays(x, y)
        ctx.geo, ctx.shapes = geo, (xa.shape, ya.shape)    # (shapes: for utils.flop_counter)
        ctx.save_for_backward(x._data if ctx.needs_input_grad[1] else None,
                              y._data if ctx.needs_input_grad[0] else None)
        return _conv_weight(xa, ya, geo).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dout):
        x, y = ctx.saved_tensors
        g, geo, needs = _arrays(dout)[0], ctx.geo, ctx.needs_input_grad
        dx = _transpose(conj_if_complex(y).astype(g.dtype, copy=False), g, geo) if needs[0] else None
        dy = _conv(conj_if_complex(x).astype(g.dtype, copy=False), g, geo) if needs[1] else None
        return dx, dy, None

    @staticmethod
    def graph_backward(ctx, dout):
        x, y = ctx.saved_tensors
        geo, needs = ctx.geo, ctx.needs_input_grad
        dx = ConvTranspose.apply(ctx.input_tensor(1, y).conj(), dout, None, geo) if needs[0] else None
        dy = Conv.apply(ctx.input_tensor(0, x).conj(), dout, None, geo) if needs[1] else None
        return dx, dy, None


# --------------------------------------------------------------------------- arguments and checks
def _expand(value, dims, name):
    """An int or a sequence of 1 or ``dims`` ints as a ``dims``-tuple, PyTorch's error otherwise."""
    values = [value] if isinstance(value, (int, np.integer)) else list(value)
    if len(values) == 1:
        values = values * dims
    if len(values) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values to match the "
                           f"convolution dimensions, but got {name}={list(values)}")
    return tuple(int(v) for v in values)


def same_padding(kernel, dilation):
    """The (before, after) zeros per dimension keeping a stride-1 convolution's size: d*(k-1) in total,
    the odd one after (as PyTorch)."""
    return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))


def _padding(padding, kernel, stride, dilation, name):
    """``padding`` (int, tuple, 'same', 'valid') as ((before, after), ...) per spatial dimension."""
    dims = len(kernel)
    if isinstance(padding, str):
        if name.startswith("conv_transpose"):
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            return ((0, 0),) * dims
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        return same_padding(kernel, dilation)
    pads = _expand(padding, dims, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pads)


def _shape(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_operands(name, x, weight, bias, groups, dims, transposed):
    """PyTorch's errors for the tensors of a convolution (x batched (N, C, *spatial))."""
    if weight.ndim != dims + 2:
        raise RuntimeError(f"{name}: expected weight to be {dims + 2}-dimensional (out_channels, in_channels/groups, "
                           f"*kernel_size), but got weight of size {_shape(weight.shape)}")
    for other, what in ((weight, "weight"), (bias, "bias")):
        if other is not None and other.dtype != x.dtype and x.dtype.kind != "b":     # (bool: no kernel, below)
            raise RuntimeError(f"{name}: expected input and {what} to have the same dtype, but got: "
                               f"{x.dtype} != {other.dtype}")
    given = f"Given transposed=1, weight of size {_shape(weight.shape)}" if transposed else \
        f"Given groups={groups}, weight of size {_shape(weight.shape)}"
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size {_shape(weight.shape)} instead")
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if x.shape[1] != channels:
        raise RuntimeError(f"{given}, expected input{_shape(x.shape)} to have {channels} channels, but got "
                           f"{x.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"{given}, expected bias to be 1-dimensional with {out_channels} elements, but got "
                           f"bias of size {_shape(bias.shape)} instead")
    if x.dtype.kind == "b":      # (PyTorch has no convolution kernel for bool, whatever the weight's dtype)
        kernel = f"slow_conv_transpose{max(dims, 2)}d_out_cpu" if transposed else f"slow_conv{max(dims, 2)}d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _positive(values, what):
    if any(v <= 0 for v in values):
        raise RuntimeError(f"non-positive {what} is not supported")


def _batched(name, input, dims):
    """(input with a batch dimension, whether one was added): PyTorch accepts unbatched (C, *spatial)."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
                           f"input of size: {_shape(input.shape)}")
    return (input.unsqueeze(0), True) if input.ndim == dims + 1 else (input, False)


def _checked(name, input, weight, bias, stride, padding, dilation, groups, dims, transposed):
    """The checked arguments of a convolution in ``dims`` spatial dimensions: (x batched, whether input was
    unbatched, kernel, stride, padding ((before, after), ...), dilation)."""
    x, unbatched = _batched(name, input, dims)
    stride, dilation = _expand(stride, dims, "stride"), _expand(dilation, dims, "dilation")
    _positive(stride, "stride")
    _positive(dilation, "dilation")
    _positive([groups], "groups")
    _check_operands(name, x, weight, bias, groups, dims, transposed)
    kernel = tuple(weight.shape[2:])
    return x, unbatched, kernel, stride, _padding(padding, kernel, stride, dilation, name), dilation


def _as_2d(dims, *tensors):
    """1-D convolutions run as 2-D ones on height-1 images: (N, C, L) -> (N, C, 1, L)."""
    return [t if t is None or dims != 1 else t.unsqueeze(-2) for t in tensors]


def _height_one(dims, kernel, stride, padding, dilation):
    """The geometry arguments of a 1-D convolution as those of the 2-D one on height-1 images."""
    if dims != 1:
        return kernel, stride, padding, dilation
    return (1,) + kernel, (1,) + stride, ((0, 0),) + padding, (1,) + dilation


def _unbatched(out, dims, unbatched):
    """The 2-D result of a 1-D convolution back to 1-D, and without the batch dimension the input did not have."""
    out = out.squeeze(-2) if dims == 1 else out
    return out.squeeze(0) if unbatched else out


def _size_text(sizes):
    return " x ".join(str(s) for s in sizes)


def _convolution(name, input, weight, bias, stride, padding, dilation, groups, dims):
    x, unbatched, *arguments = _checked(name, input, weight, bias, stride, padding, dilation, groups, dims, False)
    kernel, stride, pads, dilation = _height_one(dims, *arguments)
    x, w = _as_2d(dims, x, weight)
    geo = Geometry(tuple(x.shape[2:]), kernel, stride, pads, dilation, groups)
    geo = replace(geo, out_size=geo.fitting)
    if any(n < e for n, e in zip(geo.padded, geo.span)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_size_text(geo.padded[-dims:])}). "
                           f"Kernel size: ({_size_text(geo.span[-dims:])}). Kernel size can't be greater than "
                           "actual input size")
    return _unbatched(Conv.apply(x, w, bias, geo), dims, unbatched)


@autocast_op("lower")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of input (N, C, L) or (C, L) with weight (O, C/groups, k)."""
    return _convolution("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


@autocast_op("lower")
@takes_tensors("input", "weight", "bias")
def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution over time of input (T, B, C) with weight (k, C, O) and bias (O,), ``pad`` steps of zeros at
    each end: ``conv1d`` on the (B, C, T) view, the result (T + 2 pad - k + 1, B, O) laid back in time-batch-channel
    order (fairseq's layout)."""
    for tensor, dims, message in ((input, 3, "Input must have 3 dims: time, batch, in_channel"),
                                  (weight, 3, "Weight tensor must have 3 dims: kernel_width, in_channels, "
                                              "out_channels."),
                                  (bias, 1, "Bias must have 1 dim: out_channels")):
        if tensor.ndim != dims:
            raise RuntimeError(message)
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)     # (B, O, T')
    return out.permute(2, 0, 1)


@autocast_op("lower")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of input (N, C, H, W) or (C, H, W) with weight (O, C/groups, kh, kw);
    padding an int, a pair, 'valid' (none) or 'same' (stride 1 only)."""
    return _convolution("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


@autocast_op("lower")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of input (N, C, D, H, W) or (C, D, H, W) with weight
    (O, C/groups, kd, kh, kw); padding an int, a triple, 'valid' (none) or 'same' (stride 1 only)."""
    return _convolution("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


def transposed_size(size, kernel, stride, padding, output_padding, dilation):
    """The output size of a transposed convolution per dimension: (n-1)*s - 2p + d*(k-1) + output_padding + 1."""
    return tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1
                 for n, k, s, p, op, d in zip(size, kernel, stride, padding, output_padding, dilation))


def _check_output_padding(output_padding, stride, dilation):
    if any(op < 0 for op in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
        axes = ("depth", "height", "width")[-len(stride):]
        values = [f"{what}_{axis}: {v}" for what, given in (("output_padding", output_padding), ("stride", stride),
                                                             ("dilation", dilation)) for axis, v in zip(axes, given)]
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {' '.join(values)}")


def _transposed_convolution(name, input, weight, bias, stride, padding, output_padding, groups, dilation, dims):
    y, unbatched, *arguments = _checked(name, input, weight, bias, stride, padding, dilation, groups, dims, True)
    # the checks below see a 1-D convolution as the 2-D one it runs as: PyTorch's messages do the same
    kernel, stride, pads, dilation = _height_one(dims, *arguments)
    output_padding = _expand(output_padding, dims, "output_padding")
    output_padding = (0,) + output_padding if dims == 1 else output_padding
    _check_output_padding(output_padding, stride, dilation)
    y, w = _as_2d(dims, y, weight)
    size = transposed_size(y.shape[2:], kernel, stride, [p for p, _ in pads], output_padding, dilation)
    if any(n < 1 for n in size):
        raise RuntimeError(f"Given input size per channel: ({_size_text(y.shape[2:])}). Calculated output size per "
                           f"channel: ({_size_text(size)}). Output size is too small")
    geo = Geometry(size, kernel, stride, pads, dilation, groups, tuple(y.shape[2:]))
    return _unbatched(ConvTranspose.apply(y, w, bias, geo), dims, unbatched)


@autocast_op("lower")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution of input (N, C_in, L) or (C_in, L) with weight (C_in, C_out/groups, k): the
    adjoint (input gradient) of ``conv1d``; output length (L-1)*s - 2p + d*(k-1) + output_padding + 1."""
    return _transposed_convolution("conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                                   dilation, 1)


@autocast_op("lower")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution of input (N, C_in, H, W) or unbatched with weight (C_in, C_out/groups, kh, kw):
    the adjoint (input gradient) of ``conv2d`` with the same stride, padding, dilation and groups, whose
    output is (N, C_out, (H-1)*s - 2p + d*(k-1) + output_padding + 1, ...)."""
    return _transposed_convolution("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                                   dilation, 2)


@autocast_op("lower")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution of input (N, C_in, D, H, W) or unbatched with weight
    (C_in, C_out/groups, kd, kh, kw): the adjoint (input gradient) of ``conv3d``; output sizes as
    ``conv_transpose2d``'s per dimension."""
    return _transposed_convolution("conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                                   dilation, 3)


# --------------------------------------------------------------------------- the reference
def conv_reference(x, w, b=None, stride=None, padding=None, dilation=None, groups=1):
    """The convolution of ndarrays straight from its definition, one output element at a time: slow and
    obviously right, for the tests. x (N, C, *spatial), w (O, C/groups, *kernel), any number of spatial
    dimensions; stride and dilation per dimension (default 1), padding ((before, after), ...) (default none)."""
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    dims = len(size)
    stride, dilation = stride or (1,) * dims, dilation or (1,) * dims
    padding = padding or ((0, 0),) * dims
    xp = np.zeros((n, c) + tuple(m + lo + hi for m, (lo, hi) in zip(size, padding)), dtype=x.dtype)
    xp[(slice(None), slice(None)) + tuple(slice(lo, lo + m) for m, (lo, _) in zip(size, padding))] = x
    out_size = tuple((p - d * (k - 1) - 1) // s + 1 for p, k, s, d in zip(xp.shape[2:], kernel, stride, dilation))
    out = np.zeros((n, o) + out_size, dtype=x.dtype)
    per_group = o // groups
    for sample, oc, *position in itertools.product(range(n), range(o), *map(range, out_size)):
        first = oc // per_group * cg                     # the first input channel of oc's group
        total = 0.0 if b is None else b[oc]
        for ci, *offset in itertools.product(range(cg), *map(range, kernel)):
            read = tuple(p * s + i * d for p, i, s, d in zip(position, offset, stride, dilation))
            total += w[(oc, ci, *offset)] * xp[(sample, first + ci) + read]
        out[(sample, oc, *position)] = total
    return out


conv2d_reference = conv_reference                        # the name the 2-D tests know it by
