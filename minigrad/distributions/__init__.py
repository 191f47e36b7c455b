"""``minigrad.distributions``: PyTorch's ``torch.distributions`` on minigrad tensors.

    from minigrad.distributions import Normal, kl_divergence
    q = Normal(mu, log_sigma.exp())
    z = q.rsample()                      # differentiable in mu and log_sigma
    loss = -p_x_given_z(z).log_prob(x).sum() + kl_divergence(q, Normal(0.0, 1.0)).sum()

Samples come from minigrad's generator (``minigrad.manual_seed``), so they differ from PyTorch's; everything
computed from given values (log_prob, entropy, cdf, mean, variance, kl_divergence, and the gradients of
rsample for the same noise) follows PyTorch's formulas. Whatever uses lgamma/digamma (Gamma, Beta, Dirichlet,
StudentT, Binomial, Poisson, ...), the implicit reparameterisation gradients or Bessel functions (VonMises)
needs SciPy: ``pip install "minigrad[special]"``.

Where things are: ``distribution.py`` (the base class and validation), ``constraints.py``, ``transforms.py``,
``constraint_registry.py`` (biject_to/transform_to), ``continuous.py`` (location-scale families, Uniform,
Exponential), ``discrete.py``, ``gamma_family.py`` (Gamma, Chi2, StudentT, FisherSnedecor, Dirichlet, Beta),
``multivariate.py`` (MultivariateNormal, LowRankMultivariateNormal, Independent), ``transformed.py``
(TransformedDistribution, LogNormal, the relaxed distributions), ``derived.py`` (the other transformed ones),
``mixture.py``, ``continuous_bernoulli.py``, ``von_mises.py``, ``generalized_pareto.py``, ``lkj_cholesky.py``,
``wishart.py``, ``kl.py``, and ``_ops.py`` (the Functions the distributions need: Cholesky, triangular
solves, erfinv, gamma and Dirichlet samples with their implicit gradients, the regularised incomplete gamma,
log I0). PyTorch's module paths (``.normal``, ``.categorical``,
...) are registered at the bottom of this file.
"""
from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, Gumbel, Laplace, Normal, Uniform
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial, NegativeBinomial, OneHotCategorical,
                       OneHotCategoricalStraightThrough, Poisson)
from .continuous_bernoulli import ContinuousBernoulli
from .derived import HalfCauchy, HalfNormal, InverseGamma, Kumaraswamy, LogisticNormal, Pareto, Weibull
from .distribution import Distribution, ExponentialFamily
from .gamma_family import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT
from .generalized_pareto import GeneralizedPareto
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .mixture import MixtureSameFamily
from .multivariate import Independent, LowRankMultivariateNormal, MultivariateNormal
from .von_mises import VonMises
from .wishart import Wishart
from .transformed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, LogNormal, RelaxedBernoulli,
                          RelaxedOneHotCategorical, TransformedDistribution)
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform",
           "kl_divergence", "register_kl", "constraints", "transforms", "AbsTransform", "AffineTransform",
           "ComposeTransform", "ExpTransform", "IndependentTransform", "PowerTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "TanhTransform", "Transform", "identity_transform",
           "LowerCholeskyTransform", "StickBreakingTransform", "biject_to", "transform_to", "HalfCauchy",
           "InverseGamma", "LogisticNormal", "Pareto", "Weibull", "NegativeBinomial",
           "LowRankMultivariateNormal", "FisherSnedecor", "Kumaraswamy",
           "ContinuousBernoulli", "CumulativeDistributionTransform", "PositiveDefiniteTransform",
           "ReshapeTransform", "VonMises", "CatTransform", "StackTransform", "CorrCholeskyTransform",
           "GeneralizedPareto", "LKJCholesky", "Wishart"]


def _pytorch_module_names():
    """PyTorch's submodules of ``torch.distributions`` (``torch.distributions.normal`` holds ``Normal``, ...), so
    that ``from minigrad.distributions.normal import Normal`` works as programs write it for PyTorch."""
    import sys
    import types
    names = {"bernoulli": "Bernoulli", "beta": "Beta", "binomial": "Binomial", "categorical": "Categorical",
             "cauchy": "Cauchy", "continuous_bernoulli": "ContinuousBernoulli", "chi2": "Chi2", "dirichlet": "Dirichlet", "exponential": "Exponential",
             "exp_family": "ExponentialFamily", "gamma": "Gamma", "geometric": "Geometric", "gumbel": "Gumbel",
             "half_normal": "HalfNormal", "half_cauchy": "HalfCauchy", "pareto": "Pareto", "weibull": "Weibull",
             "inverse_gamma": "InverseGamma", "fishersnedecor": "FisherSnedecor", "kumaraswamy": "Kumaraswamy", "logistic_normal": "LogisticNormal", "independent": "Independent", "laplace": "Laplace", "log_normal": "LogNormal",
             "mixture_same_family": "MixtureSameFamily", "multinomial": "Multinomial", "negative_binomial": "NegativeBinomial",
             "multivariate_normal": "MultivariateNormal",
             "lowrank_multivariate_normal": "LowRankMultivariateNormal", "normal": "Normal",
             "one_hot_categorical": ("OneHotCategorical", "OneHotCategoricalStraightThrough"), "poisson": "Poisson",
             "relaxed_bernoulli": ("LogitRelaxedBernoulli", "RelaxedBernoulli"),
             "relaxed_categorical": ("ExpRelaxedCategorical", "RelaxedOneHotCategorical"), "studentT": "StudentT",
             "transformed_distribution": "TransformedDistribution", "uniform": "Uniform", "von_mises": "VonMises"}
    package = globals()
    for module_name, classes in names.items():
        classes = (classes,) if isinstance(classes, str) else classes
        module = types.ModuleType(f"{__name__}.{module_name}", f"PyTorch's module name for {', '.join(classes)}.")
        for name in classes:
            setattr(module, name, package[name])
        module.__all__ = list(classes)
        sys.modules[module.__name__] = module
        package.setdefault(module_name, module)


_pytorch_module_names()
