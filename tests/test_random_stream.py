"""The same seed gives the same random numbers as PyTorch: every draw below runs after the same ``manual_seed`` in both
libraries and must give PyTorch's numbers. Exact where PyTorch's arithmetic is reproduced operation for operation
(integers, permutations, masks, uniforms on [0, 1)); within an ulp for float32 uniforms
on [a, b), the modules' initial weights among them (exact on the AMD EPYC they were measured on: minigrad rounds
x * (b - a) + a once, as the fused multiply-add of PyTorch's compiled loop does); within a few float32 ulps (abs
2e-6) for float32 normals, whose log, sin and cos PyTorch takes from vectorized libraries that round the last bits
otherwise; exact for the float64 normal, log-normal, Cauchy and exponential draws, whose log, log1p, exp, sin, cos
and tan both libraries take from the C library (minigrad through ``kernels/libm_numba.py``: NumPy's float64 SIMD
functions round the last bit otherwise in up to 7% of draws); within 1e-12 relative where PyTorch's compiled loop
fuses a multiply-add that NumPy rounds twice (and for float64 gamma draws); within a 16-bit ulp for float16 and
bfloat16 normals (exact here).

On Intel CPUs PyTorch's MKL build draws ``bernoulli_(p)`` with a number p, and so dropout masks, from MKL's own
generator, and its sources have an MKL path for ``exponential_`` too: those cases' numbers are compared on other CPUs
only, their dtypes and shapes everywhere (docs/differences.md)."""
import numpy as np
import pytest

import minigrad as mg
from tests.mirror import torch_or_skip
from tests.random_fuzz import mkl_draws

torch = torch_or_skip()
MKL_BERNOULLI = mkl_draws(torch)
EXACT, FLOAT32_NORMAL, LIBM = 0.0, 2e-6, 1e-12
FMA = 5e-7       # float32 uniforms on [a, b): PyTorch's loop fuses x * (b - a) + a where its CPU has FMA (AVX2 on)
ROUNDED_FMA = -1.0  # 16-bit uniforms on [a, b): a float32 FMA rounded to 16 bits, equal here; where PyTorch's loop
#                     rounds twice, a float32 last bit can round a few of them the other way: >= 99% equal, the
#                     rest within a 16-bit ulp (a wrong formula, such as bounds rounded to 16 bits, moves 14-27%)
HALF_ULP, BF16_ULP = 4e-3, 3.2e-2   # one ulp at |x| < 4: a 16-bit normal is a rounded float32 one, which can round
#                                     the other way where its float32 log, sin or cos differ in the last bit


def _array(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, mg.bfloat16) or str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def check_same_draws(make, tol=EXACT, seed=0):
    """``make(lib)`` after ``lib.manual_seed(seed)`` in minigrad and in PyTorch: the same values (and dtype name,
    shape), and the generators left in the same state."""
    mg.manual_seed(seed)
    torch.manual_seed(seed)
    ours, theirs = make(mg), make(torch)
    a, b = _array(ours), _array(theirs)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert a.shape == b.shape
    if tol == EXACT:
        np.testing.assert_array_equal(a, b)
    elif tol == LIBM:
        np.testing.assert_allclose(a, b, rtol=LIBM, atol=0)
    elif tol == ROUNDED_FMA:
        assert np.mean(a == b) >= 0.99, f"{np.mean(a != b):.1%} of the 16-bit draws differ"
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=2 ** -7, atol=0)
    else:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=0, atol=tol)
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), torch.get_rng_state().numpy())


def _flat_parameters(lib, module):
    return lib.cat([p.detach().reshape(-1) for p in module.parameters()])


