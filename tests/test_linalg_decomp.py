"""The linear-algebra family against PyTorch's own op database (OpInfo): every sample's forward values and
dtypes, the float64 gradients of a random upstream gradient, and the error inputs' exception types; plus
finite-difference checks (``gradcheck``/``gradgradcheck``) of the factorizations' first and second derivatives,
and a deliberately wrong backward that these checks catch."""
import copy

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import decomp

from .mirror import torch_or_skip
from .opinfo_util import assert_raises_like, compare_sample, error_inputs, opinfos, resolve, samples


def _with_product(fn):
    """OpInfos whose op is ``lambda a, b, **kw: f(a @ b.mT, **kw)``."""
    return lambda a, b, **kwargs: fn(mg.matmul(a, b.mT), **kwargs)


# op (name, variant) -> minigrad's callable where PyTorch's op is a lambda around the named function
OVERRIDES = {
    ("linalg.pinv", "singular"): _with_product(mg.linalg.pinv),
    ("linalg.lstsq", "grad_oriented"): lambda a, b, driver: mg.linalg.lstsq(a, b, driver=driver)[:2],
    ("svd_lowrank", ""): _with_product(mg.svd_lowrank),
    ("pca_lowrank", ""): _with_product(mg.pca_lowrank),
}

# at most this many samples of an op (spread over its list), to keep the file fast
LIMITS = {"linalg.pinv": 12, "lu": 10, "linalg.lu": 10, "linalg.lu_factor": 10, "linalg.lu_factor_ex": 10,
          "linalg.solve_triangular": 32, "linalg.lu_solve": 36, "linalg.svd": 72, "svd": 72, "ormqr": 48,
          "lu_solve": 27, "linalg.vector_norm": 60, "linalg.norm": 50, "linalg.matrix_norm": 40,
          "linalg.matrix_rank": 24}

# (name, variant): reason. Reviewed, never silent.
SKIPS = {}

# (name, variant): (which samples, reason): samples left out of the comparison, reviewed.
SAMPLE_SKIPS = {
    ("svd_lowrank", ""): (lambda sample: sample.kwargs.get("M") is not None,
                          "A - M has full rank, so the rank-q result is PyTorch's randomized approximation (its "
                          "error depends on the random draws of PyTorch's RNG); minigrad's exact truncated SVD is "
                          "the best rank-q approximation instead"),
}

NAMES = [
    "linalg.cholesky", "linalg.cholesky_ex", "linalg.cond", "linalg.cross", "linalg.det", "linalg.diagonal",
    "linalg.eig", "linalg.eigh", "linalg.eigvals", "linalg.eigvalsh", "linalg.householder_product", "linalg.inv",
    "linalg.inv_ex", "linalg.ldl_factor", "linalg.ldl_factor_ex", "linalg.ldl_solve", "linalg.lstsq", "linalg.lu",
    "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu_solve", "linalg.matrix_power", "linalg.matrix_rank",
    "linalg.multi_dot", "linalg.pinv", "linalg.qr", "linalg.slogdet", "linalg.solve", "linalg.solve_ex",
    "linalg.solve_triangular", "linalg.svd", "linalg.svdvals", "linalg.tensorinv", "linalg.tensorsolve",
    "linalg.vander", "linalg.vecdot", "linalg.vector_norm", "linalg.matrix_norm", "linalg.norm",
    "mm", "mv", "dot", "vdot", "inner", "addmm", "addmv", "addr", "baddbmm", "addbmm", "trace", "kron", "tensordot",
    "cross", "block_diag", "logdet", "cholesky", "cholesky_inverse", "cholesky_solve", "qr", "svd", "pinverse",
    "matrix_exp", "lu", "lu_solve", "lu_unpack", "triangular_solve", "geqrf", "ormqr", "svd_lowrank", "pca_lowrank",
]


def _cases():
    try:
        torch_or_skip()
        from torch.testing._internal.common_methods_invocations import op_db
    except BaseException:  # noqa: BLE001 - no torch: one case that skips
        return [("linalg.inv", "")]
    return sorted({(op.name, op.variant_test_name) for op in op_db if op.name in NAMES})


