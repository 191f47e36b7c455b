"""``out=``: PyTorch's functions write their result into a given tensor and return it (``torch.add(a, b, out=c)``).

``install`` wraps the public functions of the ``minigrad``, ``linalg``, ``special``, ``fft`` and ``nn.functional``
namespaces (the Tensor methods, which take no ``out``, keep the functions themselves). A call without ``out`` goes
straight through; with it, PyTorch's contract:

* no gradients: with grad mode on, an argument or ``out`` that requires grad is refused (RuntimeError);
* ``out`` may not share memory with an input, except that an elementwise op may write into an operand itself
  (``torch.exp(x, out=x)``), as PyTorch's elementwise kernels allow;
* the result is computed as without ``out``, then written into ``out``'s own memory (a view writes through to its
  base). PyTorch's elementwise ops, means, ``cat`` and ``stack`` cast it to ``out``'s dtype (not a float into an
  integer, a complex number into a real); ``sum``, ``prod``, ``cumsum`` and ``cumprod`` compute in ``out``'s dtype;
  its one-dtype elementwise ops (``neg``, ``abs``, ``floor``, ``sign``, ...), ``clamp`` and ``where`` and its other
  ops want ``out`` in the result's dtype exactly, each checked where PyTorch checks it (before or after looking for
  the op's kernel); a factory (``zeros``, ``arange``, ``randn``) makes its result in ``out``'s dtype;
* an ``out`` of another shape is resized to the result's, with PyTorch's deprecation warning unless it was empty;
* functions with several results (``max(x, dim)``, ``linalg.slogdet``, ``sort``) take a tuple of tensors, one per
  result, and return them as the function's named tuple.
"""
import functools
import inspect
import types
import warnings

import numpy as np

from . import autograd
from .autograd import grad_mode
from ._numpy_names import renamed, wants_numpy_names
from .dtypes import can_cast, kind_of, result_type_of, scalar_type_name
from .tensor import Tensor

# the modules whose functions compute tensors (the others, save or manual_seed, take no ``out``)
_MODULES = ("minigrad.ops", "minigrad.linalg", "minigrad.special", "minigrad.fft", "minigrad.creation",
            "minigrad.random", "minigrad.low_precision", "minigrad.masked")
# the elementwise ops' modules: their results are cast into ``out``, which may be an operand itself
_ELEMENTWISE = ("minigrad.ops.elementwise", "minigrad.ops.elementwise_more", "minigrad.ops.trig",
                "minigrad.ops.pointwise", "minigrad.ops.floats", "minigrad.ops.division", "minigrad.ops.bitwise",
                "minigrad.ops.special", "minigrad.special")
# other ops whose results PyTorch casts into ``out`` (its reductions by TensorIterator, its concatenations)
_CASTING = {"sum", "nansum", "mean", "nanmean", "prod", "std", "var", "logsumexp", "cumsum", "cumprod", "cat", "concat",
            "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack", "outer", "ger"}
# PyTorch's ops whose ``out`` must have their input's dtype exactly ("Found dtype Float but expected Long"), checked
# before anything is computed; and the other such checks, each with PyTorch's message (``_check_out_first``)
_SAME_DTYPE = {"abs", "absolute", "bitwise_not", "ceil", "fix", "floor", "frac", "neg", "negative", "round", "sgn",
               "sign", "trunc"}
_SAME_AS_RESULT = {"clamp", "clip"}   # (its result's dtype: a bool clamped to int bounds is int64)
_REFUSE_COMPLEX_FIRST = {"floor", "ceil", "trunc", "fix", "sign"}   # (their refusal of complex input comes first)
_BOOL_OUT = {"signbit", "isposinf", "isneginf"}
# reductions PyTorch computes in ``out``'s dtype (the input converted first), as with ``dtype=``
_IN_OUT_DTYPE = {"sum", "prod", "cumsum", "cumprod"}
_BOOL_RESULTS = {"eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal", "not_equal",
                 "logical_and", "logical_or", "logical_xor", "isclose", "isin"}
_CONCATENATIONS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"}
_FACTORIES = ("minigrad.creation", "minigrad.random")
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


_WRAPPERS = {}   # function -> its wrapper: one function in several namespaces stays one object (mg.conv1d is F.conv1d)


