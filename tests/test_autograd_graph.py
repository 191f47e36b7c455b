"""minigrad.autograd.graph against torch.autograd.graph: the graph as next_functions shows it (AccumulateGrad nodes
for leaves, None for inputs that need no gradient, no entry for non-tensor arguments), node pre- and post-hooks that
read and replace gradients (random upstream, float64), register_multi_grad_hook in both modes, increment_version,
get_gradient_edge."""
import re

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _program(lib):
    values = np.random.default_rng(0)
    x = lib.tensor(values.standard_normal(3), requires_grad=True)
    w = lib.tensor(values.standard_normal(3), requires_grad=True)
    c = lib.tensor(values.standard_normal(3))
    y = ((x * w).sin() + c * 2).exp().sum()
    return x, w, y


def _walk(node, leaves):
    """The graph below ``node`` as nested tuples: (name, children); a leaf's AccumulateGrad as ('leaf', index)."""
    if node is None:
        return None
    if node.name() == "torch::autograd::AccumulateGrad":
        return ("leaf", next(i for i, t in enumerate(leaves) if node.variable is t))
    name = re.sub(r"Backward\d*$", "", node.name())
    return (name, tuple(_walk(child, leaves) for child, index in node.next_functions))


def test_next_functions_as_pytorch():
    torch = torch_or_skip()
    graphs = []
    for lib in (mg, torch):
        x, w, y = _program(lib)
        graphs.append(_walk(y.grad_fn, [x, w]))
        assert all(index == 0 for _, index in y.grad_fn.next_functions)
    assert graphs[0] == graphs[1]
    assert graphs[0][0] == "Sum" and graphs[0][1][0][0] == "Exp"


def test_one_accumulate_grad_node_per_leaf():
    x, w, y = _program(mg)
    sin = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    mul = sin.next_functions[0][0]
    first, second = mul.next_functions
    assert first[0].variable is x and second[0].variable is w
    assert mg.autograd.graph.get_gradient_edge(x).node is first[0]
    assert isinstance(first[0], mg.autograd.graph.Node) and isinstance(y.grad_fn, mg.autograd.graph.Node)
    assert mg.autograd.graph.get_gradient_edge(y).node is y.grad_fn


def _hooked(lib):
    """A prehook that doubles the gradient reaching sin's node, and a post-hook on mul's node that replaces the
    gradient for w by its cube; what the hooks saw and the leaves' gradients."""
    x, w, y = _program(lib)
    sin = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    mul = sin.next_functions[0][0]
    seen = []
    sin.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))

    def post(grad_inputs, grad_outputs):
        seen.append([g.detach().numpy().copy() for g in grad_inputs] + [grad_outputs[0].detach().numpy().copy()])
        return grad_inputs[0], grad_inputs[1] ** 3
    mul.register_hook(post)
    mul.metadata["note"] = "kept"
    assert mul.metadata == {"note": "kept"}
    y.backward()
    return seen[0] + [x.grad.numpy(), w.grad.numpy()]


