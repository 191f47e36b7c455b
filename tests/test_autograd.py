"""The engine: graph walking, accumulation, freeing, hooks, grad modes, custom Functions, gradcheck itself."""
import gc
import re
import warnings
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, GradcheckError

from .mirror import rss_growth_kib, torch_or_skip


def leaf(shape, seed=0, dtype=np.float64):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype), requires_grad=True)


# ----------------------------------------------------------------------------- graph shapes
def test_wrap_sets_what_the_constructor_sets():
    """tensor.wrap, the engine's fast Tensor(array), leaves every slot as Tensor(array) does: set or unset alike, to the
    same values (a slot the constructor comes to set and wrap does not fails here)."""
    from minigrad.tensor import Tensor, wrap
    a = np.arange(6.0).reshape(2, 3)
    made, wrapped = Tensor(a), wrap(a)
    assert type(wrapped) is Tensor and wrapped._data is a
    for name in Tensor.__slots__:
        if name == "__weakref__":
            continue
        assert hasattr(made, name) == hasattr(wrapped, name), name
        if hasattr(made, name):
            assert getattr(made, name) is getattr(wrapped, name) or getattr(made, name) == getattr(wrapped, name), name


def test_diamond_graph_sums_both_paths():
    x = leaf((3,))
    a = x * 2.0
    b = x.exp()
    y = a * b  # x reaches y through a and through b
    g = np.random.default_rng(1).standard_normal(3)
    y.backward(mg.tensor(g))
    xd = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), g * (2 * np.exp(xd) + 2 * xd * np.exp(xd)), rtol=1e-14)


def test_reused_tensor_accumulates_every_use():
    x = leaf((4,))
    y = x * x * x  # x used three times
    g = np.random.default_rng(2).standard_normal(4)
    y.backward(mg.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2 * g, rtol=1e-14)


def test_chain_of_100000_ops_needs_no_recursion():
    x = mg.tensor([1.5], dtype=mg.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0 + 0.0
    y.backward(mg.tensor([2.0], dtype=mg.float64))
    assert x.grad.numpy().tolist() == [2.0]


def test_mirror_of_composite_expression():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    xa, wa = rng.standard_normal((3, 4)), rng.standard_normal(4)
    g = rng.standard_normal((3, 4))

    def f(lib, x, w):
        return ((x * w + 1.5).tanh() / (w * w + 1) - (x.exp() + 1).sqrt()).sigmoid() * x

    x, w = mg.tensor(xa, requires_grad=True), mg.tensor(wa, requires_grad=True)
    tx, tw = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
    f(mg, x, w).backward(mg.tensor(g))
    f(torch, tx, tw).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-14)


