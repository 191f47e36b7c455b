"""minigrad.distributions against torch.distributions (float64): log_prob, entropy, cdf, icdf, mean, mode,
variance, stddev and kl_divergence with their gradients (random upstream gradients) for the same parameters;
rsample and its gradients for the same noise (recovered from PyTorch's sample); samples checked
statistically (fixed seeds, moments within a few standard errors); validation errors; the implicit
reparameterisation gradients against mpmath; wrong backwards the checks catch."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.gradcheck import GradcheckError
from minigrad.distributions import _ops

from .mirror import check_grad, check_gradgrad, torch_or_replay, torch_or_skip

torch = torch_or_replay()   # PyTorch, or without it a stand-in that skips the tests using it
pytest.importorskip("scipy", reason="the gamma-family distributions need SciPy (the 'special' extra)")
TD = torch.distributions
MD = mg.distributions

RNG = np.random.default_rng(1234)


def positive(*shape, low=0.5, high=2.5):
    return RNG.uniform(low, high, shape)


def real(*shape):
    return RNG.standard_normal(shape)


def simplex(*shape):
    x = RNG.uniform(0.1, 1.0, shape)
    return x / x.sum(-1, keepdims=True)


def spd(*shape):
    """Symmetric positive-definite matrices (..., n, n)."""
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def lower_cholesky(*shape):
    return np.linalg.cholesky(spd(*shape))


# name: (builder(lib, D, *params), parameter arrays, a value to score (an array, or None: no log_prob))
CASES = {
    "normal": (lambda lib, D, loc, scale: D.Normal(loc, scale), [real(3), positive(3)], real(2, 3)),
    "laplace": (lambda lib, D, loc, scale: D.Laplace(loc, scale), [real(3), positive(3)], real(2, 3)),
    "uniform": (lambda lib, D, low, width: D.Uniform(low, low + width), [real(3) - 3, positive(3) + 5],
                RNG.uniform(-0.5, 1.5, (2, 3))),
    "exponential": (lambda lib, D, rate: D.Exponential(rate), [positive(4)], positive(2, 4)),
    "gamma": (lambda lib, D, a, b: D.Gamma(a, b), [positive(4), positive(4)], positive(2, 4)),
    "beta": (lambda lib, D, a, b: D.Beta(a, b), [positive(4), positive(4)], RNG.uniform(0.1, 0.9, (2, 4))),
    "dirichlet": (lambda lib, D, a: D.Dirichlet(a), [positive(2, 4)], simplex(3, 2, 4)),
    "bernoulli_probs": (lambda lib, D, p: D.Bernoulli(probs=p), [RNG.uniform(0.1, 0.9, 5)],
                        RNG.integers(0, 2, (2, 5)).astype(float)),
    "bernoulli_logits": (lambda lib, D, logits: D.Bernoulli(logits=logits), [real(5)],
                         RNG.integers(0, 2, (2, 5)).astype(float)),
    "categorical_probs": (lambda lib, D, p: D.Categorical(probs=p), [simplex(2, 4) * 3], RNG.integers(0, 4, (3, 2))),
    "categorical_logits": (lambda lib, D, logits: D.Categorical(logits=logits), [real(2, 4)],
                           RNG.integers(0, 4, (3, 2))),
    "one_hot_categorical": (lambda lib, D, logits: D.OneHotCategorical(logits=logits), [real(2, 4)],
                            np.eye(4)[RNG.integers(0, 4, (3, 2))]),
    "continuous_bernoulli_probs": (lambda lib, D, p: D.ContinuousBernoulli(probs=p),
                                   [np.array([0.1, 0.4995, 0.5, 0.7, 0.95])], RNG.uniform(0.05, 0.95, (2, 5))),
    "continuous_bernoulli_logits": (lambda lib, D, logits: D.ContinuousBernoulli(logits=logits),
                                    [np.array([-2.0, -0.001, 0.0, 0.5, 3.0])], RNG.uniform(0.05, 0.95, (2, 5))),
    "binomial_probs": (lambda lib, D, p: D.Binomial(6, probs=p), [RNG.uniform(0.1, 0.9, 4)],
                       RNG.integers(0, 7, (2, 4)).astype(float)),
    "binomial_logits": (lambda lib, D, n, logits: D.Binomial(n, logits=logits),
                        [np.array([2.0, 5.0, 7.0, 3.0]), real(4)], np.array([[0.0, 3.0, 7.0, 1.0]])),
    "negative_binomial": (lambda lib, D, n, logits: D.NegativeBinomial(n, logits=logits),
                          [positive(4, low=1.0, high=4.0), real(4) * 0.5], RNG.integers(0, 6, (2, 4)).astype(float)),
    "negative_binomial_probs": (lambda lib, D, n, p: D.NegativeBinomial(n, probs=p),
                                [positive(4, low=1.0, high=4.0), RNG.uniform(0.1, 0.7, 4)],
                                RNG.integers(0, 6, (2, 4)).astype(float)),
    "poisson": (lambda lib, D, rate: D.Poisson(rate), [positive(4)], RNG.integers(0, 6, (2, 4)).astype(float)),
    "mvn_covariance": (lambda lib, D, loc, cov: D.MultivariateNormal(loc, covariance_matrix=cov),
                       [real(3), spd(2, 3, 3)], real(4, 2, 3)),
    "mvn_precision": (lambda lib, D, loc, prec: D.MultivariateNormal(loc, precision_matrix=prec),
                      [real(2, 3), spd(3, 3)], real(2, 3)),
    "mvn_scale_tril": (lambda lib, D, loc, L: D.MultivariateNormal(loc, scale_tril=L),
                       [real(3), lower_cholesky(2, 3, 3)], real(2, 3)),
    "mvn_low_rank": (lambda lib, D, loc, W, diag: D.LowRankMultivariateNormal(loc, W, diag),
                     [real(3), real(2, 3, 2), positive(3)], real(4, 2, 3)),
    "independent_normal": (lambda lib, D, loc, scale: D.Independent(D.Normal(loc, scale), 1),
                           [real(2, 3), positive(2, 3)], real(4, 2, 3)),
    "lognormal": (lambda lib, D, loc, scale: D.LogNormal(loc, scale), [real(3), positive(3)], positive(2, 3)),
    "relaxed_bernoulli": (lambda lib, D, t, logits: D.RelaxedBernoulli(t, logits=logits),
                          [np.array(0.7), real(4)], RNG.uniform(0.05, 0.95, (2, 4))),
    "relaxed_one_hot": (lambda lib, D, t, logits: D.RelaxedOneHotCategorical(t, logits=logits),
                        [np.array(0.6), real(2, 4)], simplex(3, 2, 4)),
    "cauchy": (lambda lib, D, loc, scale: D.Cauchy(loc, scale), [real(3), positive(3)], real(2, 3)),
    "gumbel": (lambda lib, D, loc, scale: D.Gumbel(loc, scale), [real(3), positive(3)], real(2, 3)),
    "half_normal": (lambda lib, D, scale: D.HalfNormal(scale), [positive(3)], np.abs(real(2, 3))),
    "half_cauchy": (lambda lib, D, scale: D.HalfCauchy(scale), [positive(3)], np.abs(real(2, 3))),
    "pareto": (lambda lib, D, scale, alpha: D.Pareto(scale, alpha), [positive(3), positive(3, low=2.5, high=4)],
               positive(2, 3, low=2.6, high=5.0)),
    "weibull": (lambda lib, D, scale, k: D.Weibull(scale, k), [positive(3), positive(3, low=1.2, high=3.0)],
                positive(2, 3)),
    "inverse_gamma": (lambda lib, D, a, b: D.InverseGamma(a, b), [positive(4, low=0.5, high=4.0), positive(4)],
                      positive(2, 4)),
    "logistic_normal": (lambda lib, D, loc, scale: D.LogisticNormal(loc, scale), [real(2, 3), positive(2, 3)],
                        simplex(2, 4)),
    "fisher_snedecor": (lambda lib, D, d1, d2: D.FisherSnedecor(d1, d2),
                        [np.array([1.5, 3.0, 5.0, 8.0]), np.array([1.5, 3.0, 5.0, 9.0])], positive(2, 4)),
    "kumaraswamy": (lambda lib, D, a, b: D.Kumaraswamy(a, b), [positive(4, low=0.6, high=3.0),
                                                               positive(4, low=0.6, high=3.0)],
                    RNG.uniform(0.1, 0.9, (2, 4))),
    "von_mises": (lambda lib, D, loc, k: D.VonMises(loc, k), [real(5), np.array([0.05, 0.8, 3.0, 3.9, 12.0])],
                  RNG.uniform(-3, 3, (2, 5))),
    "chi2": (lambda lib, D, df: D.Chi2(df), [positive(3, low=1.0, high=5.0)], positive(2, 3)),
    "student_t": (lambda lib, D, df, loc, scale: D.StudentT(df, loc, scale),
                  [np.array([0.8, 1.5, 3.0, 6.0]), real(4), positive(4)], real(2, 4)),
    "geometric_probs": (lambda lib, D, p: D.Geometric(probs=p), [RNG.uniform(0.2, 0.9, 4)],
                        RNG.integers(0, 5, (2, 4)).astype(float)),
    "geometric_logits": (lambda lib, D, logits: D.Geometric(logits=logits), [real(4)],
                         RNG.integers(0, 5, (2, 4)).astype(float)),
    "multinomial": (lambda lib, D, logits: D.Multinomial(5, logits=logits), [real(2, 3)],
                    np.array([[[1.0, 2.0, 2.0], [0.0, 5.0, 0.0]], [[3.0, 1.0, 1.0], [2.0, 2.0, 1.0]]])),
    "one_hot_straight_through": (lambda lib, D, logits: D.OneHotCategoricalStraightThrough(logits=logits),
                                 [real(2, 4)], np.eye(4)[RNG.integers(0, 4, (3, 2))]),
    "mixture_normal": (lambda lib, D, logits, loc, scale: D.MixtureSameFamily(
        D.Categorical(logits=logits), D.Normal(loc, scale)), [real(2, 3), real(2, 3), positive(2, 3)], real(4, 2)),
    "mixture_mvn": (lambda lib, D, logits, loc: D.MixtureSameFamily(
        D.Categorical(logits=logits), D.Independent(D.Normal(loc, loc * 0 + 1.5), 1)),
        [real(3), real(3, 2)], real(4, 2)),
    "transformed_power_softplus": (
        lambda lib, D, loc, scale: D.TransformedDistribution(
            D.Normal(loc, scale), [D.transforms.SoftplusTransform(), D.transforms.PowerTransform(2.0)]),
        [real(3), positive(3)], positive(2, 3)),
    "transformed_independent_exp": (
        lambda lib, D, loc, scale: D.TransformedDistribution(
            D.Normal(loc, scale), D.transforms.IndependentTransform(D.transforms.ExpTransform(), 1)),
        [real(2, 3), positive(2, 3)], positive(2, 3)),
    "transformed_stick_breaking": (
        lambda lib, D, loc, scale: D.TransformedDistribution(D.Normal(loc, scale),
                                                             D.transforms.StickBreakingTransform()),
        [real(2, 3), positive(2, 3)], simplex(2, 4)),
    "transformed_reshape": (
        lambda lib, D, loc, scale: D.TransformedDistribution(
            D.Independent(D.Normal(loc, scale), 1), D.transforms.ReshapeTransform((6,), (2, 3))),
        [real(6), positive(6)], real(4, 2, 3)),
    "transformed_cdf": (
        lambda lib, D, loc, scale: D.TransformedDistribution(
            D.Normal(loc * 0, scale * 0 + 1), D.transforms.CumulativeDistributionTransform(D.Normal(loc, scale))),
        [real(3), positive(3)], RNG.uniform(0.1, 0.9, (2, 3))),
    "transformed_affine_tanh": (
        lambda lib, D, loc, scale, shift, gain: D.TransformedDistribution(
            D.Normal(loc, scale), [D.transforms.AffineTransform(shift, gain), D.transforms.TanhTransform()]),
        [real(3), positive(3), real(3), positive(3)], RNG.uniform(-0.9, 0.9, (2, 3))),
    "transformed_compose_sigmoid": (
        lambda lib, D, loc, scale: D.TransformedDistribution(
            D.Normal(loc, scale), D.transforms.ComposeTransform([D.transforms.AffineTransform(0.5, -2.0),
                                                                   D.transforms.SigmoidTransform()])),
        [real(3), positive(3)], RNG.uniform(0.1, 0.9, (2, 3))),
}
# PyTorch evaluates log I0 and log I1 by polynomial approximations good to about 1e-7 (von_mises.py)
BESSEL = {"von_mises"}
# PyTorch's trigamma is accurate to about 5e-10 (tests/test_gamma_ops.py): the gradients of digamma terms
GAMMA_FAMILY = {"gamma", "beta", "dirichlet", "student_t", "chi2", "inverse_gamma", "weibull", "negative_binomial",
                "fisher_snedecor", "kumaraswamy",
                "negative_binomial_probs"}
METHODS = ["log_prob", "entropy", "cdf", "icdf", "mean", "mode", "variance", "stddev"]


def _build(lib, name, tensors):
    builder = CASES[name][0]
    D = MD if lib is mg else TD
    return builder(lib, D, *tensors)


def _call(dist, method, value):
    if method in ("log_prob", "cdf"):
        return getattr(dist, method)(value)
    if method == "icdf":
        return dist.icdf(value)
    if method == "entropy":
        return dist.entropy()
    return getattr(dist, method)


def _value_for(name, method, value):
    if method == "icdf":
        return RNG.uniform(0.05, 0.95, value.shape)
    if method == "cdf" and name == "gamma":
        return value
    return value


def run_method(lib, name, method, arrays, value, requires_grad=True):
    """(output, input tensors that require grad) of ``method`` in ``lib``."""
    tensors = [lib.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f") for a in arrays]
    v = lib.tensor(value, requires_grad=requires_grad and value.dtype.kind == "f"
                   and method in ("log_prob", "cdf", "icdf")) if value is not None else None
    dist = _build(lib, name, tensors)
    out = _call(dist, method, v)
    inputs = [t for t in tensors + ([v] if v is not None else []) if t.requires_grad]
    return out, inputs


def compare_outputs_and_gradients(mg_out, mg_inputs, th_out, th_inputs, rtol, atol, what, seed=0):
    """Values (NaN and inf where PyTorch has them), dtype, and the gradients of a random upstream gradient."""
    np.testing.assert_allclose(mg_out.detach().numpy(), th_out.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True, err_msg=what)
    assert str(mg_out.dtype).rpartition(".")[2] == str(th_out.dtype).rpartition(".")[2], what
    if not th_out.requires_grad:
        return
    assert mg_out.requires_grad, f"{what}: minigrad's output does not require grad where PyTorch's does"
    upstream = np.random.default_rng(seed).standard_normal(th_out.shape)
    finite = np.isfinite(th_out.detach().numpy())
    upstream = np.where(finite, upstream, 0.0)
    try:
        g_th = torch.autograd.grad(th_out, th_inputs, torch.tensor(upstream), allow_unused=True, retain_graph=True)
    except NotImplementedError as error:      # a derivative PyTorch does not have: minigrad refuses it too
        with pytest.raises(NotImplementedError, match=str(error).replace("(", r"\(").replace(")", r"\)")):
            mg.autograd.grad(mg_out, mg_inputs, mg.tensor(upstream), allow_unused=True, retain_graph=True)
        return
    g_mg = mg.autograd.grad(mg_out, mg_inputs, mg.tensor(upstream), allow_unused=True, retain_graph=True)
    for i, (a, b) in enumerate(zip(g_mg, g_th)):
        if b is None:
            assert a is None or not np.any(a.numpy()), f"{what}: gradient {i}, PyTorch has none"
            continue
        assert a is not None, f"{what}: gradient {i} missing"
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol, err_msg=f"{what}: gradient {i}")


@pytest.mark.parametrize("name", list(CASES))
def test_methods_and_gradients_match_pytorch(name):
    """Every method PyTorch implements for the distribution gives PyTorch's values and gradients; where
    PyTorch raises NotImplementedError, so does minigrad."""
    _, arrays, value = CASES[name]
    tol = 1e-6 if name in BESSEL else 1e-8 if name in GAMMA_FAMILY else 1e-10
    compared = 0
    for method in METHODS:
        v = _value_for(name, method, value)
        try:
            th_out, th_inputs = run_method(torch, name, method, arrays, v)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                run_method(mg, name, method, arrays, v)
            continue
        mg_out, mg_inputs = run_method(mg, name, method, arrays, v)
        compare_outputs_and_gradients(mg_out, mg_inputs, th_out, th_inputs, tol, tol, f"{name}.{method}")
        compared += 1
    assert compared >= 1


@pytest.mark.parametrize("name", list(CASES))
def test_shapes_and_support_match_pytorch(name):
    _, arrays, _ = CASES[name]
    d_th = _build(torch, name, [torch.tensor(a) for a in arrays])
    d_mg = _build(mg, name, [mg.tensor(a) for a in arrays])
    assert d_mg.batch_shape == tuple(d_th.batch_shape) and d_mg.event_shape == tuple(d_th.event_shape)
    assert d_mg.has_rsample == d_th.has_rsample
    assert d_mg.has_enumerate_support == d_th.has_enumerate_support
    assert _normalized(repr(d_mg.support)) == _normalized(repr(d_th.support))
    assert tuple(d_mg.sample((5,)).shape) == tuple(d_th.sample((5,)).shape)
    assert str(d_mg.sample().dtype).rpartition(".")[2] == str(d_th.sample().dtype).rpartition(".")[2]
    expanded_th, expanded_mg = d_th.expand((7,) + tuple(d_th.batch_shape)), d_mg.expand((7,) + d_mg.batch_shape)
    assert expanded_mg.batch_shape == tuple(expanded_th.batch_shape)
    assert tuple(expanded_mg.sample().shape) == tuple(expanded_th.sample().shape)
    if d_th.has_enumerate_support:
        try:
            d_th.enumerate_support()
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                d_mg.enumerate_support()
            return
        np.testing.assert_array_equal(d_mg.enumerate_support().numpy(), d_th.enumerate_support().numpy())
        np.testing.assert_array_equal(d_mg.enumerate_support(False).numpy(), d_th.enumerate_support(False).numpy())


# --------------------------------------------------------------------------- rsample for the same noise
def _inject(monkeypatch, module, name, array):
    """minigrad's noise function ``module.name`` returns ``array`` (the noise PyTorch drew)."""
    def noise(shape, dtype, *args, **kwargs):
        assert tuple(shape) == array.shape, (shape, array.shape)
        return mg.Tensor(array.astype(dtype))
    monkeypatch.setattr(f"minigrad.distributions.{module}.{name}", noise)


