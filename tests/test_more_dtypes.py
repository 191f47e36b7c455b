"""uint16, uint32, uint64 and the float8 dtypes: PyTorch's "limited support" dtypes, against PyTorch.

Conversions are compared bit for bit (``.view(uint8)`` of float8 results, integers exactly) over random float32
bit patterns (NaNs, infinities and out-of-range values among them), every float8 bit pattern, and values next to
the rounding ties. What PyTorch refuses (most arithmetic, promotion across these dtypes) must be refused with the
same exception type and kernel name. A few tests need no PyTorch: hand-computed bit patterns and ml_dtypes' own
conversion where PyTorch's agrees with it.
"""
import io

import ml_dtypes
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
UINTS = ["uint16", "uint32", "uint64"]
LIMITED = UINTS + FLOAT8
OTHERS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _float32_probe(seed=0):
    """float32 values for conversions: random bit patterns, wide-range normals, the float8 limits and ties."""
    rng = np.random.default_rng(seed)
    random = rng.integers(0, 1 << 32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    spread = (rng.standard_normal(20_000) * np.exp(rng.uniform(-30, 30, 20_000))).astype(np.float32)
    special = np.array([0.0, -0.0, 1.0, -1.5, 448, 449, 464, 465, 480, 500, 240, 241, 248, 256, 57344, 61439, 61440,
                        1e6, -1e6, 3e38, 1e-10, -1e-10, 2.0 ** -127, 2.0 ** -126, 1.5 * 2.0 ** -127, 2.0 ** 127,
                        1.5 * 2.0 ** 127, 0.0009765625, 0.00097, 1.0625, 1.1875, 3.0, 3.5, np.inf, -np.inf, np.nan,
                        -np.nan], dtype=np.float32)
    every = np.arange(256, dtype=np.uint8)
    ties = []       # each float8 value, and the midpoints to its neighbours with a float32 ulp either side
    for name in FLOAT8:
        values = every.view(getattr(ml_dtypes, name)).astype(np.float32)
        values = np.unique(values[np.isfinite(values)])
        mids = (values[1:] + values[:-1]) / 2
        ties += [values, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))]
    return np.concatenate([random, spread, special] + ties).astype(np.float32)


def _torch_from(torch, array):
    """A torch tensor of ``array``'s values, bit for bit (bfloat16 through its bits)."""
    array = np.ascontiguousarray(array)
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _raw(t):
    """The elements of a minigrad or torch tensor as a NumPy array: integers as they are, float8 as its bits."""
    if t.dtype.itemsize == 1 and "float8" in str(t.dtype):
        return t.contiguous().view(__import__("torch").uint8 if "torch" in str(t.dtype) else mg.uint8).numpy()
    return t.contiguous().numpy()


# --------------------------------------------------------------------------- names, info, promotion
@pytest.mark.parametrize("name", LIMITED)
def test_names_and_type_strings(name):
    torch = torch_or_skip()
    dtype = getattr(mg, name)
    x = mg.zeros(2, dtype=dtype)
    assert x.dtype == dtype and dtype.itemsize == getattr(torch, name).itemsize
    assert x.type() == torch.zeros(2, dtype=getattr(torch, name)).type().replace("torch.", "minigrad.")
    assert mg.is_floating_point(x) == getattr(torch, name).is_floating_point
    assert x.is_signed() == getattr(torch, name).is_signed


