"""minigrad.overrides, minigrad.futures, minigrad.return_types, minigrad.functional and minigrad.quasirandom
(torch.overrides, torch.futures, torch.return_types, torch.functional, torch.quasirandom), compared with PyTorch's
where it is installed."""
import threading

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


# =========================================================================== overrides
class _TensorLike:
    """An object taking part in the __torch_function__ protocol."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func.__name__, types)


class _Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _protocol_answers(lib):
    o = lib.overrides

    def my_func(a, b=1):
        if o.has_torch_function((a,)):
            return o.handle_torch_function(my_func, (a,), a, b=b)
        return a + b

    class Mode(o.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return ("mode", func.__name__, len(types))

    @o.wrap_torch_function(lambda a, b: (a, b))
    def wrapped(a, b):
        return "plain"

    t, like = lib.ones(2), _TensorLike()
    answers = [o.has_torch_function((t,)), o.has_torch_function_unary(t), o.has_torch_function_variadic(t, 2),
               o.has_torch_function((like,)), o.has_torch_function_unary(like),
               o.has_torch_function_variadic(1, like), o.has_torch_function((1, 2)),
               o.is_tensor_like(t), o.is_tensor_like(like), o.is_tensor_like(1), o.is_tensor_like([t]),
               my_func(1), my_func(like), wrapped(1, 2), wrapped(like, 2)[:2]]
    with Mode():
        answers += [o.has_torch_function((1,)), my_func(1), my_func(like)]
    answers.append(o.has_torch_function((1,)))    # the mode is off again
    with pytest.raises(TypeError) as info:
        o.handle_torch_function(my_func, (_Declines(),), _Declines())
    answers.append(str(info.value).split(" on types")[1].replace("test_small_namespaces.", ""))
    with pytest.raises(TypeError) as info:
        o.has_torch_function(like)
    answers.append(str(info.value))
    return answers


def test_overrides_protocol_matches_pytorch():
    torch = torch_or_skip()
    ours, theirs = _protocol_answers(mg), _protocol_answers(torch)
    assert ours == theirs


def test_overrides_without_torch():
    o = mg.overrides
    assert not o.has_torch_function((mg.ones(2),))       # minigrad tensors do not dispatch on __torch_function__
    assert o.has_torch_function((_TensorLike(),))
    assert o.is_tensor_method_or_property(mg.Tensor.add)
    assert not o.is_tensor_method_or_property(mg.add)
    assert mg.zeros in o.get_ignored_functions()
    overridable = o.get_overridable_functions()
    assert mg.add in overridable[mg] and mg.nn.functional.relu in overridable[mg.nn.functional]
    assert mg.add not in overridable[mg.Tensor] and mg.zeros not in overridable[mg]
    dummies = o.get_testing_overrides()
    assert dummies[mg.add](1, 2) == -1
    with pytest.raises(TypeError):
        dummies[mg.add]()                          # the dummy has add's signature
    assert o.resolve_name(mg.add) == "minigrad.add" and o.resolve_name(mg.Tensor.add) == "minigrad.Tensor.add"
    with o.BaseTorchFunctionMode():
        assert o.handle_torch_function(mg.add, (), mg.ones(1), 2).item() == 3.0


def test_overrides_names_exposed_where_pytorch_has_them():
    for name in ("is_tensor_like", "has_torch_function", "handle_torch_function"):
        assert getattr(mg.autograd, name) is getattr(mg.overrides, name)
    for name in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
                 "handle_torch_function"):
        assert getattr(mg.functional, name) is getattr(mg.overrides, name)


# =========================================================================== futures
def _future_answers(lib):
    F = lib.futures
    answers = []
    f = F.Future()
    answers.append(f.done())
    f.set_result(3)
    with pytest.raises(RuntimeError) as info:
        f.set_result(4)
    answers += [f.done(), f.wait(), f.value(), str(info.value)]
    chained, failing = f.then(lambda fut: fut.wait() + 1), f.then(lambda fut: 1 / 0)
    assert chained.done() and failing.done()       # (else wait() below would block forever)
    answers.append(chained.wait())
    with pytest.raises(RuntimeError) as info:
        failing.wait()
    answers.append(str(info.value).split("\n")[0])
    e = F.Future()
    e.set_exception(ValueError("boom"))
    for method in (e.wait, e.value):
        with pytest.raises(ValueError, match="boom"):
            method()
    with pytest.raises(AssertionError) as info:
        F.Future().set_exception("x")
    answers.append(str(info.value))
    a, b = F.Future(), F.Future()
    c = F.collect_all([a, b])
    answers.append(c.done())
    a.set_result(1)
    answers.append(c.done())
    b.set_result(2)
    answers += [c.done(), [x.wait() for x in c.wait()], F.wait_all([a, b])]
    with pytest.raises(ValueError, match="boom"):
        F.wait_all([a, e])
    order = []
    k = F.Future()
    k.add_done_callback(lambda fut: order.append(("first", fut.wait())))
    k.add_done_callback(lambda fut: 1 / 0)            # logged, not raised, as in PyTorch
    k.add_done_callback(lambda fut: order.append(("third", fut.wait())))
    k.set_result(7)
    k.add_done_callback(lambda fut: order.append(("late", fut.wait())))
    answers.append(order)
    forked = lib.fork(lambda x, y=0: x * 2 + y, 3, y=1)
    answers += [isinstance(forked, lib.Future), forked.done(), lib.wait(forked)]   # torch.Future: futures.Future's base
    jit_forked = lib.jit.fork(lambda x: x + 1, 1)
    answers += [isinstance(jit_forked, lib.Future), lib.jit.wait(jit_forked), lib.jit.Future is F.Future]
    with pytest.raises(ValueError, match="inside"):
        lib.fork(lambda: (_ for _ in ()).throw(ValueError("inside")))
    return answers


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_futures_match_pytorch():
    torch = torch_or_skip()
    assert _future_answers(mg) == _future_answers(torch)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_futures_without_torch():
    answers = _future_answers(mg)
    assert answers[:4] == [False, True, 3, 3]
    assert mg.Future is mg.futures.Future
    assert isinstance(mg.fork(len, []), mg.futures.Future) and isinstance(mg.jit.fork(len, []), mg.futures.Future)


def test_future_wait_blocks_until_another_thread_sets_it():
    f = mg.futures.Future()
    chained = f.then(lambda fut: fut.wait() * 10)
    timer = threading.Timer(0.05, f.set_result, args=(4,))
    timer.start()
    assert chained.wait() == 40 and f.done()
    timer.join()


# =========================================================================== return_types
def _named_results(lib):
    x = lib.tensor(np.random.default_rng(0).standard_normal((4, 4)))
    spd = x @ x.T + lib.eye(4, dtype=x.dtype)
    lu, piv = lib.linalg.lu_factor(x)
    return {
        "max": lib.max(x, 0), "min": lib.min(x, 1), "sort": lib.sort(x), "topk": lib.topk(x, 2),
        "kthvalue": lib.kthvalue(x, 2), "mode": lib.mode(x), "median": lib.median(x, 0),
        "nanmedian": lib.nanmedian(x, 0), "aminmax": lib.aminmax(x), "cummax": lib.cummax(x, 0),
        "cummin": lib.cummin(x, 0), "frexp": lib.frexp(x), "slogdet": lib.slogdet(x),
        "qr": lib.qr(x), "svd": lib.svd(x), "lu_unpack": lib.lu_unpack(lu, piv),
        "triangular_solve": lib.triangular_solve(x, spd), "geqrf": lib.geqrf(x),
        "histogram": lib.histogram(x.flatten()), "histogramdd": lib.histogramdd(x[:, :2], bins=[2, 2]),
        "linalg_slogdet": lib.linalg.slogdet(x), "linalg_qr": lib.linalg.qr(x), "linalg_eigh": lib.linalg.eigh(spd),
        "linalg_eig": lib.linalg.eig(x), "linalg_svd": lib.linalg.svd(x), "linalg_lu": lib.linalg.lu(x),
        "linalg_lu_factor": lib.linalg.lu_factor(x), "linalg_lu_factor_ex": lib.linalg.lu_factor_ex(x),
        "linalg_cholesky_ex": lib.linalg.cholesky_ex(spd), "linalg_inv_ex": lib.linalg.inv_ex(x),
        "linalg_solve_ex": lib.linalg.solve_ex(x, x), "linalg_ldl_factor": lib.linalg.ldl_factor(spd),
        "linalg_ldl_factor_ex": lib.linalg.ldl_factor_ex(spd), "linalg_lstsq": lib.linalg.lstsq(x, x),
    }


def test_return_types_are_the_classes_ops_return():
    results = _named_results(mg)
    assert sorted(results) == sorted(mg.return_types.__all__)
    for name, result in results.items():
        assert type(result) is getattr(mg.return_types, name), name
    assert not isinstance(mg.max(mg.ones(2, 2), 0), mg.return_types.min)


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated", "ignore:torch.triangular_solve is deprecated")
def test_return_types_fields_match_pytorch():
    torch = torch_or_skip()
    ours, theirs = _named_results(mg), _named_results(torch)
    for name in ours:
        ours_type, theirs_type = getattr(mg.return_types, name), getattr(torch.return_types, name)
        assert ours_type.__name__ == theirs_type.__name__
        assert isinstance(theirs[name], theirs_type) and isinstance(ours[name], ours_type)
        assert len(ours[name]) == len(theirs[name]), name
        fields = getattr(ours_type, "_fields", None) or ("hist", "bin_edges")
        for field in fields:
            assert hasattr(theirs[name], field) and hasattr(ours[name], field), (name, field)


# =========================================================================== functional
def test_functional_names_are_the_top_level_objects():
    for name in mg.functional.__all__:
        assert getattr(mg.functional, name) is getattr(mg, name), name


def test_functional_covers_pytorchs_tensor_functions():
    torch = torch_or_skip()
    import torch.functional as tf
    expected = {n for n in tf.__all__ if not n.startswith("_") and n != "align_tensors"}
    assert expected <= set(dir(mg.functional))


def test_functional_boolean_dispatch_matches_pytorch():
    torch = torch_or_skip()
    from torch._jit_internal import boolean_dispatch as theirs
    ours = mg.functional.boolean_dispatch
    for dispatch in (ours, theirs):
        f = dispatch("flag", 1, False, lambda a, flag=False: ("true", a), lambda a, flag=False: ("false", a),
                     "mod", "fname")
        assert [f(1), f(1, True), f(1, flag=True), f.__name__] == [("false", 1), ("true", 1), ("true", 1), "fname"]


def test_functional_values_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    for lib in (mg, torch):
        out = [lib.functional.einsum("ij,jk->ik", lib.tensor(a), lib.tensor(b)),
               lib.functional.tensordot(lib.tensor(a), lib.tensor(b), dims=1),
               lib.functional.cdist(lib.tensor(a), lib.tensor(a)),
               lib.functional.norm(lib.tensor(a)),
               lib.functional.block_diag(lib.tensor(a), lib.tensor(b))]
        if lib is mg:
            ours = [o.numpy() for o in out]
        else:
            theirs = [o.numpy() for o in out]
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


# =========================================================================== quasirandom
def test_sobol_unscrambled_equals_pytorch_exactly():
    torch = torch_or_skip()
    for dimension in (1, 2, 7, 40, 1111, 21201):
        ours, theirs = mg.quasirandom.SobolEngine(dimension), torch.quasirandom.SobolEngine(dimension)
        np.testing.assert_array_equal(ours.sobolstate.numpy(), theirs.sobolstate.numpy())
        for step in (("draw", 1), ("draw", 6), ("fast_forward", 25), ("draw", 33), ("draw_base2", 6),
                     ("fast_forward", 1000), ("draw", 17)):
            method, n = step
            if method == "draw_base2":
                ours.reset(), theirs.reset()
            a, b = getattr(ours, method)(n), getattr(theirs, method)(n)
            if method != "fast_forward":
                assert a.dtype == mg.float32 and b.dtype == torch.float32
                np.testing.assert_array_equal(a.numpy(), b.numpy())
            np.testing.assert_array_equal(ours.quasi.numpy(), theirs.quasi.numpy())
            assert ours.num_generated == theirs.num_generated
        if dimension > 100:
            continue
        a, b = ours.draw(64, dtype=mg.float64), theirs.draw(64, dtype=torch.float64)
        assert a.dtype == mg.float64
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_sobol_first_draw_fast_forward_and_out_match_pytorch():
    torch = torch_or_skip()
    for lib_pair in ((mg, torch),):
        results = []
        for lib in lib_pair:
            engine = lib.quasirandom.SobolEngine(5)
            engine.fast_forward(7)
            out = lib.empty(0)
            returned = engine.draw(9, out=out)
            results.append((returned is out, out.numpy().copy(), repr(engine), engine.num_generated,
                            engine.draw_base2(4).numpy()))
        ours, theirs = results
        assert ours[0] and theirs[0] and ours[2:4] == theirs[2:4]
        np.testing.assert_array_equal(ours[1], theirs[1])
        np.testing.assert_array_equal(ours[4], theirs[4])


def test_sobol_errors_match_pytorch():
    torch = torch_or_skip()
    for bad in (0, 21202):
        messages = []
        for lib in (mg, torch):
            with pytest.raises(ValueError) as info:
                lib.quasirandom.SobolEngine(bad)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    messages = []
    for lib in (mg, torch):
        engine = lib.quasirandom.SobolEngine(2)
        engine.draw(3)
        with pytest.raises(ValueError) as info:
            engine.draw_base2(2)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_sobol_scrambled_equals_pytorch_exactly_for_a_seed():
    """A seed gives PyTorch's scramble (its shift and scrambled direction numbers, drawn from PyTorch's random
    stream in its order) and so its points, through draws, fast-forwards, resets and both dtypes; the scramble
    leaves the default generator alone, as PyTorch's own generator does; without a seed, two engines differ."""
    torch = torch_or_skip()
    for dimension, seed in ((1, 0), (3, 123), (40, 2 ** 40 + 7), (1111, 9)):
        mg.manual_seed(5), torch.manual_seed(5)
        ours = mg.quasirandom.SobolEngine(dimension, scramble=True, seed=seed)
        theirs = torch.quasirandom.SobolEngine(dimension, scramble=True, seed=seed)
        np.testing.assert_array_equal(mg.rand(3).numpy(), torch.rand(3).numpy())     # default stream untouched
        np.testing.assert_array_equal(ours.shift.numpy(), theirs.shift.numpy())
        np.testing.assert_array_equal(ours.sobolstate.numpy(), theirs.sobolstate.numpy())
        for method, n in (("draw", 1), ("draw", 20), ("fast_forward", 100), ("draw", 7), ("draw_base2", 5)):
            if method == "draw_base2":
                ours.reset(), theirs.reset()
            a, b = getattr(ours, method)(n), getattr(theirs, method)(n)
            if method != "fast_forward":
                np.testing.assert_array_equal(a.numpy(), b.numpy())
            np.testing.assert_array_equal(ours.quasi.numpy(), theirs.quasi.numpy())
        a, b = ours.draw(5, dtype=mg.float64), theirs.draw(5, dtype=torch.float64)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    unseeded = [mg.quasirandom.SobolEngine(3, scramble=True).draw(4).numpy() for _ in range(2)]
    assert not np.array_equal(*unseeded)


