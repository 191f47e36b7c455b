"""Spatial sampling: ``affine_grid`` and ``grid_sample``, the two halves of a spatial transformer.

``grid_sample`` reads ``input`` (N, C, *S) (S = (H, W), or (D, H, W)) at the points of ``grid`` (N, *O, d)
(d = 2 or 3 coordinates in [-1, 1], x first: x indexes the last spatial axis W, y the axis H, z the axis D).
For spatial axis a of size S_a, with g its grid coordinate, the source position is

    u_a = (g + 1) / 2 * (S_a - 1)         align_corners=True  (-1 and 1 are the centres of the corner pixels)
    u_a = ((g + 1) * S_a - 1) / 2         align_corners=False (-1 and 1 are the outer edges of the corner pixels)

then, for ``padding_mode='border'``, clipped to [0, S_a - 1], and for ``'reflection'`` reflected at the image's
border (the centres of the corner pixels with align_corners=True, their outer edges without) until it falls
inside, then clipped. Each is piecewise linear in g: du_a/dg = s_a, the slope (S_a - 1)/2 or S_a/2, times -1 on
each reflection and 0 where clipping holds u_a at a border.

Bilinear (trilinear for 5-D input): with l_a = floor(u_a) and t_a = u_a - l_a, each corner k of the cell (bit
k_a = 0 for l_a, 1 for l_a + 1) is read with weight w_k = prod_a f_a(k), f_a = t_a if k_a else 1 - t_a:

    out[n, c, o] = sum_k w_k * x[n, c, l + k]          (corners outside the image read 0)

    dx[n, c, l + k] += w_k * dout[n, c, o]                             (scatter-add: points share pixels)
    dg_a[n, o] = s_a * sum_c dout[n, c, o] * sum_k (+1 if k_a else -1) * prod_{b != a} f_b(k) * x[n, c, l + k]

so the gradient with respect to a coordinate is the difference of the neighbours along its axis, averaged over
the other axes with the bilinear weights (in 2-D: dg_x = s_x sum_c dout ((1 - t_y)(x01 - x00) + t_y (x11 - x10))).
Nearest reads the pixel at round-half-to-even(u); dx is the scatter-add of dout there, and the gradient with
respect to the grid is zero (the output is piecewise constant in it).

Both backwards are written with minigrad ops (gathers ``x[index]``, scatter-adds, products), so the same code is
the ``graph_backward``: gradients computed with create_graph=True can be differentiated again.

``affine_grid(theta, size)`` is the grid of a batch of affine maps: the normalised coordinates of every output
pixel (x, y[, z], 1) times theta (N, d, d + 1) transposed, composed of differentiable ops (a matmul), so
dtheta[n] = sum_o dgrid[n, o]^T (x, y[, z], 1)_o.
"""
import functools
import itertools
import operator
import warnings
from dataclasses import dataclass

import numpy as np

from ..dtypes import kind_of
from .._checks import takes_tensors
from ..autograd import Function, no_grad
from ..autograd.function import pytorch_saves
from ..tensor import Tensor
from .shape import IndexAdjoint, cat, movedim, reshape
from ..autocast_ops import autocast_op

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


# --------------------------------------------------------------------------- grid coordinate -> source position
def _clip(u, slope, size):
    """u clipped to [0, size - 1]; the slope is 0 where clipping holds u (the borders themselves included)."""
    inside = (u > 0) & (u < size - 1)
    return np.clip(u, 0, size - 1), np.where(inside, slope, 0).astype(u.dtype)


def _reflect(u, slope, twice_low, twice_high):
    """u folded into [twice_low / 2, twice_high / 2] by reflecting at its ends; each reflection flips the slope."""
    if twice_low == twice_high:
        return np.zeros_like(u), np.zeros_like(slope)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = u - low
    sign = np.where(distance < 0, -1, 1).astype(u.dtype)
    distance = np.abs(distance)
    extra = np.fmod(distance, span)
    even = np.floor(distance / span) % 2 == 0                       # an even number of reflections
    folded = np.where(even, extra + low, span - extra + low).astype(u.dtype)
    return folded, slope * sign * np.where(even, 1, -1).astype(u.dtype)


