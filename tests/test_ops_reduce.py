"""Reductions: float64 gradchecks and PyTorch mirrors over shapes x dims x keepdim, var/std corrections and
their legacy forms, who gets the gradient at ties and NaNs, stable logsumexp, all/any, errors.

Each reduction is written once as ``f(lib, x, dim, keepdim)`` and run with minigrad and with torch.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg

from .mirror import assert_mirror, check_grad, torch_or_replay, torch_or_skip
from .strategies import check_on_views, dims_and_keepdim, float64_arrays, noncontiguous_arrays, shapes


def all_dims(x, dim):
    """``dim``, or every dim when None (for ops whose ``dim`` may not be None in PyTorch)."""
    return tuple(range(x.ndim)) if dim is None else dim


def first_dim(dim):
    """An int dim for the ops that take one (max/min/argmax with ``dim``)."""
    return dim[0] if isinstance(dim, tuple) else dim


# name -> (f(lib, x, dim, keepdim), correction for var/std or None)
DIFFERENTIABLE = {
    "sum": (lambda m, x, d, k: m.sum(x, dim=d, keepdim=k), None),
    "mean": (lambda m, x, d, k: x.mean(dim=d, keepdim=k), None),
    "var": (lambda m, x, d, k: m.var(x, dim=d, keepdim=k), 1),
    "var_biased": (lambda m, x, d, k: m.var(x, dim=d, keepdim=k, correction=0), 0),
    "var_correction_2": (lambda m, x, d, k: x.var(dim=d, keepdim=k, correction=2), 2),
    "std": (lambda m, x, d, k: m.std(x, dim=d, keepdim=k), 1),
    "std_biased": (lambda m, x, d, k: x.std(dim=d, keepdim=k, correction=0), 0),
    "amax": (lambda m, x, d, k: m.amax(x, dim=all_dims(x, d), keepdim=k), None),
    "amin": (lambda m, x, d, k: x.amin(dim=all_dims(x, d), keepdim=k), None),
    "logsumexp": (lambda m, x, d, k: m.logsumexp(x * 3, dim=all_dims(x, d), keepdim=k), None),
    "max": (lambda m, x, d, k: m.max(x) if d is None else m.max(x, first_dim(d), k).values, None),
    "min": (lambda m, x, d, k: x.min() if d is None else x.min(first_dim(d), keepdim=k).values, None),
}

NOT_DIFFERENTIABLE = {  # forward only: integer or bool results
    "argmax": lambda m, x, d, k: m.argmax(x, dim=first_dim(d), keepdim=k),
    "argmin": lambda m, x, d, k: x.argmin(first_dim(d), k),
    "max_indices": lambda m, x, d, k: m.max(x, first_dim(d) or 0, k).indices,
    "min_indices": lambda m, x, d, k: m.min(x, first_dim(d) or 0, k).indices,
    "all": lambda m, x, d, k: m.all(x > 0, dim=d, keepdim=k),
    "any": lambda m, x, d, k: (x > 0.5).any(dim=d, keepdim=k),
}


def _reduced_count(shape, dim):
    axes = range(len(shape)) if dim is None else (dim if isinstance(dim, tuple) else (dim,))
    return int(np.prod([shape[a] for a in axes])) if shape else 1


def both(f, dim, keepdim):
    torch = torch_or_skip()
    return (lambda x: f(mg, x, dim, keepdim)), (lambda x: f(torch, x, dim, keepdim))


# ----------------------------------------------------------------------------- sweeps
@pytest.mark.parametrize("name", DIFFERENTIABLE)
@pytest.mark.filterwarnings(r"ignore:(var|std)\(\). degrees of freedom")
@given(data=st.data())
def test_reduction_gradcheck_and_mirror_over_dims_and_keepdim(name, data):
    f, correction = DIFFERENTIABLE[name]
    shape = data.draw(shapes())
    x = data.draw(float64_arrays(shape))
    dim, keepdim = data.draw(dims_and_keepdim(shape))
    assert_mirror(*both(f, dim, keepdim), x)  # includes N <= correction (nan/inf, as PyTorch)
    if correction is None or _reduced_count(shape, dim) > correction:
        check_grad(lambda t: f(mg, t, dim, keepdim), x)


@pytest.mark.parametrize("name", NOT_DIFFERENTIABLE)
@given(data=st.data())
def test_integer_and_bool_reductions_mirror_over_dims_and_keepdim(name, data):
    f = NOT_DIFFERENTIABLE[name]
    shape = data.draw(shapes())
    x = np.asarray(np.round(data.draw(float64_arrays(shape)), 1))  # rounding makes ties: the first index wins
    dim, keepdim = data.draw(dims_and_keepdim(shape))
    out = assert_mirror(*both(f, dim, keepdim), x, grads=[False])
    assert not out.requires_grad


@pytest.mark.parametrize("name", ["sum", "var", "std_biased", "amax", "logsumexp", "max"])
@given(data=st.data())
def test_reduction_on_noncontiguous_views(name, data):
    f, _ = DIFFERENTIABLE[name]
    shape = data.draw(shapes(min_dims=1, min_side=2))
    dim, keepdim = data.draw(dims_and_keepdim(shape))
    check_on_views(lambda t: f(mg, t, dim, keepdim), data.draw(noncontiguous_arrays(shape)))


# ----------------------------------------------------------------------------- var and std
VARIANCE_FORMS = [  # (f(lib, x), description)
    lambda m, x: m.var(x, 1, False, True),    # legacy positional (input, dim, unbiased, keepdim)
    lambda m, x: m.var(x, False),             # legacy (input, unbiased)
    lambda m, x: x.var(True),
    lambda m, x: x.std(0, True),
    lambda m, x: m.std(x, (0, 1), unbiased=False),
    lambda m, x: m.var(x, dim=-1, correction=2.5),
    lambda m, x: x.std(dim=(1, 0), keepdim=True, correction=0),
    lambda m, x: m.var(x, None, keepdim=True),
]


@pytest.mark.parametrize("form", range(len(VARIANCE_FORMS)))
def test_var_and_std_argument_forms_match_pytorch(form, rng):
    torch = torch_or_replay()
    f = VARIANCE_FORMS[form]
    x = rng.standard_normal((3, 4))
    assert_mirror(lambda t: f(mg, t), lambda t: f(torch, t), x)
    check_grad(lambda t: f(mg, t), x)


def test_var_and_std_of_large_mean_data_use_two_passes(rng):
    x = 1e4 + rng.standard_normal((4, 5))  # E[x^2] - E[x]^2 would be off by ~1e-8 here
    assert_mirror(*both(DIFFERENTIABLE["var"][0], 1, False), x)
    assert_mirror(*both(DIFFERENTIABLE["std"][0], 1, False), x)


NO_DEGREES_OF_FREEDOM = [  # (f(lib, x), data) with N - correction <= 0: inf or nan, and PyTorch's gradients
    (lambda m, x: m.var(x), [2.0]),
    (lambda m, x: m.std(x), [2.0]),
    (lambda m, x: m.var(x, 0), [2.0]),
    (lambda m, x: m.var(x, correction=3), [2.0, 3.0]),
    (lambda m, x: m.var(x, correction=2), [2.0, 2.0]),
    (lambda m, x: m.var(x, 0, correction=3), [2.0, 3.0]),
    (lambda m, x: m.var(x, 0, correction=2), [2.0, 3.0]),
    (lambda m, x: m.var(x, 0, correction=2), [2.0, 2.0]),
    (lambda m, x: m.std(x, 0, correction=2), [2.0, 3.0]),
]


@pytest.mark.parametrize("case", range(len(NO_DEGREES_OF_FREEDOM)))
@pytest.mark.filterwarnings(r"ignore:(var|std)\(\). degrees of freedom")
def test_var_with_no_degrees_of_freedom_matches_pytorch_and_warns(case):
    torch = torch_or_replay()
    f, data = NO_DEGREES_OF_FREEDOM[case]
    x = np.array(data)
    with pytest.warns(UserWarning, match=r"(var|std)\(\): degrees of freedom is <= 0"):
        f(mg, mg.tensor(x))
    assert_mirror(lambda t: f(mg, t), lambda t: f(torch, t), x)


def test_std_gradient_is_zero_where_std_is_zero():
    x = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    out = assert_mirror(*both(DIFFERENTIABLE["std"][0], 1, False), x)
    assert out.detach().numpy()[0] == 0


def test_var_over_empty_dim_tuple_reduces_everything_with_the_right_gradient(rng):
    # PyTorch's forward agrees; its backward (2.13) divides by N - 1 with N = 1 here and returns inf
    x = rng.standard_normal((3, 4))
    np.testing.assert_allclose(mg.var(mg.tensor(x), ()).item(), np.var(x, ddof=1), rtol=1e-12)
    check_grad(lambda t: mg.var(t, ()), x)
    check_grad(lambda t: t.std((), correction=0), x)


def test_var_argument_errors():
    x = mg.ones(2, 3)
    with pytest.raises(TypeError, match="either unbiased or correction"):
        mg.var(x, 0, unbiased=True, correction=1)
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        mg.std(mg.tensor([1, 2, 3]))


# ----------------------------------------------------------------------------- ties and NaNs
TIES = np.array([[1.0, 3.0, 3.0, 2.0], [2.0, 2.0, 2.0, 2.0], [0.0, 5.0, -1.0, 5.0]])
NANS = np.array([[1.0, np.nan, 3.0, np.nan], [3.0, 3.0, 1.0, 1.0], [np.nan, 1.0, 2.0, 3.0]])
TIE_OPS = {  # who gets the gradient at ties
    "max_all": lambda m, x: m.max(x),                           # shared evenly over the whole tensor
    "min_all": lambda m, x: m.min(x),
    "amax_rows": lambda m, x: m.amax(x, 1),                     # shared evenly within each row
    "amin_cols": lambda m, x: m.amin(x, 0, keepdim=True),
    "amax_all": lambda m, x: x.amax(),
    "max_dim": lambda m, x: m.max(x, 1).values,                 # all to the returned (first) index
    "min_dim": lambda m, x: x.min(0, keepdim=True).values,
    "max_dim_indices": lambda m, x: m.max(x, 1).indices,
    "argmax": lambda m, x: m.argmax(x, 1),
    "argmin_flat": lambda m, x: m.argmin(x),
}


@pytest.mark.parametrize("name", TIE_OPS)
@pytest.mark.parametrize("data", [TIES, NANS], ids=["ties", "nans"])
def test_ties_and_nans_route_the_gradient_like_pytorch(name, data):
    torch = torch_or_replay()
    f = TIE_OPS[name]
    assert_mirror(lambda t: f(mg, t), lambda t: f(torch, t), data, grads=[f(mg, mg.tensor(data)).dtype.kind == "f"])


def test_max_without_dim_splits_ties_evenly():
    x = mg.tensor(TIES, requires_grad=True)
    x.max().backward(mg.tensor(6.0, dtype=mg.float64))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(TIES == 5.0, 3.0, 0.0))


def test_max_and_min_with_dim_return_named_values_and_indices(rng):
    x = mg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    result = mg.max(x, 1, keepdim=True)
    values, indices = result
    assert type(result).__name__ == "max" and result.values is values and result[1] is indices
    assert values.shape == indices.shape == (2, 1, 4)
    assert indices.dtype == mg.int64 and not indices.requires_grad and values.requires_grad
    np.testing.assert_array_equal(np.take_along_axis(x.detach().numpy(), indices.detach().numpy(), 1), values.detach().numpy())
    assert type(x.min(-1)).__name__ == "min" and x.min(-1).indices.shape == (2, 3)


def test_max_and_min_of_a_0d_tensor_along_its_only_dim():
    torch = torch_or_replay()
    for keepdim in (False, True):
        for op in ("max", "min"):
            f = lambda m, t: getattr(m, op)(t, 0, keepdim)  # noqa: E731
            assert_mirror(lambda t: f(mg, t).values, lambda t: f(torch, t).values, np.array(1.5))
            assert f(mg, mg.tensor(1.5)).indices.shape == ()
    assert mg.argmax(mg.tensor(2.0), 0).item() == 0 and mg.argmax(mg.tensor(2.0)).shape == ()


def test_max_and_min_with_a_tensor_are_maximum_and_minimum(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    torch = torch_or_replay()
    assert_mirror(lambda x, y: mg.max(x, y), lambda x, y: torch.max(x, y), a, b)
    assert_mirror(lambda x, y: x.min(y), lambda x, y: x.min(y), a, b)


def test_argmax_keepdim_without_dim_keeps_every_dim_as_one(rng):
    x = np.round(rng.standard_normal((2, 3, 4)))
    out = assert_mirror(lambda t: mg.argmax(t, keepdim=True), lambda t: torch_or_skip().argmax(t, keepdim=True), x,
                        grads=[False])
    assert out.shape == (1, 1, 1) and out.dtype == mg.int64


# ----------------------------------------------------------------------------- logsumexp
@pytest.mark.parametrize("rows", [
    [[1000.0, 1000.0, -1000.0], [-1000.0, -1001.0, -1002.0]],   # would overflow / underflow without the max
    [[-np.inf, -np.inf, -np.inf], [1.0, -np.inf, 0.5]],         # an all -inf row gives -inf (and a NaN gradient)
    [[np.inf, 1.0, 0.0], [np.inf, np.inf, -np.inf]],
])
def test_logsumexp_is_stable_and_handles_infinities_like_pytorch(rows):
    out = assert_mirror(*both(lambda m, x, d, k: m.logsumexp(x, d, k), 1, False), np.array(rows))
    assert not np.isnan(out.detach().numpy()).any()


def test_logsumexp_of_integers_gives_the_default_float_dtype():
    torch = torch_or_skip()
    out = mg.logsumexp(mg.tensor([[1, 2], [3, 4]]), 1)
    assert out.dtype == mg.float32
    np.testing.assert_allclose(out.detach().numpy(), torch.logsumexp(torch.tensor([[1, 2], [3, 4]]), 1).numpy(), rtol=1e-6)


def test_logsumexp_over_an_empty_dim_is_minus_infinity():
    out = mg.logsumexp(mg.zeros(0, 3), 0)
    np.testing.assert_array_equal(out.detach().numpy(), [-np.inf] * 3)


# ----------------------------------------------------------------------------- all / any
@pytest.mark.parametrize("f", [lambda m, x: m.all(x), lambda m, x: m.any(x, 1), lambda m, x: x.all(dim=(0, 2)),
                               lambda m, x: x.any(-1, keepdim=True), lambda m, x: m.all(x, ()),
                               lambda m, x: m.all(x.bool(), 0), lambda m, x: m.any(x.long(), 2),
                               lambda m, x: m.all(x[:, :0], 1), lambda m, x: m.any(x[:, :0], 1)])
def test_all_and_any_match_pytorch(f, rng):
    torch = torch_or_replay()
    x = np.round(rng.random((2, 3, 4)) * 1.2)  # mostly ones, some zeros
    out = assert_mirror(lambda t: f(mg, t), lambda t: f(torch, t), x, grads=[False])
    assert out.dtype == mg.bool


# ----------------------------------------------------------------------------- dtypes and errors
@pytest.mark.parametrize("name", ["var", "std", "amax", "logsumexp", "max", "mean"])
@pytest.mark.parametrize("dtype", [mg.float32, mg.float16])
def test_reduction_gradients_keep_the_input_dtype(name, dtype, rng):
    f, _ = DIFFERENTIABLE[name]
    x = mg.tensor(rng.standard_normal((3, 4)).astype(dtype), requires_grad=True)
    out = f(mg, x, 1, False)
    assert out.dtype == dtype
    out.backward(mg.tensor(rng.standard_normal(out.shape).astype(dtype)))
    assert x.grad.dtype == dtype


BAD_DIM_CALLS = {
    "sum": lambda x: x.sum(3), "mean": lambda x: x.mean((0, -4)), "var": lambda x: x.var(3),
    "std": lambda x: mg.std(x, -4), "max": lambda x: x.max(3), "min": lambda x: mg.min(x, -4),
    "amax": lambda x: x.amax(3), "amin": lambda x: mg.amin(x, (0, 3)), "argmax": lambda x: x.argmax(3),
    "argmin": lambda x: mg.argmin(x, -4), "logsumexp": lambda x: x.logsumexp(3), "all": lambda x: x.all(3),
    "any": lambda x: mg.any(x, (1, 3)), "0-d": lambda x: x.sum()[None][0].sum(1),
}


@pytest.mark.parametrize("name", BAD_DIM_CALLS)
def test_dimension_out_of_range_is_an_index_error(name):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-\d, \d\], "
                                         r"but got -?\d\)"):
        BAD_DIM_CALLS[name](mg.ones(2, 3, 4))


def test_reductions_over_nothing_raise_pytorch_errors():
    empty = mg.zeros(0, 3)
    for name in ("max", "min", "amax", "amin"):
        with pytest.raises(RuntimeError, match=rf"{name}\(\): Expected reduction dim to be specified for "
                                               r"input.numel\(\) == 0. Specify the reduction dim"):
            getattr(mg, name)(empty)
        with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 0 to have non-zero size"):
            getattr(mg, name)(empty, 0)
        result = getattr(mg, name)(empty, 1)  # reducing a non-empty dim of an empty tensor is fine
        assert (result.values if name in ("max", "min") else result).shape == (0,)
    for name in ("argmax", "argmin"):
        with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim to be specified"):
            getattr(mg, name)(empty)
        with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
            getattr(mg, name)(empty, 0)


def test_other_argument_errors():
    x = mg.ones(2, 3)
    with pytest.raises(TypeError, match="max\\(\\): argument 'dim' must be int, not tuple"):
        mg.max(x, (0, 1))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        x.sum((0, 1, -1))
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        mg.tensor([1, 2]).mean()
