"""Run every sample of one OpInfo through minigrad (function, method and in-place variants, several dtypes) and
every error input, collecting the failures: the shared body of ``test_ops_index_more.py``,
``test_ops_shape_more.py`` and ``test_creation_more.py``.

    failures = check_opinfo("take_along_dim")            # [] when every sample agrees with PyTorch

Run as a script it prints, for a list of names, how many samples agree and what the failures are:
``python -m tests.opinfo_checks take put index_put``.
"""
import sys
import types

import numpy as np
import pytest

from . import oracle
from .mirror import torch_or_skip
from .opinfo_record import convert_recorded, snap_sample
from .opinfo_util import (RANDOM_FILLS, check_out_of_place, error_inputs, opinfos,
                          record_out_of_place, resolve, samples, spread, within_budget)

FORWARD_DTYPES = ("float32", "int64", "bool")
STATS = {"compared": 0, "skipped": 0, "errors": 0, "out=": 0}   # what check_opinfo ran, for main()


def _variant(op, kind):
    """(PyTorch's callable, minigrad's callable) of ``kind`` ("function", "method", "inplace"); None when PyTorch
    has no such variant, minigrad's None when minigrad lacks it."""
    theirs = {"function": op.op, "method": op.method_variant, "inplace": op.inplace_variant}[kind]
    if theirs is None:
        return None
    return theirs, resolve(op, kind)


def _cloned(fn):
    """``fn`` applied to a clone of its input (an in-place op on a leaf that requires grad, differentiated)."""
    return lambda x, *args, **kwargs: fn(x.clone(), *args, **kwargs)


def gradient_known_wrong(op):
    """Whether PyTorch's OpInfo marks its own backward as failing gradcheck (``test_fn_grad`` an expected
    failure or skipped, as for ``as_strided_scatter``): then only forward values are compared, and the test
    file checks minigrad's gradient with finite differences instead."""
    return any(d.test_name == "test_fn_grad" for d in op.decorators if d.cls_name == "TestBwdGradients")


def _torch_accepts(theirs, sample):
    """Whether PyTorch itself runs ``sample`` (an in-place op refuses inputs it would have to resize)."""
    try:
        theirs(sample.input.clone(), *sample.args, **sample.kwargs)
    except Exception:   # noqa: BLE001
        return False
    return True


REPLAY = {"float64": 4}          # samples per (op, kind, dtype) kept in a fixture (a spread); other dtypes: 1


def _record_opinfo(name, variant, kinds, dtypes, errors, limit, values):
    """PyTorch's side of ``check_opinfo``: per OpInfo, per variant kind PyTorch has, whether minigrad has it too,
    and each sample's record (``opinfo_util.record_out_of_place``); then its error inputs."""
    torch = torch_or_skip()
    record = {"ops": []}
    for op in opinfos(name, variant):
        supported = op.supported_dtypes("cpu")
        entry = {"name": op.name, "kinds": {}, "errors": []}
        for kind in kinds:
            pair = _variant(op, kind)
            if pair is None:
                continue
            theirs, _ = pair
            found = entry["kinds"][kind] = []
            for dtype_name in ("float64",) + (tuple(dtypes) if kind == "function" else ()):   # variants: float64
                dtype = getattr(torch, dtype_name)
                if dtype not in supported:
                    continue
                grads = dtype_name == "float64" and not gradient_known_wrong(op)
                theirs_k = _cloned(theirs) if kind == "inplace" else theirs
                shim = types.SimpleNamespace(op=theirs_k, supports_autograd=op.supports_autograd)
                for i, sample in enumerate(samples(op, dtype, limit=limit,
                                                   requires_grad=None if dtype_name == "float64" else False)):
                    if kind == "inplace" and not _torch_accepts(theirs, sample):
                        continue
                    found.append({"dtype": dtype_name, "i": i, "grads": grads, "live": sample,
                                  "rec": record_out_of_place(shim, sample, gradients=grads, values=values)})
        if errors:
            for i, error in enumerate(error_inputs(op)):
                entry["errors"].append({"i": i, "out": "out" in error.sample_input.kwargs,
                                        "sample": snap_sample(error.sample_input),
                                        "error_type": oracle.builtin_kind_of(error.error_type),
                                        "regex": error.error_regex})
        record["ops"].append(entry)
    return record


