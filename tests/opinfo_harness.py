"""The OpInfo database run over everything minigrad has: which ops and variants to run, and one outcome per sample.

``tests/test_opinfo.py`` asserts on these outcomes (with its reviewed skip lists); ``bench/opinfo_coverage.py``
counts them. Both see the same cases, so the coverage report states what the test checks.

A *case* is (OpInfo, variant, kind):

* variant ``"function"`` (``mg.tan``, ``mg.nn.functional.x``, or PyTorch's own lambda re-bound to minigrad),
  ``"method"`` (``Tensor.tan``) or ``"inplace"`` (``Tensor.tan_``), each when both libraries have it;
* kind ``"float64"`` (a spread of float64 samples: values, dtypes, the gradients of a random upstream, inputs not
  mutated), ``"complex128"`` (the same with complex128 samples, for float ops PyTorch also computes on complex
  numbers: complex outputs get complex upstream gradients), ``"dtypes"`` (float32 and the integer and bool dtypes
  PyTorch supports for the op: values and dtypes), ``"errors"`` (``error_inputs`` raise PyTorch's exception type;
  function variant only), ``"complex_unlisted"`` (complex inputs to a float op: refused as PyTorch refuses them),
  or, for ops PyTorch marks ``supports_out``, ``"out"`` and ``"out_dtypes"`` (``out=`` of the result's dtype, and of
  every other dtype: ``tests/opinfo_out.py``).

An op is picked up as soon as minigrad resolves its name, so ops added on other branches run without edits here.
"""
import functools
import re
import types
from dataclasses import dataclass, field

import numpy as np
import pytest

import minigrad as mg

from . import oracle
from .opinfo_out import (OUT_NOT_APPLICABLE, check_out_dtypes_sample, check_out_sample, out_sample_size,
                         record_out_dtypes_sample, record_out_sample)
from .opinfo_record import Unconvertible, convert_recorded, find, snap_sample
from .opinfo_util import (assert_same_outputs, assert_same_shapes, check_out_of_place, ctor_to_mg, error_inputs,
                          flat_outputs, map_sample, op_db, record_out_of_place, resolve, samples, spread, to_mg,
                          within_budget)

VARIANTS = ("function", "method", "inplace")
KINDS = ("float64", "complex128", "dtypes", "errors", "complex_unlisted", "out", "out_dtypes")
ERROR_KINDS = ("errors", "complex_unlisted")   # kinds whose samples are (mostly) inputs PyTorch refuses

FLOAT64_LIMIT = 12        # float64 samples per (op, variant): a fixed spread over the op's list
METHOD_LIMIT = 6          # the method and in-place variants call the same code: fewer samples
COMPLEX_LIMIT = 6         # complex128 samples per (op, function variant) of a float op that takes complex too (method
                          # and in-place variants: half)
DTYPE_LIMIT = 3           # samples per extra dtype (forward and dtype only), spread over the first DTYPE_SCAN
DTYPE_SCAN = 40
# dtypes of the cheap pass: float32, then PyTorch's integer and bool dtypes that minigrad has, bfloat16 and float16
# (function and in-place variants; values compared in ulps. The method variant runs the function's code; the
# in-place one its own, which once took bfloat16, NumPy's kind "V", for an integer dtype)
EXTRA_DTYPES = ("float32", "uint8", "int8", "int16", "int32", "int64", "bool", "bfloat16", "float16")


def op_id(op):
    """``name`` or ``name.variant_test_name``: unique over the database (an op id stands for itself)."""
    if isinstance(op, str):
        return op
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


# --------------------------------------------------------------------------- the callables
def _seeded_call(fn, *args, **kwargs):
    """minigrad's stand-in for PyTorch's ``wrapper_set_seed`` (the values of random ops are not compared)."""
    mg.manual_seed(42)
    return fn(*args, **kwargs)


def _is_lambda(fn):
    return isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>"


def rebind(fn):
    """PyTorch's lambda ``fn`` (``lambda self, cond, other: torch.where(cond, self, other)``) with ``torch``
    meaning minigrad: the OpInfo's own argument order, applied to minigrad."""
    namespace = dict(fn.__globals__, torch=mg, wrapper_set_seed=_seeded_call)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def is_random(op):
    """PyTorch seeds the op before each call (``wrapper_set_seed``): its values are random, not compared."""
    return _is_lambda(op.op) and "wrapper_set_seed" in op.op.__code__.co_names


