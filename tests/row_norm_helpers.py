"""Cases and checks shared by the RMSNorm and LayerNorm tests (test_norm_rms.py, test_norm_layer.py)."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

# (input shape, len(normalized_shape)) over (N, C), (N, C, L), (N, C, H, W) and several normalized dims
SHAPES = [((4, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 2, 3), 1), ((2, 2, 2, 3), 3)]
SHAPE_IDS = [f"{s}-last{n}" for s, n in SHAPES]


def case(shape, nlen, seed=0, dtype=np.float64):
    """normalized_shape and random x, weight, bias for one case (weight away from 0 so it matters)."""
    rng = np.random.default_rng(seed)
    ns = shape[len(shape) - nlen:]
    x = rng.standard_normal(shape).astype(dtype)
    w = (1 + 0.5 * rng.standard_normal(ns)).astype(dtype)
    b = rng.standard_normal(ns).astype(dtype)
    return ns, x, w, b


def forward_backward(fn, arrays, seed=1):
    """Run ``fn`` on tensors made from ``arrays`` (None passes through), backpropagate a random upstream
    gradient, and return [output, grad of each array that is not None]."""
    tensors = [None if a is None else mg.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*tensors)
    y.backward(mg.tensor(np.random.default_rng(seed).standard_normal(y.shape).astype(y.dtype)))
    return [y._data] + [t.grad._data for t in tensors if t is not None]


def assert_twins_equal(fused, composite, arrays, rtol=1e-12, atol=1e-12):
    """The fused Function and its composite twin agree in the forward and in every gradient."""
    names = ["forward"] + [f"grad of input {i}" for i, a in enumerate(arrays) if a is not None]
    for name, f, c in zip(names, forward_backward(fused, arrays), forward_backward(composite, arrays)):
        np.testing.assert_allclose(f, c, rtol=rtol, atol=atol, err_msg=name)


def assert_module_mirror(module, torch_module, x, seed=2, rtol=1e-10, atol=1e-10):
    """Give a minigrad module and its PyTorch twin the same random parameters, run both on the float64
    ``x`` with the same random upstream gradient, and compare output and input/weight/bias gradients."""
    torch = torch_or_skip()
    rng = np.random.default_rng(seed)
    torch_module = torch_module.double()
    params = [name for name in ("weight", "bias") if getattr(torch_module, name, None) is not None]
    assert [n for n in ("weight", "bias") if getattr(module, n) is not None] == params
    assert list(module.state_dict()) == list(torch_module.state_dict())
    with torch.no_grad():
        for name in params:
            value = rng.standard_normal(tuple(getattr(torch_module, name).shape))
            getattr(module, name).data[...] = value
            getattr(torch_module, name).copy_(torch.tensor(value))
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = module(xm), torch_module(xt)
    np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol, err_msg="forward")
    g = rng.standard_normal(ym.shape)
    ym.backward(mg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol, err_msg="input grad")
    for name in params:
        np.testing.assert_allclose(getattr(module, name).grad.numpy(), getattr(torch_module, name).grad.numpy(),
                                   rtol=rtol, atol=atol, err_msg=f"{name} grad")


def assert_shape_errors(impl):
    """``impl(input, normalized_shape, weight=, bias=)`` raises PyTorch's errors, word for word."""
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[2, 3\]$"):
        impl(mg.randn(2, 3), [4])
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[2, 3\], expected input with shape "
                                           r"\[\*, 2, 3\], but got input of size\[3\]$"):
        impl(mg.randn(3), (2, 3))
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[3, 4\], expected input with shape "
                                           r"\[\*, 3, 4\], but got input of size\[2, 3, 5\]$"):
        impl(mg.randn(2, 3, 5), (3, 4))
    with pytest.raises(RuntimeError, match=r"^Expected weight to be of same shape as normalized_shape, but got "
                                           r"weight of shape \[3\] and normalized_shape = \[4\]$"):
        impl(mg.randn(2, 4), [4], weight=mg.ones(3))
    with pytest.raises(RuntimeError, match=r"^Expected bias to be of same shape as normalized_shape, but got "
                                           r"bias of shape \[4, 1\] and normalized_shape = \[4\]$"):
        impl(mg.randn(2, 4), [4], bias=mg.ones(4, 1))
    with pytest.raises(RuntimeError, match="at least 1-dimensional"):
        impl(mg.randn(2, 4), [])
