"""The backward pass: walk the graph in reverse topological order, without recursion.

1. Count, for every node and leaf reachable from the roots, how many edges point at it
   (an explicit stack, so a 100,000-op chain needs no recursion).
2. Start from the roots with their upstream gradients. A node runs its ``backward`` once, when every
   consumer has delivered its share (its count drops to zero); shares arriving from several consumers
   (diamonds, reuse) are summed first.
3. Each returned gradient is fitted to its input: broadcast dimensions summed away and cast to the
   input's dtype, in ``fit_gradient``, the one place this happens.
4. A leaf, once all its shares have arrived, receives their sum: its hooks run once on it and it
   accumulates into ``.grad``. Saved arrays are freed as each node finishes unless ``retain_graph``.

``run_backward`` below is that walk. What the walk hands its results to is a *sink*: ``Accumulate``
(``backward()``: into the leaves' ``.grad``) or ``Capture`` (``autograd.grad``: returned, nothing
accumulated).

With ``create_graph=True`` the same walk carries Tensors instead of ndarrays, with recording on: each
node runs its ``graph_backward`` (the backward written with minigrad ops, so that the gradient it
returns has a graph of its own), shares are summed and fitted with minigrad ops, and a leaf's ``.grad``
is a Tensor with a ``grad_fn``. Those gradients can then be differentiated again, to any order.

A leaf's first gradient becomes its ``.grad`` without a copy when nothing else references the array
or the memory it views (``unshared``): no other leaf, no hook, no saved context, not the caller's
upstream gradient. ``.grad`` is later changed in place (``+=`` by the next backward, ``zero_grad``,
``clip_grad_norm_``), so an array that anything else can see must be copied first. Whether anything
else references it, Python itself counts: the reference counts of the array and of the arrays whose
memory it views (where the kernels' memory pool's own reference to a block it lent out does not count:
``kernels/buffers.py``). Skipping the copy saves a pass over each parameter-sized gradient (4 ms for a 32 MB
input gradient on 2 cores).
"""
import sys
import threading

import numpy as np

from ..dtypes import is_differentiable
from ..kernels import buffers
from . import grad_mode
from .function import Context, Function
from .version import bump, writes

Tensor = None  # minigrad.tensor sets this once the class exists (importing it here would be circular)
wrap = None    # and its fast Tensor(array) for an ndarray (tensor.wrap)


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


def fit_graph(grad, meta, node, index):
    """``fit_gradient`` for a gradient that is a Tensor in a graph (create_graph=True): the sum over the
    broadcast dimensions and the cast are minigrad ops, so they are differentiated too."""
    shape, dtype = meta
    if not isinstance(grad, Tensor):
        grad = Tensor(np.asarray(grad))
    if grad._data.dtype.kind == "c" and dtype.kind != "c":
        grad = grad.real
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, grad.shape[lead:])):
            fit_gradient(grad._data, meta, node, index)     # raises the error naming both shapes
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != dtype:
        grad = grad.to(dtype)
    return grad


def unshared(grad):
    """Whether nothing references ``grad``, or the memory it is a view of, but the caller's one local
    variable: no other leaf, hook, saved context or caller (the reference counts below say so)."""
    if sys.getrefcount(grad) != _ONE_HOLDER:
        return False
    base = grad.base
    while base is not None:          # a view: its memory is its base's, which only the view may hold
        if not isinstance(base, np.ndarray) or sys.getrefcount(base) - buffers.lends(base) != _HELD_BY_ITS_VIEW:
            return False             # (a block of the kernels' memory pool: the pool's reference does not count)
        base = base.base
    return True


def _count_refs(grad):
    return sys.getrefcount(grad)


def _count_base_refs(view):
    base = view.base
    return sys.getrefcount(base)


def _calibrate():
    """The counts ``unshared`` expects, measured on arrays held exactly as ``run_backward`` holds them."""
    shares = {0: np.empty(4)}
    grad = shares.pop(0)
    one_holder = _count_refs(grad)
    view = np.empty(4).reshape(2, 2)
    return one_holder, _count_base_refs(view)


_ONE_HOLDER, _HELD_BY_ITS_VIEW = _calibrate()


