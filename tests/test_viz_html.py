"""minigrad.viz.to_html / to_svg: what the recording holds (checked against an independent backward and NumPy),
that the page is self-contained, and, in headless Chromium, that clicking through the steps shows the right
node, gradients, Jacobian, hooks, retain_grad and .grad values. A screenshot is written to docs/viz/ when
MINIGRAD_UPDATE_SCREENSHOTS=1 (the committed one came from such a run)."""
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import viz

from .headless_chromium import Browser, find_chromium

DOCS = Path(__file__).resolve().parents[1] / "docs" / "viz"


def double(grad):
    """A hook the page must name."""
    return grad * 2


def build(seed=0):
    """y = layer_norm(tanh(x * w)) with a retained intermediate h = x * w and a hook doubling w's gradient."""
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    w = mg.tensor(rng.standard_normal(3), requires_grad=True)
    h = x * w
    h.retain_grad()
    w.register_hook(double)
    y = F.layer_norm(h.tanh(), (3,))
    return x, w, h, y, rng.standard_normal((2, 3))


def recorded():
    x, w, h, y, g = build()
    return viz.record_backward(y, g, params={"x": x, "w": w}), (x, w, h, y, g)


def plain_backward():
    """The same graph, backward without viz: the gradients the page must show."""
    x, w, h, y, g = build()
    y.backward(mg.tensor(g))
    return x.grad.numpy(), w.grad.numpy(), h.grad.numpy()


def values(a):
    """A recorded array back in its shape (small arrays are stored whole)."""
    assert not a.get("corner")
    return np.array(a["values"], dtype=np.float64).reshape(a["shape"])


def test_recording_matches_an_independent_backward():
    rec, (x, w, h, y, g) = recorded()
    xg, wg, hg = plain_backward()
    names = [n["name"] for n in rec.nodes]
    assert names == ["LayerNormFunctionBackward", "TanhBackward", "MulBackward", "x", "w"]
    assert [s["node"] for s in rec.steps] == [0, 1, 2, 3, 4]                 # the engine's order
    np.testing.assert_allclose(values(rec.steps[0]["arriving"]), g, rtol=1e-12)
    np.testing.assert_allclose(values(rec.nodes[3]["grad"]), xg, rtol=1e-12)
    np.testing.assert_allclose(values(rec.nodes[4]["grad"]), wg, rtol=1e-12)
    np.testing.assert_allclose(values(rec.nodes[2]["retained_grad"]), hg, rtol=1e-12)
    assert rec.nodes[4]["hooks"] == ["double"] and rec.steps[4]["changed_by_hooks"]
    np.testing.assert_allclose(values(rec.steps[4]["after_hooks"]), 2 * values(rec.steps[4]["arriving"]), rtol=1e-12)
    # TanhBackward: sends g * (1 - tanh(h)^2) to MulBackward; its Jacobian is diag(1 - tanh(h)^2)
    tanh = rec.steps[1]
    d = 1 - np.tanh(x.detach().numpy() * w.detach().numpy()) ** 2
    np.testing.assert_allclose(values(tanh["leaving"][0]["grad"]), values(tanh["arriving"]) * d, rtol=1e-12)
    np.testing.assert_allclose(values(tanh["jacobians"][0]["matrix"]), np.diag(d.ravel()), rtol=1e-12, atol=1e-15)
    assert tanh["jacobians"][0]["to"] == 2
    # MulBackward: what it sends to x is x's gradient (x has one use)
    mul = rec.steps[2]
    assert [l["to"] for l in mul["leaving"]] == [3, 4]
    np.testing.assert_allclose(values(mul["leaving"][0]["grad"]), xg, rtol=1e-12)
    # the saved tensors were recorded before backward freed them
    assert rec.nodes[0]["saved"] and all("values" in s for s in rec.nodes[0]["saved"])


def test_layer_norm_jacobian_rows_sum_to_zero():
    """LayerNorm's Jacobian removes the constant vector: each row's Jacobian block sums to zero over inputs."""
    rec, _ = recorded()
    J = values(rec.steps[0]["jacobians"][0]["matrix"])                       # (6, 6): two rows of 3
    assert J.shape == (6, 6)
    np.testing.assert_allclose(J.reshape(2, 3, 2, 3).sum(axis=3), 0, atol=1e-12)
    np.testing.assert_allclose(J[:3, 3:], 0, atol=1e-15)                    # rows do not interact


def test_page_is_self_contained_and_hooks_are_removed(tmp_path):
    rec, (x, w, h, y, g) = recorded()
    text = rec.to_html(tmp_path / "b.html")
    assert (tmp_path / "b.html").read_text() == text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)       # nothing fetched
    assert "<script src" not in text and "<link" not in text
    assert text.count('class="node') == 5 and text.count('class="edge"') == 4
    assert len(x._hooks) == 0 and [hk.__name__ for hk in w._hooks] == ["double"]   # ours are gone


