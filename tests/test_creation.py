"""Creation and random functions, legacy constructors and ``Tensor.type``/``new_*``, mirrored against PyTorch:
dtypes, shapes, defaults, values where they are deterministic and error types. Random functions are checked here
for shape, dtype, support, distribution moments and reproducibility with the same seed; that they draw PyTorch's
numbers after the same seed is tests/test_random_stream.py's subject."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from tests.mirror import torch_or_skip, torch_raises
from tests.strategies import shapes


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def assert_same(ours, theirs, values=True):
    """Same dtype and shape (and, for deterministic results, the same values) as PyTorch's tensor."""
    assert isinstance(ours, mg.Tensor)
    assert str(ours.dtype) == dtype_name(theirs), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    if values:
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=0)


# --------------------------------------------------------------------------- deterministic creators
DETERMINISTIC = {
    "zeros": lambda lib: lib.zeros(2, 3),
    "zeros_tuple": lambda lib: lib.zeros((2, 3), dtype=lib.int64),
    "zeros_list": lambda lib: lib.zeros([2, 3], requires_grad=True),
    "zeros_scalar": lambda lib: lib.zeros(()),
    "ones": lambda lib: lib.ones(4, dtype=lib.float64),
    "full_int": lambda lib: lib.full((2,), 7),
    "full_float": lambda lib: lib.full((2, 2), 1.5),
    "full_bool": lambda lib: lib.full((2,), True),
    "full_dtype": lambda lib: lib.full((3,), 2, dtype=lib.float64, requires_grad=True),
    "zeros_like": lambda lib: lib.zeros_like(lib.ones(2, 3, dtype=lib.float64)),
    "ones_like_dtype": lambda lib: lib.ones_like(lib.ones(2), dtype=lib.int64),
    "full_like": lambda lib: lib.full_like(lib.arange(3), 2.7),
    "full_like_float": lambda lib: lib.full_like(lib.zeros(3), 2.5, requires_grad=True),
    "arange": lambda lib: lib.arange(5),
    "arange_start": lambda lib: lib.arange(2, 9, 3),
    "arange_float": lambda lib: lib.arange(0.0, 1.0, 0.25),
    "arange_dtype": lambda lib: lib.arange(4, dtype=lib.float32),
    "linspace": lambda lib: lib.linspace(-1, 1, 5),
    "linspace_one": lambda lib: lib.linspace(0, 1, 1),
    "linspace_empty": lambda lib: lib.linspace(0, 1, 0),
    "linspace_f64": lambda lib: lib.linspace(0, 3, 7, dtype=lib.float64, requires_grad=True),
    "linspace_int": lambda lib: lib.linspace(0, 10, 5, dtype=lib.int64),
    "logspace": lambda lib: lib.logspace(0, 2, 3),
    "logspace_base": lambda lib: lib.logspace(-1, 3, 5, base=2, dtype=lib.float64),
    "eye": lambda lib: lib.eye(3),
    "eye_rect": lambda lib: lib.eye(2, 4, dtype=lib.int64),
    "tensor_device": lambda lib: lib.tensor([[1, 2]], dtype=lib.float64, device="cpu", requires_grad=True),
    "as_tensor": lambda lib: lib.as_tensor([1.5, 2], dtype=lib.float64, device="cpu"),
}


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_deterministic_creators_mirror_torch(name):
    torch = torch_or_skip()
    assert_same(DETERMINISTIC[name](mg), DETERMINISTIC[name](torch))


@pytest.mark.parametrize("name", ["empty", "empty_like"])
def test_empty_shape_and_dtype(name):
    torch = torch_or_skip()
    make = {"empty": lambda lib: lib.empty(2, 3, dtype=lib.float64),
            "empty_like": lambda lib: lib.empty_like(lib.ones(4, dtype=lib.int64))}[name]
    assert_same(make(mg), make(torch), values=False)


