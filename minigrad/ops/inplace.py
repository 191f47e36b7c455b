"""In-place ops (``add_``, ``mul_``, ``t[i] = v``, ``normal_``, ...) that autograd can trust.

Every in-place op is its out-of-place twin written back into the tensor's memory, in one of two ways:

* **Nothing to record** (grad mode off, or neither the tensor nor an operand requires grad): NumPy writes
  straight into the array (``np.add(x, y, out=x)``), the fast path optimizers and ``nn.init`` take.
* **Recording**: the twin runs on a copy of the old values that carries the tensor's history
  (:func:`write`), its result is copied into the tensor's memory, and the tensor's ``grad_fn`` becomes the
  twin's. ``h.add_(1).mul_(w).relu_()`` therefore differentiates exactly as ``h = relu((h + 1) * w)``.
  A write through a view also gives the view's base a new history (``autograd/views.py``).

Either way the memory's version is bumped, so a backward that saved the old values raises instead of
using the new ones (``autograd/version.py``). As in PyTorch, a leaf that requires grad (or a view of one)
may be written in place only under ``no_grad``, and an expanded tensor, whose elements share memory,
not at all (but for the writes PyTorch allows there: ``fill_``, ``zero_``, and, with its deprecation warning,
``index_put_``, ``index_fill_``, ``masked_fill_`` and assignment through an index array or mask).
"""
import warnings
import weakref

import numpy as np

from .._checks import check_tensor
from ..autograd import Function, grad_mode
from ..autograd import version
from ..autograd import function as _function
from ..autograd.function import note_own_counter
from ..autograd.version import alias, bump_tensor, storage_of
from ..autograd.views import (WriteRegion, base_region_history, check_rebase, history, move_retained, overlaps,
                              refuse_shared_base, region, repeats_memory, set_view_history)
from ..dtypes import (FLOAT8, LIMITED, c_name, cast_limited, cast_refused, fitted_scalar, kind_of, real_values,
                      result_type, scalar_type_name)
from ..limited_dtypes import check_kernel
from ..tensor import Tensor
from .._pytorch_stream import bernoulli_scalar, exponential, uniform
from . import elementwise as ew
from . import shape as sh
from .layout import clone, dense_order  # noqa: F401 - Tensor.clone is bound from METHODS below

_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


# --------------------------------------------------------------------------- checks, before anything changes
def check_writable(array):
    """PyTorch's errors for memory an in-place op must not write: shared by several elements (expanded)."""
    if array.size and 0 in array.strides and overlaps(array):   # an empty tensor has nothing to share
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    if not array.flags.writeable:
        raise RuntimeError("the tensor's memory is read-only (it views a read-only NumPy array); clone() it "
                           "before writing into it in place")


def warn_expanded_index_put(array, op="index_put_"):
    """PyTorch's warning (not an error) for ``index_put_``, ``index_fill_``, ``masked_fill_`` and advanced-index
    assignment into an expanded tensor."""
    if array.size and 0 in array.strides and overlaps(array):
        example = {"masked_fill_": "tensor[mask] = scalar", "index_fill_": "tensor[indices] = scalar"}.get(
            op, "tensor[indices] = tensor")
        warnings.warn(f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing "
                      f"this operation. This also applies to advanced indexing e.g. {example}", UserWarning,
                      stacklevel=3)


def check_leaf(t):
    """PyTorch's checks before a recorded in-place write: a view whose history cannot follow the write (one of
    several outputs of one op, or made under no_grad) is refused, then a view of a leaf that requires grad, then
    a leaf that requires grad (in that order, as PyTorch's ``check_inplace``)."""
    base = t._base
    if base is not None:
        check_rebase(t, indirect=False)
        if base._grad_fn is None and t.requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if t.requires_grad and t._grad_fn is None:    # as PyTorch: a stale view's grad_fn is not brought up to date here
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _dense_range(array):
    """The [start, end) byte range of ``array``'s memory if its elements fill it without gaps or repeats (some
    permutation of a contiguous array), else None: PyTorch checks overlap only between such tensors."""
    if array.size == 0:
        return None
    if not (array.flags.c_contiguous or array.flags.f_contiguous or dense_order(array)):
        return None
    low = array.__array_interface__["data"][0]
    low += sum((n - 1) * st for n, st in zip(array.shape, array.strides) if st < 0)
    return low, low + array.nbytes


def check_no_overlap(array, operands, full_ok=True):
    """PyTorch's error when an operand's memory partly overlaps ``array``, the memory written in place
    (``x[1:].add_(x[:-1])``; with ``full_ok=False``, as ``index_put_`` checks, also the very same memory:
    ``x[idx] = x``). As PyTorch, only tensors whose elements fill their memory densely are compared."""
    target = _dense_range(array)
    if target is None:
        return
    for o in operands:
        if not isinstance(o, Tensor):
            continue
        other = _dense_range(o._data)
        if other is None or other[1] <= target[0] or target[1] <= other[0]:
            continue
        if full_ok and other == target and _same_strides(o._data, array):
            continue
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing the "
                           "operation.")


def _same_strides(a, b):
    """Whether ``a`` and ``b`` lay the same shape out with the same strides, as PyTorch compares them (a size-1 dim's
    stride counts too)."""
    return a.shape == b.shape and a.strides == b.strides


