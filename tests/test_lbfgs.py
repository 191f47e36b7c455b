"""optim.LBFGS against PyTorch's, step by step in float64: the same closure on the same parameters, compared
after every ``step`` (parameters, returned loss, evaluation and iteration counts), with and without the
strong-Wolfe line search, small histories, tolerances, state_dict round trips, errors, and a mutant."""
import copy

import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import lbfgs

from .mirror import torch_or_replay, torch_or_skip

torch = torch_or_replay()   # PyTorch, or without it a stand-in that skips the tests using it


def regression_problem(seed=0):
    """A small non-linear least-squares fit (tanh layer + linear) and its data: (arrays of parameters, X, y)."""
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((40, 5)), rng.standard_normal((40, 2))
    params = [rng.standard_normal((5, 8)) * 0.5, rng.standard_normal(8) * 0.1, rng.standard_normal((8, 2)) * 0.5]
    return params, X, y


def logistic_problem(seed=0):
    """L2-regularised logistic regression (convex, well conditioned): (arrays of parameters, X, labels)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 6))
    y = (X @ rng.standard_normal(6) + 0.5 * rng.standard_normal(60) > 0).astype(float)
    return [rng.standard_normal(6) * 0.1, np.zeros(1)], X, y


def nonlinear_loss(lib, params, X, y):
    W1, b1, W2 = params
    return (((X @ W1 + b1).tanh() @ W2 - y) ** 2).mean() + 0.01 * (W1 ** 2).sum()


def logistic_loss(lib, params, X, y):
    w, b = params
    logits = X @ w + b
    return lib.nn.functional.binary_cross_entropy_with_logits(logits, y) + 0.05 * (w ** 2).sum()


def make(lib, arrays, X, y, loss_fn=nonlinear_loss, **options):
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    Xt, yt = lib.tensor(X), lib.tensor(y)
    optimizer = (mg.optim.LBFGS if lib is mg else torch.optim.LBFGS)(params, **options)

    def closure():
        optimizer.zero_grad()
        loss = loss_fn(lib, params, Xt, yt)
        loss.backward()
        return loss
    return params, optimizer, closure


def run_both(options, steps=5, seed=0, rtol=1e-9, atol=1e-11, problem="logistic"):
    arrays, X, y = (logistic_problem if problem == "logistic" else regression_problem)(seed)
    loss_fn = logistic_loss if problem == "logistic" else nonlinear_loss
    p_mg, opt_mg, c_mg = make(mg, arrays, X, y, loss_fn, **options)
    p_th, opt_th, c_th = make(torch, arrays, X, y, loss_fn, **options)
    for step in range(steps):
        loss_mg, loss_th = opt_mg.step(c_mg), opt_th.step(c_th)
        np.testing.assert_allclose(loss_mg.item(), loss_th.item(), rtol=rtol, err_msg=f"loss of step {step}")
        for i, (a, b) in enumerate(zip(p_mg, p_th)):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"parameter {i} after step {step}")
        s_mg, s_th = opt_mg.state[p_mg[0]], opt_th.state[p_th[0]]
        assert s_mg["func_evals"] == s_th["func_evals"] and s_mg["n_iter"] == s_th["n_iter"], step
        assert len(s_mg.get("old_dirs", [])) == len(s_th.get("old_dirs", []))
    return p_mg, opt_mg, c_mg, p_th, opt_th, c_th


@pytest.mark.parametrize("options", [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "max_iter": 7, "history_size": 3},
    {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 10, "max_eval": 14},
    {"max_iter": 1},
    {"line_search_fn": "strong_wolfe", "tolerance_change": 1e-4, "tolerance_grad": 1e-3},
], ids=["plain", "strong_wolfe", "short_history", "wolfe_short_history", "one_iteration", "loose_tolerances"])
def test_steps_match_pytorch(options):
    run_both(options)


@pytest.mark.parametrize("options", [{"max_iter": 4}, {"line_search_fn": "strong_wolfe", "max_iter": 8}],
                         ids=["plain", "wolfe"])
def test_steps_match_pytorch_on_a_non_convex_fit(options):
    """A tanh network's least-squares fit. Without a line search (lr=1) the iteration amplifies the last-bit
    differences of the two libraries' matmul and tanh: measured 1e-16 after one iteration, 2e-11 after 35,
    7e-9 after 75 (a smooth growth, not a jump), so a few steps are compared to 1e-9."""
    run_both(options, steps=2, problem="nonlinear")


def test_converged_problem_returns_at_once():
    """A gradient below tolerance_grad: one evaluation, nothing moves (both libraries)."""
    run_both({"tolerance_grad": 1e3}, steps=2)


def test_state_dict_round_trip_continues_identically():
    """Steps 1-3, save; a fresh optimizer loaded from it continues as the original does (and as PyTorch)."""
    options = {"line_search_fn": "strong_wolfe", "history_size": 4, "max_iter": 3}
    p_mg, opt_mg, c_mg, p_th, opt_th, c_th = run_both(options, steps=2)
    saved = copy.deepcopy(opt_mg.state_dict())
    _, X, y = logistic_problem()
    clone_params, opt_clone, closure = make(mg, [p.detach().numpy() for p in p_mg], X, y, logistic_loss,
                                            line_search_fn="strong_wolfe", history_size=2)
    opt_clone.load_state_dict(saved)
    assert opt_clone.param_groups[0]["history_size"] == 4
    for _ in range(2):
        opt_mg.step(c_mg)
        opt_th.step(c_th)
        opt_clone.step(closure)
    for a, b, c in zip(p_mg, clone_params, p_th):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-9, atol=1e-11)
    assert sorted(saved["state"][0]) == sorted(opt_th.state_dict()["state"][0])


def test_errors_match_pytorch():
    w = np.ones(3)
    for options in ({"lr": -1.0},):
        with pytest.raises(ValueError, match="Invalid learning rate"):
            torch.optim.LBFGS([torch.tensor(w, requires_grad=True)], **options)
        with pytest.raises(ValueError, match="Invalid learning rate"):
            mg.optim.LBFGS([mg.tensor(w, requires_grad=True)], **options)
    groups = lambda lib: [{"params": [lib.tensor(w, requires_grad=True)]}, {"params": [lib.tensor(w, requires_grad=True)]}]
    with pytest.raises(ValueError, match="per-parameter options"):
        torch.optim.LBFGS(groups(torch))
    with pytest.raises(ValueError, match="per-parameter options"):
        mg.optim.LBFGS(groups(mg))
    p = mg.tensor(w, requires_grad=True)
    opt = mg.optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (p ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_a_wrong_two_loop_recursion_is_caught(monkeypatch):
    """Mutant: the two-loop recursion with each curvature weight rho = 1 / y.s off by 0.1%. The step-by-step
    mirror fails."""
    right = lbfgs._two_loop
    monkeypatch.setattr(lbfgs, "_two_loop", lambda q, dirs, steps, ro, H, al: right(q, dirs, steps,
                                                                                    [r * 1.001 for r in ro], H, al))
    with pytest.raises(AssertionError):
        run_both({"line_search_fn": "strong_wolfe"}, steps=2)


def test_lbfgs_regression_program_runs_unchanged():
    """The usual LBFGS training loop (closure, several outer steps) reaches PyTorch's parameters to 1e-9."""
    torch_or_skip()
    p_mg, *_, p_th, _, _ = run_both({"line_search_fn": "strong_wolfe", "max_iter": 25}, steps=4)
    for a, b in zip(p_mg, p_th):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-11)
