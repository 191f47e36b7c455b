"""PyTorch's CPU random stream: the same seed gives the same numbers as in PyTorch.

PyTorch's CPU generator is a 32-bit Mersenne Twister (MT19937) seeded with the low 32 bits of the seed by the
reference initialization (state[0] = seed, state[j] = 1812433253 * (state[j-1] ^ (state[j-1] >> 30)) + j). NumPy
ships the same engine (``np.random.MT19937``) with another seeding, so a minigrad ``Generator`` puts the state of
PyTorch's seeding into NumPy's engine and reads its raw 32-bit words (``random_raw``); 64-bit draws join two words,
the first as the high half. On those words this module applies the transformations of PyTorch's CPU kernels
(ATen's ``DistributionsHelper.h``, ``TransformationHelper.h`` and ``cpu/DistributionTemplates.h``; the facts, not
their code):

* uniform on [from, to): ``(w & (2^d - 1)) * 2^-d * (to - from) + from`` with d = 53 from a 64-bit draw for
  float64, else d = 24 from one word, computed in float32 (float32 bounds) and rounded to the dtype (float16,
  bfloat16); a value that rounds to ``to`` becomes ``from``;
* normal: a contiguous tensor of at least 16 elements is filled with uniforms, then each block of 16 becomes 8
  Box-Muller pairs, u1 = 1 - x[j], u2 = x[j + 8]: x[j] = sqrt(-2 log u1) cos(2 pi u2), x[j + 8] the same with
  sin, in the dtype's arithmetic (float32 for float16 and bfloat16, whose blocks draw their uniforms one block at
  a time); if 16 does not divide the size, the last 16 elements are drawn and transformed again. Smaller or
  non-contiguous tensors take one double Box-Muller pair per two elements (u1, u2 from 64-bit draws,
  r = sqrt(-2 log(1 - u2)), r cos(2 pi u1) first and r sin(2 pi u1) kept in the generator for the next draw, even
  by another call);
* integers on [low, high): ``w % (high - low) + low``, from a 64-bit draw when the range is 2^28 or more;
* permutations: Fisher-Yates from the front, swapping i with i + (w % (n - i));
* exponential: -log(1 - u) / rate of a float64 uniform;
* multinomial with replacement (two samples or more): a float64 uniform per sample, located by binary search in the
  row's cumulative sums (in the input's dtype) divided by their total; without replacement, or for one sample, the
  k largest of p / E with E ~ Exp(1) drawn in the input's dtype;
* gamma: Marsaglia and Tsang's method with float64 uniforms and normal pairs, element by element; Poisson: products
  of uniforms below 10, Hoermann's transformed rejection from 10; binomial: inversion or BTRS;
* Bernoulli: ``uniform < p``, a float64 uniform for a number p (and for float64 probabilities), a float32 one for
  probabilities in the other dtypes. (On Intel CPUs PyTorch's MKL build draws ``bernoulli_(p)`` and so dropout
  masks from MKL's own generator instead: those are the one stream minigrad does not reproduce there.)

Elements are drawn in memory order (a transposed tensor fills along its memory, as PyTorch's iterators do).
float32 results can differ from PyTorch's in the last bits where its vectorized log, sin and cos round otherwise.
"""
import functools
import math
import sys

import numpy as np

STATE_WORDS = 624
_SEEDING_MULTIPLIER = 1812433253
_MASK32 = 0xFFFF_FFFF
FAST_NORMAL_MIN = 16                  # the smallest contiguous size PyTorch fills 16 at a time


# --------------------------------------------------------------------------- the engine
@functools.lru_cache(maxsize=16)
def seeded_key(seed):
    """MT19937's state words after the reference seeding with ``seed``'s low 32 bits (uint32 (624,), read-only:
    kept for the next generator seeded alike, such as every ``Generator()``, seeded with 0)."""
    key = np.empty(STATE_WORDS, dtype=np.uint32)
    s = seed & _MASK32
    key[0] = s
    for j in range(1, STATE_WORDS):
        s = (_SEEDING_MULTIPLIER * (s ^ (s >> 30)) + j) & _MASK32
        key[j] = s
    key.flags.writeable = False
    return key