def torch_variant(op, variant):
    """PyTorch's callable of ``variant``, or None (``Tensor.T`` is a property: no method variant)."""
    found = {"function": op.op, "method": op.method_variant, "inplace": op.inplace_variant}[variant]
    return found if callable(found) else None


def minigrad_variant(op, variant):
    """minigrad's callable of ``variant`` (called as PyTorch's is), or None when minigrad lacks it (or, for a
    RecordedOp, when the variant is PyTorch's lambda)."""
    if isinstance(op, RecordedOp):
        return _recorded_variant(op, variant)
    th = torch_variant(op, variant)
    if th is None:
        return None
    if variant == "inplace" and "." in op.name:    # F.celu(x, inplace=True): PyTorch's lambda or partial of the op
        function = resolve(op)
        if function is None:
            return None
        if isinstance(th, functools.partial):
            return functools.partial(function, *th.args, **th.keywords)
        return rebind(th) if _is_lambda(th) else None
    found = resolve(op, variant)
    if found is None:
        return None
    if variant == "function" and _is_lambda(op.op):
        return rebind(op.op)
    return found


def torch_name(op, variant):
    """The PyTorch name a variant stands for (``tan``, ``Tensor.tan``, ``Tensor.tan_``)."""
    if variant == "function":
        return op.name
    if "." in op.name:
        return f"{op.name}(inplace=True)"
    return "Tensor." + (op.name + "_" if variant == "inplace" and not op.name.endswith("_") else op.name)


# the dtype of the full pass (kind "float64"): float64, or for ops PyTorch defines on other dtypes only
# (``imag``: complex; ``one_hot``: int64; ``__ror__``: integers and bool) the first of these it supports
MAIN_DTYPES = ("float64", "complex128", "int64", "int32", "bool")
UNINITIALIZED = {"empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted"}


def main_dtype(op):
    """The dtype of ``op``'s full pass (gradients are compared where it is floating or complex), or None."""
    supported = op.supported_dtypes("cpu")
    return next((name for name in MAIN_DTYPES if _torch_dtype(name) in supported), None)


def complex_pass(op):
    """Whether ``op`` gets a complex128 full pass beside its float64 one: PyTorch computes it on complex128 too."""
    return main_dtype(op) == "float64" and _torch_dtype("complex128") in op.supported_dtypes("cpu")


