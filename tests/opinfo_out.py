"""The two ``out=`` passes of the OpInfo harness (``tests/opinfo_harness.py``), for every op PyTorch marks
``supports_out``:

* kind ``"out"``: the op called with ``out=`` empty tensors of its results' dtypes: minigrad resizes them, writes
  PyTorch's values there, and returns them as PyTorch's call does;
* kind ``"out_dtypes"``: the op's first sample called with an ``out`` of each of ``OUT_DTYPES`` in turn (its other
  results' ``out`` tensors of their own dtypes). PyTorch's rule depends on the op: the result's dtype exactly
  (``mm``, ``amax``), any dtype it can be cast to (``digamma``, ``linalg.pinv``, ``kron``), any at all (``lu``),
  computed in ``out``'s dtype (``nansum``, ``normal``), or a factory's ``dtype=``. minigrad must compute where PyTorch
  computes (``out`` keeps its dtype and holds PyTorch's values, cast), and raise PyTorch's exception type where it
  refuses, with ``out`` left empty (PyTorch sometimes resizes it before refusing: ``docs/differences.md``).
"""
import numpy as np

import minigrad as mg

from . import oracle
from .opinfo_record import convert_recorded, snap_sample
from .opinfo_util import assert_same_outputs, assert_same_shapes, flat_outputs, map_sample

OUT_DTYPES = ("float32", "float16", "bfloat16", "int64", "int32", "uint8", "bool", "complex64", "complex128")
OUT_NOT_APPLICABLE = "no out= call to compare"


def _fresh(sample, zeroed=False):
    """A copy of ``sample`` with every tensor cloned: a call that writes into its inputs (``native_batch_norm``'s
    running statistics) leaves the next call, and the recorded sample, as they were. ``zeroed``: tensors of zeros
    (their shapes and dtypes kept), for a record whose values do not matter."""
    torch = oracle.live_torch()
    return map_sample(sample, lambda t: torch.zeros_like(t.detach()) if zeroed else t.detach().clone())


def _results(sample, fn_th):
    """PyTorch's results of ``sample`` without ``out`` (flattened), or ValueError when they are not all tensors."""
    torch = oracle.live_torch()
    results = flat_outputs(fn_th(sample.input, *sample.args, **sample.kwargs))
    if not all(isinstance(r, torch.Tensor) for r in results):   # equal's bool, histogramdd's list of edges
        raise ValueError(f"{OUT_NOT_APPLICABLE}: its result is not a tensor or a tuple of tensors")
    return results


def _call_with_out(fn, sample_parts, dtypes, empty):
    """``fn(x, *args, **kwargs, out=...)`` with empty tensors of ``dtypes`` (a tuple for several results); returns
    (what it returned, the out tensors)."""
    x, args, kwargs = sample_parts
    outs = [empty(d) for d in dtypes]
    return fn(x, *args, **kwargs, out=tuple(outs) if len(outs) > 1 else outs[0]), outs


def _returns(returned, outs):
    returned = flat_outputs(returned)
    return len(returned) == len(outs) and all(r is o for r, o in zip(returned, outs))


def record_out_sample(sample, fn_th, values):
    """PyTorch's side of ``check_out_sample``: the op called with ``out=`` empty tensors of its results' dtypes (one
    per result, a tuple for several): what they hold afterwards, and whether the call returned them."""
    torch = oracle.live_torch()
    snapped, dtypes = snap_sample(sample), [r.dtype for r in _results(_fresh(sample), fn_th)]
    try:
        sample = _fresh(sample)
        returned, outs = _call_with_out(fn_th, (sample.input, sample.args, sample.kwargs), dtypes,
                                        lambda d: torch.empty(0, dtype=d))
    except TypeError as error:          # an OpInfo lambda that passes no out=: nothing to compare
        raise ValueError(f"{OUT_NOT_APPLICABLE}: PyTorch's callable takes no out= ({error})"[:300]) from error
    return {"sample": snapped, "out": [oracle.snap(o, values=values, grad=False) for o in outs],
            "values": values, "returns_out": _returns(returned, outs)}


def _mg_empty(name):
    return mg.empty(0, dtype=getattr(mg, name))


