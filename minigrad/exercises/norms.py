"""The five normalization exercises: cases, the reference (minigrad's NumPy reference kernels), and the
catalogue of known wrong formulas.

The right gradients come from the kernels the library itself runs on its ``"numpy"`` backend
(``minigrad/ops/norm/*.py``: ``layer_norm_backward``, ``batch_norm_backward``, ...). Those kernels take
the statistics (mean, rstd) as arguments, so most known mistakes are the same kernel fed a wrong
statistic (variance divided by n-1, eps outside the square root, statistics over the wrong axes) or the
right answer with one named term added back or taken away: no third copy of the formulas.

Each norm is described by a ``_Norm`` adapter: its statistics, the reference backward for given
statistics, and its "rows" (the sets of values normalized together, as a 2-D view (R, M)).
"""
import numpy as np

from ..ops.norm.batchnorm import batch_norm_backward, batch_norm_stats
from ..ops.norm.groupnorm import group_norm_backward
from ..ops.norm.layernorm import layer_norm_backward
from ..ops.norm.rmsnorm import rms_norm_backward
from .checker import Case, Exercise, Variant

CENTERED = "dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))"
UNCENTERED = "dx = rstd * (gw - xhat * mean(gw * xhat))"
WHERE = "gw = dy * weight; xhat = (x - mean) * rstd; means over each {row}"


# --------------------------------------------------------------------------- the norms, as adapters
class _Norm:
    """What the generic catalogue needs to know about one norm. Arrays in the student's layout."""
    centered = True
    row = "row"                    # what one set of normalized values is called

    def stats(self, case):
        """(mean, var, n) in the shapes the reference kernel takes; n = values per statistic."""
        raise NotImplementedError

    def kernel(self, case, mean, rstd, weight, dy=None, **options):
        """The reference kernel's (dx, dweight, dbias) for these statistics, in the student's shapes."""
        raise NotImplementedError

    def rows(self, a, case):
        """An array of x's shape as rows (R, M): each row one set normalized together."""
        raise NotImplementedError

    def unrows(self, r, like):
        raise NotImplementedError

    def weight_b(self, case):
        """weight broadcast against x (None without weight)."""
        raise NotImplementedError

    def shrink(self, case):
        """Smaller cases that keep what one statistic sees: [(what was kept, Case)], for the minimal example."""
        return []


def _rstd(var, n, eps, how="right"):
    if how == "unbiased":
        var = var * n / (n - 1)
    if how == "eps_outside":
        return 1 / (np.sqrt(var) + eps)
    return 1 / np.sqrt(var + eps)


class _Rows(_Norm):
    """LayerNorm / RMSNorm on x (N, D): each row normalized."""

    def rows(self, a, case):
        return a

    def unrows(self, r, like):
        return r.reshape(like.shape)

    def weight_b(self, case):
        return case.args["weight"]

    def shrink(self, case):
        return [(f"row {r} alone", _slice(case, np.s_[r:r + 1], None)) for r in range(len(case.args["x"]))]


class _LayerNorm(_Rows):
    def stats(self, case):
        x = case.args["x"]
        mean = x.mean(1)
        return mean, ((x - mean[:, None]) ** 2).mean(1), x.shape[1]

    def kernel(self, case, mean, rstd, weight, dy=None, **options):
        dy = case.args["dy"] if dy is None else dy
        return layer_norm_backward(dy, case.args["x"], mean, rstd, weight, True, True, True)


class _RMSNorm(_Rows):
    centered = False

    def stats(self, case):
        x = case.args["x"]
        return None, (x * x).mean(1), x.shape[1]

    def kernel(self, case, mean, rstd, weight, dy=None, eps_outside=False):
        dy, x = case.args["dy"] if dy is None else dy, case.args["x"]
        dx, dw, _ = rms_norm_backward(dy, x, rstd, weight, case.args["eps"], x.shape[1], eps_outside, True, True, False)
        return dx, dw


class _Channels(_Norm):
    """x (N, C, *spatial) seen as (N, C, S); weight and bias per channel."""

    def weight_b(self, case):
        w, x = case.args["weight"], case.args["x"]
        return None if w is None else w.reshape((-1,) + (1,) * (x.ndim - 2))

    @staticmethod
    def ncs(a):
        return a.reshape(a.shape[0], a.shape[1], -1)


