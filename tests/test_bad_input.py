"""The generated bad-input suite (``tests/bad_input_cases.py``): every case runs in minigrad and in PyTorch.

* PyTorch raises -> minigrad raises the same kind of exception (TypeError, ValueError, IndexError,
  NotImplementedError or RuntimeError), from minigrad's own code (never from inside NumPy), and not an
  AttributeError/ZeroDivisionError/OverflowError PyTorch would not raise;
* PyTorch computes -> minigrad computes the same result (values, dtypes, shapes);
* either way, every input tensor (values and gradients) and every module parameter/buffer ends as in PyTorch,
  and when the call raised, the inputs are exactly as they were made.

What PyTorch does with a case (the exception's kind, or the result and the inputs' and modules' final state) is
taken live when PyTorch is installed, else from ``tests/fixtures/test_bad_input.json.gz`` (``tests/oracle.py``).
"""
import os
import traceback
import warnings

import numpy as np
import pytest

import minigrad as mg

from . import oracle
from .bad_input_cases import CASES, DOCUMENTED_DIFFERENCES, OPEN, Context
from .oracle import RecordedError, RecordedTensor, snap

KINDS = (IndexError, KeyError, TypeError, ValueError, NotImplementedError, RuntimeError)
RANDOM_RESULTS = ("rand", "dropout", "Dropout", "multinomial", "bernoulli", "normal", "empty", "manual_seed")
LIBRARY_DIRS = (os.path.dirname(np.__file__),)


def kind(error):
    """The most specific of the standard exception kinds ``error`` is (PyTorch's own classes derive from them).
    PyTorch's Python-level wrappers (``F.sigmoid``, ``torch.norm``, loss modules) crash with AttributeError on a
    non-Tensor argument; minigrad raises the TypeError every other function raises there."""
    if isinstance(error, RecordedError):
        error = error.exception()
    if isinstance(error, AttributeError):
        return TypeError
    return next((k for k in KINDS if isinstance(error, k)), type(error))


def run(lib, call):
    c = Context(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return c, call(c), None
        except Exception as e:  # noqa: BLE001 - every exception is compared with PyTorch's
            return c, None, e


def as_numpy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t._data)


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def assert_same(ours, theirs, compare_values, where="result"):
    """minigrad's ``ours`` equals PyTorch's recorded ``theirs`` (tensors by dtype, shape and values; containers by
    item)."""
    if isinstance(theirs, RecordedTensor):
        assert isinstance(ours, mg.Tensor), f"{where}: PyTorch gives a Tensor, minigrad {type(ours).__name__}"
        assert dtype_name(ours) == dtype_name(theirs), f"{where}: dtype {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{where}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
        if compare_values:
            np.testing.assert_allclose(as_numpy(ours), as_numpy(theirs), rtol=1e-6, atol=1e-6, err_msg=where)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), f"{where}: {ours!r} vs {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, compare_values, f"{where}[{i}]")
    elif theirs is None or isinstance(theirs, (bool, int, float, str)):
        if isinstance(theirs, float) and np.isnan(theirs):
            assert isinstance(ours, float) and np.isnan(ours), f"{where}: {ours!r} vs nan"
        else:
            assert type(ours) is type(theirs) and ours == theirs, f"{where}: {ours!r} vs {theirs!r}"
    else:                  # a module, optimizer, scheduler, generator...: minigrad made one too
        assert ours is not None, f"{where}: PyTorch gives {type(theirs).__name__}, minigrad None"


def assert_raised_well(error, expected):
    assert isinstance(error, kind(expected)), (
        f"PyTorch raises {expected!r}, minigrad {type(error).__name__}({error})")
    innermost = traceback.extract_tb(error.__traceback__)[-1].filename
    assert not innermost.startswith(LIBRARY_DIRS), (
        f"{type(error).__name__}({error}) comes from inside NumPy ({innermost}), not from minigrad's checks")


