"""Recurrent layers as one ``Function`` per layer and direction: the time loop runs on arrays, and so does its
backward, backpropagation through time (BPTT), with the cell gradients derived by hand below.

Notation (one direction of one layer): x_t (N, I) the input at time t, h (N, P) and c (N, H) the state, H the
hidden size, P = proj_size or H. The input projection of every step is one product, with the biases folded in:

    gi = x W_ih^T + b_ih (+ b_hh where it is simply added)          (L, N, gates * H), one matrix product

and each step adds gh = h_prev W_hh^T (one product of (N, P) by (P, gates * H)) and applies the cell. The gates
are stacked in PyTorch's order; s(.) is the logistic sigmoid, s' = s (1 - s), tanh' = 1 - tanh^2.

LSTM (gates i, f, g, o):
    i, f, o = s(a_i), s(a_f), s(a_o),  g = tanh(a_g),   a = gi_t + gh
    c = f c_prev + i g,   m = o tanh(c),   h = m (or, with proj_size, h = m W_hr^T)
  backward, from dm (the gradient of m: dh, or dh W_hr with a projection) and dc (the gradient of c from later):
    do = dm tanh(c),  dc += dm o (1 - tanh(c)^2),  di = dc g,  dg = dc i,  df = dc c_prev,  dc_prev = dc f
    da_i = di i (1 - i), da_f = df f (1 - f), da_o = do o (1 - o), da_g = dg (1 - g^2)

GRU (gates r, z, n; PyTorch's formulation, b_hn inside the product with r):
    r = s(gi_r + gh_r),  z = s(gi_z + gh_z),  n = tanh(gi_n + r (gh_n + b_hn)),  h = (1 - z) n + z h_prev
  backward, from dh:
    dn = dh (1 - z),  da_n = dn (1 - n^2),  da_z = dh (h_prev - n) z (1 - z),  da_r = da_n (gh_n + b_hn) r (1 - r)
    dgi = (da_r, da_z, da_n),   dgh = (da_r, da_z, da_n r),   dh_prev = dh z + dgh W_hh

RNN:  h = tanh(a) or relu(a), a = gi_t + gh;  da = dh (1 - h^2), or dh where h > 0.

Every cell then passes its gradient on through the recurrent product, dh_prev (+)= da W_hh (the GRU's dgh W_hh),
and after the loop the weights' gradients are sums over time, one product each over all steps:

    dW_hh = sum_t da_t^T h_prev,t     dW_ih = sum_t da_t^T x_t     dx_t = da_t W_ih     db = sum_t da_t
    dW_hr = sum_t dh_t^T m_t          (the GRU: dgh in dW_hh and db_hh, dgi in dW_ih, dx and db_ih)

so each step costs one product forward and one backward, and the gradients are linear in the sequence length.

The cells here are the NumPy references, run on the ``"numpy"`` backend; on ``"numba"`` their twins
(``minigrad/kernels/rnn_numba.py``, same names and arguments) run instead: each backward cell in one pass of
arithmetic, each forward cell as NumPy's vectorized exp and tanh (several times faster than numba's scalar
calls) with the arithmetic around them fused. On the numba backend each step's product goes through
``matmul_numba.planned`` (its blocks, one per numba thread, cut once per loop) and the products over all steps
through ``kernels.matmul``. ``graph_backward`` (create_graph=True) differentiates the same step written with
minigrad ops (``cell_step``, also the cells' forward), so second derivatives come from autograd.
"""
import numpy as np

