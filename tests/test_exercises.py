"""minigrad.exercises: the worked solutions pass; every wrong solution of the catalogue (written as students write
them, in tests/exercise_mistakes.py, apart from the checker's own variants) is caught and named; a solution that
is right only for uniform upstream gradients is caught; unexplained errors are localised; the command line."""
import importlib
import subprocess
import sys

import numpy as np
import pytest

from minigrad import exercises
from minigrad.exercises.checker import Case

from .exercise_mistakes import MISTAKES, student

NORMS = ["rms_norm", "layer_norm", "batch_norm", "group_norm", "instance_norm"]


def test_every_exercise_has_a_catalogue_of_student_mistakes():
    assert sorted(MISTAKES) == sorted(exercises.names())


def solution(name):
    return importlib.import_module(f"minigrad.exercises.solutions.{name}").backward


@pytest.mark.parametrize("name", exercises.names())
def test_worked_solution_passes(name):
    result = exercises.check(name, solution(name))
    assert result.passed, str(result)
    assert result.diagnosis == "" and "PASSED" in str(result)


@pytest.mark.parametrize("name", list(MISTAKES))
def test_student_style_correct_solution_passes(name):
    assert exercises.check(name, student(name)).passed


@pytest.mark.parametrize("name,knobs,key", [(name, knobs, key) for name, (_, mistakes) in MISTAKES.items()
                                            for knobs, key in mistakes],
                         ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={w}" for k, w in v.items()))
def test_wrong_solution_is_caught_and_named(name, knobs, key):
    result = exercises.check(name, student(name, **knobs))
    assert not result.passed
    assert result.variant_keys[:1] == [key], str(result)
    named = dict(exercises.catalogue(name))[key]
    assert f"It matches a known mistake: {named}." in result.diagnosis
    assert "right:" in result.diagnosis and "yours:" in result.diagnosis   # the term is shown


@pytest.mark.parametrize("name", list(MISTAKES))
def test_catalogue_has_at_least_five_mistakes_each_caught(name):
    caught = {key for knobs, key in MISTAKES[name][1]}
    assert len(caught) >= 5
    assert caught == {key for key, _ in exercises.catalogue(name)}      # every known mistake has a student


def uniform_only_check(name, backward):
    """The check a careless teacher writes: upstream gradient all ones (a sum() loss), unit weight, zero bias,
    one shape. Compared with the worked solution. Returns whether ``backward`` passes it."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)) + 0.5
    args = dict(dy=np.ones_like(x), x=x, weight=np.ones(6), bias=np.zeros(6), eps=1e-5)
    if name == "rms_norm":
        del args["bias"]
    want, got = solution(name)(*args.values()), backward(*args.values())
    return all(np.allclose(w, g) for w, g in zip(want, got))


def zero_dx_layer_norm(dy, x, weight, bias, eps):
    """Right dweight and dbias, dx = 0: exactly LayerNorm's dx under a sum() loss with unit weight."""
    _, dw, db = solution("layer_norm")(dy, x, weight, bias, eps)
    return np.zeros_like(x), dw, db


def test_solution_right_only_for_uniform_upstream_gradients_is_caught():
    # these pass a check with a uniform upstream gradient (pytorch#63541's trap) ...
    no_projection = student("layer_norm", proj=None)
    for wrong in (zero_dx_layer_norm, no_projection):
        assert uniform_only_check("layer_norm", wrong)
    assert uniform_only_check("batch_norm", student("batch_norm", proj=None))
    # ... and not this one
    zero = exercises.check("layer_norm", zero_dx_layer_norm)
    assert not zero.passed and "dx is all zeros" in zero.diagnosis and "uniform upstream gradient" in zero.diagnosis
    assert exercises.check("layer_norm", no_projection).variant_keys == ["missing_projection"]
    assert exercises.check("batch_norm", student("batch_norm", proj=None)).variant_keys == ["missing_projection"]


def test_cases_are_never_uniform_and_cover_eps_and_large_means():
    for name in exercises.names():
        cases = exercises.exercise(name).cases(np.random.default_rng(0))
        assert len(cases) >= 4
        for case in cases:
            upstream = next(iter(case.args.values()))
            if isinstance(upstream, np.ndarray):
                assert np.unique(upstream).size == upstream.size        # every entry different
            if "weight" in case.args:
                assert np.unique(case.args["weight"]).size == case.args["weight"].size
        if name in NORMS:
            eps = [c.args["eps"] for c in cases]
            assert min(eps) <= 1e-12 and max(eps) >= 0.5
            assert any("large mean" in c.label for c in cases)


def test_every_variant_differs_from_the_reference_and_from_each_other():
    """A variant equal to the reference could never be diagnosed; two equal variants could not be told apart."""
    for name in exercises.names():
        ex = exercises.exercise(name)
        cases = ex.cases(np.random.default_rng(0))
        refs = [ex.reference(c) for c in cases]
        signatures = {}
        for v in ex.variants:
            parts = []
            for case, ref in zip(cases, refs):
                try:
                    changed = v.grads(case)
                except ValueError:
                    continue
                parts += [np.round(changed.get(g, ref[g]), 6).tobytes() for g in ex.grad_names
                          if changed.get(g, ref[g]).shape == ref[g].shape]
            assert any(not np.allclose(v.grads(c).get(g, r[g]), r[g]) for c, r in zip(cases, refs)
                       for g in v.grads(c) if v.grads(c)[g].shape == r[g].shape), (name, v.key)
            key = b"".join(parts)
            assert key not in signatures, (name, v.key, signatures.get(key))
            signatures[key] = v.key


def test_two_mistakes_in_two_gradients_are_both_named():
    result = exercises.check("layer_norm", student("layer_norm", mean_term=False, dweight="none"))
    assert result.variant_keys == ["missing_mean_term", "dweight_without_xhat"]


def test_unexplained_error_is_localised():
    """A mistake outside the catalogue: a stray 0.3 * mean(dy) per row, only in the rows of one case."""
    right = solution("layer_norm")

    def offset(dy, x, weight, bias, eps):
        dx, dw, db = right(dy, x, weight, bias, eps)
        return dx + 0.3 * dy.mean(1, keepdims=True), dw, db
    text = exercises.check("layer_norm", offset).diagnosis
    assert "dx is wrong in 6 of 6 cases" in text
    assert "the error of dx has the form c_row" in text and "constant offset per row" in text
    assert "Smallest failing case, 'small (2, 4)', row 0 alone:" in text     # shrunk to one row
    assert "expected dx" in text and "your dx" in text and "difference" in text

    def scaled(dy, x, weight, bias, eps):
        dx, dw, db = right(dy, x, weight, bias, eps)
        return dx, 1.5 * dw, db
    text = exercises.check("layer_norm", scaled).diagnosis
    assert "dweight is the right answer times a constant factor 1.5" in text

    def proportional(dy, x, weight, bias, eps):
        dx, dw, db = right(dy, x, weight, bias, eps)
        xhat = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + eps)
        return dx + 0.1 * xhat * dy[:, :1], dw, db
    assert "a_row * xhat" in exercises.check("layer_norm", proportional).diagnosis

    def one_channel(dy, x, weight, bias, eps):
        dx, dw, db = solution("batch_norm")(dy, x, weight, bias, eps)
        dx[:, 0] *= 1.01
        return dx, dw, db
    text = exercises.check("batch_norm", one_channel).diagnosis
    assert "along axis 1 [0] (1 of" in text and "channel 0 alone:" in text


