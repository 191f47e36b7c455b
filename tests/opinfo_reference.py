"""``python -m tests.opinfo_reference [--limit N] [--ops a,b] [--kind complex128|dtypes]``: PyTorch's op database's
*reference inputs* through the float64 (or complex128, or other dtypes') pass of ``tests/test_opinfo.py`` (values,
dtypes, float64 gradients of a random upstream, inputs changed only where PyTorch changes them), for every op and
variant minigrad has whose OpInfo lists them. Needs PyTorch; a hunt for differences, like ``tests/view_fuzz.py``,
not a test (CI runs the sample inputs only).

Reference inputs are the database's larger lists: extremal values (inf, NaN, signed zeros, poles), broadcasting,
mixed dtypes, non-contiguous and self-overlapping layouts. ``--limit`` of them per op and variant (a spread over
the list; the method and in-place variants a third as many), after leaving out the samples the harness cannot
hand minigrad as PyTorch holds them: a tensor with a stride of 0 or with elements sharing memory (minigrad gets a
dense copy, which then gets a gradient PyTorch's leaf does not), a leaf that is a view of a tensor requiring grad
(PyTorch gives neither a gradient: an artefact of how the database builds some non-contiguous samples), or a tensor
of over 100,000 elements (the harness records no gradient for them). The reviewed rules of test_opinfo.py (its
skips, tolerances and sample skips) apply. Printed: how many samples agree, then each op and variant with failures
and its first three, for a person to read: differences found so far are fixed (with a regression test) or listed in
docs/differences.md.

What it reports on minigrad as it stands (limit 400, 207 s: 25,245 samples agree, 182 differ in 58 op variants), all
read:
values and gradients at the edges of a domain (NaN, infinities, poles) listed in docs/differences.md (the clamps
and shrinks, elu/celu/selu, acosh, polar, digamma and polygamma, i1/i1e, zeta, the Laguerre and Legendre
polynomials), PyTorch's airy_ai off by 3e-6 near -2.4 (listed), addcdiv with mixed float dtypes (listed),
remainder(number, tensor) and narrow_copy with a negative start differentiable where PyTorch refuses or fails
(listed), the window functions' float32 values a float32 ulp apart (tests/test_signal_windows.py compares them at
float32's tolerance; the float64 pass here asks 1e-7), and 8 cases that do not run because PyTorch's own reference
input functions of addcmul, clamp and where ask integer tensors to require grad. With ``--kind complex128`` (limit 60:
5,820 agree, 54 differ in 40 op variants): complex infinities in add/sub and some gradients, complex 0 ** 0, all
listed, and beside those kinds log2 of inf+inf i (an imaginary part a last bit apart, which the comparison cannot
tell from a mismatch next to an infinite real part) and ldexp's NaN placement at complex infinities. With
``--kind dtypes`` (float32, the integer dtypes, bfloat16 and float16; limit 6: 13,934 agree, 5 differ): the sign of
a zero from fmax/fmin of +0.0 and -0.0 (PyTorch's depends on the dtype and on where the element sits), special.i0e
in bfloat16 2 ulps from PyTorch's, and where's complex32 samples (a dtype minigrad lacks).
"""
import argparse
import itertools
import random
import time

import numpy as np
import pytest

from . import opinfo_harness, opinfo_util
from . import test_opinfo
from .oracle import live_torch

LARGE = 100_000


def _tensors(sample):
    found = [sample.input, *sample.args, *sample.kwargs.values()]
    return [t for x in found for t in (x if isinstance(x, (list, tuple)) else [x])]


def _shares_memory(t):
    """Whether two elements of the strided tensor ``t`` lie at the same place (a stride 0, or overlapping strides)."""
    offsets = np.zeros((), np.int64)
    for size, stride in zip(t.shape, t.stride()):
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * stride)
    return np.unique(offsets).size < t.numel()


def _representable(sample, torch):
    """Whether the harness hands minigrad this sample's tensors as PyTorch holds them (module docstring)."""
    for t in _tensors(sample):
        if not (isinstance(t, torch.Tensor) and t.layout == torch.strided):
            continue
        if t.numel() > LARGE or _shares_memory(t) or (t._base is not None and t._base.requires_grad):
            return False
    return True


