"""Core-op exercises: tanh, matmul, softmax + cross-entropy, attention. The reference gradients come from
minigrad's autograd (the op run forward on Tensors, then ``autograd.grad`` with the case's upstream
gradient); the known mistakes are written from the forward's pieces (tanh(x), the softmax P, ...)."""
import math

import numpy as np

from .checker import Case, Exercise, Variant


def _autograd(forward, wrt, names):
    """A reference: ``forward(**tensors)`` on the case's arrays, differentiated by minigrad's autograd with
    respect to the arguments ``wrt`` against the upstream gradient ``case.args[first arg]``."""
    def reference(case):
        import minigrad as mg
        upstream, *_ = case.args
        tensors = {k: mg.tensor(v, requires_grad=k in wrt) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                   else (mg.tensor(v) if isinstance(v, np.ndarray) else v)
                   for k, v in case.args.items() if k != upstream}
        out = forward(**tensors)
        grads = mg.autograd.grad(out, [tensors[k] for k in wrt], mg.tensor(np.asarray(case.args[upstream])))
        return {n: g.numpy() for n, g in zip(names, grads)}
    return reference


def _rows_basis(pieces):
    """A localisation view: the error itself as rows, with named per-row vectors from ``pieces(case)``."""
    def rows(case, grad, err):
        if err.ndim != 2:
            return None
        basis = pieces(case)
        return err, basis, "row"
    return rows


# --------------------------------------------------------------------------- tanh
def _tanh_cases(rng):
    cases = []
    for label, shape, scale in [("small (5,)", (5,), 1.0), ("(3, 4)", (3, 4), 1.0), ("large |x| (4, 3)", (4, 3), 4.0),
                                ("(2, 3, 4)", (2, 3, 4), 1.5)]:
        cases.append(Case(label, dict(dout=rng.standard_normal(shape), x=scale * rng.standard_normal(shape))))
    return cases


def _tanh_forward(x):
    return x.tanh()


def _tanh_variant(key, name, yours, note, dx):
    return Variant(key, name, f"right: dx = dout * (1 - tanh(x)^2)\nyours: {yours}\n{note}",
                   lambda case: {"dx": dx(case.args["dout"], case.args["x"], np.tanh(case.args["x"]))})


TANH = Exercise(
    "tanh", "backward(dout, x) -> dx", ("dx",), {"dx": "x"}, _tanh_cases,
    _autograd(_tanh_forward, ["x"], ["dx"]),
    [_tanh_variant("not_squared", "1 - tanh(x) where 1 - tanh(x)^2 was meant", "dx = dout * (1 - tanh(x))",
                   "d tanh / dx = sech^2 x = 1 - tanh^2 x.", lambda g, x, t: g * (1 - t)),
     _tanh_variant("x_for_tanh", "1 - x^2: x where tanh(x) was meant", "dx = dout * (1 - x^2)",
                   "The derivative is written with the output y = tanh(x), not the input.",
                   lambda g, x, t: g * (1 - x * x)),
     _tanh_variant("forgot_upstream", "the upstream gradient dout is missing", "dx = 1 - tanh(x)^2",
                   "Chain rule: the local derivative times the gradient arriving from above.", lambda g, x, t: 1 - t * t),
     _tanh_variant("plus_sign", "1 + tanh(x)^2 (sign of the square)", "dx = dout * (1 + tanh(x)^2)",
                   "tanh' = 1 - tanh^2: tanh saturates, its slope goes to 0.", lambda g, x, t: g * (1 + t * t)),
     _tanh_variant("sech_not_squared", "sech(x) where sech(x)^2 was meant", "dx = dout / cosh(x)",
                   "tanh' = 1 / cosh(x)^2.", lambda g, x, t: g / np.cosh(x))],
    None, ("Forward: y = tanh(x), elementwise. dout has x's shape."),
    "dx (x's shape)")


# --------------------------------------------------------------------------- matmul
def _matmul_cases(rng):
    shapes = [("square (3, 3) @ (3, 3)", 3, 3, 3), ("square (4, 4) @ (4, 4)", 4, 4, 4),
              ("(2, 3) @ (3, 5)", 2, 3, 5), ("(6, 2) @ (2, 4)", 6, 2, 4)]
    return [Case(label, dict(dout=rng.standard_normal((n, m)), a=rng.standard_normal((n, k)),
                             b=rng.standard_normal((k, m)))) for label, n, k, m in shapes]


def _matmul_forward(a, b):
    return a @ b


