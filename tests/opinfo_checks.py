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

from .mirror import torch_or_skip
from .opinfo_util import (assert_raises_like, compare_sample, convert_sample, error_inputs, flat_outputs, opinfos,
                          resolve, samples)

FORWARD_DTYPES = ("float32", "int64", "bool")
RANDOM = ("uniform", "cauchy", "exponential", "geometric", "log_normal")   # OpInfos of the in-place random fills
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


def compare_meta(op, sample, fn):
    """Shapes and dtypes only: for ops whose values are uninitialized memory (``empty*``) or random draws."""
    x, args, kwargs, _ = convert_sample(sample)
    got, want = flat_outputs(fn(x, *args, **kwargs)), flat_outputs(op.op(sample.input, *sample.args, **sample.kwargs))
    assert len(got) == len(want), f"{len(got)} outputs, PyTorch gives {len(want)}"
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), f"shape {tuple(g.shape)}, PyTorch {tuple(w.shape)}"
        assert str(g.dtype).rpartition(".")[2] == str(w.dtype).rpartition(".")[2], f"dtype {g.dtype}, PyTorch {w.dtype}"


def _run(op, sample, theirs, ours, gradients, values=True):
    """One sample; None if it agrees, 'skip: reason' or the failure's text otherwise."""
    shim = types.SimpleNamespace(op=theirs, supports_autograd=op.supports_autograd)
    try:
        if values:
            compare_sample(shim, sample, ours, gradients=gradients)
        else:
            compare_meta(shim, sample, ours)
    except pytest.skip.Exception as skip:
        return f"skip: {skip}"
    except Exception as error:   # noqa: BLE001 - every failure of a sample is reported, not raised
        if "derivative for" in str(error) and "not implemented" in str(error):   # PyTorch has no gradient
            return _run(op, sample, theirs, ours, gradients=False) if gradients else str(error)
        return f"{type(error).__name__}: {str(error).strip()[:300]}"
    return None


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


def check_opinfo(name, variant=None, kinds=("function", "method", "inplace"), dtypes=FORWARD_DTYPES,
                 errors=True, limit=None, values=True):
    """Failures of OpInfo ``name`` (``variant``) in minigrad, as a list of (where, sample index, what): float64
    samples with gradients for each variant kind PyTorch has, the function's samples in ``dtypes`` forward only,
    then the error inputs.
    A variant PyTorch has and minigrad lacks is one failure. ``values=False`` compares shapes and dtypes only."""
    torch = torch_or_skip()
    failures = []
    for op in opinfos(name, variant):
        supported = op.supported_dtypes("cpu")
        for kind in kinds:
            pair = _variant(op, kind)
            if pair is None:
                continue
            theirs, ours = pair
            if ours is None:
                failures.append((kind, -1, "missing"))
                continue
            for dtype_name in ("float64",) + (tuple(dtypes) if kind == "function" else ()):   # variants: float64
                dtype = getattr(torch, dtype_name)
                if dtype not in supported:
                    continue
                grads = dtype_name == "float64" and not gradient_known_wrong(op)
                if kind == "inplace":
                    theirs_k, ours_k = _cloned(theirs), _cloned(ours)
                else:
                    theirs_k, ours_k = theirs, ours
                for i, sample in enumerate(samples(op, dtype, limit=limit,
                                                   requires_grad=None if dtype_name == "float64" else False)):
                    if kind == "inplace" and not _torch_accepts(theirs, sample):
                        continue
                    result = _run(op, sample, theirs_k, ours_k, grads, values)
                    STATS["skipped" if result and result.startswith("skip") else "compared"] += 1
                    if result is not None and not result.startswith("skip"):
                        failures.append((f"{kind} {dtype_name}", i, result))
        if errors:
            fn = resolve(op) or (resolve(op, "inplace") if "function" not in kinds else None)
            for i, error in enumerate(error_inputs(op)):
                if "out" in error.sample_input.kwargs:
                    STATS["out="] += 1          # minigrad has no out= arguments: these are counted, not run
                    continue
                if fn is None:
                    failures.append(("error", i, "missing"))
                    break
                STATS["errors"] += 1
                try:
                    assert_raises_like(op, error, fn)
                except pytest.skip.Exception:
                    pass
                except BaseException as failure:   # noqa: BLE001 - pytest.raises' Failed is a BaseException
                    failures.append(("error", i, f"{error.error_type.__name__} expected: {str(failure)[:200]}"))
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
        kinds = ("inplace",) if base in RANDOM else ("function", "method", "inplace")
        before = dict(STATS)
        failures = check_opinfo(base, variant or None, kinds=kinds, values=values)
        counts = ", ".join(f"{k} {STATS[k] - before[k]}" for k in STATS)
        print(f"{name}: {len(failures)} failures ({counts})")
        for where, i, what in failures[:8]:
            print(f"    {where} #{i}: {what}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main(sys.argv[1:])