@pytest.mark.parametrize("name", UINTS)
def test_iinfo(name):
    torch = torch_or_skip()
    ours, theirs = mg.iinfo(getattr(mg, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)


def test_iinfo_without_torch():
    assert mg.iinfo(mg.uint16).max == 65535 and mg.iinfo(mg.uint32).max == 4294967295
    assert mg.iinfo(mg.uint64).max == 18446744073709551615 and mg.iinfo(mg.uint64).min == 0


@pytest.mark.parametrize("name", FLOAT8)
def test_finfo(name):
    torch = torch_or_skip()
    ours, theirs = mg.finfo(getattr(mg, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


def test_finfo_without_torch():
    info = mg.finfo(mg.float8_e4m3fn)
    assert (info.max, info.min, info.eps, info.tiny, info.resolution) == (448.0, -448.0, 0.125, 2.0 ** -6, 1.0)
    assert mg.finfo(mg.float8_e5m2).max == 57344.0 and mg.finfo(mg.float8_e4m3fnuz).max == 240.0


@pytest.mark.parametrize("name", LIMITED)
def test_promote_types(name):
    torch = torch_or_skip()
    for other in LIMITED + OTHERS:
        for pair in ((name, other), (other, name)):
            try:
                expected = torch.promote_types(*(getattr(torch, n) for n in pair))
            except RuntimeError as err:
                with pytest.raises(RuntimeError, match="Promotion for") as ours:
                    mg.promote_types(*(getattr(mg, n) for n in pair))
                assert str(ours.value) == str(err)
            else:
                assert mg.promote_types(*(getattr(mg, n) for n in pair)) == getattr(mg, str(expected)[6:]), pair
            assert mg.can_cast(*(getattr(mg, n) for n in pair)) == torch.can_cast(*(getattr(torch, n) for n in pair))


def test_promotion_without_torch():
    assert mg.promote_types(mg.uint32, mg.float16) == mg.float16
    with pytest.raises(RuntimeError, match="attempted to promote UInt32 and Long"):
        mg.promote_types(mg.uint32, mg.int64)
    with pytest.raises(RuntimeError, match="Float8 Types .* Float8_e4m3fn and Float$"):
        mg.promote_types(mg.float8_e4m3fn, mg.float32)


@pytest.mark.parametrize("name", LIMITED)
def test_result_type_with_scalars_and_0dim(name):
    torch = torch_or_skip()
    ours_x, theirs_x = mg.ones(3, dtype=getattr(mg, name)), torch.ones(3, dtype=getattr(torch, name))
    operands = [(1, 1), (1.5, 1.5), (True, True), (mg.tensor(1), torch.tensor(1)), (mg.tensor(1.0), torch.tensor(1.0)),
                (mg.tensor(True), torch.tensor(True)), (mg.ones(3), torch.ones(3)), (1j, 1j),
                (mg.tensor(1j), torch.tensor(1j)),
                (mg.ones(3, dtype=mg.complex64), torch.ones(3, dtype=torch.complex64))]
    for ours_y, theirs_y in operands:
        for ours, theirs in (((ours_x, ours_y), (theirs_x, theirs_y)), ((ours_y, ours_x), (theirs_y, theirs_x))):
            try:
                expected = torch.result_type(*theirs)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    mg.result_type(*ours)
            else:
                assert mg.result_type(*ours) == getattr(mg, str(expected)[6:]), ours


# --------------------------------------------------------------------------- conversions
@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("source", ["float32", "float64", "float16", "bfloat16"])
def test_cast_to_float8_bits(name, source):
    torch = torch_or_skip()
    values = _float32_probe()
    with np.errstate(over="ignore", invalid="ignore"):
        if source == "float64":      # float64 values a hair off the float32 ones: PyTorch rounds through float32
            values = np.concatenate([values, values * (1 + np.float64(2.0 ** -40))]).astype(np.float64)
        values = values.astype(ml_dtypes.bfloat16 if source == "bfloat16" else source)   # the same bits for both
    theirs = _torch_from(torch, values).to(getattr(torch, name)).view(torch.uint8).numpy()
    dtype = getattr(mg, name)
    for ours in (mg.tensor(values).to(dtype), mg.tensor(values, dtype=dtype)):      # (the second saturated to NaN)
        np.testing.assert_array_equal(ours.view(mg.uint8).numpy(), theirs)
    if source == "float64":                            # and from Python floats
        some = values[::53].tolist()
        np.testing.assert_array_equal(mg.tensor(some, dtype=dtype).view(mg.uint8).numpy(),
                                      torch.tensor(some, dtype=getattr(torch, name)).view(torch.uint8).numpy())


@pytest.mark.parametrize("name", FLOAT8)
def test_cast_from_float8_every_pattern(name):
    torch = torch_or_skip()
    every = np.arange(256, dtype=np.uint8)
    ours, theirs = mg.tensor(every).view(getattr(mg, name)), _torch_from(torch, every).view(getattr(torch, name))
    for target in ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"] + FLOAT8:
        a, b = ours.to(getattr(mg, target)), theirs.to(getattr(torch, target))
        if target in FLOAT8:
            np.testing.assert_array_equal(a.view(mg.uint8).numpy(), b.view(torch.uint8).numpy(), err_msg=target)
        elif target in ("float32", "float64", "float16"):   # bit for bit, NaN payloads included
            width = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16}[target]
            np.testing.assert_array_equal(a.numpy().view(width), b.numpy().view(width), err_msg=target)
        else:
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=target)
    np.testing.assert_array_equal(ours.to(mg.bfloat16).view(mg.int16).numpy(),
                                  theirs.to(torch.bfloat16).view(torch.int16).numpy())


@pytest.mark.parametrize("name", FLOAT8)
def test_cast_integers_and_bools_to_float8(name):
    torch = torch_or_skip()
    ints = np.array([0, 1, -1, 2, 3, 300, -300, 449, 464, 465, 10 ** 6, 2 ** 40, -2 ** 40, 57344, 61440], np.int64)
    for source in ("int64", "int32", "int16", "uint8", "bool"):
        data = ints.astype(source) if source != "bool" else ints % 2 == 0
        ours = mg.tensor(data).to(getattr(mg, name)).view(mg.uint8).numpy()
        theirs = _torch_from(torch, data).to(getattr(torch, name)).view(torch.uint8).numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=source)


