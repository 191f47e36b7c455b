"""out=: results written into given tensors as PyTorch's functions write them (minigrad/_out.py).

The op database's out= pass (tests/test_opinfo.py, kind "out") compares the values each op writes; these tests
check the contract around it, each case run in both libraries where PyTorch is installed: the refusals (gradients,
memory shared with an input or within out, a dtype out cannot hold), resizing, views, tuples of outs.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _outcome(lib, call):
    """What ``call(lib)`` does: ('ok', values of what it returned, whether it returned out) or (exception type
    name, message), and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, returned = call(lib)
            values = [np.asarray(t.detach().numpy()).tolist() for t in (out if isinstance(out, tuple) else (out,))]
            same = all(r is o for r, o in zip(returned if isinstance(returned, tuple) else (returned,),
                                              out if isinstance(out, tuple) else (out,)))
            result = ("ok", values, same)
        except (RuntimeError, TypeError) as error:
            result = (type(error).__name__, str(error).split("\n")[0])
    return result, [str(w.message)[:60] for w in caught if issubclass(w.category, UserWarning)]


def _written(lib, fn, *args, out, **kwargs):
    return out, fn(lib)(*args, out=out, **kwargs)


CASES = {
    "into a fresh tensor": lambda L: _written(L, lambda L: L.add, L.ones(3), 2.0, out=L.empty(3)),
    "resized, with a warning": lambda L: _written(L, lambda L: L.add, L.ones(3), 2.0, out=L.empty(2)),
    "resized from empty, silently": lambda L: _written(L, lambda L: L.mul, L.ones(2, 2), 3.0, out=L.empty(0)),
    "cast into float64": lambda L: _written(L, lambda L: L.add, L.ones(3), 1.0, out=L.empty(3, dtype=L.float64)),
    "float into int64": lambda L: _written(L, lambda L: L.add, L.ones(3), 1.0, out=L.empty(3, dtype=L.int64)),
    "matmul wants its own dtype": lambda L: _written(L, lambda L: L.matmul, L.eye(2), L.eye(2),
                                                     out=L.empty(2, 2, dtype=L.float64)),
    "cat casts": lambda L: _written(L, lambda L: L.cat, [L.ones(2), L.zeros(1)], out=L.empty(0, dtype=L.float64)),
    "an elementwise op into its operand": lambda L: (lambda x: _written(L, lambda L: L.exp, x, out=x))(L.zeros(3)),
    "into an overlapping view": lambda L: (lambda b: _written(L, lambda L: L.add, b[:3], 1.0, out=b[1:]))(L.zeros(4)),
    "gather into its input": lambda L: (lambda x: _written(L, lambda L: L.gather, x, 0, L.tensor([1, 0, 2]),
                                                           out=x))(L.tensor([1.0, 2.0, 3.0])),
    "into an expanded tensor": lambda L: _written(L, lambda L: L.add, L.ones(2, 3), 1.0,
                                                  out=L.zeros(1, 3).expand(2, 3)),
    "into a column view": lambda L: (lambda v: (v, L.add(L.ones(3), 1.0, out=v[:, 0])))(L.zeros(3, 2)),
    "max with dim into a tuple": lambda L: _written(L, lambda L: L.max, L.tensor([[1.0, 3.0], [4.0, 2.0]]), 1,
                                                    out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "linalg.inv": lambda L: _written(L, lambda L: L.linalg.inv, L.tensor([[2.0, 0.0], [0.0, 4.0]]),
                                     out=L.empty(2, 2)),
    "a factory takes out's dtype": lambda L: _written(L, lambda L: L.zeros, 3, out=L.empty(0, dtype=L.int64)),
    "arange into float64": lambda L: _written(L, lambda L: L.arange, 0, 4, out=L.empty(0, dtype=L.float64)),
    "an input that requires grad": lambda L: _written(L, lambda L: L.add, L.ones(3, requires_grad=True), 1.0,
                                                      out=L.empty(3)),
    "an out that requires grad": lambda L: _written(L, lambda L: L.add, L.ones(3), 1.0,
                                                    out=L.empty(3, requires_grad=True)),
    "out a list of numbers": lambda L: _written(L, lambda L: L.add, L.ones(3), 1.0, out=[1.0]),
}


def _expected():
    """What PyTorch 2.13 does in each case, read from it (the comments say why)."""
    refused = "RuntimeError"
    return {
        "into a fresh tensor": "ok", "resized, with a warning": "ok", "resized from empty, silently": "ok",
        "cast into float64": "ok", "float into int64": refused, "matmul wants its own dtype": refused,
        "cat casts": "ok", "an elementwise op into its operand": "ok", "into an overlapping view": refused,
        "gather into its input": refused, "into an expanded tensor": refused, "into a column view": "ok",
        "max with dim into a tuple": "ok", "linalg.inv": "ok", "a factory takes out's dtype": "ok",
        "arange into float64": "ok", "an input that requires grad": refused, "an out that requires grad": refused,
        "out a list of numbers": "TypeError",
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_as_pytorch(name):
    ours, our_warnings = _outcome(mg, CASES[name])
    assert ours[0] == _expected()[name], ours
    torch = torch_or_skip()
    theirs, their_warnings = _outcome(torch, CASES[name])
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert ours[1:] == theirs[1:], (ours, theirs)                 # the values written, out returned
    else:
        assert ours[1].split(":")[0] == theirs[1].split(":")[0], (ours, theirs)   # the message's first words
    assert [w[:30] for w in our_warnings] == [w[:30] for w in their_warnings]


def test_out_is_written_in_place_and_counts_as_a_write():
    """out keeps its identity and memory (a view writes into its base) and its version counter moves, so an op
    that saved it refuses its backward as after any in-place write."""
    base = mg.zeros(3, 2)
    column = base[:, 1]
    assert mg.mul(mg.arange(3.0), 2.0, out=column) is column
    np.testing.assert_array_equal(base.numpy(), [[0, 0], [0, 2], [0, 4]])   # small integers times 2: exact
    w = mg.ones(3, requires_grad=True)
    saved = mg.ones(3)
    y = (w * saved).sum()
    mg.add(mg.ones(3), 1.0, out=saved)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_functions_without_tensor_results_take_no_out():
    with pytest.raises(TypeError, match="allclose\\(\\) got an unexpected keyword argument 'out'"):
        mg.allclose(mg.ones(2), mg.ones(2), out=mg.empty(1))


def test_without_out_the_function_is_called_as_it_is():
    """The wrapper passes everything else through: a result identical to the unwrapped function's."""
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert mg.add.__wrapped__(x, 1.0).tolist() == mg.add(x, 1.0).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert mg.nn.functional.gelu.takes_out and mg.linalg.inv.takes_out