def full_pass(op, kind, variant, limit):
    """The dtype and sample limit of a full pass (kind "float64" or "complex128")."""
    if kind == "complex128":
        return "complex128", limit or (COMPLEX_LIMIT if variant == "function" else COMPLEX_LIMIT // 2)
    return main_dtype(op), limit or (FLOAT64_LIMIT if variant == "function" else METHOD_LIMIT)


def complex_unlisted_pass(op):
    """Whether ``op`` gets the complex128 pass of a float op whose dtypes PyTorch lists without complex128: a
    complex input must be refused as PyTorch refuses it (not computed by NumPy's rules for ordering, rounding or
    pooling complex numbers), or, where PyTorch computes it all the same, give PyTorch's values."""
    return main_dtype(op) == "float64" and _torch_dtype("complex128") not in op.supported_dtypes("cpu")


COMPLEX_UNLISTED_LIMIT = 3     # complexified float64 samples per op
OUT_LIMIT = 2                  # float64 samples per op of the out= pass
OUT_DTYPES_SCAN = 4            # the out_dtypes pass takes the smallest of the first 4 float64 samples


def complexified_samples(op):
    """``op``'s first float64 samples with their float64 tensors made complex128 (those that hold one)."""
    torch = oracle.live_torch()
    found = []
    for sample in _samples(op, "float64", False, COMPLEX_UNLISTED_LIMIT, None):
        made = map_sample(sample, lambda t: t.detach().to(torch.complex128) if t.dtype == torch.float64
                          else t.detach())          # (every float64 tensor made complex128)
        if any(isinstance(t, torch.Tensor) and t.is_complex()
               for t in flat_outputs([made.input, list(made.args), list(made.kwargs.values())])):
            found.append(made)
    return found


def record_complex_unlisted(op, sample, fn_th, values):
    """PyTorch's side of one complexified sample: the exception type it refuses it with (``record_error``'s
    record), or, where it computes it, its outputs (``computed``; values only, no gradients)."""
    try:
        fn_th(sample.input, *sample.args, **sample.kwargs)
    except Exception as refused:   # noqa: BLE001 - its type is the record
        error = types.SimpleNamespace(sample_input=sample, error_type=type(refused),
                                      error_regex=re.escape(str(refused).strip().split("\n")[0][:60]))
        return record_error(op, error)
    return dict(record_out_of_place(op, sample, fn_th, values=values, gradients=False), computed=True)


def values_compared(op):
    """False for ops whose values are random or uninitialized memory: only shapes and dtypes are compared."""
    return not is_random(op) and op.name not in UNINITIALIZED


def cases(ops=None):
    """Every (op, variant, kind) minigrad resolves, in database order."""
    found = []
    for op in op_db() if ops is None else ops:
        for variant in VARIANTS:
            if minigrad_variant(op, variant) is None:
                continue
            kinds = (("float64",) if main_dtype(op) else ()) + (("complex128",) if complex_pass(op) else ())
            kinds += ("dtypes",) if extra_dtypes(op) else ()
            kinds += ("errors",) if variant == "function" and op.error_inputs_func else ()
            kinds += ("complex_unlisted",) if variant == "function" and complex_unlisted_pass(op) else ()
            kinds += ("out", "out_dtypes") if variant == "function" and op.supports_out and main_dtype(op) else ()
            found.extend((op, variant, kind) for kind in kinds)
    return found


# --------------------------------------------------------------------------- outcomes
@dataclass
class Outcome:
    """What happened to one sample: ``status`` is ``"ok"``, ``"fail"`` (``message`` says how) or ``"n/a"``
    (the sample does not apply: a dtype minigrad lacks, a torch-only argument, PyTorch itself refusing an
    in-place write)."""
    index: int
    status: str
    message: str = ""
    what: str = ""            # "forward", "gradient", "raise", "mutation", "error type", ...
    dtype: str = "float64"
    sample: object = field(default=None, repr=False)


def _describe(error):
    text = str(error).strip().replace("\n", " ")
    return f"{type(error).__name__}: {text[:300]}"


def _classify(error):
    """('what', message) of an exception raised while comparing one sample."""
    if isinstance(error, AssertionError):
        text = str(error)
        what = "gradient" if "gradient" in text or "grad" in text.split(":")[0] else "forward"
        return what, _describe(error)
    if isinstance(error, TypeError) and "argument" in str(error):
        return "argument", _describe(error)
    return "raise", _describe(error)


def _snapshot(memo):
    return [(m, m.detach().numpy().copy()) for _, m in memo.values() if isinstance(m, mg.Tensor)]


def _assert_unchanged(snapshot):
    for i, (tensor, before) in enumerate(snapshot):
        now = tensor.detach().numpy()
        if now.shape != before.shape or not np.array_equal(now, before, equal_nan=before.dtype.kind in "fc"):
            raise AssertionError(f"mutation: input tensor {i} was changed by a call that raised")


def _tensors(x, args, kwargs, kind):
    """The tensors of a sample's (input, args, kwargs) in order (the same order in both libraries)."""
    return [t for t in flat_outputs([x, list(args), list(kwargs.values())]) if isinstance(t, kind)]


def _assert_same_writes(inputs_mg, before_mg, after_th, rtol, atol):
    """Each input is changed by the call exactly where PyTorch changes its own (``batch_norm`` updates its
    running statistics; ``tan`` changes nothing), to PyTorch's values (``after_th``: PyTorch's input afterwards,
    None where the call left it unchanged)."""
    for i, (m, bm, th) in enumerate(zip(inputs_mg, before_mg, after_th)):
        now_mg = m.detach().numpy()
        changed_mg = now_mg.shape != bm.shape or not np.array_equal(now_mg, bm, equal_nan=True)
        if changed_mg and th is None:
            raise AssertionError(f"mutation: input tensor {i} was changed by an out-of-place call")
        if th is not None:
            assert_same_outputs(m.detach(), th, rtol, atol, what=f"mutation: input {i} after the call")


def record_out_of_place_sample(op, sample, fn_th, values=True, gradients=True, processed=False):
    """PyTorch's side of ``run_out_of_place``: the sample, outputs, the inputs it changed, the gradients."""
    return record_out_of_place(op, sample, fn_th, values=values, gradients=gradients, processed_forward=processed,
                               watch=values, complex_outputs=True)


def run_out_of_place(record, fn_mg, *, values=True, rtol=1e-7, atol=1e-7, processed=False, live_sample=None, ulps=1):
    """One sample through a function or method variant: compared with PyTorch's record, and its inputs changed
    only where PyTorch changes them."""
    if not values or "raised" in record:
        return check_out_of_place(record, fn_mg, values=values)

    def watched(x, *args, **kwargs):   # PyTorch has run and the sample is converted: watch ours
        inputs_mg = _tensors(x, args, kwargs, mg.Tensor)
        before_mg = [t.detach().numpy().copy() for t in inputs_mg]
        out = fn_mg(x, *args, **kwargs)
        _assert_same_writes(inputs_mg, before_mg, record["after"], rtol, atol)
        return out

    return check_out_of_place(record, watched, rtol=rtol, atol=atol, grad_rtol=max(rtol, 1e-6),
                              grad_atol=max(atol, 1e-6), processed_forward=processed, live_sample=live_sample,
                              ulps=ulps)


def record_inplace_sample(sample, fn_th, values=True):
    """PyTorch's side of ``run_inplace``: on a copy of the input that does not require grad, the exception it
    refuses the write with, or whether it returns its input and the input's values afterwards."""
    torch = oracle.live_torch()
    record = {"sample": snap_sample(sample)}
    x_th = sample.input.detach().clone() if isinstance(sample.input, torch.Tensor) else sample.input
    args_th = [a.detach() if isinstance(a, torch.Tensor) else a for a in sample.args]
    kwargs_th = {k: (v.detach() if isinstance(v, torch.Tensor) else v) for k, v in sample.kwargs.items()}
    try:
        out_th = fn_th(x_th, *args_th, **kwargs_th)
    except Exception as refused:  # noqa: BLE001 - PyTorch refuses: minigrad must too
        record["refused"] = oracle.snap(refused)
        return record
    record["returns_input"] = out_th is x_th
    record["after"] = oracle.snap(x_th, values=values, grad=False)
    return record


def run_inplace(record, fn_mg, *, values=True, rtol=1e-7, atol=1e-7, ulps=1):
    """One sample through the in-place variant, on a copy of the input that does not require grad: minigrad
    returns the input object itself and writes PyTorch's values into it. Where PyTorch refuses the write
    (a broadcast or a dtype it cannot hold), minigrad must raise the same exception type."""
    x, args, kwargs, _ = convert_recorded(record["sample"])
    x = x.detach().clone() if isinstance(x, mg.Tensor) else x
    args = [a.detach() if isinstance(a, mg.Tensor) else a for a in args]
    kwargs = {k: (v.detach() if isinstance(v, mg.Tensor) else v) for k, v in kwargs.items()}
    if "refused" in record:     # PyTorch refuses: minigrad must too, with the same type, changing nothing
        refused = record["refused"].exception()
        before = x.detach().numpy().copy()
        try:
            fn_mg(x, *args, **kwargs)
        except type(refused):
            _assert_unchanged([(x, before)])
            return "refused"     # checked: both refuse
        except Exception as other:
            raise AssertionError(f"error type: PyTorch refuses the in-place write with {type(refused).__name__}, "
                                 f"minigrad raises {_describe(other)}") from other
        raise AssertionError(f"error type: PyTorch refuses the in-place write ({_describe(refused)}), "
                             "minigrad accepts it")
    out_mg = fn_mg(x, *args, **kwargs)
    if record["returns_input"]:
        assert out_mg is x, "in-place: minigrad does not return its input object"
    if values:
        assert_same_outputs(x, record["after"], rtol, atol, what="in-place result", ulps=ulps)
    else:
        assert_same_shapes(x, record["after"])
    return "ok"


# --------------------------------------------------------------------------- one case
def _torch_dtype(name):
    torch = pytest.importorskip("torch")
    return getattr(torch, name)


def extra_dtypes(op, variant="function"):
    """The dtypes of the cheap pass: those of ``EXTRA_DTYPES`` that PyTorch supports for ``op`` and minigrad has,
    but the full pass's (bfloat16 and float16 for the function and in-place variants)."""
    supported, main = op.supported_dtypes("cpu"), main_dtype(op)
    return [name for name in EXTRA_DTYPES if _torch_dtype(name) in supported and hasattr(mg, name) and name != main
            and (name not in ("bfloat16", "float16") or variant in ("function", "inplace"))]


def missing_dtypes(op):
    """The extra dtypes PyTorch supports for ``op`` that minigrad does not have (reported, not run)."""
    supported = op.supported_dtypes("cpu")
    return [name for name in EXTRA_DTYPES if _torch_dtype(name) in supported and not hasattr(mg, name)]


_CACHE = {}


def _samples(op, dtype_name, requires_grad, limit, scan):
    """``samples``, kept for the op's next variant (the function, method and in-place variants run the same
    samples; each run converts them afresh and leaves PyTorch's tensors as PyTorch's own op leaves them)."""
    key = (op_id(op), dtype_name, requires_grad, scan)
    if key not in _CACHE:
        if _CACHE and next(iter(_CACHE))[0] != key[0]:
            _CACHE.clear()                                   # one op at a time: cases come in database order
        _CACHE[key] = samples(op, _torch_dtype(dtype_name), requires_grad=requires_grad, scan=scan)
    return spread(_CACHE[key], limit)


def _run_one(outcomes, index, dtype, sample, body):
    try:
        result = body()
        if result == "accepted by PyTorch too":
            outcomes.append(Outcome(index, "n/a", result, "conversion", dtype, sample))
            return
        outcomes.append(Outcome(index, "ok", what=result or "", dtype=dtype, sample=sample))
    except pytest.skip.Exception as skipped:
        outcomes.append(Outcome(index, "n/a", str(skipped), "conversion", dtype, sample))
    except Exception as error:
        what, message = _classify(error)
        if message.startswith("AssertionError: mutation"):
            what = "mutation"
        elif message.startswith("AssertionError: error type"):
            what = "error type"
        outcomes.append(Outcome(index, "fail", message, what, dtype, sample))


class RecordedOp:
    """What a replay knows of an OpInfo: its name, variant name, and how minigrad's variants are found
    (``how``: ``"resolve"`` by name; ``"rebind"``: PyTorch's own lambda re-bound to minigrad, which needs PyTorch;
    ``("partial", args, keywords)``: ``functools.partial`` of minigrad's function)."""

    def __init__(self, name, variant_test_name, how):
        self.name, self.variant_test_name, self.how = name, variant_test_name, how


def _how(op, variant):
    th = torch_variant(op, variant)
    if variant == "inplace" and "." in op.name:
        if isinstance(th, functools.partial):
            return ["partial", oracle.snap(list(th.args)), oracle.snap(dict(th.keywords))]
        return "rebind"
    return "rebind" if variant == "function" and _is_lambda(op.op) else "resolve"


def _recorded_variant(op, variant):
    """minigrad's callable of ``variant`` for a RecordedOp, or None (PyTorch's lambda: not replayable)."""
    if op.how == "rebind":
        return None
    if isinstance(op.how, list):
        function = resolve(op.name)
        return None if function is None else functools.partial(function, *op.how[1], **op.how[2])
    return resolve(op.name, variant)


# (the complex128 and out= passes are compared live only: their records would double the fixture, which PyTorch-less
# runs replay; CI, which has PyTorch, checks their empty records. The out_dtypes pass keeps its one sample per op)
REPLAY_SAMPLES = {"float64": 4, "complex128": 0, "dtypes": 1, "errors": 6, "complex_unlisted": 1, "out": 0,
                  "out_dtypes": 1}   # samples per dtype kept in the fixture (a spread)


def _thin(record, kind):
    """The part of a case's record kept in its fixture: a spread of REPLAY_SAMPLES samples per dtype, preferring
    samples minigrad can be given, then the cheapest of those within the budget (``opinfo_util.within_budget``)."""
    kept, groups = [], {}
    for r in record["samples"]:
        groups.setdefault(r["dtype"], []).append(r)
    for group in groups.values():
        usable = [r for r in group if not _unconvertible(r)]
        kept.extend(spread(usable or group, REPLAY_SAMPLES[kind]) if REPLAY_SAMPLES[kind] else [])
    return dict(record, samples=within_budget(kept))


def _unconvertible(r):
    """Whether a sample's record cannot be replayed: a value minigrad cannot be given, PyTorch raising, or an
    error input PyTorch accepts."""
    return ("unrecordable" in r or bool(find(r["sample"], Unconvertible)) or "raised" in r
            or bool(r.get("accepted")))


def record_case(op, variant, kind, limit=None, processed=False, gradients=True):
    """PyTorch's side of one case, as plain data: the op's name and how minigrad's variant is found, whether
    values are compared, and one record per sample (``record_out_of_place_sample``, ``record_inplace_sample`` or
    ``record_error``), each with its index and dtype. ``gradients=False``: the float64 pass records no gradients."""
    fn_th, values = torch_variant(op, variant), values_compared(op)
    record = {"name": op.name, "variant_test_name": op.variant_test_name, "how": _how(op, variant),
              "values": values, "samples": []}

    def add(make, index, dtype):
        try:
            r = make()
        except Exception as error:   # noqa: BLE001 - a sample no record can hold (a CSR or meta-device tensor)
            r = {"sample": None, "unrecordable": f"sample not recordable: {type(error).__name__}: {error}"[:300]}
        r.update(index=index, dtype=dtype)
        record["samples"].append(r)

    if kind == "errors":
        for index, error in enumerate(error_inputs(op)):
            add(lambda: record_error(op, error), index, "")
        return record
    if kind == "complex_unlisted":
        for index, sample in enumerate(complexified_samples(op)):
            add(lambda: record_complex_unlisted(op, sample, fn_th, values), index, "complex128")
        return record
    if kind == "out":
        name = main_dtype(op)
        for index, sample in enumerate(_samples(op, name, False, OUT_LIMIT, None)):
            add(lambda: record_out_sample(sample, fn_th, values), index, name)
        return record
    if kind == "out_dtypes":     # the smallest of the first OUT_DTYPES_SCAN samples (nine outs each are recorded)
        name, found = main_dtype(op), list(enumerate(_samples(op, main_dtype(op), False, OUT_DTYPES_SCAN, None)))
        for index, sample in sorted(found, key=lambda pair: out_sample_size(pair[1]))[:1]:
            add(lambda: record_out_dtypes_sample(sample, fn_th, values), index, name)
        return record
    if kind in ("float64", "complex128"):
        name, limit = full_pass(op, kind, variant, limit)
        for index, sample in enumerate(_samples(op, name, None, limit, None)):
            add(lambda: record_inplace_sample(sample, fn_th, values) if variant == "inplace" else
                record_out_of_place_sample(op, sample, fn_th, values, gradients, processed), index, name)
        return record
    for name in extra_dtypes(op, variant):
        for index, sample in enumerate(_samples(op, name, False, limit or DTYPE_LIMIT, DTYPE_SCAN)):
            add(lambda: record_inplace_sample(sample, fn_th, values) if variant == "inplace" else
                record_out_of_place_sample(op, sample, fn_th, values, gradients=False, processed=processed),
                index, name)
    return record


# op ids whose OpInfo samples differ from one process to the next (seeding does not fix them): their fixture is
# replayed without PyTorch, but CI does not compare it with the samples of its own run
UNSTABLE_SAMPLES = {"meshgrid.variadic_tensors", "meshgrid.list_of_tensors", "multinomial"}


def run_case(op, variant, kind, limit=None, sample_filter=None, tolerance=(1e-7, 1e-7), processed=False,
             gradients=True, bfloat16_ulps=1, float16_ulps=1):
    """The outcomes of one case. ``op`` is an OpInfo, or without PyTorch the case's op id (its record then comes
    from ``tests/fixtures/``). ``tolerance`` is the full pass's (rtol, atol) for values (gradients: at least
    1e-6). ``processed``: outputs compared after the sample's ``output_process_fn_grad`` (eigenvectors, unique up
    to sign). ``gradients=False``: the full pass compares values only. ``sample_filter(op, variant, sample,
    dtype_name)`` returns a reason to leave a sample out (recorded as an ``"n/a"`` outcome carrying the reason,
    ``what="skipped"``) or None. ``bfloat16_ulps``, ``float16_ulps``: how far (in ulps of their dtype) the bfloat16
    and float16 samples' values may be from PyTorch's (0: bit for bit)."""
    live = not isinstance(op, str)
    record = oracle.ask(lambda torch: record_case(op, variant, kind, limit, processed, gradients),
                        inputs=(op_id(op), variant, kind, limit, gradients), tolerance=tolerance,
                        keep=lambda r: _thin(r, kind), stable=op_id(op) not in UNSTABLE_SAMPLES)
    shown = RecordedOp(record["name"], record["variant_test_name"], record["how"])
    fn_mg = minigrad_variant(op if live else shown, variant)
    if fn_mg is None:
        pytest.skip("PyTorch not installed: the op is PyTorch's own lambda re-bound to minigrad (not recorded)")
    values = record["values"]
    live_samples = _live_samples(op, variant, kind, limit) if live else None
    outcomes = []
    for r in record["samples"]:
        index, dtype = r["index"], r["dtype"]
        sample = r["sample"]
        if r.get("unrecordable"):    # left out by a reviewed rule that needs no sample, or not expressible
            reason = _rule_without_sample(sample_filter, shown, variant, dtype)
            if OUT_OVERLAP in r["unrecordable"]:    # checked by tests/test_out.py instead, live
                reason = "out= sharing memory: tests/test_out.py checks PyTorch's refusals of it"
            elif OUT_NOT_APPLICABLE in r["unrecordable"]:
                reason = r["unrecordable"]
            outcomes.append(Outcome(index, "n/a", reason or r["unrecordable"], "skipped" if reason else "conversion",
                                    dtype, None))
            continue
        reason = sample_filter(shown, variant, sample, dtype) if sample_filter else None
        if reason:
            outcomes.append(Outcome(index, "n/a", reason, "skipped", dtype, sample))
            continue
        if r.get("accepted"):
            outcomes.append(Outcome(index, "n/a", "accepted by PyTorch too", "conversion", dtype, sample))
            continue
        if kind == "complex_unlisted" and r.get("computed"):   # PyTorch computes it: its values (no gradients)
            body = functools.partial(check_out_of_place, r, fn_mg, values=values)
        elif kind in ("out", "out_dtypes"):
            check = check_out_sample if kind == "out" else check_out_dtypes_sample
            body = functools.partial(check, r, fn_mg, rtol=tolerance[0], atol=tolerance[1])
        elif kind in ERROR_KINDS:
            body = functools.partial(check_error, r, fn_mg)
        elif variant == "inplace":
            rtol, atol = tolerance if kind in ("float64", "complex128") else (1e-4, 1e-5)
            body = functools.partial(run_inplace, r, fn_mg, values=values, rtol=rtol, atol=atol,
                                     ulps=float16_ulps if dtype == "float16" else bfloat16_ulps)
        else:
            # float32 results (of float32 or integer inputs) computed in another order: PyTorch's float32 tolerance
            rtol, atol = tolerance if kind in ("float64", "complex128") else (1e-4, 1e-5)
            body = functools.partial(run_out_of_place, r, fn_mg, values=values, rtol=rtol, atol=atol,
                                     processed=processed, ulps=float16_ulps if dtype == "float16" else bfloat16_ulps,
                                     live_sample=live_samples[(dtype, index)] if live_samples else None)
        _run_one(outcomes, index, dtype, sample, body)
    return outcomes


def _rule_without_sample(sample_filter, op, variant, dtype):
    """The reason a reviewed rule gives for a sample it does not need to look at (None if it needs the sample)."""
    try:
        return sample_filter(op, variant, None, dtype) if sample_filter else None
    except Exception:   # noqa: BLE001 - the rule reads the sample
        return None


def _live_samples(op, variant, kind, limit):
    """{(dtype, index): SampleInput} of a live case (their ``output_process_fn_grad``), from the cache."""
    if kind in ERROR_KINDS + ("out", "out_dtypes"):
        return {}
    if kind in ("float64", "complex128"):
        name, limit = full_pass(op, kind, variant, limit)
        return {(name, i): s for i, s in enumerate(_samples(op, name, None, limit, None))}
    return {(name, i): s for name in extra_dtypes(op, variant)
            for i, s in enumerate(_samples(op, name, False, limit or DTYPE_LIMIT, DTYPE_SCAN))}


def record_error(op, error):
    """PyTorch's side of an ``ErrorInput``: ``{"accepted": True}`` when the installed PyTorch runs it after all
    (the database marks some as expected failures), else the sample, the exception type and regex. An ``out`` that
    shares memory with an input cannot be recorded (a record keeps tensors' values, not their memory)."""
    if _out_shares_memory(error.sample_input):
        raise ValueError(OUT_OVERLAP)
    try:
        op.op(error.sample_input.input, *error.sample_input.args, **error.sample_input.kwargs)
    except Exception:   # noqa: BLE001
        pass
    else:
        return {"accepted": True, "sample": snap_sample(error.sample_input)}
    return {"sample": snap_sample(error.sample_input), "error_type": oracle.builtin_kind_of(error.error_type),
            "regex": error.error_regex}


OUT_OVERLAP = "out= shares memory with an input or within itself, which a recorded sample cannot express"


def _out_shares_memory(sample):
    torch = oracle.live_torch()
    outs = flat_outputs([sample.kwargs.get("out")])
    inputs = flat_outputs([sample.input, list(sample.args), [v for k, v in sample.kwargs.items() if k != "out"]])
    storage = lambda t: t.untyped_storage().data_ptr()               # noqa: E731
    internal = any(isinstance(o, torch.Tensor) and any(st == 0 and n > 1 for st, n in zip(o.stride(), o.shape))
                   for o in outs)                                     # an expanded out: elements share memory
    return internal or any(isinstance(o, torch.Tensor) and isinstance(t, torch.Tensor) and storage(o) == storage(t)
                           for o in outs for t in inputs)


def check_error(record, fn_mg):
    """An ``ErrorInput`` raises PyTorch's exception type in minigrad, and leaves its inputs unchanged."""
    x, args, kwargs, memo = convert_recorded(record["sample"])
    error_type = oracle.RecordedError(record["error_type"]).exception().__class__
    before = _snapshot(memo)
    try:
        fn_mg(x, *args, **kwargs)
    except error_type as raised:
        _assert_unchanged(before)
        return "message matches" if re.search(record["regex"], str(raised)) else "type matches"
    except Exception as other:
        raise AssertionError(f"error type: PyTorch raises {error_type.__name__} "
                             f"({record['regex']!r}), minigrad {_describe(other)}") from other
    raise AssertionError(f"error type: PyTorch raises {error_type.__name__} ({record['regex']!r}), "
                         "minigrad accepts the input")


__all__ = ["module_db", "minigrad_module", "run_module", "VARIANTS", "KINDS", "Outcome", "op_id", "cases", "run_case", "minigrad_variant", "torch_variant",
           "torch_name", "is_random", "extra_dtypes", "main_dtype", "values_compared", "missing_dtypes", "rebind"]


# --------------------------------------------------------------------------- modules (common_modules.module_db)
MODULE_LIMIT = 4          # module inputs per module (forward values in float64, parameters copied from PyTorch's)


def module_db():
    pytest.importorskip("torch")
    from torch.testing._internal.common_modules import module_db as db
    return db


def minigrad_module(info):
    """minigrad's class of a ModuleInfo (``minigrad.nn.<same name>``), or None."""
    return getattr(mg.nn, info.module_cls.__name__, None)


def run_module(info, limit=MODULE_LIMIT):
    """Outcomes of a module's float64 inputs: each module built in both libraries from the same constructor
    arguments, PyTorch's parameters and buffers loaded into minigrad's (``load_state_dict``), the forward
    outputs compared (random modules: shapes and dtypes only)."""
    torch = pytest.importorskip("torch")
    cls = minigrad_module(info)
    torch.manual_seed(0)
    inputs = list(info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=False,
                                          training=False))
    if len(inputs) > limit:
        inputs = [inputs[int(i * len(inputs) / limit)] for i in range(limit)]
    outcomes = []
    for index, item in enumerate(inputs):
        def body(item=item):
            if item.forward_input is None:
                return "no forward input"
            c_args, c_kwargs = item.constructor_input.args, item.constructor_input.kwargs
            torch.manual_seed(0)
            module_th = info.module_cls(*c_args, **c_kwargs).to(torch.float64).eval()
            memo = {}
            module_mg = cls(*ctor_to_mg(c_args), **ctor_to_mg(c_kwargs)).to(mg.float64).eval()
            f_args, f_kwargs = item.forward_input.args, item.forward_input.kwargs
            out_th = module_th(*f_args, **f_kwargs)      # first: a lazy module's parameters exist after a forward
            state = {k: to_mg(v.detach(), memo) for k, v in module_th.state_dict().items()}
            module_mg.load_state_dict(state)
            out_mg = module_mg(*to_mg(f_args, memo), **to_mg(f_kwargs, memo))
            assert_same_outputs(out_mg, out_th, 1e-7, 1e-7)
            return "ok"
        _run_one(outcomes, index, "float64", item, body)
    return outcomes
