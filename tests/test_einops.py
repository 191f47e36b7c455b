"""einops on minigrad tensors (issue 28, item 6): the functions and the layers (``einops.layers.minigrad``)
mirrored against PyTorch with float64 data and random upstream gradients, and a small ViT written with
einops in the style of public code, run in both libraries from the same weights."""
import numpy as np
import pytest

import minigrad as mg
from tests.mirror import assert_mirror, torch_or_skip

einops = pytest.importorskip("einops", reason='einops not installed (pip install "minigrad[einops]")')
from einops import einsum, pack, rearrange, reduce, repeat, unpack  # noqa: E402


def test_backend_is_found_by_tensor_type():
    from einops._backends import get_backend
    backend = get_backend(mg.ones(2))
    assert backend.framework_name == "minigrad"
    assert get_backend(mg.nn.Parameter(mg.ones(2))) is backend


RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 6, 4))
Y = RNG.standard_normal((2, 6, 3))
OPS = {
    "rearrange merge": lambda x: rearrange(x, "b (h w) c -> b h (w c)", h=2),
    "rearrange transpose": lambda x: rearrange(x, "b n c -> c b n"),
    "rearrange ellipsis": lambda x: rearrange(x, "b ... c -> (b c) ..."),
    "reduce mean": lambda x: reduce(x, "b (n p) c -> b n c", "mean", p=2),
    "reduce max": lambda x: reduce(x, "b n c -> b c", "max"),
    "reduce min": lambda x: reduce(x, "b n c -> n", "min"),
    "reduce sum": lambda x: reduce(x, "b n c -> b () c", "sum"),
    "repeat new axis": lambda x: repeat(x, "b n c -> b n r c", r=3),
    "repeat tile": lambda x: repeat(x, "b n c -> (r b) n c", r=2),
    "repeat upsample": lambda x: repeat(x, "b n c -> b (n r) (c s)", r=2, s=2),
}


@pytest.mark.parametrize("name", OPS)
def test_einops_function_mirrors_torch(name):
    assert_mirror(OPS[name], OPS[name], X)


def test_einops_einsum_mirrors_torch():
    f = lambda x, y: einsum(x, y, "b n c, b n d -> b c d")   # noqa: E731
    assert_mirror(f, f, X, Y)


def test_pack_and_unpack_mirror_torch():
    def f(x, y):
        packed, shapes = pack([x, y], "b n *")
        a, b = unpack(packed * 2, shapes, "b n *")
        return rearrange(a, "b n c -> b (n c)") + reduce(b, "b n d -> b ()", "sum") * 0 + b.sum()
    assert_mirror(f, f, X, Y)


LAYERS = {
    "Rearrange": lambda L: L.Rearrange("b (h w) c -> b c h w", h=3),
    "Reduce": lambda L: L.Reduce("b (n p) c -> b n c", "max", p=3),
}


@pytest.mark.parametrize("name", LAYERS)
def test_layer_mirrors_torch(name):
    import einops.layers.minigrad as ours

    def theirs(x):                  # built only when PyTorch runs (a replay compares with its record)
        import einops.layers.torch
        return LAYERS[name](einops.layers.torch)(x)
    assert_mirror(LAYERS[name](ours), theirs, X)


def test_einmix_mirrors_torch_with_the_same_weights():
    torch = torch_or_skip()
    import einops.layers.minigrad as ours
    import einops.layers.torch as theirs
    spec = dict(pattern="b n c -> b n h e", weight_shape="c h e", bias_shape="h e", c=4, h=2, e=3)
    torch.manual_seed(0)            # the same weights every run (the comparison's record is checked against it)
    layer_mg, layer_th = ours.EinMix(**spec).double(), theirs.EinMix(**spec).double()
    assert layer_mg.weight.shape == tuple(layer_th.weight.shape)
    bound = float(layer_th.weight.detach().abs().max())
    assert float(layer_mg.weight.detach().abs().max()) <= 1.01 * np.sqrt(3 / 4)   # einops' He-uniform bound
    assert bound <= 1.01 * np.sqrt(3 / 4)
    layer_mg.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in layer_th.state_dict().items()})
    assert_mirror(lambda x: layer_mg(x), lambda x: layer_th(x), X)
    assert torch.is_tensor(layer_th.weight)


