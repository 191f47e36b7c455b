"""Reverse-mode automatic differentiation: ``Function``, the backward engine, grad modes, gradcheck."""
import numpy as np

from .engine import accumulate, run_backward
from .function import Context, Function
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck

__all__ = ["Context", "Function", "GradcheckError", "backward", "enable_grad", "grad", "gradcheck",
           "is_grad_enabled", "no_grad", "set_grad_enabled"]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _upstream(outputs, grad_outputs):
    """The gradients to start from: given ones checked against their outputs, or 1 for one-element outputs."""
    from ..tensor import Tensor
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._data.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                   f"minigrad.{out._data.dtype}")
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs "
                                   f"(output {i} has shape {list(out.shape)}); pass gradient=")
            grads.append(np.ones_like(out._data))
            continue
        g = np.asarray(g._data if isinstance(g, Tensor) else g)
        if g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                               f"output[{i}] has a shape of {list(out.shape)}.")
        grads.append(g.astype(out._data.dtype, copy=False))
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (``Tensor.backward`` calls this).

    With ``inputs`` (a tensor or a sequence), only those tensors' ``.grad`` receive gradients; they may be
    leaves or intermediate results, as in PyTorch.
    """
    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported by minigrad yet")
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    upstream = _upstream(tensors, grad_tensors)
    if inputs is None:
        run_backward(tensors, upstream, retain_graph=bool(retain_graph))
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    for t, g in zip(inputs, run_backward(tensors, upstream, retain_graph=bool(retain_graph), inputs=inputs)):
        if g is not None:
            accumulate(t, g)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated into ``.grad``."""
    from ..tensor import Tensor
    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported by minigrad yet")
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad (input {i})")
    grad_outputs = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    grads = run_backward(outputs, _upstream(outputs, grad_outputs), retain_graph=bool(retain_graph), inputs=inputs)
    if not allow_unused and any(g is None for g in grads):
        unused = next(i for i, g in enumerate(grads) if g is None)
        raise RuntimeError(f"The differentiated Tensor at index {unused} appears to not have been used in the graph. "
                           "Set allow_unused=True if this is the desired behavior.")
    return tuple(None if g is None else Tensor(g) for g in grads)
