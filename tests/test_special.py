"""minigrad.special (and erfc, erfinv, exp2, i0, logit, sinc, xlogy, igamma, igammac) against PyTorch's OpInfo
samples, aliases, methods and in-place variants; finite differences and double backward of every gradient;
PyTorch's refusals (no gradient for the Bessel functions and polynomials, none for zeta's and igamma's first
argument); one wrong derivative the checks catch."""
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import special as ops_special

from .mirror import torch_or_replay
from .opinfo_util import (check_error_inputs, compare_complex_gradients, compare_sample, compare_samples, op_db,
                          opinfos, resolve, samples)

torch = torch_or_replay()

SPECIAL = [
    "special.airy_ai", "special.bessel_j0", "special.bessel_j1", "special.bessel_y0", "special.bessel_y1",
    "special.chebyshev_polynomial_t", "special.chebyshev_polynomial_u", "special.chebyshev_polynomial_v",
    "special.chebyshev_polynomial_w", "special.shifted_chebyshev_polynomial_t",
    "special.shifted_chebyshev_polynomial_u", "special.shifted_chebyshev_polynomial_v",
    "special.shifted_chebyshev_polynomial_w", "special.hermite_polynomial_h", "special.hermite_polynomial_he",
    "special.laguerre_polynomial_l", "special.legendre_polynomial_p", "special.entr", "special.erfcx",
    "special.i0e", "special.i1", "special.i1e", "special.log_ndtr", "special.modified_bessel_i0",
    "special.modified_bessel_i1", "special.modified_bessel_k0", "special.modified_bessel_k1",
    "special.scaled_modified_bessel_k0", "special.scaled_modified_bessel_k1", "special.ndtr", "special.ndtri",
    "special.spherical_bessel_j0", "special.xlog1py", "special.zeta",
]
TOP_LEVEL = ["erfc", "erfinv", "exp2", "i0", "logit", "sinc", "xlogy", "igamma", "igammac"]

# PyTorch's own Bessel J0, J1, Y0, Y1 are off by up to ~3e-7 (absolute) near 5 < |x| < 6, where SciPy's agree
# with mpmath to 1e-16 (measured): their samples are compared to that accuracy
# (and Airy's Ai differs by up to 7e-9, relative, from SciPy's)
TOLERANCE = {name: 1e-6 for name in ("special.bessel_j0", "special.bessel_j1", "special.bessel_y0",
                                     "special.bessel_y1")}
TOLERANCE["special.airy_ai"] = 1e-7


@pytest.mark.parametrize("name", SPECIAL + TOP_LEVEL)
def test_opinfo_samples(name):
    """Every float64 sample: values, dtype, and (where PyTorch differentiates) gradients of a random upstream."""
    fn = resolve(name)
    assert fn is not None, f"minigrad has no {name}"
    tol = TOLERANCE.get(name, 1e-10)
    assert compare_samples(name, fn, rtol=tol, atol=tol, grad_rtol=1e-9, grad_atol=1e-9)


def _float32_and_int64_samples(op, torch):
    return [sample for dtype in (torch.float32, torch.int64) if dtype in op.supported_dtypes("cpu")
            for sample in samples(op, dtype, requires_grad=False, limit=4)]


@pytest.mark.parametrize("name", ["special.i1", "special.ndtri", "special.zeta", "special.legendre_polynomial_p",
                                  "xlogy", "logit"])
def test_single_precision_and_integer_samples(name):
    """float32 stays float32; integers compute in the default float dtype, as PyTorch (values to float32)."""
    compare_samples(name, resolve(name), _float32_and_int64_samples, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["exp2", "sinc"])
def test_complex_samples(name):
    """exp2 and sinc take complex numbers, as in PyTorch: values, and gradients grad * conj(f'(z))."""
    (op,) = opinfos(name)
    compared = 0
    for sample in samples(op, torch.complex128):
        compare_sample(op, sample, resolve(op), rtol=1e-10, atol=1e-10)
        compared += compare_complex_gradients(op, sample, resolve(op))
    assert compared
    with pytest.raises(NotImplementedError):
        mg.special.erfc(mg.tensor([0.5 + 1j]))


def _alias_opinfos():
    return [(alias.name, op) for op in op_db() for alias in op.aliases
            if "special." in alias.name and op.name not in ("digamma", "lgamma", "mvlgamma")]


def test_special_aliases():
    """torch.special's other names (expit, gammainc, erf, softmax, ...) resolve and agree with PyTorch."""
    pairs = _alias_opinfos()
    assert len(pairs) >= 15
    for alias, op in pairs:
        fn = getattr(mg.special, alias.rpartition(".")[2], None)
        assert fn is not None, f"minigrad.special has no {alias}"
        for sample in samples(op, limit=3):
            compare_sample(op, sample, fn, rtol=1e-10, atol=1e-10, grad_rtol=1e-9, grad_atol=1e-9)


