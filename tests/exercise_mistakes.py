"""Students' wrong solutions for tests/test_exercises.py, written the way a student would write them (plain
NumPy, the forward recomputed), independently of the checker's catalogue: each knob of a ``*_student``
function turns one line into a known mistake. ``MISTAKES[name]`` lists (knobs, the diagnosis key expected)."""
import functools
import math

import numpy as np


def normalized(x, axes, eps, ddof=0, eps_outside=False):
    """(xhat, rstd) over ``axes``, with the variance divided by n - ddof and eps inside or outside the root."""
    n = math.prod(x.shape[a] for a in axes)
    xc = x - x.mean(axis=axes, keepdims=True)
    var = (xc ** 2).sum(axis=axes, keepdims=True) / (n - ddof)
    rstd = 1 / (np.sqrt(var) + eps) if eps_outside else 1 / np.sqrt(var + eps)
    return xc * rstd, rstd


def param_grads(dy, x, xhat, dweight="xhat", dbias="sum"):
    """dweight, dbias per channel (axis 1), summed (or, wrongly, averaged) over the other axes."""
    other = (0,) + tuple(range(2, x.ndim))
    dw = {"xhat": dy * xhat, "none": dy, "x": dy * x}[dweight].sum(axis=other)
    db = dy.sum(axis=other) if dbias == "sum" else dy.mean(axis=other)
    return dw, db


def centered_dx(gw, xhat, rstd, axes, mean_term=True, proj="mean", rstd_factor=True):
    coef = (gw * xhat).mean(axis=axes, keepdims=True) if proj == "mean" else (gw * xhat).sum(axis=axes, keepdims=True)
    dx = gw - (gw.mean(axis=axes, keepdims=True) if mean_term else 0) - (xhat * coef if proj else 0)
    return rstd * dx if rstd_factor else dx


def centered_student(dy, x, weight, eps, axes, *, ddof=0, eps_outside=False, mean_term=True, proj="mean",
                     use_weight=True, rstd_factor=True, dweight="xhat", dbias="sum", eval_mode=False):
    """LayerNorm/BatchNorm/InstanceNorm by a student: statistics over ``axes`` of x, weight per axis 1
    (channels; LayerNorm's x (N, D) has its features there too), dweight and dbias summed over the others."""
    xhat, rstd = normalized(x, axes, eps, ddof, eps_outside)
    gw = dy * weight.reshape((1, x.shape[1]) + (1,) * (x.ndim - 2)) if use_weight else dy
    dx = rstd * gw if eval_mode else centered_dx(gw, xhat, rstd, axes, mean_term, proj, rstd_factor)
    return (dx,) + param_grads(dy, x, xhat, dweight, dbias)


def layer_norm_student(dy, x, weight, bias, eps, axes=(1,), **knobs):
    return centered_student(dy, x, weight, eps, axes, **knobs)


def batch_norm_student(dy, x, weight, bias, eps, axes=(0,), **knobs):
    return centered_student(dy, x, weight, eps, axes, **knobs)


def instance_norm_student(dy, x, weight, bias, eps, axes="spatial", **knobs):
    axes = {"spatial": tuple(range(2, x.ndim)), "batch": (0,) + tuple(range(2, x.ndim)),
            "sample": tuple(range(1, x.ndim))}[axes]
    return centered_student(dy, x, weight, eps, axes, **knobs)


def group_norm_student(dy, x, num_groups, weight, bias, eps, grouping="consecutive", *, ddof=0, eps_outside=False,
                       mean_term=True, proj="mean", use_weight=True, rstd_factor=True, dweight="xhat", dbias="sum"):
    """GroupNorm as a student writes it: weight applied per channel, then rows (N, G, C/G*S)."""
    n, c = x.shape[:2]
    if grouping == "interleaved":       # (N, C/G, G, S): group g = channels g, g + G, ...
        order = np.argsort(np.arange(c) % num_groups, kind="stable")
        back = np.argsort(order)
        dx, dw, db = group_norm_student(dy[:, order], x[:, order], num_groups, weight[order], bias, eps, ddof=ddof,
                                        eps_outside=eps_outside, mean_term=mean_term, proj=proj)
        return dx[:, back], dw[back], db[back]
    g = {"consecutive": num_groups, "channel": c, "sample": 1}[grouping]
    xg = x.reshape(n, g, -1)
    xhat, rstd = normalized(xg, (2,), eps, ddof, eps_outside)
    gw = dy * weight.reshape((1, c) + (1,) * (x.ndim - 2)) if use_weight else dy
    dx = centered_dx(gw.reshape(xg.shape), xhat, rstd, (2,), mean_term, proj, rstd_factor)
    return (dx.reshape(x.shape),) + param_grads(dy, x, xhat.reshape(x.shape), dweight, dbias)


def rms_norm_student(dy, x, weight, eps, *, ddof=0, eps_outside=False, proj="mean", mean_term=False,
                     use_weight=True, rstd_factor=True, dweight="xhat", axis=1):
    d = x.shape[axis]
    ms = (x * x).sum(axis=axis, keepdims=True) / (d - ddof)
    rstd = 1 / (np.sqrt(ms) + eps) if eps_outside else 1 / np.sqrt(ms + eps)
    xhat = x * rstd
    gw = dy * weight if use_weight else dy
    coef = (gw * xhat).mean(axis=axis, keepdims=True) if proj == "mean" else (gw * xhat).sum(axis=axis, keepdims=True)
    # eps outside, differentiated exactly: d rstd / dx = -rstd^2 x / (D sqrt(ms)), so x / sqrt(ms) replaces xhat
    direction = x / np.sqrt(ms) if eps_outside == "exact" else xhat
    dx = gw - (gw.mean(axis=axis, keepdims=True) if mean_term else 0) - (direction * coef if proj else 0)
    dx = rstd * dx if rstd_factor else dx
    dw = {"xhat": dy * xhat, "none": dy, "x": dy * x}[dweight].sum(axis=0)
    return dx, dw


