"""Helpers shared by the tests: PyTorch mirrors and float64 gradient checks.

``torch_or_skip()`` imports PyTorch or skips (a failure under MINIGRAD_REQUIRE_TORCH=1).
``assert_mirror`` runs one function in minigrad and in PyTorch on the same float64 data
with the same random upstream gradient, and compares the output and every input's
gradient.
"""
import numpy as np
import pytest

import minigrad as mg


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch not installed: mirror test skipped")


def _to_mg(a, grad):
    return mg.tensor(a, requires_grad=grad and a.dtype.kind == "f")


def assert_mirror(mg_fn, torch_fn, *arrays, rtol=1e-10, atol=1e-10, seed=0, grads=None):
    """Compare forward and all input gradients of ``mg_fn`` and ``torch_fn`` on ``arrays``.

    ``arrays`` are ndarrays (float ones get requires_grad unless ``grads`` says otherwise)
    or plain Python values passed through unchanged to both functions.
    """
    torch = torch_or_skip()
    grads = grads if grads is not None else [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]
    mg_in = [_to_mg(a, g) if isinstance(a, np.ndarray) else a for a, g in zip(arrays, grads)]
    th_in = [torch.tensor(a, requires_grad=bool(g and a.dtype.kind == "f")) if isinstance(a, np.ndarray) else a
             for a, g in zip(arrays, grads)]
    out_mg, out_th = mg_fn(*mg_in), torch_fn(*th_in)
    np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().numpy(), rtol=rtol, atol=atol, err_msg="forward")
    assert out_mg.dtype == np.dtype(str(out_th.dtype).replace("torch.", "")), (out_mg.dtype, out_th.dtype)
    if not any(grads):
        return out_mg
    upstream = np.random.default_rng(seed).standard_normal(out_mg.shape).astype(out_mg.dtype)
    out_mg.backward(mg.tensor(upstream))
    out_th.backward(torch.tensor(upstream))
    for i, (a, b) in enumerate(zip(mg_in, th_in)):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            assert (a.grad is None) == (b.grad is None), f"input {i}: grad presence differs"
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"gradient of input {i}")
    return out_mg


def run_both(f):
    """``f(lib, *tensors)`` written once, as the (minigrad, PyTorch) pair of functions ``assert_mirror`` takes."""
    torch = torch_or_skip()
    return (lambda *t: f(mg, *t)), (lambda *t: f(torch, *t))


def check_grad(fn, *arrays, fast_mode=False, **kwargs):
    """Float64 finite-difference check of ``fn`` on copies of ``arrays`` (float ones require grad)."""
    inputs = [mg.tensor(np.array(a, dtype=np.float64), requires_grad=True)
              if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in arrays]
    assert mg.gradcheck(fn, inputs, fast_mode=fast_mode, **kwargs)