DRAWS = {
    "rand": (lambda L: L.rand(3, 7), EXACT),
    "rand float64": (lambda L: L.rand(5, 4, dtype=L.float64), EXACT),
    "rand float16": (lambda L: L.rand(40, dtype=L.float16), EXACT),
    "rand bfloat16": (lambda L: L.rand(40, dtype=L.bfloat16), EXACT),
    "rand complex128": (lambda L: L.view_as_real(L.rand(6, dtype=L.complex128)), EXACT),
    "uniform_ bounds": (lambda L: L.empty(300).uniform_(-2, 3), FMA),
    "uniform_ float64 bounds": (lambda L: L.empty(300, dtype=L.float64).uniform_(-2, 3), LIBM),
    # a draw that rounds to the upper bound is the lower one: 11 of the 4,000 bfloat16 draws and 3 of the float16
    # ones round to 1; on the narrow ranges about half the draws round up, in every dtype
    "rand bfloat16, 4000 draws (those rounding to 1 are 0)": (lambda L: L.rand(4000, dtype=L.bfloat16), EXACT),
    "rand float16, 4000 draws": (lambda L: L.rand(4000, dtype=L.float16), EXACT),
    "uniform_ float32 on [1, 1 + 2^-23)": (lambda L: L.empty(100).uniform_(1.0, 1.0 + 2 ** -23), EXACT),
    "uniform_ bfloat16 on [1, 1 + 2^-7)": (lambda L: L.empty(100, dtype=L.bfloat16).uniform_(1.0, 1.0078125), EXACT),
    "uniform_ float64 on [1, 1 + 2^-52)": (lambda L: L.empty(100, dtype=L.float64).uniform_(1.0, 1.0 + 2 ** -52),
                                           EXACT),
    # 16-bit draws are float32 arithmetic on float32 bounds, rounded once at the end (not on 16-bit bounds)
    "uniform_ float16 on [0.1, 0.7)": (lambda L: L.empty(2000, dtype=L.float16).uniform_(0.1, 0.7), ROUNDED_FMA),
    "uniform_ bfloat16 on [0.3, 1.9)": (lambda L: L.empty(2000, dtype=L.bfloat16).uniform_(0.3, 1.9), ROUNDED_FMA),
    "randn, 20 elements": (lambda L: L.randn(4, 5), FLOAT32_NORMAL),
    "randn, 3 elements (one pair at a time)": (lambda L: L.randn(3), FLOAT32_NORMAL),
    "randn, 1000 elements": (lambda L: L.randn(1000), FLOAT32_NORMAL),
    "randn float64 fill": (lambda L: L.randn(37, dtype=L.float64), EXACT),
    "randn float64, 4,000 elements (16 at a time)": (lambda L: L.randn(4000, dtype=L.float64), EXACT),
    "randn float16": (lambda L: L.randn(40, dtype=L.float16), HALF_ULP),
    "randn bfloat16": (lambda L: L.randn(100, dtype=L.bfloat16), BF16_ULP),
    "randn complex64": (lambda L: L.view_as_real(L.randn(9, dtype=L.complex64)), FLOAT32_NORMAL),
    "normals kept across calls": (lambda L: L.cat([L.randn(3, dtype=L.float64), L.randn(1, dtype=L.float64),
                                                   L.randn(20, dtype=L.float64), L.randn(5, dtype=L.float64)]),
                                  EXACT),
    "normal(mean, std, size)": (lambda L: L.normal(2.0, 3.0, (33,)), 3 * FLOAT32_NORMAL),
    "normal(tensor, tensor)": (lambda L: L.normal(L.arange(20.0), L.full((20,), 2.0)), 4 * FLOAT32_NORMAL),
    "normal(tensor, number)": (lambda L: L.normal(L.arange(20.0), 0.5), 4 * FLOAT32_NORMAL),
    "normal_ of a transposed tensor": (lambda L: L.empty(6, 5, dtype=L.float64).t().normal_(), EXACT),
    "uniform_ of a sliced tensor": (lambda L: L.zeros(4, 6)[:, ::2].uniform_(), EXACT),
    "uniform_ of a permuted tensor": (lambda L: L.zeros(2, 3, 4).permute(2, 0, 1).uniform_(), EXACT),
    "rand_like of a transposed tensor (its memory order)": (lambda L: L.rand_like(L.zeros(4, 5).t()), EXACT),
    "rand_like of a sliced tensor (a contiguous result)": (lambda L: L.rand_like(L.zeros(4, 6)[:, ::2]), EXACT),
    "rand_like of a permuted, sliced tensor (dense, in its order)": (
        lambda L: L.rand_like(L.zeros(5, 8, 6).permute(0, 2, 1)[..., ::2]), EXACT),
    "randn_like of a sliced tensor (contiguous: 16 at a time)": (
        lambda L: L.randn_like(L.zeros(6, 40)[:, ::2]), FLOAT32_NORMAL),
    "randn_like of a permuted, sliced tensor (one pair at a time)": (
        lambda L: L.randn_like(L.zeros(9, 10, 9, dtype=L.float64).permute(1, 2, 0)[..., ::2]), EXACT),
    "randn_like of a transposed tensor (one pair at a time)": (lambda L: L.randn_like(L.zeros(8, 5).t()), 1e-6),
    "randint_like of a transposed tensor": (lambda L: L.randint_like(L.zeros(4, 5).t(), 0, 100), EXACT),
    "bernoulli of transposed probabilities (a contiguous result)": (
        lambda L: L.bernoulli(L.linspace(0, 1, 20).reshape(4, 5).t()), EXACT),
    "normal_ with mean and std": (lambda L: L.empty(17).normal_(1.0, 2.0), 2 * FLOAT32_NORMAL),
    "randint": (lambda L: L.randint(3, 1000, (50,)), EXACT),
    "randint from 2^28 on (64-bit draws)": (lambda L: L.randint(0, 2 ** 28, (50,)), EXACT),
    "randint below 2^28": (lambda L: L.randint(0, 2 ** 28 - 1, (50,)), EXACT),
    "randint wide and negative": (lambda L: L.randint(-2 ** 40, 2 ** 40, (50,)), EXACT),
    "randint int32 wide": (lambda L: L.randint(-5, 2 ** 31 - 1, (50,), dtype=L.int32), EXACT),
    "randint float": (lambda L: L.randint(0, 10, (50,), dtype=L.float32), EXACT),
    "randint_like": (lambda L: L.randint_like(L.zeros(7, dtype=L.int16), 3, 9), EXACT),
    "randperm": (lambda L: L.randperm(100), EXACT),
    "randperm int32": (lambda L: L.randperm(9, dtype=L.int32), EXACT),
    "random_ int64": (lambda L: L.empty(10, dtype=L.int64).random_(), EXACT),
    "random_ int32": (lambda L: L.empty(10, dtype=L.int32).random_(), EXACT),
    "random_ uint8": (lambda L: L.empty(10, dtype=L.uint8).random_(), EXACT),
    "random_ bool": (lambda L: L.empty(10, dtype=L.bool).random_(), EXACT),
    "random_ float32": (lambda L: L.empty(10).random_(), EXACT),
    "random_ float64": (lambda L: L.empty(10, dtype=L.float64).random_(), EXACT),
    "random_(to)": (lambda L: L.empty(10, dtype=L.int64).random_(7), EXACT),
    "random_(from, to)": (lambda L: L.empty(10).random_(5, 9), EXACT),
    "bernoulli of float32 probabilities": (lambda L: L.bernoulli(L.linspace(0, 1, 40)), EXACT),
    "bernoulli of float64 probabilities": (lambda L: L.bernoulli(L.linspace(0, 1, 40, dtype=L.float64)), EXACT),
    "bernoulli_ with a tensor": (lambda L: L.empty(4, 10).bernoulli_(L.linspace(0, 1, 10)), EXACT),
    "cauchy_": (lambda L: L.empty(2000, dtype=L.float64).cauchy_(1.0, 2.0), EXACT),
    "log_normal_": (lambda L: L.empty(2000, dtype=L.float64).log_normal_(), EXACT),
    "geometric_": (lambda L: L.empty(40).geometric_(0.3), EXACT),
    "rrelu in training": (lambda L: L.nn.functional.rrelu(L.linspace(-1, 1, 20), training=True), 1e-7),
    "Linear": (lambda L: _flat_parameters(L, L.nn.Linear(64, 32)), FMA),
    "Conv2d": (lambda L: _flat_parameters(L, L.nn.Conv2d(3, 4, 3)), FMA),
    "Embedding": (lambda L: _flat_parameters(L, L.nn.Embedding(10, 4)), FLOAT32_NORMAL),
    "LSTM": (lambda L: _flat_parameters(L, L.nn.LSTM(4, 5, 2)), FMA),
    "GRU": (lambda L: _flat_parameters(L, L.nn.GRU(4, 5)), FMA),
    "MultiheadAttention": (lambda L: _flat_parameters(L, L.nn.MultiheadAttention(8, 2)), FMA),
    "TransformerEncoderLayer": (lambda L: _flat_parameters(L, L.nn.TransformerEncoderLayer(8, 2, 16)), FMA),
    "xavier_normal_": (lambda L: L.nn.init.xavier_normal_(L.empty(6, 4)), FLOAT32_NORMAL),
    "kaiming_normal_": (lambda L: L.nn.init.kaiming_normal_(L.empty(6, 4)), FLOAT32_NORMAL),
    "trunc_normal_, normal draws redrawn": (lambda L: L.nn.init.trunc_normal_(L.empty(300), std=0.02), 1e-7),
    "trunc_normal_, a tail by acceptance": (lambda L: L.nn.init.trunc_normal_(L.empty(300), a=2.0, b=3.0), 1e-6),
    "orthogonal_": (lambda L: L.nn.init.orthogonal_(L.empty(4, 6, dtype=L.float64)), 1e-12),
    "sparse_": (lambda L: L.nn.init.sparse_(L.empty(6, 4), 0.5), 1e-7),
    "random_split": (lambda L: L.tensor([i for s in L.utils.data.random_split(range(10), [4, 6]) for i in s.indices]),
                     EXACT),
    "DataLoader with shuffle": (lambda L: L.cat(list(L.utils.data.DataLoader(L.arange(20), batch_size=4,
                                                                             shuffle=True))), EXACT),
    "RandomSampler with replacement": (lambda L: L.tensor(list(L.utils.data.RandomSampler(
        range(10), replacement=True, num_samples=40))), EXACT),
    "SubsetRandomSampler": (lambda L: L.tensor(list(L.utils.data.SubsetRandomSampler([3, 5, 7, 9]))), EXACT),
    "a Generator object": (lambda L: L.randn(20, generator=L.Generator().manual_seed(11)), FLOAT32_NORMAL),
    "multinomial with replacement": (lambda L: L.multinomial(L.rand(4, 7), 20, replacement=True), EXACT),
    "WeightedRandomSampler": (lambda L: L.tensor(list(L.utils.data.WeightedRandomSampler([0.1, 0.9, 0.4], 30))),
                              EXACT),
    "poisson": (lambda L: L.poisson(L.tensor([0.5, 3.0, 12.0, 50.0, 0.0, 9.9, 100.0] * 3)), EXACT),
    "binomial": (lambda L: L.binomial(L.tensor([0.0, 5, 10, 30, 100, 1000, 7, 50, 200, 3] * 2),
                                      L.tensor([0.3, 0.5, 0.9, 0.2, 0.6, 0.01, 1.0, 0.97, 0.45, 0.0] * 2)), EXACT),
    "gamma draws, float32 arithmetic": (lambda L: L.distributions.Gamma(L.linspace(0.05, 20, 40),
                                                                        L.ones(40)).sample(), EXACT),
    "gamma draws, float64": (lambda L: L.distributions.Gamma(L.linspace(0.05, 20, 40, dtype=L.float64),
                                                             L.ones(40, dtype=L.float64)).sample(), LIBM),
}

