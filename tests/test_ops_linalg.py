"""matmul, linear and embedding: float64 gradchecks and PyTorch mirrors (forward and every input's gradient)
over 1-D, 2-D, batched and broadcast operand shapes, non-contiguous operands, dtypes, and the errors.

Each op is written once as ``f(lib, *tensors)`` and run with ``lib`` = minigrad and ``lib`` = torch.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import assert_mirror, check_grad, run_both, torch_or_skip
from .strategies import broadcastable_shapes, check_on_views, noncontiguous_arrays


def matmul(lib, a, b):
    return lib.matmul(a, b)


def normal(rng, *shapes):
    return [rng.standard_normal(s) for s in shapes]


# ----------------------------------------------------------------------------- matmul
MATMUL_SHAPES = [
    ((3,), (3,)),               # dot product: a 0-d result
    ((2, 3), (3,)),             # matrix @ vector
    ((3,), (3, 4)),             # vector @ matrix
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),        # batch @ shared matrix (the linear-layer case)
    ((2, 3), (2, 3, 4)),        # shared matrix @ batch
    ((3,), (2, 3, 4)),          # vector @ batch: the prepended dim is removed again
    ((2, 2, 3), (3,)),          # batch @ vector: the appended dim is removed again
    ((2, 1, 2, 3), (3, 3, 4)),  # batch dims broadcast both ways
    ((1, 2, 3), (2, 3, 4)),
    ((2, 2, 3), (2, 3, 1)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_gradcheck_and_mirror(shapes, rng):
    a, b = normal(rng, *shapes)
    check_grad(lambda x, y: x @ y, a, b)
    out = assert_mirror(*run_both(matmul), a, b)
    assert out.shape == np.matmul(a, b).shape


@st.composite
def matmul_operand_shapes(draw):
    """Two operands that multiply: each a vector (k,) or a stack of matrices with broadcastable batch dims."""
    n, k, p = (draw(st.integers(1, 3)) for _ in range(3))
    batch_a, batch_b = draw(broadcastable_shapes(max_dims=2))
    a = (k,) if draw(st.booleans()) else batch_a + (n, k)
    b = (k,) if draw(st.booleans()) else batch_b + (k, p)
    return a, b


@given(shapes=matmul_operand_shapes(), seed=st.integers(0, 2**32 - 1))
def test_matmul_over_random_shapes(shapes, seed):
    a, b = normal(np.random.default_rng(seed), *shapes)
    check_grad(lambda x, y: x @ y, a, b)
    assert_mirror(*run_both(matmul), a, b)


@given(data=st.data())
def test_matmul_on_noncontiguous_operands(data):
    a = data.draw(noncontiguous_arrays((2, 3, 4)))
    b = data.draw(noncontiguous_arrays((4, 3)))
    check_on_views(lambda x, y: x @ y, a, b)
    check_on_views(lambda x, y: x @ y.mT, a, b.T.copy())


def test_matmul_with_one_operand_not_requiring_grad(rng):
    a, b = normal(rng, (2, 3, 4), (4,))
    assert_mirror(*run_both(matmul), a, b, grads=[True, False])
    assert_mirror(*run_both(matmul), a, b, grads=[False, True])


def test_matmul_operators_and_method(rng):
    a, b = normal(rng, (2, 3), (3, 4))
    ta, tb = mg.tensor(a), mg.tensor(b)
    expected = a @ b
    for out in (ta @ tb, ta.matmul(tb), mg.matmul(ta, tb), a @ tb, ta @ b):
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-14)
        assert isinstance(out, mg.Tensor)


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64, mg.int64])
def test_matmul_keeps_the_dtype(dtype, rng):
    torch = torch_or_skip()
    a, b = (x.astype(dtype) for x in normal(rng, (2, 2, 3), (3, 4)))
    out = mg.matmul(mg.tensor(a), mg.tensor(b))
    assert out.dtype == dtype
    np.testing.assert_allclose(out.detach().numpy(), torch.matmul(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-6)


def test_float16_matmul_accumulates_in_float32_and_returns_float16(rng):
    a, b = (x.astype(np.float16) for x in normal(rng, (4, 64), (64, 3)))
    ta, tb = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
    out = ta @ tb
    assert out.dtype == mg.float16
    np.testing.assert_array_equal(out.detach().numpy(), (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
    out.backward(mg.ones(4, 3, dtype=mg.float16))
    assert ta.grad.dtype == tb.grad.dtype == mg.float16


BAD_MATMUL = [
    ((3,), (4,), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    ((2, 3), (4,), r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    ((3,), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)"),
    ((2, 3), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ((2, 2, 3), (4, 5), r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 4x5\)"),
    ((2, 2, 3), (5,), r"size mismatch, got input \(4\), mat \(4x3\), vec \(5\)"),
]


@pytest.mark.parametrize("sa, sb, message", BAD_MATMUL, ids=str)
def test_matmul_shape_mismatch_names_both_shapes_as_pytorch(sa, sb, message):
    with pytest.raises(RuntimeError, match=message) as info:
        mg.ones(*sa) @ mg.ones(*sb)
    torch = torch_or_skip()
    with pytest.raises(RuntimeError) as expected:
        torch.ones(*sa) @ torch.ones(*sb)
    assert str(info.value) == str(expected.value)


def test_batched_matmul_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"\[2, 2, 3\] and \[2, 4, 5\]"):
        mg.ones(2, 2, 3) @ mg.ones(2, 4, 5)
    with pytest.raises(RuntimeError, match=r"\[3\] and \[2, 4, 5\]"):
        mg.ones(3) @ mg.ones(2, 4, 5)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of tensor b \(3\)"):
        mg.ones(2, 2, 3) @ mg.ones(3, 3, 5)


def test_matmul_rejects_0d_operands_and_mixed_dtypes():
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D, but they are 0D and 1D"):
        mg.matmul(mg.tensor(1.0), mg.ones(3))
    with pytest.raises(RuntimeError, match="same dtype, but got: float32 != float64"):
        mg.ones(2, 3) @ mg.ones(3, dtype=mg.float64)


# ----------------------------------------------------------------------------- linear
LINEAR_SHAPES = [((3,), (2, 3), False), ((3,), (2, 3), True), ((4, 3), (2, 3), False), ((4, 3), (2, 3), True),
                 ((2, 4, 3), (5, 3), False), ((2, 4, 3), (5, 3), True),
                 ((4, 3), (3,), False)]  # a 1-D weight: one output feature, removed (PyTorch: without bias only)


@pytest.mark.parametrize("x_shape, w_shape, bias", LINEAR_SHAPES, ids=str)
def test_linear_gradcheck_and_mirror(x_shape, w_shape, bias, rng):
    x, w, b = normal(rng, x_shape, w_shape, w_shape[:1])
    args = (x, w, b) if bias else (x, w)
    check_grad(lambda *t: F.linear(*t), *args)
    assert_mirror(*run_both(lambda lib, *t: lib.nn.functional.linear(*t)), *args)


def test_linear_bias_broadcasts_to_the_output(rng):
    x, w, b = normal(rng, (4, 3), (5, 3), (4, 5))
    assert_mirror(*run_both(lambda lib, *t: lib.nn.functional.linear(*t)), x, w, b)
    x, w, b = normal(rng, (2, 4, 3), (5, 3), (4, 1))  # PyTorch refuses this one (it folds x to (8, 3) first)
    check_grad(lambda *t: F.linear(*t), x, w, b)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(12x4 and 5x3\)"):
        F.linear(mg.ones(2, 6, 4), mg.ones(3, 5))
    with pytest.raises(RuntimeError, match=r"bias of shape \[2\] does not broadcast to the output shape \[2, 3\]"):
        F.linear(mg.ones(2, 4), mg.ones(3, 4), mg.ones(2))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(mg.ones(2, 4), mg.ones(3, 4, dtype=mg.float64))


# ----------------------------------------------------------------------------- embedding
def embedding(lib, weight, indices, padding_idx=None):
    return lib.nn.functional.embedding(indices, weight, padding_idx=padding_idx)


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("index_shape", [(7,), (2, 5), ()])
def test_embedding_with_repeated_indices_and_padding_idx(index_shape, padding_idx, rng):
    weight = rng.standard_normal((6, 3))
    indices = rng.integers(0, 6, index_shape)
    if indices.ndim:
        indices.flat[:3] = [2, 2, 5]  # repeated indices accumulate; 2 and 5 (= -1) are the padding rows
    if padding_idx is None:  # the padding row's gradient is zero by definition, not by differentiation
        check_grad(lambda w: F.embedding(mg.tensor(indices), w), weight)
    out = assert_mirror(*run_both(embedding), weight, indices, padding_idx)
    np.testing.assert_array_equal(out.detach().numpy(), weight[indices])  # padding rows are looked up, not zeroed


def test_embedding_gradient_counts_repeats_and_skips_the_padding_row():
    weight = mg.zeros(4, 2, requires_grad=True)
    out = F.embedding(mg.tensor([[1, 1, 3], [1, 0, 0]]), weight, padding_idx=0)
    out.backward(mg.ones(2, 3, 2))
    np.testing.assert_array_equal(weight.grad.numpy(), [[0, 0], [3, 3], [0, 0], [1, 1]])


def test_embedding_accepts_int32_indices(rng):
    weight = rng.standard_normal((5, 2))
    out = F.embedding(mg.tensor(np.array([4, 0], dtype=np.int32)), mg.tensor(weight))
    np.testing.assert_array_equal(out.detach().numpy(), weight[[4, 0]])


def test_embedding_errors():
    weight = mg.ones(5, 3)
    for bad in ([5], [-1]):
        with pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(mg.tensor(bad), weight)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        F.embedding(mg.tensor([1.0]), weight)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(mg.tensor([1]), mg.ones(5))
    for bad in (5, -6):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            F.embedding(mg.tensor([1]), weight, padding_idx=bad)
