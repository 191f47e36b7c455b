"""A differential fuzzer of the random functions against PyTorch: after the same seed, a random draw (its kind, shape,
dtype, layout and parameters chosen by the case's seed) must give PyTorch's numbers and leave the generator in
PyTorch's state, or fail as PyTorch fails.

    python -m tests.random_fuzz --cases 5000 --start 0

A case fills a tensor that may be permuted and sliced (the fills and ``*_like`` draw along memory, as PyTorch's
iterators do), in float32, float64, float16 or bfloat16. Compared exactly: integers, masks, permutations, uniforms
on [0, 1). Within tolerances: the draws PyTorch computes with its own vectorized or fused arithmetic (normals, which
take its log, sin and cos; draws on [a, b), where its loop fuses a multiply-add on CPUs that have one), each
tolerance below with its reason. The draws PyTorch's MKL build takes from MKL's generator on Intel CPUs (Bernoulli
with a number p, dropout, exponential and what uses it) are left out there (``tests/test_random_stream.py``).
"""
import functools

import numpy as np

from .fuzz_cli import run_seeds

DTYPES = ("float32", "float64", "float16", "bfloat16")
# relative, absolute tolerance per dtype for draws through PyTorch's own transcendental or fused arithmetic
# (float32: its vectorized log/sin/cos, a few ulps; 16-bit: a float32 value rounded, which may round the other way)
CLOSE = {"float32": (2e-6, 2e-6), "float64": (1e-12, 1e-12), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}


def _layout(rng):
    """(shape, permutation or None, slicing step of the last dimension)."""
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(n) for n in rng.integers(1, 12, ndim))
    perm = tuple(int(d) for d in rng.permutation(ndim)) if ndim > 1 and rng.random() < 0.4 else None
    step = int(rng.integers(2, 4)) if ndim and rng.random() < 0.3 else 1
    return shape, perm, step


def _tensor(lib, shape, dtype, perm, step, fill=0.0):
    t = lib.full(shape, fill, dtype=getattr(lib, dtype))
    if perm is not None:
        t = t.permute(*perm)
    return t[..., ::step] if step > 1 else t


@functools.lru_cache(maxsize=None)
def mkl_draws(torch):
    """Whether PyTorch draws Bernoulli(p), dropout and exponential from MKL's generator here (its MKL build on an
    Intel CPU)."""
    try:
        with open("/proc/cpuinfo") as f:
            intel = "GenuineIntel" in f.read(4096)
    except OSError:
        intel = False
    return intel and torch.backends.mkl.is_available()


def _case(seed, mkl=False):
    """(description, draw(lib), exact) for the case ``seed``: the draw runs after ``lib.manual_seed(seed)``; exact
    unless PyTorch computes it with transcendental functions or a fused multiply-add of its own."""
    rng = np.random.default_rng(seed)
    shape, perm, step = _layout(rng)
    dtype = DTYPES[int(rng.integers(0, len(DTYPES)))]
    low = float(np.round(rng.normal() * 3, 3))
    high = low + float(np.round(rng.exponential() * 2, 3)) + 1e-3
    p = float(np.round(rng.random(), 3))
    n = int(np.prod(shape)) if shape else 1
    like = lambda L: _tensor(L, shape, dtype, perm, step)                     # noqa: E731
    kinds = {
        "uniform_": (lambda L: like(L).uniform_(low, high), False),       # PyTorch's FMA, where its CPU has one
        "uniform_ with the bounds swapped (an error)": (lambda L: like(L).uniform_(high, low), True),
        "normal_": (lambda L: like(L).normal_(low, high - low), False),
        "rand": (lambda L: L.rand(shape, dtype=getattr(L, dtype)), True),
        "randn": (lambda L: L.randn(shape, dtype=getattr(L, dtype)), False),
        "rand_like": (lambda L: L.rand_like(like(L)), True),
        "randn_like": (lambda L: L.randn_like(like(L)), False),
        "randint_like": (lambda L: L.randint_like(like(L), int(low) - 3, int(high) + 40), True),
        "randint": (lambda L: L.randint(int(low) - 3, int(high) + 40, shape), True),
        "random_": (lambda L: like(L).random_(0, 100), True),
        "randperm": (lambda L: L.randperm(n), True),
        "bernoulli of probabilities": (lambda L: L.bernoulli(like(L) + p), True),
        "normal of tensors": (lambda L: L.normal(like(L) + low, like(L) + (high - low)), False),
        "multinomial with replacement": (
            lambda L: L.multinomial(L.arange(1.0, 9.0, dtype=getattr(L, dtype if dtype == "float64" else "float32")),
                                    min(n, 8) + 1, replacement=True), True),
    }
    if not mkl:                 # PyTorch's MKL build draws these from MKL's generator on Intel CPUs
        kinds.update({
            "bernoulli_(p)": (lambda L: like(L).bernoulli_(p), True),
            "dropout": (lambda L: L.nn.functional.dropout(like(L) + 1, p, True), True),
            "exponential_": (lambda L: like(L).exponential_(1 + p), False),
            "multinomial without replacement": (
                lambda L: L.multinomial(L.arange(1.0, 9.0), min(n, 8), replacement=False), True),
        })
    name = sorted(kinds)[int(rng.integers(0, len(kinds)))]
    draw, exact = kinds[name]
    where = f"{name}: shape {shape}, {dtype}, permuted {perm}, step {step}, bounds ({low}, {high}), p {p}"
    return where, draw, exact


def _values(t):
    t = t.detach()
    if "bfloat16" in str(t.dtype) or "float16" in str(t.dtype):
        t = t.float()
    return np.asarray(t.numpy())


def differences(torch, mg, seed):
    """None if the case ``seed`` draws PyTorch's numbers in minigrad, else a description of the difference."""
    where, draw, exact = _case(seed, mkl_draws(torch))
    results = []
    for lib in (torch, mg):
        lib.manual_seed(seed)
        try:
            results.append(draw(lib))
        except Exception as error:          # noqa: BLE001 - any exception, compared by type below
            results.append(error)
    theirs, ours = results
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        if type(theirs).__name__ == type(ours).__name__:
            return None
        return f"seed {seed}, {where}: PyTorch gives {theirs!r:.120}, minigrad {ours!r:.120}"
    a, b = _values(ours), _values(theirs)
    if a.shape != b.shape or str(ours.dtype).split(".")[-1] != str(theirs.dtype).split(".")[-1]:
        return f"seed {seed}, {where}: shape/dtype {a.shape} {ours.dtype} against PyTorch's {b.shape} {theirs.dtype}"
    dtype = str(ours.dtype).split(".")[-1]
    if exact or dtype not in CLOSE:
        same = np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    else:
        rtol, atol = CLOSE[dtype]
        scale = max(1.0, float(np.nanmax(np.abs(b)))) if b.size else 1.0
        same = np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol * scale, equal_nan=True)
    if not same:
        wrong = np.argwhere(~np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=0, atol=0, equal_nan=True))
        at = tuple(wrong[0]) if len(wrong) else ()
        return f"seed {seed}, {where}: at {at} minigrad {a[at]!r} against PyTorch's {b[at]!r} ({len(wrong)} differ)"
    if not np.array_equal(mg.get_rng_state().numpy(), torch.get_rng_state().numpy()):
        return f"seed {seed}, {where}: the same numbers, but the generator is left in another state"
    return None


if __name__ == "__main__":
    run_seeds(differences, "A differential fuzzer of the random functions against PyTorch.")
