"""numba twins of the recurrent cells' backward passes in ``minigrad/ops/recurrent.py`` (same names and
arguments, in place): each is one pass over the (N, H) units of a step, where the NumPy reference makes a dozen.

Serial (one step is a few thousand units: a parallel region would cost more than it saves) and without
fastmath: each element is the reference's formula, computed in the data's dtype (``one`` is 1 in that
dtype, so float32 stays float32). Self-contained (no jitted helper from another file), so that numba's
on-disk cache of each kernel stays valid.
"""
from numba import njit

_serial = njit(cache=True, fastmath=False, error_model="numpy")


@_serial
def _lstm_cell_backward(dm, dc, gates, c_prev, tanh_c, da, one):
    n_rows, H = dc.shape                                   # dm, dc, c_prev, tanh_c (N, H); gates, da (N, 4H)
    for n in range(n_rows):
        for j in range(H):
            i, f, g, o = gates[n, j], gates[n, H + j], gates[n, 2 * H + j], gates[n, 3 * H + j]
            t, d = tanh_c[n, j], dm[n, j]
            c = dc[n, j] + d * o * (one - t * t)
            da[n, j] = c * g * i * (one - i)
            da[n, H + j] = c * c_prev[n, j] * f * (one - f)
            da[n, 2 * H + j] = c * i * (one - g * g)
            da[n, 3 * H + j] = d * t * o * (one - o)
            dc[n, j] = c * f


def lstm_cell_backward_(dm, dc, gates, c_prev, tanh_c, da):
    _lstm_cell_backward(dm, dc, gates, c_prev, tanh_c, da, dc.dtype.type(1))


@_serial
def _gru_cell_backward(dh, gates, gh_n, h_prev, dgi, dgh, one):
    n_rows, H = dh.shape                                   # dh, gh_n, h_prev (N, H); gates, dgi, dgh (N, 3H)
    for n in range(n_rows):
        for j in range(H):
            r, z, g = gates[n, j], gates[n, H + j], gates[n, 2 * H + j]
            d = dh[n, j]
            da_n = d * (one - z) * (one - g * g)
            da_r = da_n * gh_n[n, j] * r * (one - r)
            da_z = d * (h_prev[n, j] - g) * z * (one - z)
            dgi[n, j], dgi[n, H + j], dgi[n, 2 * H + j] = da_r, da_z, da_n
            dgh[n, j], dgh[n, H + j], dgh[n, 2 * H + j] = da_r, da_z, da_n * r
            dh[n, j] = d * z


def gru_cell_backward_(dh, gates, gh_n, h_prev, dgi, dgh):
    _gru_cell_backward(dh, gates, gh_n, h_prev, dgi, dgh, dh.dtype.type(1))


@_serial
def _rnn_cell_backward(dh, h, da, use_relu, one):
    n_rows, H = dh.shape                                   # all (N, H)
    for n in range(n_rows):
        for j in range(H):
            y = h[n, j]
            if use_relu:
                da[n, j] = dh[n, j] if y > 0 else 0
            else:
                da[n, j] = dh[n, j] * (one - y * y)


def rnn_cell_backward_(dh, h, da, use_relu):
    _rnn_cell_backward(dh, h, da, bool(use_relu), dh.dtype.type(1))

