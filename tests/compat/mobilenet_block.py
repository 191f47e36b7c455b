"""The MobileNetV3 training-script style: inverted residual blocks (1x1 expand, depthwise 3x3 with
``groups=channels``, squeeze-and-excitation with an adaptive average pool and a Hardsigmoid gate, 1x1 project),
BatchNorm2d with ``eps=0.001, momentum=0.01``, Hardswish and ReLU6, a residual add when shapes allow, a
classifier head with Hardswish, RMSprop with momentum under StepLR."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 4
# PyTorch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32 (a relative error of 3e-8 in the
# gate's gradient); minigrad's uses 1/6 in float64, so the runs agree to about 1e-7 here, not to rounding
RTOL = 2e-6


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.activation, self.scale_activation = nn.ReLU(), nn.Hardsigmoid()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


def conv_bn(in_channels, out_channels, kernel_size, stride=1, groups=1, activation=nn.Hardswish):
    layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, (kernel_size - 1) // 2, groups=groups,
                        bias=False), nn.BatchNorm2d(out_channels, eps=0.001, momentum=0.01)]
    if activation is not None:
        layers.append(activation(inplace=True))
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, in_channels, expanded, out_channels, stride, activation):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.block = nn.Sequential(
            conv_bn(in_channels, expanded, 1, activation=activation),
            conv_bn(expanded, expanded, 3, stride, groups=expanded, activation=activation),
            SqueezeExcitation(expanded, max(expanded // 4, 2)),
            conv_bn(expanded, out_channels, 1, activation=None))

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result += x
        return result


class MobileNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 8, 3, stride=2),
            InvertedResidual(8, 16, 8, 1, nn.ReLU6),
            InvertedResidual(8, 24, 12, 2, nn.Hardswish))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(12, 16), nn.Hardswish(inplace=True), nn.Linear(16, num_classes))

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def make_model():
    return MobileNet()


def make_data(rng):
    return {"images": rng.standard_normal((4, 3, 12, 12)), "labels": rng.integers(0, 4, size=4)}


def train(model, data, steps, after_backward=None):
    images, labels = torch.from_numpy(data["images"]), torch.from_numpy(data["labels"])
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01, alpha=0.9, eps=0.0316, momentum=0.9,
                                    weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.973)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses
