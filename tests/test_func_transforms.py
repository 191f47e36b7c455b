"""minigrad.func's derivative transforms (grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian):
values checked against hand-derived formulas (no PyTorch needed) and against torch.func on random float64
inputs, directions and cotangents: argnums, has_aux, pytree inputs and outputs, a parameter dict through
functional_call, nesting (grad(grad), jacrev(grad), closures over an outer transform's input), which results
require grad, gradients flowing on through them, and PyTorch's errors."""
import collections

import numpy as np
import pytest

import minigrad as mg
from minigrad.func._pytree import tree_flatten

from .mirror import torch_or_skip

TOL = dict(rtol=1e-10, atol=1e-12)
Pair = collections.namedtuple("Pair", "first second")


# --------------------------------------------------------------------------- helpers
def _structure(tree):
    """The containers of a pytree of either library, leaves as '*' (dict keys and named tuple fields kept)."""
    if isinstance(tree, dict):
        return {k: _structure(v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return (type(tree).__name__, tuple(_structure(v) for v in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_structure(v) for v in tree)
    return "*"


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [tree]


def assert_same(ours, theirs, requires_grad=True):
    """Same structure, values (float64 tolerance) and, with ``requires_grad``, the same requires_grad flags."""
    assert _structure(ours) == _structure(theirs)
    for i, (a, b) in enumerate(zip(_leaves(ours), _leaves(theirs))):
        assert isinstance(a, mg.Tensor), type(a)
        assert tuple(a.shape) == tuple(b.shape), (i, a.shape, b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL, err_msg=f"leaf {i}")
        if requires_grad:
            assert a.requires_grad == b.requires_grad, f"leaf {i}: requires_grad {a.requires_grad} (PyTorch's " \
                                                       f"{b.requires_grad})"


def both(compute, *arrays, requires_grad=False):
    """``compute(lib, *tensors)`` in minigrad and in PyTorch on the same float64 arrays."""
    torch = torch_or_skip()
    return [compute(lib, *[lib.tensor(a, requires_grad=requires_grad) for a in arrays]) for lib in (mg, torch)]


def assert_raises_as_pytorch(compute):
    """``compute(lib)`` raises in both libraries: the same exception type and message (PyTorch's with 'torch.'
    read as 'minigrad.')."""
    torch = torch_or_skip()
    errors = []
    for lib in (mg, torch):
        with pytest.raises(Exception) as caught:
            compute(lib)
        errors.append(caught.value)
    ours, theirs = errors
    assert type(ours) is type(theirs), (type(ours), type(theirs), str(ours))
    assert str(ours) == str(theirs).replace("torch.", "minigrad."), (str(ours), str(theirs))


# --------------------------------------------------------------------------- hand-derived (no PyTorch)
def test_grad_of_sum_sin_times_w_is_cos_times_w(rng):
    x, w = rng.standard_normal(5), rng.standard_normal(5)

    def f(x, w):
        return (x.sin() * w).sum()
    dx, dw = mg.func.grad(f, argnums=(0, 1))(mg.tensor(x), mg.tensor(w))
    np.testing.assert_allclose(dx.numpy(), np.cos(x) * w, **TOL)
    np.testing.assert_allclose(dw.numpy(), np.sin(x), **TOL)
    assert not dx.requires_grad and not dw.requires_grad            # plain inputs: constants, as PyTorch's
    g, value = mg.func.grad_and_value(f)(mg.tensor(x), mg.tensor(w))
    np.testing.assert_allclose(g.numpy(), np.cos(x) * w, **TOL)
    np.testing.assert_allclose(value.item(), np.sum(np.sin(x) * w), **TOL)


def test_higher_derivatives_by_hand(rng):
    x = rng.standard_normal(4)
    t = mg.tensor(x)

    def cubic(x):                       # f = sum x^3 + x0 x1: H = diag(6x) + (e0 e1^T + e1 e0^T)
        return (x ** 3).sum() + x[0] * x[1]
    expected = np.diag(6 * x)
    expected[0, 1] = expected[1, 0] = 1
    np.testing.assert_allclose(mg.func.hessian(cubic)(t).numpy(), expected, **TOL)
    np.testing.assert_allclose(mg.func.jacrev(mg.func.grad(cubic))(t).numpy(), expected, **TOL)
    scalar = mg.tensor(0.7, dtype=mg.float64)
    sin = mg.func.grad(mg.func.grad(mg.sin))(scalar)                 # (sin)'' = -sin, (sin)''' = -cos
    np.testing.assert_allclose(sin.item(), -np.sin(0.7), **TOL)
    np.testing.assert_allclose(mg.func.grad(mg.func.grad(mg.func.grad(mg.sin)))(scalar).item(), -np.cos(0.7), **TOL)


def test_jacobians_and_directional_derivatives_by_hand(rng):
    a, x, v = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    A = mg.tensor(a)

    def f(x):                           # J = A diag(cos x)
        return A @ x.sin()
    jacobian = a * np.cos(x)
    for transform in (mg.func.jacrev, mg.func.jacfwd):
        np.testing.assert_allclose(transform(f)(mg.tensor(x)).numpy(), jacobian, **TOL)
    out, jv = mg.func.jvp(f, (mg.tensor(x),), (mg.tensor(v),))
    np.testing.assert_allclose(out.numpy(), a @ np.sin(x), **TOL)
    np.testing.assert_allclose(jv.numpy(), jacobian @ v, **TOL)
    out, jvp_fn = mg.func.linearize(f, mg.tensor(x))
    np.testing.assert_allclose(jvp_fn(mg.tensor(v)).numpy(), jacobian @ v, **TOL)
    np.testing.assert_allclose(jvp_fn(mg.tensor(2 * v)).numpy(), 2 * jacobian @ v, **TOL)   # called again
    u = rng.standard_normal(3)
    _, vjp_fn = mg.func.vjp(f, mg.tensor(x))
    (uj,) = vjp_fn(mg.tensor(u))
    np.testing.assert_allclose(uj.numpy(), u @ jacobian, **TOL)


def test_pytree_arguments_and_argnums_by_hand(rng):
    w, b, x = rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal(3)

    def loss(params, x):                # sum(W x + b): d/dW = 1 x^T, d/db = 1, d/dx = W^T 1
        return (params["w"] @ x + params["b"]).sum()
    params = {"w": mg.tensor(w), "b": mg.tensor(b)}
    grads = mg.func.grad(loss)(params, mg.tensor(x))
    assert list(grads) == ["w", "b"]
    np.testing.assert_allclose(grads["w"].numpy(), np.outer(np.ones(2), x), **TOL)
    np.testing.assert_allclose(grads["b"].numpy(), np.ones(2), **TOL)
    grads, dx = mg.func.grad(loss, argnums=(0, -1))(params, mg.tensor(x))
    np.testing.assert_allclose(dx.numpy(), w.sum(0), **TOL)
    pair = mg.func.grad(lambda p: (p.first * p.second).sum())(Pair(mg.tensor(x), mg.tensor(2 * x)))
    assert type(pair) is Pair
    np.testing.assert_allclose(pair.first.numpy(), 2 * x, **TOL)


# --------------------------------------------------------------------------- grad against torch.func
def test_grad_argnums_tuple_and_has_aux(rng):
    x, y = rng.standard_normal(4), rng.standard_normal((3, 4))

    def f(lib, x, y):
        out = (x.sin() * (y @ x.exp()).sum()).sum() + (y ** 3).mean()
        return out, {"hidden": [y @ x], "norm": x.norm()}
    assert_same(*both(lambda lib, x, y: lib.func.grad(lambda a, b: f(lib, a, b)[0], argnums=(0, 1))(x, y), x, y))
    assert_same(*both(lambda lib, x, y: lib.func.grad(lambda a, b: f(lib, a, b), argnums=1, has_aux=True)(x, y),
                      x, y))
    assert_same(*both(lambda lib, x, y: lib.func.grad_and_value(lambda a, b: f(lib, a, b), argnums=(1, 0),
                                                                has_aux=True)(x, y), x, y))


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2)).double()


def test_grad_of_a_parameter_dict_through_functional_call(rng):
    torch = torch_or_skip()
    shapes = {"0.weight": (5, 3), "0.bias": (5,), "2.weight": (2, 5), "2.bias": (2,)}
    values = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    results = []
    for lib in (mg, torch):
        model = _mlp(lib)
        params = {name: lib.tensor(v) for name, v in values.items()}

        def loss(params, x, y):
            return ((lib.func.functional_call(model, params, (x,)) - y) ** 2).mean()
        results.append(lib.func.grad_and_value(loss)(params, lib.tensor(x), lib.tensor(y)))
    assert_same(*results)


def test_nested_grad_of_grad_and_jacrev_of_grad(rng):
    x = rng.standard_normal(4)

    def f(lib, x):
        return (x.sin() * x.sum() ** 2).sum()
    assert_same(*both(lambda lib, x: lib.func.grad(lambda a: lib.func.grad(lambda b: f(lib, b))(a).pow(2).sum())(x),
                      x))
    assert_same(*both(lambda lib, x: lib.func.jacrev(lib.func.grad(lambda b: f(lib, b)))(x), x))
    assert_same(*both(lambda lib, x: lib.func.jacfwd(lib.func.jacrev(lambda b: b.sin() * b.prod()))(x), x))
    # through the tangent of a jvp and the cotangent of a vjp: J^T 1 and J 1 again
    assert_same(*both(lambda lib, x: lib.func.grad(lambda v: lib.func.jvp(lambda b: b.exp() * b.sum(), (x,), (v,))[1]
                                                   .sin().sum())(x * 2), x))
    assert_same(*both(lambda lib, x: lib.func.grad(lambda u: lib.func.vjp(lambda b: b.exp() * b.sum(), x)[1](u)[0]
                                                   .sin().sum())(x * 2), x))


def test_grad_of_a_function_closing_over_an_outer_transforms_input(rng):
    x, c = rng.standard_normal(3), rng.standard_normal(3)

    def outer(lib, x, c):
        def inner_loss(a):              # grad(inner) at c depends on the outer x: the inner result must keep x's graph
            return lib.func.grad(lambda b: (a.exp() * b.sin()).sum())(c).pow(2).sum()
        return lib.func.grad(inner_loss)(x)
    assert_same(*both(outer, x, c))


@pytest.mark.parametrize("transform", ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                                       "linearize"])
def test_which_results_require_grad_and_gradients_through_them(rng, transform):
    """As in PyTorch: constants for plain inputs, connected to the caller's graph for inputs that require grad
    (``backward()`` through the result reaches them) and for parameters the function closes over. PyTorch's
    linearize results require grad but its backward does not reach the primals: its jvp is the reference."""
    torch = torch_or_skip()
    x, w, v, upstream_seed = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3), 7

    def run(lib, x, w, v):
        def f(a):
            return (a.sin() * w * a.sum()).sum() if transform in ("grad", "grad_and_value", "hessian") else \
                a.sin() * w * a.sum()
        F = lib.func
        return {"grad": lambda: F.grad(f)(x), "grad_and_value": lambda: F.grad_and_value(f)(x),
                "vjp": lambda: F.vjp(f, x)[1](v), "jvp": lambda: F.jvp(f, (x,), (v,)),
                "jacrev": lambda: F.jacrev(f)(x), "jacfwd": lambda: F.jacfwd(f)(x), "hessian": lambda: F.hessian(f)(x),
                "linearize": lambda: F.linearize(f, x)[1](v) if lib is mg else F.jvp(f, (x,), (v,))[1]}[transform]()
    for x_grad, w_grad in ((False, False), (True, False), (False, True)):
        results, grads = [], []
        for lib in (mg, torch):
            xs, ws = lib.tensor(x, requires_grad=x_grad), lib.tensor(w, requires_grad=w_grad)
            out = run(lib, xs, ws, lib.tensor(v))
            results.append(out)
            leaves = [leaf for leaf in _leaves(out) if leaf.requires_grad]
            if leaves:                  # a random upstream through every result that requires grad
                up = np.random.default_rng(upstream_seed)
                total = sum((leaf * lib.tensor(up.standard_normal(tuple(leaf.shape)))).sum() for leaf in leaves)
                total.backward()
                grads.append([t.grad.numpy() for t in (xs, ws) if t.requires_grad])
        assert_same(*results)
        for a, b in zip(*grads):
            np.testing.assert_allclose(a, b, **TOL)


