"""Creation, random fills and counting against PyTorch's own op database (OpInfo): tril/triu_indices,
unravel_index, scalar_tensor, fill, empty/empty_strided/new_empty_strided/empty_permuted (shapes, dtypes and
strides: their values are uninitialized), the random fills uniform/cauchy/exponential/geometric/log_normal (shapes,
dtypes, errors here; their distributions against PyTorch's draws below), and bincount, bucketize, searchsorted,
histc, histogram, histogramdd, unique, unique_consecutive, isin.
"""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip
from .opinfo_checks import assert_opinfo
from .opinfo_util import RANDOM_FILLS

VALUE_OPS = ["tril_indices", "triu_indices", "unravel_index", "scalar_tensor", "fill", "bincount", "bucketize",
             "searchsorted", "histc", "histogram", "histogramdd", "unique", "unique_consecutive", "isin",
             "nonzero_static"]
SHAPE_ONLY_OPS = ["empty", "empty_strided", "new_empty_strided", "empty_permuted"]


@pytest.mark.parametrize("name", VALUE_OPS)
def test_opinfo_samples(name):
    assert_opinfo(name, limit=30)


@pytest.mark.parametrize("name", SHAPE_ONLY_OPS + list(RANDOM_FILLS))
def test_opinfo_shapes_dtypes_and_errors(name):
    kinds = ("inplace",) if name in RANDOM_FILLS else ("function", "method", "inplace")
    assert_opinfo(name, kinds=kinds, values=False, limit=30)


def test_strided_layouts_are_pytorchs():
    torch = torch_or_skip()
    for size, stride in [((2, 3), (1, 2)), ((3, 2, 2), (1, 6, 3)), ((4,), (0,))]:
        assert mg.empty_strided(size, stride).stride() == torch.empty_strided(size, stride).stride()
    for size, layout in [((2, 3, 4), (2, 0, 1)), ((5, 1, 2), (1, 2, 0))]:
        assert mg.empty_permuted(size, layout).stride() == torch.empty_permuted(size, layout).stride()


def test_empty_takes_size_as_a_keyword():
    assert mg.empty(size=(2, 3)).shape == (2, 3) and mg.zeros(size=[4]).shape == (4,)
    with pytest.raises(TypeError):
        mg.ones(2, size=(3,))


# --------------------------------------------------------------------------- random fills: distributions
N = 20000
# The largest gap between two empirical CDFs of N draws each that the Kolmogorov-Smirnov test allows at
# significance 1e-6 (c(alpha) = sqrt(-ln(alpha / 2) / 2) = 2.70). The draws are seeded: the test is deterministic.
KS_LIMIT = 2.70 * np.sqrt(2 / N)

FILLS = [("uniform_", (-2.0, 3.0)), ("cauchy_", (1.0, 0.5)), ("exponential_", (1.5,)), ("geometric_", (0.3,)),
         ("log_normal_", (0.5, 0.75))]


def ks_distance(a, b):
    """max |F_a(x) - F_b(x)| over x: the two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    points = np.concatenate([a, b])
    return np.max(np.abs(np.searchsorted(a, points, side="right") - np.searchsorted(b, points, side="right")) / N)


def draws(lib, method, args, dtype="float64"):
    lib.manual_seed(0)
    return getattr(lib.empty(N, dtype=getattr(lib, dtype)), method)(*args).numpy().astype(np.float64)


@pytest.mark.parametrize("method, args", FILLS)
def test_random_fill_distribution_matches_pytorch(method, args):
    torch = torch_or_skip()
    ours, theirs = draws(mg, method, args), draws(torch, method, args)
    assert ks_distance(ours, theirs) < KS_LIMIT
    if method == "geometric_":
        assert ours.min() >= 1 and np.all(ours == np.round(ours))   # trials up to the first success
    t = mg.zeros(3, 4, dtype=mg.float32)
    assert getattr(t, method)(*args) is t and t.dtype == mg.float32


def test_a_wrong_distribution_is_caught():
    """The mutant: a Cauchy fill with twice the scale is far outside the test's limit."""
    torch = torch_or_skip()
    assert ks_distance(draws(mg, "cauchy_", (1.0, 1.0)), draws(torch, "cauchy_", (1.0, 0.5))) > 3 * KS_LIMIT


