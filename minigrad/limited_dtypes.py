"""The ops PyTorch refuses on its "limited support" dtypes, refused here too; float8 computed as PyTorch computes it.

PyTorch stores uint16, uint32, uint64 and the float8 dtypes, converts them and moves their values (views,
reshapes, indexing, ``cat``, ``where``, ``clone``), but has CPU kernels for few of their ops. Programs are written
against PyTorch, so minigrad refuses what PyTorch refuses, with PyTorch's ``NotImplementedError`` (``"add_stub"
not implemented for 'UInt32'``), even where NumPy could compute the result:

* uint16/32/64: ``+``, ``-``, negation, ``%``, ``abs``, ``**``, max/min, ``maximum``/``minimum``, ``clamp``,
  ``relu``, ``masked_fill``, ``flip``, ``index_select``, ``masked_select`` and matrix products are refused; ``*``, ``/`` (a float result), ``sum``,
  ``prod``, ``cumsum``, comparisons for equality and the bitwise ops run (and uint next to a float tensor is a float
  op, which runs);
* float8: only ``*`` of two tensors of the same float8 dtype, ``abs`` and matrix products (float8_e8m0fnu has
  only ``*``) compute, in float32 with the result rounded once by PyTorch's conversion
  (``dtypes.cast_array``); ``abs`` is PyTorch's element loop's (-0 becomes 0; its vectorized loop leaves -0 and
  NaN bits as they are on whole blocks of 64 elements). Ops that only move values run.

``gate(cls)`` wraps a minigrad ``Function``'s forward (low_precision.py's ``install`` calls it for each one), so
the refusal happens where the op would compute, for the functions and the Tensor methods alike; ``Function.apply``
calls the wrapper only when an argument has one of these dtypes (and wraps a classmethod forward, ``gated_call``,
for those calls only). Ops that are not ``Function``s refuse at their start: selections, searches, counts,
creations and index writes through ``check_kernel`` (``argmax``, ``topk``, ``sort``, ``linspace``, ``scatter``,
``index_add``, ``masked_fill``, ``x[mask] = v``, ...), the order comparisons, logical ops and floor division in
their own modules (docs/differences.md lists what still runs).
"""
import functools

import numpy as np

from .dtypes import FLOAT8, LIMITED_UINTS, cast_array, float8_e8m0fnu, float32, result_type, scalar_type_name
from .tensor import Tensor

_FLOAT8_CHARS = frozenset(d.char for d in FLOAT8)
_UINT_CHARS = frozenset([d.char for d in LIMITED_UINTS] + ["Q"])    # uint64 is 'L' and 'Q' (unsigned long long)
_LIMITED_CHARS = _FLOAT8_CHARS | _UINT_CHARS

# Functions PyTorch has no uint16/32/64 kernel for, and the kernel name its message gives
_UINT_REFUSED = {
    "Add": "add_stub", "Sub": "add_stub", "Neg": "neg_cpu", "Remainder": "remainder_cpu", "Extremum": "max_all",
    "Abs": "abs_cpu", "Maximum": "maximum_cpu", "Minimum": "minimum_cpu", "Pow": "pow", "Clamp": "clamp_scalar_cpu",
    "MaskedFill": "masked_fill", "Flip": "flip_cpu", "Relu": "clamp_min_scalar_cpu", "MatMul": "addmm_impl_cpu_",
    "IndexSelect": "index_select", "MaskedSelect": "masked_select", "Fmod": "fmod_cpu", "Square": "pow",
    "Fmax": "maximum_cpu", "Fmin": "minimum_cpu",
}
# Functions that only move values (or cast): run on float8 as they are
_FLOAT8_MOVING = {"Cast", "Where", "Gather", "IndexSelect", "MaskedSelect", "IndexPut", "IndexPutAdd", "Embedding",
                  "SelectAlong"}
_FLOAT8_MOVING_MODULES = ("minigrad.ops.shape", "minigrad.ops.layout")
# float8 Functions computed in float32, and PyTorch's kernel names of the refused ones it is asked for most
_FLOAT8_COMPUTED = {"Mul", "MatMul", "Abs"}
_FLOAT8_KERNELS = {
    "Add": "add_stub", "Sub": "add_stub", "Div": "div_cpu", "Neg": "neg_cpu", "Sum": "sum_cpu", "Mean": "sum_cpu",
    "Extremum": "max_all", "Maximum": "maximum_cpu", "Minimum": "minimum_cpu", "Clamp": "clamp_scalar_cpu",
    "Relu": "clamp_min_scalar_cpu", "Flip": "flip_cpu", "MaskedFill": "masked_fill", "Pow": "pow",
    "Remainder": "remainder_cpu", "CumSum": "cumsum_out_cpu", "Prod": "prod_out_cpu", "Mul": "mul_cpu_reduced_float",
    "MatMul": "addmm_impl_cpu_", "Abs": "abs_cpu",
}