def install(namespace):
    """Wrap every public tensor function of the dict ``namespace`` (a module's ``globals()`` or ``vars()``)."""
    for name, fn in list(namespace.items()):
        if not name.startswith("__") and _wrappable(fn):
            if fn not in _WRAPPERS:
                _WRAPPERS[fn] = accepts_out(fn)
            namespace[name] = _WRAPPERS[fn]


def _wrappable(fn):
    inner = getattr(fn, "__wrapped__", fn)
    return (isinstance(fn, types.FunctionType) and not getattr(fn, "takes_out", False)
            and getattr(inner, "__module__", "").startswith(_MODULES))


def accepts_out(fn):
    """``fn`` taking PyTorch's keyword ``out`` (module docstring)."""
    inner = inspect.unwrap(fn)
    module, parameters = inner.__module__, inspect.signature(inner).parameters
    aliases = wants_numpy_names(inner)     # axis= for dim=, keepdims= for keepdim= (_numpy_names.py)

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if aliases and kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            kwargs = renamed(fn, kwargs)
        if out is None:
            return fn(*args, **kwargs)
        name = fn.__name__
        outs, inputs = _checked_outs(name, out), _tensors(args, kwargs)
        if grad_mode.is_grad_enabled() and any(t.requires_grad for t in inputs + outs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        _check_overlap(outs, inputs, module.startswith(_ELEMENTWISE))
        factory = module.startswith(_FACTORIES) and "dtype" in parameters and not inputs
        if factory and kwargs.get("dtype") is None:
            kwargs["dtype"] = outs[0].dtype                            # a factory makes out's dtype
        _check_out_first(name, outs[0], inputs)
        if name in _IN_OUT_DTYPE and kwargs.get("dtype") is None and inputs and outs[0].dtype != inputs[0].dtype:
            kwargs["dtype"] = outs[0].dtype                            # sum(x, out=o): computed in o's dtype
        casting = module.startswith(_ELEMENTWISE) or name in _CASTING or factory
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError:    # PyTorch checks out's dtype before looking for the op's kernel
            _check_out_before_kernel(name, outs[0], inputs, casting)
            raise
        results = list(result) if isinstance(result, tuple) else [result]
        if not all(isinstance(r, Tensor) for r in results):
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        if len(results) != len(outs) or isinstance(result, tuple) != isinstance(out, (tuple, list)):
            expected = f"a tuple of {len(results)} Tensors" if isinstance(result, tuple) else "Tensor"
            raise TypeError(f"{name}(): argument 'out' must be {expected}, got {_described(out)}")
        _check_out_after(name, results, outs)
        if name in _IN_OUT_DTYPE and kind_of(outs[0].dtype) == "b" and kind_of(results[0].dtype) != "b":
            results = [results[0] != 0]                 # a sum or product into bool: any / all of the inputs
        for r, o in zip(results, outs):
            _check_dtype(r, o, casting, name)
        for r, o in zip(results, outs):
            _write(r, o)
        return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs) if isinstance(result, tuple) \
            else outs[0]
    wrapper.takes_out = True
    wrapper.numpy_names = aliases
    return wrapper


def _checked_outs(name, out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs or not all(isinstance(o, Tensor) for o in outs):
        raise TypeError(f"{name}(): argument 'out' must be Tensor or a tuple of Tensors, not {_described(out)}")
    return outs


def _described(out):
    return type(out).__name__ if not isinstance(out, (tuple, list)) else \
        f"{type(out).__name__} of {', '.join(type(o).__name__ for o in out)}"


def _tensors(args, kwargs):
    """The Tensors among the arguments, and in lists or tuples of them (``cat([a, b], out=c)``)."""
    found = []
    for value in list(args) + list(kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)
        found.extend(v for v in items if isinstance(v, Tensor))
    return found


def _check_overlap(outs, inputs, alias_ok):
    """PyTorch's refusal of an ``out`` that shares memory with an input (``alias_ok``: but for the input itself) or
    whose own elements share memory (an expanded tensor)."""
    for o in outs:
        if any(stride == 0 and size > 1 for stride, size in zip(o._data.strides, o._data.shape)):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        for t in inputs:
            a, b = o._data, t._data
            if not np.may_share_memory(a, b):
                continue
            same = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
                    and a.strides == b.strides)
            if (same and alias_ok) or not (same or np.shares_memory(a, b)):
                continue
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


