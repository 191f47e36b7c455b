"""The record/replay layer (``tests/oracle.py``) itself, without PyTorch: records round-trip exactly, a replayed
comparison catches a wrong minigrad (the mutant), a record made for other inputs is not used, a stale record
fails the CI check, and PyTorch's stand-in skips rather than pass."""
import contextlib
import gzip
import json

import numpy as np
import pytest

import minigrad as mg

from . import oracle
from .mirror import WrongTan, _NoTorch, assert_double_mirror, assert_mirror
from .oracle import RecordedDtype, RecordedError, RecordedObject, RecordedTensor, decode, differences, encode


def test_records_round_trip_exactly():
    rng = np.random.default_rng(0)
    record = {"a": rng.standard_normal((3, 4)), "f32": rng.standard_normal(5).astype(np.float32),
              "c": rng.standard_normal(3) + 1j * rng.standard_normal(3), "special": np.array([np.nan, np.inf, -0.0]),
              "ints": np.array([np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max]), "bools": np.array([True, False]),
              "empty": np.zeros((0, 3)), "scalar": np.float32(1.5), "tuple": (1, 2.5, "x", None, True),
              "list": [complex(1, 2), float("nan")],
              "tensor": RecordedTensor("float64", (2,), np.array([1e-300, 1 / 3]), True,
                                       RecordedTensor("float64", (2,), np.array([0.1, 0.2]))),
              "error": RecordedError("IndexError", "out of range"), "dtype": RecordedDtype("int8"),
              "object": RecordedObject("SGD")}
    back = decode(json.loads(json.dumps(encode(record))))
    assert not differences(record, back, (0.0, 0.0))
    assert back["a"].tobytes() == record["a"].tobytes() and back["f32"].dtype == np.float32
    assert isinstance(back["tuple"], tuple) and isinstance(back["list"], list)
    assert back["tensor"].grad.numpy()[1] == 0.2 and str(back["tensor"].dtype) == "torch.float64"
    assert isinstance(back["error"].exception(), IndexError)


def test_differences_see_values_dtypes_shapes_and_kinds():
    a = RecordedTensor("float64", (2,), np.array([1.0, 2.0]))
    assert not differences(a, RecordedTensor("float64", (2,), np.array([1.0, 2.0 + 1e-13])))
    assert differences(a, RecordedTensor("float64", (2,), np.array([1.0, 2.001])))
    assert differences(a, RecordedTensor("float32", (2,), np.array([1.0, 2.0], dtype=np.float32)))
    assert differences(RecordedError("TypeError"), RecordedError("ValueError"))
    assert differences((1, 2), [1, 2])


@contextlib.contextmanager
def replaying(monkeypatch, records, checking=False, live=None, recording=False):
    """Run as a test of a fake module whose committed fixture holds ``records`` ({test name: [entry]}), without
    PyTorch (or with ``live`` standing in for it, under the CI check when ``checking``, recording when
    ``recording``), whatever mode the session itself runs in."""
    monkeypatch.setattr(oracle, "live_torch", lambda: live)
    monkeypatch.setattr(oracle, "CHECKING", checking)
    monkeypatch.setattr(oracle, "RECORDING", recording)
    monkeypatch.setitem(oracle._loaded, "fake_module", records)
    saved = oracle._current[0]
    oracle._current[0] = oracle._Test("fake_module", "test_fake")
    try:
        yield
    finally:
        oracle._current[0] = saved


def _entry(inputs, record):
    return {"in": oracle.encode_fingerprint(inputs), "out": encode(record)}


def _tan_record(x, seed=0):
    """What PyTorch gives for tan on x with assert_mirror's upstream (d tan = 1 + tan^2), computed here by hand."""
    y = np.tan(x)
    upstream = np.random.default_rng(seed).standard_normal(y.shape)
    return {"out": RecordedTensor("float64", y.shape, y),
            "grads": [RecordedTensor("float64", y.shape, upstream * (1 + y * y))]}


def test_a_replayed_mirror_catches_a_wrong_gradient(monkeypatch):
    """The mutant: tan with d tan = 1 + tan. The recorded comparison passes minigrad's tan and fails the mutant."""
    x = np.linspace(-1.2, 1.2, 7)
    records = {"test_fake": [_entry(([x], [True], 0), _tan_record(x))] * 2}

    with replaying(monkeypatch, records):
        assert_mirror(mg.tan, None, x)
        with pytest.raises(AssertionError, match="gradient of input 0"):
            assert_mirror(WrongTan.apply, None, x)


def test_a_record_for_other_inputs_is_not_used(monkeypatch):
    x = np.linspace(-1.2, 1.2, 7)
    records = {"test_fake": [_entry(([x], [True], 0), _tan_record(x))]}
    with replaying(monkeypatch, records), pytest.raises(pytest.skip.Exception, match="stale fixture"):
        assert_mirror(mg.tan, None, x + 1e-3)


def test_a_test_without_records_skips_naming_pytorch(monkeypatch):
    with replaying(monkeypatch, {}), pytest.raises(pytest.skip.Exception, match="PyTorch not installed"):
        assert_double_mirror(mg.tan, None, np.ones(3))


