"""Activation checkpointing, as ``torch.utils.checkpoint``: memory traded for a second forward.

A training step keeps every intermediate tensor its backward will read, so memory grows with depth. A checkpointed
segment keeps only its inputs; at backward it runs its forward again, recording this time, and backpropagates
through that fresh graph::

    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)   # block's activations are recomputed at backward

The gradients are those of the plain step (the random stream is replayed, so dropout draws the same masks); the
segment's forward runs twice.

How minigrad does it. A segment's gradient flows to more than its tensor arguments: it also reaches the tensors
the function reads from outside (a module's parameters, or a tensor computed earlier and captured by a closure).
So the first forward runs recording, and the graph it made is read for those tensors, the *boundary*: leaves that
require grad, and nodes that existed before the segment ran (``recording_nodes`` tells the nodes the segment made
from the others). That graph is then dropped, and each output becomes a node (``_SegmentOutput``) whose inputs are
the boundary. Its backward recomputes the segment, redirects the recomputed graph's edges at the boundary to
one-input alias nodes, and takes ``autograd.grad`` of the output with respect to the aliases: the walk stops there,
so nothing outside the segment runs twice, and the engine passes the gradients on to the boundary as it would any
node's. Under ``create_graph=True`` the recomputed graph is recorded, so checkpointed segments can be
differentiated twice.

Memory: between forward and backward a segment holds its inputs and outputs. While its first forward runs, each
tensor an op saves for its backward is dropped as it is saved (saved-tensor hooks that keep only its place in the
order, as PyTorch's non-reentrant variant does), so an intermediate is freed as soon as the function lets go of it.
Only a backward inside the segment's own forward reads them (``autograd.grad`` in the function): that runs the segment
a second time and reads the tensors it saves, in the same order. Arrays a few ops keep as ``ctx`` attributes, outside
the saved tensors, are held until the segment ends.
"""
import contextlib
import enum
import warnings

import numpy as np

from .. import autograd
from ..autograd import grad_mode
from ..autograd.function import Context, Function, _joined, recording_nodes
from ..autograd.saved_tensors import hooks_disabled as saved_tensors_disabled
from ..random import default_generator, fork_rng
from ._pytree import tree_map  # noqa: F401  (torch.utils.checkpoint imports it too)
from ..tensor import Tensor

__all__ = ["CheckpointError", "CheckpointFunction", "CheckpointPolicy", "DefaultDeviceType", "SelectiveCheckpointContext",
           "check_backward_validity", "checkpoint", "checkpoint_sequential", "create_selective_checkpoint_contexts",
           "detach_variable", "get_device_states", "noop_context_fn", "set_checkpoint_debug_enabled",
           "set_checkpoint_early_stop", "set_device_states"]


class CheckpointError(RuntimeError):
    """A recomputed segment differs from its first run (``determinism_check``)."""