from .. import kernels
from ..autograd import Function
from ..dtypes import compute_dtype
from .elementwise import relu, sigmoid, tanh
from .linalg import linear
from .shape import cat

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# --------------------------------------------------------------------------- one step on Tensors
def cell_step(mode, gi, state, w_hh, b_hh, w_hr=None):
    """One recurrent step written with minigrad ops, from the input projection ``gi`` (N, gates*H) (with b_ih)
    and the previous ``state``: h (N, H), or (h, c) for an LSTM (h (N, P) projected by ``w_hr`` (P, H) when
    given). Returns the new state in the same form. The cells' forward, and the layers' ``graph_backward``."""
    if mode == "LSTM":
        h, c = state
        i, f, g, o = (gi + linear(h, w_hh, b_hh)).chunk(4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        return (h if w_hr is None else linear(h, w_hr)), c
    gh = linear(state, w_hh, b_hh)
    if mode == "GRU":
        gi_r, gi_z, gi_n = gi.chunk(3, -1)
        gh_r, gh_z, gh_n = gh.chunk(3, -1)
        r, z = sigmoid(gi_r + gh_r), sigmoid(gi_z + gh_z)
        n = tanh(gi_n + r * gh_n)
        return (1 - z) * n + z * state
    if mode == "RNN_TANH":
        return tanh(gi + gh)
    if mode == "RNN_RELU":
        return relu(gi + gh)
    raise RuntimeError(f"Unknown nonlinearity: {mode}")


# --------------------------------------------------------------------------- the cells on arrays
def _sigmoid_(a, out):
    """out = 1 / (1 + exp(-a)) (exp may overflow to inf for a << 0: the result is then 0, as it should be)."""
    np.negative(a, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def lstm_cell_forward(a, gi, c_prev, gates, c, tanh_c, m):
    """From the pre-activations ``a`` + ``gi`` (N, 4H) (a = h_prev W_hh^T, overwritten): ``gates`` (N, 4H) =
    (i, f, g, o), ``c``, ``tanh_c`` and ``m`` = o tanh(c) (N, H), written in place."""
    H = c.shape[1]
    a += gi
    _sigmoid_(a, gates)                                   # all four, then g's quarter replaced by tanh
    np.tanh(a[:, 2 * H:3 * H], out=gates[:, 2 * H:3 * H])
    i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
    np.multiply(f, c_prev, out=c)
    np.multiply(i, g, out=tanh_c)                         # (scratch)
    c += tanh_c
    np.tanh(c, out=tanh_c)
    np.multiply(o, tanh_c, out=m)


def lstm_cell_backward_(dm, dc, gates, c_prev, tanh_c, da):
    """LSTM cell backward (module docstring): ``da`` (N, 4H) written; ``dc`` (N, H), the gradient of c on entry,
    becomes that of c_prev."""
    H = dc.shape[1]
    i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
    dc += dm * o * (1 - tanh_c * tanh_c)
    da[:, :H] = dc * g * i * (1 - i)
    da[:, H:2 * H] = dc * c_prev * f * (1 - f)
    da[:, 2 * H:3 * H] = dc * i * (1 - g * g)
    da[:, 3 * H:] = dm * tanh_c * o * (1 - o)
    dc *= f


def gru_cell_forward(gi, gh, h_prev, gates, h):
    """From gi (N, 3H) (with b_ih and b_hr, b_hz) and gh (N, 3H) = h_prev W_hh^T + (0, 0, b_hn): ``gates``
    (N, 3H) = (r, z, n) and ``h`` (N, H), written in place."""
    H = h.shape[1]
    rz = gates[:, :2 * H]
    np.add(gi[:, :2 * H], gh[:, :2 * H], out=rz)
    _sigmoid_(rz, rz)
    r, z, n = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:]
    np.multiply(r, gh[:, 2 * H:], out=n)
    n += gi[:, 2 * H:]
    np.tanh(n, out=n)
    np.subtract(h_prev, n, out=h)                         # h = n + z (h_prev - n)
    h *= z
    h += n


def gru_cell_backward_(dh, gates, gh_n, h_prev, dgi, dgh):
    """GRU cell backward (module docstring): ``dgi``, ``dgh`` (N, 3H) written; ``dh`` (N, H), the gradient of h
    on entry, becomes its direct part in h_prev's gradient, dh z (the caller adds dgh W_hh)."""
    H = dh.shape[1]
    r, z, n = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:]
    da_n = dh * (1 - z) * (1 - n * n)
    dgi[:, :H] = da_n * gh_n * r * (1 - r)
    dgi[:, H:2 * H] = dh * (h_prev - n) * z * (1 - z)
    dgi[:, 2 * H:] = da_n
    dgh[:, :2 * H] = dgi[:, :2 * H]
    dgh[:, 2 * H:] = da_n * r
    dh *= z


