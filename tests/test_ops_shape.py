"""Shape and indexing ops: float64 gradchecks and PyTorch mirrors for every op, hypothesis sweeps over
permutations and index arrays (repeated indices accumulate), split/chunk views, cat/stack dtype promotion,
and PyTorch's errors.

Each op is written once as ``f(lib, *tensors)`` and run with minigrad and with torch.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg

from .mirror import assert_mirror, check_grad, run_both, torch_or_replay, torch_or_skip, torch_raises
from .strategies import check_on_views, float64_arrays, noncontiguous_arrays, shapes


def mirror_and_gradcheck(f, *arrays):
    assert_mirror(*run_both(f), *arrays)
    check_grad(lambda *t: f(mg, *t), *arrays)


def rejoined(lib, pieces, dim):
    """The pieces of a split in reverse order, each scaled differently: every piece's gradient is checked."""
    return lib.cat([p * (i + 1) for i, p in enumerate(reversed(pieces))], dim)


# name -> (f(lib, x), shape of x)
SINGLE_INPUT = {
    "reshape": (lambda m, x: m.reshape(x, (4, -1)), (2, 3, 4)),
    "reshape_sizes": (lambda m, x: x.reshape(3, 2, 2, 2), (2, 3, 4)),
    "view": (lambda m, x: x.view(-1), (2, 3, 4)),
    "view_as": (lambda m, x: x.view_as(x.T), (3, 4)),
    "flatten": (lambda m, x: m.flatten(x), (2, 3, 4)),
    "flatten_range": (lambda m, x: x.flatten(1, -1), (2, 3, 4)),
    "flatten_0d": (lambda m, x: x.flatten(), ()),
    "squeeze_all": (lambda m, x: m.squeeze(x), (2, 1, 3, 1)),
    "squeeze_dim": (lambda m, x: x.squeeze(-1), (2, 1, 3, 1)),
    "squeeze_dims": (lambda m, x: x.squeeze((1, 2, 3)), (2, 1, 3, 1)),
    "squeeze_0d": (lambda m, x: x.squeeze(0), ()),
    "unsqueeze": (lambda m, x: m.unsqueeze(x, 1), (2, 3)),
    "unsqueeze_last": (lambda m, x: x.unsqueeze(-1), (2, 3)),
    "unsqueeze_0d": (lambda m, x: x.unsqueeze(0), ()),
    "permute": (lambda m, x: m.permute(x, (2, 0, 1)), (2, 3, 4)),
    "permute_varargs": (lambda m, x: x.permute(1, -1, 0), (2, 3, 4)),
    "transpose": (lambda m, x: m.transpose(x, 0, -1), (2, 3, 4)),
    "T": (lambda m, x: x.T, (2, 3)),
    "mT": (lambda m, x: x.mT, (2, 3, 4)),
    "expand": (lambda m, x: x.expand(2, 3, 4), (3, 1)),
    "expand_minus_one": (lambda m, x: x.expand(-1, 5), (3, 1)),
    "expand_as": (lambda m, x: x.expand_as(m.ones(2, 3, 4, dtype=m.float64)), (1, 4)),
    "contiguous": (lambda m, x: x.T.contiguous() * 1.0, (2, 3)),
    "repeat": (lambda m, x: x.repeat(2, 1, 3), (2, 3)),
    "repeat_same_dims": (lambda m, x: x.repeat((1, 2)), (2, 3)),
    "repeat_zero": (lambda m, x: x.repeat(0, 2), (2, 3)),
    "repeat_0d": (lambda m, x: x.repeat(2, 3), ()),
    "tril": (lambda m, x: m.tril(x), (3, 4)),
    "tril_diagonal": (lambda m, x: x.tril(-1), (2, 4, 3)),
    "triu": (lambda m, x: m.triu(x, 1), (2, 3, 4)),
    "triu_negative": (lambda m, x: x.triu(-2), (4, 3)),
    "triu_beyond": (lambda m, x: m.triu(x, 5), (3, 3)),
    "index_int": (lambda m, x: x[1], (2, 3, 4)),
    "index_slices": (lambda m, x: x[:, 1:, ::2], (2, 3, 4)),
    "index_none_ellipsis": (lambda m, x: x[None, ..., 1:3, None], (2, 3, 4)),
    "index_negative": (lambda m, x: x[-1, -2:], (2, 3, 4)),
    "index_int_array_repeats": (lambda m, x: x[[0, 2, 0, 0]], (3, 4)),
    "index_tensor_repeats": (lambda m, x: x[:, m.tensor([[1, 1], [3, 0]])], (3, 4)),
    "index_two_arrays": (lambda m, x: x[[0, 0, 2], [1, 1, 1]], (3, 4)),
    "index_bool_mask": (lambda m, x: x[x > 0.2], (3, 4)),
    "index_bool_rows": (lambda m, x: x[m.tensor([True, False, True])], (3, 4)),
    "index_bool_list": (lambda m, x: x[:, [True, False, True, True]], (3, 4)),
    "index_int_then_array": (lambda m, x: x[0, :, [1, 1, 3]], (2, 3, 4)),  # PyTorch: ints are not advanced
    "index_array_slice_int": (lambda m, x: x[[1, 0, 1], 1:, 2], (2, 3, 4)),
    "index_arrays_split_by_slice": (lambda m, x: x[[1, 0], :, [3, 3]], (2, 3, 4)),
    "index_0d_tensor_is_an_int": (lambda m, x: x[m.tensor(1), :, m.tensor([0, 0, 2])], (2, 3, 4)),
    "split_size": (lambda m, x: rejoined(m, m.split(x, 2, 1), 1), (2, 5)),
    "split_sections": (lambda m, x: rejoined(m, x.split([1, 0, 3], -1), -1), (3, 4)),
    "split_whole": (lambda m, x: rejoined(m, x.split(7), 0), (3, 4)),
    "chunk": (lambda m, x: rejoined(m, m.chunk(x, 3, -1), -1), (2, 5)),
    "chunk_fewer": (lambda m, x: rejoined(m, x.chunk(4, 0), 0), (6, 2)),
}

