"""The numbers of the derivation pages: one generator per ``<!-- BEGIN: example NAME -->`` block.

Each generator runs minigrad (the fused Function, and usually the composite twin too), checks the
result against an independent plain-NumPy transcription of the page's formula, and returns the text
of the block. A disagreement raises, so ``build.py --check`` (run by tests/test_docs.py) fails when
the code and the page part ways. Numbers are printed with 4 decimals, or as bounds that hold on any
machine, never as rounding noise.
"""
import functools
import importlib.util
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad import viz
from minigrad.ops.norm.batchnorm import batch_norm_composite
from minigrad.ops.norm.groupnorm import group_norm_composite, instance_norm_composite
from minigrad.ops.norm.layernorm import layer_norm_composite
from minigrad.ops.norm.localresponse import local_response_norm_composite
from minigrad.ops.norm.rmsnorm import rms_norm_composite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {}


def _load_example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


by_hand = _load_example("rmsnorm_by_hand")   # X, W, G, the hand formulas and the array formatting


def example(name):
    """Register the decorated function as the generator of block ``example NAME``."""
    def register(fn):
        EXAMPLES[name] = fn
        return fn
    return register


# --------------------------------------------------------------------------- helpers
def text(*lines):
    """A fenced text block of the given lines (each a string, or a (label, array) pair)."""
    out = [by_hand.format_array(*line, indent=0) if isinstance(line, tuple) else line for line in lines]
    return "```text\n" + "\n".join(out) + "\n```"


def same(a, b, what, tol=1e-12):
    """Raise (and so fail the build) unless ``a`` and ``b`` agree to ``tol``."""
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=tol,
                               atol=tol, err_msg=what)