def rnn_cell_forward(a, h, use_relu):
    """h = tanh(a) or relu(a), written in place."""
    if use_relu:
        np.maximum(a, 0, out=h)
    else:
        np.tanh(a, out=h)


def rnn_cell_backward_(dh, h, da, use_relu):
    """da = dh (1 - h^2) (tanh) or dh where h > 0 and 0 elsewhere (relu), written in place."""
    if use_relu:
        np.copyto(da, np.where(h > 0, dh, 0))
    else:
        np.multiply(dh, 1 - h * h, out=da)


STEP_TEAM = 1
"""numba threads for each step's product. One: a (32, 128) by (128, 512) float32 product took as long cut in
two halves on 2 threads as whole on one (its fastest of 3000 calls, 2-core AMD EPYC), and a parallel region per
step waits for the second thread wherever the machine is busy (a median of 7 ms instead of 51 us with 8
programs sharing the 2 cores). The products over all steps, outside the loops, use every thread. On the 2-core
Intel Xeon with AVX-512 two threads were faster (53 against 70 us per product; in one process, alternating, the
LSTM's fwd+bwd of bench/bench_rnn.py 90 -> 86 ms, the GRU's 90 -> 78 ms): a gain on one machine, none on the
other and a risk on busy ones, so the steps stay on one thread."""


def _product(a, b, out):
    """The function i -> (out = a[i] @ b) of a time loop, for a stack ``a`` (K, m, k), one ``b`` and a fixed
    ``out``: on the numba backend ``matmul_numba.planned`` (the product's blocks cut once for the whole loop,
    on ``STEP_TEAM`` threads, OpenBLAS on one), else ``np.matmul``. ``b`` is made C-contiguous once (a
    transposed view multiplies more slowly)."""
    b = np.ascontiguousarray(b)
    fast = kernels.numba_module("matmul_numba")
    return (lambda i: np.matmul(a[i], b, out=out)) if fast is None else fast.planned(a, b, out, team=STEP_TEAM)


def _cell_kernel(reference):
    """The numba twin of a cell kernel on the numba backend, else the reference."""
    fast = kernels.numba_module("rnn_numba")
    return reference if fast is None else getattr(fast, reference.__name__)


# --------------------------------------------------------------------------- the layer
def _array(t, dtype):
    return None if t is None else t._data.astype(dtype, copy=False)


def _time_order(L, reverse):
    """(steps, before, after): the time steps in the order they run, and where the state before and after step t
    lives in the (L + 1)-long state buffers: at t and t + 1 going forward, at t + 1 and t going backward (the
    initial state at the far end), so that the states before the steps and after them are each one slice."""
    if reverse:
        return range(L - 1, -1, -1), (lambda t: t + 1), (lambda t: t)
    return range(L), (lambda t: t), (lambda t: t + 1)


# --------------------------------------------------------------------------- the time loops
def _forward_buffers(gi, hs, w_hh, n_gates):
    """What every forward loop allocates: H, the gates (L, N, gates*H) and one (L, N, H) array to save, the step's
    product a (N, gates*H) and the function t -> (a = h_prev W_hh^T)."""
    L, N, G = gi.shape
    a = np.empty((N, G), gi.dtype)
    return G // n_gates, np.empty((L, N, G), gi.dtype), np.empty((L, N, G // n_gates), gi.dtype), a, \
        _product(hs, w_hh.T, a)


def lstm_loop(gi, hs, cs, w_hh, w_hr, order):
    """The LSTM forward over all steps: fills hs, cs (L + 1, N, .) and returns the saved (gates, tanh_c, ms)."""
    steps, before, after = order
    L, N = gi.shape[:2]
    H, gates, tanh_c, a, recurrent = _forward_buffers(gi, hs, w_hh, 4)     # a = h_prev W_hh^T
    ms = None if w_hr is None else np.empty((L, N, H), gi.dtype)  # m = o tanh(c), before the projection
    h = np.empty(hs.shape[1:], gi.dtype)
    project = None if w_hr is None else _product(ms, w_hr.T, h)  # h = m W_hr^T
    cell = _cell_kernel(lstm_cell_forward)
    for t in steps:
        recurrent(before(t))
        m = hs[after(t)] if w_hr is None else ms[t]
        cell(a, gi[t], cs[before(t)], gates[t], cs[after(t)], tanh_c[t], m)
        if w_hr is not None:
            project(t)
            hs[after(t)] = h
    return gates, tanh_c, ms