# name -> (f(lib, *xs), shapes of xs)
MULTI_INPUT = {
    "cat": (lambda m, a, b, c: m.cat([a, b, c], 1), [(2, 1, 3), (2, 4, 3), (2, 2, 3)]),
    "cat_tuple_negative_dim": (lambda m, a, b: m.cat((a, b), -1), [(2, 3), (2, 1)]),
    "cat_reused": (lambda m, a, b: m.cat([a, b, a], 0), [(1, 3), (2, 3)]),
    "cat_legacy_empty": (lambda m, a, b: m.cat([a, b[:0], a], 1), [(2, 3), (4,)]),
    "stack": (lambda m, a, b: m.stack([a, b]), [(2, 3), (2, 3)]),
    "stack_last": (lambda m, a, b, c: m.stack((a, b, c), -1), [(2, 3), (2, 3), (2, 3)]),
    "stack_0d": (lambda m, a, b: m.stack([a, b, a], 0), [(), ()]),
}


@pytest.mark.parametrize("name", SINGLE_INPUT)
def test_single_input_op_gradcheck_and_mirror(name, rng):
    f, shape = SINGLE_INPUT[name]
    mirror_and_gradcheck(f, rng.standard_normal(shape))


@pytest.mark.parametrize("name", MULTI_INPUT)
def test_multi_input_op_gradcheck_and_mirror(name, rng):
    f, input_shapes = MULTI_INPUT[name]
    mirror_and_gradcheck(f, *(rng.standard_normal(s) for s in input_shapes))


@pytest.mark.parametrize("name", ["permute", "transpose", "index_int_array_repeats", "index_bool_mask",
                                  "index_int_then_array", "repeat", "triu", "split_size", "flatten_range"])
