"""VonMises: the circular normal distribution of an angle, density exp(k cos(x - loc)) / (2 pi I0(k)).

log I0 comes from SciPy's exponentially scaled Bessel functions (exact to rounding; PyTorch evaluates
Abramowitz & Stegun's polynomial approximations, good to about 1e-7), so values agree with PyTorch to that
accuracy. Samples use Best & Fisher's (1979) rejection algorithm in float64."""
import math

import numpy as np

from ..autograd import no_grad
from ..tensor import Tensor
from .. import _pytorch_stream as _stream
from ..random import torch_stream
from . import constraints
from ._ops import bessel_ratio, log_bessel_i0
from .continuous import _expanded
from .distribution import Distribution
from .utils import CenteredAtLoc, broadcast_all

__all__ = ["VonMises"]


def _best_fisher(loc, concentration, shape, gen):
    """Angles in [-pi, pi) ~ VonMises(loc, concentration), float64 arrays broadcast to ``shape``, drawn as PyTorch
    draws them: each round three float64 uniforms for every element, and every element accepted in a round takes
    that round's angle (also one accepted before)."""
    kappa = np.broadcast_to(concentration, shape)
    tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
    rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))   # Taylor form for tiny kappa
    x = np.zeros(shape)
    pending = np.ones(shape, dtype=bool)
    while pending.any():
        u1, u2, u3 = _stream.uniform(gen, 3 * int(np.prod(shape, dtype=np.int64)), np.float64).reshape((3,) + shape)
        z = np.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        pending &= ~accept
    return (x + math.pi + np.broadcast_to(loc, shape)) % (2 * math.pi) - math.pi


class VonMises(CenteredAtLoc, Distribution):
    """VonMises(loc, concentration): angles (any real, read modulo 2 pi); mean, mode and variance are circular."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        """k cos(x - loc) - log(2 pi) - log I0(k)."""
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - log_bessel_i0(
            self.concentration)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            angles = _best_fisher(self.loc._data.astype(np.float64), self.concentration._data.astype(np.float64),
                                  shape, torch_stream())
        return Tensor(angles.astype(self.loc.dtype))

    @property
    def variance(self):
        """The circular variance 1 - I1(k) / I0(k)."""
        return 1 - bessel_ratio(self.concentration)