def test_under_no_grad_results_are_constants():
    x = mg.tensor([0.5, -1.0], requires_grad=True)
    with mg.no_grad():
        g = mg.func.grad(lambda a: (a * a * a).sum())(x)
    assert not g.requires_grad
    np.testing.assert_allclose(g.numpy(), 3 * np.array([0.25, 1.0]), **TOL)


# --------------------------------------------------------------------------- vjp, jvp, linearize, Jacobians
def _multi(lib, x, y):
    """Two inputs, pytree outputs."""
    return {"p": (y @ x.sin()).exp(), "q": [x * y.sum(0), (x ** 2).sum()]}


def test_vjp_with_pytree_outputs_and_random_cotangents(rng):
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    cotangents = {"p": rng.standard_normal(2), "q": [rng.standard_normal(3), rng.standard_normal(())]}

    def run(lib, x, y):
        out, vjp_fn = lib.func.vjp(lambda a, b: _multi(lib, a, b), x, y)
        u = {"p": lib.tensor(cotangents["p"]), "q": [lib.tensor(c) for c in cotangents["q"]]}
        first, again = vjp_fn(u), vjp_fn(u)                            # the graph is kept for another call
        return out, first, again
    assert_same(*both(run, x, y))
    assert_same(*both(run, x, y, requires_grad=True))
    assert_same(*both(lambda lib, x: lib.func.vjp(lambda a: (a.exp(), a.cos()), x, has_aux=True)[2], x))


