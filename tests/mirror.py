"""Helpers shared by the tests: PyTorch mirrors and float64 gradient checks.

``torch_or_skip()`` imports PyTorch or skips (a failure under MINIGRAD_REQUIRE_TORCH=1): for checks that
need PyTorch by nature. ``torch_or_replay()`` is PyTorch, or without it a stand-in that skips when used: for
tests whose PyTorch side goes through the helpers below only.
``assert_mirror`` runs one function in minigrad and in PyTorch on the same float64 data
with the same random upstream gradient, and compares the output and every input's
gradient. It, ``assert_double_mirror`` and ``torch_result`` ask PyTorch through ``tests/oracle.py``: live when
it is installed, else its output recorded in ``tests/fixtures/`` (``python tests/fixtures/record.py``).
"""
import numpy as np
import pytest

import minigrad as mg

from . import oracle


class WrongTan(mg.autograd.Function):
    """A mutant the checks must catch: tan with a deliberately wrong backward (d tan = 1 + tan, not 1 + tan^2)."""

    @staticmethod
    def forward(ctx, x):
        y = np.tan(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return dout * (1 + y)          # the mutant: 1 + tan x instead of 1 + tan^2 x


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch not installed: mirror test skipped")


class _NoTorch:
    """PyTorch's stand-in when it is not installed: attribute access gives another stand-in (so ``torch.nn.
    functional.gelu`` can be passed to ``assert_mirror``, which replays a record and never calls it); any other
    use (a call, a comparison, truth, iteration, arithmetic, ``isinstance``) skips the test."""

    def __init__(self, name="torch"):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _NoTorch(f"{self._name}.{attr}")

    def _skip(self, *args, **kwargs):
        pytest.skip(f"PyTorch not installed: this test uses {self._name} directly (no recorded output): "
                    "mirror test skipped")

    __call__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __iter__ = __len__ = _skip
    __getitem__ = __setattr__ = __contains__ = __instancecheck__ = __subclasscheck__ = __enter__ = __exit__ = _skip
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __neg__ = _skip
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __float__ = __int__ = __index__ = __array__ = __str__ = _skip
    __hash__ = object.__hash__

    @property
    def __signature__(self):           # inspect.signature(torch.optim.SGD): PyTorch's own signature is needed
        self._skip()


def torch_or_replay():
    """PyTorch, or (not installed) a stand-in that skips the test when it is used other than as a function handed
    to ``assert_mirror`` / ``assert_double_mirror`` (which then replay the recorded output)."""
    return oracle.live_torch() or _NoTorch()


def _to_mg(a, grad):
    return mg.tensor(a, requires_grad=grad and a.dtype.kind == "f")


def _to_torch(torch, arrays, grads):
    return [torch.tensor(a, requires_grad=bool(g and a.dtype.kind == "f")) if isinstance(a, np.ndarray) else a
            for a, g in zip(arrays, grads)]


def _default_grads(arrays, grads):
    return grads if grads is not None else [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]


def torch_result(compute, *inputs, values=True, tolerance=(1e-9, 1e-12)):
    """``compute(torch)``'s result as PyTorch gives it (tensors as ``oracle.RecordedTensor``: ``dtype`` prints as
    ``torch.float64``, ``.numpy()``, ``.shape``, ``.requires_grad``, ``.grad``; an exception it raises is returned
    as ``oracle.RecordedError``), live or recorded. ``inputs`` are what the result depends on besides the code
    (their fingerprint is stored with the record); ``values=False`` records shapes and dtypes only (random results)."""
    def record(torch):
        try:
            return oracle.snap(compute(torch), values=values)
        except Exception as error:  # noqa: BLE001 - the exception is PyTorch's answer
            return oracle.snap(error)
    return oracle.ask(record, inputs=inputs, tolerance=tolerance)


def torch_raises(compute, *inputs):
    """The exception ``compute(torch)`` raises, as ``oracle.RecordedError`` (``.type``: the nearest built-in class,
    ``.message``), live or recorded; a test failure when PyTorch does not raise."""
    theirs = torch_result(compute, *inputs, values=False)
    assert isinstance(theirs, oracle.RecordedError), f"PyTorch does not raise: it gives {theirs!r}"
    return theirs


def assert_raises_as_recorded(compute, *inputs):
    """``compute(lib)`` raises in minigrad what it raises in PyTorch (live or recorded): the same exception type
    (the nearest built-in one) and the same message."""
    theirs = torch_raises(compute, *inputs)
    with pytest.raises(theirs.type) as caught:
        compute(mg)
    assert str(caught.value) == theirs.message


def assert_mirror(mg_fn, torch_fn, *arrays, rtol=1e-10, atol=1e-10, seed=0, grads=None):
    """Compare forward and all input gradients of ``mg_fn`` and ``torch_fn`` on ``arrays``.

    ``arrays`` are ndarrays (float ones get requires_grad unless ``grads`` says otherwise)
    or plain Python values passed through unchanged to both functions. PyTorch's side (its output, and the
    gradients of every input for the random upstream) is live or recorded (``tests/oracle.py``).
    """
    grads = _default_grads(arrays, grads)

    def torch_side(torch):
        th_in = _to_torch(torch, arrays, grads)
        out_th = torch_fn(*th_in)
        record = {"out": oracle.snap(out_th, grad=False)}
        if any(grads):
            upstream = np.random.default_rng(seed).standard_normal(tuple(out_th.shape))
            out_th.backward(torch.tensor(upstream, dtype=out_th.dtype))
            record["grads"] = [oracle.snap(b.grad) if isinstance(b, torch.Tensor) and b.requires_grad else "n/a"
                               for b in th_in]
        return record
    theirs = oracle.ask(torch_side, inputs=(list(arrays), grads, seed), tolerance=(rtol, atol))
    mg_in = [_to_mg(a, g) if isinstance(a, np.ndarray) else a for a, g in zip(arrays, grads)]
    out_mg, out_th = mg_fn(*mg_in), theirs["out"]
    np.testing.assert_allclose(out_mg.detach().numpy(), out_th.numpy(), rtol=rtol, atol=atol, err_msg="forward")
    assert out_mg.dtype == np.dtype(oracle.dtype_name(out_th.dtype)), (out_mg.dtype, out_th.dtype)
    if not any(grads):
        return out_mg
    upstream = np.random.default_rng(seed).standard_normal(out_mg.shape).astype(out_mg.dtype)
    out_mg.backward(mg.tensor(upstream))
    for i, (a, b) in enumerate(zip(mg_in, theirs["grads"])):
        if not (isinstance(b, str) and b == "n/a"):
            assert (a.grad is None) == (b is None), f"input {i}: grad presence differs"
            if b is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"gradient of input {i}")
    return out_mg