def test_default_dtype_reaches_every_float_creator():
    torch = torch_or_skip()
    makers = [lambda lib: lib.zeros(2), lambda lib: lib.linspace(0, 1, 2), lambda lib: lib.logspace(0, 1, 2),
              lambda lib: lib.eye(2), lambda lib: lib.full((1,), 1.0), lambda lib: lib.Tensor([1]),
              lambda lib: lib.rand(2), lambda lib: lib.randn(2), lambda lib: lib.normal(0.0, 1.0, (2,))]
    for lib in (mg, torch):
        lib.set_default_dtype(lib.float64)
    try:
        for make in makers:
            assert str(make(mg).dtype) == dtype_name(make(torch)) == "float64"
    finally:
        for lib in (mg, torch):
            lib.set_default_dtype(lib.float32)


BAD_CALLS = {
    "zeros_negative": lambda lib: lib.zeros(2, -1),
    "randn_negative": lambda lib: lib.randn(-1),
    "arange_zero_step": lambda lib: lib.arange(0, 5, 0),
    "linspace_negative": lambda lib: lib.linspace(0, 1, -1),
    "logspace_negative": lambda lib: lib.logspace(0, 1, -2),
    "eye_negative": lambda lib: lib.eye(-1),
    "randint_empty_range": lambda lib: lib.randint(5, 3, (2,)),
    "randint_no_size": lambda lib: lib.randint(5),
    "randint_int_size": lambda lib: lib.randint(5, 3),
    "randint_requires_grad": lambda lib: lib.randint(3, (2,), requires_grad=True),
    "randn_int": lambda lib: lib.randn(2, dtype=lib.int64),
    "rand_int": lambda lib: lib.rand(2, dtype=lib.int64),
    "rand_like_int": lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)),
    "normal_negative_std": lambda lib: lib.normal(lib.zeros(2), -1.0),
    "normal_negative_std_number": lambda lib: lib.normal(0.0, -1.0, (2,)),
    "normal_numbers_no_size": lambda lib: lib.normal(0.0, 1.0),
    "normal_tensor_with_dtype": lambda lib: lib.normal(lib.zeros(2), 1.0, dtype=lib.float64),
    "normal_tensor_with_size": lambda lib: lib.normal(lib.zeros(2), 1.0, size=(2,)),
    "bernoulli_out_of_range": lambda lib: lib.bernoulli(lib.full((3,), 1.5)),
    "bernoulli_int": lambda lib: lib.bernoulli(lib.ones(3, dtype=lib.int64)),
    "multinomial_too_many": lambda lib: lib.multinomial(lib.tensor([0.1, 0.9]), 3),
    "multinomial_negative": lambda lib: lib.multinomial(lib.tensor([-1.0, 1.0]), 1),
    "multinomial_zero_sum": lambda lib: lib.multinomial(lib.zeros(3), 1),
    "multinomial_3d": lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    "multinomial_no_samples": lambda lib: lib.multinomial(lib.ones(3), 0),
    "poisson_negative": lambda lib: lib.poisson(lib.tensor([-1.0])),
    "poisson_int": lambda lib: lib.poisson(lib.tensor([1, 2])),
    "multinomial_int": lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    "normal_shapes_mismatch": lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(6)),
    "randperm_negative": lambda lib: lib.randperm(-1),
    "Tensor_negative": lambda lib: lib.Tensor(-1),
    "Tensor_float": lambda lib: lib.Tensor(3.5),
    "Tensor_str": lambda lib: lib.Tensor("abc"),
    "Tensor_mixed_sizes": lambda lib: lib.Tensor(2, "a"),
    "Tensor_two_lists": lambda lib: lib.Tensor([1, 2], [3]),
    "LongTensor_of_float_tensor": lambda lib: lib.LongTensor(lib.zeros(2)),
    "type_unknown_name": lambda lib: lib.zeros(2).type("foo"),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_calls_raise_torchs_error_type(name):
    theirs = torch_raises(lambda torch: BAD_CALLS[name](torch))
    with pytest.raises(theirs.type):
        BAD_CALLS[name](mg)


