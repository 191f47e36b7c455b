"""minigrad.viz: graph structure, DOT and text renderings, saved bytes, gradient norms, hooks, drawing."""
import sys
import types
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import viz
from minigrad.autograd import Context


def leaf(shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def known_graph():
    """loss = exp(x * w).sum(): ops Sum <- Exp <- Mul <- (x, w)."""
    x, w = leaf((2, 3)), leaf((3,), 1)
    return (x * w).exp().sum(), x, w


def independent_saved_bytes(root):
    """Sum of nbytes of everything every Context of the graph keeps (saved arrays and array attributes),
    walked here without viz."""
    total, seen, stack = 0, {id(root)}, [root]
    while stack:
        ctx = stack.pop()
        for item in list(ctx.saved) + list(vars(ctx).values()):
            if isinstance(item, mg.Tensor):
                total += np.asarray(item).nbytes
            elif isinstance(item, np.ndarray):
                total += item.nbytes
        for nxt in ctx.next_edges:
            if isinstance(nxt, Context) and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return total


def test_nodes_and_edges_of_a_known_graph():
    loss, x, w = known_graph()
    graph = viz.trace(loss, params={"x": x, "w": w})
    graph.remove_hooks()
    assert [(n.kind, n.name, n.shape) for n in graph.nodes] == [
        ("op", "SumBackward", ()), ("op", "ExpBackward", (2, 3)), ("op", "MulBackward", (2, 3)),
        ("leaf", "x", (2, 3)), ("leaf", "w", (3,))]
    assert sorted(graph.edges()) == [(1, 0), (2, 1), (3, 2), (4, 2)]
    dot = graph.dot()
    assert dot.startswith("digraph minigrad {") and dot.rstrip().endswith("}")
    for expected in ['n0 [label="SumBackward\\n() float64', 'n2 [label="MulBackward\\n(2, 3) float64',
                     'n3 [label="x\\n(2, 3) float64', 'n4 [label="w\\n(3,) float64', "n2 -> n1;", "n1 -> n0;",
                     "n3 -> n2;", "n4 -> n2;"]:
        assert expected in dot, expected


def test_text_tree_shows_a_reused_node_once():
    x = leaf((2,))
    y = x * x + x                                  # x reaches the graph three times
    text = viz.text_tree(y, {"x": x})
    assert text.splitlines() == [
        "#0 AddBackward  (2,) float64  saved 0 B",
        "├── #1 MulBackward  (2,) float64  saved 32 B",
        "│   ├── #2 x  (2,) float64",
        "│   └── #2 x (see above)",
        "└── #2 x (see above)"]


def test_saved_bytes_equal_an_independent_sum():
    x, w = leaf((4, 6)), leaf((6,), 1)
    idx = np.array([0, 2, 2, 3])                   # an index array kept as a ctx attribute
    y = (F.layer_norm(x, (6,), w) * x)[idx].exp()
    graph = viz.trace(y)
    graph.remove_hooks()
    assert graph.saved_bytes() == independent_saved_bytes(y.grad_fn) > 0
    assert sum(n.saved_bytes for n in graph.ops()) == graph.saved_bytes()


def test_memory_held_beyond_the_inputs():
    x, w = leaf((5, 8)), leaf((8,), 1)
    y = F.rms_norm(x, (8,), w)                     # saves x and w (the inputs themselves) and rstd (5,)
    graph = viz.trace(y)
    graph.remove_hooks()
    assert graph.saved_bytes() == x.detach().numpy().nbytes + w.detach().numpy().nbytes + 5 * 8
    assert graph.saved_bytes(unique=True, include_leaves=False) == 5 * 8
    z = x * x                                      # the same buffer saved twice
    shared = viz.trace(z)
    shared.remove_hooks()
    assert shared.saved_bytes() == 2 * x.detach().numpy().nbytes
    assert shared.saved_bytes(unique=True) == x.detach().numpy().nbytes


def test_gradient_norms_recorded_during_backward():
    loss, x, w = known_graph()
    with viz.trace(loss, params={"x": x, "w": w}) as graph:
        assert "|grad|" not in graph.text()
        loss.backward()
    a = x.detach().numpy() * w.detach().numpy()
    norms = {n.name: n.grad_norm for n in graph.nodes}
    np.testing.assert_allclose(norms["SumBackward"], 1.0)
    np.testing.assert_allclose(norms["ExpBackward"], np.linalg.norm(np.ones((2, 3))))      # d sum / d exp(a)
    np.testing.assert_allclose(norms["MulBackward"], np.linalg.norm(np.exp(a)))            # d loss / d a
    np.testing.assert_allclose(norms["x"], np.linalg.norm(x.grad.numpy()))
    np.testing.assert_allclose(norms["w"], np.linalg.norm(w.grad.numpy()))
    assert f"|grad| {norms['MulBackward']:.4g}" in graph.text()


def test_a_leaf_used_twice_records_its_total_gradient():
    x = leaf((3,))
    y = x * x
    g = np.array([1.0, -2.0, 0.5])
    with viz.trace(y, {"x": x}) as graph:
        y.backward(mg.tensor(g))
    np.testing.assert_allclose(graph.nodes[1].grad, 2 * x.detach().numpy() * g)


def test_hooks_are_removed_on_exit():
    loss, x, w = known_graph()
    with viz.trace(loss) as graph:
        assert len(x._hooks) == 1 and len(loss.grad_fn.pre_hooks) == 1
    assert len(x._hooks) == 0 and len(loss.grad_fn.pre_hooks) == 0
    loss.backward()
    assert all(n.grad is None for n in graph.nodes)


def test_a_graph_traced_after_backward_says_it_was_freed():
    loss, x, w = known_graph()
    loss.backward()
    text = viz.text_tree(loss)
    assert "saved: freed" in text and viz.trace(loss).saved_bytes() == 0


def test_trace_needs_a_graph():
    with pytest.raises(ValueError, match="no backward graph"):
        viz.trace(leaf((2,)))


def test_a_deep_graph_needs_no_recursion():
    x = mg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    graph = viz.trace(y)
    graph.remove_hooks()
    assert len(graph.ops()) == 5000 and graph.dot().count("->") == 5000


def test_render_without_graphviz_says_what_to_install(monkeypatch, tmp_path):
    loss, _, _ = known_graph()
    monkeypatch.setitem(sys.modules, "graphviz", None)        # import graphviz now raises ImportError
    with pytest.raises(ImportError, match="pip install graphviz"):
        viz.render(loss, tmp_path / "g.png")
    assert not (tmp_path / "g.png").exists()


@pytest.mark.parametrize("missing", ["package", "dot program"])
def test_render_svg_without_graphviz_draws_plain_svg(monkeypatch, tmp_path, missing):
    """No Graphviz (no Python package, or no dot program): an .svg path still gets a drawing, to_svg's, which
    holds one box per node of the graph and one arrow per edge."""
    loss, _, _ = known_graph()
    if missing == "package":
        monkeypatch.setitem(sys.modules, "graphviz", None)
    else:
        monkeypatch.setitem(sys.modules, "graphviz", types.SimpleNamespace(Source=None))
        monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    path = viz.render(loss, tmp_path / "g.svg")
    graph = viz.trace(loss)
    graph.remove_hooks()
    root = ET.fromstring(path.read_text())
    ns = "{http://www.w3.org/2000/svg}"
    assert path.read_text() == viz.to_svg(graph)
    assert len(root.findall(f"{ns}g")) == len(graph.nodes) and len(root.findall(f"{ns}line")) == len(graph.edges())


def test_render_with_graphviz(monkeypatch, tmp_path):
    calls = []

    class Source:
        def __init__(self, source):
            calls.append(source)

        def pipe(self, format):
            return f"<{format}>".encode()

    monkeypatch.setitem(sys.modules, "graphviz", types.SimpleNamespace(Source=Source))
    loss, _, _ = known_graph()
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="dot program is not on PATH"):
        viz.render(loss, tmp_path / "g.png")
    monkeypatch.setattr(viz.shutil, "which", lambda name: "/usr/bin/dot")
    path = viz.render(loss, tmp_path / "g.png")
    assert path.read_bytes() == b"<png>" and calls[-1] == viz.to_dot(loss)
