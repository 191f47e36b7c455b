"""Memory layout: stride(), is_contiguous(), contiguous(), memory formats through to/clone/Module.to, the layout
of .grad, storage_offset/data_ptr/nbytes/itemsize, each against PyTorch."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

from .mirror import check_grad, torch_or_skip

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def randn(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(shape, seed=0):
    torch = torch_or_skip()
    x = randn(shape, seed)
    return mg.tensor(x), torch.tensor(x)


def views(lib, t):
    """Tensors of several layouts made from the 4-D ``t`` the same way in both libraries."""
    return {"plain": t, "permuted": t.permute(0, 2, 3, 1), "sliced": t[:, 1:, ::2], "transposed": t.transpose(1, 3),
            "channels_last": t.to(memory_format=lib.channels_last), "expanded": t[:1].expand(3, -1, -1, -1),
            "one channel": t[:, :1]}


@pytest.mark.parametrize("name", ["plain", "permuted", "sliced", "transposed", "channels_last", "expanded",
                                  "one channel"])
def test_strides_and_contiguity_equal_pytorchs(name):
    torch = torch_or_skip()
    ours, theirs = both((2, 3, 4, 5))
    a, b = views(mg, ours)[name], views(torch, theirs)[name]
    assert a.stride() == b.stride()
    assert [a.stride(d) for d in range(-a.ndim, a.ndim)] == [b.stride(d) for d in range(-b.ndim, b.ndim)]
    assert a.storage_offset() == b.storage_offset()
    for fmt in ("contiguous_format", "channels_last"):
        assert a.is_contiguous(memory_format=getattr(mg, fmt)) == b.is_contiguous(memory_format=getattr(torch, fmt))
    assert a.is_contiguous() == b.is_contiguous()


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
@pytest.mark.parametrize("name", ["plain", "permuted", "sliced", "channels_last"])
def test_contiguous_to_and_clone_lay_out_as_pytorch(fmt, name):
    torch = torch_or_skip()
    ours, theirs = both((2, 3, 4, 5))
    a, b = views(mg, ours)[name], views(torch, theirs)[name]
    for make in (lambda t, lib: t.contiguous(memory_format=getattr(lib, fmt)),
                 lambda t, lib: t.to(memory_format=getattr(lib, fmt)),
                 lambda t, lib: t.clone(memory_format=getattr(lib, fmt)),
                 lambda t, lib: t.to(copy=True, memory_format=getattr(lib, fmt)),
                 lambda t, lib: t.to(lib.float32, memory_format=getattr(lib, fmt)),
                 lambda t, lib: t.clone()):
        if name in ("permuted", "sliced") and fmt == "channels_last":
            continue    # a 4-D permuted or sliced view: PyTorch and minigrad both copy, checked by values only
        out, expected = make(a, mg), make(b, torch)
        assert out.stride() == expected.stride()
        assert (out is a) == (expected is b)                # returned as it is exactly when PyTorch does
        np.testing.assert_array_equal(out.numpy(), expected.numpy())


@pytest.mark.parametrize("fmt", FORMATS)
def test_clone_owns_its_memory_in_every_format(fmt):
    """clone(memory_format=...) copies even when the input is laid out so already (it returned the input's own memory
    for a contiguous input asked for contiguous_format, so a write into the clone changed the input), and takes a 0-d
    tensor (which raised). PyTorch's clone always copies."""
    torch = torch_or_skip()
    for shape, layout in (((), "contiguous_format"), ((3,), "contiguous_format"), ((2, 3, 4, 5), "channels_last"),
                          ((2, 3, 2, 4, 5), "channels_last_3d")):
        if fmt not in ("contiguous_format", "preserve_format", layout):
            continue
        seen = []
        for lib in (mg, torch):
            x = lib.tensor(randn(shape)).contiguous(memory_format=getattr(lib, layout))
            y = x.clone(memory_format=getattr(lib, fmt))
            y.fill_(7.0)
            seen.append((x.numpy().copy(), y.stride(), x.data_ptr() != y.data_ptr()))
        np.testing.assert_array_equal(seen[0][0], randn(shape))       # the input as it was
        assert seen[0][1:] == seen[1][1:] == (seen[1][1], True), (shape, fmt)