def _noise_normal(d, x):
    return (x - d.loc) / d.scale


def _noise_laplace(d, x):
    t = (x - d.loc) / d.scale                                   # = sign(u) * -log(1 - |u|)
    return np.sign(t) * -np.expm1(-np.abs(t))


def _noise_uniform(d, x):
    return (x - d.low) / (d.high - d.low)


def _noise_exponential(d, x):
    return x * d.rate                                             # the standard exponential noise e = rate * x


def _noise_mvn(d, x):
    L = np.broadcast_to(d._unbroadcasted_scale_tril, x.shape + x.shape[-1:])
    return np.linalg.solve(L, (x - d.loc)[..., None])[..., 0]


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _noise_relaxed_bernoulli(d, x):
    return 1 / (1 + np.exp(-(d.temperature * _logit(x) - d.logits)))     # u with logit(u) = t logit(x) - logits


def _noise_relaxed_one_hot(d, x):
    gumbels = d.temperature * np.log(x) - d.logits                # up to a constant per row (softmax ignores it)
    return np.exp(-np.exp(-gumbels))


RSAMPLE = {   # name: (minigrad module, noise function, noise from PyTorch's sample x and its distribution; None: the
    #           same seed draws the same noise, and nothing is injected)
    "normal": ("continuous", "standard_normal", _noise_normal),
    "laplace": ("continuous", "uniform", _noise_laplace),
    "uniform": ("continuous", "uniform", _noise_uniform),
    "exponential": ("continuous", "exponential", _noise_exponential),
    "mvn_covariance": ("multivariate", "standard_normal", _noise_mvn),
    "mvn_precision": ("multivariate", "standard_normal", _noise_mvn),
    "mvn_scale_tril": ("multivariate", "standard_normal", _noise_mvn),
    "independent_normal": ("continuous", "standard_normal", lambda d, x: _noise_normal(d.base_dist, x)),
    "lognormal": ("continuous", "standard_normal", lambda d, x: _noise_normal(d.base_dist, np.log(x))),
    "relaxed_bernoulli": ("transformed", "uniform", lambda d, x: _noise_relaxed_bernoulli(d.base_dist, x)),
    "relaxed_one_hot": ("transformed", "uniform", lambda d, x: _noise_relaxed_one_hot(d.base_dist, x)),
    "cauchy": ("continuous", None, None),             # float64 uniforms drawn in place: the same seed gives them
    "gumbel": ("continuous", "uniform", lambda d, x: np.exp(-np.exp(-_noise_normal(d, x)))),
    "half_normal": ("continuous", "standard_normal", lambda d, x: x / d.scale),
    "continuous_bernoulli_probs": ("continuous_bernoulli", "uniform",
                                   lambda d, x: d.d.cdf(torch.tensor(x)).detach().numpy()),
    "transformed_affine_tanh": ("continuous", "standard_normal", lambda d, x: _noise_normal(
        d.base_dist, (np.arctanh(x) - d.transforms[0].loc) / d.transforms[0].scale)),
}


