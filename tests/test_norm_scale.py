"""ScaleNorm (minigrad/ops/norm/scalenorm.py, docs/derivations/scalenorm.md): the registry's check kit, the clamp
at eps, the module's gain, float16/float32 and training with Adam (a 0-d parameter)."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.ops.norm.scalenorm as scalenorm
from minigrad.ops.norm.registry import BY_NAME

from .norm_kit import assert_close_to_scale, check_norm, mutant

SPEC = BY_NAME["ScaleNorm"]
BAD_INPUTS = [
    (lambda F, x: F.scale_norm(x, mg.ones(3)), RuntimeError, r"expected scale to be a 0-dimensional tensor"),
    (lambda F, x: F.scale_norm(x, mg.tensor(1.0), eps=-1.0), ValueError, r"expected eps >= 0, but got eps=-1.0"),
    (lambda F, x: F.scale_norm(x, mg.tensor(1.0), eps="a"), TypeError, r"argument 'eps' \(position 3\) must be float"),
    (lambda F, x: F.scale_norm(x.sum(), mg.tensor(1.0)), RuntimeError, r"at least 1 dimension"),
    (lambda F, x: F.scale_norm(mg.ones(2, 3, dtype=mg.int64), mg.tensor(1.0)), RuntimeError, r"floating-point"),
    (lambda F, x: F.scale_norm(x.detach().numpy(), mg.tensor(1.0)), TypeError, r"argument 'input' .* must be Tensor"),
]


# A wrong backward: dx = scale * dy / s, the term along x left out (the mask of active rows zeroed).
WITHOUT_PROJECTION = mutant(scalenorm, "scale_norm_backward", lambda backward: (
    lambda dy, x, scale, s, active, *a: backward(dy, x, scale, s, active * 0, *a)))


def test_scale_norm_passes_the_kit():
    check_norm(SPEC, BAD_INPUTS, mutants=[WITHOUT_PROJECTION])


def test_forward_is_the_papers_formula():
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((3, 5)), 1.7
    y = mg.nn.functional.scale_norm(mg.tensor(x), mg.tensor(g, dtype=mg.float64)).numpy()
    np.testing.assert_allclose(y, g * x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-13)


def test_rows_below_eps_are_divided_by_eps_and_the_gradient_follows():
    """A row with ||x|| < eps is scaled by scale / eps (no division by a tiny norm); its gradient is scale / eps
    times the upstream gradient (the clamp is flat in x), while the other row gets the projected gradient."""
    torch = pytest.importorskip("torch")
    x = np.array([[3e-6, -4e-6, 0.0], [1.0, 2.0, -2.0]])             # norms 5e-6 and 3
    g, eps, up = 2.0, 1e-5, np.random.default_rng(1).standard_normal((2, 3))
    xm, gm = mg.tensor(x, requires_grad=True), mg.tensor(g, dtype=mg.float64, requires_grad=True)
    ym = mg.nn.functional.scale_norm(xm, gm, eps)
    ym.backward(mg.tensor(up))
    np.testing.assert_allclose(ym.detach().numpy()[0], g * x[0] / eps, rtol=1e-13)
    np.testing.assert_allclose(xm.grad.numpy()[0], g * up[0] / eps, rtol=1e-13)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, dtype=torch.float64, requires_grad=True)
    SPEC.torch_twin(torch, xt, gt, eps).backward(torch.tensor(up))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gm.grad.numpy(), gt.grad.numpy(), rtol=1e-12)


def test_module_gain_starts_at_sqrt_dim_and_adam_trains_it():
    m = mg.nn.ScaleNorm(16)
    assert m.scale.shape == () and math.isclose(float(m.scale), 4.0) and m.scale.dtype == mg.float32
    assert repr(m) == "ScaleNorm(16, eps=1e-05)"
    opt = mg.optim.Adam(m.parameters(), lr=0.1)
    x = mg.randn(4, 16)
    for _ in range(3):
        opt.zero_grad()
        (m(x) * mg.tensor(np.random.default_rng(2).standard_normal((4, 16)), dtype=mg.float32)).sum().backward()
        opt.step()
    assert m.scale.shape == () and float(m.scale) != 4.0


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-6), (np.float16, 2e-3)])
def test_low_precision_matches_float64_and_keeps_the_dtype(dtype, tol):
    rng = np.random.default_rng(3)
    x, up = rng.standard_normal((4, 8)), rng.standard_normal((4, 8))
    results = []
    for dt in (np.float64, dtype):
        xm = mg.tensor(x.astype(dt), requires_grad=True)
        gm = mg.tensor(np.array(1.5, dt), requires_grad=True)
        y = mg.nn.functional.scale_norm(xm, gm)
        y.backward(mg.tensor(up.astype(dt)))
        assert y.dtype == dt and xm.grad.dtype == dt and gm.grad.dtype == dt
        results.append([y.detach().numpy(), xm.grad.numpy(), gm.grad.numpy()])
    for a, b in zip(*results):
        assert_close_to_scale(b.astype(np.float64), a, tol=tol)


def test_empty_input_gives_an_empty_output():
    y = mg.nn.functional.scale_norm(mg.zeros(0, 4), mg.tensor(1.0))
    assert y.shape == (0, 4)
