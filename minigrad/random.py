"""Random numbers: ``Generator`` (PyTorch's ``torch.Generator``) and the random tensor functions (``rand``,
``randn``, ``randint``, ``randperm``, their ``*_like`` forms, ``normal``, ``bernoulli``, ``multinomial``,
``poisson``).

A ``Generator`` is PyTorch's CPU generator: the same Mersenne Twister, seeded the same way, and the same state
bytes (``get_state``/``get_rng_state`` give PyTorch's 5056-byte tensor, and each library takes the other's). The
draws PyTorch's CPU kernels make from it are reproduced in ``minigrad/_pytorch_stream.py``: after the same
``manual_seed``, the random functions, the in-place fills, dropout, ``nn.init``, the samples of ``distributions``
and the random samplers give PyTorch's numbers (float32 normals within an ulp or a few, where PyTorch's vectorized
log, sin and cos round otherwise; the exceptions are in docs/differences.md).

Every random function takes ``generator=`` (a ``minigrad.Generator``, or a NumPy ``Generator``) and otherwise draws
from the global default generator, which ``minigrad.manual_seed`` reseeds. Unlike PyTorch, whose default generator
starts from a fresh random seed in each process, minigrad's starts from seed 0: a program that never seeds is
reproducible.
"""
import contextlib
import warnings

import numpy as np

from . import _pytorch_stream as stream
from ._checks import takes_tensors
from .device import CPU, check_device

_DEFAULT_SEED = 0


