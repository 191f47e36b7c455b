"""Tensor.unfold (sliding windows along one dimension), torch.meshgrid, torch.cartesian_prod, torch.cdist.

* unfold: PyTorch mirrors (forward and gradient, float64) swept with hypothesis over shapes, dimension, window
  size and step (overlapping, touching and gapped windows); a view of the input; float64 gradcheck and
  gradgradcheck; a ViT-style patch embedding; bad input (step <= 0, size larger than the dimension, negative
  size, dimension out of range) with PyTorch's exception types, nothing changed;
* meshgrid: both indexings against PyTorch (values, shapes, dtypes), the warning without ``indexing``,
  gradients reaching every input; cartesian_prod against PyTorch;
* cdist: mirrors over p (0, 1, 2, 3, 0.5, inf) and broadcast batch shapes, the gradient at a zero distance and
  at ties of the inf-norm equal PyTorch's, gradchecks and gradgradchecks, bad input.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import assert_mirror, check_grad, check_gradgrad, run_both, torch_or_skip

SWEEP = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- unfold
@st.composite
def unfold_case(draw):
    """(shape, dimension, size, step) with size <= the dimension's length (0 included)."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size = draw(st.integers(0, shape[dim]))
    return shape, dim, size, draw(st.integers(1, 4))


@SWEEP
@given(case=unfold_case(), seed=st.integers(0, 2 ** 32 - 1))
def test_unfold_mirror(case, seed):
    shape, dim, size, step = case
    x = np.random.default_rng(seed).standard_normal(shape)
    out = assert_mirror(*run_both(lambda lib, t: t.unfold(dim, size, step)), x, seed=seed)
    windows = (shape[dim] - size) // step + 1
    expected_shape = list(shape) + [size]
    expected_shape[dim % len(shape)] = windows
    assert out.shape == tuple(expected_shape)


def test_unfold_values_are_the_windows():
    x = mg.arange(7.0)
    np.testing.assert_array_equal(x.unfold(0, 3, 2).numpy(), [[0, 1, 2], [2, 3, 4], [4, 5, 6]])
    np.testing.assert_array_equal(x.unfold(0, 2, 3).numpy(), [[0, 1], [3, 4]])       # gaps: 2, 5, 6 unread


def test_unfold_overlapping_windows_accumulate_gradients():
    x = mg.zeros(5, dtype=mg.float64, requires_grad=True)
    x.unfold(0, 3, 1).sum().backward()                      # how many of the 3 windows cover each position
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 3, 2, 1])


def test_unfold_is_a_view():
    x = mg.arange(6.0).reshape(2, 3)
    windows = x.unfold(1, 2, 1)
    x[0, 1] = 10.0
    np.testing.assert_array_equal(windows.numpy()[0], [[0, 10], [10, 2]])


@pytest.mark.parametrize("dim, size, step", [(0, 2, 1), (1, 3, 2), (-1, 2, 3), (1, 4, 1)])
def test_unfold_gradcheck(dim, size, step):
    x = np.random.default_rng(1).standard_normal((3, 4))
    check_grad(lambda t: t.unfold(dim, size, step), x)
    check_gradgrad(lambda t: t.unfold(dim, size, step) ** 2, x)


def test_unfold_zero_dim_tensor():
    torch = torch_or_skip()
    for size in (0, 1):
        ours, theirs = mg.tensor(5.0).unfold(0, size, 1), torch.tensor(5.0).unfold(0, size, 1)
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_vit_patch_embedding_with_unfold():
    """Patches cut with two unfolds (the ViT recipe), flattened and projected: forward and gradients of the
    image and the projection equal PyTorch's."""
    rng = np.random.default_rng(8)
    image, weight = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((5, 3 * 4 * 4))

    def embed(lib, x, w):
        patches = x.unfold(2, 4, 4).unfold(3, 4, 4)                 # (N, C, 2, 2, 4, 4)
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(2, 4, -1)  # (N, patches, C*4*4)
        return patches @ w.transpose(0, 1)
    assert_mirror(*run_both(embed), image, weight)