class _Numpy:
    """A distribution's parameters as ndarrays (for recovering the noise of its samples)."""

    def __init__(self, d):
        self.d = d

    def __getattr__(self, name):
        value = getattr(self.d, name)
        if isinstance(value, torch.Tensor):
            return value.detach().numpy()
        if isinstance(value, (list, tuple)):
            return [_Numpy(v) for v in value]
        return _Numpy(value) if hasattr(value, "__dict__") and not isinstance(value, (int, float)) else value

    def __getitem__(self, i):
        return self.transforms[i]


@pytest.mark.parametrize("name", list(RSAMPLE))
def test_rsample_and_its_gradients_match_pytorch_for_the_same_noise(name, monkeypatch):
    """rsample((5,)) in PyTorch; its noise recovered and fed to minigrad's rsample: the same sample, and the
    same gradients of a random linear function of it with respect to every parameter."""
    module, function, recover = RSAMPLE[name]
    _, arrays, _ = CASES[name]
    torch.manual_seed(0)
    th_params = [torch.tensor(a, requires_grad=True) for a in arrays]
    d_th = _build(torch, name, th_params)
    x_th = d_th.rsample((5,))
    if function is not None:
        _inject(monkeypatch, module, function, np.asarray(recover(_Numpy(d_th), x_th.detach().numpy())))
    mg.manual_seed(0)
    mg_params = [mg.tensor(a, requires_grad=True) for a in arrays]
    x_mg = _build(mg, name, mg_params).rsample((5,))
    compare_outputs_and_gradients(x_mg, mg_params, x_th, th_params, 1e-9, 1e-9, f"{name}.rsample")


