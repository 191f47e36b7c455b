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
from .opinfo_checks import RANDOM, assert_opinfo

VALUE_OPS = ["tril_indices", "triu_indices", "unravel_index", "scalar_tensor", "fill", "bincount", "bucketize",
             "searchsorted", "histc", "histogram", "histogramdd", "unique", "unique_consecutive", "isin",
             "nonzero_static"]
SHAPE_ONLY_OPS = ["empty", "empty_strided", "new_empty_strided", "empty_permuted"]


@pytest.mark.parametrize("name", VALUE_OPS)
def test_opinfo_samples(name):
    assert_opinfo(name, limit=30)


@pytest.mark.parametrize("name", SHAPE_ONLY_OPS + list(RANDOM))
def test_opinfo_shapes_dtypes_and_errors(name):
    kinds = ("inplace",) if name in RANDOM else ("function", "method", "inplace")
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