# Ops whose raw outputs include eigen- or singular vectors: their signs (phases) are whatever the LAPACK build
# returns (NumPy's OpenBLAS and PyTorch's differ on some columns), so the forward is compared after the
# sample's own ``output_process_fn_grad`` (|V|, U Vh, S), which removes that freedom; gradients as always.
# svd_lowrank/pca_lowrank: PyTorch's randomized range finder draws from its own RNG, which fixes the signs;
# minigrad computes the truncated SVD exactly, equal up to those signs.
GAUGE = {"linalg.eig", "linalg.eigh", "linalg.svd", "svd", "svd_lowrank", "pca_lowrank"}


def _gauge_free(op, sample, fn):
    """(op, sample, fn) comparing ``sample.output_process_fn_grad`` of both libraries' outputs."""
    post = sample.output_process_fn_grad
    shim = type("GaugeFree", (), {"op": staticmethod(lambda *a, **k: post(op.op(*a, **k))),
                                  "supports_autograd": op.supports_autograd})
    plain = copy.copy(sample)
    plain.output_process_fn_grad = lambda out: out
    return shim, plain, (lambda *a, **k: post(fn(*a, **k)))


def run_samples(name, variant, kind="function", dtype=None, limit=None):
    """Every sample of the OpInfo through ``compare_sample``: (compared, failures as (sample, error))."""
    (op,) = opinfos(name, variant)
    fn = OVERRIDES.get((name, variant)) if kind == "function" else None
    fn = fn or resolve(op, kind)
    assert fn is not None, f"minigrad has no {kind} {name}"
    compared, failures = 0, []
    left_out = SAMPLE_SKIPS.get((name, variant), (lambda sample: False, ""))[0]
    for sample in samples(op, dtype=dtype, limit=limit or LIMITS.get(name)):
        if left_out(sample):
            continue
        try:
            if name in GAUGE:
                compare_sample(*_gauge_free(op, sample, fn))
            else:
                compare_sample(op, sample, fn)
            compared += 1
        except pytest.skip.Exception:
            continue
        except Exception as error:      # noqa: BLE001 - every failing sample is reported, not only the first
            compared += 1
            failures.append((sample, error))
    return compared, failures


def _describe(failures):
    lines = []
    for sample, error in failures[:8]:
        shapes = [tuple(t.shape) for t in [sample.input, *sample.args] if hasattr(t, "shape")]
        lines.append(f"  shapes {shapes} kwargs {sample.kwargs}: {type(error).__name__}: {str(error)[:300]}")
    return "\n".join(lines)


@pytest.mark.parametrize("name,variant", _cases())
def test_opinfo_samples(name, variant):
    if (name, variant) in SKIPS:
        pytest.skip(SKIPS[(name, variant)])
    compared, failures = run_samples(name, variant)
    assert not failures, f"{name} ({variant}): {len(failures)} of {compared} samples differ\n{_describe(failures)}"


def _method_cases():
    try:
        torch_or_skip()
        from torch.testing._internal.common_methods_invocations import op_db
    except BaseException:  # noqa: BLE001 - no torch: one case that skips
        return [("mm", "")]
    return sorted({(op.name, op.variant_test_name) for op in op_db
                   if op.name in NAMES and op.method_variant is not None})


@pytest.mark.parametrize("name,variant", _method_cases())
def test_opinfo_methods(name, variant):
    """Every Tensor method PyTorch has for these ops, on a few of its samples (the function form is tested on
    all above; the method is the same function bound to Tensor)."""
    compared, failures = run_samples(name, variant, "method", limit=4)
    assert not failures, f"Tensor.{name}: {len(failures)} of {compared} samples differ\n{_describe(failures)}"


@pytest.mark.parametrize("name", ["addmm", "addmv", "addr", "baddbmm", "addbmm"])
def test_opinfo_inplace(name):
    """The in-place forms (``addmm_``, ...) on the samples whose input already has the result's shape."""
    torch = torch_or_skip()
    (op,) = opinfos(name, "")
    fn = resolve(op, "inplace")
    done = 0
    for sample in samples(op, requires_grad=False):
        x = sample.input
        expected = op.op(x, *sample.args, **sample.kwargs)
        if tuple(expected.shape) != tuple(x.shape):
            continue
        mine = mg.tensor(x.numpy().copy())
        args = [mg.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in sample.args]
        out = fn(mine, *args, **sample.kwargs)
        assert out is mine
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
        done += 1
    assert done


ERROR_CASES = [("linalg.cross", ""), ("linalg.diagonal", ""), ("dot", ""), ("vdot", ""), ("trace", ""),
               ("ormqr", ""), ("linalg.lstsq", ""), ("linalg.lstsq", "grad_oriented")]


