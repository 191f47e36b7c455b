"""The checker: run a student's backward on many cases, compare with the reference, and say what is wrong.

An ``Exercise`` (norms.py, core.py) supplies

* ``cases(rng)``: a list of ``Case`` objects, smallest first: the student's arguments in float64, random
  upstream gradients (never uniform), random weights, small and large eps, rows with a large mean;
* ``reference(case)``: the right gradients, from minigrad's NumPy reference kernels or from autograd;
* ``variants``: known wrong formulas, each a ``Variant`` whose ``grads(case)`` returns the gradients it
  changes; a student whose output equals a variant's in every case is told that variant's name and term;
* ``rows(case, grad_name)``: how to read a gradient as rows (the sets of values normalized together) and
  the per-row vectors (``1``, ``xhat``, ...) an error can be made of, for the localisation.

``check`` compares gradient by gradient (a student may have two mistakes: one in dx, one in dweight), to
a relative tolerance ``RTOL`` of the reference's largest entry. Failing gradients are first matched
against the variants; an unexplained one is localised (which case, rows, columns, what structure) and
shown on the smallest failing case.
"""
import traceback
from dataclasses import dataclass, field

import numpy as np

RTOL = 1e-7          # |student - reference| <= RTOL * max|reference| (+ ATOL): float64 formulas agree to ~1e-12
ATOL = 1e-12
MATCH_RTOL = 1e-6    # a variant "is" the student's error if it agrees to this


@dataclass
class Case:
    """One set of arguments for the student's backward, ``args`` in the order of the signature."""
    label: str
    args: dict
    extra: dict = field(default_factory=dict)   # statistics the variants and the localisation use (xhat, ...)


@dataclass
class Variant:
    """A known wrong formula: ``name`` says the mistake, ``term`` shows the formula and where it goes wrong."""
    key: str
    name: str
    term: str
    grads: object               # case -> {grad name: array} for the gradients this mistake changes


@dataclass
class Exercise:
    name: str
    signature: str              # "backward(dy, x, weight, bias, eps) -> (dx, dweight, dbias)"
    grad_names: tuple           # ("dx", "dweight", "dbias")
    grad_of: dict               # grad name -> the argument whose shape it has ("dx" -> "x")
    cases: object               # rng -> [Case]
    reference: object           # case -> {grad name: array}
    variants: list
    rows: object = None         # (case, grad name, array) -> (2-D array, {basis name: 2-D array}, row word)
    description: str = ""       # the forward, spelled out for the stub
    returns: str = ""           # what backward returns, with shapes: "dx (N, D), dweight (D,)"
    shrink: object = None       # case -> [(what was kept, smaller Case)]: the minimal failing example


@dataclass
class Finding:
    """What is wrong with one gradient."""
    grad: str
    variants: list = field(default_factory=list)     # the Variants that explain it
    text: str = ""                                   # the localisation when no variant does


class CheckResult:
    """What ``check`` found: ``passed``, ``diagnosis`` (empty when passed) and a printable report."""

    def __init__(self, exercise, passed, diagnosis, findings=(), cases_run=0):
        self.exercise = exercise
        self.passed = passed
        self.diagnosis = diagnosis
        self.findings = list(findings)
        self.cases_run = cases_run

    @property
    def variant_keys(self):
        """The keys of the known mistakes recognised, in the order of the gradients."""
        keys = []
        for f in self.findings:
            keys += [v.key for v in f.variants if v.key not in keys]
        return keys

    def __bool__(self):
        return self.passed

    def __str__(self):
        head = f"{self.exercise.name}: "
        if self.passed:
            return head + f"PASSED ({self.cases_run} cases: {'; '.join(self._labels())})"
        return head + "FAILED\n\n" + self.diagnosis

    def _labels(self):
        return [c.label for c in self.exercise.cases(np.random.default_rng(0))]

    def __repr__(self):
        return f"<CheckResult {self.exercise.name}: {'passed' if self.passed else 'failed'}>"

    def _repr_html_(self):
        import html
        colour = "#1a7f37" if self.passed else "#cf222e"
        title, _, body = str(self).partition("\n")
        return (f'<div style="font-family:monospace"><b style="color:{colour}">{html.escape(title)}</b>'
                f'<pre style="white-space:pre-wrap">{html.escape(body.strip())}</pre></div>')