def test_to_svg_is_plain_svg(tmp_path):
    x, w, h, y, g = build()
    svg = viz.to_svg(y, tmp_path / "g.svg", params={"x": x, "w": w})
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg" and "script" not in svg
    labels = [t.text for t in root.iter(ns + "text")]
    assert "TanhBackward" in labels and "x" in labels and "w" in labels
    assert len(list(root.iter(ns + "line"))) == 4
    with viz.trace(y) as graph:                                               # a Graph works too
        y.backward(mg.tensor(g))
    assert any(t.startswith("|grad|") for t in (e.text for e in ET.fromstring(viz.to_svg(graph)).iter(ns + "text")))


def test_record_backward_refuses_a_leaf():
    with pytest.raises(ValueError, match="no backward graph"):
        viz.record_backward(mg.tensor([1.0], requires_grad=True))


# --------------------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def browser():
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium): "
                    "the HTML viewer's browser test needs a headless browser")
    with Browser(exe) as b:
        yield b


def numbers(text):
    return [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]


def test_clicking_through_the_backward_in_chromium(browser, tmp_path):
    rec, (x, w, h, y, g) = recorded()
    xg, wg, hg = plain_backward()
    page = tmp_path / "backward.html"
    rec.to_html(page)
    browser.open(page.as_uri())
    assert browser.text("#counter") == "step 0 / 5"
    assert browser.text("#step-title") == "Before backward"
    assert browser.evaluate("document.querySelectorAll('.node.done').length") == 0

    browser.click("#next")
    assert browser.text("#step-title") == "Step 1: LayerNormFunctionBackward #0"
    np.testing.assert_allclose(numbers(browser.text("#arriving"))[3:], g.ravel(), atol=6e-5)   # after min/max/norm
    assert browser.evaluate("document.querySelectorAll('svg.jacobian rect').length") == 36
    assert "→ TanhBackward #1" in browser.text("#leaving")
    assert browser.evaluate("document.querySelector('#node-0').classList.contains('current')")

    browser.click("#next")
    browser.click("#next")                                      # MulBackward: retain_grad shown
    assert browser.text("#step-title") == "Step 3: MulBackward #2"
    np.testing.assert_allclose(numbers(browser.text("#retained"))[3:], hg.ravel(), atol=6e-5)
    assert browser.evaluate("document.querySelectorAll('svg.jacobian').length") == 2   # d out/d x, d out/d w
    if os.environ.get("MINIGRAD_UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        browser.screenshot(DOCS / "backward_viewer.png")
    shot = tmp_path / "shot.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000

    browser.press("ArrowRight", "ArrowRight", 39)               # the keyboard steps too
    assert browser.text("#step-title") == "Step 4: x #3 (leaf)"
    np.testing.assert_allclose(numbers(browser.text("#leaf-grad"))[3:], xg.ravel(), atol=6e-5)
    browser.click("#next")
    assert browser.text("#step-title") == "Step 5: w #4 (leaf)"
    assert browser.text("#hooks").startswith("double: changed the gradient to")
    np.testing.assert_allclose(numbers(browser.text("#leaf-grad"))[3:], wg.ravel(), atol=6e-5)
    browser.click("#next")                                      # past the end: stays on the last step
    assert browser.text("#counter") == "step 5 / 5"
    assert browser.evaluate("document.querySelectorAll('.node.done').length") == 5

    browser.click("#prev")
    assert browser.text("#step-title") == "Step 4: x #3 (leaf)"
    browser.press("ArrowLeft", "ArrowLeft", 37)
    assert browser.text("#step-title") == "Step 3: MulBackward #2"
    browser.click("#first")
    assert browser.text("#step-title") == "Before backward"
    browser.click("#last")
    assert browser.text("#counter") == "step 5 / 5"


def test_an_input_used_twice_gets_both_shares():
    """y = x * x + exp(x): MulBackward sends x two shares (one per input slot), whose sum with exp's share is
    x.grad, and the Jacobian of the product with respect to each slot is diag(x)."""
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal(3), requires_grad=True)
    g = rng.standard_normal(3)
    rec = viz.record_backward(x * x + x.exp(), g)
    assert [n["name"] for n in rec.nodes] == ["AddBackward", "MulBackward", "leaf", "ExpBackward"]
    mul = next(s for s in rec.steps if s["node"] == 1)
    exp = next(s for s in rec.steps if s["node"] == 3)
    shares = [values(l["grad"]) for l in mul["leaving"]] + [values(exp["leaving"][0]["grad"])]
    xv = x.detach().numpy()
    np.testing.assert_allclose(sum(shares), g * (2 * xv + np.exp(xv)), rtol=1e-12)
    np.testing.assert_allclose(values(rec.nodes[2]["grad"]), x.grad.numpy(), rtol=1e-12)
    for j in mul["jacobians"]:
        np.testing.assert_allclose(values(j["matrix"]), np.diag(xv), rtol=1e-12)
