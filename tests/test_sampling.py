"""F.grid_sample and F.affine_grid (minigrad/ops/sampling.py).

* PyTorch mirrors (float64, forward and the gradients of input and grid), swept with hypothesis over mode,
  padding mode, align_corners, 4-D and 5-D input and small sizes, with sample points that also fall outside
  the image;
* float64 gradchecks (random upstream projections) of both inputs, on grids kept away from the kinks of the
  interpolation (points on pixel centres, the borders, the reflection points); gradgradchecks through the
  graph_backward (create_graph=True), and the double backward mirrored against PyTorch's;
* affine_grid against PyTorch (4-D and 5-D sizes, both align_corners) with theta's gradient, and gradchecked;
* a spatial transformer (affine_grid then grid_sample) whose forward and gradients of theta and the image
  equal PyTorch's, a small STN's loss and gradients, and the tutorial's model (localisation net, identity start);
* float32, zero batch, the align_corners=None warnings;
* bad input: PyTorch's exception types with clear messages, nothing changed.
"""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F

from .mirror import assert_double_mirror, assert_mirror, check_grad, check_gradgrad, run_both, torch_or_skip

SWEEP = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODES = ("bilinear", "nearest")
PADDING_MODES = ("zeros", "border", "reflection")
# fractional parts of the source positions: away from 0 (pixel centres, the borders with align_corners=True, the
# kinks of bilinear interpolation) and 0.5 (the borders and reflection points with align_corners=False, nearest's
# rounding points), so that finite differences with a 1e-6 step do not straddle a kink
FRACTIONS = np.array([0.15, 0.3, 0.4, 0.6, 0.7, 0.85])


def grid_off_kinks(rng, batch, out_size, in_size, align_corners):
    """A grid (batch, *out_size, d) whose points read source positions u = k + f with integer k in
    [-2, size + 1] (outside the image too) and f from FRACTIONS, written as normalised coordinates."""
    d = len(in_size)
    grid = np.empty((batch,) + tuple(out_size) + (d,))
    for c in range(d):
        size = in_size[d - 1 - c]                       # coordinate c (x, y, z) reads the spatial axis d-1-c
        u = rng.integers(-2, size + 2, grid.shape[:-1]) + rng.choice(FRACTIONS, grid.shape[:-1])
        grid[..., c] = 2 * u / (size - 1) - 1 if align_corners else (2 * u + 1) / size - 1
    return grid


@st.composite
def sampling_case(draw):
    """(input shape, grid shape) of a 4-D or 5-D sampling, sizes >= 2 (align_corners=True divides by size-1)."""
    d = draw(st.sampled_from([2, 3]))
    batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    in_size = tuple(draw(st.integers(2, 4)) for _ in range(d))
    out_size = tuple(draw(st.integers(1, 3)) for _ in range(d))
    return (batch, channels) + in_size, out_size


def sample_both(mode, padding_mode, align_corners):
    return run_both(lambda lib, x, grid: lib.nn.functional.grid_sample(x, grid, mode, padding_mode, align_corners))


# --------------------------------------------------------------------------- PyTorch mirrors
@SWEEP
@given(case=sampling_case(), mode=st.sampled_from(MODES), padding_mode=st.sampled_from(PADDING_MODES),
       align_corners=st.booleans(), seed=st.integers(0, 2 ** 32 - 1))
def test_grid_sample_mirror(case, mode, padding_mode, align_corners, seed):
    shape, out_size = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    grid = grid_off_kinks(rng, shape[0], out_size, shape[2:], align_corners)
    out = assert_mirror(*sample_both(mode, padding_mode, align_corners), x, grid, rtol=1e-10, atol=1e-10, seed=seed)
    assert out.shape == shape[:2] + out_size


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 2, 1, 3), (2, 1, 3, 1), (1, 1, 1, 1)])
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_mirror_uniform_grid(mode, shape):
    """Points drawn uniformly over [-1.5, 1.5] (no care for kinks: both libraries take the same side of them),
    images with sizes of 1 among them."""
    rng = np.random.default_rng(3)
    x, grid = rng.standard_normal(shape), rng.uniform(-1.5, 1.5, (shape[0], 6, 7, 2))
    for padding_mode, align_corners in itertools.product(PADDING_MODES, (False, True)):
        assert_mirror(*sample_both(mode, padding_mode, align_corners), x, grid)


