"""minigrad.nn.grad (the convolution gradients as functions) against the backward pass of the convolution itself
and against torch.nn.grad, float64, random upstream gradients, strides, padding, dilation, groups; their own
derivatives; and minigrad.nn.attention.sdpa_kernel against PyTorch's CPU behaviour."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import grad as G
from minigrad.nn.attention import SDPBackend, sdpa_kernel

from .mirror import torch_or_skip

CASES = [  # (dims, x shape, w shape, stride, padding, dilation, groups)
    (1, (2, 4, 11), (6, 2, 3), 2, 1, 1, 2),
    (1, (1, 3, 9), (2, 3, 4), 1, 0, 2, 1),
    (2, (2, 4, 7, 6), (6, 2, 3, 3), 2, 1, 1, 2),
    (2, (1, 3, 8, 9), (4, 3, 2, 3), (1, 2), (0, 1), (2, 1), 1),
    (3, (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), 1, 1, 1, 1),
]


def _case(lib, module, case, seed=0):
    dims, x_shape, w_shape, stride, padding, dilation, groups = case
    values = np.random.default_rng(seed)
    conv = getattr(lib.nn.functional, f"conv{dims}d")
    x, w = lib.tensor(values.standard_normal(x_shape)), lib.tensor(values.standard_normal(w_shape))
    y_shape = tuple(conv(x, w, None, stride, padding, dilation, groups).shape)
    dy = lib.tensor(values.standard_normal(y_shape))
    dx = getattr(module, f"conv{dims}d_input")(x.shape, w, dy, stride, padding, dilation, groups)
    dw = getattr(module, f"conv{dims}d_weight")(x, w.shape, dy, stride, padding, dilation, groups)
    return x, w, dy, dx, dw, conv


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}d-{c[1]}")
def test_equal_to_the_backward_of_the_convolution(case):
    dims, _, _, stride, padding, dilation, groups = case
    x, w, dy, dx, dw, conv = _case(mg, G, case)
    x.requires_grad_(), w.requires_grad_()
    conv(x, w, None, stride, padding, dilation, groups).backward(dy)
    np.testing.assert_allclose(dx.numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dw.numpy(), w.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert not dx.requires_grad and not dw.requires_grad


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}d-{c[1]}")
def test_mirror_torch_nn_grad(case):
    torch = torch_or_skip()
    ours, theirs = _case(mg, G, case), _case(torch, torch.nn.grad, case)
    for a, b in zip(ours[3:5], theirs[3:5]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_the_gradients_are_differentiable_as_pytorch_s():
    """d/dw and d/d(dy) of sum(v * conv2d_input(...)), against PyTorch."""
    torch = torch_or_skip()
    results = []
    for lib, module in ((mg, G), (torch, torch.nn.grad)):
        _, w, dy, _, _, _ = _case(lib, module, CASES[2], seed=3)
        w.requires_grad_(), dy.requires_grad_()
        dx = module.conv2d_input((2, 4, 7, 6), w, dy, 2, 1, 1, 2)
        v = lib.tensor(np.random.default_rng(9).standard_normal(tuple(dx.shape)))
        (dx * v).sum().backward()
        results.append([w.grad.numpy(), dy.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_grad_output_of_the_wrong_shape_is_refused():
    w, dy = mg.ones(2, 1, 3, 3), mg.ones(1, 2, 4, 4)
    with pytest.raises(RuntimeError, match="grad_output has shape"):
        G.conv2d_input((1, 1, 7, 7), w, dy)


def _attend(lib):
    q = lib.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 8)))
    return lib.nn.functional.scaled_dot_product_attention(q, q, q)


@pytest.mark.parametrize("allowed", [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION"], [],
                                     "ERROR", ["OVERRIDEABLE"], ["EFFICIENT_ATTENTION", "MATH"]])
def test_sdpa_kernel_allows_what_pytorch_allows_on_the_cpu(allowed):
    torch = torch_or_skip()
    import torch.nn.attention
    outcomes = []
    for lib, backend, kernel in ((mg, SDPBackend, sdpa_kernel),
                                 (torch, torch.nn.attention.SDPBackend, torch.nn.attention.sdpa_kernel)):
        backends = getattr(backend, allowed) if isinstance(allowed, str) else [getattr(backend, b) for b in allowed]
        try:
            with kernel(backends):
                outcomes.append(_attend(lib).numpy())
        except RuntimeError as error:
            outcomes.append(str(error))
        outcomes.append(_attend(lib).numpy().shape)          # the restriction ends with the block
    assert type(outcomes[0]) is type(outcomes[2])
    if isinstance(outcomes[0], str):
        assert outcomes[0] == outcomes[2]
    else:
        np.testing.assert_allclose(outcomes[0], outcomes[2], rtol=1e-6, atol=1e-7)
    assert outcomes[1] == outcomes[3] == (1, 2, 4, 8)


def test_sdpa_kernel_refuses_other_arguments_and_restores_after_an_error():
    assert [b.value for b in SDPBackend] == [-1, 0, 1, 2, 3, 4]
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
    with pytest.raises(ValueError):
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            raise ValueError
    assert _attend(mg).shape == (1, 2, 4, 8)
