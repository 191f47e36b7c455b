"""Look at a backward graph: Graphviz DOT text, an SVG/PNG drawing, or a plain-text tree.

    from minigrad import viz
    with viz.trace(loss, params=dict(model.named_parameters())) as graph:   # before backward
        loss.backward()
    print(graph.text())            # the tree, root (the loss's op) first, inputs indented below
    graph.dot()                    # DOT source: paste into any Graphviz viewer
    graph.render("graph.svg")      # with Graphviz if installed, else minigrad's own plain SVG (to_svg)
    graph.render("graph.png")      # other formats need the graphviz Python package and Graphviz's dot program

Every node shows its op (``ctx.name()``, e.g. ``MulBackward``), the shape and dtype of the tensor
it produced, and the bytes it keeps for backward: the arrays in ``ctx.saved`` plus any array stored
as a ``ctx`` attribute (``ctx.index = ...``). Leaves (tensors created by the user, parameters) are
nodes too, named from ``params`` when given.

Why ``trace`` comes *before* backward: the engine frees what each node saved as soon as the
node's backward has run (unless ``retain_graph=True``), so the saved bytes must be read first.
``trace`` also registers hooks that record the gradient flowing into every node during the
backward passes that follow: for an op, the gradient of its output (what its backward receives);
for a leaf, the gradient delivered to it. Gradients from several backward passes (or a leaf's
several uses) are summed, as ``.grad`` sums them. Leaving the ``with`` block, or
``graph.remove_hooks()``, removes the hooks; do it before training on, or parameters keep them.
``to_dot``, ``text_tree`` and ``render`` also accept a Tensor and trace it on the spot.

Without Graphviz: ``to_svg(tensor_or_graph)`` draws the graph as plain SVG, and ``to_html(tensor, path,
gradient=g)`` runs the backward pass and writes one self-contained page that steps through it node by node
(gradient arriving, saved tensors, local Jacobian, gradients leaving; minigrad/viz_backward.py).
"""
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .autograd import Context
from .tensor import Tensor, _RemovableHandle

__all__ = ["Graph", "Node", "SavedArray", "render", "text_tree", "to_dot", "trace"]


@dataclass(frozen=True)
class SavedArray:
    """One array a node keeps for backward (recorded, not kept: the engine frees the array itself)."""
    shape: tuple
    dtype: np.dtype
    nbytes: int
    address: int            # start of its memory: equal (address, nbytes) means the same buffer
    aliases_leaf: bool      # shares memory with a leaf of the graph (an input or a parameter)


@dataclass
class Node:
    """An op (a ``grad_fn`` Context) or a leaf tensor of the traced graph."""
    id: int
    kind: str                               # "op" or "leaf"
    name: str                               # "MulBackward", or the leaf's name from ``params`` ("leaf" if none)
    shape: tuple
    dtype: np.dtype
    inputs: list = field(default_factory=list)   # ids of the nodes this op's inputs came from
    saved: list = field(default_factory=list)    # SavedArray per array kept for backward
    freed: bool = False                     # the engine had already freed the saved arrays when traced
    grad: np.ndarray = None                 # sum of the gradients seen by the hooks (None: none yet)

    @property
    def saved_bytes(self):
        return sum(s.nbytes for s in self.saved)

    @property
    def grad_norm(self):
        """The 2-norm of the recorded gradient, or None before any backward."""
        return None if self.grad is None else float(np.linalg.norm(self.grad.astype(np.float64).ravel()))

    def record(self, grad):
        """The hook: add ``grad`` (a Tensor) to the recorded sum; return None so the gradient is unchanged."""
        g = np.asarray(grad._data)
        self.grad = g.copy() if self.grad is None else self.grad + g


def _arrays_kept(ctx):
    """What ``ctx`` keeps for backward: its saved tensors/arrays, then array-valued attributes."""
    kept = list(ctx.saved) + [v for v in vars(ctx).values()]
    return [k._data if isinstance(k, Tensor) else k for k in kept if isinstance(k, (Tensor, np.ndarray, np.generic))]


def _describe(array, leaf_arrays):
    array = np.asarray(array)
    return SavedArray(array.shape, array.dtype, int(array.nbytes), int(array.__array_interface__["data"][0]),
                      any(np.may_share_memory(array, leaf) for leaf in leaf_arrays))