@pytest.mark.parametrize("name", FLOAT8)
def test_python_numbers_written_into_float8_convert_as_pytorch(name):
    """``x[i] = v`` and ``where(c, x, v)``: the number converted as PyTorch converts it into a tensor (through float32,
    saturating where the dtype saturates), and ``full`` of it, which PyTorch checks, refused where PyTorch refuses."""
    torch = torch_or_skip()
    for number in (2.0, 464.0, 70000.0, 1e6, float("inf"), float("nan"), -1.0, 0.0, 1.0625 + 2 ** -30):
        results = []
        for lib in (torch, mg):
            x = lib.zeros(2, dtype=getattr(lib, name))
            x[0] = number
            chosen = lib.where(lib.tensor([False, True]), x, number)
            try:
                full = lib.full((1,), number, dtype=getattr(lib, name)).view(lib.uint8).tolist()
            except RuntimeError:
                full = "RuntimeError"
            results.append((x.view(lib.uint8).tolist(), chosen.view(lib.uint8).tolist(), full))
        assert results[1] == results[0], number


def test_float8_bit_patterns_without_torch():
    """Hand-derived bits: e4m3fn saturates at 448 (0x7E), infinities too, and NaN is 0x7F with its sign;
    e5m2 overflows to infinity (0x7C); e8m0fnu keeps only the exponent, rounding up from half a binade."""
    x = mg.tensor([448.0, 500.0, 1e6, float("inf"), -float("inf"), float("nan"), -1.0, 1.0, 0.0, 2.0 ** -9])
    assert x.to(mg.float8_e4m3fn).view(mg.uint8).tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0xB8, 0x38, 0, 1]
    assert x.to(mg.float8_e5m2).view(mg.uint8).tolist()[:8] == [0x5F, 0x60, 0x7C, 0x7C, 0xFC, 0x7F, 0xBC, 0x3C]
    y = mg.tensor([1.0, 1.5, 1.4999, 3.0, -2.0, 0.0, 2.0 ** 127, 1.5 * 2.0 ** 127, 2.0 ** -127, float("nan")])
    assert y.to(mg.float8_e8m0fnu).view(mg.uint8).tolist() == [127, 128, 127, 129, 128, 0, 254, 255, 0, 255]
    assert mg.tensor([0x7E], dtype=mg.uint8).view(mg.float8_e4m3fn).item() == 448.0
    # in range: 1.125 is 0x39 exactly; 0.1 rounds to 0.1015625 (0x1D), 3.3 to 3.25 (0x45), -17 (a tie) to -16 (0xD8)
    assert mg.tensor([1.125, 0.1, 3.3, -17.0]).to(mg.float8_e4m3fn).view(mg.uint8).tolist() == [0x39, 0x1D, 0x45, 0xD8]