def run_hooks(hooks, grad):
    """Each hook sees the gradient as a Tensor; one that returns a value replaces it. A gradient that is
    a Tensor (create_graph=True) stays one, so that what the hook computed is part of the graph. As in
    PyTorch, a hook must return None or a Tensor of the gradient's shape and dtype."""
    as_tensor = isinstance(grad, Tensor)
    value = grad if as_tensor else Tensor(grad)
    for hook in hooks:
        result = hook(value)
        if result is not None:
            value = _checked_hook_result(hook, result, value)
    return value if as_tensor else value._data


def _checked_hook_result(hook, result, grad):
    """``result`` if it can replace ``grad``; PyTorch's errors for another type, shape or dtype."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Tensor, but hook returned '{type(result).__name__}'")
    if result.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value (was {list(grad.shape)}, got "
                           f"{list(result.shape)})")
    if result.dtype != grad.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.dtype} got {result.dtype})")
    return result


def _same_layout(grad, like):
    """Whether ``grad`` is laid out as ``like`` is: both row-major, or both with the same strides."""
    return grad.flags.c_contiguous if like.flags.c_contiguous else grad.strides == like.strides


def accumulate(tensor, grad, alone=False):
    """Add ``grad`` (an ndarray) into ``tensor.grad``. The first time, ``.grad`` is ``grad`` itself if
    ``alone`` (nothing else references it) and it is a writeable array of the tensor's dtype and layout
    (C-contiguous for a C-contiguous tensor), a copy in the tensor's layout otherwise.

    A Tensor ``grad`` (create_graph=True) is kept with its graph: ``.grad`` becomes it, or ``.grad + grad``
    (out of place, as PyTorch does, so the sum is differentiable too). A sparse one: ``sparse/gradients.py``."""
    if isinstance(grad, Tensor):
        if grad.is_sparse:
            return sparse_gradients().accumulate(tensor, grad)
        old = tensor._grad       # (not the property, which warns when read on a non-leaf)
        total = grad if old is None else grad + old if old.is_sparse else old + grad   # (sparse + dense is refused)
        if total.shape == tensor.shape:
            tensor.grad = total
        else:                                # a retained gradient of a tensor reshaped in place since: its shape
            tensor._grad = total             # (not the setter, which refuses another shape)
        return
    if tensor._grad is None:
        if alone and grad.dtype == tensor._data.dtype and grad.flags.writeable and _same_layout(grad, tensor._data):
            tensor.grad = Tensor(grad)
        else:                                # laid out like the tensor (PyTorch's layout contract for .grad); a
            #                                      retained gradient of a tensor reshaped in place since keeps its shape
            like = tensor._data
            copy = np.empty_like(like) if like.shape == grad.shape else np.empty(grad.shape, like.dtype)
            copy[...] = grad
            tensor._grad = Tensor(copy)      # (not the setter, which refuses another shape)
    elif tensor._grad.is_sparse:             # a dense share after sparse ones: .grad becomes dense (PyTorch's order)
        tensor._grad = Tensor(sparse_gradients().add(tensor._grad, grad))
    else:
        tensor._grad._data += grad
        bump(tensor._grad._data)  # an in-place write into .grad, as PyTorch counts it


_any_post_hooks = False   # whether any tensor ever had a post-accumulate-grad hook: else the sink skips the look-up


def post_accumulate_hooks(tensor):
    """The list of ``tensor``'s post-accumulate-grad hooks (``Tensor.register_post_accumulate_grad_hook``),
    created on first use: each ``hook(tensor)`` runs after a backward accumulated into ``tensor.grad``."""
    global _any_post_hooks
    hooks = getattr(tensor, "_post_accumulate_hooks", None)
    if hooks is None:
        hooks = tensor._post_accumulate_hooks = []
        _any_post_hooks = True
    return hooks


class Accumulate:
    """``backward()``: leaves receive their gradient in ``.grad`` (after their hooks); ``retain_grad``
    tensors receive a copy of their node's."""

    at_node = ()   # no gradient is captured at a node (``Capture``'s are): the engine calls ``node`` only for retain_grad

    def leaf(self, tensor, grad, alone):
        if tensor._grad_fn is not None:             # written in place since it was used as a leaf
            raise RuntimeError("leaf variable has been moved into the graph interior")
        if tensor.requires_grad:
            if tensor._hooks:                       # a hook may keep the array: never hand it over
                accumulate(tensor, run_hooks(tensor._hooks, grad))
            else:
                accumulate(tensor, grad, alone)
            post_hooks = _any_post_hooks and getattr(tensor, "_post_accumulate_hooks", None)   # unset if none
            if post_hooks:
                for hook in list(post_hooks):
                    hook(tensor)

    def node(self, node, grad, before_hooks=None):
        if node.retained is not None:
            out = node.retained()
            if out is not None:
                accumulate(out, grad)

    def result(self):
        return None


class Capture:
    """``autograd.grad``: the gradients of ``inputs`` (leaves, or non-leaves at their ``grad_fn``) are
    summed and returned; nothing accumulates into ``.grad``."""

    def __init__(self, inputs):
        self.inputs = inputs
        self.grads = {id(t): None for t in inputs}
        self.at_node = {t.grad_fn: id(t) for t in inputs if t.grad_fn is not None}

    def _add(self, key, grad):
        total = self.grads[key]
        if total is None:
            self.grads[key] = grad
        elif getattr(total, "is_sparse", False) or getattr(grad, "is_sparse", False):
            self.grads[key] = sparse_gradients().add(total, grad)
        else:
            self.grads[key] = total + grad

    def leaf(self, tensor, grad, alone):
        if id(tensor) in self.grads:
            self._add(id(tensor), run_hooks(tensor._hooks, grad))

    def node(self, node, grad, before_hooks=None):
        """``grad`` after the output tensor's hooks; ``before_hooks``, when the node goes on to run its backward:
        PyTorch then captures an input's gradient before its hooks (``grad(y, [x, h])`` gives ``h`` the gradient
        its hooks saw, ``x`` the one they returned), and after them when the node does not run (``grad(y, [h])``)."""
        if node in self.at_node:
            self._add(self.at_node[node], grad if before_hooks is None else before_hooks)
        if node.retained is not None:               # retain_grad() tensors get their .grad here too, as in PyTorch
            Accumulate.node(self, node, grad)

    def result(self):
        return [self.grads[id(t)] for t in self.inputs]


class _Running(threading.local):
    """Per thread, per backward running (a hook may start another backward), innermost last: its queued
    callbacks, and what its walk will reach (``will_execute``). Threads run their own backward passes
    independently."""

    def __init__(self):
        self.callbacks = []
        self.reached = []      # per walk: (its dependency counts, its roots, the nodes needed or None, its sink)


_running = _Running()


def queue_callback(callback):
    """Run ``callback()`` once the backward now running has finished its walk (every ``.grad`` accumulated),
    as ``torch.autograd.Variable._execution_engine.queue_callback`` does; ``DistributedDataParallel`` waits
    for its all-reduces there."""
    if not _running.callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _running.callbacks[-1].append(callback)


def backward_running():
    """Whether a backward pass is running in this thread (PyTorch: ``torch._C._current_graph_task_id() != -1``)."""
    return bool(_running.callbacks)


def will_execute(key):
    """Whether the innermost backward running in this thread will run ``key`` (a node) or hand a leaf its
    gradient (``key`` a leaf tensor): PyTorch's ``torch._C._will_engine_execute_node``. ``register_multi_grad_hook``
    asks it, to know which gradients to wait for."""
    if not _running.reached:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    deps, roots, needed, sink = _running.reached[-1]
    if not isinstance(key, Context) and needed is not None:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    if key not in deps:
        # a root: PyTorch starts a pass from one root's node itself, which it then does not count as one it will
        # run; from several roots, it starts from a node above them, and counts them
        if not any(key is root for root in roots) or len(roots) == 1:
            return False
    return needed is None or key in needed or key in sink.at_node


def count_dependencies(starts, needed=None):
    """How many edges point at each node and leaf reachable from ``starts`` (explicit stack, no recursion); with
    ``needed``, only the edges leaving nodes in it count (a pruned walk, see ``needed_nodes``)."""
    deps = {}
    stack = [s for s in starts if isinstance(s, Context) and (needed is None or s in needed)]
    roots = set(stack)
    while stack:
        for nxt in stack.pop().next_edges:
            if nxt is None:
                continue
            count = deps.get(nxt, 0)
            deps[nxt] = count + 1
            if not count and isinstance(nxt, Context) and nxt not in roots and (needed is None or nxt in needed):
                stack.append(nxt)   # reached for the first time
    return deps