def test_node_hooks_read_and_replace_gradients_as_pytorch():
    torch = torch_or_skip()
    for a, b in zip(_hooked(mg), _hooked(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def _multi(lib, mode, use_both):
    values = np.random.default_rng(1)
    a = lib.tensor(values.standard_normal(2), requires_grad=True)
    b = lib.tensor(values.standard_normal(2), requires_grad=True)
    calls = []

    def record(grads):
        calls.append([None if g is None else g.numpy().copy() for g in grads] if mode == "all"
                     else grads.numpy().copy())
    lib.autograd.graph.register_multi_grad_hook((a, b), record, mode=mode)
    loss = (a * 3).sum() + ((b * b).sum() if use_both else 0)
    loss.backward()
    return calls


@pytest.mark.parametrize("use_both", [True, False])
def test_multi_grad_hook_as_pytorch(use_both):
    torch = torch_or_skip()
    ours, theirs = _multi(mg, "all", use_both), _multi(torch, "all", use_both)
    assert len(ours) == len(theirs) == 1
    for a, b in zip(ours[0], theirs[0]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)
    ours, theirs = _multi(mg, "any", use_both), _multi(torch, "any", use_both)
    assert len(ours) == len(theirs) == 1


def _multi_timing(lib, case):
    """The order of a backward's tensor hooks and of a multi-grad hook ("all") on some of the tensors: PyTorch
    calls the multi-grad hook as soon as the last gradient the pass computes has arrived, not at its end."""
    values = np.random.default_rng(2)
    x = lib.tensor(values.standard_normal(4), requires_grad=True)
    unused = lib.tensor(values.standard_normal(4), requires_grad=True)
    h1 = x * 2
    h2 = h1.exp()
    h3 = h2 * h1
    loss = (h3 * lib.tensor(values.standard_normal(4))).sum()
    events = []
    for name, t in (("x", x), ("h1", h1), ("h2", h2), ("h3", h3)):
        t.register_hook(lambda g, name=name: events.append(name))
    watched = {"chain": (h3, h1), "leaf": (h2, x), "unused": (unused, h3), "reversed": (h1, h2),
               "root": (loss, h2)}[case]      # PyTorch starts the pass at the root's node and does not count it
    lib.autograd.graph.register_multi_grad_hook(
        watched, lambda grads: events.append(("all", tuple(g is None for g in grads))))
    if case == "reversed":
        lib.autograd.grad(loss, [h2])          # h1's node is not needed: the hook waits for h2 only
    else:
        loss.backward()
    events.append("end")
    return events


@pytest.mark.parametrize("case", ["chain", "leaf", "unused", "reversed", "root"])
def test_multi_grad_hook_fires_when_its_gradients_have_arrived(case):
    torch = torch_or_skip()
    ours, theirs = _multi_timing(mg, case), _multi_timing(torch, case)
    assert ours == theirs
    fired = [i for i, e in enumerate(ours) if isinstance(e, tuple)]
    assert len(fired) == (1 if case != "root" else 2)   # (the root's gradient alone meets a count of 1: PyTorch's)
    if case in ("chain", "unused"):
        assert fired[0] < ours.index("x")     # before the pass went on to x: not at the pass's end


def test_multi_grad_hook_on_a_leaf_during_autograd_grad_refuses_as_pytorch():
    torch = torch_or_skip()
    messages = []
    for lib in (mg, torch):
        x = lib.ones(3, requires_grad=True)
        lib.autograd.graph.register_multi_grad_hook([x], print)
        with pytest.raises(RuntimeError) as caught:
            lib.autograd.grad((x * 2).sum(), [x])
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def _needs_seen_by_user_functions(lib):
    """What ``ctx.needs_input_grad`` a user's Function (one output, and two) sees in ``autograd.grad`` asked for one
    of its inputs: its forward's, in PyTorch (only minigrad's own nodes narrow it to the inputs asked for)."""
    seen = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(tuple(ctx.needs_input_grad))
            return g1 * 2, g2 * 3

    class One(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen.append(tuple(ctx.needs_input_grad))
            return g * 2, g * 3
    a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    x, y = Two.apply(a, b)
    lib.autograd.grad((x + y).sum(), [a])
    lib.autograd.grad(One.apply(a, b).sum(), [a])
    return seen


def test_user_functions_keep_their_needs_input_grad_in_autograd_grad():
    torch = torch_or_skip()
    assert _needs_seen_by_user_functions(mg) == _needs_seen_by_user_functions(torch) == [(True, True)] * 2


def test_increment_version_makes_backward_refuse():
    torch = torch_or_skip()
    for lib in (mg, torch):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()                  # exp saves its result
        lib.autograd.graph.increment_version(y)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_bad_mode_and_gradient_edge_errors():
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        mg.autograd.graph.register_multi_grad_hook([mg.ones(1, requires_grad=True)], print, mode="some")
    with pytest.raises(RuntimeError, match="does not require gradients"):
        mg.autograd.graph.get_gradient_edge(mg.ones(1))


def _square_function(lib):
    class Square(lib.autograd.Function):       # (PyTorch's second style: forward without ctx, then setup_context)
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return 2 * ctx.saved_tensors[0] * g
    return Square


def test_node_types_are_named_as_pytorch_names_them():
    torch = torch_or_skip()
    names = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = _square_function(lib).apply(x)
        names.append((type(y.grad_fn).__name__, y.grad_fn.name(), type(x.exp().grad_fn).__name__))
    assert names[0][:2] == names[1][:2] == ("SquareBackward", "SquareBackward")
    assert re.sub(r"\d+$", "", names[1][2]) == names[0][2] == "ExpBackward"   # (minigrad's have no number)


def test_a_node_whose_saved_tensors_are_hooked_keeps_its_type_name_and_unpacks():
    unpacked = []
    x = mg.tensor(np.random.default_rng(1).standard_normal(3), requires_grad=True)
    with mg.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: unpacked.append(t) or t):
        y = _square_function(mg).apply(x)
    assert type(y.grad_fn).__name__ == "SquareBackward"
    g = np.random.default_rng(2).standard_normal(3)
    y.backward(mg.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() * g, rtol=1e-15)
    assert len(unpacked) == 1