def run(fn, arrays, g):
    """Call ``fn`` on leaf tensors made from ``arrays`` (None passes through), backpropagate ``g``;
    return the output, its grad_fn's saved arrays (read before backward frees them) and the gradients."""
    leaves = [None if a is None else mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    y = fn(*leaves)
    saved = tuple((y if y._base is None else y._base).grad_fn.saved)   # (instance_norm's result is a view)
    y.backward(mg.tensor(g))
    return y.detach().numpy(), saved, [None if t is None else t.grad.numpy() for t in leaves]


def twins(fused, composite, arrays, g):
    """``run`` the fused form and the composite twin, check they agree, return the fused result."""
    y, saved, grads = run(fused, arrays, g)
    y2, _, grads2 = run(composite, arrays, g)
    same(y, y2, "forward: fused vs composite")
    for i, (a, b) in enumerate(zip(grads, grads2)):
        if a is not None:
            same(a, b, f"gradient of input {i}: fused vs composite")
    return y, saved, grads


def random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def graph_of(fn, arrays, names):
    """The text tree of ``fn``'s backward graph on leaves made from ``arrays``, labelled with ``names``."""
    leaves = [mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    return "```text\n" + viz.text_tree(fn(*leaves), dict(zip(names, leaves))) + "\n```"


def saved_table(cases, arrays):
    """Markdown table: for each (label, fn), the ops in its backward graph, the bytes all nodes save,
    and the bytes they hold beyond the leaves (each buffer once, arrays aliasing an input left out)."""
    rows = ["| implementation | ops in the graph | bytes saved (sum over ops) | new memory held for backward |",
            "|---|---:|---:|---:|"]
    for label, fn in cases:
        leaves = [mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
        graph = viz.trace(fn(*leaves))
        graph.remove_hooks()
        rows.append(f"| {label} | {len(graph.ops())} | {graph.saved_bytes():,} | "
                    f"{graph.saved_bytes(unique=True, include_leaves=False):,} |")
    shape = " x ".join(map(str, np.shape(arrays[0])))
    return f"x of shape {shape}, float64 (8 bytes a number):\n\n" + "\n".join(rows)


# --------------------------------------------------------------------------- plain-NumPy oracles
def centered_backward(g, w, xhat, rstd, axes):
    """The page formula dx = rstd * (gw - mean_A(gw) - xhat * mean_A(gw * xhat)), A = ``axes``."""
    gw = g * w
    return rstd * (gw - gw.mean(axis=axes, keepdims=True) - xhat * (gw * xhat).mean(axis=axes, keepdims=True))


def centered_forward(x, axes, eps):
    """(mean, rstd, xhat) over ``axes`` with the biased variance, statistics kept broadcastable."""
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    return mean, rstd, (x - mean) * rstd


# --------------------------------------------------------------------------- RMSNorm
def _rms(**kw):
    """(fused, composite) RMSNorm over the last dim with options ``kw``, each called as fn(x, w)."""
    return (lambda x, w=None: F.rms_norm(x, (x.shape[-1],), w, **kw),
            lambda x, w=None: rms_norm_composite(x, (x.shape[-1],), w, **kw))


@example("rms.forward")
def rms_forward():
    fused, composite = _rms()
    y, saved, _ = twins(fused, composite, [by_hand.X, by_hand.W], by_hand.G)
    hand = by_hand.hand_forward(by_hand.X, by_hand.W)
    same(saved[1], hand["rstd"], "rstd saved by RMSNormFunction vs hand")
    same(y, hand["y"], "y vs hand")
    return text(("x", by_hand.X), ("w", by_hand.W), "",
                ("ms   = mean(x^2) per row", hand["ms"]),
                ("rstd = 1/sqrt(ms + eps)  ", saved[1]), "",
                ("xhat = x * rstd", hand["xhat"]),
                ("y    = xhat * w", y))


@example("rms.backward")
def rms_backward():
    fused, composite = _rms()
    _, _, (dx, dw) = twins(fused, composite, [by_hand.X, by_hand.W], by_hand.G)
    hand = by_hand.hand_backward(by_hand.X, by_hand.W, by_hand.G)
    same(dx, hand["dx"], "dx: fused vs hand")
    same(dw, hand["dw"], "dw: fused vs hand")
    return text(("g", by_hand.G), "",
                ("gw = g * w", hand["gw"]),
                ("s  = sum(gw * xhat) / d per row", hand["s"]),
                ("dx = rstd * (gw - xhat * s)", dx),
                ("dw = sum over rows of g * xhat", dw), "",
                "fused backward, autograd through the composite twin and the NumPy lines above agree to 1e-12")


@example("rms.orthogonal")
def rms_orthogonal():
    x, w, g = random((3, 8), 0), 1 + 0.5 * random(8, 1), random((3, 8), 2)
    lines = []
    for eps in (1e-6, 0.1):
        fused, composite = _rms(eps=eps)
        _, saved, (dx, _) = twins(fused, composite, [x, w], g)
        rstd = saved[1]
        dot = (x * dx).sum(axis=1)
        predicted = eps * rstd ** 3 * (x * g * w).sum(axis=1)
        same(dot, predicted, "x . dx vs eps * rstd^3 * (x . gw)", tol=1e-12)
        lines += [f"eps = {eps:g}", "  x . dx per row          = " + "  ".join(f"{v: .3e}" for v in dot),
                  "  eps * rstd^3 * (x . gw) = " + "  ".join(f"{v: .3e}" for v in predicted)]
    return text(*lines)


@example("rms.sum_loss")
def rms_sum_loss():
    x = random((2, 6), 3)
    fused, composite = _rms()
    _, _, (dx,) = twins(fused, composite, [x], np.ones_like(x))
    return text(("dx for L = sum(rms_norm(x)), no weight", dx))


@example("rms.graph")
def rms_graph():
    return graph_of(lambda x, w: rms_norm_composite(x, (4,), w), [by_hand.X, by_hand.W], ["x", "w"])


@example("rms.saved")
def rms_saved():
    x, w = random((64, 512), 4), random(512, 5)
    return saved_table([("fused `RMSNormFunction`", lambda x, w: F.rms_norm(x, (512,), w)),
                        ("composite twin, autograd", lambda x, w: rms_norm_composite(x, (512,), w))], [x, w])


@example("rms.variants")
def rms_variants():
    x, w, g, eps = by_hand.X, by_hand.W, by_hand.G, 0.5
    d = x.shape[1]
    ms, ms_head = (x * x).mean(axis=1), (x[:, :2] ** 2).mean(axis=1)   # ms over all d, and over the first k = 2
    # (label, options, rstd, c, k): dx = rstd * (gw - c * x * mask_k * sum(gw * xhat) / k)
    variants = [("eps inside (PyTorch)", {}, 1 / np.sqrt(ms + eps), 1 / np.sqrt(ms + eps), d),
                ("eps outside", dict(eps_inside_sqrt=False), 1 / (np.sqrt(ms) + eps), 1 / np.sqrt(ms), d),
                ("partial p = 0.5 (k = 2)", dict(partial=0.5), 1 / np.sqrt(ms_head + eps), 1 / np.sqrt(ms_head + eps),
                 2)]
    lines = [f"x, w and g as in the worked example, eps = {eps}", ""]
    for label, options, rstd, c, k in variants:
        fused, composite = _rms(eps=eps, **options)
        _, saved, (dx, _) = twins(fused, composite, [x, w], g)
        same(saved[1], rstd, f"{label}: rstd")
        gw, mask = g * w, np.arange(d) < k
        proj = (gw * x * rstd[:, None]).sum(axis=1, keepdims=True) / k
        same(dx, rstd[:, None] * (gw - c[:, None] * x * mask * proj), f"{label}: dx")
        lines += [label, ("  rstd ", rstd), ("  dx[0]", dx[0]), ("  dx[1]", dx[1]), ""]

    b = np.array([0.1, 0.2, 0.3, 0.4])
    y, _, (dx_b, _, db) = twins(lambda x, w, b: F.rms_norm(x, (d,), w, eps=eps, bias=b),
                                lambda x, w, b: rms_norm_composite(x, (d,), w, eps=eps, bias=b), [x, w, b], g)
    _, _, (dx, _) = run(_rms(eps=eps)[0], [x, w], g)
    same(dx_b, dx, "bias leaves dx unchanged")
    same(db, g.sum(axis=0), "db = sum over rows of g")
    lines += [("with bias b", b), ("  db = sum over rows of g", db), "  dx: the same as eps inside, without bias"]
    return text(*lines)


# --------------------------------------------------------------------------- LayerNorm
B = np.array([0.1, 0.2, 0.3, 0.4])   # the bias of the LayerNorm worked example


def _ln(eps=1e-5):
    """(fused, composite) LayerNorm over the last dim, each called as fn(x, w=None, b=None)."""
    return (lambda x, w=None, b=None: F.layer_norm(x, (x.shape[-1],), w, b, eps),
            lambda x, w=None, b=None: layer_norm_composite(x, (x.shape[-1],), w, b, eps))


@example("ln.graph")
def ln_graph():
    return graph_of(lambda x, w, b: layer_norm_composite(x, (4,), w, b), [by_hand.X, by_hand.W, B], ["x", "w", "b"])


def centered_forward_example(forms, x, w, b, g, axis, name, x_label, per):
    """The forward of a centered norm (LayerNorm over rows, BatchNorm over channels) on x, w, b: the
    statistics ``name`` saved, checked against NumPy, and xhat, y. ``per`` names what a statistic is of."""
    y, saved, _ = twins(*forms, [x, w, b], g)
    mean, rstd, xhat = centered_forward(x, axis, 1e-5)
    same(saved[1], mean.ravel(), f"mean saved by {name}")
    same(saved[2], rstd.ravel(), f"rstd saved by {name}")
    same(y, xhat * w + b, "y vs NumPy")
    stats = [("mean = mean(x)", saved[1]), ("var  = mean((x - mean)^2)", ((x - mean) ** 2).mean(axis=axis)),
             ("rstd = 1/sqrt(var + 1e-5)", saved[2])]
    return text((x_label, x), ("w", w), ("b", b), "",
                *[(f"{label:26}{per}", value) for label, value in stats], "",
                ("xhat = (x - mean) * rstd", xhat),
                ("y    = xhat * w + b", y))


def centered_backward_example(forms, x, w, b, g, axis, per, summed_over):
    """The backward of the same, each term of the compact formula shown, checked against NumPy."""
    _, _, (dx, dw, db) = twins(*forms, [x, w, b], g)
    _, rstd, xhat = centered_forward(x, axis, 1e-5)
    gw = g * w
    same(dx, centered_backward(g, w, xhat, rstd, axis), "dx: fused vs NumPy")
    same(dw, (g * xhat).sum(axis=0), "dw")   # both examples are 2-D with parameters along the last axis
    same(db, g.sum(axis=0), "db")
    return text(("g", g), "",
                ("gw = g * w", gw),
                (f"mean(gw) {per}       ", gw.mean(axis=axis)),
                (f"mean(gw * xhat) {per}", (gw * xhat).mean(axis=axis)),
                ("dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))", dx),
                (f"dw = sum over {summed_over} of g * xhat", dw),
                (f"db = sum over {summed_over} of g", db), "",
                "fused backward, autograd through the composite twin and the NumPy lines above agree to 1e-12")


@example("ln.forward")
def ln_forward():
    return centered_forward_example(_ln(), by_hand.X, by_hand.W, B, by_hand.G, 1, "LayerNormFunction", "x",
                                    "per row")


@example("ln.backward")
def ln_backward():
    return centered_backward_example(_ln(), by_hand.X, by_hand.W, B, by_hand.G, 1, "per row", "rows")


def _bound(value, bound=1e-12):
    """``value`` as a machine-independent statement: checked to be below ``bound``."""
    assert abs(value) < bound, f"{value} is not below {bound}"
    return f"below {bound:g}"


@example("ln.sum_loss")
def ln_sum_loss():
    x, eps = random((4, 6), 7), 1e-5
    _, rstd, xhat = centered_forward(x, 1, eps)
    fused, composite = _ln(eps)
    ones, g = np.ones_like(x), random((4, 6), 8)
    _, _, (dx_ones,) = twins(fused, composite, [x], ones)
    _, _, (dx_random,) = twins(fused, composite, [x], g)
    same(dx_random, centered_backward(g, 1.0, xhat, rstd, 1), "dx for a random g")
    wrong = [("correct: rstd*(g - mean(g) - xhat*mean(g*xhat))", lambda g: centered_backward(g, 1.0, xhat, rstd, 1)),
             ("forgot the xhat term: rstd*(g - mean(g))", lambda g: rstd * (g - g.mean(axis=1, keepdims=True))),
             ("forgot rstd: g - mean(g) - xhat*mean(g*xhat)",
              lambda g: g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True)),
             ("returns zeros", lambda g: np.zeros_like(g))]
    rows = ["| backward | max abs dx, L = sum(y) | max abs error, random upstream g |", "|---|---|---|"]
    for label, backward in wrong:
        error = np.abs(backward(g) - dx_random).max()
        rows.append(f"| {label} | {_bound(np.abs(backward(ones)).max())} | "
                    f"{_bound(error) if label.startswith('correct') else f'{error:.4f}'} |")
    return (f"x: 4 random rows of 6, no weight. minigrad's fused backward gives max abs dx "
            f"{_bound(np.abs(dx_ones).max())} for L = sum(y).\n\n" + "\n".join(rows))


@example("ln.orthogonal")
def ln_orthogonal():
    x, w, g, eps = random((3, 8), 9), 1 + 0.5 * random(8, 10), random((3, 8), 11), 1e-5
    _, _, (dx, _) = twins(*_ln(eps), [x, w], g)
    _, rstd, xhat = centered_forward(x, 1, eps)
    predicted = eps * rstd.ravel() ** 3 * (xhat * g * w).sum(axis=1)
    same((xhat * dx).sum(axis=1), predicted, "xhat . dx", tol=1e-13)
    return text(f"sum(dx) per row: {_bound(np.abs(dx.sum(axis=1)).max())}",
                "xhat . dx per row           = " + "  ".join(f"{v: .3e}" for v in (xhat * dx).sum(axis=1)),
                "eps * rstd^3 * (xhat . gw)  = " + "  ".join(f"{v: .3e}" for v in predicted))


@example("ln.saved")
def ln_saved():
    x, w, b = random((64, 512), 12), random(512, 13), random(512, 14)
    return saved_table([("fused `LayerNormFunction`", lambda x, w, b: F.layer_norm(x, (512,), w, b)),
                        ("composite twin, autograd", lambda x, w, b: layer_norm_composite(x, (512,), w, b))],
                       [x, w, b])


# --------------------------------------------------------------------------- BatchNorm
BN_X = np.array([[1.0, 0.0], [2.0, 4.0], [3.0, -2.0], [6.0, 2.0]])   # (N, C) = (4, 2)
BN_W, BN_B = np.array([2.0, 0.5]), np.array([0.0, 1.0])
BN_G = np.array([[0.1, -0.3], [0.2, 0.1], [-0.4, 0.2], [0.3, 0.5]])


def _bn(training=True, running=(None, None)):
    """(fused, composite) batch_norm with the given mode and running buffers, each called as fn(x, w, b)."""
    return (lambda x, w=None, b=None: F.batch_norm(x, *running, w, b, training),
            lambda x, w=None, b=None: batch_norm_composite(x, *running, w, b, training))


@example("bn.graph")
def bn_graph():
    return graph_of(lambda x, w, b: batch_norm_composite(x, None, None, w, b, True), [BN_X, BN_W, BN_B],
                    ["x", "w", "b"])


@example("bn.forward")
def bn_forward():
    return centered_forward_example(_bn(), BN_X, BN_W, BN_B, BN_G, 0, "BatchNormFunction",
                                    "x (N = 4 rows, C = 2 channels)", "per channel")


@example("bn.backward")
def bn_backward():
    return centered_backward_example(_bn(), BN_X, BN_W, BN_B, BN_G, 0, "per channel", "N")


@example("bn.coupling")
def bn_coupling():
    g = np.zeros_like(BN_G)
    g[1] = BN_G[1]                       # only sample 1 receives an upstream gradient
    running = (mg.tensor(BN_X.mean(axis=0)), mg.tensor(BN_X.var(axis=0, ddof=1)))
    _, _, (dx_train, _, _) = twins(*_bn(), [BN_X, BN_W, BN_B], g)
    _, _, (dx_eval, _, _) = twins(*_bn(False, running), [BN_X, BN_W, BN_B], g)
    same(dx_eval, g * BN_W / np.sqrt(running[1].numpy() + 1e-5), "eval: dx = g * w * rstd_running")
    return text("upstream g: row 1 of the g above, zeros elsewhere", "",
                ("dx, training", dx_train), ("dx, eval    ", dx_eval))


def _track(momentum, batches):
    """Train an nn.BatchNorm1d(2) (float64) on ``batches``; check and return its buffers after each."""
    bn = nn.BatchNorm1d(2, momentum=momentum).double()
    mean, var = np.zeros(2), np.ones(2)
    history = []
    for step, batch in enumerate(batches, 1):
        bn(mg.tensor(batch))
        m = 0.1 if momentum is not None else 1 / step      # None: the cumulative average
        mean = (1 - m) * mean + m * batch.mean(axis=0)
        var = (1 - m) * var + m * batch.var(axis=0, ddof=1)  # unbiased: divide by n - 1
        same(bn.running_mean.numpy(), mean, f"running_mean after batch {step}")
        same(bn.running_var.numpy(), var, f"running_var after batch {step}")
        assert int(bn.num_batches_tracked.item()) == step
        history.append((bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()))
    return history


@example("bn.running")
def bn_running():
    batches = [BN_X, 2 * BN_X, BN_X + 1]
    lines = ["batches: x, 2x, x + 1 (x as above); running_mean starts at 0, running_var at 1", ""]
    for momentum in (0.1, None):
        lines.append(f"momentum = {momentum}")
        for step, (mean, var) in enumerate(_track(momentum, batches), 1):
            head = f"  after batch {step}: "
            lines += [(head + "running_mean", mean), (" " * len(head) + "running_var ", var)]
    return text(*lines)


@example("bn.eval")
def bn_eval():
    rm, rv = _track(0.1, [BN_X, 2 * BN_X, BN_X + 1])[-1]
    x = np.array([[2.0, 1.0], [4.0, -1.0]])
    g = np.array([[0.5, -0.2], [0.1, 0.3]])
    running = (mg.tensor(rm), mg.tensor(rv))
    y, _, (dx, dw, _) = twins(*_bn(False, running), [x, BN_W, BN_B], g)
    rstd = 1 / np.sqrt(rv + 1e-5)
    xhat = (x - rm) * rstd
    same(y, xhat * BN_W + BN_B, "eval forward")
    same(dx, g * BN_W * rstd, "eval dx")
    same(dw, (g * xhat).sum(axis=0), "eval dw")
    return text("running statistics: those after the third batch, momentum 0.1", "",
                ("x", x), ("g", g), "",
                ("xhat = (x - running_mean) / sqrt(running_var + eps)", xhat),
                ("y    = xhat * w + b", y),
                ("dx   = g * w * rstd_running", dx),
                ("dw   = sum over N of g * xhat", dw))


@example("bn.saved")
def bn_saved():
    x, w, b = random((16, 32, 8, 8), 15), random(32, 16), random(32, 17)
    return saved_table([("fused `BatchNormFunction`", lambda x, w, b: F.batch_norm(x, None, None, w, b, True)),
                        ("composite twin, autograd",
                         lambda x, w, b: batch_norm_composite(x, None, None, w, b, True))], [x, w, b])


# --------------------------------------------------------------------------- GroupNorm and InstanceNorm
GN_X = np.array([[[1.0, 2.0], [3.0, 5.0], [0.0, -1.0], [2.0, 1.0]],
                 [[4.0, 0.0], [2.0, 2.0], [1.0, 1.0], [-3.0, 3.0]]])      # (N, C, L) = (2, 4, 2)
GN_W, GN_B = np.array([1.0, 2.0, 0.5, -1.0]), np.array([0.0, 0.1, 0.2, 0.3])
GN_G = np.round(random(GN_X.shape, 18), 1)                                  # upstream gradient, 1 decimal


def _gn(groups, eps=1e-5):
    """(fused, composite) group_norm with ``groups`` groups, each called as fn(x, w=None, b=None)."""
    return (lambda x, w=None, b=None: F.group_norm(x, groups, w, b, eps),
            lambda x, w=None, b=None: group_norm_composite(x, groups, w, b, eps))


def group_oracle(x, g, w, groups, eps=1e-5):
    """GroupNorm's forward statistics and backward in plain NumPy, on the (N, G, C/G * S) view."""
    n, c = x.shape[:2]
    view = (n, groups, -1)
    mean, rstd, xhat = centered_forward(x.reshape(view), 2, eps)
    xhat = xhat.reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    gw = (g * w.reshape(per_channel)).reshape(view)
    dx = centered_backward(gw, 1.0, xhat.reshape(view), rstd, 2).reshape(x.shape)
    sum_axes = (0,) + tuple(range(2, x.ndim))
    return dict(mean=mean.reshape(n, groups), rstd=rstd.reshape(n, groups), xhat=xhat, dx=dx,
                dw=(g * xhat).sum(axis=sum_axes), db=g.sum(axis=sum_axes))


@example("gn.graph")
def gn_graph():
    return graph_of(lambda x, w, b: group_norm_composite(x, 2, w, b), [GN_X, GN_W, GN_B], ["x", "w", "b"])


@example("gn.forward")
def gn_forward():
    y, saved, _ = twins(*_gn(2), [GN_X, GN_W, GN_B], GN_G)
    ref = group_oracle(GN_X, GN_G, GN_W, 2)
    same(saved[1], ref["mean"], "mean saved by GroupNormFunction")
    same(saved[2], ref["rstd"], "rstd saved by GroupNormFunction")
    same(y, ref["xhat"] * GN_W[:, None] + GN_B[:, None], "y vs NumPy")
    return text(("x (N = 2, C = 4, L = 2)", GN_X), ("w", GN_W), ("b", GN_B), "",
                ("mean (N, G)", saved[1]), ("rstd (N, G)", saved[2]), "",
                ("xhat", ref["xhat"]), ("y = xhat * w[c] + b[c]", y))


@example("gn.backward")
def gn_backward():
    _, _, (dx, dw, db) = twins(*_gn(2), [GN_X, GN_W, GN_B], GN_G)
    ref = group_oracle(GN_X, GN_G, GN_W, 2)
    for name, value in (("dx", dx), ("dw", dw), ("db", db)):
        same(value, ref[name], f"{name} vs NumPy")
    return text(("g", GN_G), "", ("dx", dx), ("dw = sum over N and L of g * xhat", dw),
                ("db = sum over N and L of g", db), "",
                "fused backward, autograd through the composite twin and the NumPy oracle agree to 1e-12")


@example("gn.equivalences")
def gn_equivalences():
    x, g = random((2, 6, 5), 19), random((2, 6, 5), 20)
    y1, _, (dx1,) = run(_gn(1)[0], [x], g)
    y2, _, (dx2,) = run(lambda x: F.layer_norm(x, (6, 5)), [x], g)
    y3, _, (dx3,) = run(_gn(6)[0], [x], g)
    y4, _, (dx4,) = run(F.instance_norm, [x], g)
    one = max(np.abs(y1 - y2).max(), np.abs(dx1 - dx2).max())
    per_channel = max(np.abs(y3 - y4).max(), np.abs(dx3 - dx4).max())
    return text("x and g: random, (N, C, L) = (2, 6, 5), no affine parameters; largest difference of outputs and dx:",
                f"group_norm(G = 1) vs layer_norm over (C, L): {_bound(one)}",
                f"group_norm(G = C) vs instance_norm:          {_bound(per_channel)}")


@example("gn.saved")
def gn_saved():
    x, w, b = random((16, 32, 8, 8), 21), random(32, 22), random(32, 23)
    return saved_table([("fused `GroupNormFunction`", lambda x, w, b: F.group_norm(x, 8, w, b)),
                        ("composite twin, autograd", lambda x, w, b: group_norm_composite(x, 8, w, b))], [x, w, b])


IN_X = np.array([[[1.0, 2.0, 6.0], [0.0, 4.0, -1.0]], [[3.0, 3.0, 0.0], [2.0, -2.0, 5.0]]])   # (2, 2, 3)
IN_G = np.round(random(IN_X.shape, 24), 1)


def _in(**kw):
    return (lambda x, w=None, b=None: F.instance_norm(x, weight=w, bias=b, **kw),
            lambda x, w=None, b=None: instance_norm_composite(x, weight=w, bias=b, **kw))


@example("in.forward")
def in_forward():
    y, saved, (dx,) = twins(*_in(), [IN_X], IN_G)
    ref = group_oracle(IN_X, IN_G, np.ones(2), 2)
    same(saved[1], ref["mean"], "instance means")
    same(saved[2], ref["rstd"], "instance rstd")
    same(y, ref["xhat"], "y")
    same(dx, ref["dx"], "dx")
    return text(("x (N = 2, C = 2, L = 3)", IN_X), "",
                ("mean (N, C)", saved[1]), ("rstd (N, C)", saved[2]), ("y = xhat", y), "",
                ("g", IN_G), ("dx", dx), "",
                "fused backward, autograd through the composite twin and the NumPy oracle agree to 1e-12")


@example("in.running")
def in_running():
    lines = []
    for momentum in (0.1, None):
        norm = nn.InstanceNorm1d(2, momentum=momentum, track_running_stats=True).double()
        mean, var = np.zeros(2), np.ones(2)
        for batch in (IN_X, 2 * IN_X):
            norm(mg.tensor(batch))
            if momentum is not None:   # None is passed on as 0: the buffers never move
                mean = (1 - momentum) * mean + momentum * batch.mean(axis=2).mean(axis=0)
                var = (1 - momentum) * var + momentum * batch.var(axis=2, ddof=1).mean(axis=0)
        same(norm.running_mean.numpy(), mean, "running_mean")
        same(norm.running_var.numpy(), var, "running_var")
        lines += [f"momentum = {momentum}: after the batches x and 2x, "
                  f"num_batches_tracked = {int(norm.num_batches_tracked.item())}",
                  ("  running_mean", norm.running_mean.numpy()), ("  running_var ", norm.running_var.numpy())]
        if momentum is not None:
            norm.eval()
            y = norm(mg.tensor(IN_X)).numpy()
            same(y, (IN_X - mean[:, None]) / np.sqrt(var[:, None] + 1e-5), "eval uses the running buffers")
            lines += [("  eval: y = (x - running_mean) / sqrt(running_var + eps)", y), ""]
    return text(*lines)


@example("in.saved")
def in_saved():
    x = random((16, 32, 8, 8), 25)
    return saved_table([("fused (`GroupNormFunction`, G = C)", F.instance_norm),
                        ("composite twin, autograd", instance_norm_composite)], [x])


# --------------------------------------------------------------------------- the Jacobian of each norm
jac = _load_example("jacobians")   # the cases, the NumPy closed form, the structure read-out, the heat map
FIGURES = {}                        # figure NAME -> (title, fn returning the panels), see jacobian_figure


def checked_case(name):
    """A case of examples/jacobians.py and its closed-form J, checked against autograd (fused and composite)
    and its eigenvalues against the prediction rstd, rstd·eps/(var + eps), 0."""
    case = jac.CASES[name]()
    J = jac.checked_jacobian(case)
    if case.closed_form is None:
        same(jac.structure(case, J)["eigenvalues"], jac.predicted_eigenvalues(case), "eigenvalues of a block")
    return case, J


def jacobian_text(*names):
    """The block text of one or more cases: x, J in display order, its structure."""
    lines = []
    for name in names:
        case, J = checked_case(name)
        order = "entries channel by channel" if case.order is not None else "entries in x.ravel() order"
        lines += [f"{case.title}", ("x", case.x), "",
                  f"J = dy/dx, {J.shape[0]} x {J.shape[1]}, {order}:", jac.format_matrix(case.shown(J)), "",
                  *jac.structure_lines(case, J), ""]
    return text(*lines[:-1], "", "the closed form (NumPy) equals mg.autograd.functional.jacobian of the fused layer "
                "and of the composite twin to 1e-12")


def weight_free_panel(case):
    """The panel of the same input without the weight: the symmetric rstd · (I [- 1 1ᵀ/m] - xhat xhatᵀ/m)."""
    J = jac.block_jacobian(case.x, np.ones_like(case.x), case.rows, case.eps, case.centered)
    return jac.panel(case, J, "without weight: d xhat / dx (symmetric)")


def jacobian_figure(name, title, *panels):
    """Register figure ``name``: its panels are (case, subtitle) pairs, subtitle None for the case's
    weight-free matrix."""
    def make():
        out = []
        for case_name, subtitle in panels:
            case, J = checked_case(case_name)
            out.append(weight_free_panel(case) if subtitle is None else jac.panel(case, J, subtitle))
        return out
    FIGURES[name] = (title, make)


# block "example PREFIX.jacobian" -> the cases it shows
for _prefix, _cases in {"rms": ("rms",), "ln": ("ln",), "bn": ("bn", "bn_eval"), "gn": ("gn",), "in": ("in",)}.items():
    example(f"{_prefix}.jacobian")(functools.partial(jacobian_text, *_cases))

jacobian_figure("rms.jacobian", "RMSNorm: the Jacobian dy/dx of two rows of 4",
                ("rms", "dy/dx = diag(w) rstd (I - xhat xhat^T/d)"), ("rms", None))
jacobian_figure("ln.jacobian", "LayerNorm: the Jacobian dy/dx of two rows of 4",
                ("ln", "dy/dx = diag(w) rstd (I - 11^T/d - xhat xhat^T/d)"), ("ln", None))
jacobian_figure("bn.jacobian", "BatchNorm: the Jacobian dy/dx of a (4, 2) batch, entries channel by channel",
                ("bn", "training: batch statistics"), ("bn_eval", "eval: running statistics"))
jacobian_figure("gn.jacobian", "GroupNorm (G = 2): the Jacobian dy/dx of a (2, 4, 2) input",
                ("gn", "dy/dx, one block per (sample, group)"))
jacobian_figure("in.jacobian", "InstanceNorm: the Jacobian dy/dx of a (2, 2, 3) input",
                ("in", "dy/dx, one block per (sample, channel)"))


# --------------------------------------------------------------------------- the second derivative
def central_gradient(f, a, h=1e-5):
    """d f / d a of a scalar NumPy function ``f`` by central differences, entry by entry."""
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[i] = h
        grad[i] = (f(a + step) - f(a - step)) / (2 * h)
    return grad


def second_order_numbers(composite, x, w, g, v, numpy_dx):
    """The second-order quantities of L = sum(g * norm(x, w)), by autograd through the composite twin,
    each checked against central differences of ``numpy_dx(x, w, g)`` (the page's first-order formula):

        dx      the first derivative, computed with create_graph=True so that it has a graph
        Hv      H v = d/dx (dx · v), H the Hessian of L in x (also via autograd.functional.hvp)
        dP_dx, dP_dw, dP_dg   the gradient of the penalty P = sum(dx²) in x, w and the upstream g

    ``w`` may be None (no weight; then there is no dP_dw)."""
    xt, gt = mg.tensor(x, requires_grad=True), mg.tensor(g, requires_grad=True)
    wt = None if w is None else mg.tensor(w, requires_grad=True)
    loss = (gt * composite(xt, wt)).sum()
    dx, = mg.autograd.grad(loss, xt, create_graph=True)
    hv, = mg.autograd.grad((dx * mg.tensor(v)).sum(), xt, retain_graph=True)
    leaves = [t for t in (xt, wt, gt) if t is not None]
    penalty_grads = mg.autograd.grad((dx * dx).sum(), leaves)
    out = dict(dx=dx.detach().numpy(), Hv=hv.numpy(),
               **dict(zip(["dP_dx", "dP_dw", "dP_dg"] if w is not None else ["dP_dx", "dP_dg"],
                          [t.numpy() for t in penalty_grads])))

    def loss_of_x(x_):
        return (mg.tensor(g) * composite(x_, None if w is None else mg.tensor(w))).sum()

    _, hv_functional = mg.autograd.functional.hvp(loss_of_x, mg.tensor(x), mg.tensor(v))
    same(hv_functional.numpy(), out["Hv"], "autograd.functional.hvp vs grad of (dx . v)")

    fd = 1e-6   # central differences with h = 1e-5: accurate to about 1e-9 here
    same(out["dx"], numpy_dx(x, w, g), "dx vs the page's formula")
    h = 1e-5
    same(out["Hv"], (numpy_dx(x + h * v, w, g) - numpy_dx(x - h * v, w, g)) / (2 * h), "H v", tol=fd)
    same(out["dP_dx"], central_gradient(lambda a: (numpy_dx(a, w, g) ** 2).sum(), x), "dP/dx", tol=fd)
    same(out["dP_dg"], central_gradient(lambda a: (numpy_dx(x, w, a) ** 2).sum(), g), "dP/dg", tol=fd)
    if w is not None:
        same(out["dP_dw"], central_gradient(lambda a: (numpy_dx(x, a, g) ** 2).sum(), w), "dP/dw", tol=fd)
    same(out["dP_dg"], 2 * jacobian_times(composite, x, w, out["dx"]), "dP/dg = 2 J dx")
    return out


def jacobian_times(composite, x, w, u):
    """J u (the Jacobian of the norm in x, times u) by autograd.functional.jvp."""
    _, ju = mg.autograd.functional.jvp(lambda x_: composite(x_, None if w is None else mg.tensor(w)), mg.tensor(x),
                                       mg.tensor(u))
    return ju.numpy()


def second_order_text(numbers, v, invariance):
    """The block text of ``second_order_numbers``; ``invariance`` is a (label, value) line checked by the caller."""
    def fixed(name, a):   # 4 decimals even when entries differ by orders of magnitude
        return f"{name} = " + jac.format_matrix(a, prefix=f"{name} = ", separator="  ")

    label, value = invariance
    lines = [("v", v), "",
             fixed("dx  = grad(L, x, create_graph=True)", numbers["dx"]),
             fixed("H v = grad(sum(dx * v), x)        ", numbers["Hv"]),
             f"{label}: {_bound(value)}", "",
             "gradient penalty P = sum(dx^2), one backward through the backward:",
             fixed("dP/dx", numbers["dP_dx"])]
    if "dP_dw" in numbers:
        lines.append(fixed("dP/dw", numbers["dP_dw"]))
    lines += [fixed("dP/dg", numbers["dP_dg"]), "",
              "H v equals autograd.functional.hvp; dP/dg equals 2 J dx (autograd.functional.jvp);",
              "every line equals central differences of the NumPy formula for dx to 1e-6"]
    return text(*lines)


def hessian_times(composite, x, w, g, u):
    """H u for L = sum(g * norm(x, w)), by autograd.functional.hvp through the composite twin."""
    def loss_of_x(x_):
        return (mg.tensor(g) * composite(x_, None if w is None else mg.tensor(w))).sum()
    return mg.autograd.functional.hvp(loss_of_x, mg.tensor(x), mg.tensor(u))[1].numpy()


def _rms_dx(x, w, g):
    return by_hand.hand_backward(x, w, g)["dx"]


def _centered_dx(axis, eps=1e-5):
    def dx(x, w, g):
        _, rstd, xhat = centered_forward(x, axis, eps)
        return centered_backward(g, w, xhat, rstd, axis)
    return dx


def _direction(shape, seed):
    return np.round(random(shape, seed), 1)


def rms_composite_of(x, w):
    return rms_norm_composite(x, (4,), w)


def ln_composite_of(x, w):
    return layer_norm_composite(x, (4,), w)


def bn_composite_of(x, w):
    return batch_norm_composite(x, None, None, w, None, True)


def rms_second_numbers():
    x, w, g, v = by_hand.X, by_hand.W, by_hand.G, _direction(by_hand.X.shape, 30)
    return second_order_numbers(rms_composite_of, x, w, g, v, _rms_dx), v


@example("rms.second_order")
def rms_second_order():
    numbers, v = rms_second_numbers()
    hx = hessian_times(rms_composite_of, by_hand.X, by_hand.W, by_hand.G, by_hand.X)
    return second_order_text(numbers, v, ("largest |H x + dx| (scale invariance)", np.abs(hx + numbers["dx"]).max()))


def centered_second_numbers(composite, x, w, g, seed, numpy_dx):
    """``second_order_numbers`` of a centered norm, plus the largest |H 1| (shift invariance: H 1 = 0)."""
    v = _direction(x.shape, seed)
    numbers = second_order_numbers(composite, x, w, g, v, numpy_dx)
    h1 = np.abs(hessian_times(composite, x, w, g, np.ones_like(x))).max()
    return numbers, v, h1


def ln_second_numbers():
    return centered_second_numbers(ln_composite_of, by_hand.X, by_hand.W, by_hand.G, 31, _centered_dx(1))


@example("ln.second_order")
def ln_second_order():
    numbers, v, h1 = ln_second_numbers()
    return second_order_text(numbers, v, ("largest |H 1| (shift invariance)", h1))


def bn_second_numbers():
    return centered_second_numbers(bn_composite_of, BN_X, BN_W, BN_G, 32, _centered_dx(0))


@example("bn.second_order")
def bn_second_order():
    numbers, v, h1 = bn_second_numbers()
    return second_order_text(numbers, v, ("largest |H 1| (shift invariance of each channel)", h1))


def _group_dx(groups):
    def dx(x, w, g):
        return group_oracle(x, g, np.ones(x.shape[1]) if w is None else w, groups)["dx"]
    return dx


def gn_second_numbers():
    return centered_second_numbers(lambda x, w: group_norm_composite(x, 2, w), GN_X, GN_W, GN_G, 33, _group_dx(2))


@example("gn.second_order")
def gn_second_order():
    numbers, v, h1 = gn_second_numbers()
    return second_order_text(numbers, v, ("largest |H 1| (shift invariance of each group)", h1))


def in_second_numbers():
    return centered_second_numbers(lambda x, w: instance_norm_composite(x),   # no affine parameters: w is None
                                   IN_X, None, IN_G, 34, _group_dx(IN_X.shape[1]))


@example("in.second_order")
def in_second_order():
    numbers, v, h1 = in_second_numbers()
    return second_order_text(numbers, v, ("largest |H 1| (shift invariance of each feature map)", h1))


# --------------------------------------------------------------------------- LocalResponseNorm
LRN_X = np.array([[[1.0, -2.0], [0.5, 3.0], [-1.5, 0.0], [2.0, 1.0]]])     # (N, C, L) = (1, 4, 2)
LRN_G = np.array([[[0.5, 1.0], [-1.0, 0.25], [2.0, -0.5], [0.0, 1.5]]])
LRN_SIZE, LRN_ALPHA, LRN_BETA, LRN_K = 2, 1.0, 0.75, 1.0


def lrn_by_loops(x, g):
    """LocalResponseNorm's forward and backward with explicit loops over channels (the page's formulas)."""
    c_count = x.shape[1]
    lo, hi = LRN_SIZE // 2, (LRN_SIZE - 1) // 2
    window = [range(max(0, c - lo), min(c_count, c + hi + 1)) for c in range(c_count)]        # W(c)
    s = np.stack([sum(x[:, c2] ** 2 for c2 in window[c]) for c in range(c_count)], axis=1)
    d = LRN_K + LRN_ALPHA / LRN_SIZE * s
    scale = d ** -LRN_BETA
    t = g * x * scale / d
    mirrored = [[c for c in range(c_count) if j in window[c]] for j in range(c_count)]   # W'(j): windows holding j
    u = np.stack([sum(t[:, c] for c in mirrored[j]) for j in range(c_count)], axis=1)
    dx = g * scale - 2 * LRN_ALPHA * LRN_BETA / LRN_SIZE * x * u
    return {"s": s, "d": d, "y": x * scale, "t": t, "u": u, "dx": dx,
            "mirrored": [[c for c in m] for m in mirrored]}


def _lrn():
    options = (LRN_SIZE, LRN_ALPHA, LRN_BETA, LRN_K)
    return (lambda x: F.local_response_norm(x, *options)), (lambda x: local_response_norm_composite(x, *options))


@example("lrn.forward")
def lrn_forward():
    y, saved, _ = twins(*_lrn(), [LRN_X], LRN_G)
    loops = lrn_by_loops(LRN_X, LRN_G)
    same(saved[1], loops["d"], "d saved by LocalResponseNormFunction vs loops")
    same(y, loops["y"], "y vs loops")
    return text(("x (channels down, positions across)", LRN_X[0]), "",
                ("s = x^2 summed over W(c) = [c - 1, c]", loops["s"][0]),
                ("d = k + alpha/size * s", saved[1][0]),
                ("y = x * d^-beta", y[0]))


@example("lrn.backward")
def lrn_backward():
    _, _, (dx,) = twins(*_lrn(), [LRN_X], LRN_G)
    loops = lrn_by_loops(LRN_X, LRN_G)
    same(dx, loops["dx"], "dx: fused vs loops")
    windows = ", ".join(f"W'({j}) = {m}" for j, m in enumerate(loops["mirrored"]))
    return text(("g", LRN_G[0]), "",
                ("t = g * x * d^-beta / d", loops["t"][0]),
                f"mirrored windows: {windows}",
                ("u = t summed over W'(j)", loops["u"][0]),
                ("dx = g * d^-beta - 2 alpha beta / size * x * u", dx[0]), "",
                "fused backward, autograd through the composite twin and the loops above agree to 1e-12")


# --------------------------------------------------------------------------- weight normalization
WN_V = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])       # v (out, in) = (2, 3), dim 0: one norm per row
WN_G = np.array([[2.0], [-0.5]])                              # g (2, 1)
WN_T = np.array([[1.0, 0.5, -1.0], [0.25, -2.0, 1.5]])        # t = dL/dw


