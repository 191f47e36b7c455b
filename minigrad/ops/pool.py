"""Pooling, padding and resampling: ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, the adaptive poolings,
``max_unpool1d/2d/3d``, ``pad``, ``interpolate``, ``pixel_shuffle``/``pixel_unshuffle``, ``channel_shuffle`` and
the channel dropouts, with PyTorch's signatures.

Two linear building blocks carry all of them:

* ``AxisMaps``: out = x ×_1 M_1 ×_2 M_2 ... , a small matrix M_a (out size × in size) applied along each of the
  last spatial axes. Average pooling (also adaptive), padding of every mode (constant padding is the zero
  padding plus a constant) and nearest/(bi/tri)linear interpolation are all separable like this. A 0/1
  selection (padding, nearest) is applied as a gather; other maps as a BLAS product with M_a on finite data
  (fastest at a CNN's sizes), else as a weighted sum of k gathers from M_a's non-zeros (rows × k per line),
  so that an inf or NaN reaches only the outputs whose windows hold it.
* ``WindowMax``: out = x[..., index], a gather of one input element per output by a flat spatial index (the
  argmax of each pooling window, chosen before the gather); its adjoint is a scatter-add. Max unpooling
  (``MaxUnpool``) writes x at such indices, and its adjoint is this gather.

Max pooling's window scan (values and argmax in one pass), the gather and the scatter-add run as numba kernels
(``minigrad/kernels/pool_numba.py``) on the ``"numba"`` backend, for the dtypes they take (the scan: over 1 or 2
spatial axes); the NumPy code here (``_window_argmax``, ``_tiled_argmax``, ``_take``, ``_scatter_add``) is the
``"numpy"`` backend and the reference the kernels are tested against.

Both are linear in x, so ``backward`` is the adjoint (Mᵀ along each axis; the scatter-add of the gather) and
``graph_backward`` applies the adjoint as the same Function with transposed data, whose backward is the
forward again: gradients are differentiable to any order.
"""
import functools
import inspect
import itertools
import math
import operator
import warnings

import numpy as np

from .. import kernels
from .._checks import refuses_complex, takes_tensors
from ..autograd import Function
from ..autograd.function import watching
from ..dtypes import LIMITED, fitted_scalar, is_differentiable, kind_of, scalar_type_name
from ..random import keep_mask
from ..tensor import Tensor
from .activation import check_dropout_p, dropout_gate
from .elementwise import depending_on_input
from ..autocast_ops import autocast_op


# =========================================================================== the linear building blocks
class AxisMap:
    """A linear map along one axis, given as a dense (n_out, n_in) matrix; kept by rows as the column
    indices ``index`` (n_out, k) and ``weight`` (n_out, k) of each row's (up to k) non-zeros."""

    def __init__(self, matrix, stencil=None):
        """``stencil``: (index, weight) to use instead of the matrix's non-zeros, keeping explicit zero weights
        (interpolation multiplies both neighbours, so an inf next to an exact grid point gives NaN, as in
        PyTorch)."""
        self.matrix = matrix
        nonzero = matrix != 0
        if stencil is not None:
            self.index, self.weight = stencil
            nonzero = np.ones(self.index.shape, dtype=bool)
            k = self.index.shape[1]
        else:
            k = max(int(nonzero.sum(axis=1).max(initial=0)), 1)
            order = np.argsort(~nonzero, axis=1, kind="stable")[:, :k]     # each row's non-zero columns first
            self.index = order if matrix.shape[1] else np.zeros((matrix.shape[0], k), dtype=np.intp)
            self.weight = np.take_along_axis(matrix, order, axis=1) if matrix.shape[1] else np.zeros(order.shape)
        # a selection (each row copies one input element, or none: constant padding): a gather, no arithmetic
        self.selection = k == 1 and bool(np.all((self.weight == 1) | (self.weight == 0)))
        self.empty_rows = np.flatnonzero(~nonzero.any(axis=1))
        count = nonzero.sum(axis=1)
        self.short_rows = [np.flatnonzero(count <= j) for j in range(k)]  # rows without a j-th non-zero
        self._transposed = None

    @property
    def T(self):
        if self._transposed is None:
            self._transposed = AxisMap(self.matrix.T)
            self._transposed._transposed = self
        return self._transposed

    def apply(self, x, axis):
        """x with ``axis`` (n_in long) replaced by this map's n_out outputs. A selection is a gather; else, on
        the last two axes of finite data, a BLAS product with the dense matrix (fastest at the sizes of a CNN);
        otherwise (inf or NaN must stay in their own windows) a weighted sum of k gathers."""
        n_out, k = self.index.shape
        if x.shape[axis] == 0:    # nothing to read (the adjoint of a crop to nothing)
            return np.zeros(x.shape[:axis] + (n_out,) + x.shape[axis + 1:], dtype=x.dtype)
        if self.selection:
            out = np.take(x, self.index[:, 0], axis=axis)
            if self.empty_rows.size:
                out[(slice(None),) * axis + (self.empty_rows,)] = 0
            return out
        if axis >= x.ndim - 2 and kind_of(x.dtype) in "fc" and np.isfinite(x).all():
            matrix = self.matrix.astype(x.dtype, copy=False)
            return x @ matrix.T if axis == x.ndim - 1 else matrix @ x
        trailing = (1,) * (x.ndim - axis - 1)
        out = 0
        for j in range(k):        # out[.., o, ..] += weight[o, j] x[.., index[o, j], ..]
            term = np.take(x, self.index[:, j], axis=axis)
            with np.errstate(invalid="ignore"):   # 0 * inf: NaN, as PyTorch, without a warning
                term *= self.weight[:, j].astype(x.dtype, copy=False).reshape((n_out,) + trailing)
            term[(slice(None),) * axis + (self.short_rows[j],)] = 0   # not 0 * x: x may be inf
            out = out + term
        return out


def apply_maps(x, maps):
    """x with ``maps[i]`` applied along axis ``-len(maps) + i`` (None: that axis is left alone)."""
    for i, m in enumerate(maps):
        if m is not None:
            x = m.apply(x, x.ndim - len(maps) + i)
    return x


class AxisMaps(Function):
    """out = x ×_1 M_1 ... ×_d M_d over the last d axes (``maps``: one ``AxisMap`` or None per axis).
    Linear: dx = dout ×_1 M_1ᵀ ... ×_d M_dᵀ, and the graph_backward is this Function with the transposed maps
    (whose own backward transposes them back)."""

    @staticmethod
    def forward(ctx, a, maps):
        ctx.maps = maps
        return apply_maps(a._data, maps)

    @staticmethod
    def backward(ctx, dout):
        return apply_maps(dout._data, _transposed(ctx.maps)), None

    @classmethod
    def graph_backward(cls, ctx, dout):
        return cls.apply(dout, _transposed(ctx.maps)), None


def _cached(builder):
    """Keep the maps and windows built for recent arguments (a training loop asks for the same ones every
    step); what they hold is never written to."""
    return functools.lru_cache(maxsize=512)(builder)


def _transposed(maps):
    return tuple(None if m is None else m.T for m in maps)


# The ops built on AxisMaps, named for their grad_fn (``AvgPoolBackward``, ...).
class AvgPool(AxisMaps):
    @classmethod
    def graph_backward(cls, ctx, dout):     # PyTorch's avg_pool backward reads the input (for its shape)
        return depending_on_input(ctx, 0, cls.apply(dout, _transposed(ctx.maps))), None


class AdaptiveAvgPool(AxisMaps):
    @classmethod
    def graph_backward(cls, ctx, dout):
        # PyTorch's backward reads the input (for its shape), but for an output of ones (a mean there, which does not)
        dx = cls.apply(dout, _transposed(ctx.maps))
        ones = all(n == 1 for n in dout.shape[dout.ndim - len(ctx.maps):])
        return (dx if ones else depending_on_input(ctx, 0, dx)), None