def needed_nodes(starts, targets):
    """The nodes whose backward must run for gradients to reach ``targets`` (leaves, or the nodes of non-leaf
    inputs): those with a path to one. ``autograd.grad`` and ``backward(inputs=...)`` run only these, as PyTorch
    does, so a node on no such path never runs (nor raises). Depth first, post-order, without recursion."""
    needed, done = set(), set()
    for start in starts:
        if not isinstance(start, Context) or start in done:
            continue
        stack = [(start, iter(start.next_edges))]
        done.add(start)
        while stack:
            node, edges = stack[-1]
            for nxt in edges:
                if isinstance(nxt, Context) and nxt not in done:
                    done.add(nxt)
                    stack.append((nxt, iter(nxt.next_edges)))
                    break
            else:
                stack.pop()
                if any(e is not None and (e in targets or e in needed) for e in node.next_edges):
                    needed.add(node)
    return needed


def run_node(node, grad, sink, retain_graph, graph=False):
    """Run one node's backward on its summed gradient; returns one gradient (or None) per input edge.

    The one runner of both walks. ``graph`` (create_graph=True): ``grad`` is a Tensor and recording is on; the
    node's ``graph_backward`` runs (or, for a Function without one, its ``backward`` with the saved tensors
    joined to the graph, its results marked ``NotDifferentiableTwice``), so the gradients are Tensors with a graph."""
    if node.freed:
        node.saved_tensors  # raises the "backward through the graph a second time" error
    if node.watched and writes[0] != node.saved_at:
        node._check_versions()          # arrays PyTorch saves that this backward does not read (Context.watch)
    hooked = run_hooks(node.pre_hooks, grad) if node.pre_hooks else grad
    if node.retained is not None or sink.at_node:      # (the call only when the sink has something to do)
        sink.node(node, hooked, grad)
    grad = hooked
    fn = node.fn
    graph_backward = getattr(fn, "graph_backward", None) if graph else None
    if graph_backward is not None:
        in_grads = graph_backward(node, grad)
    elif graph:
        saved = node.saved
        node.saved = node.graph_saved()
        try:
            in_grads = fn.backward(node, grad)
        finally:
            node.saved = saved
    else:
        backward = fn.backward
        if node.low_precision is None:              # low_precision.py's wrapper would only pass the call on
            backward = getattr(backward, "_minigrad_plain", backward)
        in_grads = backward(node, wrap(grad) if type(grad) is np.ndarray else Tensor(grad))  # (0-d sums: scalars)
    in_grads = list(in_grads) if isinstance(in_grads, tuple) else [in_grads]
    if len(in_grads) != len(node.next_edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node.next_edges)}, got {len(in_grads)})")
    if grad_mode._state.anomaly:
        check_nan(node, in_grads)
    if graph and graph_backward is None:   # what a plain backward returned is right but may not be differentiable
        for i, g in enumerate(in_grads):
            if g is not None and not (isinstance(g, Tensor) and g.requires_grad) and _maybe_not_constant(fn, g):
                value = g if isinstance(g, Tensor) else Tensor(np.asarray(g))
                in_grads[i] = NotDifferentiableTwice.apply(value, grad, *_stand_ins(node), name=node.name())
    if node.post_hooks:
        in_grads = _run_post_hooks(node, in_grads, grad)
    if not retain_graph:
        node.release()
    return in_grads


def _run_post_hooks(node, in_grads, grad):
    """The node's ``register_hook`` hooks: ``fn(grad_inputs, grad_outputs)``; a returned tuple replaces the gradients
    the node hands its inputs (one per input, None where there is none)."""
    as_tensor = lambda g: g if g is None or isinstance(g, Tensor) else Tensor(np.asarray(g))   # noqa: E731
    grad_inputs = tuple(as_tensor(g) for g in in_grads)
    grad_outputs = (as_tensor(grad),)
    for hook in list(node.post_hooks):
        result = hook(grad_inputs, grad_outputs)
        if result is not None:
            result = tuple(result)
            if len(result) != len(grad_inputs):
                raise RuntimeError(f"hook '{getattr(hook, '__name__', 'hook')}' has returned an incorrect number of "
                                   f"values (got {len(result)}, but expected {len(grad_inputs)})")
            grad_inputs = tuple(as_tensor(g) for g in result)
    return list(grad_inputs)


def sparse_gradients():
    """``minigrad.sparse.gradients`` (imported when a sparse gradient first appears: it needs the Tensor class)."""
    from ..sparse import gradients
    return gradients


