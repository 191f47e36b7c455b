"""A small MLP-Mixer written with einops, as public einops code writes models: patches cut by
``rearrange``, token mixing across the patch axis by transposing with ``rearrange``, a class token added with
``repeat``, multi-head attention pooling split by ``rearrange`` and scored by ``einsum``, mean pooling with
``reduce``; cross-entropy, AdamW."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import einsum, rearrange, reduce, repeat

STEPS = 3
image, patch, channels, dim, classes, heads = 8, 4, 3, 12, 4, 2
n_patches = (image // patch) ** 2


class MixerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mix = nn.Sequential(nn.Linear(n_patches + 1, 8), nn.GELU(), nn.Linear(8, n_patches + 1))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mix = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        y = rearrange(self.norm1(x), 'b n d -> b d n')
        x = x + rearrange(self.token_mix(y), 'b d n -> b n d')
        return x + self.channel_mix(self.norm2(x))


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(patch * patch * channels, dim)
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.blocks = nn.ModuleList([MixerBlock() for _ in range(2)])
        self.qk = nn.Linear(dim, 2 * dim, bias=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        x = rearrange(img, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch, p2=patch)
        x = self.embed(x)
        cls = repeat(self.cls, '1 1 d -> b 1 d', b=x.shape[0])
        x = torch.cat([cls, x], dim=1)
        for block in self.blocks:
            x = block(x)
        q, k = self.qk(x).chunk(2, dim=-1)
        q, k = (rearrange(t, 'b n (h e) -> b h n e', h=heads) for t in (q, k))
        scores = einsum(q, k, 'b h i e, b h j e -> b h i j') / (dim // heads) ** 0.5
        pooled = reduce(scores.softmax(dim=-1), 'b h i j -> b i j', 'mean') @ x
        return self.head(reduce(pooled, 'b n d -> b d', 'mean'))


def make_model():
    return Mixer()


def make_data(rng):
    return {"x": rng.standard_normal((6, channels, image, image)), "y": rng.integers(0, classes, 6)}


def train(model, data, steps, after_backward=None):
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
    return losses
