"""Weight initialization in the styles real code uses: an ``_init_weights`` applied with
``model.apply``, ``p.data.normal_(0, 0.02)``, ``nn.init.zeros_``/``ones_``, ``p.data.fill_``,
``nn.init.xavier_uniform_`` and a scaled init of residual projections by parameter name; then a short
training run with Adam."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 3
n_embd, n_layer, vocab = 64, 2, 50


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 2 * n_embd)
        self.proj = nn.Linear(2 * n_embd, n_embd)

    def forward(self, x):
        return x + self.proj(F.gelu(self.fc(self.ln(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, n_embd)
        self.layers = nn.ModuleList([Layer() for _ in range(n_layer)])
        self.head = nn.Linear(n_embd, vocab)
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))
        nn.init.xavier_uniform_(self.head.weight)
        self.head.bias.data.fill_(0.1)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(0, 0.02)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            module.bias.data.zero_()

    def forward(self, idx):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def make_model():
    return Model()


def make_data(rng):
    return {"idx": rng.integers(0, vocab, size=(2, 5)), "targets": rng.integers(0, vocab, size=(2, 5))}


def train(model, data, steps, after_backward=None):
    idx, targets = torch.as_tensor(data["idx"]), torch.as_tensor(data["targets"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        logits = model(idx)
        loss = F.cross_entropy(logits.view(-1, vocab), targets.view(-1))
        optimizer.zero_grad()
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
    return losses