def test_errors_name_the_argument():
    with pytest.raises(RuntimeError, match=r"negative dimension -1: \[2, -1\]"):
        mg.zeros(2, -1)
    with pytest.raises(RuntimeError, match="from=5 >= to=3"):
        mg.randint(5, 3, (2,))
    with pytest.raises(TypeError, match="'size' must be tuple of ints, not int"):
        mg.randint(5, 3)
    with pytest.raises(NotImplementedError, match="must be a floating-point dtype, got int64"):
        mg.randn(2, dtype=mg.int64)
    with pytest.raises(RuntimeError, match=r"num_samples=3, 2 categories"):
        mg.multinomial(mg.tensor([0.1, 0.9]), 3)


# --------------------------------------------------------------------------- legacy constructors
LEGACY = {
    "Tensor_list": lambda lib: lib.Tensor([1, 2]),
    "Tensor_nested": lambda lib: lib.Tensor([[1, 2], [3, 4.5]]),
    "Tensor_tuple_is_data": lambda lib: lib.Tensor((2, 3)),
    "Tensor_empty": lambda lib: lib.Tensor(),
    "FloatTensor": lambda lib: lib.FloatTensor([1, 2]),
    "DoubleTensor": lambda lib: lib.DoubleTensor([1.25]),
    "HalfTensor": lambda lib: lib.HalfTensor([0.5]),
    "LongTensor": lambda lib: lib.LongTensor([1.7, -2.7, 3]),
    "IntTensor": lambda lib: lib.IntTensor([[1, 2]]),
    "ShortTensor": lambda lib: lib.ShortTensor([4]),
    "CharTensor": lambda lib: lib.CharTensor([-4]),
    "ByteTensor": lambda lib: lib.ByteTensor([200]),
    "BoolTensor": lambda lib: lib.BoolTensor([1, 0, 2]),
    "LongTensor_empty": lambda lib: lib.LongTensor(),
}


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructors_from_data_mirror_torch(name):
    torch = torch_or_skip()
    assert_same(LEGACY[name](mg), LEGACY[name](torch))


@pytest.mark.parametrize("sizes", [(3,), (2, 3), (0, 4), (2, 1, 2)])
@pytest.mark.parametrize("name", ["Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor"])
def test_legacy_constructors_from_sizes_mirror_torch(name, sizes):
    torch = torch_or_skip()
    assert_same(getattr(mg, name)(*sizes), getattr(torch, name)(*sizes), values=False)


@given(shape=shapes(min_dims=1, min_side=0), name=st.sampled_from(["Tensor", "FloatTensor", "DoubleTensor", "LongTensor",
                                                       "IntTensor", "BoolTensor"]),
       seed=st.integers(0, 2**16))
def test_legacy_constructors_from_nested_lists_mirror_torch(shape, name, seed):
    torch = torch_or_skip()
    data = (np.random.default_rng(seed).standard_normal(shape) * 3).tolist()
    assert_same(getattr(mg, name)(data), getattr(torch, name)(data))
    assert_same(getattr(mg, name)(*shape), getattr(torch, name)(*shape), values=False)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_legacy_new_mirrors_torch(dtype):
    torch = torch_or_skip()
    x, t = mg.zeros(1, dtype=np.dtype(dtype)), torch.zeros(1, dtype=getattr(torch, dtype))
    assert_same(x.new([1.5, 0, 2]), t.new([1.5, 0, 2]))
    assert_same(x.new(2, 3), t.new(2, 3), values=False)
    assert_same(x.new(), t.new())
    assert np.shares_memory(x.new(x).numpy(), x.numpy())
    with pytest.raises(TypeError):
        t.new(torch.zeros(2, dtype=torch.float16))
    with pytest.raises(TypeError, match="expected a tensor of dtype"):
        x.new(mg.zeros(2, dtype=mg.float16))


