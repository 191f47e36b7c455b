"""PyTorch's operator database (``op_db``, ``torch.testing._internal.common_methods_invocations``) run against
every op minigrad has: one test per (op, variant, kind), e.g. ``test_opinfo[tan-method-float64]``.

* kind ``float64``: a fixed spread of the op's float64 samples (or, for ops PyTorch defines on other dtypes
  only, complex128 or int64): values, dtypes, float64 gradients of a random upstream, inputs changed only where
  PyTorch changes them; the in-place variant returns its input object holding PyTorch's values;
* kind ``dtypes``: float32 and the integer and bool dtypes PyTorch lists for the op, a few samples each
  (values and dtypes);
* kind ``errors``: every ``ErrorInput`` raises PyTorch's exception type (and changes nothing).

minigrad's ops are found by name (``tests/opinfo_harness.py``): an op added anywhere in minigrad is run here
from then on. An op minigrad lacks is not run (``bench/opinfo_coverage.py`` counts it).

Known failures are listed below with their reasons, nothing else is left out: ``SKIPS`` names whole cases,
which are run and must still fail (a fixed one is reported, so its entry goes); ``SAMPLE_SKIPS`` leaves out
single samples by a predicate. Samples that cannot be expressed in minigrad at all (a bfloat16 tensor, a
``torch.Generator``, a sparse layout) are not counted either; the coverage report lists them.
"""
import numpy as np
import pytest

from . import oracle
from .opinfo_harness import cases, op_id, run_case
from .oracle import RecordedTensor

LIVE = oracle.live_torch() is not None
if LIVE:
    pytest.importorskip("expecttest", reason="expecttest not installed: PyTorch's OpInfo database imports it")

# --------------------------------------------------------------------------- the reviewed lists
# (op id, variant) or (op id, variant, kind): the whole case fails for the reason given (strict xfail).
SKIPS = {
    ("zero_", "function"): "minigrad has Tensor.zero_ but no function minigrad.zero_ (in-place variants: the "
                           "elementwise work)",
    ("resize_as_", "function"): "minigrad has Tensor.resize_as_ but no function minigrad.resize_as_ (as zero_)",
}


# op id: (rtol, atol) of the full pass where an op's float64 values legitimately differ more than 1e-7 (gradients:
# at least 1e-6), each with its reason in a comment. Empty: every op agrees to 1e-7.
TOLERANCES = {
}

# op id: why its outputs are compared as the OpInfo's output_process_fn_grad leaves them (for the gradients PyTorch
# compares them so too): outputs that are unique only up to sign or phase.
PROCESSED = {
    "linalg.eigh": "eigenvectors are unique up to sign: compared as |Q|",
    "linalg.eig": "eigenvectors are unique up to a complex phase: compared as the OpInfo normalizes them",
}


def _integral(dtype):
    return dtype in ("uint8", "int8", "int16", "int32", "int64", "bool")


def _not_a_tensor(value):
    return not isinstance(value, RecordedTensor)      # samples are filtered as recorded (tests/opinfo_record.py)


# (a tuple of op ids, or "*" for every op; predicate(op, sample, variant, dtype); reason): single samples left out.
SAMPLE_SKIPS = [
    ("*", lambda op, s, variant, dtype: "out" in s.kwargs,
     "out= (writing into a given tensor) is not part of minigrad's API: its functions return new tensors"),
    ("*", lambda op, s, variant, dtype: op.name.startswith("__r") and _not_a_tensor(s.input),
     "Tensor.__radd__(2, 3): PyTorch's C method refuses a non-Tensor self; minigrad's is a Python function, "
     "reached only through a Tensor operand in real code"),
    (("nn.functional.avg_pool1d", "nn.functional.avg_pool2d", "nn.functional.avg_pool3d"),
     lambda op, s, variant, dtype: _integral(dtype),
     "integer average pooling (PyTorch divides the integer window sums) is not implemented: NotImplementedError"),
    (("nn.functional.interpolate.bilinear", "nn.functional.interpolate.bicubic", "nn.functional.interpolate.nearest",
      "nn.functional.interpolate.nearest-exact"), lambda op, s, variant, dtype: dtype == "uint8",
     "uint8 image interpolation (PyTorch's rounding image path) is not implemented: NotImplementedError"),
    (("nn.functional.grid_sample",), lambda op, s, variant, dtype: s.kwargs.get("mode") == "bicubic",
     "grid_sample(mode='bicubic') is not implemented: NotImplementedError names the modes there are"),
    (("nn.functional.embedding",), lambda op, s, variant, dtype: bool(s.kwargs.get("max_norm")),
     "embedding(max_norm=) renormalizes the weight in place: the nn.functional/modules work adds it"),
    (("sort", "argsort", "topk", "msort", "kthvalue", "mode", "median", "nanmedian"),
     lambda op, s, variant, dtype: _integral(dtype) and not s.kwargs.get("stable"),
     "ties in integer and bool data: the order of equal elements is unspecified unless stable=True"),
]