def _added(total, g, node, i):
    """``total + g``, two shares of one gradient; PyTorch's error if their shapes cannot add (a leaf whose shape
    changed in place under no_grad, ``x.t_()``, between the ops that used it)."""
    if (type(total) is not np.ndarray or type(g) is not np.ndarray) and (getattr(total, "is_sparse", False)
                                                                        or getattr(g, "is_sparse", False)):
        return sparse_gradients().add(total, g)
    try:
        return total + g
    except ValueError:
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                           f"{list(g.shape)} but expected shape compatible with {list(total.shape)}") from None


def check_nan(node, in_grads):
    """Anomaly detection (``detect_anomaly``): PyTorch's error when a backward function returned NaN."""
    if not grad_mode._state.anomaly_check_nan:
        return
    for i, g in enumerate(in_grads):
        array = g._data if isinstance(g, Tensor) else g
        if isinstance(array, np.ndarray) and is_differentiable(array.dtype) and np.isnan(array).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _user_function(fn):
    """The Function a node runs: a user's Function with several outputs runs through ``custom_function.Packed``."""
    return getattr(fn, "user", None) or fn


def _is_library(fn):
    """Whether ``fn`` is one of minigrad's own Functions (not a user's, nor a custom op's ``register_autograd``)."""
    user = _user_function(fn)
    return not getattr(user, "written_by_user", not user.__module__.startswith("minigrad."))


def _maybe_not_constant(fn, g):
    """Whether a gradient ``g`` that a backward without ``graph_backward`` returned under ``create_graph``, and that
    does not require grad, must be marked ``NotDifferentiableTwice`` rather than taken as a constant.

    minigrad's own such backwards work on arrays, and a ``once_differentiable`` backward says it cannot be
    differentiated: always (PyTorch marks the latter only when its gradient outputs require grad, and otherwise
    lets a second derivative through it come out silently zero). A user's backward written with minigrad ops is
    taken as PyTorch takes it: it returned what autograd recorded, so a Tensor that does not require grad is a
    constant (the gradient of ``Triple.apply(x).sum()`` does not depend on x). Arrays a user's backward returns
    are marked: they have no history, and PyTorch would not take them at all."""
    if _is_library(fn):
        return True
    if getattr(_user_function(fn).backward, "once_differentiable", False):
        return True
    return not isinstance(g, Tensor)


class NotDifferentiableTwice(Function):
    """Stands for a gradient computed by a backward that has no ``graph_backward`` (a user Function whose
    backward works on arrays, or one marked ``once_differentiable``): the gradient is right, but
    differentiating it again raises instead of silently giving zero."""

    @staticmethod
    def forward(ctx, value, *inputs, name):
        ctx.op = name
        return value._data

    @staticmethod
    def backward(ctx, dout):
        raise RuntimeError(f"trying to differentiate twice a function that was marked with @once_differentiable "
                           f"or whose backward is not written with minigrad ops: {ctx.op} (create_graph=True "
                           "needs a backward built from differentiable minigrad operations, or a graph_backward)")


def _stand_ins(node):
    """Tensors at the places of ``node``'s inputs in the graph (values unused): a gradient that a plain
    backward computed depends on them, so differentiating it again must reach ``NotDifferentiableTwice``
    rather than silently count it as a constant."""
    out = []
    for edge, meta in zip(node.next_edges, node.input_meta):
        if isinstance(edge, Tensor):
            out.append(edge)
        elif edge is not None:
            t = Tensor(np.broadcast_to(np.zeros((), meta[1]), meta[0]))
            t._grad_fn, t._requires_grad = edge, True
            out.append(t)
    return out


def run_backward(tensors, grads, retain_graph=False, inputs=None, create_graph=False):
    """Backpropagate ``grads`` (ndarrays) from ``tensors``: into the leaves' ``.grad``, or, with ``inputs``,
    returned as the gradients of ``inputs`` (None for an input the outputs do not depend on).

    With ``create_graph`` the gradients are Tensors and the walk records what it computes."""
    if create_graph:
        with grad_mode.enable_grad():
            return _walk(tensors, [g if isinstance(g, Tensor) else Tensor(g) for g in grads], retain_graph,
                         inputs, True)
    with grad_mode.no_grad():      # as in PyTorch: a backward records nothing unless create_graph (hooks, unpacking)
        return _walk(tensors, grads, retain_graph, inputs, False)


def _walk(tensors, grads, retain_graph, inputs, graph):
    """``_walk_graph``, then the callbacks queued during it (``queue_callback``), in order."""
    queued = []
    callbacks = _running.callbacks
    callbacks.append(queued)
    try:
        result = _walk_graph(tensors, grads, retain_graph, inputs, graph)
        while queued:                               # a callback may queue another
            queued.pop(0)()
    finally:
        callbacks.pop()
    return result


