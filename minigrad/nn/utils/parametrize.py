"""``nn.utils.parametrize``: a module's tensor computed from other tensors each time it is read
(PyTorch's parametrizations, with its names, state_dict keys and errors).

``register_parametrization(module, "weight", P)`` moves the parameter ``weight`` to
``module.parametrizations.weight.original`` (or ``original0``, ``original1``, ... when ``P.right_inverse``
returns several tensors) and turns ``module.weight`` into a property that returns
``P(original)`` (several parametrizations are chained: ``P2(P1(original))``). Assigning to ``module.weight``
calls the right inverses. The module's class is swapped for a subclass named ``Parametrized<Class>``, so
that the property lives on a class of this module alone.
"""
import contextlib
import copy
from collections.abc import Sequence

from ...autograd import no_grad
from ...tensor import Tensor
from ..layers import ModuleDict, ModuleList
from ..module import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations"]

_cache_depth = 0     # how many ``cached()`` contexts are open
_cache = {}          # (id(module), tensor name) -> the parametrized tensor, while one is open


@contextlib.contextmanager
def cached():
    """Inside this context each parametrized tensor is computed once, on first read, and reused."""
    global _cache_depth, _cache
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _register_parameter_or_buffer(module, name, tensor):
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_values(target, value):
    """Give ``target`` the values of ``value`` (same shape and dtype), in place: the original keeps its
    identity (optimizers holding it keep working)."""
    with no_grad():
        target.copy_(value)


def _check_like(value, original, what):
    """ValueError unless ``value`` is a Tensor with the dtype and shape of ``original``."""
    if not isinstance(value, Tensor):
        raise ValueError(f"{what} must return a tensor. Got {type(value).__name__}.")
    if value.dtype != original.dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor.\nunparametrized dtype: {original.dtype}\n"
                         f"parametrized dtype: {value.dtype}")
    if value.shape != original.shape:
        raise ValueError(f"{what} may not change the shape of the tensor.\nunparametrized shape: "
                         f"{tuple(original.shape)}\nparametrized shape: {tuple(value.shape)}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the tensor(s) they start from:
    ``original`` (one tensor) or ``original0``, ``original1``, ... (what the first ``right_inverse`` returned)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != original.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new is not original:
                _set_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, tensor in enumerate(new):
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(tensor).__name__}.")
                if isinstance(original, Parameter):
                    tensor = Parameter(tensor.detach().clone(), original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", tensor)
        if not unsafe:
            _check_like(self(), original, "A parametrization")

    def right_inverse(self, value):
        """Set the original tensor(s) so that the parametrized tensor becomes ``value``: the right inverses
        of the parametrizations, last to first (each must have one)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                _check_like(value, self.original, "`right_inverse`")
                _set_values(self.original, value)
                return
            if not isinstance(value, Sequence) or len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of {self.ntensors} tensors. Got "
                                 f"{type(value).__name__}")
            for i, tensor in enumerate(value):
                original = getattr(self, f"original{i}")
                _check_like(tensor, original, f"Tensor {i} returned by `right_inverse`")
                _set_values(original, tensor)

    def forward(self):
        """The parametrized tensor: the first parametrization of the original(s), then each next one."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Swap the module's class for ``Parametrized<Class>``, a subclass that will carry the properties."""
    cls = module.__class__

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    def deepcopy(self, memo):       # what copy.deepcopy does for a plain object, which __getstate__ now forbids
        replica = self.__new__(type(self))
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica
    members = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        members["__deepcopy__"] = deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), members)


def _inject_property(module, tensor_name):
    """``module.<tensor_name>`` becomes a property: read computes the parametrization (once per ``cached()``
    context), assignment calls its right inverse."""

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Replace ``module.<tensor_name>`` (a parameter, a buffer or an already parametrized tensor) by
    ``parametrization(original)``, computed on each read. Returns ``module``.

    Unless ``unsafe``, the parametrization must keep the tensor's shape and dtype (checked once here).
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            _check_like(parametrization(current), current, "Registering a parametrization")
            if hasattr(parametrization, "right_inverse"):
                inverse = parametrization.right_inverse(parametrization(current))
                if not isinstance(inverse, Tensor):
                    raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                     f"{type(inverse).__name__}")
                _check_like(inverse, current, "The tensor returned by parametrization.right_inverse")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has any parametrization (``tensor_name=None``) or one on ``tensor_name``."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter (or buffer) again, holding
    the parametrized values (``leave_parametrized=True``) or the original ones. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_values(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        first, original = parametrizations.original0, value.detach().clone()
        if isinstance(first, Parameter):
            original = Parameter(original, first.requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before ``register_parametrization`` swapped it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)

