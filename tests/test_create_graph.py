"""create_graph=True: the engine records the backward pass so that gradients can be differentiated again.

What the engine itself does (the ops' graph_backward are tested per family in test_double_backward_*.py):
``.grad`` with a graph, retain_graph's default, differentiating with respect to grad_outputs, hooks,
user Functions (saved tensors joined to the graph, as PyTorch; NotDifferentiableTwice otherwise),
materialize_grads, gradgradcheck catching wrong double backwards, and memory over many steps.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, GradcheckError, gradgradcheck

from .mirror import rss_growth_kib, torch_or_skip

rng = np.random.default_rng(7)
A = rng.standard_normal(4)
B = rng.standard_normal(4)
V = rng.standard_normal(4)


def f(x, y):
    return (x * x * y.exp() / (1 + y * y)).sum()


def both():
    torch = torch_or_skip()
    return ((mg, mg.tensor(A, requires_grad=True), mg.tensor(B, requires_grad=True)),
            (torch, torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)))


def test_backward_create_graph_leaves_grad_with_a_graph_that_gives_the_hvp():
    results = []
    for lib, x, y in both():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # the reference-cycle warning both libraries give
            f(x, y).backward(create_graph=True)
        assert x.grad.requires_grad and x.grad.grad_fn is not None
        gx, gy = x.grad, y.grad
        x.grad = y.grad = None                   # as PyTorch recommends: break the parameter <-> .grad cycle
        (gx * lib.tensor(V)).sum().backward()    # d<dL/dx, v>/d(x, y): a Hessian-vector product
        results.append((gx.detach().numpy(), gy.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_backward_create_graph_warns_about_the_reference_cycle_as_pytorch():
    x = mg.tensor(A, requires_grad=True)
    with pytest.warns(UserWarning, match="reference cycle"):
        (x * x).sum().backward(create_graph=True)


def test_create_graph_retains_the_graph_by_default():
    x = mg.tensor(A, requires_grad=True)
    y = (x * x.exp()).sum()
    (g1,) = mg.autograd.grad(y, x, create_graph=True)
    (g2,) = mg.autograd.grad(y, x)               # the first call kept the graph
    np.testing.assert_allclose(g1.detach().numpy(), g2.numpy(), rtol=1e-15)
    with pytest.raises(RuntimeError, match="second time"):
        mg.autograd.grad(y, x)


def test_gradient_is_differentiable_with_respect_to_grad_outputs():
    """d<J^T u, v>/du = J v: the double-backward trick behind jvp."""
    results = []
    for lib, x, y in both():
        u = lib.tensor(V, requires_grad=True)
        out = x.exp() * y
        (gx,) = lib.autograd.grad(out, x, u, create_graph=True)
        (du,) = lib.autograd.grad((gx * lib.tensor(B)).sum(), u)
        results.append(du.numpy())
    np.testing.assert_allclose(*results, rtol=1e-13)


def test_hooks_run_on_graph_gradients_and_are_differentiated():
    results = []
    for lib, x, y in both():
        h = x * y
        h.register_hook(lambda g: g * h.detach().exp())      # a hook that scales the gradient
        x.register_hook(lambda g: g * g)                      # a leaf hook: non-linear in the gradient
        (gx,) = lib.autograd.grad((h * h).sum(), x, create_graph=True)
        (gy,) = lib.autograd.grad(gx.sum(), y)
        results.append((gx.detach().numpy(), gy.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_materialize_grads_as_pytorch():
    for lib, x, y in both():
        (_, gy) = lib.autograd.grad((x * 2).sum(), (x, y), create_graph=True, materialize_grads=True)
        assert not gy.detach().numpy().any() and tuple(gy.shape) == (4,)
        with pytest.raises(ValueError, match="allow_unused"):
            lib.autograd.grad((x * 2).sum(), (x, y), materialize_grads=True, allow_unused=False)
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            lib.autograd.grad((x * 2).sum(), (x, y))


# ----------------------------------------------------------------------------- user Functions
def _cube(lib):
    """x^3 as a user Function whose backward uses the library's ops on the saved tensor (PyTorch style)."""
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * a * a
    return Cube


def test_user_function_backward_written_with_ops_differentiates_twice_as_pytorch():
    results = []
    for lib, x, _ in both():
        cube = _cube(lib)
        (g,) = lib.autograd.grad(cube.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    np.testing.assert_allclose(results[0][1], 2 * (3 * A * A) * 6 * A, rtol=1e-13)   # d(9x^4)/dx = 36x^3


class CubeOnArrays(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a._data)
        return a._data ** 3

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g._data * 3 * a * a


def test_array_backward_gives_right_first_gradient_and_refuses_the_second():
    """PyTorch would return a first gradient without a graph here, and a later derivative through it would
    silently miss this op's second-order terms; minigrad raises, naming the op."""
    x = mg.tensor(A, requires_grad=True)
    (g,) = mg.autograd.grad(CubeOnArrays.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * A * A, rtol=1e-15)
    with pytest.raises(RuntimeError, match="CubeOnArraysBackward"):
        mg.autograd.grad(g.sum(), x)


def test_once_differentiable_as_pytorch():
    torch = torch_or_skip()
    for lib, x, _ in both():
        once = getattr(lib.autograd, "once_differentiable", None) or torch.autograd.function.once_differentiable

        class Cube(_cube(lib)):
            @staticmethod
            @once
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * 3 * a * a
        (g,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), 3 * A * A, rtol=1e-15)
        # PyTorch: "does not require grad" (its wrapper returns the gradient of a constant upstream as a constant,
        # so a second derivative through it would be silently zero); minigrad names the Function
        with pytest.raises(RuntimeError, match="once_differentiable" if lib is mg else "require grad"):
            lib.autograd.grad(g.sum(), x)
        # an upstream gradient that requires grad: PyTorch's wrapper puts an error node on the gradient (whose second
        # derivative by x then comes back None, docs/differences.md); minigrad's raises naming the Function
        (g,) = lib.autograd.grad((Cube.apply(x) ** 2).sum(), x, create_graph=True)
        assert g.requires_grad
        if lib is mg:
            with pytest.raises(RuntimeError, match="trying to differentiate twice.*CubeBackward"):
                lib.autograd.grad(g.sum(), x)