@given(data=st.data())
def test_single_input_op_on_noncontiguous_views(name, data):
    f, shape = SINGLE_INPUT[name]
    check_on_views(lambda t: f(mg, t), data.draw(noncontiguous_arrays(shape)))


@given(data=st.data())
def test_cat_of_noncontiguous_views(data):
    a = data.draw(noncontiguous_arrays((2, 3)))
    b = data.draw(noncontiguous_arrays((2, 2)))
    check_on_views(lambda x, y: mg.cat([y, x, y], 1), a, b)


# ----------------------------------------------------------------------------- hypothesis sweeps
@given(data=st.data())
def test_permute_and_transpose_over_random_shapes(data):
    shape = data.draw(shapes(min_dims=1))
    x = data.draw(float64_arrays(shape))
    order = data.draw(st.permutations(range(len(shape))))
    d0, d1 = (data.draw(st.integers(-len(shape), len(shape) - 1)) for _ in range(2))
    mirror_and_gradcheck(lambda m, t: m.permute(t, tuple(order)) * 1.0, x)
    mirror_and_gradcheck(lambda m, t: t.transpose(d0, d1) * 1.0, x)


@given(data=st.data())
def test_reshape_flatten_and_unsqueeze_over_random_shapes(data):
    shape = data.draw(shapes())
    x = data.draw(float64_arrays(shape))
    rank = max(len(shape), 1)
    start = data.draw(st.integers(-rank, rank - 1))
    end = data.draw(st.integers(start % rank, rank - 1))
    position = data.draw(st.integers(-len(shape) - 1, len(shape)))
    mirror_and_gradcheck(lambda m, t: t.flatten(start, end).reshape(-1, 1) * 1.0, x)
    mirror_and_gradcheck(lambda m, t: m.unsqueeze(t, position).squeeze() * 1.0, x)


@given(data=st.data())
def test_integer_array_indexing_accumulates_repeated_indices(data):
    shape = data.draw(shapes(min_dims=1))
    x = data.draw(float64_arrays(shape))
    dim = data.draw(st.integers(0, len(shape) - 1))
    picks = np.asarray(data.draw(st.lists(st.integers(-shape[dim], shape[dim] - 1), min_size=1, max_size=6)))
    key = (slice(None),) * dim + (picks,)
    mirror_and_gradcheck(lambda m, t: t[tuple(m.tensor(k) if isinstance(k, np.ndarray) else k for k in key)], x)
    # the gradient of x along dim is the sum of the upstream rows picked for each index
    leaf = mg.tensor(x, requires_grad=True)
    upstream = np.random.default_rng(0).standard_normal(leaf[key].shape)
    leaf[key].backward(mg.tensor(upstream))
    expected = np.zeros_like(x)
    np.add.at(expected, key, upstream)
    np.testing.assert_array_equal(leaf.grad.numpy(), expected)


@given(data=st.data())
def test_boolean_mask_indexing_over_random_masks(data):
    shape = data.draw(shapes(min_dims=1))
    x = data.draw(float64_arrays(shape))
    mask_dims = data.draw(st.integers(1, len(shape)))
    seed = data.draw(st.integers(0, 2**32 - 1))
    mask = np.random.default_rng(seed).random(shape[:mask_dims]) > 0.5
    mirror_and_gradcheck(lambda m, t: t[m.tensor(mask)], x)


# ----------------------------------------------------------------------------- split and chunk
SPLITS = [
    lambda m, x: m.split(x, 2, 1), lambda m, x: x.split(3, -1), lambda m, x: x.split([2, 0, 3], 1),
    lambda m, x: x.split(10), lambda m, x: m.chunk(x, 2, 1), lambda m, x: x.chunk(4, -1),
    lambda m, x: x.chunk(6, 1), lambda m, x: x[:, :0].chunk(3, 1), lambda m, x: x[:, :0].split(0, 1),
    lambda m, x: x[:, :0].split(2, 1), lambda m, x: x.chunk(1),
]