class Pad(AxisMaps):
    pass


class EdgePad(Pad):
    """Reflection and replication padding: PyTorch's backward of these reads the input (for its shape)."""

    @classmethod
    def graph_backward(cls, ctx, dout):
        return depending_on_input(ctx, 0, cls.apply(dout, _transposed(ctx.maps))), None


class Interpolate(AxisMaps):
    pass


class WindowMax(Function):
    """out = x[..., index]: ``index`` (*B, *O) holds flat positions in x's last d axes (x (*B, *S)), the max of
    each pooling window, chosen before the call. Linear in x: dx = the scatter-add of dout at ``index``.
    With ``scatter=True`` this Function is that scatter-add (into a spatial size S), whose adjoint is the
    gather: the graph_backward of each is the other. ``values``: the gather's result when the scan that
    chose ``index`` already has it (the numba kernels), so that the forward does not read x again."""

    @staticmethod
    def forward(ctx, a, index, size, scatter, values):
        ctx.index, ctx.size, ctx.scatter = index, size, scatter   # size: S, the gather's input spatial shape
        return values if values is not None else _gather_or_scatter(scatter, a._data, index, size)

    @staticmethod
    def backward(ctx, dout):
        return _gather_or_scatter(not ctx.scatter, dout._data, ctx.index, ctx.size), None, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        dx = WindowMax.apply(dout, ctx.index, ctx.size, not ctx.scatter, None)
        if not ctx.scatter:                 # max pooling: PyTorch's backward reads the input
            dx = depending_on_input(ctx, 0, dx)
        return dx, None, None, None, None


def _numba_pool(dtype, scatter=False, scan_dims=None):
    """The numba kernels (``kernels/pool_numba.py``) on the numba backend if they take ``dtype`` (the scatter-add
    only float32/float64) and, for a window scan, its ``scan_dims`` spatial axes (1 or 2; the gather and the
    scatter-add take any); None otherwise: then the NumPy code here, which is also their reference."""
    fast = kernels.numba_module("pool_numba")
    if fast is None or (scan_dims is not None and scan_dims > 2):
        return None
    return fast if dtype in (fast.SCATTER_DTYPES if scatter else fast.SCAN_DTYPES) else None


def _gather_or_scatter(scatter, a, index, size):
    """``_scatter_add(a, index, size)`` if ``scatter`` else ``_take(a, index, size)``, by the numba kernels
    where they take a's dtype."""
    fast = _numba_pool(a.dtype, scatter)
    if scatter:
        return (fast.scatter_add if fast else _scatter_add)(a, index, size)
    return (fast.take if fast else _take)(a, index, size)


def _take(x, index, size):
    """x[..., index]: x (*B, *size), index (*B, *O) flat positions in size -> (*B, *O)."""
    n_rows = math.prod(index.shape[:index.ndim - len(size)])
    n_out = math.prod(index.shape[index.ndim - len(size):])
    rows = x.reshape(n_rows, math.prod(size))
    return np.take_along_axis(rows, index.reshape(n_rows, n_out), axis=1).reshape(index.shape)


def _scatter_add(g, index, size):
    """zeros (*B, *size) with g (*B, *O) added at the flat positions ``index`` (*B, *O)."""
    batch = index.shape[:index.ndim - len(size)]
    n_rows, per_row = math.prod(batch), math.prod(size)
    n_out = math.prod(index.shape[index.ndim - len(size):])
    flat = (index.reshape(n_rows, n_out) + (np.arange(n_rows) * per_row)[:, None]).ravel()  # in (*B, *size)

    def add_at(values):
        return np.bincount(flat, values.ravel().astype(np.float64, copy=False), n_rows * per_row)
    out = add_at(g.real) + 1j * add_at(g.imag) if kind_of(g.dtype) == "c" else add_at(g)
    return out.astype(g.dtype, copy=False).reshape(batch + tuple(size))