D = {     # torch.distributions: sample and rsample draw as PyTorch's do
    "Normal": lambda L: L.distributions.Normal(L.zeros(3), L.ones(3)).rsample((5,)),
    "Uniform": lambda L: L.distributions.Uniform(L.zeros(3), L.full((3,), 2.0)).sample((5,)),
    "Bernoulli": lambda L: L.distributions.Bernoulli(probs=L.full((20,), 0.3)).sample(),
    "Categorical": lambda L: L.distributions.Categorical(probs=L.tensor([0.2, 0.3, 0.5])).sample((10,)),
    "Laplace": lambda L: L.distributions.Laplace(L.zeros(10), L.ones(10)).sample(),
    "Gumbel": lambda L: L.distributions.Gumbel(L.zeros(10), L.ones(10)).sample(),
    "MultivariateNormal": lambda L: L.distributions.MultivariateNormal(L.zeros(3), L.eye(3)).sample((4,)),
    "LowRankMultivariateNormal": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(3), L.ones(3, 2), L.ones(3)).sample((4,)),
    "LogNormal": lambda L: L.distributions.LogNormal(L.zeros(10), L.ones(10)).sample(),
    "OneHotCategorical": lambda L: L.distributions.OneHotCategorical(probs=L.tensor([0.2, 0.3, 0.5])).sample((5,)),
    "RelaxedBernoulli": lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5), probs=L.full((5,), 0.3)).rsample(),
    "RelaxedOneHotCategorical": lambda L: L.distributions.RelaxedOneHotCategorical(
        L.tensor(0.5), probs=L.tensor([0.2, 0.3, 0.5])).rsample((3,)),
    "Cauchy": lambda L: L.distributions.Cauchy(L.zeros(10), L.ones(10)).sample(),
    "Geometric": lambda L: L.distributions.Geometric(probs=L.full((10,), 0.3)).sample(),
    "ContinuousBernoulli": lambda L: L.distributions.ContinuousBernoulli(probs=L.full((10,), 0.3)).sample(),
    "Gamma": lambda L: L.distributions.Gamma(L.full((10,), 0.3), L.ones(10)).rsample((2,)),
    "Beta": lambda L: L.distributions.Beta(L.ones(10) * 2, L.ones(10)).sample(),
    "Dirichlet": lambda L: L.distributions.Dirichlet(L.tensor([0.5, 1.0, 2.0])).sample((4,)),
    "StudentT": lambda L: L.distributions.StudentT(L.ones(10) * 3).sample(),
    "Poisson": lambda L: L.distributions.Poisson(L.ones(10) * 30).sample(),
    "Binomial": lambda L: L.distributions.Binomial(100, probs=L.full((10,), 0.7)).sample(),
    "NegativeBinomial": lambda L: L.distributions.NegativeBinomial(5, probs=L.full((10,), 0.3)).sample(),
    "VonMises": lambda L: L.distributions.VonMises(L.zeros(50), L.ones(50)).sample(),
    "MixtureSameFamily": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(probs=L.tensor([0.3, 0.7])),
        L.distributions.Normal(L.zeros(2), L.ones(2))).sample((5,)),
}

