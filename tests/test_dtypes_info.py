"""dtypes, their limits and PyTorch's type promotion among all of them, ``Size``, layouts and constants,
against PyTorch."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
         "complex128"]
SCALARS = [True, 2, -3, 2.5, 1j]


def _pair(torch, a, b):
    return getattr(mg, a), getattr(mg, b), getattr(torch, a), getattr(torch, b)


def _name(dtype):
    return str(dtype).rpartition(".")[2]


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_and_can_cast_every_pair(a):
    torch = torch_or_skip()
    for b in NAMES:
        ma, mb, ta, tb = _pair(torch, a, b)
        assert _name(mg.promote_types(ma, mb)) == _name(torch.promote_types(ta, tb)), (a, b)
        assert mg.can_cast(ma, mb) == torch.can_cast(ta, tb), (a, b)


@pytest.mark.parametrize("a", NAMES)
def test_result_type_of_tensors_every_pair_and_rank(a):
    """Dimensioned and 0-dim tensors in every combination: ``result_type`` and the dtype ``mul`` actually returns.
    (float16 next to a 0-dim complex tensor is complex32 in PyTorch, a dtype minigrad does not have.)"""
    torch = torch_or_skip()
    for b in NAMES:
        ma, mb, ta, tb = _pair(torch, a, b)
        for shape_a, shape_b in itertools.product([(2,), ()], repeat=2):
            x_mg, y_mg = mg.ones(shape_a, dtype=ma), mg.ones(shape_b, dtype=mb)
            x_th, y_th = torch.ones(shape_a, dtype=ta), torch.ones(shape_b, dtype=tb)
            want = _name(torch.result_type(x_th, y_th))
            if want == "complex32":
                continue
            assert _name(mg.result_type(x_mg, y_mg)) == want, (a, b, shape_a, shape_b)
            assert _name(mg.mul(x_mg, y_mg).dtype) == _name(torch.mul(x_th, y_th).dtype), (a, b, shape_a, shape_b)


@pytest.mark.parametrize("a", NAMES)
def test_result_type_with_python_numbers(a):
    """PyTorch's wrapped-number rule: a Python number takes the tensor's dtype unless of a higher category."""
    torch = torch_or_skip()
    for number in SCALARS:
        for shape in [(2,), ()]:
            x_mg, x_th = mg.ones(shape, dtype=getattr(mg, a)), torch.ones(shape, dtype=getattr(torch, a))
            if _name(torch.result_type(x_th, number)) == "complex32":    # float16 * 1j: a dtype minigrad lacks
                continue
            assert _name(mg.result_type(x_mg, number)) == _name(torch.result_type(x_th, number)), (a, number)
            assert _name(mg.result_type(number, x_mg)) == _name(torch.result_type(number, x_th)), (number, a)
            assert _name(mg.mul(x_mg, number).dtype) == _name(torch.mul(x_th, number).dtype), (a, number)


def test_result_type_of_two_numbers():
    torch = torch_or_skip()
    for x, y in itertools.product(SCALARS, repeat=2):
        assert _name(mg.result_type(x, y)) == _name(torch.result_type(x, y)), (x, y)
    with pytest.raises(TypeError):
        mg.result_type(mg.ones(2), "a")


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    torch = torch_or_skip()
    got, want = mg.finfo(getattr(mg, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert repr(got) == repr(want)


def test_finfo_default_and_refusals():
    torch = torch_or_skip()
    assert mg.finfo().dtype == torch.finfo().dtype == "float32"
    with pytest.raises(TypeError):
        mg.finfo(mg.int32)
    with pytest.raises(TypeError):
        mg.iinfo(mg.bool)
    with pytest.raises(TypeError):
        mg.iinfo(mg.float32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    torch = torch_or_skip()
    got, want = mg.iinfo(getattr(mg, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert repr(got) == repr(want)


def test_dtype_aliases_and_conversions():
    """PyTorch's dtype names (``short``, ``int``, ...) and the conversion methods, with ``memory_format=``."""
    torch = torch_or_skip()
    for name in ("short", "int", "long", "half", "float", "double", "cfloat", "cdouble", "bool", "uint8", "int8"):
        assert _name(getattr(mg, name)) == _name(getattr(torch, name)), name
    x_mg = mg.tensor(np.arange(120, dtype=np.float64).reshape(2, 3, 4, 5) - 60)
    x_th = torch.tensor(x_mg.numpy())
    for method in ("float", "double", "half", "long", "int", "short", "char", "byte", "bool", "cfloat", "cdouble"):
        for fmt in (None, "channels_last", "contiguous_format"):
            kwargs = {} if fmt is None else {"memory_format": getattr(mg, fmt)}
            kwargs_th = {} if fmt is None else {"memory_format": getattr(torch, fmt)}
            got, want = getattr(x_mg, method)(**kwargs), getattr(x_th, method)(**kwargs_th)
            assert _name(got.dtype) == _name(want.dtype), method
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            assert got.stride() == want.stride(), (method, fmt)


def test_to_takes_non_blocking_and_copy_positionally():
    torch = torch_or_skip()
    x = mg.ones(2, 3, dtype=mg.float64)
    assert x.to("cpu", mg.float64, False, False) is x
    copied = x.to("cpu", mg.float64, False, True)
    assert copied is not x and copied.dtype == mg.float64
    assert x.to(mg.float64, True, True) is not x
    assert x.to(mg.float32, False, False).dtype == mg.float32
    assert x.to(x, False, True) is not x
    assert torch.ones(2).to("cpu", torch.float32, False, False).dtype == torch.float32   # the form exists there


def test_size():
    torch = torch_or_skip()
    s, t = mg.zeros(2, 3).shape, torch.zeros(2, 3).shape
    assert isinstance(s, mg.Size) and isinstance(s, tuple) and s == (2, 3) and hash(s) == hash((2, 3))
    assert repr(s) == repr(t).replace("torch", "minigrad") == "minigrad.Size([2, 3])"
    assert isinstance(mg.zeros(2).size(), mg.Size) and mg.zeros(2, 3).size(1) == 3
    for got, want in ((s[0:1], t[0:1]), (s + (4,), t + (4,)), ((4,) + s, (4,) + t), (s * 2, t * 2)):
        assert repr(got) == repr(want).replace("torch", "minigrad")
    assert s.numel() == t.numel() == 6 and mg.Size().numel() == torch.Size().numel() == 1
    with pytest.raises(TypeError, match="item 0 is 'float'"):
        mg.Size([2.0])


def test_constants_layout_and_is_nonzero():
    torch = torch_or_skip()
    for name in ("inf", "nan", "pi", "e"):
        a, b = getattr(mg, name), getattr(torch, name)
        assert a == b or (math.isnan(a) and math.isnan(b)), name
    assert mg.newaxis is None and mg.zeros(3)[mg.newaxis].shape == (1, 3)
    assert repr(mg.strided) == "minigrad.strided" and isinstance(mg.strided, mg.layout)
    assert mg.zeros(2, layout=mg.strided).shape == (2,)
    assert mg.ones_like(mg.zeros(2), layout=mg.strided, pin_memory=False).shape == (2,)
    assert mg.randn(2, layout=mg.strided).shape == (2,)
    assert mg.is_nonzero(mg.tensor([0.5])) is torch.is_nonzero(torch.tensor([0.5])) is True
    assert mg.is_nonzero(mg.tensor(0)) is False
    for bad in ([1.0, 2.0], []):
        with pytest.raises(RuntimeError):
            torch.is_nonzero(torch.tensor(bad))
        with pytest.raises(RuntimeError):
            mg.is_nonzero(mg.tensor(bad))