# =========================================================================== arguments
def _ntuple(value, d, what, name):
    """``value`` (an int or a tuple of 1 or d ints) as a d-tuple; PyTorch's RuntimeError otherwise."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            value = tuple(value) * d
        if len(value) != d:
            omitted = "be omitted, " if what == "stride" else ""
            raise RuntimeError(f"{name}: {what} must either {omitted}be a single int, or a tuple of {d} ints, "
                               f"but got {tuple(value)}")
        return tuple(operator.index(v) for v in value)
    return (operator.index(value),) * d


def _check_ndim(input, d, name):
    """Pooling takes (N, C, *S) or unbatched (C, *S) input with d spatial dims, none of them empty."""
    if input.ndim not in (d + 1, d + 2) and name in ("max_pool2d", "max_pool3d", "avg_pool3d"):
        raise RuntimeError(f"{name}: non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    if input.ndim not in (d + 1, d + 2) or any(s == 0 for s in input.shape[-d - 1:]):
        raise RuntimeError(f"{name}: Expected {d + 1}D or {d + 2}D (batch mode) tensor with optional 0 dim batch "
                           f"size for input (non-empty spatial and channel dims), but got: {list(input.shape)}")


def _pool_args(name, input, d, kernel_size, stride, padding, dilation):
    """Checked (kernel, stride, padding, dilation) d-tuples of a max or average pooling."""
    _check_ndim(input, d, name)
    kernel = _ntuple(kernel_size, d, "kernel_size", name)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else \
        _ntuple(stride, d, "stride", name)
    padding = _ntuple(padding, d, "padding", name)
    dilation = _ntuple(dilation, d, "dilation", name)
    if any(s == 0 for s in stride):
        raise RuntimeError(f"{name}: stride should not be zero, but got stride={stride}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{name}: stride should be greater than zero, but got stride={stride}")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{name}: kernel size should be greater than zero, but got kernel_size={kernel}")
    if any(v <= 0 for v in dilation):
        raise RuntimeError(f"{name}: dilation should be greater than zero, but got dilation={dilation}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{name}: pad must be non-negative, but got pad: {padding}")
    for p, k, dl in zip(padding, kernel, dilation):
        if p > k // 2 and name == "max_pool1d":     # (PyTorch's words differ by op)
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} "
                               f"and kernel_size={k}")
        if p > k // 2:
            raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={dl}")
    return kernel, stride, padding, dilation


def _pooled_size(size, k, s, p, dl, ceil_mode):
    """Output length of a pooling: floor (or ceil) of (size + 2p - dl (k - 1) - 1) / s, plus 1; with ceil_mode
    the last window must start inside the input or its left padding."""
    span = size + 2 * p - dl * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _output_sizes(name, input, d, kernel, stride, padding, dilation, ceil_mode):
    sizes = tuple(_pooled_size(n, k, s, p, dl, ceil_mode)
                  for n, k, s, p, dl in zip(input.shape[-d:], kernel, stride, padding, dilation))
    if any(o < 1 for o in sizes):
        lead = (input.shape[-d - 1],)
        raise RuntimeError(f"{name}: Given input size: ({'x'.join(map(str, lead + input.shape[-d:]))}). Calculated "
                           f"output size: ({'x'.join(map(str, lead + sizes))}). Output size is too small")
    return sizes


# =========================================================================== windows
def _pool_window(size, out, k, s, p, dl):
    """Window positions (out, k) of a strided pooling along one axis (x index o s - p + j dl), and which are
    inside the input."""
    pos = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * dl
    return pos, (pos >= 0) & (pos < size)


def _adaptive_bounds(size, out):
    """Adaptive window o covers [floor(o size / out), ceil((o + 1) size / out))."""
    o = np.arange(out)
    return (o * size) // out, -((-(o + 1) * size) // out)


def _adaptive_window(size, out):
    start, end = _adaptive_bounds(size, out)
    k = max(int((end - start).max(initial=1)), 1)
    pos = start[:, None] + np.arange(k)[None, :]
    return pos, pos < end[:, None]


def _scan_plan(windows, sizes):
    """What ``_window_argmax`` reads, for each kernel offset (row-major over the kernel): per spatial axis the
    input positions of the windows' elements at that offset (a slice when they are evenly spaced and inside
    the input, else a clipped index array), and which are inside the input (None: all). With the windows'
    positions (per axis (O_j, k_j)), to turn the winning offsets into input positions."""
    d = len(windows)
    steps = []
    for offset in itertools.product(*(range(pos.shape[1]) for pos, _ in windows)):
        readers, valid = [], None
        for j, ((pos, ok), a) in enumerate(zip(windows, offset)):
            column, inside = pos[:, a], ok[:, a]                            # (O_j,) positions along axis j
            step = column[1] - column[0] if len(column) > 1 else 1
            if inside.all() and step > 0 and np.array_equal(column, column[0] + step * np.arange(len(column))):
                readers.append(slice(column[0], column[-1] + 1, step))
            else:
                readers.append(np.clip(column, 0, sizes[j] - 1))
            if not inside.all():
                along = (-1,) + (1,) * (d - 1 - j)
                valid = (True if valid is None else valid) & inside.reshape(along)
        steps.append((readers, valid))
    return tuple(pos for pos, _ in windows), steps


def _window_argmax(x, plan):
    """Flat spatial index (*B, *O) into x's last d axes of each window's maximum, by PyTorch's CPU scan: over
    the kernel offsets in row-major order, an element replaces the best so far if it is greater or NaN (so the
    first maximum wins a tie, the last NaN wins over numbers); the first element inside the input starts each
    window. ``plan``: (positions, steps, strided) from ``_pool_plan`` / ``_adaptive_plan``. One pass per kernel
    offset over output-sized arrays, keeping the winning offset."""
    positions, steps, strided = plan
    d = len(positions)
    kernel = tuple(pos.shape[1] for pos in positions)
    out_shape = x.shape[:x.ndim - d] + tuple(pos.shape[0] for pos in positions)
    lowest = -np.inf if kind_of(x.dtype) == "f" else np.iinfo(x.dtype).min if kind_of(x.dtype) in "iu" else False
    has_nan = kind_of(x.dtype) == "f" and bool(np.isnan(x).any())
    # padding with ``lowest`` is exact unless an input element equals it (PyTorch then takes the first element
    # inside the input, not a padded one)
    if strided is not None and not (any(any(p) for p in strided[0]) and (x == lowest).any()):
        choice = _padded_scan(x, strided, out_shape, lowest, has_nan, math.prod(kernel))
    else:
        choice = _masked_scan(x, steps, out_shape, lowest, has_nan)
    offsets = np.unravel_index(choice, kernel)
    flat = 0
    for j, (pos, a) in enumerate(zip(positions, offsets)):                # input position along axis j
        flat = flat * x.shape[x.ndim - d + j] + pos[np.arange(pos.shape[0]).reshape((-1,) + (1,) * (d - 1 - j)), a]
    return flat.astype(np.int64, copy=False)


def _tiled_argmax(x, kernel, out_sizes):
    """``_window_argmax`` for windows that tile the input (stride = kernel, no padding or dilation, every window
    whole): the same scan over the kernel offsets (``_padded_scan``, each offset an evenly spaced slice of x,
    so PyTorch's rules for ties and NaN hold), and the flat index of each window's winner by arithmetic,
    (o * k + offset) along each axis, instead of the general plan's position tables. (*B, *O) int64."""
    d = len(kernel)
    batch, sizes = x.shape[:x.ndim - d], x.shape[x.ndim - d:]
    slices = [tuple(slice(a, a + (o - 1) * k + 1, k) for a, o, k in zip(offset, out_sizes, kernel))
              for offset in itertools.product(*(range(k) for k in kernel))]
    has_nan = kind_of(x.dtype) == "f" and bool(np.isnan(x).any())
    choice = _padded_scan(x, (((0, 0),) * d, slices), batch + tuple(out_sizes), None, has_nan, len(slices))
    offsets = np.unravel_index(choice, kernel)
    flat = 0
    for j in range(d):                          # input position along axis j: o * k + offset
        along = (-1,) + (1,) * (d - 1 - j)
        flat = flat * sizes[j] + (np.arange(out_sizes[j]) * kernel[j]).reshape(along) + offsets[j]
    return np.asarray(flat, dtype=np.int64)


def _padded_scan(x, strided, out_shape, lowest, has_nan, n_offsets):
    """The winning kernel offset per window of a strided pooling: x padded with ``lowest`` so that every
    offset reads an evenly spaced slice; offsets only increase, so the winner is a running maximum."""
    pads, slices = strided
    nb = x.ndim - len(pads)
    if any(any(p) for p in pads):
        x = np.pad(x, [(0, 0)] * nb + list(pads), constant_values=lowest)
    kind = np.int8 if n_offsets < 128 else np.int32
    best = np.array(x[(Ellipsis,) + slices[0]])
    choice = np.zeros(out_shape, dtype=kind)
    for n, window in enumerate(slices[1:], 1):
        values = x[(Ellipsis,) + window]
        better = values > best
        if has_nan:
            better |= np.isnan(values)
        np.maximum(best, values, out=best)                                 # keeps NaN, as the scan does
        np.maximum(choice, better.astype(kind) * kind(n), out=choice)
    return choice


def _masked_scan(x, steps, out_shape, lowest, has_nan):
    """The winning kernel offset per window, reading each offset's elements by index with a validity mask
    (adaptive windows, or input holding the padding value)."""
    d = len(steps[0][0])
    best = np.full(out_shape, lowest, dtype=x.dtype)
    choice = np.full(out_shape, -1, dtype=np.int32)
    for n, (readers, valid) in enumerate(steps):
        values = x
        for j, r in enumerate(readers):
            values = values[(Ellipsis, r) + (slice(None),) * (d - 1 - j)]
        better = (values > best) | (choice < 0)                           # (*B, *O)
        if has_nan:
            better |= np.isnan(values)
        if valid is not None:
            better &= valid
        np.copyto(best, values, where=better)
        np.copyto(choice, n, where=better)
    return choice


def _max_output(input, d, values, index, return_indices):
    """The pooled tensor (a ``WindowMax`` of input at ``index``, whose values the scan may already have), and
    the indices if asked for."""
    out = WindowMax.apply(input, index, input.shape[input.ndim - d:], False, values)
    return (out, Tensor(index.copy())) if return_indices else out   # a copy: backward keeps its own


@_cached
def _pool_windows(in_sizes, out_sizes, kernel, stride, padding, dilation):
    """Per axis the positions (O, k) and inside (O, k) of a strided max pooling's windows; None if a window
    lies entirely in the padding."""
    windows = tuple(_pool_window(*args) for args in zip(in_sizes, out_sizes, kernel, stride, padding, dilation))
    return windows if all(ok.any(axis=1).all() for _, ok in windows) else None


@_cached
def _pool_runs(in_sizes, out_sizes, kernel, stride, padding, dilation):
    return _window_runs(_pool_windows(in_sizes, out_sizes, kernel, stride, padding, dilation))


@_cached
def _pool_plan(in_sizes, out_sizes, kernel, stride, padding, dilation):
    """The scan plan of a strided max pooling (its windows must touch the input): the masked steps and, for
    the padded scan, the padding (left, right) per axis and each offset's slices into the padded input."""
    positions, steps = _scan_plan(_pool_windows(in_sizes, out_sizes, kernel, stride, padding, dilation), in_sizes)
    pads = tuple((p, max((o - 1) * s + (k - 1) * dl + 1 - p - n, 0))
                 for n, o, k, s, p, dl in zip(in_sizes, out_sizes, kernel, stride, padding, dilation))
    slices = [tuple(slice(a * dl, a * dl + (o - 1) * s + 1, s) for a, o, s, dl in zip(offset, out_sizes, stride,
                                                                                      dilation))
              for offset in itertools.product(*(range(k) for k in kernel))]
    return positions, steps, (pads, slices)


@_cached
def _adaptive_windows(in_sizes, out_sizes):
    return tuple(_adaptive_window(n, o) for n, o in zip(in_sizes, out_sizes))


@_cached
def _adaptive_runs(in_sizes, out_sizes):
    return _window_runs(_adaptive_windows(in_sizes, out_sizes))


@_cached
def _adaptive_plan(in_sizes, out_sizes):
    return _scan_plan(_adaptive_windows(in_sizes, out_sizes), in_sizes) + (None,)


def _window_runs(windows):
    """The windows (per axis positions and inside, (O, k)) as the numba scan takes them: per axis (first,
    count, step), window o's inside positions being first[o] + t step for t < count[o]. Exact for pooling
    and adaptive windows alike: along an axis the inside positions of a window are consecutive offsets,
    ``step`` (the dilation; 1 for adaptive windows) apart."""
    runs = []
    for pos, inside in windows:
        first = pos[np.arange(pos.shape[0]), inside.argmax(axis=1)]
        step = int(pos[0, 1] - pos[0, 0]) if pos.shape[1] > 1 else 1
        runs.append((first.astype(np.int64), inside.sum(axis=1).astype(np.int64), step))
    return tuple(runs)


def _windows_max(input, d, runs, plan, return_indices):
    """Max pooling over windows along the last d axes: by the numba scan over ``runs()`` (``_window_runs``), or
    by the NumPy scan over ``plan()`` (the same windows as a scan plan) and a gather."""
    fast = _numba_pool(input.dtype, scan_dims=d)
    if fast is not None:
        values, index = fast.window_max(input._data, runs())
    else:
        values, index = None, _window_argmax(input._data, plan())
    return _max_output(input, d, values, index, return_indices)


# =========================================================================== max pooling
def _max_pool(name, d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    # PyTorch's kernels: no bool ones; max_pool1d without indices has its own kernel, for floats only (with indices
    # it runs max_pool2d's)
    kernel_name = "max_pool1d_impl" if name == "max_pool1d" and not return_indices else \
        ("max_pool2d" if name == "max_pool1d" else name)
    if kind_of(input.dtype) == "b" or kernel_name == "max_pool1d_impl" and kind_of(input.dtype) in "iu":
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{scalar_type_name(input.dtype)}'")
    kernel, stride, padding, dilation = _pool_args(name, input, d, kernel_size, stride, padding, dilation)
    sizes = _output_sizes(name, input, d, kernel, stride, padding, dilation, ceil_mode)
    in_sizes = input.shape[-d:]
    if (stride == kernel and not any(padding) and all(dl == 1 for dl in dilation)
            and all(o * k <= n for o, k, n in zip(sizes, kernel, in_sizes))):
        # windows that tile the input, all whole (ceil_mode's partial last window takes the general path)
        fast = _numba_pool(input.dtype, scan_dims=d)
        values, index = fast.tiled_max(input._data, kernel, sizes) if fast is not None else \
            (None, _tiled_argmax(input._data, kernel, sizes))
        return watching(_max_output(input, d, values, index, return_indices), input)
    args = (in_sizes, sizes, kernel, stride, padding, dilation)
    if _pool_windows(*args) is None:
        # PyTorch returns -inf there, with an index outside the input that its backward would write to
        raise RuntimeError(f"{name}: a pooling window lies entirely in the padding (kernel_size={kernel}, "
                           f"padding={padding}, dilation={dilation}, input size {tuple(in_sizes)})")
    # (PyTorch's pooling backwards save the input, for its shape: a write into it after the forward is refused)
    return watching(_windows_max(input, d, lambda: _pool_runs(*args), lambda: _pool_plan(*args), return_indices),
                    input)


@refuses_complex('"max_pool2d" not implemented for \'{dtype}\'')
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of ``kernel_size`` elements (spaced ``dilation`` apart, every ``stride``) of the last axis
    of (N, C, L) or (C, L) input, padded by ``padding`` with -inf. dx: dout routed to each window's argmax."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@refuses_complex('"max_pool2d" not implemented for \'{dtype}\'')
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over (kH, kW) windows of (N, C, H, W) or (C, H, W) input (see ``max_pool1d``); indices are flat
    positions h W + w."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@autocast_op("float32")
@refuses_complex('"max_pool3d" not implemented for \'{dtype}\'')
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over (kD, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W) input (see ``max_pool1d``); indices are
    flat positions (d H + h) W + w. The window scan is the NumPy one (the numba scans take 1 or 2 axes)."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _returning_indices(pool):
    """PyTorch's ``<pool>_with_indices``: ``pool`` (same signature) always returning (output, indices); its
    ``return_indices`` argument is taken and ignored, as PyTorch does."""
    signature = inspect.signature(pool)

    def with_indices(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.arguments["return_indices"] = True
        return pool(*bound.args, **bound.kwargs)
    with_indices.__name__ = with_indices.__qualname__ = f"{pool.__name__}_with_indices"
    with_indices.__signature__ = signature
    with_indices.__doc__ = f"``{pool.__name__}`` returning (output, indices).\n\n{pool.__doc__}"
    return with_indices


max_pool1d_with_indices = _returning_indices(max_pool1d)
max_pool2d_with_indices = _returning_indices(max_pool2d)
max_pool3d_with_indices = _returning_indices(max_pool3d)


# =========================================================================== max unpooling
class MaxUnpool(Function):
    """out = zeros (*B, *S) with x (*B, *O) written at the flat positions ``index`` (*B, *O) in S (where two
    elements go to one position, the later one in row-major order stays, as in PyTorch's CPU loop).
    Linear in x: dx = dout[..., index], ``WindowMax``'s gather (for every element, also an overwritten one, as
    PyTorch); the graph_backward applies it as a ``WindowMax``, whose backward, the scatter-add, is its
    adjoint."""

    @staticmethod
    def forward(ctx, a, index, size):
        ctx.index, ctx.size = index, size
        batch, pooled = index.shape[:index.ndim - len(size)], index.shape[index.ndim - len(size):]
        flat = (math.prod(batch), math.prod(pooled))
        rows = np.zeros((flat[0], math.prod(size)), dtype=a.dtype)                 # (B, prod S)
        np.put_along_axis(rows, index.reshape(flat), a._data.reshape(flat), axis=1)
        return rows.reshape(batch + tuple(size))

    @staticmethod
    def backward(ctx, dout):
        return _gather_or_scatter(False, dout._data, ctx.index, ctx.size), None, None

    @staticmethod
    def graph_backward(ctx, dout):
        return WindowMax.apply(dout, ctx.index, ctx.size, False, None), None, None


def _unpool_sizes(input, kernel, stride, padding, output_size):
    """The spatial output size: (L - 1) s + k - 2p along each axis, or ``output_size`` (d sizes, or d + 2 with
    the batch and channel first) if it is within a stride of that."""
    d = len(kernel)
    default = tuple((n - 1) * s + k - 2 * p for n, k, s, p in zip(input.shape[-d:], kernel, stride, padding))
    if output_size is None:
        sizes = default
    else:
        sizes = tuple(operator.index(o) for o in output_size)
        if len(sizes) == d + 2:
            sizes = sizes[2:]
        if len(sizes) != d:
            raise ValueError(f"output_size should be a sequence containing {d} or {d + 2} elements, but it has a "
                             f"length of '{len(sizes)}'")
        for j, (o, n, s) in enumerate(zip(sizes, default, stride)):
            if not n - s < o < n + s:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {j} must be between {n - s} '
                                 f"and {n + s})")
    for j, o in enumerate(sizes):
        if o < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{j}]={o}")
    return sizes


