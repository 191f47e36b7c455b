"""The backward pass: walk the graph in reverse topological order, without recursion.

1. Count, for every node reachable from the roots, how many edges point at it
   (an explicit stack, so a 100,000-op chain needs no recursion).
2. Start from the roots with their upstream gradients. A node runs its ``backward``
   once, when every consumer has delivered its share (its count drops to zero);
   shares arriving from several consumers (diamonds, reuse) are summed first.
3. Each returned gradient is fitted to its input: broadcast dimensions summed away
   and cast to the input's dtype, in ``fit_gradient``, the one place this happens.
4. Leaves are counted like nodes: once all their shares have arrived, their hooks run
   once on the sum and it accumulates into ``.grad`` with ``+=``. Saved arrays are freed
   as each node finishes unless ``retain_graph=True``.

The first gradient a leaf receives becomes its ``.grad``. It is copied unless the engine can
prove that nothing else references the array, because ``.grad`` is later changed in place
(``+=`` by the next backward, ``zero_grad``, ``clip_grad_norm_``) and must not write through
into anything else. The engine *owns* (hands over without a copy) an array that:

* it made itself (a sum of several shares, or ``fit_gradient``'s reduction or cast), or
* a backward returned from a Function that declares ``fresh_gradients = True`` (its backward
  returns newly allocated arrays and keeps no reference to them), provided the array shares
  no memory with the incoming gradient (a pass-through, as Add's) or with another gradient
  the same call returned (one array for two inputs);

and that no hook has seen (a hook may keep it). The gradients passed to ``backward()`` (the
user's arrays), ``retain_grad`` results and ``autograd.grad`` results are never owned.
Skipping the copy saves a full pass over each parameter-sized gradient (4 ms for a 32 MB
input gradient on 2 cores).
"""
import numpy as np

from .function import Context
from .version import bump

Tensor = None  # minigrad.tensor sets this once the class exists (importing it here would be circular)


def fit_gradient(grad, meta, node, index):
    """Sum ``grad`` down to the input's shape (undo broadcasting) and cast it to the input's dtype.

    A complex gradient reaching a real input keeps its real part, as in PyTorch: for a real x feeding a
    complex z, dL/dx = Re(conj(dz/dx) * grad), and every backward returns ``grad * conj(dz/dx)``."""
    shape, dtype = meta
    grad = np.asarray(grad)
    if grad.dtype.kind == "c" and dtype.kind != "c":
        grad = grad.real
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, grad.shape[lead:])):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got shape "
                f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
        axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1)
        grad = grad.sum(axis=axes).reshape(shape)
    if grad.dtype != dtype:
        grad = grad.astype(dtype)
    return grad


def _run_hooks(hooks, grad):
    for hook in hooks:
        result = hook(Tensor(grad))
        if result is not None:
            grad = np.asarray(result._data if isinstance(result, Tensor) else result)
    return grad


def accumulate(tensor, grad, owned=False):
    """Add ``grad`` (an ndarray) into ``tensor.grad``. The first time, ``.grad`` is a copy in the tensor's
    dtype, or ``grad`` itself if ``owned`` (nothing else references it, see the module docstring) and it
    already is a writeable C-contiguous array of that dtype."""
    if tensor.grad is None:
        if owned and grad.dtype == tensor._data.dtype and grad.flags.writeable and grad.flags.c_contiguous:
            tensor.grad = Tensor(grad)
        else:
            tensor.grad = Tensor(np.array(grad, dtype=tensor._data.dtype, copy=True))
    else:
        tensor.grad._data += grad
        bump(tensor.grad._data)  # an in-place write into .grad, as PyTorch counts it


def _private(raw, incoming, outputs, index):
    """Whether ``raw``, the gradient at ``index`` of a ``fresh_gradients`` backward's ``outputs``, shares no
    memory with the gradient the backward received or with any other gradient it returned."""
    if np.may_share_memory(raw, incoming):
        return False
    for j, other in enumerate(outputs):
        if j != index and other is not None:
            other = other._data if isinstance(other, Tensor) else other
            if isinstance(other, np.ndarray) and np.may_share_memory(raw, other):
                return False
    return True


