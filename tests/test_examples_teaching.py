"""The teaching examples run, and what they print agrees with NumPy computed independently here."""
import contextlib
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def numeric_jacobian(f, x, h=1e-6):
    """d f(x) / d x by central differences: (f.size, x.size)."""
    cols = []
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = h
        cols.append((f(x + step.reshape(x.shape)) - f(x - step.reshape(x.shape))).ravel() / (2 * h))
    return np.stack(cols, axis=1)


def fmt4(values):
    return [f"{v:.4f}" for v in np.ravel(values)]


# --------------------------------------------------------------------------- rmsnorm_by_hand.py
def test_rmsnorm_by_hand(capsys):
    example = load("rmsnorm_by_hand")
    result = example.main()
    out = capsys.readouterr().out
    x, w, g = np.array([[1.0, 2, 3, 4], [-1, -2, -3, -4]]), example.W, example.G
    assert np.array_equal(example.X, x)

    # forward: the values of the issue, and the RMS of each row
    xhat = x / np.sqrt((x ** 2).mean(axis=1, keepdims=True))
    np.testing.assert_allclose(np.abs(xhat[0]), [0.3651, 0.7303, 1.0954, 1.4606], atol=5e-5)
    assert "0.3651   0.7303   1.0954   1.4606" in out and "-0.3651  -0.7303  -1.0954  -1.4606" in out
    assert f"{np.sqrt(7.5):.4f}" in out

    # backward: dL/dx and dL/dw of L = sum(g * rmsnorm(x) * w) by finite differences of plain NumPy
    def y(x_, w_=w):
        return x_ / np.sqrt((x_ ** 2).mean(axis=1, keepdims=True) + example.EPS) * w_

    dx = (numeric_jacobian(y, x).T @ g.ravel()).reshape(x.shape)
    dw = numeric_jacobian(lambda w_: y(x, w_), w).T @ g.ravel()
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip().startswith(("dx[", "dw["))}
    assert len(rows) == 12
    for (i, j), value in np.ndenumerate(dx):
        assert abs(float(rows[f"dx[{i},{j}]"][0]) - value) < 1e-8
    for j, value in enumerate(dw):
        assert abs(float(rows[f"dw[{j}]"][0]) - value) < 1e-8
    for line in fmt4(dx):
        assert line.lstrip("-") in out

    # every method agrees with the hand formula; PyTorch's column is there when PyTorch is
    expected = {"hand (NumPy)", "fused", "composite", "finite diff"}
    if importlib.util.find_spec("torch") is not None:
        expected.add("PyTorch")
    assert set(result["diffs"]) == expected
    for method, diff in result["diffs"].items():
        assert diff < (1e-8 if method == "finite diff" else 1e-13), method
    orthogonal = (x * result["backward"]["dx"]).sum(axis=1)
    assert np.abs(orthogonal).max() < 1e-12


# --------------------------------------------------------------------------- norm_hooks.py
@pytest.fixture(scope="module")
def norm_hooks_run():
    example = load("norm_hooks")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = example.main([])
    return example, result, out.getvalue()


def hand_rms_dx(x, dy, w, eps):
    """RMSNorm's input gradient in plain NumPy, rows over the last dim."""
    rstd = 1 / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat, gw = x * rstd, dy * w
    return rstd * (gw - xhat * (gw * xhat).mean(axis=-1, keepdims=True))


def test_norm_hooks_sees_every_norm_layer(norm_hooks_run):
    example, result, out = norm_hooks_run
    model, records = result["model"], result["records"]
    norms = [name for name, m in model.named_modules() if isinstance(m, example.NORMS)]
    assert list(records) == norms and len(norms) == 2 * model.cfg.n_layers + 1
    table = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.split()[:1] and
             line.split()[0] in norms}
    for name in norms:
        module = model.get_submodule(name)
        r = records[name]
        assert r["x"].shape == r["dy"].shape == r["dx"].shape
        # the gradient the hook saw leaving the layer is RMSNorm's backward of the gradient that entered it
        dx = hand_rms_dx(r["x"], r["dy"], module.weight.detach().numpy(), module.eps)
        np.testing.assert_allclose(r["dx"], dx, rtol=1e-10, atol=1e-12)
        xhat = r["x"] / np.sqrt((r["x"] ** 2).mean(axis=-1, keepdims=True) + module.eps)
        dw = (r["dy"] * xhat).reshape(-1, xhat.shape[-1]).sum(axis=0)
        np.testing.assert_allclose(module.weight.grad.numpy(), dw, rtol=1e-10)
        printed = [float(v) for v in table[name]]
        np.testing.assert_allclose(printed[2:4], [np.linalg.norm(dx), np.linalg.norm(dw)], rtol=1e-3)
        cos = (r["x"] * dx).sum() / np.linalg.norm(r["x"]) / np.linalg.norm(dx)
        assert abs(printed[4] - cos) < 0.06 * abs(cos) + 1e-12 and abs(cos) < 1e-2


def test_norm_hooks_prints_the_table_and_a_graph(norm_hooks_run):
    example, result, out = norm_hooks_run
    graph = result["graph"]
    assert graph.text() in out
    assert [n.name for n in graph.ops()] == ["RMSNormFunctionBackward", "LinearBackward"]
    assert all(n.grad is not None for n in graph.nodes)


# --------------------------------------------------------------------------- count_flops.py
def test_count_flops_against_the_products_worked_out_by_hand(capsys):
    """Per block: q, k, v and the output projection (4 of (B*T, D) @ (D, D)), SwiGLU's three (B*T, D) @ (D, F)
    and back, attention's two (B*H of (T, hd) @ (hd, T) and (T, T) @ (T, hd)); then the head (B*T, D) @ (D, V).
    The backward runs two products per product (every input needs a gradient)."""
    example = load("count_flops")
    result = example.main([])
    out = capsys.readouterr().out
    model, forward, step = result["model"], result["forward"], result["step"]
    B, T, cfg = 32, 64, model.cfg
    D, F, V, L = cfg.d_model, cfg.hidden_dim, cfg.vocab_size, cfg.n_layers
    rows = B * T
    block = 4 * 2 * rows * D * D + 3 * 2 * rows * D * F + 2 * 2 * B * T * T * D
    assert forward.get_total_flops() == L * block + 2 * rows * D * V
    assert step.get_total_flops() == 3 * forward.get_total_flops()
    counts = step.get_flop_counts()
    assert sum(counts["Llama.blocks.0"].values()) == 3 * block
    assert counts["Llama.blocks.0"]["aten.bmm"] == 3 * 2 * 2 * B * T * T * D
    assert f"counted {step.get_total_flops() / 1e9:.3f} GFLOP" in out and "2.00x the forward" in out
    assert result["params"] == sum(int(np.prod(p.shape)) for p in model.parameters())