class _BatchNorm(_Channels):
    row = "channel"

    def shrink(self, case):
        return [(f"channel {c} alone", _slice(case, np.s_[:, c:c + 1], np.s_[c:c + 1]))
                for c in range(case.args["x"].shape[1])]

    def stats(self, case):
        x = self.ncs(case.args["x"])
        mean, var = batch_norm_stats(x)
        return mean, var, x.shape[0] * x.shape[2]

    def kernel(self, case, mean, rstd, weight, dy=None, training=True):
        x = case.args["x"]
        dy = case.args["dy"] if dy is None else dy
        dx, dw, db = batch_norm_backward(self.ncs(dy), self.ncs(x), mean, rstd, weight, training, True, True, True)
        return dx.reshape(x.shape), dw, db

    def rows(self, a, case):                                   # (C, N*S)
        a = self.ncs(a)
        return a.transpose(1, 0, 2).reshape(a.shape[1], -1)

    def unrows(self, r, like):
        n, c = like.shape[:2]
        return r.reshape(c, n, -1).transpose(1, 0, 2).reshape(like.shape)


class _GroupNorm(_Channels):
    """GroupNorm; ``groups``: None (the case's num_groups), "C" (one channel per group: InstanceNorm) or a number."""

    def __init__(self, groups=None):
        self.fixed = groups
        self.row = "(sample, channel)" if groups == "C" else "(sample, group)"

    def shrink(self, case):
        x = case.args["x"]
        if self.fixed == "C":     # one (sample, channel)
            return [(f"sample {n}, channel {c} alone", _slice(case, np.s_[n:n + 1, c:c + 1], np.s_[c:c + 1]))
                    for n in range(x.shape[0]) for c in range(x.shape[1])]
        return [(f"sample {n} alone", _slice(case, np.s_[n:n + 1], None)) for n in range(x.shape[0])]

    def groups(self, case):
        if self.fixed == "C":
            return case.args["x"].shape[1]
        return case.args["num_groups"] if self.fixed is None else self.fixed

    def stats(self, case):
        x = self.ncs(case.args["x"])
        xg = x.reshape(x.shape[0], self.groups(case), -1)                # (N, G, C/G*S)
        mean = xg.mean(2)
        return mean, ((xg - mean[:, :, None]) ** 2).mean(2), xg.shape[2]

    def kernel(self, case, mean, rstd, weight, dy=None):
        x = case.args["x"]
        dy = case.args["dy"] if dy is None else dy
        dx, dw, db = group_norm_backward(self.ncs(dy), self.ncs(x), mean, rstd, self.groups(case), weight,
                                         True, True, True)
        return dx.reshape(x.shape), dw, db

    def rows(self, a, case):                             # (N*G, C/G*S)
        return a.reshape(a.shape[0] * self.groups(case), -1)

    def unrows(self, r, like):
        return r.reshape(like.shape)


# --------------------------------------------------------------------------- cases
def _slice(case, data, params):
    """``case`` with x and dy cut to ``data`` and, if given, weight and bias to ``params``."""
    args = dict(case.args, x=case.args["x"][data], dy=case.args["dy"][data])
    if params is not None:
        args.update({k: case.args[k][params] for k in ("weight", "bias") if k in args})
    return Case(case.label, args)


def _weights(rng, n):
    return 1 + 0.5 * rng.standard_normal(n)     # random, some far from 1, never all equal


def _x(rng, shape, mean_scale=1.0):
    """Random x whose rows differ in scale (std 0.3 to 3) and mean, so per-row mistakes show."""
    x = rng.standard_normal(shape)
    scale = np.exp(rng.uniform(np.log(0.3), np.log(3), (shape[0],) + (1,) * (len(shape) - 1)))
    return x * scale + mean_scale * rng.standard_normal((shape[0],) + (1,) * (len(shape) - 1))


