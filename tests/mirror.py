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


def _second_order(lib, fn, inputs, upstream, directions):
    """grad of  sum_i <g_i, v_i> + |g_i|^2 / 2  with respect to every input and the upstream u, where
    g = d<u, fn(inputs)>/d inputs is computed with create_graph=True: a non-linear function of the first
    gradients, so every second-order term of fn (and the gradient's dependence on u) is exercised."""
    out = fn(*inputs)
    wrt = [t for t in inputs if isinstance(t, lib.Tensor) and t.requires_grad]
    grads = lib.autograd.grad(out, wrt, upstream, create_graph=True, allow_unused=True)
    loss = 0
    for g, v in zip(grads, directions):
        if g is not None:
            loss = loss + (g * v).sum() + (g * g).sum() / 2
    if not isinstance(loss, lib.Tensor) or not loss.requires_grad:
        return out, grads, [None] * (len(wrt) + 1)
    return out, grads, lib.autograd.grad(loss, wrt + [upstream], allow_unused=True)


def assert_double_mirror(mg_fn, torch_fn, *arrays, rtol=1e-10, atol=1e-10, seed=0, grads=None):
    """Double backward of ``mg_fn`` against ``torch_fn`` (float64): the first gradients (computed with
    create_graph=True, random upstream u) and the gradients of a non-linear function of them with respect
    to every input and to u. A gradient PyTorch leaves undefined (None) must be zero in minigrad, and
    the other way round."""
    torch = torch_or_skip()
    grads = grads if grads is not None else [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]
    mg_in = [_to_mg(a, g) if isinstance(a, np.ndarray) else a for a, g in zip(arrays, grads)]
    th_in = [torch.tensor(a, requires_grad=bool(g and a.dtype.kind == "f")) if isinstance(a, np.ndarray) else a
             for a, g in zip(arrays, grads)]
    rng = np.random.default_rng(seed)
    shape = mg_fn(*mg_in).shape
    u = rng.standard_normal(shape)
    directions = [rng.standard_normal(a.shape) for a, g in zip(arrays, grads) if g]
    results = []
    for lib, fn, inputs in ((mg, mg_fn, mg_in), (torch, torch_fn, th_in)):
        up = lib.tensor(u, requires_grad=True)
        vs = [lib.tensor(v) for v in directions]
        results.append(_second_order(lib, fn, inputs, up, vs))
    (out_mg, g_mg, gg_mg), (out_th, g_th, gg_th) = results
    np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().numpy(), rtol=rtol, atol=atol, err_msg="forward")

    def values(t, like):
        return np.zeros(like.shape) if t is None else t.detach().numpy()
    wrt_arrays = [a for a, g in zip(arrays, grads) if g] + [u]
    for name, ours, theirs, likes in (("first gradient", g_mg, g_th, wrt_arrays), ("second-order gradient", gg_mg,
                                                                                   gg_th, wrt_arrays)):
        for i, (a, b, like) in enumerate(zip(ours, theirs, likes)):
            np.testing.assert_allclose(values(a, like), values(b, like), rtol=rtol, atol=atol,
                                       err_msg=f"{name} {i}" + (" (of the upstream gradient)" if i == len(likes) - 1
                                                                 and name != "first gradient" else ""))


def check_gradgrad(fn, *arrays, **kwargs):
    """Float64 ``gradgradcheck`` of ``fn`` on copies of ``arrays`` (float ones require grad)."""
    inputs = [mg.tensor(np.array(a, dtype=np.float64), requires_grad=True)
              if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in arrays]
    assert mg.autograd.gradgradcheck(fn, inputs, **kwargs)


def math_attention(lib):
    """For PyTorch: its math attention kernel, the one with a double backward (2.13's fused CPU kernel has
    none: "derivative for _scaled_dot_product_flash_attention_for_cpu_backward is not implemented").
    For minigrad, nothing to choose."""
    import contextlib
    if lib is mg:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.MATH)


def rss_growth_kib(step, warmup, steps):
    """How much the resident memory grows (KiB, from /proc) over ``steps`` calls of ``step`` after ``warmup``
    calls, with the cycle collector off: what reference counting alone frees."""
    import gc

    def rss_kib():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * 4
    gc.disable()
    try:
        for _ in range(warmup):
            step()
        before = rss_kib()
        for _ in range(steps):
            step()
        return rss_kib() - before
    finally:
        gc.enable()
