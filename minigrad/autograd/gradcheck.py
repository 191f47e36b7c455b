"""Finite-difference gradient checking.

For a function f and a random upstream gradient u (never all ones: a ``sum()`` loss
hides errors, e.g. LayerNorm's input gradient is zero for it), the analytic backward
gives ``J^T u``. Central differences give the same thing one input element at a time::

    (J^T u)[i]  ~  ( <u, f(x + eps e_i)> - <u, f(x - eps e_i)> ) / (2 eps)

``gradcheck`` compares the two for every element of every input that requires grad, for each output
that requires grad in turn (its own u, the backward through that output alone: PyTorch's check runs each
output's backward with the others' gradients undefined). ``fast_mode=True`` (PyTorch's name) checks a
random projection instead, which costs two forward passes whatever the size: for a random direction v,

    <J^T u, v>  ~  ( <u, f(x + eps v)> - <u, f(x - eps v)> ) / (2 eps)

Both use PyTorch's acceptance test ``|analytic - numeric| <= atol + rtol * |numeric|``. Forward-mode
AD (``check_forward_ad``) is checked the same way from the other side: J t for t = e_i (or a random t)
against ( f(x + eps t) - f(x - eps t) ) / (2 eps).

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


def _projections(fn, inputs, upstream):
    """<u_o, f_o(inputs)> for each output o with an upstream gradient, as Python floats (no graph recorded)."""
    with no_grad():
        outs = _outputs(fn, inputs)
    return [_inner(u, o._data.astype(np.result_type(o._data, np.float64))) for o, u in zip(outs, upstream)
            if u is not None]


def _random_like(rng, t):
    """Standard normal values of ``t``'s shape; complex (both parts random) if ``t`` is complex."""
    values = rng.standard_normal(t.shape)
    return values + 1j * rng.standard_normal(t.shape) if t._data.dtype.kind == "c" else values


def _analytic(fn, inputs, diff_inputs, rng, nondet_tol, check_grad_dtypes):
    """Random upstream gradients u (None for an output that does not require grad) and, per output o that does,
    J_o^T u_o (float64/complex128 arrays): the backward through o alone, the other outputs' gradients undefined,
    as PyTorch's check runs it. Each backward runs twice on the same graph; they must agree within ``nondet_tol``
    (reentrancy), and with ``check_grad_dtypes`` each gradient must have its input's dtype."""
    from ..tensor import Tensor
    with enable_grad():
        every = _outputs(fn, inputs)
    if not any(isinstance(o, Tensor) and o.requires_grad for o in every):
        raise GradcheckError("gradcheck: none of the outputs requires grad; nothing to check")
    upstream = [_random_like(rng, o) if isinstance(o, Tensor) and o.requires_grad else None for o in every]
    per_output = []
    for o, u in zip(every, upstream):
        if u is None:
            continue
        runs = [run_backward([o], [u.astype(o._data.dtype)], retain_graph=True, inputs=diff_inputs) for _ in "12"]
        grads = [[np.zeros(t.shape, _wide(t)) if g is None else g.astype(_wide(t)) for t, g in zip(diff_inputs, raw)]
                 for raw in runs]
        if any(not np.all(np.abs(a - b) <= nondet_tol) for a, b in zip(*grads)):
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient. The tolerance for nondeterminism was {nondet_tol}.")
        if check_grad_dtypes and any(g is not None and g.dtype != t._data.dtype for t, g in zip(diff_inputs, runs[0])):
            raise GradcheckError("Gradient has dtype mismatch")
        per_output.append(grads[0])
    return upstream, per_output