def test_legacy_constructor_of_a_tensor_shares_its_memory():
    x = mg.tensor([1.0, 2.0])
    y = mg.Tensor(x)
    assert y is not x and np.shares_memory(y.numpy(), x.numpy())
    ints = mg.arange(3)
    assert np.shares_memory(mg.LongTensor(ints).numpy(), ints.numpy())


def test_tensor_of_an_ndarray_is_the_internal_constructor():
    """A documented difference: minigrad's Tensor(ndarray) keeps the array (dtype, memory) as is; PyTorch's
    copies it into the default dtype. ``mg.tensor``/``mg.from_numpy`` are the portable spellings."""
    array = np.arange(3)
    t = mg.Tensor(array)
    assert t.numpy() is array and t.dtype == mg.int64
    assert mg.Tensor(np.float64(2.5)).dtype == mg.float64
    assert mg.Tensor(array, requires_grad=False).numpy() is array


def test_isinstance_of_legacy_types_follows_the_dtype():
    torch = torch_or_skip()
    for lib in (mg, torch):
        f, i = lib.zeros(2), lib.zeros(2, dtype=lib.int64)
        assert isinstance(f, lib.FloatTensor) and not isinstance(f, lib.LongTensor)
        assert isinstance(i, lib.LongTensor) and not isinstance(i, lib.FloatTensor)
        assert isinstance(f, lib.Tensor) and isinstance(i, lib.Tensor)
        assert type(lib.FloatTensor([1])) is lib.Tensor
    assert isinstance(mg.nn.Parameter(mg.zeros(2)), mg.FloatTensor)
    assert repr(mg.FloatTensor) == "<class 'minigrad.FloatTensor'>"


# --------------------------------------------------------------------------- Tensor.type, new_*, predicates
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                                   "bool"])
def test_type_name_mirrors_torch(dtype):
    torch = torch_or_skip()
    assert mg.zeros(2, dtype=np.dtype(dtype)).type() == \
        torch.zeros(2, dtype=getattr(torch, dtype)).type().replace("torch.", "minigrad.")


def test_type_casts_like_torch():
    torch = torch_or_skip()
    for lib, prefix in ((mg, "minigrad."), (torch, "torch.")):
        x = lib.tensor([1.5, -2.5])
        assert x.type(lib.float32) is x and x.type(lib.FloatTensor) is x
        assert dtype_name(x.type(lib.float64)) == "float64"
        assert dtype_name(x.type(lib.LongTensor)) == "int64"
        assert dtype_name(x.type(prefix + "IntTensor")) == "int32"
        assert x.type(prefix + "LongTensor").tolist() == [1, -2]
    assert str(mg.tensor([1.0]).type("torch.DoubleTensor").dtype) == "float64"  # ported strings work


def test_type_cast_is_differentiable():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    x.type(mg.DoubleTensor).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert x.grad.dtype == mg.float32


NEW = {
    "new_zeros": lambda x: x.new_zeros(2, 3),
    "new_zeros_tuple": lambda x: x.new_zeros((2,)),
    "new_ones": lambda x: x.new_ones(2),
    "new_empty_shape": lambda x: x.new_empty(3, 1).zero_(),
    "new_full": lambda x: x.new_full((2,), 2.5),
    "new_tensor": lambda x: x.new_tensor([1.5, 2.0]),
    "new_tensor_nested": lambda x: x.new_tensor([[True, False]]),
}


@pytest.mark.parametrize("dtype", ["float64", "int64"])
@pytest.mark.parametrize("name", NEW)
def test_new_methods_mirror_torch(name, dtype):
    torch = torch_or_skip()
    assert_same(NEW[name](mg.zeros(1, dtype=np.dtype(dtype))), NEW[name](torch.zeros(1, dtype=getattr(torch, dtype))))


