"""lgamma, digamma, polygamma, mvlgamma (``minigrad/ops/gamma.py``) against PyTorch's OpInfo samples, their
gradients to second order, their in-place forms, errors, and a wrong backward the checks catch."""
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.gradcheck import GradcheckError
from minigrad.ops import gamma

from .mirror import assert_double_mirror, assert_mirror, check_grad, torch_or_replay, torch_or_skip
from .opinfo_util import compare_sample, convert_sample, opinfos, samples

pytest.importorskip("scipy", reason="minigrad's gamma functions need SciPy (the 'special' extra)")
pytest.importorskip("torch", reason="PyTorch not installed: the OpInfo samples come from it")

# Each OpInfo's function as minigrad calls it (PyTorch's polygamma OpInfo passes (x, n)).
FUNCTIONS = {
    "lgamma": lambda x: mg.lgamma(x),
    "digamma": lambda x: mg.digamma(x),
    "polygamma": lambda x, n: mg.polygamma(n, x),
    "mvlgamma": lambda x, p: mg.mvlgamma(x, p),
}
METHODS = {
    "lgamma": lambda x: x.lgamma(),
    "digamma": lambda x: x.digamma(),
    "polygamma": lambda x, n: x.polygamma(n),
    "mvlgamma": lambda x, p: x.mvlgamma(p),
}
IN_PLACE = {
    "lgamma": lambda x: x.lgamma_(),
    "digamma": lambda x: x.digamma_(),
    "polygamma": lambda x, n: x.polygamma_(n),
    "mvlgamma": lambda x, p: x.mvlgamma_(p),
}
# PyTorch's trigamma and polygamma are accurate to about 5e-10 relative (measured against mpmath at 30 digits:
# trigamma(2.047386382824099) = 0.62632384662737173; SciPy 0.6263238466273717, PyTorch 0.6263238468550026), so
# the polygamma values and the gradients of digamma are compared to 1e-8; lgamma and digamma values to 1e-10.
RTOL = {"lgamma": 1e-10, "digamma": 1e-10, "polygamma": 1e-8, "mvlgamma": 1e-10}
OPS = [(name, op) for name in FUNCTIONS for op in opinfos(name)]


def _id(pair):
    name, op = pair
    return f"{name}-{op.variant_test_name}" if op.variant_test_name else name


@pytest.fixture(params=OPS, ids=[_id(p) for p in OPS])
def named_op(request):
    return request.param


def test_function_and_gradients_match_pytorch(named_op):
    name, op = named_op
    for sample in samples(op):
        compare_sample(op, sample, FUNCTIONS[name], rtol=RTOL[name], atol=RTOL[name], grad_rtol=1e-8, grad_atol=1e-8)


def test_method_matches_pytorch(named_op):
    name, op = named_op
    for sample in samples(op, limit=4):
        compare_sample(op, sample, METHODS[name], rtol=RTOL[name], atol=RTOL[name], grad_rtol=1e-8, grad_atol=1e-8)


def test_float32_values_match_pytorch(named_op):
    torch = torch_or_skip()
    name, op = named_op
    for sample in samples(op, dtype=torch.float32, requires_grad=False, limit=4):
        # near the poles at negative integers PyTorch's float32 arithmetic loses digits: 2e-5 relative measured
        compare_sample(op, sample, FUNCTIONS[name], rtol=1e-4, atol=1e-5, gradients=False)


def test_in_place_writes_the_out_of_place_values(named_op):
    """``x.lgamma_()`` etc. hold PyTorch's out-of-place result and return x itself."""
    name, op = named_op
    for sample in samples(op, requires_grad=False):
        x, args, kwargs, _ = convert_sample(sample)
        want = op.op(sample.input, *sample.args, **sample.kwargs).numpy()
        out = IN_PLACE[name](x, *args, **kwargs)
        assert out is x
        np.testing.assert_allclose(x.numpy(), want, rtol=RTOL[name], atol=RTOL[name])


