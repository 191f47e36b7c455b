"""Which ops autocast runs in which dtype: PyTorch's CPU op lists, as decorators on minigrad's public functions.

Inside ``minigrad.autocast("cpu", dtype=bfloat16)`` (or float16) an op listed by PyTorch for the CPU
("Autocast Op Reference", CPU section of the AMP documentation; ``aten/src/ATen/autocast_mode.cpp``) runs
in the dtype of its list:

* ``lower`` (``@autocast_op("lower")``): matrix products and convolutions (linear, matmul, mm, bmm,
  addmm, baddbmm, addbmm, conv1d/2d/3d and their transposes, prelu, scaled_dot_product_attention). Their
  float32 tensor arguments are cast to the autocast dtype first; float64 ones are left alone.
* ``float32`` (``@autocast_op("float32")``): the losses, cdist, prod, trace, quantile and the 3-d poolings,
  among others. Their 16-bit floating arguments are cast to float32.
* everything else runs in the dtypes its inputs have: a bfloat16 activation stays bfloat16 through
  softmax, layer_norm or gelu (on the CPU, unlike CUDA, these are not in the float32 list). Where such an
  op is built on a listed one in minigrad but not in PyTorch (mv and bilinear call matmul and einsum here),
  ``@autocast_op("inputs")`` runs it with autocast suspended and its arguments as they are.

An op called inside a listed op (the log_softmax inside cross_entropy) runs as it is called, as PyTorch
excludes autocast while the listed op runs. The casts are ordinary differentiable casts: float32 master
weights receive float32 gradients, which hold the 16-bit gradient of their 16-bit copy (PyTorch's too).
"""
import functools

from . import dtypes

_state = {"dtype": None, "inside": 0}   # the CPU autocast dtype while enabled; depth of listed ops running


def autocast_dtype():
    """The CPU autocast dtype while autocast is on and no listed op is running, else None."""
    return _state["dtype"] if not _state["inside"] else None


def use_autocast_dtype(dtype):
    """Turn CPU autocast on (a 16-bit dtype) or off (None); returns the previous setting."""
    previous, _state["dtype"] = _state["dtype"], dtype
    return previous


def _eligible(value):
    """A tensor autocast may cast: floating point, not float64 (PyTorch leaves float64 alone)."""
    from .tensor import Tensor
    return isinstance(value, Tensor) and dtypes.is_floating_point(value.dtype) and value.dtype != dtypes.float64


def _cast(value, dtype):
    if _eligible(value):
        return value if value.dtype == dtype else value.to(dtype)
    if isinstance(value, (list, tuple)) and any(_eligible(v) for v in value):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def autocast_op(policy):
    """Decorator of a public op: under CPU autocast, cast its tensor arguments to the autocast dtype
    (``policy="lower"``), to float32 (``policy="float32"``) or not at all (``policy="inputs"``), and run it with
    autocast suspended."""
    if policy not in ("lower", "float32", "inputs"):
        raise ValueError(f"autocast policy must be 'lower', 'float32' or 'inputs', got {policy!r}")

    def decorate(function):
        @functools.wraps(function)
        def autocast_wrapper(*args, **kwargs):
            dtype = _state["dtype"]
            if dtype is None or _state["inside"]:          # the common case: autocast off
                return function(*args, **kwargs)
            if policy != "inputs" and kwargs.get("dtype") is None:   # an explicit dtype= is obeyed, as in PyTorch
                target = dtype if policy == "lower" else dtypes.float32
                args = [_cast(a, target) for a in args]
                kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
            _state["inside"] += 1
            try:
                return function(*args, **kwargs)
            finally:
                _state["inside"] -= 1
        autocast_wrapper.autocast_policy = policy
        return autocast_wrapper
    return decorate