def test_a_user_backward_with_constant_gradient_has_a_zero_hessian():
    """A user's Function whose gradient does not depend on its input (3 x, and ReLU's mask times the upstream
    ones): its Hessian is zero, as in PyTorch, not an error; with an upstream that depends on x it is not."""
    try:
        import torch
        libraries = (mg, torch)
    except ImportError:     # the expected values are exact: minigrad alone is checked without PyTorch
        libraries = (mg,)
    for lib in libraries:
        class Triple(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 3

            @staticmethod
            def backward(ctx, g):
                return g * 3

        class Relu(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a.clamp(min=0)

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * (a > 0)

        flat = lib.tensor(A, requires_grad=True)
        n = len(A)
        for fn in (Triple, Relu):
            h = lib.autograd.functional.hessian(lambda v: fn.apply(v).sum(), flat)
            np.testing.assert_array_equal(h.numpy(), np.zeros((n, n)))
        h = lib.autograd.functional.hessian(lambda v: (Relu.apply(v) ** 2).sum(), flat)
        np.testing.assert_allclose(h.numpy(), np.diag(2.0 * (A.reshape(-1) > 0)), rtol=0, atol=1e-15)
        h = lib.autograd.functional.hessian(lambda v: (Triple.apply(v) ** 2).sum(), flat)
        np.testing.assert_allclose(h.numpy(), 18 * np.eye(n), rtol=1e-15)


# ----------------------------------------------------------------------------- gradgradcheck
class Square(Function):
    """x^2 with a correct backward; the tests swap in wrong graph paths."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a._data)
        return a._data ** 2

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * g._data * a

    @staticmethod
    def graph_backward(ctx, g):
        (a,) = ctx.saved_tensors
        return SquareBackward.apply(g, ctx.input_tensor(0, a))


class SquareBackward(Function):
    """dx = 2 g x as its own Function, with a hand-written double backward: d/dg = 2 x G, d/dx = 2 g G."""

    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g._data, x._data)
        return 2 * g._data * x._data

    @staticmethod
    def backward(ctx, G):
        g, x = ctx.saved_tensors
        return 2 * x * G._data, 2 * g * G._data


def test_gradgradcheck_passes_a_right_double_backward():
    x = mg.tensor(A, requires_grad=True)
    assert gradgradcheck(Square.apply, (x,))
    assert gradgradcheck(lambda t: (t * t.exp()).sum() * t, (x,))


def test_gradgradcheck_catches_a_wrong_hand_written_double_backward(monkeypatch):
    def wrong(ctx, G):
        g, x = ctx.saved_tensors
        return 2 * x * G._data, 3 * g * G._data          # 3 instead of 2 in d/dx
    monkeypatch.setattr(SquareBackward, "backward", staticmethod(wrong))
    x = mg.tensor(A, requires_grad=True)
    assert mg.gradcheck(Square.apply, (x,))                # first order does not see it
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(Square.apply, (x,))


def test_gradgradcheck_catches_a_graph_backward_that_disagrees_with_backward(monkeypatch):
    monkeypatch.setattr(Square, "graph_backward", staticmethod(lambda ctx, g: 3 * g * ctx.input_tensor(0, ctx.saved_tensors[0])))
    x = mg.tensor(A, requires_grad=True)
    assert mg.gradcheck(Square.apply, (x,))
    assert not gradgradcheck(Square.apply, (x,), raise_exception=False)


def test_third_derivative_of_a_chain_matches_the_closed_form():
    """d^3/dx^3 of x^2 e^x = e^x (x^2 + 6x + 6): three nested grads, an oracle independent of the code."""
    x = mg.tensor(A, requires_grad=True)
    y = (x * x * x.exp()).sum()
    (g1,) = mg.autograd.grad(y, x, create_graph=True)
    (g2,) = mg.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = mg.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(g3.numpy(), np.exp(A) * (A * A + 6 * A + 6), rtol=1e-13)


# ----------------------------------------------------------------------------- memory
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc")
def test_rss_stays_flat_over_many_double_backward_steps():
    """Hessian-vector-product steps with autograd.grad(create_graph=True), gc disabled: every graph the
    two backward passes build is freed by reference counting alone (no cycles)."""
    x = mg.tensor(rng.standard_normal((64, 64)), requires_grad=True)
    v = mg.tensor(rng.standard_normal((64, 64)))
    def step():
        y = (x * x.exp() / (1 + x * x)).sum()
        (g,) = mg.autograd.grad(y, x, create_graph=True)
        (hv,) = mg.autograd.grad((g * v).sum(), x)
        with mg.no_grad():
            v.copy_(hv / hv.abs().max())   # power iteration: the next direction
    growth = rss_growth_kib(step, warmup=200, steps=3000)
    assert growth < 2048, f"RSS grew by {growth} KiB over 3,000 double-backward steps"
