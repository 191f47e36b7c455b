"""Small names public programs use, mirrored against PyTorch: the sym_* helpers, cond and while_loop (eager), the
version modules and TorchVersion, the build flags (has_*), get_device/is_distributed/init_num_threads, the removed
linear-algebra functions and methods, and the Tensor methods unsafe_split_with_sizes, as_strided_, storage_type,
as_subclass, module_load, set_, resize and resize_as: values, types, gradients (float64, random upstream), shared
memory and version counters, and errors (type and message)."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def _both(fn):
    """``fn(lib)`` for minigrad and PyTorch."""
    torch = torch_or_skip()
    return fn(mg), fn(torch)


def _error(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as error:      # noqa: BLE001 - the exception itself is compared
            return error
    raise AssertionError(f"no error from {lib.__name__}")


def _same_error(fn, exact=True, kind=None):
    """Both libraries raise the same exception type (``kind``: both an instance of it) and, if ``exact``, the same
    message ("torch" in PyTorch's message read as "minigrad" where it names a type)."""
    torch = torch_or_skip()
    ours, theirs = _error(fn, mg), _error(fn, torch)
    if kind is None:
        assert type(ours) is type(theirs), (ours, theirs)
    else:
        assert isinstance(ours, kind) and isinstance(theirs, kind), (ours, theirs)
    if exact:
        assert str(ours) == str(theirs)
    return ours, theirs


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# --------------------------------------------------------------------------- sym_*
SYM_CASES = {
    "int_float": lambda L: L.sym_int(3.7), "int_neg": lambda L: L.sym_int(-3.7), "int_bool": lambda L: L.sym_int(True),
    "int_str": lambda L: L.sym_int("3"), "int_tensor": lambda L: L.sym_int(L.tensor(3.7)),
    "float_int": lambda L: L.sym_float(3), "float_bool": lambda L: L.sym_float(True),
    "float_tensor": lambda L: L.sym_float(L.tensor(3)), "float_str": lambda L: L.sym_float("2.5"),
    "max_int_float": lambda L: L.sym_max(2, 3.0), "max_float_int": lambda L: L.sym_max(3, 2.0),
    "max_ints": lambda L: L.sym_max(2, 3), "max_tie": lambda L: L.sym_max(2, 2.0), "max_bools": lambda L: L.sym_max(True, False),
    "max_int_bool": lambda L: L.sym_max(1, True), "max_numpy": lambda L: L.sym_max(np.int64(4), 3),
    "max_numpy_float": lambda L: L.sym_max(np.float32(1.5), 3),
    "min_int_float": lambda L: L.sym_min(2, 3.0), "min_ints": lambda L: L.sym_min(5, 3), "min_bool_float": lambda L: L.sym_min(True, 0.5),
    "not_true": lambda L: L.sym_not(True), "not_zero": lambda L: L.sym_not(0), "not_float": lambda L: L.sym_not(2.5),
    "not_tensor": lambda L: L.sym_not(L.tensor(True)),
    "sqrt_int": lambda L: L.sym_sqrt(4), "sqrt_float": lambda L: L.sym_sqrt(2.0), "sqrt_tensor": lambda L: L.sym_sqrt(L.tensor(4)),
    "ite_true": lambda L: L.sym_ite(True, 1, 2), "ite_false": lambda L: L.sym_ite(False, 1.5, 2.5),
    "sum_list": lambda L: L.sym_sum([1, 2, 3]), "sum_mixed": lambda L: L.sym_sum([1, 2.5]), "sum_empty": lambda L: L.sym_sum([]),
    "sum_args": lambda L: L.sym_sum(1, 2), "sum_tuple": lambda L: L.sym_sum((True, True)),
    "fresh_int": lambda L: L.sym_fresh_size(3), "fresh_float": lambda L: L.sym_fresh_size(2.5),
}


@pytest.mark.parametrize("case", sorted(SYM_CASES))
def test_sym_helpers_give_pytorchs_values_and_types(case):
    ours, theirs = _both(SYM_CASES[case])
    assert type(ours) is type(theirs) and ours == theirs


def test_sym_helpers_on_tensors():
    ours, theirs = _both(lambda L: L.sym_sum([L.tensor(1.0), L.tensor(2.5)]))
    assert type(ours) is mg.Tensor and ours.dtype == mg.float32 and float(ours) == float(theirs) == 3.5
    ours, theirs = _both(lambda L: L.sym_ite(False, L.tensor([1, 2]), L.tensor([3, 4])))
    np.testing.assert_array_equal(_np(ours), _np(theirs))


SYM_ERRORS = {
    "int_inf": lambda L: L.sym_int(float("inf")), "int_nan": lambda L: L.sym_int(float("nan")),
    "int_many": lambda L: L.sym_int(L.tensor([1.0, 2.0])), "sqrt_negative": lambda L: L.sym_sqrt(-1),
    "sqrt_str": lambda L: L.sym_sqrt("a"), "not_many": lambda L: L.sym_not(L.tensor([True, False])),
    "ite_mismatch": lambda L: L.sym_ite(False, 1, 2.0), "ite_int_pred": lambda L: L.sym_ite(1, 1, 2),
    "ite_mixed": lambda L: L.sym_ite(True, 1, L.tensor(2)),
    "max_str": lambda L: L.sym_max("a", "b"), "fresh_str": lambda L: L.sym_fresh_size("x"),
}


@pytest.mark.parametrize("case", sorted(SYM_ERRORS))
def test_sym_helpers_errors(case):
    ours, theirs = _same_error(SYM_ERRORS[case], exact=False)
    assert str(ours).replace("minigrad.tensor.Tensor", "T") == str(theirs).replace("torch.Tensor", "T")


@pytest.mark.parametrize("args", [("tensor", 3), (3, "tensor"), ("tensor", "tensor")])
def test_sym_max_min_refuse_tensors(args):
    for name in ("sym_max", "sym_min"):
        def call(L):
            return getattr(L, name)(*(L.tensor(2.0) if a == "tensor" else a for a in args))
        ours, theirs = _same_error(call, exact=False)
        assert str(ours).replace("minigrad.tensor.Tensor", "T") == str(theirs).replace("torch.Tensor", "T")


# --------------------------------------------------------------------------- cond
def _branches(L):
    return (lambda a, b: (a.sin() * b).sum(0)), (lambda a, b: (a.cos() + b.exp()).sum(0))


@pytest.mark.parametrize("pred", [True, False, 1, 0.0, "tensor_true", "tensor_false", "tensor_float", "tensor_1x1"])
def test_cond_values_and_gradients_follow_the_branch_taken(pred, rng):
    torch = torch_or_skip()
    a, b, upstream = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal(3)
    results = []
    for L in (mg, torch):
        p = {"tensor_true": lambda: L.tensor(True), "tensor_false": lambda: L.tensor(False),
             "tensor_float": lambda: L.tensor(0.0), "tensor_1x1": lambda: L.tensor([[1]])}.get(pred, lambda: pred)()
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        out = L.cond(p, *_branches(L), (x, y))
        out.backward(L.tensor(upstream))
        results.append([_np(out), _np(x.grad), _np(y.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    taken = pred in (True, 1, "tensor_true", "tensor_1x1")
    expected = (np.sin(a) * b).sum(0) if taken else (np.cos(a) + np.exp(b)).sum(0)
    np.testing.assert_allclose(results[0][0], expected, rtol=1e-12)


def test_cond_nested_operands_and_outputs(rng):
    torch = torch_or_skip()
    a = rng.standard_normal(3)
    results = []
    for L in (mg, torch):
        x = L.tensor(a, requires_grad=True)
        out = L.cond(L.tensor(False), lambda d: (d["x"].sin(), [d["x"] * 2]), lambda d: (d["x"].cos(), [d["x"] * 3]),
                     ({"x": x},))
        assert isinstance(out, tuple) and isinstance(out[1], list)
        (out[0].sum() + out[1][0].sum()).backward()
        results.append([_np(out[0]), _np(out[1][0]), _np(x.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_cond_with_a_python_predicate_just_calls_the_branch():
    ours, theirs = _both(lambda L: L.cond(True, lambda a: a * 2, lambda a: a * 3, (2,)))
    assert ours == theirs == 4
    ours, theirs = _both(lambda L: L.cond(0, lambda: "yes", lambda: None))
    assert ours is theirs is None
    ours, theirs = _both(lambda L: L.cond(False, lambda: L.ones(2), lambda: L.zeros(2)))
    np.testing.assert_array_equal(_np(ours), _np(theirs))


COND_ERRORS = {
    "pred_two_elements": lambda L: L.cond(L.tensor([True, False]), lambda a: a + 1, lambda a: a - 1, (L.ones(2),)),
    "pred_empty": lambda L: L.cond(L.tensor([]), lambda a: a + 1, lambda a: a - 1, (L.ones(2),)),
    "pred_str": lambda L: L.cond("a", lambda a: a + 1, lambda a: a - 1, (L.ones(2),)),
    "pred_none": lambda L: L.cond(None, lambda a: a + 1, lambda a: a - 1, (L.ones(2),)),
    "pred_numpy_bool": lambda L: L.cond(np.bool_(True), lambda a: a + 1, lambda a: a - 1, (L.ones(2),)),
    "not_callable": lambda L: L.cond(L.tensor(True), 1, lambda a: a - 1, (L.ones(2),)),
    "operands_tensor": lambda L: L.cond(L.tensor(True), lambda a: a + 1, lambda a: a - 1, L.ones(2)),
    "operands_number": lambda L: L.cond(L.tensor(True), lambda a: a + 1, lambda a: a - 1, (2,)),
    "operands_mixed": lambda L: L.cond(L.tensor(True), lambda a, b: a + b, lambda a, b: a - b, (L.ones(2), 2)),
}


@pytest.mark.parametrize("case", sorted(COND_ERRORS))
def test_cond_argument_errors(case):
    _same_error(COND_ERRORS[case])


@pytest.mark.parametrize("branch", ["identity", "view", "none", "float"])
def test_cond_refuses_outputs_pytorch_refuses(branch):
    fn = {"identity": lambda a: a, "view": lambda a: a[0], "none": lambda a: None, "float": lambda a: 1.5}[branch]
    ours, theirs = _same_error(lambda L: L.cond(L.tensor(True), fn, lambda a: a.cos(), (L.ones(3),)), exact=False,
                               kind=RuntimeError)
    if branch in ("identity", "view"):
        assert "aliasing" in str(ours) and "aliasing" in str(theirs)


# --------------------------------------------------------------------------- while_loop
def test_while_loop_values_and_gradients(rng):
    torch = torch_or_skip()
    a, upstream = rng.standard_normal(3), rng.standard_normal(3)
    results = []
    for L in (mg, torch):
        x = L.tensor(a, requires_grad=True)
        i, out = L.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, (v.sin() * 2).clone()), (L.tensor(0), x))
        out.backward(L.tensor(upstream))
        results.append([int(i), _np(out), _np(x.grad)])
    assert results[0][0] == results[1][0] == 3
    for ours, theirs in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    expected = a
    for _ in range(3):
        expected = np.sin(expected) * 2
    np.testing.assert_allclose(results[0][1], expected, rtol=1e-12)


def test_while_loop_carries_ints_lists_and_dicts():
    ours, theirs = _both(lambda L: L.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,)))
    assert ours == theirs == (3,)
    ours, theirs = _both(lambda L: L.while_loop(lambda i, a: i < 3, lambda i, a: [i + 1, a * 2], (0, L.ones(2))))
    assert type(ours) is type(theirs) is list and ours[0] == theirs[0] == 3
    np.testing.assert_array_equal(_np(ours[1]), _np(theirs[1]))
    ours, theirs = _both(lambda L: L.while_loop(lambda d: d["i"] < 3, lambda d: ({"i": d["i"] + 1},),
                                                ({"i": L.tensor(0)},)))
    assert int(ours[0]["i"]) == int(theirs[0]["i"]) == 3
    ours, theirs = _both(lambda L: L.while_loop(lambda i: i < 3, lambda i: i + 1, (L.tensor(0),)))
    assert isinstance(ours, mg.Tensor) and int(ours) == int(theirs) == 3     # one carry: the body's tensor itself
    ours, theirs = _both(lambda L: L.while_loop(lambda: False, lambda: (), ()))
    assert ours == theirs == ()


def test_while_loop_with_no_iteration_returns_copies():
    torch = torch_or_skip()
    for L in (mg, torch):
        x = L.arange(3.0)
        out = L.while_loop(lambda v: v.sum() < 0, lambda v: (v + 1,), [x])
        assert isinstance(out, tuple) and out[0] is not x and out[0].data_ptr() != x.data_ptr()
        np.testing.assert_array_equal(_np(out[0]), [0.0, 1.0, 2.0])
    ours, theirs = _both(lambda L: L.while_loop(lambda d: d["i"] < 0, lambda d: ({"i": d["i"] + 1},),
                                                ({"i": L.tensor(0)},)))
    assert isinstance(ours, tuple) and isinstance(ours[0], dict) and int(ours[0]["i"]) == int(theirs[0]["i"]) == 0


def test_while_loop_argument_errors():
    _same_error(lambda L: L.while_loop(1, lambda i: (i + 1,), (L.tensor(0),)))
    ours, theirs = _same_error(lambda L: L.while_loop(lambda i: i < 3, lambda i: (i + 1,), (1.5,)), exact=False)
    assert "can only be of" in str(ours) and "(<class 'float'>,)" in str(ours) and "(<class 'float'>,)" in str(theirs)
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list but got"):
        mg.while_loop(lambda i: i < 3, lambda i: (i + 1,), mg.tensor(0))


WHILE_ERRORS = {
    "cond_int_tensor": (lambda L: L.while_loop(lambda i: i.sum(), lambda i: (i - 1,), (L.tensor(3),)), None),
    "cond_vector": (lambda L: L.while_loop(lambda i: (i < 3).reshape(1), lambda i: (i + 1,), (L.tensor(0),)), None),
    "shape": (lambda L: L.while_loop(lambda i: i.sum() < 3, lambda i: (L.cat([i, i]),), (L.zeros(1),)),
              "same metadata"),
    "dtype": (lambda L: L.while_loop(lambda i: i < 3, lambda i: (i + 1.5,), (L.tensor(0),)), "same metadata"),
    "int_for_tensor": (lambda L: L.while_loop(lambda i: i < 3, lambda i: (3,), (L.tensor(0),)), "same metadata"),
    "alias": (lambda L: L.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a), (L.tensor(0), L.ones(2))),
              "aliasing"),
}


@pytest.mark.parametrize("case", sorted(WHILE_ERRORS))
def test_while_loop_refuses_what_pytorch_refuses(case):
    fn, phrase = WHILE_ERRORS[case]
    ours, theirs = _same_error(fn, exact=False, kind=RuntimeError)
    if phrase:
        assert phrase in str(ours) and phrase in str(theirs)


# --------------------------------------------------------------------------- version, build flags, queries
def test_version_modules():
    torch = torch_or_skip()
    assert mg.version.__version__ == "0.1.0" and type(mg.version.__version__) is str
    assert mg.version.cuda is None and mg.version.hip is None and mg.version.debug is False
    assert isinstance(mg.version.git_version, str)
    assert sorted(mg.version.__all__) == sorted(torch.version.__all__)
    assert type(mg.__version__) is mg.torch_version.TorchVersion and isinstance(mg.__version__, str)
    assert mg.__version__ == "0.1.0" and str(mg.__version__) == "0.1.0" and mg.__version__ >= "0.1"
    assert hash(mg.__version__) == hash("0.1.0") and mg.torch_version.__all__ == ["TorchVersion"]


VERSION_PAIRS = [("2.1.0", "2.0"), ("2.1.0", (2, 0)), ("2.1.0", (2, 1)), ("2.1.0", [2, 1, 0]), ("2.0", "2.0.0"),
                 ("2.13.0+cpu", "2.13.0"), ("2.0.0a0", "2.0.0"), ("2.0.0.dev1", "2.0.0a0"), ("2.0.0.post1", "2.0.0"),
                 ("1.0rc1", "1.0"), ("1.0b2", "1.0rc1"), ("1!0.5", "2.0"), ("1.0+abc", "1.0+5"),
                 ("1.0+abc.2", "1.0+abc.1"), ("1.10", "1.9"), ("parrot", "abc"), ("1.0", "parrot"), ("1.0", (1, "a")),
                 ("v1.0", "1.0"), ("1.0-1", "1.0.post1"), ("1.0.dev0", "1.0a1"), ("1.0", (1,)), ("0.1.0", "0.1.0")]


@pytest.mark.parametrize("pair", VERSION_PAIRS, ids=str)
def test_torch_version_compares_as_pytorchs(pair):
    torch = torch_or_skip()
    from torch.torch_version import TorchVersion
    left, right = pair
    ours, theirs = mg.torch_version.TorchVersion(left), TorchVersion(left)
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        assert getattr(ours, op)(right) == getattr(theirs, op)(right), (op, pair)
    assert (ours == right) == (theirs == right) and (ours != right) == (theirs != right)


@pytest.mark.parametrize("other", [5, None, ()])
def test_torch_version_against_non_versions(other):
    torch = torch_or_skip()
    from torch.torch_version import TorchVersion
    assert (mg.torch_version.TorchVersion("1.0") == other) == (TorchVersion("1.0") == other)
    for pair in ((mg.torch_version.TorchVersion("1.0"), other), (TorchVersion("1.0"), other)):
        with pytest.raises(TypeError):
            pair[0] < pair[1]      # noqa: B015


def test_build_flags_and_thread_init():
    for name in ("has_openmp", "has_mkl", "has_lapack", "has_spectral"):
        assert type(getattr(mg, name)) is bool
    assert mg.has_lapack and mg.has_spectral
    blas = str(np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]).lower()
    assert mg.has_mkl == ("mkl" in blas)
    assert mg.init_num_threads() is None
    _same_error(lambda L: L.init_num_threads(3), exact=False)