# --------------------------------------------------------------------------- running the student's code
def _call(exercise, backward, case):
    """The student's gradients for one case as {name: float64 array or None}; raises what the code raised."""
    args = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in case.args.items()}
    out = backward(*args.values())
    names = exercise.grad_names
    if len(names) == 1 and not isinstance(out, (tuple, list)):
        out = (out,)
    if not isinstance(out, (tuple, list)) or len(out) != len(names):
        raise TypeError(f"backward must return {len(names)} value(s) ({', '.join(names)}), "
                        f"got {type(out).__name__}" + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    changed = [k for k, v in case.args.items() if isinstance(v, np.ndarray) and not np.array_equal(v, args[k], True)]
    result = {n: (None if g is None else np.asarray(g, dtype=np.float64)) for n, g in zip(names, out)}
    return result, changed


def _close(a, b, ref, rtol):
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * scale + ATOL))


def _fmt(a, precision=4):
    return np.array2string(np.asarray(a), precision=precision, suppress_small=True, max_line_width=100,
                           threshold=60, edgeitems=3)


def _indent(text, by="    "):
    return "\n".join(by + line for line in text.splitlines())


# --------------------------------------------------------------------------- the check
def check(exercise, backward, seed=0):
    """Run ``backward`` on every case of ``exercise``; a ``CheckResult``.

    Every case runs, even after one raised or returned a wrong shape: the cases that gave gradients of the
    right shapes are still diagnosed (a transposed matmul operand raises on rectangular cases only)."""
    cases = exercise.cases(np.random.default_rng(seed))
    refs = [exercise.reference(c) for c in cases]
    outs, wrong = [], {}                     # wrong: grad name -> [case index] where it fails
    problems = []                            # exceptions, shapes, None, in-place writes: said first
    raised = {}                              # "Type: message" -> its place in problems: said once
    for case, ref in zip(cases, refs):
        out = {}
        try:
            out, changed = _call(exercise, backward, case)
        except Exception as e:  # the student's code raised: show where, on this case
            key = f"{type(e).__name__}: {e}"
            if key not in raised:
                tb = traceback.format_exception(type(e), e, e.__traceback__)
                raised[key] = len(problems)
                problems.append(f"Your backward raised {type(e).__name__} on case '{case.label}' "
                                f"({_shapes(case)}):\n" + _indent("".join(tb[-2:]).rstrip()))
            changed = []
        if changed:
            problems.append(f"Your backward changed its input(s) {', '.join(changed)} in place (case "
                            f"'{case.label}'); work on copies: the caller still needs them.")
        for name in exercise.grad_names if out else ():
            got, exp = out[name], ref[name]
            if got is None:
                problems.append(f"{name} is None (case '{case.label}'): return an array of shape {exp.shape}.")
            elif got.shape != exp.shape:
                arg = exercise.grad_of[name]
                problems.append(f"{name} has shape {got.shape}, but {arg} has shape {exp.shape} "
                                f"(case '{case.label}'): a gradient has the shape of what it is the gradient of"
                                + _shape_hint(got.shape, exp.shape))
            elif not _close(got, exp, exp, RTOL):
                wrong.setdefault(name, []).append(len(outs))
        outs.append(out)
    if not wrong and not problems:
        return CheckResult(exercise, True, "", cases_run=len(cases))
    findings = [_diagnose(exercise, backward, name, wrong[name], cases, refs, outs) for name in exercise.grad_names
                if name in wrong]
    parts = list(dict.fromkeys(problems))[:4]
    if findings:
        parts.append(_report(exercise, findings, wrong, cases, refs, outs))
    return CheckResult(exercise, False, "\n\n".join(parts), findings, len(cases))