MASKS = {       # bernoulli_(p) with a number p (and exponential_): PyTorch's MKL build has paths of its own for these
    "exponential_": lambda L: L.empty(2000, dtype=L.float64).exponential_(2.0),
    "multinomial without replacement": lambda L: L.multinomial(L.rand(4, 7), 5),
    "Categorical, one sample": lambda L: L.distributions.Categorical(logits=L.randn(4, 6)).sample(),
    "Exponential": lambda L: L.distributions.Exponential(L.ones(10)).sample(),
    "bernoulli_(p)": lambda L: L.empty(40).bernoulli_(0.4),
    "bernoulli(x, p)": lambda L: L.bernoulli(L.zeros(40), 0.4),
    "dropout": lambda L: L.nn.functional.dropout(L.ones(50), 0.3),
    "dropout2d": lambda L: L.nn.functional.dropout2d(L.ones(4, 6, 2, 2), 0.3),
    "Dropout module": lambda L: L.nn.Dropout(0.5)(L.ones(64)),
    "dropout of a permuted input (its memory order)": lambda L: L.nn.Dropout(0.3)(L.ones(2, 3, 4).permute(2, 0, 1)),
    "native_dropout of a transposed input": lambda L: L.native_dropout(L.ones(4, 5).t(), 0.5, True)[0],
    "dropout of a permuted, sliced input": lambda L: L.nn.functional.dropout(L.ones(5, 8, 6).permute(2, 0, 1)[::2],
                                                                            0.4),
    "bernoulli(x, p) of a transposed x (a contiguous result)": lambda L: L.bernoulli(L.zeros(4, 5).t(), 0.5),
    "alpha_dropout": lambda L: L.nn.functional.alpha_dropout(L.ones(40), 0.3, True),
}