@pytest.mark.parametrize("name", ["plain", "permuted", "sliced", "transposed", "channels_last", "expanded",
                                  "one channel", "permuted then sliced", "transposed then sliced", "expanded inside"])
def test_clone_preserves_a_layout_as_pytorch(name):
    """clone() keeps a dense layout's strides; any other (sliced, expanded) becomes dense in the order of its strides,
    an expanded dimension staying where a contiguous layout puts it (PyTorch's infer_dense_strides)."""
    torch = torch_or_skip()
    ours, theirs = both((2, 3, 4, 5))
    more = {"permuted then sliced": lambda t: t.permute(0, 2, 3, 1)[:, ::2],
            "transposed then sliced": lambda t: t[0, 0].t()[::2],
            "expanded inside": lambda t: t[:, :1].expand(-1, 3, -1, -1).transpose(1, 3)}
    a, b = ((views(mg, ours)[name], views(torch, theirs)[name]) if name not in more
            else (more[name](ours), more[name](theirs)))
    out, expected = a.clone(), b.clone()
    assert out.stride() == expected.stride()
    assert out.is_contiguous() == expected.is_contiguous() and (out.contiguous() is out) == (expected.contiguous()
                                                                                           is expected)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())    # exact by construction: both copy the same floats


BINARY_OPS = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
              "div": lambda a, b: a / (b * b + 1), "pow": lambda a, b: (a * a + 1) ** b,
              "maximum": lambda a, b: a.maximum(b), "atan2": lambda a, b: a.atan2(b), "lt": lambda a, b: a < b,
              "where": lambda a, b: a.where(a > b, b * 1.0)}


def layouts_of_one_shape(lib, t):
    """Operands of shape (2, 3, 4, 5) (or broadcasting to it) laid out differently, made alike in both libraries from
    the 4-D ``t`` of shape (2, 3, 8, 5)."""
    x = t[:, :, :4]
    return {"plain": x.contiguous(), "transposed": x.transpose(1, 3).contiguous().transpose(1, 3),
            "channels_last": x.contiguous(memory_format=lib.channels_last), "sliced": t[:, :, ::2],
            "reversed": x.permute(3, 2, 1, 0).contiguous().permute(3, 2, 1, 0), "expanded": x[:1].expand(2, -1, -1, -1),
            "a row": x[0, 0, 0], "one channel": x[:, :1], "a number": 1.5}


PAIRS = ["transposed, plain", "plain, transposed", "reversed, channels_last", "sliced, plain", "expanded, reversed",
         "channels_last, a row", "reversed, a number", "one channel, transposed", "a row, reversed"]


@pytest.mark.parametrize("op, pair", [(op, pair) for op in sorted(BINARY_OPS) for pair in PAIRS
                                      if not (pair.endswith("a number") and op in ("atan2", "maximum"))])
def test_a_binary_op_lays_its_result_out_as_pytorch(op, pair):
    """An elementwise op of two differently laid out operands: PyTorch's result is dense in the order the operands'
    strides give, the first operand that orders two dimensions deciding (a broadcast dimension orders nothing)."""
    torch = torch_or_skip()
    ours, theirs = both((2, 3, 8, 5))
    first, second = pair.split(", ")
    out, expected = ([BINARY_OPS[op](made[first], made[second]) for made in
                      (layouts_of_one_shape(mg, ours), layouts_of_one_shape(torch, theirs))])
    assert out.shape == tuple(expected.shape)
    assert out.stride() == expected.stride()
    assert (out.contiguous() is out) == (expected.contiguous() is expected)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)


def _functional(lib):
    return lib.nn.functional