def _usable(out, name, ref):
    """The student's gradient ``name`` of one case if it is there with the right shape, else None."""
    got = out.get(name)
    return got if got is not None and got.shape == ref.shape else None


def _shapes(case):
    return ", ".join(f"{k} {tuple(v.shape)}" for k, v in case.args.items() if isinstance(v, np.ndarray))


def _shape_hint(got, expected):
    if sorted(got) == sorted(expected) and got != expected:
        return "; it looks transposed."
    if len(got) < len(expected):
        return "; did you sum over an axis you should have kept?"
    if len(got) > len(expected):
        return "; did you forget to sum over the axis the parameter is shared along?"
    return "."


def _diagnose(exercise, backward, name, failing, cases, refs, outs):
    """The variants whose ``name`` gradient equals the student's in every case (and differs from the
    reference in at least one); else a localisation of the error."""
    found = []
    for variant in exercise.variants:
        differs, agrees = False, True
        for case, ref, out in zip(cases, refs, outs):
            try:
                changed = variant.grads(case)
            except ValueError:          # not defined on this case's shapes (a transposed matmul operand)
                continue
            v = changed.get(name, ref[name])
            got = _usable(out, name, ref[name])
            if v.shape != ref[name].shape or got is None:
                continue
            differs |= not _close(v, ref[name], ref[name], RTOL)
            if not _close(got, v, ref[name], MATCH_RTOL):
                agrees = False
                break
        if agrees and differs:
            found.append(variant)
    if found:
        return Finding(name, found)
    return Finding(name, [], _localise(exercise, backward, name, failing, cases, refs, outs))


def _report(exercise, findings, wrong, cases, refs, outs):
    parts, shown = [], set()
    examples = set()
    for f in findings:
        where = (f"{f.grad} is wrong in {len(wrong[f.grad])} of {len(cases)} cases "
                 f"({'; '.join(cases[i].label for i in wrong[f.grad][:4])}{'; ...' if len(wrong[f.grad]) > 4 else ''}).")
        if f.variants:
            v = f.variants[0]
            also = [u for u in f.variants[1:]]
            text = where + f"\nIt matches a known mistake: {v.name}."
            if v.key not in shown:
                text += "\n" + _indent(v.term)
            if also:
                text += "\n(It also matches: " + "; ".join(u.name for u in also) + ".)"
            shown.add(v.key)
            parts.append(text)
        else:
            text = f.text
            head, sep, example = text.partition("Smallest failing case, ")
            label = example.split("\n", 1)[0]                # "'case label', row 0 alone:"
            if sep and label in examples:          # the inputs were printed for an earlier gradient: not again
                lines = example.splitlines()
                text = head + sep + lines[0].rstrip(":") + " (inputs above):\n" + "\n".join(
                    line for line in lines if line.lstrip().startswith(("expected", "your", "difference"))
                    or line.startswith(" " * 14))
            examples.add(label)
            parts.append(where + "\n" + text)
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- localisation
def _localise(exercise, backward, name, failing, cases, refs, outs):
    """Where the error of gradient ``name`` lives and what it looks like, and the smallest failing case."""
    lines = []
    passing = [c.label for i, c in enumerate(cases)
               if i not in failing and _usable(outs[i], name, refs[i][name]) is not None]
    if passing:
        lines.append("It is right in: " + "; ".join(passing) + ".")
        hint = _case_hint(cases, failing)
        if hint:
            lines.append(hint)
    i = max(failing, key=lambda j: _rel_err(outs[j][name], refs[j][name]))
    got, exp = outs[i][name], refs[i][name]
    worst = _rel_err(got, exp)
    lines.append(f"Largest relative error {worst:.3g} on case '{cases[i].label}'.")
    if worst < 1e-4:
        lines.append("That is small: rounding rather than a wrong term (computing in float32? a variance as "
                     "E[x^2] - E[x]^2?). The checker expects float64 accuracy.")
    lines += _structure(exercise, name, cases[i], got, exp)
    small = min(failing, key=lambda j: (exp_size(cases[j]), j))
    case, got, exp, kept = _shrunk(exercise, backward, name, cases[small], outs[small][name], refs[small][name])
    lines.append(_example(exercise, name, case, got, exp, kept))
    return "\n".join(lines)