# ----------------------------------------------------------------------------- accumulation, freeing
def test_two_backward_calls_accumulate_into_grad():
    x = leaf((3,))
    g = np.random.default_rng(4).standard_normal(3)
    (x * 3.0).backward(mg.tensor(g))
    first = np.asarray(x.grad).copy()
    (x * 3.0).backward(mg.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_leaf_grad_does_not_alias_the_upstream_gradient():
    x = leaf((3,))
    g = mg.tensor(np.ones(3))
    (x + 0.0).backward(g)
    (x + 0.0).backward(g)
    assert g.detach().numpy().tolist() == [1.0, 1.0, 1.0]
    assert x.grad.numpy().tolist() == [2.0, 2.0, 2.0]


# The engine hands a leaf the gradient array itself, without a copy, when it can prove nothing else
# references it (engine.py's docstring). These tests would catch a gradient aliased with another
# leaf's, with the caller's upstream gradient or with an array a hook kept.
def _shares(a, b):
    return np.shares_memory(a._data if isinstance(a, mg.Tensor) else a, b._data if isinstance(b, mg.Tensor) else b)


class _FreshPassThrough(Function):
    """Returns the incoming gradient, and one new array for two inputs: the engine must see the sharing and
    copy."""

    @staticmethod
    def forward(ctx, a, b, c):
        return a.detach().numpy() + b.detach().numpy() + c.detach().numpy()

    @staticmethod
    def backward(ctx, dout):
        shared = dout.detach().numpy() * 1.0
        return dout.detach().numpy().reshape(dout.shape), shared, shared


def test_add_delivering_one_array_to_two_leaves_gives_each_its_own_grad():
    a, b = leaf((3,)), leaf((3,), seed=1)
    y = (a + b) * 2.0                         # Add hands the Mul's fresh gradient to both leaves
    y.backward(mg.ones(3, dtype=mg.float64))
    assert not _shares(a.grad, b.grad)
    a.grad.add_(1.0)                        # in place, as an optimizer or a second backward does
    assert b.grad.numpy().tolist() == [2.0, 2.0, 2.0]
    ((a + b) * 2.0).backward(mg.ones(3, dtype=mg.float64))
    assert a.grad.numpy().tolist() == [5.0, 5.0, 5.0] and b.grad.numpy().tolist() == [4.0, 4.0, 4.0]


def test_fresh_gradients_declaration_does_not_hide_pass_through_or_shared_outputs():
    a, b, c = leaf((3,)), leaf((3,), seed=1), leaf((3,), seed=2)
    g = mg.tensor(np.ones(3))
    _FreshPassThrough.apply(a, b, c).backward(g)
    assert not _shares(a.grad, g) and not _shares(b.grad, c.grad)
    a.grad.add_(1.0)
    b.grad.add_(1.0)
    assert g.detach().numpy().tolist() == [1.0] * 3 and c.grad.numpy().tolist() == [1.0] * 3
    _FreshPassThrough.apply(a, b, c).backward(g)
    assert g.detach().numpy().tolist() == [1.0] * 3
    assert a.grad.numpy().tolist() == [3.0] * 3 and b.grad.numpy().tolist() == [3.0] * 3 and c.grad.numpy().tolist() == [2.0] * 3


def test_fresh_gradient_is_handed_over_without_a_copy():
    returned = []

    class Fresh(Function):
        @staticmethod
        def forward(ctx, a):
            return a.detach().numpy() * 2.0

        @staticmethod
        def backward(ctx, dout):
            gradient = dout.detach().numpy() * 2.0
            returned.append(weakref.ref(gradient))  # the test looks at it without holding a reference
            return gradient

    x = leaf((3,))
    Fresh.apply(x).backward(mg.ones(3, dtype=mg.float64))
    assert x.grad._data is returned[0]()


def test_user_upstream_gradient_is_never_aliased_by_grad():
    x = leaf((2, 3))
    g = mg.tensor(np.ones((2, 3)))
    x.backward(g)                             # a leaf as the root: the upstream array itself arrives
    x.grad.add_(1.0)
    assert g.detach().numpy().tolist() == [[1.0] * 3] * 2
    w = leaf((3,), seed=1)
    y = mg.nn.functional.rms_norm(x, (3,), w)
    y.backward(g)
    y2 = mg.nn.functional.rms_norm(x, (3,), w)
    y2.backward(g)
    assert not _shares(x.grad, g) and not _shares(w.grad, g)
    assert g.detach().numpy().tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_norm_gradients_are_independent_arrays(norm):
    F = mg.nn.functional
    x, w, b = leaf((4, 3)), leaf((3,), seed=1), leaf((3,), seed=2)
    g = np.random.default_rng(9).standard_normal((4, 3))

    def run():
        if norm == "rms":
            return F.rms_norm(x, (3,), w, bias=b)
        return F.layer_norm(x, (3,), w, b)
    run().backward(mg.tensor(g))
    first = [np.asarray(t.grad).copy() for t in (x, w, b)]
    grads = [t.grad.numpy() for t in (x, w, b)]
    assert not any(_shares(p, q) for i, p in enumerate(grads) for q in grads[i + 1:])
    assert not any(_shares(p, g) for p in grads)
    run().backward(mg.tensor(g))              # accumulates in place into each
    for t, f in zip((x, w, b), first):
        np.testing.assert_allclose(t.grad.numpy(), 2 * f, rtol=1e-14)


def test_clip_grad_norm_scales_gradients_delivered_from_one_array_once():
    a, b = leaf((3,)), leaf((3,), seed=1)
    ((a + b) * 2.0).backward(mg.ones(3, dtype=mg.float64))  # both received the same array
    total = mg.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    np.testing.assert_allclose(float(total.detach().numpy()), np.sqrt(6 * 4.0), rtol=1e-12)
    expected = 2.0 * 1.0 / (np.sqrt(24.0) + 1e-6)           # each gradient scaled exactly once
    np.testing.assert_allclose(a.grad.numpy(), [expected] * 3, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), [expected] * 3, rtol=1e-12)