def _mm_variant(key, name, yours, right, grad, value):
    return Variant(key, name, f"right: {right}\nyours: {yours}\n"
                   "Match the shapes: da has a's shape (n, k), db has b's shape (k, m), dout has (n, m).",
                   lambda case: {grad: value(case.args["dout"], case.args["a"], case.args["b"])})


MATMUL = Exercise(
    "matmul", "backward(dout, a, b) -> (da, db)", ("da", "db"), {"da": "a", "db": "b"}, _matmul_cases,
    _autograd(_matmul_forward, ["a", "b"], ["da", "db"]),
    [_mm_variant("da_b_not_transposed", "da = dout @ b: b not transposed", "da = dout @ b", "da = dout @ b.T",
                 "da", lambda g, a, b: g @ b),
     _mm_variant("da_transposed", "da transposed (b @ dout.T)", "da = b @ dout.T", "da = dout @ b.T", "da",
                 lambda g, a, b: b @ g.T),
     _mm_variant("db_a_not_transposed", "db = a @ dout: a not transposed", "db = a @ dout", "db = a.T @ dout",
                 "db", lambda g, a, b: a @ g),
     _mm_variant("db_transposed", "db transposed (dout.T @ a)", "db = dout.T @ a", "db = a.T @ dout", "db",
                 lambda g, a, b: g.T @ a),
     _mm_variant("operands_swapped", "da and db computed from the wrong operands (da = dout @ a.T)",
                 "da = dout @ a.T", "da = dout @ b.T", "da", lambda g, a, b: g @ a.T)],
    None, ('Forward: out = a @ b with a (n, k), b (k, m). dout (n, m) is the gradient of the loss with respect to out.'),
    'da (n, k), db (k, m)')


# --------------------------------------------------------------------------- softmax + cross-entropy
def _ce_cases(rng):
    cases = []
    for label, n, c, scale in [("small (3, 4)", 3, 4, 1.0), ("(5, 10)", 5, 10, 2.0),
                               ("large logits (4, 6), |z| ~ 1000", 4, 6, 1000.0), ("(8, 3)", 8, 3, 1.0)]:
        cases.append(Case(label, dict(dloss=float(rng.uniform(0.5, 2.0)), logits=scale * rng.standard_normal((n, c)),
                                      target=rng.integers(0, c, n))))
    return cases


def _ce_forward(logits, target):
    from ..nn import functional as F
    return F.cross_entropy(logits, target)


