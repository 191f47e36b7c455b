"""Random numbers: ``Generator`` (PyTorch's ``torch.Generator``) on NumPy's PCG64, and the random tensor
functions (``rand``, ``randn``, ``randint``, ``randperm``, their ``*_like`` forms, ``normal``, ``bernoulli``,
``multinomial``, ``poisson``).

Every random function takes ``generator=`` (a ``minigrad.Generator``, or a NumPy ``Generator``) and
otherwise draws from the global default generator, which ``minigrad.manual_seed`` reseeds. The
streams differ from PyTorch's: the same seed gives other numbers than in PyTorch.
"""
import contextlib
import functools
import warnings

import numpy as np

from ._checks import takes_tensors
from .device import CPU, check_device

_DEFAULT_SEED = 0


class Generator:
    """A random stream with PyTorch's interface: ``manual_seed``, ``seed``, ``initial_seed``,
    ``get_state``/``set_state``. minigrad runs on the CPU only."""

    def __init__(self, device="cpu"):
        check_device(device)
        self.device = CPU
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._initial_seed = seed
        self.numpy = np.random.default_rng(seed & 0xFFFF_FFFF_FFFF_FFFF)
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
        clone = Generator()
        clone._initial_seed = self._initial_seed
        clone.set_state(self.get_state())
        return clone

    def get_state(self):
        """The stream's state (a dict: NumPy's bit-generator state), for ``set_state``. PyTorch returns a uint8
        tensor here; ``minigrad.get_rng_state()`` does for the default generator."""
        return self.numpy.bit_generator.state

    def set_state(self, state):
        """Put the stream in ``state``: a dict from ``get_state`` or a uint8 tensor from ``get_rng_state``."""
        self.numpy.bit_generator.state = state if isinstance(state, dict) else _unpack_state(state)
        return self


default_generator = Generator()


def manual_seed(seed):
    """Reseed minigrad's default generator (NumPy's PCG64; the streams differ from PyTorch's)."""
    return default_generator.manual_seed(seed)


def seed():
    """Reseed the default generator from fresh entropy; returns the new seed (``torch.seed``)."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with (``torch.initial_seed``)."""
    return default_generator.initial_seed()


# PCG64's state as PyTorch hands a generator's state around, a uint8 tensor: the 128-bit state and increment,
# then the flag and value of the buffered 32-bit half, each little-endian. (PyTorch's Mersenne Twister state
# is 5056 bytes; the two cannot be exchanged.)
_STATE_FIELDS = (("state", 16), ("inc", 16), ("has_uint32", 4), ("uinteger", 4))
_STATE_BYTES = sum(size for _, size in _STATE_FIELDS)


