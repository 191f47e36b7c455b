"""nn.init's remaining initialisers (eye_, dirac_, orthogonal_, sparse_, trunc_normal_ for narrow windows,
``generator=``, the deprecated names) against PyTorch where the result is deterministic (or fed the same
Gaussian draws), and by their properties where it is random: orthogonality, zeros per column, the identity
convolution, moments within a few standard errors."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import init

from .mirror import torch_or_replay

torch = torch_or_replay()   # PyTorch, or without it a stand-in that skips the tests using it


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (6, 2)])
def test_eye_matches_pytorch(shape):
    ours, theirs = init.eye_(mg.empty(*shape)), torch.nn.init.eye_(torch.empty(*shape))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape, groups", [((4, 3, 5), 1), ((6, 4, 3, 3), 2), ((4, 6, 2, 3, 3), 1),
                                           ((6, 2, 3, 4), 3), ((2, 5, 4, 4), 1)])
def test_dirac_matches_pytorch(shape, groups):
    ours, theirs = init.dirac_(mg.empty(*shape), groups), torch.nn.init.dirac_(torch.empty(*shape), groups)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_dirac_weight_is_the_identity_convolution():
    """conv2d with a dirac_ weight (odd kernel, 'same' padding) returns its input's channels."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 4, 6, 6)))
    weight = init.dirac_(mg.empty(4, 4, 3, 3, dtype=mg.float64))
    np.testing.assert_allclose(mg.nn.functional.conv2d(x, weight, padding=1).numpy(), x.numpy(), atol=1e-15)
    grouped = init.dirac_(mg.empty(4, 2, 3, 3, dtype=mg.float64), groups=2)
    np.testing.assert_allclose(mg.nn.functional.conv2d(x, grouped, padding=1, groups=2).numpy(), x.numpy(),
                               atol=1e-15)


@pytest.mark.parametrize("shape, gain", [((3, 5), 1.0), ((5, 3), 2.0), ((4, 2, 3), 0.5), ((1, 1), 1.0)])
def test_orthogonal_matches_pytorch_for_the_same_seed(shape, gain):
    """The same seed gives both libraries the same Gaussian matrix (PyTorch's stream), and so the same
    (semi-)orthogonal matrix: QR with the signs of R's diagonal moved into Q."""
    mg.manual_seed(5)
    torch.manual_seed(5)
    ours = init.orthogonal_(mg.empty(*shape, dtype=mg.float64), gain)
    theirs = torch.nn.init.orthogonal_(torch.empty(*shape, dtype=torch.float64), gain)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(3, 7), (7, 3), (4, 2, 3, 3), (5, 5)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    gain = 1.7
    w = init.orthogonal_(mg.empty(*shape, dtype=mg.float64), gain=gain).numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(small), atol=1e-12)


def test_orthogonal_is_haar_distributed():
    """The first entry of a Haar orthogonal n x n matrix has E[q^2] = 1/n and E[q] = 0 (400 draws, 5 s.e.)."""
    n, draws = 4, 400
    generator = mg.Generator().manual_seed(7)
    q11 = np.array([init.orthogonal_(mg.empty(n, n, dtype=mg.float64), generator=generator).numpy()[0, 0]
                    for _ in range(draws)])
    assert abs(q11.mean()) < 5 * math.sqrt(1 / n / draws)
    var_of_square = np.var(q11 ** 2)
    assert abs((q11 ** 2).mean() - 1 / n) < 5 * math.sqrt(var_of_square / draws)


@pytest.mark.parametrize("shape, sparsity", [((10, 6), 0.1), ((7, 3), 0.5), ((5, 4), 0.0), ((4, 4), 1.0)])
def test_sparse_zeros_per_column_and_scale(shape, sparsity):
    std = 0.3
    w = init.sparse_(mg.empty(*shape, dtype=mg.float64), sparsity, std=std).numpy()
    zeros = math.ceil(sparsity * shape[0])
    assert ((w == 0).sum(0) == zeros).all()
    big = init.sparse_(mg.empty(400, 50, dtype=mg.float64), 0.2, std=std).numpy()
    nonzero = big[big != 0]
    assert nonzero.size == 50 * (400 - 80)
    se = std / math.sqrt(2 * nonzero.size)
    assert abs(nonzero.std() - std) < 5 * se


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.0), (0.0, 1.0, 2.5, 4.0),
                                             (0.0, 1.0, -0.1, 0.1)])
