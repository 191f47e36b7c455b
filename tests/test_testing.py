"""minigrad.testing.assert_close against torch.testing.assert_close.

* the default tolerances per dtype equal PyTorch's (read from PyTorch itself);
* passing just inside and failing just outside the default tolerances, for each floating dtype;
* the same verdict as PyTorch over a table of cases (tensors, NumPy arrays, numbers, nested sequences and
  dicts, NaN and infinities, dtype and shape mismatches, explicit tolerances), and the same message for tensors
  and numbers: mismatched elements, greatest absolute and relative difference with their indices, the item;
* ``msg`` as a string and as a callable; rtol without atol is a ValueError.
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.testing import DEFAULT_TOLERANCES, assert_close

from .mirror import torch_or_skip

FLOAT_DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", FLOAT_DTYPES + ["int64", "int32", "uint8", "bool"])
def test_default_tolerances_equal_pytorchs(name):
    torch = torch_or_skip()
    from torch.testing._comparison import default_tolerances
    expected = default_tolerances(getattr(torch, name))
    assert DEFAULT_TOLERANCES.get(np.dtype(name), (0.0, 0.0)) == expected


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_passes_inside_and_fails_outside_the_default_tolerance(name):
    """expected = 100: allowed |difference| = atol + 100 rtol. Differences of 0.5x and 2x that, rounded to the dtype
    (100 is exact in each, and the steps are far above its resolution)."""
    torch = torch_or_skip()
    from torch.testing._comparison import default_tolerances
    rtol, atol = default_tolerances(getattr(torch, name))
    allowed = atol + 100 * rtol
    expected = mg.tensor([100.0, 1.0], dtype=getattr(mg, name))
    assert_close(mg.tensor([100.0 + allowed / 2, 1.0], dtype=getattr(mg, name)), expected)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        assert_close(mg.tensor([100.0 + 2 * allowed, 1.0], dtype=getattr(mg, name)), expected)


def test_integers_compare_exactly():
    assert_close(mg.tensor([1, 2, 3]), mg.tensor([1, 2, 3]))
    with pytest.raises(AssertionError, match="not equal"):
        assert_close(mg.tensor([1, 2, 3]), mg.tensor([1, 2, 4]))


def cases(lib):
    """(name, actual, expected, keyword arguments) built with ``lib`` (minigrad or torch)."""
    t = lib.tensor
    nan, inf = float("nan"), math.inf
    return [
        ("close float32", t([1.0, 2.0, 3.0]), t([1.0, 2.0, 3.0 + 1e-6]), {}),
        ("far float32", t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]), {}),
        ("2-d", t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 5.0]]), {}),
        ("zero expected", t([0.0]), t([0.5]), {}),
        ("ints", t([1, 2, 3]), t([1, 2, 4]), {}),
        ("bools", t([True]), t([False]), {}),
        ("0-d", t(1.0), t(2.0), {}),
        ("0-d ints", t(1), t(3), {}),
        ("dtype", t([1.0, 2.0], dtype=lib.float64), t([1.0, 2.0]), {}),
        ("dtype unchecked", t([1.0, 2.0], dtype=lib.float64), t([1.0, 2.0]), {"check_dtype": False}),
        ("shape", t([1.0, 2.0, 3.0]), t([1.0, 2.0]), {}),
        ("nan", t([nan]), t([nan]), {}),
        ("nan equal", t([nan]), t([nan]), {"equal_nan": True}),
        ("inf", t([inf, -inf]), t([inf, -inf]), {}),
        ("inf signs", t([-inf]), t([inf]), {}),
        ("finite vs inf", t([1.0]), t([inf]), {}),
        ("explicit tolerance", t([1.0, 2.0]), t([1.0, 2.1]), {"rtol": 0.0, "atol": 0.2}),
        ("explicit zero tolerance", t([1.0, 2.0]), t([1.0, 2.5]), {"rtol": 0, "atol": 0}),
        ("complex", t([1 + 1j]), t([1 + 2j]), {}),
        ("float16", t([1.0, 2.0], dtype=lib.float16), t([1.0, 2.001], dtype=lib.float16), {}),
        ("numpy", np.array([1.0, 2.0]), np.array([1.0, 2.5]), {}),
        ("floats", 1.0, 1.0 + 1e-9, {}),
        ("floats far", 1.0, 1.1, {}),
        ("ints as numbers", 1, 2, {}),
        ("int vs float", 1, 1.0, {}),
        ("int vs float unchecked", 1, 1.0, {"check_dtype": False}),
        ("bools as numbers", True, False, {}),
        ("list", [1.0, 2.0], [1.0, 2.0], {}),
        ("list item", [t(1.0), t(2.0)], (t(1.0), t(2.5)), {}),
        ("length", [1.0, 2.0], [1.0], {}),
        ("dict", {"a": t(1.0)}, {"a": t(2.0)}, {}),
        ("dict keys", {"a": t(1.0)}, {"b": t(1.0)}, {}),
        ("nested", {"w": [t([1.0, 2.0]), 3]}, {"w": [t([1.0, 2.0]), 3]}, {}),
        ("none", None, None, {}),
    ]


def _outcome(lib, actual, expected, kw):
    try:
        lib.testing.assert_close(actual, expected, **kw)
    except Exception as e:   # the exception itself is the outcome compared
        return type(e), str(e)
    return None, ""


# reports that differ on purpose: PyTorch prints shapes as torch.Size([3]); minigrad shapes are tuples
MESSAGE_DIFFERS = {"shape"}


@pytest.mark.parametrize("index", range(len(cases(mg))))
def test_same_verdict_and_message_as_pytorch(index):
    torch = torch_or_skip()
    name, actual, expected, kw = cases(mg)[index]
    ours = _outcome(mg, actual, expected, kw)
    theirs = _outcome(torch, *cases(torch)[index][1:])
    assert ours[0] is theirs[0], (name, ours, theirs)
    if name not in MESSAGE_DIFFERS:
        assert ours[1] == theirs[1].replace("torch.", ""), name


def test_message_names_the_differences():
    with pytest.raises(AssertionError) as info:
        assert_close(mg.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mg.float64),
                     mg.tensor([[1.0, 2.0], [3.0, 8.0]], dtype=mg.float64))
    text = str(info.value)
    assert "Mismatched elements: 1 / 4 (25.0%)" in text
    assert "Greatest absolute difference: 4.0 at index (1, 1) (up to 1e-07 allowed)" in text
    assert "Greatest relative difference: 0.5 at index (1, 1) (up to 1e-07 allowed)" in text


def test_msg_string_and_callable():
    a, b = mg.tensor([1.0]), mg.tensor([2.0])
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(a, b, msg="custom")
    with pytest.raises(AssertionError, match="^seen: Tensor-likes are not close!$"):
        assert_close(a, b, msg=lambda report: "seen: " + report.splitlines()[0])


def test_tolerances_come_in_pairs():
    with pytest.raises(ValueError, match="got no atol"):
        assert_close(mg.tensor([1.0]), mg.tensor([1.0]), rtol=1e-3)
    with pytest.raises(ValueError, match="got no rtol"):
        assert_close(mg.tensor([1.0]), mg.tensor([1.0]), atol=1e-3)


def test_unsupported_pairs_are_a_type_error():
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(mg.tensor([1.0]), [1.0])
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close("a", "a")


def test_reachable_as_torch_testing():
    assert mg.testing.assert_close is assert_close
