"""GeneralizedPareto, CorrCholeskyTransform, LKJCholesky and Wishart against torch.distributions (float64): values,
gradients with random upstream gradients, validation errors, and sample statistics (fixed seeds, loose bounds)."""
import contextlib
import math
import warnings

import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

pytest.importorskip("scipy", reason="lgamma/digamma and the gamma samples need SciPy (the 'special' extra)")
MD = mg.distributions


@contextlib.contextmanager
def torch_float64(torch):
    """PyTorch's GeneralizedPareto compares concentration with a default-dtype 0: float64 needs that default."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def leaves(arrays, torch):
    """The same float64 arrays as minigrad and PyTorch leaves requiring gradients."""
    return ([mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in arrays],
            [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays])


def assert_mirrored(mg_fn, torch_fn, arrays, torch, seed=0, rtol=1e-10, atol=1e-12):
    """``mg_fn`` and ``torch_fn`` on the same inputs: equal outputs and equal gradients for a random upstream."""
    mg_in, t_in = leaves(arrays, torch)
    out, expected = mg_fn(*mg_in), torch_fn(*t_in)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(seed).standard_normal(tuple(expected.shape))
    out.backward(mg.tensor(g, dtype=mg.float64))
    expected.backward(torch.tensor(g))
    for a, b in zip(mg_in, t_in):
        if a.grad is None or b.grad is None:              # an input the output does not depend on
            assert a.grad is None and b.grad is None
            continue
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol * 100, atol=atol * 100)


def test_modules_and_exports():
    from minigrad.distributions.generalized_pareto import GeneralizedPareto
    from minigrad.distributions.lkj_cholesky import LKJCholesky
    from minigrad.distributions.transforms import CorrCholeskyTransform
    from minigrad.distributions.wishart import Wishart
    assert GeneralizedPareto is MD.GeneralizedPareto and LKJCholesky is MD.LKJCholesky and Wishart is MD.Wishart
    assert CorrCholeskyTransform is MD.CorrCholeskyTransform
    for name in ("GeneralizedPareto", "LKJCholesky", "Wishart", "CorrCholeskyTransform"):
        assert name in MD.__all__
    assert "CorrCholeskyTransform" in MD.transforms.__all__


# --------------------------------------------------------------------------- GeneralizedPareto
GPD_LOC = np.array([0.5, -1.0, 0.0, 2.0, 0.3])
GPD_SCALE = np.array([1.5, 0.7, 2.0, 1.0, 1.2])
GPD_XI = np.array([0.3, 0.0, -0.4, -1.0, 5e-9])        # positive, zero, negative, uniform, "isclose" to zero
GPD_X = np.array([[1.0, 0.0, 0.5, 2.5, 0.4], [3.0, 2.0, 4.9, 2.99, 7.0]])      # inside every support


def gpd(D, loc, scale, xi, **kw):
    return D.GeneralizedPareto(loc, scale, xi, **kw)


@pytest.mark.parametrize("method", ["log_prob", "cdf", "log_cdf", "log_survival_function"])
def test_gpd_value_functions_match_torch(method):
    torch = torch_or_skip()
    with torch_float64(torch):
        assert_mirrored(lambda x, *p: getattr(gpd(MD, *p), method)(x),
                        lambda x, *p: getattr(gpd(torch.distributions, *p), method)(x),
                        [GPD_X, GPD_LOC, GPD_SCALE, GPD_XI], torch)


def test_gpd_icdf_and_rsample_gradients_match_torch():
    """rsample is icdf(U): the same U gives PyTorch's value and reparameterisation gradients."""
    torch = torch_or_skip()
    u = np.random.default_rng(1).uniform(0, 1, (3, 5))
    with torch_float64(torch):
        assert_mirrored(lambda q, *p: gpd(MD, *p).icdf(q), lambda q, *p: gpd(torch.distributions, *p).icdf(q),
                        [u, GPD_LOC, GPD_SCALE, GPD_XI], torch)
    params = [mg.tensor(a, requires_grad=True) for a in (GPD_LOC, GPD_SCALE, GPD_XI)]
    sample = gpd(MD, *params).rsample((4,))
    assert sample.shape == (4, 5) and sample.requires_grad