def test_grid_sample_identity_grid_reads_the_pixels():
    """affine_grid of the identity samples every pixel centre: grid_sample returns the input (align_corners
    either way, any padding), an expected value independent of the code under test."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4, 5)))
    identity = mg.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    for align_corners, mode, padding_mode in itertools.product((False, True), MODES, PADDING_MODES):
        grid = F.affine_grid(identity, (2, 3, 4, 5), align_corners=align_corners)
        out = F.grid_sample(x, grid, mode, padding_mode, align_corners)
        np.testing.assert_allclose(out.numpy(), x.numpy(), rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- gradchecks
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_gradcheck(mode, padding_mode, align_corners, d):
    rng = np.random.default_rng(7)
    in_size, out_size = ((3, 4), (2, 3)) if d == 2 else ((2, 3, 3), (2, 1, 2))
    x = rng.standard_normal((2, 2) + in_size)
    grid = grid_off_kinks(rng, 2, out_size, in_size, align_corners)
    check_grad(lambda a, g: F.grid_sample(a, g, mode, padding_mode, align_corners), x, grid)


@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("d", [2, 3])
def test_grid_sample_gradgradcheck(padding_mode, d):
    """create_graph=True runs the backward written with minigrad ops: its gradients are differentiated again."""
    rng = np.random.default_rng(11)
    in_size, out_size = ((3, 3), (2, 2)) if d == 2 else ((2, 2, 3), (1, 2, 2))
    x = rng.standard_normal((1, 2) + in_size)
    for align_corners in (False, True):
        grid = grid_off_kinks(rng, 1, out_size, in_size, align_corners)
        check_gradgrad(lambda a, g, align=align_corners: F.grid_sample(a, g, "bilinear", padding_mode, align), x, grid)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("d", [2, 3])
def test_grid_sample_double_backward_mirror(mode, d):
    """The gradients computed with create_graph=True, and the gradients of a function of them with respect to
    input, grid and the upstream gradient, equal PyTorch's double backward."""
    rng = np.random.default_rng(19)
    in_size, out_size = ((3, 4), (2, 3)) if d == 2 else ((2, 3, 3), (1, 2, 2))
    for padding_mode, align_corners in itertools.product(PADDING_MODES, (False, True)):
        x, grid = rng.standard_normal((2, 2) + in_size), grid_off_kinks(rng, 2, out_size, in_size, align_corners)
        assert_double_mirror(*sample_both(mode, padding_mode, align_corners), x, grid)


def test_grid_sample_nearest_grid_gradient_is_zero():
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    x, grid = rng.standard_normal((1, 2, 3, 3)), rng.uniform(-1, 1, (1, 2, 2, 2))
    g = mg.tensor(grid, requires_grad=True)
    F.grid_sample(mg.tensor(x), g, "nearest", align_corners=False).sum().backward()
    gt = torch.tensor(grid, requires_grad=True)
    torch.nn.functional.grid_sample(torch.tensor(x), gt, "nearest", align_corners=False).sum().backward()
    assert gt.grad is not None and g.grad is not None
    np.testing.assert_array_equal(g.grad.numpy(), np.zeros_like(grid))


def test_grid_sample_input_gradient_accumulates_where_points_share_pixels():
    """Every point reading the same pixel adds to its gradient: many points on one pixel centre, nearest."""
    x = mg.zeros(1, 1, 2, 2, dtype=mg.float64, requires_grad=True)
    grid = mg.tensor(np.full((1, 3, 4, 2), -0.5))            # the centre of pixel (0, 0), align_corners=False
    F.grid_sample(x, grid, "nearest", align_corners=False).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[[12.0, 0.0], [0.0, 0.0]]]])


