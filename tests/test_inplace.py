"""In-place ops, ``Tensor.data`` and version counters, against PyTorch.

Each in-place op runs in three places, written once for both libraries (``lib`` is minigrad or torch):
on a leaf under ``no_grad`` (values), on a non-leaf inside a graph, and through views into a non-leaf
base (values and every gradient, float64, random upstream gradient).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

from .mirror import torch_or_skip, torch_result

RTOL = 1e-12


def arrays(seed, *shapes, low=0.5, high=2.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s) for s in shapes]


def as_np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# --------------------------------------------------------------------------- the ops, written once for both
MASK = np.random.default_rng(7).random((3, 4)) < 0.5
SCATTER_INDEX = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])          # distinct rows per column (scatter_ is ambiguous)
SCATTER_ADD_INDEX = np.array([[0, 0, 2, 1], [0, 1, 1, 1]])      # repeats accumulate


def op_table(lib, ops):
    """name -> f(t) that writes into t in place and returns what the op returned. ``ops`` holds the
    operands (float64 tensors, requiring grad where the caller asked)."""
    o = ops
    long = lib.int64

    def idx(a):
        return lib.tensor(a, dtype=long)

    def setitem(key, value):
        def f(t):
            t[key] = value
            return t
        return f

    def inplace_operator(name):
        def f(t):
            u = t
            if name == "+=":
                u += o["row"]
            elif name == "-=":
                u -= o["full"]
            elif name == "*=":
                u *= o["row"]
            else:
                u /= o["full"]
            assert u is t
            return u
        return f

    return {
        "add_": lambda t: t.add_(o["row"], alpha=0.5),
        "add_full": lambda t: t.add_(o["full"]),
        "add_scalar": lambda t: t.add_(1.25),
        "sub_": lambda t: t.sub_(o["full"], alpha=2.0),
        "mul_": lambda t: t.mul_(o["row"]),
        "mul_scalar": lambda t: t.mul_(-0.75),
        "div_": lambda t: t.div_(o["full"]),
        "pow_": lambda t: t.pow_(o["row"]),
        "pow_scalar": lambda t: t.pow_(1.5),
        "neg_": lambda t: t.neg_(),
        "exp_": lambda t: t.exp_(),
        "sqrt_": lambda t: t.sqrt_(),
        "sigmoid_": lambda t: t.sigmoid_(),
        "tanh_": lambda t: t.tanh_(),
        "relu_": lambda t: t.sub_(1.25).relu_(),
        "clamp_": lambda t: t.clamp_(0.8, 1.6),
        "clamp_min": lambda t: t.clamp_(min=1.1),
        "clamp_tensors": lambda t: t.clamp_(o["lo"], o["hi"]),
        "addcmul_": lambda t: t.addcmul_(o["full"], o["row"], value=0.5),
        "addcdiv_": lambda t: t.addcdiv_(o["full"], o["row"], value=-2.0),
        "lerp_": lambda t: t.lerp_(o["full"], 0.3),
        "lerp_tensor_weight": lambda t: t.lerp_(o["full"], o["row"]),
        "copy_": lambda t: t.copy_(o["row"]),
        "zero_": lambda t: t.zero_(),
        "fill_": lambda t: t.fill_(2.5),
        "fill_tensor": lambda t: t.fill_(o["scalar"]),
        "masked_fill_": lambda t: t.masked_fill_(lib.tensor(MASK), 0.5),
        "masked_fill_tensor": lambda t: t.masked_fill_(lib.tensor(MASK), o["scalar"]),
        "index_add_": lambda t: t.index_add_(1, idx([0, 2, 2]), o["cols3"], alpha=0.7),
        "scatter_": lambda t: t.scatter_(0, idx(SCATTER_INDEX), o["src"]),
        "scatter_value": lambda t: t.scatter_(0, idx(SCATTER_INDEX), value=-1.5),
        "scatter_add_": lambda t: t.scatter_add_(0, idx(SCATTER_ADD_INDEX), o["src"]),
        "+=": inplace_operator("+="),
        "-=": inplace_operator("-="),
        "*=": inplace_operator("*="),
        "/=": inplace_operator("/="),
        "setitem_row": setitem(1, o["row"]),
        "setitem_slice": setitem((slice(None), slice(1, 3)), o["cols2"]),
        "setitem_int_array": setitem(idx([0, 2]), o["row"]),
        "setitem_mask": setitem(lib.tensor(MASK), 0.25),
        "setitem_element": setitem((0, 3), o["scalar"]),
        "chain": lambda t: t.add_(1).mul_(o["row"]).relu_(),
    }


OPS = sorted(op_table(mg, {k: None for k in ("row", "full", "lo", "hi", "scalar", "cols3", "cols2", "src")}))


def operands(lib, grad, seed=3):
    row, full, lo, cols3, cols2, src = arrays(seed, (4,), (3, 4), (3, 4), (3, 3), (3, 2), (2, 4))
    values = {"row": row, "full": full, "lo": lo * 0.6, "hi": lo * 0.6 + 0.7, "scalar": np.array(1.75),
              "cols3": cols3, "cols2": cols2, "src": src}
    return {k: lib.tensor(v, dtype=lib.float64, requires_grad=grad) for k, v in values.items()}


# --------------------------------------------------------------------------- leaf under no_grad: values
def run_on_leaf(lib, name):
    """A float64 leaf that requires grad written in place by op ``name`` under no_grad: (whether the op returns
    the leaf itself, whether it is still a leaf requiring grad with no history, its values, its version)."""
    (start,) = arrays(0, (3, 4))
    p = lib.tensor(start, dtype=lib.float64, requires_grad=True)
    with lib.no_grad():
        returned = op_table(lib, operands(lib, grad=False))[name](p)
    return returned is p, bool(p.is_leaf and p.requires_grad and p.grad_fn is None), as_np(p), p._version


@pytest.mark.parametrize("name", OPS)
def test_inplace_on_leaf_under_no_grad_matches_torch(name):
    results = [run_on_leaf(mg, name), torch_result(lambda torch: run_on_leaf(torch, name), tolerance=(RTOL, 1e-15))]
    for returns_self, still_leaf, _, _ in results:
        assert returns_self
        assert still_leaf
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=RTOL, atol=1e-15)
    assert results[0][3] >= 1  # every write bumps the version


# --------------------------------------------------------------------------- non-leaf in a graph: gradients
def run_in_graph(lib, name, through):
    """A non-leaf h (or a view into one, ``through``) written in place by op ``name``; a non-linear loss
    of h afterwards. Returns h's values, the upstream-weighted loss's gradients of every leaf."""
    (start_a,) = arrays(0, (4, 5) if through == "slice" else (4, 3) if through == "transpose" else (3, 4))
    a = lib.tensor(start_a, dtype=lib.float64, requires_grad=True)
    ops = operands(lib, grad=True)
    h = a * 1.5
    target = {"none": lambda: h, "slice": lambda: h[1:, 1:], "transpose": lambda: h.t()}[through]()
    op_table(lib, ops)[name](target)
    upstream = lib.tensor(np.random.default_rng(11).standard_normal(tuple(h.shape)))
    loss = (h * h * upstream).sum() + (target.sin() * 0.5).sum()
    loss.backward()
    leaves = [a] + [ops[k] for k in sorted(ops)]
    return as_np(h), [None if t.grad is None else as_np(t.grad) for t in leaves]


def assert_same_run(name, through):
    h_mg, g_mg = run_in_graph(mg, name, through)
    h_th, g_th = torch_result(lambda torch: run_in_graph(torch, name, through), tolerance=(1e-11, 1e-13))
    np.testing.assert_allclose(h_mg, h_th, rtol=RTOL, atol=1e-15, err_msg="values")
    for i, (x, y) in enumerate(zip(g_mg, g_th)):
        if y is None or x is None:  # an unused operand: PyTorch leaves None, minigrad too (or zeros)
            assert x is None or not np.any(x), f"gradient {i}"
            assert y is None or not np.any(y), f"gradient {i}"
            continue
        np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-13, err_msg=f"gradient {i}")


@pytest.mark.parametrize("name", OPS)
def test_inplace_on_non_leaf_in_graph_matches_torch(name):
    assert_same_run(name, "none")


@pytest.mark.parametrize("through", ["slice", "transpose"])
@pytest.mark.parametrize("name", OPS)
def test_inplace_through_a_view_reaches_its_base(name, through):
    assert_same_run(name, through)


def test_a_wrong_write_region_would_be_caught():
    """The check above can fail: a write through a view whose base kept its old history gives another
    gradient than PyTorch's (so a silently stale base would not pass)."""
    torch = torch_or_skip()
    grads = []
    for lib, stale in ((mg, True), (torch, False)):
        a = lib.tensor(arrays(0, (3, 4))[0], requires_grad=True)
        h = a * 1.5
        if stale:
            with mg.no_grad():  # the write happens but autograd does not see it
                h[0].mul_(3.0)
        else:
            h[0].mul_(3.0)
        (h * h).sum().backward()
        grads.append(as_np(a.grad))
    assert not np.allclose(grads[0], grads[1])