def check_result(t, shape, dtype):
    """The result of an in-place op must fit ``t``: same shape after broadcasting, a dtype ``t`` can hold."""
    if shape != t.shape:
        ew.check_broadcast(t.shape, shape)   # PyTorch's error naming the sizes, for shapes that do not broadcast
    if shape != t.shape and shape != () and tuple(np.broadcast_shapes(t.shape, shape)) != t.shape:
        raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(t.shape, shape))}")
    result, target = kind_of(dtype), kind_of(t.dtype)          # (bfloat16 is "f", not NumPy's "V")
    if dtype != t.dtype and _CATEGORY[result] > _CATEGORY[target]:
        raise cast_refused(dtype, t.dtype)


def _broadcast_error(t, other):
    try:
        np.broadcast_shapes(t.shape, other.shape)
    except ValueError:
        ew.check_broadcast(t.shape, other.shape)


def _records(t, operands):
    if not grad_mode._state.enabled:
        return False
    if t.requires_grad:
        return True
    return any(isinstance(o, Tensor) and o.requires_grad for o in operands)


# --------------------------------------------------------------------------- the one way to write in place
class Overwrite(Function):
    """``old`` replaced by ``value`` whole (``fill_``, ``copy_``, ``normal_``, ...): ``old`` gets a zero
    gradient (its values are gone), ``value`` all of it."""

    @staticmethod
    def forward(ctx, old, value):
        return np.broadcast_to(cast_limited(value._data, old.dtype), old.shape)

    @staticmethod
    def backward(ctx, dout):
        return (np.zeros_like(dout._data) if ctx.needs_input_grad[0] else None), dout

    @staticmethod
    def graph_backward(ctx, dout):
        return (Tensor(np.zeros_like(dout._data)) if ctx.needs_input_grad[0] else None), dout


def write(t, compute, operands=(), fast=None, shared_ok=False, overlap="partial", written=None, index=None):
    """``t`` becomes ``compute(t)``, in place; returns ``t``.

    ``compute`` is the out-of-place twin (Tensors in, a Tensor out). ``fast(array)``, if given, writes
    the same result into ``t``'s array with NumPy; it is used when nothing is recorded. The caller has
    checked the arguments, and everything that can be refused is refused here before anything is written,
    so an error leaves ``t`` unchanged. As in PyTorch: ``shared_ok``, the op may write into memory several
    elements share (``fill_``, ``zero_``); ``overlap``, how an operand may overlap ``written`` (the memory
    written, ``t``'s by default): ``"partial"`` is refused but the very same memory allowed (``x.add_(x)``),
    ``"any"`` refuses both (``index_put_``), None checks nothing (a value read as a number first). ``index``: the
    basic index of ``written`` in ``t`` (a write through ``t[index]``), written last when ``t``'s elements share
    memory (an expanded tensor), so that the positions outside it cannot write their old values back over it."""
    if _function.dual_active:   # forward AD: the tangent follows the write (autograd/forward_ad.py)
        return _function.dual_write(write, t, compute, operands, fast, shared_ok, overlap, written, index)
    if not shared_ok or not t._data.flags.writeable:
        check_writable(t._data if written is None else written)
    if overlap is not None and operands:
        check_no_overlap(t._data if written is None else written, operands, overlap == "partial")
    if not _records(t, operands):
        if fast is not None:
            fast(t._data)
        else:
            np.copyto(t._data, compute(t)._data, casting="unsafe")
        bump_tensor(t)          # t.data.add_(...) counts on .data's own counter (invisible to t's users)
        return t
    check_leaf(t)
    old = history(t)                              # reading t.grad_fn brings a stale view up to date first
    old_node = old.grad_fn
    if t._base is not None and old_node is not None and old_node.pre_hooks and t._base._requires_grad:
        view_node, old_node = old_node, base_region_history(t)   # PyTorch passes over a view's own node (and its
        # hooks) here; but what the op saves of the old values is a copy of the view: under create_graph, gradients
        # through it pass the view's node and its hooks (``_joined`` in autograd/function.py)
        old_node.joined_origin = view_node
    old_values = Tensor(t._data.copy())           # the op may save its input: it must not see the write
    old_values._grad_fn, old_values._requires_grad = old_node, old.requires_grad
    value = compute(old_values)
    if value.dtype != t.dtype:
        value = ew.cast(value, t.dtype)
    if value.shape != t.shape:
        value = sh.expand(value, t.shape)
    np.copyto(t._data, value._data)
    index = index if index is not None and repeats_memory(t._data) else None   # only where t's elements share memory:
    if index is not None:                        # elements outside t[index] share its memory; PyTorch wrote t[index]
        t._data[index] = value._data[index]
    bump_tensor(t)
    saved_by = None
    if not any(isinstance(o, Tensor) and storage_of(o._data) is storage_of(value._data) for o in operands):
        alias(value._data, t._data)              # what the op saved of its result is t now (later writes count)
        saved_by = _save_as_the_tensor(value, t)
    if not value.requires_grad:                  # e.g. fill_ of a constant into a tensor with a history
        value = Overwrite.apply(old_values, value) if old_values.requires_grad else value
    _set_history(t, value, index)
    if saved_by is not None and t._base is not None:    # the saved result is the view t: under create_graph,
        saved_by.result_origin = weakref.ref(t._grad_fn)   # gradients through it pass t's new node (and its hooks)
    return t