@pytest.mark.parametrize("case", range(len(SPLITS)))
def test_split_and_chunk_give_pytorchs_pieces_as_views(case, rng):
    torch = torch_or_skip()
    f = SPLITS[case]
    x = rng.standard_normal((2, 5))
    pieces, expected = f(mg, mg.tensor(x)), f(torch, torch.tensor(x))
    assert isinstance(pieces, tuple) and len(pieces) == len(expected)
    for got, want in zip(pieces, expected):
        np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
    source = mg.tensor(x)
    assert all(np.shares_memory(p._data, source._data) for p in f(mg, source) if p._data.size)


# ----------------------------------------------------------------------------- dtypes
PROMOTIONS = [("float32", "float64"), ("int64", "float32"), ("float16", "float32"), ("bool", "int64"),
              ("int64", "float16"), ("bool", "float32"), ("int32", "int64")]


@pytest.mark.parametrize("dtypes", PROMOTIONS, ids="-".join)
@pytest.mark.parametrize("op", ["cat", "stack"])
def test_cat_and_stack_promote_dtypes_like_pytorch(op, dtypes):
    torch = torch_or_skip()
    arrays = [np.array([[1, 0, 2]], dtype=d) for d in dtypes + dtypes[:1]]
    got = getattr(mg, op)([mg.tensor(a) for a in arrays])
    expected = getattr(torch, op)([torch.tensor(a) for a in arrays])
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.detach().numpy(), expected.numpy())


def test_cat_gradients_come_back_in_each_inputs_dtype(rng):
    a = mg.tensor(rng.standard_normal((2, 2)).astype(np.float32), requires_grad=True)
    b = mg.tensor(rng.standard_normal((1, 2)), requires_grad=True)
    c = mg.tensor(rng.standard_normal((1, 2)).astype(np.float16), requires_grad=True)
    out = mg.cat([a, b, c])
    assert out.dtype == mg.float64
    out.backward(mg.tensor(rng.standard_normal((4, 2))))
    assert (a.grad.dtype, b.grad.dtype, c.grad.dtype) == (mg.float32, mg.float64, mg.float16)


def test_shape_ops_work_on_integer_and_bool_tensors():
    torch = torch_or_replay()
    x = np.arange(12).reshape(3, 4)
    for f in [lambda m, t: m.tril(t), lambda m, t: m.triu(t > 4, 1), lambda m, t: t.repeat(2, 1),
              lambda m, t: t[[0, 0], 1:], lambda m, t: m.stack([t, t], 1), lambda m, t: t.T.reshape(2, 6)]:
        assert_mirror(*run_both(f), x, grads=[False])


# ----------------------------------------------------------------------------- errors
BAD_DIMS = {
    "squeeze": lambda x: x.squeeze(2), "unsqueeze": lambda x: x.unsqueeze(3), "transpose": lambda x: x.transpose(0, 2),
    "flatten": lambda x: x.flatten(2), "permute": lambda x: x.permute(0, 2), "cat": lambda x: mg.cat([x, x], 2),
    "cat_negative": lambda x: mg.cat([x, x], -3), "stack": lambda x: mg.stack([x, x], -4),
    "split": lambda x: x.split(1, 2), "chunk": lambda x: x.chunk(2, -3),
}


@pytest.mark.parametrize("name", BAD_DIMS)
def test_dimension_out_of_range_is_an_index_error(name):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-\d, \d\], "
                                         r"but got -?\d\)"):
        BAD_DIMS[name](mg.zeros(2, 3))