def _run_pruned(node, grad, sink, retain_graph, graph, needed):
    """``run_node`` for ``autograd.grad``: minigrad's own backward computes only the gradients on the way to the
    inputs asked for (its ``needs_input_grad`` narrowed while it runs), as PyTorch's nodes do. A user's Function
    keeps the ``needs_input_grad`` of its forward, as in PyTorch."""
    wanted = tuple([bool(n) and edge is not None and (edge in needed or edge in sink.at_node or
                                                      (not isinstance(edge, Context) and id(edge) in sink.grads))
                    for n, edge in zip(node.needs_input_grad, node.next_edges)])
    if wanted == node.needs_input_grad:
        return run_node(node, grad, sink, retain_graph, graph)
    recorded, node.needs_input_grad = node.needs_input_grad, wanted
    try:
        return run_node(node, grad, sink, retain_graph, graph)
    finally:
        node.needs_input_grad = recorded


def _walk_graph(tensors, grads, retain_graph, inputs, graph):
    """The walk of the module docstring, on arrays, or on Tensors with a graph (``graph``, create_graph=True)."""
    sink = Accumulate() if inputs is None else Capture(inputs)
    pending = {}                                    # node or leaf -> the sum of the shares arrived so far
    for t, g in zip(tensors, grads):
        key = t if t.grad_fn is None else t.grad_fn
        pending[key] = g if key not in pending else pending[key] + g
    needed = None
    if inputs is not None:
        needed = needed_nodes(list(pending), set(sink.at_node) | {t for t in inputs if t.grad_fn is None})
    deps = count_dependencies(list(pending), needed)
    _running.reached.append((deps, tuple(pending), needed, sink))   # (the roots: a few keys)
    try:
        return _run_walk(pending, deps, needed, sink, retain_graph, graph)
    finally:
        _running.reached.pop()


def _run_walk(pending, deps, needed, sink, retain_graph, graph):
    """The nodes in dependency order: each runs once every share of its gradient has arrived."""
    fit = fit_graph if graph else fit_gradient
    ready = []
    for key in [k for k in pending if deps.get(k, 0) == 0]:
        if isinstance(key, Context):
            ready.append(key)
        else:                                       # a leaf given as a root, used nowhere below
            sink.leaf(key, pending.pop(key), alone=False)

    while ready:
        node = ready.pop()
        grad = pending.pop(node, None)
        if type(grad) is not np.ndarray and getattr(grad, "is_sparse", False):
            grad = sparse_gradients().densify(grad, graph)  # an op's backward takes it dense (PyTorch: if it can't)
        if needed is not None and node not in needed:   # an input's own node, or a node on no path to an input
            if grad is not None and node in sink.at_node:   # (PyTorch runs no hook of a node it neither runs
                sink.node(node, run_hooks(node.pre_hooks, grad) if node.pre_hooks else grad)   # nor captures)
            continue
        if grad is None:
            in_grads = [None] * len(node.next_edges)
        elif needed is not None and _is_library(node.fn):
            in_grads = _run_pruned(node, grad, sink, retain_graph, graph, needed)
        else:
            in_grads = run_node(node, grad, sink, retain_graph, graph)
        for i, nxt in enumerate(node.next_edges):
            if nxt is None:
                continue
            g, in_grads[i] = in_grads[i], None      # the engine holds the only reference it keeps
            if g is not None:
                shape, dtype = node.input_meta[i]
                if graph or type(g) is not np.ndarray or g.shape != shape or g.dtype != dtype:   # else it fits
                    if getattr(g, "is_sparse", False):
                        g = sparse_gradients().fit(g, node.input_meta[i], node, i)
                    else:
                        g = fit(g._data if isinstance(g, Tensor) and not graph else g, node.input_meta[i], node, i)
                pending[nxt] = g if nxt not in pending else _added(pending[nxt], g, node, i)
                del g
            deps[nxt] -= 1
            if deps[nxt] == 0:                      # every share has arrived
                if isinstance(nxt, Context):
                    ready.append(nxt)
                elif nxt in pending:
                    grad = pending.pop(nxt)
                    alone = not graph and type(grad) is np.ndarray and unshared(grad)  # asked before it is passed on
                    sink.leaf(nxt, grad, alone)
    return sink.result()