def test_jvp_and_linearize_with_random_tangents(rng):
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    vx, vy = rng.standard_normal(3), rng.standard_normal((2, 3))

    def run(lib, x, y, vx, vy):
        out, tangent = lib.func.jvp(lambda a, b: _multi(lib, a, b), (x, y), (vx, vy))
        value, jvp_fn = lib.func.linearize(lambda a, b: _multi(lib, a, b), x, y)
        out_aux = lib.func.jvp(lambda d: (d["x"].tanh() * d["y"], d["x"].exp()), ({"x": x, "y": y},),
                               ({"x": vx, "y": vy},), has_aux=True)
        return out, tangent, value, jvp_fn(vx, vy), jvp_fn(2 * vx, vy), out_aux
    assert_same(*both(run, x, y, vx, vy), requires_grad=False)


def test_jacrev_and_jacfwd_on_multi_input_multi_output_functions(rng):
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    for name in ("jacrev", "jacfwd"):
        assert_same(*both(lambda lib, x, y: getattr(lib.func, name)(lambda a, b: _multi(lib, a, b), argnums=(0, 1))(
            x, y), x, y))
        assert_same(*both(lambda lib, x, y: getattr(lib.func, name)(lambda a, b: _multi(lib, a, b), argnums=1)(x, y),
                          x, y))
        assert_same(*both(lambda lib, x, y: getattr(lib.func, name)(lambda a, b: (a.sin() * b, [b.sum()]),
                                                                     has_aux=True)(x, y), x, y))
        assert_same(*both(lambda lib, x, y: getattr(lib.func, name)(lambda d: d["a"] * d["b"].sum(0))(
            {"a": x, "b": y}), x, y))


