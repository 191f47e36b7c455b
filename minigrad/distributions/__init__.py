"""``minigrad.distributions``: PyTorch's ``torch.distributions`` on minigrad tensors.

    from minigrad.distributions import Normal, kl_divergence
    q = Normal(mu, log_sigma.exp())
    z = q.rsample()                      # differentiable in mu and log_sigma
    loss = -p_x_given_z(z).log_prob(x).sum() + kl_divergence(q, Normal(0.0, 1.0)).sum()

Samples come from minigrad's generator (``minigrad.manual_seed``), so they differ from PyTorch's; everything
computed from given values (log_prob, entropy, cdf, mean, variance, kl_divergence, and the gradients of
rsample for the same noise) follows PyTorch's formulas. Gamma, Beta and Dirichlet need SciPy
(``pip install "minigrad[special]"``) for lgamma/digamma and their implicit reparameterisation gradients.
"""
from . import constraints, transforms
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma_family import Beta, Dirichlet, Gamma
from .kl import kl_divergence, register_kl
from .multivariate import Independent, MultivariateNormal
from .transformed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, LogNormal, RelaxedBernoulli,
                          RelaxedOneHotCategorical, TransformedDistribution)
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, SoftmaxTransform,
                         TanhTransform, Transform, identity_transform)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "ExpRelaxedCategorical",
           "Exponential", "ExponentialFamily", "Gamma", "Independent", "Laplace", "LogNormal",
           "LogitRelaxedBernoulli", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "TransformedDistribution", "Uniform", "kl_divergence",
           "register_kl", "constraints", "transforms", "AffineTransform", "ComposeTransform", "ExpTransform",
           "SigmoidTransform", "SoftmaxTransform", "TanhTransform", "Transform", "identity_transform"]