def _pack_state(state):
    """The uint8 array of a PCG64 state dict."""
    values = {**state["state"], "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}
    raw = b"".join(int(values[name]).to_bytes(size, "little") for name, size in _STATE_FIELDS)
    return np.frombuffer(raw, dtype=np.uint8).copy()


def _unpack_state(tensor):
    """The PCG64 state dict of a uint8 tensor from ``_pack_state``; PyTorch's errors for anything else."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(tensor).__name__}")
    if tensor.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    if tensor.numel() != _STATE_BYTES:
        raise RuntimeError(f"Expected a PCG64 generator state of size {_STATE_BYTES} but found the input RNG state "
                           f"size to be {tensor.numel()}")
    raw, values, at = tensor._data.reshape(-1).tobytes(), {}, 0
    for name, size in _STATE_FIELDS:
        values[name], at = int.from_bytes(raw[at:at + size], "little"), at + size
    return {"bit_generator": "PCG64", "state": {"state": values["state"], "inc": values["inc"]},
            "has_uint32": values["has_uint32"], "uinteger": values["uinteger"]}


def get_rng_state():
    """The default generator's state as a uint8 tensor (``torch.get_rng_state``), for ``set_rng_state``."""
    return Tensor(_pack_state(default_generator.get_state()))


def set_rng_state(new_state):
    """Put the default generator in ``new_state``, a uint8 tensor from ``get_rng_state``."""
    default_generator.set_state(_unpack_state(new_state))


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Within the block, draw from the default generator freely: its state is put back on leaving
    (``torch.random.fork_rng``; minigrad has no other device whose streams would need forking)."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def numpy_rng(generator=None):
    """The NumPy ``Generator`` to draw from: the default one, a ``minigrad.Generator``'s, or ``generator``
    itself if it is a NumPy ``Generator``."""
    if generator is None:
        return default_generator.numpy
    if isinstance(generator, Generator):
        return generator.numpy
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a minigrad.Generator, not {type(generator).__name__}")


# --------------------------------------------------------------------------- random tensors
from . import creation, dtypes  # noqa: E402  (creation imports tensor, which is built before anything draws)
from .autograd.function import Function, type_name  # noqa: E402
from .ops.elementwise import check_broadcast  # noqa: E402
from .tensor import Tensor  # noqa: E402
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
    return creation.new_tensor(_draw(numpy_rng(generator).random, creation.size_of(size), dtype), device,
                               requires_grad)


@creation_keywords
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples; a complex dtype draws its real and imaginary parts each with variance 1/2 (so
    that |z|^2 has mean 1), as PyTorch's."""
    dtype = _float_dtype(dtype, "normal_kernel_cpu", complex_ok=True)
    return creation.new_tensor(_draw(numpy_rng(generator).standard_normal, creation.size_of(size), dtype,
                                     np.sqrt(0.5)), device, requires_grad)


def _draw(sampler, shape, dtype, complex_scale=1.0):
    """``sampler(shape)`` in ``dtype``; for a complex dtype, (real, imaginary) pairs of draws times
    ``complex_scale``."""
    if dtypes.kind_of(dtype) != "c":
        return sampler(shape).astype(dtype)
    pairs = sampler(tuple(shape) + (2,)) * complex_scale
    return (pairs[..., 0] + 1j * pairs[..., 1]).astype(dtype)


def _integers(low, high, shape, generator, dtype, device, requires_grad):
    dtype = creation.dtype_or(dtype, dtypes.int64)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _check_random_bounds(low, high - 1, dtype)
    sample = numpy_rng(generator).integers(low, high, size=shape)
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
    permutation = numpy_rng(generator).permutation(n)
    return creation.new_tensor(permutation.astype(dtype), device, requires_grad)


# (PyTorch 2.13 checks no limit for bfloat16)
_RANDPERM_LIMITS = {np.dtype(np.float16): 2 ** 11 + 1, np.dtype(np.float32): 2 ** 24 + 1,
                    np.dtype(np.float64): 2 ** 53 + 1}


@creation_keywords
@takes_tensors("input")
def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    return rand(input.shape, generator=generator, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


@creation_keywords
@takes_tensors("input")
def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    return randn(input.shape, generator=generator, dtype=dtype or input.dtype, device=device,
                 requires_grad=requires_grad)


@creation_keywords
@takes_tensors("input")
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``: ``input``'s shape and dtype."""
    if high is None:
        low, high = 0, low
    return _integers(int(low), int(high), input.shape, generator, dtype or input.dtype, device, requires_grad)


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
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        dtype = _float_dtype(dtype, "normal_kernel_cpu", complex_ok=True)
        draw = functools.partial(numpy_rng(generator).normal, mean, std / (np.sqrt(2) if dtypes.kind_of(dtype) == "c"
                                                                          else 1))
        return creation.new_tensor(_draw(lambda shape: draw(size=shape), creation.size_of((size,)), dtype), device,
                                   requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise TypeError("normal(): size, dtype and requires_grad can only be given when mean and std are numbers "
                        "(with a tensor mean or std, the output takes their shape and dtype)")
    check_device(device)
    if isinstance(mean, Tensor) and isinstance(std, Tensor) and dtypes.kind_of(std.dtype) == "c":
        raise RuntimeError("normal expects standard deviation to be non-complex")
    mean_t, std_t = _as_parameter(mean, std), _as_parameter(std, mean)
    if (std_t._data < 0).any():
        raise RuntimeError(f"normal expects all elements of std >= 0.0, got {std_t._data.min()}")
    shape = check_broadcast(mean_t.shape, std_t.shape)
    out_dtype = np.result_type(mean_t.dtype, std_t.dtype) if _out_dtype is None else \
        _float_dtype(_out_dtype, "normal_kernel_cpu", complex_ok=True)
    noise = _draw(numpy_rng(generator).standard_normal, shape, np.result_type(out_dtype, np.float64),
                  complex_scale=1 / np.sqrt(2))
    sample = (mean_t._data + std_t._data * noise).astype(out_dtype)
    return Sample.apply(sample, *(p for p in (mean, std) if isinstance(p, Tensor)))


def _check_probabilities(p):
    if dtypes.kind_of(p.dtype) != "f":
        raise NotImplementedError(f"\"bernoulli\" not implemented for '{_type_word(p.dtype)}': probabilities "
                                  f"must be floating point, got {p.dtype}")
    if not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("bernoulli: every probability must be in [0, 1], got values outside it")


@takes_tensors("input")
def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``, a number, for every element), else 0; ``input``'s shape and dtype."""
    probabilities = input._data if p is None else np.full(input.shape, p, dtype=input.dtype)
    _check_probabilities(probabilities)
    draws = numpy_rng(generator).random(input.shape) < probabilities
    return Sample.apply(draws.astype(input.dtype), input)


@takes_tensors("input")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categorical distribution(s) whose unnormalized probabilities are ``input``'s
    last dimension: ``(num_samples,)`` for a vector, ``(rows, num_samples)`` for a matrix; int64.

    Without replacement, drawing k distinct categories is the same as keeping the k largest of
    ``log p_i + Gumbel noise`` (the Gumbel-top-k trick)."""
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
    rng = numpy_rng(generator)
    if replacement:
        cumulative = np.cumsum(rows / totals, axis=1)                    # (R, C)
        cumulative[:, -1] = 1.0
        uniform = rng.random((rows.shape[0], num_samples))               # (R, S)
        indices = np.stack([np.searchsorted(c, u, side="right") for c, u in zip(cumulative, uniform)])
    else:
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + rng.gumbel(size=rows.shape)           # (R, C); -inf where p = 0
        indices = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
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
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Tensor(numpy_rng(generator).poisson(rates).astype(rates.dtype))


@takes_tensors("count", "prob")
def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws, elementwise (broadcast), in ``count``'s floating dtype. As PyTorch's sampler, a
    probability outside [0, 1] acts as the nearer end and a negative count gives 0. Not differentiable (backward
    through it raises PyTorch's error)."""
    from .autograd.function import NoDerivative
    if dtypes.kind_of(count.dtype) != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_type_word(count.dtype)}")
    n, p = np.broadcast_arrays(count._data, prob._data)
    n = np.maximum(np.nan_to_num(n.astype(np.float64)), 0).astype(np.int64)
    draws = numpy_rng(generator).binomial(n, np.clip(p.astype(np.float64), 0, 1)).astype(count.dtype)
    return NoDerivative.apply(RuntimeError, "derivative for aten::binomial is not implemented", draws, count, prob)


from ._keywords import size_keyword  # noqa: E402

rand, randn = size_keyword(rand), size_keyword(randn)   # rand(size=(2, 3)), as PyTorch