def _max_unpool(name, d, input, indices, kernel_size, stride, padding, output_size):
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}: Expected {d + 1}D or {d + 2}D (batch mode) input, but got a tensor with "
                           f"{input.ndim} dimensions: {list(input.shape)}")
    if indices.dtype != np.int64:
        raise RuntimeError(f"{name}: elements in indices should be type int64 but got: "
                           f"{scalar_type_name(indices.dtype)}")
    if indices.shape != input.shape:
        raise RuntimeError(f"{name}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if any(n == 0 for n in input.shape[-d - 1:]):
        raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but got "
                           f"{list(input.shape)}")
    _check_floating(name, input)
    kernel = _ntuple(kernel_size, d, "kernel_size", name)
    stride = kernel if stride is None else _ntuple(stride, d, "stride", name)
    padding = _ntuple(padding, d, "padding", name)
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{name}: strides should be greater than zero, but got stride: {list(stride)}")
    sizes = _unpool_sizes(input, kernel, stride, padding, output_size)
    index = np.array(indices._data)                                        # a copy: backward keeps its own
    # also for an empty output, which PyTorch returns without this check (its backward then fails)
    invalid = np.flatnonzero((index < 0) | (index >= math.prod(sizes)))
    if invalid.size:
        raise RuntimeError(f"{name}: Found an invalid max index: {index.flat[invalid[0]]} (output volumes are of "
                           f"size {'x'.join(map(str, sizes))})")
    return MaxUnpool.apply(input, index, sizes)


