"""The legacy ``nn.utils.spectral_norm`` / ``remove_spectral_norm`` (Miyato et al., "Spectral Normalization for
Generative Adversarial Networks", ICLR 2018), a forward pre-hook, as in PyTorch; and the power iteration that
``nn.utils.parametrizations.spectral_norm`` shares.

The weight is divided by sigma, an estimate of its largest singular value (of the weight reshaped to a matrix W
with ``dim`` as rows). Power iteration refines two unit vectors u (rows) and v (columns); then
sigma = u^T W v. u and v are constants for autograd: the gradient flows through W in both places W appears.

``spectral_norm(module, 'weight')`` keeps the trained weight as the parameter ``weight_orig`` and u, v as the
buffers ``weight_u``, ``weight_v``; before each call the hook sets ``module.weight = weight_orig / sigma``,
running ``n_power_iterations`` steps first in training mode only (eval reuses u and v as they are).
"""
import numpy as np

from ... import random
from ...autograd import no_grad
from ...tensor import Tensor
from ..conv import _ConvNd
from ..module import Parameter
from .weight_norm import remove_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def weight_matrix(weight, dim):
    """The weight (a Tensor or an ndarray) as a matrix (weight.shape[dim], -1): ``dim`` moved to the front."""
    if dim != 0:
        order = (dim,) + tuple(d for d in range(weight.ndim) if d != dim)
        weight = weight.permute(*order) if isinstance(weight, Tensor) else weight.transpose(order)
    return weight.reshape(weight.shape[0], -1)


def unit(x, eps):
    """x / max(||x||, eps) for a 1-d ndarray (F.normalize's rule: eps keeps a zero vector finite)."""
    return x / max(np.sqrt(np.dot(x, x)), eps)


def random_unit(size, dtype, eps):
    """A random direction of ``size`` elements (normal entries, normalized): power iteration's start."""
    return unit(random.randn(size, dtype=dtype)._data, eps)


def power_iteration(W, u, v, steps, eps, v_first):
    """``steps`` power-iteration steps on the matrix W (ndarray), writing the new unit vectors into the 1-d
    buffers u (W's rows) and v (W's columns) in place. Each step maps v to u = W v / ||W v|| and u to
    v = W^T u / ||W^T u||; the legacy hook updates v first, the parametrization u first (PyTorch's orders)."""
    for _ in range(steps):
        if v_first:
            v._data[...] = unit(W.T @ u._data, eps)
            u._data[...] = unit(W @ v._data, eps)
        else:
            u._data[...] = unit(W @ v._data, eps)
            v._data[...] = unit(W.T @ u._data, eps)


def check_power_iterations(n_power_iterations):
    if n_power_iterations <= 0:
        raise ValueError("Expected n_power_iterations to be positive, but got "
                         f"n_power_iterations={n_power_iterations}")


def default_dim(module, dim):
    """PyTorch's default ``dim``: 1 for transposed convolutions (their weight is (in, out, ...)), else 0."""
    if dim is None:
        return 1 if isinstance(module, _ConvNd) and module.transposed else 0
    return dim


def divided_by_sigma(weight, u, v, dim):
    """weight / sigma, sigma = u^T W v with W = ``weight_matrix(weight, dim)`` (a Tensor op: differentiable in
    weight) and u, v constants (copies, so later power-iteration writes do not touch what backward saved)."""
    W = weight_matrix(weight, dim)
    sigma = (Tensor(u._data.copy()) * (W @ Tensor(v._data.copy()))).sum()
    return weight / sigma


class SpectralNorm:
    """The forward pre-hook of one spectrally normalized parameter ``name``."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        check_power_iterations(n_power_iterations)
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def compute_weight(self, module, do_power_iteration):
        """weight_orig / sigma, after ``n_power_iterations`` steps on the buffers if ``do_power_iteration``."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        if do_power_iteration:
            with no_grad():
                power_iteration(weight_matrix(weight._data, self.dim), u, v, self.n_power_iterations, self.eps,
                                v_first=True)
        return divided_by_sigma(weight, u, v, self.dim)

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Spectrally normalize ``module.<name>`` (checked before anything changes) and register the hook."""
        if any(isinstance(hook, SpectralNorm) and hook.name == name for hook in module._forward_pre_hooks):
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        hook = SpectralNorm(name, n_power_iterations, dim, eps)
        if name not in module._parameters or module._parameters[name] is None:
            raise KeyError(f"spectral_norm: {type(module).__name__} has no parameter named '{name}'")
        weight = module._parameters[name]
        if not -weight.ndim <= dim < weight.ndim:
            raise RuntimeError(f"spectral_norm: dim {dim} is out of range for the {weight.ndim}-d parameter "
                               f"'{name}' of shape {list(weight.shape)}")
        hook.dim = dim % weight.ndim
        rows, columns = weight_matrix(weight._data, hook.dim).shape
        u = Tensor(random_unit(rows, weight.dtype, eps))
        v = Tensor(random_unit(columns, weight.dtype, eps))
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(hook)
        return hook

    def remove(self, module):
        """Make ``module.<name>`` a plain parameter again, holding weight_orig / sigma (no power iteration)."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        for suffix in ("_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm before each call (the legacy hook); returns ``module``."""
    SpectralNorm.apply(module, name, n_power_iterations, default_dim(module, dim), eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm`` on ``name``: a plain parameter holding the normalized weight; returns ``module``."""
    return remove_hook(module, SpectralNorm, name, "spectral_norm")
