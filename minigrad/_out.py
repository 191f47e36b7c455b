"""``out=``: PyTorch's functions write their result into a given tensor and return it (``torch.add(a, b, out=c)``).

``install`` wraps the public functions of the ``minigrad``, ``linalg``, ``special``, ``fft`` and ``nn.functional``
namespaces (the Tensor methods, which take no ``out``, keep the functions themselves). A call without ``out`` goes
straight through; a function PyTorch gives no ``out`` (``clone``, ``flip``, the norms and losses) refuses one with
a TypeError; the others follow PyTorch's contract:

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
from .dtypes import c_name, can_cast, cast_refused, kind_of, result_type_of, scalar_type_name
from .tensor import Tensor

# the modules whose functions compute tensors (the others, save or manual_seed, take no ``out``)
_MODULES = ("minigrad.ops", "minigrad.linalg", "minigrad.special", "minigrad.fft", "minigrad.creation",
            "minigrad.random", "minigrad.low_precision", "minigrad.masked")
# the elementwise ops' modules: their results are cast into ``out``, which may be an operand itself
_ELEMENTWISE = ("minigrad.ops.elementwise", "minigrad.ops.elementwise_more", "minigrad.ops.trig",
                "minigrad.ops.pointwise", "minigrad.ops.floats", "minigrad.ops.division", "minigrad.ops.bitwise",
                "minigrad.ops.special", "minigrad.special", "minigrad.ops.gamma")
# other ops whose results PyTorch casts into ``out`` (its reductions by TensorIterator, its concatenations, and its
# composites that check ``out`` with canCast: the legacy and some linalg functions, products written by copy)
_CASTING = {"sum", "nansum", "mean", "nanmean", "prod", "std", "var", "logsumexp", "cumsum", "cumprod", "cat", "concat",
            "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack", "outer", "ger",
            "_chunk_cat", "addr", "kron", "normalize", "angle", "cond", "householder_product", "lstsq",
            "matrix_rank", "pinv", "tensorinv", "tensorsolve", "eig", "eigvals"}
_CASTING_LEGACY = {"cholesky", "cholesky_inverse", "cholesky_solve", "geqrf"}   # (linalg.cholesky: the dtype exactly)
# ops whose ``out`` may have any dtype: torch.lu copies its factors into it, bernoulli draws into it (not complex)
_ANY_DTYPE = {"lu", "bernoulli"}
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
_CONCATENATIONS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
                   "_chunk_cat"}
_FACTORIES = ("minigrad.creation", "minigrad.random")
_FFT = "minigrad.fft"      # (casting, but a complex result wants a complex ``out``, a real one a floating one)
# PyTorch's functions that take no ``out`` (their Python signatures have none; tests/test_out.py finds them again
# from the op database's samples): given one, they raise TypeError as PyTorch's do
_NO_OUT = {"_unsafe_masked_index", "_unsafe_masked_index_put_accumulate", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "argwhere", "as_strided", "as_strided_scatter", "atleast_1d", "atleast_2d",
           "atleast_3d", "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "bincount", "block_diag", "broadcast_tensors", "broadcast_to",
           "cartesian_prod", "cdist", "celu", "channel_shuffle", "chunk", "clone", "combinations", "conj",
           "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "corrcoef", "cosine_embedding_loss", "cosine_similarity", "count_nonzero", "cov",
           "cross_entropy", "ctc_loss", "cumulative_trapezoid", "diag_embed", "diagflat", "diagonal",
           "diagonal_scatter", "dist", "dsplit", "elu", "empty_like", "empty_permuted", "fftshift", "fill",
           "flatten", "flip", "fliplr", "flipud", "full_like", "gaussian_nll_loss", "glu", "gradient", "grid_sample",
           "grid_sampler_2d", "grid_sampler_3d", "group_norm", "hardsigmoid", "hardswish", "hardtanh",
           "hinge_embedding_loss", "hsplit", "huber_loss", "ifftshift", "imag", "index_fill", "index_put",
           "instance_norm", "interpolate", "isclose", "isfinite", "isinf", "isnan", "isreal", "istft", "kl_div",
           "l1_loss", "layer_norm", "leaky_relu", "linear_cross_entropy", "local_response_norm", "logdet",
           "margin_ranking_loss", "masked_fill", "masked_scatter", "matrix_exp", "max_pool1d", "max_pool2d",
           "max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "meshgrid", "mish", "movedim", "mse_loss",
           "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "narrow",
           "native_group_norm", "native_layer_norm", "nll_loss", "one_hot", "ones_like", "pad", "pairwise_distance",
           "pdist", "permute", "pinverse", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "positive",
           "prelu", "put", "ravel", "real", "relu6", "repeat_interleave", "reshape", "resolve_conj", "resolve_neg",
           "rms_norm", "roll", "rot90", "rsub", "scalar_tensor", "select", "select_scatter", "selu", "silu",
           "smooth_l1_loss", "soft_margin_loss", "softmin", "softsign", "split", "split_with_sizes", "squeeze",
           "std_mean", "stft", "t", "tanhshrink", "tensor_split", "threshold", "tile", "trace", "transpose",
           "trapezoid", "trapz", "tril_indices", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "triu_indices", "unbind", "unflatten", "unfold", "unique", "unique_consecutive", "unravel_index",
           "unsafe_chunk", "unsafe_split", "unsqueeze", "upsample_bilinear", "upsample_nearest", "vander",
           "var_mean", "view_as_complex", "view_as_real", "vsplit", "zeros_like"}


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
    no_out = getattr(fn, "no_out", False)  # a second function of the same name without out (F.softmax)

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if aliases and kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            kwargs = renamed(fn, kwargs)
        if out is None:
            return fn(*args, **kwargs)
        name = fn.__name__
        if name in _NO_OUT or no_out or _overload_without_out(name, args, kwargs):
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        outs, inputs = _checked_outs(name, out), _tensors(args, kwargs)
        if grad_mode.is_grad_enabled() and any(t.requires_grad for t in inputs + outs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        _check_overlap(outs, inputs, module.startswith(_ELEMENTWISE))
        factory = module.startswith(_FACTORIES) and "dtype" in parameters and not inputs
        if factory:
            _check_factory_dtype(kwargs, outs[0])                      # a factory makes out's dtype
        _check_out_first(name, outs[0], inputs)
        if name in _IN_OUT_DTYPE and kwargs.get("dtype") is None and inputs and outs[0].dtype != inputs[0].dtype:
            kwargs["dtype"] = outs[0].dtype                            # sum(x, out=o): computed in o's dtype
        if name == "normal" and inputs:
            kwargs["_out_dtype"] = outs[0].dtype                       # normal(mean_tensor, out=o): drawn in o's
        casting = _casts(name, module, args, kwargs, inputs) or factory
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError:    # PyTorch checks out's dtype before looking for the op's kernel
            if not module.startswith(_FACTORIES):         # (a sampler's kernel is looked for in out's dtype)
                _check_out_before_kernel(name, outs[0], inputs, casting)
            raise
        results = list(result) if isinstance(result, tuple) else [result]
        if not all(isinstance(r, Tensor) for r in results):
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        if len(results) != len(outs) or isinstance(result, tuple) != isinstance(out, (tuple, list)):
            expected = f"a tuple of {len(results)} Tensors" if isinstance(result, tuple) else "Tensor"
            raise TypeError(f"{name}(): argument 'out' must be {expected}, got {_described(out)}")
        casting = casting or (name in ("max", "min") and not isinstance(result, tuple))   # (max(x, dim): exactly)
        _check_out_after(name, results, outs, casting)
        if name in _IN_OUT_DTYPE and kind_of(outs[0].dtype) == "b" and kind_of(results[0].dtype) != "b":
            results = [results[0] != 0]                 # a sum or product into bool: any / all of the inputs
        if module == _FFT:
            _check_fft_kind(name, results[0], outs[0], inputs)
        if not (name in _ANY_DTYPE and module != "minigrad.linalg"):
            for r, o in zip(results, outs):
                _check_dtype(r, o, casting, name)
        for r, o in zip(results, outs):
            _write(r, o)
        return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs) if isinstance(result, tuple) \
            else outs[0]
    wrapper.takes_out = fn.__name__ not in _NO_OUT and not no_out
    wrapper.numpy_names = aliases
    return wrapper


def _overload_without_out(name, args, kwargs):
    """PyTorch's overloads that have no ``out``: ``sum(x)``, ``prod(x)``, ``median(x)``, ``nanmedian(x)`` and
    ``logsumexp(x)`` without a dim, ``std(x, True)`` and ``var(x, True)`` (the legacy ``unbiased`` flag), ``argsort``
    without ``stable``."""
    if name in ("sum", "prod", "median", "nanmedian", "logsumexp"):
        return len(args) < 2 and "dim" not in kwargs
    if name in ("std", "var"):
        return len(args) > 1 and isinstance(args[1], bool)
    return name == "argsort" and "stable" not in kwargs


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


def _casts(name, module, args, kwargs, inputs):
    """Whether PyTorch casts this call's result into ``out`` (module constants above), before the result is known:
    ``clamp`` with tensor bounds (with numbers: the dtype exactly), ``matrix_power`` with ``n`` 0, 1, or +-4, 8, 16, ...
    (PyTorch copies the identity, the input or its last square into ``out``; other powers end in a matrix product,
    wanting the dtype exactly), ``diff`` but with ``n=0``."""
    if module.startswith(_ELEMENTWISE) or name in _CASTING or module == _FFT:
        return name not in _SAME_AS_RESULT or len(inputs) > 1
    if name in _CASTING_LEGACY or name == "all" or name == "any":
        return module != "minigrad.linalg"
    if name == "matrix_power":     # (PyTorch's squarings end in a copy for |n| a power of two from 4 on)
        n = args[1] if len(args) > 1 else kwargs.get("n")
        return n in (0, 1) or abs(n) >= 4 and abs(n) & (abs(n) - 1) == 0
    if name == "diff":                               # (n = 0 copies the input: the dtype exactly)
        return (args[1] if len(args) > 1 else kwargs.get("n", 1)) != 0
    return False


def _check_factory_dtype(kwargs, out):
    """A factory makes ``out``'s dtype; given a ``dtype`` too, PyTorch wants the two to be the same."""
    dtype = kwargs.get("dtype")
    if dtype is None:
        kwargs["dtype"] = out.dtype
    elif np.dtype(dtype) != out.dtype:
        raise RuntimeError(f"dtype {scalar_type_name(dtype)} does not match dtype of out parameter "
                           f"({scalar_type_name(out.dtype)})")


