"""The backward graph as PyTorch shows it (``torch.autograd.graph``): nodes, their edges, and hooks on them.

Every recorded op's ``grad_fn`` is a node (``Context``, autograd/function.py): ``node.name()``,
``node.next_functions`` (one ``(node, 0)`` pair per input: the node that produced it, an ``AccumulateGrad`` node for
a leaf that requires grad, ``(None, 0)`` for an input that needs no gradient), ``node.metadata`` (a dict of your
own), ``node.register_prehook(fn)`` (``fn(grad_outputs)`` before the node runs) and ``node.register_hook(fn)``
(``fn(grad_inputs, grad_outputs)`` after it). Walking ``next_functions`` from ``loss.grad_fn`` visits the whole
graph the backward pass will run, down to the ``AccumulateGrad`` nodes whose ``variable`` is each leaf::

    node = loss.grad_fn
    while node is not None:
        print(node.name())
        node = node.next_functions[0][0] if node.next_functions else None

Also here: ``register_multi_grad_hook`` (one call once the gradients of several tensors are known),
``get_gradient_edge``/``GradientEdge``, ``increment_version``; the saved-tensor hooks (``saved_tensors_hooks``,
``save_on_cpu``, ``disable_saved_tensors_hooks``, ``allow_mutation_on_saved_tensors``: saved_tensors.py).
"""
import abc
import threading
import weakref
from typing import NamedTuple

from ..tensor import Tensor, _RemovableHandle
from . import engine
from .function import Context
from .saved_tensors import (SavedTensor, allow_mutation_on_saved_tensors, disable_saved_tensors_hooks, save_on_cpu,
                            saved_tensors_hooks)
from .variable import Variable
from .version import bump_tensor

RemovableHandle = _RemovableHandle   # (torch.utils.hooks.RemovableHandle, as PyTorch's graph module has it)

__all__ = ["GradientEdge", "Node", "RemovableHandle", "SavedTensor", "Variable", "allow_mutation_on_saved_tensors",
           "disable_saved_tensors_hooks", "get_gradient_edge", "increment_version", "register_multi_grad_hook",
           "save_on_cpu", "saved_tensors_hooks"]


class Node(abc.ABC):
    """What every node of the backward graph is (``isinstance(t.grad_fn, Node)``)."""

    @abc.abstractmethod
    def name(self):
        """The node's name (``MulBackward``; ``torch::autograd::AccumulateGrad`` for a leaf's)."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """One ``(node, 0)`` per input of the op."""


Node.register(Context)


class AccumulateGrad(Node):
    """The node where a leaf's gradient ends: ``variable`` is the leaf. One per leaf (the same object each time)."""

    def __init__(self, variable):
        self.variable = variable
        self.metadata = {}

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the leaf's gradient is accumulated (``grad_inputs`` is empty)."""
        def after(tensor):
            fn((), (tensor.grad,))
        return self.variable.register_post_accumulate_grad_hook(after)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` with the leaf's gradient before it is accumulated; a returned tuple replaces it."""
        def before(grad):
            result = fn((grad,))
            return None if result is None else result[0]
        return self.variable.register_hook(before)

    def __repr__(self):
        return "<AccumulateGrad>"


_accumulators = {}     # id(leaf) -> (weak reference to the leaf, its AccumulateGrad node); gone with the leaf
_accumulators_lock = threading.Lock()


def accumulate_grad_node(leaf):
    """The leaf's ``AccumulateGrad`` node (made once, kept while the leaf lives). Keyed by id with a weak reference
    (a Tensor's ``==`` compares values, so tensors cannot be dictionary keys)."""
    key = id(leaf)
    with _accumulators_lock:
        entry = _accumulators.get(key)
        if entry is None or entry[0]() is not leaf:
            forget = lambda _, key=key: _accumulators.pop(key, None)   # noqa: E731
            entry = _accumulators[key] = (weakref.ref(leaf, forget), AccumulateGrad(leaf))
        return entry[1]


def as_node(edge):
    """A ``Context.next_edges`` entry as PyTorch's ``next_functions`` shows it."""
    return accumulate_grad_node(edge) if isinstance(edge, Tensor) else edge


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: the node and which of its outputs (always 0 in minigrad)."""
    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """``tensor``'s place in the graph: its ``grad_fn``, or its ``AccumulateGrad`` node for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node = tensor.grad_fn
    return GradientEdge(accumulate_grad_node(tensor) if node is None else node, 0)


def increment_version(tensor):
    """Count an in-place write into ``tensor`` (or each tensor of an iterable) that happened outside minigrad's
    ops, so that a backward which saved it refuses, as after any in-place op."""
    for t in [tensor] if isinstance(tensor, Tensor) else tensor:
        bump_tensor(t)


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass that computes gradients of ``tensors``: ``mode="all"``, with the list of
    their gradients (None for one the pass does not compute) as soon as the last of those the pass computes has
    arrived (the pass tells which it will reach: ``engine.will_execute``), as PyTorch does; ``mode="any"``, with
    the first of their gradients computed. Returns a handle whose ``remove()`` takes the hooks off."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = list(tensors)
    state = threading.local()       # per thread: this pass's gradients so far, and how many it will compute

    def hook_for(i):
        def hook(grad):
            grads = getattr(state, "grads", None)
            if grads is None:                        # the first of them in this backward pass
                grads = state.grads = [None] * len(tensors)
                state.arrived = 0
                state.expected = sum(engine.will_execute(t if t.grad_fn is None else t.grad_fn) for t in tensors)
                engine.queue_callback(finish)        # (for a gradient the pass was to compute and did not)
                if mode == "any":
                    fn(grad)
            grads[i] = grad
            state.arrived += 1
            if mode == "all" and state.arrived == state.expected:
                finish()
        return hook

    def finish():
        grads, state.grads = getattr(state, "grads", None), None
        if mode == "all" and grads is not None:
            fn(grads)

    handles = [t.register_hook(hook_for(i)) for i, t in enumerate(tensors)]
    return _MultiHandle(handles)


class _MultiHandle(_RemovableHandle):
    """The handles of the hooks ``register_multi_grad_hook`` put on each tensor, removed together."""

    def __init__(self, handles):
        super().__init__([], None)
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()
