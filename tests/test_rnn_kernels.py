"""The recurrent layers' kernels: the numba twins of the cells against their NumPy references
(minigrad/ops/recurrent.py), the planned products of a time loop against np.matmul, and a wrong cell backward
(a mutant) that the gradient checks must catch."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.kernels import use_backend
from minigrad.ops import recurrent

from .mirror import check_grad

rnn_numba = pytest.importorskip("minigrad.kernels.rnn_numba")
matmul_numba = pytest.importorskip("minigrad.kernels.matmul_numba")

TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-6}, np.float64: {"rtol": 1e-13, "atol": 1e-14}}
N, H = 5, 7


def gates_like(rng, n_gates, dtype, tanh_gate=None):
    """Activated gates (N, n_gates * H): sigmoids in (0, 1), the tanh gate (by index) in (-1, 1)."""
    g = rng.uniform(0.01, 0.99, (N, n_gates * H))
    if tanh_gate is not None:
        g[:, tanh_gate * H:(tanh_gate + 1) * H] = rng.uniform(-0.99, 0.99, (N, H))
    return g.astype(dtype)


def both(kernel_name, args, in_place):
    """Run the reference and the twin on copies of ``args``; the arrays at positions ``in_place`` after each."""
    results = []
    for fn in (getattr(recurrent, kernel_name), getattr(rnn_numba, kernel_name)):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        with np.errstate(over="ignore"):                   # as the layers run them
            fn(*copies)
        results.append([copies[i] for i in in_place])
    return results


def assert_twin_matches(kernel_name, args, in_place, dtype):
    """The twin writes every array the reference writes (no NaN left of the NaN-filled outputs), to TOL."""
    ref, twin = both(kernel_name, args, in_place)
    for a, b in zip(ref, twin):
        assert not np.isnan(b).any()
        np.testing.assert_allclose(b, a, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_cell_backward_twin_matches_reference(dtype, rng):
    f = lambda *s: rng.standard_normal(s).astype(dtype)
    args = [f(N, H), f(N, H), gates_like(rng, 4, dtype, tanh_gate=2), f(N, H),
            np.tanh(f(N, H)), np.full((N, 4 * H), np.nan, dtype)]
    assert_twin_matches("lstm_cell_backward_", args, (1, 5), dtype)   # dc becomes dc_prev, da written


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gru_cell_backward_twin_matches_reference(dtype, rng):
    f = lambda *s: rng.standard_normal(s).astype(dtype)
    args = [f(N, H), gates_like(rng, 3, dtype, tanh_gate=2), f(N, H), f(N, H), np.full((N, 3 * H), np.nan, dtype),
            np.full((N, 3 * H), np.nan, dtype)]
    assert_twin_matches("gru_cell_backward_", args, (0, 4, 5), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_cell_forward_twin_matches_reference(dtype, rng):
    f = lambda *s: (3 * rng.standard_normal(s)).astype(dtype)
    a = f(N, 4 * H)
    a[0, :4] = [-800, 800, -80, 80]                       # exp(-a) overflows to inf: the sigmoid is 0
    args = [a, f(N, 4 * H), f(N, H)] + [np.full((N, k * H), np.nan, dtype) for k in (4, 1, 1, 1)]
    assert_twin_matches("lstm_cell_forward", args, (3, 4, 5, 6), dtype)   # gates, c, tanh(c), m


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gru_cell_forward_twin_matches_reference(dtype, rng):
    f = lambda *s: (3 * rng.standard_normal(s)).astype(dtype)
    args = [f(N, 3 * H), f(N, 3 * H), f(N, H), np.full((N, 3 * H), np.nan, dtype), np.full((N, H), np.nan, dtype)]
    args[0][0, :2] = [-900, 900]
    assert_twin_matches("gru_cell_forward", args, (3, 4), dtype)        # gates, h


@pytest.mark.parametrize("use_relu", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rnn_cell_backward_twin_matches_reference(dtype, use_relu, rng):
    h = rng.standard_normal((N, H)).astype(dtype)
    h = np.maximum(h, 0) if use_relu else np.tanh(h)
    dh = rng.standard_normal((N, H)).astype(dtype)
    dh[0, :3] = [np.inf, np.nan, -np.inf]                 # where relu's output is 0 the gradient is 0, as PyTorch
    h[0, :3] = 0 if use_relu else h[0, :3]
    args = [dh, h, np.full((N, H), np.nan, dtype), use_relu]
    (a,), (b,) = both("rnn_cell_backward_", args, in_place=(2,))
    np.testing.assert_allclose(b, a, **TOL[dtype], equal_nan=not use_relu)
    if use_relu:
        assert np.all(b[0, :3] == 0)


@pytest.mark.parametrize("threads, team", [(1, None), (2, None), (2, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_planned_products_equal_np_matmul(dtype, threads, team, rng):
    """planned(a, b, out): out = a[i] @ b for each i, the blocks cut once (min_work=0 forces the numba path
    on small operands), on every thread or on a team of one (one gemm on the calling thread, as the recurrent
    layers' steps run); b C-contiguous or a transposed view; a stack whose matrices are strided slices."""
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        stack = rng.standard_normal((6, 9, 40)).astype(dtype)[:, :, 3:35]   # (6, 9, 32), rows strided
        for b in (rng.standard_normal((32, 48)).astype(dtype), rng.standard_normal((48, 32)).astype(dtype).T):
            out = np.full((9, 48), np.nan, dtype)
            product = matmul_numba.planned(stack, b, out, team=team, min_work=0)
            for i in (4, 0, 5):
                product(i)
                np.testing.assert_allclose(out, stack[i] @ b, **TOL[dtype])
    finally:
        numba.set_num_threads(before)


def test_planned_product_falls_back_where_matmul_does(rng):
    """An inner dimension much longer than the output (cut along it by matmul) and a tiny product take
    np.matmul's path; the result is still a[i] @ b in ``out``."""
    for shape_a, shape_b in (((3, 2, 400), (400, 2)), ((3, 2, 3), (3, 4))):
        a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
        out = np.empty((shape_a[1], shape_b[1]))
        matmul_numba.planned(a, b, out)(2)
        np.testing.assert_allclose(out, a[2] @ b, rtol=1e-13)


def _wrong_lstm_cell_backward_(dm, dc, gates, c_prev, tanh_c, da):
    """A mutant: the cell's gradient through tanh(c) without its derivative (1 - tanh(c)^2)."""
    H = dc.shape[1]
    i, f, g, o = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H], gates[:, 3 * H:]
    dc += dm * o
    da[:, :H] = dc * g * i * (1 - i)
    da[:, H:2 * H] = dc * c_prev * f * (1 - f)
    da[:, 2 * H:3 * H] = dc * i * (1 - g * g)
    da[:, 3 * H:] = dm * tanh_c * o * (1 - o)
    dc *= f


def test_a_wrong_cell_backward_is_caught(monkeypatch, rng):
    """The finite-difference check that passes for the LSTM (test_rnn.py) fails once the cell backward drops a
    factor: the checks can tell a wrong formula."""
    mg.manual_seed(0)
    lstm = mg.nn.LSTM(2, 3, dtype=mg.float64)
    x = rng.standard_normal((3, 2, 2))
    with use_backend("numpy"):                             # the reference cell, which the mutant replaces
        check_grad(lambda x: lstm(x)[0], x)
        monkeypatch.setattr(recurrent, "lstm_cell_backward_", _wrong_lstm_cell_backward_)
        with pytest.raises(Exception, match="Jacobian mismatch"):
            check_grad(lambda x: lstm(x)[0], x)