def lstm_bptt(dy, dh, dc, gates, cs, tanh_c, w_hh, w_hr, order):
    """The LSTM backward over all steps from dy (L, N, P) and the final states' gradients dh, dc: returns the
    pre-activations' gradients da (L, N, 4H), the projections' output gradients dr (L, N, P) (None without
    one), and the initial states' gradients."""
    steps, before, _ = order
    L, N, G = gates.shape
    da = np.empty((L, N, G), gates.dtype)
    dh_total = np.empty_like(dh)                                  # dh: the gradient from the next step
    recurrent = _product(da, w_hh, dh)                            # dh = da W_hh
    dr = None if w_hr is None else np.empty(dy.shape, gates.dtype)
    dm = dh_total if w_hr is None else np.empty(dc.shape, gates.dtype)
    project = None if w_hr is None else _product(dr, w_hr, dm)    # dm = dr W_hr
    cell = _cell_kernel(lstm_cell_backward_)
    for t in reversed(steps):                                     # backpropagation through time
        np.add(dh, dy[t], out=dh_total)
        if w_hr is not None:
            dr[t] = dh_total
            project(t)
        cell(dm, dc, gates[t], cs[before(t)], tanh_c[t], da[t])
        recurrent(t)
    return da, dr, dh, dc


def gru_loop(gi, hs, w_hh, b_hh, order):
    """The GRU forward over all steps: fills hs and returns the saved (gates, gh_n)."""
    steps, before, after = order
    H, gates, gh_n, gh, recurrent = _forward_buffers(gi, hs, w_hh, 3)      # gh = h_prev W_hh^T
    cell = _cell_kernel(gru_cell_forward)
    for t in steps:
        recurrent(before(t))
        if b_hh is not None:
            gh[:, 2 * H:] += b_hh[2 * H:]                         # b_hr, b_hz are in gi
        gh_n[t] = gh[:, 2 * H:]
        cell(gi[t], gh, hs[before(t)], gates[t], hs[after(t)])
    return gates, gh_n


def gru_bptt(dy, dh, gates, gh_n, hs, w_hh, order):
    """The GRU backward over all steps: returns dgi, dgh (L, N, 3H) and the initial state's gradient."""
    steps, before, _ = order
    dgi, dgh = np.empty(gates.shape, gates.dtype), np.empty(gates.shape, gates.dtype)
    dh_total = np.empty_like(dh)
    recurrent = _product(dgh, w_hh, dh)                           # dh = dgh W_hh
    cell = _cell_kernel(gru_cell_backward_)
    for t in reversed(steps):                                     # backpropagation through time
        np.add(dh, dy[t], out=dh_total)
        cell(dh_total, gates[t], gh_n[t], hs[before(t)], dgi[t], dgh[t])   # dh_total becomes dh z
        recurrent(t)
        dh += dh_total
    return dgi, dgh, dh


def rnn_loop(gi, hs, w_hh, use_relu, order):
    """The Elman RNN forward over all steps: fills hs."""
    steps, before, after = order
    a = np.empty(gi.shape[1:], gi.dtype)
    recurrent = _product(hs, w_hh.T, a)
    for t in steps:
        recurrent(before(t))
        a += gi[t]
        rnn_cell_forward(a, hs[after(t)], use_relu)


def rnn_bptt(dy, dh, hs, w_hh, use_relu, order):
    """The Elman RNN backward over all steps: returns da (L, N, H) and the initial state's gradient."""
    steps, _, after = order
    da = np.empty(dy.shape[:2] + (w_hh.shape[0],), dy.dtype)
    dh_total = np.empty_like(dh)
    recurrent = _product(da, w_hh, dh)
    cell = _cell_kernel(rnn_cell_backward_)
    for t in reversed(steps):                                     # backpropagation through time
        np.add(dh, dy[t], out=dh_total)
        cell(dh_total, hs[after(t)], da[t], use_relu)
        recurrent(t)
    return da, dh