# --------------------------------------------------------------------------- the examples
def test_saved_input_changed_after_forward_raises_like_torch():
    torch = torch_or_skip()
    errors = []
    for lib in (mg, torch):
        w = lib.tensor([1., 2, 3], requires_grad=True)
        x = lib.ones(3, dtype=lib.float64)
        y = (w * x).sum()
        x.add_(10)
        with pytest.raises(RuntimeError) as info:
            y.backward()
        errors.append(str(info.value))
    assert "modified by an inplace operation" in errors[0]
    assert "[minigrad.DoubleTensor [3]]" in errors[0] and "[torch.DoubleTensor [3]]" in errors[1]
    assert "MulBackward" in errors[0]


def version_situations(lib):
    """The real-world ways a saved tensor changes before backward; each returns the call that must raise."""
    def param_under_no_grad():
        p = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        y = (p * p).sum()
        with lib.no_grad():
            p.mul_(2)
        return y.backward

    def optimizer_step_between():
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh() if hasattr(lib.nn, "Tanh") else lib.nn.ReLU(),
                                  lib.nn.Linear(4, 1)).double()
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        x = lib.tensor(np.ones((2, 3)))
        loss_a, loss_b = model(x).sum(), (model(x) ** 2).sum()
        loss_a.backward()
        opt.step()
        return loss_b.backward

    def write_through_view():
        a = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
        h = a * 2
        y = h.sin()       # saves h
        v = h[1:]
        v.zero_()
        return y.sum().backward

    def setitem_on_saved_output():
        a = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
        y = a.exp()       # saves its output
        y[0] = 5.0
        return y.sum().backward

    def data_of_saved_param():
        p = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        y = (p.sin()).sum()
        p.data.add_(1)    # hidden from autograd in both libraries (see the test below)
        return y.backward

    return {"param_under_no_grad": param_under_no_grad, "optimizer_step_between": optimizer_step_between,
            "write_through_view": write_through_view, "setitem_on_saved_output": setitem_on_saved_output}