def engine(seed):
    """A NumPy MT19937 in the state PyTorch's generator has right after ``manual_seed(seed)``."""
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": seeded_key(seed & _MASK32), "pos": STATE_WORDS}}
    return bits


def words(gen, n):
    """The next n 32-bit words of ``gen``'s stream, as uint64 (n,) (of another NumPy engine: its raw draws' low
    32 bits)."""
    bits = gen.numpy.bit_generator
    raw = bits.random_raw(n)
    return raw if isinstance(bits, np.random.MT19937) else raw & np.uint64(_MASK32)


def words64(gen, n):
    """n 64-bit draws, each two words joined, the first as the high half: uint64 (n,)."""
    w = words(gen, 2 * n)
    return (w[0::2] << np.uint64(32)) | w[1::2]


# --------------------------------------------------------------------------- PyTorch's state bytes
# PyTorch's CPUGeneratorImplState, 5056 bytes: the initial seed (int64), left and seeded (int32 each), next (uint64),
# the 624 state words (each as uint64), three doubles of which the second is a kept normal sample, its flag (int32 and
# 4 bytes of padding), then a kept float sample and its flag (float32, bool and 3 bytes of padding). The 5048 bytes up
# to the kept float sample are the older (legacy) layout, which PyTorch also accepts.
_STATE = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"), ("words", "<u8", STATE_WORDS),
                   ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"), ("normal_valid", "<i4"),
                   ("pad", "<i4"), ("float_sample", "<f4"), ("float_valid", "u1"), ("pad2", "u1", 3)])
STATE_BYTES, LEGACY_STATE_BYTES = _STATE.itemsize, _STATE.itemsize - 8


def pack_state(gen):
    """``gen``'s state as PyTorch's uint8 (5056,) array (``torch.get_rng_state()`` after the same draws)."""
    state = gen.numpy.bit_generator.state["state"]
    key, pos = state["key"], int(state["pos"])
    s = np.zeros((), dtype=_STATE)
    s["seed"], s["seeded"], s["words"] = gen.initial_seed(), 1, key
    # PyTorch counts the words left (1: twist before the next) and the next index; NumPy keeps the index only
    fresh = pos == STATE_WORDS and np.array_equal(key[:2], seeded_key(gen.initial_seed() & _MASK32)[:2])
    s["left"], s["next"] = (1, 0 if fresh else STATE_WORDS) if pos == STATE_WORDS else (STATE_WORDS + 1 - pos, pos)
    if gen.next_double_normal is not None:
        s["normal_valid"], s["normal_y"] = 1, gen.next_double_normal
    if gen.next_float_normal is not None:
        s["float_valid"], s["float_sample"] = 1, gen.next_float_normal
    return np.frombuffer(s.tobytes(), dtype=np.uint8).copy()


def unpack_state(gen, raw):
    """Put ``gen`` in the state of PyTorch's state bytes ``raw`` (uint8, 5056 or the legacy 5048)."""
    if raw.size not in (STATE_BYTES, LEGACY_STATE_BYTES):
        raise RuntimeError(f"Expected either a CPUGeneratorImplStateLegacy of size {LEGACY_STATE_BYTES} or a "
                           f"CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state size to be "
                           f"{raw.size}")
    padded = np.zeros(STATE_BYTES, dtype=np.uint8)
    padded[:raw.size] = raw.reshape(-1)
    s = padded.view(_STATE)[0]
    left, nxt = int(s["left"]), int(s["next"])
    if not (int(s["seeded"]) == 1 and 0 < left <= STATE_WORDS and nxt <= STATE_WORDS):
        raise RuntimeError("Invalid mt19937 state")
    gen.numpy.bit_generator.state = {"bit_generator": "MT19937", "state": {
        "key": s["words"].astype(np.uint32), "pos": STATE_WORDS if left == 1 else STATE_WORDS + 1 - left}}
    gen._initial_seed = int(s["seed"])
    if raw.size == LEGACY_STATE_BYTES:   # the legacy layout keeps the pair's uniform and radius, not the sample
        gen.next_double_normal = (float(s["normal_rho"]) * math.sin(2 * math.pi * float(s["normal_x"]))
                                  if s["normal_valid"] else None)
        gen.next_float_normal = None
    else:
        gen.next_double_normal = float(s["normal_y"]) if s["normal_valid"] else None
        gen.next_float_normal = float(s["float_sample"]) if s["float_valid"] else None