_PROMOTING = {"Add", "Sub", "Remainder", "Maximum", "Minimum", "Pow", "MatMul"}   # binary ops: operands promoted



# Ops that are no Function gated above (selections, searches, counts, creations, index writes): PyTorch's kernel
# for uint16/32/64 and for the float8 dtypes, or None where it has one (``check_kernel``)
_OP_KERNELS = {
    "argmax": ("argmax_cpu", "argmax_cpu"), "argmin": ("argmin_cpu", "argmin_cpu"), "topk": ("topk_cpu", "topk_cpu"),
    "nonzero": ("nonzero_count_cpu", "nonzero_count_cpu"), "cummax": ("cummax_cpu", "cummax_cpu"),
    "cummin": ("cummin_cpu", "cummin_cpu"), "searchsorted": ("searchsorted_out_cpu", "searchsorted_out_cpu"),
    "gather": ("scatter_gather_tensor_cpu", "gather_expanded_index"), "take": ("take_cpu", "take_cpu"),
    "linspace": ("linspace_cpu", "linspace_cpu"), "logspace": ("logspace_cpu", "logspace_cpu"),
    "histc": ("aminmax_cpu", "aminmax_cpu"), "isin": ("isin_default_cpu", "isin_default_cpu"),
    "kthvalue": ("kthvalue_cpu", "kthvalue_cpu"), "max": ("max_cpu", "max_cpu"), "min": ("min_cpu", "min_cpu"),
    "amax": ("max_values_cpu", "max_values_cpu"), "amin": ("min_values_cpu", "min_values_cpu"),
    "mode": ("mode_cpu", "mode_cpu"), "median": ("median_out", "median_out"),
    "median_all": ("median_cpu", "median_cpu"),
    "trace": ("trace", "trace"), "bincount": ("bincount_cpu", None),
    "dot": ("dot", None), "eye": ("eye", None),
    "lshift": ("lshift_cpu", None), "rshift": ("rshift_cpu", None), "sort": (None, "sorting_kernel_method_name"),
    "unique": (None, "unique"), "equal": (None, "equal_notnan_cpu"), "isclose": (None, "mul_cpu_reduced_float"),
    "signbit": (None, "signbit_cpu"), "var_mean": (None, "std_cpu"), "isposinf": (None, "isposinf_cpu"),
    "isneginf": (None, "isneginf_cpu"),
    # (PyTorch's isinf/isfinite kernels cover the float8 dtypes named)
    "isinf": (None, ("isinf", "float8_e4m3fn float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu")),
    "isfinite": (None, ("isfinite", "float8_e4m3fn float8_e4m3fnuz float8_e5m2fnuz")),
    # index writes (index_put, which ``x[index] = v`` runs, has a kernel for every float8 dtype but float8_e8m0fnu)
    "scatter": ("scatter_gather_tensor_cpu", "scatter_gather_tensor_cpu"),
    "scatter_value": ("scatter_gather_scalar_cpu", "scatter_gather_scalar_cpu"),
    "index_add": ("index_add_", "index_add_"), "masked_fill": ("masked_fill", "masked_fill"),
    "index_reduce": ("index_func_", "index_func_"), "put": ("take_put_cpu", "take_put_cpu"),
    "index_fill": ("index_fill_cpu", "index_fill_cpu"), "index_copy": ("index_copy_cpu", "index_copy_cpu"),
    "masked_scatter": ("masked_scatter", "masked_scatter"), "index_put": ("index_put", ("index_put", "float8_e8m0fnu")),
}


def check_kernel(op, *operands):
    """PyTorch's refusal of the op ``op`` ("argmax", ...) when an operand (a Tensor or a dtype) has a dtype it has no
    kernel for (``_OP_KERNELS``: a kernel name, or (name, the dtypes it refuses))."""
    for a in operands:
        dtype = a._data.dtype if isinstance(a, Tensor) else a
        if isinstance(dtype, np.dtype) and dtype.char in _LIMITED_CHARS:
            kernel = _OP_KERNELS[op][dtype.char in _FLOAT8_CHARS]
            if isinstance(kernel, tuple):
                kernel = kernel[0] if dtype.name in kernel[1].split() else None
            if kernel is not None:
                raise _refused(kernel, dtype)


def _iterator_scalar(tensors):
    """Whether the second of two operands is what PyTorch's elementwise loop calls a scalar: broadcast to the result's
    shape, a zero step along every axis longer than 1 (one element, or a tensor expanded from one). PyTorch multiplies
    by such an operand in a kernel it has for float16 and bfloat16 only, so float8 refuses it (not a 0-d left one)."""
    if len(tensors) != 2 or tensors[1]._data.size == 0:
        return False
    shape = np.broadcast_shapes(*(t._data.shape for t in tensors))
    steps = np.broadcast_to(tensors[1]._data, shape).strides                   # (out's ndim,)
    return all(n == 1 or step == 0 for n, step in zip(shape, steps))


