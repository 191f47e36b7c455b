"""A backward pass you can step through in a browser, and plain SVG drawings of graphs (``minigrad.viz``).

    from minigrad import viz
    loss = model(x).mul(g).sum()                   # any graph
    viz.to_html(loss, "backward.html", params=dict(model.named_parameters()))   # runs loss.backward()
    viz.to_svg(loss, "graph.svg")                  # the graph alone, no backward

``to_html`` writes one self-contained file (inline SVG, CSS and JavaScript; no server, no internet, no
Graphviz). Its buttons (or the arrow keys) step through the backward pass in the order the engine ran
it; for the node of the current step it shows the gradient arriving (and what the hooks made of it),
the tensors the node saved for backward, its local Jacobian as a heat map (when input and output are
small), and the gradients it sends to each input; leaves show what was accumulated into ``.grad``;
non-leaf tensors that called ``retain_grad()`` show their ``.grad``.

How it is recorded (``record_backward``): the graph is walked from the tensor's ``grad_fn`` through
``next_edges`` *before* backward (saved tensors are copied then; the engine frees them), a hook is put
first and last on every node (``ctx.pre_hooks``) and on every leaf to see each gradient as it arrives
and after the user's hooks ran, in the engine's order, and ``backward(retain_graph=True)`` runs. The
gradients a node sends on, and its Jacobian, are then recomputed by calling the node's own
``fn.backward(ctx, grad)`` again (the saved tensors are still there): the engine offers no hook after a
node's backward (PyTorch's ``Node.register_hook(fn(grad_inputs, grad_outputs))``), so this replays it.
"""
import html
import json
import math
from pathlib import Path

import numpy as np

from .autograd import Context
from .autograd.engine import fit_gradient
from .tensor import Tensor

__all__ = ["record_backward", "to_html", "to_svg", "BackwardRecording"]

MAX_VALUES = 256          # arrays up to this size are stored in full; larger ones as a summary and a corner
JACOBIAN_MAX = 64         # the local Jacobian is computed when output and input each have at most this many entries


# --------------------------------------------------------------------------- arrays as JSON
def _array(a):
    """An array for the page: shape, dtype, a 2-D view of its values (or of its top-left corner) and a summary."""
    a = np.asarray(a)
    out = {"shape": list(a.shape), "dtype": str(a.dtype)}
    if a.dtype.kind not in "biuf":
        return out
    v = a.astype(np.float64)
    m = v.reshape(1, -1) if v.ndim <= 1 else v.reshape(v.shape[0], -1)         # (rows, cols)
    if v.size:
        finite = v[np.isfinite(v)]
        out["summary"] = {"min": float(finite.min()) if finite.size else None,
                          "max": float(finite.max()) if finite.size else None,
                          "norm": float(np.linalg.norm(finite))}
    if v.size > MAX_VALUES:
        m, out["corner"] = m[:12, :12], True
    out["values"] = [[_num(e) for e in row] for row in m]
    return out


def _num(e):
    e = float(e)
    return e if math.isfinite(e) else str(e)


# --------------------------------------------------------------------------- recording
class BackwardRecording:
    """The graph (nodes, edges), what each node saved, and the steps of one backward pass; ``data`` is what
    the HTML page embeds as JSON."""

    def __init__(self, nodes, edges, steps, root):
        self.nodes, self.edges, self.steps, self.root = nodes, edges, steps, root

    @property
    def data(self):
        return {"nodes": self.nodes, "edges": self.edges, "steps": self.steps}

    def to_html(self, path=None, title="minigrad: backward pass"):
        return _write(path, _page(self.data, title))

    def __repr__(self):
        return f"<BackwardRecording: {len(self.nodes)} nodes, {len(self.steps)} steps>"


def _walk(root_fn, root_meta):
    """Every node (Context or leaf Tensor) reachable from ``root_fn``, numbered depth-first as viz.trace
    numbers them, with (output shape, dtype) and the edges (consumer, input index, producer)."""
    order, ids, metas, edges = [], {}, {}, []
    stack = [(root_fn, root_meta, None, None)]
    while stack:
        obj, meta, consumer, index = stack.pop()
        if id(obj) not in ids:
            ids[id(obj)] = len(order)
            order.append(obj)
            metas[id(obj)] = meta
            if isinstance(obj, Context):
                stack.extend((nxt, m, obj, i) for i, (nxt, m) in reversed(list(enumerate(zip(obj.next_edges,
                                                                                           obj.input_meta))))
                             if nxt is not None)
        if consumer is not None:
            edges.append((ids[id(consumer)], index, ids[id(obj)]))
    return order, ids, metas, edges