@pytest.mark.parametrize("prop", ["mean", "variance", "mode", "stddev", "entropy"])
def test_gpd_moments_and_entropy_match_torch(prop):
    torch = torch_or_skip()
    xi = np.array([0.3, 0.0, -0.4, -1.0, 0.7, 1.5])       # the last two: no variance / no mean (NaN)
    loc, scale = np.linspace(-1, 1, 6), np.linspace(0.5, 2, 6)
    get = (lambda d: d.entropy()) if prop == "entropy" else (lambda d: getattr(d, prop))
    mg_out = get(gpd(MD, *(mg.tensor(a) for a in (loc, scale, xi))))
    expected = get(gpd(torch.distributions, *(torch.tensor(a) for a in (loc, scale, xi))))
    np.testing.assert_allclose(mg_out.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)
    if prop != "mode":
        with torch_float64(torch):
            finite = np.isfinite(expected.numpy())
            arrays = [a[finite] for a in (loc, scale, xi)]
            assert_mirrored(lambda *p: get(gpd(MD, *p)), lambda *p: get(gpd(torch.distributions, *p)), arrays, torch)


def test_gpd_support_shapes_and_validation():
    torch = torch_or_skip()
    d = gpd(MD, *(mg.tensor(a) for a in (GPD_LOC, GPD_SCALE, GPD_XI)))
    t = gpd(torch.distributions, *(torch.tensor(a) for a in (GPD_LOC, GPD_SCALE, GPD_XI)))
    np.testing.assert_allclose(d.support.lower_bound.numpy(), t.support.lower_bound.numpy())
    np.testing.assert_allclose(d.support.upper_bound.numpy(), t.support.upper_bound.numpy(), rtol=1e-14)
    assert MD.GeneralizedPareto.support.event_dim == 0 and not MD.GeneralizedPareto.support.is_discrete
    assert d.has_rsample and d.batch_shape == (5,) and d.event_shape == ()
    assert gpd(MD, 0.0, 1.0, 0.1).batch_shape == ()
    e = d.expand((2, 5))
    assert e.batch_shape == (2, 5) and e.sample().shape == (2, 5) and e.concentration.shape == (2, 5)
    with pytest.raises(ValueError):
        gpd(MD, mg.tensor([0.0]), mg.tensor([-1.0]), mg.tensor([0.1]))
    with pytest.raises(ValueError):
        d.log_prob(mg.tensor(GPD_LOC - 0.1))                          # below loc
    with pytest.raises(ValueError):
        d.log_prob(mg.tensor(np.array([1.0, 0.0, 5.1, 2.5, 0.4])))     # above loc - scale / xi for xi = -0.4
    unchecked = gpd(MD, *(mg.tensor(a) for a in (GPD_LOC, GPD_SCALE, GPD_XI)), validate_args=False)
    unchecked.log_prob(mg.tensor(GPD_LOC - 0.1))


def test_gpd_samples_statistics():
    mg.manual_seed(0)
    loc, scale, xi = np.array([0.5, -1.0, 0.0]), np.array([1.5, 0.7, 2.0]), np.array([0.1, 0.0, -0.5])
    d = gpd(MD, *(mg.tensor(a) for a in (loc, scale, xi)))
    x = d.sample((200_000,)).numpy()
    assert x.shape == (200_000, 3) and d.support.check(mg.tensor(x)).numpy().all()
    mean, var = d.mean.numpy(), d.variance.numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=6 * np.sqrt(var / x.shape[0]).max())
    np.testing.assert_allclose(x.var(0), var, rtol=0.05)


# --------------------------------------------------------------------------- CorrCholeskyTransform
def test_corr_cholesky_transform_matches_torch():
    torch = torch_or_skip()
    x = np.random.default_rng(2).standard_normal((2, 3, 10)) * 1.5      # D = 5
    ours, theirs = MD.CorrCholeskyTransform(), torch.distributions.transforms.CorrCholeskyTransform()
    assert_mirrored(ours, theirs, [x], torch)
    y = theirs(torch.tensor(x)).numpy()
    assert_mirrored(ours.inv, theirs.inv, [y], torch, rtol=1e-9)
    assert_mirrored(ours.log_abs_det_jacobian, theirs.log_abs_det_jacobian, [x, y], torch)
    assert_mirrored(lambda a: ours.inv.log_abs_det_jacobian(mg.tensor(y), a),
                    lambda a: theirs.inv.log_abs_det_jacobian(torch.tensor(y), a), [x], torch)
    assert MD.constraints.corr_cholesky.check(ours(mg.tensor(x))).numpy().all()
    np.testing.assert_allclose(ours.inv(ours(mg.tensor(x))).numpy(), x, atol=1e-10)