CENTERED_MISTAKES = [
    (dict(mean_term=False), "missing_mean_term"),
    (dict(proj=None), "missing_projection"),
    (dict(proj="sum"), "projection_sum"),
    (dict(ddof=1), "unbiased_variance"),
    (dict(eps_outside=True), "eps_outside_sqrt"),
    (dict(use_weight=False), "forgot_weight"),
    (dict(rstd_factor=False), "missing_rstd"),
    (dict(dweight="none"), "dweight_without_xhat"),
    (dict(dweight="x"), "dweight_with_x"),
    (dict(dbias="mean"), "dbias_mean"),
]

MISTAKES = {
    "rms_norm": (rms_norm_student, [
        (dict(proj=None), "missing_projection"), (dict(proj="sum"), "projection_sum"),
        (dict(ddof=1), "unbiased_variance"), (dict(eps_outside=True), "eps_outside_sqrt"),
        (dict(eps_outside="exact"), "eps_outside_exact"), (dict(use_weight=False), "forgot_weight"), (dict(rstd_factor=False), "missing_rstd"),
        (dict(mean_term=True), "extra_mean_term"), (dict(dweight="none"), "dweight_without_xhat"),
        (dict(dweight="x"), "dweight_with_x"), (dict(axis=0), "wrong_axis")]),
    "layer_norm": (layer_norm_student, CENTERED_MISTAKES + [(dict(axes=(0,)), "wrong_axis")]),
    "batch_norm": (batch_norm_student, CENTERED_MISTAKES + [(dict(axes=(1,)), "wrong_axis"),
                                                           (dict(eval_mode=True), "eval_formula")]),
    "instance_norm": (instance_norm_student, CENTERED_MISTAKES + [(dict(axes="batch"), "wrong_axis"),
                                                                 (dict(axes="sample"), "per_sample_statistics")]),
    "group_norm": (group_norm_student, CENTERED_MISTAKES + [
        (dict(grouping="interleaved"), "interleaved_groups"), (dict(grouping="channel"), "per_channel_statistics"),
        (dict(grouping="sample"), "per_sample_statistics")]),
}


def student(name, **knobs):
    return functools.partial(MISTAKES[name][0], **knobs)


# --------------------------------------------------------------------------- core ops: one wrong line each
def softmax(z, axis=1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def cross_entropy_student(dloss, logits, target, *, axis=1, onehot=True, mean=True, sign=1, upstream=True):
    p = softmax(logits, axis)
    if onehot:
        p[np.arange(len(p)), target] -= 1
    grad = sign * p / (len(p) if mean else 1)
    return dloss * grad if upstream else grad


def matmul_student(dout, a, b, *, da="dout @ b.T", db="a.T @ dout"):
    forms = {"dout @ b.T": lambda: dout @ b.T, "dout @ b": lambda: dout @ b, "b @ dout.T": lambda: b @ dout.T,
             "dout @ a.T": lambda: dout @ a.T, "a.T @ dout": lambda: a.T @ dout, "a @ dout": lambda: a @ dout,
             "dout.T @ a": lambda: dout.T @ a}
    return forms[da](), forms[db]()


def tanh_student(dout, x, *, derivative="1 - y^2", upstream=True):
    y = np.tanh(x)
    local = {"1 - y^2": 1 - y * y, "1 - y": 1 - y, "1 - x^2": 1 - x * x, "1 + y^2": 1 + y * y,
             "1 / cosh": 1 / np.cosh(x)}[derivative]
    return dout * local if upstream else local


def attention_student(dout, q, k, v, *, diagonal=False, scale=True, dv_transposed=True, dk_transposed=True,
                      softmax_axis=1):
    s = 1 / np.sqrt(q.shape[1])
    P = softmax(q @ k.T * s)
    dP = dout @ v.T
    dS = P * dP if diagonal else P * (dP - (P * dP).sum(axis=softmax_axis, keepdims=True))
    f = s if scale else 1.0
    return dS @ k * f, (dS.T if dk_transposed else dS) @ q * f, (P.T if dv_transposed else P) @ dout


MISTAKES.update({
    "softmax_cross_entropy": (cross_entropy_student, [
        (dict(mean=False), "sum_not_mean"), (dict(onehot=False), "missing_onehot"), (dict(sign=-1), "sign_flipped"),
        (dict(axis=0), "softmax_wrong_axis"), (dict(upstream=False), "forgot_upstream")]),
    "matmul": (matmul_student, [
        (dict(da="dout @ b"), "da_b_not_transposed"), (dict(da="b @ dout.T"), "da_transposed"),
        (dict(db="a @ dout"), "db_a_not_transposed"), (dict(db="dout.T @ a"), "db_transposed"),
        (dict(da="dout @ a.T"), "operands_swapped")]),
    "tanh": (tanh_student, [
        (dict(derivative="1 - y"), "not_squared"), (dict(derivative="1 - x^2"), "x_for_tanh"),
        (dict(upstream=False), "forgot_upstream"), (dict(derivative="1 + y^2"), "plus_sign"),
        (dict(derivative="1 / cosh"), "sech_not_squared")]),
    "attention": (attention_student, [
        (dict(diagonal=True), "softmax_diagonal"), (dict(scale=False), "missing_scale"),
        (dict(dv_transposed=False), "dv_not_transposed"), (dict(dk_transposed=False), "dk_not_transposed"),
        (dict(softmax_axis=0), "softmax_wrong_axis")]),
})
