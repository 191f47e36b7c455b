"""Matrix products on numba's threads (minigrad/kernels/matmul_numba.py) against np.matmul, their reference.

* every cut (whole matrices per thread, inner dimension, columns, rows) over random shapes, batch shapes,
  dtypes and layouts (C order, transposed views, wider leading dimensions, broadcast batch strides),
  1e-5 relative in float32 and 1e-12 in float64 (the inner cut adds its parts in another order);
* what goes to np.matmul unchanged (bit for bit): 1-D operands, broadcast batch shapes, other dtypes,
  empty operands, small products, the "numpy" backend; one numba thread: one gemm on one OpenBLAS thread;
* OpenBLAS's thread count is restored after each product; a gemm whose results are wrong is refused
  by the start-up check (the check can fail);
* the OpenMP spin setting minigrad uses while numba starts is gone from the environment afterwards;
* ``mg.set_num_threads`` / ``get_num_threads``: PyTorch's errors, and the count reaches kernels and products.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad import kernels

numba = pytest.importorskip("numba", reason="numba not installed: its matrix products are not used")
from minigrad.kernels import matmul_numba, openblas  # noqa: E402

RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def _numpy_has_openblas():
    try:
        return "openblas" in str(np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]).lower()
    except Exception:
        return False


needs_blas = pytest.mark.skipif(not matmul_numba.available(), reason="NumPy's BLAS is not an OpenBLAS minigrad reaches")


def test_found_when_numpy_uses_openblas():
    """NumPy's wheels ship OpenBLAS: then minigrad must find it (else the products silently lose their speed)."""
    if not _numpy_has_openblas():
        pytest.skip("NumPy is not built with OpenBLAS here")
    assert matmul_numba.available(), "NumPy uses OpenBLAS but minigrad/kernels/openblas.py did not find it"


@pytest.fixture
def two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    yield
    numba.set_num_threads(before)


def _operand(rng, shape, dtype, layout):
    """A random array of ``shape`` stored as ``layout``: "C", "T" (a transposed view of a C array), "wide" (a
    slice of a wider C array: leading dimension > columns) or "bcast" (batch axis of stride 0)."""
    if layout == "T":
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(rng.standard_normal(shape).astype(dtype), -1, -2)), -1, -2)
    if layout == "wide":
        return rng.standard_normal(shape[:-1] + (shape[-1] + 3,)).astype(dtype)[..., :shape[-1]]
    if layout == "bcast" and len(shape) > 2:
        return np.broadcast_to(rng.standard_normal((1,) + shape[1:]).astype(dtype), shape)
    return rng.standard_normal(shape).astype(dtype)


def _check(a, b):
    expected = np.matmul(a, b)
    assert matmul_numba.usable(a, b, min_work=0)
    actual = matmul_numba.matmul(a, b, min_work=0)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    scale = np.abs(expected).max() + np.abs(a).max() * np.abs(b).max()
    assert np.abs(actual - expected).max() <= RTOL[a.dtype.type] * scale


@needs_blas
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 70), long_inner=st.booleans(),
       batch=st.sampled_from([(), (1,), (2,), (3,), (2, 3)]), dtype=st.sampled_from([np.float32, np.float64]),
       layouts=st.tuples(*[st.sampled_from(["C", "T", "wide", "bcast"])] * 2), seed=st.integers(0, 2**16))
def test_equals_numpy(two_threads, m, n, k, long_inner, batch, dtype, layouts, seed):
    k = k * 40 if long_inner else k
    rng = np.random.default_rng(seed)
    a = _operand(rng, batch + (m, k), dtype, layouts[0])
    b = _operand(rng, batch + (k, n), dtype, layouts[1])
    _check(a, b)


@needs_blas
@pytest.mark.parametrize("shape_a, shape_b, cut", [
    ((4, 30, 20), (4, 20, 25), "matrices"),         # g >= threads: one gemm per matrix
    ((27, 4000), (4000, 32), "inner"),              # the first layer's weight gradient in the CNN step
    ((64, 288), (288, 1000), "columns"),            # a convolution's forward product
    ((1000, 128), (128, 64), "rows"),               # a Linear layer's forward product
])
def test_each_cut(two_threads, shape_a, shape_b, cut):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    tasks, out_shape = matmul_numba._tasks(a, b, matmul_numba._layouts(a, b, 0), 2)
    rows, cols, inner = tasks[:, 2], tasks[:, 3], tasks[:, 4]
    m, n, k = shape_a[-2], shape_b[-1], shape_a[-1]
    expected = {"matrices": (len(tasks) == shape_a[0] and (rows == m).all() and (cols == n).all()),
                "inner": len(out_shape) == 4 and inner.sum() == k,
                "columns": cols.sum() == n and (rows == m).all(),
                "rows": rows.sum() == m and (cols == n).all()}[cut]
    assert expected, (cut, tasks[:, :5], out_shape)
    _check(a, b)
    _check(a.astype(np.float32), b.astype(np.float32))


@pytest.mark.parametrize("make", [
    lambda r: (r.standard_normal(50), r.standard_normal((50, 40))),                    # 1-D
    lambda r: (r.standard_normal((3, 40, 50)), r.standard_normal((1, 50, 40))),        # broadcast batch
    lambda r: (r.standard_normal((40, 50)), r.standard_normal((50, 40)).astype(np.float32)),  # mixed dtypes
    lambda r: (r.integers(0, 9, (40, 50)), r.integers(0, 9, (50, 40))),                # integers
    lambda r: (r.standard_normal((40, 50)) + 1j, r.standard_normal((50, 40)) + 0j),    # complex
    lambda r: (np.zeros((0, 50)), r.standard_normal((50, 40))),                         # empty
    lambda r: (r.standard_normal((40, 50))[:, ::2], r.standard_normal((25, 40))),      # no unit stride
])
def test_other_products_go_to_numpy(two_threads, make):
    a, b = make(np.random.default_rng(0))
    assert not matmul_numba.usable(a, b, min_work=0)
    np.testing.assert_array_equal(matmul_numba.matmul(a, b, min_work=0), np.matmul(a, b))


