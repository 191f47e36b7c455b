"""numba twins of the recurrent cells in ``minigrad/ops/recurrent.py`` (same names and arguments, in place).

Each backward cell is one pass over the (N, H) units of a step, where the NumPy reference makes a dozen. A
forward cell keeps NumPy's vectorized exp and tanh (numba's scalar calls are 5-25x slower without SVML) and
does the arithmetic around them in one pass each: 6 calls for the LSTM's step and 5 for the GRU's instead of
11, with the reference's operations in its order (1 / (1 + exp(-a)), tanh(-a) = -tanh(a)), so the same floats.

Serial (one step is a few thousand units: a parallel region would cost more than it saves), without fastmath,
in the data's dtype (``one`` is 1 in that dtype, so float32 stays float32), looping over rows of 1-D slices
so that LLVM vectorizes the inner loop (3x faster than 2-D indexing). Self-contained (no jitted helper from
another file), so that numba's on-disk cache of each kernel stays valid.
"""
import numpy as np
from numba import njit

_serial = njit(cache=True, fastmath=False, error_model="numpy")


@_serial
def _lstm_cell_backward(dm, dc, gates, c_prev, tanh_c, da, one):
    n_rows, H = dc.shape                                   # dm, dc, c_prev, tanh_c (N, H); gates, da (N, 4H)
    for n in range(n_rows):                                # rows of 1-D slices: the inner loop vectorizes
        i_, f_, g_, o_ = gates[n, :H], gates[n, H:2 * H], gates[n, 2 * H:3 * H], gates[n, 3 * H:]
        da_i, da_f, da_g, da_o = da[n, :H], da[n, H:2 * H], da[n, 2 * H:3 * H], da[n, 3 * H:]
        dm_, dc_, c_prev_, tanh_c_ = dm[n], dc[n], c_prev[n], tanh_c[n]
        for j in range(H):
            i, f, g, o = i_[j], f_[j], g_[j], o_[j]
            t, d = tanh_c_[j], dm_[j]
            c = dc_[j] + d * o * (one - t * t)
            da_i[j] = c * g * i * (one - i)
            da_f[j] = c * c_prev_[j] * f * (one - f)
            da_g[j] = c * i * (one - g * g)
            da_o[j] = d * t * o * (one - o)
            dc_[j] = c * f


def lstm_cell_backward_(dm, dc, gates, c_prev, tanh_c, da):
    _lstm_cell_backward(dm, dc, gates, c_prev, tanh_c, da, dc.dtype.type(1))


@_serial
def _gru_cell_backward(dh, gates, gh_n, h_prev, dgi, dgh, one):
    n_rows, H = dh.shape                                   # dh, gh_n, h_prev (N, H); gates, dgi, dgh (N, 3H)
    for n in range(n_rows):
        r_, z_, n_ = gates[n, :H], gates[n, H:2 * H], gates[n, 2 * H:]
        dgi_r, dgi_z, dgi_n = dgi[n, :H], dgi[n, H:2 * H], dgi[n, 2 * H:]
        dgh_r, dgh_z, dgh_n = dgh[n, :H], dgh[n, H:2 * H], dgh[n, 2 * H:]
        dh_, gh_n_, h_prev_ = dh[n], gh_n[n], h_prev[n]
        for j in range(H):
            r, z, g, d = r_[j], z_[j], n_[j], dh_[j]
            da_n = d * (one - z) * (one - g * g)
            da_r = da_n * gh_n_[j] * r * (one - r)
            da_z = d * (h_prev_[j] - g) * z * (one - z)
            dgi_r[j], dgi_z[j], dgi_n[j] = da_r, da_z, da_n
            dgh_r[j], dgh_z[j], dgh_n[j] = da_r, da_z, da_n * r
            dh_[j] = d * z


def gru_cell_backward_(dh, gates, gh_n, h_prev, dgi, dgh):
    _gru_cell_backward(dh, gates, gh_n, h_prev, dgi, dgh, dh.dtype.type(1))