def _saved(ctx):
    """What a node keeps for backward, copied: its saved tensors and array-valued attributes, named."""
    items = [(f"saved[{i}]", s) for i, s in enumerate(ctx.saved)]
    items += [(k, v) for k, v in vars(ctx).items() if k != "origins"]
    return [{"name": name, **_array(v._data if isinstance(v, Tensor) else v)} for name, v in items
            if isinstance(v, (Tensor, np.ndarray, np.generic))]


def _hook_names(hooks, ours):
    return [getattr(h, "__qualname__", type(h).__name__) for h in hooks if h not in ours]


def record_backward(tensor, gradient=None, params=None):
    """Run ``tensor.backward(gradient, retain_graph=True)`` and record every step (see the module docstring).

    ``gradient``: the upstream gradient (an ndarray or Tensor of ``tensor``'s shape; required unless the
    tensor has one element). ``params``: names for leaf tensors (``dict(model.named_parameters())``).
    Gradients accumulate into the leaves' ``.grad`` as with any backward.
    """
    if tensor.grad_fn is None:
        raise ValueError("viz.record_backward: this tensor has no backward graph (it is a leaf or was computed "
                         "without grad); record the result of operations on tensors with requires_grad=True")
    names = {id(t): name for name, t in (params or {}).items()}
    order, ids, metas, edges = _walk(tensor.grad_fn, (tensor.shape, tensor.dtype))
    nodes, events, ours = [], [], []

    def hooks_for(nid):
        def first(grad):
            events.append({"node": nid, "arriving": np.array(grad._data, copy=True)})
        def last(grad):
            events[-1]["after_hooks"] = np.array(grad._data, copy=True)
        ours.extend([first, last])
        return first, last

    for nid, obj in enumerate(order):
        shape, dtype = metas[id(obj)]
        first, last = hooks_for(nid)
        if isinstance(obj, Context):
            node = {"id": nid, "kind": "op", "name": obj.name(), "shape": list(shape), "dtype": str(np.dtype(dtype)),
                    "saved": _saved(obj), "hooks": _hook_names(obj.pre_hooks, ours),
                    "retains_grad": obj.retained is not None}
            obj.pre_hooks.insert(0, first)
            obj.pre_hooks.append(last)
        else:
            node = {"id": nid, "kind": "leaf", "name": names.get(id(obj), "leaf"), "shape": list(obj.shape),
                    "dtype": str(obj.dtype), "saved": [], "hooks": _hook_names(obj._hooks or [], ours),
                    "retains_grad": False}
            if obj._hooks is None or not obj._hooks:
                obj._hooks = []
            obj._hooks.insert(0, first)
            obj._hooks.append(last)
        nodes.append(node)
    try:
        tensor.backward(gradient, retain_graph=True)
    finally:
        for obj in order:
            hooks = obj.pre_hooks if isinstance(obj, Context) else obj._hooks
            hooks[:] = [h for h in hooks if h not in ours]
    steps = [_step(order, nodes, edges, event) for event in events]
    for obj, node in zip(order, nodes):     # after backward: .grad of leaves and of tensors that retain it
        if isinstance(obj, Context) and obj.retained is not None and obj.retained() is not None:
            g = obj.retained().grad
            node["retained_grad"] = None if g is None else _array(g._data)
        elif not isinstance(obj, Context) and obj.grad is not None:
            node["grad"] = _array(obj.grad._data)
    return BackwardRecording(nodes, [[a, i, b] for a, i, b in edges], steps, tensor)


def _step(order, nodes, edges, event):
    """One step of the page: the node, its gradient arriving, after hooks, sent on, and its local Jacobian."""
    nid = event["node"]
    obj = order[nid]
    grad = event.get("after_hooks", event["arriving"])
    step = {"node": nid, "arriving": _array(event["arriving"]),
            "changed_by_hooks": not np.array_equal(grad, event["arriving"]), "after_hooks": _array(grad)}
    if not isinstance(obj, Context):
        return step
    step["leaving"], step["jacobians"] = [], []
    targets = {i: b for a, i, b in edges if a == nid}
    try:
        sent = _replay(obj, grad)
    except Exception as e:  # noqa: BLE001 - a Function whose backward cannot run twice: said on the page
        step["error"] = f"{type(e).__name__}: {e}"
        return step
    for i, g in enumerate(sent):
        if i in targets and g is not None:
            step["leaving"].append({"to": targets[i], "input": i, "grad": _array(g)})
    if grad.size <= JACOBIAN_MAX and all(not m or math.prod(m[0]) <= JACOBIAN_MAX for m in obj.input_meta):
        step["jacobians"] = _jacobians(obj, grad, targets)
    return step