@pytest.mark.parametrize("name,variant", ERROR_CASES)
def test_opinfo_error_inputs(name, variant):
    (op,) = opinfos(name, variant)
    fn = OVERRIDES.get((name, variant)) or resolve(op)
    errors = error_inputs(op)
    assert errors
    for error in errors:
        assert_raises_like(op, error, fn)


# --------------------------------------------------------------------------- finite differences, second order
def _spd(n, rng):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _leaf(array):
    return mg.tensor(array, dtype=mg.float64, requires_grad=True)


def _gauge_free_svd(A):
    U, S, Vh = mg.linalg.svd(A, full_matrices=False)
    return mg.matmul(U, Vh), S          # U Vh does not depend on the singular vectors' signs


def _gauge_free_eigh(A):
    L, V = mg.linalg.eigh(mg.matmul(A, A.mT) * 0.5 + A.mT * 0.5 + A * 0.5)
    return L, (V * V)                   # the squared entries do not depend on the eigenvectors' signs


GRADCHECKS = {
    "inv": (lambda A: mg.linalg.inv(A), lambda rng: rng.standard_normal((3, 3)) + 3 * np.eye(3)),
    "solve": (lambda A, B: mg.linalg.solve(A, B), lambda rng: (rng.standard_normal((3, 3)) + 3 * np.eye(3),
                                                                rng.standard_normal((3, 2)))),
    "slogdet": (lambda A: mg.linalg.slogdet(A)[1], lambda rng: rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)),
    "det": (lambda A: mg.linalg.det(A), lambda rng: rng.standard_normal((3, 3))),
    "cholesky": (lambda A: mg.linalg.cholesky(mg.matmul(A, A.mT)), lambda rng: _spd(3, rng)),
    "qr": (lambda A: tuple(mg.linalg.qr(A)), lambda rng: rng.standard_normal((4, 3))),
    "qr_wide": (lambda A: tuple(mg.linalg.qr(A)), lambda rng: rng.standard_normal((2, 4))),
    "eigh": (_gauge_free_eigh, lambda rng: rng.standard_normal((3, 3))),
    "svd": (_gauge_free_svd, lambda rng: rng.standard_normal((4, 3))),
    "lu": (lambda A: tuple(mg.linalg.lu(A))[1:], lambda rng: rng.standard_normal((3, 3))),
    "lu_wide": (lambda A: tuple(mg.linalg.lu(A))[1:], lambda rng: rng.standard_normal((2, 4))),
    "lu_tall": (lambda A: tuple(mg.linalg.lu(A))[1:], lambda rng: rng.standard_normal((4, 2))),
    "pinv": (lambda A: mg.linalg.pinv(A), lambda rng: rng.standard_normal((4, 3))),
    "matrix_exp": (lambda A: mg.linalg.matrix_exp(A), lambda rng: rng.standard_normal((3, 3)) * 0.5),
    "solve_triangular": (lambda A, B: mg.linalg.solve_triangular(A, B, upper=False),
                         lambda rng: (rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2)))),
    "householder_product": (lambda A, tau: mg.linalg.householder_product(A, tau),
                            lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3))),
    "svd_wide": (_gauge_free_svd, lambda rng: rng.standard_normal((2, 4))),
    "eig": (lambda A: tuple(mg.real(t) for t in _gauge_free_eig(A)), lambda rng: rng.standard_normal((3, 3))),
    "lu_solve": (lambda LU, B: mg.linalg.lu_solve(LU, _PIVOTS, B, adjoint=True),
                 lambda rng: (rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2)))),
    "lstsq": (lambda A, B: mg.linalg.lstsq(A, B).solution, lambda rng: (rng.standard_normal((4, 3)),
                                                                        rng.standard_normal((4, 2)))),
    "cholesky_solve": (lambda B, L: mg.cholesky_solve(B, L), lambda rng: (rng.standard_normal((3, 2)),
                                                                          np.tril(_spd(3, rng)))),
}


def _gauge_free_eig(A):
    L, V = mg.linalg.eig(A)
    return L, mg.abs(V)                 # |V| does not depend on the eigenvectors' phases


_PIVOTS = mg.tensor(np.array([1, 3, 3], np.int32))      # a row permutation (LAPACK's 1-based swaps)


