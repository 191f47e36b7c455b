"""minigrad.library (torch.library): custom operators, their autograd, Library, infer_schema, opcheck,
compared with PyTorch's where it is installed (float64 data, random upstream gradients)."""
import itertools
import typing
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

TOL = dict(rtol=1e-12, atol=1e-14)
_count = itertools.count()


def _ns():
    """A namespace no other test uses (operators cannot be defined twice, in PyTorch as in minigrad)."""
    return f"mgtest{next(_count)}"


def _np(t):
    return t.detach().numpy()


def _sin_scaled(lib, ns, with_autograd=True, broken=False):
    """``k * sin(x) + y`` as a custom op of ``lib`` (minigrad or torch) with register_autograd."""
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{ns}::sin_scaled", mutates_args=())
    def sin_scaled(x: Tensor, y: Tensor, k: float) -> Tensor:
        return x.sin() * k + y

    seen = {}

    def setup_context(ctx, inputs, output):
        x, y, k = inputs
        seen["needs"] = tuple(ctx.needs_input_grad)
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        seen["needs_backward"] = tuple(ctx.needs_input_grad)
        return grad * x.cos() * ctx.k, grad, None

    if with_autograd:
        sin_scaled.register_autograd(backward, setup_context=setup_context)
    return sin_scaled, seen


def _run(lib, op, xs, up, requires=(True, True)):
    x = lib.tensor(xs[0], requires_grad=requires[0])
    y = lib.tensor(xs[1], requires_grad=requires[1])
    out = op(x, y, 1.5)
    out.backward(lib.tensor(up))
    return out, x.grad, y.grad


# =========================================================================== custom_op with register_autograd
@pytest.mark.parametrize("requires", [(True, True), (True, False), (False, True)])
def test_custom_op_autograd_matches_pytorch(requires):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    xs = (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    up = rng.standard_normal((3, 4))
    ours, our_seen = _sin_scaled(mg, _ns())
    theirs, their_seen = _sin_scaled(torch, _ns())
    out, gx, gy = _run(mg, ours, xs, up, requires)
    t_out, t_gx, t_gy = _run(torch, theirs, xs, up, requires)
    np.testing.assert_allclose(_np(out), _np(t_out), **TOL)
    for g, t_g in ((gx, t_gx), (gy, t_gy)):
        assert (g is None) == (t_g is None)
        if g is not None:
            np.testing.assert_allclose(_np(g), _np(t_g), **TOL)
    assert our_seen["needs"] == their_seen["needs"]
    assert our_seen["needs_backward"] == their_seen["needs_backward"]


def test_custom_op_grad_value_without_torch():
    """d(k sin x + y)/dx = k cos x, with a random upstream gradient (no PyTorch needed)."""
    rng = np.random.default_rng(1)
    xs = (rng.standard_normal(5), rng.standard_normal(5))
    up = rng.standard_normal(5)
    op, _ = _sin_scaled(mg, _ns())
    out, gx, gy = _run(mg, op, xs, up)
    np.testing.assert_allclose(_np(out), 1.5 * np.sin(xs[0]) + xs[1], **TOL)
    np.testing.assert_allclose(_np(gx), up * 1.5 * np.cos(xs[0]), **TOL)
    np.testing.assert_allclose(_np(gy), up, **TOL)
    assert type(out.grad_fn).__name__ != "NoneType" and "sin_scaled" in out.grad_fn.name()
    with mg.no_grad():
        assert not op(mg.tensor(xs[0], requires_grad=True), mg.tensor(xs[1]), 1.0).requires_grad


def _two_outputs(lib, ns):
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{ns}::sincos", mutates_args=())
    def sincos(x: Tensor, tensors: typing.List[Tensor]) -> typing.Tuple[Tensor, Tensor]:
        return x.sin() * tensors[0], x.cos() + tensors[1]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1][0])

    def backward(ctx, ga, gb):
        x, w = ctx.saved_tensors
        return ga * w * x.cos() - gb * x.sin(), [ga * x.sin(), gb]

    sincos.register_autograd(backward, setup_context=setup_context)
    return sincos


