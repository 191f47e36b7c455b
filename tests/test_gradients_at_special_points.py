"""Gradients at the points where formulas meet their limits (zeros, infinities, NaN, underflow), against PyTorch.

Random inputs never land on x = -0, an infinite norm or a NaN target, so these points are chosen: each case runs
the same program in both libraries (float64, a random upstream gradient) and compares values and gradients,
NaN and infinity patterns included. Where PyTorch's result depends on which loop of its kernel an element falls
in (vectorized or not: ELU's gradient at NaN) or on float32 constants in float64 code (hardsigmoid's 1/6), there
is no case; docs/differences.md lists those.
"""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip

inf, nan = float("inf"), float("nan")


def _run(lib, program, arrays, upstream_seed=0):
    """Values and gradients of ``program(lib, *leaves)`` (a tensor or tuple of them), with random upstream
    gradients; an input's gradient is None where the program defines none."""
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    outs = program(lib, *leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(upstream_seed)
    upstream = [lib.tensor(np.round(rng.normal(size=o.shape), 3), dtype=lib.float64) for o in outs]
    grads = lib.autograd.grad(outs, leaves, upstream, allow_unused=True)
    return [o.detach().numpy() for o in outs], [None if g is None else g.numpy() for g in grads]


def _assert_same(expected, actual, what):
    if expected is None or actual is None:
        assert expected is None and actual is None, f"{what}: PyTorch {expected}, minigrad {actual}"
        return
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=f"{what}: NaN pattern")
    np.testing.assert_array_equal(np.isposinf(actual), np.isposinf(expected), err_msg=f"{what}: +inf pattern")
    np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(expected), err_msg=f"{what}: -inf pattern")
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=0, equal_nan=True, err_msg=what)


def _compare(program, *arrays):
    torch = torch_or_skip()
    (values, grads), (mg_values, mg_grads) = (_run(lib, program, arrays) for lib in (torch, mg))
    for i, (e, a) in enumerate(zip(values, mg_values)):
        _assert_same(e, a, f"output {i}")
    for i, (e, a) in enumerate(zip(grads, mg_grads)):
        _assert_same(e, a, f"gradient of input {i}")


def F(lib):
    return lib.nn.functional