def _replay(ctx, grad):
    """What ``ctx``'s backward sends to each input for upstream ``grad``: its own backward run again, each
    gradient fitted to its input's shape and dtype as the engine does. None where an input gets nothing."""
    out = ctx.fn.backward(ctx, Tensor(np.array(grad, copy=True)))
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    sent = []
    for i, g in enumerate(out[:len(ctx.next_edges)]):
        if g is None or ctx.next_edges[i] is None:
            sent.append(None)
            continue
        sent.append(fit_gradient(g._data if isinstance(g, Tensor) else g, ctx.input_meta[i], ctx, i))
    return sent


def _jacobians(ctx, grad, targets):
    """d output / d input for each input, (output size, input size), from one backward per output entry."""
    m = grad.size
    rows = {i: [] for i in targets}
    for j in range(m):
        unit = np.zeros(m, dtype=grad.dtype)
        unit[j] = 1
        sent = _replay(ctx, unit.reshape(grad.shape))
        for i in targets:
            g = sent[i] if i < len(sent) else None
            size = math.prod(ctx.input_meta[i][0])
            rows[i].append(np.zeros(size) if g is None else np.asarray(g, dtype=np.float64).ravel())
    return [{"input": i, "to": t, "matrix": _array(np.stack(rows[i]))} for i, t in targets.items()]


# --------------------------------------------------------------------------- layout and SVG
BOX_W, BOX_H, GAP_X, GAP_Y = 170, 46, 24, 56


def _layout(n, edges):
    """Positions (x, y) of n nodes given (consumer, producer) edges: the root (node 0) at the top, each node one
    layer below its deepest consumer; nodes of a layer in the order they were numbered."""
    depth = [0] * n
    for _ in range(n):                           # longest path from the root, by relaxation (graphs are small)
        changed = False
        for a, b in edges:
            if depth[b] < depth[a] + 1:
                depth[b] = depth[a] + 1
                changed = True
        if not changed:
            break
    layers = {}
    for i in range(n):
        layers.setdefault(depth[i], []).append(i)
    width = max(len(v) for v in layers.values()) * (BOX_W + GAP_X) + GAP_X
    pos = {}
    for d, members in layers.items():
        span = len(members) * (BOX_W + GAP_X) - GAP_X
        for k, i in enumerate(members):
            pos[i] = ((width - span) / 2 + k * (BOX_W + GAP_X), GAP_Y / 2 + d * (BOX_H + GAP_Y))
    height = (max(layers) + 1) * (BOX_H + GAP_Y)
    return pos, width, height


