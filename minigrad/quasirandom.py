"""``minigrad.quasirandom``: PyTorch's ``torch.quasirandom.SobolEngine``, Sobol' low-discrepancy sequences.

The direction numbers are Joe and Kuo's (search criterion D(6), up to 21201 dimensions), the same as
PyTorch's; minigrad takes them from SciPy (``scipy.stats.qmc``), an optional dependency (``pip install
"minigrad[linalg]"``, or SciPy itself). Unscrambled draws are PyTorch's points exactly, in the same (Gray-code)
order. Scrambled draws apply a random lower-triangular binary matrix per dimension to the direction numbers' bits
and a random digital shift, both drawn as PyTorch draws them (``randint(2, ...)`` from a fresh generator seeded
with ``seed``, or seeded at random without one): the same seed gives PyTorch's points exactly.
"""
import numpy as np

from .tensor import Tensor

__all__ = ["SobolEngine"]


def _direction_numbers(dimension, bits):
    """The (dimension, bits) direction numbers as int64, each left-aligned in ``bits`` bits."""
    try:
        from scipy.stats import qmc
    except ImportError:
        raise ImportError('minigrad.quasirandom.SobolEngine needs SciPy for its direction numbers: pip install '
                          '"minigrad[linalg]" (or pip install scipy)') from None
    sampler = qmc.Sobol(dimension, scramble=False, bits=bits)
    numbers = getattr(sampler, "_sv", None)
    if numbers is None:      # pragma: no cover - a SciPy that keeps them elsewhere
        from scipy.stats._sobol import _initialize_v
        numbers = np.zeros((dimension, bits), dtype=np.uint32)
        _initialize_v(numbers, dim=dimension, bits=bits)
    return np.array(numbers, dtype=np.int64)


def _gray_points(shift, state, indices):
    """The points ``indices`` (int64, any shape) of the sequence as integers: the shift XOR the direction numbers
    of the bits set in each index's Gray code. Result: indices.shape + (dimension,)."""
    gray = indices ^ (indices >> 1)
    points = np.broadcast_to(shift, indices.shape + shift.shape).copy()
    for bit in range(state.shape[1]):
        chosen = ((gray >> bit) & 1).astype(bool)
        if chosen.any():
            points[chosen] ^= state[:, bit]
    return points


class SobolEngine:
    """Draws points of a (scrambled) Sobol' sequence in [0, 1)^dimension; each draw continues the sequence."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _direction_numbers(dimension, self.MAXBIT)
        if scramble:
            shift, state = self._scrambled(state)
        else:
            shift = np.zeros(dimension, dtype=np.int64)
        self.sobolstate = Tensor(state)
        self.shift = Tensor(shift)
        self.quasi = Tensor(shift.copy())
        from .dtypes import get_default_dtype
        self._first_point = Tensor((shift / 2 ** self.MAXBIT).astype(get_default_dtype()).reshape(1, -1))
        self.num_generated = 0

    def _scrambled(self, state):
        """A random digital shift, and the direction numbers after a random lower-triangular (unit diagonal)
        binary matrix per dimension is applied to their bits: drawn in PyTorch's order from a generator of its own
        (the shift's bits, then the matrices), so a seed gives PyTorch's scramble."""
        from .random import Generator, randint
        generator = Generator()
        if self.seed is None:
            generator.seed()
        else:
            generator.manual_seed(self.seed)
        bits = self.MAXBIT
        shift_bits = randint(2, (self.dimension, bits), generator=generator)._data       # (dimension, bits)
        shift = (shift_bits << np.arange(bits)).sum(axis=1).astype(np.int64)
        ltm = np.tril(randint(2, (self.dimension, bits, bits), generator=generator)._data)  # (dimension, p, q)
        ltm[:, np.arange(bits), np.arange(bits)] = 1
        # bits of each direction number, most significant first: digits[d, j, q]
        digits = (state[:, :, None] >> (bits - 1 - np.arange(bits))) & 1
        scrambled = np.einsum("dpq,djq->djp", ltm, digits) & 1
        state = (scrambled << (bits - 1 - np.arange(bits))).sum(axis=2).astype(np.int64)
        return shift, state

    def _points(self, start, n):
        indices = np.arange(start, start + n, dtype=np.int64)
        return _gray_points(self.shift._data, self.sobolstate._data, indices)

    def draw(self, n=1, out=None, dtype=None):
        """The next ``n`` points, an (n, dimension) tensor (the default dtype unless ``dtype``); ``out`` receives
        them if given."""
        from .dtypes import get_default_dtype
        dtype = np.dtype(get_default_dtype() if dtype is None else dtype)
        start = self.num_generated
        points = self._points(start, n)
        result = points.astype(dtype) * dtype.type(2.0 ** -self.MAXBIT)
        if start == 0 and n >= 1:
            result[0] = self._first_point._data[0].astype(dtype)
        if n >= 1:
            self.quasi = Tensor(points[-1].copy())
        self.num_generated += n
        result = Tensor(np.ascontiguousarray(result.reshape(n, self.dimension)))
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next ``2**m`` points; the total drawn must stay a power of 2 (the balance of Sobol' points)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                             "If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self.quasi = Tensor(self.shift._data.copy())
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip ``n`` points (as drawing them would)."""
        self.num_generated += n
        last = max(self.num_generated - 1, 0)
        self.quasi = Tensor(self._points(last, 1)[0].copy())
        return self

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
