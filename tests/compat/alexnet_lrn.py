"""The AlexNet-era training-script style: convolutions with ReLU(inplace=True) and LocalResponseNorm(size=5,
alpha=1e-4, beta=0.75, k=2), overlapping MaxPool2d(3, 2), ``x.view(x.size(0), -1)`` into a Linear head,
SGD with momentum and weight decay; normal init with std 0.01 and constant biases."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 4


class AlexNetSmall(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 6, kernel_size=5, stride=2, padding=2), nn.ReLU(inplace=True),
            nn.LocalResponseNorm(size=5, alpha=1e-4, beta=0.75, k=2.0),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(6, 8, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.LocalResponseNorm(size=4, alpha=0.5, beta=0.75, k=1.0),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.classifier = nn.Linear(8 * 2 * 2, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.normal_(m.weight, mean=0.0, std=0.1)
                nn.init.constant_(m.bias, 0.1)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.view(x.size(0), -1))


def make_model():
    return AlexNetSmall()


def make_data(rng):
    return {"images": rng.standard_normal((4, 3, 23, 23)) * 3, "labels": rng.integers(0, 3, size=4)}


def train(model, data, steps, after_backward=None):
    images, labels = torch.from_numpy(data["images"]), torch.from_numpy(data["labels"])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
    return losses