def _star_discrepancy_proxy(points, rng):
    """The largest |fraction of points in [0, t) - volume of [0, t)| over random boxes anchored at 0."""
    corners = rng.random((2000, points.shape[1]))
    inside = (points[None, :, :] < corners[:, None, :]).all(axis=2).mean(axis=1)
    return np.abs(inside - corners.prod(axis=1)).max()


def test_sobol_scrambled_properties():
    """Scrambled points (checked without PyTorch): in [0, 1), reproducible with a seed, different for another seed,
    balanced (each of 2^m points in its own 1/2^m interval per coordinate, the (0,m,1) property of every
    coordinate), and of lower discrepancy than uniform random points."""
    rng = np.random.default_rng(6)
    a = mg.quasirandom.SobolEngine(3, scramble=True, seed=123).draw_base2(8).numpy().astype(np.float64)
    again = mg.quasirandom.SobolEngine(3, scramble=True, seed=123).draw_base2(8).numpy()
    other = mg.quasirandom.SobolEngine(3, scramble=True, seed=124).draw_base2(8).numpy()
    assert a.shape == (256, 3) and (a >= 0).all() and (a < 1).all()
    np.testing.assert_array_equal(a, again)
    assert not np.array_equal(a, other)
    for column in a.T:
        np.testing.assert_array_equal(np.sort(np.floor(column * 256)), np.arange(256))
    plain = mg.quasirandom.SobolEngine(3).draw_base2(8).numpy()
    assert not np.array_equal(a, plain)
    sobol = _star_discrepancy_proxy(a, rng)
    random = np.median([_star_discrepancy_proxy(rng.random((256, 3)), rng) for _ in range(5)])
    assert sobol < random / 2