FILL_CALLS = [("cauchy_", ()), ("exponential_", ()), ("geometric_", (0.5,)), ("log_normal_", ()), ("uniform_", ()),
              ("normal_", ()), ("random_", ()), ("random_", (0, 5)), ("random_", (7,)), ("random_", (3, 1)),
              ("random_", (0, 300)), ("random_", (-1, 5)), ("random_", (0, 2)), ("random_", (0, 70000)),
              ("random_", (0, 2 ** 25)), ("random_", (0, 2 ** 63)), ("uniform_", (3, 1)), ("cauchy_", (0, -1)),
              ("normal_", (0, -1)), ("uniform_", (-1e300, 0)), ("uniform_", (0, 1e300)), ("uniform_", (-3e38, 3e38)),
              ("uniform_", (-6e4, 6e4)), ("uniform_", (float("nan"), 1)), ("uniform_", (0, float("inf"))),
              ("uniform_", (-1.5e308, 1.5e308)), ("normal_", (0, float("nan"))), ("bernoulli_", (float("nan"),)),
              ("bernoulli_", (1.1234567,)), ("exponential_", (-0.1234567,)), ("geometric_", (1.1234567,)),
              ("log_normal_", (0, -0.1234567)), ("cauchy_", (0, -0.1234567))]
FILL_DTYPES = ["float32", "float16", "bfloat16", "complex64", "int64", "int32", "int8", "uint8", "bool", "uint16",
               "uint64", "float8_e4m3fn", "float64", "complex128"]


def _fill_outcome(lib, method, args, dtype, size):
    """What ``zeros(size, dtype).method(*args)`` does: its dtype and shape, or its exception, and the range warnings."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t = getattr(lib.zeros(size, dtype=getattr(lib, dtype)), method)(*args)
            outcome = (str(t.dtype).split(".")[-1], tuple(t.shape))
        except Exception as error:      # noqa: BLE001 - compared with PyTorch's
            outcome = f"{type(error).__name__}: {error}"
    return outcome, [str(w.message).split(" (Triggered")[0] for w in caught if "out of bounds" in str(w.message)]


@pytest.mark.parametrize("method, args", FILL_CALLS)
def test_random_fills_take_the_dtypes_and_ranges_pytorch_takes(method, args):
    """Each random fill into each dtype, empty or not: done, or refused with PyTorch's exception and message (the
    continuous distributions refuse integers; random_'s range must fit the dtype, with PyTorch's warning past the
    integers a float holds exactly), as PyTorch."""
    torch = torch_or_skip()
    for dtype in FILL_DTYPES:
        for size in (3, 0):
            want = _fill_outcome(torch, method, args, dtype, size)
            assert _fill_outcome(mg, method, args, dtype, size) == want, (dtype, size)


@pytest.mark.parametrize("dtype, a, b, message", [
    ("float32", -1e300, 0.0, "from is out of bounds for float"),
    ("float16", 0.0, 1e5, "to is out of bounds for c10::Half"),
    ("bfloat16", float("nan"), 1.0, "from is out of bounds for c10::BFloat16"),
    ("complex64", 0.0, float("inf"), "to is out of bounds for float"),
    ("float16", -6e4, 6e4, "uniform_ expects to-from <= std::numeric_limits<Half>::max(), but found to=60000 and "
                           "from=-60000 which result in to-from to exceed the limit"),
    ("float64", -1.5e308, 1.5e308, "uniform_ expects to-from <= std::numeric_limits<Double>::max(), but found "
                                   "to=1.5e+308 and from=-1.5e+308 which result in to-from to exceed the limit")])
def test_uniform_refuses_a_range_its_dtype_cannot_draw_and_keeps_the_values(dtype, a, b, message):
    """PyTorch's messages (2.13): each end finite in the dtype, and b - a within its largest value; nothing written."""
    t = mg.full((4,), 0.25, dtype=getattr(mg, dtype))
    with pytest.raises(RuntimeError) as caught:
        t.uniform_(a, b)
    assert str(caught.value) == message
    assert (t == 0.25).all().item()
    assert mg.empty(3, dtype=mg.float64).uniform_(-1e300, 1e300).isfinite().all().item()   # a double's range


NAN = float("nan")


