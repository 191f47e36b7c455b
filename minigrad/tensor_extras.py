"""Tensor methods public programs call that are spelled differently elsewhere in minigrad: ``ndimension``,
``nelement``, ``adjoint``, ``swapaxes_``/``swapdims_``, ``fill_diagonal_``; the memory stand-ins
``share_memory_`` (CPU memory: a no-op, as PyTorch's on one process) and ``pin_memory`` (PyTorch's CPU-only
build raises: pinned memory is for copies to an accelerator); the layout queries ``dim_order``, ``dense_dim``,
``sparse_dim``, ``is_set_to``, ``const_data_ptr``; ``sparse_mask`` (a dense tensor read at a sparse one's positions); the CPU tensor's Python-function maps ``apply_``, ``map_``,
``map2_``; ``as_subclass`` (the tensor as an instance of a Tensor subclass, sharing memory and history) and
``module_load`` (how ``load_state_dict`` turns a state-dict value into a parameter's)."""
import numpy as np

from ._checks import takes_tensors
from .autograd import Function
from .dtypes import cast_limited, fitted_scalar
from .autograd.version import bump_tensor
from .ops.inplace import check_writable
from .ops.shape import expand
from .tensor import Tensor


def ndimension(self):
    """``dim()``."""
    return self.ndim


def nelement(self):
    """``numel()``."""
    return self.numel()


def adjoint(self):
    """The conjugate transpose of the last two dims (``mH``)."""
    return self.mH


def swapaxes_(self, axis0, axis1):
    """In-place ``swapaxes``: ``transpose_``."""
    return self.transpose_(axis0, axis1)


swapdims_ = swapaxes_


def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (every dim the same length, or a 2-D tensor); ``wrap=True`` on a
    tall matrix starts the diagonal again below each square block, one row apart, as NumPy's fill_diagonal."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    rows = self.shape[0]
    if self.ndim > 2 and any(n != rows for n in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.ndim == 2:
        cols = self.shape[1]
        flat = np.arange(0, rows * cols if wrap else min(rows, cols) * cols, cols + 1)   # positions, C order
        index = np.unravel_index(flat, self.shape)
    else:
        index = (np.arange(rows),) * self.ndim
    values = Tensor(np.full(len(index[0]), fitted_scalar(fill_value, self._data.dtype)))   # PyTorch's fill_ rules
    return self.index_put_(tuple(Tensor(i.astype(np.int64)) for i in index), values)


def share_memory_(self):
    """Returns ``self``: a tensor's memory is already shared by the processes that fork from this one."""
    return self


def pin_memory(self, device=None):
    """PyTorch's CPU-only build raises here; so does minigrad."""
    raise RuntimeError("Cannot access accelerator device when none is available.")


def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost to the innermost in memory (largest stride first; equal strides in dim
    order): (0, 2, 3, 1) for channels_last. With ``ambiguity_check``, PyTorch's error when two dims have the
    same stride (size-1 dims), so that the order is not unique."""
    strides = self._data.strides
    if ambiguity_check is not False and len(set(strides)) < len(strides):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def dense_dim(self):
    """A strided tensor's dims are all dense."""
    return self.ndim


def sparse_dim(self):
    """A strided tensor has no sparse dims."""
    return 0


def sparse_mask(self, mask):
    """The entries of this dense tensor at the positions of the sparse COO tensor ``mask``, as a sparse tensor with
    ``mask``'s indices (its values unused): differentiable through the entries read."""
    from .sparse.gradients import mask as sparse_mask_of
    return sparse_mask_of(self, mask)


def is_set_to(self, tensor):
    """Whether both tensors show the same memory the same way (start, sizes and strides)."""
    a, b = self._data, tensor._data
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype)


def const_data_ptr(self):
    """``data_ptr()``."""
    return self.data_ptr()