def test_sobol_unscrambled_known_values_without_torch():
    points = mg.quasirandom.SobolEngine(3).draw(4).numpy()
    np.testing.assert_array_equal(points, [[0, 0, 0], [0.5, 0.5, 0.5], [0.75, 0.25, 0.25], [0.25, 0.75, 0.75]])
    assert repr(mg.quasirandom.SobolEngine(2, scramble=True, seed=3)) == "SobolEngine(dimension=2, scramble=True, " \
                                                                         "seed=3)"


def test_sobol_scrambled_known_values_without_torch():
    """SobolEngine(2, scramble=True, seed=0) as PyTorch 2.13 gives it (its shift, and its first three points in
    float64, which hold them exactly: multiples of 2^-30)."""
    engine = mg.quasirandom.SobolEngine(2, scramble=True, seed=0)
    np.testing.assert_array_equal(engine.shift.numpy(), [510142454, 636217781])
    np.testing.assert_array_equal(engine.draw(3, dtype=mg.float64).numpy(),
                                  [[0.47510719299316406, 0.592523992061615],
                                   [0.5787633396685123, 0.03712194040417671],
                                   [0.9506698828190565, 0.8623440470546484]])


def test_sobol_without_scipy_says_which_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(ImportError, match=r'minigrad\[linalg\]'):
        mg.quasirandom.SobolEngine(2)
