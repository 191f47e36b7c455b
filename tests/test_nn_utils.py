"""nn.utils: parameters_to_vector / vector_to_parameters and clip_grad_value_ against PyTorch; nn.parallel
is importable."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_skip


def twin_parameters(rng):
    torch = torch_or_skip()
    arrays = [rng.standard_normal((3, 2)), rng.standard_normal(4), rng.standard_normal((2, 1, 2))]
    return ([mg.nn.Parameter(mg.tensor(a)) for a in arrays],
            [torch.nn.Parameter(torch.tensor(a)) for a in arrays])


def test_parameters_to_vector_is_the_concatenation_and_differentiable(rng):
    torch = torch_or_skip()
    ours, theirs = twin_parameters(rng)
    vec, tvec = mg.nn.utils.parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vec.detach().numpy(), tvec.detach().numpy())
    upstream = rng.standard_normal(vec.shape)
    vec.backward(mg.tensor(upstream))
    tvec.backward(torch.tensor(upstream))
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_vector_to_parameters_gives_each_parameter_its_slice_as_a_view(rng):
    ours, _ = twin_parameters(rng)
    values = rng.standard_normal(14)
    vec = mg.tensor(values)
    mg.nn.utils.vector_to_parameters(vec, ours)
    np.testing.assert_array_equal(ours[1].detach().numpy(), values[6:10])
    assert ours[2].shape == (2, 1, 2) and ours[2].requires_grad
    vec[6] = 100.0                                  # shares memory, as in PyTorch
    assert ours[1][0].item() == 100.0


def test_vector_to_parameters_errors(rng):
    ours, _ = twin_parameters(rng)
    with pytest.raises(TypeError, match="expected minigrad.Tensor, but got: ndarray"):
        mg.nn.utils.vector_to_parameters(np.zeros(14), ours)
    before = [p.detach().numpy().copy() for p in ours]
    with pytest.raises(RuntimeError, match="at least 14 elements"):
        mg.nn.utils.vector_to_parameters(mg.zeros(13), ours)
    for p, b in zip(ours, before):                 # nothing changed on error
        np.testing.assert_array_equal(p.detach().numpy(), b)


def test_clip_grad_value_matches_pytorch(rng):
    torch = torch_or_skip()
    ours, theirs = twin_parameters(rng)
    for p, q in zip(ours, theirs):
        g = rng.standard_normal(p.shape) * 2
        p.grad, q.grad = mg.tensor(g), torch.tensor(g)
    mg.nn.utils.clip_grad_value_(ours, 0.7)
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_nn_parallel_is_importable():
    from minigrad.nn import parallel
    assert parallel.__doc__ and mg.nn.parallel is parallel