def reference_samples(op, dtype=None, requires_grad=None, limit=None, scan=None):
    """``opinfo_util.samples`` with the op's reference inputs (the representable ones) in place of its samples."""
    torch = live_torch()
    dtype = torch.float64 if dtype is None else dtype
    if requires_grad is None:
        requires_grad = bool(op.supports_autograd) and (dtype.is_floating_point or dtype.is_complex)
    torch.manual_seed(0)
    random.seed(0)
    found = itertools.islice(op.reference_inputs("cpu", dtype, requires_grad=requires_grad, set_seed=False), 2000)
    return opinfo_util.spread([s for s in found if _representable(s, torch)], limit)


def _failing_as_assertion(run_one):
    """The harness's per-sample runner, with a ``pytest.fail`` (a BaseException) counted as a failed sample."""
    def guarded(outcomes, index, dtype, sample, body):
        def body_():
            try:
                return body()
            except pytest.fail.Exception as failed:
                raise AssertionError(f"pytest.fail: {failed}") from None
        return run_one(outcomes, index, dtype, sample, body_)
    return guarded


def _with_number_selves(reviewed):
    """The ``sample_filter`` of test_opinfo.py (``reviewed``), and a number as the first operand of a method or
    in-place variant left out (the binary ops' reference inputs hold ``add(2.5, t)``: ``Tensor.add`` cannot be called
    on 2.5 in either library, and the harness's PyTorch side raises a TypeError of its own)."""
    def sample_filter(op, variant, sample, dtype):
        if variant != "function" and sample is not None and test_opinfo._not_a_tensor(sample.input):
            return "a number as self: no method to call"
        return reviewed(op, variant, sample, dtype)
    return sample_filter


def hunt(limit, ops=None, kind="float64"):
    """{(op id, variant): [lines]} of the cases with failing samples, and the counts of samples ok and failed, in the
    pass ``kind`` ("float64", or "complex128" for the ops PyTorch computes on complex numbers too)."""
    opinfo_harness.samples = reference_samples
    opinfo_harness._run_one = _failing_as_assertion(opinfo_harness._run_one)
    failures, ok, failed = {}, 0, 0
    for op, variant, case_kind in opinfo_harness.cases():
        if case_kind != kind or op.reference_inputs_func is None or test_opinfo.skip_reason(op, variant, kind):
            continue
        if ops and opinfo_harness.op_id(op) not in ops:
            continue
        opinfo_harness._CACHE.clear()
        key = (opinfo_harness.op_id(op), variant)
        settings = test_opinfo.case_settings(op)
        settings["sample_filter"] = _with_number_selves(settings["sample_filter"])
        try:
            outcomes = opinfo_harness.run_case(op, variant, kind, limit=limit if variant == "function" else
                                               max(1, limit // 3), **settings)
        except Exception as error:    # noqa: BLE001 - PyTorch's own sample functions fail on some dtypes
            failures[key] = [f"the case did not run: {type(error).__name__}: {str(error)[:200]}"]
            continue
        bad = [o for o in outcomes if o.status == "fail"]
        ok += sum(o.status == "ok" for o in outcomes)
        failed += len(bad)
        if bad:
            failures[key] = [f"[#{o.index}] {o.what}: {o.message[:300]}" for o in bad[:3]]
            failures[key].append(f"({len(bad)} of {len(outcomes)} samples)")
    return failures, ok, failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=40, help="reference inputs per op and function variant")
    parser.add_argument("--ops", default="", help="comma-separated op ids (default: all)")
    parser.add_argument("--kind", default="float64", choices=["float64", "complex128", "dtypes"],
                        help="the pass: float64, complex128, or dtypes (float32, integers, bfloat16, float16)")
    args = parser.parse_args()
    start = time.time()
    failures, ok, failed = hunt(args.limit, set(filter(None, args.ops.split(","))), args.kind)
    print(f"{ok} samples agree, {failed} differ, in {len(failures)} op variants ({time.time() - start:.0f} s)")
    for (name, variant), lines in failures.items():
        print(f"\n{name} ({variant})")
        for line in lines:
            print("   ", line)


if __name__ == "__main__":
    main()