def test_new_methods_take_dtype_and_copy():
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.zeros(1)
        assert dtype_name(x.new_ones(2, dtype=lib.int64)) == "int64"
        assert dtype_name(x.new_full((1,), 1, dtype=lib.bool)) == "bool"
        assert dtype_name(x.new_zeros(1, requires_grad=True)) == "float32"
    data = np.ones(2, dtype=np.float32)
    copied = mg.zeros(1).new_tensor(data)
    assert not np.shares_memory(copied.numpy(), data)


def test_predicates_mirror_torch():
    torch = torch_or_skip()
    for dtype in ("float32", "float64", "int64", "uint8", "bool"):
        x, t = mg.zeros(1, dtype=np.dtype(dtype)), torch.zeros(1, dtype=getattr(torch, dtype))
        assert (x.is_floating_point(), x.is_complex(), x.is_signed()) == \
            (t.is_floating_point(), t.is_complex(), t.is_signed()), dtype
        assert mg.is_floating_point(x) == torch.is_floating_point(t)
        assert mg.is_complex(x) == torch.is_complex(t)
    assert mg.is_tensor(mg.zeros(1)) and not mg.is_tensor(np.zeros(1)) and not mg.is_tensor([1])


# --------------------------------------------------------------------------- random: shapes, dtypes, seeds
RANDOM = {
    "rand": lambda lib, **g: lib.rand(3, 4, **g),
    "rand_tuple_f64": lambda lib, **g: lib.rand((2, 3), dtype=lib.float64, requires_grad=True, **g),
    "randn": lambda lib, **g: lib.randn(5, **g),
    "randn_scalar": lambda lib, **g: lib.randn((), **g),
    "randint_high": lambda lib, **g: lib.randint(10, (3, 2), **g),
    "randint_low_high": lambda lib, **g: lib.randint(-5, 5, (4,), **g),
    "randint_keywords": lambda lib, **g: lib.randint(low=2, high=4, size=(3,), **g),
    "randint_dtype": lambda lib, **g: lib.randint(3, (2,), dtype=lib.float32, **g),
    "randperm": lambda lib, **g: lib.randperm(7, **g),
    "randperm_float": lambda lib, **g: lib.randperm(3, dtype=lib.float64, **g),
    "rand_like": lambda lib, **g: lib.rand_like(lib.ones(2, dtype=lib.float64), **g),
    "randn_like": lambda lib, **g: lib.randn_like(lib.ones(2, 3), requires_grad=True, **g),
    "randint_like": lambda lib, **g: lib.randint_like(lib.ones(2, 3), 7, **g),
    "randint_like_low": lambda lib, **g: lib.randint_like(lib.ones(4, dtype=lib.int64), 3, 9, **g),
    "normal_numbers": lambda lib, **g: lib.normal(2.0, 3.0, (4, 2), **g),
    "normal_tensors": lambda lib, **g: lib.normal(lib.zeros(2, 3, dtype=lib.float64), lib.ones(3), **g),
    "normal_mean_tensor": lambda lib, **g: lib.normal(lib.zeros(3), 2.0, **g),
    "normal_std_tensor": lambda lib, **g: lib.normal(1.0, lib.ones(2, 2, dtype=lib.float64), **g),
    "bernoulli": lambda lib, **g: lib.bernoulli(lib.full((5,), 0.5, dtype=lib.float64), **g),
    "bernoulli_p": lambda lib, **g: lib.bernoulli(lib.zeros(5), 0.3, **g),
    "multinomial": lambda lib, **g: lib.multinomial(lib.tensor([0.1, 0.2, 0.7]), 2, **g),
    "multinomial_rows": lambda lib, **g: lib.multinomial(lib.ones(4, 3), 5, replacement=True, **g),
    "poisson": lambda lib, **g: lib.poisson(lib.full((3,), 2.0), **g),
}


@pytest.mark.parametrize("name", RANDOM)
def test_random_functions_shapes_and_dtypes_mirror_torch(name):
    torch = torch_or_skip()
    assert_same(RANDOM[name](mg), RANDOM[name](torch), values=False)