def _wide(t):
    """float64, or complex128 for a complex tensor: the dtype gradients are compared in."""
    return np.complex128 if t._data.dtype.kind == "c" else np.float64


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None, seed=0):
    """Check ``func``'s analytic gradients against central differences; True if they agree (PyTorch's
    ``torch.autograd.gradcheck``, its arguments and its checks).

    ``func`` takes the tensors of ``inputs`` (a tensor or a tuple; non-tensors are passed through) and returns a
    tensor or a tuple of them. Inputs with ``requires_grad`` are checked; they should be float64 (or complex128).
    On disagreement a ``GradcheckError`` says what failed (or, with ``raise_exception=False``, ``False`` is
    returned). The checks, in PyTorch's order:

    * ``check_backward_ad``: J^T u for a random u against central differences, element by element (``fast_mode``:
      one random projection); the backward run twice must agree within ``nondet_tol`` (reentrant), and with
      ``check_grad_dtypes`` each gradient must have its input's dtype;
    * ``check_forward_ad``: forward-mode AD's J t (``autograd.forward_ad``) against central differences along t,
      one input element at a time (``fast_mode``: a random t); ``check_batched_forward_grad``: ``vmap`` over
      tangents gives the tangents one at a time;
    * then, for the backward: ``check_batched_grad`` (``vmap`` over upstream gradients), a zero upstream gradient
      gives zero gradients ("backward not multiplied by grad_output"), and ``check_undefined_grad``: the backward
      through each output alone (the others' gradients undefined) handles a zero upstream gradient.

    ``masked`` concerns sparse inputs, whose unspecified elements PyTorch's check may ignore; minigrad checks
    dense inputs only (a sparse one is refused). ``seed`` (minigrad's) seeds the random u, t and projections.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                          check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad,
                          fast_mode, masked, seed)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode,
               masked, seed):
    from ..tensor import Tensor
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    if masked not in (None, True, False):
        raise TypeError(f"gradcheck(): argument 'masked' must be a bool or None, not {type(masked).__name__}")
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and getattr(t, "is_sparse", False):
            raise NotImplementedError(f"gradcheck: input #{i} is sparse; minigrad checks dense inputs (check the "
                                      "function of its dense values, to_dense())")
        if isinstance(t, Tensor) and t.requires_grad and t.dtype not in (np.float64, np.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex "
                          f"({t.dtype}); finite differences will be inaccurate.", stacklevel=3)
    rng = np.random.default_rng(seed)
    if check_backward_ad:
        _check_backward(func, inputs, diff_inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, fast_mode, rng)
    if check_forward_ad:
        _check_forward(func, inputs, diff_inputs, eps, atol, rtol, fast_mode, rng)
        if check_undefined_grad:
            _check_undefined_tangent(func, inputs, diff_inputs, rng)
    if check_batched_forward_grad:
        _check_batched_forward(func, inputs, diff_inputs, rng)
    if not check_backward_ad:
        return True
    with enable_grad():
        outs = [o for o in _outputs(func, inputs) if isinstance(o, Tensor) and o.requires_grad]
    if check_batched_grad:
        for i, o in enumerate(outs):
            _check_batched_grad(o, i, diff_inputs, rng)
    _check_zero_upstream(outs, diff_inputs)
    if check_undefined_grad:
        _check_undefined(func, inputs, diff_inputs)
    return True


def _positions(inputs):
    from ..tensor import Tensor
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _steps(data):
    """The directions one element is perturbed in: its real part, and its imaginary part if complex."""
    return [(" (real part)", 1), (" (imaginary part)", 1j)] if data.dtype.kind == "c" else [("", 1)]


def _check_backward(func, inputs, diff_inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, fast_mode, rng):
    """For each output o that requires grad: J_o^T u_o against central differences of <u_o, f_o>, element by
    element (``fast_mode``: along one random direction v)."""
    upstream, analytic = _analytic(func, inputs, diff_inputs, rng, nondet_tol, check_grad_dtypes)
    outputs = [i for i, u in enumerate(upstream) if u is not None]
    if fast_mode:
        directions = [_random_like(rng, t) for t in diff_inputs]
        plus, minus = _perturbed(func, inputs, diff_inputs, directions, eps, lambda: _projections(func, inputs,
                                                                                                   upstream))
        for o, grads, p, m in zip(outputs, analytic, plus, minus):
            numeric = (p - m) / (2 * eps)
            exact = sum(_inner(g, v) for g, v in zip(grads, directions))
            if not abs(exact - numeric) <= atol + rtol * abs(numeric):
                raise GradcheckError(f"Jacobian mismatch for output {o} in a random projection <J^T u, v>: "
                                     f"numerical = {numeric!r}, analytical = {exact!r}")
        return
    for n, (pos, t) in enumerate(zip(_positions(inputs), diff_inputs)):
        data = t._data
        for idx in np.ndindex(data.shape):
            for part, step in _steps(data):
                x0 = data[idx]
                try:
                    data[idx] = x0 + eps * step
                    plus = _projections(func, inputs, upstream)
                    data[idx] = x0 - eps * step
                    minus = _projections(func, inputs, upstream)
                finally:
                    data[idx] = x0
                for o, grads, p, m in zip(outputs, analytic, plus, minus):
                    numeric = (p - m) / (2 * eps)
                    exact = float((grads[n][idx] * np.conj(step)).real)  # the component along the step: Re or Im
                    if not abs(exact - numeric) <= atol + rtol * abs(numeric):
                        raise GradcheckError(f"Jacobian mismatch for output {o} with respect to input {pos} at index "
                                             f"{idx}{part}: numerical = {numeric!r}, analytical = {exact!r}")


def _perturbed(func, inputs, diff_inputs, directions, eps, evaluate):
    """``evaluate()`` at the inputs moved by +eps and by -eps times ``directions`` (then put back)."""
    originals = [t._data.copy() for t in diff_inputs]
    try:
        for t, v in zip(diff_inputs, directions):
            t._data[...] = t._data + eps * v
        plus = evaluate()
        for t, x0, v in zip(diff_inputs, originals, directions):
            t._data[...] = x0 - eps * v
        minus = evaluate()
    finally:
        for t, x0 in zip(diff_inputs, originals):
            t._data[...] = x0
    return plus, minus


def _evaluated(func, inputs, indices):
    """The outputs at ``indices`` of ``func(*inputs)`` as float64 (complex128) arrays, without a graph."""
    with no_grad():
        outs = _outputs(func, inputs)
    return [outs[i]._data.astype(np.result_type(outs[i]._data, np.float64)) for i in indices]


def _close(analytic, numeric, atol, rtol):
    return np.all(np.abs(analytic - numeric) <= atol + rtol * np.abs(numeric))


def _check_forward(func, inputs, diff_inputs, eps, atol, rtol, fast_mode, rng):
    """Forward-mode AD's J t against central differences along t: t = each input element in turn (and its
    imaginary direction), or (``fast_mode``) one random t for all inputs at once."""
    indices = _grad_output_indices(func, inputs)
    if fast_mode:
        directions = [_random_like(rng, t) for t in diff_inputs]
        _compare_forward(func, inputs, diff_inputs, directions, indices, eps, atol, rtol, "a random direction")
        return
    for n, (pos, t) in enumerate(zip(_positions(inputs), diff_inputs)):
        for idx in np.ndindex(t.shape):
            for part, step in _steps(t._data):
                directions = [np.zeros(u.shape, u._data.dtype) for u in diff_inputs]
                directions[n][idx] = step
                _compare_forward(func, inputs, diff_inputs, directions, indices, eps, atol, rtol,
                                 f"input {pos} at index {idx}{part}")


def _compare_forward(func, inputs, diff_inputs, directions, indices, eps, atol, rtol, where):
    from ..tensor import Tensor
    tangents = _forward_tangents(func, inputs, diff_inputs, [Tensor(v) for v in directions], indices)
    plus, minus = _perturbed(func, inputs, diff_inputs, directions, eps, lambda: _evaluated(func, inputs, indices))
    for o, tangent, p, m in zip(indices, tangents, plus, minus):
        numeric = (p - m) / (2 * eps)
        if not _close(tangent, numeric, atol, rtol):
            raise GradcheckError(f"Jacobian computed with forward mode mismatch for output {o} with respect to "
                                 f"{where}:\nnumerical: {numeric}\nforward AD: {tangent}")


def _forward_tangents(func, inputs, diff_inputs, tangents, indices):
    """The tangents (float64/complex128 arrays) of the outputs at ``indices`` when the inputs that require grad
    carry ``tangents`` (forward-mode AD on detached inputs, as PyTorch's check runs it)."""
    from . import forward_ad
    duals = iter(tangents)        # (a None tangent: the input passed detached, without one)
    with forward_ad.dual_level():
        args = []
        for a in inputs:
            if any(a is t for t in diff_inputs):
                tangent = next(duals)
                a = a.detach() if tangent is None else forward_ad.make_dual(a.detach(), tangent.to(a.dtype))
            args.append(a)
        outs = _outputs(func, args)
        result = []
        for i in indices:
            tangent = forward_ad.unpack_dual(outs[i]).tangent
            data = np.zeros(outs[i].shape) if tangent is None else tangent._data
            result.append(data.astype(np.result_type(data, np.float64)))
    return result


def _check_undefined_tangent(func, inputs, diff_inputs, rng):
    """Each input in turn with a zero tangent, then with none (the others random): the outputs' tangents agree."""
    from ..tensor import Tensor
    indices = _grad_output_indices(func, inputs)
    directions = [Tensor(_random_like(rng, t).astype(t._data.dtype)) for t in diff_inputs]
    for n, t in enumerate(diff_inputs):
        zero = [Tensor(np.zeros(t.shape, t._data.dtype)) if k == n else v for k, v in enumerate(directions)]
        with_zero = _forward_tangents(func, inputs, diff_inputs, zero, indices)
        absent = [None if k == n else v for k, v in enumerate(directions)]
        without = _forward_tangents(func, inputs, diff_inputs, absent, indices)
        for o, a, b in zip(indices, with_zero, without):
            if not np.allclose(a, b, equal_nan=True):
                raise GradcheckError(f"Mismatch in tangent values for output with index: {o} when input {n} that "
                                     f"requires grad has an undefined tangent value. Got: {a} but expected: {b}")


def _check_batched_forward(func, inputs, diff_inputs, rng):
    """``vmap`` over two random tangents of each input gives the tangents computed one at a time."""
    from ..tensor import Tensor
    indices = _grad_output_indices(func, inputs)
    for n, t in enumerate(diff_inputs):
        def tangents_of(v):
            directions = [v if k == n else Tensor(np.zeros(u.shape, u._data.dtype)) for k, u in enumerate(diff_inputs)]
            return tuple(Tensor(a) for a in _forward_tangents(func, inputs, diff_inputs, directions, indices))
        o = _batched_mismatch(tangents_of, [Tensor(_random_like(rng, t).astype(t._data.dtype)) for _ in "12"])
        if o is not None:
            raise GradcheckError(f"Batched forward gradient mismatch for output {indices[o]} with respect to "
                                 f"the input {n} that requires grad")


def _check_batched_grad(output, index, diff_inputs, rng):
    """``vmap`` over two random upstream gradients of ``output`` gives the gradients computed one at a time
    (PyTorch's check of its batching rules; minigrad's vmap is a loop, so this checks that the backward can be
    run again on the same graph and gives the same result)."""
    from . import grad as autograd_grad
    from ..tensor import Tensor

    def vjp(v):
        grads = autograd_grad(output, diff_inputs, v, retain_graph=True, allow_unused=True)
        return tuple(Tensor(np.zeros(t.shape, t._data.dtype)) if g is None else g for g, t in zip(grads, diff_inputs))
    i = _batched_mismatch(vjp, [Tensor(_random_like(rng, output).astype(output._data.dtype)) for _ in "12"])
    if i is not None:
        raise GradcheckError(f"For output {index} and input {i}: the gradients computed in a batch (vmap) differ "
                             "from those computed one at a time")


def _batched_mismatch(fn, samples):
    """The index of the first result of ``fn`` (a tuple of Tensors) that ``vmap(fn)`` over the stacked ``samples``
    gives otherwise than ``fn`` called on each sample, or None."""
    from ..func import vmap
    from ..ops.shape import stack
    expected = [fn(v) for v in samples]
    try:
        batched = vmap(fn)(stack(samples))
    except RuntimeError as error:
        raise GradcheckError(f"While computing batched gradients, got: {error}") from error
    for i, result in enumerate(batched):
        if not np.allclose(result._data, np.stack([e[i]._data for e in expected]), equal_nan=True):
            return i
    return None


def _grad_output_indices(func, inputs):
    """The positions of ``func``'s outputs that require grad."""
    from ..tensor import Tensor
    with enable_grad():
        every = _outputs(func, inputs)
    return [i for i, o in enumerate(every) if isinstance(o, Tensor) and o.requires_grad]


def _check_zero_upstream(outs, diff_inputs):
    """A zero upstream gradient gives zero (or no) gradients, of the inputs' dtypes and shapes."""
    grads = run_backward(outs, [np.zeros(o.shape, o._data.dtype) for o in outs], retain_graph=True,
                         inputs=diff_inputs)
    for g, t in zip(grads, diff_inputs):
        if g is None:
            continue
        if not np.all(g == 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != t._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(g.shape) != tuple(t.shape):
            raise GradcheckError("grad is incorrect size")


def _check_undefined(func, inputs, diff_inputs):
    """The backward through each output alone, its upstream gradient zero and the other outputs' undefined: every
    gradient zero or None."""
    from ..tensor import Tensor
    with enable_grad():
        outs = [o for o in _outputs(func, inputs) if isinstance(o, Tensor) and o.requires_grad]
    for i, o in enumerate(outs):
        try:
            grads = run_backward([o], [np.zeros(o.shape, o._data.dtype)], retain_graph=True, inputs=diff_inputs)
        except RuntimeError as error:
            raise GradcheckError("Expected backward function to handle undefined output grads (output "
                                 f"{i} alone): {error}") from error
        if any(g is not None and not np.all(g == 0) for g in grads):
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                 f"undefined or zero (the backward through output {i} alone)")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False, seed=0):
    """Check second derivatives: ``gradcheck`` applied to the function that maps (inputs, v) to the
    gradients <v, d func / d inputs>, computed with ``create_graph=True`` (PyTorch's ``gradgradcheck``):
    ``check_rev_over_rev`` with its backward, ``check_fwd_over_rev`` with forward-mode AD.

    With ``check_rev_over_rev`` minigrad checks one thing more first: the gradients computed with
    ``create_graph=True`` (each op's ``graph_backward``) must equal the ordinary ones (its array ``backward``).
    ``v`` (``grad_outputs``) is random unless given, and is checked too: the double backward's gradient with
    respect to the upstream gradient is part of what it computes.
    """
    from ..tensor import Tensor
    from . import grad as autograd_grad
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
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
    wrt_positions = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def first_order(*args):
        """The gradients <v, d func / d inputs> (args: the inputs, then v). The inputs that required grad are made
        to again: gradcheck's forward-mode check passes them detached, carrying tangents (as PyTorch's)."""
        args = [a.requires_grad_() if i in wrt_positions and not a.requires_grad else a for i, a in enumerate(args)]
        with enable_grad():
            outputs = [o for o in _outputs(func, args[:n]) if isinstance(o, Tensor) and o.requires_grad]
            grads = autograd_grad(outputs, [args[i] for i in wrt_positions], args[n:], create_graph=True,
                                  allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if check_rev_over_rev:
        with enable_grad():     # the ordinary backward of the first forward's graph
            plain = autograd_grad(outs, diff_inputs, grad_outputs, allow_unused=True)
        graph = first_order(*inputs, *grad_outputs)
        plain = [g for g in plain if g is not None]
        for i, (p, g) in enumerate(zip(plain, graph)):
            if not np.allclose(g._data, p._data, rtol=rtol, atol=atol, equal_nan=True):
                worst = np.unravel_index(np.argmax(np.abs(g._data - p._data)), p.shape) if p.ndim else ()
                message = (f"create_graph=True gives a different gradient for input {i} than the ordinary backward "
                           f"(at index {worst}: {g._data[worst]!r} vs {p._data[worst]!r}): a graph_backward "
                           "disagrees with its backward")
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked,
                     seed=seed)
