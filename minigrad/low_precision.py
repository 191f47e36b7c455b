"""float16 and bfloat16 computed as PyTorch's CPU kernels compute them: in float32, rounded once.

A 16-bit tensor stores 16-bit values, but PyTorch's CPU kernels do not compute in 16 bits: each kernel
reads its bfloat16 or float16 inputs as float32 (exact), computes in float32 (sums and products
accumulate there too) and rounds its result to the 16-bit dtype once. minigrad does the same in one
place rather than in every op: every ``Function`` of minigrad is wrapped here so that, when its result
dtype (PyTorch's promotion of its tensor arguments) is float16 or bfloat16,

* its forward sees float32 copies of its 16-bit tensor arguments and its float32 result is rounded
  to the 16-bit dtype (``dtypes.cast_array``: to nearest, ties to even);
* its backward sees the upstream gradient as float32, and the engine rounds each input's gradient to
  that input's dtype (``engine.fit_gradient``), so gradients are 16-bit too, rounded once.

A Python number next to a 16-bit tensor in ``*`` and ``/`` stays a float32 number (PyTorch's "opmath"
scalar): ``x * 0.1`` multiplies by float32(0.1), not by 0.1 rounded to bfloat16 (``arithmetic_operand``).
``+``, ``-`` and comparisons round the number to the tensor's dtype first, as PyTorch does.

A Function that handles 16-bit inputs itself (casts, the norms, whose parameters may be float32 next to
a bfloat16 input) sets ``low_precision_native = True``. Ops that only move values (views, copies, indexing:
``moves_values``) run their forward on the 16-bit arrays as they are (bits kept, NaN payloads too, and no
copy of a large tensor to read a slice), but their backward, which may sum gradients (expand, repeated
indices), still runs in float32. Functions defined outside minigrad are not wrapped: PyTorch hands a
custom ``autograd.Function`` its tensors as they are.

Where PyTorch rounds at more points than this (a composite op whose parts each round), results may differ
in the last bit: ``tests/test_low_precision.py`` states per op whether it matches bit for bit or within
one unit in the last place.
"""
import functools
import weakref

import numpy as np

from . import limited_dtypes
from .autograd import function as _function
from .autograd.function import Function
from .dtypes import FLOAT8, LOW_PRECISION, cast_array, float32, result_type_of, scalar_type_name
from .tensor import Tensor

_LOW_CHARS = frozenset(d.char for d in LOW_PRECISION)   # 'e' (float16), 'E' (bfloat16): a fast test
_wrapped_numbers = weakref.WeakSet()   # float32 tensors holding a Python number next to a 16-bit tensor


def arithmetic_operand(value, like):
    """A Python number ``value`` next to the 16-bit tensor ``like`` in ``*`` or ``/``: a 0-dim float32 tensor,
    marked as a wrapped number so that it does not widen the result (which keeps ``like``'s dtype). None if
    ``value`` is not such a number."""
    if like._data.dtype.char not in _LOW_CHARS or type(value) not in (int, float):
        if like._data.dtype in FLOAT8 and type(value) in (int, float):   # PyTorch has no such float8 kernel
            raise NotImplementedError(f'"mul_cpu_reduced_float" not implemented for '
                                      f'\'{scalar_type_name(like._data.dtype)}\'')
        return None
    number = Tensor(np.asarray(value, dtype=float32))
    _wrapped_numbers.add(number)
    return number


def _target_dtype(args, kwargs):
    """The 16-bit dtype an op's result takes, or None: PyTorch's promotion of its tensor arguments (not counting
    wrapped numbers), if it is 16-bit."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and a not in _wrapped_numbers]
    dtype = result_type_of(*tensors) if tensors else None
    return dtype if dtype in LOW_PRECISION else None


def _upcast(value):
    if isinstance(value, Tensor) and value._data.dtype.char in _LOW_CHARS:
        return Tensor(value._data.astype(float32))
    return value


def _round_result(ctx, out, dtype):
    """The forward's float32 result rounded to ``dtype``. Where the forward saved its result for backward
    (tanh, exp, softmax, ...), the rounded values are saved instead: PyTorch's backward reads the 16-bit result."""
    array = out._data if isinstance(out, Tensor) else out
    if not isinstance(array, (np.ndarray, np.generic)) or array.dtype != float32:   # np.float32 of a full sum too
        return out
    result = cast_array(np.asarray(array), dtype)
    if any(s is array for s in ctx.saved):
        ctx.saved = tuple(result.astype(float32) if s is array else s for s in ctx.saved)
        ctx.watch(result)       # PyTorch's saved result is the 16-bit output itself: a write into it is refused
    for key, value in list(ctx.__dict__.items()):
        if value is array:
            ctx.__dict__[key] = result.astype(float32)
    return result


def _watch_originals(ctx, operands, upcast):
    """Where the forward saved the float32 copy of a 16-bit operand, a write into the operand itself makes backward
    refuse, as PyTorch's (which saves the 16-bit tensor) does (``Context.watch``)."""
    saved = {id(s._data if isinstance(s, Tensor) else s) for s in ctx.saved}
    for original, copy in zip(operands, upcast):
        if copy is not original and id(copy._data) in saved:
            ctx.watch(original._data)


