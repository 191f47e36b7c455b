"""``x[index] = value`` with values PyTorch reshapes or casts before writing: a value's leading 1s are dropped
(``x[0] = tensor([5.])`` writes one element), and a one-element value written through an index whose only advanced
part is one boolean mask is a masked fill, which casts it (``long_tensor[mask] = tensor([[5.]])``); every other
advanced index requires the value's dtype to be the tensor's."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

MASK = [True, False]


@pytest.mark.parametrize("value", [[5.0], [[5.0]], [[[5.0]]]])
def test_a_value_with_leading_ones_fills_one_element(value):
    y = mg.tensor([1.0, 2.0])
    y[0] = mg.tensor(value)
    np.testing.assert_array_equal(y.numpy(), [5.0, 2.0])


def test_a_row_with_a_leading_one_fills_a_slice_and_a_row():
    y = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    y[0] = mg.tensor([[5.0, 6.0]])
    y[1:2] = mg.tensor([[[7.0, 8.0]]])
    np.testing.assert_array_equal(y.numpy(), [[5.0, 6.0], [7.0, 8.0]])


def test_a_value_with_leading_ones_gets_its_gradient_in_its_own_shape():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    v = mg.tensor(rng.standard_normal((1, 1, 3)), requires_grad=True)
    g = rng.standard_normal((2, 3))
    y = x.clone()
    y[1] = v
    (y * mg.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [g[0], [0.0, 0.0, 0.0]], rtol=1e-15)
    np.testing.assert_allclose(v.grad.numpy(), g[1].reshape(1, 1, 3), rtol=1e-15)


def test_a_value_that_is_more_than_leading_ones_is_still_refused():
    y = mg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"value tensor of shape \[2\] cannot be broadcast"):
        y[0] = mg.tensor([[5.0, 6.0]])
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("index", [(mg.tensor(MASK),), (0, mg.tensor(MASK)), (slice(None), mg.tensor(MASK)),
                                   (Ellipsis, mg.tensor(MASK))])
@pytest.mark.parametrize("value", [[[7.0]], [7.5], 7.5])
def test_a_one_element_value_through_one_mask_is_cast_as_a_masked_fill(index, value):
    y = mg.tensor([[1, 2], [3, 4]])
    y[index if len(index) > 1 else index[0]] = mg.tensor(value)
    expected = np.array([[1, 2], [3, 4]])
    expected[tuple(np.asarray(i.numpy()) if isinstance(i, mg.Tensor) else i for i in index)] = 7
    np.testing.assert_array_equal(y.numpy(), expected)
    assert y.dtype == mg.int64


@pytest.mark.parametrize("index", [mg.tensor([True, True]), mg.tensor([0]), (mg.tensor([0]), mg.tensor(MASK))])
def test_other_advanced_indices_require_the_dtypes_to_match(index):
    y = mg.tensor([[1, 2], [3, 4]])
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        y[index] = mg.tensor([7.0, 8.0])
    np.testing.assert_array_equal(y.numpy(), [[1, 2], [3, 4]])


TARGETS = ["y[0]", "y[0:1]", "y[:]", "y[0, L.tensor([True, False])]", "y[:, L.tensor([True, False])]",
           "y[..., L.tensor([True, False])]", "y[L.tensor([[True, False], [False, True]])]",
           "y[L.tensor([0]), L.tensor([True, False])]", "y[None, L.tensor([True, False])]",
           "y[L.tensor([True, False]), 1]", "y[L.tensor([True, False]), None]", "y[[True, False]]",
           "y[L.tensor([1, 0]) > 0, :1]", "y[L.tensor([1])]"]
VALUES = ["L.tensor([[7.]])", "L.tensor([7])", "L.tensor(7.5)", "L.tensor([7., 8.])", "7.5",
          "L.tensor([[[7]]], dtype=L.uint8)", "L.tensor([[7., 8.]])"]


def _outcome(lib, target, value, dtype):
    """y's values after ``target = value``, or the exception's type."""
    y = lib.tensor([[1, 2], [3, 4]], dtype=getattr(lib, dtype))
    try:
        exec(f"{target} = {value}", {"L": lib, "y": y})
    except (RuntimeError, IndexError, TypeError) as e:
        return type(e).__name__
    return str(y.dtype).split(".")[-1], y.numpy().tolist()


@pytest.mark.parametrize("dtype", ["int64", "float32"])
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("target", TARGETS)
def test_values_written_as_pytorch_writes_them(target, value, dtype):
    torch = torch_or_skip()
    assert _outcome(mg, target, value, dtype) == _outcome(torch, target, value, dtype)