# ops on a transposed input whose result layout PyTorch fixes: row-major (softmax, cat, roll, masked_fill, the
# cumulative ops) or the input's (elementwise ops, flip, sort, the *_like creators)
ONE_INPUT = {
    "softmax": lambda lib, x: _functional(lib).softmax(x, 1),
    "log_softmax": lambda lib, x: _functional(lib).log_softmax(x, 0),
    "cat": lambda lib, x: lib.cat([x, x]),
    "stack": lambda lib, x: lib.stack([x, x]),
    "roll": lambda lib, x: x.roll(1, 0),
    "masked_fill": lambda lib, x: x.masked_fill(x > 0, 1.0),
    "cumsum": lambda lib, x: x.cumsum(0),
    "cumprod": lambda lib, x: x.cumprod(1),
    "cummax": lambda lib, x: x.cummax(0)[1],
    "logcumsumexp": lambda lib, x: x.logcumsumexp(0),
    "flip": lambda lib, x: x.flip(0),
    "rot90": lambda lib, x: x.rot90(),
    "erf": lambda lib, x: x.erf(),
    "relu": lambda lib, x: x.relu(),
    "gelu": lambda lib, x: _functional(lib).gelu(x),
    "exp": lambda lib, x: x.exp(),
    "clamp": lambda lib, x: x.clamp(-0.5, 0.5),
    "sort": lambda lib, x: x.sort(1)[0],
    "sort indices": lambda lib, x: x.sort(0)[1],
    "argsort": lambda lib, x: x.argsort(1),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "empty_like": lambda lib, x: lib.empty_like(x, dtype=lib.float32),
    "full_like": lambda lib, x: lib.full_like(x, 2.0),
    "randn_like": lambda lib, x: lib.randn_like(x),
}


ZERO_D = {"softmax": lambda lib, x: x.softmax(0), "cumsum": lambda lib, x: x.cumsum(0),
          "cumprod": lambda lib, x: x.cumprod(0), "cummax": lambda lib, x: x.cummax(0)[1],
          "logcumsumexp": lambda lib, x: x.logcumsumexp(0), "roll": lambda lib, x: x.roll(1),
          "masked_fill": lambda lib, x: x.masked_fill(lib.tensor(True), 3.0), "flip": lambda lib, x: x.flip(0),
          "cat": lambda lib, x: lib.cat([x[None], x[None]]), "relu": lambda lib, x: x.relu()}


@pytest.mark.parametrize("op", list(ZERO_D))
def test_a_0d_input_keeps_its_shape_through_the_relayout(op):
    """(np.ascontiguousarray would make a 0-d result 1-d.)"""
    torch = torch_or_skip()
    ours, theirs = (ZERO_D[op](lib, lib.tensor(2.0, dtype=lib.float64)) for lib in (mg, torch))
    assert tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("op", list(ONE_INPUT))
def test_an_op_on_a_transposed_input_lays_its_result_out_as_pytorch(op):
    """Same strides, so view() succeeds or fails alike and contiguous() aliases or copies alike."""
    torch = torch_or_skip()
    ours, theirs = (lib.tensor(randn((3, 4))).t() for lib in (mg, torch))
    a, b = ONE_INPUT[op](mg, ours), ONE_INPUT[op](torch, theirs)
    assert a.stride() == b.stride() and a.is_contiguous() == b.is_contiguous()
    assert (a.contiguous() is a) == (b.contiguous() is b)


REDUCTIONS = {
    "sum": lambda lib, x, d, k: x.sum(d, keepdim=k), "mean": lambda lib, x, d, k: x.mean(d, keepdim=k),
    "prod": lambda lib, x, d, k: x.prod(d, keepdim=k), "amax": lambda lib, x, d, k: x.amax(d, keepdim=k),
    "var": lambda lib, x, d, k: x.var(d, keepdim=k), "std": lambda lib, x, d, k: x.std(d, keepdim=k),
    "norm": lambda lib, x, d, k: x.norm(dim=d, keepdim=k), "logsumexp": lambda lib, x, d, k: x.logsumexp(d, keepdim=k),
    "any": lambda lib, x, d, k: (x > 0).any(d, keepdim=k), "count_nonzero": lambda lib, x, d, k: x.count_nonzero(d),
    "nansum": lambda lib, x, d, k: x.nansum(d, keepdim=k), "nanmean": lambda lib, x, d, k: x.nanmean(d, keepdim=k),
    "nanmedian": lambda lib, x, d, k: x.nanmedian(d, keepdim=k).values,
    "max": lambda lib, x, d, k: x.max(d, keepdim=k).values,
}