@takes_tensors("input", "indices")
@refuses_complex('"max_unpool2d" not implemented for \'{dtype}\'')
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: (N, C, L) or (C, L) input written at ``indices`` (from
    ``max_pool1d(..., return_indices=True)``) into zeros of length (L - 1) stride + kernel_size - 2 padding, or
    ``output_size``. dx = dout at the indices."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@takes_tensors("input", "indices")
@refuses_complex('"max_unpool2d" not implemented for \'{dtype}\'')
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d`` on (N, C, H, W) or (C, H, W) input (see ``max_unpool1d``)."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@takes_tensors("input", "indices")
@refuses_complex('"max_unpool3d" not implemented for \'{dtype}\'')
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d`` on (N, C, D, H, W) or (C, D, H, W) input (see ``max_unpool1d``)."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# =========================================================================== average pooling
@_cached
def _avg_windows(size, out, k, s, p, count_include_pad):
    """A 1-D average pooling's windows: which of the ``size`` input elements each of the ``out`` windows holds
    (out, size), and its count (out,), the window's length inside the padded input (count_include_pad) or inside
    the input."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    count = end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0)
    cols = np.arange(size)[None, :]
    return (cols >= start[:, None]) & (cols < end[:, None]), np.maximum(count, 1)


@_cached
def _avg_map(size, out, k, s, p, count_include_pad, divisor):
    """A 1-D average pooling, (out, size): 1/count over each window's input elements (``_avg_windows``); 1/divisor
    if given."""
    inside, count = _avg_windows(size, out, k, s, p, count_include_pad)
    return AxisMap(inside / (count[:, None] if divisor is None else divisor))


def _avg_pool(name, d, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    kernel, stride, padding, _ = _pool_args(name, input, d, kernel_size, stride, padding, 1)
    if input.dtype != np.int64:              # PyTorch pools int64 too (below), no other integer dtype
        _check_floating(name, input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{name}: divisor must be not zero, but got divisor_override={divisor_override}")
    if d == 3 and any(n < k for n, k in zip(input.shape[-3:], kernel)):    # PyTorch's check for 3 axes only
        raise RuntimeError(f"{name}: input image (T: {input.shape[-3]} H: {input.shape[-2]} W: {input.shape[-1]}) "
                           f"smaller than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    sizes = _output_sizes(name, input, d, kernel, stride, padding, (1,) * d, ceil_mode)
    axes = list(zip(input.shape[-d:], sizes, kernel, stride, padding))
    if input.dtype == np.int64:
        windows = [_avg_windows(n, o, k, s, p, count_include_pad) for n, o, k, s, p in axes]
        return Tensor(_integer_average(input._data, windows, divisor_override))
    # with divisor_override: window sums along every axis, divided by it along the first
    divisors = [None] * d if divisor_override is None else [divisor_override] + [1] * (d - 1)
    maps = tuple(_avg_map(n, o, k, s, p, count_include_pad, q) for (n, o, k, s, p), q in zip(axes, divisors))
    return watching(AvgPool.apply(input, maps), input)


def _integer_average(x, windows, divisor_override):
    """PyTorch's int64 average pooling: each window's integer sum divided by its divisor (divisor_override, or the
    product of the window's per-axis counts) in C's integer division, which truncates toward zero."""
    sums = apply_maps(x, tuple(AxisMap(inside.astype(np.int64)) for inside, _ in windows))
    divisor = (np.int64(divisor_override) if divisor_override is not None
               else functools.reduce(np.multiply.outer, [count for _, count in windows]))   # (o_1, ..., o_d)
    quotient = sums // divisor
    return quotient + ((sums % divisor != 0) & ((sums < 0) != (divisor < 0)))   # floor to truncation


@refuses_complex('"avg_pool2d" not implemented for \'{dtype}\'')
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows of the last axis of (N, C, L) or (C, L) input (zero padding counted in the mean
    unless ``count_include_pad=False``). Linear: dx = dout spread evenly over each window."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@refuses_complex('"avg_pool2d" not implemented for \'{dtype}\'')
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over (kH, kW) windows of (N, C, H, W) or (C, H, W) input (see ``avg_pool1d``); with
    ``divisor_override`` the window sums are divided by it instead."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@autocast_op("float32")
@refuses_complex('"avg_pool3d_out_frame" not implemented for \'{dtype}\'')
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over (kD, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W) input (see ``avg_pool2d``)."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# =========================================================================== adaptive pooling
def _check_floating(name, input):
    """Averages and interpolations take floating-point input (int64 average pooling is ``_integer_average``)."""
    if not is_differentiable(input.dtype):          # floating or complex (bfloat16 too)
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(input.dtype)}\'')


def _adaptive_sizes(name, input, d, output_size):
    if isinstance(output_size, (tuple, list)) and input.ndim <= len(output_size):   # PyTorch's Python-level check
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.ndim not in (d + 1, d + 2) or any(s == 0 for s in input.shape[-d:]):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor with non-empty spatial dims, but "
                           f"got: {list(input.shape)}")
    _check_floating(name, input)
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * d
    if len(sizes) != d:
        raise RuntimeError(f"{name}: output_size must be {d}, but got {output_size}")
    sizes = tuple(n if o is None else operator.index(o) for o, n in zip(sizes, input.shape[-d:]))
    if any(o < 0 for o in sizes):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{output_size}")
    return sizes


@_cached
def _adaptive_avg_map(size, out):
    start, end = _adaptive_bounds(size, out)
    cols = np.arange(size)[None, :]
    return AxisMap(((cols >= start[:, None]) & (cols < end[:, None])) / np.maximum(end - start, 1)[:, None])


def _adaptive_avg_pool(name, d, input, output_size):
    sizes = _adaptive_sizes(name, input, d, output_size)
    maps = tuple(_adaptive_avg_map(n, o) for n, o in zip(input.shape[-d:], sizes))
    out = AdaptiveAvgPool.apply(input, maps)
    # PyTorch's saves the input, except for an output of ones, which it computes as a mean (saving nothing)
    return out if all(o == 1 for o in sizes) else watching(out, input)


def adaptive_avg_pool1d(input, output_size):
    """Mean over ``output_size`` windows [floor(o L / out), ceil((o + 1) L / out)) of the last axis. Linear."""
    _complex_mean_only(input, output_size, 1, "adaptive_avg_pool2d")
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Mean over adaptive windows of the last two axes (``output_size`` an int, a pair, None keeps a size)."""
    _complex_mean_only(input, output_size, 2, "adaptive_avg_pool2d")
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


@autocast_op("float32")
def adaptive_avg_pool3d(input, output_size):
    """Mean over adaptive windows of the last three axes (``output_size`` an int, a triple, None keeps a size)."""
    _complex_mean_only(input, output_size, 3, "adaptive_avg_pool3d_cpu")
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def _complex_mean_only(input, output_size, d, kernel):
    """PyTorch pools complex numbers adaptively only to an output of size 1 (its shortcut, a mean over the
    axes) or, in 1 or 2 dimensions, from an empty input; any other size is refused by its kernel."""
    if not (isinstance(input, Tensor) and input.dtype.kind == "c" and (input.numel() or d == 3)):
        return
    sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * d
    if any(size != 1 for size in sizes):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input.dtype)}\'')