def test_retain_grad_and_leaf_hooks_get_arrays_of_their_own():
    x, w = leaf((2, 3)), leaf((3,), seed=1)
    kept = []
    x.register_hook(lambda grad: kept.append(grad))         # a hook keeps the gradient it saw
    y = mg.nn.functional.rms_norm(x, (3,), w)
    y.retain_grad()
    z = y * 3.0
    z.backward(mg.tensor(np.ones((2, 3))))
    assert not _shares(x.grad, kept[0]) and not _shares(y.grad, x.grad) and not _shares(y.grad, w.grad)
    seen = np.asarray(kept[0]).copy()
    x.grad.add_(1.0)
    y.grad.add_(1.0)
    np.testing.assert_array_equal(kept[0].detach().numpy(), seen)
    assert y.grad.numpy().tolist() == [[4.0] * 3] * 2


def test_second_backward_through_freed_graph_raises():
    x = leaf((3,))
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = leaf((3,))
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())


def test_graph_is_freed_without_reference_cycles():
    """No cycles: the graph dies by reference counting alone, with the garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        x = leaf((8,))
        y = ((x * 2.0).exp() * x).tanh().sum()
        node = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert node() is None
        z = (x.exp() * x).sum()  # never backpropagated: also freed when dropped
        node = weakref.ref(z.grad_fn)
        del z
        assert node() is None
    finally:
        gc.enable()


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc")
def test_rss_stays_flat_over_10000_training_steps():
    rng = np.random.default_rng(5)
    w1, b1, w2 = (mg.tensor(rng.standard_normal(s), requires_grad=True) for s in [(8, 16), (16,), (16,)])
    x = mg.tensor(rng.standard_normal((8, 1)))
    def step():
        h = (x * w1 + b1).tanh()
        loss = ((h * w2).mean(0) ** 2).mean()
        loss.backward()
        for p in (w1, b1, w2):
            p.data.sub_(0.01 * p.grad)
            p.grad = None
    growth = rss_growth_kib(step, warmup=500, steps=10_000)
    assert growth < 2048, f"RSS grew by {growth} KiB over 10,000 steps"


# ----------------------------------------------------------------------------- grad modes and flags
def test_no_grad_records_nothing_and_enable_grad_reenables():
    x = leaf((2,))
    with mg.no_grad():
        y = x * 2
        with mg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None
    assert mg.is_grad_enabled()


def test_no_grad_as_decorator():
    @mg.no_grad()
    def f(t):
        return t * 2

    assert not f(leaf((2,))).requires_grad
    assert mg.is_grad_enabled()


def test_detach_and_leaf_flags():
    x = leaf((2,))
    y = x * 2
    assert x.is_leaf and not y.is_leaf
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and np.shares_memory(d._data, y._data)
    assert mg.tensor([1.0]).requires_grad_().requires_grad


def test_requires_grad_on_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        mg.tensor([1, 2, 3], requires_grad=True)
    t = mg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad_()
    assert not t.requires_grad


def test_backward_on_non_scalar_without_gradient_raises():
    y = leaf((3,)) * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_backward_gradient_of_wrong_shape_raises():
    x = leaf((3,))
    y = x * 2
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \[2\]"):
        y.backward(mg.ones(2, dtype=mg.float64))
    assert x.grad is None


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.tensor([1.0]).sum().backward()


# ----------------------------------------------------------------------------- hooks and retain_grad
def test_hooks_see_and_replace_gradients():
    x = leaf((3,))
    seen = []
    x.register_hook(lambda g: seen.append(np.asarray(g).copy()))
    y = x * 2
    y.register_hook(lambda g: g * 10)  # replaces y's gradient before it flows on
    g = np.random.default_rng(6).standard_normal(3)
    y.backward(mg.tensor(g))
    np.testing.assert_allclose(seen[0], 20 * g)
    np.testing.assert_allclose(x.grad.numpy(), 20 * g)


def test_leaf_hook_runs_once_on_the_summed_gradient():
    x = leaf((3,))
    seen = []
    x.register_hook(lambda g: seen.append(np.asarray(g).copy()))
    y = x * x + x.exp()  # three edges into x
    g = np.random.default_rng(8).standard_normal(3)
    y.backward(mg.tensor(g))
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], g * (2 * x.detach().numpy() + np.exp(x.detach().numpy())), rtol=1e-14)


def test_hook_handle_remove():
    x = leaf((2,))
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    handle.remove()
    (x * 2).sum().backward()
    assert calls == []


def test_retain_grad_keeps_intermediate_gradient():
    x = leaf((3,))
    y = x.exp()
    y.retain_grad()
    z = y * 3.0
    g = np.random.default_rng(7).standard_normal(3)
    z.backward(mg.tensor(g))
    np.testing.assert_allclose(y.grad.numpy(), 3 * g)
    with pytest.warns(UserWarning, match="not a leaf Tensor"):    # PyTorch warns there too: backward never fills it
        assert (x * 1.0).grad is None


def test_backward_argument_errors_and_the_non_leaf_grad_warning_as_pytorch():
    """A gradient count that does not match the outputs, a complex gradient for a real output: PyTorch's
    RuntimeError (minigrad computed both); .grad read on a non-leaf that does not retain it warns (once per read),
    not on a leaf, a retaining non-leaf or a tensor that does not require grad."""
    torch = torch_or_skip()
    outcomes = []
    for lib in (torch, mg):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * 2
        row = []
        for call in (lambda: lib.autograd.backward([y.sum(), y.sum()], [None]),
                     lambda: lib.autograd.grad([y.sum(), y.sum()], [x], [None]),
                     lambda: y.backward(lib.ones(3, dtype=lib.complex128))):
            try:
                call()
                row.append("ok")
            except RuntimeError:
                row.append("RuntimeError")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            z = x * 3
            z.grad, x.grad, lib.ones(2).grad                     # one warning: z's
            kept = x * 4
            kept.retain_grad()
            kept.grad                                             # none
        row.append(sum("leaf Tensor" in str(w.message) for w in caught))
        outcomes.append(row)
    assert outcomes[1] == outcomes[0] == ["RuntimeError", "RuntimeError", "RuntimeError", 1]


# ----------------------------------------------------------------------------- dtype
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_gradients_keep_the_leaf_dtype(dtype):
    x = leaf((3,), dtype=dtype)
    w = leaf((3,), seed=1, dtype=np.float64)
    y = (x * w).exp()  # promoted to float64 inside
    assert y.dtype == np.float64
    y.backward(mg.ones(3, dtype=mg.float64))
    assert x.grad.dtype == dtype and w.grad.dtype == np.float64


# ----------------------------------------------------------------------------- custom Functions
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.detach().numpy() ** 3

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return dout.detach().numpy() * 3 * x.detach().numpy() ** 2


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return dout.detach().numpy() * 2 * x.detach().numpy() ** 2  # deliberately wrong


def test_user_function_with_needs_input_grad():
    class ScaledAdd(Function):
        @staticmethod
        def forward(ctx, a, b, alpha):
            ctx.alpha = alpha
            ctx.flags = ctx.needs_input_grad
            return a.detach().numpy() + alpha * b.detach().numpy()

        @staticmethod
        def backward(ctx, dout):
            return dout, ctx.alpha * dout.detach().numpy(), None

    a, b = leaf((2,)), mg.tensor(np.ones(2))
    y = ScaledAdd.apply(a, b, 3.0)
    y.backward(mg.ones(2, dtype=mg.float64))
    assert a.grad._data.tolist() == [1.0, 1.0] and b.grad is None
    assert mg.gradcheck(lambda p, q: ScaledAdd.apply(p, q, 3.0), (leaf((3,)), leaf((3,), 1)))


def test_gradcheck_accepts_a_correct_function():
    assert mg.gradcheck(Cube.apply, (leaf((2, 3)),))
    assert mg.autograd.gradcheck is mg.gradcheck


def test_gradcheck_rejects_a_wrong_backward_naming_input_and_index():
    with pytest.raises(GradcheckError, match=r"input 0 at index \(0, 0\): numerical = [-.0-9e]+, analytical = "
                                             r"[-.0-9e]+$"):
        mg.gradcheck(WrongCube.apply, (leaf((2, 3)),))
    assert mg.gradcheck(WrongCube.apply, (leaf((2, 3)),), raise_exception=False) is False


def test_gradcheck_fast_mode_rejects_a_wrong_backward():
    big = leaf((64, 64))
    assert mg.gradcheck(Cube.apply, (big,), fast_mode=True)
    with pytest.raises(GradcheckError, match="random projection"):
        mg.gradcheck(WrongCube.apply, (big,), fast_mode=True)


def test_gradcheck_with_an_output_that_does_not_require_grad_first():
    """An output that does not require grad (here a constant) is skipped alike in the analytic and the numerical
    side: each random upstream gradient meets its own output. With them paired wrongly the check would fail."""
    def outputs(x):
        return mg.tensor(np.ones(3)), Cube.apply(x)
    assert mg.gradcheck(outputs, (leaf((3,)),))
    with pytest.raises(GradcheckError):
        mg.gradcheck(lambda x: (mg.tensor(np.ones(3)), WrongCube.apply(x)), (leaf((3,)),))


def test_gradcheck_restores_inputs_and_grads():
    x = leaf((3,))
    before = x.detach().numpy().copy()
    mg.gradcheck(Cube.apply, (x,))
    assert np.array_equal(x._data, before) and x.grad is None


def test_function_returning_wrong_number_of_gradients_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a.detach().numpy() + b.detach().numpy()

        @staticmethod
        def backward(ctx, dout):
            return dout

    a, b = leaf((2,)), leaf((2,), 1)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"):
        Bad.apply(a, b).sum().backward()
    assert a.grad is None and b.grad is None


def test_function_returning_gradient_of_wrong_shape_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a.detach().numpy() * 2

        @staticmethod
        def backward(ctx, dout):
            return np.ones((5,))

    a = leaf((2,))
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got shape \[5\] but expected shape "
                                           r"compatible with \[2\]"):
        Bad.apply(a).sum().backward()
    assert a.grad is None


def test_autograd_grad_returns_without_accumulating():
    x = leaf((3,))
    y = x.exp()
    (gx,) = mg.autograd.grad(y, x, grad_outputs=mg.ones(3, dtype=mg.float64))
    np.testing.assert_allclose(gx.detach().numpy(), np.exp(x.detach().numpy()))
    assert x.grad is None


def test_backward_with_inputs_accumulates_only_into_them_like_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(11)
    a_np, b_np, g_np = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    results = []
    for lib in (mg, torch):
        a, b = lib.tensor(a_np, requires_grad=True), lib.tensor(b_np, requires_grad=True)
        a.register_hook(lambda g: g * 10)
        y = (a * b).exp()
        z = y * b
        z.backward(lib.tensor(g_np), inputs=[y, a])  # an intermediate and a leaf; b is left alone
        results.append((a.grad, y.grad, b.grad))
    for ours, theirs in zip(*results):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12)
    x = leaf((2,))
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])


def test_autograd_grad_names_the_unused_input_like_pytorch():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError) as theirs:
        a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        torch.autograd.grad((a * 2).sum(), [a, b])
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
        a, b = leaf((2,)), leaf((2,), 1)
        mg.autograd.grad((a * 2).sum(), [a, b])


# ----------------------------------------------------------------------------- tensors
def test_creation_dtypes_follow_pytorch():
    assert mg.tensor(1.0).dtype == mg.float32
    assert mg.tensor([1, 2]).dtype == mg.int64
    assert mg.tensor([True]).dtype == mg.bool
    assert mg.tensor(np.zeros(2, dtype=np.float16)).dtype == mg.float16
    assert mg.zeros(2, 3).dtype == mg.float32 and mg.zeros((2, 3)).shape == (2, 3)
    assert mg.arange(5).dtype == mg.int64 and mg.arange(0.0, 1.0, 0.5).dtype == mg.float32
    assert mg.full((2,), 3).dtype == mg.int64 and mg.full((2,), 3.0).dtype == mg.float32


def test_numpy_shares_memory_and_array_protocol():
    a = np.arange(6.0).reshape(2, 3)
    t = mg.from_numpy(a)
    assert t.numpy() is a
    assert np.asarray(t) is a
    assert not np.shares_memory(mg.tensor(a)._data, a)
    copied = np.array(t)  # NumPy asks for a copy: writing to it must not change the tensor
    copied[0, 0] = 42.0
    assert t.detach().numpy()[0, 0] == 0.0 and np.array(t, dtype=np.float32).dtype == np.float32
    with pytest.raises(RuntimeError, match="requires grad"):
        leaf((2,)).numpy()


def test_repr_is_readable():
    assert repr(mg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert "requires_grad=True" in repr(mg.tensor([1.0], requires_grad=True))
    assert "dtype=minigrad.float64" in repr(mg.tensor(np.zeros(1)))
    assert "grad_fn=<MulBackward>" in repr(leaf((1,)) * 2)


@pytest.mark.parametrize("values, dtype", [
    ([1.5, -2.25], "float32"), ([1.0, 2.0], "float32"), ([1e-8, 1.0], "float32"), ([0.1, 2000.0], "float64"),
    ([[0.5, -1e-5], [np.nan, np.inf]], "float32"), ([1e9, 2.0], "float32"), ([[1.25, -2.5], [3.0, 4.0]], "float16"),
    ([True], "bool"), ([True, False], "bool"), ([1, 20, -300], "int64"), ([1, 2], "int32"), (2.5, "float32"),
    ([np.nan, np.inf, -np.inf, 1.0], "float32"), ([-0.0, 0.0], "float32"), ([0.0, 0.0], "float64"),
    (np.arange(2000.0), "float32"), (np.arange(3000.0).reshape(30, 100), "float32"), ([123456.0, 0.001], "float32"),
    ([1.0, 100.0, 1000.0], "float32"), ([1e-300, 1e300, -1.0], "float64"), (np.linspace(-1, 1, 1500), "float64"),
    ([[1e-5, np.nan], [-0.0, 3.25]], "float64"), (np.linspace(-30, 20, 33), "float32"),
    (np.linspace(-1.7e7, 1.7e7, 77).round().reshape(7, 11), "float32"), (np.arange(-40, 40) * 12345, "int64"),
    (np.arange(50) % 3 == 0, "bool"), (np.linspace(-3, 3, 24).reshape(2, 3, 4), "float32"),
])
def test_repr_matches_pytorch(values, dtype):
    torch = torch_or_skip()
    ours = mg.tensor(np.array(values, dtype=dtype))
    theirs = torch.tensor(np.array(values, dtype=dtype))
    assert repr(ours) == repr(theirs).replace("torch.", "minigrad.")


@pytest.mark.parametrize("shape, dtype", [((0,), "float32"), ((0, 3), "float32"), ((2, 0), "float64"),
                                          ((0,), "int64"), ((0,), "bool")])
def test_repr_of_empty_tensors_matches_pytorch(shape, dtype):
    torch = torch_or_skip()
    theirs = torch.zeros(shape, dtype=getattr(torch, dtype))
    assert repr(mg.zeros(shape, dtype=np.dtype(dtype))) == repr(theirs).replace("torch.", "minigrad.")


@pytest.mark.parametrize("make, spec", [
    ("tensor(2.5)", ".2f"), ("tensor(2.5)", ""), ("tensor(3)", ">5"), ("tensor(3)", ""), ("tensor(True)", ""),
    ("tensor(1.25, dtype=float64)", "e"), ("tensor(2.5, requires_grad=True) * 2", ".3f"), ("tensor([2.5])", ""),
    ("tensor([2.5])", ".2f"), ("nn.Parameter(tensor(2.5))", ""), ("nn.Parameter(tensor(2.5))", ".2f"),
])
def test_format_matches_pytorch(make, spec):
    """A 0-d Tensor formats as its number (f"{loss:.4f}"); any other tensor, and a 0-d Parameter, as object does:
    its str, or TypeError for a format spec."""
    torch = torch_or_skip()

    def formatted(lib):
        t = eval(make, {"tensor": lib.tensor, "float64": lib.float64, "nn": lib.nn})
        try:
            return format(t, spec).replace("torch", "minigrad")
        except TypeError as err:
            return "TypeError: " + str(err)
    assert formatted(mg) == formatted(torch)


def test_pickling_a_tensor_with_a_history_gives_a_leaf():
    """As PyTorch's: values, requires_grad and attributes come back, the graph does not (a non-leaf raised
    PicklingError: its node's type is made per Function, not importable)."""
    import copy
    import pickle
    torch = torch_or_skip()
    outcomes = []
    for lib in (torch, mg):
        t = lib.tensor([1.5, -2.0], requires_grad=True) * 2
        t.tag = "kept"
        view = lib.tensor([[1.0, 2.0]], requires_grad=True)[0]
        results = [pickle.loads(pickle.dumps(t)), pickle.loads(pickle.dumps(view)),
                   pickle.loads(pickle.dumps(t.detach()))]
        outcomes.append([(u.is_leaf, u.requires_grad, u.grad_fn is None, u.tolist(), getattr(u, "tag", None))
                         for u in results])
    assert outcomes[1] == outcomes[0]
    copied = copy.deepcopy(mg.tensor([1.0], requires_grad=True) * 3)     # PyTorch refuses: docs/differences.md
    assert copied.is_leaf and copied.requires_grad and copied.tolist() == [3.0]


