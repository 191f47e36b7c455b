"""Running a family of OpInfos (``tests/opinfo_util.py``) the same way in several test files: each op's
function, method and in-place variants on its sample inputs, in float64 with gradients and in other dtypes
forward only, and its error inputs. A test file lists its op names with what (if anything) it cannot compare.
"""
import numpy as np
import pytest

from .mirror import torch_or_skip
from .opinfo_util import (assert_raises_like, assert_same_outputs, compare_sample, convert_sample, error_inputs,
                          opinfos, resolve, samples)

# float64 samples (and their float64 results) to 1e-7; every other dtype's float results are float32 (ints and
# bools are computed in the default float dtype), compared to 2e-5: a few float32 ulps between two libms
TOLERANCE = {"float64": 1e-7}
_SAMPLES = {}


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


def _dtypes(op):
    """The OpInfo's dtypes among float64, float32, int64, bool, the first being the one compared in full
    (float64, with gradients; int64 for integer-only ops)."""
    torch = torch_or_skip()
    return [d for d in (torch.float64, torch.int64, torch.float32, torch.bool) if d in op.supported_dtypes("cpu")]


def check_function(name, kind="function", limit=None, other_dtypes=3, gradients=True):
    """Every OpInfo named ``name``: float64 samples (with gradients) through minigrad's ``kind`` variant, and up
    to ``other_dtypes`` samples in each of float32, int64 and bool the OpInfo lists (forward only)."""
    torch = torch_or_skip()
    compared = 0
    for op in opinfos(name):
        fn = resolve(op, kind)
        assert fn is not None, f"minigrad has no {kind} variant of {name}"
        primary, *others = _dtypes(op)
        for dtype, count in [(primary, limit)] + [(d, other_dtypes) for d in others if other_dtypes]:
            tol = TOLERANCE.get(str(dtype).rpartition(".")[2], 2e-5)
            for sample in spread(op, dtype, count):
                compare_sample(op, sample, fn, rtol=tol, atol=tol,
                               gradients=gradients and dtype == torch.float64)
                compared += 1
    assert compared, f"no samples compared for {name}"


def check_inplace(name, limit=3, gradients=True):
    """The in-place variant: on a copy of each float64 sample (torch's result is the reference; an input PyTorch
    refuses to write must be refused with the same exception type), and with a history: ``x.clone().op_()``
    differentiated into x as PyTorch differentiates it."""
    torch = torch_or_skip()
    for op in opinfos(name):
        if op.inplace_variant is None:
            continue
        fn = resolve(op, "inplace")
        assert fn is not None, f"minigrad has no in-place variant of {name}"
        for sample in spread(op, _dtypes(op)[0], limit, requires_grad=False):
            if not isinstance(sample.input, torch.Tensor):
                continue
            x, args, kwargs, _ = convert_sample(sample)
            try:
                want = op.inplace_variant(sample.input.clone(), *sample.args, **sample.kwargs)
            except Exception as error:          # e.g. a broadcast result that does not fit the input
                with pytest.raises(type(error)):
                    fn(x.clone(), *args, **kwargs)
                continue
            target = x.clone()
            got = fn(target, *args, **kwargs)
            assert got is target, f"{name}_ does not return self"
            assert_same_outputs(target, want)
        if gradients and op.supports_autograd and op.supports_inplace_autograd:
            _inplace_gradient(op, fn, limit)


def _inplace_gradient(op, fn, limit):
    torch = torch_or_skip()
    import minigrad as mg
    for sample in spread(op, torch.float64, limit, requires_grad=True):
        if not isinstance(sample.input, torch.Tensor) or sample.broadcasts_input:
            continue
        x, args, kwargs, _ = convert_sample(sample)
        out_th = op.inplace_variant(sample.input.clone(), *sample.args, **sample.kwargs)
        out_mg = fn(x.clone(), *args, **kwargs)
        upstream = np.random.default_rng(1).standard_normal(tuple(out_th.shape))
        want = torch.autograd.grad(out_th, sample.input, torch.tensor(upstream))[0]
        got = mg.autograd.grad(out_mg, x, mg.tensor(upstream))[0]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7, atol=1e-7)


def check_errors(name, unreachable=()):
    """The OpInfo's error inputs raise PyTorch's exception type in minigrad; ``unreachable``: predicates on an
    ``ErrorInput`` for the ones minigrad cannot meet (each with its reason below), skipped, as are the ones the
    installed PyTorch itself accepts (stale entries of the database)."""
    for op in opinfos(name):
        fn = resolve(op)
        for error in error_inputs(op):
            if any(skip(error) for skip in unreachable) or not _raises_in_torch(op, error):
                continue
            assert_raises_like(op, error, fn)


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
    return getattr(t, "ndim", 0) > 64


def unbound_on_number(error):
    """``Tensor.__radd__(2, ...)`` called on a Python number: an unbound Python method accepts any first
    argument, PyTorch's C descriptors refuse it (not reachable through the operators)."""
    return not hasattr(error.sample_input.input, "shape")