def _adaptive_max_pool(name, d, input, output_size, return_indices):
    sizes = _adaptive_sizes(name, input, d, output_size)
    in_sizes = input.shape[-d:]
    return watching(_windows_max(input, d, lambda: _adaptive_runs(in_sizes, sizes),
                                 lambda: _adaptive_plan(in_sizes, sizes), return_indices), input)


@refuses_complex('"adaptive_max_pool2d" not implemented for \'{dtype}\'')
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over adaptive windows of the last axis (see ``adaptive_avg_pool1d``); dx: dout routed to each argmax."""
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


@refuses_complex('"adaptive_max_pool2d" not implemented for \'{dtype}\'')
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over adaptive windows of the last two axes; indices are flat positions h W + w."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


@autocast_op("float32")
@refuses_complex('"adaptive_max_pool3d_cpu" not implemented for \'{dtype}\'')
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over adaptive windows of the last three axes; indices are flat positions (d H + h) W + w."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


adaptive_max_pool1d_with_indices = _returning_indices(adaptive_max_pool1d)
adaptive_max_pool2d_with_indices = _returning_indices(adaptive_max_pool2d)
adaptive_max_pool3d_with_indices = _returning_indices(adaptive_max_pool3d)


# =========================================================================== padding
_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_source(size, left, right, mode):
    """The input position each of the size + left + right output positions reads along one axis (-1: none,
    constant padding): reflected about the end elements, clamped to them, or wrapped around."""
    pos = np.arange(-left, size + right)
    if mode == "reflect":
        pos = np.abs(pos)
        return (size - 1) - np.abs((size - 1) - pos)
    if mode == "replicate":
        return np.clip(pos, 0, size - 1)
    if mode == "circular":   # negative padding crops first; the positive padding wraps around what is left
        cut_left, cut_right = max(-left, 0), max(-right, 0)
        kept = size - cut_left - cut_right
        return np.arange(-max(left, 0), kept + max(right, 0)) % kept + cut_left
    return np.where((pos >= 0) & (pos < size), pos, -1)


@_cached
def _pad_map(size, left, right, mode):
    return AxisMap(_selection_matrix(_pad_source(size, left, right, mode), size))


def _selection_matrix(source, size):
    """(len(source), size) 0/1 matrix with row o picking input element source[o] (none where -1)."""
    m = np.zeros((len(source), size))
    rows = np.flatnonzero(source >= 0)
    m[rows, source[rows]] = 1
    return m


def _check_pad(input, pad, mode, value):
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2, but got pad={tuple(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode} (expected one of {', '.join(_PAD_MODES)})")
    if mode == "constant":
        return
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for i in range(n):
        dim = input.ndim - 1 - i
        left, right, size = pad[2 * i], pad[2 * i + 1], input.shape[dim]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError(f"Padding value causes wrapping around more than once: padding ({left}, {right}) at "
                               f"dimension {dim} of input {list(input.shape)}")


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims, the last first: pad = (left_last, right_last, left_2nd_last, ...).
    ``constant`` fills with ``value`` (negative padding crops; any dims), ``reflect`` mirrors about the edge
    elements, ``replicate`` repeats them, ``circular`` wraps around (these three: the last 1-3 dims of a
    batched or unbatched input). Linear up to the constant: dx = the sum of dout over every output position
    that reads each input element."""
    pad = tuple(operator.index(p) for p in pad)
    _check_pad(input, pad, mode, value)
    if input._data.dtype in LIMITED:
        return _pad_bits(input, pad, mode, value)
    n = len(pad) // 2
    maps = []
    for i in reversed(range(n)):  # the last of the padded dims comes first in ``pad``
        dim, (left, right) = input.ndim - 1 - i, pad[2 * i:2 * i + 2]
        size = input.shape[dim]
        if size + left + right < 0 or (mode != "constant" and size + left + right < 1):
            raise RuntimeError(f"pad: padding ({left}, {right}) of dimension {dim} of input {list(input.shape)} "
                               f"leaves {size + left + right} elements (expected at least {int(mode != 'constant')})")
        if (left, right) == (0, 0):
            maps.append(None)
            continue
        maps.append(_pad_map(size, left, right, mode))
    maps = tuple(maps)
    out = (EdgePad if mode in ("reflect", "replicate") else Pad).apply(input, maps)
    if mode == "constant" and value is not None and value != 0:
        outside = apply_maps(np.ones(input.shape[input.ndim - n:]), maps) == 0   # the padded positions
        if outside.any():       # written into the fresh output (Pad saves nothing): x's values, -0.0 and all, stay
            np.copyto(out._data, np.asarray(value).astype(input.dtype), where=outside)
    # PyTorch's reflection and replication pads save the input (for its shape); its constant and circular ones do not
    return watching(out, input) if mode in ("reflect", "replicate") else out


def _pad_bits(input, widths, mode, value):
    """``pad`` of a uint16/32/64 or float8 tensor (no gradient): PyTorch moves their values (constant and circular
    padding; reflection and replication it refuses), so their bits are padded as the signed integers of
    their width, the fill value converted as ``fill_`` converts it (0 into float8_e8m0fnu is its overflow error) when
    something is filled."""
    dtype = input._data.dtype
    if mode in ("reflect", "replicate"):
        kind = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kind}_pad{len(widths) // 2}d" not implemented for \'{scalar_type_name(dtype)}\'')
    carrier = np.dtype(f"i{dtype.itemsize}")
    fill = None
    if mode == "constant" and any(w > 0 for w in widths):        # (only cropping: nothing is filled)
        shape = list(input.shape)
        for i in range(len(widths) // 2):
            shape[-1 - i] += widths[2 * i] + widths[2 * i + 1]
        fitted = fitted_scalar(0.0 if value is None else value, dtype, filling=math.prod(shape))
        fill = int(np.asarray(fitted, dtype=dtype).view(carrier))
    return Tensor(pad(Tensor(input._data.view(carrier)), widths, mode, fill)._data.view(dtype))


# =========================================================================== interpolation
_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}
_INTERPOLATING_DIMS = dict(_LINEAR_MODES, bicubic=2, lanczos=2)   # the spatial dims each interpolating mode takes
_INTERPOLATE_MODES = ("nearest", "nearest-exact", "area") + tuple(_INTERPOLATING_DIMS)


@_cached
def _nearest_map(size, out, scale, exact):
    """Nearest neighbour: output o reads floor(o * scale) (``nearest``) or floor((o + 0.5) * scale)
    (``nearest-exact``), clamped to the input, computed in float32 as PyTorch does."""
    step = np.float32(1 / scale) if scale is not None and scale > 0 else np.float32(size) / np.float32(out)
    where = np.arange(out, dtype=np.float32) + np.float32(0.5 if exact else 0)
    return AxisMap(_selection_matrix(np.minimum(np.floor(where * step).astype(np.int64), size - 1), size))


@_cached
def _linear_map(size, out, scale, align_corners):
    """Linear interpolation: output o reads the input at x = o (size - 1) / (out - 1) (align_corners) or at
    x = max((o + 0.5) / scale - 0.5, 0), as (1 - t) in[floor x] + t in[floor x + 1] (clamped to the input)."""
    x = np.maximum(_source_positions(size, out, scale, align_corners), 0)
    lo = x.astype(np.int64)
    hi = np.where(lo < size - 1, lo + 1, lo)
    t = np.clip(x - lo, 0, 1)
    index, weight = np.stack([lo, hi], axis=1), np.stack([1 - t, t], axis=1)
    m = np.zeros((out, size))
    np.add.at(m, (np.arange(out)[:, None], index), weight)
    return AxisMap(m, (index, weight))


_CUBIC_A = -0.75   # the cubic convolution kernel's parameter (Keys, 1981), as PyTorch's bicubic mode


def _cubic_weights(t, a):
    """The 4 weights of taps floor(x) - 1 .. floor(x) + 2 at the fraction t = x - floor(x), from Keys' cubic
    convolution kernel: |s| <= 1: ((a + 2)|s| - (a + 3)) s^2 + 1;  1 < |s| < 2: ((a|s| - 5a)|s| + 8a)|s| - 4a."""
    def near(s):
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)


