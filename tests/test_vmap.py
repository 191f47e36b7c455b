"""minigrad.vmap / minigrad.func.vmap (a loop over the batch) and the ensembling helpers against torch.func and
hand-written loops: in_dims (None, int, negative, nested tuples, dicts), out_dims, nested vmap, gradients
through vmap, per-sample gradients vmap(grad(loss)), model ensembling (stack_module_state + functional_call),
replace_all_batch_norm_modules_, the randomness modes, an empty batch, and PyTorch's errors."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip
from .test_func_transforms import assert_raises_as_pytorch, assert_same, both

TOL = dict(rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- hand-checked (no PyTorch)
def test_vmap_is_the_loop_it_replaces(rng):
    xs, w, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)

    def affine(x, w, b):                  # one sample x of shape [3]
        return (x @ w + b).tanh()
    out = mg.vmap(affine, in_dims=(0, None, None))(mg.tensor(xs), mg.tensor(w), mg.tensor(b))
    np.testing.assert_allclose(out.numpy(), np.tanh(xs @ w + b), **TOL)
    out = mg.vmap(affine, in_dims=(1, None, None), out_dims=1)(mg.tensor(xs.T), mg.tensor(w), mg.tensor(b))
    np.testing.assert_allclose(out.numpy(), np.tanh(xs @ w + b).T, **TOL)
    outer = mg.vmap(mg.vmap(lambda a, c: a * c, in_dims=(None, 0)), in_dims=(0, None))
    np.testing.assert_allclose(outer(mg.tensor(xs[:, 0]), mg.tensor(b)).numpy(), np.outer(xs[:, 0], b), **TOL)


def test_what_pytorchs_vmap_rejects_works_in_a_loop(rng):
    """Data-dependent control flow and .item() run per sample here (PyTorch's vmap raises for both)."""
    xs = rng.standard_normal((6, 3))
    out = mg.vmap(lambda x: x if x.sum() > 0 else -x)(mg.tensor(xs))
    np.testing.assert_allclose(out.numpy(), np.where(xs.sum(1, keepdims=True) > 0, xs, -xs), **TOL)
    scaled = mg.vmap(lambda x: x * float(x.max().item()))(mg.tensor(xs))
    np.testing.assert_allclose(scaled.numpy(), xs * xs.max(1, keepdims=True), **TOL)


def test_per_sample_gradients_against_a_loop_of_ordinary_autograd(rng):
    """vmap(grad(loss), in_dims=(None, 0, 0)): one gradient per sample, as backward() on each sample alone."""
    model = mg.nn.Sequential(mg.nn.Linear(4, 6), mg.nn.Tanh(), mg.nn.Linear(6, 3)).double()
    params = {name: p.detach() for name, p in model.named_parameters()}
    xs, ys = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)

    def loss(params, x, y):
        logits = mg.func.functional_call(model, params, (x.unsqueeze(0),))
        return mg.nn.functional.cross_entropy(logits, y.unsqueeze(0))
    per_sample = mg.vmap(mg.func.grad(loss), in_dims=(None, 0, 0))(params, mg.tensor(xs), mg.tensor(ys))
    for i in range(5):
        model.zero_grad()
        mg.nn.functional.cross_entropy(model(mg.tensor(xs[i:i + 1])), mg.tensor(ys[i:i + 1])).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(per_sample[name][i].numpy(), p.grad.numpy(), **TOL, err_msg=name)
    assert not any(g.requires_grad for g in per_sample.values())


def test_gradients_flow_through_vmap(rng):
    xs, w, upstream = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((3, 4))
    x, wt = mg.tensor(xs, requires_grad=True), mg.tensor(w, requires_grad=True)
    out = mg.vmap(lambda r: (r * wt).sin(), out_dims=1)(x)          # out[:, i] = sin(x_i * w)
    out.backward(mg.tensor(upstream))
    cos = np.cos(xs * w)
    np.testing.assert_allclose(x.grad.numpy(), upstream.T * cos * w, **TOL)
    np.testing.assert_allclose(wt.grad.numpy(), (upstream.T * cos * xs).sum(0), **TOL)


def test_randomness_modes_by_hand():
    xs = mg.zeros(4, 3)
    mg.manual_seed(5)
    start = mg.get_rng_state()
    same = mg.vmap(lambda x: x + mg.rand(3), randomness="same")(xs)
    after_same = mg.rand(2)
    mg.set_rng_state(start)
    one_call = mg.rand(3)                              # 'same': every sample gets the draws of one call ...
    np.testing.assert_array_equal(same.numpy(), np.broadcast_to(one_call.numpy(), (4, 3)))
    np.testing.assert_array_equal(after_same.numpy(), mg.rand(2).numpy())   # ... and the generator moves on once
    mg.set_rng_state(start)
    different = mg.vmap(lambda x: x + mg.rand(3), randomness="different")(xs)
    mg.set_rng_state(start)
    np.testing.assert_array_equal(different.numpy(), np.stack([mg.rand(3).numpy() for _ in range(4)]))
    mg.set_rng_state(start)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error mode"):
        mg.vmap(lambda x: mg.nn.functional.dropout(x))(xs)
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), start.numpy())   # the draw did not count