def check_out_sample(record, fn_mg, rtol=1e-7, atol=1e-7):
    """``out=``: minigrad writes its result into empty tensors of PyTorch's out dtypes (resizing them), holds
    PyTorch's values there, and returns them as PyTorch's call did."""
    x, args, kwargs, _ = convert_recorded(record["sample"])
    returned, outs = _call_with_out(fn_mg, (x, args, kwargs), [oracle.dtype_name(o.dtype) for o in record["out"]],
                                    _mg_empty)
    if record["values"]:
        assert_same_outputs(outs, record["out"], rtol, atol, what="out")
    else:                                # random or uninitialized values: shapes and dtypes
        assert_same_shapes(outs, record["out"])
    if record["returns_out"]:
        assert _returns(returned, outs), "out=: minigrad does not return the out tensors, PyTorch does"
    return "out"


def record_out_dtypes_sample(sample, fn_th, values):
    """PyTorch's side of ``check_out_dtypes_sample``: for each dtype of ``OUT_DTYPES`` but the result's own, the
    exception PyTorch raises with an ``out`` of that dtype, or what the out tensors hold and whether the call
    returned them."""
    torch = oracle.live_torch()
    snapped, results = snap_sample(sample), _results(_fresh(sample), fn_th)
    tries = []
    for name in OUT_DTYPES:
        if name == oracle.dtype_name(results[0].dtype):
            continue
        dtypes = [getattr(torch, name)] + [r.dtype for r in results[1:]]
        try:
            fresh = _fresh(sample)
            returned, outs = _call_with_out(fn_th, (fresh.input, fresh.args, fresh.kwargs), dtypes,
                                            lambda d: torch.empty(0, dtype=d))
        except TypeError as error:
            if "out" in str(error) and ("unexpected" in str(error) or "positional" in str(error)):
                raise ValueError(f"{OUT_NOT_APPLICABLE}: PyTorch's callable takes no out= ({error})"[:300]) from error
            tries.append({"out_dtype": name, "raised": "TypeError", "message": str(error)[:200]})
            continue
        except Exception as error:   # noqa: BLE001 - its type is the record
            tries.append({"out_dtype": name, "raised": oracle.builtin_kind_of(type(error)),
                          "message": str(error).strip().split("\n")[0][:200]})
            continue
        tries.append({"out_dtype": name, "out": [oracle.snap(o, values=values, grad=False) for o in outs],
                      "returns_out": _returns(returned, outs)})
    return {"sample": snapped, "values": values,
            "result_dtypes": [oracle.dtype_name(r.dtype) for r in results], "tries": tries}


# tolerances of a value cast into ``out``: the float64 result rounded once to out's dtype in both libraries (the
# 16-bit dtypes: within 1 ulp, a rounding tie broken the other way by a last-bit difference of the float64 value)
_OUT_TOLERANCE = {"float32": (1e-6, 1e-6), "complex64": (1e-6, 1e-6)}


def _integral(name):
    return name in ("bool", "uint8", "int8", "int16", "int32", "int64")


def check_out_dtypes_sample(record, fn_mg, rtol=1e-7, atol=1e-7):
    """``out=`` of every dtype of ``OUT_DTYPES`` (module docstring): each try computes where PyTorch computes, with
    PyTorch's values in ``out``'s dtype, and raises PyTorch's exception type where PyTorch refuses, with ``out``
    left empty. All the disagreeing tries are reported together."""
    problems = []
    for attempt in record["tries"]:
        name = attempt["out_dtype"]
        x, args, kwargs, _ = convert_recorded(record["sample"])
        dtypes = [name] + record["result_dtypes"][1:]
        outs = []

        def empty(d):
            outs.append(_mg_empty(d))
            return outs[-1]
        try:
            returned, _ = _call_with_out(fn_mg, (x, args, kwargs), dtypes, empty)
        except Exception as error:   # noqa: BLE001 - compared with PyTorch's outcome
            if "raised" not in attempt:
                problems.append(f"out={name}: PyTorch computes, minigrad raises {type(error).__name__}: "
                                f"{str(error)[:150]}")
                continue
            wanted = oracle.RecordedError(attempt["raised"]).type
            if not isinstance(error, wanted):
                problems.append(f"out={name}: PyTorch raises {attempt['raised']} ({attempt['message'][:100]}), "
                                f"minigrad {type(error).__name__}: {str(error)[:100]}")
            elif any(o.numel() for o in outs):
                problems.append(f"out={name}: refused as PyTorch does, but out was changed to the shapes "
                                f"{[tuple(o.shape) for o in outs]}")
            continue
        if "raised" in attempt:
            problems.append(f"out={name}: PyTorch raises {attempt['raised']} ({attempt['message'][:120]}), "
                            "minigrad computes")
            continue
        try:
            _assert_same_out(outs, attempt["out"], record["result_dtypes"][0], record["values"], (rtol, atol))
        except AssertionError as error:
            problems.append(f"out={name}: {error}")
            continue
        if attempt["returns_out"] and not _returns(returned, outs):
            problems.append(f"out={name}: minigrad does not return the out tensors, PyTorch does")
    assert not problems, f"{len(problems)} out dtype(s) differ: " + "; ".join(problems)
    return "out"