ERRORS = [  # (f(lib, x) on a (2, 3) tensor, exception, message pattern)
    (lambda m, x: x[:, ::-1], ValueError, "step must be greater than zero"),
    (lambda m, x: x[::-2], ValueError, "step must be greater than zero"),
    (lambda m, x: x[:, 3], IndexError, "index 3 is out of bounds for dimension 1 with size 3"),
    (lambda m, x: x[m.tensor([True, False, True])], IndexError, "boolean index did not match"),
    (lambda m, x: x.reshape(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda m, x: x.reshape(4, -1), RuntimeError, r"shape '\[4, -1\]' is invalid for input of size 6"),
    (lambda m, x: x.view(5), RuntimeError, r"shape '\[5\]' is invalid for input of size 6"),
    (lambda m, x: x.reshape(-2, 3), RuntimeError, r"invalid shape dimension -2 at index 0 of shape \[-2, 3\]"),
    (lambda m, x: x[:0].reshape(0, -1), RuntimeError, "cannot reshape tensor of 0 elements into shape"),
    (lambda m, x: x.reshape(2.0, 3), TypeError, "cannot be interpreted as an integer"),
    (lambda m, x: x.expand(2), RuntimeError, r"the number of sizes provided \(1\) must be greater or equal"),
    (lambda m, x: x.expand(3, 3), RuntimeError, r"The expanded size of the tensor \(3\) must match the existing "
                                                r"size \(2\) at non-singleton dimension 0"),
    (lambda m, x: x.expand(-1, 2, 3), RuntimeError, r"The expanded size of the tensor \(-1\) isn't allowed in a "
                                                    r"leading, non-existing dimension 0"),
    (lambda m, x: x.permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda m, x: x.permute(0, 1, 2), RuntimeError, "number of dimensions in the tensor input does not match"),
    (lambda m, x: x.flatten(1, 0), RuntimeError, "flatten\\(\\) has invalid args: start_dim cannot come after end_dim"),
    (lambda m, x: x.repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be smaller"),
    (lambda m, x: x.repeat(-1, 1), RuntimeError, r"Trying to create tensor with negative dimension -2: \[-2, 3\]"),
    (lambda m, x: m.cat([]), ValueError, r"torch.cat\(\): expected a non-empty list of Tensors"),
    (lambda m, x: m.cat(x), TypeError, "must be tuple of Tensors, not Tensor"),
    (lambda m, x: m.cat([x, x[:, :2]]), RuntimeError, "Sizes of tensors must match except in dimension 0. Expected "
                                                      "size 3 but got size 2 for tensor number 1 in the list."),
    (lambda m, x: m.cat([x, x, x[0]], 1), RuntimeError, "Tensors must have same number of dimensions: got 2 and 1"),
    (lambda m, x: m.cat([x[0, 0], x[0, 1]]), RuntimeError, r"zero-dimensional tensor \(at position 0\) cannot be "
                                                           r"concatenated"),
    (lambda m, x: m.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda m, x: m.stack([x, x[:, :2]]), RuntimeError, r"stack expects each tensor to be equal size, but got "
                                                        r"\[2, 3\] at entry 0 and \[2, 2\] at entry 1"),
    (lambda m, x: x.split([1, 2]), RuntimeError,
     r"split_with_sizes expects split_sizes to sum exactly to 2 \(input tensor's size at dimension 0\), but got "
     r"split_sizes=\[1, 2\]"),
    (lambda m, x: x.split([3, -1]), RuntimeError, r"split_with_sizes expects split_sizes have only non-negative"),
    (lambda m, x: x.split(-1), RuntimeError, "split expects split_size be non-negative, but got split_size=-1"),
    (lambda m, x: x.split(0), RuntimeError, "split_size can only be 0 if dimension size is 0"),
    (lambda m, x: x[0, 0].split(1), RuntimeError, "split expects at least a 1-dimensional tensor"),
    (lambda m, x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda m, x: x[0, 0].chunk(1), RuntimeError, "chunk expects at least a 1-dimensional tensor"),
    (lambda m, x: m.tril(x[0]), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda m, x: x[0].triu(), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_pytorch(case):
    """minigrad raises PyTorch's exception type with PyTorch's message; torch itself is checked to agree."""
    f, error, pattern = ERRORS[case]
    with pytest.raises(error, match=pattern):
        f(mg, mg.zeros(2, 3))
    assert issubclass(torch_raises(lambda torch: f(torch, torch.zeros(2, 3))).type, error)