def test_get_device_and_is_distributed():
    ours, theirs = _both(lambda L: (L.get_device(L.zeros(2)), L.get_device(input=L.zeros(2)),
                                    L.is_distributed(L.zeros(2))))
    assert ours == theirs == (-1, -1, False)
    _same_error(lambda L: L.get_device(3))
    _same_error(lambda L: L.is_distributed(3))


# --------------------------------------------------------------------------- removed linear algebra
REMOVED = {
    "lstsq": lambda L: L.lstsq(L.ones(3, 3), L.ones(3, 3)), "solve": lambda L: L.solve(L.ones(3, 3), L.ones(3, 3)),
    "eig": lambda L: L.eig(L.ones(3, 3)), "eig_vectors": lambda L: L.eig(L.ones(3, 3), True),
    "symeig": lambda L: L.symeig(L.ones(3, 3), eigenvectors=True), "matrix_rank": lambda L: L.matrix_rank(L.ones(3, 3)),
    "lstsq_out": lambda L: L.lstsq(L.ones(3, 3), L.ones(3, 3), out=(L.ones(1), L.ones(1))),
    "method_eig": lambda L: L.ones(3, 3).eig(), "method_eig_vectors": lambda L: L.ones(3, 3).eig(eigenvectors=True),
    "method_symeig": lambda L: L.ones(3, 3).symeig(), "method_lstsq": lambda L: L.ones(3, 3).lstsq(L.ones(3, 3)),
    "method_solve": lambda L: L.ones(3, 3).solve(L.ones(3, 3)),
}