def _assert_same_out(outs, recorded, result_dtype, values, tolerance):
    """The out tensors hold PyTorch's shapes, dtypes and (``values``) values, compared in the first out's dtype: a
    floating result cast into an integer ``out`` may be 1 apart (a value computed in another order can fall on the
    other side of an integer before the cast truncates it)."""
    if not values:
        assert_same_shapes(outs, recorded)
        return
    name = oracle.dtype_name(recorded[0].dtype)
    if _integral(name) and not _integral(result_dtype) and name != "bool":
        assert_same_shapes(outs, recorded)
        got, want = outs[0].numpy().astype(np.float64), recorded[0].numpy().astype(np.float64)
        assert np.all(np.abs(got - want) <= 1), f"out values more than 1 from PyTorch's: {got} vs {want}"
        assert_same_outputs(outs[1:], recorded[1:], *tolerance, what="out")
        return
    rtol, atol = _OUT_TOLERANCE.get(name, tolerance)
    assert_same_outputs(outs, recorded, rtol, atol, what="out", ulps=1)


def functions_without_out():
    """The op database's function variants that PyTorch runs on every float64 sample but refuses, with a TypeError,
    for every sample given ``out=`` empty tensors of its results' dtypes: functions whose Python signature has no
    ``out`` (``torch.flip``, ``nn.functional.layer_norm``), or whose samples all call an overload without one
    (``median(x)``, ``std(x, True)``). A list of (op name, one such sample as recorded, its tensors zeros: the
    refusal comes before any value is read). Ops whose samples change from one process to the next are left out."""
    from .opinfo_harness import UNSTABLE_SAMPLES, _is_lambda, _samples, main_dtype, op_id
    from .opinfo_util import op_db
    torch = oracle.live_torch()
    found = {}
    for op in op_db():
        if op.supports_out or not main_dtype(op) or _is_lambda(op.op) or op_id(op) in UNSTABLE_SAMPLES:
            continue
        verdicts, first = set(), None         # (the smallest refused sample is recorded)
        for sample in _samples(op, main_dtype(op), False, 4, None):
            try:
                dtypes = [r.dtype for r in _results(_fresh(sample), op.op)]
                fresh = _fresh(sample)
                _call_with_out(op.op, (fresh.input, fresh.args, fresh.kwargs), dtypes,
                               lambda d: torch.empty(0, dtype=d))
                verdicts.add("accepts")
            except TypeError:
                verdicts.add("refuses")
                first = min(first or sample, sample, key=out_sample_size)
            except Exception:   # noqa: BLE001 - a sample PyTorch refuses anyway, or a result that is no tensor
                verdicts.add("other")
        if verdicts == {"refuses"} and op.name not in found:
            try:
                found[op.name] = snap_sample(_fresh(first, zeroed=True))
            except Exception:   # noqa: BLE001 - a sample no record can hold
                continue
    return sorted(found.items())


def out_sample_size(sample):
    """How many elements a sample's tensors hold."""
    torch = oracle.live_torch()
    return sum(t.numel() for t in flat_outputs([sample.input, list(sample.args), list(sample.kwargs.values())])
               if isinstance(t, torch.Tensor))