def _source_position(g, size, padding_mode, align_corners):
    """(u, du/dg): the pixel position a grid coordinate g (ndarray) reads along an axis of ``size`` pixels."""
    if align_corners:
        u, slope = (g + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        u, slope = ((g + 1) * size - 1) / 2, size / 2
    u = u.astype(g.dtype, copy=False)
    slope = np.full_like(g, slope)
    if padding_mode == "border":
        u, slope = _clip(u, slope, size)
    elif padding_mode == "reflection":
        twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        u, slope = _clip(*_reflect(u, slope, twice_low, twice_high), size)
    return u, slope


# --------------------------------------------------------------------------- the sampling plan
@dataclass
class Corner:
    """One corner of the interpolation cell: where it is read and with which factor per axis.

    ``index`` selects (N, *O) pixels from the channels-last input (N, *S, C): (batch index, then one integer
    array per spatial axis, clipped into the image); ``inside`` (N, *O, 1) is 1 where the corner lies in the
    image and 0 where it reads padding; ``bits[a]`` is 1 for the upper neighbour along axis a."""
    index: tuple
    inside: np.ndarray
    bits: tuple


@dataclass
class Plan:
    """What grid_sample computes from the grid alone: the corners, and per spatial axis the fractions
    t_a = u_a - floor(u_a) (N, *O, 1) (bilinear only) and slopes du_a/dg (N, *O, 1)."""
    mode: str
    corners: list
    fractions: list
    slopes: list


def _plan(grid, spatial, mode, padding_mode, align_corners):
    """The Plan for sampling an input with spatial sizes ``spatial`` at ``grid`` (N, *O, d) (an ndarray)."""
    n, d = grid.shape[0], len(spatial)
    batch = np.arange(n).reshape((n,) + (1,) * (grid.ndim - 2))                # (N, 1, ..., 1)
    positions = [_source_position(grid[..., d - 1 - a], size, padding_mode, align_corners)
                 for a, size in enumerate(spatial)]            # each (N, *O): axis a is read by coordinate d-1-a
    if mode == "nearest":
        starts, fractions, bits_per_axis = [np.rint(u) for u, _ in positions], [], [(0,)] * d
    else:
        starts = [np.floor(u) for u, _ in positions]
        fractions = [(u - start)[..., None] for (u, _), start in zip(positions, starts)]
        bits_per_axis = [(0, 1)] * d
    corners = []
    for bits in itertools.product(*bits_per_axis):
        at = [start.astype(np.int64) + bit for start, bit in zip(starts, bits)]   # each (N, *O)
        inside = np.logical_and.reduce([(i >= 0) & (i < size) for i, size in zip(at, spatial)])
        index = (batch,) + tuple(np.clip(i, 0, size - 1) for i, size in zip(at, spatial))
        corners.append(Corner(index, inside[..., None].astype(grid.dtype), bits))
    return Plan(mode, corners, fractions, [slope[..., None] for _, slope in positions])


def _weights(corner, fractions):
    """The factors f_a = t_a or 1 - t_a of one corner, one per axis (Tensors (N, *O, 1)); none for nearest."""
    return [t if bit else 1 - t for t, bit in zip(fractions, corner.bits)]


def _product(factors):
    return functools.reduce(operator.mul, factors, 1)


def _sample(x_last, plan, fractions):
    """The output, channels last (N, *O, C), from the channels-last input (N, *S, C)."""
    out = 0
    for corner in plan.corners:
        read = x_last[corner.index] * corner.inside                           # (N, *O, C)
        out = out + _product(_weights(corner, fractions)) * read
    return out


def _input_grad(dout_last, shape_last, plan, fractions):
    """dx, channels last (N, *S, C): every corner's weighted share of dout added onto the pixel it read."""
    dx = 0
    for corner in plan.corners:
        share = _product(_weights(corner, fractions)) * dout_last * corner.inside     # (N, *O, C)
        dx = dx + IndexAdjoint.apply(share, shape_last, corner.index)
    return dx


def _grid_grad(x_last, dout_last, plan, fractions):
    """dgrid (N, *O, d): per axis a, s_a * sum_c dout * sum_k (+-1) prod_{b != a} f_b(k) x[l + k]."""
    d = len(plan.fractions)
    dt = [0] * d
    for corner in plan.corners:
        along = (dout_last * x_last[corner.index] * corner.inside).sum(-1, keepdim=True)    # (N, *O, 1)
        factors = _weights(corner, fractions)
        for a in range(d):
            others = _product(factors[:a] + factors[a + 1:])
            dt[a] = dt[a] + others * along if corner.bits[a] else dt[a] - others * along
    # coordinate c of the grid moves axis d-1-c
    return cat([plan.slopes[d - 1 - c] * dt[d - 1 - c] for c in range(d)], -1)


class GridSample(Function):
    """out = input sampled at grid (module docstring). Backward: dx scattered onto the corners read, dgrid from
    the differences of the neighbours (bilinear) or zero (nearest)."""

    @staticmethod
    def forward(ctx, x, grid, mode, padding_mode, align_corners):
        plan = _plan(grid._data, x.shape[2:], mode, padding_mode, align_corners)
        ctx.plan = plan
        ctx.save_for_backward(x._data, grid._data)
        out = _sample(movedim(x, 1, -1), plan, [Tensor(t) for t in plan.fractions])
        return np.ascontiguousarray(movedim(out, -1, 1)._data)

    @staticmethod
    def backward(ctx, dout):
        x, grid = ctx.saved_tensors
        with no_grad():
            return _grads(ctx, dout, Tensor(x), Tensor(grid), grid)

    @staticmethod
    def graph_backward(ctx, dout):
        x, grid = ctx.saved_tensors
        return _grads(ctx, dout, ctx.input_tensor(0, x), ctx.input_tensor(1, grid), grid)


def _grads(ctx, dout, x, grid, grid_values):
    """(dx, dgrid, None, None, None) from Tensors: gradients that can be differentiated again when these are
    in a graph. The fractions t_a are rebuilt from ``grid`` as t_a + s_a (grid_c - grid_c's value): their values
    are the forward's, their derivative with respect to grid_c is s_a."""
    plan = ctx.plan
    d = len(plan.slopes)
    fractions = [s * (grid[..., d - 1 - a:d - a] - grid_values[..., d - 1 - a:d - a]) + t
                 for a, (t, s) in enumerate(zip(plan.fractions, plan.slopes))]   # (N, *O, 1): coordinate d-1-a
    dout_last, x_last = movedim(dout, 1, -1), movedim(x, 1, -1)
    dx = dgrid = None
    if ctx.needs_input_grad[0]:
        dx = movedim(_input_grad(dout_last, x_last.shape, plan, fractions), -1, 1)
    if ctx.needs_input_grad[1]:
        if plan.mode == "nearest":
            dgrid = np.zeros(grid.shape, grid.dtype)
        else:
            dgrid = _grid_grad(x_last, dout_last, plan, fractions)
    return dx, dgrid, None, None, None


# --------------------------------------------------------------------------- the functions
def _align_corners(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _check_sampling(input, grid):
    """PyTorch's checks of the shapes and dtypes of grid_sample's two tensors."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.ndim and grid.ndim and input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for axis in range(2, input.ndim):
        if input.shape[axis] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {axis} being empty")
    if kind_of(input.dtype) != "f" or kind_of(grid.dtype) != "f":
        raise NotImplementedError(f"grid_sampler(): expected floating-point input and grid, but got input of dtype "
                                  f"{input.dtype} and grid of dtype {grid.dtype}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but got input of dtype "
                           f"{input.dtype} and grid of dtype {grid.dtype}")


@takes_tensors("input", "grid", fname="grid_sampler")
@autocast_op("float32")
@pytorch_saves("input", "grid")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` (N, C, H, W) or (N, C, D, H, W) read at the normalised points of ``grid`` (N, Ho, Wo, 2) or
    (N, Do, Ho, Wo, 3) (x, y[, z] in [-1, 1]): (N, C, Ho, Wo) or (N, C, Do, Ho, Wo). ``mode`` 'bilinear'
    (trilinear for 5-D) or 'nearest'; ``padding_mode`` 'zeros', 'border' or 'reflection' says what points
    outside the image read. Differentiable with respect to both input and grid."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = _align_corners(align_corners)
    _check_sampling(input, grid)
    if mode == "bicubic":
        if input.ndim == 5:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        from .sampling_bicubic import grid_sample_bicubic
        return grid_sample_bicubic(input, grid, padding_mode, align_corners)
    return GridSample.apply(input, grid, mode, padding_mode, align_corners)


def _base_coordinates(n, align_corners, dtype):
    """The normalised coordinates of n pixels along an axis: their centres in [-1, 1] (align_corners=True: the
    first and last at -1 and 1; False: the pixels tile [-1, 1], their centres (2i + 1)/n - 1); 0 for n = 1."""
    if n == 1:
        return np.zeros(1, dtype)
    steps = np.linspace(-1, 1, n)
    return (steps if align_corners else steps * (n - 1) / n).astype(dtype)


@takes_tensors("theta")
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps: theta (N, 2, 3) and size (N, C, H, W) give (N, H, W, 2);
    theta (N, 3, 4) and size (N, C, D, H, W) give (N, D, H, W, 3). Point o of the grid is theta[n] applied to the
    normalised coordinates (x, y[, z], 1) of output pixel o."""
    align_corners = _align_corners(align_corners)
    size = tuple(int(s) for s in size)
    if kind_of(theta.dtype) != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    d = len(size) - 2
    if theta.ndim != 3 or theta.shape[1:] != (d, d + 1):
        raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size {size}. Got "
                         f"{list(theta.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid(): expected theta to hold one affine matrix per batch element of size "
                           f"{size}, but got {theta.shape[0]} matrices (theta of shape {list(theta.shape)})")
    spatial = size[2:]
    if align_corners and 1 in spatial:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", UserWarning, stacklevel=2)
    axes = [_base_coordinates(n, align_corners, theta.dtype) for n in spatial]    # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")                                     # each (*spatial)
    base = np.stack([*mesh[::-1], np.ones(spatial, theta.dtype)], -1)          # (*spatial, d+1): x, y[, z], 1
    points = Tensor(base.reshape(1, -1, d + 1))                                  # (1, P, d+1)
    return reshape(points @ theta.transpose(1, 2), (size[0],) + spatial + (d,))  # (N, P, d) -> (N, *spatial, d)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_2d``: ``grid_sample`` of a 4-D input with the modes as PyTorch's enum values
    (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    if input.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_3d``: the 5-D form of ``grid_sampler_2d``."""
    if input.ndim != 5:
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    modes, paddings = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")
    if not 0 <= interpolation_mode < 3 or not 0 <= padding_mode < 3:
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode} or padding mode "
                           f"{padding_mode}")
    return grid_sample(input, grid, modes[interpolation_mode], paddings[padding_mode], bool(align_corners))
