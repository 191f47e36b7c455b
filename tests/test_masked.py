"""minigrad.masked without PyTorch: each reduction equals NumPy's over the kept elements, and no gradient reaches
the masked-out ones (PyTorch's samples, gradients and errors run in test_opinfo.py)."""
import numpy as np
import pytest

import minigrad as mg

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6))
MASK = RNG.random((4, 6)) > 0.4
MASK[:, 0] = True                                        # every row keeps at least one element


def kept_rows(fn):
    return np.array([fn(row[m]) for row, m in zip(X, MASK)])


@pytest.mark.parametrize("name, numpy_fn", [
    ("sum", np.sum), ("prod", np.prod), ("amax", np.max), ("amin", np.min), ("mean", np.mean),
    ("logsumexp", lambda r: np.log(np.exp(r).sum())), ("norm", np.linalg.norm),
    ("var", lambda r: np.var(r, ddof=1)), ("std", lambda r: np.std(r, ddof=0)),
])
def test_reductions_are_numpys_over_the_kept_elements(name, numpy_fn):
    fn = getattr(mg.masked, name)
    kwargs = {"unbiased": False} if name == "std" else {}
    got = fn(mg.tensor(X), 1, mask=mg.tensor(MASK), **kwargs) if name != "norm" else \
        fn(mg.tensor(X), 2.0, 1, mask=mg.tensor(MASK))
    np.testing.assert_allclose(got.numpy(), kept_rows(numpy_fn), rtol=1e-12)


def test_no_gradient_reaches_masked_out_elements():
    x = mg.tensor(X, requires_grad=True)
    upstream = mg.tensor(RNG.standard_normal(X.shape))
    (mg.masked.softmax(x, 1, mask=mg.tensor(MASK)) * upstream).sum().backward()
    assert np.all(x.grad.numpy()[~MASK] == 0) and np.any(x.grad.numpy()[MASK] != 0)
    assert mg.gradcheck(lambda t: mg.masked.var(t, 1, mask=mg.tensor(MASK)), (mg.tensor(X, requires_grad=True),))


def test_a_row_with_nothing_kept():
    mask = np.zeros_like(MASK)
    assert np.isnan(mg.masked.mean(mg.tensor(X), 1, mask=mg.tensor(mask)).numpy()).all()
    assert (mg.masked.sum(mg.tensor(X), 1, mask=mg.tensor(mask)).numpy() == 0).all()
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        mg.masked.mean(mg.tensor([1, 2]), mask=mg.tensor([True, False]))
