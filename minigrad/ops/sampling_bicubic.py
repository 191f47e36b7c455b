"""``grid_sample(mode='bicubic')``: Keys' cubic convolution over the 4 x 4 pixels around each point.

For a point at source position (u, v) (``sampling.py``'s formula, before any padding rule), with l = floor(u) and
t = u - l, the four taps along x are the pixels l - 1, l, l + 1, l + 2, weighted by the cubic convolution kernel
(A = -0.75, as PyTorch's)

    w_-1 = far(t + 1),  w_0 = near(t),  w_1 = near(1 - t),  w_2 = far(2 - t)
    near(s) = ((A + 2) s - (A + 3)) s^2 + 1          (|s| <= 1)
    far(s)  = ((A s - 5A) s + 8A) s - 4A             (1 < |s| < 2)

and likewise along y; out = sum_j w_j(t_y) sum_i w_i(t_x) x[l_y - 1 + j, l_x - 1 + i]. The padding mode acts on
each tap's integer position: 'zeros' reads 0 outside the image, 'border' clips the position into it,
'reflection' reflects it at the border and then clips.

Written with minigrad ops: dx is the scatter-add of the weights times dout, and the gradient with respect to
the grid flows through t alone (l is piecewise constant), d t / d g being the unnormalizing slope; the same
code differentiates again under create_graph=True.
"""
import numpy as np

from ..tensor import Tensor
from .sampling import _reflect

A = -0.75


def _near(s):
    return ((A + 2) * s - (A + 3)) * s * s + 1


def _far(s):
    return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A


def _tap_weights(t):
    """The weights of the taps at offsets -1, 0, 1, 2 from floor(u), t = u - floor(u) (Tensors)."""
    return _far(t + 1), _near(t), _near(1 - t), _far(2 - t)


def _tap_positions(k, size, padding_mode, align_corners):
    """Integer tap positions k (ndarray) after the padding rule: (positions clipped into the image, inside mask)."""
    k = k.astype(np.float64)
    if padding_mode == "reflection":
        twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        k, _ = _reflect(k, np.zeros_like(k), twice_low, twice_high)
    if padding_mode in ("border", "reflection"):
        k = np.clip(k, 0, size - 1)
    inside = (k >= 0) & (k <= size - 1)
    return np.clip(k, 0, size - 1).astype(np.int64), inside


def grid_sample_bicubic(input, grid, padding_mode, align_corners):
    """input (N, C, H, W) read at grid (N, Ho, Wo, 2) with bicubic interpolation: (N, C, Ho, Wo)."""
    n_count, _, height, width = input.shape
    source = []                                                     # (u, v): Tensors (N, Ho, Wo)
    for axis, size in ((0, width), (1, height)):
        g = grid[..., axis]
        source.append((g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2)
    floors = [np.floor(u._data) for u in source]                     # l_x, l_y (N, Ho, Wo), constants
    wx, wy = (_tap_weights(u - Tensor(l.astype(u.dtype))) for u, l in zip(source, floors))
    x = input.permute(0, 2, 3, 1)                                   # (N, H, W, C): a pixel's channels last
    batch = np.arange(n_count).reshape(-1, 1, 1)                    # (N, 1, 1)
    dtype = input.dtype
    out = 0
    for j in range(4):
        rows, rows_inside = _tap_positions(floors[1] - 1 + j, height, padding_mode, align_corners)
        row = 0
        for i in range(4):
            cols, cols_inside = _tap_positions(floors[0] - 1 + i, width, padding_mode, align_corners)
            pixels = x[Tensor(batch), Tensor(rows), Tensor(cols)]   # (N, Ho, Wo, C)
            inside = Tensor((rows_inside & cols_inside)[..., None].astype(dtype))
            row = row + pixels * inside * wx[i].unsqueeze(-1)
        out = out + row * wy[j].unsqueeze(-1)
    return out.permute(0, 3, 1, 2)                                  # (N, C, Ho, Wo)
