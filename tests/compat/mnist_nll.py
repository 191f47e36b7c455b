"""The image-classifier training script style: ``nn.Flatten``, ``nn.Sequential`` with ``nn.LogSoftmax``,
``F.nll_loss`` with ``reduction='sum'`` over the batch, Adam with ``MultiStepLR`` and ``ExponentialLR``
chained, on a device picked as such scripts pick it; small random "images"."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import ExponentialLR, MultiStepLR

STEPS = 5
use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Flatten(),
            nn.Linear(1 * 4 * 4, 12),
            nn.Tanh(),
            nn.Linear(12, 10),
            nn.LogSoftmax(dim=1),
        )

    def forward(self, x):
        return self.layers(x)


def make_model():
    return Net().to(device)


def make_data(rng):
    return {"images": rng.standard_normal((8, 1, 4, 4)), "labels": rng.integers(0, 10, size=8)}


def train(model, data, steps, after_backward=None):
    images = torch.from_numpy(data["images"]).to(device)
    labels = torch.from_numpy(data["labels"]).to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    milestones = MultiStepLR(optimizer, milestones=[2, 4], gamma=0.5)
    decay = ExponentialLR(optimizer, gamma=0.9)
    losses = []
    for step in range(steps):
        model.train()
        optimizer.zero_grad()
        output = model(images)
        loss = F.nll_loss(output, labels, reduction='sum') / len(labels)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        milestones.step()
        decay.step()
        losses.append(loss.item())
    return losses