def test_stack_module_state_by_hand(rng):
    models = [mg.nn.Sequential(mg.nn.Linear(3, 2), mg.nn.BatchNorm1d(2)).double() for _ in range(3)]
    params, buffers = mg.func.stack_module_state(models)
    assert list(params) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert list(buffers) == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    for name, stacked in params.items():
        assert stacked.is_leaf and stacked.requires_grad and stacked.shape[0] == 3
        for i, m in enumerate(models):
            own = dict(m.named_parameters())[name]
            np.testing.assert_array_equal(stacked[i].detach().numpy(), own.detach().numpy())
    models[0][0].weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected 0.weight from each model to have the same .requires_grad"):
        mg.func.stack_module_state(models)
    for m in models:
        m[0].weight.requires_grad_(False)
    params, _ = mg.func.stack_module_state(models)
    assert not params["0.weight"].requires_grad and params["0.bias"].requires_grad
    params["0.bias"].data.zero_()                                   # a copy: the models keep their own
    assert models[0][0].bias.abs().sum().item() > 0


# --------------------------------------------------------------------------- against torch.func.vmap
@pytest.mark.parametrize("in_dims", [0, -2, (1, None), (None, 0), (-1, 1)])
def test_in_dims_as_pytorch(rng, in_dims):
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))

    def f(lib, a, b):
        return lib.func.vmap(lambda x, y: (x * y.sum()).exp() + x.sin(), in_dims=in_dims)(a, b)
    assert_same(*both(f, a, b))


def test_nested_tuple_and_dict_in_dims(rng):
    x, y, w = rng.standard_normal((3, 5)), rng.standard_normal((5, 2)), rng.standard_normal(2)

    def f(lib, x, y, w):
        def g(pair, params):
            first, second = pair
            return first.sum() * second * params["w"] + params["b"]
        return lib.func.vmap(g, in_dims=((1, 0), {"w": None, "b": 0}))((x, y), {"w": w, "b": y})
    assert_same(*both(f, x, y, w))


@pytest.mark.parametrize("out_dims", [0, 1, -1, (0, 1), (None, 0)])
def test_out_dims_as_pytorch(rng, out_dims):
    xs, c = rng.standard_normal((4, 3)), rng.standard_normal(2)

    def f(lib, xs, c):
        def g(x):
            first = c.exp() if out_dims == (None, 0) else x.cos()   # out_dim None: an output not from the batch
            return first, x[:, None] * c
        if isinstance(out_dims, int):
            return lib.func.vmap(lambda x: g(x)[1], out_dims=out_dims)(xs)
        return lib.func.vmap(g, out_dims=out_dims)(xs)
    assert_same(*both(f, xs, c))


def test_pytree_outputs_keyword_arguments_and_integer_tensors(rng):
    xs, scale = rng.standard_normal((4, 3)), rng.standard_normal(3)

    def f(lib, xs, scale):
        def g(x, *, scale):
            return {"sum": x.sum(), "parts": [x * scale, (x > 0).long()]}
        return lib.func.vmap(g)(xs, scale=scale)
    ours, theirs = both(f, xs, scale)
    assert_same({"sum": ours["sum"], "p": ours["parts"][0]}, {"sum": theirs["sum"], "p": theirs["parts"][0]})
    assert str(ours["parts"][1].dtype) == str(theirs["parts"][1].dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours["parts"][1].numpy(), theirs["parts"][1].numpy())


def test_nested_vmap(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))

    def f(lib, a, b):                     # all pairwise distances, two vmaps deep
        distance = lambda x, y: ((x - y) ** 2).sum().sqrt()
        return lib.func.vmap(lib.func.vmap(distance, in_dims=(None, 0)), in_dims=(0, None))(a, b)
    assert_same(*both(f, a, b))


def test_gradients_through_vmap_as_pytorch(rng):
    torch = torch_or_skip()
    xs, w, upstream = rng.standard_normal((4, 3)), rng.standard_normal((3, 3)), rng.standard_normal((3, 4))
    grads = []
    for lib in (mg, torch):
        x, wt = lib.tensor(xs, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = lib.func.vmap(lambda r: (wt @ r.sin()).tanh() * r.sum(), out_dims=1)(x)
        out.backward(lib.tensor(upstream))
        grads.append((out.detach().numpy(), x.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, **TOL)


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 3)).double()


