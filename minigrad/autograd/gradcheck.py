"""Finite-difference gradient checking.

For a function f and a random upstream gradient u (never all ones: a ``sum()`` loss
hides errors, e.g. LayerNorm's input gradient is zero for it), the analytic backward
gives ``J^T u``. Central differences give the same thing one input element at a time::

    (J^T u)[i]  ~  ( <u, f(x + eps e_i)> - <u, f(x - eps e_i)> ) / (2 eps)

``gradcheck`` compares the two for every element of every input that requires grad.
``fast_mode=True`` (PyTorch's name) checks a random projection instead, which costs two
forward passes whatever the size: for a random direction v,

    <J^T u, v>  ~  ( <u, f(x + eps v)> - <u, f(x - eps v)> ) / (2 eps)

Both use PyTorch's acceptance test ``|analytic - numeric| <= atol + rtol * |numeric|``.

Complex tensors follow PyTorch's convention: a complex z = x + iy is the pair of reals (x, y) and its
gradient is dL/dx + i dL/dy. So the upstream gradient of a complex output is complex, the real loss it
stands for is ``<u, f> = Re(sum(conj(u) f))``, and a complex input is perturbed along its real part
(``eps``) and its imaginary part (``i eps``), the differences compared with the real and imaginary parts
of the analytic gradient.
"""
import warnings

import numpy as np

from .engine import run_backward
from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """The analytic and numerical gradients disagree."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, (tuple, list)) else (out,)


def _inner(u, f):
    """The real inner product Re(sum(conj(u) f)): sum(u * f) for real arrays; for complex ones, the sum
    over real and imaginary parts."""
    return float(np.sum(np.real(np.conj(u) * f))) if np.iscomplexobj(u) else float(np.sum(u * f))


def _projected(fn, inputs, upstream):
    """<u, f(inputs)> as a Python float, computed without recording a graph."""
    with no_grad():
        outs = _outputs(fn, inputs)
    return sum(_inner(u, o._data.astype(np.result_type(o._data, np.float64))) for o, u in zip(outs, upstream)
               if u is not None)


def _random_like(rng, t):
    """Standard normal values of ``t``'s shape; complex (both parts random) if ``t`` is complex."""
    values = rng.standard_normal(t.shape)
    return values + 1j * rng.standard_normal(t.shape) if t._data.dtype.kind == "c" else values


def _analytic(fn, inputs, diff_inputs, rng):
    from ..tensor import Tensor
    every = _outputs(fn, inputs)
    outs = [o for o in every if isinstance(o, Tensor) and o.requires_grad]
    if not outs:
        raise GradcheckError("gradcheck: none of the outputs requires grad; nothing to check")
    # one upstream gradient per output, None for an output that does not require grad (_projected skips it)
    upstream = [_random_like(rng, o) if isinstance(o, Tensor) and o.requires_grad else None for o in every]
    used = [u for u in upstream if u is not None]
    grads = run_backward(outs, [u.astype(o._data.dtype) for o, u in zip(outs, used)], inputs=diff_inputs)
    grads = [np.zeros(t.shape, _wide(t)) if g is None else g.astype(_wide(t)) for t, g in zip(diff_inputs, grads)]
    return upstream, grads


