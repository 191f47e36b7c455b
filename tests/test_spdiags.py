"""``sparse.spdiags`` against PyTorch's: the entries (indices in PyTorch's order, values), the shape and layout of
diagonals placed above, on and below the main one, in square, tall and wide shapes, diagonals shorter than the
matrix is wide, 1-D diagonals with a 0-d offset, CSR and CSC results; PyTorch's errors; no derivative. PyTorch's
side is live or recorded."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import assert_raises_as_recorded, torch_result

RNG = np.random.default_rng(5)
D34 = RNG.standard_normal((3, 4))
D25 = RNG.standard_normal((2, 5))

CASES = {
    "square": (D34, [0, -1, 2], (4, 4), None),
    "tall": (D34, [1, -2, 0], (6, 4), None),
    "wide": (D34, [0, 3, -1], (3, 7), None),
    "short diagonals": (D25[:, :2], [0, 1], (4, 4), None),
    "past the edges": (D34, [-3, 3, 0], (4, 4), None),
    "one diagonal": (D25[0], 1, (5, 5), None),
    "csr": (D34, [0, -1, 2], (3, 5), "sparse_csr"),
    "csc": (D25, [1, -1], (5, 4), "sparse_csc"),
    "float32": (D34.astype(np.float32), [2, 0, -2], (4, 4), None),
}


def build(lib, case):
    diagonals, offsets, shape, layout = CASES[case]
    result = lib.sparse.spdiags(lib.tensor(diagonals), lib.tensor(offsets), shape,
                                layout=None if layout is None else getattr(lib, layout))
    out = {"dense": result.to_dense().numpy(), "layout": str(result.layout).rpartition(".")[2],
           "shape": list(result.shape), "dtype": str(result.dtype).rpartition(".")[2]}
    if layout is None:
        out["indices"] = result._indices().numpy()
        out["values"] = result._values().numpy()
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_spdiags_as_pytorch(case):
    theirs = torch_result(lambda torch: build(torch, case), "spdiags", case)
    mine = build(mg, case)
    assert mine.keys() == theirs.keys()
    for key, value in theirs.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(mine[key], value)      # the same numbers placed: exact
        else:
            assert mine[key] == value, key


ERRORS = {
    "diagonal count": lambda lib: lib.sparse.spdiags(lib.tensor(D34), lib.tensor([0, 1]), (4, 4)),
    "duplicate offsets": lambda lib: lib.sparse.spdiags(lib.tensor(D34), lib.tensor([0, 1, 0]), (4, 4)),
    "offset dtype": lambda lib: lib.sparse.spdiags(lib.tensor(D34), lib.tensor([0, 1, 2], dtype=lib.int32),
                                                   (4, 4)),
    "shape": lambda lib: lib.sparse.spdiags(lib.tensor(D34), lib.tensor([0, 1, 2]), (4,)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_spdiags_errors_as_pytorch(case):
    assert_raises_as_recorded(ERRORS[case], "spdiags error", case)


def test_spdiags_has_no_derivative_as_in_pytorch():
    diagonals = mg.tensor(D34, requires_grad=True)
    dense = mg.sparse.spdiags(diagonals, mg.tensor([0, -1, 2]), (4, 4)).to_dense()
    assert dense.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::_spdiags is not implemented"):
        (dense * mg.tensor(RNG.standard_normal((4, 4)))).sum().backward()