# --------------------------------------------------------------------------- affine_grid
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 2, 4), (1, 2, 1, 1, 2)])
def test_affine_grid_mirror(size, align_corners):
    d = len(size) - 2
    theta = np.random.default_rng(len(size)).standard_normal((size[0], d, d + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # unit sizes with align_corners=True warn, in both libraries
        out = assert_mirror(*run_both(lambda lib, t: lib.nn.functional.affine_grid(t, size, align_corners)), theta)
    assert out.shape == (size[0],) + size[2:] + (d,)


@pytest.mark.parametrize("size", [(2, 3, 3, 4), (1, 2, 2, 3, 2)])
def test_affine_grid_gradcheck(size):
    d = len(size) - 2
    theta = np.random.default_rng(5).standard_normal((size[0], d, d + 1))
    check_grad(lambda t: F.affine_grid(t, size, align_corners=False), theta)
    check_gradgrad(lambda t: F.affine_grid(t, size, align_corners=True) ** 2, theta)


def test_affine_grid_takes_sizes_as_list_and_keeps_the_dtype():
    theta = mg.tensor(np.tile(np.eye(2, 3), (2, 1, 1)), dtype=mg.float32)
    grid = F.affine_grid(theta, [2, 3, 2, 2], align_corners=True)
    assert grid.dtype == mg.float32 and grid.shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(grid.numpy()[0], [[[-1, -1], [1, -1]], [[-1, 1], [1, 1]]])   # (x, y) corners


# --------------------------------------------------------------------------- spatial transformer
def spatial_transformer(lib, x, theta):
    """The tutorial's transform step: a grid from theta, the image resampled on it."""
    F_ = lib.nn.functional
    grid = F_.affine_grid(theta, x.size(), align_corners=False)
    return F_.grid_sample(x, grid, align_corners=False)


@pytest.mark.parametrize("padding_mode", PADDING_MODES)
def test_spatial_transformer_mirror(padding_mode):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 3, 6, 5))
    theta = np.tile(np.eye(2, 3), (2, 1, 1)) + 0.2 * rng.standard_normal((2, 2, 3))
    assert_mirror(*run_both(lambda lib, a, t: lib.nn.functional.grid_sample(
        a, lib.nn.functional.affine_grid(t, a.size(), align_corners=False), padding_mode=padding_mode,
        align_corners=False)), x, theta)


def test_spatial_transformer_network_step():
    """A small STN (localisation net -> theta -> resample -> classifier): loss and every gradient, the
    localisation net's parameters included, equal PyTorch's."""
    torch = torch_or_skip()
    rng = np.random.default_rng(17)
    x, target = rng.standard_normal((3, 1, 8, 8)), np.array([0, 2, 1])
    w_loc = 0.05 * rng.standard_normal((6, 64))
    b_loc = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])       # starts at the identity, as the tutorial does
    w_cls = 0.1 * rng.standard_normal((3, 64))

    def step(lib):
        F_ = lib.nn.functional
        params = [lib.tensor(a, requires_grad=True) for a in (w_loc, b_loc, w_cls)]
        image = lib.tensor(x)
        theta = F_.linear(image.flatten(1), params[0], params[1]).tanh().view(-1, 2, 3)
        warped = F_.grid_sample(image, F_.affine_grid(theta, image.size(), align_corners=False), align_corners=False)
        loss = F_.cross_entropy(F_.linear(warped.flatten(1), params[2]), lib.tensor(target))
        loss.backward()
        return [loss.detach().numpy()] + [p.grad.numpy() for p in params]

    for ours, theirs in zip(step(mg), step(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_spatial_transformer_tutorial_model():
    """The PyTorch tutorial's STN shape: a convolutional localisation net whose last Linear starts at zero weight
    and the identity bias, then affine_grid/grid_sample, then a classifier. Same parameters in both libraries
    (copied through state_dict); the loss and every parameter's gradient equal PyTorch's."""
    torch = torch_or_skip()
    rng = np.random.default_rng(23)
    images, target = rng.standard_normal((4, 1, 12, 12)), np.array([0, 1, 2, 1])

    def build(lib):
        nn = lib.nn
        lib.manual_seed(0)
        model = nn.ModuleDict({
            "localization": nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU(True)),   # (4, 5, 5)
            "fc_loc": nn.Sequential(nn.Linear(4 * 5 * 5, 8), nn.ReLU(True), nn.Linear(8, 6)),
            "classifier": nn.Linear(12 * 12, 3),
        }).double()
        return model

    def run(lib, model):
        F_ = lib.nn.functional
        x = lib.tensor(images)
        theta = model["fc_loc"](model["localization"](x).flatten(1)).view(-1, 2, 3)
        warped = F_.grid_sample(x, F_.affine_grid(theta, x.size(), align_corners=False), align_corners=False)
        loss = F_.cross_entropy(model["classifier"](warped.flatten(1)), lib.tensor(target))
        loss.backward()
        return loss

    theirs = build(torch)
    with torch.no_grad():                       # the tutorial's start: the identity transform
        theirs["fc_loc"][2].weight.zero_()
        theirs["fc_loc"][2].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0], dtype=torch.float64))
        theirs["fc_loc"][2].weight.add_(0.01 * torch.tensor(rng.standard_normal((6, 8))))   # and off it a little
    ours = build(mg)
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(run(mg, ours).item(), run(torch, theirs).item(), rtol=1e-12)
    their_grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), their_grads[name].grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


