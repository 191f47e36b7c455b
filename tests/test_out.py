"""out=: results written into given tensors as PyTorch's functions write them (minigrad/_out.py).

The op database's out= passes (tests/test_opinfo.py, kinds "out" and "out_dtypes") compare the values each op
writes, and each op's rule for an ``out`` of another dtype; these tests check the contract around them, each case run
in both libraries where PyTorch is installed: the refusals (gradients, memory shared with an input or within out, a
dtype out cannot hold), resizing, views, tuples of outs, and one case of each kind of dtype rule.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg

from . import oracle
from .mirror import torch_or_skip
from .opinfo_util import resolve


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
    # each op's own rule for an out of another dtype (the op database's "out_dtypes" pass runs every op with one)
    "a factory's dtype= must be out's": lambda L: _written(L, lambda L: L.zeros, 3, dtype=L.float64,
                                                           out=L.empty(0)),
    "matrix_power 0 copies the identity, cast": lambda L: _written(L, lambda L: L.linalg.matrix_power,
                                                                   L.eye(2, dtype=L.float64), 0, out=L.empty(0)),
    "matrix_power 2 is a product, its dtype": lambda L: _written(L, lambda L: L.linalg.matrix_power,
                                                                 L.eye(2, dtype=L.float64), 2, out=L.empty(0)),
    "clamp with tensor bounds casts": lambda L: _written(L, lambda L: L.clamp, L.tensor([0.5, 2.0], dtype=L.float64),
                                                         L.tensor(0.0), L.tensor(1.0), out=L.empty(0)),
    "clamp with number bounds, its dtype": lambda L: _written(L, lambda L: L.clamp,
                                                              L.tensor([0.5, 2.0], dtype=L.float64), 0.0, 1.0,
                                                              out=L.empty(0)),
    "all into uint8": lambda L: _written(L, lambda L: L.all, L.tensor([1.0, 2.0]), out=L.empty(0, dtype=L.uint8)),
    "all into int64": lambda L: _written(L, lambda L: L.all, L.tensor([1.0, 2.0]), out=L.empty(0, dtype=L.int64)),
    "frexp's exponent must be int32": lambda L: _written(L, lambda L: L.frexp, L.tensor([1.5]),
                                                         out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "float_power wants float64": lambda L: _written(L, lambda L: L.float_power, L.tensor([2.0]), 2, out=L.empty(0)),
    "fft of a real input casts": lambda L: _written(L, lambda L: L.fft.fft, L.tensor([1.0, 2.0]),
                                                    out=L.empty(0, dtype=L.complex128)),
    "ifft of a real input, its dtype": lambda L: _written(L, lambda L: L.fft.ifft, L.tensor([1.0, 2.0]),
                                                          out=L.empty(0, dtype=L.complex128)),
    "irfft into a complex out": lambda L: _written(L, lambda L: L.fft.irfft, L.tensor([1.0, 2.0], dtype=L.complex64),
                                                   out=L.empty(0, dtype=L.complex64)),
    "nansum of floats into int64": lambda L: _written(L, lambda L: L.nansum, L.tensor([1.5, 2.0]),
                                                      out=L.empty(0, dtype=L.int64)),
    "digamma into float32": lambda L: _written(L, lambda L: L.digamma, L.tensor([1.5], dtype=L.float64),
                                               out=L.empty(0)),
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
        "a factory's dtype= must be out's": refused, "matrix_power 0 copies the identity, cast": "ok",
        "matrix_power 2 is a product, its dtype": refused, "clamp with tensor bounds casts": "ok",
        "clamp with number bounds, its dtype": refused, "all into uint8": "ok", "all into int64": refused,
        "frexp's exponent must be int32": refused, "float_power wants float64": refused,
        "fft of a real input casts": "ok", "ifft of a real input, its dtype": refused,
        "irfft into a complex out": refused, "nansum of floats into int64": "NotImplementedError",
        "digamma into float32": "ok",
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


def test_normal_draws_into_out_and_complex_dtypes():
    """PyTorch draws ``normal(mean_tensor, std_tensor, out=o)`` in ``o``'s dtype: a complex ``o`` gets
    ``mean + std * z`` with z's real and imaginary parts each of deviation 1/sqrt(2) (its complex normal), an
    integer ``o`` is refused (no integer normal kernel). With numbers and a complex dtype, both parts have mean
    ``mean`` and deviation ``std / sqrt(2)``. Checked by the sample statistics of 200,000 draws (5 standard errors)."""
    n, mean, std = 200_000, 3.0, 2.0
    mg.manual_seed(0)
    out = mg.empty(0, dtype=mg.complex128)
    mg.normal(mg.full((n,), mean, dtype=mg.float64), mg.full((n,), std, dtype=mg.float64), out=out)
    z = out.numpy()
    part = std / np.sqrt(2)
    assert out.dtype == mg.complex128 and z.shape == (n,)
    assert abs(z.real.mean() - mean) < 5 * part / np.sqrt(n) and abs(z.imag.mean()) < 5 * part / np.sqrt(n)
    for values in (z.real, z.imag):
        assert abs(values.std() - part) < 5 * part / np.sqrt(2 * n)
    drawn = mg.normal(mean, std, (n,), dtype=mg.complex64).numpy()
    assert drawn.dtype == np.complex64
    for values in (drawn.real, drawn.imag):
        assert abs(values.mean() - mean) < 5 * part / np.sqrt(n) and abs(values.std() - part) < 5 * part / np.sqrt(2 * n)
    with pytest.raises(NotImplementedError, match="normal_kernel_cpu"):
        mg.normal(mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64), out=mg.empty(0, dtype=mg.int64))


def test_functions_pytorch_gives_no_out_refuse_one():
    """Every op-database function whose PyTorch form refuses ``out=`` for all its samples (``clone``, ``flip``,
    ``nn.functional.layer_norm``, ``conv2d``, ``median(x)`` without a dim: ``opinfo_out.functions_without_out``;
    recorded) refuses it in minigrad too, with PyTorch's TypeError, for one of those samples."""
    from .opinfo_out import functions_without_out
    from .opinfo_record import convert_recorded
    found = oracle.ask(lambda torch: functions_without_out(), inputs="functions_without_out")
    assert len(found) > 150
    accepting = []
    for name, sample in found:
        fn = resolve(name)
        if fn is None or isinstance(fn, type) or not callable(fn):
            continue
        try:
            x, args, kwargs, _ = convert_recorded(sample)
        except pytest.skip.Exception:     # a sample minigrad cannot be given (a complex32 tensor)
            continue
        try:
            fn(x, *args, **kwargs, out=mg.empty(0))
        except TypeError as error:
            if "unexpected keyword argument 'out'" in str(error):
                continue
        except Exception:   # noqa: BLE001 - anything but the TypeError is a difference
            pass
        accepting.append(name)
    assert not accepting, f"minigrad takes out= where PyTorch does not: {accepting}"