def test_trunc_normal_moments_match_the_truncated_normal(mean, std, a, b):
    """20000 draws: inside [a, b], mean and variance within 5 standard errors of scipy.stats.truncnorm's (the
    narrow and far windows take PyTorch's uniform-proposal path)."""
    stats = pytest.importorskip("scipy.stats")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = init.trunc_normal_(mg.empty(20000, dtype=mg.float64), mean, std, a, b,
                               generator=mg.Generator().manual_seed(3)).numpy()
    assert x.min() >= a and x.max() <= b
    dist = stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
    n = x.size
    assert abs(x.mean() - dist.mean()) < 5 * dist.std() / math.sqrt(n)
    m4 = dist.moment(4) - 4 * dist.mean() * dist.moment(3) + 6 * dist.mean() ** 2 * dist.moment(2) \
        - 3 * dist.mean() ** 4
    assert abs(x.var() - dist.var()) < 5 * math.sqrt((m4 - dist.var() ** 2) / n)


def test_trunc_normal_warns_as_pytorch():
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
            lib.nn.init.trunc_normal_(lib.empty(3), mean=5.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("name, args", [
    ("kaiming_uniform_", ()), ("kaiming_normal_", ()), ("xavier_uniform_", ()), ("xavier_normal_", ()),
    ("orthogonal_", ()), ("sparse_", (0.3,)), ("trunc_normal_", ()), ("uniform_", ()), ("normal_", ()),
])
def test_generator_makes_initialisation_reproducible(name, args):
    fn = getattr(init, name)

    def drawn(seed):      # (sparse_ picks its zero rows from the default generator, as PyTorch's: seeded alike)
        mg.manual_seed(0)
        return fn(mg.empty(6, 5), *args, generator=mg.Generator().manual_seed(seed)).numpy()
    first, again, other = drawn(11), drawn(11), drawn(12)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                                 "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_names_warn_as_pytorch(old):
    shape = (4, 4, 3) if old == "dirac" else (4, 4)
    args = (0.5,) if old in ("constant", "sparse") else ()
    records = []
    for lib in (torch, mg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.init, old)(lib.empty(*shape), *args)
        records.append([(w.category, str(w.message)) for w in caught])
        assert tuple(out.shape) == shape
    assert records[0] == records[1]
    if old in ("eye", "dirac", "constant"):     # deterministic: the same values
        np.testing.assert_array_equal(getattr(init, old + "_")(mg.empty(*shape), *args).numpy(),
                                      getattr(torch.nn.init, old + "_")(torch.empty(*shape), *args).numpy())


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.eye_(lib.empty(2, 3, 4)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)),
    lambda lib: lib.nn.init.dirac_(lib.empty(5, 2, 3), groups=2),
    lambda lib: lib.nn.init.orthogonal_(lib.empty(4)),
    lambda lib: lib.nn.init.sparse_(lib.empty(2, 3, 4), 0.5),
    lambda lib: lib.nn.init.uniform_(lib.empty(3), 1.0, 0.0),
    lambda lib: lib.nn.init.normal_(lib.empty(3), 0.0, -1.0),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan_avg"),
    lambda lib: lib.nn.init.calculate_gain("softsign"),
    lambda lib: lib.nn.init.xavier_normal_(lib.empty(3)),
    lambda lib: lib.nn.init.trunc_normal_(lib.empty(3), 0.0, 1.0, 3.0, -3.0),
])
@pytest.mark.filterwarnings("ignore:mean is more than 2 std")
def test_errors_match_pytorch_and_leave_the_tensor_alone(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(mg)
    assert str(ours.value) == str(theirs.value)


def test_zero_element_tensors_warn_as_pytorch():
    for name in ("kaiming_uniform_", "kaiming_normal_"):
        for lib in (torch, mg):
            with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
                getattr(lib.nn.init, name)(lib.empty(0, 3))
    assert init.orthogonal_(mg.empty(0, 3)).shape == (0, 3)


def test_initialisers_write_in_place_outside_autograd():
    w = mg.nn.Parameter(mg.empty(4, 4))
    for fn in (init.eye_, init.orthogonal_, lambda t: init.sparse_(t, 0.5), lambda t: init.dirac_(t.view(4, 4, 1))):
        out = fn(w)
        assert w.grad_fn is None and w.requires_grad
        assert out is w or out._base is w or out.shape == (4, 4, 1)
