"""Helpers for float16/bfloat16 mirror tests: tensors moved between the libraries by their bits, and results
compared in units in the last place (ulps) of the 16-bit dtype.

The ulp distance of two 16-bit floats is how many representable values lie between them: their bit patterns
mapped to a monotone integer scale (negative values reflected) and subtracted. 0 means bit for bit; two NaNs
are at distance 0 whatever their payloads; +0 and -0 are at distance 1 (PyTorch gives the sign of zero
deliberately, so it counts).
"""
import numpy as np

import minigrad as mg

from .mirror import torch_or_skip

DTYPES = ("bfloat16", "float16")


def torch_dtype(name):
    return getattr(torch_or_skip(), name)


def bits(t):
    """The uint16 bit patterns of a 16-bit minigrad or PyTorch tensor."""
    torch = torch_or_skip()
    if isinstance(t, torch.Tensor):
        return t.detach().contiguous().view(torch.int16).numpy().view(np.uint16).copy()
    return np.array(t.detach().numpy(), order="C").view(np.uint16)


def from_bits(b, name, library, requires_grad=False):
    """A tensor of dtype ``name`` holding the uint16 patterns ``b``, in minigrad (``library=mg``) or PyTorch."""
    torch = torch_or_skip()
    b = np.array(b, dtype=np.uint16, order="C")      # a copy that keeps 0-dim arrays 0-dim
    if library is mg:
        t = mg.tensor(b.view(np.int16)).view(getattr(mg, name)).clone()
    else:
        t = torch.from_numpy(b.view(np.int16).copy()).view(getattr(torch, name)).clone()
    return t.requires_grad_(requires_grad) if requires_grad else t


def rounded(values, name):
    """float values rounded to the 16-bit dtype ``name``, as uint16 bit patterns (PyTorch's rounding)."""
    torch = torch_or_skip()
    return bits(torch.tensor(np.asarray(values, dtype=np.float32)).to(getattr(torch, name)))


def _ordered(b):
    """uint16 patterns -> integers in the order of the values they encode (-0 just below +0)."""
    b = b.astype(np.int32)
    return np.where(b & 0x8000, 0x7FFF - (b & 0x7FFF), 0x8000 + b)


def _is_nan(b, name):
    exponent_mask, mantissa_mask = (0x7F80, 0x007F) if name == "bfloat16" else (0x7C00, 0x03FF)
    return ((b & exponent_mask) == exponent_mask) & ((b & mantissa_mask) != 0)


def ulp_distance(got, want, name):
    """Elementwise ulp distance of two arrays of uint16 patterns of dtype ``name``; NaN vs NaN is 0, NaN vs a
    number is a huge distance."""
    got, want = np.asarray(got, np.uint16), np.asarray(want, np.uint16)
    nan_got, nan_want = _is_nan(got, name), _is_nan(want, name)
    distance = np.abs(_ordered(got) - _ordered(want))
    distance = np.where(nan_got & nan_want, 0, distance)
    return np.where(nan_got != nan_want, 1 << 20, distance)


EPS = {"bfloat16": 2.0 ** -7, "float16": 2.0 ** -10}


def assert_ulps(got, want, max_ulps, what="", scale_ulps=None):
    """minigrad tensor ``got`` equals PyTorch tensor ``want`` (same 16-bit dtype, same shape) within ``max_ulps``.
    With ``scale_ulps``, an element also passes when it is within that many ulps *of the tensor's largest value*
    (for gradients with cancellation, whose tiny entries are the rounding noise of large terms: a gradient that
    is 0 in exact arithmetic is 1e-6 in one library and -3e-7 in the other)."""
    name = str(want.dtype).rpartition(".")[2]
    assert str(got.dtype) == name, f"{what}: dtype {got.dtype}, PyTorch {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)}, PyTorch {tuple(want.shape)}"
    distance = ulp_distance(bits(got), bits(want), name)
    if scale_ulps is not None and distance.size:
        g, w = (t.detach().float().numpy() for t in (got, want))
        largest = np.nanmax(np.abs(np.where(np.isinf(w), 0, w)))
        small = np.abs(g - w) <= scale_ulps * EPS[name] * largest
        distance = np.where(small, 0, distance)
    worst = int(distance.max()) if distance.size else 0
    assert worst <= max_ulps, (f"{what}: {int((distance > max_ulps).sum())} of {distance.size} values more than "
                               f"{max_ulps} ulp(s) from PyTorch's (worst {worst})")
    return worst