# --------------------------------------------------------------------------- dtypes, shapes, warnings
def test_grid_sample_float32_matches_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(4)
    x, grid = rng.standard_normal((2, 3, 5, 4)).astype(np.float32), rng.uniform(-1, 1, (2, 3, 3, 2)).astype(np.float32)
    out = F.grid_sample(mg.tensor(x), mg.tensor(grid), align_corners=True)
    expected = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(grid), align_corners=True)
    assert out.dtype == mg.float32
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_grid_sample_zero_batch():
    out = F.grid_sample(mg.zeros(0, 2, 3, 3), mg.zeros(0, 4, 5, 2), align_corners=False)
    assert out.shape == (0, 2, 4, 5)


@pytest.mark.parametrize("call", [
    lambda: F.grid_sample(mg.zeros(1, 1, 2, 2), mg.zeros(1, 1, 1, 2)),
    lambda: F.affine_grid(mg.zeros(1, 2, 3), (1, 1, 2, 2)),
])
def test_align_corners_none_warns_and_means_false(call):
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        call()


def test_align_corners_none_equals_false():
    rng = np.random.default_rng(6)
    x, grid = mg.tensor(rng.standard_normal((1, 2, 3, 3))), mg.tensor(rng.uniform(-1, 1, (1, 2, 2, 2)))
    with pytest.warns(UserWarning):
        default = F.grid_sample(x, grid)
    np.testing.assert_array_equal(default.numpy(), F.grid_sample(x, grid, align_corners=False).numpy())


def test_affine_grid_unit_size_with_align_corners_warns():
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(mg.zeros(1, 2, 3), (1, 1, 1, 3), align_corners=True)


# --------------------------------------------------------------------------- bad input
def _grid_sample(**kw):
    def call(lib, x, grid):
        return lib.nn.functional.grid_sample(x, grid, **{"align_corners": False, **kw})
    return call


def _affine_grid(size):
    def call(lib, theta):
        return lib.nn.functional.affine_grid(theta, size, align_corners=False)
    return call


