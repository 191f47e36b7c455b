"""gradcheck's and gradgradcheck's options, run on the same functions in minigrad and in PyTorch: each option
must pass and fail where PyTorch's does (a correct backward, a wrong one, one that ignores its upstream gradient,
a nondeterministic one, one that needs every output's gradient, a wrong or right forward-mode jvp), and the
forward-mode checks see forward AD over a backward pass (forward-over-reverse) as PyTorch computes it."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _function(lib, kind):
    """x sin(x) as a custom Function whose backward (or jvp) is right, or wrong in the way ``kind`` names."""
    class XSinX(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            slope = x.sin() + x * x.cos()
            if kind == "wrong":
                return 2 * g * slope
            if kind == "ignores upstream":           # right to within any tolerance, but not zero for g = 0
                return g * slope + 1e-30
            if kind == "nondeterministic":
                noise = np.random.default_rng().random(tuple(x.shape)) * 1e-9
                return g * (slope + lib.tensor(noise, dtype=x.dtype))
            return g * slope

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return (3 if kind == "wrong jvp" else 1) * t * (x.sin() + x * x.cos())
    return XSinX.apply


def _two_outputs(lib, kind):
    """(sin x, cos x), whose backward is right, or divides by the cosine's gradient (NaN where it is undefined)."""
    class SinCos(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            if kind == "needs every output":
                return g1 * x.cos() - g2 / g2 * g2 * x.sin()
            return g1 * x.cos() - g2 * x.sin()
    return SinCos.apply


PROGRAMS = {
    "right": lambda lib: _function(lib, "right"), "wrong": lambda lib: _function(lib, "wrong"),
    "ignores upstream": lambda lib: _function(lib, "ignores upstream"),
    "nondeterministic": lambda lib: _function(lib, "nondeterministic"),
    "wrong jvp": lambda lib: _function(lib, "wrong jvp"),
    "two outputs": lambda lib: _two_outputs(lib, "right"),
    "needs every output": lambda lib: _two_outputs(lib, "needs every output"),
    "ops": lambda lib: (lambda x: lib.nn.functional.rms_norm(x * x.sin(), (3,))),
}
OPTIONS = [{}, {"fast_mode": True}, {"nondet_tol": 1e-6}, {"check_grad_dtypes": True}, {"check_undefined_grad": False},
           {"check_forward_ad": True}, {"check_forward_ad": True, "check_backward_ad": False},
           {"check_forward_ad": True, "fast_mode": True}, {"check_batched_grad": True},
           {"check_forward_ad": True, "check_batched_forward_grad": True}]


def _outcome(lib, program, options):
    x = lib.tensor(np.random.default_rng(0).normal(size=(2, 3)), dtype=lib.float64, requires_grad=True)
    try:
        return str(lib.autograd.gradcheck(program(lib), (x,), raise_exception=False, **options))
    except (RuntimeError, NotImplementedError, AssertionError) as error:
        return type(error).__name__


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gradcheck_options_pass_and_fail_as_pytorchs(name):
    torch = torch_or_skip()
    wrong = []
    for options in OPTIONS:
        expected, actual = (_outcome(lib, PROGRAMS[name], options) for lib in (torch, mg))
        if actual != expected:
            wrong.append(f"{options}: {actual}, PyTorch {expected}")
    assert not wrong, "\n".join(wrong)


def test_the_checks_catch_what_they_are_for():
    """Without PyTorch: each broken program fails the check made for it and passes the others' defaults."""
    x = mg.tensor(np.random.default_rng(1).normal(size=(2, 3)), dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradcheck(_function(mg, "right"), (x,), check_forward_ad=True, check_batched_grad=True)
    assert not mg.autograd.gradcheck(_function(mg, "wrong"), (x,), raise_exception=False)
    with pytest.raises(mg.autograd.GradcheckError, match="not multiplied by grad_output"):
        mg.autograd.gradcheck(_function(mg, "ignores upstream"), (x,))
    with pytest.raises(mg.autograd.GradcheckError, match="not reentrant"):
        mg.autograd.gradcheck(_function(mg, "nondeterministic"), (x,))
    assert mg.autograd.gradcheck(_function(mg, "nondeterministic"), (x,), nondet_tol=1e-6)
    with pytest.raises(mg.autograd.GradcheckError, match="forward mode"):
        mg.autograd.gradcheck(_function(mg, "wrong jvp"), (x,), check_forward_ad=True, check_backward_ad=False)
    assert not mg.autograd.gradcheck(_two_outputs(mg, "needs every output"), (x,), raise_exception=False)


@pytest.mark.parametrize("options", [{}, {"check_fwd_over_rev": True}, {"check_batched_grad": True},
                                     {"check_fwd_over_rev": True, "check_rev_over_rev": False,
                                      "check_undefined_grad": False}])
@pytest.mark.parametrize("program", ["tanh product", "rms_norm", "layer_norm", "log_softmax"])
def test_gradgradcheck_options_as_pytorchs(program, options):
    torch = torch_or_skip()
    functions = {
        "tanh product": lambda lib: (lambda x, y: (x * y).tanh()),
        "rms_norm": lambda lib: (lambda x, y: lib.nn.functional.rms_norm(x, (3,), weight=y[0])),
        "layer_norm": lambda lib: (lambda x, y: lib.nn.functional.layer_norm(x, (3,), weight=y[0], bias=y[1])),
        "log_softmax": lambda lib: (lambda x, y: (x * y).log_softmax(-1)),
    }
    outcomes = []
    for lib in (torch, mg):
        rng = np.random.default_rng(2)
        args = [lib.tensor(rng.normal(size=(2, 3)), dtype=lib.float64, requires_grad=True) for _ in range(2)]
        outcomes.append(lib.autograd.gradgradcheck(functions[program](lib), args, raise_exception=False, **options))
    assert outcomes[1] == outcomes[0] is True


@pytest.mark.parametrize("op", ["sin", "tanh", "log", "sigmoid", "rms_norm", "layer_norm", "softmax"])
def test_forward_ad_over_a_backward_pass_as_pytorchs(op):
    """Inside a forward AD level, autograd.grad(create_graph=True) gives gradients carrying tangents: the
    derivative of the gradient along the tangent (forward-over-reverse)."""
    torch = torch_or_skip()
    tangents = []
    for lib in (torch, mg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = lib.tensor([0.3, 0.5, 1.2], dtype=lib.float64, requires_grad=True)
            dual = fw.make_dual(x, lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64))
            F = lib.nn.functional
            y = {"rms_norm": lambda d: F.rms_norm(d, (3,)), "layer_norm": lambda d: F.layer_norm(d, (3,)),
                 "softmax": lambda d: d.softmax(0)}.get(op, lambda d: getattr(d, op)())(dual)
            (g,) = lib.autograd.grad(y, dual, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), create_graph=True)
            tangents.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(tangents[1], tangents[0], rtol=1e-10, atol=1e-12)