def test_gamma_family_appears_under_special_names(monkeypatch):
    """gammaln/psi/... are minigrad's lgamma/digamma/... once those exist (ops/gamma.py, another branch); until
    then, an AttributeError."""
    if not hasattr(mg, "lgamma"):
        monkeypatch.setattr(mg, "lgamma", object(), raising=False)
    assert mg.special.gammaln is mg.lgamma
    if "multigammaln" not in vars(mg.special):
        monkeypatch.delattr(mg, "mvlgamma", raising=False)
        with pytest.raises(AttributeError):
            mg.special.multigammaln


@pytest.mark.parametrize("name", [n for n in SPECIAL + TOP_LEVEL])
def test_error_inputs(name):
    check_error_inputs(name, resolve(name))


# --------------------------------------------------------------------------- methods and in place
@pytest.mark.parametrize("name", TOP_LEVEL)
def test_method_and_inplace_variants(name):
    """``x.name(...)`` and ``x.name_(...)`` on a non-leaf (so the write is recorded): PyTorch's values and the
    gradient of the leaf through the in-place write, for a random upstream."""
    (op,) = opinfos(name)
    method, inplace = resolve(op, "method"), resolve(op, "inplace")
    assert method is not None and inplace is not None
    rng = np.random.default_rng(0)
    for sample in samples(op, limit=4):
        compare_sample(op, sample, method, rtol=1e-10, atol=1e-10, gradients=False)
        if sample.broadcasts_input:
            continue
        x = sample.input.detach().numpy()
        args = [a.detach().numpy() if isinstance(a, torch.Tensor) else a for a in sample.args]
        up = rng.standard_normal(x.shape)
        leaf_th = torch.tensor(x, requires_grad=True)
        leaf_mg = mg.tensor(x, requires_grad=True)
        out_th = op.inplace_variant(leaf_th * 1.0, *[torch.tensor(a) if isinstance(a, np.ndarray) else a
                                                     for a in args], **sample.kwargs)
        out_mg = inplace(leaf_mg * 1.0, *[mg.tensor(a) if isinstance(a, np.ndarray) else a for a in args],
                         **sample.kwargs)
        np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().numpy(), rtol=1e-10, atol=1e-10)
        if op.supports_autograd and name not in ("igamma", "igammac"):
            out_th.backward(torch.tensor(up))
            out_mg.backward(mg.tensor(up))
            np.testing.assert_allclose(leaf_mg.grad.numpy(), leaf_th.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_inplace_into_integers_refused_like_pytorch():
    for name in ("erfc_", "exp2_", "sinc_"):
        with pytest.raises(RuntimeError):
            getattr(torch.Tensor, name)(torch.arange(3))
        with pytest.raises(RuntimeError):
            getattr(mg.Tensor, name)(mg.arange(3))


# --------------------------------------------------------------------------- gradients
rng = np.random.default_rng(1)
INTERIOR = {   # function, arguments (float arrays require grad), where the function is smooth
    "erfc": (mg.special.erfc, [rng.uniform(-2, 2, 6)]),
    "erfinv": (mg.special.erfinv, [rng.uniform(-0.9, 0.9, 6)]),
    "erfcx": (mg.special.erfcx, [rng.uniform(-2, 3, 6)]),
    "exp2": (mg.special.exp2, [rng.uniform(-2, 2, 6)]),
    "sinc": (mg.special.sinc, [rng.uniform(-3, 3, 6)]),
    "i0": (mg.special.i0, [rng.uniform(-3, 3, 6)]),
    "i0e": (mg.special.i0e, [rng.uniform(0.2, 3, 3) * np.array([1, -1, 1])]),
    "i1": (mg.special.i1, [rng.uniform(-3, 3, 6)]),
    "i1e": (mg.special.i1e, [rng.uniform(0.2, 3, 4) * np.array([1, -1, 1, -1])]),
    "ndtr": (mg.special.ndtr, [rng.uniform(-3, 3, 6)]),
    "ndtri": (mg.special.ndtri, [rng.uniform(0.05, 0.95, 6)]),
    "log_ndtr": (mg.special.log_ndtr, [rng.uniform(-6, 3, 6)]),
    "entr": (mg.special.entr, [rng.uniform(0.1, 3, 6)]),
    "logit": (mg.special.logit, [rng.uniform(0.05, 0.95, 6)]),
    "logit eps": (lambda x: mg.special.logit(x, eps=0.2), [np.array([0.1, 0.3, 0.5, 0.7, 0.9])]),
    "xlogy": (mg.special.xlogy, [rng.uniform(-2, 2, (3, 1)), rng.uniform(0.2, 3, 4)]),
    "xlog1py": (mg.special.xlog1py, [rng.uniform(-2, 2, 4), rng.uniform(-0.8, 3, 4)]),
    "zeta in q": (lambda q: mg.special.zeta(mg.tensor(np.array([2.5, 3.0, 4.2])), q), [rng.uniform(0.5, 3, 3)]),
    "igamma in x": (lambda x: mg.igamma(mg.tensor(np.array([0.7, 2.0, 3.5])), x), [rng.uniform(0.3, 4, 3)]),
    "igammac in x": (lambda x: mg.igammac(mg.tensor(np.array([0.7, 2.0, 3.5])), x), [rng.uniform(0.3, 4, 3)]),
}


def _leaves(arrays):
    return [mg.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("name", list(INTERIOR))
def test_gradcheck(name):
    fn, arrays = INTERIOR[name]
    assert mg.gradcheck(fn, _leaves(arrays), eps=1e-6, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("name", list(INTERIOR))
def test_gradgradcheck(name):
    fn, arrays = INTERIOR[name]
    assert mg.gradgradcheck(fn, _leaves(arrays), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", ["i1", "i1e", "sinc"])
def test_gradient_at_zero_is_pytorchs_limit(name):
    x = np.array([0.0, 1.5])
    up = np.array([0.7, -1.3])
    t = torch.tensor(x, requires_grad=True)
    getattr(torch.special, name)(t).backward(torch.tensor(up))
    m = mg.tensor(x, requires_grad=True)
    getattr(mg.special, name)(m).backward(mg.tensor(up))
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["airy_ai", "bessel_j0", "modified_bessel_k1", "spherical_bessel_j0"])
def test_bessel_outputs_do_not_require_grad(name):
    x = mg.tensor(np.array([0.5, 1.5]), requires_grad=True)
    assert not getattr(mg.special, name)(x).requires_grad
    assert not getattr(torch.special, name)(torch.tensor([0.5, 1.5], requires_grad=True)).requires_grad


def test_polynomial_outputs_do_not_require_grad():
    x = mg.tensor(np.array([0.5, 1.5]), requires_grad=True)
    assert not mg.special.chebyshev_polynomial_t(x, 3).requires_grad
    assert not mg.special.hermite_polynomial_h(2.0, x).requires_grad


@pytest.mark.parametrize("fn", [lambda lib, a, b: lib.special.zeta(a, b), lambda lib, a, b: lib.igamma(a, b),
                                lambda lib, a, b: lib.igammac(a, b)])
def test_first_argument_not_differentiable_like_pytorch(fn):
    for lib, tensor in ((torch, torch.tensor), (mg, mg.tensor)):
        a = tensor(np.array([2.5, 3.0]), requires_grad=True)
        b = tensor(np.array([1.5, 2.0]))
        out = fn(lib, a, b)
        assert out.requires_grad
        with pytest.raises(NotImplementedError, match="derivative for"):
            out.backward(tensor(np.array([1.0, -1.0])))


def test_binary_refuses_two_numbers():
    for lib in (torch, mg):
        with pytest.raises(TypeError):
            lib.special.xlog1py(2, 3)
        with pytest.raises(TypeError):
            lib.igamma(mg.tensor([1.0]) if lib is mg else torch.tensor([1.0]), 2)


def test_mutant_derivative_is_caught(monkeypatch):
    """i1e's derivative without the -sign(x) i1e(x) term (the exp(-|x|) factor forgotten): finite differences
    and PyTorch's samples both disagree."""
    fn, arrays = INTERIOR["i1e"]
    assert mg.gradcheck(fn, _leaves(arrays), atol=1e-7, rtol=1e-6)
    monkeypatch.setattr(ops_special.I1e, "derivative",
                        staticmethod(lambda x, out: ops_special._near_zero(x, ops_special._i0e(x) - out / x)))
    assert not mg.gradcheck(fn, _leaves(arrays), atol=1e-7, rtol=1e-6, raise_exception=False)
    with pytest.raises(AssertionError, match="gradient"):
        compare_samples("special.i1e", resolve("special.i1e"))


def test_missing_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"minigrad\[special\]"):
        mg.special.erfcx(mg.tensor([0.5]))
    np.testing.assert_allclose(mg.special.sinc(mg.tensor([0.5])).numpy(), np.sinc([0.5]))   # NumPy's: no SciPy


# --------------------------------------------------------------------------- edge values
# Where SciPy's values and PyTorch's differ by design (checked in test_deliberate_differences): PyTorch's own
# approximations of J0, J1, Y0, Y1 and Ai (errors to ~2e-6), its NaN where a sum underflows (zeta) or a
# recurrence overflows (laguerre, legendre; SciPy gives the +-inf of the overflow), SciPy's NaN for Ai below
# about -2e6 (PyTorch's asymptotic value)
DIFFERENT_AT_EDGES = ("special.bessel_j0", "special.bessel_j1", "special.bessel_y0", "special.bessel_y1",
                      "special.airy_ai", "special.zeta", "special.laguerre_polynomial_l",
                      "special.legendre_polynomial_p")


@pytest.mark.parametrize("name", [n for n in SPECIAL + TOP_LEVEL if n not in DIFFERENT_AT_EDGES])
def test_reference_inputs(name):
    """PyTorch's reference inputs (extremal values: +-inf, NaN, huge, tiny, zeros; broadcasting), the larger
    ones left out for time: values and dtypes."""
    assert compare_samples(name, resolve(name), _small_reference_inputs, rtol=1e-9, atol=1e-12, gradients=False) >= 2


def _small_reference_inputs(op, torch):
    return [sample for sample in op.reference_inputs("cpu", torch.float64, requires_grad=False)
            if max(t.numel() for t in (sample.input, *sample.args) if isinstance(t, torch.Tensor)) <= 5000]


def test_deliberate_differences():
    """The values DIFFERENT_AT_EDGES refers to, SciPy's kept: finite where the math is; airy_ai's far tail as
    PyTorch's (0), where SciPy's is NaN."""
    t = torch.special
    assert np.isnan(t.zeta(torch.tensor(1e20, dtype=torch.float64), torch.tensor(1e20, dtype=torch.float64)).item())
    assert mg.special.zeta(mg.tensor(1e20, dtype=mg.float64), mg.tensor(1e20, dtype=mg.float64)).item() == 0.0
    x, n = np.array([501.0]), np.array([501.0])
    assert np.isnan(t.legendre_polynomial_p(torch.tensor(x), torch.tensor(n)).item())
    assert mg.special.legendre_polynomial_p(mg.tensor(x), mg.tensor(n)).item() == np.inf
    mpmath = pytest.importorskip("mpmath")
    for fn, exact in (("bessel_j0", lambda v: mpmath.besselj(0, v)), ("airy_ai", mpmath.airyai)):
        v = -2.2671 if fn == "airy_ai" else -5.715
        ours = getattr(mg.special, fn)(mg.tensor([v], dtype=mg.float64)).item()
        theirs = getattr(t, fn)(torch.tensor([v], dtype=torch.float64)).item()
        assert abs(ours - float(exact(v))) < 1e-14 < 1e-8 < abs(theirs - float(exact(v)))
    far = [1e8, 1e10, 1e300, np.inf]          # Ai underflows to 0 (SciPy's airy gives NaN there); at +inf NaN
    np.testing.assert_array_equal(mg.special.airy_ai(mg.tensor(far, dtype=mg.float64)).numpy(),
                                  t.airy_ai(torch.tensor(far, dtype=torch.float64)).numpy())


# lgamma next to its zeros and between negative poles: mpmath's values (60 digits) rounded to float64
LGAMMA_NEAR_ZEROS = [(0.999999, 5.772164873855652e-07), (1.000001, -5.772148423874147e-07),
                     (1.000000001, -5.772157118381039e-10), (1.9999999, -4.2278430309861296e-08),
                     (2.0000001, 4.227843666532498e-08), (-2.4570247, 5.792758455100296e-08),
                     (-1.5, 0.860047015376481), (3.5, 1.2009736023470743)]


@pytest.mark.parametrize("size", [8, 4096])       # a ctypes call per element, or numba's ufunc (_pytorch_stream.libm)
def test_lgamma_keeps_its_last_bits_next_to_its_zeros(size):
    """The C library's lgamma, as PyTorch's: within 2 ulp of the exact value where SciPy's gammaln loses up to 3e-9
    relative (at 1.9999999: 2.6e-9), in both ways of reaching it."""
    pytest.importorskip("scipy", reason="minigrad's gamma functions need SciPy (the 'special' extra)")
    x, exact = (np.resize(np.array(column), size) for column in zip(*LGAMMA_NEAR_ZEROS))
    got = mg.lgamma(mg.tensor(x, dtype=mg.float64)).numpy()
    np.testing.assert_allclose(got, exact, rtol=4.5e-16, atol=0)