def _check_out_first(name, out, inputs):
    """PyTorch's checks of ``out``'s dtype that come before the op's own (module constants above)."""
    if not inputs:
        return
    complex_input = kind_of(inputs[0].dtype) == "c"
    if name in ("cumsum", "cumprod") and kind_of(out.dtype) == "b":
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
    if name in _BOOL_OUT and kind_of(out.dtype) != "b" and not complex_input:   # (complex: refused first)
        raise RuntimeError(f"{name} does not support non-boolean outputs.")
    if out.dtype == inputs[0].dtype or complex_input and name in _REFUSE_COMPLEX_FIRST:
        return                                      # (the op's own refusal of complex input comes first)
    expected, got = scalar_type_name(inputs[0].dtype), scalar_type_name(out.dtype)
    if name in ("abs", "absolute") and complex_input and kind_of(out.dtype) != "c":
        return                                      # (a complex input's abs is real: any real out it casts to)
    if name in _SAME_DTYPE:
        raise RuntimeError(f"Found dtype {got} but expected {expected}")
    if name == "nan_to_num":
        raise RuntimeError(f"nan_to_num: dtype of out: {got} should be same as input: {expected}")
    if name == "heaviside":
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")


def _check_out_after(name, results, outs):
    """PyTorch's exact-dtype rules that compare ``out`` with the result (module constants above)."""
    result, out = results[0], outs[0]
    if result.dtype == out.dtype:
        return
    wanted, got = scalar_type_name(result.dtype), scalar_type_name(out.dtype)
    if name == "where":
        raise RuntimeError(f"Expected out type to be {wanted} but got {got}")
    if name in _SAME_AS_RESULT or name in _SAME_DTYPE and kind_of(result.dtype) == "c":
        raise RuntimeError(f"Found dtype {got} but expected {wanted}")


def _check_out_before_kernel(name, out, inputs, casting):
    """Where a binary op has no kernel for its inputs, PyTorch's error about ``out``'s dtype, which it raises first:
    the inputs' common dtype cannot be cast into ``out`` (casting ops), or is not ``out``'s (the others).
    (Comparisons write bool whatever they compare; a one-input op refuses its input before looking at ``out``.)"""
    if len(inputs) < 2 or name in _BOOL_RESULTS:
        return
    common = result_type_of(*(t._data for t in inputs))
    if casting and not can_cast(common, out.dtype):
        raise RuntimeError(f"result type {scalar_type_name(common)} can't be cast to the desired output type "
                           f"{scalar_type_name(out.dtype)}") from None
    if not casting and common != out.dtype:
        wanted, got = (_C_NAMES.get(str(d), d) for d in (common, out.dtype))
        raise RuntimeError(f"Expected out tensor to have dtype {wanted}, but got {got} instead") from None


def _check_dtype(result, out, casting, name=""):
    """``out`` takes ``result``'s dtype: any it can be cast to (``casting``) or that dtype exactly."""
    complex_mean = name == "mean" and kind_of(result.dtype) == "c" and kind_of(out.dtype) == "f"   # (its real part)
    if casting and not can_cast(result.dtype, out.dtype) and not complex_mean:
        if name in _CONCATENATIONS:
            raise TypeError(f"{name}(): input types can't be cast to the desired output type "
                            f"{scalar_type_name(out.dtype)}")
        raise RuntimeError(f"result type {scalar_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{scalar_type_name(out.dtype)}")
    if not casting and result.dtype != out.dtype:
        wanted, got = (_C_NAMES.get(str(t.dtype), t.dtype) for t in (result, out))
        raise RuntimeError(f"Expected out tensor to have dtype {wanted}, but got {got} instead")


def _write(result, out):
    """``out`` holds ``result``: resized (with PyTorch's warning unless empty), then written in place."""
    with autograd.no_grad():
        if tuple(out.shape) != tuple(result.shape):
            if out.numel():
                warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                              f"which does not match the required output shape {list(result.shape)}. This behavior "
                              "is deprecated, and in a future PyTorch release outputs will not be resized unless they "
                              "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, "
                              "to zero elements with t.resize_(0).", UserWarning, stacklevel=3)
            out.resize_(result.shape)
        out.copy_(result)