def test_per_sample_gradients_as_pytorch(rng):
    torch = torch_or_skip()
    weights = {"0.weight": rng.standard_normal((6, 4)), "0.bias": rng.standard_normal(6),
               "2.weight": rng.standard_normal((3, 6)), "2.bias": rng.standard_normal(3)}
    xs, ys = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)
    results = []
    for lib in (mg, torch):
        model = _mlp(lib)
        params = {name: lib.tensor(v) for name, v in weights.items()}

        def loss(params, x, y):
            logits = lib.func.functional_call(model, params, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(logits, y.unsqueeze(0))
        results.append(lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(xs),
                                                                                 lib.tensor(ys)))
    assert_same(*results)


def test_per_sample_hessian_vector_products(rng):
    """vmap over a jvp of grad (forward-over-reverse in PyTorch, reverse-over-reverse here)."""
    xs, vs = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def f(lib, xs, vs):
        g = lib.func.grad(lambda x: (x.sin() * x.sum() ** 2).sum())
        return lib.func.vmap(lambda x, v: lib.func.jvp(g, (x,), (v,))[1])(xs, vs)
    assert_same(*both(f, xs, vs))


def test_model_ensembling_as_pytorch(rng):
    """stack_module_state + vmap over functional_call: every model on its own minibatch and all on one."""
    torch = torch_or_skip()
    n = 3
    weights = [{"0.weight": rng.standard_normal((6, 4)), "0.bias": rng.standard_normal(6),
                "2.weight": rng.standard_normal((3, 6)), "2.bias": rng.standard_normal(3)} for _ in range(n)]
    own_batches, shared = rng.standard_normal((n, 2, 4)), rng.standard_normal((2, 4))
    upstream = rng.standard_normal((n, 2, 3))
    results = []
    for lib in (mg, torch):
        models = [_mlp(lib) for _ in range(n)]
        for model, values in zip(models, weights):
            for name, p in model.named_parameters():
                p.data = lib.tensor(values[name])
        params, buffers = lib.func.stack_module_state(models)
        base = _mlp(lib)

        def run(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))
        each = lib.func.vmap(run)(params, buffers, lib.tensor(own_batches))
        same = lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(shared))
        (each * lib.tensor(upstream)).sum().backward()
        results.append((each, same, {name: p.grad for name, p in params.items()}))
        if lib is mg:                     # each model alone gives the same
            for i, model in enumerate(models):
                np.testing.assert_allclose(each[i].detach().numpy(), model(lib.tensor(own_batches[i])).detach().numpy(),
                                           **TOL)
    assert_same(results[0][:2], results[1][:2], requires_grad=True)
    assert_same(results[0][2], results[1][2], requires_grad=False)


def test_replace_all_batch_norm_modules_then_vmap_over_models(rng):
    """Batch norms without running statistics, in an ensemble: each model normalizes with the statistics of the
    batch it sees, in both libraries."""
    torch = torch_or_skip()
    x, linear = rng.standard_normal((2, 5, 3)), [rng.standard_normal((3, 3)) for _ in range(2)]
    results = []
    for lib in (mg, torch):
        def build():
            return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3),
                                     lib.nn.Sequential(lib.nn.BatchNorm1d(3))).double()
        models = [build() for _ in range(2)]
        for m, w in zip(models, linear):
            assert lib.func.replace_all_batch_norm_modules_(m) is m
            for bn in (m[1], m[2][0]):
                assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
                assert not bn.track_running_stats and dict(bn.named_buffers()) == {}
            m[0].weight.data, m[0].bias.data = lib.tensor(w), lib.zeros(3, dtype=lib.float64)
        params, buffers = lib.func.stack_module_state(models)
        assert buffers == {}
        base = lib.func.replace_all_batch_norm_modules_(build())
        results.append(lib.func.vmap(lambda p, b, xb: lib.func.functional_call(base, (p, b), (xb,)))(
            params, buffers, lib.tensor(x)))
    assert_same(*results)
    np.testing.assert_allclose(results[0].detach().numpy().mean(1), 0, atol=1e-9)