def test_in_place_records_the_gradient():
    """In grad mode the in-place form differentiates as the out-of-place one (through a non-leaf)."""
    torch = torch_or_replay()
    x = np.random.default_rng(1).uniform(0.5, 4.0, (3, 4))
    tol = dict(rtol=1e-8, atol=1e-8)
    for name in ("lgamma", "digamma"):
        assert_mirror(lambda t: getattr(t * 1.0, name + "_")(), lambda t: getattr(t * 1.0, name + "_")(), x, **tol)
    assert_mirror(lambda t: (t * 1.0).polygamma_(2), lambda t: (t * 1.0).polygamma_(2), x, **tol)
    assert_mirror(lambda t: (t + 1.0).mvlgamma_(3), lambda t: (t + 1.0).mvlgamma_(3), x, **tol)
    assert torch is not None


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.lgamma(x),
    lambda lib, x: lib.digamma(x),
    lambda lib, x: lib.polygamma(1, x),
    lambda lib, x: lib.polygamma(3, x),
    lambda lib, x: lib.mvlgamma(x + 2, 4),
], ids=["lgamma", "digamma", "trigamma", "polygamma3", "mvlgamma"])
def test_second_order_gradients_match_pytorch(fn):
    torch = torch_or_replay()
    x = np.random.default_rng(2).uniform(0.3, 5.0, (2, 3))
    assert_double_mirror(lambda t: fn(mg, t), lambda t: fn(torch, t), x, rtol=1e-8, atol=1e-8)
    check_grad(lambda t: fn(mg, t), x)


def test_special_values_match_pytorch():
    """Poles and infinities: digamma(+-0) = -+inf, NaN at negative integers, lgamma(-inf) = inf."""
    torch = torch_or_skip()
    x = np.array([0.0, -0.0, -1.0, -2.5, np.inf, -np.inf, np.nan, 1e-300, 1e300])
    for name in ("lgamma", "digamma"):
        ours = getattr(mg, name)(mg.tensor(x)).numpy()
        theirs = getattr(torch, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, equal_nan=True, err_msg=name)


def test_integers_compute_in_the_default_float_dtype():
    torch = torch_or_skip()
    for name in ("lgamma", "digamma"):
        ours = getattr(mg, name)(mg.tensor([1, 2, 7]))
        theirs = getattr(torch, name)(torch.tensor([1, 2, 7]))
        assert str(ours.dtype).rpartition(".")[2] == str(theirs.dtype).rpartition(".")[2]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call, error", [
    (lambda lib, x: lib.polygamma(-1, x), RuntimeError),
    (lambda lib, x: lib.polygamma(1.5, x), TypeError),
    (lambda lib, x: lib.mvlgamma(x, 0), RuntimeError),
    (lambda lib, x: lib.mvlgamma(x, 1.5), TypeError),
    (lambda lib, x: lib.tensor([1, 2]).lgamma_(), RuntimeError),
    (lambda lib, x: x.clone().polygamma_(-2), RuntimeError),
    (lambda lib, x: x.clone().mvlgamma_(0), RuntimeError),
])
def test_errors_match_pytorch_and_change_nothing(call, error):
    torch = torch_or_skip()
    values = np.array([1.0, 2.0, 3.0])
    with pytest.raises(error):
        call(torch, torch.tensor(values))
    x = mg.tensor(values)
    with pytest.raises(error):
        call(mg, x)
    np.testing.assert_array_equal(x.numpy(), values)


@pytest.mark.parametrize("call", [
    lambda lib: lib.lgamma(lib.tensor([1 + 1j])),
    lambda lib: lib.digamma(lib.tensor([1 + 1j], dtype=lib.complex128)),
    lambda lib: lib.polygamma(1, lib.tensor([1 + 1j])),
    lambda lib: lib.polygamma(1, 2.0),
    lambda lib: lib.lgamma([1.0]),
])
def test_refusals_have_pytorchs_type_and_text(call):
    torch = torch_or_skip()
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(mg)
    assert str(ours.value) == str(theirs.value)


def test_missing_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r'pip install "minigrad\[special\]"'):
        mg.lgamma(mg.tensor([1.5]))


def test_a_wrong_backward_is_caught(monkeypatch):
    """Mutant: the backward of psi^(n) using psi^(n) itself instead of psi^(n+1). The mirror and the
    finite-difference check both reject it; the right backward passes both (above)."""
    torch = torch_or_replay()
    right = gamma.psi
    monkeypatch.setattr(gamma.Polygamma, "backward",
                        staticmethod(lambda ctx, dout: (dout._data * right(ctx.n, ctx.saved_tensors[0]), None)))
    x = np.random.default_rng(3).uniform(0.5, 3.0, (4,))
    with pytest.raises(AssertionError):
        assert_mirror(mg.digamma, torch.digamma, x)
    with pytest.raises(GradcheckError):
        check_grad(mg.lgamma, x)