def _check_fft_kind(name, result, out, inputs):
    """PyTorch's FFTs cast into an ``out`` of the result's kind only: complex for a complex result, floating for a
    real one; ``ifft`` and ``ihfft`` of a real input (a conjugated one-sided transform) want its dtype exactly."""
    if name in ("ifft", "ihfft") and kind_of(inputs[0].dtype) != "c" and result.dtype != out.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(out.dtype)} but expected {scalar_type_name(result.dtype)}")
    if kind_of(result.dtype) == "c" and kind_of(out.dtype) != "c":
        raise RuntimeError(f"{name} expects a complex output tensor, but got {scalar_type_name(out.dtype)}")
    if kind_of(result.dtype) != "c" and kind_of(out.dtype) != "f":
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {scalar_type_name(out.dtype)}")


def _check_out_first(name, out, inputs):
    """PyTorch's checks of ``out``'s dtype that come before the op's own (module constants above)."""
    if not inputs:
        return
    complex_input = kind_of(inputs[0].dtype) == "c"
    if name in ("nansum", "nanmean") and kind_of(inputs[0].dtype) == "f" and kind_of(out.dtype) != "f":
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{scalar_type_name(out.dtype)}'")
    if name == "bernoulli" and kind_of(out.dtype) == "c" and inputs[0].numel():      # (nothing drawn: no kernel)
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_self_\" not implemented for "
                                  f"'{scalar_type_name(out.dtype)}'")
    if name in ("all", "any") and out.dtype not in (np.dtype(bool), np.dtype(np.uint8)):
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {scalar_type_name(out.dtype)}")
    if name == "frexp" and out.dtype != inputs[0].dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {c_name(inputs[0].dtype)} but "
                           f"got {c_name(out.dtype)}")
    if name in ("cumsum", "cumprod") and kind_of(out.dtype) == "b" and inputs[0].ndim and inputs[0].numel():
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