def _inputs(make, seed=0):
    made = make(np.random.default_rng(seed))
    return [_leaf(a) for a in (made if isinstance(made, tuple) else (made,))]


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, make = GRADCHECKS[name]
    assert mg.gradcheck(fn, _inputs(make), eps=1e-6, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", ["inv", "slogdet", "det", "cholesky", "qr", "eigh", "svd", "lu", "matrix_exp",
                                  "pinv", "solve_triangular", "eig", "lu_solve"])
def test_gradgradcheck(name):
    fn, make = GRADCHECKS[name]
    assert mg.gradgradcheck(fn, _inputs(make, seed=1), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_svd_gauge_dependent_loss_raises_for_complex():
    """A loss that depends on the phases of complex singular vectors is ill-defined: PyTorch raises, so does
    minigrad (a real loss on U alone, Re U[0, 0], changes when U's columns are rotated by e^{i phi})."""
    rng = np.random.default_rng(0)
    A = mg.tensor(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)), requires_grad=True)
    U = mg.linalg.svd(A)[0]
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        mg.autograd.grad([mg.real(U)], [A], [mg.tensor(np.eye(3))])


def test_a_wrong_backward_is_caught(monkeypatch):
    """A mutant of the Cholesky backward (the diagonal not halved: P = M + tril(M, -1)^H) must fail both the
    OpInfo comparison and gradcheck; the true formula passes them (the tests above)."""
    def wrong(ctx, grads, inputs, outputs, upper=False):
        (gL,), _, (L,) = grads, inputs, outputs
        if upper:
            L, gL = decomp.mH(L), decomp.mH(gL)
        M = mg.tril(mg.matmul(decomp.mH(L), gL))
        P = M + decomp.mH(mg.tril(M, -1))
        gA = decomp.solve_triangular(decomp.mH(L), P, upper=True, left=True)
        return decomp.solve_triangular(L, gA, upper=False, left=False)
    monkeypatch.setattr(decomp.Cholesky, "gradient", staticmethod(wrong))
    fn, make = GRADCHECKS["cholesky"]
    assert not mg.gradcheck(fn, _inputs(make), eps=1e-6, atol=1e-6, rtol=1e-5, raise_exception=False)
    compared, failures = run_samples("linalg.cholesky", "")
    assert failures and compared


# --------------------------------------------------------------------------- degenerate inputs, as PyTorch has them
SINGULAR = [np.array([[1., 2.], [2., 4.]]), np.stack([np.diag([1., 2., 0.]), 2 * np.eye(3)])]


@pytest.mark.parametrize("which", ["det", "slogdet"])
@pytest.mark.parametrize("case", range(len(SINGULAR)))
def test_singular_determinant_gradients_match_pytorch(which, case):
    """det of an exactly singular matrix: PyTorch's gradient is zero there (not the cofactor matrix); slogdet's
    is the infs and NaNs of the solve with a zero pivot. minigrad gives the same, and does not raise."""
    torch = torch_or_skip()
    a = SINGULAR[case]
    g = np.random.default_rng(case).standard_normal(a.shape[:-2])
    t, m = torch.tensor(a, requires_grad=True), mg.tensor(a, requires_grad=True)
    pick_t = (lambda r: r) if which == "det" else (lambda r: r[1])
    pick_t(getattr(torch.linalg, which)(t)).backward(torch.tensor(g))
    pick_t(getattr(mg.linalg, which)(m)).backward(mg.tensor(g))
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)


def _singular_and_indefinite():
    singular = np.stack([np.eye(3), np.diag([1., 0., 2.])])
    indefinite = np.stack([np.eye(3), np.diag([1., -1., 2.])])
    return singular, indefinite