def run_both(f):
    """``f(lib, *tensors)`` written once, as the (minigrad, PyTorch) pair of functions ``assert_mirror`` takes
    (without PyTorch, the second is never called: ``assert_mirror`` replays its recorded output)."""
    torch = torch_or_replay()
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
    the other way round. PyTorch's side is live or recorded (``tests/oracle.py``)."""
    grads = _default_grads(arrays, grads)
    mg_in = [_to_mg(a, g) if isinstance(a, np.ndarray) else a for a, g in zip(arrays, grads)]
    shape = mg_fn(*mg_in).shape

    def upstream_and_directions():
        rng = np.random.default_rng(seed)
        u = rng.standard_normal(shape)
        return u, [rng.standard_normal(a.shape) for a, g in zip(arrays, grads) if g]
    u, directions = upstream_and_directions()

    def torch_side(torch):
        th_in = _to_torch(torch, arrays, grads)
        up = torch.tensor(u, requires_grad=True)
        out, first, second = _second_order(torch, torch_fn, th_in, up, [torch.tensor(v) for v in directions])
        return {"out": oracle.snap(out, grad=False), "first": [oracle.snap(g, grad=False) for g in first],
                "second": [oracle.snap(g, grad=False) for g in second]}
    theirs = oracle.ask(torch_side, inputs=(list(arrays), grads, seed, tuple(shape)), tolerance=(rtol, atol))
    out_mg, g_mg, gg_mg = _second_order(mg, mg_fn, mg_in, mg.tensor(u, requires_grad=True),
                                        [mg.tensor(v) for v in directions])
    g_th, gg_th = theirs["first"], theirs["second"]
    np.testing.assert_allclose(out_mg.detach().numpy(), theirs["out"].numpy(), rtol=rtol, atol=atol,
                               err_msg="forward")

    def values(t, like):
        return np.zeros(like.shape) if t is None else t.detach().numpy()
    wrt_arrays = [a for a, g in zip(arrays, grads) if g] + [u]
    for name, ours, theirs_, likes in (("first gradient", g_mg, g_th, wrt_arrays), ("second-order gradient", gg_mg,
                                                                                    gg_th, wrt_arrays)):
        for i, (a, b, like) in enumerate(zip(ours, theirs_, likes)):
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
