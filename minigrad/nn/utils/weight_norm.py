"""The legacy ``nn.utils.weight_norm`` / ``remove_weight_norm`` (a forward pre-hook), as in PyTorch, where it is
deprecated in favour of ``nn.utils.parametrizations.weight_norm``.

``weight_norm(module, 'weight', dim)`` replaces the parameter ``weight`` by two parameters, ``weight_g`` (the
magnitude: ``norm_except_dim(weight, 2, dim)``) and ``weight_v`` (the direction: the weight itself), and a
forward pre-hook that recomputes ``module.weight = _weight_norm(weight_v, weight_g, dim)`` before each call.
"""
import warnings

from ...ops.norm.weightnorm import _weight_norm, norm_except_dim
from ..module import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of one weight-normalized parameter ``name`` (dim -1: the norm of the whole tensor)."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        """Weight-normalize ``module.<name>`` (checked before anything changes) and register the hook."""
        if any(isinstance(hook, WeightNorm) and hook.name == name for hook in module._forward_pre_hooks):
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        hook = WeightNorm(name, dim)
        weight = getattr(module, name)
        if name not in module._parameters:
            raise KeyError(f"weight_norm: '{name}' of {type(module).__name__} must be a parameter, got a "
                           f"{type(weight).__name__} that is not registered as one")
        magnitude = norm_except_dim(weight, 2, hook.dim).detach()   # IndexError for a bad dim: nothing changed yet
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(magnitude))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, hook.compute_weight(module))
        module.register_forward_pre_hook(hook)
        return hook

    def remove(self, module):
        """Make ``module.<name>`` a plain parameter again, holding the current g * v / ||v||."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Weight-normalize the parameter ``name`` of ``module`` (deprecated, as in PyTorch); returns ``module``."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_hook(module, hook_type, name, label):
    """Undo the ``hook_type`` hook (WeightNorm, SpectralNorm) of parameter ``name``: its ``remove(module)``, then
    unregister it; ValueError naming ``label`` (the function that installed it) if there is none."""
    for hook in module._forward_pre_hooks:
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            module._forward_pre_hooks.remove(hook)
            return module
    raise ValueError(f"{label} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm`` on ``name``: a plain parameter with the current weight again; returns ``module``."""
    return remove_hook(module, WeightNorm, name, "weight_norm")
