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
                     use_weight=True, rstd_factor=True, dweight="xhat"):
    d = x.shape[1]
    ms = (x * x).sum(axis=1, keepdims=True) / (d - ddof)
    rstd = 1 / (np.sqrt(ms) + eps) if eps_outside else 1 / np.sqrt(ms + eps)
    xhat = x * rstd
    gw = dy * weight if use_weight else dy
    coef = (gw * xhat).mean(axis=1, keepdims=True) if proj == "mean" else (gw * xhat).sum(axis=1, keepdims=True)
    dx = gw - (gw.mean(axis=1, keepdims=True) if mean_term else 0) - (xhat * coef if proj else 0)
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
        (dict(use_weight=False), "forgot_weight"), (dict(rstd_factor=False), "missing_rstd"),
        (dict(mean_term=True), "extra_mean_term"), (dict(dweight="none"), "dweight_without_xhat"),
        (dict(dweight="x"), "dweight_with_x")]),
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