def _svg(labels, kinds, edges, extra_attrs=None):
    """An SVG drawing: boxes (ops) and rounded boxes (leaves) with two lines of text, arrows from each consumer
    to its inputs (the direction gradients flow)."""
    pos, width, height = _layout(len(labels), edges)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="graph" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']
    for a, b in edges:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        out.append(f'<line class="edge" data-from="{a}" data-to="{b}" x1="{xa + BOX_W / 2:.1f}" y1="{ya + BOX_H:.1f}" '
                   f'x2="{xb + BOX_W / 2:.1f}" y2="{yb:.1f}" stroke="#555" marker-end="url(#arrow)"/>')
    for i, (lines, kind) in enumerate(zip(labels, kinds)):
        x, y = pos[i]
        fill = "#dbeafe" if kind == "leaf" else "#f5f5f5"
        attrs = (extra_attrs or {}).get(i, "")
        out.append(f'<g class="node {kind}" id="node-{i}" data-id="{i}" {attrs}>'
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="{12 if kind == "leaf" else 3}" '
                   f'fill="{fill}" stroke="#333"/>')
        for k, line in enumerate(lines[:3]):
            out.append(f'<text x="{x + BOX_W / 2:.1f}" y="{y + 15 + 13 * k:.1f}" text-anchor="middle">'
                       f'{html.escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def to_svg(tensor_or_graph, path=None, params=None):
    """A plain SVG drawing of a graph (a ``viz.Graph`` from ``viz.trace``, or a tensor's graph traced now):
    no Graphviz needed. Returns the SVG text; also writes it to ``path`` if given."""
    from .viz import Graph, _traced_without_hooks
    graph = tensor_or_graph if isinstance(tensor_or_graph, Graph) else _traced_without_hooks(tensor_or_graph, params)
    labels = [graph._label_lines(n) for n in graph.nodes]
    edges = [(b, a) for a, b in graph.edges()]      # (consumer, input)
    return _write(path, _svg(labels, [n.kind for n in graph.nodes], edges))


def _write(path, text):
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


# --------------------------------------------------------------------------- the page
def to_html(tensor_or_recording, path=None, gradient=None, params=None, title="minigrad: backward pass"):
    """A self-contained HTML page stepping through the backward pass of a tensor (which this runs, with
    ``gradient`` as the upstream gradient) or of a ``BackwardRecording``. Returns the HTML text; also
    writes it to ``path`` if given."""
    rec = tensor_or_recording
    if not isinstance(rec, BackwardRecording):
        rec = record_backward(rec, gradient, params)
    return rec.to_html(path, title)


def _page(data, title):
    labels = [[n["name"], "(" + ", ".join(map(str, n["shape"])) + (",)" if len(n["shape"]) == 1 else ")")
               + " " + n["dtype"]] for n in data["nodes"]]
    svg = _svg(labels, [n["kind"] for n in data["nodes"]], [(a, b) for a, _, b in data["edges"]])
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return (_TEMPLATE.replace("__TITLE__", html.escape(title)).replace("__SVG__", svg)
            .replace("__DATA__", payload))


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font-family: system-ui, sans-serif; margin: 12px; color: #111; }
#controls button { font-size: 14px; margin-right: 4px; }
#layout { display: flex; gap: 16px; align-items: flex-start; }
#graph-pane { overflow: auto; max-width: 48vw; border: 1px solid #ddd; }
#details { flex: 1; min-width: 320px; font-size: 13px; }
.node.current rect { stroke: #d00; stroke-width: 3; }
.node.done rect { fill: #dcfce7; }
.node.leaf.done rect { fill: #bbf7d0; }
.edge.active { stroke: #d00; stroke-width: 2.5; }
table.m { border-collapse: collapse; font-family: monospace; font-size: 11px; margin: 2px 0 8px 0; }
table.m td { border: 1px solid #ccc; padding: 1px 4px; text-align: right; }
h3 { margin: 10px 0 2px 0; font-size: 14px; }
.note { color: #555; font-size: 12px; }
</style></head>
<body>
<h2>__TITLE__</h2>
<div id="controls">
<button id="first">&#x25C0;&#x25C0; first</button><button id="prev">&#x25C0; back</button>
<button id="next">next &#x25B6;</button><button id="last">last &#x25B6;&#x25B6;</button>
<span id="counter"></span>
</div>
<p class="note">Arrows go from a node to its inputs: the way gradients flow. Step 0 is the graph before backward;
each further step is one node the engine ran (or one leaf receiving its gradient), in the engine's order.
Keys: &larr; &rarr;.</p>
<div id="layout"><div id="graph-pane">__SVG__</div><div id="details"></div></div>
<script id="data" type="application/json">__DATA__</script>
<script>
(function () {
  var data = JSON.parse(document.getElementById("data").textContent);
  var step = 0, n = data.steps.length;
  function fmt(v) {
    if (typeof v === "string") return v;
    if (v === 0) return "0";
    var a = Math.abs(v);
    return (a >= 1e4 || a < 1e-3) ? v.toExponential(2) : v.toFixed(4);
  }
  function shape(a) { return "(" + a.shape.join(", ") + (a.shape.length === 1 ? ",)" : ")"); }
  function table(a) {
    if (!a.values) return "<div>" + shape(a) + " " + a.dtype + "</div>";
    var h = "<div>" + shape(a) + " " + a.dtype + (a.corner ? " (top-left corner)" : "");
    if (a.summary) h += " &nbsp; min " + fmt(a.summary.min) + ", max " + fmt(a.summary.max) + ", norm " + fmt(a.summary.norm);
    h += "</div><table class='m'>";
    a.values.forEach(function (row) { h += "<tr>" + row.map(function (e) { return "<td>" + fmt(e) + "</td>"; }).join("") + "</tr>"; });
    return h + "</table>";
  }
  function heat(a, cls) {
    var m = a.values, rows = m.length, cols = m[0].length, cell = Math.max(6, Math.min(22, Math.floor(260 / Math.max(rows, cols))));
    var big = 0;
    m.forEach(function (r) { r.forEach(function (e) { if (typeof e === "number") big = Math.max(big, Math.abs(e)); }); });
    var s = "<svg class='" + cls + "' width='" + (cols * cell + 2) + "' height='" + (rows * cell + 2) + "'>";
    m.forEach(function (r, i) { r.forEach(function (e, j) {
      var t = big > 0 && typeof e === "number" ? e / big : 0, c;
      c = t >= 0 ? "rgb(255," + Math.round(255 * (1 - t)) + "," + Math.round(255 * (1 - t)) + ")"
                 : "rgb(" + Math.round(255 * (1 + t)) + "," + Math.round(255 * (1 + t)) + ",255)";
      s += "<rect x='" + (1 + j * cell) + "' y='" + (1 + i * cell) + "' width='" + cell + "' height='" + cell +
           "' fill='" + c + "' stroke='#eee'><title>d out[" + i + "] / d in[" + j + "] = " + fmt(e) + "</title></rect>";
    }); });
    return s + "</svg><div class='note'>rows: output entries, columns: input entries; red &gt; 0, blue &lt; 0, largest |value| " + fmt(big) + "</div>";
  }
  function name(id) { var nd = data.nodes[id]; return nd.name + " #" + id; }
  function render() {
    document.getElementById("counter").textContent = "step " + step + " / " + n;
    var done = {}, cur = step > 0 ? data.steps[step - 1] : null;
    for (var k = 0; k < step - 1; k++) done[data.steps[k].node] = true;
    document.querySelectorAll(".node").forEach(function (g) {
      var id = +g.getAttribute("data-id");
      g.classList.toggle("done", !!done[id] || (cur && cur.node === id));
      g.classList.toggle("current", !!(cur && cur.node === id));
    });
    document.querySelectorAll(".edge").forEach(function (e) {
      e.classList.toggle("active", !!(cur && +e.getAttribute("data-from") === cur.node));
    });
    var d = document.getElementById("details"), h = "";
    if (!cur) {
      h = "<h3 id='step-title'>Before backward</h3><p>" + data.nodes.length + " nodes, " + n +
          " steps. Press <b>next</b> to run the first node's backward.</p>";
      d.innerHTML = h; return;
    }
    var nd = data.nodes[cur.node];
    h += "<h3 id='step-title'>Step " + step + ": " + name(cur.node) + (nd.kind === "leaf" ? " (leaf)" : "") + "</h3>";
    h += "<div class='note'>output " + shape(nd) + " " + nd.dtype + "</div>";
    h += "<h3>Gradient arriving</h3><div id='arriving'>" + table(cur.arriving) + "</div>";
    if (nd.hooks.length) h += "<h3>Hooks</h3><div id='hooks'>" + nd.hooks.join(", ") +
        (cur.changed_by_hooks ? ": changed the gradient to" + table(cur.after_hooks) : ": gradient unchanged") + "</div>";
    if (nd.retains_grad) h += "<h3>retain_grad</h3><div id='retained'>" + (nd.retained_grad ? table(nd.retained_grad) : "(freed)") + "</div>";
    if (nd.kind === "leaf") {
      h += "<h3>.grad after backward</h3><div id='leaf-grad'>" + (nd.grad ? table(nd.grad) : "none") + "</div>";
    } else {
      h += "<h3>Saved for backward</h3><div id='saved'>" + (nd.saved.length ? nd.saved.map(function (s) {
        return "<div><b>" + s.name + "</b></div>" + table(s); }).join("") : "nothing") + "</div>";
      if (cur.error) h += "<p id='error'>Could not replay this node's backward: " + cur.error + "</p>";
      h += "<div id='jacobians'>";
      (cur.jacobians || []).forEach(function (j) {
        h += "<h3>Local Jacobian d out / d " + name(j.to) + " (input " + j.input + ")</h3>" + heat(j.matrix, "jacobian");
      });
      h += "</div><h3>Gradients leaving</h3><div id='leaving'>";
      (cur.leaving || []).forEach(function (l) { h += "<div><b>&rarr; " + name(l.to) + "</b> (input " + l.input + ")</div>" + table(l.grad); });
      h += "</div>";
    }
    d.innerHTML = h;
  }
  function go(s) { step = Math.max(0, Math.min(n, s)); render(); }
  document.getElementById("first").onclick = function () { go(0); };
  document.getElementById("prev").onclick = function () { go(step - 1); };
  document.getElementById("next").onclick = function () { go(step + 1); };
  document.getElementById("last").onclick = function () { go(n); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") go(step + 1);
    if (e.key === "ArrowLeft") go(step - 1);
  });
  render();
})();
</script>
</body></html>
"""