# --------------------------------------------------------------------------- memory order
def memory_order(strides, shape):
    """The permutation of dims that walks a tensor with these element ``strides`` along its memory (outermost
    first), as PyTorch's iterators fill it; a C-contiguous tensor keeps its order."""
    return sorted(range(len(shape)), key=lambda d: (-abs(strides[d]) if shape[d] > 1 else 0, d))


def fill_in_memory_order(values_for, shape, strides):
    """``values_for(n)`` (a flat array of n values) laid out over ``shape`` so that the i-th value lands on the i-th
    element in memory order."""
    order = memory_order(strides, shape)
    permuted = values_for(int(np.prod(shape, dtype=np.int64))).reshape([shape[d] for d in order])
    return np.transpose(permuted, np.argsort(order))


# --------------------------------------------------------------------------- uniform
def unit_uniform(gen, n, double):
    """n uniforms on [0, 1) as PyTorch forms them: 53 bits of a 64-bit draw (float64) or 24 bits of a word
    (float32)."""
    if double:
        return (words64(gen, n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    return (words(gen, n) & np.uint64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)


def uniform(gen, n, dtype, low=0.0, high=1.0):
    """n uniform draws on [low, high) in the real float ``dtype``, as PyTorch's ``uniform_``: float64 from 53 bits of
    a 64-bit draw, the others from 24 bits of a word in float32 arithmetic (float32 bounds, for float16 and bfloat16
    too), then rounded to the dtype; a draw that rounds to ``high`` becomes ``low`` (PyTorch keeps [low, high) so)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        values = unit_uniform(gen, n, True) * (float(high) - float(low)) + float(low)
    else:
        x = unit_uniform(gen, n, False)
        lo, hi = np.float32(low), np.float32(high)
        # x * (hi - lo) + lo as one fused multiply-add (PyTorch's compiled loop): the product of two 24-bit numbers is
        # exact in float64, so float64 arithmetic rounds the sum once, as the FMA does
        values = (x.astype(np.float64) * np.float64(hi - lo) + np.float64(lo)).astype(np.float32).astype(dtype)
    values[values == np.asarray(high, dtype)] = np.asarray(low, dtype)
    return values


LIBM_COMPILED_FROM = 2048
"""Float64 draws of at least this many values take the C library's functions through numba's ufuncs (loading
numba takes most of a second, once); smaller ones through Python's math module, a call per element."""


class _MathFunctions:
    """Python's math functions (the C library's) applied element by element to a float64 array; outside their domain
    or range, where math raises, NumPy's IEEE answer (-inf, inf or NaN, with its warning), as the ufuncs give. lgamma
    is the C library's through ctypes (Python's math.lgamma is CPython's own, 2e-10 off near 1), or SciPy's gammaln
    where no C library is found."""

    def __getattr__(self, name):
        if name == "lgamma":
            return _c_lgamma()
        exact, ieee = getattr(math, name), getattr(np, name)

        def element(v):
            try:
                return exact(v)
            except (ValueError, OverflowError):
                return float(ieee(v))
        function = np.frompyfunc(element, 1, 1)
        return lambda x: function(x).astype(np.float64)


@functools.lru_cache(maxsize=None)
def _c_lgamma():
    """The C library's lgamma over a float64 array, a ctypes call per element."""
    import ctypes
    import ctypes.util
    try:
        c = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").lgamma
    except (OSError, AttributeError):
        from .ops.gamma import scipy_special
        return scipy_special().gammaln
    c.restype, c.argtypes = ctypes.c_double, [ctypes.c_double]
    function = np.frompyfunc(c, 1, 1)
    return lambda x: function(x).astype(np.float64)


def _numba_uses_svml():
    """Whether numba vectorises math functions with Intel's SVML here (its own routines, not the C library's)."""
    from numba.core import config
    return bool(config.USING_SVML)


def libm(n):
    """The C library's float64 log, log1p, exp, sin, cos and tan over arrays, which PyTorch's float64 draws go
    through element by element (and its lgamma, which PyTorch's lgamma calls): numba's ufuncs
    (``kernels/libm_numba.py``) for ``n`` values or more, or once numba is loaded anyway, else (and wherever numba
    would use SVML's functions) Python's math module (ctypes for lgamma). Both call the same C functions: the same
    bits."""
    if n < LIBM_COMPILED_FROM and "numba" not in sys.modules or _numba_uses_svml():
        return _MathFunctions()
    from .kernels import libm_numba
    return libm_numba


# --------------------------------------------------------------------------- normal
def _box_muller_blocks(u, dtype, mean, std):
    """PyTorch's 16-at-a-time Box-Muller on uniforms u (B, 16), in ``dtype``'s arithmetic (float64 or float32):
    the C library's log, sin and cos for float64, as PyTorch's scalar loop; NumPy's for float32, whose SIMD
    functions stand in for PyTorch's vectorized ones (the last bits may differ)."""
    t = dtype.type
    f = libm(u.size) if dtype == np.float64 else np
    u1, u2 = t(1) - u[:, :8], u[:, 8:]
    radius = np.sqrt(t(-2) * f.log(u1))
    theta = t(2 * np.pi) * u2
    s, m = t(std), t(mean)
    return np.concatenate([radius * f.cos(theta) * s + m, radius * f.sin(theta) * s + m], axis=1)


def _normal_fill(gen, n, dtype, mean, std):
    """PyTorch's ``normal_fill`` of a contiguous tensor of n >= 16 elements, in blocks of 16. float32 and float64:
    n uniforms first, then each block transformed; float16 and bfloat16: each block's uniforms drawn as it is
    transformed, in float32, rounded at the end. If 16 does not divide n, the last 16 elements are drawn and
    transformed again."""
    compute = dtype if dtype.itemsize >= 4 else np.dtype(np.float32)
    full = n // 16 * 16
    data = uniform(gen, n if dtype.itemsize >= 4 else full, compute)
    data = np.concatenate([data[:full], np.empty(n - full, compute)]) if data.size != n else data
    data[:full] = _box_muller_blocks(data[:full].reshape(-1, 16), compute, mean, std).reshape(-1)
    if n % 16:                                            # the last 16 elements, drawn and transformed again
        data[n - 16:] = _box_muller_blocks(uniform(gen, 16, compute).reshape(1, 16), compute, mean, std).reshape(-1)
    return data.astype(dtype)


def standard_normal_doubles(gen, n):
    """n draws of PyTorch's ``normal_distribution<double>``: a kept sample first, then Box-Muller pairs (cos, sin),
    the last sin kept in ``gen`` when n leaves it over (float64 (n,))."""
    out = np.empty(n)
    start = 0
    if n and gen.next_double_normal is not None:
        out[0], gen.next_double_normal, start = gen.next_double_normal, None, 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = unit_uniform(gen, 2 * pairs, True)
        f = libm(u.size)               # the C library's functions, as PyTorch's scalar loop
        radius = np.sqrt(-2 * f.log1p(-u[1::2]))                             # (pairs,): u2 = u[1::2]
        theta = 2 * np.pi * u[0::2]                                          # u1 = u[0::2]
        both = np.stack([radius * f.cos(theta), radius * f.sin(theta)], axis=1).reshape(-1)
        out[start:] = both[:n - start]
        if (n - start) % 2:
            gen.next_double_normal = float(both[-1])
    return out


def normal(gen, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """n normal draws in the real float ``dtype`` as PyTorch's ``normal_`` fills a tensor of n elements."""
    dtype = np.dtype(dtype)
    if contiguous and n >= FAST_NORMAL_MIN:
        return _normal_fill(gen, n, dtype, mean, std)
    return (standard_normal_doubles(gen, n) * float(std) + float(mean)).astype(dtype)


def exponential(gen, n, rate):
    """n Exp(rate) draws in float64, as PyTorch's default CPU kernel: -log(1 - u) / rate of float64 uniforms."""
    return -1.0 / rate * libm(n).log1p(-uniform(gen, n, np.float64))


# --------------------------------------------------------------------------- gamma and Poisson, one element at a time
def _uniform_double(gen):
    return float(uniform(gen, 1, np.float64)[0])


def _normal_double(gen):
    return float(standard_normal_doubles(gen, 1)[0])


_ONE_THIRD_F32, _SQUEEZE_F32 = float(np.float32(1) / np.float32(3)), float(np.float32(0.0331))


def standard_gamma(gen, alpha, single=False):
    """Gamma(alpha, 1) draws (float64, alpha's shape) as PyTorch's CPU sampler: Marsaglia and Tsang's method (2000),
    alpha < 1 boosted to alpha + 1 and scaled by U^(1/alpha), from float64 uniforms and normal pairs, element by
    element in order. ``single``: alpha's own arithmetic is float32 (``_standard_gamma`` of a float32 tensor;
    Dirichlet samples compute in float64)."""
    out = np.empty(alpha.size)
    t = np.float32 if single else np.float64
    for i, a in enumerate(alpha.reshape(-1).tolist()):
        a = t(a)
        scale = 1.0
        if a < 1:
            if a == 0:
                out[i] = 0.0
                continue
            scale *= (1 - _uniform_double(gen)) ** float(t(1) / a)
            a = t(a + t(1))
        d = float(t(a - t(_ONE_THIRD_F32)))
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            x = _normal_double(gen)
            y = 1.0 + c * x
            while y <= 0:
                x = _normal_double(gen)
                y = 1.0 + c * x
            v = y * y * y
            u = 1 - _uniform_double(gen)
            xx = x * x
            if u < 1.0 - _SQUEEZE_F32 * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
                out[i] = scale * d * v
                break
    return out.reshape(alpha.shape)


def poisson(gen, rates):
    """Poisson draws (float64, the rates' shape) as PyTorch's CPU sampler, element by element in order: the product
    of uniforms below exp(-rate) for rates under 10, else Hoermann's transformed rejection (1993)."""
    out = np.empty(rates.size)
    for i, lam in enumerate(rates.reshape(-1).tolist()):
        out[i] = _poisson_one(gen, lam)
    return out.reshape(rates.shape)


def _as_int64(x):
    """floor(x) converted to int64 as the CPU converts it: the lowest int64 when it does not fit (NaN included)."""
    return math.floor(x) if -2.0 ** 63 <= x < 2.0 ** 63 else -2 ** 63


def _poisson_one(gen, lam):
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform_double(gen) - 0.5
            v = _uniform_double(gen)
            us = 0.5 - abs(u)
            k = _as_int64((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            log_ratio = math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
            if log_ratio <= -lam + k * loglam - math.lgamma(k + 1):
                return k
    if lam == 0:
        return 0
    limit, product, count = math.exp(-lam), 1.0, 0
    while True:
        product *= _uniform_double(gen)
        if product > limit:
            count += 1
        else:
            return count


_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """log k! minus Stirling's approximation of it: a table up to 9, the series beyond."""
    if k <= 9:
        return _STIRLING_TAILS[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def binomial(gen, counts, probs, single=False):
    """Binomial(count, prob) draws (float64, the operands' broadcast shape) as PyTorch's CPU sampler, element by
    element: 0 for a count or prob <= 0, count for prob >= 1; else, on the side of 1/2 where q = min(p, 1 - p),
    inversion (sums of geometric waiting times) when count q < 10 and Hoermann's BTRS (1993) otherwise.
    ``single``: the operands' own arithmetic is float32."""
    counts, probs = np.broadcast_arrays(counts, probs)
    t = np.float32 if single else np.float64
    out = np.empty(counts.size)
    for i, (n, p) in enumerate(zip(counts.reshape(-1).tolist(), probs.reshape(-1).tolist())):
        n, p = t(n), t(p)
        if n != n:                     # (a NaN count: PyTorch's inversion loop would never end)
            out[i] = math.nan
        elif n <= 0 or p <= 0:
            out[i] = 0.0
        elif p >= 1:
            out[i] = n
        elif p <= 0.5:
            out[i] = _btrs(gen, n, p, t) if n * p >= 10 else _binomial_inversion(gen, n, p)
        elif p > 0.5:
            q = t(t(1) - p)
            out[i] = n - (_btrs(gen, n, q, t) if n * q >= 10 else _binomial_inversion(gen, n, q))
        else:
            out[i] = math.nan
    return out.reshape(counts.shape)


def _binomial_inversion(gen, n, p):
    geom_sum, count, log_q = 0.0, 0, math.log1p(-float(p))
    while True:
        geom_sum += math.ceil(math.log(_uniform_double(gen)) / log_q)
        if geom_sum > n:
            return count
        count += 1


def _btrs(gen, n, p, t):
    n, p = float(n), float(p)
    stddev = math.sqrt(float(t(t(n) * t(p) * t(t(1) - t(p)))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((n + 1) * p)
    while True:
        u = _uniform_double(gen) - 0.5
        v = _uniform_double(gen)
        us = 0.5 - abs(u)
        k = float(t(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1))) + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1)) + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= bound:
            return k


# --------------------------------------------------------------------------- integers, permutations, Bernoulli
WIDE_RANGE = 1 << 28                  # from this range on, an integer draw takes 64 bits


def integers(gen, n, low, high):
    """n integers on [low, high) as int64 (n,), as PyTorch's ``random_(from, to)`` and ``randint``."""
    span = high - low
    raw = words64(gen, n) if span >= WIDE_RANGE else words(gen, n)
    with np.errstate(over="ignore"):                     # PyTorch's 64-bit wrap-around: low + offset
        return ((raw % np.uint64(span)) + np.uint64(low & 0xFFFF_FFFF_FFFF_FFFF)).view(np.int64)


def full_range_integers(gen, n, dtype):
    """n draws of PyTorch's ``random_()`` (no bounds) in ``dtype``: 0 .. the largest integer the dtype holds
    exactly (2^mantissa digits for floats), bool from a word's low bit."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (words(gen, n) & np.uint64(1)).astype(bool)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        d = {2: 11, 4: 24, 8: 53}[dtype.itemsize] if dtype.name != "bfloat16" else 8     # the mantissa's digits
        raw = words64(gen, n) if d == 53 else words(gen, n)
        return (raw % np.uint64((1 << d) + 1)).astype(dtype)
    top = int(np.iinfo(dtype).max) + 1
    raw = words64(gen, n) if dtype.itemsize == 8 else words(gen, n)
    return (raw % np.uint64(top)).astype(dtype)


def permutation(gen, n):
    """A random permutation of 0 .. n-1 as PyTorch's CPU ``randperm`` draws it (int64 (n,))."""
    r = list(range(n))
    if n > 1:
        picks = (words(gen, n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()     # z_i in [0, n - i)
        for i, z in enumerate(picks):
            j = i + z
            r[i], r[j] = r[j], r[i]
    return np.array(r, dtype=np.int64)


def bernoulli_scalar(gen, n, p):
    """n Bernoulli(p) draws for a number p (bool (n,)): a float64 uniform below p."""
    return unit_uniform(gen, n, True) < float(p)


def bernoulli_probabilities(gen, p):
    """One Bernoulli draw per probability in the flat array p (bool): float64 uniforms for float64 probabilities,
    float32 ones for the other dtypes."""
    double = p.dtype == np.float64
    return unit_uniform(gen, p.size, double) < (p if double else p.astype(np.float32))