def mirror_low(fn, arrays, name, forward_ulps, grad_ulps=None, seed=0, grads=None, scale_ulps=1):
    """``fn(lib, *tensors)`` on the same 16-bit inputs in both libraries (``arrays``: float values, rounded to
    dtype ``name`` by PyTorch; an integer array is passed as an int64 tensor); forward compared within
    ``forward_ulps``, then, if ``grad_ulps`` is given, every 16-bit input's gradient for the same random upstream
    (rounded to the output's dtype) within ``grad_ulps`` (or ``scale_ulps`` ulps of the gradient's largest value,
    see ``assert_ulps``). Returns the worst distances seen."""
    torch = torch_or_skip()
    grads = [np.asarray(a).dtype.kind == "f" for a in arrays] if grads is None else grads
    mg_in, th_in = [], []
    for a, g in zip(arrays, grads):
        a = np.asarray(a)
        if a.dtype.kind == "f":
            b = rounded(a, name)
            need = grad_ulps is not None and g
            mg_in.append(from_bits(b, name, mg, need))
            th_in.append(from_bits(b, name, torch, need))
        else:
            mg_in.append(mg.tensor(a))
            th_in.append(torch.tensor(a))
    out_mg, out_th = fn(mg, *mg_in), fn(torch, *th_in)
    worst = [assert_ulps(out_mg, out_th, forward_ulps, "forward", scale_ulps)]
    if grad_ulps is None:
        return worst
    upstream = rounded(np.random.default_rng(seed).standard_normal(tuple(out_th.shape)),
                       str(out_th.dtype).rpartition(".")[2])
    out_mg.backward(from_bits(upstream, str(out_mg.dtype), mg))
    out_th.backward(from_bits(upstream, str(out_th.dtype).rpartition(".")[2], torch))
    for i, (a, b) in enumerate(zip(mg_in, th_in)):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            worst.append(assert_ulps(a.grad, b.grad, grad_ulps, f"gradient of input {i}", scale_ulps))
    return worst


def assert_close_to_float64(fn, arrays, name, param_dtype, max_ulps=1, scale_ulps=1, seed=0):
    """minigrad's ``fn(lib, x, *params)`` with x of dtype ``name`` and the params of ``param_dtype`` (``name`` or
    "float32") against the same function run by PyTorch in float64 on the same values: the output and every
    gradient are the float64 result rounded once to their dtype, within ``max_ulps`` (or ``scale_ulps`` of the
    tensor's largest value). This is what "accumulated in float32 or better, rounded once" promises."""
    torch = torch_or_skip()
    x_bits = rounded(arrays[0], name)
    params = [rounded(a, param_dtype) if param_dtype != "float32" else np.asarray(a, np.float32) for a in arrays[1:]]
    x_mg = from_bits(x_bits, name, mg, True)
    p_mg = [from_bits(p, name, mg, True) if param_dtype != "float32" else mg.tensor(p, requires_grad=True)
            for p in params]
    out = fn(mg, x_mg, *p_mg)
    x64 = torch.tensor(from_bits(x_bits, name, torch).double().numpy(), requires_grad=True)
    p64 = [torch.tensor(p.float().numpy().astype(np.float64) if hasattr(p, "float") else p.astype(np.float64),
                        requires_grad=True) for p in [from_bits(p, name, torch) if param_dtype != "float32" else p
                                                      for p in params]]
    out64 = fn(torch, x64, *p64)
    upstream = rounded(np.random.default_rng(seed).standard_normal(tuple(out64.shape)), str(out.dtype))
    out.backward(from_bits(upstream, str(out.dtype), mg))
    out64.backward(from_bits(upstream, str(out.dtype), torch).double())
    for what, got, exact in [("forward", out, out64)] + [(f"gradient of input {i}", t.grad, e.grad)
                                                        for i, (t, e) in enumerate(zip([x_mg] + p_mg, [x64] + p64))]:
        target = str(got.dtype)
        if target == "float32":
            np.testing.assert_allclose(got.numpy(), exact.detach().float().numpy(), rtol=2e-6,
                                       atol=2e-6 * float(exact.abs().max()), err_msg=what)
        else:
            assert_ulps(got, exact.detach().to(getattr(torch, target)), max_ulps, what, scale_ulps)