@pytest.mark.parametrize("situation", ["param_under_no_grad", "optimizer_step_between", "write_through_view",
                                       "setitem_on_saved_output"])
def test_every_version_situation_raises_like_torch(situation):
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as th:
        version_situations(torch)[situation]()()
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as ours:
        version_situations(mg)[situation]()()
    def named(message):  # "[torch.DoubleTensor [4, 1]]" -> ("DoubleTensor", the sizes sorted)
        kind, sizes = message.split("[", 1)[1].split("]]", 1)[0].split(" [")
        return kind.split(".")[1], sorted(int(n) for n in sizes.split(",") if n.strip())
    # the same tensor, by type and sizes (PyTorch may name a transposed view of it, e.g. weight.t())
    assert named(str(ours.value)) == named(str(th.value))


def test_writes_through_data_are_invisible_to_autograd_as_in_torch():
    """PyTorch's ``.data`` does not share the version counter: a write through it is not caught, and the backward
    uses the new values (d sum(sin p)/dp = cos of the written p)."""
    torch = torch_or_skip()
    grads = []
    for lib in (mg, torch):
        p = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        y = p.sin().sum()
        p.data.add_(1)
        y.backward()
        grads.append(as_np(p.grad))
    np.testing.assert_allclose(grads[0], np.cos([2., 3.]), rtol=1e-12)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_modifying_what_no_backward_saved_is_allowed():
    torch = torch_or_skip()
    grads = []
    for lib in (mg, torch):
        a = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
        h = a * 2
        y = h + 1           # add saves nothing
        h.add_(5)
        (y * lib.tensor([1., -2., 0.5], dtype=lib.float64)).sum().backward()
        grads.append(as_np(a.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=RTOL)


def test_leaf_rules_and_expanded_tensors_raise_torchs_errors():
    torch = torch_or_skip()
    cases = {
        "leaf": lambda lib: lib.tensor([1., 2.], requires_grad=True).add_(1),
        "view of leaf": lambda lib: lib.tensor([1., 2.], requires_grad=True)[0].mul_(2),
        "expanded": lambda lib: lib.ones(3).expand(2, 3).add_(1),
        "int result": lambda lib: lib.tensor([1, 2]).mul_(1.5),
        "int division": lambda lib: lib.tensor([1, 2]).div_(2),
        "broadcast grows": lambda lib: lib.zeros(3).add_(lib.ones(2, 3)),
        "float exp into int": lambda lib: lib.tensor([1, 2]).exp_(),
    }
    for name, case in cases.items():
        with pytest.raises(RuntimeError) as th:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(mg)
        assert str(ours.value).split(".")[0] == str(th.value).split(".")[0], name


def test_under_no_grad_a_leaf_may_be_written():
    p = mg.tensor([1., 2.], requires_grad=True)
    with mg.no_grad():
        p.mul_(3).add_(1)
    np.testing.assert_array_equal(p.numpy() if not p.requires_grad else p.detach().numpy(), [4., 7.])
    assert p.is_leaf and p.grad_fn is None


def test_nothing_changes_when_an_inplace_op_refuses():
    t = mg.tensor([1, 2, 3])
    before = t._version
    for bad in (lambda: t.add_(0.5), lambda: t.add_(mg.ones(2, 3)), lambda: t.fill_(mg.ones(2))):
        with pytest.raises(RuntimeError):
            bad()
    np.testing.assert_array_equal(t.numpy(), [1, 2, 3])
    assert t._version == before


# --------------------------------------------------------------------------- .data
def test_data_idioms_match_torch():
    torch = torch_or_skip()
    out = []
    for lib in (mg, torch):
        p = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        p.grad = lib.tensor([[0.5, -1.], [2., 0.25]])
        p.data.add_(p.grad, alpha=-0.1)
        q = lib.zeros(2, 2)
        q.data.copy_(p.data)
        logits = lib.tensor([[1., 3., 2.], [4., 0., 1.], [0., 0., 5.]])
        pred = logits.data.max(1)[1]
        correct = pred.eq(lib.tensor([1, 0, 1])).sum().item()
        d = p.data
        out.append((as_np(p), as_np(q), as_np(pred), correct, d.requires_grad, d.grad_fn is None, p.is_leaf))
    for x, y in zip(*out):
        np.testing.assert_allclose(x, y, rtol=RTOL) if isinstance(x, np.ndarray) else None
        assert isinstance(x, np.ndarray) or x == y


def test_data_shares_memory_and_is_outside_the_graph():
    p = mg.tensor([1., 2., 3.], requires_grad=True)
    d = p.data
    assert isinstance(d, mg.Tensor) and not d.requires_grad and d.grad_fn is None
    d[0] = 10.0
    assert p.detach().numpy()[0] == 10.0
    assert np.shares_memory(p.detach().numpy(), np.asarray(d))


def test_data_normal_init_and_assignment():
    torch = torch_or_skip()
    p = mg.empty(200, 300)
    p.data.normal_(0, 0.02)
    values = p.numpy()
    assert abs(values.mean()) < 0.02 * 5 / np.sqrt(values.size) and abs(values.std() - 0.02) < 0.001
    shapes = []
    for lib in (mg, torch):
        w = lib.tensor([1., 2.], requires_grad=True)
        w.data = lib.tensor([[1., 2., 3.]])
        shapes.append((tuple(w.shape), w.requires_grad, w.is_leaf))
        with pytest.raises(TypeError):
            w.data = np.zeros(2)
    assert shapes[0] == shapes[1]


def test_numpy_and_asarray_stay_zero_copy():
    t = mg.tensor([1., 2.])
    assert np.shares_memory(t.numpy(), np.asarray(t))
    assert not np.shares_memory(np.array(t), t.numpy())


# --------------------------------------------------------------------------- random fills, clone, detach_
@pytest.mark.parametrize("fill", ["uniform_", "normal_", "bernoulli_", "exponential_"])
def test_random_fills_return_self_and_cut_the_old_gradient(fill):
    torch = torch_or_skip()
    grads = []
    for lib in (mg, torch):
        a = lib.tensor(arrays(0, (400,))[0], requires_grad=True)
        h = a * 2
        returned = getattr(h, fill)()
        assert returned is h and h.requires_grad
        (h * a).sum().backward()   # d/da: 2 * 0 (old h overwritten) + h
        grads.append((as_np(a.grad), as_np(h)))
    np.testing.assert_allclose(grads[0][0], grads[0][1], rtol=RTOL)   # only the direct path remains
    stats = {"uniform_": (0.5, 1 / 12), "normal_": (0.0, 1.0), "bernoulli_": (0.5, 0.25), "exponential_": (1.0, 1.0)}
    mean, var = stats[fill]
    values = grads[0][1]
    assert abs(values.mean() - mean) < 5 * np.sqrt(var / values.size)


def test_generator_makes_random_fills_reproducible():
    a, b = mg.empty(5), mg.empty(5)
    a.normal_(generator=np.random.default_rng(3))
    b.normal_(generator=np.random.default_rng(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_clone_is_a_differentiable_copy_and_detach_in_place_cuts():
    torch = torch_or_skip()
    out = []
    for lib in (mg, torch):
        a = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
        c = a.clone()
        c.mul_(2)
        (c * c).sum().backward()
        d = (a * 3).detach_()
        out.append((as_np(a.grad), as_np(a), d.requires_grad, d.is_leaf))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=RTOL)
    np.testing.assert_array_equal(out[0][1], [1., 2., 3.])   # the clone's write did not reach a
    assert out[0][2:] == out[1][2:]
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (mg.tensor([1., 2.], requires_grad=True) * 1)[0:1].detach_()


# --------------------------------------------------------------------------- library internals write in place
def test_optimizers_and_init_bump_versions():
    model = mg.nn.Linear(3, 2)
    before = model.weight._version
    mg.nn.init.normal_(model.weight)
    assert model.weight._version == before + 1
    model(mg.ones(4, 3)).sum().backward()
    for opt in (mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), mg.optim.AdamW(model.parameters())):
        v = model.weight._version
        opt.step()
        assert model.weight._version > v
    v = model.weight.grad._version
    mg.nn.utils.clip_grad_norm_(model.parameters(), 1e-3)
    assert model.weight.grad._version == v + 1


# --------------------------------------------------------------------------- hypothesis: mixed programs
STEPS = ["mul", "add", "tanh", "sigmoid", "mul_", "add_", "tanh_", "sigmoid_", "setitem", "view_mul_",
         "view_add_", "clamp_", "clone", "sub_alpha", "t_view_add_"]


def program_output(lib, program, a, b):
    """Run ``program`` (a list of STEPS) on h = a * 1 with operand b; return h."""
    h = a * 1.0
    for step in program:
        if step == "mul":
            h = h * b
        elif step == "add":
            h = h + b
        elif step == "tanh":
            h = h.tanh()
        elif step == "sigmoid":
            h = h.sigmoid()
        elif step == "mul_":
            h.mul_(b)
        elif step == "add_":
            h.add_(b)
        elif step == "tanh_":
            h.tanh_()
        elif step == "sigmoid_":
            h.sigmoid_()
        elif step == "setitem":
            h[1] = b * 0.5
        elif step == "view_mul_":
            h[:, 1:3].mul_(b[:2])
        elif step == "view_add_":
            h[0].add_(b)
        elif step == "clamp_":
            h.clamp_(-0.9, 0.9)
        elif step == "clone":
            h = h.clone()
        elif step == "sub_alpha":
            h.sub_(b, alpha=0.5)
        elif step == "t_view_add_":
            h.t()[2].add_(b[1:])
    return h


A, B = arrays(1, (3, 4), low=-1, high=1)[0], arrays(2, (4,))[0]
UPSTREAM = np.random.default_rng(5).standard_normal((3, 4))


def run_program(lib, program):
    a, b = lib.tensor(A, requires_grad=True), lib.tensor(B, requires_grad=True)
    h = program_output(lib, program, a, b)
    (h * h * lib.tensor(UPSTREAM)).sum().backward()
    return as_np(h), as_np(a.grad) if a.grad is not None else None, as_np(b.grad) if b.grad is not None else None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(STEPS), min_size=1, max_size=8))