def _step(size, out, scale, align_corners):
    """Input pixels per output pixel, as PyTorch computes it: (size - 1) / (out - 1) with align_corners, else
    1 / scale for a given scale factor, else size / out."""
    if align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    return 1 / scale if scale is not None and scale > 0 else size / out


def _source_positions(size, out, scale, align_corners):
    """Where output o reads the input (PyTorch's source index, before any clamping): o (size - 1) / (out - 1)
    with align_corners, else (o + 0.5) / scale - 0.5 (scale = out / size unless given)."""
    step = _step(size, out, scale, align_corners)
    return np.arange(out) * step if align_corners else (np.arange(out) + 0.5) * step - 0.5


@_cached
def _cubic_map(size, out, scale, align_corners):
    """Bicubic interpolation along one axis: output o reads taps floor(x) - 1 .. floor(x) + 2 around its source
    position x (``_source_positions``, not clamped), each clamped to the input, with ``_cubic_weights``."""
    x = _source_positions(size, out, scale, align_corners)
    base = np.floor(x).astype(np.int64)
    index = np.clip(base[:, None] + np.arange(-1, 3), 0, size - 1)                # (out, 4)
    weight = _cubic_weights(x - base, _CUBIC_A)                                    # (out, 4)
    m = np.zeros((out, size))
    np.add.at(m, (np.arange(out)[:, None], index), weight)
    return AxisMap(m, (index, weight))


# antialiased resampling: each mode's filter and its support (in input pixels at scale 1)
def _triangle(s):
    return np.maximum(1 - np.abs(s), 0)


def _cubic_aa(s, a=-0.5):
    """Keys' kernel with a = -0.5 (as PIL's and PyTorch's antialiased bicubic), 0 beyond |s| = 2."""
    s = np.abs(s)
    return np.where(s < 1, ((a + 2) * s - (a + 3)) * s * s + 1,
                    np.where(s < 2, ((a * s - 5 * a) * s + 8 * a) * s - 4 * a, 0.0))


def _lanczos3(s):
    """sinc(s) sinc(s / 3) for |s| < 3, else 0 (the Lanczos-3 windowed sinc)."""
    return np.where(np.abs(s) < 3, np.sinc(s) * np.sinc(s / 3), 0.0)


_ANTIALIAS_FILTERS = {"bilinear": (_triangle, 1.0), "bicubic": (_cubic_aa, 2.0), "lanczos": (_lanczos3, 3.0)}


@_cached
def _antialias_map(size, out, scale, align_corners, mode):
    """Resampling with a filter widened by the downscaling factor (PIL's and PyTorch's antialias): output o
    averages the inputs j within ``support`` of its centre c = step (o + 0.5), each weighted by
    filter((j + 0.5 - c) / max(step, 1)), the weights normalized to sum to 1 (step = in/out, or PyTorch's scale
    for align_corners and a given scale_factor)."""
    kernel, half_width = _ANTIALIAS_FILTERS[mode]
    step = _step(size, out, scale, align_corners)
    stretch = max(step, 1.0)                                       # widen the filter only when downsampling
    support = half_width * stretch
    centre = step * (np.arange(out) + 0.5)
    first = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    last = np.minimum((centre + support + 0.5).astype(np.int64), size)          # exclusive
    m = np.zeros((out, size))
    for o in range(out):
        taps = np.arange(first[o], last[o])
        weight = kernel((taps - centre[o] + 0.5) / stretch)
        total = weight.sum()
        m[o, taps] = weight / total if total != 0 else weight
    return AxisMap(m)


def _per_axis(value, spatial, what, got, form, letter):
    """``value`` for each spatial axis: a number for all of them, or a sequence of one per axis."""
    if not isinstance(value, (tuple, list)):
        return (value,) * len(spatial)
    if len(value) != len(spatial):
        raise ValueError(f"Input and {what} must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {spatial} and {got} {value}. Please provide input tensor in (N, C, "
                         f"d1, d2, ...,dK) format and {form} in ({letter}1, {letter}2, ...,{letter}K) format.")
    return tuple(value)


