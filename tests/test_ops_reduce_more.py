"""The reductions beside ``reduce.py`` (reduce_more.py, order_stats.py, cumulative.py, counting.py) against PyTorch's own
OpInfo database: every sample's values, dtypes, (values, indices) tuples and float64 gradients for a random
upstream, method and in-place variants, error inputs. Plus double backward by finite differences, PyTorch's
gradient conventions at zeros and ties, and a wrong backward the comparison is shown to catch."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import reduce_more

from .mirror import assert_mirror, run_both, torch_or_replay, torch_or_skip
from .opinfo_families import beyond_numpy_dims, check_errors, check_function, check_inplace, uses_out
from .opinfo_util import compare_sample, convert_sample, opinfos, resolve, samples

NEW = ["prod", "median", "nanmedian", "mode", "nansum", "nanmean", "var_mean", "std_mean", "cummax", "cummin",
       "logcumsumexp", "count_nonzero", "aminmax", "quantile", "nanquantile", "msort", "diff", "trapezoid",
       "trapz", "cumulative_trapezoid", "cov", "corrcoef", "renorm", "dist", "unique", "unique_consecutive",
       "bincount", "histc", "isin"]
# kthvalue's index among tied values is whatever PyTorch's selection algorithm leaves there: compared apart
TIES = ["kthvalue"]
IN_PLACE = ["renorm", "cumsum", "cumprod"]


@pytest.mark.parametrize("name", NEW)
def test_function(name):
    check_function(name, limit=8, other_dtypes=2)


@pytest.mark.parametrize("name", TIES)
def test_function_float64(name):
    check_function(name, limit=8, other_dtypes=0)


@pytest.mark.parametrize("name", NEW + TIES)
def test_method(name):
    check_function(name, kind="method", limit=2, other_dtypes=0, method_only=True)


@pytest.mark.parametrize("name", IN_PLACE)
def test_inplace(name):
    check_inplace(name)


@pytest.mark.parametrize("name", NEW + TIES)
def test_errors(name):
    check_errors(name, unreachable=(uses_out, beyond_numpy_dims))


def test_kthvalue_integers_values_and_indices_that_point_at_them():
    """With ties (integer samples) the values are PyTorch's and each index points at an element of that value."""
    torch = torch_or_skip()
    op = opinfos("kthvalue")[0]
    for sample in samples(op, torch.int64, limit=6):
        x, args, kwargs, _ = convert_sample(sample)
        want = op.op(sample.input, *sample.args, **sample.kwargs)
        got = mg.kthvalue(x, *args, **kwargs)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        dim = args[1] if len(args) > 1 else kwargs.get("dim", -1)
        keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        if x.ndim == 0:
            continue
        indices, values = (got.indices, got.values) if keep else (got.indices.unsqueeze(dim), got.values.unsqueeze(dim))
        np.testing.assert_array_equal(mg.gather(x, dim, indices).numpy(), values.numpy())


# --------------------------------------------------------------------------- PyTorch's conventions
def test_prod_gradient_at_zeros_is_the_product_of_the_others():
    """One zero in a slice: it gets the product of the rest, the rest 0; two zeros: all 0 (PyTorch's rule)."""
    x = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 1.5], [1.0, 2.0, 3.0, 4.0]])
    assert_mirror(*run_both(lambda lib, t: lib.prod(t, 1)), x)
    assert_mirror(*run_both(lambda lib, t: lib.prod(t)), x[:1])
    assert_mirror(*run_both(lambda lib, t: lib.prod(t, 0, keepdim=True)), x)


def test_median_without_dim_shares_the_gradient_among_ties_and_with_dim_routes_it_to_the_index():
    x = np.array([[1.0, 3.0, 3.0, 3.0, 5.0], [2.0, 2.0, 0.0, 7.0, 7.0]])
    assert_mirror(*run_both(lambda lib, t: lib.median(t)), x)
    assert_mirror(*run_both(lambda lib, t: lib.nanmedian(t)), np.array([np.nan, 1.0, 4.0, 1.0]))
    assert_mirror(*run_both(lambda lib, t: lib.median(t, 1).values), np.array([[1.0, 3.0, 2.0], [9.0, 4.0, 6.0]]))