def test_layers_are_modules_and_print_as_einops():
    import einops.layers.minigrad as ours
    layer = ours.Rearrange("b c h w -> b (c h w)")
    assert isinstance(layer, mg.nn.Module) and repr(layer) == "Rearrange('b c h w -> b (c h w)')"
    model = mg.nn.Sequential(layer, mg.nn.Linear(12, 2))
    assert model(mg.ones(1, 3, 2, 2)).shape == (1, 2)


def test_unknown_reduction_is_refused():
    with pytest.raises(einops.EinopsError):
        reduce(mg.ones(2, 3), "a b -> a", "median")


# --------------------------------------------------------------------------- a ViT written with einops
def vit(torch, layers, image_size=8, patch=4, channels=2, dim=6, heads=2, dim_head=3, classes=3):
    """A small vision transformer in the style of public einops code (lucidrains' vit-pytorch): patch
    embedding by ``Rearrange``, multi-head attention split and merged by ``rearrange``, the class token by
    ``repeat``, mean pooling by ``reduce``."""
    nn = torch.nn

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            inner = heads * dim_head
            self.heads, self.scale = heads, dim_head ** -0.5
            self.norm = nn.LayerNorm(dim)
            self.attend = nn.Softmax(dim=-1)
            self.to_qkv = nn.Linear(dim, inner * 3, bias=False)
            self.to_out = nn.Linear(inner, dim)

        def forward(self, x):
            x = self.norm(x)
            qkv = self.to_qkv(x).chunk(3, dim=-1)
            q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), qkv)
            dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            out = torch.matmul(self.attend(dots), v)
            return self.to_out(rearrange(out, "b h n d -> b n (h d)"))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            num_patches, patch_dim = (image_size // patch) ** 2, channels * patch * patch
            self.to_patch_embedding = nn.Sequential(
                layers.Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
                nn.LayerNorm(patch_dim), nn.Linear(patch_dim, dim), nn.LayerNorm(dim))
            self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
            self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
            self.attn = Attention()
            self.mlp_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, classes))

        def forward(self, img):
            x = self.to_patch_embedding(img)
            b, n, _ = x.shape
            cls_tokens = repeat(self.cls_token, "1 1 d -> b 1 d", b=b)
            x = torch.cat((cls_tokens, x), dim=1)
            x += self.pos_embedding[:, :(n + 1)]
            x = self.attn(x) + x
            x = reduce(x, "b n d -> b d", "mean")
            return self.mlp_head(x)

    return ViT()


def test_vit_written_with_einops_runs_in_both_libraries():
    torch = torch_or_skip()
    import einops.layers.minigrad as mg_layers
    import einops.layers.torch as torch_layers
    torch.manual_seed(0)
    model_th = vit(torch, torch_layers).double()
    model_mg = vit(mg, mg_layers).double()
    model_mg.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in model_th.state_dict().items()})
    rng = np.random.default_rng(3)
    images = rng.standard_normal((3, 2, 8, 8))
    upstream = rng.standard_normal((3, 3))
    out_th = model_th(torch.tensor(images))
    out_mg = model_mg(mg.tensor(images))
    np.testing.assert_allclose(out_mg.detach().numpy(), out_th.detach().numpy(), rtol=1e-9, atol=1e-12)
    out_th.backward(torch.tensor(upstream))
    out_mg.backward(mg.tensor(upstream))
    grads_th = {k: p.grad.numpy() for k, p in model_th.named_parameters()}
    grads_mg = {k: p.grad.numpy() for k, p in model_mg.named_parameters()}
    assert grads_mg.keys() == grads_th.keys()
    for k in grads_th:
        np.testing.assert_allclose(grads_mg[k], grads_th[k], rtol=1e-9, atol=1e-12, err_msg=k)