@pytest.mark.parametrize("name", ["float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_fnuz_casts_agree_with_ml_dtypes(name):
    """PyTorch's fnuz conversions are ml_dtypes' (no NaN payloads or saturation to differ): no torch needed."""
    values = _float32_probe(1)
    ours = mg.tensor(values).to(getattr(mg, name)).view(mg.uint8).numpy()
    with np.errstate(invalid="ignore"):
        expected = values.astype(getattr(ml_dtypes, name)).view(np.uint8)
    np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize("name", UINTS)
def test_uint_casts(name):
    torch = torch_or_skip()
    values = np.concatenate([_float32_probe(2)[::7], np.array([1e19, 1.8e19, 2e19, -3e19, 70000, 3e9, -70000,
                                                               4294967295.0, 2.0 ** 63], np.float32)])
    for source in ("float32", "float64", "float16"):
        with np.errstate(all="ignore"):
            data = values.astype(source)
            if name == "uint32":    # PyTorch's results out of [-2**31, 2**32) depend on its loop (vectorized or not)
                data = data[np.isfinite(data) & (data >= -2.0 ** 31) & (data < 2.0 ** 32)]
        theirs = _torch_from(torch, data).to(getattr(torch, name)).numpy()
        np.testing.assert_array_equal(mg.tensor(data).to(getattr(mg, name)).numpy(), theirs, err_msg=source)
    ints = np.array([0, 1, -1, 70000, 2 ** 32 - 1, 2 ** 32 + 5, 2 ** 40, -2 ** 63, 2 ** 63 - 1], np.int64)
    np.testing.assert_array_equal(mg.tensor(ints).to(getattr(mg, name)).numpy(),
                                  _torch_from(torch, ints).to(getattr(torch, name)).numpy())
    top = np.array([0, 1, np.iinfo(name).max, np.iinfo(name).max // 2 + 1], dtype=name)
    for target in ("int64", "int32", "int16", "float32", "float64", "float16", "uint8", "bool"):
        np.testing.assert_array_equal(mg.from_numpy(top).to(getattr(mg, target)).numpy(),
                                      _torch_from(torch, top).to(getattr(torch, target)).numpy(), err_msg=target)


def test_uint_casts_without_torch():
    x = mg.tensor([-1.5, 3e10, 70000.0, 1e19, float("nan"), -70000.0, -3e9])
    assert x.to(mg.uint16).tolist() == [65535, 0, 4464, 0, 0, 61072, 0]
    assert x.to(mg.uint32).tolist() == [4294967295, 0, 70000, 0, 2 ** 31, 4294897296, 2 ** 31]
    assert x.to(mg.uint64).tolist() == [2 ** 64 - 1, 30000001024, 70000, 9999999980506447872, 2 ** 63,
                                        2 ** 64 - 70000, 2 ** 64 - 3 * 10 ** 9]


# --------------------------------------------------------------------------- creation, printing, numpy
@pytest.mark.parametrize("name", LIMITED)
def test_creation_and_repr(name):
    torch = torch_or_skip()
    m, t = getattr(mg, name), getattr(torch, name)
    cases = [lambda lib, d: lib.zeros(2, 3, dtype=d), lambda lib, d: lib.ones(3, dtype=d),
             lambda lib, d: lib.full((2,), 3, dtype=d), lambda lib, d: lib.tensor([1, 2, 4], dtype=d),
             lambda lib, d: lib.zeros_like(lib.ones(2, dtype=d)), lambda lib, d: lib.tensor(5, dtype=d),
             lambda lib, d: lib.tensor([1.0, 2.0, 3.0]).to(d)]
    for make in cases:
        ours, theirs = make(mg, m), make(torch, t)
        assert ours.dtype == m and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(_raw(ours), _raw(theirs))
        if name != "float8_e8m0fnu":        # PyTorch prints e8m0fnu's 2**-127 as 0
            assert repr(ours) == repr(theirs).replace("torch.", "minigrad.")
    assert mg.empty(4, dtype=m).dtype == m and mg.empty(4, dtype=m).shape == (4,)
    with pytest.raises(NotImplementedError, match="arange_cpu"):
        mg.arange(3, dtype=m)


@pytest.mark.parametrize("name", UINTS)
def test_numpy_round_trip(name):
    torch = torch_or_skip()
    array = np.array([0, 7, np.iinfo(name).max], dtype=name)
    x = mg.from_numpy(array)
    assert x.dtype == getattr(mg, name) and x.numpy() is not None and np.shares_memory(x.numpy(), array)
    assert x.tolist() == torch.from_numpy(array).tolist() and type(x[2].item()) is int
    assert x[2].item() == torch.from_numpy(array)[2].item()
    assert mg.tensor(array).dtype == getattr(mg, name)


def test_float8_views_between_one_byte_dtypes():
    torch = torch_or_skip()
    every = np.arange(256, dtype=np.uint8)
    for name in FLOAT8:
        ours, theirs = mg.tensor(every).view(getattr(mg, name)), _torch_from(torch, every).view(getattr(torch, name))
        np.testing.assert_array_equal(ours.view(mg.int8).numpy(), theirs.view(torch.int8).numpy())
        for other in FLOAT8:
            np.testing.assert_array_equal(ours.view(getattr(mg, other)).view(mg.uint8).numpy(), every)


# --------------------------------------------------------------------------- ops: what runs, what is refused
def _ops(lib, x, y, mask):
    return {
        "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y, "neg": lambda: -x,
        "rem": lambda: x % y, "abs": lambda: x.abs(), "pow": lambda: x ** 2, "max": lambda: x.max(),
        "min": lambda: x.min(), "amax": lambda: x.amax(), "maximum": lambda: lib.maximum(x, y),
        "clamp": lambda: x.clamp(min=1), "relu": lambda: lib.relu(x), "flip": lambda: x.flip(0),
        "masked_fill": lambda: x.masked_fill(mask, 0), "mm": lambda: x.reshape(3, 1) @ y.reshape(1, 3),
        "sum": lambda: x.sum(), "cumsum": lambda: x.cumsum(0), "prod": lambda: x.prod(), "eq": lambda: x == y,
        "ne": lambda: x != y, "lt": lambda: x < y, "ge": lambda: x >= y, "where": lambda: lib.where(mask, x, y),
        "cat": lambda: lib.cat([x, y]), "stack": lambda: lib.stack([x, y]), "index": lambda: x[[0, 2]],
        "clone": lambda: x.clone(), "t": lambda: x.reshape(3, 1).t().contiguous(), "unsqueeze": lambda: x.unsqueeze(0),
        "expand": lambda: x.reshape(3, 1).expand(3, 2).contiguous(), "mul_scalar": lambda: x * 2,
        "index_select": lambda: x.index_select(0, lib.tensor([2, 0])), "roll": lambda: x.roll(1),
        "add_float32": lambda: x + lib.ones(3), "add_int64": lambda: x + lib.ones(3, dtype=lib.int64),
        "exp": lambda: x.exp(), "copy_": lambda: lib.zeros(3, dtype=x.dtype).copy_(lib.tensor([1.0, 500.0, -3.0])),
        "fill_": lambda: x.clone().fill_(2.5), "setitem": lambda: _setitem(x.clone()),
        **_more_ops(lib, x, y, mask),
    }


def _more_ops(lib, x, y, mask):
    """In-place arithmetic (which must not write what the out-of-place op refuses), ops that are no Function or
    whose forward is a classmethod, products by a one-element operand, and index writes."""
    index = lib.tensor([0, 2])
    return {
        "add_": lambda: x.clone().add_(y), "sub_": lambda: x.clone().sub_(y), "mul_": lambda: x.clone().mul_(y),
        "mul_int": lambda: x.clone().mul_(2), "div_": lambda: x.clone().div_(y), "pow_": lambda: x.clone().pow_(2),
        "neg_": lambda: x.clone().neg_(), "exp_": lambda: x.clone().exp_(), "sqrt_": lambda: x.clone().sqrt_(),
        "relu_": lambda: x.clone().relu_(), "clamp_": lambda: x.clone().clamp_(0, 1),
        "addcmul_": lambda: x.clone().addcmul_(x, y), "lerp_": lambda: x.clone().lerp_(y, 0.5),
        "zero_": lambda: x.clone().zero_(), "eq_": lambda: x.clone().eq_(y), "floor_": lambda: x.clone().floor_(),
        "mul_0d": lambda: x * y[0], "mul_one": lambda: x * y[:1], "mul_expanded": lambda: x * y[:1].expand(3),
        "mul_0d_left": lambda: y[0] * x, "mul_0d_": lambda: x.clone().mul_(y[0]),
        "hypot": lambda: lib.hypot(x, y), "copysign": lambda: lib.copysign(x, y), "xlogy": lambda: lib.xlogy(x, y),
        "tan": lambda: x.tan(), "logaddexp": lambda: lib.logaddexp(x, y), "fmod": lambda: lib.fmod(x, y),
        "square": lambda: x.square(), "sign": lambda: x.sign(), "bitwise_not": lambda: x.bitwise_not(),
        "logical_and": lambda: lib.logical_and(x, y), "logical_not": lambda: lib.logical_not(x),
        "floor_divide": lambda: lib.floor_divide(x, y), "floor_divide_float": lambda: lib.floor_divide(x, 2.0),
        "scatter_": lambda: x.clone().scatter_(0, index, y[:2]), "scatter_value": lambda: x.scatter(0, index, 2.0),
        "scatter_add": lambda: x.scatter_add(0, index, y[:2]),
        "scatter_reduce": lambda: x.scatter_reduce(0, index, y[:2], "sum"),
        "index_add_": lambda: x.clone().index_add_(0, index, y[:2]), "index_fill": lambda: x.index_fill(0, index, 2),
        "index_copy_": lambda: x.clone().index_copy_(0, index, y[:2]),
        "masked_fill_": lambda: x.clone().masked_fill_(mask, 2), "masked_scatter": lambda: x.masked_scatter(mask, y),
        "index_put_": lambda: x.clone().index_put_((index,), y[:2]),
        "index_put_add": lambda: x.clone().index_put_((index,), y[:2], accumulate=True),
        "put_": lambda: x.clone().put_(index, y[:2]), "setitem_mask": lambda: _setitem(x.clone(), mask, 2.0),
        "setitem_index": lambda: _setitem(x.clone(), index, y[:2]),
        # selections, searches, counts and creations that are no Function
        "argmax": lambda: x.argmax(), "argmin": lambda: x.argmin(0), "topk": lambda: x.topk(2)[1],
        "sort": lambda: x.sort()[1], "argsort": lambda: x.argsort(), "nonzero": lambda: x.nonzero(),
        "count_nonzero": lambda: lib.count_nonzero(x), "cummax": lambda: x.cummax(0)[1],
        "cummin": lambda: x.cummin(0)[1], "searchsorted": lambda: lib.searchsorted(x, y),
        "gather": lambda: x.gather(0, index), "take": lambda: x.take(index),
        "histc": lambda: lib.histc(x), "isin": lambda: lib.isin(x, y), "fmax": lambda: lib.fmax(x, y),
        "kthvalue": lambda: x.kthvalue(1)[1], "mode": lambda: x.mode()[1], "bincount": lambda: lib.bincount(x),
        "dot": lambda: lib.dot(x, y), "lshift": lambda: x << 1, "rshift": lambda: x >> 1,
        "unique": lambda: lib.unique(x), "equal": lambda: lib.tensor(lib.equal(x, y)),
        "equal_itself": lambda: lib.tensor(lib.equal(x, x)), "isclose": lambda: lib.isclose(x, y),
        "signbit": lambda: x.signbit(),
        "embedding": lambda: lib.nn.functional.embedding(index, x.reshape(3, 1)),
        "linspace": lambda: lib.linspace(0, 2, 3, dtype=x.dtype),
        "logspace": lambda: lib.logspace(0, 1, 2, dtype=x.dtype),
        "eye": lambda: lib.eye(2, dtype=x.dtype), "max_dim": lambda: x.max(0)[1], "min_dim": lambda: x.min(0)[1],
        "trace": lambda: lib.diag(x).trace(), "isinf": lambda: x.isinf(), "isfinite": lambda: x.isfinite(),
        "isposinf": lambda: x.isposinf(), "isneginf": lambda: x.isneginf(), "std": lambda: x.std(),
        "var_dim": lambda: x.var(0), "var_mean": lambda: lib.var_mean(x)[0], "std_mean": lambda: lib.std_mean(x)[0],
    }


def _setitem(x, index=1, value=5):
    x[index] = value
    return x


_INEXACT = {"exp", "exp_", "sqrt_", "hypot", "xlogy", "tan", "logaddexp"}


@pytest.mark.parametrize("name", LIMITED)
def test_ops_run_or_refuse_as_pytorch(name):
    torch = torch_or_skip()
    values, other = [1.0, 2.0, 3.0], [3.0, 2.0, 1.0]
    ours = _ops(mg, mg.tensor(values).to(getattr(mg, name)), mg.tensor(other).to(getattr(mg, name)),
                mg.tensor([True, False, True]))
    theirs = _ops(torch, torch.tensor(values).to(getattr(torch, name)), torch.tensor(other).to(getattr(torch, name)),
                  torch.tensor([True, False, True]))
    wrong = []
    for op in ours:
        try:
            expected = theirs[op]()
        except (NotImplementedError, RuntimeError) as err:
            try:
                ours[op]()
                wrong.append(f"{op}: runs, PyTorch raises {err!r}")
            except type(err) as raised:
                if isinstance(err, NotImplementedError) and raised.args[0].split("'")[-2] != err.args[0].split("'")[-2]:
                    wrong.append(f"{op}: {raised!r}, PyTorch {err!r}")       # the dtype's name in the message
            continue
        result = ours[op]()
        same = np.allclose if op in _INEXACT else np.array_equal  # float32 libraries differ in the last bit
        if result.dtype != getattr(mg, str(expected.dtype)[6:]) or not same(_raw(result), _raw(expected)):
            wrong.append(f"{op}: {result!r}, PyTorch {expected!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_float8_mul_abs_mm_bits(name):
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(4000) * np.exp(rng.uniform(-6, 6, 4000))).astype(np.float32)
    b = (rng.standard_normal(4000) * np.exp(rng.uniform(-6, 6, 4000))).astype(np.float32)
    a[:5] = [np.nan, -np.nan, -0.0, 0.0, np.inf]
    xa, xb = mg.tensor(a).to(getattr(mg, name)), mg.tensor(b).to(getattr(mg, name))
    ta, tb = _torch_from(torch, a).to(getattr(torch, name)), _torch_from(torch, b).to(getattr(torch, name))
    np.testing.assert_array_equal((xa * xb).view(mg.uint8).numpy(), (ta * tb).view(torch.uint8).numpy())
    every = np.arange(256, dtype=np.uint8)
    for chunk in range(0, 256, 32):   # below 64 elements PyTorch's element loop runs (its vectorized one keeps -0)
        part = every[chunk:chunk + 32]
        theirs = _torch_from(torch, part).view(getattr(torch, name)).abs().view(torch.uint8).numpy()
        np.testing.assert_array_equal(mg.tensor(part).view(getattr(mg, name)).abs().view(mg.uint8).numpy(), theirs)
    # small integers and eighths: every product and partial sum is exact in float32, so the float8 result does not
    # depend on the order a BLAS sums in (which differs between CPUs)
    ma = rng.integers(-6, 7, (8, 16)).astype(np.float32)
    mb = (rng.integers(-12, 13, (16, 5)) / 8).astype(np.float32)
    ours = mg.tensor(ma).to(getattr(mg, name)) @ mg.tensor(mb).to(getattr(mg, name))
    theirs = _torch_from(torch, ma).to(getattr(torch, name)) @ _torch_from(torch, mb).to(getattr(torch, name))
    np.testing.assert_array_equal(ours.view(mg.uint8).numpy(), theirs.view(torch.uint8).numpy())


def test_refusals_without_torch():
    u = mg.tensor([1, 2, 3], dtype=mg.uint32)
    with pytest.raises(NotImplementedError, match="\"add_stub\" not implemented for 'UInt32'"):
        u + u
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types"):
        u + mg.tensor([1, 2, 3])
    assert (u * u).tolist() == [1, 4, 9] and (u + mg.ones(3)).dtype == mg.float32
    f = mg.tensor([1.0, 2.0]).to(mg.float8_e4m3fn)
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        f + f
    with pytest.raises(NotImplementedError, match="mul_cpu_reduced_float"):
        f * 2
    assert (f * f).float().tolist() == [1.0, 4.0]


# --------------------------------------------------------------------------- saving and loading
@pytest.mark.parametrize("name", LIMITED)
def test_load_pytorch_checkpoint(name):
    torch = torch_or_skip()
    every = np.arange(256, dtype=np.uint8)
    if name in FLOAT8:
        t = _torch_from(torch, every).view(getattr(torch, name))
    else:
        t = _torch_from(torch, np.array([0, 1, np.iinfo(name).max, 12345], dtype=name))
    buffer = io.BytesIO()
    torch.save({"w": t, "strided": t[1::3], "dtype": getattr(torch, name)}, buffer)
    loaded = mg.load(io.BytesIO(buffer.getvalue()))
    assert loaded["dtype"] == getattr(mg, name)
    for key in ("w", "strided"):
        assert loaded[key].dtype == getattr(mg, name)
        np.testing.assert_array_equal(_raw(loaded[key]), _raw({"w": t, "strided": t[1::3]}[key]))


@pytest.mark.parametrize("name", LIMITED)
def test_minigrad_save_load_round_trip(name, tmp_path):
    every = np.arange(256, dtype=np.uint8)
    x = mg.tensor(every).view(getattr(mg, name)) if name in FLOAT8 else \
        mg.from_numpy(np.array([0, 1, np.iinfo(name).max], dtype=name))
    mg.save({"x": x}, tmp_path / "a.mg")
    y = mg.load(tmp_path / "a.mg")["x"]
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(_raw(y), _raw(x))


@pytest.mark.parametrize("name,code", [("uint16", "U16"), ("uint32", "U32"), ("uint64", "U64"),
                                       ("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2")])
def test_safetensors(name, code, tmp_path):
    torch = torch_or_skip()
    safetensors_torch = pytest.importorskip("safetensors.torch")
    pytest.importorskip("safetensors.numpy")
    every = np.arange(256, dtype=np.uint8)
    t = _torch_from(torch, every).view(getattr(torch, name)) if name in FLOAT8 else \
        _torch_from(torch, np.array([0, 1, np.iinfo(name).max], dtype=name))
    safetensors_torch.save_file({"t": t}, str(tmp_path / "a.safetensors"))
    loaded = mg.serialization.load_safetensors(tmp_path / "a.safetensors")["t"]
    assert loaded.dtype == getattr(mg, name)
    np.testing.assert_array_equal(_raw(loaded), _raw(t))


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"])
def test_safetensors_round_trip(name, tmp_path):
    pytest.importorskip("safetensors.numpy")
    x = mg.tensor(np.arange(256, dtype=np.uint8)).view(getattr(mg, name)) if name in FLOAT8 else \
        mg.from_numpy(np.array([0, 1, np.iinfo(name).max], dtype=name))
    mg.serialization.save_safetensors({"x": x}, tmp_path / "a.safetensors")
    y = mg.serialization.load_safetensors(tmp_path / "a.safetensors")["x"]
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(_raw(y), _raw(x))


# --------------------------------------------------------------------------- numbers written into each dtype
_WRITES = {
    "x[0] = v": lambda lib, x, v: x.__setitem__(0, v), "x[0:2] = v": lambda lib, x, v: x.__setitem__(slice(0, 2), v),
    "x[index] = v": lambda lib, x, v: x.__setitem__(lib.tensor([0, 1]), v),
    "x[mask] = v": lambda lib, x, v: x.__setitem__(lib.tensor([True, False, True]), v),
    "where": lambda lib, x, v: lib.where(lib.tensor([True, False, True]), x, v),
    "index_fill": lambda lib, x, v: x.index_fill(0, lib.tensor([0]), v), "fill_": lambda lib, x, v: x.fill_(v),
    "masked_fill": lambda lib, x, v: x.masked_fill(lib.tensor([True, False, True]), v),
    "scatter": lambda lib, x, v: x.scatter(0, lib.tensor([0]), v), "clamp": lambda lib, x, v: x.clamp(max=v),
}


@pytest.mark.parametrize("name", UINTS + ["float8_e4m3fn", "uint8", "int16", "float16", "bfloat16", "float32", "bool"])
def test_numbers_written_into_each_dtype_as_pytorch(name):
    """Out-of-range, negative, fractional and non-finite Python numbers written by index writes, where, fills and
    clamp: each checked (PyTorch's overflow error), converted (70000 into float16 is inf, -1 into uint8 wraps) or
    refused for the dtype first, as PyTorch does."""
    torch = torch_or_skip()
    wrong = []
    for value in [70000, 2 ** 40, -1, -70000, 1e10, 464.0, float("inf"), 1e39, -2.5, 3]:
        for write, fn in _WRITES.items():
            outcomes = []
            for lib in (torch, mg):
                x = lib.ones(3, dtype=getattr(lib, name))
                try:
                    out = fn(lib, x, value)
                    outcomes.append(repr((x if out is None else out).tolist()))
                except (RuntimeError, NotImplementedError, OverflowError, TypeError) as error:
                    outcomes.append(type(error).__name__)
            if outcomes[0] != outcomes[1]:
                wrong.append(f"{write} with {value!r}: {outcomes[1]}, PyTorch {outcomes[0]}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", LIMITED)
def test_padding_moves_or_refuses_as_pytorch(name):
    """Constant and circular padding move values (the fill converted as fill_ converts it: 500 overflows
    float8_e4m3fn, 0 float8_e8m0fnu); reflection and replication padding PyTorch refuses for these dtypes."""
    torch = torch_or_skip()
    calls = {"zeros": lambda F, x: F.pad(x, (1, 1)), "value": lambda F, x: F.pad(x, (1, 2), value=2.0),
             "too large": lambda F, x: F.pad(x, (1, 1), value=500.0), "crop": lambda F, x: F.pad(x, (-1, 1), value=3),
             "crop only": lambda F, x: F.pad(x, (-1, 0)),
             "2-D": lambda F, x: F.pad(x.reshape(1, 3), (1, 1, 1, 0), value=1.5),
             "circular": lambda F, x: F.pad(x.reshape(1, 1, 3), (1, 1), mode="circular"),
             "reflect": lambda F, x: F.pad(x.reshape(1, 3), (1, 1), mode="reflect"),
             "replicate": lambda F, x: F.pad(x.reshape(1, 1, 3), (1, 1, 0, 0), mode="replicate")}
    wrong = []
    for call, fn in calls.items():
        outcomes = []
        for lib in (torch, mg):
            x = lib.tensor([1.0, 2.0, 4.0]).to(getattr(lib, name))
            try:
                outcomes.append(_raw(fn(lib.nn.functional, x)).tolist())
            except (RuntimeError, NotImplementedError) as error:
                outcomes.append(type(error).__name__)
        if outcomes[1] != outcomes[0]:
            wrong.append(f"{call}: {outcomes[1]}, PyTorch {outcomes[0]}")
    assert not wrong, "\n".join(wrong)


def test_a_users_function_with_a_classmethod_forward_is_not_refused_for_its_dtypes():
    """minigrad's own Functions with a classmethod forward are checked for the limited dtypes per call; a user's
    Function is the user's: it runs on them (x * 2 of float8 is float8's own product: 1 * 2 = 2, exact)."""
    class Twice(mg.autograd.Function):
        @classmethod
        def forward(cls, ctx, x):
            return x * mg.full((), 2.0, dtype=x.dtype).expand(x.shape).contiguous()

        @staticmethod
        def backward(ctx, g):
            return g * 2
    assert Twice.apply(mg.ones(2, dtype=mg.float8_e4m3fn)).float().tolist() == [2.0, 2.0]
    with pytest.raises(NotImplementedError, match="Float8_e4m3fn"):
        mg.hypot(mg.ones(2, dtype=mg.float8_e4m3fn), mg.ones(2, dtype=mg.float8_e4m3fn))