def test_small_products_go_to_numpy(two_threads):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((40, 50)), rng.standard_normal((50, 40))
    assert not matmul_numba.usable(a, b)                   # 80,000 multiply-adds < MIN_WORK
    assert matmul_numba.usable(a, b, min_work=0)


@needs_blas
def test_one_thread_is_one_gemm_on_one_openblas_thread(two_threads, monkeypatch):
    """With one numba thread a product is one gemm call per matrix, OpenBLAS set to one thread meanwhile (so
    set_num_threads(1) leaves no OpenBLAS worker running); OpenBLAS's own count is restored after."""
    blas = matmul_numba._state["blas"]
    seen = []
    real_tasks, real_run = matmul_numba._tasks, matmul_numba._run

    def run_and_record(dtype):
        run = real_run(dtype)
        return lambda tasks: seen.append(("threads", blas.get_threads(), len(tasks))) or run(tasks)
    monkeypatch.setattr(matmul_numba, "_run", run_and_record)
    monkeypatch.setattr(matmul_numba, "_tasks", lambda a, b, layouts, team: seen.append(("team", team)) or
                        real_tasks(a, b, layouts, team))
    numba.set_num_threads(1)
    before = blas.get_threads()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 200)), rng.standard_normal((200, 100))
    np.testing.assert_allclose(matmul_numba.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)
    assert seen == [("team", 1), ("threads", 1, 1)] and blas.get_threads() == before


def test_numpy_backend_is_np_matmul():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 200)), rng.standard_normal((200, 100))
    with kernels.use_backend("numpy"):
        np.testing.assert_array_equal(kernels.matmul(a, b), np.matmul(a, b))


@needs_blas
def test_openblas_threads_restored(two_threads):
    blas = matmul_numba._state["blas"]
    before = blas.get_threads()
    rng = np.random.default_rng(0)
    matmul_numba.matmul(rng.standard_normal((300, 200)), rng.standard_normal((200, 300)), min_work=0)
    assert blas.get_threads() == before


@needs_blas
def test_start_up_check_refuses_a_wrong_gemm():
    """The check that guards against a library whose symbols matched but whose gemm does not compute the
    product: a gemm that writes nothing, or one that ignores the transpose flag, is refused."""
    blas = matmul_numba._state["blas"]
    assert matmul_numba._gemm_agrees(blas)

    def ignores_transpose(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        blas.sgemm(order, ta, openblas.NO_TRANS, m, n, k, alpha, a, lda, b, n, beta, c, ldc)
    for wrong in (lambda *args: None, ignores_transpose):
        assert not matmul_numba._gemm_agrees(blas.__class__(blas.path, wrong, blas.dgemm, blas.get_threads,
                                                            blas.set_threads))


def test_spin_setting_not_left_in_environment():
    """minigrad sets GOMP_SPINCOUNT only while numba's OpenMP runtime starts (kernels/__init__.py); a
    user's own setting stays."""
    code = ("import os, numpy as np, minigrad as mg\n"
            "x = mg.randn(64, 64, 16, 16, requires_grad=True)\n"
            "mg.nn.functional.group_norm(x, 8).sum().backward()\n"
            "print(os.environ.get('GOMP_SPINCOUNT'), os.environ.get('OMP_WAIT_POLICY'))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "MINIGRAD_BACKEND")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["None", "None"]
    out = subprocess.run([sys.executable, "-c", code], env=dict(env, GOMP_SPINCOUNT="123"), capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["123", "None"]


def test_set_num_threads_like_pytorch():
    """mg.set_num_threads / get_num_threads: PyTorch's errors for bad counts (state unchanged), and the count
    reaches the kernels (the products: test_one_thread_is_one_gemm_on_one_openblas_thread); a count above
    numba's own is capped at it."""
    import minigrad as mg
    from minigrad.kernels import numba_kernels
    before = mg.get_num_threads()
    try:
        for bad, message in ((0, "set_num_threads expects a positive integer"),
                             (-1, "set_num_threads expects a positive integer"),
                             (2.5, "set_num_threads expects an int, but got float"),
                             ("2", "set_num_threads expects an int, but got str"),
                             (True, "set_num_threads expects an int, but got bool")):
            with pytest.raises(RuntimeError, match=message):
                mg.set_num_threads(bad)
            assert mg.get_num_threads() == before
        mg.set_num_threads(1)
        assert mg.get_num_threads() == 1 == numba.get_num_threads() == numba_kernels.team_size(1 << 30)
        mg.set_num_threads(10_000)
        assert mg.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    finally:
        mg.set_num_threads(before)


@needs_blas
def test_thread_cap(two_threads, monkeypatch):
    """With more numba threads than MAX_THREADS, a product runs on MAX_THREADS of them (OpenBLAS's buffers for
    concurrent callers are limited) and the caller's thread count is restored; the result is unchanged."""
    monkeypatch.setattr(matmul_numba, "MAX_THREADS", 1)
    seen = []
    real_tasks = matmul_numba._tasks
    monkeypatch.setattr(matmul_numba, "_tasks", lambda a, b, layouts, team: seen.append(team) or
                        real_tasks(a, b, layouts, team))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 300)), rng.standard_normal((300, 200))
    np.testing.assert_allclose(matmul_numba.matmul(a, b, min_work=0), a @ b, rtol=1e-12, atol=1e-12)
    assert seen == [1] and numba.get_num_threads() == 2