def test_only_large_means_failing_gets_the_cancellation_hint():
    def one_pass(dy, x, weight, bias, eps):
        mean = x.mean(1, keepdims=True)
        var = (x * x).mean(1, keepdims=True) - mean * mean          # E[x^2] - E[x]^2
        rstd = 1 / np.sqrt(var + eps)
        xhat = (x - mean) * rstd
        gw = dy * weight
        dx = rstd * (gw - gw.mean(1, keepdims=True) - xhat * (gw * xhat).mean(1, keepdims=True))
        return dx, (dy * xhat).sum(0), dy.sum(0)
    result = exercises.check("layer_norm", one_pass)
    assert not result.passed and "Only rows with a large mean fail" in result.diagnosis


def test_shapes_exceptions_none_and_in_place_writes_are_reported():
    right = solution("batch_norm")
    assert "dweight has shape (3,), but weight has shape (4,)" not in exercises.check("batch_norm", right).diagnosis
    text = exercises.check("batch_norm", lambda dy, x, w, b, eps: (right(dy, x, w, b, eps)[0],
                                                                    (dy * x).sum(1), dy.sum(0))).diagnosis
    assert "dweight has shape (4,), but weight has shape (3,)" in text
    text = exercises.check("batch_norm", lambda dy, x, w, b, eps: (None,) + right(dy, x, w, b, eps)[1:]).diagnosis
    assert "dx is None" in text
    text = exercises.check("tanh", lambda dout, x: 1 / 0).diagnosis
    assert "raised ZeroDivisionError on case 'small (5,)'" in text

    def in_place(dout, x):
        dout *= 1 - np.tanh(x) ** 2
        return dout
    assert "changed its input(s) dout in place" in exercises.check("tanh", in_place).diagnosis


def test_overflowing_softmax_is_localised_to_large_logits():
    def naive(dloss, z, t):
        p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        return dloss * (p - np.eye(z.shape[1])[t]) / len(z)
    with np.errstate(over="ignore", invalid="ignore"):
        text = exercises.check("softmax_cross_entropy", naive).diagnosis
    assert "Only large logits fail" in text and "NaN" in text


def test_result_prints_and_renders_html():
    result = exercises.check("rms_norm", student("rms_norm", proj=None))
    assert str(result).startswith("rms_norm: FAILED") and "<pre" in result._repr_html_()
    assert repr(result) == "<CheckResult rms_norm: failed>" and not result
    with pytest.raises(ValueError, match="no exercise named 'no_such'"):
        exercises.check("no_such", solution("tanh"))


def test_stub_has_no_solution_and_command_line_checks_a_file(tmp_path):
    for name in exercises.names():
        text = exercises.stub(name)
        assert "raise NotImplementedError" in text and exercises.signature(name).split(" ->")[0] in text
        assert text != exercises.solution_path(name).read_text()
    run = [sys.executable, "-m", "minigrad.exercises"]
    stub = subprocess.run(run + ["stub", "layer_norm"], capture_output=True, text=True, check=True).stdout
    assert stub == exercises.stub("layer_norm")
    mine = tmp_path / "my_ln.py"
    mine.write_text(stub)
    out = subprocess.run(run + ["check", "layer_norm", str(mine)], capture_output=True, text=True)
    assert out.returncode == 1 and "raised NotImplementedError" in out.stdout
    mine.write_text(exercises.solution_path("layer_norm").read_text())
    out = subprocess.run(run + ["check", "layer_norm", str(mine)], capture_output=True, text=True)
    assert out.returncode == 0 and "layer_norm: PASSED" in out.stdout


def test_case_arguments_are_not_shared_with_the_student():
    seen = []

    def keeps(dy, x, weight, bias, eps):
        seen.append(x)
        return solution("layer_norm")(dy, x, weight, bias, eps)
    exercises.check("layer_norm", keeps)
    cases = exercises.exercise("layer_norm").cases(np.random.default_rng(0))
    assert isinstance(cases[0], Case) and not any(np.shares_memory(seen[0], c.args["x"]) for c in cases[:1])
