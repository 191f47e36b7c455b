"""A binary classifier on tabular data: ``nn.Sequential`` of Linear/ReLU/Dropout layers,
``nn.BCEWithLogitsLoss``, ``torch.optim.RMSprop`` and ``ReduceLROnPlateau`` stepped on the loss, with an
evaluation pass under ``torch.inference_mode()``."""
import torch
from torch import nn, optim

STEPS = 6


def make_model():
    return nn.Sequential(
        nn.Linear(5, 16),
        nn.ReLU(),
        nn.Dropout(p=0.0),
        nn.Linear(16, 8),
        nn.ReLU(),
        nn.Linear(8, 1),
    )


def make_data(rng):
    X = rng.standard_normal((20, 5))
    y = (X[:, 0] - 0.5 * X[:, 1] > 0).astype("float64")
    return {"X": X, "y": y}


def train(model, data, steps, after_backward=None):
    X = torch.tensor(data["X"])
    y = torch.tensor(data["y"]).unsqueeze(1)
    criterion = nn.BCEWithLogitsLoss()
    optimizer = optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.9)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=0, threshold=0.5)
    losses = []
    for step in range(steps):
        model.train()
        optimizer.zero_grad()
        loss = criterion(model(X), y)
        loss.backward()
        if after_backward is not None:
            after_backward(step)
        optimizer.step()
        model.eval()
        with torch.inference_mode():
            val_loss = criterion(model(X), y)
            accuracy = ((torch.sigmoid(model(X)) > 0.5).float() == y).float().mean()
        assert 0.0 <= accuracy.item() <= 1.0
        scheduler.step(val_loss)
        losses.append(loss.item())
    return losses
