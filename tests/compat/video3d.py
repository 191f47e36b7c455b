"""The 3-D (video or volume) classifier-script style: Conv3d + BatchNorm3d + ReLU, MaxPool3d over space only
((1, 2, 2)), a second Conv3d with InstanceNorm3d(affine=True), AdaptiveAvgPool3d(1), dropout-free linear head,
Adam with a weight decay and ReduceLROnPlateau-free ExponentialLR."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 3


class VolumeNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv3d(2, 4, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(4)
        self.pool = nn.MaxPool3d((1, 2, 2))
        self.conv2 = nn.Conv3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1), bias=False)
        self.norm2 = nn.InstanceNorm3d(6, affine=True)
        self.head = nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(6, num_classes))

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.norm2(self.conv2(x)))
        return self.head(x)


def make_model():
    return VolumeNet()


def make_data(rng):
    return {"clips": rng.standard_normal((2, 2, 4, 8, 8)), "labels": rng.integers(0, 3, size=2)}


def train(model, data, steps, after_backward=None):
    clips, labels = torch.from_numpy(data["clips"]), torch.from_numpy(data["labels"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(clips), labels)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses
