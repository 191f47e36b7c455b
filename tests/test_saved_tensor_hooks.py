"""Saved-tensor hooks (``autograd.graph.saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``), a
node's saved tensors by PyTorch's names (``grad_fn._saved_self``, ``_raw_saved_self.register_hooks``), and the grad mode
a backward runs in, against PyTorch. Gradients in float64 from random upstream gradients.

The strongest checks make the hooks *change* what the backward reads (unpack returns twice the saved tensor): the
gradients then differ from the plain ones, and must equal PyTorch's under the same hooks, which holds exactly when both
libraries saved the same tensors and the backward read what unpack returned."""
import io
import threading

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

from .mirror import torch_or_skip

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 6))
W = RNG.standard_normal(6) + 1.5
M = RNG.standard_normal((6, 3))


def _inputs(lib):
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    m = lib.tensor(M, requires_grad=True)
    return x, w, m


def _elementwise(lib, x, w, m):
    """Ops whose saved tensors are the same in both libraries (inputs or the result). No number operands: minigrad
    keeps the 2 of ``x * 2`` as a 0-d tensor, which hooks see, where PyTorch keeps a number."""
    h = (x * w).sin() + (x / w).exp() * w + x.abs().pow(w) * w.tanh()
    h = lib.softmax(h @ m, 1) + (h @ m).sigmoid()
    return h


def _norms(lib, x, w, m):
    F = lib.nn.functional
    h = F.layer_norm(x, (6,), w) + F.rms_norm(x, (6,), w)
    h = h + F.batch_norm(x, None, None, w, training=True) + F.group_norm(x.reshape(2, 2, 6), 2).reshape(4, 6)
    return (h.tanh() @ m).relu()


def _grads(lib, program, hooks=None, upstream_seed=0):
    x, w, m = _inputs(lib)
    if hooks is None:
        out = program(lib, x, w, m)
    else:
        with hooks:
            out = program(lib, x, w, m)
    upstream = np.random.default_rng(upstream_seed).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(upstream))
    return [t.grad.detach().numpy() for t in (x, w, m)]


def _doubling(lib):
    return saved_tensors_hooks if lib is mg else lib.autograd.graph.saved_tensors_hooks


@pytest.mark.parametrize("program", [_elementwise, _norms])
def test_round_trip_hooks_leave_gradients_as_pytorch(program):
    """Hooks that keep a copy of each saved tensor (in a buffer, as bytes) give PyTorch's gradients."""
    torch = torch_or_skip()

    def pack(t):
        buffer = io.BytesIO()
        np.save(buffer, t.detach().numpy())
        return buffer.getvalue()

    def unpack(data):
        return mg.from_numpy(np.load(io.BytesIO(data)))

    ours = _grads(mg, program, saved_tensors_hooks(pack, unpack))
    theirs = _grads(torch, program)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_backward_reads_what_unpack_returns_as_pytorch():
    """unpack returns twice the saved tensor: the gradients change, and equal PyTorch's under the same hooks."""
    torch = torch_or_skip()
    plain = _grads(mg, _elementwise)
    for lib in (mg, torch):
        hooks = _doubling(lib)(lambda t: t, lambda t: t * 2)
        got = _grads(lib, _elementwise, hooks)
        if lib is mg:
            ours = got
    theirs = got
    assert not np.allclose(ours[0], plain[0])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _packed(lib, program):
    """What pack receives: (shape, the index of the input it is, whether it is the result of an op) per call."""
    x, w, m = _inputs(lib)
    seen = []

    def pack(t):
        index = next((i for i, a in enumerate((x, w, m)) if t is a), None)
        seen.append((tuple(t.shape), index, t.grad_fn is not None, lib.is_grad_enabled()))
        return t

    with _doubling(lib)(pack, lambda t: t):
        program(lib, x, w, m)
    return sorted(seen, key=repr)


def test_pack_receives_the_tensors_pytorch_saves():
    """For ops that save inputs or results, pack gets the very input tensors and the results, with recording off."""
    torch = torch_or_skip()
    ours, theirs = _packed(mg, _elementwise), _packed(torch, _elementwise)
    assert ours == theirs
    assert any(index == 0 for _, index, _, _ in ours) and not any(enabled for *_, enabled in ours)


def test_norms_pack_input_statistics_and_weight():
    """A LayerNorm node packs its input, mean, rstd and weight (PyTorch's also its bias); RMSNorm's its input, rstd
    and weight: the row statistics have one number per row."""
    x, w, _ = _inputs(mg)
    shapes = []
    with saved_tensors_hooks(lambda t: shapes.append((tuple(t.shape), t is x, t is w)) or t, lambda t: t):
        mg.nn.functional.layer_norm(x, (6,), w)
        mg.nn.functional.rms_norm(x, (6,), w)
    assert shapes == [((4, 6), True, False), ((4,), False, False), ((4,), False, False), ((6,), False, True),
                      ((4, 6), True, False), ((4,), False, False), ((6,), False, True)]


def test_unpack_each_time_the_backward_reads():
    """retain_graph: each backward unpacks again, as PyTorch's (counted in both)."""
    torch = torch_or_skip()
    counts = []
    for lib in (mg, torch):
        calls = {"pack": 0, "unpack": 0}

        def pack(t):
            calls["pack"] += 1
            return t

        def unpack(t):
            calls["unpack"] += 1
            return t

        a = lib.tensor(X[0], requires_grad=True)
        b = lib.tensor(W, requires_grad=True)
        with _doubling(lib)(pack, unpack):
            y = (a * b).exp()
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        counts.append(calls)
    assert counts[0] == counts[1] == {"pack": 3, "unpack": 6}


def test_innermost_hooks_apply_and_other_threads_have_none():
    x, w, _ = _inputs(mg)
    log = []
    outer = saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
    inner = saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t)
    with outer:
        with inner:
            x * w
        x.exp()
        thread = threading.Thread(target=lambda: x.sin())
        thread.start()
        thread.join()
    x.cos()
    assert log == ["inner", "inner", "outer"]


def test_in_place_write_after_a_hooked_save_is_not_checked():
    """As in PyTorch: the hooks own the saved tensor; with a copying pack the gradient is the one of the values at
    save time (both libraries), where without hooks the backward refuses."""
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        c = lib.tensor(X[0], requires_grad=True)
        d = c * 1
        with _doubling(lib)(lambda t: t.clone(), lambda t: t):
            y = d * d
        with lib.no_grad():
            pass
        d.add_(1)
        y.backward(lib.tensor(W))
        results.append(c.grad.numpy())
        c2 = lib.tensor(X[0], requires_grad=True)
        d2 = c2 * 1
        y2 = d2 * d2
        d2.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y2.backward(lib.tensor(W))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    np.testing.assert_allclose(results[0], 2 * X[0] * W, rtol=1e-12)


def test_save_on_cpu_and_double_backward_through_hooks():
    """Gradients of gradients (create_graph) with hooks in place during both passes, as PyTorch's."""
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        x, w, m = _inputs(lib)
        hooks = save_on_cpu() if lib is mg else lib.autograd.graph.save_on_cpu()
        with hooks:
            out = (lib.nn.functional.layer_norm(x, (6,), w).tanh() @ m).sin()
            upstream = lib.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)))
            gx, = lib.autograd.grad(out, x, upstream, create_graph=True)
            (gx * lib.tensor(X)).sum().backward()
        results.append([t.grad.numpy() for t in (x, w, m)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_errors_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        hooks = _doubling(lib)
        disable = disable_saved_tensors_hooks if lib is mg else lib.autograd.graph.disable_saved_tensors_hooks
        a = lib.tensor(X[0], requires_grad=True)
        with hooks(lambda t: 1, lambda p: p):
            y = a * a
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                            "result of type int"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
            with hooks(lambda t: t.add_(1), lambda t: t):
                a.detach().clone().requires_grad_() * lib.tensor(W)
        with pytest.raises(RuntimeError, match="^no hooks now$"):
            with disable("no hooks now"):
                with hooks(lambda t: t, lambda t: t):
                    pass
        with hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="^no hooks now$"):
                with disable("no hooks now"):
                    pass
        with hooks(lambda t: t, lambda t: t):      # usable again after the block
            pass
        with pytest.raises(TypeError):
            with hooks(1, 2):
                a * a
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        with pytest.raises(RuntimeError, match="whose hooks have already been set"):
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="after it has been freed"):
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.grad_fn._saved_self


def test_raw_saved_register_hooks_as_pytorch():
    """One saved tensor's hooks: pack at once, unpack in the backward; doubling it changes one gradient as PyTorch's."""
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        a = lib.tensor(X[0], requires_grad=True)
        b = lib.tensor(W, requires_grad=True)
        y = a * b
        log = []
        y.grad_fn._raw_saved_self.register_hooks(lambda t: log.append("pack") or t,
                                                 lambda t: log.append("unpack") or t * 2)
        assert log == ["pack"]
        y.backward(lib.tensor(X[1]))
        assert log == ["pack", "unpack"]
        results.append((a.grad.numpy(), b.grad.numpy()))
    np.testing.assert_allclose(results[0][1], 2 * X[0] * X[1], rtol=1e-12)
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def _saved_names(lib, program):
    x, w, _ = _inputs(lib)
    node = program(lib, x, w).grad_fn
    names = sorted(n for n in dir(node) if n.startswith("_saved_") and not n.endswith(("sym_sizes", "sym_strides")))
    values = {}
    for name in names:
        value = getattr(node, name)
        if isinstance(value, (mg.Tensor, lib.Tensor)):
            value = (tuple(value.shape), value is x, value is w, value.detach().numpy().round(12).tolist())
        elif isinstance(value, (tuple, list)):
            value = tuple(value)
        values[name] = value
    return values