def _wide(t):
    """float64, or complex128 for a complex tensor: the dtype gradients are compared in."""
    return np.complex128 if t._data.dtype.kind == "c" else np.float64


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, *, fast_mode=False, seed=0):
    """Check ``fn``'s analytic gradients against central differences; True if they agree.

    ``fn`` takes the tensors of ``inputs`` (a tensor or a tuple; non-tensors are passed
    through) and returns a tensor or a tuple of them. Inputs with ``requires_grad`` are
    checked; they should be float64. On disagreement a ``GradcheckError`` names the
    input, the element index and both values (or, with ``raise_exception=False``,
    ``False`` is returned).
    """
    from ..tensor import Tensor
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype not in (np.float64, np.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex "
                          f"({t.dtype}); finite differences will be inaccurate.", stacklevel=2)
    rng = np.random.default_rng(seed)
    upstream, analytic = _analytic(fn, inputs, diff_inputs, rng)
    positions = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    if fast_mode:
        directions = [_random_like(rng, t) for t in diff_inputs]
        originals = [t._data.copy() for t in diff_inputs]
        try:
            for t, v in zip(diff_inputs, directions):
                t._data[...] = t._data + eps * v
            plus = _projected(fn, inputs, upstream)
            for t, x0, v in zip(diff_inputs, originals, directions):
                t._data[...] = x0 - eps * v
            minus = _projected(fn, inputs, upstream)
        finally:
            for t, x0 in zip(diff_inputs, originals):
                t._data[...] = x0
        numeric = (plus - minus) / (2 * eps)
        exact = sum(_inner(g, v) for g, v in zip(analytic, directions))
        if not abs(exact - numeric) <= atol + rtol * abs(numeric):
            return _fail(f"Jacobian mismatch in a random projection <J^T u, v>: numerical = {numeric!r}, "
                         f"analytical = {exact!r}", raise_exception)
        return True

    for pos, t, g in zip(positions, diff_inputs, analytic):
        data = t._data
        steps = [(" (real part)", 1), (" (imaginary part)", 1j)] if data.dtype.kind == "c" else [("", 1)]
        for idx in np.ndindex(data.shape):
            for part, step in steps:
                x0 = data[idx]
                try:
                    data[idx] = x0 + eps * step
                    plus = _projected(fn, inputs, upstream)
                    data[idx] = x0 - eps * step
                    minus = _projected(fn, inputs, upstream)
                finally:
                    data[idx] = x0
                numeric = (plus - minus) / (2 * eps)
                exact = float((g[idx] * np.conj(step)).real)  # g's component along the step: Re g or Im g
                if not abs(exact - numeric) <= atol + rtol * abs(numeric):
                    return _fail(f"Jacobian mismatch for input {pos} at index {idx}{part}: numerical = "
                                 f"{numeric!r}, analytical = {exact!r}", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False, seed=0):
    """Check second derivatives: ``gradcheck`` applied to the function that maps (inputs, v) to the
    gradients <v, d func / d inputs>, computed with ``create_graph=True`` (PyTorch's ``gradgradcheck``).

    Two checks: the gradients computed with ``create_graph=True`` (each op's ``graph_backward``) must equal
    the ordinary ones (its array ``backward``), and finite differences of them must match their own
    backward (the double backward). ``v`` (``grad_outputs``) is random unless given, and is checked too:
    the double backward's gradient with respect to the upstream gradient is part of what it computes.
    """
    from ..tensor import Tensor
    from . import grad as autograd_grad
    if check_batched_grad or check_fwd_over_rev or masked:
        raise NotImplementedError("gradgradcheck: check_batched_grad, check_fwd_over_rev and masked need vmap, "
                                  "forward-mode AD and masked tensors, which minigrad does not have")
    if not check_rev_over_rev:
        return True
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not diff_inputs:
        raise ValueError("gradgradcheck expects at least one input tensor to require gradient")
    with enable_grad():
        outs = [o for o in _outputs(func, inputs) if isinstance(o, Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed + 1)
        grad_outputs = tuple(Tensor(_random_like(rng, o).astype(o._data.dtype), requires_grad=True) for o in outs)
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    n = len(inputs)

    def first_order(*args):
        with enable_grad():
            outputs = [o for o in _outputs(func, args[:n]) if isinstance(o, Tensor) and o.requires_grad]
            wrt = [t for t in args[:n] if isinstance(t, Tensor) and t.requires_grad]
            grads = autograd_grad(outputs, wrt, args[n:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    with enable_grad():     # the ordinary backward of the first forward's graph
        plain = autograd_grad(outs, diff_inputs, grad_outputs, allow_unused=True)
    graph = first_order(*inputs, *grad_outputs)
    plain = [g for g in plain if g is not None]
    for i, (p, g) in enumerate(zip(plain, graph)):
        if not np.allclose(g._data, p._data, rtol=rtol, atol=atol, equal_nan=True):
            worst = np.unravel_index(np.argmax(np.abs(g._data - p._data)), p.shape) if p.ndim else ()
            return _fail(f"create_graph=True gives a different gradient for input {i} than the ordinary backward "
                         f"(at index {worst}: {g._data[worst]!r} vs {p._data[worst]!r}): a graph_backward "
                         "disagrees with its backward", raise_exception)
    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode, seed=seed)