def _wrap_forward(forward, lead):
    """``forward`` (its first ``lead`` arguments are ``cls`` for a classmethod, and ``ctx``) run on float32
    copies of its 16-bit arguments when the op's result is 16-bit, its float32 result rounded once."""
    @functools.wraps(forward)
    def low_precision_forward(*args, **kwargs):
        for a in args:    # (Function.apply calls the plain forward unless an argument is 2 bytes wide)
            if isinstance(a, Tensor) and a._data.itemsize == 2 and a._data.dtype.char in _LOW_CHARS:
                break
        else:
            return forward(*args, **kwargs)
        operands = args[lead:]
        dtype = _target_dtype(operands, kwargs)
        if dtype is None:
            return forward(*args, **kwargs)
        ctx = args[lead - 1]
        ctx.low_precision = dtype                # ctx: its backward upcasts the gradient
        upcast = [_upcast(a) for a in operands]
        out = forward(*args[:lead], *upcast, **{k: _upcast(v) for k, v in kwargs.items()})
        _watch_originals(ctx, operands, upcast)
        return _round_result(ctx, out, dtype)
    return _with_plain(low_precision_forward, forward, lead)


def _with_plain(wrapper, method, lead):
    """``wrapper``, a static method's wrapper marked with the ``method`` it wraps: ``Function.apply`` calls a
    forward directly when no argument is a 16-bit tensor, the engine a backward when its ctx is not marked
    ``low_precision`` (either saves the wrapper's own test, a tenth of a small op's time)."""
    if lead == 1:
        wrapper._minigrad_plain = method
    return wrapper


def _mark_forward(forward, lead):
    """``forward`` as it is, its ctx marked when a 16-bit tensor goes in: its backward then runs in float32."""
    @functools.wraps(forward)
    def marked_forward(*args, **kwargs):
        for a in args:
            if isinstance(a, Tensor) and a._data.itemsize == 2 and a._data.dtype.char in _LOW_CHARS:
                args[lead - 1].low_precision = a._data.dtype
                break
        return forward(*args, **kwargs)
    return _with_plain(marked_forward, forward, lead)


def _wrap_backward(backward, lead, graph):
    """The backward (``graph=False``: dout's array is read) or graph_backward (dout is a Tensor in a graph,
    cast by a differentiable ``.float()``) of a wrapped Function, fed the upstream gradient in float32."""
    @functools.wraps(backward)
    def low_precision_backward(*args):
        ctx, dout = args[lead - 1], args[lead]
        if ctx.low_precision is not None and isinstance(dout, Tensor) and dout._data.dtype.char in _LOW_CHARS:
            dout = dout.float() if graph else Tensor(dout._data.astype(float32))
            args = (*args[:lead], dout, *args[lead + 1:])
        return backward(*args)
    return _with_plain(low_precision_backward, backward, lead)


def _rewrap(cls, name, wrap):
    """Replace ``cls.<name>`` (defined in the class itself) by its wrapped form, kept a static or class method."""
    raw = cls.__dict__.get(name)
    if isinstance(raw, staticmethod):
        setattr(cls, name, staticmethod(wrap(raw.__func__, 1)))
    elif isinstance(raw, classmethod):
        setattr(cls, name, classmethod(wrap(raw.__func__, 2)))


def moves_values(cls):
    """Whether ``cls`` is one of the ops whose forward only moves values (reshapes, copies, gathers, cats)."""
    return f"{cls.__module__}.{cls.__name__}" in _MOVES_VALUES


_MOVES_VALUES = {f"minigrad.ops.{name}" for name in (
    "shape.Reshape", "shape.Permute", "shape.Expand", "shape.Index", "shape.Repeat", "shape.Cat", "shape.Roll",
    "shape.Flip", "shape.Diagonal", "shape.DiagEmbed", "shape.Unfold", "layout.Relayout", "index.Gather",
    "index.IndexSelect", "index.MaskedSelect")}


_NATIVE_PACKAGE = "minigrad.ops.norm."   # the norms cast to their compute dtype themselves (mixed parameter dtypes)


def install(cls):
    """Wrap ``cls``'s own forward/backward/graph_backward (those it inherits are wrapped in its base)."""
    if not _function.is_ours(cls) or cls.__dict__.get("_low_precision_wrapped"):
        return
    cls._low_precision_wrapped = True
    if not (getattr(cls, "low_precision_native", False) or cls.__module__.startswith(_NATIVE_PACKAGE)):
        _rewrap(cls, "forward", _mark_forward if getattr(cls, "view", False) or moves_values(cls) else _wrap_forward)
        _rewrap(cls, "backward", lambda f, lead: _wrap_backward(f, lead, graph=False))
        _rewrap(cls, "graph_backward", lambda f, lead: _wrap_backward(f, lead, graph=True))
    limited_dtypes.gate(cls)      # outermost: PyTorch's refusals on uint16/32/64 and float8 (limited_dtypes.py)


def _install_everywhere():
    """Wrap every Function of minigrad defined so far, and each one defined later (``__init_subclass__``)."""
    pending = [Function]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls is not Function:
            install(cls)
    previous = Function.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if previous is not None:
            previous.__func__(cls, **kwargs)
        install(cls)

    Function.__init_subclass__ = classmethod(__init_subclass__)


_install_everywhere()
_function.limited_call = limited_dtypes.gated_call     # classmethod forwards: Function.apply