def _softmax(z, axis=1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _ce_pieces(case):
    z, t = case.args["logits"], case.args["target"]
    onehot = np.eye(z.shape[1])[t]
    return {"p": _softmax(z), "onehot": onehot, "1": np.ones_like(z)}


def _ce_variant(key, name, yours, note, value):
    def grads(case):
        z, t, g = case.args["logits"], case.args["target"], case.args["dloss"]
        return {"dlogits": value(g, _softmax(z), np.eye(z.shape[1])[t], z)}
    return Variant(key, name, f"right: dlogits = dloss * (softmax(logits) - onehot(target)) / N\nyours: {yours}\n{note}",
                   grads)


SOFTMAX_CROSS_ENTROPY = Exercise(
    "softmax_cross_entropy", "backward(dloss, logits, target) -> dlogits", ("dlogits",), {"dlogits": "logits"},
    _ce_cases, _autograd(_ce_forward, ["logits"], ["dlogits"]),
    [_ce_variant("sum_not_mean", "the 1/N of the mean over the batch is missing",
                 "dlogits = dloss * (softmax - onehot)", "The loss is the mean over the N samples.",
                 lambda g, p, y, z: g * (p - y)),
     _ce_variant("missing_onehot", "the one-hot term is missing", "dlogits = dloss * softmax / N",
                 "d(-log p_t)/dz = p - onehot(t): the target's own logit gets the -1.",
                 lambda g, p, y, z: g * p / len(z)),
     _ce_variant("sign_flipped", "the sign is flipped", "dlogits = dloss * (onehot - softmax) / N",
                 "The loss decreases when the target's logit grows: its gradient there is negative.",
                 lambda g, p, y, z: g * (y - p) / len(z)),
     _ce_variant("softmax_wrong_axis", "softmax over the batch (axis 0) instead of over the classes",
                 "p = softmax(logits, axis=0)", "Each sample's probabilities sum to one over its classes (axis 1).",
                 lambda g, p, y, z: g * (_softmax(z, 0) - y) / len(z)),
     _ce_variant("forgot_upstream", "the upstream gradient dloss is missing", "dlogits = (softmax - onehot) / N",
                 "Chain rule: multiply by the gradient arriving from above (here a number, not 1).",
                 lambda g, p, y, z: (p - y) / len(z))],
    _rows_basis(_ce_pieces),
    ('Forward: p = softmax(logits) over the classes (axis 1), logits (N, C), target (N,) class indices;\n'
     '    loss = mean over the N rows of -log p[n, target[n]]   (a number)\n'
     'dloss is the gradient of the final result with respect to loss (a number, not necessarily 1).'),
    'dlogits (N, C)')


# --------------------------------------------------------------------------- attention
def _attention_cases(rng):
    shapes = [("small L=S=3, d=2", 3, 3, 2, 2), ("L=4, S=5, d=3, e=2", 4, 5, 3, 2), ("L=S=4, d=8", 4, 4, 8, 3),
              ("L=2, S=6, d=4, e=5", 2, 6, 4, 5)]
    return [Case(label, dict(dout=rng.standard_normal((L, e)), q=rng.standard_normal((L, d)),
                             k=rng.standard_normal((S, d)), v=rng.standard_normal((S, e))))
            for label, L, S, d, e in shapes]


def _attention_forward(q, k, v):
    from ..nn import functional as F
    return F.scaled_dot_product_attention(q, k, v)


def _attention_variant(key, name, yours, note, value):
    """A mistake given as (dq, dk, dv) from the pieces: scale, P (L, S), dP = dout v^T, the softmax backward dS."""
    def grads(case):
        g, q, k, v = (case.args[n] for n in ("dout", "q", "k", "v"))
        scale = 1 / math.sqrt(q.shape[1])
        P = _softmax(q @ k.T * scale)
        dP = g @ v.T
        dS = P * (dP - (P * dP).sum(1, keepdims=True))
        return dict(zip(("dq", "dk", "dv"), value(g, q, k, v, scale, P, dP, dS)))
    right = ("right: P = softmax(q k^T * s), s = 1/sqrt(d);  dv = P^T dout;  dP = dout v^T;\n"
             "       dS = P * (dP - rowsum(P * dP));  dq = dS k * s;  dk = dS^T q * s")
    return Variant(key, name, f"{right}\nyours: {yours}\n{note}", grads)


ATTENTION = Exercise(
    "attention", "backward(dout, q, k, v) -> (dq, dk, dv)", ("dq", "dk", "dv"), {"dq": "q", "dk": "k", "dv": "v"},
    _attention_cases, _autograd(_attention_forward, ["q", "k", "v"], ["dq", "dk", "dv"]),
    [_attention_variant("softmax_diagonal", "the softmax backward keeps only the diagonal (dS = P * dP)",
                        "dS = P * dP", "Each softmax output depends on every score of its row: subtract rowsum(P * dP).",
                        lambda g, q, k, v, s, P, dP, dS: (P * dP @ k * s, (P * dP).T @ q * s, P.T @ g)),
     _attention_variant("missing_scale", "the scale 1/sqrt(d) is missing from dq and dk", "dq = dS k;  dk = dS^T q",
                        "The scores are q k^T * s: the factor s reaches q and k.",
                        lambda g, q, k, v, s, P, dP, dS: (dS @ k, dS.T @ q, P.T @ g)),
     _attention_variant("dv_not_transposed", "dv = P dout: P not transposed", "dv = P @ dout",
                        "out = P v: v's gradient is P^T dout.",
                        lambda g, q, k, v, s, P, dP, dS: (dS @ k * s, dS.T @ q * s, P @ g)),
     _attention_variant("dk_not_transposed", "dk = dS q: dS not transposed", "dk = dS @ q * s",
                        "scores = q k^T: k's gradient is dS^T q.",
                        lambda g, q, k, v, s, P, dP, dS: (dS @ k * s, dS @ q * s, P.T @ g)),
     _attention_variant("softmax_wrong_axis", "the softmax backward's sum over the wrong axis (columns)",
                        "dS = P * (dP - colsum(P * dP))", "softmax normalizes each row (over the keys): sum over axis 1.",
                        lambda g, q, k, v, s, P, dP, dS: _with_dS(P * (dP - (P * dP).sum(0, keepdims=True)),
                                                                  g, q, k, s, P))],
    None, ('Forward: scores = q @ k.T / sqrt(d);  P = softmax(scores) over each row (the keys);  out = P @ v\n'
     'with q (L, d), k (S, d), v (S, e). dout (L, e) is the gradient of the loss with respect to out.'),
    'dq (L, d), dk (S, d), dv (S, e)')


def _with_dS(dS, g, q, k, s, P):
    return dS @ k * s, dS.T @ q * s, P.T @ g


CORE = {e.name: e for e in (SOFTMAX_CROSS_ENTROPY, MATMUL, TANH, ATTENTION)}