def test_randomness_modes_as_pytorch():
    """The same structure of draws as PyTorch's (the streams themselves differ): 'same' rows equal, 'different'
    rows not; 'error' raises for a random op (tested with the other errors)."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        lib.manual_seed(0)
        same = lib.func.vmap(lambda x: x + lib.rand(3, dtype=lib.float64), randomness="same")(lib.zeros(4, 3,
                                                                                                     dtype=lib.float64))
        different = lib.func.vmap(lambda x: x + lib.rand(3, dtype=lib.float64), randomness="different")(
            lib.zeros(4, 3, dtype=lib.float64))
        assert all(np.array_equal(same[0].numpy(), row.numpy()) for row in same)
        assert not any(np.array_equal(different[0].numpy(), row.numpy()) for row in different[1:])


def test_an_empty_batch_as_pytorch():
    torch = torch_or_skip()
    shapes = []
    for lib in (mg, torch):
        out = lib.func.vmap(lambda x, w: (x @ w, x.sum()), in_dims=(1, None), out_dims=(1, 0))(
            lib.ones(3, 0, dtype=lib.float64), lib.ones(3, 2, dtype=lib.float64))
        shapes.append([(tuple(t.shape), str(t.dtype).replace("torch.", "")) for t in out])
    assert shapes[0] == shapes[1]


def test_what_pytorchs_vmap_rejects():
    """The documented difference: PyTorch raises for .item() and data-dependent control flow, minigrad runs them
    (test_what_pytorchs_vmap_rejects_works_in_a_loop)."""
    torch = torch_or_skip()
    for f in (lambda x: x * x.sum().item(), lambda x: x if x.sum() > 0 else -x):
        with pytest.raises(RuntimeError, match="vmap: "):
            torch.func.vmap(f)(torch.ones(2, 3))
        mg.vmap(f)(mg.ones(2, 3))


# --------------------------------------------------------------------------- errors, as PyTorch's
def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


ERRORS = {
    "batch sizes differ": lambda L: L.vmap(lambda a, b: a)(_ones(L, 2, 3), _ones(L, 3, 2)),
    "in_dim out of range": lambda L: L.vmap(lambda a: a, in_dims=2)(_ones(L, 2, 3)),
    "negative in_dim out of range": lambda L: L.vmap(lambda a: a, in_dims=(-3,))(_ones(L, 2, 3)),
    "in_dims None": lambda L: L.vmap(lambda a: a, in_dims=None)(_ones(L, 2, 3)),
    "nothing batched": lambda L: L.vmap(lambda a, b: a, in_dims=(None, None))(_ones(L, 2), _ones(L, 2)),
    "no inputs": lambda L: L.vmap(lambda: 1)(),
    "in_dims too short": lambda L: L.vmap(lambda a, b: a, in_dims=(0,))(_ones(L, 2), _ones(L, 2)),
    "in_dims a list": lambda L: L.vmap(lambda a, b: a, in_dims=[0, 0])(_ones(L, 2), _ones(L, 2)),
    "in_dim a float": lambda L: L.vmap(lambda a: a, in_dims=(1.0,))(_ones(L, 2)),
    "batching a number": lambda L: L.vmap(lambda a, b: a)(_ones(L, 2), 3),
    "batching a 0-d tensor": lambda L: L.vmap(lambda a: a)(L.tensor(1.0)),
    "dict in_dims missing a key": lambda L: L.vmap(lambda d: d["a"], in_dims=({"a": 0},))({"a": _ones(L, 2),
                                                                                           "b": _ones(L, 2)}),
    "tuple in_dims for a list": lambda L: L.vmap(lambda t: t[0], in_dims=((0, 1),))([_ones(L, 2, 3), _ones(L, 3, 2)]),
    "a number returned": lambda L: L.vmap(lambda a: (a, 3))(_ones(L, 2)),
    "None returned": lambda L: L.vmap(lambda a: None)(_ones(L, 2)),
    "out_dim out of range": lambda L: L.vmap(lambda a: a, out_dims=3)(_ones(L, 2, 3)),
    "batched output with out_dim None": lambda L: L.vmap(lambda a: a * 2, out_dims=None)(L.arange(3.0)),
    "out_dims too long": lambda L: L.vmap(lambda a: (a, a), out_dims=(0, 1, 2))(_ones(L, 2, 3)),
    "out_dims a string": lambda L: L.vmap(lambda a: a, out_dims="a")(_ones(L, 2, 3)),
    "list out_dims for a tuple": lambda L: L.vmap(lambda a: (a, a), out_dims=[0, 1])(_ones(L, 2, 3)),
    "randomness": lambda L: L.vmap(lambda a: a, randomness="foo"),
    "random draw in error mode": lambda L: L.vmap(lambda a: a * L.rand(3, dtype=L.float64))(_ones(L, 2, 3)),
    "dropout in error mode": lambda L: L.vmap(lambda a: L.nn.functional.dropout(a))(_ones(L, 2, 3)),
    "chunk_size": lambda L: L.vmap(lambda a: a, chunk_size=0),
    "stack no models": lambda L: L.func.stack_module_state([]),
    "stack training and eval": lambda L: L.func.stack_module_state([L.nn.Linear(2, 2), L.nn.Linear(2, 2).eval()]),
    "stack other classes": lambda L: L.func.stack_module_state([L.nn.Linear(2, 2),
                                                                L.nn.Sequential(L.nn.Linear(2, 2))]),
    "stack other shapes": lambda L: L.func.stack_module_state([L.nn.Linear(3, 2), L.nn.Linear(2, 2)]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_as_pytorch(case):
    assert_raises_as_pytorch(ERRORS[case])