@pytest.mark.parametrize("name", ["gamma", "beta", "dirichlet"])
def test_implicit_reparameterisation_gradients_match_pytorch(name):
    """Gamma, Beta, Dirichlet: the same seed gives PyTorch's sample (its gamma draws); the gradients agree to
    PyTorch's own accuracy (its _standard_gamma_grad and _dirichlet_grad are approximations good to about 1e-4 and
    1e-3 relative; minigrad's are within 3e-10 of mpmath, see the test below)."""
    _, arrays, _ = CASES[name]
    torch.manual_seed(0)
    th_params = [torch.tensor(a, requires_grad=True) for a in arrays]
    x_th = _build(torch, name, th_params).rsample((5,))
    x = x_th.detach().numpy()
    mg.manual_seed(0)
    mg_params = [mg.tensor(a, requires_grad=True) for a in arrays]
    x_mg = _build(mg, name, mg_params).rsample((5,))
    np.testing.assert_allclose(x_mg.detach().numpy(), x, rtol=1e-12)
    upstream = np.random.default_rng(1).standard_normal(x.shape)
    g_th = torch.autograd.grad(x_th, th_params, torch.tensor(upstream))
    g_mg = mg.autograd.grad(x_mg, mg_params, mg.tensor(upstream))
    for a, b in zip(g_mg, g_th):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=5e-3, atol=1e-6)


@pytest.mark.parametrize("name, error", [("gamma", NotImplementedError), ("dirichlet", RuntimeError)])
def test_implicit_gradients_refuse_a_second_derivative_as_pytorch(name, error):
    """PyTorch has no derivative of the implicit slopes: differentiating the create_graph gradient in the
    concentration raises NotImplementedError for Gamma (same text here) and, Dirichlet's backward being
    once-differentiable, a RuntimeError."""
    _, arrays, _ = CASES[name]
    errors = []
    for lib in (mg, torch):
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        x = _build(lib, name, params).rsample()
        (g,) = lib.autograd.grad(x, params[:1], lib.tensor(np.ones(x.shape)), create_graph=True)
        with pytest.raises(error) as raised:
            lib.autograd.grad(g.sum(), params[:1])
        errors.append(str(raised.value))
    if error is NotImplementedError:
        assert errors[0] == errors[1]