UNFOLD_BAD = {   # (dimension, size, step): exception type, words in the message
    (1, 3, 0): (RuntimeError, "step is 0 but must be > 0"),
    (1, 3, -2): (RuntimeError, "step is -2 but must be > 0"),
    (1, 8, 1): (RuntimeError, "maximum size for tensor at dimension 1 is 7 but size is 8"),
    (1, -1, 1): (RuntimeError, "size is -1 but must be >= 0"),
    (2, 3, 1): (IndexError, "Dimension out of range"),
    (1, 2.0, 1): (TypeError, "'size'"),
}


@pytest.mark.parametrize("args", list(UNFOLD_BAD))
def test_unfold_bad_input(args):
    torch = torch_or_skip()
    error, words = UNFOLD_BAD[args]
    data = np.random.default_rng(0).standard_normal((3, 7))
    x = mg.tensor(data, requires_grad=True)
    with pytest.raises(error, match=words):
        x.unfold(*args)
    with pytest.raises(error):
        torch.tensor(data).unfold(*args)
    np.testing.assert_array_equal(x.detach().numpy(), data)
    assert x.grad is None


# --------------------------------------------------------------------------- meshgrid, cartesian_prod
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3,), (3, 4), (2, 3, 4), (0, 2), (1, 3)])
def test_meshgrid_mirror(indexing, sizes):
    torch = torch_or_skip()
    arrays = [np.arange(n) * (i + 1) for i, n in enumerate(sizes)]
    ours = mg.meshgrid(*[mg.tensor(a) for a in arrays], indexing=indexing)
    theirs = torch.meshgrid(*[torch.tensor(a) for a in arrays], indexing=indexing)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape) and o.dtype == np.int64
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_meshgrid_gradients_reach_every_input():
    rng = np.random.default_rng(9)
    a, b, c = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(2)
    for indexing in ("ij", "xy"):
        def grids(lib, x, y, z, indexing=indexing):
            gx, gy, gz = lib.meshgrid(x, y, z, indexing=indexing)
            return gx * gy + gz.sin()
        assert_mirror(*run_both(grids), a, b, c)


def test_meshgrid_takes_a_list_and_zero_dim_tensors():
    torch = torch_or_skip()
    ours = mg.meshgrid([mg.tensor(2.0), mg.arange(3.0)], indexing="ij")
    theirs = torch.meshgrid([torch.tensor(2.0), torch.arange(3.0)], indexing="ij")
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_meshgrid_without_indexing_warns_and_uses_ij():
    a, b = mg.arange(2), mg.arange(3)
    with pytest.warns(UserWarning, match="indexing argument"):
        grid_x, _ = mg.meshgrid(a, b)
    assert grid_x.shape == (2, 3)


@pytest.mark.parametrize("call, error, words", [
    (lambda: mg.meshgrid(mg.arange(2), mg.arange(2), indexing="yx"), RuntimeError, 'one of "xy" or "ij"'),
    (lambda: mg.meshgrid(mg.zeros(2, 2), mg.zeros(2), indexing="ij"), RuntimeError, "0D or 1D"),
    (lambda: mg.meshgrid(mg.arange(2), mg.arange(2.0), indexing="ij"), RuntimeError, "same dtype"),
    (lambda: mg.meshgrid(indexing="ij"), RuntimeError, "non-empty"),
    (lambda: mg.meshgrid([1, 2], indexing="ij"), TypeError, "expected Tensor"),
    (lambda: mg.cartesian_prod(mg.zeros(2, 2)), RuntimeError, "1D vector"),
])
def test_meshgrid_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize("sizes", [(3,), (2, 3), (2, 1, 3), (2, 0)])
def test_cartesian_prod_mirror(sizes):
    arrays = [np.random.default_rng(n).standard_normal(n) for n in sizes]
    assert_mirror(*run_both(lambda lib, *t: lib.cartesian_prod(*t)), *arrays)


# --------------------------------------------------------------------------- cdist
P_VALUES = [0.0, 1.0, 2.0, 3.0, 0.5, math.inf]