def test_cummax_and_cummin_route_the_gradient_to_the_running_arg_also_past_a_nan():
    x = np.array([[1.0, 3.0, 2.0, 3.0, 5.0], [2.0, np.nan, 0.0, 7.0, np.nan]])
    for name in ("cummax", "cummin"):
        assert_mirror(*run_both(lambda lib, t: getattr(lib, name)(t, 1).values), x)
        torch = torch_or_replay()
        np.testing.assert_array_equal(getattr(mg, name)(mg.tensor(x), 1).indices.numpy(),
                                      getattr(torch, name)(torch.tensor(x), 1).indices.numpy())


def test_logcumsumexp_is_stable_for_large_and_minus_infinite_inputs():
    x = np.array([[800.0, 790.0, -np.inf, 805.0], [-1e3, -1e3 + 1, 3.0, -np.inf]])
    assert_mirror(*run_both(lambda lib, t: lib.logcumsumexp(t, 1)), x)


def test_quantile_gradient_reaches_q():
    x = np.random.default_rng(0).standard_normal((3, 7))
    q = np.array([0.1, 0.5, 0.93])
    for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
        assert_mirror(*run_both(lambda lib, t, p: lib.quantile(t, p, 1, interpolation=interpolation)), x, q)


NAN = float("nan")


@pytest.mark.parametrize("call, message", [
    (lambda: mg.quantile(mg.arange(5.0), NAN), "quantile() q must be in the range [0, 1] but got nan"),
    (lambda: mg.nanquantile(mg.zeros(0), -0.1234567), "quantile() q must be in the range [0, 1] but got -0.123457"),
    (lambda: mg.quantile(mg.arange(5.0), mg.tensor([0.5, NAN])), "quantile() q values must be in the range [0, 1]"),
    (lambda: mg.quantile(mg.zeros(0), 0.5), "quantile() input tensor must be non-empty"),
    (lambda: mg.nanquantile(mg.zeros(2, 0, dtype=mg.int64), 0.5, dim=-1), "quantile() input tensor must be non-empty"),
    (lambda: mg.quantile(mg.arange(5), mg.tensor([[0.5]])), "quantile() q must be a scalar or 1D tensor"),
    (lambda: mg.nanquantile(mg.arange(5), 0.5), "quantile() input tensor must be either float or double dtype"),
    (lambda: mg.quantile(mg.zeros(0), 0.5, interpolation="x"),
     "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got x")])
def test_quantile_checks_its_arguments_in_pytorchs_order(call, message):
    """PyTorch's messages and order (2.13): a number q, the interpolation, an empty input, q's dimensions, the dtypes,
    then q's values; NaN is outside [0, 1]; nanquantile's messages say quantile() too."""
    with pytest.raises(RuntimeError) as caught:
        call()
    assert str(caught.value) == message


