"""Views and in-place writes behave as PyTorch's: each case runs as one function in both libraries and must give the
same values and gradients, or raise the same exception type. Where the right answer is easy to state, it is also
checked without PyTorch."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

RNG = np.random.default_rng(7)
A, W, V0, WEIGHTS = (RNG.standard_normal(3), RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2)),
                     RNG.standard_normal((2, 3)))


def _start(lib):
    return dict(a=lib.tensor(A.copy(), requires_grad=True), w=lib.tensor(W.copy(), requires_grad=True),
                v0=lib.tensor(V0.copy()), W=lib.tensor(WEIGHTS.copy()))


def _outcome(lib, case):
    try:
        result = case(lib, **_start(lib))
    except Exception as error:   # compared by type with PyTorch's
        return type(error).__name__
    return [None if r is None else r if isinstance(r, (bool, str)) else np.asarray(r.detach().numpy()).copy()
            for r in (result if isinstance(result, (list, tuple)) else [result])]


def expand_then_write(lib, a, w, v0, W):
    h = a * 1
    e = h.expand(2, 3)
    h.mul_(2)
    (e * W).sum().backward()
    return a.grad


def hook_on_same_shape_view(lib, a, w, v0, W):
    h = a * 1
    h.t().register_hook(lambda g: g * 2)
    (h * W[0]).sum().backward()
    return a.grad


def same_shape_views_are_new_tensors(lib, a, w, v0, W):
    h = a * 1
    return [h.view(3) is h, h.reshape(3) is h, h.expand(3) is h, h.squeeze(0) is h, h.t() is h, h.view(3).is_leaf]


def narrow_diagonal_then_fill(lib, a, w, v0, W):
    v0.add_(w)
    v1 = v0.narrow(-1, -2, 1)
    v2 = v1.diagonal(0, 0, 1)
    v0.fill_(-2)
    (v2 * 3).sum().backward()
    return w.grad


def saved_diagonal_written(lib, a, w, v0, W):
    v2 = v0.diagonal() * w[0]
    v0[1, 1] = 100
    v2.sum().backward()
    return w.grad


def retain_grad_then_write(lib, a, w, v0, W):
    h = a * 1
    h.retain_grad()
    h.mul_(3)
    (h * W[0]).sum().backward()
    return h.grad, a.grad


def retain_grad_then_write_through_view(lib, a, w, v0, W):
    h = a * 1
    h.retain_grad()
    h[1:].mul_(3)
    (h * W[0]).sum().backward()
    return h.grad, a.grad


def view_before_base_requires_grad(lib, a, w, v0, W):
    v1 = v0.view(4)
    v0.mul_(w)
    flags = [v1.requires_grad, v1.is_leaf]
    (v1 * lib.arange(4.0, dtype=lib.float64)).sum().backward()
    return flags + [w.grad]


def write_into_unbind_output(lib, a, w, v0, W):
    x, y = (w * 1).unbind(0)
    x.mul_(2)


def write_into_split_output(lib, a, w, v0, W):
    x, y = (w * 1).split(1)
    x.mul_(2)


def write_into_chunk_output(lib, a, w, v0, W):
    x, y = (w * 1).chunk(2)
    x.add_(1)


def view_made_under_no_grad(lib, a, w, v0, W):
    h = w * 1
    with lib.no_grad():
        v = h.view(4)
    flag = v.requires_grad
    v.mul_(2)
    return flag


def view_made_under_no_grad_flag(lib, a, w, v0, W):
    h = w * 1
    with lib.no_grad():
        v = h.view(4)
    return [v.requires_grad, v.is_leaf, v._base is h]


def view_of_non_contiguous(lib, a, w, v0, W):
    return W.t().view(6)


def write_overlapping_source(lib, a, w, v0, W):
    v0[lib.tensor([1, 0])] = v0


def write_partly_overlapping(lib, a, w, v0, W):
    x = lib.arange(6.0)
    x[1:].add_(x[:-1])


def write_into_empty_view_of_leaf(lib, a, w, v0, W):
    a[:0].mul_(2)


def grad_of_nothing(lib, a, w, v0, W):
    return lib.autograd.grad((a * 2).sum(), [])


def permute_without_dims(lib, a, w, v0, W):
    return lib.tensor(1.0).permute()


def expand_without_sizes(lib, a, w, v0, W):
    return lib.tensor(1.0).expand()


def write_into_expand_adding_unit_dims(lib, a, w, v0, W):
    x = lib.zeros(3)
    x.expand(1, 3).mul_(2)
    return x


def fill_overlapping_expand(lib, a, w, v0, W):
    x = lib.zeros(3, 1)
    v = x.expand(3, 4)
    v.fill_(2)
    return x


def zero_overlapping_expand(lib, a, w, v0, W):
    x = lib.ones(3, 1)
    x.expand(3, 4).zero_()
    return x


def add_into_overlapping_expand(lib, a, w, v0, W):
    lib.zeros(3, 1).expand(3, 4).add_(1)


def copy_from_number(lib, a, w, v0, W):
    x = lib.zeros(3)
    x.copy_(2.0)
    return x


def select_view(lib, a, w, v0, W):
    s = W.select(1, 2)
    s.mul_(2)
    return s, W, W.select(0, -1)


def select_out_of_range(lib, a, w, v0, W):
    return W.select(0, 5)


def grad_fills_retained(lib, a, w, v0, W):
    h = a * 2
    h.retain_grad()
    g = lib.autograd.grad((h * h).sum(), [a])
    return g[0], h.grad


def grad_of_hooked_non_leaf(lib, a, w, v0, W):
    h = a * 2
    h.register_hook(lambda g: g * 10)
    return lib.autograd.grad((h * h).sum(), [h])


def empty_view_gradient(lib, a, w, v0, W):
    h = a * 1
    return lib.autograd.grad((h[:0] * 2).sum(), [h], allow_unused=True)


def grad_skips_unneeded_nodes(lib, a, w, v0, W):
    h = a * 1
    y = h * h            # saves h
    h.mul_(2)            # y's backward would raise; autograd.grad w.r.t. w never runs it
    z = (w * 3).sum() + y.sum()
    return lib.autograd.grad(z, [w])


def mul_into_itself(lib, a, w, v0, W):
    h = a * 1
    h.mul_(h)
    h.sum().backward()


def tanh_in_place_then_written(lib, a, w, v0, W):
    h = a * 1
    h.tanh_()
    h.mul_(2)
    h.sum().backward()


def view_dtype(lib, a, w, v0, W):
    x = lib.tensor([1.0, -2.0], dtype=lib.float32)
    return x.view(lib.int32), x.view(lib.int64).shape == (1,)


CASES = [expand_then_write, hook_on_same_shape_view, same_shape_views_are_new_tensors, narrow_diagonal_then_fill,
         saved_diagonal_written, retain_grad_then_write, retain_grad_then_write_through_view,
         view_before_base_requires_grad, write_into_unbind_output, write_into_split_output, write_into_chunk_output,
         view_made_under_no_grad, view_made_under_no_grad_flag, view_of_non_contiguous, write_overlapping_source,
         write_partly_overlapping, write_into_empty_view_of_leaf, grad_of_nothing, permute_without_dims,
         expand_without_sizes, write_into_expand_adding_unit_dims, fill_overlapping_expand, zero_overlapping_expand,
         add_into_overlapping_expand, copy_from_number, select_view, select_out_of_range, grad_fills_retained,
         grad_of_hooked_non_leaf, empty_view_gradient, grad_skips_unneeded_nodes, mul_into_itself,
         tanh_in_place_then_written, view_dtype]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_behaves_as_pytorch(case):
    torch = torch_or_skip()
    want, got = _outcome(torch, case), _outcome(mg, case)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want, f"PyTorch: {want}, minigrad: {got}"
        return
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        else:
            assert g == w


# --------------------------------------------------------------------------- the right answers, without PyTorch
def test_expanded_view_written_through_its_base_sums_the_repeats():
    """e = h.expand(2, 3) after h.mul_(2) is 2a broadcast: d sum(e * W)/da = 2 * W.sum(0)."""
    (grad,) = _outcome(mg, expand_then_write)
    np.testing.assert_allclose(grad, 2 * WEIGHTS.sum(0), rtol=1e-12)


def test_a_hook_on_an_unused_view_changes_nothing():
    """h.t() of a 1-d h is a new tensor; its hook never fires since the loss does not use it: a.grad = W[0]."""
    (grad,) = _outcome(mg, hook_on_same_shape_view)
    np.testing.assert_allclose(grad, WEIGHTS[0], rtol=1e-12)


def test_retained_grad_belongs_to_the_current_values():
    """After h.mul_(3), h.grad is d loss/d h (new) = W[0]; a.grad = 3 W[0]."""
    h_grad, a_grad = _outcome(mg, retain_grad_then_write)
    np.testing.assert_allclose(h_grad, WEIGHTS[0], rtol=1e-12)
    np.testing.assert_allclose(a_grad, 3 * WEIGHTS[0], rtol=1e-12)


def test_a_view_follows_its_base_into_the_graph():
    """v1 = v0.view(4) before v0.mul_(w): v1 is v0 * w flattened, so w.grad = v0 * arange(4).reshape(2, 2)."""
    requires_grad, is_leaf, grad = _outcome(mg, view_before_base_requires_grad)
    assert requires_grad is True and is_leaf is False
    np.testing.assert_allclose(grad, V0 * np.arange(4.0).reshape(2, 2), rtol=1e-12)


@pytest.mark.parametrize("case", [write_into_unbind_output, write_into_split_output, view_made_under_no_grad,
                                  view_of_non_contiguous, write_overlapping_source, write_partly_overlapping,
                                  write_into_empty_view_of_leaf, grad_of_nothing, saved_diagonal_written,
                                  mul_into_itself, tanh_in_place_then_written, add_into_overlapping_expand],
                         ids=lambda c: c.__name__)
def test_refused_as_pytorch_refuses(case):
    assert _outcome(mg, case) == "RuntimeError"


@pytest.mark.parametrize("case", [permute_without_dims, expand_without_sizes], ids=lambda c: c.__name__)
def test_missing_sizes_are_type_errors(case):
    assert _outcome(mg, case) == "TypeError"


def test_writes_pytorch_allows():
    np.testing.assert_array_equal(_outcome(mg, write_into_expand_adding_unit_dims)[0], np.zeros(3))
    np.testing.assert_array_equal(_outcome(mg, fill_overlapping_expand)[0], np.full((3, 1), 2.0))
    np.testing.assert_array_equal(_outcome(mg, zero_overlapping_expand)[0], np.zeros((3, 1)))
    np.testing.assert_array_equal(_outcome(mg, copy_from_number)[0], np.full(3, 2.0))
    s, w, last = _outcome(mg, select_view)
    np.testing.assert_allclose(s, 2 * WEIGHTS[:, 2])
    np.testing.assert_allclose(w[:, 2], 2 * WEIGHTS[:, 2])
    np.testing.assert_allclose(last, w[-1])


def test_autograd_grad_fills_retained_grad_and_skips_unneeded_nodes():
    g, h_grad = _outcome(mg, grad_fills_retained)
    np.testing.assert_allclose(g, 8 * A, rtol=1e-12)         # d sum((2a)^2)/da = 8a
    np.testing.assert_allclose(h_grad, 4 * A, rtol=1e-12)    # d sum(h^2)/dh = 2h = 4a
    (gw,) = _outcome(mg, grad_skips_unneeded_nodes)
    np.testing.assert_allclose(gw, np.full((2, 2), 3.0))
    (empty,) = _outcome(mg, empty_view_gradient)
    np.testing.assert_array_equal(empty, np.zeros(3))


def _zero_dim_results(lib):
    """Ops that work on a 0-d input as on one element and return a 0-d result (PyTorch's is a tensor of its own;
    not so an unbatched ctc_loss without reduction, a view in both libraries)."""
    F, t = lib.nn.functional, lib.tensor(0.7, requires_grad=True)
    pair = lib.tensor([0.3, 0.7], requires_grad=True)
    return {
        "silu": lambda: F.silu(t), "index_select": lambda: t.index_select(0, lib.tensor([0])),
        "cumsum": lambda: t.cumsum(0), "cumprod": lambda: t.cumprod(0), "logcumsumexp": lambda: t.logcumsumexp(0),
        "cummax": lambda: lib.cummax(t, 0).values, "cummin": lambda: lib.cummin(t, 0).values,
        "max": lambda: t.max(0).values, "min": lambda: t.min(0).values, "kthvalue": lambda: t.kthvalue(1, 0).values,
        "median": lambda: t.median(0).values, "mode": lambda: t.mode(0).values,
        "multi_margin_loss": lambda: F.multi_margin_loss(pair, lib.tensor(1), reduction="none"),
        "multilabel_margin_loss": lambda: F.multilabel_margin_loss(pair, lib.tensor([1, -1]), reduction="none"),
    }


@pytest.mark.parametrize("op", list(_zero_dim_results(mg)))
def test_a_zero_dim_result_is_no_view(op):
    """A 0-d input's result is the op's own tensor, not a view of an intermediate: ``_is_view()`` is False, and
    ``detach_()`` (which refuses views) works, as in PyTorch (fuzzer seed 3,114,191: cumsum)."""
    out = _zero_dim_results(mg)[op]()
    assert out.shape == () and not out._is_view() and out._base is None
    assert out.detach_() is out and not out.requires_grad
    torch = torch_or_skip()
    assert not _zero_dim_results(torch)[op]()._is_view()


# --------------------------------------------------------------------------- strides of views
def _view_chain(lib, x, rng):
    """One random view of ``x``: the ops whose strides along size-1 dims (or of empty tensors) NumPy may choose
    otherwise than PyTorch."""
    nd, c = x.ndim, int(rng.integers(12))
    if c == 0:
        return x.unsqueeze(int(rng.integers(nd + 1)))
    if c == 1 and nd:
        return x.squeeze(int(rng.integers(nd)))
    if c == 2 and nd >= 2:
        a, b = rng.choice(nd, 2, replace=False)
        return x.transpose(int(a), int(b))
    if c == 3 and nd:
        d = int(rng.integers(nd))
        return x.narrow(d, 0, int(rng.integers(1, x.shape[d] + 1)))
    if c == 4:
        return x.reshape(-1)
    if c == 5 and nd:
        shape = list(x.shape)
        shape.insert(int(rng.integers(nd + 1)), 1)
        return x.view(tuple(shape))
    if c == 6 and nd and x.shape[0]:
        return x.select(0, int(rng.integers(x.shape[0])))
    if c == 7:
        return x[None]
    if c == 8 and nd:
        return x.flatten(int(rng.integers(nd)))
    if c == 9 and nd:
        d = int(rng.integers(nd))
        return x.unflatten(d, (1, x.shape[d]))
    if c == 10 and nd >= 2:
        return x.movedim(0, -1)
    return x.view(tuple(x.shape))


def test_view_strides_are_pytorchs():
    """Chains of up to five views from tensors of up to three small dims: every view's stride(), size-1 dims
    included, is PyTorch's (view and reshape follow its computeStride, squeeze keeps the other dims' strides). Empty
    tensors are left out: NumPy makes them with zero strides (docs/differences.md)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    wrong, compared = [], 0
    for _ in range(1500):
        shape = tuple(int(s) for s in rng.integers(1, 4, rng.integers(0, 4)))
        seed = int(rng.integers(1 << 30))
        ours, theirs, made = mg.zeros(shape), torch.zeros(shape), []
        for r_ours, r_theirs in [(np.random.default_rng(seed + k), np.random.default_rng(seed + k)) for k in range(5)]:
            try:
                theirs = _view_chain(torch, theirs, r_theirs)
            except RuntimeError:
                break
            ours = _view_chain(mg, ours, r_ours)
            made.append(tuple(theirs.shape))
            compared += 1
            if tuple(ours.shape) != tuple(theirs.shape) or ours.stride() != theirs.stride():
                wrong.append(f"{shape} -> {made}: {ours.stride()}, PyTorch {theirs.stride()}")
                break
    assert compared > 5000
    assert not wrong, f"{len(wrong)} differ:\n" + "\n".join(wrong[:10])