@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_a_reduction_of_a_permuted_input_is_laid_out_as_pytorchs(op):
    """PyTorch's reductions along a dim return row-major results; NumPy's keep the input's order of dims, so a
    reduction of a permuted 3-D tensor was not contiguous where PyTorch's is (and view() of it raised). The strides
    of size-1 dims (keepdim) are not compared: view and contiguity ignore them."""
    torch = torch_or_skip()
    for shape, perm, d, keepdim in [((2, 3, 4), (2, 0, 1), 1, False), ((2, 3, 4), (1, 2, 0), 0, False),
                                    ((2, 3, 4), (2, 0, 1), 2, True), ((2, 1, 4), (2, 0, 1), 2, False)]:
        a, b = (REDUCTIONS[op](lib, lib.tensor(randn(shape)).permute(*perm), d, keepdim) for lib in (mg, torch))
        strides = [(n, s) for n, s in zip(b.shape, b.stride()) if n != 1]
        assert [(n, s) for n, s in zip(a.shape, a.stride()) if n != 1] == strides, (shape, perm, d, keepdim)
        assert a.is_contiguous() == b.is_contiguous()


@pytest.mark.parametrize("index", ["[None]", "[:, None]", "[0][None]", "[0, 0][None]", "[None, ::2]", "[..., None]",
                                   "[None, ..., None, 1]"])
def test_new_axes_of_an_index_have_pytorchs_strides(index):
    """x[None] and the like: PyTorch unsqueezes at the dim its indexing has reached (that dim's size times its stride,
    1 past the last dim); NumPy's stride there is 0."""
    torch = torch_or_skip()
    ours, theirs = both((3, 4))
    out, expected = eval("ours" + index), eval("theirs" + index)
    assert out.stride() == expected.stride()


@pytest.mark.parametrize("write", ["w[0:] = w[0:1]", "w[0:2] = w[1:3]", "w[None, 0:2] = w[None, 1:3]", "w[2:] = w[2][None]",
                                   "w[2:] = w[::4][1:]"])
def test_a_write_from_overlapping_memory_raises_as_in_pytorch(write):
    """A value overlapping the written memory: PyTorch refuses a partial overlap of two dense layouts, allows the very
    same layout (a copy), and checks nothing when the value is expanded to the target (it is not dense then)."""
    torch = torch_or_skip()
    outcomes = []
    for lib in (mg, torch):
        w = lib.arange(5.0)
        try:
            exec(write, {"w": w})
            outcomes.append(("ok", w.tolist()))
        except RuntimeError:
            outcomes.append("raised")
    assert outcomes[0] == outcomes[1]


ALIASING = {
    "reshape": lambda lib, x: x.reshape(-1),
    "flatten": lambda lib, x: x.flatten(),
    "flatten one dim": lambda lib, x: x.flatten(1, 1),
    "contiguous": lambda lib, x: x.contiguous(),
    "squeeze": lambda lib, x: x.squeeze(),
    "unflatten": lambda lib, x: x.unflatten(1, (1, x.shape[1])),
    "movedim": lambda lib, x: x.movedim(0, 1),
    "index ellipsis": lambda lib, x: x[...],
    "index list": lambda lib, x: x[[0]],
    "detach": lambda lib, x: x.detach(),
    "to same dtype": lambda lib, x: x.to(x.dtype),
    "type_as": lambda lib, x: x.type_as(x),
    "view as int64": lambda lib, x: x.view(lib.int64),
    "unfold": lambda lib, x: x.unfold(1, 2, 1),
    "split_with_sizes": lambda lib, x: x.split_with_sizes([1, x.shape[0] - 1])[1],
    "broadcast_to (sizes one by one)": lambda lib, x: x.broadcast_to(2, *x.shape),
    "roll by 0": lambda lib, x: x.roll(0),
}


@pytest.mark.parametrize("layout", ["plain", "transposed", "sliced"])
@pytest.mark.parametrize("op", list(ALIASING))
def test_an_op_returns_itself_a_view_or_a_copy_as_pytorch(op, layout):
    """Whether the result is the input itself, and whether a write through it reaches the input."""
    torch = torch_or_skip()

    def outcome(lib):
        x = lib.tensor(randn((2, 3)))
        x = {"plain": x, "transposed": lib.tensor(randn((3, 2))).t(),
             "sliced": lib.tensor(randn((2, 5)))[:, ::2]}[layout]
        y = ALIASING[op](lib, x)
        before = x.clone()
        if y.numel() and 0 not in y.stride():
            y[(0,) * y.ndim] = 100
        return y is x, bool((x != before).any()), tuple(y.shape)
    assert outcome(mg) == outcome(torch)