def test_custom_op_two_outputs_and_tensor_list_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    data = [rng.standard_normal(4) for _ in range(3)]
    ups = [rng.standard_normal(4) for _ in range(2)]
    results = []
    for lib in (mg, torch):
        op = _two_outputs(lib, _ns())
        x, w, b = (lib.tensor(d, requires_grad=True) for d in data)
        a, c = op(x, [w, b])
        lib.autograd.backward([a, c], [lib.tensor(u) for u in ups])
        results.append([_np(a), _np(c), _np(x.grad), _np(w.grad), _np(b.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, **TOL)


def test_custom_op_one_output_used_gets_zero_gradient_for_the_other():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(4) for _ in range(3)]
    up = rng.standard_normal(4)
    grads = []
    for lib in (mg, torch):
        op = _two_outputs(lib, _ns())
        x, w, b = (lib.tensor(d, requires_grad=True) for d in data)
        a, _ = op(x, [w, b])
        a.backward(lib.tensor(up))
        grads.append([_np(x.grad), _np(w.grad), None if b.grad is None else _np(b.grad)])
    for ours, theirs in zip(*grads):
        if theirs is None:
            assert ours is None or not np.any(ours)
        else:
            np.testing.assert_allclose(ours, theirs, **TOL)


# =========================================================================== errors users hit
def _errors(fn, libs):
    messages = []
    for lib in libs:
        with pytest.raises(Exception) as info:
            fn(lib)
        messages.append((type(info.value), str(info.value)))
    return messages


def test_backward_without_autograd_formula_raises_as_pytorch():
    torch = torch_or_skip()

    def go(lib):
        op, _ = _sin_scaled(lib, _ns(), with_autograd=False)
        out = op(lib.ones(3, requires_grad=True), lib.ones(3), 2.0)
        assert out.requires_grad
        out.backward(lib.ones(3))
    (ours_t, ours), (theirs_t, theirs) = _errors(go, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    assert ours.split(".", 1)[1] == theirs.split(".", 1)[1]        # the namespaces differ
    assert "no autograd formula was registered. Please use register_autograd to add one." in ours


def test_wrong_number_of_gradients_raises_as_pytorch():
    torch = torch_or_skip()

    def go(lib):
        op, _ = _sin_scaled(lib, "mgwrong%d" % next(_count), with_autograd=False)
        op.register_autograd(lambda ctx, g: g, setup_context=lambda ctx, inputs, output: None)
        op(lib.ones(3, requires_grad=True), lib.ones(3), 2.0).backward(lib.ones(3))
    (ours_t, ours), (theirs_t, theirs) = _errors(go, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    strip = lambda s: s.split("_sin_scaled_default", 1)[1]   # noqa: E731
    assert strip(ours) == strip(theirs)


def test_output_aliasing_an_input_raises_as_pytorch():
    torch = torch_or_skip()

    def go(lib):
        @lib.library.custom_op(f"{_ns()}::ident", mutates_args=())
        def ident(x: lib.Tensor) -> lib.Tensor:
            return x
        ident(lib.ones(2))
    (ours_t, ours), (theirs_t, theirs) = _errors(go, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    assert ours.split("): ", 1)[1] == theirs.split("): ", 1)[1]


def test_missing_argument_raises_as_pytorch():
    torch = torch_or_skip()
    ns = [_ns(), _ns()]

    def go(lib):
        @lib.library.custom_op(f"{ns[lib is torch]}::need_n", mutates_args=())
        def need_n(x: lib.Tensor, n: int) -> lib.Tensor:
            return x.clone()
        need_n(lib.ones(2))
    (ours_t, ours), (theirs_t, theirs) = _errors(go, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    assert ours.replace(ns[0], "NS") == theirs.replace(ns[1], "NS")


def test_wrong_argument_type_raises_as_pytorch():
    torch = torch_or_skip()
    ns = [_ns(), _ns()]

    def go(lib):
        @lib.library.custom_op(f"{ns[lib is torch]}::int_n", mutates_args=())
        def int_n(x: lib.Tensor, n: int) -> lib.Tensor:
            return x.clone()
        int_n(lib.ones(2), 2.5)
    (ours_t, ours), (theirs_t, theirs) = _errors(go, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    first = lambda s, n: s.replace(n, "NS").splitlines()[:4]   # noqa: E731  (PyTorch adds pybind11 details)
    assert first(ours, ns[0]) == first(theirs, ns[1])


def test_custom_op_name_needs_a_namespace():
    with pytest.raises(ValueError):
        mg.library.custom_op("no_namespace", mutates_args=())(lambda x: x)


# =========================================================================== infer_schema
def _prototypes(lib):
    T = lib.Tensor
    Opt, List, Seq, Tup = typing.Optional, typing.List, typing.Sequence, typing.Tuple

    def a(x: T, y: float, n: int = 2, *, flag: bool = False) -> T: ...
    def b(x: T, out: T) -> None: ...
    def c(x: T) -> Tup[T, T]: ...
    def d(a: Opt[T], b: List[T], c: Seq[int], d: Opt[float] = None, e: str = "hi", g: bool = True) -> List[T]: ...
    def e(x: T, s: Opt[int] = None, dt: lib.dtype = lib.float32) -> T: ...
    return [(a, ()), (b, {"out"}), (c, ()), (d, ()), (d, "unknown"), (e, ())]


def test_infer_schema_matches_pytorch():
    torch = torch_or_skip()
    for (ours, mutates), (theirs, _) in zip(_prototypes(mg), _prototypes(torch)):
        assert mg.library.infer_schema(ours, mutates_args=mutates) == \
            torch.library.infer_schema(theirs, mutates_args=mutates)
    ours, theirs = _prototypes(mg)[2][0], _prototypes(torch)[2][0]
    assert mg.library.infer_schema(ours, op_name="hh", mutates_args=()) == \
        torch.library.infer_schema(theirs, op_name="hh", mutates_args=())


def test_infer_schema_errors_match_pytorch():
    torch = torch_or_skip()

    def no_annotation(lib):
        def f(x): ...
        lib.library.infer_schema(f, mutates_args=())

    def no_return(lib):
        def f(x: lib.Tensor): ...
        lib.library.infer_schema(f, mutates_args=())
    for case in (no_annotation, no_return):
        (ours_t, ours), (theirs_t, theirs) = _errors(case, (mg, torch))
        assert ours_t is theirs_t is ValueError
        assert ours.replace("minigrad.tensor.Tensor", "torch.Tensor") == theirs


def test_infer_schema_without_torch():
    def f(x: mg.Tensor, k: float = 1.0) -> mg.Tensor: ...
    assert mg.library.infer_schema(f, mutates_args=()) == "(Tensor x, float k=1.0) -> Tensor"
    assert mg.library.infer_schema(f, op_name="f", mutates_args={"x"}) == "f(Tensor(a0!) x, float k=1.0) -> Tensor"


# =========================================================================== mutation, kernels, ops namespace
def test_mutating_op_writes_into_the_callers_tensor():
    ns = _ns()

    @mg.library.custom_op(f"{ns}::add_into", mutates_args={"y"})
    def add_into(x: mg.Tensor, y: mg.Tensor) -> None:
        y.add_(x)
    y = mg.zeros(3)
    assert add_into(mg.tensor([1.0, 2.0, 3.0]), y) is None
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0, 3.0])
    assert add_into._schema == f"{ns}::add_into(Tensor x, Tensor(a1!) y) -> ()"


def test_register_kernel_replaces_the_cpu_kernel_and_set_kernel_enabled():
    ns = _ns()

    @mg.library.custom_op(f"{ns}::twice", mutates_args=())
    def twice(x: mg.Tensor) -> mg.Tensor:
        return x * 2

    @twice.register_kernel("cpu")
    def _(x):
        return x * 3
    np.testing.assert_array_equal(twice(mg.ones(2)).numpy(), [3.0, 3.0])
    with twice.set_kernel_enabled("cpu", False):
        np.testing.assert_array_equal(twice(mg.ones(2)).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(twice(mg.ones(2)).numpy(), [3.0, 3.0])


def test_ops_namespace_and_clash_with_minigrads_own_op_modules():
    ns = _ns()

    @mg.library.custom_op(f"{ns}::neg2", mutates_args=())
    def neg2(x: mg.Tensor) -> mg.Tensor:
        return -x
    x = mg.tensor([1.0, -2.0])
    np.testing.assert_array_equal(getattr(mg.ops, ns).neg2(x).numpy(), [-1.0, 2.0])
    np.testing.assert_array_equal(getattr(mg.ops, ns).neg2.default(x).numpy(), [-1.0, 2.0])
    assert getattr(mg.ops, ns).neg2.default.name() == f"{ns}::neg2"
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        getattr(mg.ops, ns).missing
    # a namespace named like one of minigrad's op modules does not replace that module
    import minigrad.ops.linalg as own_linalg
    if "linalg::mgtest_det2" not in mg.library._registry:
        @mg.library.custom_op("linalg::mgtest_det2", mutates_args=())
        def det2(x: mg.Tensor) -> mg.Tensor:
            return x.sum()
    assert mg.ops.linalg is own_linalg
    np.testing.assert_array_equal(mg.library.ops.linalg.mgtest_det2(mg.ones(3)).numpy(), 3.0)


# =========================================================================== Library, define, impl
def _library_op(lib, ns, autograd_kernel=False):
    library = lib.library.Library(ns, "DEF")
    name = library.define("scale(Tensor x, float k=2.0) -> Tensor")
    library.impl(name, lambda x, k=2.0: x * k, "CPU")
    if autograd_kernel:
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                with lib._C._AutoDispatchBelowAutograd() if lib.__name__ == "torch" else _nothing():
                    return getattr(getattr(lib.ops, ns), "scale")(x, k)

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k * 10, None      # deliberately not the true derivative: shows this kernel ran
        library.impl(name, lambda x, k=2.0: Scale.apply(x, k), "Autograd")
    return library, getattr(getattr(lib.ops, ns), name)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("autograd_kernel", [False, True])
def test_library_define_impl_matches_pytorch(autograd_kernel):
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    data, up = rng.standard_normal(5), rng.standard_normal(5)
    results = []
    for lib in (mg, torch):
        library, op = _library_op(lib, _ns(), autograd_kernel)
        x = lib.tensor(data, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = op(x, 3.0)
            out.backward(lib.tensor(up))
        fallback = any("an autograd kernel was not registered" in str(w.message) for w in caught)
        results.append((_np(out), _np(x.grad), fallback))
    np.testing.assert_allclose(results[0][0], results[1][0], **TOL)
    np.testing.assert_allclose(results[0][1], results[1][1], **TOL)
    assert results[0][2] == results[1][2] == (not autograd_kernel)


def test_library_errors_match_pytorch():
    torch = torch_or_skip()
    ns = [_ns(), _ns()]

    def bad_kind(lib):
        lib.library.Library("x", "XYZ")
    (ours_t, ours), (theirs_t, theirs) = _errors(bad_kind, (mg, torch))
    assert ours_t is theirs_t is ValueError and ours == theirs

    keep = []

    def define_twice(lib):
        library = lib.library.Library(ns[lib is torch], "DEF")
        keep.append(library)
        library.define("f(Tensor x) -> Tensor")
        library.define("f(Tensor x) -> Tensor")
    (ours_t, ours), (theirs_t, theirs) = _errors(define_twice, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    assert ours.replace(ns[0], "NS").split(" Duplicate")[0] == theirs.replace(ns[1], "NS").split(" Duplicate")[0]

    def def_twice(lib):
        lib.library.Library(ns[lib is torch], "DEF")
    (ours_t, ours), (theirs_t, theirs) = _errors(def_twice, (mg, torch))
    assert ours_t is theirs_t is RuntimeError
    assert ours.replace(ns[0], "NS").split("  Previous")[0] == theirs.replace(ns[1], "NS").split("  Previous")[0]


def test_module_level_define_impl_register_fake_and_opcheck():
    ns = _ns()
    mg.library.define(f"{ns}::g", "(Tensor x) -> Tensor")

    @mg.library.impl(f"{ns}::g", "cpu")
    def g(x):
        return x.sin()
    x = mg.tensor([0.5, 1.0])
    np.testing.assert_allclose(getattr(mg.ops, ns).g(x).numpy(), np.sin([0.5, 1.0]), rtol=1e-6)
    fake_calls = []

    @mg.library.register_fake(f"{ns}::g")
    def _(x):
        fake_calls.append(mg.library.get_ctx())
        return mg.empty_like(x)
    mg.library.register_autograd(f"{ns}::g", lambda ctx, grad: grad * ctx.saved_tensors[0].cos(),
                                 setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    result = mg.library.opcheck(f"{ns}::g", (mg.randn(3, requires_grad=True),))
    assert result == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                      "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}
    assert len(fake_calls) == 1 and isinstance(fake_calls[0], mg.library.FakeImplCtx)


def test_opcheck_success_dict_and_missing_fake_as_pytorch():
    torch = torch_or_skip()
    outcomes = []
    for lib in (mg, torch):
        op, _ = _sin_scaled(lib, _ns())
        args = (lib.randn(3, dtype=lib.float64, requires_grad=True), lib.randn(3, dtype=lib.float64), 2.0)
        with pytest.raises(Exception) as info:
            lib.library.opcheck(op, args)
        failed = lib.library.opcheck(op, args, raise_exception=False)
        op.register_fake(lambda x, y, k: lib.empty_like(x))
        outcomes.append((type(info.value).__name__, str(info.value).split("failed with")[0],
                         {k: v if v == "SUCCESS" else type(v).__name__ for k, v in failed.items()},
                         lib.library.opcheck(op, args)))
    assert outcomes[0] == outcomes[1]


def test_opcheck_catches_a_wrong_backward_and_an_undeclared_mutation():
    """minigrad's opcheck compares the backward with finite differences (PyTorch's compares eager with compiled
    runs, which a wrong formula passes), and flags inputs written though not in mutates_args (as PyTorch's)."""
    op, _ = _sin_scaled(mg, _ns(), with_autograd=False)
    op.register_fake(lambda x, y, k: mg.empty_like(x))
    op.register_autograd(lambda ctx, g: (g * ctx.saved_tensors[0].sin(), g, None),     # wrong: sin, not cos
                         setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    args = (mg.randn(3, dtype=mg.float64, requires_grad=True), mg.randn(3, dtype=mg.float64), 2.0)
    result = mg.library.opcheck(op, args, raise_exception=False)
    assert result["test_aot_dispatch_dynamic"] != "SUCCESS" and result["test_schema"] == "SUCCESS"

    ns = _ns()

    @mg.library.custom_op(f"{ns}::sneaky", mutates_args=())
    def sneaky(x: mg.Tensor) -> mg.Tensor:
        x.add_(1)
        return x.clone()
    sneaky.register_fake(lambda x: mg.empty_like(x))
    with pytest.raises(mg.library.OpCheckError, match="test_schema failed"):
        mg.library.opcheck(sneaky, (mg.zeros(2),), test_utils="test_schema")


def test_opcheck_flags_undeclared_mutation_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        @lib.library.custom_op(f"{_ns()}::sneaky", mutates_args=())
        def sneaky(x: lib.Tensor) -> lib.Tensor:
            x.add_(1)
            return x.clone()
        sneaky.register_fake(lambda x: lib.empty_like(x))
        result = lib.library.opcheck(sneaky, (lib.zeros(2),), test_utils="test_schema", raise_exception=False)
        assert result["test_schema"] != "SUCCESS", lib.__name__


def _cube(lib, ns):
    @lib.library.custom_op(f"{ns}::cube", mutates_args=())
    def cube(x: lib.Tensor, *, scale: float = 1.0) -> lib.Tensor:
        return x ** 3 * scale

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = keyword_only_inputs["scale"]
    cube.register_autograd(lambda ctx, g: g * 3 * ctx.saved_tensors[0] ** 2 * ctx.scale,
                           setup_context=setup_context)
    return cube


def test_double_backward_and_keyword_only_inputs_match_pytorch():
    """A backward written with tensor ops can be differentiated again (create_graph=True); keyword-only arguments
    reach setup_context as keyword_only_inputs."""
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    data, up, up2 = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
    results = []
    for lib in (mg, torch):
        op = _cube(lib, _ns())
        x = lib.tensor(data, requires_grad=True)
        (g,) = lib.autograd.grad(op(x, scale=0.5), x, lib.tensor(up), create_graph=True)
        (h,) = lib.autograd.grad(g, x, lib.tensor(up2))
        results.append((_np(g), _np(h)))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, **TOL)
