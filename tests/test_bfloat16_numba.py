"""The numba float32 -> bfloat16 rounding (minigrad/kernels/bfloat16_numba.py) is ml_dtypes' cast bit for bit.

Inputs: every bfloat16 pattern as the upper half of a float32 (zeros, subnormals, normals, infinities, NaNs
of both signs), each with low halves at and next to the ties (0x7FFF, 0x8000, 0x8001), at the ends
(0x0000, 0x0001, 0xFFFF) and 52 random ones: 4.2M float32 values, whose rounding either way (ties to even
or away, carry into the exponent, overflow to infinity, NaN quieting) is checked against ml_dtypes.
"""
import ml_dtypes
import numpy as np
import pytest

import minigrad as mg
from minigrad.dtypes import NARROW_IN_NUMBA_FROM, cast_array
from minigrad.kernels import use_backend

pytest.importorskip("numba")

from minigrad.kernels.bfloat16_numba import narrow  # noqa: E402

LOWS = [0x0000, 0x0001, 0x0002, 0x3FFF, 0x7FFE, 0x7FFF, 0x8000, 0x8001, 0x8002, 0xBFFF, 0xFFFE, 0xFFFF]


@pytest.fixture(scope="module")
def float32_bits():
    lows = np.concatenate([LOWS, np.random.default_rng(0).integers(0, 1 << 16, 52)]).astype(np.uint32)
    return (np.arange(1 << 16, dtype=np.uint32)[:, None] << 16 | lows[None, :]).reshape(-1)   # (65536 * 64,)


def ml_dtypes_bits(u):
    with np.errstate(invalid="ignore"):
        return u.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


def test_narrow_is_ml_dtypes_rounding_bit_for_bit(float32_bits):
    got = narrow(float32_bits.view(np.float32), ml_dtypes.bfloat16)
    assert got.dtype == mg.bfloat16
    np.testing.assert_array_equal(got.view(np.uint16), ml_dtypes_bits(float32_bits))


def test_the_inputs_tell_the_roundings_apart(float32_bits):
    """Truncation and ties-away-from-zero (the usual slips) differ from ml_dtypes on these inputs."""
    want = ml_dtypes_bits(float32_bits)
    finite = (float32_bits & 0x7FFFFFFF) < 0x7F800000
    truncated = (float32_bits >> 16).astype(np.uint16)
    ties_away = ((float32_bits + 0x8000) >> 16).astype(np.uint16)
    for wrong in (truncated, ties_away):
        assert (wrong[finite] != want[finite]).any()


def test_cast_array_uses_it_on_large_arrays_with_the_same_bits_as_the_numpy_backend():
    x = np.random.default_rng(1).standard_normal((3, NARROW_IN_NUMBA_FROM), dtype=np.float32)
    x[0, :4] = [np.nan, -np.inf, 3.4e38, -0.0]
    with use_backend("numba"):
        fast = cast_array(x, mg.bfloat16)
        pooled = cast_array(x, mg.bfloat16, pooled=True)          # into reused memory: the same bits
    np.testing.assert_array_equal(pooled.view(np.uint16), fast.view(np.uint16))
    with use_backend("numpy"):
        reference = cast_array(x, mg.bfloat16)
    assert fast.shape == x.shape and fast.dtype == reference.dtype == mg.bfloat16
    np.testing.assert_array_equal(fast.view(np.uint16), reference.view(np.uint16))
    np.testing.assert_array_equal(cast_array(x[:, ::2], mg.bfloat16).view(np.uint16),   # strided input
                                  reference[:, ::2].view(np.uint16))