@st.composite
def cdist_case(draw):
    """Shapes of x1 (*B1, P, M) and x2 (*B2, R, M) with broadcastable batch shapes."""
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    batch2 = tuple(draw(st.sampled_from([b, 1])) for b in batch)
    p_rows, r_rows, m = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    return batch + (p_rows, m), batch2 + (r_rows, m)


@SWEEP
@given(shapes=cdist_case(), p=st.sampled_from(P_VALUES), seed=st.integers(0, 2 ** 32 - 1))
def test_cdist_mirror(shapes, p, seed):
    rng = np.random.default_rng(seed)
    x1, x2 = (rng.standard_normal(s) for s in shapes)
    assert_mirror(*run_both(lambda lib, a, b: lib.cdist(a, b, p)), x1, x2, seed=seed)


@pytest.mark.parametrize("p", P_VALUES)
def test_cdist_zero_distances_and_ties_match_pytorch(p):
    """Rows repeated between the sets (distance 0, every difference 0) and equal coordinates (ties of the
    inf-norm, zeros of p < 1): the gradients PyTorch defines there."""
    x1 = np.array([[1.0, 2.0], [0.0, 3.0], [1.0, -1.0]])
    x2 = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 0.0]])
    assert_mirror(*run_both(lambda lib, a, b: lib.cdist(a, b, p)), x1, x2)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 1.5, math.inf])
def test_cdist_gradcheck(p):
    rng = np.random.default_rng(12)
    x1, x2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((1, 2, 4))
    check_grad(lambda a, b: mg.cdist(a, b, p), x1, x2)


@pytest.mark.parametrize("p", [2.0, 3.0])
def test_cdist_gradgradcheck(p):
    rng = np.random.default_rng(14)
    check_gradgrad(lambda a, b: mg.cdist(a, b, p), rng.standard_normal((3, 2)), rng.standard_normal((2, 2)))


def test_cdist_float32():
    torch = torch_or_skip()
    rng = np.random.default_rng(15)
    x1, x2 = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    ours = mg.cdist(mg.tensor(x1), mg.tensor(x2))
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.numpy(), torch.cdist(torch.tensor(x1), torch.tensor(x2)).numpy(), rtol=1e-5)


@pytest.mark.parametrize("shapes, kw, error, words", [
    (((3, 4), (5, 3)), {}, RuntimeError, "same number of columns"),
    (((4,), (5, 4)), {}, RuntimeError, "at least 2D"),
    (((3, 4), (5, 4)), {"p": -1.0}, RuntimeError, "non-negative p"),
    (((2, 3, 4), (3, 5, 4)), {}, RuntimeError, "must match"),
    (((3, 4), (5, 4)), {"compute_mode": "fast"}, ValueError, "compute_mode"),
])
def test_cdist_bad_input(shapes, kw, error, words):
    torch = torch_or_skip()
    arrays = [np.random.default_rng(0).standard_normal(s) for s in shapes]
    tensors = [mg.tensor(a, requires_grad=True) for a in arrays]
    with pytest.raises(error, match=words):
        mg.cdist(*tensors, **kw)
    with pytest.raises(error):
        torch.cdist(*[torch.tensor(a) for a in arrays], **kw)
    for t, a in zip(tensors, arrays):
        np.testing.assert_array_equal(t.detach().numpy(), a)
        assert t.grad is None


def test_cdist_refuses_integers_and_mixed_dtypes():
    with pytest.raises(RuntimeError, match="floating-point"):
        mg.cdist(mg.zeros(2, 2, dtype=mg.int64), mg.zeros(2, 2, dtype=mg.int64))
    with pytest.raises(RuntimeError, match="same dtype"):
        mg.cdist(mg.zeros(2, 2), mg.zeros(2, 2, dtype=mg.float64))


def test_no_warnings_from_cdist_at_zero_differences():
    x = mg.tensor([[1.0, 2.0]], dtype=mg.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mg.cdist(x, mg.tensor([[1.0, 3.0]], dtype=mg.float64), 0.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, -1.0]])
