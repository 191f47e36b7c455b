"""nn.utils.parametrizations.orthogonal against PyTorch's: the weight is orthogonal for every map (matrix_exp, cayley,
householder), shape (square, tall, wide, a batch) and trivialization setting; its values, and the gradients of the
unconstrained matrix under random upstream gradients, equal PyTorch's in float64; the errors are PyTorch's."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.utils.parametrizations import orthogonal

from .mirror import torch_or_skip

MAPS = ["matrix_exp", "cayley", "householder"]
SHAPES = [(3, 3), (5, 3), (3, 5), (2, 4, 4)]


def _module(lib, weight):
    module = lib.nn.Module()
    module.weight = lib.nn.Parameter(lib.tensor(weight))
    return module


def _orthogonal(lib):
    return orthogonal if lib is mg else lib.nn.utils.parametrizations.orthogonal


def _gram_error(w):
    w = w.detach().numpy()
    n, k = w.shape[-2:]
    g = w @ np.swapaxes(w, -1, -2) if n <= k else np.swapaxes(w, -1, -2) @ w
    return np.abs(g - np.eye(min(n, k))).max()


@pytest.mark.parametrize("trivialization", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_weight_is_orthogonal_without_torch(orthogonal_map, shape, trivialization):
    weight = np.random.default_rng(0).standard_normal(shape)
    module = orthogonal(_module(mg, weight), orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    assert _gram_error(module.weight) < 1e-12
    parameter = module.parametrizations.weight.original
    noise = np.random.default_rng(1).standard_normal(parameter.shape)
    noise[..., np.arange(min(shape[-2:])), np.arange(min(shape[-2:]))] = 0   # (householder's diagonal holds signs)
    with mg.no_grad():                       # a moved unconstrained matrix maps to an orthogonal one
        parameter.add_(mg.tensor(noise))
    assert _gram_error(module.weight) < 1e-12


@pytest.mark.parametrize("trivialization", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_values_and_gradients_as_pytorch(orthogonal_map, shape, trivialization):
    """PyTorch's state (its unconstrained matrix, and its base, which takes random columns for a non-square weight)
    is copied into minigrad's module; then the weight, and three SGD steps driven by a random upstream gradient, agree.
    For a square weight the state minigrad makes itself is compared first."""
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    weight = rng.standard_normal(shape)
    modules = [_orthogonal(lib)(_module(lib, weight), orthogonal_map=orthogonal_map, use_trivialization=trivialization)
               for lib in (mg, torch)]
    ours, theirs = (m.parametrizations.weight for m in modules)
    square = shape[-1] == shape[-2]
    if square or not trivialization:         # made without random numbers: minigrad's own state must be PyTorch's
        np.testing.assert_allclose(ours.original.detach().numpy(), theirs.original.detach().numpy(), atol=1e-12)
        if trivialization:
            np.testing.assert_allclose(ours[0].base.numpy(), theirs[0].base.numpy(), atol=1e-12)
    with mg.no_grad():
        ours.original.copy_(mg.tensor(theirs.original.detach().numpy() + 0.1 * rng.standard_normal(shape)))
        if trivialization:
            ours[0].base = mg.tensor(theirs[0].base.numpy())
    with torch.no_grad():
        theirs.original.copy_(torch.tensor(ours.original.detach().numpy()))
    upstream = rng.standard_normal(shape)
    for lib, module in zip((mg, torch), modules):
        optimizer = lib.optim.SGD(module.parameters(), lr=0.05)
        for _ in range(3):
            optimizer.zero_grad()
            (module.weight * lib.tensor(upstream)).sum().backward()
            optimizer.step()
    for a, b in ((ours.original, theirs.original), (modules[0].weight, modules[1].weight)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_assigning_a_weight_as_pytorch(orthogonal_map):
    """An orthogonal value assigned to the weight is the weight afterwards (with trivialization; householder without)."""
    torch = torch_or_skip()
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))[0]
    for lib in (mg, torch):
        module = _orthogonal(lib)(_module(lib, np.eye(4)), orthogonal_map=orthogonal_map)
        module.weight = lib.tensor(q)
        np.testing.assert_allclose(module.weight.detach().numpy(), q, atol=1e-12)
        plain = _orthogonal(lib)(_module(lib, np.eye(4)), orthogonal_map=orthogonal_map, use_trivialization=False)
        if orthogonal_map == "householder":
            plain.weight = lib.tensor(q)
            np.testing.assert_allclose(plain.weight.detach().numpy(), q, atol=1e-12)
        else:
            with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix exponential"):
                plain.weight = lib.tensor(q)


def test_errors_as_pytorch():
    torch = torch_or_skip()
    for lib in (mg, torch):
        ortho = _orthogonal(lib)
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                                             "Got: foo"):
            ortho(_module(lib, np.eye(3)), orthogonal_map="foo")
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            ortho(_module(lib, np.eye(3)), "nope")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
            ortho(_module(lib, np.ones(3)))
        module = ortho(_module(lib, np.eye(3)))
        with pytest.raises(ValueError, match=r"Expected a matrix or batch of matrices of shape .*\[3, 3\]"):
            module.weight = lib.tensor(np.eye(2))
        complex_module = _module(lib, np.eye(3, dtype=np.complex128))
        with pytest.raises(ValueError, match="The householder parametrization does not support complex tensors."):
            ortho(complex_module, orthogonal_map="householder")


def test_default_map_as_pytorch():
    torch = torch_or_skip()
    for shape, expected in (((3, 3), "matrix_exp"), ((4, 3), "householder")):
        for lib in (mg, torch):
            ortho = _orthogonal(lib)
            module = ortho(_module(lib, np.random.default_rng(4).standard_normal(shape)))
            found = module.parametrizations.weight[0].orthogonal_map
            assert getattr(found, "name", found) == expected
