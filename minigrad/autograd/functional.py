"""``minigrad.autograd.functional``: Jacobians, Hessians and their products, as ``torch.autograd.functional``.

Everything here is built from one primitive, the vector-Jacobian product that backpropagation computes,
and ``create_graph=True``, which makes that product differentiable again. For f: inputs -> outputs with
Jacobian J (one block per output and input)::

    vjp(f, x, u)  = u^T J                  one backward pass
    jvp(f, x, v)  = J v                    = d/du <u^T J, v>: the backward of a backward (u is a dummy)
    jacobian(f, x)                         row by row: one vjp per output element (or, with
                                           strategy="forward-mode", column by column with jvp)
    vhp(f, x, v)  = v^T H = d/dx <grad f, v>       for a scalar f, H its Hessian
    hvp(f, x, v)  = H v                    = v^T H for the symmetric H of a smooth f, computed as PyTorch
                                           does: the backward of that vhp, so it is exact even where H
                                           is not symmetric numerically
    hessian(f, x) = jacobian(grad f)(x)

Inputs may be a tensor or a tuple of tensors, outputs likewise; results mirror that structure, as in
PyTorch. With ``strict=True`` an output that does not depend on an input is an error (PyTorch's rule);
otherwise its block is zeros. Results are detached unless ``create_graph=True``.
"""
import numpy as np

from .grad_mode import enable_grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# --------------------------------------------------------------------------- inputs and outputs as tuples
def _as_tuple(x, arg, fn):
    from ..tensor import Tensor
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"The {arg} given to {fn}" if not is_tuple else f"Entry {i} in the {arg} given to {fn}"
            raise TypeError(f"{where} must be either a Tensor or a tuple of Tensors but the value at index {i} "
                            f"has type {type(t)}.")
    return is_tuple, items


def _outputs(out, fn):
    from ..tensor import Tensor
    is_tuple = isinstance(out, tuple)
    items = out if is_tuple else (out,)
    if not all(isinstance(o, Tensor) for o in items):
        raise TypeError(f"The outputs of the user-provided function given to {fn} must be either a Tensor or a "
                        f"tuple of Tensors but the given outputs of the user-provided function has type {type(out)}.")
    return is_tuple, items


def _prepare(inputs, create_graph):
    """Differentiable stand-ins for the inputs: a view (keeping the caller's graph) under create_graph,
    a detached tensor that requires grad otherwise."""
    from ..tensor import Tensor
    return tuple(t.view_as(t) if create_graph and t.requires_grad else Tensor(t._data).requires_grad_(True)
                 for t in inputs)


def _result(t, create_graph):
    return t if create_graph or t is None else t.detach()


def _unpack(items, is_tuple):
    return items if is_tuple else items[0]


def _size(shape):
    return f"minigrad.Size({list(shape)})"


def _grads(outputs, inputs, grad_outputs, create_graph, strict, what):
    """d<grad_outputs, outputs>/d inputs with zeros for unused inputs (an error under ``strict``)."""
    from . import grad
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if strict:
        for i, o in enumerate(outputs):
            if not o.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   f"outputs must be computed in a differentiable manner from the input when running "
                                   f"in strict mode.")
    if not pairs:
        return tuple(None for _ in inputs)
    grads = grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=create_graph,
                 retain_graph=True, allow_unused=True)
    for i, g in enumerate(grads):
        if g is None and strict:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               f"allowed in strict mode{what}.")
    return grads


def _zeros_if_none(grads, inputs):
    from ..tensor import Tensor
    return tuple(Tensor(np.zeros_like(t._data)) if g is None else g for g, t in zip(grads, inputs))


