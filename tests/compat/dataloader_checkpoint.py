"""A classic training loop: ``TensorDataset`` + ``DataLoader``, epochs of minibatches, ``StepLR`` stepped
per epoch, and a checkpoint of model, optimizer and scheduler state saved with ``torch.save`` and
resumed with ``torch.load`` into freshly built objects, as a restarted script does."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

STEPS = 9  # three epochs of three batches
batch_size = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def make_model():
    return Net()


def make_data(rng):
    return {"x": rng.standard_normal((12, 6)), "y": rng.integers(0, 3, size=12)}


def make_training(model):
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
    return optimizer, scheduler


def train_epoch(model, loader, optimizer, step, after_backward, losses):
    model.train()
    for data, target in loader:
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        losses.append(loss.item())
        step += 1
    return step


def train(model, data, steps, after_backward=None, checkpoint_dir=None, restart_after_epoch=None):
    """Train for ``steps`` batches; with ``checkpoint_dir``, save after epoch ``restart_after_epoch``, then go
    on with a new model, optimizer and scheduler loaded from the file. Returns the losses; the model
    trained last is ``train.final_model``."""
    dataset = TensorDataset(torch.from_numpy(data["x"]), torch.from_numpy(data["y"]))
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    optimizer, scheduler = make_training(model)
    epochs = steps // len(loader)
    losses, step, epoch = [], 0, 0
    while epoch < epochs:
        step = train_epoch(model, loader, optimizer, step, after_backward, losses)
        scheduler.step()
        if checkpoint_dir is not None and epoch == restart_after_epoch:
            path = os.path.join(checkpoint_dir, "checkpoint.pt")
            torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict()}, path)
            del model, optimizer, scheduler
            checkpoint = torch.load(path)
            model = make_model()
            model.load_state_dict(checkpoint["model"])
            optimizer, scheduler = make_training(model)
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            epoch = checkpoint["epoch"]
        epoch += 1
    train.final_model = model
    return losses