def test_implicit_gradients_match_mpmath():
    """d(sample)/d(alpha) = -(dF/dalpha) / pdf with F the regularised incomplete gamma (beta) function,
    computed by mpmath to 30 digits: minigrad's to 1e-8 relative over shapes 0.05 .. 50."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    rng = np.random.default_rng(5)
    alpha = np.exp(rng.uniform(-3, 4, 12))
    x = np.maximum(rng.standard_gamma(alpha), 1e-300)
    exact = []
    for a, v in zip(alpha, x):
        a, v = mpmath.mpf(a), mpmath.mpf(v)
        dF = mpmath.diff(lambda s: mpmath.gammainc(s, 0, v, regularized=True), a)
        exact.append(float(-dF / (v ** (a - 1) * mpmath.exp(-v) / mpmath.gamma(a))))
    np.testing.assert_allclose(_ops.standard_gamma_grad(x, alpha), exact, rtol=1e-8)
    a, b = np.exp(rng.uniform(-2, 3, 8)), np.exp(rng.uniform(-2, 3, 8))
    x = rng.beta(a, b)
    exact = []
    for ai, bi, v in zip(a, b, x):
        ai, bi, v = mpmath.mpf(ai), mpmath.mpf(bi), mpmath.mpf(v)
        dI = mpmath.diff(lambda s: mpmath.betainc(s, bi, 0, v, regularized=True), ai)
        pdf = v ** (ai - 1) * (1 - v) ** (bi - 1) / mpmath.beta(ai, bi)
        exact.append(float(-dI / pdf / (1 - v)))
    np.testing.assert_allclose(_ops.dirichlet_grad(x, a, a + b), exact, rtol=1e-8)


# --------------------------------------------------------------------------- samples, statistically
STATISTICS = ["normal", "laplace", "uniform", "exponential", "gamma", "beta", "bernoulli_probs", "poisson",
              "binomial_probs", "lognormal", "mvn_covariance", "dirichlet", "categorical_logits",
              "one_hot_categorical", "gumbel", "half_normal", "chi2", "geometric_probs", "multinomial",
              "mixture_normal", "weibull", "inverse_gamma", "pareto", "negative_binomial", "mvn_low_rank",
              "kumaraswamy", "continuous_bernoulli_probs", "von_mises"]


@pytest.mark.parametrize("name", STATISTICS)
def test_sample_moments_match_the_distribution(name):
    """20000 samples (seed 0): the sample mean within 5 standard errors of PyTorch's mean, the sample variance
    within 5 standard errors (from the fourth central moment) of PyTorch's variance; categories' frequencies
    within 5 standard errors of their probabilities."""
    mg.manual_seed(0)
    _, arrays, _ = CASES[name]
    n = 20000
    d_mg = _build(mg, name, [mg.tensor(a) for a in arrays])
    d_th = _build(torch, name, [torch.tensor(a) for a in arrays])
    x = d_mg.sample((n,)).numpy().astype(float)
    assert x.shape == (n,) + tuple(d_th.batch_shape) + tuple(d_th.event_shape)
    if name == "lognormal":      # heavy tails: check log x ~ Normal(loc, scale)
        x, d_th = np.log(x), d_th.base_dist
    if name == "inverse_gamma":  # no variance for concentration <= 2: check 1 / x ~ Gamma
        x, d_th = 1 / x, d_th.base_dist
    if name == "von_mises":      # circular: cos(x - loc) has mean I1(k) / I0(k) = 1 - the circular variance
        x = np.cos(x - arrays[0])
        mean = 1 - d_th.variance.numpy()
        assert np.all(np.abs(x.mean(0) - mean) < 5 * x.std(0) / np.sqrt(n)), (x.mean(0), mean)
        return
    if name.startswith("categorical"):
        x = np.eye(d_th.probs.shape[-1])[x.astype(int)]
        mean, variance = d_th.probs.numpy(), (d_th.probs * (1 - d_th.probs)).numpy()
    else:
        mean, variance = d_th.mean.detach().numpy(), d_th.variance.detach().numpy()
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(variance / n) + 1e-12), (x.mean(0), mean)
    centered = x - x.mean(0)
    m4 = (centered ** 4).mean(0)
    se_var = np.sqrt(np.maximum(m4 - variance ** 2, 0) / n)
    assert np.all(np.abs(centered.var(0, ddof=1) - variance) < 5 * se_var + 1e-12), (centered.var(0), variance)


def test_samples_are_in_the_support_and_reproducible():
    for name in CASES:
        _, arrays, _ = CASES[name]
        d = _build(mg, name, [mg.tensor(a) for a in arrays])
        mg.manual_seed(3)
        first = d.sample((4,))
        mg.manual_seed(3)
        np.testing.assert_array_equal(first.numpy(), d.sample((4,)).numpy(), err_msg=name)
        assert d.support.check(first)._data.all(), name


# --------------------------------------------------------------------------- kl_divergence
def _d(kind, *arrays):
    return lambda lib, D, *t: getattr(D, kind)(*t)


KL_CASES = [
    ("Normal", [real(3), positive(3)], "Normal", [real(3), positive(3)]),
    ("Laplace", [real(3), positive(3)], "Laplace", [real(3), positive(3)]),
    ("Exponential", [positive(3)], "Exponential", [positive(3)]),
    ("Gamma", [positive(3), positive(3)], "Gamma", [positive(3), positive(3)]),
    ("Beta", [positive(3), positive(3)], "Beta", [positive(3), positive(3)]),
    ("Dirichlet", [positive(2, 4)], "Dirichlet", [positive(2, 4)]),
    ("Poisson", [positive(3)], "Poisson", [positive(3)]),
    ("Uniform", [np.array([0.2, -1.0]), np.array([0.8, 1.0])], "Uniform", [np.array([0.0, -0.5]),
                                                                           np.array([1.0, 2.0])]),
    ("Exponential", [positive(3)], "Gamma", [positive(3), positive(3)]),
    ("Exponential", [positive(3)], "Normal", [real(3), positive(3)]),
    ("Gamma", [positive(3), positive(3)], "Exponential", [positive(3)]),
    ("Gamma", [positive(3), positive(3)], "Normal", [real(3), positive(3)]),
    ("Laplace", [real(3), positive(3)], "Normal", [real(3), positive(3)]),
    ("Normal", [real(3), positive(3)], "Laplace", [real(3), positive(3)]),
    ("Normal", [real(3), positive(3)], "Gamma", [positive(3), positive(3)]),
    ("Beta", [positive(3), positive(3)], "Normal", [real(3), positive(3)]),
    ("Beta", [positive(3), positive(3)], "Gamma", [positive(3), positive(3)]),
    ("Beta", [positive(3), positive(3)], "Exponential", [positive(3)]),
    ("Uniform", [np.array([0.2, 0.5]), np.array([0.8, 3.0])], "Normal", [real(2), positive(2)]),
    ("Uniform", [np.array([0.2, 0.5]), np.array([0.8, 3.0])], "Gamma", [positive(2), positive(2)]),
    ("Uniform", [np.array([0.2, -0.5]), np.array([0.8, 3.0])], "Exponential", [positive(2)]),
    ("Uniform", [np.array([0.2, 0.5]), np.array([0.8, 0.9])], "Beta", [positive(2), positive(2)]),
    ("Cauchy", [real(3), positive(3)], "Cauchy", [real(3), positive(3)]),
    ("Gumbel", [real(3), positive(3)], "Gumbel", [real(3), positive(3)]),
    ("HalfNormal", [positive(3)], "HalfNormal", [positive(3)]),
    ("Normal", [real(3), positive(3)], "Gumbel", [real(3), positive(3)]),
    ("Gumbel", [real(3), positive(3)], "Normal", [real(3), positive(3)]),
    ("Gumbel", [real(3), positive(3)], "Gamma", [positive(3), positive(3)]),
    ("Uniform", [np.array([0.2, -0.5]), np.array([0.8, 3.0])], "Gumbel", [real(2), positive(2)]),
    ("Pareto", [positive(3), positive(3, low=2.5, high=4)], "Pareto", [positive(3) * 0.5, positive(3)]),
    ("Pareto", [positive(3), np.array([0.5, 1.5, 3.0])], "Exponential", [positive(3)]),
    ("Pareto", [positive(3), np.array([0.5, 1.5, 3.0])], "Gamma", [positive(3), positive(3)]),
    ("Pareto", [positive(3), np.array([1.5, 2.5, 3.0])], "Normal", [real(3), positive(3)]),
    ("Uniform", [np.array([0.2, 1.5]), np.array([0.8, 3.0])], "Pareto", [np.array([0.5, 1.0]), positive(2)]),
    ("Normal", [real(3), positive(3)], "Pareto", [positive(3), positive(3)]),
    ("ContinuousBernoulli", [RNG.uniform(0.1, 0.9, 3)], "Normal", [real(3), positive(3)]),
    ("ContinuousBernoulli", [RNG.uniform(0.1, 0.9, 3)], "Exponential", [positive(3)]),
    ("Beta", [positive(3), positive(3)], "ContinuousBernoulli", [RNG.uniform(0.1, 0.9, 3)]),
    ("Uniform", [np.array([0.2, -0.5]), np.array([0.8, 0.5])], "ContinuousBernoulli", [RNG.uniform(0.1, 0.9, 2)]),
    ("ContinuousBernoulli", [RNG.uniform(0.1, 0.9, 2)], "Uniform", [np.array([-0.1, 0.5]), np.array([1.2, 0.9])]),
]
KL_NAMED = [  # pairs built through CASES' builders (probabilities, matrices, wrappers)
    ("bernoulli_logits", "bernoulli_probs"), ("categorical_logits", "categorical_probs"),
    ("one_hot_categorical", "one_hot_categorical"), ("mvn_covariance", "mvn_scale_tril"),
    ("mvn_precision", "mvn_covariance"), ("independent_normal", "independent_normal"),
    ("mvn_low_rank", "mvn_low_rank"), ("mvn_covariance", "mvn_low_rank"), ("mvn_low_rank", "mvn_scale_tril"),
    ("lognormal", "lognormal"), ("binomial_probs", "binomial_probs"), ("bernoulli_probs", "poisson"),
    ("geometric_probs", "geometric_logits"), ("continuous_bernoulli_probs", "continuous_bernoulli_logits"),
]


def _kl_in(lib, p_build, p_arrays, q_build, q_arrays):
    D = MD if lib is mg else TD
    p_t = [lib.tensor(a, requires_grad=True) for a in p_arrays]
    q_t = [lib.tensor(a, requires_grad=True) for a in q_arrays]
    out = D.kl_divergence(p_build(lib, D, *p_t), q_build(lib, D, *q_t))
    return out, p_t + q_t


@pytest.mark.parametrize("case", KL_CASES + KL_NAMED, ids=[f"{c[0]}-{c[2]}" for c in KL_CASES] +
                         [f"{a}-{b}" for a, b in KL_NAMED])
def test_kl_divergence_and_gradients_match_pytorch(case):
    if len(case) == 4:
        p_kind, p_arrays, q_kind, q_arrays = case
        p_build, q_build = (lambda k: lambda lib, D, *t: getattr(D, k)(*t))(p_kind), \
            (lambda k: lambda lib, D, *t: getattr(D, k)(*t))(q_kind)
    else:
        (p_build, p_arrays, _), (q_build, q_arrays, _) = CASES[case[0]], CASES[case[1]]
        if case == ("binomial_probs", "binomial_probs"):
            q_arrays = [RNG.uniform(0.1, 0.9, 4)]
        if case[1] == "poisson":
            q_arrays = [positive(5)]
    th_out, th_in = _kl_in(torch, p_build, p_arrays, q_build, q_arrays)
    mg_out, mg_in = _kl_in(mg, p_build, p_arrays, q_build, q_arrays)
    compare_outputs_and_gradients(mg_out, mg_in, th_out, th_in, 1e-8, 1e-10, "kl")


def test_kl_outside_the_support_is_infinite_and_unknown_pairs_raise():
    p, q = MD.Uniform(mg.tensor([0.0, 0.5]), mg.tensor([2.0, 1.0])), MD.Uniform(mg.tensor([0.5, 0.0]),
                                                                               mg.tensor([1.5, 1.0]))
    th = TD.kl_divergence(TD.Uniform(torch.tensor([0.0, 0.5]), torch.tensor([2.0, 1.0])),
                          TD.Uniform(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0])))
    np.testing.assert_allclose(MD.kl_divergence(p, q).numpy(), th.numpy())
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Poisson and q "
                                                  "type Normal"):
        MD.kl_divergence(MD.Poisson(mg.tensor([1.0])), MD.Normal(0.0, 1.0))


def test_register_kl_picks_the_most_specific_pair():
    class MyNormal(MD.Normal):
        pass

    @MD.register_kl(MyNormal, MD.Normal)
    def _kl(p, q):
        return p.loc * 0 + 42.0
    try:
        assert MD.kl_divergence(MyNormal(mg.tensor([0.0]), mg.tensor([1.0])), MD.Normal(0.0, 1.0)).item() == 42.0
        assert MD.kl_divergence(MD.Normal(mg.tensor([0.0]), mg.tensor([1.0])), MyNormal(0.0, 1.0)).item() == 0.0
    finally:
        from minigrad.distributions import kl
        del kl._KL_REGISTRY[MyNormal, MD.Normal]
        kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError):
        MD.register_kl(int, MD.Normal)


# --------------------------------------------------------------------------- biject_to / transform_to
REGISTRY = [
    ("biject_to", lambda C: C.real, (3,)), ("biject_to", lambda C: C.positive, (3,)),
    ("biject_to", lambda C: C.greater_than(-1.5), (3,)), ("biject_to", lambda C: C.less_than(2.0), (3,)),
    ("biject_to", lambda C: C.unit_interval, (3,)), ("biject_to", lambda C: C.interval(-2.0, 3.0), (3,)),
    ("biject_to", lambda C: C.simplex, (2, 3)), ("biject_to", lambda C: C.independent(C.positive, 1), (2, 3)),
    ("transform_to", lambda C: C.simplex, (2, 3)), ("transform_to", lambda C: C.lower_cholesky, (3, 3)),
    ("transform_to", lambda C: C.nonnegative, (3,)), ("transform_to", lambda C: C.positive_definite, (2, 3, 3)),
    ("biject_to", lambda C: C.cat([C.real, C.positive, C.unit_interval], 0, [1, 2, 1]), (4, 3)),
    ("biject_to", lambda C: C.cat([C.real, C.independent(C.positive, 1)], 1, [2, 3]), (2, 5)),
    ("biject_to", lambda C: C.stack([C.real, C.positive, C.interval(-1.0, 1.0)], 1), (2, 3)),
]


@pytest.mark.parametrize("registry, constraint, shape", REGISTRY, ids=range(len(REGISTRY)))
def test_constraint_registry_matches_pytorch(registry, constraint, shape):
    """The same transform (by repr), the same image of a random point, its inverse, log|det J|, and their
    gradients."""
    x = RNG.standard_normal(shape)
    outputs = {}
    for lib, D in ((mg, MD), (torch, TD)):
        t = getattr(D, registry)(constraint(D.constraints))
        xt = lib.tensor(x, requires_grad=True)
        y = t(xt)
        parts = [y]
        if t.bijective:
            parts += [t.inv(y), t.log_abs_det_jacobian(xt, y)]
        outputs[lib] = (repr(t), parts, xt)
    assert _normalized(outputs[mg][0]) == _normalized(outputs[torch][0])
    for i, (a, b) in enumerate(zip(outputs[mg][1], outputs[torch][1])):
        compare_outputs_and_gradients(a, [outputs[mg][2]], b, [outputs[torch][2]], 1e-10, 1e-10, f"part {i}",
                                      seed=i)


@pytest.mark.parametrize("diag", [0, -1, 1])
def test_tril_vector_round_trip_matches_pytorch(diag):
    torch_or_skip()                     # imports PyTorch's own modules: needs PyTorch itself
    from minigrad.distributions import utils as mg_utils
    from torch.distributions import utils as th_utils
    m = RNG.standard_normal((2, 4, 4))
    ours = mg_utils.tril_matrix_to_vec(mg.tensor(m), diag)
    theirs = th_utils.tril_matrix_to_vec(torch.tensor(m), diag)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(mg_utils.vec_to_tril_matrix(ours, diag).numpy(),
                                  th_utils.vec_to_tril_matrix(theirs, diag).numpy())
    with pytest.raises(ValueError):
        mg_utils.vec_to_tril_matrix(mg.tensor(np.ones(5)))


def test_constraint_registry_refuses_what_pytorch_refuses():
    for lib, D in ((mg, MD), (torch, TD)):
        with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
            D.biject_to(D.constraints.lower_cholesky)
        with pytest.raises(TypeError):
            D.biject_to.register(int, lambda c: None)


# --------------------------------------------------------------------------- validation
BAD = [
    lambda lib, D: D.Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])),
    lambda lib, D: D.Bernoulli(probs=lib.tensor([0.5, 1.5])),
    lambda lib, D: D.Bernoulli(probs=lib.tensor([0.5]), logits=lib.tensor([0.0])),
    lambda lib, D: D.Categorical(probs=lib.tensor([0.5, -0.2])),
    lambda lib, D: D.Categorical(logits=lib.tensor(1.0)),
    lambda lib, D: D.Gamma(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda lib, D: D.Dirichlet(lib.tensor(1.0)),
    lambda lib, D: D.Uniform(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib, D: D.MultivariateNormal(lib.tensor(0.0), lib.eye(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib, D: D.Normal(lib.tensor([0.0]), lib.tensor([1.0])).log_prob([0.5]),
    lambda lib, D: D.Normal(lib.zeros(3), lib.ones(3)).log_prob(lib.zeros(2)),
    lambda lib, D: D.Exponential(lib.ones(3)).log_prob(-lib.ones(3)),
    lambda lib, D: D.Dirichlet(lib.ones(2, 3)).log_prob(lib.ones(2, 2)),
    lambda lib, D: D.Independent(D.Normal(lib.zeros(3), lib.ones(3)), 2),
    lambda lib, D: D.Binomial(5, probs=lib.tensor([0.5])).log_prob(lib.tensor([6.0])),
    lambda lib, D: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    lambda lib, D: D.Distribution.set_default_validate_args("yes"),
]


def _normalized(message):
    return message.replace("torch.Size", "Size").replace("minigrad.Size", "Size").replace("torch.", "").replace(
        "minigrad.", "")


@pytest.mark.parametrize("make", BAD, ids=range(len(BAD)))
def test_invalid_arguments_raise_pytorchs_errors(make):
    """The same exception type; for ValueErrors the same text up to the printed tensor values."""
    with pytest.raises(Exception) as th_error:
        make(torch, TD)
    with pytest.raises(th_error.type) as mg_error:
        make(mg, MD)
    th_text, mg_text = _normalized(str(th_error.value)), _normalized(str(mg_error.value))
    assert mg_text.split("\n")[0].split("tensor(")[0] == th_text.split("\n")[0].split("tensor(")[0], (mg_text, th_text)


EDGES = {
    "Normal": lambda D, t: D.Normal(t(0.5), t(2.0)), "Cauchy": lambda D, t: D.Cauchy(t(0.5), t(2.0)),
    "HalfCauchy": lambda D, t: D.HalfCauchy(t(2.0)), "HalfNormal": lambda D, t: D.HalfNormal(t(2.0)),
    "Laplace": lambda D, t: D.Laplace(t(0.5), t(2.0)), "Exponential": lambda D, t: D.Exponential(t(2.0)),
    "Uniform": lambda D, t: D.Uniform(t(0.0), t(2.0)), "LogNormal": lambda D, t: D.LogNormal(t(0.0), t(1.0)),
    "Pareto": lambda D, t: D.Pareto(t(1.0), t(2.0)), "Weibull": lambda D, t: D.Weibull(t(1.0), t(2.0)),
    "Kumaraswamy": lambda D, t: D.Kumaraswamy(t(2.0), t(3.0)),
}


@pytest.mark.parametrize("name", list(EDGES))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cdf_and_icdf_at_the_edges_match_pytorch(name):
    """cdf at +-inf and far out, icdf at 0, 1 and in between, float64 (Cauchy's cdf(inf) was NaN: its atan was
    computed as atan2(x, x * 0 + 1))."""
    torch = torch_or_skip()
    for method, values in (("cdf", [-np.inf, np.inf, -1e300, 1e300, 0.0, 1.0, 3.0]), ("icdf", [0.0, 1.0, 0.5, 0.1])):
        for value in values:
            results = []
            for lib in (torch, mg):
                def t(v, lib=lib):
                    return lib.tensor(v, dtype=lib.float64)
                try:
                    results.append(getattr(EDGES[name](lib.distributions, t), method)(t([value])).detach().numpy())
                except ValueError as err:   # outside the support
                    results.append(type(err).__name__)
            if isinstance(results[0], str):
                assert results[1] == results[0], (method, value, results)
            else:
                np.testing.assert_allclose(results[1], results[0], rtol=1e-12, atol=1e-300, err_msg=(method, value))


@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_validation_can_be_turned_off():
    d = MD.Normal(mg.tensor([0.0]), mg.tensor([-1.0]), validate_args=False)
    assert np.isnan(d.log_prob(mg.tensor([0.0])).item())
    MD.Distribution.set_default_validate_args(False)
    try:
        MD.Normal(mg.tensor([0.0]), mg.tensor([-1.0]))
    finally:
        MD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        MD.Normal(mg.tensor([0.0]), mg.tensor([-1.0]))


def test_sample_n_warns_and_repr_matches_pytorch():
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert MD.Normal(mg.zeros(2), mg.ones(2)).sample_n(3).shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _normalized(repr(MD.Normal(mg.zeros(2), mg.ones(2)))) == _normalized(repr(TD.Normal(torch.zeros(2),
                                                                                               torch.ones(2))))
    assert repr(MD.constraints.independent(MD.constraints.real, 1)) == repr(TD.constraints.independent(
        TD.constraints.real, 1))


# --------------------------------------------------------------------------- the new Functions
def test_cholesky_solve_erfinv_gradients_by_finite_differences():
    A = spd(3, 3)
    L = lower_cholesky(3, 3)
    B = real(3, 2)
    check_grad(lambda a: _ops.cholesky((a + a.mT) / 2), A)
    check_gradgrad(lambda a: _ops.cholesky((a + a.mT) / 2), A)
    check_grad(lambda l, b: _ops.solve_triangular(l.tril(), b, upper=False), L, B)
    check_gradgrad(lambda l, b: _ops.solve_triangular(l.triu(), b, upper=True), L.T.copy(), B)
    check_grad(_ops.erfinv, RNG.uniform(-0.9, 0.9, 5))
    check_gradgrad(_ops.erfinv, RNG.uniform(-0.9, 0.9, 5))


def test_log_bessel_i0_is_exact_and_differentiable_twice():
    """log I0 against mpmath (40 digits) to 1e-14, its gradients by finite
    differences to second order: I1 / I0, then 1 - A / k - A^2."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    k = np.array([1e-6, 0.05, 0.3, 0.999, 1.0, 1.7, 2.0, 3.75, 10.0, 80.0, 600.0])
    exact = [float(mpmath.log(mpmath.besseli(0, mpmath.mpf(v)))) for v in k]
    np.testing.assert_allclose(_ops.log_bessel_i0(mg.tensor(k)).numpy(), exact, rtol=1e-14)
    check_grad(_ops.log_bessel_i0, np.array([0.2, 1.5, 4.0, 9.0]))
    check_gradgrad(_ops.log_bessel_i0, np.array([0.2, 1.5, 4.0, 9.0]))
    check_gradgrad(_ops.bessel_ratio, np.array([0.2, 1.5, 4.0, 9.0]))


