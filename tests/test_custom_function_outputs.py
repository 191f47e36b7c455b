"""A user's ``autograd.Function`` beyond one plain output, against PyTorch: several outputs, ``setup_context``,
``mark_non_differentiable``, ``mark_dirty`` (on a view too), ``set_materialize_grads(False)``, and saved outputs,
which a second differentiation must go through. Each Function is written once, for either library (``lib``)."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def functions(lib):
    """The same Functions, built on ``lib`` (minigrad or torch)."""

    class Exp(lib.autograd.Function):
        """exp, saving its output: its backward reads the output, so d2/dx2 goes through it."""

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            (y,) = ctx.saved_tensors
            return dy * y

    class SinCos(lib.autograd.Function):
        """Two outputs and an integer one, in the setup_context style; records what backward received."""
        received = []

        @staticmethod
        def forward(x, scale=2.0):
            return scale * x.sin(), x.cos(), (x > 0).sum()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, scale = inputs
            ctx.save_for_backward(x)
            ctx.scale = scale
            ctx.mark_non_differentiable(output[2])
            ctx.set_materialize_grads(SinCos.materialize)

        @staticmethod
        def backward(ctx, ds, dc, dcount):
            (x,) = ctx.saved_tensors
            SinCos.received.append((ds is None, dc is None, dcount is None or bool((dcount == 0).all())))
            grad = 0
            if ds is not None:
                grad = grad + ds * ctx.scale * x.cos()
            if dc is not None:
                grad = grad - dc * x.sin()
            return grad, None

    class Square_(lib.autograd.Function):
        """x <- x * x in place (``mark_dirty``)."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x.clone())
            x.mul_(x)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            return 2 * x * dy

    return Exp, SinCos, Square_


@pytest.fixture
def both():
    torch = torch_or_skip()
    return (mg, functions(mg)), (torch, functions(torch))


def _x(lib, requires_grad=True):
    return lib.tensor(np.array([0.3, -1.2, 2.0]), requires_grad=requires_grad)


def test_a_saved_output_is_differentiated_through_under_create_graph(both):
    """d2/dx2 exp(x) = exp(x): the backward reads the saved output, which depends on x."""
    results = []
    for lib, (Exp, _, _) in both:
        x = _x(lib)
        (g,) = lib.autograd.grad(Exp.apply(x), x, lib.ones(3, dtype=lib.float64), create_graph=True)
        (h,) = lib.autograd.grad(g, x, lib.tensor(np.array([1.0, 2.0, 3.0])))
        results.append(h.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    np.testing.assert_allclose(results[0], np.exp([0.3, -1.2, 2.0]) * [1, 2, 3], rtol=1e-12)


@pytest.mark.parametrize("materialize", [True, False])
def test_several_outputs_and_an_unused_one(both, materialize):
    """Only the first output reaches the loss: backward gets zeros for the others, or None with
    ``set_materialize_grads(False)``; the integer output never requires grad. All as in PyTorch."""
    seen = []
    for lib, (_, SinCos, _) in both:
        SinCos.materialize, SinCos.received = materialize, []
        x = _x(lib)
        s, c, count = SinCos.apply(x)
        assert s.requires_grad and c.requires_grad and not count.requires_grad
        (s * lib.tensor(np.array([1.0, -2.0, 0.5]))).sum().backward()
        seen.append((x.grad.detach().numpy(), SinCos.received, int(count)))
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-12)
    assert seen[0][1:] == seen[1][1:]


def test_second_order_through_several_outputs(both):
    results = []
    for lib, (_, SinCos, _) in both:
        SinCos.materialize = True
        x = _x(lib)
        s, c, _ = SinCos.apply(x, 3.0)
        (g,) = lib.autograd.grad((s * c).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g, x, lib.tensor(np.array([1.0, 0.5, -1.0])))
        results.append(h.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_mark_dirty_on_a_view_rebases_the_base(both):
    """The Function squares a slice of ``base`` in place: the result is the slice itself, and the gradient reaches
    the leaf through the base's new history, as in PyTorch."""
    results = []
    for lib, (_, _, Square_) in both:
        leaf = lib.tensor(np.array([1.0, 2.0, 3.0, 4.0]), requires_grad=True)
        base = leaf * 1.0
        view = base[1:3]
        out = Square_.apply(view)
        assert out is view
        (base * lib.tensor(np.array([1.0, 2.0, 3.0, 4.0]))).sum().backward()
        results.append((base.detach().numpy().copy(), leaf.grad.detach().numpy()))
    for got, want in zip(results[0], results[1]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_mark_dirty_on_a_leaf_that_requires_grad_raises_as_pytorch(both):
    errors = []
    for lib, (_, _, Square_) in both:
        with pytest.raises(RuntimeError) as caught:
            Square_.apply(_x(lib))
        errors.append(str(caught.value))
    assert "leaf Variable that requires grad" in errors[0] and "leaf Variable that requires grad" in errors[1]
