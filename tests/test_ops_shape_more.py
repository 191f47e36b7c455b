"""Shape ops against PyTorch's own op database (OpInfo): atleast_*d, broadcasting, stacking, splitting, tile,
ravel, unflatten, rot90, diagflat, combinations, the *_copy ops, resize_, and the in-place shape changes
(squeeze_, unsqueeze_, transpose_, t_, tril_, triu_). Every sample in float64 with the gradients of a random
upstream, float32/int64/bool forward, every variant PyTorch has, the error inputs (``tests/opinfo_checks.py``).
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import shape as sh

from .mirror import torch_or_skip
from .opinfo_checks import assert_opinfo, check_opinfo

SHAPE_OPS = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "broadcast_to",
             "column_stack", "hstack", "vstack", "dstack", "hsplit", "vsplit", "dsplit", "tensor_split",
             "split_with_sizes", "unsafe_split", "unsafe_chunk", "tile", "ravel", "unflatten", "rot90", "diagflat",
             "combinations", "alias_copy", "diagonal_copy", "expand_copy", "narrow_copy", "permute_copy",
             "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
             "split_with_sizes_copy", "resize_", "resize_as_", "resolve_neg", "tril", "triu", "squeeze",
             "squeeze:multiple", "unsqueeze", "t", "transpose", "_chunk_cat"]


@pytest.mark.parametrize("name", SHAPE_OPS)
def test_opinfo_samples(name):
    base, _, variant = name.partition(":")
    assert_opinfo(base, variant or None, limit=30)


def test_row_stack_is_vstack():
    torch = torch_or_skip()
    parts = [np.arange(3.0), np.arange(3.0, 6.0)]
    np.testing.assert_array_equal(mg.row_stack([mg.tensor(p) for p in parts]).numpy(),
                                  torch.vstack([torch.tensor(p) for p in parts]).numpy())


def test_in_place_shape_change_keeps_history_and_refuses_leaves():
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 2
    assert y.t_() is y and y.shape == (3, 2)
    up = np.random.default_rng(0).standard_normal((3, 2))
    y.backward(mg.tensor(up))
    np.testing.assert_allclose(x.grad.numpy(), 2 * up.T)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.unsqueeze_(0)
    assert x.shape == (2, 3)


def test_in_place_shape_change_of_a_view_stays_a_view_of_its_base():
    for lib in (mg, torch_or_skip()):
        base = lib.zeros(2, 3)
        row = base[1]
        assert row.unsqueeze_(0).shape == (1, 3)
        row.fill_(2.0)
        x = lib.zeros(2, 3)
        x.t_().fill_(1.0)
        np.testing.assert_array_equal(base.numpy(), [[0, 0, 0], [2, 2, 2]], err_msg=lib.__name__)
        assert x.shape == (3, 2) and x._base is None


def test_unflatten_method_and_composed_gradients_differentiate_twice():
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((2, 6)), requires_grad=True)
    assert mg.gradgradcheck(lambda a: mg.rot90(mg.tile(a, (2, 1)).unflatten(1, (3, 2)) ** 2, 1, (0, 2)), (x,))


def test_a_wrong_backward_is_caught(monkeypatch):
    """The mutant: tile's gradient (``Repeat``'s) taking one copy of the upstream instead of summing all."""
    torch_or_skip()
    assert not check_opinfo("tile", kinds=("function",), dtypes=(), errors=False, limit=8)

    def one_copy(ctx, dout):
        g = dout._data.reshape([n for r, s in zip(ctx.repeats, ctx.padded_shape) for n in (r, s)])
        first = g[tuple(0 if i % 2 == 0 else slice(None) for i in range(g.ndim))]
        return first.reshape(ctx.input_shape), None, None
    monkeypatch.setattr(sh.Repeat, "backward", staticmethod(one_copy))
    failures = check_opinfo("tile", kinds=("function",), dtypes=(), errors=False, limit=8)
    assert any("gradient of input" in what for _, _, what in failures)
