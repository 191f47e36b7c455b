"""Reverse-mode automatic differentiation: ``Function``, the backward engine, grad modes, gradcheck."""
import warnings

import numpy as np

from .engine import accumulate, run_backward
from . import function as _function
from . import forward_ad  # noqa: E402  (torch.autograd.forward_ad; before any op can run)
from .function import Context, Function, once_differentiable
from .grad_mode import (detect_anomaly, enable_grad, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                        is_grad_enabled, no_grad, set_detect_anomaly, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import functional  # noqa: E402  (jacobian, hessian, vjp, jvp, vhp, hvp)
from .variable import Variable  # noqa: E402  (PyTorch's legacy wrapper: returns a Tensor)
from .grad_mode import inference_mode  # noqa: E402  (also torch.autograd.inference_mode)
from .grad_mode import is_multithreading_enabled, set_multithreading_enabled  # noqa: E402
from . import profiler  # noqa: E402  (torch.autograd.profiler: profile, record_function, emit_nvtx)
from . import graph  # noqa: E402  (torch.autograd.graph: Node, next_functions, node hooks)
from .saved_tensors import SavedTensor  # noqa: E402  (torch.autograd.SavedTensor: grad_fn._raw_saved_self)
from . import anomaly_mode, profiler_util  # noqa: E402,F401  (the modules PyTorch defines these names in)
from ..profiler import DeviceType, ProfilerActivity, kineto_available  # noqa: E402,F401


def is_view_replay_enabled():
    """False: views are not replayed from their bases (PyTorch's default)."""
    return False

__all__ = ["Context", "Function", "functional", "GradcheckError", "backward", "detect_anomaly", "enable_grad", "grad",
           "gradcheck", "gradgradcheck", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled",
           "is_multithreading_enabled", "no_grad", "set_multithreading_enabled", "once_differentiable", "set_detect_anomaly", "set_grad_enabled", "Variable"]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _upstream(outputs, grad_outputs, create_graph=False):
    """The gradients to start from: given ones checked against their outputs, or 1 for one-element outputs.
    With ``create_graph`` a given gradient stays a Tensor, so the result can be differentiated with
    respect to it too."""
    Tensor = _function.Tensor   # set by minigrad.tensor (an import here would cost ~0.7 us on every backward)
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise TypeError(f"expected the outputs to differentiate to be Tensors, but got {type(out).__name__} "
                            f"(element {i})")
        if not (g is None or isinstance(g, (Tensor, np.ndarray))):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
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
        given = g
        g = np.asarray(g._data if isinstance(g, Tensor) else g)
        if g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                               f"output[{i}] has a shape of {list(out.shape)}.")
        if (g.dtype.kind == "c") != (out._data.dtype.kind == "c"):
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same "
                               f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of minigrad.{g.dtype} and "
                               f"output[{i}] has a dtype of minigrad.{out._data.dtype}.")
        if create_graph and isinstance(given, Tensor):
            grads.append(given if given._data.dtype == out._data.dtype else given.to(out._data.dtype))
            continue
        grads.append(g.astype(out._data.dtype, copy=False))
    if len(grad_outputs) != len(outputs):            # (after the checks of each pair, as PyTorch's engine)
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (``Tensor.backward`` calls this).

    With ``inputs`` (a tensor or a sequence), only those tensors' ``.grad`` receive gradients; they may be
    leaves or intermediate results, as in PyTorch.

    With ``create_graph=True`` the backward pass is itself recorded: ``.grad`` gets a ``grad_fn`` and can be
    differentiated again (``retain_graph`` then defaults to True, as in PyTorch).
    """
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter "
                      "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
                      "creating the graph to avoid this. If you have to use this function, make sure to reset the "
                      ".grad fields of your parameters to None after use to break the cycle and avoid the leak.",
                      UserWarning, stacklevel=3)
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    upstream = _upstream(tensors, grad_tensors, create_graph)
    if inputs is None:
        run_backward(tensors, upstream, retain_graph=bool(retain_graph), create_graph=create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    grads = run_backward(tensors, upstream, retain_graph=bool(retain_graph), inputs=inputs, create_graph=create_graph)
    for t, g in zip(inputs, grads):
        if g is not None:
            accumulate(t, g)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``grad(..., is_grads_batched=True)``: the first dimension of each grad_output is a batch; the gradients for
    each of its entries, stacked along a new first dimension (PyTorch computes them with vmap, minigrad in a loop
    over the batch, the graph kept until the last)."""
    from ..ops.shape import stack
    outputs = _as_tuple(outputs)
    if grad_outputs is None:
        raise RuntimeError("grad(..., is_grads_batched=True) needs grad_outputs: each with a batch dimension first")
    grad_outputs = _as_tuple(grad_outputs)
    for i, (g, out) in enumerate(zip(grad_outputs, outputs)):
        if g is None or tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               f"the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                               f"shape of {list(getattr(g, 'shape', []))} and output[{i}] has a shape of "
                               f"{list(out.shape)}.")
    batch = grad_outputs[0].shape[0]
    if any(g.shape[0] != batch for g in grad_outputs):
        raise RuntimeError("grad(..., is_grads_batched=True): every grad_output needs the same batch size, got "
                           f"{[g.shape[0] for g in grad_outputs]}")
    retain = create_graph if retain_graph is None else retain_graph
    per_entry = [grad(outputs, inputs, [g[b] for g in grad_outputs], retain_graph=retain or b < batch - 1,
                      create_graph=create_graph, allow_unused=allow_unused)
                 for b in range(batch)]
    # an unused input's gradient, materialized, is zeros of its own shape (no batch dimension), as PyTorch's
    from ..creation import zeros_like
    return tuple(stack(list(gs)) if gs[0] is not None else zeros_like(t) if materialize_grads else None
                 for gs, t in zip(zip(*per_entry), _as_tuple(inputs)))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated into ``.grad``.

    ``create_graph=True`` records the backward pass, so the returned gradients can be differentiated again
    (Hessians, gradient penalties); ``retain_graph`` then defaults to True. ``materialize_grads=True`` returns
    zeros instead of None for inputs the outputs do not depend on (and implies ``allow_unused``).
    """
    from ..tensor import Tensor
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if retain_graph is None:
        retain_graph = create_graph
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad (input {i})")
    grad_outputs = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    grads = run_backward(outputs, _upstream(outputs, grad_outputs, create_graph), retain_graph=bool(retain_graph),
                         inputs=inputs, create_graph=create_graph)
    if not allow_unused and any(g is None for g in grads):
        unused = next(i for i, g in enumerate(grads) if g is None)
        raise RuntimeError(f"The differentiated Tensor at index {unused} appears to not have been used in the graph. "
                           "Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        grads = [Tensor(np.zeros_like(t._data), requires_grad=create_graph) if g is None else g
                 for t, g in zip(inputs, grads)]
    return tuple(None if g is None else g if isinstance(g, Tensor) else Tensor(g) for g in grads)