def _row_cases(rng, with_bias):
    """RMSNorm / LayerNorm: x (N, D)."""
    specs = [("small (2, 4)", (2, 4), 1e-5, 0.0), ("(5, 7)", (5, 7), 1e-5, 1.0),
             ("large eps 0.5, (4, 6)", (4, 6), 0.5, 0.5), ("small eps 1e-12, (3, 5)", (3, 5), 1e-12, 1.0),
             ("rows with a large mean (1e6), (3, 8)", (3, 8), 1e-5, 0.0), ("(8, 16)", (8, 16), 1e-5, 1.0)]
    cases = []
    for label, shape, eps, mean_scale in specs:
        x = _x(rng, shape, mean_scale)
        if "large mean" in label:
            x = x + 1e6 * (1 + rng.uniform(size=(shape[0], 1)))
        args = dict(dy=rng.standard_normal(shape), x=x, weight=_weights(rng, shape[1]))
        if with_bias:
            args["bias"] = rng.standard_normal(shape[1])
        args["eps"] = eps
        cases.append(Case(label, args))
    return cases


def _channel_cases(rng, specs, grouped):
    """BatchNorm / InstanceNorm / GroupNorm: x (N, C, *); ``specs``: (label, shape, eps, num_groups)."""
    cases = []
    for label, shape, eps, groups in specs:
        x = rng.standard_normal(shape) * np.exp(rng.uniform(-1, 1, (1, shape[1]) + (1,) * (len(shape) - 2)))
        if len(shape) > 2:
            x = x * np.exp(rng.uniform(-1, 1, (shape[0], 1) + (1,) * (len(shape) - 2)))   # samples differ too
        x = x + rng.standard_normal((1, shape[1]) + (1,) * (len(shape) - 2))
        if "large mean" in label:
            x = x + 1e6
        args = dict(dy=rng.standard_normal(shape), x=x)
        if grouped:
            args["num_groups"] = groups
        args.update(weight=_weights(rng, shape[1]), bias=rng.standard_normal(shape[1]), eps=eps)
        cases.append(Case(label, args))
    return cases


# --------------------------------------------------------------------------- the generic catalogue
def _right_stats(norm, case):
    mean, var, n = norm.stats(case)
    return mean, _rstd(var, n, case.args["eps"])


def _pieces(norm, case):
    """rstd (broadcast), xhat and gw = dy * weight as rows (R, M): what the terms of the formula are made of."""
    x, dy = case.args["x"], case.args["dy"]
    mean, var, n = norm.stats(case)
    rstd = _rstd(var, n, case.args["eps"])
    xr = norm.rows(x, case)
    mean_r = 0 if mean is None else norm.rows(np.broadcast_to(_expand(norm, mean, x), x.shape), case)
    rstd_r = norm.rows(np.broadcast_to(_expand(norm, rstd, x), x.shape), case)
    wb = norm.weight_b(case)
    gw = norm.rows(dy * wb if wb is not None else dy, case)
    return rstd_r, (xr - mean_r) * rstd_r, gw


