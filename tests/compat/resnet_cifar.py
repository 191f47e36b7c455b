"""The CIFAR ResNet training-script style: BasicBlocks with BatchNorm2d and a 1x1 projection shortcut, ``out +=``
on the block's output, ``F.relu(..., inplace=True)``, Kaiming init by module type, a channels_last model and
batch, SGD with Nesterov momentum and weight decay under OneCycleLR, label smoothing, gradient clipping and the
running accuracy loop; small random "images"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 4


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False),
                                          nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class ResNet(nn.Module):
    def __init__(self, widths=(8, 16), num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(inplace=True))
        blocks, in_planes = [], widths[0]
        for i, planes in enumerate(widths):
            blocks.append(BasicBlock(in_planes, planes, stride=1 if i == 0 else 2))
            in_planes = planes
        self.layers = nn.Sequential(*blocks)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_planes * BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def make_model():
    return ResNet().to(memory_format=torch.channels_last)


def make_data(rng):
    return {"images": rng.standard_normal((6, 3, 8, 8)), "labels": rng.integers(0, 5, size=6)}


def train(model, data, steps, after_backward=None):
    inputs = torch.from_numpy(data["images"]).contiguous(memory_format=torch.channels_last)
    targets = torch.from_numpy(data["labels"])
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=steps)
    losses, correct, total = [], 0, 0
    model.train()
    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        scheduler.step()
        _, predicted = outputs.max(1)
        total += targets.size(0)
        correct += predicted.eq(targets).sum().item()
        losses.append(loss.item())
    assert 0 <= correct <= total
    return losses
