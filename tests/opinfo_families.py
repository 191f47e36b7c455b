"""Running a family of OpInfos (``tests/opinfo_util.py``) the same way in several test files: each op's
function, method and in-place variants on its sample inputs, in float64 with gradients and in other dtypes
forward only, and its error inputs. A test file lists its op names with what (if anything) it cannot compare.
"""
import numpy as np
import pytest

from . import oracle
from .mirror import torch_or_skip
from .opinfo_record import Unconvertible, convert_recorded, snap_sample
from .opinfo_util import (assert_same_outputs, check_out_of_place, error_inputs, opinfos, record_out_of_place, resolve,
                          samples, within_budget)

# float64 samples (and their float64 results) to 1e-7; every other dtype's float results are float32 (ints and
# bools are computed in the default float dtype), compared to 2e-5: a few float32 ulps between two libms
TOLERANCE = {"float64": 1e-7}
_SAMPLES = {}
# samples per dtype kept in a fixture for runs without PyTorch (a spread of those a live run compares)
REPLAY_FLOAT64, REPLAY_OTHER = 4, 1


def spread(op, dtype, limit=None, requires_grad=None):
    """``opinfo_util.samples``, generated once per (op, dtype, requires_grad) for the whole session (several
    tests read the same samples; none changes them) and thinned to ``limit`` spread over the list."""
    if requires_grad is None:
        requires_grad = bool(op.supports_autograd) and (dtype.is_floating_point or dtype.is_complex)
    key = (op.name, op.variant_test_name, str(dtype), requires_grad)
    if key not in _SAMPLES:
        _SAMPLES[key] = samples(op, dtype, requires_grad=requires_grad)
    found = _SAMPLES[key]
    if limit is not None and len(found) > limit:
        step = len(found) / limit
        found = [found[int(i * step)] for i in range(limit)]
    return found


def _thin(record, per_dtype=lambda dtype: REPLAY_FLOAT64 if dtype == "float64" else REPLAY_OTHER):
    """The part of a family record kept in its fixture: a spread of its entries per dtype, the cheapest of them
    within the budget (``opinfo_util.within_budget``), live samples dropped."""
    groups = {}
    for entry in record["entries"]:
        groups.setdefault(entry.get("dtype", ""), []).append(entry)
    kept = []
    for dtype, group in groups.items():
        n = per_dtype(dtype)
        kept.extend(group if len(group) <= n else [group[int(i * len(group) / n)] for i in range(n)])
    return {k: v for k, v in dict(record, entries=within_budget(kept)).items() if k != "live"}


def _ask(compute, inputs, **kwargs):
    """A family check's record: live (with the SampleInputs under ``"live"``, for their PyTorch post-processing)
    or recorded (``tests/oracle.py``)."""
    return oracle.ask(compute, inputs=inputs, tolerance=(1e-7, 1e-7), keep=kwargs.get("keep", _thin))


def _dtypes(op):
    """The OpInfo's dtypes among float64, float32, int64, bool, the first being the one compared in full
    (float64, with gradients; int64 for integer-only ops)."""
    torch = torch_or_skip()
    return [d for d in (torch.float64, torch.int64, torch.float32, torch.bool) if d in op.supported_dtypes("cpu")]


def _record_function(name, kind, limit, other_dtypes, gradients):
    torch = oracle.live_torch()
    record = {"entries": [], "live": [], "variants": [], "has_method": False}
    for op in opinfos(name):
        record["has_method"] |= op.method_variant is not None
        primary, *others = _dtypes(op)
        for dtype, count in [(primary, limit)] + [(d, other_dtypes) for d in others if other_dtypes]:
            dtype_name = str(dtype).rpartition(".")[2]
            grad = gradients and dtype == torch.float64
            for sample in spread(op, dtype, count):
                record["entries"].append({"dtype": dtype_name, "rec": record_out_of_place(op, sample, gradients=grad)})
                record["live"].append(sample)
    return record


def check_function(name, kind="function", limit=None, other_dtypes=3, gradients=True, method_only=False):
    """Every OpInfo named ``name``: float64 samples (with gradients) through minigrad's ``kind`` variant, and up
    to ``other_dtypes`` samples in each of float32, int64 and bool the OpInfo lists (forward only).
    ``method_only``: skip when no OpInfo of the name has a method variant. PyTorch's side is live or recorded."""
    record = _ask(lambda torch: _record_function(name, kind, limit, other_dtypes, gradients),
                  (name, kind, limit, other_dtypes, gradients))
    if method_only and not record["has_method"]:
        pytest.skip(f"no method variant of {name} in the op database")
    fn = resolve(name, kind)
    assert fn is not None, f"minigrad has no {kind} variant of {name}"
    live = record.get("live") or [None] * len(record["entries"])
    compared, replay_skips = 0, []
    for entry, sample in zip(record["entries"], live):
        tol = TOLERANCE.get(entry["dtype"], 2e-5)
        try:
            check_out_of_place(entry["rec"], fn, rtol=tol, atol=tol, live_sample=sample)
        except pytest.skip.Exception as skipped:
            if sample is not None:
                raise
            replay_skips.append(str(skipped))    # a replayed sample minigrad cannot be given: the others count
            continue
        compared += 1
    if not compared and replay_skips:
        pytest.skip(f"PyTorch not installed and no recorded sample of {name} applies: {replay_skips[0]}")
    assert compared, f"no samples compared for {name}"


