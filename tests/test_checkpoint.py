"""minigrad.utils.checkpoint against the same step without checkpointing (in minigrad, and torch.utils.checkpoint
in PyTorch): gradients of a random upstream in float64, for a segment's arguments, the parameters it reads, and a
tensor it captures from outside; dropout replayed; several outputs; double backward; the reentrant variant's rules;
the errors; and that a checkpointed output keeps no intermediate of its segment."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

from .mirror import torch_or_skip


def _block(lib, seed=0):
    """A residual MLP block in ``lib`` with float64 weights drawn from ``seed`` (the same in both libraries)."""
    values = np.random.default_rng(seed)
    first, second = lib.nn.Linear(4, 6).double(), lib.nn.Linear(6, 4).double()
    for layer in (first, second):
        layer.weight.data = lib.tensor(values.standard_normal(tuple(layer.weight.shape)))
        layer.bias.data = lib.tensor(values.standard_normal(tuple(layer.bias.shape)))
    return lambda h: h + second(lib.tanh(first(h))) * h, [first.weight, first.bias, second.weight, second.bias]


def _grads(tensors):
    out = [t.grad.numpy().copy() for t in tensors]
    for t in tensors:
        t.grad = None
    return out


def _step(lib, check, reentrant, rng_seed=7):
    """Two blocks, each checkpointed when ``check`` (``check(lib)`` is that library's checkpoint); the gradients
    of the input and of every parameter for a random upstream."""
    values = np.random.default_rng(rng_seed)
    block1, params1 = _block(lib, 1)
    block2, params2 = _block(lib, 2)
    x = lib.tensor(values.standard_normal((3, 4)), requires_grad=True)
    upstream = lib.tensor(values.standard_normal((3, 4)))
    h = (check(lib)(block1, x * 1.5, use_reentrant=reentrant) if check else block1(x * 1.5))
    y = (check(lib)(block2, h, use_reentrant=reentrant) if check else block2(h))
    y.backward(upstream)
    return [y.detach().numpy()] + _grads([x] + params1 + params2)


def _mg_check(lib):
    return checkpoint


def _torch_check(lib):
    import torch.utils.checkpoint
    return torch.utils.checkpoint.checkpoint


@pytest.mark.parametrize("reentrant", [False, True])
def test_gradients_are_those_of_the_plain_step(reentrant):
    plain, checked = _step(mg, None, reentrant), _step(mg, _mg_check, reentrant)
    for a, b in zip(plain, checked):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reentrant", [False, True])
def test_gradients_mirror_pytorch(reentrant):
    torch = torch_or_skip()
    ours, theirs = _step(mg, _mg_check, reentrant), _step(torch, _torch_check, reentrant)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _captured(lib, check):
    """A segment reading a parameter and a non-leaf tensor computed before it (captured by the closure), besides its
    argument; the parameter is also used outside. Gradients of x and w for a random upstream."""
    values = np.random.default_rng(3)
    x = lib.tensor(values.standard_normal((2, 3)), requires_grad=True)
    w = lib.tensor(values.standard_normal((3, 3)), requires_grad=True)
    upstream = lib.tensor(values.standard_normal((2, 3)))
    h = x @ w                                            # non-leaf, depends on w and x

    def segment(z):
        return lib.sin(z * h) @ w + h.exp()

    z = x * 2.0
    y = (check(segment, z, use_reentrant=False) if check else segment(z)) + h
    y.backward(upstream)
    return _grads([x, w])


def test_captured_tensors_receive_their_gradient_once():
    plain, checked = _captured(mg, None), _captured(mg, checkpoint)
    for a, b in zip(plain, checked):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_captured_tensors_mirror_pytorch():
    torch = torch_or_skip()
    import torch.utils.checkpoint
    for a, b in zip(_captured(mg, checkpoint), _captured(torch, torch.utils.checkpoint.checkpoint)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_autograd_grad_reaches_parameters_inside():
    block, params = _block(mg)
    values = np.random.default_rng(5)
    x = mg.tensor(values.standard_normal((3, 4)), requires_grad=True)
    upstream = mg.tensor(values.standard_normal((3, 4)))
    plain = mg.autograd.grad(block(x), [params[0], x], upstream)
    checked = mg.autograd.grad(checkpoint(block, x, use_reentrant=False), [params[0], x], upstream)
    for a, b in zip(plain, checked):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-12)
    assert all(p.grad is None for p in params)


def _dropout_step(preserve):
    mg.manual_seed(11)
    values = np.random.default_rng(4)
    x = mg.tensor(values.standard_normal((8, 16)), requires_grad=True)
    upstream = mg.tensor(values.standard_normal((8, 16)))
    segment = lambda h: mg.nn.functional.dropout(h.sin(), p=0.5) * h     # noqa: E731
    y = checkpoint(segment, x, use_reentrant=False, preserve_rng_state=preserve) if preserve is not None \
        else segment(x)
    y.backward(upstream)
    return y.detach().numpy(), x.grad.numpy(), mg.rand(3).numpy()     # (then the stream after the step)


def test_dropout_draws_the_same_mask_when_recomputed():
    (y, dx, after), (y_c, dx_c, after_c) = _dropout_step(None), _dropout_step(True)
    np.testing.assert_allclose(y_c, y, rtol=1e-12, atol=0)
    np.testing.assert_allclose(dx_c, dx, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(after_c, after)      # replayed draws: the stream goes on as without checkpoint
    _, dx_fresh, _ = _dropout_step(False)              # without replay, the recomputed mask is another one
    assert not np.allclose(dx_fresh, dx)


def _outputs(lib, check):
    values = np.random.default_rng(6)
    x = lib.tensor(values.standard_normal(5), requires_grad=True)
    u1, u2 = lib.tensor(values.standard_normal(5)), lib.tensor(values.standard_normal(5))

    def segment(t):
        return (t.sin(), 3, None, {"b": (t * t).cumsum(0), "n": t.argmax()})
    out = check(segment, x, use_reentrant=False) if check else segment(x)
    a, three, none, rest = out
    assert three == 3 and none is None and not rest["n"].requires_grad
    ((a * u1).sum() + (rest["b"] * u2).sum()).backward()
    return [a.detach().numpy(), rest["b"].detach().numpy(), x.grad.numpy()]


def test_several_outputs_in_a_structure():
    for a, b in zip(_outputs(mg, None), _outputs(mg, checkpoint)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_only_some_outputs_used():
    values = np.random.default_rng(8)
    x = mg.tensor(values.standard_normal(4), requires_grad=True)
    u = mg.tensor(values.standard_normal(4))
    a, b = checkpoint(lambda t: (t.exp(), t.cos()), x, use_reentrant=False)
    b.backward(u)
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.detach().numpy()) * u.numpy(), rtol=1e-12)


def _penalty(lib, check):
    """A gradient penalty through a checkpointed segment: d/dx of sum(v * d(segment)/dx)."""
    values = np.random.default_rng(9)
    x = lib.tensor(values.standard_normal(4), requires_grad=True)
    w = lib.tensor(values.standard_normal(4), requires_grad=True)
    u, v = lib.tensor(values.standard_normal(4)), lib.tensor(values.standard_normal(4))
    segment = lambda t: lib.tanh(t * w) * t.exp()        # noqa: E731
    y = check(segment, x, use_reentrant=False) if check else segment(x)
    (g,) = lib.autograd.grad(y, x, u, create_graph=True)
    (g * v).sum().backward()
    return _grads([x, w])


def test_double_backward_through_a_segment():
    for a, b in zip(_penalty(mg, None), _penalty(mg, checkpoint)):
        np.testing.assert_allclose(b, a, rtol=1e-11, atol=1e-12)


def test_double_backward_mirrors_pytorch():
    torch = torch_or_skip()
    import torch.utils.checkpoint
    for a, b in zip(_penalty(mg, checkpoint), _penalty(torch, torch.utils.checkpoint.checkpoint)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _nodes(t):
    """Every node reachable from ``t``'s grad_fn."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen or not hasattr(node, "next_edges"):
            continue
        seen.add(node)
        stack.extend(node.next_edges)
    return seen


def test_a_checkpointed_output_keeps_none_of_its_intermediates():
    block, params = _block(mg)
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert len(_nodes(block(x))) == 5                     # Linear, Tanh, Linear, Mul, Add
    y = checkpoint(block, x, use_reentrant=False)
    assert [n.name() for n in _nodes(y)] == ["_SegmentOutputBackward"]
    assert len(y.grad_fn.next_edges) == 3 + 1 + len(params)   # segment, index, value; then x, the 4 parameters


def _sine_chain(x, steps=10):
    """Ten ops, each saving a tensor the size of x for its backward."""
    for _ in range(steps):
        x = (x * 1.01).sin()
    return x


def _forward_memory(run):
    """(peak, held afterwards) bytes that NumPy allocated while ``run()`` ran, and its result."""
    import tracemalloc
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = run()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, held - base, out


@pytest.mark.parametrize("reentrant", [False, True])
def test_the_first_forward_frees_what_its_ops_save(reentrant):
    """As in PyTorch, a segment's intermediates are freed during its first forward as soon as the function lets go
    of them: a chain of ten ops on 2 MB holds a few MB at its peak, where the plain forward holds all ten."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((256, 1024)), requires_grad=True)   # 2 MB
    plain_peak, plain_held, _ = _forward_memory(lambda: _sine_chain(x))
    peak, held, y = _forward_memory(lambda: checkpoint(_sine_chain, x, use_reentrant=reentrant))
    assert plain_peak > 10 * x.nbytes and plain_held > 10 * x.nbytes
    assert peak < 4 * x.nbytes and held < 2 * x.nbytes
    upstream = np.random.default_rng(1).standard_normal(x.shape)
    y.backward(mg.tensor(upstream))
    (expected,) = mg.autograd.grad(_sine_chain(x), x, mg.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy(), rtol=1e-13, atol=1e-15)


def _gradient_inside(lib, x, p=0.3):
    """A segment that takes a gradient inside its own forward (a backward that reads what its ops saved)."""
    y = lib.nn.functional.dropout((x * 2).sin(), p) * x.cos()
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    return y + g * g


def test_a_backward_inside_the_first_forward_reads_a_second_run():
    """The dropped tensors come back from running the segment again (its random stream replayed, so dropout draws
    the same mask): the values and gradients are the plain function's."""
    values = np.random.default_rng(2)
    x0, upstream = values.standard_normal((3, 5)), values.standard_normal((3, 5))
    results = []
    for run in (lambda t: _gradient_inside(mg, t), lambda t: checkpoint(_gradient_inside, mg, t, use_reentrant=False)):
        mg.manual_seed(4)
        x = mg.tensor(x0, requires_grad=True)
        y = run(x)
        y.backward(mg.tensor(upstream))
        results.append((y.detach().numpy(), x.grad.numpy()))
    for plain, checked in zip(*results):
        np.testing.assert_allclose(checked, plain, rtol=1e-13, atol=1e-15)


def test_a_backward_inside_the_first_forward_mirrors_pytorch():
    torch = torch_or_skip()
    import torch.utils.checkpoint
    values = np.random.default_rng(5)
    x0, upstream = values.standard_normal((3, 5)), values.standard_normal((3, 5))
    grads = []
    for lib, check in ((mg, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        x = lib.tensor(x0, requires_grad=True)
        check(_gradient_inside, lib, x, 0.0, use_reentrant=False).backward(lib.tensor(upstream))
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12, atol=1e-14)


def test_a_backward_inside_a_segment_that_saves_less_the_second_time_is_refused():
    calls = []

    def segment(t):
        calls.append(1)
        y = t.sin().exp() if len(calls) == 1 else t * 1.0
        return mg.autograd.grad(y.sum(), t, create_graph=True)[0]
    with pytest.raises(CheckpointError, match="running the function again did not save"):
        checkpoint(segment, mg.ones(3, requires_grad=True), use_reentrant=False)


def test_where_saved_tensor_hooks_are_disabled_the_first_forward_keeps_them():
    x = mg.tensor(np.random.default_rng(3).standard_normal((64, 64)), requires_grad=True)
    with mg.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        peak, _, y = _forward_memory(lambda: checkpoint(_sine_chain, x, use_reentrant=False))
        y.sum().backward()
    assert peak > 10 * x.nbytes
    (expected,) = mg.autograd.grad(_sine_chain(x).sum(), x)
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy(), rtol=1e-13)


def test_reentrant_without_an_input_requiring_grad_gives_parameters_no_gradient():
    """PyTorch's rule for use_reentrant=True, with its warning."""
    torch = torch_or_skip()
    import torch.utils.checkpoint
    for lib, check in ((mg, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        block, params = _block(lib)
        x = lib.tensor(np.ones((2, 4)))
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = check(block, x, use_reentrant=True)
        assert not y.requires_grad
        y = check(block, x, use_reentrant=False)      # the other variant: the parameters' gradients
        y.sum().backward()
        assert all(p.grad is not None for p in params)


def test_errors_and_warnings_as_pytorch():
    torch = torch_or_skip()
    import torch.utils.checkpoint
    for lib, check in ((mg, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
            check(lambda a, b=1: a * b, x, b=2, use_reentrant=True)
        with pytest.raises(ValueError, match="`context_fn` or `debug` is only supported when use_reentrant=False"):
            check(lib.sin, x, use_reentrant=True, debug=True)
        with pytest.raises(ValueError, match="determinism_check should be one of"):
            check(lib.sin, x, use_reentrant=False, determinism_check="shapes")
        with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
            check(lib.sin, x)
        assert check(lambda a, b=1: a * b, x, b=3, use_reentrant=False).sum().item() == 6.0


def test_a_segment_that_changes_when_recomputed_is_refused():
    calls = []

    def segment(t):
        calls.append(1)
        return t.sin() if len(calls) == 1 else t[:2].sin()
    y = checkpoint(segment, mg.ones(3, requires_grad=True), use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata than during the forward pass"):
        y.sum().backward()
    assert issubclass(CheckpointError, RuntimeError)


def test_under_no_grad_the_function_just_runs():
    with mg.no_grad():
        y = checkpoint(mg.sin, mg.ones(2, requires_grad=True), use_reentrant=False)
    assert y.grad_fn is None and not y.requires_grad


def _sequential(lib, check_sequential, segments):
    values = np.random.default_rng(12)
    layers = []
    for _ in range(5):
        layer = lib.nn.Linear(3, 3).double()
        layer.weight.data = lib.tensor(values.standard_normal((3, 3)) * 0.5)
        layer.bias.data = lib.tensor(values.standard_normal(3))
        layers += [layer, lib.nn.Tanh()]
    model = lib.nn.Sequential(*layers)
    x = lib.tensor(values.standard_normal((4, 3)), requires_grad=True)
    upstream = lib.tensor(values.standard_normal((4, 3)))
    y = check_sequential(model, segments, x, use_reentrant=False) if check_sequential else model(x)
    y.backward(upstream)
    return [y.detach().numpy()] + _grads([x] + list(model.parameters()))


@pytest.mark.parametrize("segments", [1, 3, 10])
def test_checkpoint_sequential(segments):
    for a, b in zip(_sequential(mg, None, segments), _sequential(mg, checkpoint_sequential, segments)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    torch = torch_or_skip()
    import torch.utils.checkpoint
    for a, b in zip(_sequential(mg, checkpoint_sequential, segments),
                    _sequential(torch, torch.utils.checkpoint.checkpoint_sequential, segments)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_checkpoint_sequential_refuses_impossible_segment_counts():
    model = mg.nn.Sequential(mg.nn.Linear(2, 2), mg.nn.Tanh())
    for segments in (0, 3, 1.5):
        with pytest.raises(ValueError, match="segments must be an int from 1 to the number of functions"):
            checkpoint_sequential(model, segments, mg.ones(1, 2), use_reentrant=False)


def test_the_same_names_as_pytorch():
    torch = torch_or_skip()
    import torch.utils.checkpoint as theirs
    import minigrad.utils.checkpoint as ours
    for name in ("checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointPolicy", "noop_context_fn",
                 "set_checkpoint_debug_enabled", "set_checkpoint_early_stop", "create_selective_checkpoint_contexts",
                 "detach_variable", "check_backward_validity", "get_device_states", "set_device_states",
                 "DefaultDeviceType", "CheckpointFunction", "SelectiveCheckpointContext"):
        assert hasattr(theirs, name) and hasattr(ours, name), name
    assert [p.name for p in ours.CheckpointPolicy] == [p.name for p in theirs.CheckpointPolicy]
    assert torch is not None


def test_selective_contexts_compute_the_same():
    forward_context, recompute_context = mg.utils.checkpoint.create_selective_checkpoint_contexts(
        lambda ctx, op, *args, **kwargs: mg.utils.checkpoint.CheckpointPolicy.MUST_SAVE)
    x = mg.tensor(np.linspace(-1, 1, 5), requires_grad=True)
    y = checkpoint(mg.sin, x, use_reentrant=False, context_fn=lambda: (forward_context, recompute_context))
    y.backward(mg.ones(5))
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.linspace(-1, 1, 5)), rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops"):
            mg.utils.checkpoint.create_selective_checkpoint_contexts(3)