def _shrunk(exercise, backward, name, case, got, exp):
    """The first of the exercise's smaller versions of ``case`` (one row, one channel, ...) on which the
    student's ``name`` is still wrong, as (case, got, expected, what was kept); else ``case`` itself."""
    for kept, small in (exercise.shrink(case) if exercise.shrink else []):
        try:
            out, _ = _call(exercise, backward, small)
        except Exception:  # noqa: BLE001 - the smaller case is only an offer; the full one is shown then
            continue
        ref = exercise.reference(small)[name]
        mine = _usable(out, name, ref)
        if mine is not None and not _close(mine, ref, ref, RTOL):
            return small, mine, ref, kept
    return case, got, exp, ""


def exp_size(case):
    return sum(v.size for v in case.args.values() if isinstance(v, np.ndarray))


def _rel_err(got, exp):
    scale = float(np.max(np.abs(exp))) or 1.0
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(got - exp)) / scale) if np.isfinite(got).any() else float("inf")


def _case_hint(cases, failing):
    labels = [cases[i].label for i in failing]
    if all("large mean" in s for s in labels):
        return ("Only rows with a large mean fail: the variance lost its digits (E[x^2] - E[x]^2 cancels); "
                "compute it as mean((x - mean)^2).")
    if all("large eps" in s for s in labels):
        return "Only the large-eps cases fail: look at where eps enters (inside the square root, added to the variance)."
    if all("large logits" in s for s in labels):
        return "Only large logits fail: exp overflows; subtract each row's maximum before exp."
    return ""


def _structure(exercise, name, case, got, exp):
    """Sentences describing the error got - exp: NaN, a factor, per-row offsets or multiples of xhat, where."""
    out = []
    if not np.isfinite(got).all():
        bad = np.argwhere(~np.isfinite(got))
        out.append(f"{name} has {len(bad)} NaN/inf entries (first at index {tuple(bad[0])}).")
        return out
    err = got - exp
    scale = float(np.max(np.abs(exp))) or 1.0
    ref_sq = float(np.sum(exp * exp))
    if np.max(np.abs(got)) <= 1e-12 * scale:
        out.append(f"{name} is all zeros (a sum() loss, or a uniform upstream gradient, hides this mistake).")
        return out
    if ref_sq > 0:
        c = float(np.sum(got * exp) / ref_sq)
        if np.max(np.abs(got - c * exp)) <= 1e-6 * scale:
            if abs(c + 1) < 1e-6:
                out.append(f"{name} has the wrong sign: it is exactly -1 times the right one.")
            else:
                out.append(f"{name} is the right answer times a constant factor {c:.6g}"
                           + (" (a missing or extra 1/n: compare with the sizes of the case)." if c > 0 else "."))
            return out
    if exercise.rows is not None:
        view = exercise.rows(case, name, err)
        if view is not None:
            out += _row_structure(name, *view, scale=scale, got=got, exp=exp, case=case, exercise=exercise)
    flat = np.abs(err) > RTOL * scale
    if err.ndim >= 2:
        rows = np.flatnonzero(flat.reshape(flat.shape[0], -1).any(1))
        cols = np.flatnonzero(flat.reshape(flat.shape[0], flat.shape[1], -1).any((0, 2)))
        out.append(f"Wrong entries of {name} (shape {err.shape}): index along axis 0 {_which(rows, err.shape[0])}; "
                   f"along axis 1 {_which(cols, err.shape[1])}.")
    else:
        out.append(f"Wrong entries: {_which(np.flatnonzero(flat), err.size)} of {name} (shape {err.shape}).")
    return out


def _which(idx, n):
    if len(idx) == n:
        return "all"
    return "[" + ", ".join(map(str, idx[:8])) + (", ..." if len(idx) > 8 else "") + f"] ({len(idx)} of {n})"