def _expand(norm, stat, x):
    """A statistic of the kernel's shape broadcast against x."""
    if isinstance(norm, _Rows):
        return stat[:, None]
    if isinstance(norm, _GroupNorm):
        n, c = x.shape[:2]
        g = stat.shape[1]                                                  # (N, G)
        per_channel = np.repeat(stat, c // g, axis=1)                      # (N, C)
        return per_channel.reshape((n, c) + (1,) * (x.ndim - 2))
    return stat.reshape((1, -1) + (1,) * (x.ndim - 2))                    # BatchNorm: (C,)


def _grads(names, values):
    return dict(zip(names, values))


def _catalogue(norm, names, formula):
    """The mistakes every norm shares, built on the norm's reference kernel."""
    row = norm.row
    stat = "var" if norm.centered else "mean(x^2)"

    def right(case):
        return _grads(names, norm.kernel(case, *_right_stats(norm, case), case.args["weight"]))

    def with_rstd(how):
        def grads(case):
            mean, var, n = norm.stats(case)
            return _grads(names, norm.kernel(case, mean, _rstd(var, n, case.args["eps"], how), case.args["weight"]))
        return grads

    def dx_plus(term):
        """The right dx plus ``term(rstd, xhat, gw)`` (rows), i.e. a mistake that drops or adds that term."""
        def grads(case):
            rstd, xhat, gw = _pieces(norm, case)
            dx = right(case)["dx"]
            return {"dx": dx + norm.unrows(term(rstd, xhat, gw), dx)}
        return grads

    def mean_term(rstd, xhat, gw):
        return rstd * gw.mean(1, keepdims=True)

    def proj_term(rstd, xhat, gw):
        return rstd * xhat * (gw * xhat).mean(1, keepdims=True)

    where = WHERE.format(row=row) if norm.centered else f"gw = dy * weight; xhat = x * rstd; means over each {row}"

    def said(yours, note):
        return f"right: {formula}\nyours: {yours}\n({where})\n{note}"

    variants = [
        Variant("missing_projection", "the projection onto xhat is missing (the term - xhat * mean(gw * xhat))",
                said(formula.replace(" - xhat * mean(gw * xhat)", ""),
                     "rstd depends on x too: scaling a row of x does not change y, so dx has no component along xhat."),
                dx_plus(proj_term)),
        Variant("projection_sum", f"sum instead of mean in the projection term (no 1/n, n = values per {row})",
                said(formula.replace("mean(gw * xhat)", "sum(gw * xhat)"),
                     "d var / dx_i = 2 (x_i - mean) / n: the 1/n stays."),
                dx_plus(lambda rstd, xhat, gw: -(xhat.shape[1] - 1) * proj_term(rstd, xhat, gw))),
        Variant("unbiased_variance", "the variance divided by n-1 instead of n (unbiased)",
                f"right: var = mean((x - mean)^2) = sum(...) / n, n = values per {row}\n"
                f"yours: var = sum(...) / (n - 1)\n"
                "Normalization uses the biased variance (np.var's default ddof=0, not x.var(ddof=1) or torch.var's "
                "default); only BatchNorm's running_var stores the unbiased one." if norm.centered else
                "right: ms = mean(x^2) = sum(x^2) / n\nyours: ms = sum(x^2) / (n - 1)",
                with_rstd("unbiased")),
        Variant("eps_outside_sqrt", f"eps outside the square root: 1 / (sqrt({stat}) + eps) instead of "
                f"1 / sqrt({stat} + eps)",
                f"right: rstd = 1 / sqrt({stat} + eps)\nyours: rstd = 1 / (sqrt({stat}) + eps)\n"
                f"eps is added to {stat}, under the root (it only shows when eps is not tiny next to {stat}).",
                with_rstd("eps_outside")),
        Variant("forgot_weight", "the weight is missing from dx (gw = dy where gw = dy * weight was meant)",
                said(formula.replace("gw", "dy"), "y = xhat * weight: the gradient reaching xhat is dy * weight."),
                lambda case: {"dx": norm.kernel(case, *_right_stats(norm, case), None)[0]}),
        Variant("missing_rstd", "the leading factor rstd of dx is missing",
                said(formula.replace("rstd * ", "", 1), "xhat = (x - mean) * rstd: every path to x passes the factor rstd."
                     if norm.centered else "xhat = x * rstd: every path to x passes the factor rstd."),
                _missing_rstd(norm, right)),
        Variant("dweight_without_xhat", "dweight = sum(dy): the factor xhat is missing",
                f"right: dweight = sum(dy * xhat)   (over every axis the weight is shared along)\n"
                f"yours: dweight = sum(dy)          (that is dbias)\ny = xhat * weight + bias: d y / d weight = xhat.",
                lambda case: {"dweight": _param_sum(norm, case, case.args["dy"])}),
        Variant("dweight_with_x", "dweight = sum(dy * x): x where xhat was meant",
                "right: dweight = sum(dy * xhat)\nyours: dweight = sum(dy * x)\n"
                "The weight multiplies the normalized xhat, not x.",
                lambda case: {"dweight": _param_sum(norm, case, case.args["dy"] * case.args["x"])}),
    ]
    if norm.centered:
        variants.insert(0, Variant(
            "missing_mean_term", "the mean term - mean(gw) is missing",
            said(formula.replace(" - mean(gw)", ""),
                 f"The mean is a function of x: shifting a whole {row} of x does not change y, so dx sums to zero "
                 f"over each {row}."),
            dx_plus(mean_term)))
    else:
        variants.insert(0, Variant(
            "extra_mean_term", "a mean term - mean(gw) that RMSNorm does not have (LayerNorm's formula)",
            said("dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))",
                 "RMSNorm subtracts no mean in the forward, so its backward has no mean term."),
            dx_plus(lambda rstd, xhat, gw: -mean_term(rstd, xhat, gw))))
    if "dbias" in names:
        variants.append(Variant(
            "dbias_mean", "dbias averaged instead of summed",
            "right: dbias = sum(dy)   (over every axis the bias is shared along)\nyours: dbias = mean(dy)\n"
            "Each output the bias is added to sends its gradient back: they add up.",
            lambda case: {"dbias": _param_sum(norm, case, case.args["dy"]) * case.args["weight"].size
                          / case.args["dy"].size}))
    return variants, right


def _missing_rstd(norm, right):
    def grads(case):
        rstd, _, _ = _pieces(norm, case)
        dx = right(case)["dx"]
        return {"dx": dx / norm.unrows(rstd, dx)}
    return grads


def _param_sum(norm, case, values):
    """sum of ``values`` over the axes the weight is shared along (the reference kernel's dbias of ``values``)."""
    if not norm.centered:    # RMSNorm's kernel returns no dbias: the rows are summed
        return values.sum(0)
    return norm.kernel(case, *_right_stats(norm, case), case.args["weight"], dy=values)[2]


# --------------------------------------------------------------------------- wrong axes
def _with_norm(other, names):
    """The whole backward of ``other`` (another norm's statistics on the same arrays): a wrong axis."""
    def grads(case):
        return _grads(names, other.kernel(case, *_right_stats(other, case), case.args["weight"]))
    return grads


def _interleaved_groups(names):
    """GroupNorm with group g made of the channels c with c % G == g (a reshape (N, C/G, G, ...) where
    (N, G, C/G, ...) was meant): the right kernel on channels permuted so, then permuted back."""
    def grads(case):
        x = case.args["x"]
        c, g = x.shape[1], case.args["num_groups"]
        perm = np.argsort(np.arange(c) % g, kind="stable")
        back = np.argsort(perm)
        args = dict(case.args, x=x[:, perm], dy=case.args["dy"][:, perm], weight=case.args["weight"][perm])
        moved = Case(case.label, args)
        norm = _GroupNorm()
        dx, dw, db = norm.kernel(moved, *_right_stats(norm, moved), args["weight"])
        return _grads(names, (dx[:, back], dw[back], db[back]))
    return grads


def _rms_over_batch(case):
    """RMSNorm with the mean square of each column (feature over the batch): the reference kernel on x^T, whose
    rows are then the features; the weight, per feature, is folded into the upstream gradient."""
    x, dy, w, eps = (case.args[k] for k in ("x", "dy", "weight", "eps"))
    rstd = 1 / np.sqrt((x * x).mean(0) + eps)                                         # (D,)
    dx_t, _, _ = rms_norm_backward((dy * w).T, x.T, rstd, None, eps, x.shape[0], False, True, False, False)
    return {"dx": dx_t.T, "dweight": (dy * x * rstd).sum(0)}


# --------------------------------------------------------------------------- the exercises
def _exercise(name, norm, signature, names, cases, extra_variants, description, returns):
    grad_of = {"dx": "x", "dweight": "weight", "dbias": "bias"}
    formula = CENTERED if norm.centered else UNCENTERED
    variants, right = _catalogue(norm, names, formula)
    variants += list(extra_variants)

    def rows(case, grad, err):
        if grad != "dx":
            return None
        rstd, xhat, gw = _pieces(norm, case)
        basis = {"1": np.ones_like(xhat), "xhat": xhat, "gw": gw}
        if not norm.centered:
            basis.pop("1")
        return norm.rows(err, case), basis, norm.row

    return Exercise(name, signature, names, {n: grad_of[n] for n in names}, cases, right, variants, rows,
                    description, returns, norm.shrink)


ROWS3 = ("dx", "dweight", "dbias")

RMS_NORM = _exercise(
    "rms_norm", _RMSNorm(), "backward(dy, x, weight, eps) -> (dx, dweight)", ("dx", "dweight"),
    lambda rng: _row_cases(rng, with_bias=False),
    [Variant("eps_outside_exact", "eps outside the square root (the gradient of rstd = 1 / (sqrt(ms) + eps))",
             "right: rstd = 1 / sqrt(mean(x^2) + eps)\nyours: rstd = 1 / (sqrt(mean(x^2)) + eps)  (differentiated "
             "exactly)\nPyTorch's rms_norm adds eps to the mean square, under the root.",
             lambda case: _grads(("dx", "dweight"), _RMSNorm().kernel(
                 case, None, _rstd(_RMSNorm().stats(case)[1], 0, case.args["eps"], "eps_outside"),
                 case.args["weight"], eps_outside=True))),
     Variant("wrong_axis", "the mean square over the batch (axis 0) instead of over each row",
             "right: ms = mean(x**2, axis=1)   (each sample's own features)\n"
             "yours: ms = mean(x**2, axis=0)   (each feature over the batch)", _rms_over_batch)],
    ('Forward, per row of x (N, D):\n'
     '    rstd = 1 / sqrt(mean(x**2 over the row) + eps)\n'
     '    y = x * rstd * weight                     weight (D,)\n'
     'dy (N, D) is the gradient of the loss with respect to y.'),
    'dx (N, D), dweight (D,)')

LAYER_NORM = _exercise(
    "layer_norm", _LayerNorm(), "backward(dy, x, weight, bias, eps) -> (dx, dweight, dbias)", ROWS3,
    lambda rng: _row_cases(rng, with_bias=True),
    [Variant("wrong_axis", "statistics over the batch (axis 0, BatchNorm's) instead of over each row",
             "right: mean = x.mean(axis=1), var = x.var(axis=1)   (each sample's own features)\n"
             "yours: mean = x.mean(axis=0), var = x.var(axis=0)   (that is BatchNorm)",
             _with_norm(_BatchNorm(), ROWS3))],
    ('Forward, per row of x (N, D):\n'
     '    mean = mean of the row;  var = mean((x - mean)**2) over the row (divided by D)\n'
     '    rstd = 1 / sqrt(var + eps);  xhat = (x - mean) * rstd\n'
     '    y = xhat * weight + bias                  weight, bias (D,)\n'
     'dy (N, D) is the gradient of the loss with respect to y.'),
    'dx (N, D), dweight (D,), dbias (D,)')

BATCH_NORM = _exercise(
    "batch_norm", _BatchNorm(), "backward(dy, x, weight, bias, eps) -> (dx, dweight, dbias)", ROWS3,
    lambda rng: _channel_cases(rng, [("small (4, 3)", (4, 3), 1e-5, None), ("(6, 5)", (6, 5), 1e-5, None),
                                     ("large eps 0.5, (5, 4)", (5, 4), 0.5, None),
                                     ("small eps 1e-12, (3, 2)", (3, 2), 1e-12, None),
                                     ("channels with a large mean (1e6), (8, 3)", (8, 3), 1e-5, None),
                                     ("(16, 6)", (16, 6), 1e-5, None)], grouped=False),
    [Variant("wrong_axis", "statistics over each sample's features (axis 1, LayerNorm's) instead of over the batch",
             "right: mean = x.mean(axis=0), var = x.var(axis=0)   (each channel over the batch)\n"
             "yours: mean = x.mean(axis=1), var = x.var(axis=1)   (that is LayerNorm)",
             _with_norm(_LayerNorm(), ROWS3)),
     Variant("eval_formula", "mean and variance treated as constants (the eval-mode formula dx = rstd * gw)",
             "right: " + CENTERED + "   (training)\nyours: dx = rstd * gw\n"
             "In training the batch statistics depend on every sample: their derivatives give the two mean terms.",
             lambda case: {"dx": _BatchNorm().kernel(case, *_right_stats(_BatchNorm(), case), case.args["weight"],
                                                     training=False)[0]})],
    ('Forward in training mode, x (N, C): each channel c normalized over the batch:\n'
     '    mean_c = mean of x[:, c];  var_c = mean((x[:, c] - mean_c)**2) (divided by N)\n'
     '    rstd_c = 1 / sqrt(var_c + eps);  xhat = (x - mean) * rstd\n'
     '    y = xhat * weight + bias                  weight, bias (C,)\n'
     'dy (N, C) is the gradient of the loss with respect to y.'),
    'dx (N, C), dweight (C,), dbias (C,)')

GROUP_NORM = _exercise(
    "group_norm", _GroupNorm(), "backward(dy, x, num_groups, weight, bias, eps) -> (dx, dweight, dbias)", ROWS3,
    lambda rng: _channel_cases(rng, [("small (2, 4, 3), 2 groups", (2, 4, 3), 1e-5, 2),
                                     ("(3, 6, 2, 2), 3 groups", (3, 6, 2, 2), 1e-5, 3),
                                     ("large eps 0.5, (2, 4, 5), 2 groups", (2, 4, 5), 0.5, 2),
                                     ("small eps 1e-12, (2, 6, 3), 2 groups", (2, 6, 3), 1e-12, 2),
                                     ("rows with a large mean (1e6), (2, 4, 4), 2 groups", (2, 4, 4), 1e-5, 2),
                                     ("(4, 8, 6), 4 groups", (4, 8, 6), 1e-5, 4)], grouped=True),
    [Variant("interleaved_groups", "groups made of every G-th channel (c % G) instead of consecutive channels",
             "right: x.reshape(N, G, C // G, *spatial)   (group g = channels g*C/G ... (g+1)*C/G - 1)\n"
             "yours: x.reshape(N, C // G, G, *spatial)   (group g = channels g, g + G, g + 2G, ...)",
             _interleaved_groups(ROWS3)),
     Variant("per_channel_statistics", "statistics per channel (InstanceNorm's) instead of per group",
             "right: mean, var over the C/G channels of a group and all positions\n"
             "yours: mean, var over each channel's positions only", _with_norm(_GroupNorm("C"), ROWS3)),
     Variant("per_sample_statistics", "statistics over all channels of a sample (one group) instead of per group",
             "right: mean, var over the C/G channels of a group and all positions\n"
             "yours: mean, var over all C channels (num_groups ignored)", _with_norm(_GroupNorm(1), ROWS3))],
    ('Forward, x (N, C, *spatial), C divisible by num_groups = G:\n'
     '    the channels are split into G consecutive groups of C/G channels; for each sample n and group g,\n'
     "    mean and var (divided by the count) are taken over the group's channels and all positions;\n"
     '    xhat = (x - mean) / sqrt(var + eps);  y = xhat * weight[c] + bias[c]     weight, bias (C,)\n'
     "dy has x's shape."),
    "dx (x's shape), dweight (C,), dbias (C,)")

INSTANCE_NORM = _exercise(
    "instance_norm", _GroupNorm("C"), "backward(dy, x, weight, bias, eps) -> (dx, dweight, dbias)", ROWS3,
    lambda rng: _channel_cases(rng, [("small (2, 3, 4)", (2, 3, 4), 1e-5, None),
                                     ("(3, 2, 2, 3)", (3, 2, 2, 3), 1e-5, None),
                                     ("large eps 0.5, (2, 3, 5)", (2, 3, 5), 0.5, None),
                                     ("small eps 1e-12, (2, 2, 6)", (2, 2, 6), 1e-12, None),
                                     ("rows with a large mean (1e6), (2, 3, 8)", (2, 3, 8), 1e-5, None),
                                     ("(4, 3, 5, 2)", (4, 3, 5, 2), 1e-5, None)], grouped=False),
    [Variant("wrong_axis", "statistics over the batch and positions (BatchNorm's) instead of per sample",
             "right: mean, var over each (sample, channel)'s positions: axes (2, ...)\n"
             "yours: mean, var over axes (0, 2, ...): the batch too (that is BatchNorm)",
             _with_norm(_BatchNorm(), ROWS3)),
     Variant("per_sample_statistics", "statistics over all channels of a sample instead of per channel",
             "right: mean, var over each (sample, channel)'s positions\n"
             "yours: mean, var over all channels and positions of a sample (GroupNorm with one group)",
             _with_norm(_GroupNorm(1), ROWS3))],
    ('Forward, x (N, C, *spatial): each (sample, channel) normalized over its positions:\n'
     '    mean, var (divided by the count) over the spatial axes;  xhat = (x - mean) / sqrt(var + eps)\n'
     '    y = xhat * weight[c] + bias[c]            weight, bias (C,)\n'
     "dy has x's shape."),
    "dx (x's shape), dweight (C,), dbias (C,)")

NORMS = {e.name: e for e in (RMS_NORM, LAYER_NORM, BATCH_NORM, GROUP_NORM, INSTANCE_NORM)}
