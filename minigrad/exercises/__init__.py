"""Exercises: write a backward pass by hand and be told *which term* is wrong.

    from minigrad import exercises
    def backward(dy, x, weight, bias, eps):          # your LayerNorm backward, NumPy in and out
        ...
        return dx, dweight, dbias
    result = exercises.check("layer_norm", backward)
    result.passed          # True / False
    print(result)          # the report: the known mistake it matches and its term, or where the error lives

From a shell: ``python -m minigrad.exercises stub layer_norm > my_ln.py`` writes a file to start from,
``python -m minigrad.exercises check layer_norm my_ln.py`` checks its ``backward``, and
``python -m minigrad.exercises list`` lists the exercises and their signatures.

Every exercise runs the student's function in float64 on several shapes, with random (never uniform)
upstream gradients and random weights, small and large eps, and rows with a large mean; the reference
gradients come from minigrad's own NumPy reference kernels (norms) or from autograd (core ops). A
failing gradient is compared with a catalogue of known wrong formulas (``exercises.catalogue(name)``);
when none matches, the report says which gradient, which rows and columns, what the error looks like
(a constant offset per row, a multiple of xhat, a factor) and prints the smallest failing case.
Worked solutions live in ``minigrad/exercises/solutions/``, apart from the stubs (``stub(name)``).
"""
from pathlib import Path

from .checker import CheckResult, Exercise, Variant, run_check

__all__ = ["check", "stub", "catalogue", "names", "signature", "CheckResult"]

_HERE = Path(__file__).resolve().parent


def _exercises():
    from .core import CORE
    from .norms import NORMS
    return {**NORMS, **CORE}


def names():
    """The exercise names, norms first."""
    return list(_exercises())


def exercise(name):
    """The ``Exercise`` called ``name`` (its cases, reference and catalogue)."""
    table = _exercises()
    if name not in table:
        raise ValueError(f"no exercise named {name!r}; the exercises are: {', '.join(table)}")
    return table[name]


def signature(name):
    """The signature the student's function must have, e.g. 'backward(dy, x, weight, eps) -> (dx, dweight)'."""
    return exercise(name).signature


def catalogue(name):
    """The known mistakes of exercise ``name``: a list of (key, description)."""
    return [(v.key, v.name) for v in exercise(name).variants]


def check(name, backward, seed=0):
    """Check the student's ``backward`` for exercise ``name``; returns a ``CheckResult`` (``.passed``,
    ``.diagnosis``, printable). ``seed`` draws the random cases (the same seed, the same cases)."""
    return run_check(exercise(name), backward, seed)


_STUB = '''"""Exercise {name}: write the backward pass by hand, in NumPy.

{forward}

Check it:  python -m minigrad.exercises check {name} {name}.py
       or  from minigrad import exercises; print(exercises.check("{name}", backward))
Arrays are float64 NumPy arrays; return NumPy arrays of the shapes of what they are gradients of.
"""
import numpy as np


def {call}:
    # recompute what the forward computed (statistics, normalized values, ...), then apply the chain rule
    raise NotImplementedError("write the backward: return {returns}")
'''


def stub(name):
    """The text of a file to start exercise ``name`` from: the forward spelled out, ``backward`` to write
    (no solution in it; the worked solutions are files of ``minigrad/exercises/solutions/``)."""
    ex = exercise(name)
    return _STUB.format(name=name, forward=ex.description, call=ex.signature.split(" ->")[0], returns=ex.returns)


def solution_path(name):
    """Where the worked solution of ``name`` is (read it after trying)."""
    exercise(name)
    return _HERE / "solutions" / f"{name}.py"