def _save_as_the_tensor(value, t):
    """An op that saved its result (``tanh_``, ``exp_``, ...) keeps ``t``'s memory instead of its own copy of the
    same values: in PyTorch the result *is* the tensor, so its backward reads what the tensor holds then (a write
    through ``.data``, which autograd does not see, included; any other write makes it raise)."""
    ctx = value.grad_fn
    saved = getattr(ctx, "saved", ())
    if any(item is value._data for item in saved):
        ctx.saved = tuple(t._data if item is value._data else item for item in saved)
        ctx.saved_at = version.writes[0]         # saved after this very write, as the result is made by it
        note_own_counter(ctx, t)                 # t is .data or its view: later writes count on t's own counter
        return ctx
    return None


def _set_history(t, value, index=None):
    """``t``'s history after the write is ``value``'s; a view's base records the write too. A tensor that kept
    its gradient (``retain_grad``) keeps that of its new values. ``index``: for a write through ``t[index]`` into a
    ``t`` whose elements share memory, the base records only ``value[index]`` at ``t[index]``'s positions (what was
    written), as PyTorch does; it can then be differentiated if ``t[index]``'s own elements do not share memory."""
    if t._base is None:
        move_retained(t._grad_fn, value.grad_fn)
        t._grad_fn, t._requires_grad = value.grad_fn, value.requires_grad
        return
    base = t._base
    if index is not None and not sh._is_basic(index):    # index_put_ into an expanded view: the positions it named
        positions = region(base._data, t._data)[index]
        new_base = WriteRegion.apply(history(base), value[index], base._data, positions, overlaps(t._data))
    else:
        written, values = (t._data, value) if index is None else (sh._read(t._data, index), value[index])  # (0-d view)
        new_base = WriteRegion.apply(history(base), values, base._data, region(base._data, written),
                                     overlaps(written))
    move_retained(base._grad_fn, new_base._grad_fn)
    base._grad_fn, base._requires_grad = new_base._grad_fn, new_base._requires_grad
    set_view_history(t)


def _new_values(t, make):
    """Write ``make()`` (an ndarray of ``t``'s shape or a number, not depending on ``t``) into ``t``."""
    def compute(old):
        return Overwrite.apply(old, Tensor(np.asarray(make(), dtype=t.dtype)))
    return write(t, compute, fast=lambda a: a.__setitem__(Ellipsis, cast_limited(np.asarray(make()), a.dtype)),
                 shared_ok=True)


# --------------------------------------------------------------------------- arithmetic
def _numpy_path(fast, *arrays):
    """``fast``, or None when an array has one of PyTorch's limited dtypes (float8, uint16/32/64): in-place arithmetic
    on them takes the out-of-place twin, which refuses what PyTorch refuses ("add_stub" not implemented for
    'Float8_e4m3fn') and computes the rest as PyTorch does (float8 products in float32), where NumPy would compute
    everything."""
    for a in arrays:
        if a.dtype in LIMITED:
            return None
    return fast


def _binary(t, other, name, ufunc, outofplace, alpha=1, true_division=True, kernel=None):
    check_tensor(other, f"{name}_", "other", 1, numbers_ok=True)
    o = other if isinstance(other, Tensor) else ew.as_tensor_operand(other, t)
    if o.shape != t.shape:
        _broadcast_error(t, o)
    dtype = o.dtype if o.dtype == t.dtype else result_type(t._data, o._data)
    if (name == "xlogy" or name == "div" and true_division) and dtype.kind in "biu":   # float results
        dtype = np.dtype(np.float32)
    check_result(t, o.shape, dtype)
    if kernel is not None and kind_of(dtype) not in kernel[1]:      # kernel: its name and the dtype kinds it has
        raise NotImplementedError(f'"{kernel[0]}" not implemented for \'{scalar_type_name(dtype)}\'')
    if name == "sub":
        ew.check_no_bool_sub(t, ew.as_tensor_operand(True) if isinstance(other, bool) else o)
    if name == "pow" and kind_of(t.dtype) == kind_of(o.dtype) == "b" and not isinstance(other, bool):
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    if name in ("add", "sub"):
        ew.check_alpha(alpha, kind_of(dtype))
    if name == "pow" and o.dtype.kind in "iu" and t.dtype.kind in "biu" and np.any(o._data < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")

    def fast(a):
        y = o._data if alpha == 1 else o._data * alpha
        ufunc(a, y, out=a, casting="unsafe")
    return write(t, lambda old: outofplace(old, o), (o,), _numpy_path(fast, t._data, o._data))


def add_(self, other, *, alpha=1):
    if getattr(other, "is_sparse", False):
        return _add_sparse(self, other, alpha)
    return _binary(self, other, "add", np.add, lambda old, o: ew.add(old, o, alpha=alpha), alpha)


def sub_(self, other, *, alpha=1):
    if getattr(other, "is_sparse", False):
        return _add_sparse(self, other, -alpha)
    return _binary(self, other, "sub", np.subtract, lambda old, o: ew.sub(old, o, alpha=alpha), alpha)


def _add_sparse(t, other, alpha):
    """dense += alpha * sparse (a sparse gradient applied to a parameter): when nothing is recorded, each entry is
    added at its position, so only the rows listed are touched; else the dense sum, recorded."""
    from ..sparse.gradients import add_into
    if getattr(t, "is_sparse", False) or not hasattr(other, "_idx"):
        raise NotImplementedError("add_: minigrad adds a sparse COO tensor into a dense one only")
    if tuple(other.shape) != tuple(t.shape):
        raise RuntimeError(f"add_: expected 'self' and 'other' to have same size, but self has size {list(t.shape)} "
                           f"while other has size {list(other.shape)}")
    return write(t, lambda old: ew.add(old, other.to_dense(), alpha=alpha), (other._vals,),
                 lambda array: add_into(array, other, alpha))


def mul_(self, other):
    return _binary(self, other, "mul", np.multiply, ew.mul)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _binary(self, other, "div", np.true_divide, ew.div)
    from .rounded_div import check_rounding_mode, rounded_quotient
    check_rounding_mode(rounding_mode)

    def rounded(a, y, out, casting):
        common = result_type(a, y)
        np.copyto(out, rounded_quotient(a.astype(common, copy=False), y.astype(common, copy=False), rounding_mode),
                  casting=casting)
    return _binary(self, other, "div", rounded, lambda old, o: ew.div(old, o, rounding_mode=rounding_mode),
                   true_division=False, kernel=(f"div_{rounding_mode}_cpu", "biuf"))


def pow_(self, exponent):
    """self **= exponent; a Python number exponent computes as ``x ** number`` does (PyTorch's scalar kernel)."""
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool) and self._data.dtype.kind in "fV":
        def power(a, y, out, casting):
            np.copyto(out, ew.number_power(a, y), casting=casting)
        return _binary(self, exponent, "pow", power, lambda old, o: ew.pow(old, exponent))
    return _binary(self, exponent, "pow", np.power, ew.pow)