ROWS = [[0.0, nan, 1.0], [0.0, 1.0, inf], [0.0, 0.0, 0.0], [3.0, -4.0, 0.0], [-inf, 2.0, -1.0]]
CASES = {
    # PyTorch's real form (x^2 - 1)^(-1/2), defined for x <= -1 too
    "acosh": (lambda lib, x: lib.acosh(x), [[-1.0, -2.0, -3.0, 1.5, 1.0]]),
    # 0 where pi x^2 underflows, not 0/0
    "sinc": (lambda lib, x: lib.sinc(x), [[1e-300, -1e-300, 1e-170, 0.5, 0.0]]),
    # 1/2 where |x| <= eps or x is NaN
    "i1": (lambda lib, x: lib.special.i1(x), [[nan, 1e-17, 0.0, -2.0, 3.0]]),
    "i1e": (lambda lib, x: lib.special.i1e(x), [[nan, 1e-17, 0.0, -2.0, 3.0]]),
    # a Python exponent runs PyTorch's kernel: -0.5 is 1/sqrt(x), -2 is 1/(x x), in the forward and the backward
    "pow -0.5": (lambda lib, x: x ** -0.5, [[-0.0, -inf, 4.0, 0.0, inf] * 4]),
    "pow 0.5": (lambda lib, x: x ** 0.5, [[-0.0, -inf, 4.0, 0.0, inf] * 4]),
    "pow -2": (lambda lib, x: x ** -2, [[1e160, -1e160, 2.0, 1e-170] * 5]),
    "pow -1": (lambda lib, x: x ** -1, [[1e160, 1e-170, -0.0, 2.0] * 5]),
    "pow_ -0.5": (lambda lib, x: (x * 1).pow_(-0.5), [[-0.0, -inf, 4.0, 0.0, inf] * 4]),
    # the divisor's gradient -g (a / b) / b: no b^2 to underflow
    "div": (lambda lib, a, b: a / b, [[1e-300, 1.0, 3.0, 0.0], [1e-300, 1e-200, 1e-170, 1e-170]]),
    # lgamma's slope at +0 (PyTorch adds the half-integer offsets, +0 for p = 1)
    "mvlgamma": (lambda lib, x: lib.mvlgamma(x, 1), [[-0.0, 0.0, 3.0]]),
    "mvlgamma p=2": (lambda lib, x: lib.mvlgamma(x, 2), [[0.5, -0.0, 3.0]]),
    # a NaN norm makes every gradient NaN; sign(NaN) = 0; the inf-norm's gradient goes to NaN elements too
    **{f"vector_norm {p}": ((lambda p: lambda lib, x: lib.linalg.vector_norm(x, p, dim=1))(p), [ROWS])
       for p in (1, 2, 3, 1.5, 0.5, inf, -inf)},
    "norm 0 has no gradient": (lambda lib, x: lib.linalg.vector_norm(x, 0, dim=1), [ROWS]),
    "dist": (lambda lib, x, y: lib.dist(x, y), [[0.0, nan, 1.0], [0.0, 0.0, 0.0]]),
    **{f"cdist {p}": ((lambda p: lambda lib, x: lib.cdist(x.unsqueeze(0), lib.zeros(1, 2, 3, dtype=lib.float64), p))(p),
                      [ROWS]) for p in (2, 1.5, 3)},
    # |d|'s slope at NaN is 0 (PyTorch's sign), Huber's clip is NaN
    "l1_loss": (lambda lib, x, y: F(lib).l1_loss(x, y, reduction="none"), [[0.0, 1.0, nan], [nan, nan, 0.0]]),
    "smooth_l1 beta 0": (lambda lib, x, y: F(lib).smooth_l1_loss(x, y, reduction="none", beta=0.0),
                         [[0.0, 1.0, nan], [nan, nan, 0.0]]),
    # PyTorch's composite xlogy(p, p) - p input: NaN where p = 0 meets an infinite input, and for p's gradient at 0
    "kl_div": (lambda lib, x, p: F(lib).kl_div(x, p, reduction="none"),
               [[inf, 0.0, 1.0, -2.0, 0.5], [0.0, inf, 0.0, 0.3, 1.0]]),
    "kl_div log_target": (lambda lib, x, t: F(lib).kl_div(x, t, reduction="none", log_target=True),
                          [[inf, 0.0, 1.0, -2.0], [-inf, inf, 0.0, 0.3]]),
    # log 0 is the dtype's lowest number in PyTorch's backward: rows of infinities give NaN
    "logcumsumexp": (lambda lib, x: x.logcumsumexp(1),
                     [[[-inf, -inf, -inf], [inf, 1.0, inf], [nan, 1.0, 2.0], [-inf, 0.0, 1.0], [1.0, 2.0, 3.0]]]),
    # PyTorch's lerp between the ranks (its two-branch formula), and the rank itself for the others
    **{f"quantile {how}": ((lambda how: lambda lib, x: lib.quantile(x, 0.3, dim=1, interpolation=how))(how),
                           [[[1.0, inf, 2.0], [-inf, 1.0, 0.0], [inf, inf, 1.0], [3.0, 1.0, 2.0]]])
       for how in ("linear", "lower", "higher", "midpoint", "nearest")},
    # PyTorch's kernel adds only z = margin - x_t + x_i > 0: not NaN, and no slope at z = 0
    "multi_margin_loss": (lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor([0, 1, 2, 0]), reduction="none"),
                          [[[-inf, -inf, -inf], [nan, 1.0, 2.0], [1e300, 1e300, -1e300], [2.0, 1.0, 0.0]]]),
    "multi_margin_loss p=2": (lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor([0, 1, 2, 0]), p=2,
                                                                      reduction="none"),
                              [[[-inf, -inf, -inf], [inf, 1.0, inf], [1e300, 1e300, -1e300], [2.0, 1.0, 0.0]]]),
    "multilabel_margin_loss": (lambda lib, x: F(lib).multilabel_margin_loss(x, lib.tensor([[0, -1, 0]] * 4),
                                                                            reduction="none"),
                               [[[-inf, -inf, -inf], [nan, 1.0, 2.0], [1e300, 1e300, -1e300], [2.0, 1.0, 0.0]]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_at_special_points_as_pytorch(name):
    program, arrays = CASES[name]
    with np.errstate(all="ignore"):
        _compare(program, *[np.array(a, dtype=np.float64) for a in arrays])


def test_a_wrong_slope_at_nan_is_caught(monkeypatch):
    """NumPy's sign (NaN at NaN) in l1_loss's slope: the comparison fails."""
    from minigrad.ops import loss
    monkeypatch.setattr(loss, "sign_array", np.sign)
    program, arrays = CASES["l1_loss"]
    with pytest.raises(AssertionError, match="NaN pattern"):
        _compare(program, *[np.array(a, dtype=np.float64) for a in arrays])