def _v_like(v, tensors, fn_name, whose):
    """v checked against ``tensors`` (the outputs for vjp, the inputs for jvp/hvp/vhp): one per tensor, same
    shapes; None only when there is a single one-element tensor (then v = 1). ``whose``: how PyTorch's
    message names them."""
    from ..tensor import Tensor
    if v is None:
        if len(tensors) != 1 or tensors[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if {whose} a single Tensor with a single element.")
        return (Tensor(np.ones_like(tensors[0]._data)),)
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(tensors):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(tensors)} but got {len(v)}.")
    for vi, t in zip(v, tensors):
        if vi.shape != t.shape:
            raise RuntimeError(f"v has invalid size: should be {_size(t.shape)} but got {_size(vi.shape)}.")
    return v


_OUTPUTS = "the user-provided function returns"
_INPUTS = "the input to the user-provided function is"


# --------------------------------------------------------------------------- products
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, one backward pass."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _outputs(func(*inputs), "vjp")
        v = _v_like(v, outputs, "vjp", _OUTPUTS)
        grads = _zeros_if_none(_grads(outputs, inputs, v, create_graph, strict, ""), inputs)
    return (_unpack(tuple(_result(o, create_graph) for o in outputs), out_tuple),
            _unpack(tuple(_result(g, create_graph) for g in grads), in_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, as the backward of a backward. With u a dummy
    upstream gradient, g(u) = u^T J is linear in u, and d<g(u), v>/du = J v."""
    from ..tensor import Tensor
    with enable_grad():
        _, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        v = _v_like(v, inputs, "jvp", _INPUTS)
        out_tuple, outputs = _outputs(func(*inputs), "jvp")
        dummies = tuple(Tensor(np.zeros_like(o._data), requires_grad=True) for o in outputs)
        grads = _grads(outputs, inputs, dummies, True, strict, " for jvp")
        pairs = [(g, vi) for g, vi in zip(grads, v) if g is not None and g.requires_grad]
        if pairs:
            from . import grad
            jv = grad([g for g, _ in pairs], dummies, [vi for _, vi in pairs], create_graph=create_graph,
                      allow_unused=True)
        else:
            jv = (None,) * len(outputs)
        for i, j in enumerate(jv):
            if j is None and strict:
                raise RuntimeError(f"The gradient with respect to output {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
        jv = _zeros_if_none(jv, outputs)
    return (_unpack(tuple(_result(o, create_graph) for o in outputs), out_tuple),
            _unpack(tuple(_result(j, create_graph) for j in jv), out_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function returning one element: d<grad f, v>/d inputs."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp", transpose=False)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function returning one element (equal to vhp for a smooth f)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp", transpose=True)


def _hessian_product(func, inputs, v, create_graph, strict, name, transpose):
    from ..tensor import Tensor
    from . import grad
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _outputs(func(*inputs), name)
        if out_tuple or outputs[0].numel() != 1:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        out = outputs[0]
        v = _v_like(v, inputs, name, _INPUTS)
        first = _grads((out,), inputs, (Tensor(np.ones_like(out._data)),), True, strict, "")
        first = _zeros_if_none(first, inputs)
        if not transpose:       # v^T H = d<grad f, v>/dx
            result = _second(first, inputs, v, create_graph, strict, grad)
        else:                   # H v: w^T H with a dummy w is linear in w; its derivative along v is H v
            dummies = tuple(Tensor(np.zeros_like(t._data), requires_grad=True) for t in inputs)
            wh = _second(first, inputs, dummies, True, False, grad)
            pairs = [(g, vi) for g, vi in zip(wh, v) if g.requires_grad]
            result = grad([g for g, _ in pairs], dummies, [vi for _, vi in pairs], create_graph=create_graph,
                          allow_unused=True) if pairs else (None,) * len(inputs)
            result = _zeros_if_none(result, inputs)
    return (_result(out, create_graph), _unpack(tuple(_result(r, create_graph) for r in result), in_tuple))


def _second(first, inputs, v, create_graph, strict, grad):
    pairs = [(g, vi) for g, vi in zip(first, v) if g.requires_grad]
    if not pairs:
        if strict:
            raise RuntimeError("The jacobian of the user-provided function is independent of the inputs. This is "
                               "not allowed in strict mode.")
        return _zeros_if_none((None,) * len(inputs), inputs)
    result = grad([g for g, _ in pairs], inputs, [vi for _, vi in pairs], create_graph=create_graph,
                  allow_unused=True, retain_graph=True)
    if strict:
        for i, r in enumerate(result):
            if r is None:
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode.")
    return _zeros_if_none(result, inputs)


# --------------------------------------------------------------------------- full matrices
def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j a tensor of shape
    ``outputs[i].shape + inputs[j].shape``; a tensor, a tuple, or a tuple of tuples as in PyTorch.

    Reverse mode builds it row by row (one vjp per output element); ``strategy="forward-mode"`` (which
    PyTorch allows only with ``vectorize=True``) column by column, one jvp per input element."""
    from ..tensor import Tensor
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _outputs(func(*inputs), "jacobian")
        blocks = [[None] * len(inputs) for _ in outputs]
        if strategy == "reverse-mode":
            for i, out in enumerate(outputs):
                rows = [[] for _ in inputs]
                for k in range(out.numel()):
                    e = np.zeros(out._data.size, dtype=out._data.dtype)
                    e[k] = 1
                    upstream = [Tensor(e.reshape(out.shape)) if m == i else Tensor(np.zeros_like(o._data))
                                for m, o in enumerate(outputs)]
                    grads = _grads(outputs, inputs, upstream, create_graph, strict and k == 0, "")
                    for j, (g, t) in enumerate(zip(grads, inputs)):
                        rows[j].append(Tensor(np.zeros_like(t._data)) if g is None else g)
                for j, t in enumerate(inputs):
                    stacked = _stack(rows[j], t) if rows[j] else Tensor(np.zeros((0,) + t.shape, t._data.dtype))
                    blocks[i][j] = stacked.reshape(out.shape + t.shape)
        else:
            for j, t in enumerate(inputs):
                columns = [[] for _ in outputs]
                for k in range(t.numel()):
                    e = np.zeros(t._data.size, dtype=t._data.dtype)
                    e[k] = 1
                    v = tuple(Tensor(e.reshape(t.shape)) if m == j else Tensor(np.zeros_like(s._data))
                              for m, s in enumerate(inputs))
                    _, jv = jvp(func, inputs if len(inputs) > 1 else inputs[0], v if len(inputs) > 1 else v[0],
                                create_graph=create_graph, strict=strict)
                    jv = jv if isinstance(jv, tuple) else (jv,)
                    for i, c in enumerate(jv):
                        columns[i].append(c)
                for i, out in enumerate(outputs):
                    stacked = _stack(columns[i], out) if columns[i] else Tensor(np.zeros((0,) + out.shape,
                                                                                         out._data.dtype))
                    # (input elements, *out.shape) -> (*out.shape, *input.shape)
                    moved = stacked.reshape((t.numel(),) + out.shape).permute(tuple(range(1, out.ndim + 1)) + (0,))
                    blocks[i][j] = moved.reshape(out.shape + t.shape)
    blocks = [[_result(b, create_graph) for b in row] for row in blocks]
    rows = [_unpack(tuple(row), in_tuple) for row in blocks]
    return _unpack(tuple(rows), out_tuple)


def _stack(items, like):
    from ..ops.shape import stack
    return stack([g.reshape(like.shape) for g in items])


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning one element: ``jacobian`` of its gradient. For tuple inputs a
    tuple of tuples, block (i, j) of shape ``inputs[i].shape + inputs[j].shape``."""
    if outer_jacobian_strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    from ..tensor import Tensor
    in_tuple, items = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args):
        out_tuple, outputs = _outputs(func(*args), "hessian")
        if out_tuple or outputs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        out = outputs[0].reshape(())
        grads = _grads((out,), args, (Tensor(np.ones((), out._data.dtype)),), True, strict, "")
        return tuple(Tensor(np.zeros_like(t._data), requires_grad=True) if g is None else g
                     for g, t in zip(grads, args))

    result = jacobian(gradient, items, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    if not in_tuple:
        return result[0][0]
    return result
