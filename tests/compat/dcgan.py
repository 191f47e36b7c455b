"""The DCGAN training-script style: a generator of ConvTranspose2d + BatchNorm2d + ReLU(True) ending in Tanh, a
discriminator of strided Conv2d + LeakyReLU(0.2, inplace=True) ending in Sigmoid and ``.view(-1, 1).squeeze(1)``,
``weights_init`` applied by class name, BCELoss with ``torch.full`` labels refilled in place, the discriminator
step on ``fake.detach()``, two Adam optimizers with betas=(0.5, 0.999). The state is both networks; the "loss"
of a step is errD + errG."""
import torch
import torch.nn as nn
import torch.optim as optim

STEPS = 3
nz, ngf, ndf, nc = 6, 4, 4, 2


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG, self.netD = Generator(), Discriminator()
        self.netG.apply(weights_init)
        self.netD.apply(weights_init)


def make_model():
    return GAN()


def make_data(rng):
    return {"real": rng.uniform(-1, 1, (4, nc, 16, 16)), "noise": rng.standard_normal((STEPS, 4, nz, 1, 1))}


def train(model, data, steps, after_backward=None):
    netG, netD = model.netG, model.netD
    criterion = nn.BCELoss()
    optimizerD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
    real_cpu = torch.from_numpy(data["real"])
    real_label, fake_label = 1., 0.
    losses = []
    for step in range(steps):
        netD.zero_grad()
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=real_cpu.dtype)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        noise = torch.from_numpy(data["noise"][step])
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        if after_backward is not None:
            after_backward(step)
        optimizerG.step()
        losses.append(errD.item() + errG.item())
    return losses