NAMED = {
    "mul": lambda lib, x, w: x * w,
    "div": lambda lib, x, w: x / w,
    "pow": lambda lib, x, w: x.abs().pow(w),
    "exp": lambda lib, x, w: x.exp(),
    "tanh": lambda lib, x, w: x.tanh(),
    "sigmoid": lambda lib, x, w: x.sigmoid(),
    "relu": lambda lib, x, w: x.relu(),
    "sin": lambda lib, x, w: x.sin(),
    "log": lambda lib, x, w: x.abs().log(),
    "mm": lambda lib, x, w: x @ w.reshape(6, 1),
    "batch_norm": lambda lib, x, w: lib.nn.functional.batch_norm(x, None, None, w, training=True, eps=1e-3),
    "layer_norm": lambda lib, x, w: lib.nn.functional.layer_norm(x, (6,), w),
}
# where minigrad keeps less or another shape than PyTorch (docs/saved_tensors.md says which)
ONLY_PYTORCH = {"_saved_bias", "_saved_running_mean", "_saved_running_var", "_saved_result1", "_saved_result2"}


@pytest.mark.parametrize("op", sorted(NAMED))
def test_saved_tensors_by_name_as_pytorch(op):
    """``_saved_<name>``: the same names, shapes, values, and the input tensor itself where PyTorch gives it."""
    torch = torch_or_skip()
    ours, theirs = _saved_names(mg, NAMED[op]), _saved_names(torch, NAMED[op])
    assert ours, op
    for name in set(theirs) - set(ours):
        assert name in ONLY_PYTORCH, name
    for name, value in ours.items():
        if op == "layer_norm" and name in ("_saved_result1", "_saved_result2"):   # (R,) here, (R, 1) in PyTorch
            np.testing.assert_allclose(np.ravel(value[3]), np.ravel(theirs[name][3]), rtol=1e-10)
            continue
        if isinstance(value, tuple) and len(value) == 4 and isinstance(value[0], tuple):
            assert value[:3] == theirs[name][:3], name
            np.testing.assert_allclose(value[3], theirs[name][3], rtol=1e-10, atol=1e-12)
        else:
            assert value == theirs[name], name


def test_unknown_saved_name_raises_attribute_error():
    x, w, _ = _inputs(mg)
    node = (x * w).grad_fn
    with pytest.raises(AttributeError, match="_saved_nothing"):
        node._saved_nothing
    with pytest.raises(AttributeError):
        node.not_an_attribute
    assert "_saved_self" in dir(node) and "_raw_saved_other" in dir(node)


def test_grad_mode_in_a_backward_as_pytorch():
    """A backward records nothing unless create_graph: hooks and a custom Function's backward see grad mode off."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        seen = []

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, dout):
                seen.append(lib.is_grad_enabled())
                x, = ctx.saved_tensors
                return 2 * x * dout

        a = lib.tensor(X[0], requires_grad=True)
        y = Square.apply(a)
        y.register_hook(lambda g: seen.append(lib.is_grad_enabled()))
        y.sum().backward(retain_graph=True)
        lib.autograd.grad(y.sum(), a, create_graph=True)
        assert seen == [False, False, True, True], lib


def test_hooked_custom_function_without_torch():
    """A custom Function's saved tensors pass through the hooks (checked without PyTorch: doubling the saved
    input doubles the gradient)."""
    class Cube(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, dout):
            x, = ctx.saved_tensors
            return 3 * x * x * dout

    a = mg.tensor(X[0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach() * 2, lambda t: t):
        y = Cube.apply(a)
    y.backward(mg.tensor(W))
    np.testing.assert_allclose(a.grad.numpy(), 12 * X[0] ** 2 * W, rtol=1e-12)


def test_allow_mutation_on_saved_tensors_as_pytorch():
    """Writes into saved tensors inside the block leave the gradients of the saved values (PyTorch's); a backward
    after the block raises PyTorch's AssertionError; the blocks do not nest."""
    torch = torch_or_skip()
    grads = []
    for lib in (mg, torch):
        allow = lib.autograd.graph.allow_mutation_on_saved_tensors
        a = lib.tensor(X[0], requires_grad=True)
        with allow():
            b = a.clone()
            y = (b * b).sin() * b.exp()
            b.mul_(10)
            y.backward(lib.tensor(W))
        grads.append(a.grad.numpy())
        with allow():
            y = a.clone().sin()
        with pytest.raises(AssertionError, match="Trying to backward outside of the 'allow_mutation_on_saved_tensors'"):
            y.sum().backward()
        with allow():
            with pytest.raises(RuntimeError, match="contexts cannot be nested"):
                with allow():
                    pass
        b = a.clone()
        y = b * b
        b.mul_(10)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):   # outside the block: refused
            y.sum().backward()
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    assert mg.autograd.graph.RemovableHandle is mg.utils.hooks.RemovableHandle
    assert mg.autograd.graph.Variable is mg.autograd.Variable
