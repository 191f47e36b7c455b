"""``torch.gradient``: derivatives of sampled values by finite differences, one tensor per dim.

Along a dim with samples f_0 ... f_{n-1} at spacing h (or at coordinates t_i, steps h_i = t_{i+1} - t_i):

* inside, second-order central differences: (f_{i+1} - f_{i-1}) / 2h, or with unequal steps hd = h_{i-1},
  hs = h_i: -hs / (hd (hd + hs)) f_{i-1} + (hs - hd) / (hd hs) f_i + hd / (hs (hd + hs)) f_{i+1};
* at the two ends, one-sided differences of order ``edge_order``: (f_1 - f_0) / h_0 for 1, and for 2 the
  parabola through the first (last) three samples, (-3/2 f_0 + 2 f_1 - 1/2 f_2) / h with equal steps.

Written with minigrad ops, so the result is differentiable (every formula is linear in f).
"""
import numbers

from .._checks import takes_tensors
from ..dtypes import get_default_dtype, is_floating_point
from ..tensor import Tensor
from .dims import normalize_dim
from .shape import cat


def _spacings(spacing, dims, ndim, dim_given):
    """One spacing per dim in ``dims``: a number (equal steps) or a 1-D Tensor of coordinates."""
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (numbers.Number, Tensor)) and not (isinstance(spacing, Tensor) and spacing.ndim > 0):
        return [float(spacing)] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if not dim_given:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
                               f"of length {len(spacing)}")
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length "
                           f"{len(spacing)} and a dim argument of length {len(dims)}.")
    return [s if isinstance(s, Tensor) and s.ndim > 0 else float(s) for s in spacing]


def _part(x, d, start, stop=None):
    """x[..., start:stop, ...] along dim d."""
    return x[(slice(None),) * d + (slice(start, stop),)]


def _along(x, d, h, edge_order):
    """The derivative of x along dim d, steps h (a number, or coordinates: a 1-D Tensor)."""
    def f(start, stop=None):                                 # the samples start:stop along d
        return _part(x, d, start, stop)
    if not isinstance(h, Tensor):
        inside = (f(2) - f(0, -2)) / (2 * h)
        if edge_order == 1:
            first, last = (f(1, 2) - f(0, 1)) / h, (f(-1) - f(-2, -1)) / h
        else:
            first = (-1.5 * f(0, 1) + 2 * f(1, 2) - 0.5 * f(2, 3)) / h
            last = (0.5 * f(-3, -2) - 2 * f(-2, -1) + 1.5 * f(-1)) / h
        return cat([first, inside, last], d)
    if h.shape[0] != x.shape[d]:
        raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and to have as many "
                           f"coordinates ({h.shape[0]}) as the input has samples along dim {d} ({x.shape[d]})")
    steps = (h[1:] - h[:-1]).reshape((-1,) + (1,) * (x.ndim - 1 - d))    # (n-1, 1, ..., 1): broadcast along d
    hd, hs = steps[:-1], steps[1:]                                        # (n-2, ...) each
    inside = (-hs / (hd * (hd + hs)) * f(0, -2) + (hs - hd) / (hd * hs) * f(1, -1)
              + hd / (hs * (hd + hs)) * f(2))
    if edge_order == 1:
        first, last = (f(1, 2) - f(0, 1)) / steps[:1], (f(-1) - f(-2, -1)) / steps[-1:]
    else:
        a, b = steps[:1], steps[1:2]                                      # the first two steps
        first = (-(2 * a + b) / (a * (a + b)) * f(0, 1) + (a + b) / (a * b) * f(1, 2)
                 - a / (b * (a + b)) * f(2, 3))
        a, b = steps[-2:-1], steps[-1:]                                   # the last two steps
        last = (b / (a * (a + b)) * f(-3, -2) - (a + b) / (a * b) * f(-2, -1)
                + (2 * b + a) / (b * (a + b)) * f(-1))
    return cat([first, inside, last], d)


@takes_tensors("input")
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """``torch.gradient``: a tuple with the derivative of ``input`` along each dim in ``dim`` (all dims if None),
    samples ``spacing`` apart (a number, one number per dim, or one 1-D tensor of coordinates per dim)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, input.ndim) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    hs = _spacings(spacing, dims, input.ndim, dim is not None)
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    x = input if is_floating_point(input.dtype) or input.dtype.kind == "c" else input.to(get_default_dtype())
    return tuple(_along(x, d, h, edge_order) for d, h in zip(dims, hs))


__all__ = ["gradient"]