def _count_dependencies(roots):
    """How many edges point at each node and leaf reachable from ``roots`` (explicit stack, no recursion)."""
    deps = {}
    stack = [r for r in roots if isinstance(r, Context)]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt in node.next_edges:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if isinstance(nxt, Context) and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def run_backward(tensors, grads, retain_graph=False, inputs=None):
    """Backpropagate ``grads`` (ndarrays) from ``tensors``.

    With ``inputs=None`` gradients accumulate into the leaves' ``.grad``.
    Otherwise nothing is accumulated and the gradients of ``inputs`` are returned
    (``None`` for an input the outputs do not depend on); this is ``autograd.grad``.
    """
    capture = None if inputs is None else {id(t): None for t in inputs}
    capture_nodes = {} if inputs is None else {t.grad_fn: id(t) for t in inputs if t.grad_fn is not None}

    def deliver(target, grad, owned=False):
        """Hand a finished gradient to a leaf (or to a captured input); ``owned``: the engine owns ``grad``."""
        if capture is not None:
            if id(target) in capture:
                grad = _run_hooks(target._hooks, grad)
                prev = capture[id(target)]
                capture[id(target)] = grad if prev is None else prev + grad
            return
        if target.requires_grad:
            if target._hooks:                       # a hook may keep the array: never hand it over
                accumulate(target, _run_hooks(target._hooks, grad))
            else:
                accumulate(target, grad, owned)

    pending = {}
    owned = set()  # the keys of ``pending`` whose array the engine owns (module docstring)
    roots = []
    for t, g in zip(tensors, grads):
        if t.grad_fn is None:
            deliver(t, g)
            continue
        node = t.grad_fn
        pending[node] = g if node not in pending else pending[node] + g
        roots.append(node)

    deps = _count_dependencies(roots)
    ready = [n for n in dict.fromkeys(roots) if deps.get(n, 0) == 0]
    while ready:
        node = ready.pop()
        grad = pending.pop(node, None)
        owned.discard(node)
        if grad is not None:
            if node.freed:
                node.saved_tensors  # raises the "backward through the graph a second time" error
            if node.pre_hooks:
                grad = _run_hooks(node.pre_hooks, grad)
            if node.retained is not None:
                out = node.retained()
                if out is not None and capture is None:
                    accumulate(out, grad)
            if node in capture_nodes:
                key = capture_nodes[node]
                capture[key] = grad if capture[key] is None else capture[key] + grad
            in_grads = node.fn.backward(node, Tensor(grad))
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if len(in_grads) != len(node.next_edges):
                raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                                   f"(expected {len(node.next_edges)}, got {len(in_grads)})")
            if not retain_graph:
                node.release()
        else:
            in_grads = (None,) * len(node.next_edges)

        fresh = grad is not None and getattr(node.fn, "fresh_gradients", False)
        for i, (nxt, g) in enumerate(zip(node.next_edges, in_grads)):
            if nxt is None:
                continue
            if g is not None:
                raw = g._data if isinstance(g, Tensor) else g
                g = fit_gradient(raw, node.input_meta[i], node, i)
                if nxt in pending:                  # a new array: the sum of the shares
                    pending[nxt] = pending[nxt] + g
                    owned.add(nxt)
                else:
                    pending[nxt] = g
                    made_here = isinstance(raw, np.ndarray) and not np.may_share_memory(g, raw)  # summed or cast
                    if made_here or (fresh and _private(raw, grad, in_grads, i)):
                        owned.add(nxt)
            deps[nxt] -= 1
            if deps[nxt] == 0:  # every share has arrived: a node runs, a leaf receives its whole gradient once
                if isinstance(nxt, Context):
                    ready.append(nxt)
                elif nxt in pending:
                    deliver(nxt, pending.pop(nxt), nxt in owned)
                    owned.discard(nxt)

    if capture is not None:
        return [capture[id(t)] for t in inputs]
    return None