def _promote(tensors):
    for other in tensors[1:]:
        result_type(tensors[0], other)


def _refused(kernel, dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(dtype)}\'')


def _op_dtype(operands):
    """The limited dtype an op on ``operands`` computes in, or None: uint next to a float tensor is a float op."""
    limited, floating = None, False
    for a in operands:
        if isinstance(a, Tensor):
            dtype = a._data.dtype
            if dtype.char in _LIMITED_CHARS:
                if limited is None or dtype.char in _FLOAT8_CHARS:
                    limited = dtype
            elif dtype.kind in "fc" or dtype.kind == "V":
                floating = True
    if limited is not None and floating and limited.char in _UINT_CHARS:
        return None
    return limited


def _float8_abs(a):
    """abs of float8 as PyTorch's element-by-element loop computes it: in float32, converted back (-0 is 0, a NaN
    is the dtype's NaN of PyTorch's conversion). Its vectorized loop, on whole blocks of 64 elements, leaves -0 and
    NaN bits as they are."""
    return cast_array(np.abs(a._data.astype(float32)), a._data.dtype)


def gate(cls):
    """Wrap ``cls``'s own forward in the check; ``Function.apply`` calls the wrapper only when an argument has one
    of ``dtypes.NOT_PLAIN`` (the forward without it otherwise: no cost to the other dtypes)."""
    raw = cls.__dict__.get("forward")
    if not isinstance(raw, staticmethod):
        return        # a classmethod forward is checked per call instead (``gated_call``)
    gated = _gated(raw.__func__, cls)
    gated._minigrad_plain = getattr(raw.__func__, "_minigrad_plain", raw.__func__)   # for Function.apply (below)
    setattr(cls, "forward", staticmethod(gated))


def gated_call(forward, cls):
    """``forward``, a classmethod forward bound to ``cls``, wrapped in the check for one call. A classmethod has no
    plain form for ``Function.apply`` to call when no argument has a dtype in ``NOT_PLAIN``: wrapped once, it would
    cost every call; so apply wraps it only for the calls with such an argument (tan, hypot, erfc, max, ...)."""
    return _gated(forward, cls)


def _gated(forward, cls):
    """``forward(ctx, *inputs)`` of the Function ``cls``, refusing (or computing in float32) as PyTorch does when an
    input has a limited dtype."""
    @functools.wraps(forward)
    def limited_dtype_forward(*args, **kwargs):
        for a in args:
            if isinstance(a, Tensor) and a._data.dtype.char in _LIMITED_CHARS:
                break
        else:
            return forward(*args, **kwargs)
        operands = args[1:] + tuple(kwargs.values())                 # args: (ctx, *inputs)
        dtype = _op_dtype(operands)
        if dtype is None:
            return forward(*args, **kwargs)
        name = cls.__name__.lstrip("_")
        if dtype.char in _UINT_CHARS:
            if name in _PROMOTING:                  # int64 next to uint32: PyTorch's promotion error comes first
                _promote([a for a in operands if isinstance(a, Tensor)])
            if name in _UINT_REFUSED:
                raise _refused(_UINT_REFUSED[name], dtype)
            return forward(*args, **kwargs)
        if name in _FLOAT8_MOVING or getattr(cls, "view", False) or cls.__module__.startswith(_FLOAT8_MOVING_MODULES):
            if name != "Flip":
                return forward(*args, **kwargs)
        if name in _PROMOTING or name in ("Mul", "Div"):   # float8 next to another dtype: PyTorch's promotion error
            _promote([a for a in operands if isinstance(a, Tensor)])
        if name in _FLOAT8_COMPUTED and (dtype != float8_e8m0fnu or name == "Mul"):
            tensors = [a for a in operands if isinstance(a, Tensor)]
            if name == "Mul" and (not all(t._data.dtype == dtype for t in tensors) or _iterator_scalar(tensors)):
                raise _refused("mul_cpu_reduced_float", dtype)
            if name == "Abs":
                return _float8_abs(tensors[0])
            wide = [Tensor(a._data.astype(float32)) if isinstance(a, Tensor) and a._data.dtype == dtype else a
                    for a in args[1:]]
            out = forward(args[0], *wide, **kwargs)
            array = out._data if isinstance(out, Tensor) else np.asarray(out)
            return cast_array(array, dtype)
        if name in ("Std", "Var"):                          # (PyTorch's check before any kernel: a RuntimeError)
            raise RuntimeError(f"std_var_all: Unsupported dtype {scalar_type_name(dtype)}")
        raise _refused(_FLOAT8_KERNELS.get(name, f"{name.lower()}_cpu"), dtype)
    return limited_dtype_forward