@pytest.mark.parametrize("case", sorted(REMOVED))
def test_removed_linear_algebra_raises_pytorchs_message(case):
    ours, _ = _same_error(REMOVED[case])
    assert isinstance(ours, RuntimeError) and "torch.linalg" in str(ours)


def test_removed_methods_signatures():
    _same_error(lambda L: L.ones(3, 3).lstsq(), exact=False)
    _same_error(lambda L: L.lstsq(L.ones(3, 3)), exact=False)
    assert not hasattr(mg.Tensor, "matrix_rank")


# --------------------------------------------------------------------------- unsafe_split_with_sizes
def test_unsafe_split_with_sizes_method(rng):
    torch = torch_or_skip()
    a, upstream = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    results = []
    for L in (mg, torch):
        x = L.tensor(a, requires_grad=True)
        pieces = (x * 1).unsafe_split_with_sizes([2, 3], 1)
        assert isinstance(pieces, tuple) and len(pieces) == 2
        pieces[0].mul_(3)                  # the unsafe form lets a piece be written in place, with grad recorded
        L.cat(pieces, 1).backward(L.tensor(upstream))
        results.append([_np(pieces[0]), _np(pieces[1]), _np(x.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    ours, theirs = _both(lambda L: L.arange(6.0).unsafe_split_with_sizes(split_sizes=(1, 5), dim=0))
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(_np(o), _np(t))


@pytest.mark.parametrize("call", ["method_int", "function_int", "bad_sum", "negative"])
def test_unsafe_split_with_sizes_errors(call):
    fn = {"method_int": lambda L: L.arange(6.0).unsafe_split_with_sizes(3),
          "function_int": lambda L: L.unsafe_split_with_sizes(L.arange(6.0), 3),
          "bad_sum": lambda L: L.arange(6.0).reshape(2, 3).unsafe_split_with_sizes([1, 1], 1),
          "negative": lambda L: L.arange(6.0).reshape(2, 3).unsafe_split_with_sizes([-1, 4], 1)}[call]
    _same_error(fn)


# --------------------------------------------------------------------------- as_strided_
def test_as_strided_in_place_values_and_version():
    torch = torch_or_skip()
    for L in (mg, torch):
        x = L.arange(6.0)
        before = x._version
        assert x.as_strided_((2, 2), (1, 2)) is x
        assert tuple(x.shape) == (2, 2) and x.stride() == (1, 2) and x._version == before + 1
        np.testing.assert_array_equal(_np(x), [[0.0, 2.0], [1.0, 3.0]])
        y = L.arange(6.0)
        L.as_strided_(y, (2,), (2,), 1)
        assert y.storage_offset() == 1
        np.testing.assert_array_equal(_np(y), [1.0, 3.0])


@pytest.mark.parametrize("view", [False, True])
def test_as_strided_in_place_gradient(view, rng):
    torch = torch_or_skip()
    a, upstream = rng.standard_normal(6), rng.standard_normal((2, 2))
    results = []
    for L in (mg, torch):
        x = L.tensor(a, requires_grad=True)
        y = x * 2
        target = y[1:] if view else y
        target.as_strided_((2, 2), (1, 2)) if view else target.as_strided_((2, 2), (1, 2), 1)
        target.backward(L.tensor(upstream))
        results.append([_np(target), _np(x.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


AS_STRIDED_ERRORS = {
    "out_of_bounds": lambda L: L.arange(6.0).as_strided_((3, 3), (3, 1)),
    "negative_stride": lambda L: L.arange(6.0).as_strided_((3,), (-1,)),
    "length_mismatch": lambda L: L.arange(6.0).as_strided_((3,), (1, 1)),
    "leaf": lambda L: L.ones(6, requires_grad=True).as_strided_((2, 3), (3, 1)),
}


@pytest.mark.parametrize("case", sorted(AS_STRIDED_ERRORS))
def test_as_strided_in_place_errors(case):
    _same_error(AS_STRIDED_ERRORS[case])


def test_as_strided_in_place_stales_what_a_backward_saved():
    def program(L):
        x = L.ones(6, requires_grad=True)
        y = x * 2
        z = y.sin()                 # saves y
        y.as_strided_((2, 3), (3, 1))
        z.sum().backward()
    _same_error(program, exact=False, kind=RuntimeError)


def test_as_strided_in_place_under_no_grad_on_a_leaf():
    ours, theirs = _both(lambda L: _no_grad_as_strided(L))
    assert ours == theirs


def _no_grad_as_strided(L):
    x = L.ones(6, requires_grad=True)
    with L.no_grad():
        x.as_strided_((2, 3), (3, 1))
    return tuple(x.shape), x.requires_grad, x.grad_fn is None


# --------------------------------------------------------------------------- storage_type
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                                   "uint8", "bool", "complex64", "complex128"])
def test_storage_type(dtype):
    torch = torch_or_skip()
    names = []
    for L in (mg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cls = L.zeros(2, dtype=getattr(L, dtype)).storage_type()
        if L is mg:              # (PyTorch warns the first time only)
            assert any("TypedStorage is deprecated" in str(w.message) for w in caught)
        names.append(cls.__name__)
        assert getattr(L, cls.__name__) is cls
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert isinstance(L.zeros(2, dtype=getattr(L, dtype)).storage(), cls)
            assert not isinstance(L.zeros(2, dtype=L.float32 if dtype != "float32" else L.float64).storage(), cls)
    assert names[0] == names[1]


def test_legacy_storage_classes_make_typed_storages():
    torch = torch_or_skip()
    for L in (mg, torch):
        storage = L.LongStorage([1, 2, 3])
        assert type(storage) is L.TypedStorage and len(storage) == 3 and storage.tolist() == [1, 2, 3]
        assert L.FloatStorage(4).size() == 4
    assert mg.FloatStorage.dtype == mg.float32 and mg.BFloat16Storage.dtype == mg.bfloat16


# --------------------------------------------------------------------------- as_subclass
@pytest.mark.parametrize("leaf", [True, False])
def test_as_subclass_shares_memory_and_history(leaf, rng):
    torch = torch_or_skip()
    a, upstream = rng.standard_normal(3), rng.standard_normal(3)
    results = []
    for L in (mg, torch):
        class Sub(L.Tensor):
            pass
        x = L.tensor(a, requires_grad=True)
        y = x if leaf else x * 2
        s = y.as_subclass(Sub)
        assert type(s) is Sub and s is not y and s.data_ptr() == y.data_ptr()
        assert s.requires_grad and not s.is_leaf and s._is_view()
        (s * 3).backward(L.tensor(upstream))
        results.append(_np(x.grad))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_as_subclass_writes_show_through_and_share_the_version():
    torch = torch_or_skip()
    for L in (mg, torch):
        class Sub(L.Tensor):
            def __init__(self, *args, **kwargs):        # never called by as_subclass
                raise AssertionError("__init__ called")
        n = L.arange(3.0)
        s = n.as_subclass(Sub)
        s[0] = 5
        np.testing.assert_array_equal(_np(n), [5.0, 1.0, 2.0])
        assert n._version == s._version == 1
        back = s.as_subclass(L.Tensor)
        assert type(back) is L.Tensor and back.data_ptr() == n.data_ptr()
        p = L.ones(2).as_subclass(L.nn.Parameter)
        assert type(p) is L.nn.Parameter


@pytest.mark.parametrize("cls", ["int", "number"])
def test_as_subclass_errors(cls):
    _same_error(lambda L: L.ones(2).as_subclass(int if cls == "int" else 3))


@pytest.mark.parametrize("require_grad", [False, True])
def test_make_subclass_makes_a_detached_leaf_of_the_subclass_as_pytorch(require_grad):
    torch = torch_or_skip()
    for L in (mg, torch):
        class Sub(L.Tensor):
            @staticmethod
            def __new__(cls, data, flag=False):
                return L.Tensor._make_subclass(cls, data, flag)

            def doubled(self):
                return self * 2
        x = L.arange(3.0, requires_grad=True) * 1
        s = Sub(x, require_grad)
        assert type(s) is Sub and s.data_ptr() == x.data_ptr() and s.is_leaf and s.grad_fn is None
        assert s.requires_grad is require_grad
        np.testing.assert_array_equal(_np(s.doubled()), [0.0, 2.0, 4.0])
        p = L.Tensor._make_subclass(L.nn.Parameter, L.ones(2), True)
        assert type(p) is L.nn.Parameter and p.requires_grad


def test_a_tensor_keeps_the_attributes_a_program_sets_as_pytorch():
    import copy
    import pickle
    torch = torch_or_skip()
    for L in (mg, torch):
        t = L.ones(2, 3)
        t.tag = ["x"]
        assert copy.deepcopy(t).tag == ["x"] and pickle.loads(pickle.dumps(t)).tag == ["x"]
        assert not hasattr(t.view(3, 2), "tag") and not hasattr(t.detach(), "tag") and not hasattr(t + 1, "tag")
        t.t_()
        assert t.tag == ["x"] and tuple(t.shape) == (3, 2)
        p = L.nn.Parameter(L.ones(2))
        p.note = {"k": 1}
        q = copy.deepcopy(p)                            # (PyTorch's Parameter.__deepcopy__ leaves them out)
        assert not hasattr(q, "note") and p.note == {"k": 1} and type(q) is L.nn.Parameter


# --------------------------------------------------------------------------- module_load
@pytest.mark.parametrize("assign", [False, True])
def test_module_load(assign):
    torch = torch_or_skip()
    for L in (mg, torch):
        target, value = L.zeros(3, requires_grad=True), L.arange(3.0, requires_grad=True)
        with L.no_grad():
            out = target.module_load(value, assign=assign)
        assert out is not target and out is not value and not out.requires_grad
        np.testing.assert_array_equal(_np(out), [0.0, 1.0, 2.0])
        assert out.data_ptr() == (value if assign else target).data_ptr()
        np.testing.assert_array_equal(_np(target), [0.0, 0.0, 0.0] if assign else [0.0, 1.0, 2.0])


# --------------------------------------------------------------------------- set_
def test_set_shares_the_source_memory():
    torch = torch_or_skip()
    for L in (mg, torch):
        a, source = L.zeros(2, 3), L.arange(4.0)
        assert a.set_(source) is a
        assert tuple(a.shape) == (4,) and a.data_ptr() == source.data_ptr()
        a[0] = 7
        np.testing.assert_array_equal(_np(source), [7.0, 1.0, 2.0, 3.0])
        base = L.arange(6.0).reshape(2, 3)
        b = L.zeros(2).set_(base[:, 1:])
        assert b.stride() == (3, 1) and b.storage_offset() == 1 and not b._is_view()
        np.testing.assert_array_equal(_np(b), [[1.0, 2.0], [4.0, 5.0]])
        empty = L.zeros(2, 3, dtype=L.float64).set_()
        assert tuple(empty.shape) == (0,) and empty.dtype == L.float64


SET_FORMS = {
    "tensor_offset_size": lambda L: L.zeros(2).set_(L.arange(6.0)[2:], 1, (2,), (1,)),
    "tensor_no_stride": lambda L: L.zeros(2).set_(L.arange(6.0), 0, (2, 3)),
    "tensor_strided": lambda L: L.zeros(2).set_(L.arange(4.0), 0, (2, 2), (1, 2)),
    "untyped_storage": lambda L: L.zeros(2).set_(L.arange(4.0).untyped_storage()),
    "typed_storage": lambda L: L.zeros(2).set_(L.arange(4.0).storage()),
    "storage_offset_size": lambda L: L.zeros(2).set_(L.arange(4.0).untyped_storage(), 1, (2,), (1,)),
    "storage_other_dtype": lambda L: L.zeros(2, dtype=L.float64).set_(L.arange(6.0).untyped_storage()),
    "keywords": lambda L: L.zeros(2).set_(source=L.arange(6.0), storage_offset=2, size=(2,), stride=(2,)),
}


@pytest.mark.parametrize("form", sorted(SET_FORMS))
def test_set_forms(form):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _both(SET_FORMS[form])
    assert ours.dtype.itemsize == theirs.dtype.itemsize and tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(_np(ours), _np(theirs))


SET_ERRORS = {
    "dtype": lambda L: L.zeros(2).set_(L.arange(3)),
    "dtype_double": lambda L: L.zeros(2, dtype=L.float64).set_(L.zeros(2, dtype=L.int16)),
    "leaf": lambda L: L.zeros(2, requires_grad=True).set_(L.ones(3)),
    "out_of_bounds": lambda L: L.zeros(2).set_(L.arange(6.0), 5, (2,), (1,)),
    "storage_out_of_bounds": lambda L: L.zeros(2).set_(L.arange(6.0).untyped_storage(), 5, (2,), (1,)),
    "negative_offset": lambda L: L.zeros(2).set_(L.arange(6.0), -1, (2,), (1,)),
    "stride_length": lambda L: L.zeros(2).set_(L.arange(6.0), 0, (2, 3), (1,)),
    "negative_stride": lambda L: L.zeros(2).set_(L.arange(6.0), 0, (2,), (-1,)),
    "not_contiguous": lambda L: L.zeros(2).set_(L.arange(6.0).reshape(2, 3).t(), 0, (2,)),
    "typed_storage_dtype": lambda L: L.zeros(2, dtype=L.float64).set_(L.arange(6.0).storage()),
    "no_derivative": lambda L: L.zeros(2).set_(L.ones(3, requires_grad=True) * 2).sum().backward(),
}


@pytest.mark.parametrize("case", sorted(SET_ERRORS))
def test_set_errors(case):
    _same_error(SET_ERRORS[case])


@pytest.mark.parametrize("args", ["int", "offset_without_size", "none_with_size"])
def test_set_argument_combinations(args):
    fn = {"int": lambda L: L.zeros(2).set_(3), "offset_without_size": lambda L: L.zeros(2).set_(L.arange(4.0), 1),
          "none_with_size": lambda L: L.zeros(2).set_(None, 0, (2,))}[args]
    ours, theirs = _same_error(fn, exact=False)
    assert str(ours).split(", but")[0] == str(theirs).split(", but")[0].replace("torch.storage.UntypedStorage",
                                                                               "UntypedStorage")


def test_set_version_counter():
    """PyTorch bumps the tensor's own counter, which it keeps; minigrad counts versions per memory: the tensor
    sees its source's counter afterwards, and the memory it showed before sees the write."""
    a, source = mg.zeros(2, 3), mg.arange(4.0)
    old = a.detach()
    a.set_(source)
    assert old._version == 1 and a._version == source._version == 0
    a[0] = 7
    assert a._version == source._version == 1


def test_set_records_a_result_that_cannot_be_differentiated():
    torch = torch_or_skip()
    for L in (mg, torch):
        r = L.zeros(2).set_(L.ones(3, requires_grad=True) * 2)
        assert r.requires_grad and r.grad_fn is not None
        with L.no_grad():
            leaf = L.zeros(2, requires_grad=True).set_(L.ones(3))     # allowed without recording, as PyTorch
        assert leaf.requires_grad and leaf.is_leaf and tuple(leaf.shape) == (3,)


@pytest.mark.parametrize("case", ["saved", "stale_shape"])
def test_set_stales_what_a_backward_saved(case):
    def saved(L):
        a, w = L.ones(3), L.ones(3, requires_grad=True)
        out = a * w                 # saves a
        a.set_(L.zeros(5))
        out.sum().backward()

    def stale_shape(L):
        x = L.ones(3, requires_grad=True)
        y = x * 2
        with L.no_grad():
            y.set_(L.zeros(4))
        y.sum().backward()
    _same_error(saved if case == "saved" else stale_shape, exact=False, kind=RuntimeError)


# --------------------------------------------------------------------------- resize / resize_as (deprecated)
def test_resize_and_resize_as(rng):
    torch = torch_or_skip()
    a, upstream = rng.standard_normal(6), rng.standard_normal((3, 2))
    results = []
    for L in (mg, torch):
        x = L.tensor(a, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            r = x.resize(3, 2)
        assert r._is_view() and r.data_ptr() == x.data_ptr() and tuple(x.shape) == (6,)
        r.backward(L.tensor(upstream))
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            s = x.detach().resize_as(L.zeros(2, 3))
        results.append([_np(r), _np(x.grad), _np(s)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("case", ["bigger", "tuple", "as_smaller", "matrix"])
def test_resize_errors(case):
    fn = {"bigger": lambda L: L.arange(6.0).resize(2, 4), "tuple": lambda L: L.arange(6.0).resize((3, 2)),
          "as_smaller": lambda L: L.arange(6.0, requires_grad=True).resize_as(L.zeros(2, 2)),
          "matrix": lambda L: L.arange(6.0).reshape(2, 3).resize(4)}[case]
    _same_error(fn)


def test_module_is_pure_numbers():
    """sym_sqrt gives a Python float, as math.sqrt (no NumPy scalar leaks out)."""
    assert type(mg.sym_sqrt(np.float64(2.0))) is float and math.isclose(mg.sym_sqrt(9), 3.0)


# --------------------------------------------------------------------------- reprs of containers and attention
def test_parameter_containers_and_attention_print_as_pytorchs():
    torch = torch_or_skip()
    texts = []
    for L in (mg, torch):
        nn = L.nn
        one = nn.ParameterList([nn.Parameter(L.ones(2))])
        two = nn.ParameterList([nn.Parameter(L.ones(2)), L.ones(3, dtype=L.float64)])
        named = nn.ParameterDict({"a": nn.Parameter(L.ones(2, 3)),
                                  "b": nn.Parameter(L.ones(1, dtype=L.int64), requires_grad=False)})
        attention = nn.MultiheadAttention(8, 2)
        assert type(attention.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(attention.out_proj, nn.Linear)
        texts.append([repr(m).replace(f"{L.__name__}.", "") for m in (one, two, named, attention)])
    assert texts[0] == texts[1]


# --------------------------------------------------------------------------- in, output_nr
@pytest.mark.parametrize("element", ["2", "5", "2.0", "True", "L.tensor([1, 2])", "L.tensor([[3, 4]])", "L.tensor(9)",
                                     "'a'", "None", "[1, 2]", "L.tensor([1, 2, 3])"])
def test_in_is_an_elementwise_equality_as_pytorchs(element):
    def outcome(L):
        try:
            return eval(element, {"L": L}) in L.tensor([[1, 2], [3, 4]])
        except Exception as error:      # noqa: BLE001 - its type is compared
            return type(error).__name__
    ours, theirs = _both(outcome)
    assert ours == theirs


def test_output_nr_is_0_for_single_output_nodes():
    torch = torch_or_skip()
    for L in (mg, torch):
        x = L.ones(2, 3, requires_grad=True)
        assert (x * 2).output_nr == 0 and x.output_nr == 0 and x.exp().sum().output_nr == 0
