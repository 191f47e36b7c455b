"""minigrad.autograd.functional against torch.autograd.functional: jacobian, hessian, vjp, jvp, vhp, hvp
with tuple inputs and outputs, create_graph, strict and the strategies; results compared in float64."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import functional as F

from .mirror import torch_or_skip

rng = np.random.default_rng(0)
X = rng.standard_normal((3,))
Y = rng.standard_normal((2, 3))
V_OUT = rng.standard_normal((2, 3))


def single(lib, x):
    return (x * x * x.exp()).sum() / (1 + (x * x).sum())


def vector(lib, x):
    return (x / 2).exp() * x + x * x.sum()


def pair(lib, x, y):
    return (y * x).exp() / (1 + x * x) + x.exp()


def pair_out(lib, x, y):
    return (y * x).exp().sqrt() * y, (x * x).sum()


def scalar_pair(lib, x, y):
    return ((y * x).exp() * x).sum() + (y * y * y).sum()


def _compare(ours, theirs):
    torch = torch_or_skip()
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mg.Tensor)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-11, atol=1e-12)
        return
    assert isinstance(ours, tuple) and len(ours) == len(theirs), (type(ours), type(theirs))
    for a, b in zip(ours, theirs):
        _compare(a, b)


def _both(name, fn, arrays, *extra, **kwargs):
    torch = torch_or_skip()
    results = []
    for lib, functional in ((mg, F), (torch, torch.autograd.functional)):
        inputs = tuple(lib.tensor(a) for a in arrays)
        inputs = inputs if len(inputs) > 1 else inputs[0]
        more = [tuple(lib.tensor(e) for e in x) if isinstance(x, tuple) else lib.tensor(x) for x in extra]
        results.append(getattr(functional, name)(lambda *t: fn(lib, *t), inputs, *more, **kwargs))
    _compare(*results)
    return results


@pytest.mark.parametrize("fn,arrays", [(vector, (X,)), (pair, (X, Y)), (pair_out, (X, Y)), (single, (X,))])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_matches_pytorch(fn, arrays, strategy):
    _both("jacobian", fn, arrays, strategy=strategy, vectorize=strategy == "forward-mode")


@pytest.mark.parametrize("fn,arrays", [(single, (X,)), (scalar_pair, (X, Y))])
def test_hessian_matches_pytorch(fn, arrays):
    _both("hessian", fn, arrays)


def test_hessian_is_symmetric_and_matches_finite_differences():
    """An oracle independent of both libraries: central differences of the analytic gradient."""
    x = mg.tensor(X)
    h = F.hessian(lambda t: single(mg, t), x).numpy()
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-12)
    eps = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        gp = F.vjp(lambda t: single(mg, t), mg.tensor(X + e))[1].numpy()
        gm = F.vjp(lambda t: single(mg, t), mg.tensor(X - e))[1].numpy()
        np.testing.assert_allclose(h[i], (gp - gm) / (2 * eps), rtol=1e-6, atol=1e-7)


def test_vjp_and_jvp_match_pytorch():
    _both("vjp", vector, (X,), rng.standard_normal(3))
    _both("vjp", pair, (X, Y), V_OUT)
    _both("vjp", single, (X,))
    _both("jvp", vector, (X,), rng.standard_normal(3))
    _both("jvp", pair, (X, Y), (rng.standard_normal(3), rng.standard_normal((2, 3))))
    _both("jvp", pair_out, (X, Y), (rng.standard_normal(3), rng.standard_normal((2, 3))))


def test_hvp_and_vhp_match_pytorch():
    _both("hvp", single, (X,), rng.standard_normal(3))
    _both("vhp", single, (X,), rng.standard_normal(3))
    v = (rng.standard_normal(3), rng.standard_normal((2, 3)))
    _both("hvp", scalar_pair, (X, Y), v)
    _both("vhp", scalar_pair, (X, Y), v)


def test_create_graph_results_can_be_differentiated_again():
    torch = torch_or_skip()
    grads = []
    for lib, functional in ((mg, F), (torch, torch.autograd.functional)):
        x = lib.tensor(X, requires_grad=True)
        h = functional.hessian(lambda t: (t * t * t.exp()).sum(), x, create_graph=True)
        assert h.requires_grad
        (g,) = lib.autograd.grad((h * h).sum(), x)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-11, atol=1e-12)


def test_results_are_detached_without_create_graph():
    x = mg.tensor(X, requires_grad=True)
    j = F.jacobian(lambda t: t.exp(), x)
    assert not j.requires_grad and j.grad_fn is None
    out, g = F.vjp(lambda t: t.exp().sum(), x)
    assert not out.requires_grad and not g.requires_grad


def test_independent_outputs_give_zeros_or_strict_errors():
    torch = torch_or_skip()
    for lib, functional in ((mg, F), (torch, torch.autograd.functional)):
        x = lib.tensor(X)
        j = functional.jacobian(lambda t: lib.ones(2, dtype=lib.float64), x)
        assert tuple(j.shape) == (2, 3) and not j.numpy().any()
        with pytest.raises(RuntimeError, match="does not require gradients"):
            functional.jacobian(lambda t: lib.ones(2, dtype=lib.float64), x, strict=True)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            functional.vjp(lambda a, b: a.exp(), (x, x), lib.ones(3, dtype=lib.float64), strict=True)


@pytest.mark.parametrize("call,error,message", [
    (lambda f, x: f.vjp(lambda t: t * 2, x), RuntimeError, "can only be None"),
    (lambda f, x: f.vjp(lambda t: t * 2, x, x[:2]), RuntimeError, "invalid size"),
    (lambda f, x: f.hessian(lambda t: t * 2, x), RuntimeError, "single element"),
    (lambda f, x: f.jacobian(lambda t: t * 2, x, strategy="forward-mode"), NotImplementedError, "vectorize=True"),
    (lambda f, x: f.jacobian(lambda t: 3, x), TypeError, "must be either a Tensor or a tuple"),
    (lambda f, x: f.jacobian(lambda t: t, [x]), TypeError, "must be either a Tensor or a tuple"),
])
def test_bad_arguments_raise_as_pytorch(call, error, message):
    torch = torch_or_skip()
    for lib, functional in ((mg, F), (torch, torch.autograd.functional)):
        with pytest.raises(error, match=message):
            call(functional, lib.tensor(X))


def test_unknown_strategy_is_a_value_error():
    """PyTorch raises AssertionError here; minigrad raises ValueError (a bad argument, not a broken invariant)."""
    with pytest.raises(ValueError, match="forward-mode"):
        F.jacobian(lambda t: t, mg.tensor(X), strategy="sideways")


def test_grad_with_batched_grad_outputs_as_pytorch():
    """is_grads_batched: grad_outputs carry a batch dimension first; the result stacks one gradient per entry
    (a vector-Jacobian product per row), also under create_graph, as PyTorch's vmap computes them."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    x0, w0, G = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((5, 3))
    results = []
    for lib in (mg, torch):
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True)
        y = (x ** 2 * w).sum(1) * x.sin().sum(1)                          # (3,)
        gx, gw = lib.autograd.grad(y, (x, w), lib.tensor(G), is_grads_batched=True, create_graph=True)
        (second,) = lib.autograd.grad((gx ** 2).sum() + gw.sum(), x)
        results.append([t.detach().numpy() for t in (gx, gw, second)])
    assert results[0][0].shape == (5, 3, 4) and results[0][1].shape == (5, 4)
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("options", [{"materialize_grads": True}, {"allow_unused": True}])
def test_batched_grad_of_an_unused_input_as_pytorch(options):
    """An input the outputs do not depend on: None, or materialized as zeros of its own shape (PyTorch adds no
    batch dimension to those)."""
    torch = torch_or_skip()
    results = []
    for lib in (torch, mg):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        unused = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        grads = lib.autograd.grad((x * x).sum(), (x, unused), lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64),
                                  is_grads_batched=True, **options)
        results.append([None if g is None else g.numpy() for g in grads])
    for theirs, ours in zip(*results):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=0)


def test_grad_with_batched_grad_outputs_is_one_grad_per_entry():
    """Without PyTorch: each stacked entry is the plain grad of that upstream gradient."""
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    y = (x.exp() * x).sum(0)                                             # (3,)
    G = rng.standard_normal((4, 3))
    (batched,) = mg.autograd.grad(y, x, mg.tensor(G), is_grads_batched=True, retain_graph=True)
    for b in range(4):
        (one,) = mg.autograd.grad(y, x, mg.tensor(G[b]), retain_graph=True)
        np.testing.assert_allclose(batched[b].numpy(), one.numpy(), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="interpret the first dimension of each grad_output as the batch"):
        mg.autograd.grad(y, x, mg.tensor(G[:, :2]), is_grads_batched=True)