def _unary(name, outofplace, ufunc=None, floating=True):
    def op(self):
        if floating and self.dtype.kind != "f":
            check_result(self, self.shape, np.float32)  # PyTorch: the float result can't go into integers
        if self.dtype.kind in "bc":     # the twin's refusals of bool and complex tensors, before anything is written
            with grad_mode.no_grad():
                outofplace(Tensor(np.empty((0,), self.dtype)))
        fast = None if ufunc is None else (lambda a: ufunc(a, out=a))
        return write(self, outofplace, (), _numpy_path(fast, self._data))
    op.__name__ = name
    op.__doc__ = f"In-place ``{name[:-1]}``; returns ``self``."
    return op


neg_ = _unary("neg_", ew.neg, np.negative, floating=False)
exp_ = _unary("exp_", ew.exp, np.exp)
sqrt_ = _unary("sqrt_", ew.sqrt, np.sqrt)
sigmoid_ = _unary("sigmoid_", ew.sigmoid)
tanh_ = _unary("tanh_", ew.tanh, np.tanh)


def _relu_into(a, out):
    """relu of ``a`` written into ``out`` (``a`` itself): 0 where a < 0; NaN and -0.0 stay, as in ``ew.relu``."""
    with np.errstate(invalid="ignore"):
        np.copyto(out, a.dtype.type(0), where=a < 0)
    return out


relu_ = _unary("relu_", ew.relu, _relu_into, floating=False)


def clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    ew.check_clamp_operands(self, min, max)
    bounds = [b for b in (min, max) if b is not None]
    for b in bounds:
        b = ew.as_tensor_operand(b, self)
        _broadcast_error(self, b)
        check_result(self, b.shape, result_type(self._data, b._data))
    if any(isinstance(b, Tensor) for b in bounds):
        return write(self, lambda old: ew.clamp(old, min, max), bounds)
    return write(self, lambda old: ew.clamp(old, min, max), (),
                 _numpy_path(lambda a: np.clip(a, min, max, out=a), self._data))


clip_ = clamp_


def addcmul_(self, tensor1, tensor2, *, value=1):
    """self += value * tensor1 * tensor2"""
    t1, t2 = ew.as_tensor_operand(tensor1, self), ew.as_tensor_operand(tensor2, self)
    check_result(self, np.broadcast_shapes(t1.shape, t2.shape), result_type(t1._data, t2._data))
    from .elementwise_more import in_common_dtype, addcmul_value, check_addcmul_operands   # (it imports this module)
    check_addcmul_operands(self, t1, t2)
    value = addcmul_value(value, self, t1, t2)
    t1, t2 = in_common_dtype(self, t1, t2)
    return write(self, lambda old: ew.add(old, ew.mul(ew.mul(t1, t2), value)), (t1, t2),
                 _numpy_path(lambda a: np.add(a, value * t1._data * t2._data, out=a, casting="unsafe"),
                             self._data, t1._data, t2._data))


def addcdiv_(self, tensor1, tensor2, *, value=1):
    """self += value * tensor1 / tensor2"""
    t1, t2 = ew.as_tensor_operand(tensor1, self), ew.as_tensor_operand(tensor2, self)
    from .elementwise_more import in_common_dtype, check_addcdiv_operands   # (it imports this module)
    check_addcdiv_operands(t1, t2)
    check_result(self, np.broadcast_shapes(t1.shape, t2.shape), result_type(t1._data, t2._data))
    t1, t2 = in_common_dtype(self, t1, t2)
    return write(self, lambda old: ew.add(old, ew.mul(ew.div(t1, t2), value)), (t1, t2),
                 _numpy_path(lambda a: np.add(a, value * t1._data / t2._data, out=a, casting="unsafe"),
                             self._data, t1._data, t2._data))