@pytest.mark.parametrize("name", DRAWS)
def test_the_same_seed_draws_pytorchs_numbers(name):
    make, tol = DRAWS[name]
    check_same_draws(make, tol)


@pytest.mark.parametrize("name", D)
def test_distributions_sample_pytorchs_numbers(name):
    check_same_draws(D[name], 1e-5)


@pytest.mark.parametrize("name", MASKS)
def test_dropout_masks_are_pytorchs(name):
    """Where PyTorch's MKL build draws these from MKL's own generator (Intel CPUs: another stream, not PyTorch's),
    the dtype and shape are compared; elsewhere the numbers and the generator state."""
    if MKL_BERNOULLI:
        mg.manual_seed(0)
        torch.manual_seed(0)
        ours, theirs = MASKS[name](mg), MASKS[name](torch)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        return
    check_same_draws(MASKS[name], 1e-6)


def test_many_float64_normals_off_the_fast_path_are_pytorchs_bits():
    """A transposed float64 tensor of 257 x 301 takes PyTorch's scalar Box-Muller loop, the C library's log1p, sin
    and cos for each pair, as minigrad's compiled loop does: the same bits, and the odd count leaves the same kept
    sample in the state. (Through NumPy's SIMD log1p, a last bit apart for 7% of uniforms here, the values and the
    kept sample drifted: random_fuzz seed 83524.)"""
    check_same_draws(lambda L: L.empty(301, 257, dtype=L.float64).t().normal_(), EXACT)
    check_same_draws(lambda L: L.normal(L.zeros(2, 129, dtype=L.float64), 2.0), EXACT)


def test_seeds_wrap_as_pytorchs():
    for seed in (2 ** 32 + 5, -1, 2 ** 64 - 1):
        check_same_draws(lambda L: L.rand(4), seed=seed)
        assert mg.initial_seed() == torch.initial_seed()