def _check_out_after(name, results, outs, casting):
    """PyTorch's exact-dtype rules that compare ``out`` with the result (module constants above)."""
    result, out = results[0], outs[0]
    if name == "frexp" and outs[1].dtype != results[1].dtype:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                           f"{c_name(outs[1].dtype)}")
    if result.dtype == out.dtype:
        return
    wanted, got = scalar_type_name(result.dtype), scalar_type_name(out.dtype)
    if name == "where":
        raise RuntimeError(f"Expected out type to be {wanted} but got {got}")
    if name == "hash_tensor":
        raise RuntimeError(f"Expected result to be of dtype uint64, but got {got}")
    if name == "float_power":
        raise RuntimeError(f"the output given to float_power has dtype {got} but the operation's result requires "
                           f"dtype {wanted}")
    if name in _SAME_AS_RESULT and not casting or name in _SAME_DTYPE and kind_of(result.dtype) == "c":
        raise RuntimeError(f"Found dtype {got} but expected {wanted}")


def _check_out_before_kernel(name, out, inputs, casting):
    """Where a binary op has no kernel for its inputs, PyTorch's error about ``out``'s dtype, which it raises first:
    the inputs' common dtype cannot be cast into ``out`` (casting ops), or is not ``out``'s (the others).
    (Comparisons write bool whatever they compare; a one-input op refuses its input before looking at ``out``.)"""
    if len(inputs) < 2 or name in _BOOL_RESULTS:
        return
    common = result_type_of(*(t._data for t in inputs))
    if casting and not can_cast(common, out.dtype):
        raise cast_refused(common, out.dtype) from None
    if not casting and common != out.dtype:
        wanted, got = c_name(common), c_name(out.dtype)
        raise RuntimeError(f"Expected out tensor to have dtype {wanted}, but got {got} instead") from None


def _check_dtype(result, out, casting, name=""):
    """``out`` takes ``result``'s dtype: any it can be cast to (``casting``) or that dtype exactly."""
    complex_mean = name == "mean" and kind_of(result.dtype) == "c" and kind_of(out.dtype) == "f"   # (its real part)
    if casting and not can_cast(result.dtype, out.dtype) and not complex_mean:
        if name in _CONCATENATIONS:
            raise TypeError(f"{name}(): input types can't be cast to the desired output type "
                            f"{scalar_type_name(out.dtype)}")
        raise cast_refused(result.dtype, out.dtype)
    if not casting and result.dtype != out.dtype:
        wanted, got = c_name(result.dtype), c_name(out.dtype)
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