def test_hessian_against_torch(rng):
    x, y = rng.standard_normal(4), rng.standard_normal((2, 4))

    def f(lib, x, y):
        return (x.sin() * (y @ x).exp().sum() + (x ** 4)).sum() + (y ** 3 * x).sum()
    assert_same(*both(lambda lib, x, y: lib.func.hessian(lambda a, b: f(lib, a, b))(x, y), x, y))
    assert_same(*both(lambda lib, x, y: lib.func.hessian(lambda a, b: f(lib, a, b), argnums=(0, 1))(x, y), x, y))
    assert_same(*both(lambda lib, x, y: lib.func.hessian(lambda a, b: f(lib, a, b))(x, y), x, y, requires_grad=True))


def test_the_same_as_autograd_functional(rng):
    """torch.func and the older torch.autograd.functional compute the same quantities."""
    x, v = rng.standard_normal(4), rng.standard_normal(4)

    def f(x):
        return (x.exp() * x.sum()).sin()
    t = mg.tensor(x)
    np.testing.assert_allclose(mg.func.jacrev(f)(t).numpy(), mg.autograd.functional.jacobian(f, t).numpy(), **TOL)
    np.testing.assert_allclose(mg.func.jvp(f, (t,), (mg.tensor(v),))[1].numpy(),
                               mg.autograd.functional.jvp(f, t, mg.tensor(v))[1].numpy(), **TOL)


# --------------------------------------------------------------------------- errors, as PyTorch's
def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