@_serial
def _rnn_cell_backward(dh, h, da, use_relu, one):
    n_rows, H = dh.shape                                   # all (N, H)
    for n in range(n_rows):
        dh_, h_, da_ = dh[n], h[n], da[n]
        for j in range(H):
            y = h_[j]
            if use_relu:
                da_[j] = dh_[j] if y > 0 else 0
            else:
                da_[j] = dh_[j] * (one - y * y)


def rnn_cell_backward_(dh, h, da, use_relu):
    _rnn_cell_backward(dh, h, da, bool(use_relu), dh.dtype.type(1))


@_serial
def _negated_sum(a, b, out):
    n_rows, width = out.shape                              # out (N, W) = -(a + b)
    for n in range(n_rows):
        a_, b_, out_ = a[n], b[n], out[n]
        for j in range(width):
            out_[j] = -(a_[j] + b_[j])


@_serial
def _lstm_gates_and_c(e, c_prev, gates, c, one):
    n_rows, H = c.shape                    # e (N, 4H): exp(-a) for i, f, o and tanh(-a_g) for g; gates written
    for n in range(n_rows):
        e_i, e_f, e_g, e_o = e[n, :H], e[n, H:2 * H], e[n, 2 * H:3 * H], e[n, 3 * H:]
        i_, f_, g_, o_ = gates[n, :H], gates[n, H:2 * H], gates[n, 2 * H:3 * H], gates[n, 3 * H:]
        c_prev_, c_ = c_prev[n], c[n]
        for j in range(H):
            i, f, g = one / (e_i[j] + one), one / (e_f[j] + one), -e_g[j]
            i_[j], f_[j], g_[j], o_[j] = i, f, g, one / (e_o[j] + one)
            c_[j] = f * c_prev_[j] + i * g


def lstm_cell_forward(a, gi, c_prev, gates, c, tanh_c, m):
    H = c.shape[1]
    _negated_sum(a, gi, gates)                             # -(a + gi), into a separate array: it vectorizes
    np.exp(gates, out=a)                                   # the sigmoids' exp(-a) (g's quarter is replaced)
    np.tanh(gates[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])  # -g
    _lstm_gates_and_c(a, c_prev, gates, c, c.dtype.type(1))
    np.tanh(c, out=tanh_c)
    np.multiply(gates[:, 3 * H:], tanh_c, out=m)


@_serial
def _gru_rz_and_n(gi, gh, gates, one):
    n_rows, H = gates.shape[0], gates.shape[1] // 3        # gates (N, 3H) holds exp(-a) for r, z
    for n in range(n_rows):
        r_, z_, n_ = gates[n, :H], gates[n, H:2 * H], gates[n, 2 * H:]
        gi_n, gh_n = gi[n, 2 * H:], gh[n, 2 * H:]
        for j in range(H):
            r = one / (r_[j] + one)
            r_[j], z_[j] = r, one / (z_[j] + one)
            n_[j] = r * gh_n[j] + gi_n[j]                  # tanh'd next


@_serial
def _gru_h(h_prev, gates, h):
    n_rows, H = h.shape
    for n in range(n_rows):
        z_, n_, h_prev_, h_ = gates[n, H:2 * H], gates[n, 2 * H:], h_prev[n], h[n]
        for j in range(H):
            h_[j] = (h_prev_[j] - n_[j]) * z_[j] + n_[j]


def gru_cell_forward(gi, gh, h_prev, gates, h):
    H = h.shape[1]
    rz = gates[:, :2 * H]
    _negated_sum(gi[:, :2 * H], gh[:, :2 * H], rz)
    np.exp(rz, out=rz)
    _gru_rz_and_n(gi, gh, gates, h.dtype.type(1))
    np.tanh(gates[:, 2 * H:], out=gates[:, 2 * H:])
    _gru_h(h_prev, gates, h)