@pytest.mark.parametrize("name", RANDOM)
def test_random_functions_reproduce_with_a_seed_and_a_generator(name):
    make = RANDOM[name]

    def drawn(**generator):
        return make(mg, **generator).detach().numpy().copy()

    mg.manual_seed(123)
    first = drawn()
    mg.manual_seed(123)
    np.testing.assert_array_equal(drawn(), first)  # the global stream
    g = mg.Generator().manual_seed(7)
    mine = drawn(generator=g)
    mg.manual_seed(123)
    np.testing.assert_array_equal(drawn(generator=mg.Generator().manual_seed(7)), mine)  # independent of global
    state = mg.default_generator.get_state()
    drawn(generator=g)
    np.testing.assert_array_equal(mg.default_generator.get_state().numpy(), state.numpy())  # global stream untouched


def test_random_values_stay_in_their_support():
    g = mg.Generator().manual_seed(0)
    u = mg.rand(10_000, generator=g).numpy()
    assert u.min() >= 0 and u.max() < 1
    ints = mg.randint(-3, 4, (10_000,), generator=g).numpy()
    assert set(np.unique(ints)) == set(range(-3, 4))
    np.testing.assert_array_equal(np.sort(mg.randperm(50, generator=g).numpy()), np.arange(50))
    assert set(np.unique(mg.bernoulli(mg.full((1000,), 0.5), generator=g).numpy())) == {0.0, 1.0}
    counts = mg.poisson(mg.full((1000,), 3.0), generator=g).numpy()
    np.testing.assert_array_equal(counts, np.round(counts))
    assert counts.min() >= 0


def _assert_mean(samples, expected, sigma):
    """The sample mean is within 6 standard errors of ``expected`` (fixed seeds: deterministic)."""
    assert abs(samples.mean() - expected) < 6 * sigma / np.sqrt(samples.size), (samples.mean(), expected)


def test_random_distributions_have_their_moments():
    g = mg.Generator().manual_seed(1)
    n = 200_000
    _assert_mean(mg.rand(n, generator=g, dtype=mg.float64).numpy(), 0.5, np.sqrt(1 / 12))
    z = mg.randn(n, generator=g, dtype=mg.float64).numpy()
    _assert_mean(z, 0.0, 1.0)
    _assert_mean(z ** 2, 1.0, np.sqrt(2))
    x = mg.normal(2.0, 3.0, (n,), generator=g).numpy().astype(np.float64)
    _assert_mean(x, 2.0, 3.0)
    _assert_mean((x - 2) ** 2, 9.0, 9 * np.sqrt(2))
    m = mg.normal(mg.full((n,), -1.0, dtype=mg.float64), mg.full((n,), 0.5, dtype=mg.float64), generator=g)
    _assert_mean(m.numpy(), -1.0, 0.5)
    _assert_mean(mg.bernoulli(mg.full((n,), 0.3), generator=g).numpy(), 0.3, np.sqrt(0.21))
    _assert_mean(mg.bernoulli(mg.zeros(n), 0.8, generator=g).numpy(), 0.8, np.sqrt(0.16))
    _assert_mean(mg.poisson(mg.full((n,), 4.0), generator=g).numpy(), 4.0, 2.0)
    _assert_mean(mg.randint(0, 10, (n,), generator=g).numpy().astype(float), 4.5, np.sqrt(99 / 12))


def test_multinomial_with_replacement_follows_the_weights():
    g = mg.Generator().manual_seed(2)
    weights = np.array([1.0, 0.0, 3.0, 6.0])  # unnormalized, as PyTorch allows
    n = 100_000
    draws = mg.multinomial(mg.tensor(weights), n, replacement=True, generator=g).numpy()
    p = weights / weights.sum()
    frequencies = np.bincount(draws, minlength=4) / n
    np.testing.assert_allclose(frequencies, p, atol=6 * np.sqrt(p * (1 - p) / n).max())
    assert frequencies[1] == 0