ERRORS = {
    "grad of a non-scalar": lambda L: L.func.grad(lambda a: a)(_ones(L, 3)),
    "grad of a float": lambda L: L.func.grad(lambda a: 3.0)(_ones(L, 3)),
    "grad of a complex scalar": lambda L: L.func.grad(lambda a: (a * 1j).sum())(_ones(L, 3)),
    "grad wrt a float": lambda L: L.func.grad(lambda a: a)(3.0),
    "argnums out of range": lambda L: L.func.grad(lambda a: a.sum(), argnums=1)(_ones(L, 3)),
    "argnums repeated": lambda L: L.func.grad(lambda a, b: a.sum(), argnums=(0, -2))(_ones(L, 3), _ones(L, 3)),
    "argnums empty": lambda L: L.func.grad(lambda a, b: a.sum(), argnums=())(_ones(L, 3), _ones(L, 3)),
    "argnums a list": lambda L: L.func.grad(lambda a, b: a.sum(), argnums=[0])(_ones(L, 3), _ones(L, 3)),
    "argnums a string": lambda L: L.func.grad(lambda a, b: a.sum(), argnums=(0, "a"))(_ones(L, 3), _ones(L, 3)),
    "has_aux without a pair": lambda L: L.func.grad(lambda a: a.sum(), has_aux=True)(_ones(L, 3)),
    "aux not tensors": lambda L: L.func.grad(lambda a: (a.sum(), [a, "s"]), has_aux=True)(_ones(L, 3)),
    "vjp cotangent structure": lambda L: L.func.vjp(lambda a: (a, {"k": a}), _ones(L, 3))[1](
        (_ones(L, 3), [_ones(L, 3)])),
    "vjp cotangent shape": lambda L: L.func.vjp(lambda a: a * 2, _ones(L, 3))[1](_ones(L, 1)),
    "vjp non-tensor output": lambda L: L.func.vjp(lambda a: (a, 3), _ones(L, 3)),
    "vjp non-tensor primal": lambda L: L.func.vjp(lambda a: a, 3.0),
    "jvp primals a list": lambda L: L.func.jvp(lambda a: a, [_ones(L, 3)], [_ones(L, 3)]),
    "jvp structures differ": lambda L: L.func.jvp(lambda a: a, ({"a": _ones(L, 3)},), ([_ones(L, 3)],)),
    "jvp lengths differ": lambda L: L.func.jvp(lambda a: a, (_ones(L, 3),), (_ones(L, 3), _ones(L, 3))),
    "jvp no primals": lambda L: L.func.jvp(lambda: _ones(L, 3), (), ()),
    "jvp tangent shape": lambda L: L.func.jvp(lambda a: a, (_ones(L, 3),), (_ones(L, 2),)),
    "jvp non-tensor tangent": lambda L: L.func.jvp(lambda a: a, (_ones(L, 3),), (3.0,)),
    "jvp integer primal": lambda L: L.func.jvp(lambda a: a, (L.arange(3),), (L.arange(3),)),
    "jvp non-tensor output": lambda L: L.func.jvp(lambda a: 3, (_ones(L, 3),), (_ones(L, 3),)),
    "jvp has_aux without a pair": lambda L: L.func.jvp(lambda a: a, (_ones(L, 3),), (_ones(L, 3),), has_aux=True),
    "linearize tangents structure": lambda L: L.func.linearize(lambda a: a.sin(), _ones(L, 3))[1](_ones(L, 3),
                                                                                                   _ones(L, 3)),
    "linearize tangent shape": lambda L: L.func.linearize(lambda a: a.sin(), _ones(L, 3))[1](_ones(L, 2)),
    "linearize tangent dtype": lambda L: L.func.linearize(lambda a: a.sin(), _ones(L, 3))[1](L.ones(3)),
    "jacrev chunk_size": lambda L: L.func.jacrev(lambda a: a, chunk_size=0),
    "jacrev non-tensor output": lambda L: L.func.jacrev(lambda a: 3)(_ones(L, 3)),
    "jacrev complex input": lambda L: L.func.jacrev(lambda a: a * a)(L.ones(3, dtype=L.complex128)),
    "jacfwd complex output": lambda L: L.func.jacfwd(lambda a: a * 1j)(_ones(L, 3)),
    "jacfwd integer input": lambda L: L.func.jacfwd(lambda a: a)(L.arange(3)),
    "jacfwd draws random numbers": lambda L: L.func.jacfwd(lambda a: a * L.rand(3, dtype=L.float64))(_ones(L, 3)),
    "jacfwd randomness": lambda L: L.func.jacfwd(lambda a: a, randomness="bad")(_ones(L, 3)),
    "jacfwd has_aux without a pair": lambda L: L.func.jacfwd(lambda a: a, has_aux=True)(_ones(L, 3)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_as_pytorch(case):
    assert_raises_as_pytorch(ERRORS[case])


def test_integer_inputs_cannot_be_differentiated():
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
            lib.func.grad(lambda a: a.sum())(lib.arange(3))
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
            lib.func.jacrev(lambda a: a)(lib.arange(3))


def test_functionalize_and_debug_unwrap_are_stand_ins(rng):
    torch = torch_or_skip()
    x = rng.standard_normal(3)

    def f(lib, a):
        b = a.clone()
        b.mul_(2).add_(1)
        return b.exp()
    ours = mg.func.functionalize(lambda a: f(mg, a))(mg.tensor(x))
    theirs = torch.func.functionalize(lambda a: f(torch, a))(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **TOL)
    t = mg.tensor(x)
    assert mg.func.debug_unwrap(t) is t
    assert_raises_as_pytorch(lambda lib: lib.func.functionalize(lambda a: a, remove="views"))


def test_the_names_of_torch_func():
    torch = torch_or_skip()
    theirs = set(torch.func.__all__) - {"rearrange"}          # functorch.einops' rearrange: not part of this work
    assert set(mg.func.__all__) == theirs
    assert mg.vmap is mg.func.vmap


@pytest.mark.parametrize("tree", [1, (1,), (1, 2), [1, [2, 3]], {"a": 1, "b": (2, 3)}, Pair(1, 2),
                                  ((1, 2), (3, {"x": 4})), (), {}, (None, 1), collections.OrderedDict(k=[1])])
def test_pytree_structures_print_as_pytorchs(tree):
    """The helper's structures print as PyTorch's do in the error messages compared above."""
    torch = torch_or_skip()
    from torch.utils import _pytree
    leaves, spec = tree_flatten(tree)
    their_leaves, their_spec = _pytree.tree_flatten(tree)
    assert leaves == their_leaves
    assert repr(spec) == repr(their_spec)
    assert mg.func._pytree.treespec_pprint(spec) == _pytree.treespec_pprint(their_spec)
    assert mg.func._pytree.tree_unflatten(leaves, spec) == tree


# --------------------------------------------------------------------------- a user's Function with its own jvp
def _scaled_function(lib):
    """A Function whose ``jvp`` is deliberately not its derivative (tangent 3 t y + x s for a forward 2 x y): the
    transforms that PyTorch computes in forward mode show which rule ran."""
    class Scaled(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, y):
            return x * 2 * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(*inputs)
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 2 * y, g * 2 * x

        @staticmethod
        def jvp(ctx, tx, ty):
            x, y = ctx.saved_tensors
            return tx * 3 * y + ty * x
    return Scaled


def _forward_mode_results(lib, x, y, t, s):
    Scaled = _scaled_function(lib)

    def f(a, b):
        return (Scaled.apply(a, b).sin() + a * b).sum(0), a.cos()
    value, tangent = lib.func.jvp(lambda a, b: f(a, b)[0], (x, y), (t, s))
    _, tangent_aux, aux = lib.func.jvp(f, (x, y), (t, s), has_aux=True)
    _, linear = lib.func.linearize(lambda a, b: f(a, b)[0], x, y)
    jacobians = lib.func.jacfwd(lambda a, b: f(a, b)[0], argnums=(0, 1))(x, y)
    reverse = lib.func.jacrev(lambda a, b: f(a, b)[0], argnums=(0, 1))(x, y)
    return value, tangent, tangent_aux, aux, linear(t, s), *jacobians, *reverse


def test_forward_mode_transforms_use_a_functions_own_jvp(rng):
    """func.jvp, linearize and jacfwd run a user's Function's ``jvp`` (PyTorch's forward mode); jacrev and vjp its
    backward. Compared with torch.func on random float64 inputs and directions (recorded)."""
    from .mirror import torch_result
    arrays = [rng.standard_normal((3, 2)) for _ in range(4)]
    ours = _forward_mode_results(mg, *(mg.tensor(a) for a in arrays))
    theirs = torch_result(lambda torch: _forward_mode_results(torch, *(torch.tensor(a) for a in arrays)), *arrays)
    assert len(ours) == len(theirs) == 9
    for i, (o, t) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(o.detach().numpy(), t.numpy(), err_msg=f"result {i}", **TOL)
    # the jvp is not the derivative: forward mode and reverse mode give different Jacobians here
    assert not np.allclose(ours[5].numpy(), ours[7].numpy())


def test_a_function_without_jvp_refuses_forward_mode_transforms():
    """PyTorch's error when a user's Function has no ``jvp`` under func.jvp; its reverse transforms still work."""
    from .mirror import torch_raises

    def call(lib):
        class Plain(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return lib.func.jvp(Plain.apply, (lib.ones(2),), (lib.ones(2),))
    theirs = torch_raises(call)
    with pytest.raises(theirs.type, match="You must implement the jvp function"):
        call(mg)