def test_corr_cholesky_transform_jacobian_and_shapes():
    """log|J| against the log-determinant of the numerical Jacobian of x -> the strict lower triangle of y."""
    t = MD.CorrCholeskyTransform()
    x = np.random.default_rng(3).standard_normal(6)                 # D = 4
    rows, cols = np.tril_indices(4, -1)
    f = lambda v: t(mg.tensor(v)).numpy()[rows, cols]
    h = 1e-6
    J = np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(6)], 1)
    ladj = t.log_abs_det_jacobian(mg.tensor(x), t(mg.tensor(x))).item()
    np.testing.assert_allclose(ladj, np.linalg.slogdet(J)[1], rtol=1e-7)
    assert t.forward_shape((2, 6)) == (2, 4, 4) and t.inverse_shape((2, 4, 4)) == (2, 6)
    assert t.inv.forward_shape((4, 4)) == (6,) and t.forward_shape((0,)) == (1, 1)
    for bad, fn in [((5,), t.forward_shape), ((), t.forward_shape), ((3, 4), t.inverse_shape), ((3,), t.inverse_shape)]:
        with pytest.raises(ValueError):
            fn(bad)
    assert t.bijective and t.domain.event_dim == 1 and t.codomain is MD.constraints.corr_cholesky
    assert t == MD.CorrCholeskyTransform() and t != MD.StickBreakingTransform()
    assert t(mg.tensor(np.zeros(1))).shape == (2, 2)