@pytest.mark.parametrize("call, message", [
    (lambda: mg.zeros(3).normal_(0.0, NAN), "normal expects std >= 0.0, but found std nan"),
    (lambda: mg.normal(0.0, NAN, size=(3,)), "normal expects std >= 0.0, but found std nan"),
    (lambda: mg.normal(mg.zeros(3), -0.1234567), "normal expects std >= 0.0, but found std -0.123457"),
    (lambda: mg.normal(0.5, mg.tensor([1.0, NAN])), "normal expects all elements of std >= 0.0, got nan"),
    (lambda: mg.nn.init.normal_(mg.zeros(3), std=NAN), "normal expects std >= 0.0, but found std nan"),
    (lambda: mg.zeros(3).bernoulli_(NAN), "bernoulli_ expects p to be in [0, 1], but got p=nan"),
    (lambda: mg.bernoulli(mg.zeros(3), p=1.1234567), "bernoulli_ expects p to be in [0, 1], but got p=1.12346"),
    (lambda: mg.zeros(2).bernoulli_(mg.tensor([0.5, NAN])), "bernoulli: every probability must be in [0, 1], got "
                                                             "values outside it"),
    (lambda: mg.zeros(3).exponential_(-0.1234567), "exponential_ expects lambda > 0.0, but found lambda=-0.123457"),
    (lambda: mg.zeros(3).geometric_(1.1234567), "geometric_ expects p to be in (0, 1), but got p=1.12346")])
def test_random_parameters_nan_included_are_refused_with_pytorchs_messages(call, message):
    """NaN fails PyTorch's checks (std >= 0, p in [0, 1]); numbers print as C++ prints a double (6 digits)."""
    with pytest.raises(RuntimeError) as caught:
        call()
    assert str(caught.value) == message


def test_log_normal_overflows_to_inf_without_a_warning():
    """exp of draws beyond the dtype's range is inf, silently, as in PyTorch."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (10, 5000):         # Python's math module and numba's ufuncs (``_pytorch_stream.libm``)
            for dtype in (mg.float32, mg.float64):
                assert mg.empty(n, dtype=dtype).log_normal_(1000.0, 1.0).isinf().all().item()


def test_complex_uniform_and_normal_fill_both_parts():
    """PyTorch's complex uniform_ draws each part from U[a, b); normal_ each part with std / sqrt(2)."""
    mg.manual_seed(0)
    u = mg.zeros(100_000, dtype=mg.complex128).uniform_(2.0, 3.0).numpy()
    n = mg.zeros(100_000, dtype=mg.complex128).normal_(5.0, 2.0).numpy()
    for part in (u.real, u.imag):
        assert 2.0 <= part.min() and part.max() < 3.0 and abs(part.mean() - 2.5) < 0.01
    for part in (n.real, n.imag):
        assert abs(part.mean() - 5.0) < 0.03 and abs(part.std() - 2.0 / np.sqrt(2)) < 0.02


MAKERS = {"rand": lambda L, d: L.rand(3, dtype=d), "randn": lambda L, d: L.randn(3, dtype=d),
          "randint": lambda L, d: L.randint(0, 5, (3,), dtype=d), "randperm": lambda L, d: L.randperm(3, dtype=d),
          "normal": lambda L, d: L.normal(0.0, 1.0, (3,), dtype=d),
          "poisson": lambda L, d: L.poisson(L.ones(3, dtype=d)),
          "multinomial": lambda L, d: L.multinomial(L.ones(3, dtype=d), 1),
          "bernoulli_": lambda L, d: L.zeros(3, dtype=d).bernoulli_(0.5)}


@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_random_makers_refuse_the_dtypes_pytorch_refuses(maker):
    """Each sampler into each dtype: made, or refused with PyTorch's exception type, its message first (minigrad
    may say more after it)."""
    torch = torch_or_skip()
    for dtype in FILL_DTYPES + ["uint32", "float8_e5m2"]:
        outcomes = []
        for lib in (torch, mg):
            try:
                made = MAKERS[maker](lib, getattr(lib, dtype))
                outcomes.append((str(made.dtype).split(".")[-1], tuple(made.shape)))
            except Exception as error:      # noqa: BLE001 - compared with PyTorch's
                outcomes.append((type(error).__name__, str(error)))
        theirs, ours = outcomes
        if theirs[0].endswith("Error"):
            assert ours[0] == theirs[0] and ours[1].startswith(theirs[1]), (dtype, ours, theirs)
        else:
            assert ours == theirs, dtype