def lerp_(self, end, weight):
    """self += weight * (end - self), by PyTorch's formula (``lerp_values``)."""
    from .elementwise_more import check_lerp_operands, lerp_values   # (it imports this module)
    check_lerp_operands(self, end, weight)
    e, w = ew.as_tensor_operand(end, self), ew.as_tensor_operand(weight, self)
    check_result(self, np.broadcast_shapes(e.shape, w.shape), result_type(self._data, e._data))
    return write(self, lambda old: lerp_values(old, e, w), (e, w),
                 _numpy_path(lambda a: np.copyto(a, lerp_values(a, e._data, w._data), casting="unsafe"),
                             self._data, e._data, w._data))


# --------------------------------------------------------------------------- overwriting
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast to this shape, cast to this dtype) into this tensor; returns ``self``."""
    if isinstance(src, (bool, int, float, complex, np.number, np.bool_)):
        src = ew.as_tensor_operand(src, self)       # PyTorch accepts a Python number as the source
    elif not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not {type(src).__name__}")
    check_result(self, src.shape, self.dtype)
    return write(self, lambda old: Overwrite.apply(old, src), (src,),
                 lambda a: np.copyto(a, cast_limited(src._data, a.dtype), casting="unsafe"))


def fill_(self, value):
    """Every element becomes ``value`` (a number or a 0-d tensor, which may require grad)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        return write(self, lambda old: Overwrite.apply(old, value), (value,),
                     lambda a: a.__setitem__(Ellipsis, cast_limited(value._data, a.dtype)), shared_ok=True,
                     overlap=None)
    fitted = fitted_scalar(value, self.dtype, filling=self._data.size)   # -5 wraps into uint8, 300 is refused
    return _new_values(self, lambda: fitted)


def zero_(self):
    return _new_values(self, lambda: 0)


def masked_fill_(self, mask, value):
    mask = ew.as_tensor_operand(mask)
    if mask.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    try:
        fits = tuple(np.broadcast_shapes(self.shape, mask.shape)) == self.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"The size of the mask {list(mask.shape)} must be broadcastable to the size of the "
                           f"input {list(self.shape)}")
    v = ew.as_tensor_operand(value, self)
    if v.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{v.ndim} dimension(s).")
    check_kernel("masked_fill", self)

    def fast(a):
        np.copyto(a, v._data, where=mask._data, casting="unsafe")
    warn_expanded_index_put(self._data, "masked_fill_")
    where = np.broadcast_to(mask._data, self.shape)      # written last where self's elements share memory
    return write(self, lambda old: ew.masked_fill(old, mask, v), (v,), fast, overlap=None, shared_ok=True,
                 index=where)


def setitem(self, index, value):
    """``self[index] = value``: basic slices, integer arrays and masks, differentiable in self and value."""
    index = sh.to_numpy_index(index)
    if sh._is_basic(index) and self._base is not None and grad_mode._state.enabled and not _whole(self, index):
        self.grad_fn     # PyTorch writes through a view of self[index], whose making brings a stale self up to date
    if not isinstance(value, Tensor) or not sh._is_basic(index):   # (a 0-d tensor copied into a basic index casts)
        ew.check_value_fits(value, self.dtype, converting=True)
    v = ew.as_tensor_operand(value, self)
    target = sh._read(self._data, index)   # raises IndexError for a bad index before anything is written
    given_shape, value_shape = tuple(v.shape), _without_leading_ones(v.shape)
    if given_shape != value_shape and (given_shape != target.shape or not sh._is_basic(index)):
        v = v.reshape(value_shape)         # PyTorch writes the value with its leading 1s dropped: [5.] into x[0]
        # (through a basic index, a value of the region's own shape is copied as it is: its overlap checked as given)
    if isinstance(value, Tensor) and v.dtype != self.dtype and not sh._is_basic(index) and \
            not _fills_by_mask(index, v):
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(self.dtype)} for the destination and {scalar_type_name(v.dtype)} for "
                           f"the source.")
    try:                 # (a 0-d value fits any region)
        fits = not value_shape or len(value_shape) <= target.ndim and \
            np.broadcast_shapes(target.shape, value_shape) == target.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to "
                           f"indexing result of shape {list(target.shape)}")
    if v.is_complex() and not self.is_complex() and not v.requires_grad:   # a fitting complex value, read silently
        v = Tensor(real_values(v._data, self.dtype))

    def fast(a):
        a[index] = cast_limited(v._data, a.dtype)     # PyTorch's rounding (a float64 value into float16 ...)
    if sh._is_basic(index):     # PyTorch copies into the view self[index]: compared with that view's memory;
        # a value given 0-d fills it (PyTorch's fill_, which reads the value first: it may lie in the written memory).
        # Its backward (CopySlices) first copies the gradient into self's layout: refused if self's own elements
        # share memory (an expanded tensor that is no view, as detach() makes)
        shared = self._base is None and overlaps(self._data)
        write(self, lambda old: IndexPut.apply(old, v, index, shared), (v,), fast, written=target, index=index,
              overlap=None if not given_shape and target.ndim or _expands(given_shape, target.shape) else "partial")
    else:                       # index_put_ refuses any overlap with self, and writes an expanded self with a warning
        check_kernel("masked_fill" if _fills_by_mask(index, v) else "index_put", self)
        warn_expanded_index_put(self._data)
        write(self, lambda old: IndexPut.apply(old, v, index), (v,), fast, overlap="any", shared_ok=True)