@pytest.mark.parametrize("values", [[1, 2, 3], [[1.0, 2.0], [3.0, 4.0]], 5.0])
def test_reversed_matches_pytorch(values):
    torch = torch_or_skip()
    ours, theirs = reversed(mg.tensor(values)), reversed(torch.tensor(values))
    assert isinstance(ours, mg.Tensor) and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("expression", [
    "t([1]) + None", "None + t([1])", "t([1]) + [1]", "t([1]) - object()", "t([1.]) / 'x'", "'x' / t([1.])",
    "t(3) * [1, 2]", "[1, 2] * t(2)", "'ab' * t(2)", "t(2) * 'a'", "t(2.) * [1]", "t([1.]) * (1, 2)",
    "t([1.]) * True", "t([1.]) + 2j", "2 / t([4.])",
])
def test_operators_with_other_objects_match_pytorch(expression):
    """As PyTorch's operators: an operand the op refuses makes the operator return NotImplemented, so Python tries
    the other operand's method (a list's or a string's repetition by an integer tensor) or raises its own TypeError
    ("unsupported operand type(s) for +: 'Tensor' and 'NoneType'")."""
    torch = torch_or_skip()

    def outcome(lib):
        try:
            result = eval(expression, {"t": lib.tensor})
        except TypeError as err:
            return "TypeError: " + str(err)
        return result.tolist() if hasattr(result, "tolist") and not isinstance(result, (list, str)) else result
    assert outcome(mg) == outcome(torch)