def noop_context_fn():
    """The default ``context_fn``: no context around the forward, nor around the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# ----------------------------------------------------------------------------------------- checkpoint
def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, its intermediates recomputed at backward instead of kept (module docstring).

    ``use_reentrant``: pass it explicitly, as PyTorch asks (without it, a warning, and True).
    With ``use_reentrant=True`` PyTorch's older variant's rules hold: no keyword arguments for ``function``, no
    ``context_fn`` or ``debug``, only tensors directly in a returned tuple carry gradients, and when no tensor
    argument requires grad the outputs do not either (so the parameters inside receive no gradient).
    ``context_fn`` returns two context managers: one around the forward, one around the recomputation.
    ``determinism_check="default"`` compares the recomputed outputs' shapes and dtypes with the first run's
    (``"none"``: no check). ``preserve_rng_state``: the recomputation draws the random numbers the forward drew.
    ``early_stop`` and ``debug`` change nothing minigrad computes."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if not grad_mode.is_grad_enabled():             # nothing will be differentiated: a plain call
        return function(*args, **kwargs)
    if use_reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        with grad_mode.no_grad():
            return function(*args)
    return _Segment(function, args, kwargs, use_reentrant, context_fn, determinism_check,
                    preserve_rng_state).run()


class _Segment:
    """One checkpointed call: what its recomputation needs, and the recomputed graph while backward uses it."""

    def __init__(self, function, args, kwargs, reentrant, context_fn, determinism_check, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.reentrant, self.context_fn, self.check = reentrant, context_fn, determinism_check == "default"
        self.rng_state = default_generator.snapshot() if preserve_rng_state else None
        self.boundary = []          # tensors (arguments, leaves) and nodes (outside the segment) gradients flow to
        self.stand_ins = []         # per boundary item: a tensor at its place in the graph
        self.recomputed = None      # (outputs, aliases) while backward uses them
        self.count = self.pending = 0   # outputs that require grad; those whose backward has not run yet
        self.dropped = 0            # tensors the ops of the first forward saved (and that were dropped), so far
        self.saved_again = None     # the same tensors from a second run, when a backward inside the forward reads one

    # ------------------------------------------------------------------------------ the forward
    def run(self):
        """The first forward, recording; then each output that requires grad becomes a ``_SegmentOutput`` node."""
        firsts = self._fresh_args()
        forward_context, _ = self.context_fn()
        with recording_nodes() as made, forward_context, self._dropping_saved():
            out = self.function(*firsts, **self.kwargs)
            results = _tensors_in(out, self.reentrant)
            roots = [t.grad_fn for t in results if t.grad_fn is not None]   # (read inside: a view's node is made
        #                                                                     when its grad_fn is first read)
        self.saved_again = None
        given = {id(first): arg for first, arg in zip(firsts, self.args) if isinstance(arg, Tensor)}
        for arg in self.args:
            if isinstance(arg, Tensor) and arg.requires_grad:
                self._add(arg, arg)
        for edge, meta in _edges_leaving(roots, set(made)):
            if id(edge) not in given:               # (the copies of the arguments are the arguments themselves)
                self._add(edge, edge if isinstance(edge, Tensor) else _stand_in(edge, meta))
        self.meta = [(t.shape, t.dtype) for t in results]
        outputs = {}
        for i, t in enumerate(results):
            if id(t) in given:                      # an argument returned as it is
                t = given[id(t)]
            if t.requires_grad and self.boundary:
                self.count += 1
                outputs[id(results[i])] = _SegmentOutput.apply(self, i, t.detach(), *self.stand_ins)
            else:
                outputs[id(results[i])] = t.detach()
        self.pending = self.count
        return _replaced(out, outputs, self.reentrant)

    def _dropping_saved(self):
        """The first forward's hooks: each tensor an op saves is dropped as it is saved (the op's node keeps its
        place in the order), so the segment's intermediates are freed as soon as the function lets go of them, as
        in PyTorch. Only a backward inside the segment's own forward reads them: it gets them from a second run of
        the segment (``_saved_again``). Where this thread's hooks are disabled, everything is kept."""
        if saved_tensors_disabled():
            return contextlib.nullcontext()

        def drop(tensor):
            self.dropped += 1
            return self.dropped - 1

        def from_second_run(place):
            if self.saved_again is None:
                self.saved_again = self._saved_again()
            if place >= len(self.saved_again):
                raise CheckpointError("torch.utils.checkpoint: a backward inside the checkpointed function read a "
                                      "saved tensor that running the function again did not save: the function must "
                                      "compute the same thing when it runs again")
            return self.saved_again[place]

        return autograd.graph.saved_tensors_hooks(drop, from_second_run)

    def _saved_again(self):
        """Run the segment a second time, as the first (its random stream replayed), keeping what its ops save, in
        order: the tensors the first forward dropped."""
        kept = []

        def keep(tensor):
            kept.append(tensor)
            return tensor

        with self._again(), autograd.graph.saved_tensors_hooks(keep, lambda t: t):
            self.function(*self._fresh_args(), **self.kwargs)
        return kept

    def _fresh_args(self):
        """The arguments, each tensor detached (keeping requires_grad): the first forward's own leaves."""
        return [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in self.args]

    @contextlib.contextmanager
    def _again(self):
        """Around a second run of the segment: recording on, the recomputation's context, the random stream replayed."""
        _, recompute_context = self.context_fn()
        rng = contextlib.nullcontext() if self.rng_state is None else _replayed(self.rng_state)
        with grad_mode.enable_grad(), recompute_context, rng:
            yield

    def _add(self, item, stand_in):
        if not any(item is b for b in self.boundary):
            self.boundary.append(item)
            self.stand_ins.append(stand_in)

    # ------------------------------------------------------------------------------ the backward
    def gradients(self, index, dout, graph):
        """The gradients of output ``index`` (upstream ``dout``) for each boundary item; ``graph``: create_graph."""
        if self.recomputed is None:
            self.recomputed = self._recompute()
        results, aliases = self.recomputed
        grads = autograd.grad(results[index], aliases, dout, retain_graph=True, create_graph=graph,
                              allow_unused=True)
        self.pending -= 1
        if self.pending == 0:       # every output has had its backward: drop the recomputed graph (another backward
            self.recomputed = None  # through a retained graph recomputes it)
            self.pending = self.count
        return grads

    def _recompute(self):
        """Run the segment again, recording, with every edge at the boundary led through an alias node."""
        with grad_mode.enable_grad():
            aliases = [_Alias.apply(t) for t in self.stand_ins]
        alias_of = {id(b): a for b, a in zip(self.boundary, aliases)}
        args = [alias_of.get(id(a), a) if isinstance(a, Tensor) else a for a in self.args]
        with self._again(), recording_nodes() as made:
            out = self.function(*args, **self.kwargs)
            results = _tensors_in(out, self.reentrant)
            roots = [t.grad_fn for t in results if t.grad_fn is not None]
        if self.check:
            self._check(results)
        alias_nodes = {id(b): a.grad_fn for b, a in zip(self.boundary, aliases)}
        unknown = _redirect(roots, set(made), alias_nodes)
        if unknown and self.check:
            raise CheckpointError(f"torch.utils.checkpoint: the recomputed segment reads {unknown} tensor(s) that "
                                  "require grad which its forward did not read, so their gradients would be lost; "
                                  "a checkpointed function must compute the same thing when it runs again")
        return results, aliases

    def _check(self, results):
        """``determinism_check="default"``: the recomputed outputs have the first run's shapes and dtypes."""
        recomputed = [(t.shape, t.dtype) for t in results]
        if recomputed == self.meta:
            return
        lines = ["torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                 "during the forward pass."]
        for i, (first, again) in enumerate(zip(self.meta, recomputed)):
            if first != again:
                lines.append(f"tensor at position {i}:\nsaved metadata: {{'shape': {first[0]}, 'dtype': {first[1]}}}"
                             f"\nrecomputed metadata: {{'shape': {again[0]}, 'dtype': {again[1]}}}")
        if len(recomputed) != len(self.meta):
            lines.append(f"the segment returned {len(recomputed)} tensors when recomputed, {len(self.meta)} at first")
        raise CheckpointError("\n".join(lines))


class _SegmentOutput(Function):
    """Output ``index`` of a checkpointed segment, a node whose inputs are the segment's boundary tensors."""

    @staticmethod
    def forward(ctx, segment, index, value, *boundary):
        ctx.segment, ctx.index = segment, index
        return value._data

    @staticmethod
    def backward(ctx, dout):
        return (None, None, None, *ctx.segment.gradients(ctx.index, dout, graph=False))

    @staticmethod
    def graph_backward(ctx, dout):
        return (None, None, None, *ctx.segment.gradients(ctx.index, dout, graph=True))


class _Alias(Function):
    """The identity, as a node of its own: the recomputed graph's edges at the boundary lead here, so that
    ``autograd.grad`` captures the boundary's gradients without walking on into the graph outside the segment."""

    @staticmethod
    def forward(ctx, t):
        return t._data

    @staticmethod
    def backward(ctx, dout):
        return dout

    graph_backward = backward


# ----------------------------------------------------------------------------------------- around it
def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules) on ``input`` in ``segments`` consecutive
    segments of ``len(functions) // segments`` modules, each but the last checkpointed (``checkpoint``); the last
    holds the rest and runs as usual. ``preserve_rng_state`` may be passed as a keyword."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint_sequential without use_reentrant will "
                      "raise an exception. use_reentrant=False is recommended, but if you need to preserve the "
                      "current default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
                      "the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not isinstance(segments, int) or not 1 <= segments <= len(functions):
        raise ValueError(f"checkpoint_sequential: segments must be an int from 1 to the number of functions "
                         f"({len(functions)}), got {segments!r}")

    def run(part):
        def segment(x):
            for f in part:
                x = f(x)
            return x
        return segment

    size = len(functions) // segments
    for start in range(0, size * (segments - 1), size):
        input = checkpoint(run(functions[start:start + size]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(functions[size * (segments - 1):])(input)


_debug = [False]


@contextlib.contextmanager
def _debug_set(enabled):
    before = _debug[0]
    _debug[0] = enabled
    try:
        yield
    finally:
        _debug[0] = before


def set_checkpoint_debug_enabled(enabled):
    """Context manager recording whether checkpoint's debug mode is on (minigrad's errors say the same either way)."""
    return _debug_set(enabled)


def set_checkpoint_early_stop(enable):
    """Context manager accepted as PyTorch's: minigrad always recomputes a whole segment, so nothing changes."""
    return contextlib.nullcontext()


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output (``create_selective_checkpoint_contexts``)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpointing policy function receives: whether the call is the recomputation."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute, self.op_output = is_recompute, op_output


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The two contexts ``checkpoint(..., context_fn=...)`` takes for selective checkpointing. A stand-in: minigrad
    recomputes every op of the segment, whatever the policy (results are the same; more is recomputed)."""
    if not (callable(policy_fn_or_list) or isinstance(policy_fn_or_list, (list, tuple))):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Each tensor of the tuple ``inputs`` detached, keeping its requires_grad (other items as they are)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs)


def check_backward_validity(inputs):
    """PyTorch's warning when no tensor of ``inputs`` requires grad."""
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args):
    """The random states of the accelerators the tensors are on: none (minigrad runs on the CPU)."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore accelerator random states from ``get_device_states``: none to restore."""


class DefaultDeviceType:
    """The device type whose random state checkpoint preserves besides the CPU's."""
    _default = "cpu"

    @staticmethod
    def set_device_type(device="cpu"):
        DefaultDeviceType._default = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default


class CheckpointFunction:
    """The reentrant variant as PyTorch's autograd Function: ``CheckpointFunction.apply(run_function,
    preserve_rng_state, *args)`` is ``checkpoint(run_function, *args, use_reentrant=True, ...)``."""

    @staticmethod
    def apply(run_function, preserve_rng_state, *args):
        return checkpoint(run_function, *args, use_reentrant=True, preserve_rng_state=preserve_rng_state)


# ----------------------------------------------------------------------------------------- the graph
def _edges_leaving(roots, made):
    """(edge, (shape, dtype)) for each distinct edge from the nodes in ``made`` reachable from ``roots`` to outside
    them: leaves that require grad, and nodes made before the segment ran."""
    found, seen, stack = [], set(), [r for r in roots if r in made]
    visited = set(stack)
    while stack:
        node = stack.pop()
        for edge, meta in zip(node.next_edges, node.input_meta):
            if edge is None:
                continue
            if isinstance(edge, Context) and edge in made:
                if edge not in visited:
                    visited.add(edge)
                    stack.append(edge)
            elif id(edge) not in seen:
                seen.add(id(edge))
                found.append((edge, meta))
    return found


def _redirect(roots, made, alias_nodes):
    """Lead every edge from the recomputed nodes (``made``) to a boundary item to its alias node instead; returns
    how many edges lead outside to something that is not on the boundary."""
    unknown, stack = 0, [r for r in roots if r in made]
    visited = set(stack)
    while stack:
        node = stack.pop()
        edges = []
        for edge in node.next_edges:
            if isinstance(edge, Context) and edge in made:
                if edge not in visited:
                    visited.add(edge)
                    stack.append(edge)
            elif edge is not None:
                alias = alias_nodes.get(id(edge))
                if alias is None:
                    unknown += not isinstance(edge, Context) or edge.fn is not _Alias
                else:
                    edge = alias
            edges.append(edge)
        node.next_edges = tuple(edges)
    return unknown


def _stand_in(node, meta):
    """A tensor at ``node``'s place in the graph (shape and dtype from ``meta``; its values are never read)."""
    shape, dtype = meta
    return _joined(np.broadcast_to(np.zeros((), dtype), shape), node)


@contextlib.contextmanager
def _replayed(state):
    """The default generator in ``state`` within the block, and back where it was after it."""
    with fork_rng():
        default_generator.restore(state)
        yield


# ----------------------------------------------------------------------------------------- outputs
def _tensors_in(out, top_level_only):
    """The tensors a segment returned, in order: nested in tuples, lists and dicts, or (``top_level_only``, the
    reentrant variant's rule) the output itself or the items of a returned tuple."""
    if isinstance(out, Tensor):
        return [out]
    if top_level_only:
        return [item for item in out if isinstance(item, Tensor)] if isinstance(out, tuple) else []
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _tensors_in(item, False)]
    if isinstance(out, dict):
        return [t for item in out.values() for t in _tensors_in(item, False)]
    return []


def _replaced(out, new, top_level_only):
    """``out`` with each of its tensors (``_tensors_in``) replaced by ``new[id(tensor)]``."""
    if isinstance(out, Tensor):
        return new[id(out)]
    if top_level_only:
        return tuple(new.get(id(item), item) for item in out) if isinstance(out, tuple) else out
    if isinstance(out, (tuple, list)):
        items = [_replaced(item, new, False) for item in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    if isinstance(out, dict):
        return type(out)((key, _replaced(value, new, False)) for key, value in out.items())
    return out