@pytest.mark.parametrize("name", ["inv_ex", "solve_ex", "cholesky_ex", "lu_factor_ex"])
def test_ex_variants_report_info_like_pytorch(name):
    """The ``_ex`` forms return LAPACK's ``info`` per matrix instead of raising; with ``check_errors=True``
    they raise ``LinAlgError`` (a RuntimeError), as do the plain forms."""
    torch = torch_or_skip()
    singular, indefinite = _singular_and_indefinite()
    a = indefinite if name == "cholesky_ex" else singular
    args_t, args_m = [torch.tensor(a)], [mg.tensor(a)]
    if name == "solve_ex":
        b = np.ones((2, 3, 1))
        args_t.append(torch.tensor(b))
        args_m.append(mg.tensor(b))
    info_t = getattr(torch.linalg, name)(*args_t)[-1]
    info_m = getattr(mg.linalg, name)(*args_m)[-1]
    assert str(info_m.dtype).endswith(str(info_t.dtype).rpartition(".")[2])
    np.testing.assert_array_equal(info_m.numpy(), info_t.numpy())
    with pytest.raises(RuntimeError) as want:
        getattr(torch.linalg, name)(*args_t, check_errors=True)
    expected = mg.linalg.LinAlgError if isinstance(want.value, torch.linalg.LinAlgError) else RuntimeError
    with pytest.raises(expected) as got:
        getattr(mg.linalg, name)(*args_m, check_errors=True)
    assert isinstance(got.value, mg.linalg.LinAlgError) == (expected is mg.linalg.LinAlgError)
    assert issubclass(mg.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("name", ["inv", "cholesky", "solve"])
def test_failures_raise_linalg_error(name):
    torch = torch_or_skip()
    singular, indefinite = _singular_and_indefinite()
    a = indefinite if name == "cholesky" else singular
    extra = [np.ones((2, 3))] if name == "solve" else []
    with pytest.raises(torch.linalg.LinAlgError) as want:
        getattr(torch.linalg, name)(torch.tensor(a), *[torch.tensor(e) for e in extra])
    with pytest.raises(mg.linalg.LinAlgError) as got:
        getattr(mg.linalg, name)(mg.tensor(a), *[mg.tensor(e) for e in extra])
    assert "Batch element 1" in str(want.value) and "Batch element 1" in str(got.value)


def test_scipy_missing_names_the_extra(monkeypatch):
    """LU, LDL, geqrf and the matrix exponential need SciPy (the optional ``linalg`` extra): without it, an
    ImportError says what to install."""
    import sys
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r'pip install "minigrad\[linalg\]"'):
        mg.linalg.matrix_exp(mg.eye(2, dtype=mg.float64))
    assert mg.linalg.inv(mg.eye(2, dtype=mg.float64)).shape == (2, 2)    # NumPy's LAPACK needs no SciPy


ALIASES = {   # names without an OpInfo of their own: the same values and gradients as PyTorch's
    "det": lambda lib, a, b: lib.det(a),
    "slogdet": lambda lib, a, b: lib.slogdet(a).logabsdet * lib.slogdet(a)[0],
    "inverse": lambda lib, a, b: lib.inverse(a),
    "matrix_power": lambda lib, a, b: lib.matrix_power(a, -2),
    "linalg.matrix_exp": lambda lib, a, b: lib.linalg.matrix_exp(a),
    "chain_matmul": lambda lib, a, b: lib.chain_matmul(a, b, a),
    "Tensor.mH": lambda lib, a, b: lib.matmul(a.mH, b),
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_aliases_without_opinfo(name):
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3), rng.standard_normal((2, 3, 3))
    if name == "chain_matmul":
        a, b = a[0], b[0]
    ts = [torch.tensor(x, requires_grad=True) for x in (a, b)]
    ms = [mg.tensor(x, requires_grad=True) for x in (a, b)]
    out_t, out_m = ALIASES[name](torch, *ts), ALIASES[name](mg, *ms)
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(out_t.shape)
    grads_t = torch.autograd.grad(out_t, ts, torch.tensor(g), allow_unused=True)
    grads_m = mg.autograd.grad([out_m], ms, [mg.tensor(g)], allow_unused=True)
    for gt, gm in zip(grads_t, grads_m):
        if gt is None:
            assert gm is None or not np.any(gm.numpy())
        else:
            np.testing.assert_allclose(gm.numpy(), gt.numpy(), rtol=1e-9, atol=1e-11)


COMPLEX_CASES = ["linalg.inv", "linalg.solve", "linalg.det", "linalg.slogdet", "linalg.cholesky", "linalg.qr",
                 "linalg.eigh", "linalg.eig", "linalg.svd", "linalg.pinv", "linalg.lstsq", "linalg.lu_factor",
                 "linalg.householder_product", "matrix_exp", "linalg.vector_norm",
                 "linalg.matrix_norm", "linalg.vecdot", "vdot", "ormqr"]