_OPERATORS = ["**", "@", "%", "//", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==", "!="]
_REFUSED = ["None", "'ab'", "[1, 2]", "(1, 2)", "{1: 2}", "object()"]


@pytest.mark.parametrize("lhs", ["t([1, 2])", "t([1., 2.])", "t([True, False])"])
@pytest.mark.parametrize("op", _OPERATORS + [op + "=" for op in _OPERATORS[:9] + ["+", "-", "*", "/"]])
def test_every_operator_with_other_objects_matches_pytorch(op, lhs):
    """All of Tensor's binary operators, their reflections and the in-place ones, with operands the op refuses (and,
    for ``@``, Python numbers, which torch.matmul refuses too): PyTorch's operators return NotImplemented, so Python
    raises its own TypeError ("'<' not supported between instances of 'Tensor' and 'NoneType'"), falls back from
    ``**=`` to ``**``, and ``==`` compares identities."""
    torch = torch_or_skip()
    operands = _REFUSED + (["2", "2.5", "True"] if "@" in op else [])

    def outcome(lib, statement):
        scope = {"t": lib.tensor}
        try:
            exec(statement, scope)
        except (TypeError, RuntimeError) as err:
            return f"{type(err).__name__}: {err}"
        result = scope["out"]
        return result.tolist() if hasattr(result, "tolist") else result
    for other in operands:
        if op.endswith("=") and op not in ("<=", ">=", "==", "!="):
            statements = [f"out = {lhs}\nout {op} {other}"]
        else:
            statements = [f"out = {lhs} {op} {other}", f"out = {other} {op} {lhs}"]
        for statement in statements:
            assert outcome(mg, statement) == outcome(torch, statement), statement


@pytest.mark.parametrize("statement", [
    "t(True) - True", "True - t(True)", "t([1.]) - True", "t([True]) - 1", "x = t([True]); x -= True",
    "mg_or_torch.sub(t([True]), True, alpha=2)", "t([1.]) @ t([1])", "mg_or_torch.dot(t([1]), t([1.]))",
])
def test_refusals_of_bool_subtraction_and_mixed_vectors_match_pytorch(statement):
    """PyTorch's words: a bool tensor minus a Python bool is its "two bool tensors" case (the bool is wrapped in a
    tensor); the dot of two vectors of different dtypes, which ``@`` of two vectors is, names both dtypes."""
    torch = torch_or_skip()

    def outcome(lib):
        with pytest.raises(RuntimeError) as err:
            exec(statement, {"t": lib.tensor, "mg_or_torch": lib})
        return str(err.value)
    assert outcome(mg) == outcome(torch)


@pytest.mark.parametrize("expression", [
    "np.sin(t([1., -2.]))", "np.add(t([1., -2.]), 1)", "np.maximum(t([1., -2.]), t([3, 4]))", "np.sqrt(t([3, 4]))",
    "np.greater(t([1., -2.]), 0)", "np.isnan(t([1., float('nan')]))", "np.exp(t(2.5))", "np.cumsum(t([1., 2.]))",
    "np.clip(t([1., -2.]), 0, 1)", "np.floor(t([1.5, -2.5]))", "np.abs(t([-1, 2], dtype=mg_or_torch.int8))",
])
@pytest.mark.filterwarnings("ignore:__array_wrap__ must accept:DeprecationWarning")   # PyTorch's, under NumPy 2
def test_numpy_functions_of_tensors_give_tensors_as_pytorchs(expression):
    """PyTorch's ``__array_wrap__``: a NumPy function's result on tensors is a tensor (a leaf; bool results as
    uint8), not an ndarray."""
    torch = torch_or_skip()

    def outcome(lib):
        result = eval(expression, {"np": np, "t": lib.tensor, "mg_or_torch": lib})
        assert isinstance(result, lib.Tensor) and not result.requires_grad
        return str(result.dtype).replace("torch.", ""), result.shape, result.tolist()
    ours, theirs = outcome(mg), outcome(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_numpy_refuses_a_tensor_that_requires_grad_as_pytorchs():
    """np.asarray(w) / np.sin(w) of a tensor that requires grad raises PyTorch's error (NumPy's result would have no
    history: a gradient silently lost); under no_grad, or detached, it is the data."""
    torch = torch_or_skip()
    for lib in (mg, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        for convert in (np.asarray, np.sin, lambda v: np.array([v[0]])):
            with pytest.raises(RuntimeError, match=re.escape("Can't call numpy() on Tensor that requires grad. Use "
                                                             "tensor.detach().numpy() instead.")):
                convert(w)
        with lib.no_grad():
            assert np.asarray(w).tolist() == [1.0, 2.0]
        assert np.asarray(w.detach()).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("expression", [
    "complex(t(1 + 2j))", "complex(t([2.5]))", "complex(t(3))", "t(2.5).__long__()", "t([0.]).__nonzero__()",
    "t(-2).__nonzero__()", "x = t([4., 6.]); x.__idiv__(2); out = x", "del t([1, 2])[0]", "complex(t([1., 2.]))",
])
def test_pythons_other_conversions_match_pytorch(expression):
    """complex(t), and the Python 2 names PyTorch's Tensor still has (__long__, __nonzero__, __idiv__); ``del t[i]``
    is PyTorch's TypeError."""
    torch = torch_or_skip()

    def outcome(lib):
        scope = {"t": lib.tensor}
        try:
            if expression.startswith(("del", "x =")):
                exec(expression, scope)
                result = scope["out"]
            else:
                result = eval(expression, scope)
        except (TypeError, ValueError) as err:
            return f"{type(err).__name__}: {err}"
        return (type(result).__name__, result.tolist() if hasattr(result, "tolist") else result)
    assert outcome(mg) == outcome(torch)


def test_to_accepts_pytorchs_forms():
    torch = torch_or_skip()
    x = leaf((2, 3), dtype=np.float32)
    for args, kwargs in [(("cpu",), {}), (("cpu", "float64"), {}), ((), {"dtype": "float16"}),
                         ((), {"device": "cpu", "dtype": "float64"}), (("zeros16",), {})]:
        ours = x.to(*[mg.zeros(1, dtype=mg.float16) if a == "zeros16" else np.dtype(a) if a != "cpu" else a
                      for a in args], **{k: np.dtype(v) if k == "dtype" else v for k, v in kwargs.items()})
        theirs = torch.zeros(1).to(*[torch.zeros(1, dtype=torch.float16) if a == "zeros16" else
                                     getattr(torch, a) if a != "cpu" else a for a in args],
                                   **{k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()})
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert x.to("cpu") is x and x.to(mg.float32) is x
    y = x.to("cpu", mg.float64)
    y.backward(mg.ones(2, 3, dtype=mg.float64))
    assert x.grad.dtype == np.float32
    with pytest.raises(RuntimeError, match="CPU only"):
        x.to("cuda")


def test_bool_of_a_many_element_tensor_raises_pytorchs_error():
    torch = torch_or_skip()
    with pytest.raises(RuntimeError) as theirs:
        bool(torch.zeros(2))
    with pytest.raises(RuntimeError, match=str(theirs.value)):
        bool(mg.zeros(2))


def test_inplace_on_leaf_requiring_grad_raises_unless_no_grad():
    x = leaf((2,))
    with pytest.raises(RuntimeError, match="in-place"):
        x.add_(1.0)
    with mg.no_grad():
        x.add_(1.0)