def test_multinomial_without_replacement_draws_distinct_categories_in_probability_order():
    g = mg.Generator().manual_seed(3)
    rows = mg.tensor(np.tile([0.05, 0.15, 0.8, 0.0], (20_000, 1)))
    draws = mg.multinomial(rows, 3, generator=g).numpy()                   # (20000, 3)
    assert all(len(set(row)) == 3 for row in draws[:500])
    assert 3 not in set(draws[:, :3].ravel())                              # weight 0 is never drawn among 3
    # first draw: categorical(p); second: the remaining weights renormalized
    first = np.bincount(draws[:, 0], minlength=4) / len(draws)
    np.testing.assert_allclose(first, [0.05, 0.15, 0.8, 0.0], atol=0.012)
    after_2 = draws[draws[:, 0] == 2, 1]
    np.testing.assert_allclose(np.mean(after_2 == 1), 0.15 / 0.2, atol=0.02)


def test_multinomial_of_a_single_sure_category():
    torch = torch_or_skip()
    for lib in (mg, torch):
        assert lib.multinomial(lib.tensor([0.0, 1.0, 0.0]), 4, replacement=True).tolist() == [1, 1, 1, 1]
        assert lib.multinomial(lib.tensor([[0.0, 2.0], [3.0, 0.0]]), 1).tolist() == [[1], [0]]


# --------------------------------------------------------------------------- gradients of samples
def test_normal_and_bernoulli_gradients_are_zero_as_in_torch():
    """PyTorch records normal/bernoulli samples in the graph with a zero gradient for the parameters."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        mean = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        std = lib.ones(3, dtype=lib.float64, requires_grad=True)
        p = lib.full((4,), 0.5, dtype=lib.float64, requires_grad=True)
        out = lib.normal(mean, std)
        assert out.requires_grad and out.grad_fn is not None
        (out.sum() + lib.normal(mean, 2.0).sum() + lib.normal(1.0, std).sum()).backward()
        sample = lib.bernoulli(p)
        assert sample.requires_grad
        sample.sum().backward()
        for t in (mean, std, p):
            assert tuple(t.grad.shape) == tuple(t.shape)
            assert not t.grad.detach().numpy().any()
        assert lib.bernoulli(lib.full((2,), 0.5, requires_grad=True), 0.5).requires_grad
        assert not lib.multinomial(p, 1).requires_grad


def test_python_floats_go_straight_to_the_asked_dtype():
    torch = torch_or_skip()
    for data in ([0.1, 1 / 3], 0.1, [[1e-40, 3.3]]):
        ours = mg.tensor(data, dtype=mg.float64).numpy()
        np.testing.assert_array_equal(ours, torch.tensor(data, dtype=torch.float64).numpy())  # exact: one rounding
        np.testing.assert_array_equal(ours, np.asarray(data, dtype=np.float64))


def test_bernoulli_and_multinomial_are_tensor_methods_as_in_torch():
    torch = torch_or_skip()
    for lib in (torch, mg):
        lib.manual_seed(0)
        p = lib.tensor([[0.0, 1.0], [1.0, 0.0]])
        assert p.bernoulli().tolist() == [[0.0, 1.0], [1.0, 0.0]]          # p of 0 and 1: exact
        assert p.multinomial(1).tolist() == [[1], [0]]


# --------------------------------------------------------------------------- Python numbers into integer dtypes
_NUMBERS = [-1, 256, -129, 127.5, -128.5, -255, -256, 70000, -70000, -65535, 2 ** 31, -2 ** 31 - 1, -2 ** 32 + 1,
            2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 70, 1.5, -1.5, -0.5, 255.9, 1e10, 1e19,
            float("nan"), float("inf"), True, 0]


def _made(lib, data, dtype):
    try:
        return "made", lib.tensor(data, dtype=getattr(lib, dtype)).tolist()
    except Exception as error:                                   # the exception type is compared
        return "raised", type(error).__name__


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "bool",
                                   "float16", "bfloat16", "float32"])
def test_python_numbers_convert_into_each_dtype_as_pytorch(dtype):
    """Each number as a scalar, in a list, a nested list and next to floats: PyTorch converts every number by its
    own Python type (an int down to -max wraps into an unsigned dtype, a float must lie in the range, uint64
    refuses floats and negative ints, a float target reads ints beyond 64 bits as doubles)."""
    torch = torch_or_skip()
    wrong = []
    for number in _NUMBERS:
        for data in (number, [number], [[number, 1], [2, 3]], [number, 1.0], [2.0, number, -1]):
            ours, theirs = _made(mg, data, dtype), _made(torch, data, dtype)
            if repr(ours) != repr(theirs):                # (repr: NaN equals NaN; conversions are exact)
                wrong.append(f"{data!r}: {ours}, PyTorch {theirs}")
    assert not wrong, "\n".join(wrong)


def test_negative_ints_wrap_into_unsigned_dtypes_without_torch():
    """c10's checked_convert lets an int down to -max wrap (PyTorch 2.13: tensor([-1], dtype=uint8) is [255])."""
    assert mg.tensor([-1, -129, -255, 3], dtype=mg.uint8).tolist() == [255, 127, 1, 3]
    assert mg.tensor(-1, dtype=mg.uint32).item() == 2 ** 32 - 1
    for data, dtype, error in [([-256], mg.uint8, RuntimeError), ([-1], mg.uint64, OverflowError),
                               ([1.5], mg.uint64, TypeError), ([-0.5], mg.uint8, RuntimeError),
                               ([127.5], mg.int8, RuntimeError)]:
        with pytest.raises(error):
            mg.tensor(data, dtype=dtype)
    assert mg.tensor([2.0, -1.5, 1], dtype=mg.int8).tolist() == [2, -1, 1]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint16", "uint64", "bool", "float32", "complex64"])
