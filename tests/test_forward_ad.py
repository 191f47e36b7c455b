"""minigrad.autograd.forward_ad against torch.autograd.forward_ad: tangents of common programs (float64, random
tangents), levels, errors and their texts, views, in-place ops, requires_grad, no_grad, mixing with backward(); and a
few checks without PyTorch (central finite differences)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwad

from .mirror import torch_or_skip

RTOL, ATOL = 1e-10, 1e-12


def _fwad(lib):
    return lib.autograd.forward_ad


def _arrays(rng, shapes):
    return [rng.standard_normal(s) for s in shapes]


def _dual_run(lib, program, primals, tangents):
    """program(lib, *duals) inside a level: (primal values, tangent values or None)."""
    ad = _fwad(lib)
    with ad.dual_level():
        duals = [ad.make_dual(lib.tensor(p), lib.tensor(t)) if t is not None else lib.tensor(p)
                 for p, t in zip(primals, tangents)]
        out = program(lib, *duals)
        primal, tangent = ad.unpack_dual(out)
        return primal.detach().numpy().copy(), None if tangent is None else tangent.detach().numpy().copy()


def _check_against_torch(program, shapes, rng, dual=None):
    torch = torch_or_skip()
    primals = _arrays(rng, shapes)
    tangents = [t if dual is None or i in dual else None for i, t in enumerate(_arrays(rng, shapes))]
    ours = _dual_run(mg, program, primals, tangents)
    theirs = _dual_run(torch, program, primals, tangents)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=RTOL, atol=ATOL)
    assert theirs[1] is not None and ours[1] is not None
    assert ours[1].shape == theirs[1].shape
    np.testing.assert_allclose(ours[1], theirs[1], rtol=RTOL, atol=ATOL)


def _F(lib):
    return lib.nn.functional


PROGRAMS = {
    "sin_mul_exp": ([(3, 4), (3, 4)], lambda L, a, b: a.sin() * b.exp() - a / (1.5 + b.tanh())),
    "pow_sqrt_log": ([(5,)], lambda L, a: (a * a + 1).sqrt().log() + a.abs() ** 1.5),
    "sigmoid_clamp_where": ([(6,), (6,)], lambda L, a, b: L.where(a > 0, a.sigmoid(), b.clamp(-0.5, 0.5))),
    "broadcast": ([(3, 1), (4,), (2, 1, 1)], lambda L, a, b, c: a * b + c - a / (2 + b.cos())),
    "sum_mean_var": ([(3, 4, 5)], lambda L, a: a.sum(dim=1) + a.mean(dim=(1,), keepdim=True)[:, 0]
                     + a.var(dim=1)),
    "max_logsumexp_norm": ([(4, 5)], lambda L, a: a.max(dim=1).values + a.logsumexp(dim=1) + a.norm(dim=1)),
    "prod_cumsum": ([(3, 4)], lambda L, a: a.prod(dim=0) + a.cumsum(dim=0).sum(0)),
    "matmul": ([(3, 4), (4, 5)], lambda L, a, b: a @ b),
    "batched_matmul": ([(2, 3, 4), (4, 2)], lambda L, a, b: L.matmul(a, b).tanh()),
    "views": ([(2, 3, 4)], lambda L, a: a.transpose(0, 2).reshape(4, 6)[1:, ::2] * a.permute(2, 1, 0)[1:, 0, :1]),
    "indexing": ([(5, 3)], lambda L, a: a[L.tensor([0, 2, 2, 4])] * 2 + a[a.detach() > 0].sum()),
    "expand_unsqueeze": ([(3,)], lambda L, a: a.unsqueeze(0).expand(2, 3) * L.arange(6.).reshape(2, 3).double()),
    "cat_stack": ([(2, 3), (2, 3)], lambda L, a, b: L.stack([L.cat([a, b], 0), L.cat([b, a.exp()], 0)])),
    "softmax": ([(3, 5)], lambda L, a: _F(L).softmax(a, dim=1) + _F(L).log_softmax(a, dim=0)),
    "layer_norm": ([(4, 6), (6,), (6,)], lambda L, x, w, b: _F(L).layer_norm(x, (6,), w, b, 1e-5)),
    "rms_norm": ([(4, 6), (6,)], lambda L, x, w: _F(L).rms_norm(x, (6,), w, 1e-6)),
    "batch_norm_train": ([(5, 3, 4), (3,), (3,)],
                         lambda L, x, w, b: _F(L).batch_norm(x, None, None, w, b, training=True)),
    "batch_norm_eval": ([(5, 3), (3,), (3,)],
                        lambda L, x, w, b: _F(L).batch_norm(x, L.linspace(-1, 1, 3).double(),
                                                            L.linspace(1, 2, 3).double(), w, b, training=False)),
    "group_norm": ([(2, 4, 3), (4,), (4,)], lambda L, x, w, b: _F(L).group_norm(x, 2, w, b)),
    "linear_gelu": ([(3, 4), (5, 4), (5,)], lambda L, x, w, b: _F(L).gelu(_F(L).linear(x, w, b))),
    "losses": ([(4, 3), (4, 3)], lambda L, a, b: _F(L).mse_loss(a, b) + _F(L).smooth_l1_loss(a.sin(), b)),
    "conv2d_pool": ([(2, 3, 6, 6), (4, 3, 3, 3)], lambda L, x, w: _F(L).max_pool2d(_F(L).conv2d(x, w, padding=1), 2)),
    "cross_entropy": ([(4, 5)], lambda L, x: _F(L).cross_entropy(x, L.tensor([0, 1, 4, 2]))),
    "attention": ([(2, 3, 4), (2, 3, 4), (2, 3, 4)],
                  lambda L, q, k, v: _F(L).scaled_dot_product_attention(q, k, v)),
    "gather_sort_topk": ([(3, 4)], lambda L, x: x.gather(1, L.tensor([[0, 1], [2, 3], [1, 1]]))
                         + x.sort(dim=1).values[:, :2] * x.topk(2).values),
    "masked_fill_normalize": ([(3, 4)], lambda L, x: x.masked_fill(L.tensor(np.eye(3, 4) > 0), 0.0)
                              * _F(L).normalize(x, dim=1)),
    "split_chunk_repeat": ([(4, 6)], lambda L, x: L.cat(x.chunk(3, 1)[::-1], 1) + x.split(2, 0)[1].repeat(2, 1)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_tangents_match_torch(name, rng):
    shapes, program = PROGRAMS[name]
    _check_against_torch(program, shapes, rng)


@pytest.mark.parametrize("name", ["broadcast", "matmul", "layer_norm", "batch_norm_train"])
def test_only_some_inputs_dual(name, rng):
    shapes, program = PROGRAMS[name]
    _check_against_torch(program, shapes, rng, dual={1})


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.LayerNorm(6), lib.nn.Tanh(), lib.nn.Linear(6, 3))


def test_functional_call_with_dual_parameters(rng):
    """PyTorch's forward-AD tutorial pattern: the module's parameters made dual, called through functional_call."""
    torch = torch_or_skip()
    x = rng.standard_normal((5, 4))
    results = []
    for lib in (mg, torch):
        model = _mlp(lib).double()
        names = [n for n, _ in model.named_parameters()]
        if not results:
            values = {n: rng.standard_normal(tuple(p.shape)) for n, p in model.named_parameters()}
            directions = {n: rng.standard_normal(tuple(p.shape)) for n, p in model.named_parameters()}
        ad = _fwad(lib)
        with ad.dual_level():
            params = {n: ad.make_dual(lib.tensor(values[n]), lib.tensor(directions[n])) for n in names}
            out = lib.func.functional_call(model, params, (lib.tensor(x),))
            primal, tangent = ad.unpack_dual(out)
            results.append((primal.detach().numpy().copy(), tangent.detach().numpy().copy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_linear_module_with_dual_input(rng):
    torch = torch_or_skip()
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    w, b = rng.standard_normal((2, 4)), rng.standard_normal(2)
    results = []
    for lib in (mg, torch):
        layer = lib.nn.Linear(4, 2).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w))
            layer.bias.copy_(lib.tensor(b))
        ad = _fwad(lib)
        with ad.dual_level():
            out = layer(ad.make_dual(lib.tensor(x), lib.tensor(t)))
            results.append(ad.unpack_dual(out).tangent.detach().numpy().copy())
            assert out.requires_grad                       # the parameters require grad
    np.testing.assert_allclose(results[0], results[1], rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------- errors (PyTorch's texts)
def _error(fn):
    try:
        fn()
    except Exception as e:           # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return None


def _error_cases(lib):
    ad = _fwad(lib)
    x = lib.tensor(np.arange(3.0))
    t = lib.tensor(np.ones(3))
    cases = {"outside": _error(lambda: ad.make_dual(x, t)),
             "exit_without_level": _error(lambda: ad.exit_dual_level())}
    with ad.dual_level():
        cases["nested"] = _error(lambda: ad.enter_dual_level())
        cases["size"] = _error(lambda: ad.make_dual(x, lib.tensor(np.ones(4))))
        cases["size_scalar"] = _error(lambda: ad.make_dual(x, lib.tensor(np.ones(1))))
        cases["int_primal"] = _error(lambda: ad.make_dual(lib.arange(3), t))
        cases["int_tangent"] = _error(lambda: ad.make_dual(x, lib.arange(3)))
        cases["bool_primal"] = _error(lambda: ad.make_dual(x > 0, t))
        cases["level_1"] = _error(lambda: ad.make_dual(x, t, level=1))
        cases["level_negative"] = _error(lambda: ad.make_dual(x, t, level=-1))
        cases["exit_level_3"] = _error(lambda: ad.exit_dual_level(level=3))
        dual = ad.make_dual(x, t)
        cases["already_dual"] = _error(lambda: ad.make_dual(dual, t))
        cases["unpack_list"] = _error(lambda: ad.unpack_dual([1.0]))
    cases["after_exit"] = _error(lambda: ad.make_dual(x, t, level=0))
    return cases


def test_error_texts_match_torch():
    torch = torch_or_skip()
    ours, theirs = _error_cases(mg), _error_cases(torch)
    assert ours.keys() == theirs.keys()
    for key in ours:
        assert theirs[key] is not None, key
        assert ours[key] == theirs[key], key


def test_custom_function_without_jvp_is_refused_as_in_torch():
    torch = torch_or_skip()
    texts = []
    for lib in (mg, torch):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        ad = _fwad(lib)
        with ad.dual_level():
            d = ad.make_dual(lib.tensor(np.ones(2)), lib.tensor(np.ones(2)))
            with pytest.raises(NotImplementedError) as info:
                Double.apply(d)
            texts.append(str(info.value))
    assert texts[0] == texts[1]


# --------------------------------------------------------------------------- levels, views, flags
def _level_facts(lib, rng_values):
    ad = _fwad(lib)
    x, t = lib.tensor(rng_values[0]), lib.tensor(rng_values[1])
    facts = {"exports": sorted(ad.__all__)}
    outside = ad.unpack_dual(x)
    facts["outside_is_tuple"] = isinstance(outside, tuple) and outside._fields == ("primal", "tangent")
    facts["outside"] = (outside.primal is x, outside.tangent is None)
    with ad.dual_level() as level:
        facts["level"] = level
        facts["current_level"] = ad._current_level
        d = ad.make_dual(x, t)
        primal, tangent = ad.unpack_dual(d)
        facts["tangent_is_given"] = tangent is t
        facts["dual_shares_x"] = np.shares_memory(d.numpy(), x.numpy())
        facts["primal_shares_dual"] = np.shares_memory(primal.numpy(), d.numpy())
        facts["primal_has_no_tangent"] = ad.unpack_dual(primal).tangent is None
        facts["plain_tangent"] = ad.unpack_dual(x).tangent is None
        facts["level_arg"] = ad.unpack_dual(d, level=0).tangent is t
        facts["detach_drops"] = ad.unpack_dual(d.detach()).tangent is None
        facts["argmax"] = ad.unpack_dual(d.argmax()).tangent is None
        facts["compare"] = ad.unpack_dual(d > 0).tangent is None
        with lib.no_grad():
            y = d * 3
        facts["no_grad_keeps_forward_ad"] = ad.unpack_dual(y).tangent is not None
        facts["no_grad_tangent"] = ad.unpack_dual(y).tangent.numpy().tolist()
        primal.mul_(1.0)          # a write through the primal is seen by the dual
        with lib.no_grad():
            primal[0] = 7.0
        facts["write_through_primal"] = float(d[0])
    facts["after"] = ad.unpack_dual(d).tangent is None and ad._current_level == -1
    with ad.dual_level():
        facts["after_reentry"] = ad.unpack_dual(d).tangent is None
    return facts


def test_levels_views_and_flags_match_torch(rng):
    torch = torch_or_skip()
    values = _arrays(rng, [(3,), (3,)])
    ours, theirs = _level_facts(mg, values), _level_facts(torch, values)
    for key in theirs:
        if key == "no_grad_tangent":
            np.testing.assert_allclose(ours[key], theirs[key], rtol=RTOL)
        else:
            assert ours[key] == theirs[key], key
    assert theirs["no_grad_keeps_forward_ad"] is True


def _grad_facts(lib, values):
    ad = _fwad(lib)
    x = lib.tensor(values[0], requires_grad=True)
    t = lib.tensor(values[1])
    with ad.dual_level():
        d = ad.make_dual(x, t)
        plain = ad.make_dual(lib.tensor(values[0]), t)
        facts = [d.requires_grad, d.is_leaf, plain.requires_grad, plain.is_leaf,
                 ad.unpack_dual(d).primal.requires_grad]
        out = (d.sin() * d).sum() + _F(lib).layer_norm(d[None], (3,)).pow(2).sum()
        tangent = ad.unpack_dual(out).tangent.detach().numpy().copy()
        out.backward()
        return facts, tangent, x.grad.numpy().copy(), float(out.detach())


def test_requires_grad_and_backward_alongside_forward_ad(rng):
    torch = torch_or_skip()
    values = _arrays(rng, [(3,), (3,)])
    ours, theirs = _grad_facts(mg, values), _grad_facts(torch, values)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_tangent_dtype_may_differ_as_in_torch(rng):
    torch = torch_or_skip()
    values = _arrays(rng, [(3,), (3,)])
    facts = []
    for lib in (mg, torch):
        ad = _fwad(lib)
        with ad.dual_level():
            t = lib.tensor(values[1]).float()
            d = ad.make_dual(lib.tensor(values[0]), t)
            y = ad.unpack_dual(d.exp()).tangent
            facts.append((ad.unpack_dual(d).tangent is t, str(y.dtype).replace("torch.", ""),
                          y.numpy().copy()))
    assert facts[0][:2] == facts[1][:2]
    np.testing.assert_allclose(facts[0][2], facts[1][2], rtol=1e-6)


# --------------------------------------------------------------------------- in-place ops
def _inplace_run(lib, values):
    ad = _fwad(lib)
    x, t, o, s = (lib.tensor(v) for v in values)
    out = {}
    with ad.dual_level():
        d = ad.make_dual(x.clone(), t.clone())
        kept = ad.unpack_dual(d).tangent
        d.mul_(2.5).add_(d.sin())
        out["mul_add"] = ad.unpack_dual(d).tangent.numpy().copy()
        out["same_tangent_object"] = ad.unpack_dual(d).tangent is kept
        plain = o.clone()
        plain.add_(ad.make_dual(s.clone(), t.clone()), alpha=2)   # a plain tensor receives a tangent
        plain.mul_(plain.detach() + o)     # (x.mul_(x): PyTorch's tangent reads the written x, see below)
        out["into_plain"] = ad.unpack_dual(plain).tangent.numpy().copy()
        base = ad.make_dual(lib.tensor(values[0]).reshape(3, 1).expand(3, 2).clone(),
                            lib.tensor(values[1]).reshape(3, 1).expand(3, 2).clone())
        view = base[:, 1]
        view.exp_()                                               # through a view: the base's tangent follows
        out["base_after_view_write"] = ad.unpack_dual(base).tangent.numpy().copy()
        out["view"] = ad.unpack_dual(view).tangent.numpy().copy()
        z = lib.zeros(3, dtype=lib.float64)
        z.copy_(ad.make_dual(s.clone(), o.clone()))
        out["copy_"] = ad.unpack_dual(z).tangent.numpy().copy()
        r = ad.make_dual(x.clone(), t.clone())
        r.relu_().tanh_()
        out["relu_tanh"] = ad.unpack_dual(r).tangent.numpy().copy()
    return out


def test_inplace_ops_match_torch(rng):
    torch = torch_or_skip()
    values = _arrays(rng, [(3,), (3,), (3,), (3,)])
    ours, theirs = _inplace_run(mg, values), _inplace_run(torch, values)
    assert ours.keys() == theirs.keys()
    for key in theirs:
        if isinstance(theirs[key], bool):
            assert ours[key] == theirs[key], key
        else:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=RTOL, atol=ATOL, err_msg=key)


def test_inplace_on_leaf_that_requires_grad_refused_as_in_torch(rng):
    torch = torch_or_skip()
    texts = []
    for lib in (mg, torch):
        ad = _fwad(lib)
        with ad.dual_level():
            d = ad.make_dual(lib.tensor(np.ones(3), requires_grad=True), lib.tensor(np.ones(3)))
            texts.append(_error(lambda: d.mul_(2)))
    assert texts[0] == texts[1] and texts[0] is not None


# --------------------------------------------------------------------------- without PyTorch: finite differences
def _finite_difference(program, primals, tangents, h=1e-6):
    plus = program(mg, *[mg.tensor(p + h * t) for p, t in zip(primals, tangents)]).numpy()
    minus = program(mg, *[mg.tensor(p - h * t) for p, t in zip(primals, tangents)]).numpy()
    return (plus - minus) / (2 * h)


@pytest.mark.parametrize("name", ["sin_mul_exp", "layer_norm", "rms_norm", "batch_norm_train", "softmax", "matmul",
                                  "views", "max_logsumexp_norm"])
def test_tangent_matches_finite_differences(name, rng):
    shapes, program = PROGRAMS[name]
    primals, tangents = _arrays(rng, shapes), _arrays(rng, shapes)
    _, tangent = _dual_run(mg, program, primals, tangents)
    expected = _finite_difference(program, primals, tangents)
    assert np.abs(expected).max() > 1e-3          # a real direction, not a constant program
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-7)


def test_mlp_tangent_matches_finite_differences(rng):
    model = _mlp(mg).double()
    names = [n for n, _ in model.named_parameters()]
    values = {n: rng.standard_normal(tuple(p.shape)) for n, p in model.named_parameters()}
    directions = {n: rng.standard_normal(tuple(p.shape)) for n, p in model.named_parameters()}
    x = mg.tensor(rng.standard_normal((5, 4)))
    with fwad.dual_level():
        params = {n: fwad.make_dual(mg.tensor(values[n]), mg.tensor(directions[n])) for n in names}
        tangent = fwad.unpack_dual(mg.func.functional_call(model, params, (x,))).tangent.numpy().copy()
    h = 1e-6
    plus = mg.func.functional_call(model, {n: mg.tensor(values[n] + h * directions[n]) for n in names}, (x,))
    minus = mg.func.functional_call(model, {n: mg.tensor(values[n] - h * directions[n]) for n in names}, (x,))
    np.testing.assert_allclose(tangent, (plus.detach().numpy() - minus.detach().numpy()) / (2 * h), rtol=1e-6,
                               atol=1e-7)


def test_dropout_tangent_uses_the_same_mask(rng):
    x, t = rng.standard_normal(200) + 3.0, rng.standard_normal(200)
    mg.manual_seed(3)
    with fwad.dual_level():
        out = mg.nn.functional.dropout(fwad.make_dual(mg.tensor(x), mg.tensor(t)), p=0.5, training=True)
        primal, tangent = fwad.unpack_dual(out)
        primal, tangent = primal.numpy(), tangent.numpy()
    assert 0 < (primal == 0).sum() < 200
    np.testing.assert_allclose(tangent, primal / x * t, rtol=1e-12, atol=1e-15)   # the same mask, the same scale
    mg.manual_seed(3)
    np.testing.assert_allclose(mg.nn.functional.dropout(mg.tensor(x), p=0.5).numpy(), primal, rtol=0, atol=0)


def test_level_lifecycle_without_torch():
    x = mg.tensor(np.arange(3.0))
    with fwad.dual_level() as level:
        assert level == 0 and mg.autograd.function.dual_active
        d = fwad.make_dual(x, mg.ones(3, dtype=mg.float64))
        assert fwad.unpack_dual(d * d).tangent is not None
    assert not mg.autograd.function.dual_active and fwad._current_level == -1
    assert not fwad._tangents
    assert fwad.unpack_dual(d).tangent is None
    with pytest.raises(RuntimeError, match="no level exists"):
        fwad.make_dual(x, x)
    assert mg.autograd.forward_ad is fwad


def test_tangents_are_freed_with_their_tensors():
    import gc
    with fwad.dual_level():
        d = fwad.make_dual(mg.tensor(np.arange(3.0)), mg.ones(3, dtype=mg.float64))
        y = d.exp()
        count = len(fwad._tangents)
        assert count >= 2
        del y
        gc.collect()
        assert len(fwad._tangents) == count - 1


def test_op_with_nondifferentiable_backward_names_the_op():
    class Opaque(mg.autograd.Function):     # an internal-looking op whose backward leaves the graph
        @staticmethod
        def forward(ctx, x):
            return x._data * 3.0

        @staticmethod
        def backward(ctx, g):
            return mg.tensor(np.asarray(g.detach().numpy()) * 3.0)
    Opaque.__module__ = "minigrad.test_fixture"
    with fwad.dual_level():
        d = fwad.make_dual(mg.tensor(np.ones(2)), mg.tensor(np.ones(2)))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with Opaque"):
            Opaque.apply(d)


def test_inplace_with_itself_as_operand_is_the_derivative():
    """x.mul_(x): the tangent is 2 x t (PyTorch 2.13 gives t x + t x^2, reading x after the write; minigrad does not
    copy that)."""
    x, t = np.array([2.0, 3.0, -4.0]), np.array([0.5, -1.0, 2.0])
    with fwad.dual_level():
        d = fwad.make_dual(mg.tensor(x.copy()), mg.tensor(t.copy()))
        d.mul_(d)
        np.testing.assert_allclose(fwad.unpack_dual(d).tangent.numpy(), 2 * x * t, rtol=1e-15)


def _custom_jvp_run(lib, values):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k

        @staticmethod
        def jvp(ctx, x_t, y_t, k_t):
            x, y = ctx.saved_tensors
            assert k_t is None
            return (x_t * y + x * y_t) * ctx.k

        @staticmethod
        def backward(ctx, g):
            return None, None, None
    ad = _fwad(lib)
    with ad.dual_level():
        x = ad.make_dual(lib.tensor(values[0]), lib.tensor(values[1]))
        out = Scale.apply(x, lib.tensor(values[2]), 5.0)          # y has no tangent: jvp gets zeros
        out2 = Scale.apply(x, ad.make_dual(lib.tensor(values[2]), lib.tensor(values[3])), -2.0)
        return [ad.unpack_dual(o).tangent.numpy().copy() for o in (out, out2)]


def test_custom_function_jvp_matches_torch(rng):
    torch = torch_or_skip()
    values = _arrays(rng, [(3,), (3,), (3,), (3,)])
    for a, b in zip(_custom_jvp_run(mg, values), _custom_jvp_run(torch, values)):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def _fwd_grad_flag_run(lib):
    ad = _fwad(lib)
    with ad.dual_level():
        x = ad.make_dual(lib.tensor(np.ones(2)), lib.tensor(np.array([1.0, -2.0])))
        facts = [ad._is_fwd_grad_enabled()]
        with ad._set_fwd_grad_enabled(False):
            y = x * 2
            facts += [ad._is_fwd_grad_enabled(), ad.unpack_dual(y).tangent is None, ad.unpack_dual(x).tangent is None]
        facts += [ad._is_fwd_grad_enabled(), ad.unpack_dual(x * 2).tangent.numpy().tolist(),
                  ad.unpack_dual(y).tangent is None]
    return facts


def test_set_fwd_grad_enabled_matches_torch():
    torch = torch_or_skip()
    assert _fwd_grad_flag_run(mg) == _fwd_grad_flag_run(torch)


def _batchnorm_module_run(lib, values):
    bn = lib.nn.BatchNorm1d(3).double()
    ad = _fwad(lib)
    with ad.dual_level():
        out = bn(ad.make_dual(lib.tensor(values[0]), lib.tensor(values[1])))
        tangent = ad.unpack_dual(out).tangent.detach().numpy().copy()
    return [tangent, bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(), int(bn.num_batches_tracked)]


def test_batchnorm_module_updates_running_stats_once(rng):
    torch = torch_or_skip()
    values = _arrays(rng, [(6, 3), (6, 3)])
    for a, b in zip(_batchnorm_module_run(mg, values), _batchnorm_module_run(torch, values)):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
