"""In-place idioms of real code: ``out += identity`` residuals, ``h.relu_()``, ``logits.data.max(1)[1]`` for the
predictions, ``optimizer.zero_grad(set_to_none=False)``, a hand-written SGD step
``with torch.no_grad(): p -= lr * p.grad``, and ``p.grad.zero_()``."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 4


class ResidualMLP(nn.Module):
    def __init__(self, d=8, n_classes=3):
        super().__init__()
        self.inp = nn.Linear(4, d)
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)
        self.out = nn.Linear(d, n_classes)

    def forward(self, x):
        x = self.inp(x)
        h = self.fc1(x)
        h.relu_()
        out = self.fc2(h)
        out += x  # the residual, as ResNet's ``out += identity``
        return self.out(out)


def make_model():
    torch.manual_seed(1337)
    return ResidualMLP()


def make_data(rng):
    return {"x": rng.standard_normal((10, 4)), "y": rng.integers(0, 3, size=10)}


def train(model, data, steps, after_backward=None):
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # for zero_grad only; the update is by hand
    lr = 0.2
    losses = []
    for step in range(steps):
        optimizer.zero_grad(set_to_none=False)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        pred = logits.data.max(1)[1]
        correct = pred.eq(y.data.view_as(pred)).sum().item()
        assert 0 <= correct <= len(y)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        for p in model.parameters():
            p.grad.zero_()
        losses.append(loss.item())
    return losses