def _fills_by_mask(index, value):
    """Whether PyTorch writes ``value`` through ``index`` with masked_fill_ (which casts it): a 0-d value (its leading
    1s dropped) through an index whose only advanced part is one boolean mask of at least one dim (integers and
    slices beside it are applied first). Every other advanced index goes through index_put_, which requires the
    value's dtype to be the tensor's."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    return value.ndim == 0 and len(arrays) == 1 and arrays[0].dtype == np.bool_ and arrays[0].ndim >= 1


def _without_leading_ones(shape):
    """A value's shape as PyTorch matches it to the indexed region's: its leading 1s dropped."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _expands(value_shape, target_shape):
    """Whether writing a value of ``value_shape`` into ``target_shape`` repeats it along a dim of size > 1: PyTorch then
    copies from the value expanded (its leading 1s dropped first), which is not dense, and checks no overlap."""
    shape = list(_without_leading_ones(value_shape))
    shape = [1] * (len(target_shape) - len(shape)) + shape
    return any(n == 1 and m > 1 for n, m in zip(shape, target_shape))


def _whole(t, index):
    """Whether a basic ``index`` takes all of ``t`` with full slices and Ellipsis only: PyTorch then writes into
    ``t`` itself, making no view (and so leaves a stale view's history as it is)."""
    parts = index if isinstance(index, tuple) else (index,)
    if not all(p is Ellipsis or isinstance(p, slice) for p in parts) or len(parts) - (Ellipsis in parts) > t.ndim:
        return False
    if Ellipsis in parts:                       # the slices after it take the last dims
        at = parts.index(Ellipsis)
        before, after = parts[:at], parts[at + 1:]
        pairs = list(zip(before, t.shape)) + list(zip(after, t.shape[t.ndim - len(after):]))
    else:
        pairs = list(zip(parts, t.shape))
    return all(p.start in (None, 0) and p.step in (None, 1) and (p.stop is None or p.stop >= size)
               for p, size in pairs)


class IndexPut(Function):
    """out = a with ``out[index] = value``. Backward: ``a`` keeps its gradient outside the written
    positions; ``value`` receives the gradient at them (summed back to its shape by the engine)."""

    @staticmethod
    def forward(ctx, a, value, index, shared=False):
        ctx.index, ctx.value_ndim, ctx.shared = index, value.ndim, shared
        sh.save_index_arrays(ctx, index)
        out = a._data.copy()
        out[index] = cast_limited(value._data, out.dtype)
        return out

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors  # raises if an index array was written in place since the forward
        refuse_shared_base(ctx.shared)
        g = dout._data
        da = None
        if ctx.needs_input_grad[0]:
            da = g.copy()
            da[ctx.index] = 0
        dvalue = _value_grad(g[ctx.index], ctx.value_ndim) if ctx.needs_input_grad[1] else None
        return (da, dvalue) + (None,) * (len(ctx.needs_input_grad) - 2)     # (index, shared: passed or not)

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        refuse_shared_base(ctx.shared)
        da = None
        if ctx.needs_input_grad[0]:     # a write of all of a is PyTorch's fill_/copy_ of a itself: zeros, no graph
            da = Tensor(np.zeros_like(dout._data)) if _whole(dout, ctx.index) else zero_at(dout, ctx.index)
        dvalue = _value_grad(sh.Index.apply(dout, ctx.index), ctx.value_ndim) if ctx.needs_input_grad[1] else None
        return (da, dvalue) + (None,) * (len(ctx.needs_input_grad) - 2)


def zero_at(g, index):
    """``g`` (a Tensor) with the positions ``index`` set to zero, as a differentiable op (``IndexPut``)."""
    return IndexPut.apply(g, Tensor(np.zeros((), g.dtype)), index)


def _value_grad(picked, value_ndim):
    """The gradient of the value written by ``IndexPut``: ``picked`` (dout at the index, an ndarray or a
    Tensor), with the leading 1s NumPy allowed the value to have; the engine sums it to the value's shape."""
    if picked.ndim < value_ndim:
        picked = picked.reshape((1,) * (value_ndim - picked.ndim) + tuple(picked.shape))
    return picked


# --------------------------------------------------------------------------- scatter family
def _scatter_positions(index, dim):
    """The full index tuple that puts element ``i`` of ``index`` at ``index[i]`` along ``dim`` (a 0-d index
    into a 0-d tensor: the tensor's one element, ``()``)."""
    if index.ndim == 0:
        return ()
    positions = list(np.indices(index.shape, sparse=True))
    positions[dim] = index
    return tuple(positions)


def _src_part(src, index):
    """The part of ``src`` that ``index`` uses (``src`` may be larger than ``index``), as in PyTorch."""
    return src[_corner(index.shape)]