def _format_bytes(n):
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _format_shape(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


class Graph:
    """The traced backward graph of one tensor: ``nodes[0]`` is its ``grad_fn``; ids are list indices.

    The graph holds records, not the Contexts, so tracing keeps no saved array alive. Usable as a
    context manager that removes the gradient hooks on exit.
    """

    def __init__(self, nodes, handles):
        self.nodes = nodes
        self._handles = handles     # one removable handle per hook registered by trace

    # ----------------------------------------------------------------- numbers
    def saved_bytes(self, unique=False, include_leaves=True):
        """Bytes kept for backward over the whole graph.

        ``unique=False``: the plain sum over nodes of their saved arrays. ``unique=True`` counts a buffer
        saved by several nodes once; ``include_leaves=False`` also leaves out arrays sharing memory with a
        leaf (the inputs and parameters, alive anyway): what the graph holds *beyond* its inputs.
        """
        if not unique and include_leaves:
            return sum(n.saved_bytes for n in self.nodes)
        buffers = {(s.address, s.nbytes) for n in self.nodes for s in n.saved if include_leaves or not s.aliases_leaf}
        return sum(nbytes for _, nbytes in buffers)

    def ops(self):
        return [n for n in self.nodes if n.kind == "op"]

    def leaves(self):
        return [n for n in self.nodes if n.kind == "leaf"]

    def edges(self):
        """(input node id, consumer node id) pairs, in the direction data flowed in the forward pass."""
        return [(i, n.id) for n in self.nodes for i in n.inputs]

    # ----------------------------------------------------------------- hooks
    def remove_hooks(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove_hooks()

    # ----------------------------------------------------------------- renderings
    def _label_lines(self, node):
        lines = [node.name, f"{_format_shape(node.shape)} {node.dtype}"]
        if node.kind == "op":
            lines.append("saved: freed" if node.freed else f"saved {_format_bytes(node.saved_bytes)}")
        if node.grad is not None:
            lines.append(f"|grad| {node.grad_norm:.4g}")
        return lines

    def text(self):
        """A plain-text tree from the root down to the leaves; a node reached again is shown once and then
        referred to by its number."""
        out, shown = [], set()
        stack = [(0, "", "")]   # (node id, prefix of this line, prefix of its children's lines)
        while stack:
            nid, prefix, child_prefix = stack.pop()
            node = self.nodes[nid]
            if nid in shown:
                out.append(f"{prefix}#{nid} {node.name} (see above)")
                continue
            shown.add(nid)
            out.append(f"{prefix}#{nid} " + "  ".join(self._label_lines(node)))
            inputs = node.inputs
            for k in reversed(range(len(inputs))):   # pushed in reverse: popped (printed) in input order
                last = k == len(inputs) - 1
                stack.append((inputs[k], child_prefix + ("└── " if last else "├── "),
                              child_prefix + ("    " if last else "│   ")))
        return "\n".join(out)

    def dot(self):
        """Graphviz DOT source: ops as boxes, leaves as ellipses, edges from inputs to their consumer."""
        lines = ["digraph minigrad {", '  node [fontname="monospace", fontsize=10];']
        for node in self.nodes:
            label = "\\n".join(line.replace('"', '\\"') for line in self._label_lines(node))
            style = 'shape=box' if node.kind == "op" else 'shape=ellipse, style=filled, fillcolor="lightblue"'
            lines.append(f'  n{node.id} [label="{label}", {style}];')
        lines += [f"  n{a} -> n{b};" for a, b in self.edges()]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def render(self, path, format=None):
        """Write the drawing to ``path`` (format from its suffix unless given: svg, png, pdf, ...). Returns the path.

        Graphviz lays it out when the ``graphviz`` Python package and Graphviz's ``dot`` program are installed.
        Without them an SVG is still drawn, by ``to_svg`` (plain SVG, the same nodes and edges in layers);
        the other formats need Graphviz, and ``dot()`` gives the source to paste into any Graphviz viewer.
        """
        path = Path(path)
        format = format or path.suffix.lstrip(".") or "svg"
        missing = _graphviz_missing()
        if missing is None:
            import graphviz
            path.write_bytes(graphviz.Source(self.dot()).pipe(format=format))
        elif format == "svg":
            to_svg(self, path)
        else:
            raise missing
        return path

    def __repr__(self):
        return (f"<minigrad.viz.Graph: {len(self.ops())} ops, {len(self.leaves())} leaves, "
                f"saved {_format_bytes(self.saved_bytes())}>")


def _graphviz_missing():
    """None if Graphviz can draw (its Python package and its ``dot`` program are there), else the error that
    says what is missing."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return ImportError("minigrad.viz: drawing a graph as png, pdf, ... needs the graphviz Python package "
                           "(pip install graphviz) and Graphviz's dot program; a .svg path needs neither, and "
                           "Graph.dot() returns the DOT text")
    if shutil.which("dot") is None:
        return RuntimeError("minigrad.viz: Graphviz's dot program is not on PATH (install Graphviz, e.g. apt-get "
                            "install graphviz); a .svg path needs no Graphviz, and Graph.dot() returns the DOT text")
    return None


def trace(tensor, params=None):
    """Record the backward graph of ``tensor`` (call before backward) and hook every node to record the
    gradients of the backward passes that follow. ``params`` maps names to leaf tensors, to label them
    (e.g. ``dict(model.named_parameters())``)."""
    if tensor.grad_fn is None:
        raise ValueError("viz.trace: this tensor has no backward graph (it is a leaf or was computed without "
                         "grad); trace the result of operations on tensors with requires_grad=True")
    names = {id(t): name for name, t in (params or {}).items()}
    leaf_arrays = _leaf_arrays(tensor.grad_fn)
    nodes, handles = [], []
    ids = {}   # id(Context or leaf Tensor) -> node id

    def new_node(obj, shape, dtype):
        """The node of ``obj`` (a Context or a leaf Tensor), hooked to record its gradients."""
        nid = ids[id(obj)] = len(nodes)
        if isinstance(obj, Context):
            node = Node(nid, "op", obj.name(), tuple(shape), np.dtype(dtype), freed=obj.freed,
                        saved=[_describe(a, leaf_arrays) for a in _arrays_kept(obj)])
            obj.pre_hooks.append(node.record)   # where Tensor.register_hook puts a non-leaf's hooks
            handles.append(_RemovableHandle(obj.pre_hooks, node.record))
        else:
            node = Node(nid, "leaf", names.get(id(obj), "leaf"), obj.shape, obj.dtype)
            handles.append(obj.register_hook(node.record))
        nodes.append(node)
        return node

    # Depth-first, numbering a node when it is first reached, so ids follow the order of the text tree.
    stack = [(tensor.grad_fn, (tensor.shape, tensor.dtype), None)]   # (Context or leaf, (shape, dtype), consumer)
    while stack:
        obj, meta, consumer = stack.pop()
        if id(obj) in ids:
            consumer.inputs.append(ids[id(obj)])
            continue
        node = new_node(obj, *meta)
        if consumer is not None:
            consumer.inputs.append(node.id)
        if node.kind == "op":
            stack.extend((nxt, m, node) for nxt, m in reversed(list(zip(obj.next_edges, obj.input_meta)))
                         if nxt is not None)
    return Graph(nodes, handles)


def _leaf_arrays(root):
    """The data of every leaf tensor reachable from ``root`` (to tell saved arrays that alias them)."""
    arrays, seen, stack = [], {id(root)}, [root]
    while stack:
        for nxt in stack.pop().next_edges:
            if nxt is None or id(nxt) in seen:
                continue
            seen.add(id(nxt))
            if isinstance(nxt, Context):
                stack.append(nxt)
            else:
                arrays.append(nxt._data)
    return arrays


def _traced_without_hooks(tensor_or_graph, params):
    if isinstance(tensor_or_graph, Graph):
        return tensor_or_graph
    graph = trace(tensor_or_graph, params)
    graph.remove_hooks()
    return graph


def to_dot(tensor_or_graph, params=None):
    """DOT source of a Graph, or of a tensor's graph traced now (no gradient norms then)."""
    return _traced_without_hooks(tensor_or_graph, params).dot()


def text_tree(tensor_or_graph, params=None):
    """The plain-text tree of a Graph, or of a tensor's graph traced now."""
    return _traced_without_hooks(tensor_or_graph, params).text()


def render(tensor_or_graph, path, format=None, params=None):
    """Draw a Graph, or a tensor's graph traced now, to ``path`` (see ``Graph.render``)."""
    return _traced_without_hooks(tensor_or_graph, params).render(path, format)


# The backward pass as a page to step through, and plain SVG drawings: minigrad/viz_backward.py.
from .viz_backward import BackwardRecording, record_backward, to_html, to_svg  # noqa: E402,F401

__all__ += ["BackwardRecording", "record_backward", "to_html", "to_svg"]