def test_cholesky_error_matches_pytorch():
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(RuntimeError) as th_error:
        torch.linalg.cholesky(torch.tensor(bad))
    with pytest.raises(RuntimeError) as mg_error:
        _ops.cholesky(mg.tensor(bad))
    assert str(mg_error.value) == str(th_error.value)


def test_a_wrong_cholesky_backward_is_caught(monkeypatch):
    """Mutant: Murray's formula without halving the diagonal of Phi. The MultivariateNormal mirror and the
    finite-difference check both fail; with the right formula both pass (tests above)."""
    from minigrad.ops import decomp

    def wrong(ctx, grads, inputs, outputs, upper=False):
        (G,), _, (L,) = grads, inputs, outputs
        P = (L.mT @ G).tril()
        Y = _ops.solve_triangular(L.mT, P, upper=True)
        S = _ops.solve_triangular(L.mT, Y.mT, upper=True).mT
        return (S + S.mT) / 2
    monkeypatch.setattr(decomp.Cholesky, "gradient", staticmethod(wrong))
    with pytest.raises(AssertionError):
        test_methods_and_gradients_match_pytorch("mvn_covariance")
    with pytest.raises(GradcheckError):
        check_grad(lambda a: _ops.cholesky((a + a.mT) / 2), spd(3, 3))