class Generator:
    """A random stream with PyTorch's interface (``manual_seed``, ``seed``, ``initial_seed``,
    ``get_state``/``set_state``) and its numbers. minigrad runs on the CPU only.

    ``numpy``: a NumPy ``Generator`` on the engine (its bit generator holds the stream's words).
    ``next_double_normal``/``next_float_normal``: the second sample of a Box-Muller pair kept for the next draw, as
    PyTorch's generator keeps it (part of the state)."""

    def __init__(self, device="cpu"):
        check_device(device)
        self.device = CPU
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF          # a negative seed wraps around, as PyTorch's
        self._initial_seed = seed
        self.numpy = np.random.Generator(stream.engine(seed))
        self.next_double_normal = self.next_float_normal = None
        return self

    def seed(self):
        """Reseed from fresh entropy; returns the new seed."""
        seed = int(np.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._initial_seed

    def clone_state(self):
        """A new Generator in this one's state (the two then draw the same numbers independently)."""
        return Generator().set_state(self.get_state())

    def get_state(self):
        """The stream's state as PyTorch's uint8 tensor of 5056 bytes (``torch.Generator.get_state``)."""
        return Tensor(stream.pack_state(self))

    def set_state(self, new_state):
        """Put the stream in ``new_state``: a uint8 tensor from ``get_state``, ``get_rng_state`` or PyTorch's."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        stream.unpack_state(self, new_state._data)
        return self

    def snapshot(self):
        """The state as a cheap Python value, to put back with ``restore`` in this process (``get_state`` packs
        PyTorch's bytes, which costs more: the op-by-op replays of forward AD and vmap use these)."""
        return self.numpy.bit_generator.state, self.next_double_normal, self.next_float_normal, self._initial_seed

    def restore(self, snapshot):
        state, self.next_double_normal, self.next_float_normal, self._initial_seed = snapshot
        self.numpy.bit_generator.state = state
        return self


def same_snapshot(a, b):
    """Whether two ``Generator.snapshot`` values are the same state."""
    (state_a, *rest_a), (state_b, *rest_b) = a, b
    return (rest_a == rest_b and state_a["state"]["pos"] == state_b["state"]["pos"]
            and np.array_equal(state_a["state"]["key"], state_b["state"]["key"]))


default_generator = Generator()


def manual_seed(seed):
    """Reseed minigrad's default generator (PyTorch's engine and seeding: the same numbers as PyTorch's)."""
    return default_generator.manual_seed(seed)


def seed():
    """Reseed the default generator from fresh entropy; returns the new seed (``torch.seed``)."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with (``torch.initial_seed``)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (``torch.get_rng_state``), for ``set_rng_state``."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Put the default generator in ``new_state``, a uint8 tensor from ``get_rng_state`` (or PyTorch's)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Within the block, draw from the default generator freely: its state is put back on leaving
    (``torch.random.fork_rng``; minigrad has no other device whose streams would need forking)."""
    if not enabled:
        yield
        return
    state = default_generator.snapshot()
    try:
        yield
    finally:
        default_generator.restore(state)


class _ForeignStream:
    """A NumPy ``Generator`` given as ``generator=``, drawn from with PyTorch's transformations (no kept sample)."""

    def __init__(self, numpy_generator):
        self.numpy, self.next_double_normal, self.next_float_normal = numpy_generator, None, None


def torch_stream(generator=None):
    """The generator PyTorch's transformations draw from (``_pytorch_stream``): the default one, a
    ``minigrad.Generator``, or a NumPy ``Generator`` wrapped."""
    if generator is None:
        return default_generator
    if isinstance(generator, Generator):
        return generator
    if isinstance(generator, np.random.Generator):
        return _ForeignStream(generator)
    raise TypeError(f"generator must be a minigrad.Generator, not {type(generator).__name__}")


# --------------------------------------------------------------------------- random tensors
from . import creation, dtypes  # noqa: E402  (creation imports tensor, which is built before anything draws)
from .autograd.function import Function, type_name  # noqa: E402
from .ops.elementwise import check_broadcast  # noqa: E402
from .tensor import Tensor  # noqa: E402
from .ops import layout  # noqa: E402
from .ops.layout import creation_keywords  # noqa: E402


def _float_dtype(dtype, kernel, default=None, complex_ok=False):
    """The float (``complex_ok``: or complex) dtype a sampler makes; PyTorch has no integer kernel for uniform or
    normal draws."""
    dtype = creation.dtype_or(dtype, default)
    if dtypes.kind_of(dtype) not in ("fc" if complex_ok else "f"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(dtype)}': the dtype must be a "
                                  f"floating-point dtype, got {dtype}")
    if dtype in dtypes.FLOAT8:                     # (float8 tensors can be made, not drawn into)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dtype)}'")
    return dtype


def _type_word(dtype):
    """PyTorch's word for a dtype in kernel errors: 'Long' for int64."""
    return type_name(dtype)[len("minigrad."):-len("Tensor")]


@creation_keywords
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples on [0, 1); a complex dtype draws its real and imaginary parts so, as PyTorch's."""
    dtype = _float_dtype(dtype, "check_uniform_bounds", complex_ok=True)
    gen = torch_stream(generator)
    values = sample_values(creation.size_of(size), dtype, lambda n, real: stream.uniform(gen, n, real))
    return creation.new_tensor(values, device, requires_grad)


@creation_keywords
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples; a complex dtype draws its real and imaginary parts each with variance 1/2 (so
    that |z|^2 has mean 1), as PyTorch's."""
    dtype = _float_dtype(dtype, "normal_kernel_cpu", complex_ok=True)
    return creation.new_tensor(normal_values(torch_stream(generator), creation.size_of(size), dtype), device,
                               requires_grad)


def sample_values(shape, dtype, draw, strides=None):
    """An array of ``shape`` and ``dtype`` filled by ``draw(n, real_dtype)`` (a flat array of n draws) in the order
    PyTorch fills a tensor: memory order for the element ``strides`` given (C order without), a complex dtype's
    real and imaginary parts interleaved (PyTorch draws into the real view)."""
    dtype = np.dtype(dtype)
    if dtypes.kind_of(dtype) == "c":
        real = np.empty(0, dtype).real.dtype

        def flat(n):
            pairs = draw(2 * n, real).reshape(n, 2)                          # (n, 2): real, imaginary
            return (pairs[:, 0] + 1j * pairs[:, 1]).astype(dtype)
    else:
        def flat(n):
            return draw(n, dtype)
    if strides is None:
        return flat(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    return stream.fill_in_memory_order(flat, tuple(shape), strides)


def normal_values(gen, shape, dtype, mean=0.0, std=1.0, strides=None):
    """N(mean, std^2) draws as PyTorch's ``normal_`` fills a tensor of ``shape`` and ``dtype`` (contiguous unless
    ``strides``, the element strides of a non-contiguous one, say otherwise); a complex dtype's parts each have
    deviation std / sqrt(2)."""
    part = std / np.sqrt(2) if dtypes.kind_of(np.dtype(dtype)) == "c" else std
    return sample_values(shape, dtype, lambda n, real: stream.normal(gen, n, real, mean, part, strides is None),
                         strides)


def element_strides(a):
    """None for a C-contiguous ndarray (PyTorch fills it in order), else its strides in elements."""
    return None if a.flags.c_contiguous else tuple(s // a.itemsize for s in a.strides)


def _integers(low, high, shape, generator, dtype, device, requires_grad, strides=None):
    dtype = creation.dtype_or(dtype, dtypes.int64)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _check_random_bounds(low, high - 1, dtype)
    gen = torch_stream(generator)
    sample = sample_values(shape, np.int64, lambda n, _: stream.integers(gen, n, low, high), strides)
    return creation.new_tensor(sample.astype(dtype), device, requires_grad)


def _check_random_bounds(low, last, dtype):
    """PyTorch's check of integer draws ``low .. last`` in ``dtype`` (``randint``, ``random_(from, to)``): no complex
    or float8 dtype; each end within the dtype's range (a float dtype's largest finite value); and for a float dtype,
    PyTorch's warning outside +-2**(its mantissa digits), where it no longer draws every integer exactly."""
    if dtype in dtypes.FLOAT8:
        raise NotImplementedError(f"\"random_update_from_to\" not implemented for '{dtypes.scalar_type_name(dtype)}'")
    kind = dtypes.kind_of(dtype)
    if kind == "c":
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if kind == "f":
        largest = float(dtypes.float_info(dtype).max)
        lowest, digits = -largest, dtypes.float_info(dtype).nmant + 1
    else:
        lowest, largest = (0, 1) if kind == "b" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        digits = None
    for value, which in ((low, "from"), (last, "to - 1")):
        if not lowest <= value <= largest:
            raise RuntimeError(f"{which} is out of bounds for {dtypes.c_name(dtype)}")
    for value, which in ((low, "from"), (last, "to - 1")):
        if digits is not None and not -2 ** digits <= value <= 2 ** digits:
            warnings.warn(f"{which} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                          f"{dtypes.c_name(dtype)} can support discrete uniform distribution only within this range. "
                          "This warning will become an error in version 1.7 release, please fix the code in advance",
                          UserWarning, stacklevel=4)


@creation_keywords
def randint(*bounds_and_size, size=None, low=None, high=None, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers uniform on [low, high): PyTorch's ``randint(high, size)`` and ``randint(low, high, size)``
    (or the keywords); int64 unless ``dtype`` says otherwise."""
    args = list(bounds_and_size)
    if size is None:
        if not args or not isinstance(args[-1], (tuple, list)):
            got = type(args[-1]).__name__ if args else "nothing"
            raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {got} (PyTorch's forms are "
                            "randint(high, size) and randint(low, high, size))")
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if args or high is None:
        raise TypeError("randint() takes randint(high, size) or randint(low, high, size)")
    return _integers(int(low), int(high), creation.size_of((size,)), generator, dtype, device, requires_grad)


@creation_keywords
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise)."""
    (n,) = creation.size_of((n,))  # PyTorch's negative-size error
    dtype = creation.dtype_or(dtype, dtypes.int64)
    kind = dtypes.kind_of(dtype)
    if kind in "bc" or dtype in dtypes.LIMITED:
        raise NotImplementedError(f"\"randperm\" not implemented for '{dtypes.scalar_type_name(dtype)}'")
    if kind in "iu" and n - 1 > np.iinfo(dtype).max:
        raise RuntimeError(f"value cannot be converted to type {dtype}_t without overflow")
    if dtype in _RANDPERM_LIMITS and n > _RANDPERM_LIMITS[dtype]:     # (the integers a float holds exactly)
        raise RuntimeError(f"n cannot be greater than {_RANDPERM_LIMITS[dtype]} for {_type_word(dtype)} type.")
    permutation = stream.permutation(torch_stream(generator), n)
    return creation.new_tensor(permutation.astype(dtype), device, requires_grad)


# (PyTorch 2.13 checks no limit for bfloat16)
_RANDPERM_LIMITS = {np.dtype(np.float16): 2 ** 11 + 1, np.dtype(np.float32): 2 ** 24 + 1,
                    np.dtype(np.float64): 2 ** 53 + 1}


@creation_keywords
@takes_tensors("input")
def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    dtype = _float_dtype(dtype or input.dtype, "check_uniform_bounds", complex_ok=True)
    gen = torch_stream(generator)
    values = sample_values(input.shape, dtype, lambda n, real: stream.uniform(gen, n, real), like_strides(input))
    return creation.new_tensor(values, device, requires_grad)


@creation_keywords
@takes_tensors("input")
def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    dtype = _float_dtype(dtype or input.dtype, "normal_kernel_cpu", complex_ok=True)
    return creation.new_tensor(normal_values(torch_stream(generator), input.shape, dtype, strides=like_strides(input)),
                               device, requires_grad)


@creation_keywords
@takes_tensors("input")
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``: ``input``'s shape and dtype."""
    if high is None:
        low, high = 0, low
    return _integers(int(low), int(high), input.shape, generator, dtype or input.dtype, device, requires_grad,
                     like_strides(input))


def like_strides(input):
    """The element strides PyTorch's ``empty_like`` gives a ``*_like`` result, when they are not C-contiguous, so that
    the draws fill it along its memory: a dense input's own (a transposed or permuted one), or for an input with gaps
    (a sliced one) dense strides in the order of its own; None for a contiguous result."""
    a = input._data
    strides = element_strides(a)
    if strides is None or np.transpose(a, stream.memory_order(strides, a.shape)).flags.c_contiguous:
        return strides
    dense = layout.dense_strides_like(a.shape, strides)
    row_major = layout.dense_strides_like(a.shape)
    return None if all(n == 1 or s == c for n, s, c in zip(a.shape, dense, row_major)) else dense


class Sample(Function):
    """A sample drawn from a distribution whose parameters are tensors (``normal``, ``bernoulli``).

    forward(sample, *params) = sample. PyTorch defines the gradient of a sample with respect to its
    distribution's parameters as zero: backward returns d(out)/d(param) = 0 for each parameter, so the
    output is part of the graph (it has a grad_fn) and every parameter that requires grad gets zeros."""

    @staticmethod
    def forward(ctx, sample, *params):
        return sample

    @staticmethod
    def backward(ctx, dout):
        zero = np.zeros_like(dout._data)  # at the broadcast output shape; the engine sums it down
        return (None,) + tuple(zero if needed else None for needed in ctx.needs_input_grad[1:])

    @staticmethod
    def graph_backward(ctx, dout):
        """``backward``'s zeros as constant Tensors: every higher derivative is 0 too."""
        return tuple(None if g is None else Tensor(g) for g in Sample.backward(ctx, dout))


def _as_parameter(value, like):
    """``normal``'s mean or std as a Tensor (a Python number takes the other operand's dtype)."""
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if isinstance(like, Tensor) else dtypes.get_default_dtype()
    return Tensor(np.asarray(value, dtype=dtype))


@creation_keywords
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
           _out_dtype=None):
    """Normal samples with the given mean and standard deviation, in PyTorch's forms:
    ``normal(mean_tensor, std_tensor)``, ``normal(mean_tensor, std=1.0)``, ``normal(mean, std_tensor)``
    (shape: the two broadcast) and ``normal(mean, std, size)`` (numbers, shape ``size``). A complex dtype draws the
    real and imaginary parts each with deviation ``std / sqrt(2)``, as PyTorch does (numbers: each part has mean
    ``mean``; tensors: ``mean + std * z``). ``_out_dtype``: the dtype of an ``out=`` tensor, which PyTorch draws
    into (``minigrad/_out.py``)."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal(): with a number for both mean and std, give the output's size: "
                            "normal(mean, std, size)")
        check_std(std)
        dtype = _float_dtype(dtype, "normal_kernel_cpu", complex_ok=True)
        return creation.new_tensor(normal_values(torch_stream(generator), creation.size_of((size,)), dtype, mean, std),
                                   device, requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise TypeError("normal(): size, dtype and requires_grad can only be given when mean and std are numbers "
                        "(with a tensor mean or std, the output takes their shape and dtype)")
    check_device(device)
    if isinstance(mean, Tensor) and isinstance(std, Tensor) and dtypes.kind_of(std.dtype) == "c":
        raise RuntimeError("normal expects standard deviation to be non-complex")
    mean_t, std_t = _as_parameter(mean, std), _as_parameter(std, mean)
    if not isinstance(std, Tensor):
        check_std(std)
    elif not (std_t._data >= 0).all():                 # (NaN refused too)
        raise RuntimeError(f"normal expects all elements of std >= 0.0, got {std_t._data.min()}")
    shape = check_broadcast(mean_t.shape, std_t.shape)
    out_dtype = np.result_type(mean_t.dtype, std_t.dtype) if _out_dtype is None else \
        _float_dtype(_out_dtype, "normal_kernel_cpu", complex_ok=True)
    # PyTorch: out.normal_(0, std) then out.add_(mean) for a number std, else out.normal_(0, 1).mul_(std).add_(mean)
    gen = torch_stream(generator)
    with np.errstate(all="ignore"):
        if isinstance(std, Tensor):
            noise = normal_values(gen, shape, out_dtype)
            sample = (noise * std_t._data.astype(out_dtype)).astype(out_dtype) + mean_t._data.astype(out_dtype)
        else:
            sample = normal_values(gen, shape, out_dtype, 0.0, float(std)) + mean_t._data.astype(out_dtype)
    sample = sample.astype(out_dtype)
    return Sample.apply(sample, *(p for p in (mean, std) if isinstance(p, Tensor)))


def check_std(std):
    """PyTorch's check of a number ``std`` (NaN refused too)."""
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")


def check_probability(p):
    """PyTorch's check of a number ``p`` of a Bernoulli draw (NaN refused too)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p):g}")


def _check_probabilities(p):
    if dtypes.kind_of(p.dtype) != "f":
        raise NotImplementedError(f"\"bernoulli\" not implemented for '{_type_word(p.dtype)}': probabilities "
                                  f"must be floating point, got {p.dtype}")
    check_probability_range(p)


def check_probability_range(p):
    """Every probability of the array ``p`` in [0, 1] (NaN refused too)."""
    if not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("bernoulli: every probability must be in [0, 1], got values outside it")


@takes_tensors("input")
def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``, a number, for every element), else 0; ``input``'s shape and dtype."""
    gen = torch_stream(generator)
    if p is None:                    # one uniform per probability: float64 ones for float64 probabilities
        _check_probabilities(input._data)
        draws = bernoulli_values(gen, input._data)          # (PyTorch's result is contiguous: drawn in order)
    else:
        check_probability(p)
        draws = sample_values(input.shape, np.bool_, lambda n, _: stream.bernoulli_scalar(gen, n, p))
    return Sample.apply(draws.astype(input.dtype), input)


def bernoulli_values(gen, probs, strides=None):
    """One Bernoulli draw per element of ``probs`` (an ndarray of the output's shape), in the memory order of an
    output with element ``strides`` (None: C-contiguous), as PyTorch's ``bernoulli_(p_tensor)`` (bool)."""
    order = list(range(probs.ndim)) if strides is None else stream.memory_order(strides, probs.shape)
    draws = stream.bernoulli_probabilities(gen, np.transpose(probs, order).reshape(-1))
    return np.transpose(draws.reshape([probs.shape[d] for d in order]), np.argsort(order))


def keep_mask(shape, keep, like=None):
    """Dropout's noise as PyTorch draws it (``bernoulli_(1 - p)`` into ``empty_like(like)``, or a fresh contiguous
    tensor without ``like``): True with probability ``keep`` (bool, ``shape``)."""
    gen = torch_stream()
    return sample_values(shape, np.bool_, lambda n, _: stream.bernoulli_scalar(gen, n, keep),
                         None if like is None else like_strides(like))


@takes_tensors("input")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categorical distribution(s) whose unnormalized probabilities are ``input``'s
    last dimension: ``(num_samples,)`` for a vector, ``(rows, num_samples)`` for a matrix; int64.

    Without replacement, drawing k distinct categories is the same as keeping the k largest of p_i / E_i with
    E_i ~ Exp(1) (the Gumbel-top-k trick, exponentiated); PyTorch's draws after the same seed."""
    weights = input._data
    if weights.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got a tensor of {weights.ndim} dimensions")
    if dtypes.kind_of(weights.dtype) != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dtypes.scalar_type_name(weights.dtype)}")
    if weights.dtype in dtypes.FLOAT8:
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{dtypes.scalar_type_name(weights.dtype)}'")
    if num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (num_samples={num_samples})")
    if not replacement and num_samples > weights.shape[-1]:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"(num_samples={num_samples}, {weights.shape[-1]} categories)")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)   # (R, C)
    totals = rows.sum(axis=1, keepdims=True)                             # (R, 1)
    if (totals <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = torch_stream(generator)
    own = weights.reshape(-1, weights.shape[-1])                         # (R, C), in the input's dtype
    if replacement and num_samples > 1:    # PyTorch: binary search of float64 uniforms in the normalized cumsum
        compute = own.dtype if own.dtype.itemsize >= 4 else np.dtype(np.float32)
        cumulative = np.cumsum(own.astype(compute), axis=1, dtype=compute)      # (R, C)
        cumulative /= cumulative[:, -1:]
        indices = np.stack([np.searchsorted(c, stream.uniform(gen, num_samples, np.float64), side="left")
                            for c in cumulative])                                # (R, S)
    else:                                  # the k largest of p / E, E ~ Exp(1) in the input's dtype (Gumbel-top-k)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = own / stream.exponential(gen, own.size, 1.0).astype(own.dtype).reshape(own.shape)
        indices = np.argsort(-keys.astype(np.float64), axis=1, kind="stable")[:, :num_samples]
    return Tensor(indices.reshape(weights.shape[:-1] + (num_samples,)).astype(np.int64))


@takes_tensors("input")
def poisson(input, generator=None):
    """Poisson counts with rates ``input``; ``input``'s shape and dtype."""
    rates = input._data
    if dtypes.kind_of(rates.dtype) != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_type_word(rates.dtype)}': rates must be "
                                  f"floating point, got {rates.dtype}")
    if rates.dtype in dtypes.FLOAT8:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{dtypes.scalar_type_name(rates.dtype)}'")
    if not (rates >= 0).all():                                   # (NaN too)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Tensor(stream.poisson(torch_stream(generator), rates).astype(rates.dtype))


@takes_tensors("count", "prob")
def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws, elementwise (broadcast), in ``count``'s floating dtype. As PyTorch's sampler, a
    probability outside [0, 1] acts as the nearer end and a negative count gives 0 (a NaN count gives NaN, where
    PyTorch's sampler does not return). Not differentiable (backward through it raises PyTorch's error)."""
    from .autograd.function import NoDerivative
    if dtypes.kind_of(count.dtype) != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_type_word(count.dtype)}")
    single = count.dtype.itemsize < 8
    draws = stream.binomial(torch_stream(generator), count._data, prob._data, single).astype(count.dtype)
    return NoDerivative.apply(RuntimeError, "derivative for aten::binomial is not implemented", draws, count, prob)


from ._keywords import size_keyword  # noqa: E402

rand, randn = size_keyword(rand), size_keyword(randn)   # rand(size=(2, 3)), as PyTorch