def weight_norm_by_loops(v, g, t):
    """w = g v / ||v|| and its gradients row by row with explicit sums (the page's formulas, dim 0)."""
    out = {key: np.zeros_like(v) for key in ("w", "dv")}
    out.update({key: np.zeros(len(v)) for key in ("n", "dg", "t_dot_v", "dv_dot_v")})
    for r in range(len(v)):
        n = np.sqrt(sum(v[r, j] ** 2 for j in range(v.shape[1])))
        t_dot_v = sum(t[r, j] * v[r, j] for j in range(v.shape[1]))
        out["n"][r], out["t_dot_v"][r], out["dg"][r] = n, t_dot_v, t_dot_v / n
        for j in range(v.shape[1]):
            out["w"][r, j] = g[r, 0] * v[r, j] / n
            out["dv"][r, j] = g[r, 0] / n * (t[r, j] - v[r, j] * t_dot_v / n ** 2)
        out["dv_dot_v"][r] = sum(out["dv"][r, j] * v[r, j] for j in range(v.shape[1]))
    return out


def _weight_norm_twins():
    from minigrad.ops.norm.weightnorm import weight_norm_composite
    return (lambda v, g: mg._weight_norm(v, g, 0)), (lambda v, g: weight_norm_composite(v, g, 0))


