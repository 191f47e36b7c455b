"""``nn.utils.fusion``: an eval-mode conv or linear layer with the eval BatchNorm after it folded in gives
bn(layer(x)) to float64 rounding, and PyTorch's fused parameters; bad input raises and changes nothing."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn.utils import fusion

from .mirror import torch_or_skip
from .weight_param_helpers import numpy_state

# (name, layer factory, BatchNorm factory, input shape, transpose)
CASES = [
    ("Conv1d", lambda lib: lib.nn.Conv1d(2, 3, 3), lambda lib: lib.nn.BatchNorm1d(3), (2, 2, 7), False),
    ("Conv2d", lambda lib: lib.nn.Conv2d(2, 4, 3, padding=1), lambda lib: lib.nn.BatchNorm2d(4), (2, 2, 5, 5), False),
    ("Conv2d no bias", lambda lib: lib.nn.Conv2d(3, 2, 2, bias=False), lambda lib: lib.nn.BatchNorm2d(2),
     (1, 3, 4, 4), False),
    ("ConvTranspose2d", lambda lib: lib.nn.ConvTranspose2d(2, 3, 3, stride=2), lambda lib: lib.nn.BatchNorm2d(3),
     (2, 2, 3, 3), True),
    ("BN without affine", lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: lib.nn.BatchNorm2d(3, affine=False),
     (2, 2, 4, 4), False),
]
IDS = [case[0] for case in CASES]


def trained_pair(lib, layer_factory, bn_factory, input_shape):
    """A float64 layer and BatchNorm with PyTorch's initial weights, random affine parameters and running
    statistics gathered over a few training batches, both put in eval mode."""
    torch = torch_or_skip()
    torch.manual_seed(0)
    layer, bn = layer_factory(torch).double(), bn_factory(torch).double()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        if bn.weight is not None:
            bn.weight.copy_(torch.tensor(rng.uniform(0.5, 2.0, bn.num_features)))
            bn.bias.copy_(torch.tensor(rng.standard_normal(bn.num_features)))
        for _ in range(3):
            bn(layer(torch.tensor(rng.standard_normal(input_shape) * 2 + 1)))
    layer.eval(), bn.eval()
    if lib is torch:
        return layer, bn
    ours_layer, ours_bn = layer_factory(mg).double(), bn_factory(mg).double()
    ours_layer.load_state_dict(numpy_state(layer))
    ours_bn.load_state_dict(numpy_state(bn))
    return ours_layer.eval(), ours_bn.eval()


@pytest.mark.parametrize("name, layer_factory, bn_factory, input_shape, transpose", CASES, ids=IDS)
def test_fused_conv_equals_conv_then_bn(name, layer_factory, bn_factory, input_shape, transpose):
    torch = torch_or_skip()
    conv, bn = trained_pair(mg, layer_factory, bn_factory, input_shape)
    their_conv, their_bn = trained_pair(torch, layer_factory, bn_factory, input_shape)
    fused = fusion.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    theirs = torch.nn.utils.fusion.fuse_conv_bn_eval(their_conv, their_bn, transpose=transpose)
    x = np.random.default_rng(1).standard_normal(input_shape)
    np.testing.assert_allclose(fused(mg.tensor(x)).detach().numpy(), bn(conv(mg.tensor(x))).detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    assert type(fused) is type(conv) and fused is not conv and not fused.training
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    for key, value in numpy_state(theirs).items():
        np.testing.assert_allclose(numpy_state(fused)[key], value, rtol=1e-12, atol=1e-14, err_msg=key)
    assert [(k, p.requires_grad) for k, p in fused.named_parameters()] == [
        (k, p.requires_grad) for k, p in theirs.named_parameters()]      # a bias made from zeros does not train
    assert conv.bias is None or fused.bias is not conv.bias          # the original layer is untouched
    np.testing.assert_array_equal(conv.weight.detach().numpy(), numpy_state(their_conv)["weight"])


def test_fused_linear_equals_linear_then_bn():
    torch = torch_or_skip()
    factories = (lambda lib: lib.nn.Linear(4, 3), lambda lib: lib.nn.BatchNorm1d(3), (5, 4))
    linear, bn = trained_pair(mg, *factories)
    their_linear, their_bn = trained_pair(torch, *factories)
    fused = fusion.fuse_linear_bn_eval(linear, bn)
    theirs = torch.nn.utils.fusion.fuse_linear_bn_eval(their_linear, their_bn)
    x = np.random.default_rng(2).standard_normal((5, 4))
    np.testing.assert_allclose(fused(mg.tensor(x)).detach().numpy(), bn(linear(mg.tensor(x))).detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    for key, value in numpy_state(theirs).items():
        np.testing.assert_allclose(numpy_state(fused)[key], value, rtol=1e-12, atol=1e-14, err_msg=key)


def test_fuse_weights_functions_against_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    w, b = rng.standard_normal((4, 2, 3, 3)), rng.standard_normal(4)
    stats = rng.standard_normal(4), rng.uniform(0.5, 2, 4), 1e-3, rng.standard_normal(4), rng.standard_normal(4)
    for transpose in (False, True):
        weight = w if not transpose else w.transpose(1, 0, 2, 3)
        ours = fusion.fuse_conv_bn_weights(mg.tensor(weight), mg.tensor(b), *[mg.tensor(s) if isinstance(s, np.ndarray)
                                                                             else s for s in stats], transpose)
        theirs = torch.nn.utils.fusion.fuse_conv_bn_weights(torch.tensor(weight), torch.tensor(b),
                                                            *[torch.tensor(s) if isinstance(s, np.ndarray) else s
                                                              for s in stats], transpose)
        for a, t in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-13)
    lw = rng.standard_normal((4, 5))
    ours = fusion.fuse_linear_bn_weights(mg.tensor(lw), None, *[mg.tensor(s) if isinstance(s, np.ndarray) else s
                                                               for s in stats])
    theirs = torch.nn.utils.fusion.fuse_linear_bn_weights(torch.tensor(lw), None, *[
        torch.tensor(s) if isinstance(s, np.ndarray) else s for s in stats])
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-13)
    assert nn.utils.fuse_conv_bn_eval is fusion.fuse_conv_bn_eval


def test_fusing_in_training_mode_raises_and_changes_nothing():
    conv, bn = nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)
    before = numpy_state(conv), numpy_state(bn)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fusion.fuse_conv_bn_eval(conv, bn)
    conv.eval()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fusion.fuse_conv_bn_eval(conv, bn)                       # the BatchNorm is still training
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fusion.fuse_linear_bn_eval(nn.Linear(2, 3), nn.BatchNorm1d(3).eval())
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        fusion.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())
    with pytest.raises(AssertionError, match="running statistics"):
        fusion.fuse_conv_bn_eval(conv, nn.BatchNorm2d(3, track_running_stats=False).eval())
    for after, saved in zip((numpy_state(conv), numpy_state(bn)), before):
        for key in saved:
            np.testing.assert_array_equal(after[key], saved[key])