@pytest.mark.parametrize("name", COMPLEX_CASES)
def test_opinfo_complex_samples(name):
    """Complex inputs: a few complex128 samples of each (values, dtypes, and the gradients of a real loss,
    PyTorch's conjugate convention), including the phase checks of eigh/eig/svd on gauge-free losses."""
    torch = torch_or_skip()
    compared, failures = run_samples(name, "", dtype=torch.complex128, limit=6)
    assert compared and not failures, f"{name}: {len(failures)} of {compared} samples differ\n{_describe(failures)}"


@pytest.mark.parametrize("shape", [(3, 3), (3, 4), (4, 2)])
@pytest.mark.parametrize("which", ["svdvals", "nuclear norm", "U and V"])
def test_complex_svd_second_derivatives_match_pytorch(shape, which):
    """Under create_graph the complex SVD's gradient keeps the diagonal PyTorch's formula keeps (zero at the point,
    not in its derivative) and adds the phases' term i Im(diag(U^H gU)) / S: second derivatives as PyTorch's."""
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    a0 = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    h0 = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    w0 = rng.standard_normal((min(shape), min(shape)))

    def loss(lib, a):
        if which == "svdvals":
            return (lib.linalg.svdvals(a) * lib.tensor(w0[0])).sum()
        if which == "nuclear norm":
            return lib.linalg.matrix_norm(a, "nuc")
        U, S, Vh = lib.linalg.svd(a, full_matrices=False)
        return ((U @ Vh).abs() ** 2).sum() + (S * lib.tensor(w0[1])).sum()   # phase-invariant: U Vh, S

    results = []
    for lib in (mg, torch):
        a = lib.tensor(a0, requires_grad=True)
        (g,) = lib.autograd.grad(loss(lib, a), a, create_graph=True)
        (gg,) = lib.autograd.grad(g, a, lib.tensor(h0))
        results.append([t.detach().resolve_conj().numpy() if lib is torch else t.detach().numpy() for t in (g, gg)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)


def test_lu_permutation_has_no_gradient():
    """linalg.lu's P is not differentiable in PyTorch: it does not require grad, L and U do."""
    a = mg.tensor(np.random.default_rng(0).standard_normal((3, 5)), requires_grad=True)
    P, L, U = mg.linalg.lu(a)
    assert (P.requires_grad, L.requires_grad, U.requires_grad) == (False, True, True)


def test_svd_lowrank_gradient_where_a_dropped_singular_value_is_exactly_zero():
    """svd_lowrank truncates a full SVD to q components; for an A of rank q the dropped singular values can be exactly
    0 (here by construction, on some CPUs for the op database's rank-q samples), and their 1/S terms were 0 / 0 = NaN
    in the gradient. No gradient flows into dropped components, so those terms are 0: finite differences agree."""
    a = np.array([[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])   # singular values 3, 2, 0
    assert np.linalg.svd(a, compute_uv=False)[-1] == 0.0
    rng = np.random.default_rng(3)
    v, w = mg.tensor(rng.standard_normal(2)), mg.tensor(rng.standard_normal((4, 3)))

    def gauge_free(x):                         # depends on S and on U S V^T, not on the vectors' signs
        U, S, V = mg.svd_lowrank(x, q=2)
        return (S * v).sum() + ((U * S) @ V.mT * w).sum()
    x = mg.tensor(a, requires_grad=True)
    (g,) = mg.autograd.grad(gauge_free(x), x)
    assert np.isfinite(g.numpy()).all()
    assert mg.autograd.gradcheck(gauge_free, (x,))


@pytest.mark.parametrize("b_shape", [(3, 3), (2, 1, 3, 2), (3, 3, 1)])
def test_cholesky_solve_broadcasts_b_as_matrices_as_pytorch(b_shape):
    """B is always a (batch of) matrix: an (n, n) B beside a batch of n factors is one matrix broadcast over the
    batch, not n vectors (it was read as vectors through linalg.solve's rule)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 3, 3))
    L = np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3))
    B = rng.standard_normal(b_shape)
    upstream = rng.standard_normal(np.broadcast_shapes(b_shape[:-2], (3,)) + b_shape[-2:])
    results = []
    for lib in (mg, torch):
        b, factor = lib.tensor(B, requires_grad=True), lib.tensor(L, requires_grad=True)
        x = lib.cholesky_solve(b, factor)
        x.backward(lib.tensor(upstream))
        results.append([x.detach().numpy(), b.grad.numpy(), factor.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