@example("wn.graph")
def wn_graph():
    return graph_of(_weight_norm_twins()[1], [WN_V, WN_G], ["v", "g"])


@example("wn.forward")
def wn_forward():
    w, saved, _ = twins(*_weight_norm_twins(), [WN_V, WN_G], WN_T)
    loops = weight_norm_by_loops(WN_V, WN_G, WN_T)
    same(saved[2][:, 0], loops["n"], "n saved by WeightNormFunction vs loops")
    same(w, loops["w"], "w vs loops")
    return text(("v", WN_V), ("g", WN_G[:, 0]), "",
                ("n = ||v|| per row", saved[2][:, 0]),
                ("w = g * v / n", w))


@example("wn.backward")
def wn_backward():
    _, _, (dv, dg) = twins(*_weight_norm_twins(), [WN_V, WN_G], WN_T)
    loops = weight_norm_by_loops(WN_V, WN_G, WN_T)
    same(dv, loops["dv"], "dv: fused vs loops")
    same(dg[:, 0], loops["dg"], "dg: fused vs loops")
    same(loops["dv_dot_v"], 0, "dv orthogonal to v", tol=1e-12)
    return text(("t = dL/dw", WN_T), "",
                ("sum(t * v) per row", loops["t_dot_v"]),
                ("dg = sum(t * v) / n", dg[:, 0]),
                ("dv = g / n * (t - v * dg / n)", dv), "",
                "largest |sum(dv * v)| per row: below 1e-12 (dv is orthogonal to v)",
                "fused backward, autograd through the composite twin and the loops above agree to 1e-12")