def test_a_wrong_implicit_gradient_is_caught(monkeypatch):
    """Mutant: the implicit gradient with the density's log x term dropped (pdf = e^-x / Gamma(a))."""
    right = _ops.standard_gamma_grad

    def wrong(x, alpha):
        return right(x, alpha) * x ** (alpha - 1)
    monkeypatch.setattr(_ops, "standard_gamma_grad", wrong)
    with pytest.raises(AssertionError):
        test_implicit_reparameterisation_gradients_match_pytorch("gamma")


def test_log_prob_is_differentiable_twice():
    """log_prob and entropy are built from minigrad ops: second derivatives match PyTorch's."""
    from .mirror import assert_double_mirror
    loc, scale, value = real(3), positive(3), real(3)
    assert_double_mirror(lambda m, s, v: MD.Normal(m, s).log_prob(v), lambda m, s, v: TD.Normal(m, s).log_prob(v),
                         loc, scale, value)
    assert_double_mirror(lambda a, b, v: MD.Gamma(a, b).log_prob(v), lambda a, b, v: TD.Gamma(a, b).log_prob(v),
                         positive(3), positive(3), positive(3), rtol=1e-8, atol=1e-8)
    cov = spd(3, 3)
    assert_double_mirror(lambda m, c, v: MD.MultivariateNormal(m, covariance_matrix=(c + c.mT) / 2).log_prob(v),
                         lambda m, c, v: TD.MultivariateNormal(m, covariance_matrix=(c + c.mT) / 2).log_prob(v),
                         real(3), cov, real(3), rtol=1e-8, atol=1e-8)
    assert math.isfinite(1.0)