# --------------------------------------------------------------------------- the layer
class RecurrentLayer(Function):
    """One layer in one direction over a whole sequence (module docstring). Inputs x (L, N, I), h0 (N, P),
    c0 (N, H) (LSTM, else None), w_ih, w_hh, b_ih, b_hh (None without bias), w_hr (None without proj_size).
    Its one output packs output (L, N, P), h_n (N, P) and, for an LSTM, c_n (N, H), flattened side by side
    (``unpack`` splits them)."""

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse):
        out_dtype, dtype = x.dtype, compute_dtype(x.dtype)
        dtype = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)
        inputs = tuple(_array(t, dtype) for t in (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr))
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = inputs
        L, N, _ = x.shape
        G, P = w_hh.shape
        H = G // GATES[mode]
        order = _time_order(L, reverse)
        hs = np.empty((L + 1, N, P), dtype)                       # the states h, in the order of _time_order
        hs[order[1](order[0][0])] = h0
        gi = kernels.matmul(x.reshape(L * N, x.shape[2]), w_ih.T).reshape(L, N, G)    # all steps at once
        if b_ih is not None:
            gi += b_ih
            added = 2 * H if mode == "GRU" else G                 # the GRU's b_hn stays inside r (b_hn + ...)
            gi[..., :added] += b_hh[:added]
        with np.errstate(over="ignore"):                          # exp(-a) = inf for a << 0: sigmoid(a) = 0
            if mode == "LSTM":
                cs = np.empty((L + 1, N, H), dtype)
                cs[order[1](order[0][0])] = c0
                saved = (cs, *lstm_loop(gi, hs, cs, w_hh, w_hr, order))
            elif mode == "GRU":
                saved = gru_loop(gi, hs, w_hh, b_hh, order)
            else:
                rnn_loop(gi, hs, w_hh, mode == "RNN_RELU", order)
                saved = ()
        del gi
        last = order[2](order[0][-1])
        now = slice(0, L) if reverse else slice(1, L + 1)
        parts = [hs[now], hs[last]] + ([cs[last]] if mode == "LSTM" else [])
        packed = np.concatenate([p.reshape(-1) for p in parts]).astype(out_dtype, copy=False)
        if any(ctx.needs_input_grad):
            ctx.save_for_backward(*inputs, hs, *saved)
            ctx.mode, ctx.reverse, ctx.shapes = mode, reverse, (L, N, P, H)
            ctx.input_size = x.shape[2]                               # (for utils.flop_counter)
        return packed

    @staticmethod
    def backward(ctx, dout):
        x, _, _, w_ih, w_hh, _, _, w_hr, hs, *saved = ctx.saved_tensors
        mode, (L, N, P, H) = ctx.mode, ctx.shapes
        order = _time_order(L, ctx.reverse)
        need = ctx.needs_input_grad
        g = dout._data.astype(x.dtype, copy=False)
        dy = g[:L * N * P].reshape(L, N, P)
        dh = g[L * N * P:(L + 1) * N * P].reshape(N, P).copy()
        dc0 = dr = None
        if mode == "LSTM":
            cs, gates, tanh_c, ms = saved
            dc = g[(L + 1) * N * P:].reshape(N, H).copy()
            da, dr, dh0, dc0 = lstm_bptt(dy, dh, dc, gates, cs, tanh_c, w_hh, w_hr, order)
            dgi = dgh = da
        elif mode == "GRU":
            dgi, dgh, dh0 = gru_bptt(dy, dh, *saved, hs, w_hh, order)
        else:
            dgi, dh0 = rnn_bptt(dy, dh, hs, w_hh, mode == "RNN_RELU", order)
            dgh = dgi
        # the sums over time, one product each; the states before the steps are one slice of hs
        shared = dgh is dgi                                        # the LSTM's and RNN's: one gradient for both
        dgi, dgh = dgi.reshape(L * N, dgi.shape[2]), dgh.reshape(L * N, dgh.shape[2])
        h_before = hs[1:] if ctx.reverse else hs[:L]
        dx = kernels.matmul(dgi, w_ih).reshape(x.shape) if need[0] else None
        dw_ih = kernels.matmul(dgi.T, x.reshape(L * N, x.shape[2])) if need[3] else None
        dw_hh = kernels.matmul(dgh.T, h_before.reshape(L * N, P)) if need[4] else None
        db_ih = dgi.sum(0) if need[5] else None
        db_hh = (db_ih.copy() if shared and db_ih is not None else dgh.sum(0)) if need[6] else None
        dw_hr = kernels.matmul(dr.reshape(L * N, P).T, ms.reshape(L * N, H)) if dr is not None and need[7] else None
        return (dx, (dh0 if need[1] else None), (dc0 if need[2] else None), dw_ih, dw_hh, db_ih, db_hh, dw_hr)

    @staticmethod
    def graph_backward(ctx, dout):
        """The layer rebuilt from ``cell_step`` on the inputs joined to the graph, differentiated by autograd
        with create_graph=True: gradients that can be differentiated again."""
        from ..autograd import grad
        saved = ctx.saved_tensors[:8]
        inputs = [None if a is None else ctx.input_tensor(i, a) for i, a in enumerate(saved)]
        wrt = [i for i, t in enumerate(inputs) if t is not None and ctx.needs_input_grad[i] and t.requires_grad]
        for i in wrt:
            inputs[i] = inputs[i].clone()          # a node of its own: where autograd stops and captures
        packed = sequence_composite(ctx.mode, ctx.reverse, *inputs)
        grads = grad(packed, [inputs[i] for i in wrt], dout, create_graph=True, allow_unused=True)
        out = [None] * 8
        for i, g in zip(wrt, grads):
            out[i] = g
        return tuple(out)