BAD = {   # name: (call, the shapes of its tensor arguments, exception type, words the message must contain)
    "unknown mode": (_grid_sample(mode="cubic"), [(1, 1, 3, 3), (1, 2, 2, 2)], ValueError, "mode"),
    "unknown padding": (_grid_sample(padding_mode="wrap"), [(1, 1, 3, 3), (1, 2, 2, 2)], ValueError, "padding_mode"),
    "grid last size": (_grid_sample(), [(1, 1, 3, 3), (1, 2, 2, 3)], RuntimeError, "size 2 in last dimension"),
    "5-d grid last size": (_grid_sample(), [(1, 1, 2, 3, 3), (1, 1, 2, 2, 2)], RuntimeError, "size 3 in last"),
    "batch": (_grid_sample(), [(2, 1, 3, 3), (1, 2, 2, 2)], RuntimeError, "same batch size"),
    "grid rank": (_grid_sample(), [(1, 1, 3, 3), (1, 2, 2)], RuntimeError, "same number of dimensions"),
    "empty image": (_grid_sample(), [(1, 1, 0, 3), (1, 2, 2, 2)], RuntimeError, "non-empty spatial"),
    "bicubic 5-d": (_grid_sample(mode="bicubic"), [(1, 1, 2, 2, 2), (1, 1, 1, 1, 3)], RuntimeError, "4D input"),
    "theta shape": (_affine_grid((1, 1, 4, 5)), [(1, 3, 3)], ValueError, "Nx2x3"),
    "theta shape 5-d": (_affine_grid((1, 1, 2, 4, 5)), [(1, 2, 3)], ValueError, "Nx3x4"),
    "theta 2-d": (_affine_grid((1, 1, 4, 5)), [(2, 3)], ValueError, "Nx2x3"),
    "size rank": (_affine_grid((1, 1, 4)), [(1, 2, 3)], NotImplementedError, "4D and 5D sizes"),
    "size zero": (_affine_grid((1, 1, 0, 4)), [(1, 2, 3)], ValueError, "positive output size"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_pytorchs_type_and_changes_nothing(name):
    torch = torch_or_skip()
    call, shapes, error, words = BAD[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    tensors = [mg.tensor(a, requires_grad=True) for a in arrays]
    with pytest.raises(error, match=words):
        call(mg, *tensors)
    with pytest.raises(error):
        call(torch, *[torch.tensor(a) for a in arrays])
    for t, a in zip(tensors, arrays):
        np.testing.assert_array_equal(t.detach().numpy(), a)
        assert t.grad is None


def test_grid_sample_dtype_mismatch_and_integers():
    with pytest.raises(RuntimeError, match="same dtype"):
        F.grid_sample(mg.zeros(1, 1, 2, 2), mg.zeros(1, 1, 1, 2, dtype=mg.float64), align_corners=False)
    with pytest.raises(NotImplementedError, match="floating-point"):
        F.grid_sample(mg.zeros(1, 1, 2, 2, dtype=mg.int64), mg.zeros(1, 1, 1, 2, dtype=mg.int64), align_corners=False)
    with pytest.raises(TypeError, match="argument 'input'"):
        F.grid_sample([1.0], mg.zeros(1, 1, 1, 2), align_corners=False)


def test_affine_grid_bad_theta_dtype_and_batch():
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(mg.zeros(1, 2, 3, dtype=mg.int64), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="one affine matrix per batch element"):
        F.affine_grid(mg.zeros(2, 2, 3), (3, 1, 2, 2), align_corners=False)


# --------------------------------------------------------------------------- bicubic (4-D only, as PyTorch)
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_bicubic_mirror(padding_mode, align_corners, seed):
    """Points inside, near and outside the borders (so every padding rule reads taps outside the image): values
    and the float64 gradients of input and grid for a random upstream."""
    rng = np.random.default_rng(seed)
    shape = (2, 3, 4, 5)
    x = rng.standard_normal(shape)
    grid = grid_off_kinks(rng, shape[0], (3, 4), shape[2:], align_corners)
    assert_mirror(*sample_both("bicubic", padding_mode, align_corners), x, grid, rtol=1e-10, atol=1e-10, seed=seed)


@pytest.mark.parametrize("padding_mode", PADDING_MODES)
def test_bicubic_gradcheck_and_gradgradcheck(padding_mode):
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = mg.tensor(grid_off_kinks(rng, 1, (2, 3), (3, 4), False), requires_grad=True)

    def f(a, g):
        return F.grid_sample(a, g, mode="bicubic", padding_mode=padding_mode, align_corners=False)
    assert mg.gradcheck(f, (x, grid))
    assert mg.gradgradcheck(f, (x, grid))


def test_bicubic_interpolates_and_keeps_constants():
    """Oracles independent of both libraries: at pixel centres the weights are (0, 1, 0, 0), so the pixels are
    returned as they are; the weights sum to 1, so a constant image stays constant at points 2 or more pixels from
    the border (with A = -0.75 a plane is not reproduced: the first moment of the weights is not t)."""
    h, w = 6, 7
    image = np.random.default_rng(4).standard_normal((1, 1, h, w))
    v, u = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    centres = np.stack([2 * u / (w - 1) - 1, 2 * v / (h - 1) - 1], -1)[None]     # align_corners=True
    out = F.grid_sample(mg.tensor(image), mg.tensor(centres), mode="bicubic", align_corners=True)
    np.testing.assert_allclose(out.numpy(), image, rtol=1e-12, atol=1e-12)
    points = np.array([[[2 * 2.3 / (w - 1) - 1, 2 * 2.7 / (h - 1) - 1], [2 * 3.9 / (w - 1) - 1, 2 * 2.1 / (h - 1) - 1]]])
    flat = F.grid_sample(mg.full((1, 1, h, w), 2.5, dtype=mg.float64), mg.tensor(points[None]), mode="bicubic",
                         align_corners=True)
    np.testing.assert_allclose(flat.numpy(), 2.5, rtol=1e-12)