def _row_structure(name, err_rows, basis, row_word, scale, **_):
    """Fit the error of each row with the row's basis vectors (``1``, ``xhat``, ...): which explain it."""
    out = []
    names = list(basis)
    for k in range(1, min(2, len(names)) + 1):
        for subset in _subsets(names, k):
            fit = _fit_rows(err_rows, [basis[b] for b in subset])
            if fit is not None and np.max(np.abs(err_rows - fit[0])) <= 1e-6 * scale:
                coef = fit[1]
                desc = " + ".join(f"a_{row_word} * {b}" if b != "1" else f"c_{row_word}" for b in subset)
                out.append(f"In each {row_word}, the error of {name} has the form {desc} "
                           f"(one coefficient per {row_word}; first {row_word}s: "
                           + "; ".join(", ".join(f"{v:.4g}" for v in coef[r]) for r in range(min(3, len(coef))))
                           + ").")
                out.append(_basis_meaning(subset))
                return out
    return out


def _subsets(names, k):
    from itertools import combinations
    return list(combinations(names, k))


def _fit_rows(err_rows, vectors):
    """Least squares per row: err_r ~ sum_b a_rb * vector_b[r]. Returns (fitted, coefficients (R, B))."""
    R, M = err_rows.shape
    if M <= len(vectors):   # as many unknowns as entries: any error fits; says nothing
        return None
    A = np.stack([np.broadcast_to(v, err_rows.shape) for v in vectors], axis=2)      # (R, M, B)
    coef = np.stack([np.linalg.lstsq(A[r], err_rows[r], rcond=None)[0] for r in range(R)])   # (R, B)
    return np.einsum("rmb,rb->rm", A, coef), coef


_MEANINGS = {
    "1": "A constant offset per row: a mean over the row is missing, extra or wrong (the projection onto the "
         "constant vector).",
    "xhat": "Proportional to xhat: the projection term xhat * mean(gw * xhat) is missing, extra or scaled wrong.",
    "x": "Proportional to x: a term built from x where xhat (or a factor rstd) was meant.",
    "gw": "Proportional to the upstream gradient (times weight): the leading term, or a factor in front of it.",
    "dy": "Proportional to the upstream gradient: the leading term, or the weight in front of it.",
    "p": "Proportional to the softmax probabilities: the softmax term.",
    "onehot": "Sitting on the targets' entries: the one-hot term.",
}


def _basis_meaning(subset):
    return " ".join(_MEANINGS.get(b, "") for b in subset).strip()


def _example(exercise, name, case, got, exp, kept=""):
    """The smallest failing case written out: inputs, expected and obtained ``name``."""
    lines = [f"Smallest failing case, '{case.label}'" + (f", {kept}" if kept else "") + ":"]
    for k, v in case.args.items():
        lines.append(f"  {k} = " + (_fmt(v).replace("\n", "\n" + " " * (5 + len(k))) if isinstance(v, np.ndarray)
                                    else repr(v)))
    lines.append(f"  expected {name} = " + _fmt(exp).replace("\n", "\n" + " " * (14 + len(name))))
    lines.append(f"  your {name}     = " + _fmt(got).replace("\n", "\n" + " " * (14 + len(name))))
    with np.errstate(invalid="ignore"):
        diff = np.array2string(got - exp, formatter={"float_kind": lambda v: f"{v:.2e}"}, max_line_width=100,
                               threshold=60, edgeitems=3)
    lines.append("  " + "difference".ljust(9 + len(name)) + " = " + diff.replace("\n", "\n" + " " * (14 + len(name))))
    return "\n".join(lines)


def run_check(exercise, backward, seed=0):
    """``check`` that turns an import-time mistake in the exercise itself into a clear error."""
    if not callable(backward):
        raise TypeError(f"check('{exercise.name}', backward): backward must be a function "
                        f"{exercise.signature}, got {type(backward).__name__}")
    return check(exercise, backward, seed)
