"""minigrad.gradient (torch.gradient) against NumPy's np.gradient, the same formulas computed independently, and
its own derivative by finite differences (it is linear in the samples). PyTorch's samples and error inputs run in
test_opinfo.py."""
import numpy as np
import pytest

import minigrad as mg


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("coordinates", [False, True])
def test_values_are_numpys(edge_order, coordinates):
    rng = np.random.default_rng(0)
    f = rng.standard_normal((5, 6))
    t0 = np.cumsum(rng.uniform(0.2, 1.5, 5))
    t1 = np.cumsum(rng.uniform(0.2, 1.5, 6))
    spacing = (mg.tensor(t0), mg.tensor(t1)) if coordinates else (0.5, 2.0)
    got = mg.gradient(mg.tensor(f), spacing=spacing, edge_order=edge_order)
    want = np.gradient(f, *((t0, t1) if coordinates else (0.5, 2.0)), edge_order=edge_order)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)


def test_gradient_of_gradient_by_finite_differences():
    f = mg.tensor(np.random.default_rng(1).standard_normal((4, 5)), requires_grad=True)
    t = mg.tensor(np.array([0.0, 0.3, 1.0, 1.4, 2.5]))
    assert mg.gradcheck(lambda x: mg.gradient(x, spacing=(t,), dim=1, edge_order=2)[0], (f,))
    assert mg.gradcheck(lambda x: mg.gradient(x, spacing=0.7, edge_order=1)[0], (f,))


def test_a_wrong_edge_formula_is_caught():
    """The comparison with NumPy is not vacuous: the first-order edge where the second-order one is asked for
    differs from np.gradient(edge_order=2)."""
    f = np.random.default_rng(2).standard_normal(6) ** 3
    wrong = mg.gradient(mg.tensor(f), edge_order=1)[0].numpy()
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(wrong, np.gradient(f, edge_order=2), rtol=1e-12)


def test_bad_arguments_raise_pytorchs_errors():
    x = mg.ones(3, 4)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        mg.gradient(x, edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        mg.gradient(mg.ones(2), edge_order=2)
    with pytest.raises(RuntimeError, match="list of length equal to 'self.dim\\(\\) = 2'"):
        mg.gradient(x, spacing=[1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        mg.gradient(x, dim=(1, 1))
