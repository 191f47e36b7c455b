"""The scalar arguments of add/sub (``alpha``) and addcmul/addcdiv (``value``) against the operands' dtypes, in the
function, method and in-place forms, mirrored against PyTorch: its values and dtypes, or its exception and
message."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

CASES = {
    "int add, float alpha": lambda lib: lib.add(lib.tensor([3, 4]), lib.tensor([5, 9]), alpha=1.0),
    "int add_, float alpha": lambda lib: lib.tensor([3, 4]).add_(lib.tensor([5, 9]), alpha=0.5),
    "int sub, float alpha, number": lambda lib: lib.sub(lib.tensor([3, 4]), 1, alpha=2.0),
    "int sub_, float alpha": lambda lib: lib.tensor([3, 4]).sub_(lib.tensor([5, 9]), alpha=0.5),
    "int rsub, float alpha": lambda lib: lib.rsub(lib.tensor([3, 4]), lib.tensor([5, 9]), alpha=2.0),
    "int add, numpy float alpha": lambda lib: lib.add(lib.tensor([3, 4]), lib.tensor([5, 9]), alpha=np.float64(2)),
    "int add, bool alpha": lambda lib: lib.add(lib.tensor([3, 4]), lib.tensor([5, 9]), alpha=True),
    "float add, complex alpha": lambda lib: lib.add(lib.tensor([1.5]), lib.tensor([2.5]), alpha=1j),
    "float + int, float alpha": lambda lib: lib.add(lib.tensor([1.5, 2.5]), lib.tensor([5, 9]), alpha=0.5),
    "int add, int alpha": lambda lib: lib.add(lib.tensor([3, 4]), lib.tensor([5, 9]), alpha=-3),
    "bool add, int alpha": lambda lib: lib.add(lib.tensor([True, False]), lib.tensor([True, True]), alpha=2),
    "bool add, zero alpha": lambda lib: lib.add(lib.tensor([True, False]), lib.tensor([True, True]), alpha=0),
    "bool add, bool alpha": lambda lib: lib.add(lib.tensor([True, False]), lib.tensor([False, False]), alpha=True),
    "int addcmul, float value": lambda lib: lib.addcmul(lib.tensor([3, 4]), lib.tensor([3, 4]), lib.tensor([5, 9]),
                                                        value=2.7),
    "int addcmul, negative float value": lambda lib: lib.addcmul(lib.tensor([3, 4]), lib.tensor([3, 4]),
                                                                 lib.tensor([5, 9]), value=-2.7),
    "int addcmul_, float value": lambda lib: lib.tensor([3, 4]).addcmul_(lib.tensor([3, 4]), lib.tensor([5, 9]),
                                                                         value=2.7),
    "mixed addcmul, float value": lambda lib: lib.addcmul(lib.tensor([3, 4]), lib.tensor([1.5, 2.5]),
                                                          lib.tensor([5, 9]), value=2.7),
    "int addcdiv": lambda lib: lib.addcdiv(lib.tensor([3, 4]), lib.tensor([3, 4]), lib.tensor([5, 9])),
    "int addcdiv_": lambda lib: lib.tensor([3, 4]).addcdiv_(lib.tensor([3, 4]), lib.tensor([5, 9])),
    "float addcdiv_ of ints": lambda lib: lib.tensor([1.0, 2.0]).addcdiv_(lib.tensor([3, 4]), lib.tensor([5, 9])),
    "float addcdiv_": lambda lib: lib.tensor([1.0, 2.0]).addcdiv_(lib.tensor([3.0, 4.0]), lib.tensor([5, 9]),
                                                                  value=0.5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_scalar_argument_rules_as_pytorch(case):
    torch = torch_or_skip()
    outcomes = []
    for lib in (torch, mg):
        try:
            out = CASES[case](lib)
            outcomes.append(("value", out.tolist(), str(out.dtype).split(".")[-1]))
        except Exception as error:   # noqa: BLE001 - the exception is the outcome compared
            outcomes.append(("error", type(error).__name__, " ".join(str(error).split())[:60]))
    assert outcomes[1] == outcomes[0]


def test_a_refused_in_place_write_changes_nothing():
    t = mg.tensor([3, 4])
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        t.add_(mg.tensor([5, 9]), alpha=0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        t.addcdiv_(mg.tensor([3, 4]), mg.tensor([5, 9]))
    assert t.tolist() == [3, 4] and t._version == 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool", "complex64"])
def test_complex_numbers_given_to_index_fill_and_clamp_as_pytorch(dtype):
    """index_fill refuses a complex value for a real tensor even without an imaginary part; clamp of a floating
    tensor reads a complex bound without one as its real part (then checked in the tensor's dtype)."""
    torch = torch_or_skip()
    calls = {"index_fill": lambda lib, x, v: x.index_fill(0, lib.tensor([0]), v),
             "clamp max": lambda lib, x, v: x.clamp(max=v), "clamp min": lambda lib, x, v: x.clamp(min=v)}
    wrong = []
    for value in [complex(3, 0), complex(1e39, 0), 1 + 2j, complex(-2.5, 0)]:
        for name, call in calls.items():
            outcomes = []
            for lib in (torch, mg):
                try:
                    out = call(lib, lib.ones(3, dtype=getattr(lib, dtype)), value)
                    outcomes.append((str(out.dtype).rpartition(".")[2], repr(out.tolist())))
                except (RuntimeError, NotImplementedError, TypeError) as error:
                    outcomes.append(type(error).__name__)
            if outcomes[1] != outcomes[0]:
                wrong.append(f"{name} with {value}: {outcomes[1]}, PyTorch {outcomes[0]}")
    assert not wrong, "\n".join(wrong)