def test_numpy_scalars_convert_into_each_dtype_as_pytorch(dtype):
    """NumPy scalars in tensor()'s data, alone, in a list and nested: PyTorch reads them into an integer dtype as
    integers (np.float32 and np.bool_ are a TypeError there, np.float64 is a Python float; uint64 takes none) and
    into bool any but NumPy's non-double floats and complex numbers."""
    torch = torch_or_skip()
    wrong = []
    for number in [np.float32(1.5), np.float16(2.0), np.float64(1.5), np.int64(-1), np.uint8(200), np.int8(-3),
                   np.bool_(True), np.int64(300), np.complex64(1 + 0j)]:
        for data in (number, [number, 1], [[1, number]]):
            ours, theirs = _made(mg, data, dtype), _made(torch, data, dtype)
            if repr(ours) != repr(theirs):
                wrong.append(f"{data!r}: {ours}, PyTorch {theirs}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("make", ["tensor", "as_tensor", "asarray", "from_numpy"])
@pytest.mark.parametrize("dtype", [">i4", ">f8", ">c16"] if np.little_endian else ["<i4", "<f8", "<c16"])
def test_an_array_in_the_other_byte_order_is_refused_as_pytorch_refuses_it(make, dtype):
    array = np.array([1, 2], dtype=dtype)
    with pytest.raises(ValueError, match="byte order different from the native byte order"):
        getattr(mg, make)(array)
    assert mg.tensor(array.astype(array.dtype.newbyteorder("="))).tolist() == [1, 2]   # converted first: taken


@pytest.mark.parametrize("data, name", [([None], "NoneType"), ([1, None], "NoneType"), ([[1], [object()]], "object"),
                                        ([1, {}], "dict"), ([(1.5, set())], "set")])
def test_an_element_that_is_no_number_is_refused_as_pytorch_refuses_it(data, name):
    with pytest.raises(RuntimeError, match=f"^Could not infer dtype of {name}$"):
        mg.tensor(data)
