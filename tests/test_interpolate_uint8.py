"""``interpolate`` on uint8 images (minigrad/ops/resize_uint8.py and the nearest modes): PyTorch's results to the bit.

The results are integers computed in integer arithmetic, so they are compared exactly. PyTorch runs a vectorized
kernel for images of at most 4 channels on CPUs with AVX2 and a generic one otherwise; the cases take 1, 3, 4 and 5
channels, so both are compared wherever the records were made."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import torch_result

RNG = np.random.default_rng(7)


def image(channels, h, w, seed=0):
    """A uint8 image with smooth parts, edges and both extremes (bicubic overshoots there: the clamp is exercised)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (2, channels, h, w)).astype(np.uint8)
    x[:, :, : h // 2, : w // 2] = 255
    x[:, :, h // 2:, w // 2:] = 0
    return x


CASES = [  # (channels, input h, w, keyword arguments of interpolate)
    (3, 7, 9, dict(size=(13, 5))),
    (1, 12, 11, dict(size=(4, 17))),
    (4, 30, 40, dict(size=(3, 4))),                               # downscaling by 10: many taps with antialias
    (5, 8, 8, dict(size=(5, 19))),                                # 5 channels: PyTorch's generic kernel
    (3, 9, 6, dict(scale_factor=(1.7, 0.6))),                     # the given scale factors are used
    (3, 9, 6, dict(scale_factor=(1.7, 0.6), recompute_scale_factor=True)),
    (3, 6, 10, dict(size=(6, 3))),                                # one axis keeps its size: one pass
    (3, 1, 5, dict(size=(4, 1))),                                 # single pixels
]
MODES = [("nearest", {}), ("nearest-exact", {}), ("bilinear", {}), ("bilinear", dict(align_corners=True)),
         ("bilinear", dict(antialias=True)), ("bicubic", {}), ("bicubic", dict(align_corners=True)),
         ("bicubic", dict(antialias=True))]


@pytest.mark.parametrize("mode, options", MODES, ids=[m + "".join(f"-{k}" for k in o) for m, o in MODES])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_uint8_images_resize_as_pytorch(mode, options, case):
    channels, h, w, kwargs = CASES[case]
    x = image(channels, h, w, seed=case)
    kwargs = dict(kwargs, mode=mode, **options)
    expected = torch_result(lambda torch: torch.nn.functional.interpolate(torch.tensor(x), **kwargs), x, str(kwargs))
    out = F.interpolate(mg.tensor(x), **kwargs)
    assert out.dtype == mg.uint8 and not out.requires_grad
    assert str(expected.dtype) == "torch.uint8"
    np.testing.assert_array_equal(out.numpy(), expected.numpy())   # integers: exact


def test_an_unchanged_size_is_a_copy():
    x = image(3, 5, 6)
    t = mg.tensor(x)
    out = F.interpolate(t, size=(5, 6), mode="bilinear", antialias=True)
    np.testing.assert_array_equal(out.numpy(), x)
    t.add_(1)
    np.testing.assert_array_equal(out.numpy(), x)                 # not a view of the input


@pytest.mark.parametrize("mode, options", MODES, ids=[m + "".join(f"-{k}" for k in o) for m, o in MODES])
def test_a_constant_image_stays_constant(mode, options):
    """The fixed-point weights of each output sum to 2^p within a few units, so every constant 0..255 survives."""
    x = np.broadcast_to(np.arange(256, dtype=np.uint8)[:, None, None, None], (256, 1, 6, 7)).copy()
    out = F.interpolate(mg.tensor(x), size=(11, 3), mode=mode, **options).numpy()
    np.testing.assert_array_equal(out, np.broadcast_to(x[:, :, :1, :1], out.shape))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_nearest_copies_the_pixels_float_input_would_copy(mode, dims):
    x = RNG.integers(0, 256, (2, 3) + (5,) * dims).astype(np.uint8)
    size = (7, 3, 4)[:dims]
    out = F.interpolate(mg.tensor(x), size=size, mode=mode)
    ref = F.interpolate(mg.tensor(x.astype(np.float32)), size=size, mode=mode)
    assert out.dtype == mg.uint8
    np.testing.assert_array_equal(out.numpy(), ref.numpy().astype(np.uint8))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_other_integer_images_are_refused_as_pytorch_refuses_them(dtype, mode):
    x = mg.tensor(np.zeros((1, 1, 4, 4), dtype))
    with pytest.raises(NotImplementedError, match="not implemented for"):
        F.interpolate(x, scale_factor=2, mode=mode)


@pytest.mark.parametrize("mode, dims", [("linear", 1), ("trilinear", 3), ("area", 2)])
def test_uint8_modes_pytorch_does_not_resize_are_refused(mode, dims):
    x = mg.tensor(np.zeros((1, 1) + (4,) * dims, np.uint8))
    with pytest.raises(NotImplementedError, match="not implemented for 'Byte'"):
        F.interpolate(x, scale_factor=2, mode=mode)