def test_copies_own_their_memory_and_views_share_it():
    x = mg.randn(2, 3, 4, 5)
    y = x.to(memory_format=mg.channels_last)
    assert y.data_ptr() != x.data_ptr() and x[:, 1].data_ptr() == x.data_ptr() + 20 * x.itemsize
    y.zero_()
    assert not y.numpy().any() and x.numpy().all()
    assert x.nbytes == 120 * 4 and x.itemsize == 4 and mg.zeros(3, dtype=mg.float64).nbytes == 24


@pytest.mark.parametrize("make, error, message", [
    (lambda: mg.randn(2, 3, 4).to(memory_format=mg.channels_last), RuntimeError,
     "required rank 4 tensor to use channels_last format"),
    (lambda: mg.randn(2, 3, 4).contiguous(memory_format=mg.channels_last), RuntimeError,
     "required rank 4 tensor to use channels_last format"),
    (lambda: mg.randn(2, 3, 4, 5).clone(memory_format=mg.channels_last_3d), RuntimeError,
     "required rank 5 tensor to use channels_last_3d format"),
    (lambda: mg.randn(2, 3, 4, 5).to(memory_format="channels_last"), TypeError,
     "to(): argument 'memory_format' must be minigrad.memory_format, not str"),
    (lambda: mg.randn(2, 3).stride(2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: nn.Conv3d(2, 2, 1).to(memory_format=mg.channels_last), RuntimeError,
     "required rank 4 tensor to use channels_last format"),
])
def test_bad_layout_requests_raise_pytorchs_errors(make, error, message):
    with pytest.raises(error, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]") + "$"):
        make()


def test_bad_layout_requests_raise_the_same_types_in_pytorch():
    torch = torch_or_skip()
    for make, error in [(lambda: torch.randn(2, 3, 4).to(memory_format=torch.channels_last), RuntimeError),
                        (lambda: torch.randn(2, 3).stride(2), IndexError),
                        (lambda: torch.nn.Conv3d(2, 2, 1).to(memory_format=torch.channels_last), RuntimeError)]:
        with pytest.raises(error):
            make()


def test_relayout_is_differentiable():
    check_grad(lambda x: (x.to(memory_format=mg.channels_last) * x.permute(0, 1, 3, 2).transpose(2, 3)).sum(1),
               randn((2, 3, 2, 3)))
    check_grad(lambda x: x.permute(0, 2, 3, 1).contiguous() ** 2, randn((2, 3, 2, 3)))


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
def test_module_to_memory_format_and_grad_layout_equal_pytorchs(fmt):
    torch = torch_or_skip()
    x = randn((2, 3, 6, 6), 1)
    results = []
    for lib in (mg, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Flatten(), lib.nn.Linear(64, 2))
        model = model.double().to(memory_format=getattr(lib, fmt))
        model.load_state_dict({k: lib.tensor(v) for k, v in results[0][0].items()} if results else model.state_dict())
        model.to(memory_format=getattr(lib, fmt))
        inp = lib.tensor(x).to(memory_format=getattr(lib, fmt)).requires_grad_()
        model(inp).pow(2).sum().backward()
        state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        results.append((state, [p.stride() for p in model.parameters()], [p.grad.stride() for p in model.parameters()],
                        inp.grad.stride(), [p.grad.numpy().copy() for p in model.parameters()]))
    (_, p_strides, g_strides, x_stride, grads), (_, tp_strides, tg_strides, tx_stride, tgrads) = results
    assert p_strides == tp_strides and g_strides == tg_strides and x_stride == tx_stride
    for ours, theirs in zip(grads, tgrads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_memory_formats_are_named_like_pytorchs():
    torch = torch_or_skip()
    for fmt in FORMATS:
        assert repr(getattr(mg, fmt)) == repr(getattr(torch, fmt)).replace("torch.", "minigrad.")
        assert isinstance(getattr(mg, fmt), mg.memory_format)