def _thin(record):
    """The fixture's part of a record: a spread of REPLAY samples per (op, kind, dtype), without the live
    SampleInputs, the cheapest of an (op, kind)'s within the budget (``opinfo_util.within_budget``)."""
    ops = []
    for entry in record["ops"]:
        kinds = {}
        for kind, found in entry["kinds"].items():
            groups = {}
            for r in found:
                groups.setdefault(r["dtype"], []).append(r)
            kinds[kind] = within_budget([{k: v for k, v in r.items() if k != "live"}
                                         for dtype, group in groups.items() for r in spread(group, REPLAY.get(dtype, 1))])
        ops.append(dict(entry, kinds=kinds))
    return {"ops": ops}


def _check(record, ours, grads, values, live_sample):
    """One recorded sample; None if it agrees, 'skip: reason' or the failure's text otherwise."""
    try:
        check_out_of_place(record, ours, values=values, live_sample=live_sample)
    except pytest.skip.Exception as skip:
        return f"skip: {skip}"
    except Exception as error:   # noqa: BLE001 - every failure of a sample is reported, not raised
        if "derivative for" in str(error) and "not implemented" in str(error):   # PyTorch has no gradient
            return _check(dict(record, grad=None), ours, False, values, live_sample) if grads else str(error)
        return f"{type(error).__name__}: {str(error).strip()[:300]}"
    return None


def check_opinfo(name, variant=None, kinds=("function", "method", "inplace"), dtypes=FORWARD_DTYPES,
                 errors=True, limit=None, values=True):
    """Failures of OpInfo ``name`` (``variant``) in minigrad, as a list of (where, sample index, what): float64
    samples with gradients for each variant kind PyTorch has, the function's samples in ``dtypes`` forward only,
    then the error inputs.
    A variant PyTorch has and minigrad lacks is one failure. ``values=False`` compares shapes and dtypes only.
    PyTorch's side is live or recorded (``tests/oracle.py``; a replay compares a spread of the samples)."""
    record = oracle.ask(lambda torch: _record_opinfo(name, variant, kinds, dtypes, errors, limit, values),
                        inputs=(name, variant, list(kinds), list(dtypes), errors, limit, values),
                        tolerance=(1e-7, 1e-7), keep=_thin)
    failures = []
    for entry in record["ops"]:
        for kind, found in entry["kinds"].items():
            ours = resolve(entry["name"], kind)
            if ours is None:
                failures.append((kind, -1, "missing"))
                continue
            ours_k = _cloned(ours) if kind == "inplace" else ours
            for r in found:
                result = _check(r["rec"], ours_k, r["grads"], values, r.get("live"))
                STATS["skipped" if result and result.startswith("skip") else "compared"] += 1
                if result is not None and not result.startswith("skip"):
                    failures.append((f"{kind} {r['dtype']}", r["i"], result))
        if errors:
            fn = resolve(entry["name"]) or (resolve(entry["name"], "inplace") if "function" not in kinds else None)
            for r in entry["errors"]:
                if r["out"]:
                    STATS["out="] += 1          # counted, not run here: tests/test_opinfo.py runs them
                    continue
                if fn is None:
                    failures.append(("error", r["i"], "missing"))
                    break
                STATS["errors"] += 1
                error_type = oracle.RecordedError(r["error_type"]).type
                try:
                    x, args, kwargs, _ = convert_recorded(r["sample"])
                    with pytest.raises(error_type):
                        fn(x, *args, **kwargs)
                except pytest.skip.Exception:
                    pass
                except BaseException as failure:   # noqa: BLE001 - pytest.raises' Failed is a BaseException
                    failures.append(("error", r["i"], f"{error_type.__name__} expected: {str(failure)[:200]}"))
    return failures


def assert_opinfo(name, variant=None, **kwargs):
    failures = check_opinfo(name, variant, **kwargs)
    assert not failures, "\n".join(f"{where} sample {i}: {what}" for where, i, what in failures)


def main(names):
    import warnings
    warnings.filterwarnings("ignore")
    for name in names:
        base, _, variant = name.partition(":")
        values = not base.endswith("?")            # name? : shapes and dtypes only
        base = base.rstrip("?")
        kinds = ("inplace",) if base in RANDOM_FILLS else ("function", "method", "inplace")
        before = dict(STATS)
        failures = check_opinfo(base, variant or None, kinds=kinds, values=values)
        counts = ", ".join(f"{k} {STATS[k] - before[k]}" for k in STATS)
        print(f"{name}: {len(failures)} failures ({counts})")
        for where, i, what in failures[:8]:
            print(f"    {where} #{i}: {what}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main(sys.argv[1:])