def test_pytorchs_module_paths_import():
    """``from torch.distributions.normal import Normal`` and the like, with minigrad for torch."""
    torch_or_skip()                     # imports PyTorch's own modules: needs PyTorch itself
    import importlib
    for name in ["bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2", "dirichlet", "exponential",
                 "half_cauchy", "pareto", "weibull", "inverse_gamma", "logistic_normal", "negative_binomial",
                 "fishersnedecor", "kumaraswamy", "continuous_bernoulli", "von_mises",
                 "gamma", "geometric", "gumbel", "half_normal", "independent", "laplace", "log_normal",
                 "mixture_same_family", "multinomial", "multivariate_normal", "normal", "one_hot_categorical",
                 "poisson", "relaxed_bernoulli", "relaxed_categorical", "studentT", "transformed_distribution",
                 "uniform", "lowrank_multivariate_normal", "kl", "utils", "constraints", "transforms", "constraint_registry", "distribution",
                 "exp_family"]:
        ours = importlib.import_module(f"minigrad.distributions.{name}")
        theirs = importlib.import_module(f"torch.distributions.{name}")
        missing = [n for n in getattr(theirs, "__all__", []) if not hasattr(ours, n)]
        allowed = {"kl": set(),
                   "transforms": {"CorrCholeskyTransform"},
                   "constraints": set(), "exp_family": set(), "utils": set()}
        assert set(missing) <= allowed.get(name, set()), (name, missing)