def test_view_strides_along_size_one_dims_without_torch():
    """PyTorch's strides (as PyTorch 2.13 reports them) for views whose size-1 dims NumPy strided otherwise."""
    assert mg.zeros(2, 3).unfold(1, 3, 1).view(2, 1, 3).stride() == (3, 3, 1)      # NumPy kept (3, 1, 1)
    assert mg.zeros(3, 1).t().unsqueeze(0).view(1, 1, 3).stride() == (3, 3, 1)      # NumPy: (1, 1, 1)
    assert mg.zeros(1, 3, 1).permute(0, 2, 1).squeeze(0).stride() == (1, 1)         # NumPy: (3, 1)
    assert mg.zeros(1, 3, 1).permute(1, 0, 2).squeeze(2).stride() == (1, 3)         # NumPy: (1, 1)


def test_a_write_between_views_that_differ_only_in_size_one_strides_is_refused():
    """x.add_(y) where x and y cover the same memory with different strides along a size-1 dim: PyTorch counts that
    as a partial overlap and refuses it (the view fuzzer's seed 6,031,014)."""
    y = mg.zeros(2, 3).unfold(1, 3, 1)                 # (2, 1, 3), strides (3, 1, 1)
    x = y.view_as(y)                                   # PyTorch's view of it: strides (3, 3, 1)
    assert x.stride() == (3, 3, 1)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x.add_(y)
