"""nn.utils: parameters_to_vector / vector_to_parameters, clipping (get_total_norm, clip_grads_with_norm_,
clip_grad_value_, the old clip_grad_norm), skip_init and the weights' memory layout against PyTorch; nn.parallel
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


# ----------------------------------------------------------------------------- clipping in two halves, foreach
def _twin_grads(torch, rng, dtype=np.float64):
    shapes = [(3, 4), (5,), (2, 2, 2), (7, 1)]
    grads = [(rng.standard_normal(s) * 3).astype(dtype) for s in shapes]
    ours = [mg.nn.Parameter(mg.zeros(*s, dtype=mg.float64 if dtype == np.float64 else mg.float32)) for s in shapes]
    theirs = [torch.nn.Parameter(torch.zeros(s, dtype=torch.float64 if dtype == np.float64 else torch.float32))
              for s in shapes]
    for p, q, g in zip(ours, theirs, grads):
        p.grad, q.grad = mg.tensor(g), torch.tensor(g)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 0.5, float("inf"), 0.0])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_get_total_norm_then_clip_grads_with_norm_match_pytorch(rng, norm_type, foreach):
    torch = torch_or_skip()
    ours, theirs = _twin_grads(torch, rng)
    total = mg.nn.utils.get_total_norm([p.grad for p in ours], norm_type, foreach=foreach)
    expected = torch.nn.utils.get_total_norm([q.grad for q in theirs], norm_type, foreach=foreach)
    assert total.dtype == mg.float64 and total.shape == ()
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    max_norm = expected.item() / 3          # clips (a third of the norm)
    mg.nn.utils.clip_grads_with_norm_(ours, max_norm, total, foreach=foreach)
    torch.nn.utils.clip_grads_with_norm_(theirs, max_norm, expected, foreach=foreach)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_float32_values_and_versions_match_pytorch(rng):
    torch = torch_or_skip()
    ours, theirs = _twin_grads(torch, rng, np.float32)
    before = [p.grad._version for p in ours], [q.grad._version for q in theirs]
    total = mg.nn.utils.clip_grad_norm_(iter(ours), 0.5)
    expected = torch.nn.utils.clip_grad_norm_(iter(theirs), 0.5)
    assert total.dtype == mg.float32
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-5)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5)
    after = [p.grad._version for p in ours], [q.grad._version for q in theirs]
    assert [a - b for a, b in zip(after[0], before[0])] == [a - b for a, b in zip(after[1], before[1])] == [1] * 4


def test_clipping_without_gradients_and_the_old_name(rng):
    torch = torch_or_skip()
    total = mg.nn.utils.get_total_norm([])
    assert total.dtype == mg.float32 and total.item() == 0.0 == torch.nn.utils.get_total_norm([]).item()
    mg.nn.utils.clip_grads_with_norm_([mg.nn.Parameter(mg.zeros(2))], 1.0, total)   # no gradient: nothing to do
    with pytest.warns(UserWarning, match="empty generator, no gradient clipping will occur"):
        mg.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    ours, theirs = _twin_grads(torch, rng)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        total = mg.nn.utils.clip_grad_norm(ours, 1.0, 1.0)
    np.testing.assert_allclose(total.item(), torch.nn.utils.clip_grad_norm_(theirs, 1.0, 1.0).item(), rtol=1e-12)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_refuses_a_shared_memory_gradient_before_scaling_any(rng):
    """A gradient whose elements share memory (expanded) cannot be written in place: PyTorch's error. PyTorch
    has scaled the gradients before it by then; minigrad checks every one before it writes any, so none is."""
    p, q = mg.nn.Parameter(mg.zeros(3, dtype=mg.float64)), mg.nn.Parameter(mg.zeros(3, dtype=mg.float64))
    p.grad = mg.tensor(rng.standard_normal(3))
    q.grad = mg.tensor([5.0], dtype=mg.float64).expand(3)
    kept = p.grad.numpy().copy()
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        mg.nn.utils.clip_grad_norm_([p, q], 0.1)
    np.testing.assert_array_equal(p.grad.numpy(), kept)
    np.testing.assert_array_equal(q.grad.numpy(), [5.0, 5.0, 5.0])


# ----------------------------------------------------------------------------- skip_init, weights' memory layout
def test_skip_init_leaves_the_random_stream_where_it_was():
    torch = torch_or_skip()
    mg.manual_seed(3)
    m = mg.nn.utils.skip_init(mg.nn.Linear, 5, out_features=2, bias=False)
    drawn = mg.rand(4).numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(drawn, mg.rand(4).numpy())
    assert m.weight.shape == (2, 5) and m.bias is None and m.weight.requires_grad
    for lib in (mg, torch):                     # the same errors as PyTorch's
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.ReLU)


@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format_matches_pytorch(rng, dims):
    torch = torch_or_skip()
    layout = {2: "channels_last", 3: "channels_last_3d"}[dims]
    convert = f"convert_conv{dims}d_weight_memory_format"

    def tree(lib):
        conv, convt = getattr(lib.nn, f"Conv{dims}d"), getattr(lib.nn, f"ConvTranspose{dims}d")
        return lib.nn.Sequential(conv(3, 4, 2), lib.nn.Sequential(convt(4, 6, 3), lib.nn.ReLU()))
    ours, theirs = tree(mg), tree(torch)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        q.data = torch.tensor(rng.standard_normal(tuple(q.shape)))
        p.data = mg.tensor(q.data.numpy())
    assert getattr(mg.nn.utils, convert)(ours, getattr(mg, layout)) is ours
    getattr(torch.nn.utils, convert)(theirs, getattr(torch, layout))
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert p.stride() == q.stride() and p.requires_grad
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert ours[0].weight.stride() != mg.zeros(*ours[0].weight.shape).stride()   # the layout did change