class Scatter(Function):
    """out = a with ``out[..., index[i], ...] = src[i]`` along ``dim`` (``add``: ``+=``, repeats summed).

    Backward: ``src`` receives the gradient gathered at the positions; ``a`` all of it (``add``) or all
    but the overwritten positions."""

    @staticmethod
    def forward(ctx, a, src, dim, index, add):
        positions = _scatter_positions(index, dim)
        ctx.positions, ctx.src_shape, ctx.add = positions, src.shape, add
        ctx.save_for_backward(index)
        out = a._data.copy()
        part = _src_part(src._data, index).astype(out.dtype, copy=False)
        if add:
            np.add.at(out, positions, part)
        else:
            out[positions] = part
        return out

    @staticmethod
    def backward(ctx, dout):
        ctx.saved_tensors
        g = dout._data
        da = None
        if ctx.needs_input_grad[0]:
            da = g if ctx.add else g.copy()
            if not ctx.add:
                da[ctx.positions] = 0
        dsrc = None
        if ctx.needs_input_grad[1]:
            picked = g[ctx.positions]                                       # index's shape
            dsrc = sh.index_adjoint(picked, ctx.src_shape, _corner(picked.shape))
        return da, dsrc, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        ctx.saved_tensors
        da = None
        if ctx.needs_input_grad[0]:
            da = dout if ctx.add else zero_at(dout, ctx.positions)
        dsrc = None
        if ctx.needs_input_grad[1]:
            picked = sh.Index.apply(dout, ctx.positions)                    # index's shape
            dsrc = picked
            if picked.shape != ctx.src_shape:                               # src larger than index: zero-padded
                dsrc = sh.IndexAdjoint.apply(picked, ctx.src_shape, _corner(picked.shape))
        return da, dsrc, None, None, None


def _corner(shape):
    """The index of the leading block of ``shape`` in a larger array."""
    return tuple(slice(0, n) for n in shape)


def _check_scatter(self, dim, index, src, name):
    from .dims import normalize_dim
    if not isinstance(index, Tensor) or index.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")   # PyTorch names scatter for all
    if src is not None and src.dtype != self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype, but got {self.dtype} and "
                           f"{src.dtype}")
    d = normalize_dim(dim, max(self.ndim, 1))
    if index.ndim != self.ndim or (src is not None and src.ndim != index.ndim):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for i, n in enumerate(index.shape):
        if (i != d and n > self.shape[i]) or (src is not None and n > src.shape[i]):
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} to be "
                               f"smaller than self {list(self.shape)} apart from dimension {d} and to be smaller "
                               f"size than src {list(src.shape if src is not None else self.shape)}")
    size = self.shape[d] if self.ndim else 1      # a 0-d tensor has one position
    if index.numel() and (index._data.min() < -size or index._data.max() >= size):
        raise RuntimeError(f"index {int(index._data.max())} is out of bounds for dimension {d} with size {size}")
    return d


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """``self[..., index[i], ...] = src[i]`` along ``dim`` (or ``value`` everywhere ``index`` points)."""
    if src is None and value is None:
        raise TypeError("scatter_() missing required argument 'src' or 'value'")
    number = not isinstance(src, Tensor)
    if number:
        check_kernel("scatter_value", self)      # (before the value, as PyTorch refuses these dtypes first)
        src = Tensor(np.full(index.shape, fitted_scalar(src if value is None else value, self._data.dtype)))
    if reduce is not None:   # deprecated in PyTorch, still sampled by its op database
        from .scatter_reduce import scatter_legacy_reduce
        return write(self, lambda old: scatter_legacy_reduce(old, dim, index, src, reduce), (src,))
    d = _check_scatter(self, dim, index, src, "scatter")
    if not number:
        check_kernel("scatter", self)
    return _scatter(self, d, index, src, add=False)


def scatter_add_(self, dim, index, src):
    """``self[..., index[i], ...] += src[i]`` along ``dim``; repeated positions accumulate."""
    d = _check_scatter(self, dim, index, src, "scatter_add")
    check_kernel("scatter", self)
    return _scatter(self, d, index, src, add=True)


def _scatter(self, d, index, src, add):
    if self.ndim == 0:    # a 0-d scatter writes the one element: scatter into the 1-element view
        def compute(old):
            return sh.reshape(Scatter.apply(sh.reshape(old, 1), sh.reshape(src, 1), 0, index._data.reshape(1), add), ())
        return write(self, compute, (src,))
    positions = _scatter_positions(index._data, d)

    def fast(a):
        part = _src_part(src._data, index._data).astype(a.dtype, copy=False)
        if add:
            np.add.at(a, positions, part)
        else:
            a[positions] = part
    return write(self, lambda old: Scatter.apply(old, src, d, index._data, add), (src,), fast)


class IndexAdd(Function):
    """out = a with ``alpha * source`` added at ``index`` along ``dim``. Backward: ``a`` gets the gradient
    as is; ``source`` gets ``alpha`` times the gradient's slices at ``index`` (``index_select``)."""

    @staticmethod
    def forward(ctx, a, source, dim, index, alpha):
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index)
        out = a._data.copy()
        _index_add_into(out, dim, index, source._data, alpha)
        return out

    @staticmethod
    def backward(ctx, dout):
        (index,) = ctx.saved_tensors
        g = dout._data.reshape(1) if dout.ndim == 0 else dout._data     # a 0-d tensor: its one position
        dsource = ctx.alpha * np.take(g, index, axis=ctx.dim) if ctx.needs_input_grad[1] else None
        return dout, dsource, None, None, None

    @staticmethod
    def graph_backward(ctx, dout):
        from .index import IndexSelect   # index.py imports this module
        (index,) = ctx.saved_tensors
        g = dout.reshape(1) if dout.ndim == 0 else dout
        dsource = ctx.alpha * IndexSelect.apply(g, ctx.dim, index) if ctx.needs_input_grad[1] else None
        return dout, dsource, None, None, None


def _index_add_into(a, dim, index, source, alpha):
    if a.ndim == 0:                                                   # a 0-d tensor: a view of its one position
        a, source = a.reshape(1), source.reshape(1)
    moved = np.moveaxis(a, dim, 0)                                    # (n, ...) view of a
    alpha = np.asarray(alpha).astype(a.dtype)                         # uint8 and alpha=-1: wraps, as in PyTorch
    np.add.at(moved, index, np.moveaxis(source, dim, 0).astype(a.dtype, copy=False) * alpha)