# --------------------------------------------------------------------------- LKJCholesky
@pytest.mark.parametrize("dim", [2, 3, 5])
def test_lkj_log_prob_matches_torch(dim):
    torch = torch_or_skip()
    rng = np.random.default_rng(dim)
    eta = np.array([0.5, 1.0, 3.0])
    x = rng.standard_normal((4, 3, dim * (dim - 1) // 2))
    value = torch.distributions.transforms.CorrCholeskyTransform()(torch.tensor(x)).numpy()
    assert_mirrored(lambda v, c: MD.LKJCholesky(dim, c).log_prob(v),
                    lambda v, c: torch.distributions.LKJCholesky(dim, c).log_prob(v), [value, eta], torch)
    scalar = MD.LKJCholesky(dim, mg.tensor(2.0, dtype=mg.float64)).log_prob(mg.tensor(value))
    expected = torch.distributions.LKJCholesky(dim, torch.tensor(2.0, dtype=torch.float64)).log_prob(torch.tensor(value))
    np.testing.assert_allclose(scalar.numpy(), expected.numpy(), rtol=1e-10)


def test_lkj_shapes_support_and_validation():
    d = MD.LKJCholesky(3, mg.tensor([0.5, 2.0]))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3) and not d.has_rsample
    assert d.support is MD.constraints.corr_cholesky
    assert MD.LKJCholesky(4).batch_shape == () and MD.LKJCholesky(4).sample((2,)).shape == (2, 4, 4)
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.sample().shape == (5, 2, 3, 3) and e.dim == 3
    with pytest.raises(ValueError, match="dim to be an integer greater than or equal to 2"):
        MD.LKJCholesky(1)
    with pytest.raises(ValueError):
        MD.LKJCholesky(3, mg.tensor([0.0]))
    with pytest.raises(ValueError):
        d.log_prob(mg.tensor(2 * np.eye(3)))                  # rows not of unit norm


def test_lkj_samples_have_the_lkj_marginals():
    """Each sampled correlation of LKJ(eta) in D dims is 2 Beta(a, a) - 1 with a = eta - 1 + D / 2: mean 0 and
    variance 1 / (2 eta + D - 1), at every position (PyTorch 2.13's sampler misses this for D >= 3: the rows
    below the second have the wrong Beta law; docs/differences.md)."""
    mg.manual_seed(0)
    n = 40_000
    for dim in (2, 3, 4, 5):
        rows, cols = np.tril_indices(dim, -1)
        for eta in (0.7, 1.0, 3.0):
            L = MD.LKJCholesky(dim, mg.tensor(eta, dtype=mg.float64)).sample((n,)).numpy()
            assert MD.constraints.corr_cholesky.check(mg.tensor(L)).numpy().all()
            M = L @ np.swapaxes(L, -1, -2)
            np.testing.assert_allclose(np.diagonal(M, axis1=-2, axis2=-1), 1.0, rtol=1e-12)
            np.testing.assert_allclose(M[:, rows, cols].mean(0), 0.0, atol=0.03)
            np.testing.assert_allclose(M[:, rows, cols].var(0), 1 / (2 * eta + dim - 1), atol=0.01)
    L = MD.LKJCholesky(2, mg.tensor([0.5, 2.0], dtype=mg.float64)).sample((n,)).numpy()   # a batch of two etas
    np.testing.assert_allclose(L[..., 1, 0].var(0), [1 / 2, 1 / 5], rtol=0.05)


# --------------------------------------------------------------------------- Wishart
def spd(rng, *shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


WISHART_FORMS = ["covariance_matrix", "precision_matrix", "scale_tril"]


def wishart_param(form, S):
    return np.linalg.cholesky(S) if form == "scale_tril" else S


@pytest.mark.parametrize("form", WISHART_FORMS)
def test_wishart_log_prob_and_gradients_match_torch(form):
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    S, df = spd(rng, 2, 3, 3), np.array([3.5, 6.0])
    X = spd(rng, 4, 2, 3, 3)
    matrix = wishart_param(form, S)
    assert_mirrored(lambda x, nu, m: MD.Wishart(nu, **{form: m}).log_prob(x),
                    lambda x, nu, m: torch.distributions.Wishart(nu, **{form: m}).log_prob(x), [X, df, matrix],
                    torch, rtol=1e-9)
    assert_mirrored(lambda nu, m: MD.Wishart(nu, **{form: m}).entropy(),
                    lambda nu, m: torch.distributions.Wishart(nu, **{form: m}).entropy(), [df, matrix], torch,
                    rtol=1e-9)


@pytest.mark.parametrize("prop", ["mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_properties_match_torch(prop):
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    S, df = spd(rng, 3, 3, 3), np.array([2.5, 4.0, 7.0])                 # mode: NaN for df <= p + 1
    for form in WISHART_FORMS:
        matrix = wishart_param(form, S)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)                 # low df
            ours = getattr(MD.Wishart(mg.tensor(df), **{form: mg.tensor(matrix)}), prop).numpy()
            theirs = getattr(torch.distributions.Wishart(torch.tensor(df), **{form: torch.tensor(matrix)}), prop)
        np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    if prop in ("mean", "variance"):
        assert_mirrored(lambda nu, m: getattr(MD.Wishart(nu, covariance_matrix=m), prop),
                        lambda nu, m: getattr(torch.distributions.Wishart(nu, covariance_matrix=m), prop),
                        [df[1:], S[1:]], torch)


def test_wishart_errors_and_shapes():
    torch = torch_or_skip()
    I = mg.eye(3, dtype=mg.float64)
    for bad in [dict(), dict(covariance_matrix=I, scale_tril=I)]:
        with pytest.raises(AssertionError, match="Exactly one of"):
            MD.Wishart(mg.tensor(5.0), **bad)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        MD.Wishart(mg.tensor(5.0), covariance_matrix=mg.ones(3))
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        MD.Wishart(mg.tensor([5.0, 2.0]), covariance_matrix=I)
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        MD.Wishart(2.0, covariance_matrix=I, validate_args=False)
    with pytest.raises(ValueError, match="PositiveDefinite"):
        MD.Wishart(mg.tensor(5.0), covariance_matrix=-I)
    with pytest.warns(UserWarning, match="Low df values detected"):
        MD.Wishart(mg.tensor(2.5), covariance_matrix=I)
    d = MD.Wishart(mg.tensor(5.0, dtype=mg.float64), covariance_matrix=I)
    with pytest.raises(ValueError):
        d.log_prob(-I)
    with pytest.raises(ValueError, match="event_shape"):
        d.log_prob(mg.eye(2, dtype=mg.float64))
    assert d.support is MD.constraints.positive_definite and d.has_rsample
    assert d.batch_shape == () and d.event_shape == (3, 3)
    assert MD.Wishart(5.0, covariance_matrix=I).df.dtype == mg.float64
    batched = MD.Wishart(mg.tensor([4.0, 5.0], dtype=mg.float64), scale_tril=I)
    assert batched.batch_shape == (2,) and batched.rsample((3,)).shape == (3, 2, 3, 3)
    e = batched.expand((4, 2))
    assert e.batch_shape == (4, 2) and e.rsample().shape == (4, 2, 3, 3) and e.df.shape == (4, 2)
    np.testing.assert_allclose(e.mean.numpy(), np.broadcast_to(batched.mean.numpy(), (4, 2, 3, 3)))
    t = torch.distributions.Wishart(torch.tensor(5.0, dtype=torch.float64), covariance_matrix=torch.eye(3).double())
    assert MD.Wishart.arg_constraints.fget(d)["df"].lower_bound == t.arg_constraints["df"].lower_bound


def test_wishart_rsample_statistics_and_gradient():
    """Sample mean and variance against nu Sigma and nu (Sigma_ij^2 + Sigma_ii Sigma_jj); the sample mean's
    derivative in nu and in Sigma's factor against those of nu L L^T (implicit chi-squared gradients)."""
    mg.manual_seed(0)
    rng = np.random.default_rng(6)
    S = spd(rng, 3, 3)
    df = mg.tensor(4.5, dtype=mg.float64, requires_grad=True)
    L = mg.tensor(np.linalg.cholesky(S), requires_grad=True)
    d = MD.Wishart(df, scale_tril=L)
    n = 40_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                   # no singular samples at df = 4.5
        X = d.rsample((n,))
    assert X.shape == (n, 3, 3) and d.support.check(X).numpy().all()
    x = X.detach().numpy()
    np.testing.assert_allclose(x.mean(0), d.mean.detach().numpy(), atol=6 * np.sqrt(d.variance.detach().numpy() / n).max())
    np.testing.assert_allclose(x.var(0), d.variance.detach().numpy(), rtol=0.1)
    G = np.random.default_rng(7).standard_normal((3, 3))
    (X.mean(0) * mg.tensor(G)).sum().backward()
    np.testing.assert_allclose(df.grad.item(), (G * S).sum(), rtol=0.05)        # d(nu S)/d nu = S
    # d/dL <G, nu L L^T> = nu (G + G^T) L, lower triangle only (L's upper triangle is unused: A is lower)
    expected_L = 4.5 * np.tril((G + G.T) @ np.linalg.cholesky(S))
    np.testing.assert_allclose(np.tril(L.grad.numpy()), expected_L, rtol=0.05, atol=0.05 * np.abs(expected_L).max())


def test_wishart_log_prob_of_one_matrix_against_a_batch_of_p():
    """A single (p, p) value scored by a batch of p distributions (an (n, n) right side beside n factors)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(8)
    S, X, df = spd(rng, 3, 3, 3), spd(rng, 3, 3), np.array([3.0, 4.0, 5.0])
    assert_mirrored(lambda x, nu, m: MD.Wishart(nu, covariance_matrix=m).log_prob(x),
                    lambda x, nu, m: torch.distributions.Wishart(nu, covariance_matrix=m).log_prob(x), [X, df, S],
                    torch, rtol=1e-9)


def test_corr_cholesky_constraint_has_its_transform():
    torch = torch_or_skip()
    for lib in (mg, torch):
        registry = lib.distributions
        for lookup in (registry.biject_to, registry.transform_to):
            assert type(lookup(registry.constraints.corr_cholesky)).__name__ == "CorrCholeskyTransform"
    L = MD.biject_to(MD.constraints.corr_cholesky)(mg.tensor(np.random.default_rng(0).standard_normal(6)))
    assert L.shape == (4, 4) and bool(MD.constraints.corr_cholesky.check(L))