def sequence_composite(mode, reverse, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
    """``RecurrentLayer``'s packed output composed from ``cell_step`` (one graph node per op and step)."""
    gi = linear(x, w_ih, b_ih)                                  # (L, N, gates*H)
    L = x.shape[0]
    state = (h0, c0) if mode == "LSTM" else h0
    hs = [None] * L
    for t in (range(L - 1, -1, -1) if reverse else range(L)):
        state = cell_step(mode, gi[t], state, w_hh, b_hh, w_hr)
        hs[t] = state[0] if mode == "LSTM" else state
    h_n = state[0] if mode == "LSTM" else state
    parts = [h.reshape(-1) for h in hs] + [h_n.reshape(-1)] + ([state[1].reshape(-1)] if mode == "LSTM" else [])
    return cat(parts)


def unpack(packed, mode, L, N, P, H):
    """(output (L, N, P), h_n (N, P), c_n (N, H) or None) from ``RecurrentLayer``'s packed output."""
    output = packed[:L * N * P].reshape(L, N, P)
    h_n = packed[L * N * P:(L + 1) * N * P].reshape(N, P)
    c_n = packed[(L + 1) * N * P:].reshape(N, H) if mode == "LSTM" else None
    return output, h_n, c_n


def recurrent_layer(mode, x, h0, c0, weights, reverse):
    """One layer in one direction: (output (L, N, P), h_n, c_n or None). ``weights`` = (w_ih, w_hh, b_ih, b_hh,
    w_hr) with None for absent ones."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    packed = RecurrentLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode=mode, reverse=reverse)
    L, N = x.shape[:2]
    return unpack(packed, mode, L, N, w_hh.shape[1], w_hh.shape[0] // GATES[mode])


def check_cell(input, hiddens, w_ih, w_hh, gates):
    """ATen's checks of a cell's operands (the functional cells' and the cell modules'): input (N, I), each hidden
    (N, H), w_ih (gates * H, I), w_hh (gates * H, H)."""
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}")
    hidden_size = w_hh.size(1)
    for label, h in enumerate(hiddens):
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {h.size(0)}")
        if h.size(1) != hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h.size(1)}, expected {hidden_size}")
    if gates > 1 and w_ih.size(0) != gates * hidden_size:
        raise RuntimeError(f"weight_ih first dim must be {gates} * hidden_size = {gates * hidden_size}, "
                           f"but got {w_ih.size(0)}")