def test_states_are_pytorchs_bytes_and_travel_both_ways():
    mg.manual_seed(3)
    torch.manual_seed(3)
    for lib in (mg, torch):
        lib.randn(5)             # leaves a kept normal sample in the state
        lib.rand(700)            # past one twist of the engine
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), torch.get_rng_state().numpy())
    state = torch.get_rng_state()
    mg.set_rng_state(mg.from_numpy(state.numpy()))
    torch.manual_seed(99)
    torch.set_rng_state(torch.from_numpy(mg.get_rng_state().numpy()))
    np.testing.assert_allclose(mg.randn(7).numpy(), torch.randn(7).numpy(), rtol=0, atol=FLOAT32_NORMAL)
    g, tg = mg.Generator(), torch.Generator()
    g.set_state(mg.from_numpy(tg.manual_seed(8).get_state().numpy()))
    np.testing.assert_array_equal(mg.rand(9, generator=g).numpy(), torch.rand(9, generator=tg).numpy())


def test_bad_states_are_refused_as_pytorch_refuses_them():
    good = torch.get_rng_state().numpy()
    short = good[:100].copy()
    bad_left = good.copy()
    bad_left[8:12] = np.frombuffer(np.int32(0).tobytes(), np.uint8)      # 'left' must be 1..624
    for state, error in ((short, RuntimeError), (bad_left, RuntimeError)):
        before = mg.get_rng_state().numpy()
        with pytest.raises(error):
            torch.set_rng_state(torch.from_numpy(state))
        with pytest.raises(error):
            mg.set_rng_state(mg.from_numpy(state))
        np.testing.assert_array_equal(mg.get_rng_state().numpy(), before)
    with pytest.raises(TypeError):
        torch.set_rng_state(torch.zeros(5056))
    with pytest.raises(TypeError):
        mg.set_rng_state(mg.zeros(5056))


def test_samplers_at_their_edges_answer_as_pytorchs():
    """A NaN Poisson rate is refused; an infinite or huge one gives the int64 the CPU converts it to (the lowest);
    a gamma of concentration 0 or NaN is the dtype's tiny number; a binomial of NaN probability is NaN."""
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            lib.poisson(lib.tensor([1.0, float("nan")]))
    check_same_draws(lambda L: L.poisson(L.tensor([float("inf"), 1e30, 1e17, 3.0])))
    check_same_draws(lambda L: L.binomial(L.tensor([10.0, 5.0]), L.tensor([float("nan"), 0.5])))
    check_same_draws(lambda L: L.distributions.Gamma(L.tensor([0.0, 2.0]), L.ones(2), validate_args=False).sample())


def test_both_ways_to_the_c_library_give_the_same_bits():
    """Float64 draws (and lgamma) reach the C library's functions through Python's math module (ctypes for lgamma;
    fewer than ``LIBM_COMPILED_FROM`` values, numba not loaded) or numba's ufuncs: the same functions, the same bits."""
    from minigrad import _pytorch_stream as stream
    from minigrad.kernels import libm_numba
    u = np.random.default_rng(0).random(5000)
    special = np.array([0.0, -0.0, -1.0, -2.0, 1000.0, -1000.0, np.inf, -np.inf, np.nan])   # math raises for some
    for name, x in (("log", u), ("log1p", -u), ("exp", 10 * u - 5), ("sin", 7 * u), ("cos", 7 * u),
                    ("tan", 3 * u - 1.5), ("lgamma", 10 * u - 5)):
        x = np.concatenate([x, special])
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(getattr(stream._MathFunctions(), name)(x), getattr(libm_numba, name)(x))
    with np.errstate(all="ignore"):
        mg.manual_seed(0)
        assert np.isinf(mg.empty(10, dtype=mg.float64).log_normal_(1000.0, 1.0).numpy()).all()   # exp overflows


def test_a_numba_with_svml_leaves_the_draws_to_the_c_library(monkeypatch):
    """numba vectorises math with Intel's SVML where that is installed (other roundings than the C library's):
    then every draw takes Python's math module, and PyTorch's bits stay."""
    from minigrad import _pytorch_stream as stream
    monkeypatch.setattr(stream, "_numba_uses_svml", lambda: True)
    assert isinstance(stream.libm(10 ** 6), stream._MathFunctions)
    check_same_draws(lambda L: L.empty(50, 61, dtype=L.float64).t().normal_(), EXACT)