def test_the_ci_check_fails_a_stale_or_missing_record(monkeypatch):
    """With PyTorch (here a stand-in whose tan is off by 1e-3) under the CI check: a committed record that no longer
    matches the fresh one fails, naming the command that regenerates it; so does a call with no record."""
    x = np.linspace(-1.2, 1.2, 7)
    records = {"test_fake": [_entry(([x], [True], 0), _tan_record(x))]}
    fresh = _tan_record(x)
    fresh["out"].values = fresh["out"].values + 1e-3
    with replaying(monkeypatch, records, checking=True, live=object()):
        with pytest.raises(pytest.fail.Exception, match="stale .*record.py"):
            oracle.ask(lambda torch: fresh, inputs=([x], [True], 0), tolerance=(1e-10, 1e-10))
    with replaying(monkeypatch, {}, checking=True, live=object()):
        with pytest.raises(pytest.fail.Exception, match="no recorded PyTorch output"):
            oracle.ask(lambda torch: fresh, inputs=([x], [True], 0))


def _ask_sum(x, dim, keepdim):
    """A call as a hypothesis test makes it: the drawn ``dim`` and ``keepdim`` live in the closure of what PyTorch
    computes (here ``numpy`` stands in for it), not in the inputs."""
    return oracle.ask(lambda torch: {"out": x.sum(dim, keepdims=keepdim)}, inputs=([x], [True], 0))


def test_a_generated_tests_records_are_found_by_the_parameters_it_drew(monkeypatch):
    """A hypothesis test's examples can come in another order in another session (Hypothesis draws some values from
    constants in the modules loaded so far): its records are found by the inputs *and* the values its functions hold,
    never by place, so the same array with another ``dim`` does not pick up that example's record."""
    x = np.arange(6.0).reshape(2, 3)
    drawn = [(0, False), (1, False), (0, True), (1, True)]
    monkeypatch.setattr(oracle, "_recorded", {})
    with replaying(monkeypatch, {}, live=object(), recording=True):     # recorded in one order ...
        oracle._current[0].generated = True
        for dim, keepdim in drawn:
            _ask_sum(x, dim, keepdim)
    records = oracle._recorded["fake_module"]
    with replaying(monkeypatch, records):                   # ... replayed in the other
        oracle._current[0].generated = True
        for dim, keepdim in reversed(drawn):
            assert not differences(_ask_sum(x, dim, keepdim)["out"], x.sum(dim, keepdims=keepdim))
        with pytest.raises(pytest.skip.Exception, match="stale fixture"):
            _ask_sum(x, -1, True)                           # never drawn when recording: no record is borrowed
    assert oracle.parameters(lambda: mg.sum) == {"@f": "test_a_generated_tests_records_are_found_by_the_"
                                                        "parameters_it_drew.<locals>.<lambda>", "cells": [], "defaults": []}


def test_pytorchs_stand_in_skips_when_used():
    torch = _NoTorch()
    fn = torch.nn.functional.gelu           # attribute access only: a function handed to assert_mirror
    for use in (lambda: fn(1), lambda: torch.float64 == mg.float64, lambda: bool(torch.ones),
                lambda: isinstance(1, torch.Tensor), lambda: [*torch.zeros], lambda: torch.e + 1):
        with pytest.raises(pytest.skip.Exception, match="PyTorch not installed"):
            use()


def test_fixture_files_are_compact_and_readable():
    """Every committed fixture decodes; together they stay under 5.5 MB (the budget grew from 5 MB when the op
    database's out= dtype pass added 120 kB)."""
    files = sorted(oracle.FIXTURES.glob("*.json.gz"))
    assert files, "no fixtures committed"
    total = sum(f.stat().st_size for f in files)
    assert total < 5_500_000, f"fixtures take {total / 1e6:.2f} MB"
    for f in files:
        tests = json.loads(gzip.decompress(f.read_bytes()))
        assert tests and all(isinstance(calls, list) and calls for calls in tests.values()), f


def test_bfloat16_records_match_within_a_few_ulps_as_pytorch_varies_between_cpus():
    """PyTorch's bfloat16 kernels round differently on AVX2 and AVX-512 CPUs: a fresh bfloat16 result within
    ``BFLOAT16_RECORD_ULPS`` ulps of its record matches it; one further away, or a float32 one off by as much, is
    stale."""
    values = np.array([-46.0, -10.3125, 61.0, 27.75, 163.0, 0.5], dtype=np.float32)   # bfloat16 numbers
    ulp_of_largest = 2.0 ** -7 * 163.0
    near = values + np.float32(2 * ulp_of_largest)
    far = values + np.float32(2 * oracle.BFLOAT16_RECORD_ULPS * ulp_of_largest)

    def tensor(dtype, v):
        return oracle.RecordedTensor(dtype, v.shape, v)
    assert oracle.differences(tensor("bfloat16", values), tensor("bfloat16", near)) == []
    assert oracle.differences(tensor("bfloat16", values), tensor("bfloat16", far))
    assert oracle.differences(tensor("float32", values), tensor("float32", near))


def test_which_samples_a_fixture_keeps_does_not_depend_on_the_last_bits():
    """``within_budget`` keeps the cheapest records by their JSON's length with every float counted alike: two
    sets of records that differ only in their floats' last bits (as PyTorch's results differ between CPUs,
    printing longer or shorter) keep the same samples; longer arrays still cost more."""
    from .opinfo_util import REPLAY_CHARACTERS, within_budget

    def records(values):
        return [{"index": i, "out": np.array(v)} for i, v in enumerate(values)]
    n = REPLAY_CHARACTERS // 40                     # two records of n floats fit the budget, not three
    short = records([[0.5] * n, [0.25] * n, [0.125] * n])
    long_ = records([[0.1 + 2e-17] * n, [0.30000000000000004] * n, [1 / 3] * n])
    assert [r["index"] for r in within_budget(short)] == [r["index"] for r in within_budget(long_)] == [0, 1]
    mixed = records([[0.5] * (n + 5), [1 / 3] * n, [0.5] * n])
    assert [r["index"] for r in within_budget(mixed)] == [1, 2]