def test_programs_mixing_inplace_and_out_of_place_match_torch(program):
    """Values and gradients equal PyTorch's, and minigrad refuses exactly where PyTorch does (an in-place op
    overwrote what an earlier one saved, e.g. the output of ``h.tanh_()`` before ``.mul_(b)``)."""
    torch = torch_or_skip()
    results = []
    for lib in (mg, torch):
        try:
            results.append(run_program(lib, program))
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            results.append(None)
    assert (results[0] is None) == (results[1] is None), f"PyTorch refused: {results[1] is None}"
    if results[1] is None:
        return
    for x, y in zip(*results):
        if y is None:
            assert x is None or not np.any(x)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64", "float16", "float32", "complex64"])
def test_in_place_lerp_and_addcmul_refuse_what_their_twins_refuse(dtype):
    """lerp_ with a number weight has no integer or bool kernel, addcmul_ none in bool: refused as the out-of-place
    ops refuse, before anything is written (they computed, or raised NumPy's TypeError for bool)."""
    torch = torch_or_skip()
    calls = {"lerp_": lambda x: x.lerp_(x.clone(), 0.5), "lerp_ int weight": lambda x: x.lerp_(x.clone(), 1),
             "addcmul_": lambda x: x.addcmul_(x.clone(), x.clone()),
             "addcdiv_": lambda x: x.addcdiv_(x.clone(), x.clone())}
    for name, call in calls.items():
        outcomes = []
        for lib in (torch, mg):
            x = lib.ones(3, dtype=getattr(lib, dtype))
            try:
                call(x)
                outcomes.append(("ran", x.tolist()))
            except (RuntimeError, NotImplementedError, TypeError) as error:
                outcomes.append((type(error).__name__, x.tolist()))      # x unchanged by a refused write
        assert outcomes[1] == outcomes[0], f"{name}: {outcomes[1]}, PyTorch {outcomes[0]}"