def _interpolate_sizes(input, d, size, scale_factor, recompute_scale_factor):
    """Output sizes and the scales the kernels use (None: in/out)."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = _per_axis(size, spatial, "output", "output size of", "output size", "o")
        return tuple(operator.index(s) for s in sizes), (None,) * d
    factors = tuple(float(f) for f in _per_axis(scale_factor, spatial, "scale_factor", "scale_factor of shape",
                                                    "scale_factor", "s"))
    if not all(-2.0 ** 63 <= n * f < 2.0 ** 63 for n, f in zip(spatial, factors)):      # NaN and infinities fail too
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    sizes = tuple(math.floor(n * f) for n, f in zip(spatial, factors))
    return sizes, (None,) * d if recompute_scale_factor else factors


# the modes in which ``interpolate`` takes uint8 images: nearest ones copy pixels (exact), bilinear and bicubic
# resize in PyTorch's fixed-point arithmetic (resize_uint8.py)
_UINT8_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic")


# the kernel PyTorch names when it refuses a complex input to ``interpolate`` in each mode
_COMPLEX_KERNELS = {"nearest": "compute_indices_weights_nearest", "nearest-exact": "compute_indices_weights_nearest",
                    "linear": "compute_indices_weights_linear", "trilinear": "compute_indices_weights_linear",
                    "bilinear": "upsample_bilinear2d_channels_last", "bicubic": "compute_indices_weights_cubic",
                    "area": "adaptive_avg_pool2d"}


@takes_tensors("input")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of (N, C, *S) input (1 to 3 of them) to ``size`` or S * ``scale_factor``:
    ``nearest`` / ``nearest-exact`` copies the nearest input element, ``linear``/``bilinear``/``trilinear``
    interpolate along each axis in turn (``align_corners``: the corner elements of input and output are
    aligned), ``bicubic`` with Keys' cubic kernel over 4 taps, ``area`` is an adaptive average pooling; with
    ``antialias`` (bilinear, bicubic, lanczos; 4-D input) the filter widens by the downscaling factor. Every
    mode is a linear map along each axis: dx = dout resampled by the transposed weights."""
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if input.dtype.kind == "c" and mode in _COMPLEX_KERNELS:         # PyTorch resamples real numbers only
        raise NotImplementedError(f'"{_COMPLEX_KERNELS[mode]}" not implemented for \'{scalar_type_name(input.dtype)}\'')
    d = input.ndim - 2
    if mode not in _INTERPOLATE_MODES or d not in (1, 2, 3):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in _INTERPOLATING_DIMS and _INTERPOLATING_DIMS[mode] != d:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERPOLATING_DIMS[mode] + 2}D "
                                  "input")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    if antialias and (mode not in _ANTIALIAS_FILTERS or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    sizes, scales = _interpolate_sizes(input, d, size, scale_factor, recompute_scale_factor)
    image = input.dtype == np.uint8 and mode in _UINT8_MODES        # PyTorch resizes uint8 images in these modes
    if not image:
        _check_floating(f"upsample_{mode}", input)
    if any(o < 1 for o in sizes) or any(n < 1 for n in input.shape[2:]):
        names = ("D", "H", "W")[3 - d:]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input ("
                           + ", ".join(f"{a}: {n}" for a, n in zip(names, input.shape[2:])) + ") and output ("
                           + ", ".join(f"{a}: {n}" for a, n in zip(names, sizes)) + ")")
    if mode == "area":
        return adaptive_avg_pool1d(input, sizes) if d == 1 else \
            _adaptive_avg_pool("adaptive_avg_pool", d, input, sizes)
    if image and mode in ("bilinear", "bicubic"):
        from .resize_uint8 import resize_uint8          # (it reads this module's filters)
        return Tensor(resize_uint8(input._data, sizes, scales, mode, bool(align_corners), antialias))
    if antialias:
        maps = [_antialias_map(n, o, s, bool(align_corners), mode) for n, o, s in zip(input.shape[2:], sizes, scales)]
    elif mode in _LINEAR_MODES:
        maps = [_linear_map(n, o, s, bool(align_corners)) for n, o, s in zip(input.shape[2:], sizes, scales)]
    elif mode == "bicubic":
        maps = [_cubic_map(n, o, s, bool(align_corners)) for n, o, s in zip(input.shape[2:], sizes, scales)]
    else:
        maps = [_nearest_map(n, o, s, mode == "nearest-exact") for n, o, s in zip(input.shape[2:], sizes, scales)]
    return Interpolate.apply(input, tuple(maps))


# =========================================================================== pixel (un)shuffle
def _check_factor(name, input, factor, what):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           "dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    """(*, C r², H, W) -> (*, C, H r, W r): out[c, h r + i, w r + j] = in[c r² + i r + j, h, w]. A reshape and a
    permutation, so its gradient is the inverse rearrangement (``pixel_unshuffle``)."""
    r = operator.index(upscale_factor)
    _check_factor("pixel_shuffle", input, r, "upscale_factor")
    *batch, channels, h, w = input.shape
    if channels % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={channels} is not divisible by {r * r}")
    nb = len(batch)
    x = input.reshape(*batch, channels // (r * r), r, r, h, w)             # (*, C, i, j, H, W)
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)           # (*, C, H, i, W, j)
    return _fresh(x.reshape(*batch, channels // (r * r), h * r, w * r), input)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r², H, W), the inverse of ``pixel_shuffle``."""
    r = operator.index(downscale_factor)
    _check_factor("pixel_unshuffle", input, r, "downscale_factor")
    *batch, channels, h, w = input.shape
    for size, what, dim in ((h, "height", -2), (w, "width", -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    nb = len(batch)
    x = input.reshape(*batch, channels, h // r, r, w // r, r)               # (*, C, H, i, W, j)
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)           # (*, C, i, j, H, W)
    return _fresh(x.reshape(*batch, channels * r * r, h // r, w // r), input)


def _fresh(out, input):
    """``out``, or a copy of it where the reshapes gave a view of ``input`` (a factor of 1, single pixels): PyTorch's
    pixel_shuffle and pixel_unshuffle always return a new tensor, which a later write into the input does not reach."""
    return out.clone() if np.may_share_memory(out._data, input._data) else out


@takes_tensors("input")
def channel_shuffle(input, groups):
    """(N, C, *) -> (N, C, *) with the channels, seen as (groups, C / groups), transposed:
    out[:, j groups + g] = in[:, g (C / groups) + j]. A permutation, so dx is the inverse permutation of dout."""
    groups = operator.index(groups)
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, channels, *rest = input.shape
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and {groups} "
                           "groups.")
    x = input.reshape(n, groups, channels // groups, *rest)                # (N, g, C / g, *)
    return x.transpose(1, 2).reshape(input.shape)


# =========================================================================== channel dropout
def _feature_dropout(input, p, training, inplace):
    """Zero whole channels of (N, C, *) input: x * m / (1 - p) with one m ~ Bernoulli(1 - p) per (n, c), broadcast
    over the channel (PyTorch's ``feature_dropout``)."""
    done = dropout_gate(input, p, training, inplace, noise_shape=feature_noise_shape)
    return feature_noise(input, p, inplace) if done is None else done


def feature_noise(input, p, inplace):
    """Channel dropout's draw (0 < p < 1, a floating input of 2 dims or more: ``dropout_gate`` has passed it)."""
    dtype = input.dtype
    keep = keep_mask(feature_noise_shape(input), 1 - p)      # PyTorch: noise.bernoulli_(1 - p).div_(1 - p)
    scale = Tensor(keep.astype(dtype) / dtype.type(1 - p))
    return input.mul_(scale) if inplace else input * scale


def feature_noise_shape(input):
    """(N, C, 1, ..., 1) for an (N, C, *) input: one draw per channel; PyTorch's error below 2 dims."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def _unbatched(fn, input, inplace, batched):
    """``fn(input)`` (a feature dropout), for an input without the batch dim as PyTorch's dropout1d/3d run it: with a
    leading dim of 1 added first (in place too, with ``inplace``) and taken off the result."""
    if batched:
        return fn(input)
    if inplace:
        return fn(input.unsqueeze_(0)).squeeze_(0)
    return fn(input.unsqueeze(0)).squeeze(0)


@takes_tensors("input")
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, L) or (C, L) input: each channel is zeroed with probability p, the rest
    scaled by 1 / (1 - p)."""
    check_dropout_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched(lambda x: _feature_dropout(x, p, training, inplace), input, inplace, input.ndim == 3)


def _warn_deprecated_rank(d, ndim):
    """PyTorch's warning for ``dropout{d}d`` of an ``ndim``-D input that is neither (C, *S) nor (N, C, *S)."""
    warnings.warn(f"dropout{d}d: Received a {ndim}-D input to dropout{d}d, which is deprecated and will result in "
                  "an error in a future release. To retain the behavior and silence this warning, please use "
                  f"dropout instead. Note that dropout{d}d exists to provide channel-wise dropout on inputs with {d} "
                  "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                  f"{d + 1}D or {d + 2}D inputs).", stacklevel=3)


@takes_tensors("input")
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, H, W) input: each (n, c) feature map is zeroed with probability p, the
    rest scaled by 1 / (1 - p). As PyTorch 2.13, 3-D input is taken as (N, C, L) with a warning, and other
    ranks (deprecated) drop over the first two dims."""
    check_dropout_p(p)
    if input.ndim not in (3, 4):
        _warn_deprecated_rank(2, input.ndim)
    elif input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


@takes_tensors("input")
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) input: each channel is zeroed with probability p,
    the rest scaled by 1 / (1 - p). As PyTorch 2.13, other ranks (deprecated, with a warning) are taken as
    unbatched: they drop over the first dim."""
    check_dropout_p(p)
    if input.ndim not in (4, 5):
        _warn_deprecated_rank(3, input.ndim)
    return _unbatched(lambda x: _feature_dropout(x, p, training, inplace), input, inplace, input.ndim == 5)


_pad = pad   # constant_pad_nd's argument is named pad, as PyTorch's


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd``: ``F.pad(input, pad, 'constant', value)``."""
    return _pad(input, pad, "constant", value)