def assert_inputs_as_torch(c_mg, record):
    assert len(c_mg.inputs) == len(record["inputs"])
    for i, ((a, _), b) in enumerate(zip(c_mg.inputs, record["inputs"])):
        assert_same(a, b, True, f"input {i} afterwards")
        assert (a.grad is None) == (b.grad is None), f"input {i}: gradient presence differs"
        if b.grad is not None:
            assert_same(a.grad, b.grad, True, f"gradient of input {i}")
    for (m, _), theirs in zip(c_mg.modules, record["modules"]):
        for key, value in m.state_dict().items():
            assert_same(value, theirs[key], True, f"module state {key!r} afterwards")


def assert_inputs_unchanged(c):
    """After a call that raised: every input and every module's state exactly as they were. (PyTorch itself
    sometimes counts a batch in ``num_batches_tracked`` before its forward raises: minigrad changes nothing.)"""
    for i, (t, original) in enumerate(c.inputs):
        np.testing.assert_array_equal(t._data, original, err_msg=f"input {i} changed by a call that raised")
    for m, state in c.modules:
        for key, value in m.state_dict().items():
            np.testing.assert_array_equal(value.detach().numpy(), state[key],
                                          err_msg=f"module state {key!r} changed by a call that raised")


def params():
    for name, call in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=OPEN[name])] if name in OPEN else []
        yield pytest.param(name, call, id=name, marks=marks)


def test_enough_cases():
    names = {name for name, _ in CASES}
    assert len(CASES) >= 1000
    assert len(names) == len(CASES), "case ids must be unique"
    assert set(DOCUMENTED_DIFFERENCES) <= names and set(OPEN) <= names, "exceptions must name existing cases"


def check_documented_difference(name, call):
    """minigrad does what DOCUMENTED_DIFFERENCES says (raises that exception, or computes) and changes nothing."""
    raises, reason = DOCUMENTED_DIFFERENCES[name]
    c, ours, error = run(mg, call)
    if raises is None:
        assert error is None, f"{name}: documented to compute ({reason}), raised {error!r}"
        return
    assert isinstance(error, raises), f"{name}: documented to raise {raises.__name__} ({reason}), got {error!r}"
    assert_inputs_unchanged(c)


def torch_record(torch, name, call):
    """What PyTorch does with the case: ``{"raised": RecordedError}``, or its result (values unless random) and the
    final state of its input tensors (with their gradients) and of its modules."""
    state = torch.get_default_dtype()
    try:
        c_th, theirs, expected = run(torch, call)
    finally:
        torch.set_default_dtype(state)
    if expected is not None:
        return {"raised": snap(expected)}
    return {"result": snap(theirs, values=not any(r in name for r in RANDOM_RESULTS), grad=False),
            "inputs": [snap(t) for t, _ in c_th.inputs],
            "modules": [snap(dict(n.state_dict()), grad=False) for n, _ in c_th.modules]}


@pytest.mark.parametrize("name, call", list(params()))
def test_bad_input(name, call):
    if name in DOCUMENTED_DIFFERENCES:        # minigrad's own documented behaviour: no PyTorch needed
        return check_documented_difference(name, call)
    record = oracle.ask(lambda torch: torch_record(torch, name, call), tolerance=(1e-6, 1e-6))
    state = mg.get_default_dtype()
    try:
        c_mg, ours, error = run(mg, call)
    finally:
        mg.set_default_dtype(state)
    if "raised" in record:
        expected = record["raised"]
        assert error is not None, f"PyTorch raises {expected!r}; minigrad returns {ours!r}"
        assert_raised_well(error, expected)
        assert_inputs_unchanged(c_mg)
        return
    if error is not None:
        raise AssertionError(f"PyTorch computes {record['result']!r}; minigrad raises {type(error).__name__}") \
            from error
    assert_same(ours, record["result"], compare_values=not any(r in name for r in RANDOM_RESULTS))
    assert_inputs_as_torch(c_mg, record)