def sample_skip(op, variant, sample, dtype):
    """The reason ``sample`` is left out of (op, variant), or None."""
    for ops, predicate, reason in SAMPLE_SKIPS:
        if (ops == "*" or op_id(op) in ops) and predicate(op, sample, variant, dtype):
            return reason
    return None


def skip_reason(op, variant, kind):
    return SKIPS.get((op_id(op), variant, kind)) or SKIPS.get((op_id(op), variant))


# --------------------------------------------------------------------------- the test
def _param(op, variant, kind):
    reason = skip_reason(op, variant, kind)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(op, variant, kind, id=f"{op_id(op)}-{variant}-{kind}", marks=marks)


def _recorded_cases():
    """Without PyTorch: the cases recorded in tests/fixtures/test_opinfo.json.gz, as (op id, variant, kind)."""
    names = [n[len("test_opinfo["):-1] for n in oracle.recorded_tests("test_opinfo") if n.startswith("test_opinfo[")]
    return [tuple(n.rsplit("-", 2)) for n in names]


CASES = [_param(*case) for case in (cases() if LIVE else _recorded_cases())]


def _report(failures):
    lines = [f"{len(failures)} sample(s) disagree with PyTorch:"]
    for o in failures[:12]:
        sample = o.sample.sample_input if hasattr(o.sample, "sample_input") else o.sample
        lines.append(f"  [{o.dtype} #{o.index}] {o.what}: {o.message}\n      sample: {_brief(sample)}")
    return "\n".join(lines)


def _brief(sample):
    def show(v):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return f"Tensor{list(v.shape)}:{str(v.dtype).rpartition('.')[2]}"
        if isinstance(v, (list, tuple)):
            return type(v)(show(x) for x in v) if not hasattr(v, "_fields") else v
        return v
    return f"input={show(sample.input)} args={show(list(sample.args))} kwargs={ {k: show(v) for k, v in sample.kwargs.items()} }"


@pytest.mark.parametrize("op, variant, kind", CASES)
def test_opinfo(op, variant, kind):
    outcomes = run_case(op, variant, kind, sample_filter=sample_skip,
                        tolerance=TOLERANCES.get(op_id(op), (1e-7, 1e-7)), processed=op_id(op) in PROCESSED)
    failures = [o for o in outcomes if o.status == "fail"]
    assert not failures, _report(failures)
    if not LIVE and not any(o.status == "ok" for o in outcomes):
        pytest.skip("PyTorch not installed and none of the recorded samples applies: "
                    + "; ".join(sorted({o.message for o in outcomes}))[:300])
    # every sample either ran or was left out by a reviewed rule above (or, say, holds a bfloat16 tensor)
    assert any(o.status == "ok" or o.what == "skipped" for o in outcomes) or not outcomes, \
        "no sample ran: " + "; ".join(sorted({o.message for o in outcomes}))[:500]


def test_harness_catches_a_wrong_gradient():
    """The harness is not vacuous: minigrad's tan with a deliberately wrong backward (d tan = 1 + tan, not
    1 + tan^2) fails the float64 pass, and a tan that writes into its input fails the mutation check."""
    import minigrad as mg
    from minigrad.autograd.function import Function
    from . import opinfo_harness

    class WrongTan(Function):
        @staticmethod
        def forward(ctx, x):
            y = np.tan(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dout):
            (y,) = ctx.saved_tensors
            return dout * (1 + y)          # the mutant: 1 + tan x instead of 1 + tan^2 x

    def mutating_tan(x):
        out = mg.tan(x) if hasattr(mg, "tan") else mg.sin(x) / mg.cos(x)
        x.data.mul_(2)
        return out

    from .opinfo_util import opinfos
    op = opinfos("tan")[0] if LIVE else "tan"
    real = opinfo_harness.minigrad_variant
    for wrong, what in ((lambda x: WrongTan.apply(x), "gradient"), (mutating_tan, "mutation")):
        opinfo_harness.minigrad_variant = lambda op, variant, wrong=wrong: wrong
        try:
            outcomes = run_case(op, "function", "float64", limit=3)
        finally:
            opinfo_harness.minigrad_variant = real
        assert any(o.status == "fail" and o.what == what for o in outcomes), (what, outcomes)
