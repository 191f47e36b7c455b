"""A training loop that logs to TensorBoard as tutorials write it: ``SummaryWriter`` from
``torch.utils.tensorboard``, the loss every step, both losses with ``add_scalars``, parameter and gradient
histograms, the first layer's weights as an image and the learning rate each epoch, the model's graph, a StepLR schedule,
the writer closed at the end; the event files are read back with TensorBoard's reader and must hold what
was logged."""
import tempfile

import torch
import torch.nn as nn
from tensorboard.backend.event_processing import event_accumulator
from torch.utils.tensorboard import SummaryWriter

STEPS = 4


def make_model():
    return nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))


def make_data(rng):
    x = rng.standard_normal((32, 5))
    return {"x": x, "y": x @ rng.standard_normal((5, 1)) + 0.1 * rng.standard_normal((32, 1))}


def train(model, data, steps, after_backward=None):
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    x_val, y_val = x[:8], y[:8]
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    log_dir = tempfile.mkdtemp()
    writer = SummaryWriter(log_dir)
    writer.add_graph(model, x)
    losses = []
    for epoch in range(steps):
        model.train()
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        if after_backward is not None:
            after_backward(epoch)
        optimizer.step()
        with torch.no_grad():
            val_loss = criterion(model(x_val), y_val)
        writer.add_scalar('Loss/train', loss.item(), epoch)
        writer.add_scalars('Loss', {'train': loss.item(), 'val': val_loss.item()}, epoch)
        writer.add_scalar('lr', scheduler.get_last_lr()[0], epoch)
        for name, param in model.named_parameters():
            writer.add_histogram(name, param, epoch)
            writer.add_histogram(f'{name}.grad', param.grad, epoch)
        w = model[0].weight.detach()
        writer.add_image('fc1', (w - w.min()) / (w.max() - w.min()), epoch, dataformats='HW')
        scheduler.step()
        losses.append(loss.item())
    writer.close()
    acc = event_accumulator.EventAccumulator(log_dir)
    acc.Reload()
    logged = [e.value for e in acc.Scalars('Loss/train')]
    assert [e.step for e in acc.Scalars('Loss/train')] == list(range(steps))
    assert all(abs(a - b) <= 1e-6 * abs(b) for a, b in zip(logged, losses)), (logged, losses)
    assert sorted(acc.Tags()['histograms']) == sorted(n + s for n, _ in model.named_parameters() for s in ('', '.grad'))
    assert acc.Tags()['images'] == ['fc1'] and acc.Tags()['graph']
    return losses