# --------------------------------------------------------------------------- fft.md: the Fourier transforms
FFT_Z = np.array([0.6, -1.2, 0.3, 0.8]) + 1j * np.array([0.5, 0.4, -0.7, -0.2])   # 4 bins of a signal of n = 6
FFT_G = np.array([1.0, -0.5, 0.25, 2.0, -1.0, 0.5])                                # dL/dy for the 6 points


def _irfft_by_definition(z, n):
    """y_t = (1/n) sum over all n bins of Z_k e^{2 pi i k t / n}, Z the Hermitian extension of the given bins
    (Z_{n-k} = conj(z_k)); the real part (Im z_0 and, n even, Im z_{n/2} do not count)."""
    full = np.zeros(n, complex)
    full[:len(z)] = z
    for k in range(1, n - len(z) + 1):
        full[n - k] = np.conj(z[k])
    full[0], full[n // 2] = full[0].real, (full[n // 2].real if n % 2 == 0 else full[n // 2])
    t = np.arange(n)
    return np.real(np.exp(2j * np.pi * np.outer(t, np.arange(n)) / n) @ full) / n


@example("fft.c2r")
def fft_c2r():
    n = len(FFT_G)
    zt = mg.tensor(FFT_Z, requires_grad=True)
    y = mg.fft.irfft(zt, n=n)
    y.backward(mg.tensor(FFT_G))
    dz = zt.grad.numpy()
    same(y.detach().numpy(), _irfft_by_definition(FFT_Z, n), "irfft vs its definition")
    # L = sum(g * y) is linear in (Re z, Im z): one difference per coordinate is exact up to rounding
    base = FFT_G @ _irfft_by_definition(FFT_Z, n)
    fd = np.array([FFT_G @ _irfft_by_definition(FFT_Z + e, n) - base for e in np.eye(4)]) \
        + 1j * np.array([FFT_G @ _irfft_by_definition(FFT_Z + 1j * e, n) - base for e in np.eye(4)])
    same(dz.real, fd.real, "Re dz vs differences", tol=1e-12)
    same(dz.imag, fd.imag, "Im dz vs differences", tol=1e-12)
    undoubled = np.fft.rfft(FFT_G) / n
    same(dz.real, np.array([1, 2, 2, 1]) * undoubled.real, "Re dz = c * Re rfft(g) / n")
    same(dz.imag, np.array([1, 2, 2, 1]) * undoubled.imag, "Im dz = c * Im rfft(g) / n")
    return text(("Re z", FFT_Z.real), ("Im z", FFT_Z.imag), ("g = dL/dy", FFT_G), "",
                ("Re dz (minigrad)", dz.real), ("Im dz (minigrad)", dz.imag),
                ("Re dz (differences of L)", fd.real), ("Im dz (differences of L)", fd.imag), "",
                ("Re rfft(g) / n", undoubled.real), ("Im rfft(g) / n", undoubled.imag),
                "c = [1, 2, 2, 1]: the bins 1 and 2 have mirrors (5 and 4) that are not given")


# --------------------------------------------------------------------------- low_precision.md
def _merge_low_precision():
    """The generators of low_precision.md live in numeric_low_precision.py, next to this file."""
    spec = importlib.util.spec_from_file_location("numeric_low_precision", Path(__file__).with_name(
        "numeric_low_precision.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    EXAMPLES.update(module.EXAMPLES)


_merge_low_precision()
