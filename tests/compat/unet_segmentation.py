"""The U-Net segmentation-script style: double-conv blocks with GroupNorm + SiLU and a reflect-padded conv with
InstanceNorm2d(affine) + GELU, max-pool down, bilinear ``nn.Upsample`` and a ``ConvTranspose2d`` up, skip
connections by ``torch.cat`` on channels, per-pixel cross entropy with class weights plus an MSE term on the
softmax, AdamW under CosineAnnealingLR, and an IoU metric from ``argmax``."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

STEPS = 4


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.GroupNorm(2, out_channels), nn.SiLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, padding_mode="reflect"),
            nn.InstanceNorm2d(out_channels, affine=True), nn.GELU())

    def forward(self, x):
        return self.net(x)


class UNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.down1, self.down2 = DoubleConv(1, 4), DoubleConv(4, 8)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.up_t = nn.ConvTranspose2d(8, 4, kernel_size=2, stride=2)
        self.fuse = DoubleConv(12, 4)
        self.head = nn.Conv2d(4, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.down1(x)
        x2 = self.down2(F.max_pool2d(x1, 2))
        y = torch.cat([self.up(x2), x1], dim=1)
        return self.head(self.fuse(y) + self.up_t(x2))


def make_model():
    return UNet()


def make_data(rng):
    return {"images": rng.standard_normal((2, 1, 8, 8)), "masks": rng.integers(0, 3, size=(2, 8, 8))}


def train(model, data, steps, after_backward=None):
    images, masks = torch.from_numpy(data["images"]), torch.from_numpy(data["masks"])
    optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
    class_weights = torch.tensor([1.0, 2.0, 0.5], dtype=images.dtype)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        logits = model(images)
        probs = logits.softmax(dim=1)
        loss = F.cross_entropy(logits, masks, weight=class_weights)
        loss = loss + 0.1 * F.mse_loss(probs[:, 1], (masks == 1).to(probs.dtype))
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        scheduler.step()
        pred = logits.argmax(dim=1)
        inter = ((pred == 1) & (masks == 1)).sum().float()
        union = ((pred == 1) | (masks == 1)).sum().float().clamp(min=1)
        assert 0 <= (inter / union).item() <= 1
        losses.append(loss.item())
    return losses