def _record_inplace(name, limit, gradients):
    torch = oracle.live_torch()
    record = {"has_inplace": False, "entries": [], "grads": []}
    for op in opinfos(name):
        if op.inplace_variant is None:
            continue
        record["has_inplace"] = True
        for sample in spread(op, _dtypes(op)[0], limit, requires_grad=False):
            if not isinstance(sample.input, torch.Tensor):
                continue
            entry = {"sample": snap_sample(sample)}
            try:
                entry["want"] = oracle.snap(op.inplace_variant(sample.input.clone(), *sample.args, **sample.kwargs),
                                            grad=False)
            except Exception as error:  # noqa: BLE001 - e.g. a broadcast result that does not fit the input
                entry["refused"] = oracle.snap(error)
            record["entries"].append(entry)
        if gradients and op.supports_autograd and op.supports_inplace_autograd:
            record["grads"].extend(_record_inplace_gradient(op, limit))
    return record


def check_inplace(name, limit=3, gradients=True, inplace_only=False):
    """The in-place variant: on a copy of each float64 sample (torch's result is the reference; an input PyTorch
    refuses to write must be refused with the same exception type), and with a history: ``x.clone().op_()``
    differentiated into x as PyTorch differentiates it. ``inplace_only``: skip when no OpInfo of the name has
    an in-place variant. PyTorch's side is live or recorded."""
    import minigrad as mg
    record = _ask(lambda torch: _record_inplace(name, limit, gradients), ("inplace", name, limit, gradients),
                  keep=lambda r: r)
    if inplace_only and not record["has_inplace"]:
        pytest.skip(f"no in-place variant of {name} in the op database")
    if not record["has_inplace"]:
        return
    fn = resolve(name, "inplace")
    assert fn is not None, f"minigrad has no in-place variant of {name}"
    for entry in record["entries"]:
        x, args, kwargs, _ = convert_recorded(entry["sample"])
        if "refused" in entry:
            with pytest.raises(type(entry["refused"].exception())):
                fn(x.clone(), *args, **kwargs)
            continue
        target = x.clone()
        got = fn(target, *args, **kwargs)
        assert got is target, f"{name}_ does not return self"
        assert_same_outputs(target, entry["want"])
    for entry in record["grads"]:
        x, args, kwargs, _ = convert_recorded(entry["sample"])
        out_mg = fn(x.clone(), *args, **kwargs)
        upstream = np.random.default_rng(1).standard_normal(entry["shape"])
        got = mg.autograd.grad(out_mg, x, mg.tensor(upstream))[0]
        np.testing.assert_allclose(got.numpy(), entry["grad"].numpy(), rtol=1e-7, atol=1e-7)


def _record_inplace_gradient(op, limit):
    torch = oracle.live_torch()
    found = []
    for sample in spread(op, torch.float64, limit, requires_grad=True):
        if not isinstance(sample.input, torch.Tensor) or sample.broadcasts_input:
            continue
        entry = {"sample": snap_sample(sample)}
        out_th = op.inplace_variant(sample.input.clone(), *sample.args, **sample.kwargs)
        upstream = np.random.default_rng(1).standard_normal(tuple(out_th.shape))
        entry["shape"] = tuple(out_th.shape)
        entry["grad"] = oracle.snap(torch.autograd.grad(out_th, sample.input, torch.tensor(upstream))[0], grad=False)
        found.append(entry)
    return found


class _RecordedErrorInput:
    """An ``ErrorInput`` as recorded: ``sample_input`` (a RecordedSample), ``error_type``, ``error_regex``."""

    def __init__(self, sample_input, error_type, error_regex):
        self.sample_input, self.error_type, self.error_regex = sample_input, error_type, error_regex


def _record_errors(name):
    entries = []
    for op in opinfos(name):
        for error in error_inputs(op):
            entries.append({"raises": _raises_in_torch(op, error), "sample": snap_sample(error.sample_input),
                            "error_type": oracle.builtin_kind_of(error.error_type), "regex": error.error_regex})
    return {"entries": entries}


def check_errors(name, unreachable=()):
    """The OpInfo's error inputs raise PyTorch's exception type in minigrad; ``unreachable``: predicates on an
    ``ErrorInput`` for the ones minigrad cannot meet (each with its reason below), skipped, as are the ones the
    installed PyTorch itself accepts (stale entries of the database). PyTorch's side is live or recorded."""
    record = _ask(lambda torch: _record_errors(name), ("errors", name), keep=lambda r: r)
    fn = resolve(name)
    for entry in record["entries"]:
        error = _RecordedErrorInput(entry["sample"], oracle.RecordedError(entry["error_type"]).exception().__class__,
                                    entry["regex"])
        if any(skip(error) for skip in unreachable) or not entry["raises"]:
            continue
        x, args, kwargs, _ = convert_recorded(error.sample_input)
        with pytest.raises(error.error_type):
            fn(x, *args, **kwargs)


def _raises_in_torch(op, error):
    s = error.sample_input
    try:
        op.op(s.input, *s.args, **s.kwargs)
    except Exception:
        return True
    return False


# ErrorInputs that test an argument or a limit minigrad does not take, by design:
def uses_out(error):
    """``out=`` tensors: minigrad has no ``out`` arguments."""
    return "out" in error.sample_input.kwargs


def beyond_numpy_dims(error):
    """A 65-dimensional input: NumPy cannot even hold it (32 dims at most before NumPy 2, 64 since)."""
    t = error.sample_input.input
    return getattr(t, "ndim", 0) > 64 or (isinstance(t, Unconvertible) and "dimensions" in t.reason)


def unbound_on_number(error):
    """``Tensor.__radd__(2, ...)`` called on a Python number: an unbound Python method accepts any first
    argument, PyTorch's C descriptors refuse it (not reachable through the operators)."""
    return not isinstance(error.sample_input.input, Unconvertible) and not hasattr(error.sample_input.input, "shape")