def test_quantile_argument_grid_mirrors_pytorch():
    """Values or PyTorch's exception, over numbers and tensors q, dtypes, empty inputs and interpolations."""
    torch = torch_or_skip()

    def outcome(lib, fn, dtype, q, interpolation, shape, dim):
        first = [3.0, 7.0 if dtype == "int64" else NAN, 1.0]
        x = lib.tensor([first, [2.0, 5.0, 4.0]]) if shape == (2, 3) else lib.zeros(shape)
        x = x.to(getattr(lib, dtype))
        try:
            q = lib.tensor(q, dtype=getattr(lib, dtype)) if isinstance(q, list) else q
            out = getattr(lib, fn)(x, q, dim=dim, interpolation=interpolation)
        except Exception as error:          # noqa: BLE001 - compared with PyTorch's
            return f"{type(error).__name__}: {error}"
        return np.asarray(out.tolist(), dtype=np.float64)

    for fn in ("quantile", "nanquantile"):
        for dtype in ("float32", "float64", "int64"):
            for q in (0.5, 1.5, NAN, [0.25, NAN], [0.2, 0.7], [[0.5]]):
                for interpolation in ("linear", "x", "midpoint"):
                    for shape, dim in (((2, 3), None), ((2, 3), -1), ((0,), None), ((2, 0), 1), ((0, 3), 1)):
                        ours = outcome(mg, fn, dtype, q, interpolation, shape, dim)
                        theirs = outcome(torch, fn, dtype, q, interpolation, shape, dim)
                        where = (fn, dtype, q, interpolation, shape, dim)
                        if isinstance(theirs, str):
                            assert ours == theirs, where
                        else:
                            np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True, err_msg=str(where))


# --------------------------------------------------------------------------- double backward
X = np.random.default_rng(0).uniform(0.1, 0.9, (3, 5))
WITH_ZEROS = X * np.array([[1.0, 0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
DOUBLE_BACKWARD = {
    "prod_dim": (lambda t: mg.prod(t, 1), X), "prod_all": (mg.prod, X),
    "prod_zeros": (lambda t: mg.prod(t, 1), WITH_ZEROS), "logcumsumexp": (lambda t: mg.logcumsumexp(t, 1), X),
    "median": (lambda t: mg.median(t, 1).values, X), "quantile": (lambda t: mg.quantile(t, 0.3, 1), X),
    "cummax": (lambda t: mg.cummax(t, 1).values, X), "cov": (mg.cov, X), "corrcoef": (mg.corrcoef, X),
    "renorm": (lambda t: mg.renorm(t, 2, 0, 0.9), X), "nanmean": (lambda t: mg.nanmean(t, 1), X),
    "dist": (lambda t: mg.dist(t, mg.tensor(X[::-1].copy())), X),
    "cumulative_trapezoid": (lambda t: mg.cumulative_trapezoid(t * t), X),
}


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD))
def test_double_backward_by_finite_differences(name):
    fn, x = DOUBLE_BACKWARD[name]
    inputs = [mg.tensor(x, requires_grad=True)]
    assert mg.gradcheck(fn, inputs)
    assert mg.gradgradcheck(fn, inputs)


def test_a_wrong_prod_backward_is_caught(monkeypatch):
    """The mutant: prod's gradient always dout * out / x, also where x has zeros (0 / 0 there). PyTorch's
    samples with zeros must catch it."""
    op = opinfos("prod")[0]
    with_zeros = [s for s in samples(op) if (s.input == 0).any()]
    assert with_zeros, "the prod OpInfo has no sample with zeros"
    for sample in with_zeros:
        compare_sample(op, sample, resolve(op))                      # the real backward passes

    def no_zero_rule(x, out, g, axis, zeros):
        return g * out / x
    monkeypatch.setattr(reduce_more.Prod, "_grad", staticmethod(no_zero_rule))
    caught = 0
    for sample in with_zeros:
        try:
            compare_sample(op, sample, resolve(op))
        except AssertionError:
            caught += 1
    assert caught, "the wrong prod backward passed every sample with zeros"


# --------------------------------------------------------------------------- empty and 0-d tensors, every dtype
_SELECTION_CALLS = {
    "median()": lambda x: x.median(), "nanmedian()": lambda x: x.nanmedian(), "median(0)": lambda x: x.median(0),
    "nanmedian(-1, True)": lambda x: x.nanmedian(-1, True), "kthvalue(1)": lambda x: x.kthvalue(1),
    "kthvalue(2, 0)": lambda x: x.kthvalue(2, 0), "mode()": lambda x: x.mode(), "mode(0)": lambda x: x.mode(0),
    "max(0)": lambda x: x.max(0), "min(-1, True)": lambda x: x.min(-1, True), "max(2)": lambda x: x.max(2),
    "max()": lambda x: x.max(), "argmax(0)": lambda x: x.argmax(0), "argmin()": lambda x: x.argmin(),
    "amax(0)": lambda x: x.amax(0), "cummax(0)": lambda x: x.cummax(0), "cummin(-1)": lambda x: x.cummin(-1),
    "topk(1)": lambda x: x.topk(1), "sort()": lambda x: x.sort(), "argsort(0)": lambda x: x.argsort(0),
    "aminmax()": lambda x: x.aminmax(), "softmax(0)": lambda x: x.softmax(0),
    "log_softmax(-1)": lambda x: x.log_softmax(-1),
}


def _outcome(lib, result):
    """What a call gave, comparable across the libraries: each result's dtype, shape and values (to 5 decimals:
    softmax's last bits may differ; repr, so that NaN equals NaN)."""
    if isinstance(result, tuple):
        return tuple(_outcome(lib, r) for r in result)
    values = np.round(np.asarray(result.tolist() if lib.is_complex(result) else result.to(lib.float64).tolist()), 5)
    return str(result.dtype).rpartition(".")[2], tuple(result.shape), repr(values.tolist())


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64", "float8_e4m3fn", "uint16"])
def test_selections_of_empty_and_0d_tensors_as_pytorch(dtype):
    """PyTorch checks a selection's dim (and whether it is empty) before its dtype, runs no kernel for a 0-d input
    or (but for kthvalue) an empty result, whatever the dtype, and returns NaN cast to the dtype for the median of
    nothing: values, exception types and dtypes as PyTorch's, for 5 shapes."""
    torch = torch_or_skip()
    wrong = []
    for shape in [(), (0,), (3,), (2, 0), (0, 3)]:
        for name, call in _SELECTION_CALLS.items():
            outcomes = []
            for lib in (torch, mg):
                x = lib.tensor([1.0, 0.0, 1.0][: int(np.prod(shape))]).reshape(shape).to(getattr(lib, dtype))
                try:
                    outcomes.append(_outcome(lib, call(x)))
                except (RuntimeError, NotImplementedError, IndexError) as error:
                    outcomes.append(type(error).__name__)
            if outcomes[1] != outcomes[0]:
                wrong.append(f"{shape} {name}: {outcomes[1]}, PyTorch {outcomes[0]}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bfloat16"])
