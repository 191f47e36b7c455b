"""Fixes the op database found whose inputs its samples do not reach (the rest are checked by test_opinfo.py):
the deprecated ``scatter(reduce=)``, ``div``'s rounding-mode errors, the spectral norms' gradient at tied
singular values (PyTorch shares it evenly, as its amax/amin do), and from its reference inputs
(``python -m tests.opinfo_reference``) ``floor_divide`` of two numbers."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import assert_mirror, torch_or_replay, torch_or_skip


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("src_kind", ["tensor", "value"])
def test_scatter_reduce_forward_like_pytorch_and_no_gradient(reduce, src_kind):
    torch = torch_or_skip()
    x = np.random.default_rng(0).standard_normal((4, 3))
    index = np.array([[0, 1, 3], [0, 0, 2]])
    src = np.random.default_rng(1).standard_normal((2, 3))
    outs = []
    for lib in (mg, torch):
        s = lib.tensor(src) if src_kind == "tensor" else 1.5
        outs.append(lib.tensor(x).scatter(0, lib.tensor(index), s, reduce=reduce).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)
    t = mg.tensor(x, requires_grad=True)
    out = t.scatter(0, mg.tensor(index), mg.tensor(src), reduce=reduce)
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        out.backward(mg.ones_like(out))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        t.detach().scatter(0, mg.tensor(index), 1.0, reduce="max")


def test_scatter_refuses_small_index_dtypes():
    torch_or_skip()
    x = mg.zeros(3, 2)
    for dtype in (mg.int16, mg.uint8, mg.int8):
        with pytest.raises(RuntimeError, match="int32/int64"):
            x.scatter(0, mg.tensor([[0, 1]], dtype=dtype), 1.0)
        with pytest.raises(RuntimeError, match="int32/int64"):
            x.index_add_(0, mg.tensor([0, 1], dtype=dtype), mg.ones(2, 2))


def test_div_rounding_mode_errors_like_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            lib.div(lib.tensor([5, -5]), lib.tensor([0, 2]), rounding_mode="trunc")
        with pytest.raises(RuntimeError, match="rounding_mode"):
            lib.div(lib.tensor([5.0]), 2, rounding_mode="round")
    a, b = np.array([7, -7, 7, -7, 0]), np.array([2, 2, -2, -2, 3])
    for mode in ("trunc", "floor"):
        got = mg.div(mg.tensor(a), mg.tensor(b), rounding_mode=mode)
        want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
        assert got.dtype == mg.int64 and got.tolist() == want.tolist()


@pytest.mark.parametrize("ord", [2, -2])
@pytest.mark.parametrize("matrix", ["identity", "repeated", "zero"])
def test_spectral_norm_gradient_shared_among_tied_singular_values(ord, matrix):
    """diag(3, 3, 1) has a repeated largest singular value, diag(3, 1, 1) a repeated smallest; the identity and
    the zero matrix tie all three. The random upstream gradient is compared with PyTorch's."""
    torch = torch_or_replay()
    a = {"identity": np.eye(3), "repeated": np.diag([3.0, 3.0, 1.0] if ord == 2 else [3.0, 1.0, 1.0]),
         "zero": np.zeros((3, 3))}[matrix]
    assert_mirror(lambda t: mg.linalg.norm(t, ord), lambda t: torch.linalg.norm(t, ord), a, rtol=1e-12, atol=1e-12)


def test_tied_norm_gradient_mutant_is_caught():
    """The check above is not vacuous: a spectral norm whose gradient is u_1 v_1^T for the first singular value
    alone (the convention before the fix) disagrees with PyTorch at a tie."""
    torch = torch_or_replay()
    from minigrad.autograd import Function

    class FirstSingularValueOnly(Function):
        @staticmethod
        def forward(ctx, a):
            u, s, vt = np.linalg.svd(a._data)
            ctx.save_for_backward(u[:, :1] @ vt[:1])
            return s[0]

        @staticmethod
        def backward(ctx, dout):
            (grad,) = ctx.saved_tensors
            return dout._data * grad

    with pytest.raises(AssertionError):
        assert_mirror(FirstSingularValueOnly.apply, lambda t: torch.linalg.norm(t, 2), np.eye(3))
    assert_mirror(FirstSingularValueOnly.apply, lambda t: torch.linalg.norm(t, 2), np.diag([3.0, 2.0, 1.0]),
                  rtol=1e-12, atol=1e-12)    # and agrees where the largest singular value is simple


def test_empty_matrix_norms():
    torch = torch_or_skip()
    for ord in (2, "nuc", "fro", 1, np.inf):
        got = mg.linalg.norm(mg.zeros(0, 0, dtype=mg.float64), ord)
        assert got.item() == torch.linalg.norm(torch.zeros(0, 0, dtype=torch.float64), ord).item() == 0
    with pytest.raises(IndexError):
        mg.linalg.norm(mg.zeros(0, 0), -2)


def test_floor_divide_of_two_numbers_as_pytorch():
    """Found by the database's reference inputs: PyTorch's floor_divide takes two numbers (a 0-d tensor of the first
    number's tensor dtype, promoted); minigrad refused them."""
    torch = torch_or_skip()
    for args in [(-3.48, 6.79), (7, 2), (7, 2.5), (True, 2), (7.0, 0.0), (-7, 2)]:
        ours, theirs = mg.floor_divide(*args), torch.floor_divide(*args)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] and ours.ndim == 0, args
        assert ours.item() == theirs.item(), args                 # exact: the floor of the same quotient
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        mg.floor_divide(3, 0)