def _map_in_place(name, target, others, fn):
    """``target``'s elements replaced by ``fn(t, *o)`` of each element and the matching elements of ``others``
    (broadcast to ``target``'s shape), called with Python numbers; the results cast to ``target``'s dtype.
    PyTorch's error for a tensor that requires grad (the map cannot be differentiated). The write counts as an
    in-place write (a saved tensor rewritten this way makes backward refuse, where PyTorch does not notice)."""
    if any(t.requires_grad for t in (target, *others)):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    columns = [target._data.reshape(-1).tolist()]
    columns += [expand(o, target.shape)._data.reshape(-1).tolist() for o in others]
    values = np.array([fn(*items) for items in zip(*columns)]).reshape(target.shape)
    check_writable(target._data)
    np.copyto(target._data, cast_limited(values, target._data.dtype), casting="unsafe")
    bump_tensor(target)
    return target


def apply_(self, callable):
    """Each element replaced by ``callable(element)`` (a Python function of a Python number)."""
    return _map_in_place("apply_", self, (), callable)


def map_(self, tensor, callable):
    """Each element replaced by ``callable(element, tensor's element)``, ``tensor`` broadcast to this shape."""
    return _map_in_place("map_", self, (tensor,), callable)


def map2_(self, x, y, callable):
    """Each element replaced by ``callable(element, x's element, y's element)``."""
    return _map_in_place("map2_", self, (x, y), callable)


class Alias(Function):
    """out = the input itself, seen through another Tensor object: a view of all of it; the gradient passes
    unchanged."""
    view = True

    @staticmethod
    def forward(ctx, a):
        return a._data.view()

    @staticmethod
    def backward(ctx, dout):
        return dout

    graph_backward = backward


def as_subclass(self, cls):
    """This tensor as an instance of ``cls`` (``Tensor`` or a subclass of it, whose ``__init__`` is not called),
    sharing its memory and version counter; a view recorded by autograd, so the gradient reaches this tensor's
    history (as PyTorch's, the result is never a leaf when this tensor requires grad)."""
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    alias = Alias.apply(self)
    if cls is Tensor:
        return alias
    out = object.__new__(cls)
    for slot in Tensor.__slots__:            # the alias's state (memory, history, view links), in a ``cls`` object
        if slot not in ("__weakref__", "__dict__") and hasattr(alias, slot):
            setattr(out, slot, getattr(alias, slot))
    return out


def _make_subclass(cls, data, require_grad=False, dispatch_strides=False, dispatch_device=False,
                   device_for_backend_keys=None):
    """PyTorch's constructor of tensor subclasses, called from a subclass's ``__new__``: a ``cls`` instance sharing
    ``data``'s memory, detached from its history, a leaf that requires grad if ``require_grad`` (the dispatch
    arguments concern PyTorch's C++ dispatcher and change nothing here)."""
    if not isinstance(cls, type) or not issubclass(cls, Tensor):
        raise TypeError(f"cls must be a subclass of Tensor (got {cls!r})")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {type(data).__name__}")
    out = object.__new__(cls)
    Tensor.__init__(out, data._data, requires_grad=bool(require_grad))   # (a new leaf: no history)
    return out


Tensor._make_subclass = staticmethod(_make_subclass)


def module_load(self, other, assign=False):
    """What ``load_state_dict`` puts in place of this parameter or buffer for the state-dict value ``other``
    (when it swaps tensors): ``other`` detached with ``assign``, else this tensor with ``other`` copied in,
    detached."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


METHODS = {"ndimension": ndimension, "nelement": nelement, "adjoint": adjoint, "swapaxes_": swapaxes_,
           "swapdims_": swapdims_, "fill_diagonal_": fill_diagonal_, "share_memory_": share_memory_,
           "pin_memory": pin_memory, "dim_order": dim_order, "dense_dim": dense_dim, "sparse_dim": sparse_dim,
           "is_set_to": is_set_to, "const_data_ptr": const_data_ptr, "apply_": apply_, "map_": map_,
           "map2_": map2_, "as_subclass": as_subclass, "module_load": module_load, "sparse_mask": sparse_mask}
for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)


# functions PyTorch also exposes at the top level for these in-place methods
@takes_tensors("input")
def zero_(input):
    """``torch.zero_``: ``input.zero_()``."""
    return input.zero_()


@takes_tensors("input", "the_template")
def resize_as_(input, the_template, *, memory_format=None):
    """``torch.resize_as_``: ``input.resize_as_(the_template)``."""
    return input.resize_as_(the_template, memory_format=memory_format)