def test_kthvalue_reports_pytorchs_element_among_ties(dtype):
    """Rows of a few repeated values (NaN among them): the index PyTorch's quickselect ends with, and so the element
    the gradient reaches, for random k and dims."""
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    wrong = []
    for case in range(150):
        shape = tuple(int(s) for s in rng.integers(1, 9, size=int(rng.integers(1, 4))))
        values = rng.integers(0, 4, size=shape).astype(float)
        if dtype != "int64" and rng.random() < 0.3:
            values.flat[rng.integers(0, values.size)] = np.nan
        dim = int(rng.integers(-len(shape), len(shape)))
        k = int(rng.integers(1, shape[dim] + 1))
        indices = [lib.tensor(values).to(getattr(lib, dtype)).kthvalue(k, dim).indices.numpy() for lib in (torch, mg)]
        if not np.array_equal(indices[1], indices[0]):
            wrong.append(f"{shape} dim {dim} k {k}: {indices[1].tolist()}, PyTorch {indices[0].tolist()}")
    assert not wrong, "\n".join(wrong[:5])


def test_kthvalue_gradient_reaches_pytorchs_tied_element():
    torch = torch_or_skip()
    grads = []
    for lib in (torch, mg):
        x = lib.tensor([[5.0, 5.0, 5.0, 5.0, 5.0], [3.0, 1.0, 2.0, 1.0, 3.0]], dtype=lib.float64, requires_grad=True)
        x.kthvalue(2, 1).values.backward(lib.tensor([0.5, -2.0], dtype=lib.float64))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])     # (moved upstream values: exact by construction)