def index_add_(self, dim, index, source, *, alpha=1):
    """``self`` with ``alpha * source[i]`` added to slice ``index[i]`` along ``dim``; repeats accumulate."""
    from .dims import normalize_dim
    d = normalize_dim(dim, max(self.ndim, 1))
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {scalar_type_name(index.dtype)}")
    sizes = self.shape or (1,)                                        # a 0-d tensor: one position
    expected = sizes[:d] + (index.numel(),) + sizes[d + 1:]
    if source.shape != expected and not (self.ndim == 0 and source.ndim == 0 and index.numel() == 1):
        raise RuntimeError(f"index_add_(): Source/destination tensor must have same slice shapes. Destination "
                           f"slice shape: {list(self.shape)} at dimension {d} and source slice shape: "
                           f"{list(source.shape)} at dimension 0.")
    idx = index._data.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= sizes[d]):
        raise IndexError("index out of range in self")
    check_kernel("index_add", self)
    return write(self, lambda old: IndexAdd.apply(old, source, d, idx, alpha), (source,),
                 lambda a: _index_add_into(a, d, idx, source._data, alpha))


# --------------------------------------------------------------------------- random fills
# PyTorch's kernels of the random fills: the name its error gives, the dtype kinds it fills, and whether it refuses
# an empty tensor of another dtype too (the others are only looked up for elements to fill)
_FILL_KERNELS = {"uniform": ("check_uniform_bounds", "fc", True), "normal": ("normal_kernel_cpu", "fc", False),
                 "exponential": ("exponential_cpu", "f", False), "cauchy": ("cauchy_cpu", "f", False),
                 "geometric": ("geometric_cpu", "iuf", False), "log_normal": ("log_normal_cpu", "f", False),
                 "random": ("random_kernel_cpu", "biuf", False), "bernoulli": ("bernoulli_scalar_cpu_", "biuf", False)}


def check_fill_dtype(self, fill):
    """PyTorch's refusal of the random fill ``fill`` ("cauchy") into a dtype its kernel does not fill, with its
    exception type and message. Called after the fill's own argument checks, as PyTorch checks them first."""
    kernel, kinds, always = _FILL_KERNELS[fill]
    dtype = self._data.dtype
    if dtype not in LIMITED and kind_of(dtype) in kinds:
        return
    continuous = fill in ("cauchy", "exponential") and dtype not in FLOAT8      # (uint16/32/64 included)
    if continuous and (fill == "cauchy" or self._data.size):     # (cauchy_ checks before looking at the elements)
        shown = c_name(dtype) if fill == "cauchy" else scalar_type_name(dtype)
        raise RuntimeError(f"{fill.capitalize()} distribution is a continuous probability distribution. dtype must be "
                           f"a floating point but you specified {shown}")
    if always or self._data.size:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def fill_values(self, draw, generator=None):
    """Values for ``self`` drawn as PyTorch fills it (``random.sample_values``: memory order, a complex tensor's parts
    interleaved): ``draw(stream, n, real_dtype)`` gives n of them from PyTorch's stream (``_pytorch_stream``)."""
    from ..random import element_strides, sample_values, torch_stream
    gen = torch_stream(generator)
    return sample_values(self.shape, self._data.dtype, lambda n, real: draw(gen, n, real), element_strides(self._data))


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    check_fill_dtype(self, "uniform")
    return _new_values(self, lambda: fill_values(self, lambda gen, n, real: uniform(gen, n, real, a, b), generator))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with N(mean, std^2) draws; a complex tensor's parts each get half the variance (std / sqrt(2)), as
    PyTorch's."""
    from ..random import check_std, element_strides, normal_values, torch_stream
    check_std(std)
    check_fill_dtype(self, "normal")
    return _new_values(self, lambda: normal_values(torch_stream(generator), self.shape, self._data.dtype, mean, std,
                                                   element_strides(self._data)))


def bernoulli_(self, p=0.5, *, generator=None):
    prob = p._data if isinstance(p, Tensor) else p
    if isinstance(p, Tensor):          # (a tensor of probabilities goes through another kernel: one per element)
        from ..random import bernoulli_values, check_probability_range, element_strides, torch_stream
        check_probability_range(prob)
        return _new_values(self, lambda: bernoulli_values(torch_stream(generator), np.broadcast_to(prob, self.shape),
                                                          element_strides(self._data)))
    from ..random import check_probability
    check_probability(p)
    check_fill_dtype(self, "bernoulli")
    return _new_values(self, lambda: fill_values(self, lambda gen, n, _: bernoulli_scalar(gen, n, p), generator))


def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={float(lambd):g}")
    check_fill_dtype(self, "exponential")
    return _new_values(self, lambda: fill_values(self, lambda gen, n, real: exponential(gen, n, lambd).astype(real),
                                                 generator))


METHODS = ["add_", "sub_", "mul_", "div_", "pow_", "neg_", "exp_", "sqrt_", "sigmoid_", "tanh_", "relu_", "clamp_",
           "clip_", "addcmul_", "addcdiv_", "lerp_", "copy_", "fill_", "zero_", "masked_fill_", "scatter_",
           "scatter_add_", "index_add_", "uniform_", "normal_", "bernoulli_", "exponential_", "clone"]
